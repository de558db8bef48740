/* SPDX-License-Identifier: Apache-2.0 */
/* The tool interface of ddl-tune (tune.h): its measurements of the cost
 * model, online selection's state by size, and the tuning file.  Uses the
 * communicator, online selection (online.c), the model's numbers and the
 * file's writer (core/tuning.c). */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "comm.h"
#include "grid.h"
#include "log.h"
#include "node.h"
#include "online.h"
#include "reduce.h"
#include "tune.h"

#define PING_PONGS 20

ddl_tune_role_t ddl_tune_role(const ddl_comm_t *c)
{
    if (c->set.algo == DDL_ALGO_MPI)
        return DDL_TUNE_NOTHING;
    if (c->info.role != DDL_ROLE_OWNER && c->helper_mode == DDL_HELPERS_SERVE)
        return DDL_TUNE_SERVE;
    return DDL_TUNE_CALL;
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: 20 values */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Round trip of `bytes` between owners a and b (median of PING_PONGS), in
 * seconds, on every owner.  The other owners wait in a barrier meanwhile,
 * without spinning: on an oversubscribed node that would be what is
 * measured. */
static ddl_status_t ping_pong(ddl_comm_t *c, int a, int b, char *buf, size_t bytes, double *rt)
{
    int me;
    MPI_Comm_rank(c->owners, &me);
    double t[PING_PONGS] = {0};
    MPI_Barrier(c->owners);
    for (int i = -5; i < PING_PONGS && (me == a || me == b); i++) {
        double t0 = MPI_Wtime();
        if (me == a) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, b, 7, c->owners);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, b, 7, c->owners, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, a, 7, c->owners, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, a, 7, c->owners);
        }
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    MPI_Request done;
    MPI_Ibarrier(c->owners, &done);
    ddl_mpi_wait_t w = {&done, NULL, 1};
    char what[160];
    snprintf(what, sizeof(what), "ddl-tune: rank %d: the owners' barrier after the ping-pong between owners %d and %d",
             c->info.rank, a, b);
    ddl_status_t st = ddl_comm_wait(c, ddl_mpi_done, &w, what, NULL);
    if (st != DDL_OK)
        return st;
    *rt = median(t, PING_PONGS);
    MPI_Bcast(rt, 1, MPI_DOUBLE, a, c->owners);
    return DDL_OK;
}

/* The model's links for dimensions 0..ndims-1: between owner 0 of node 0 and
 * of its neighbour along d (the next node for the lane ring, d = 0).  Every
 * latency is measured before any bandwidth: a link that has just carried
 * megabytes answers small messages late for a while. */
static ddl_status_t measure_links(ddl_comm_t *c, int ndims, ddl_link_t *links)
{
    const size_t big = 1u << 20;
    char *buf = calloc(1, big);
    if (!buf)
        return ddl_error(DDL_ERR_NO_MEMORY, "ddl-tune: out of memory for the ping-pong's buffer");
    int peer[DDL_GRID_MAX_DIMS];
    double small_rt[DDL_GRID_MAX_DIMS], big_rt;
    ddl_status_t st = DDL_OK;
    for (int d = 0; d < ndims && st == DDL_OK; d++) {
        peer[d] = (d == 0 ? 1 : ddl_grid_peer(&c->set.grid, 0, d, 1)) * c->info.gpus_per_node;
        st = ping_pong(c, 0, peer[d], buf, 8, &small_rt[d]);
    }
    for (int d = 0; d < ndims && st == DDL_OK; d++) {
        if ((st = ping_pong(c, 0, peer[d], buf, big, &big_rt)) != DDL_OK)
            break;
        links[d] = (ddl_link_t){small_rt[d] / 2, (big_rt - small_rt[d]) / 2 / (double)big};
        if (links[d].beta <= 0)
            links[d].beta = 1e-12;
    }
    free(buf);
    return st;
}

/* Seconds per byte of the host f32 sum, on 16 MiB operands: out of cache, as
 * the node's buffers are. */
static double measure_gamma(void)
{
    const size_t n = (16u << 20) / sizeof(float);
    float *a = calloc(n, sizeof(float)), *b = calloc(n, sizeof(float));
    if (!a || !b) {
        free(a);
        free(b);
        return 0; /* the model keeps its default */
    }
    ddl_reduce_fn_t fn = ddl_reduce_fn(DDL_DTYPE_F32, DDL_REDOP_SUM);
    double t[11];
    for (int i = 0; i < 11; i++) {
        double t0 = MPI_Wtime();
        fn(a, a, b, n); /* reads 2 and writes 1 operand, as a reduction of 2 GPUs' buffers does */
        t[i] = MPI_Wtime() - t0;
    }
    free(a);
    free(b);
    return median(t, 11) / (double)(n * sizeof(float));
}

static int model_dims(const ddl_comm_t *c)
{
    return c->set.grid.ndims > 1 ? c->set.grid.ndims : 1;
}

ddl_status_t ddl_tune_measure_model(ddl_comm_t *c)
{
    ddl_model_t *m = &c->set.tuning.model;
    int ndims = model_dims(c), links = c->info.nnodes > 1;
    ddl_status_t st;
    /* A rank that fails here returns at once (ddl-tune aborts the job): the
     * others wait for it in a collective below, which the abort ends. */
    if (c->info.role == DDL_ROLE_OWNER && links && (st = measure_links(c, ndims, m->link)) != DDL_OK)
        return st;
    double gamma = measure_gamma();
    if (gamma > 0)
        m->gamma = gamma;
    MPI_Bcast(m->link, (int)sizeof(m->link), MPI_BYTE, 0, c->select_comm);
    MPI_Bcast(&m->gamma, 1, MPI_DOUBLE, 0, c->select_comm);
    for (int d = 0; d < ndims; d++)
        m->measured[d] = links;
    return DDL_OK;
}

void ddl_tune_set_rounds(ddl_comm_t *c, int rounds)
{
    for (int coll = 0; coll < DDL_COLL_COUNT; coll++)
        c->online[coll].job.rounds = rounds;
}

static const ddl_online_class_t *class_of(const ddl_comm_t *c, size_t bytes)
{
    return &c->online[DDL_COLL_ALLREDUCE].cls[ddl_online_class_of(bytes)];
}

ddl_tune_state_t ddl_tune_state(const ddl_comm_t *c, size_t bytes)
{
    const ddl_online_class_t *k = class_of(c, bytes);
    return k->state == DDL_CLASS_NEW ? DDL_TUNE_NOT_ONLINE
           : k->state == DDL_CLASS_DECIDED && !k->confirming ? DDL_TUNE_DECIDED : DDL_TUNE_EXPLORING;
}

void ddl_tune_describe(const ddl_comm_t *c, size_t bytes, char *chosen, size_t chosen_len, char *timed,
                       size_t timed_len)
{
    const ddl_online_class_t *k = class_of(c, bytes);
    ddl_online_describe(k, k->chosen, chosen, chosen_len);
    timed[0] = '\0';
    if (k->ncand > 1)
        ddl_online_timings(k, timed, timed_len);
}

int ddl_tune_write(const ddl_comm_t *c, const size_t *sizes, int nsizes, FILE *f, FILE *also)
{
    time_t now = time(NULL);
    fprintf(f, "# ddl-tune: %d nodes x %d GPUs x %d lanes, %s helpers, f32 sum, online selection, %s",
            c->info.nnodes, c->info.gpus_per_node, c->info.lanes,
            c->helper_mode == DDL_HELPERS_SERVE ? "serve" : "collective", ctime(&now));
    fprintf(f, "# the slowest rank's best time of each candidate, per size class:\n");
    for (int i = 0; i < nsizes; i++) {
        const ddl_online_class_t *k = class_of(c, sizes[i]);
        char timed[512];
        if (k->state == DDL_CLASS_DECIDED && k->ncand > 1)
            fprintf(f, "#   %zu bytes and up: %s\n", (size_t)1 << ddl_online_class_of(sizes[i]),
                    ddl_online_timings(k, timed, sizeof(timed)));
    }
    fprintf(f, "# sizes outside the bands below are still chosen online\n");
    /* The cost model: latency and bandwidth per link class, host reduction speed. */
    const ddl_model_t *m = &c->set.tuning.model;
    for (int d = 0; d < model_dims(c) && c->info.nnodes > 1; d++)
        ddl_tuning_write_link(f, d, &m->link[d]);
    ddl_tuning_write_reduce(f, m->gamma);
    /* With a step factor above 2 the classes between two measured sizes take
     * the lower one's choice: a band runs from each measured size to the next. */
    static ddl_online_t chosen; /* too large for a stack */
    chosen = *c->online;
    for (int i = 0; i + 1 < nsizes; i++) {
        int from = ddl_online_class_of(sizes[i]), to = ddl_online_class_of(sizes[i + 1]);
        for (int j = from + 1; j < to && chosen.cls[from].state == DDL_CLASS_DECIDED; j++)
            chosen.cls[j] = chosen.cls[from];
    }
    int bands = ddl_online_write(&chosen, f);
    if (also)
        ddl_online_write(&chosen, also);
    return bands;
}
