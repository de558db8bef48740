/* SPDX-License-Identifier: Apache-2.0 */
/* Which algorithm a call uses: a tuning-file band for its size first, then
 * DDL_ALGO, then DDL_MPI_THRESHOLD when it was set, then DDL_SELECT: online
 * selection (select/online.h: the bookkeeping; here its agreements (agree/agree.h),
 * its messages and DDL_TUNING_SAVE) or the fixed crossover and the cost model.
 * Online selection is the one engine that times candidates: DDL_EXPLORE is
 * its per-dimension stage, also under DDL_SELECT=model.  On the lane path,
 * also the call's plan (lane algorithm, chunk, the multiring's dimensions;
 * ddl_route_lane). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agree.h"
#include "algo.h"
#include "comm.h"
#include "exchange.h"
#include "log.h"
#include "online.h"
#include "paths.h"
#include "route.h"
#include "signature.h"

_Static_assert(DDL_ONLINE_MAX_CANDIDATES <= DDL_AGREE_MAX, "the ranks agree on every candidate's time at once");

int ddl_select_online(const ddl_comm_t *c)
{
    return (c->set.select == DDL_SELECT_ONLINE || c->set.explore) && c->set.algo != DDL_ALGO_MPI;
}

/* DDL_TUNING_SAVE: rank 0 checks at creation that it can write the file, so a
 * wrong path fails there and not silently at the first decision. */
static ddl_status_t check_save_path(ddl_comm_t *c)
{
    const char *path = ddl_param_string("DDL_TUNING_SAVE");
    if (!*path || c->info.rank != 0)
        return DDL_OK;
    if (strlen(path) >= sizeof(c->save_path) - 16)
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL_TUNING_SAVE is longer than %zu characters",
                         sizeof(c->save_path) - 16);
    FILE *f = fopen(path, "a");
    if (!f)
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL_TUNING_SAVE=%s cannot be written (%s): name a file in a directory "
                         "this rank can write, or unset it", path, strerror(errno));
    fclose(f);
    snprintf(c->save_path, sizeof(c->save_path), "%s", path);
    return DDL_OK;
}

/* The lanes' path when nothing else chooses: DDL_ALGO, else the multiring
 * with a grid, else the lane algorithm. */
static ddl_algo_id_t lanes_path(const ddl_comm_t *c)
{
    return c->set.algo != DDL_ALGO_AUTO ? (ddl_algo_id_t)c->set.algo
         : c->set.grid.ndims ? DDL_ALGO_MULTIRING : DDL_ALGO_LANE;
}

/* A collective's lane path: the reduce-scatter's and allgather's is the lane
 * algorithm's (the multiring has no row for them). */
static ddl_algo_id_t lanes_path_of(const ddl_comm_t *c, ddl_coll_t coll)
{
    ddl_algo_id_t path = lanes_path(c);
    return coll == DDL_COLL_ALLREDUCE || path == DDL_ALGO_MPI ? path : DDL_ALGO_LANE;
}

ddl_status_t ddl_select_init(ddl_comm_t *c)
{
    int threshold_given = c->set.mpi_threshold != DDL_THRESHOLD_AUTO;
    if (!threshold_given)
        c->set.mpi_threshold = c->info.nnodes == 1 ? DDL_MPI_THRESHOLD_ONE_NODE : DDL_MPI_THRESHOLD_NODES;
    if (!ddl_select_online(c))
        return DDL_OK;
    /* DDL_SELECT=model with DDL_EXPLORE: the crossover and the chunk stay the
     * model's; only the lanes' algorithms are timed. */
    int online = c->set.select == DDL_SELECT_ONLINE;
    if (!threshold_given && online)
        c->set.mpi_threshold = 0; /* the online selection times the MPI path itself */
    ddl_online_job_t job = {
        .nnodes = c->info.nnodes,
        .path = lanes_path(c),
        .with_mpi = online && c->set.algo == DDL_ALGO_AUTO && !threshold_given,
        /* Beside the multiring only with online selection (DDL_SELECT=model chose the multiring). */
        .lane_algos = c->set.lane_algo == DDL_INTER_AUTO && c->set.algo != DDL_ALGO_MULTIRING &&
                      (online || lanes_path(c) == DDL_ALGO_LANE),
        .chunks = online && c->set.chunk_size == 0,
        .drift = c->set.select_drift / 100.0,
        .exchange_min = DDL_SIG_DATA_BYTES,
        .exchange_max = DDL_SIG_EXCHANGE_BYTES,
        .early_max = ddl_comm_one_host(c) ? 0 : DDL_MPI_EARLY_MAX_BYTES, /* as ddl_mpi_early_init */
        .halves_max = ddl_halves_owners(c) ? DDL_SIG_HALVES_BYTES : 0,
        .mpi_first = c->helper_mode == DDL_HELPERS_SERVE || c->info.lanes == 1,
        .one_host = ddl_comm_one_host(c),
        /* The grid's node dimensions; a band's dims= fixes them instead. */
        .dims = c->set.explore && lanes_path(c) == DDL_ALGO_MULTIRING && c->info.nnodes > 1 ? c->set.grid.ndims - 1 : 0,
    };
    ddl_online_init(&c->online[DDL_COLL_ALLREDUCE], &job);
    /* The reduce-scatter's and allgather's classes of their own: the MPI
     * path (its plain form: the data forms and the early start are the
     * allreduce's), the lanes with their ring halves, and the chunks. */
    ddl_online_job_t blocks = job;
    blocks.path = DDL_ALGO_LANE;
    blocks.lane_algos = 0;
    blocks.exchange_min = blocks.exchange_max = blocks.early_max = blocks.halves_max = 0;
    blocks.dims = 0;
    for (int coll = 0; coll < DDL_COLL_COUNT; coll++)
        if (coll != DDL_COLL_ALLREDUCE)
            ddl_online_init(&c->online[coll], &blocks);
    /* Serve-mode helpers never see the MPI path's calls: the owners agree alone. */
    c->select_comm = c->helper_mode == DDL_HELPERS_SERVE ? c->owners : c->world;
    return check_save_path(c);
}

/* The rules before online selection, in their order: count 0 (the MPI path,
 * where the owners agree), a tuning-file band for the size, DDL_ALGO=mpi,
 * below DDL_MPI_THRESHOLD, and with DDL_SELECT=model the lanes' path.  1
 * with *algo (*band: the band, or NULL; *why: the rule, NULL for a band) when
 * one of them decides; 0 when online selection does. */
static int fixed_rule(const ddl_comm_t *c, ddl_coll_t coll, size_t bytes, const ddl_band_t **band,
                      ddl_algo_id_t *algo, const char **why)
{
    *why = NULL;
    *band = NULL;
    *algo = DDL_ALGO_MPI;
    if (bytes == 0) { /* nothing to move: the owners' agreement is the whole call */
        *why = "count 0";
        return 1;
    }
    /* A tuning file's bands are the allreduce's. */
    if (coll == DDL_COLL_ALLREDUCE && (*band = ddl_tuning_find(&c->set.tuning, bytes)) != NULL) {
        *algo = (ddl_algo_id_t)(*band)->algo;
        return 1;
    }
    *algo = DDL_ALGO_MPI;
    if (c->set.algo == DDL_ALGO_MPI)
        *why = "DDL_ALGO=mpi";
    else if (bytes < c->set.mpi_threshold)
        *why = "below DDL_MPI_THRESHOLD";
    else if (!ddl_select_online(c)) {
        *algo = lanes_path_of(c, coll);
        *why = c->set.algo != DDL_ALGO_AUTO ? "DDL_ALGO" : "at or above DDL_MPI_THRESHOLD (DDL_SELECT=model)";
    }
    return *why != NULL;
}

/* At INFO, rank 0 says once per algorithm why a fixed rule chose it. */
static void announce(ddl_comm_t *c, ddl_coll_t coll, ddl_algo_id_t algo, size_t bytes, const char *why)
{
    unsigned bit = 1u << (coll * DDL_ALGO_COUNT + algo);
    if (c->logged_algos & bit || c->info.rank != 0)
        return;
    c->logged_algos |= bit;
    DDL_INFO(DDL_SUBSYS_COLL, "%s of %zu bytes uses %s: %s", ddl_coll_names[coll], bytes, ddl_algo_names[algo], why);
}

/* Online selection's candidate for a call of `bytes` (a class that has not
 * started starts). */
static const ddl_candidate_t *online_candidate(ddl_comm_t *c, ddl_coll_t coll, size_t bytes)
{
    ddl_online_t *o = &c->online[coll];
    /* Whether chunk sizes are candidates matters only when a class starts
     * exploring: the model's chunk is not worked out on every call.  It is
     * decided for the class's largest size, not this call's: a rank whose
     * call fails the agreement (another count) may start a class that the
     * others start later with other sizes, and all must list the same
     * candidates. */
    int chunked = 0;
    if (ddl_online_starts(o, bytes)) {
        int cls = ddl_online_class_of(bytes);
        size_t top = cls == DDL_ONLINE_CLASSES - 1 ? bytes : ((size_t)2 << cls) - 1;
        size_t chunk = ddl_lane_chunk(c, top, o->job.path == DDL_ALGO_MULTIRING);
        chunked = c->info.nnodes > 1 && top / (size_t)c->info.local_size > chunk;
    }
    return ddl_online_next(o, bytes, chunked);
}

/* Each collective chooses by the same rules, with classes and candidates of
 * its own (c->online[coll]): the reduce-scatter's 4 MiB calls are timed
 * apart from the allreduce's. */
ddl_algo_id_t ddl_select_algo(ddl_comm_t *c, ddl_call_t *call, size_t bytes)
{
    call->cand = NULL;
    call->mpi_form = DDL_MPI_FORM_PLAIN;
    const ddl_band_t *band;
    ddl_algo_id_t algo;
    const char *why;
    if (fixed_rule(c, call->coll, bytes, &band, &algo, &why)) {
        if (band)
            call->mpi_form = band->mpi_form;
        else
            announce(c, call->coll, algo, bytes, why);
        return algo;
    }
    call->cand = online_candidate(c, call->coll, bytes);
    call->mpi_form = call->cand->mpi_form;
    return (ddl_algo_id_t)call->cand->algo;
}

/* What ddl_select_algo would answer for `bytes`, without a call. */
int ddl_comm_collective_choice(const ddl_comm_t *c, const char *collective, size_t bytes, char *buf, size_t len)
{
    int coll = 0;
    while (coll < DDL_COLL_COUNT && (!collective || strcmp(collective, ddl_coll_names[coll]) != 0))
        coll++;
    if (!ddl_comm_is_live(c) || !buf || len == 0 || coll == DDL_COLL_COUNT)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_comm_choice: %s", !ddl_comm_is_live(c) ? "not a live "
                         "communicator (destroyed, or never created)" : coll == DDL_COLL_COUNT ? "the collective is "
                         "none of allreduce, reduce_scatter and allgather" : "no buffer for the answer");
    const ddl_band_t *band;
    ddl_algo_id_t algo;
    const char *why;
    if (fixed_rule(c, (ddl_coll_t)coll, bytes, &band, &algo, &why)) {
        ddl_candidate_t as = {.algo = algo};
        if (band) {
            as.lane_algo = band->lane_algo;
            as.mpi_form = band->mpi_form;
            as.ndims = band->ndims;
            memcpy(as.dim_algo, band->dim_algo, sizeof(as.dim_algo));
        }
        ddl_candidate_describe(&as, band ? band->chunk : 0, buf, len);
        return 1;
    }
    const ddl_online_class_t *k = &c->online[coll].cls[ddl_online_class_of(bytes)];
    if (k->state != DDL_CLASS_DECIDED || k->confirming) { /* a choice's first calls confirm it */
        snprintf(buf, len, "exploring");
        return 0;
    }
    ddl_online_describe(k, k->chosen, buf, len);
    return 1;
}

int ddl_comm_choice(const ddl_comm_t *c, size_t bytes, char *buf, size_t len)
{
    return ddl_comm_collective_choice(c, "allreduce", bytes, buf, len);
}

int ddl_select_wants_time(const ddl_comm_t *c, const ddl_call_t *call, size_t bytes)
{
    return call->cand && ddl_online_wants_time(&c->online[call->coll], bytes);
}

/* "1048576-2097151 bytes", and for the collectives but the allreduce its
 * name first ("reduce_scatter of 1048576-2097151 bytes"). */
static void class_range(ddl_coll_t coll, int cls, char *buf, size_t len)
{
    int n = coll == DDL_COLL_ALLREDUCE ? 0 : snprintf(buf, len, "%s of ", ddl_coll_names[coll]);
    if (cls == DDL_ONLINE_CLASSES - 1)
        snprintf(buf + n, len - (size_t)n, "%zu bytes and more", (size_t)1 << cls);
    else
        snprintf(buf + n, len - (size_t)n, "%zu-%zu bytes", (size_t)1 << cls, ((size_t)1 << (cls + 1)) - 1);
}

/* How a class's times read in a message: from DDL_ONLINE_PER_BYTE_CLASS up
 * they are scaled to the class's smallest size (select/online.c). */
static const char *times_as(int cls, char *buf, size_t len)
{
    buf[0] = '\0';
    if (cls >= DDL_ONLINE_PER_BYTE_CLASS)
        snprintf(buf, len, ", each call's time as if of %zu bytes", (size_t)1 << cls);
    return buf;
}

/* A class's choice, or (dim > 0) the algorithm along a multiring dimension. */
static void log_decision(const ddl_comm_t *c, ddl_coll_t coll, int cls, int dim)
{
    const ddl_online_class_t *k = &c->online[coll].cls[cls];
    char range[64], chosen[64], timed[512];
    class_range(coll, cls, range, sizeof(range));
    if (dim)
        snprintf(chosen, sizeof(chosen), "multiring dimension %d: %s", dim,
                 ddl_dim_algo_names[k->cand[k->chosen].dim_algo[dim]]);
    else
        ddl_online_describe(k, k->chosen, chosen, sizeof(chosen));
    char mpi_rounds[64] = "";
    if (k->mpi_rounds != k->other_rounds)
        snprintf(mpi_rounds, sizeof(mpi_rounds), " and of the MPI path's %d", k->mpi_rounds);
    char as[64];
    DDL_INFO(DDL_SUBSYS_COLL, "online selection, %s: %s (the slowest rank's best of %d%s rounds%s: %s)", range, chosen,
             k->other_rounds, mpi_rounds, times_as(cls, as, sizeof(as)), ddl_online_timings(k, timed, sizeof(timed)));
}

/* DDL_TUNING_SAVE: the whole file again after each decision, written aside
 * and renamed, so a reader never sees half of it. */
static void save(const ddl_comm_t *c)
{
    char tmp[sizeof(c->save_path) + 16];
    snprintf(tmp, sizeof(tmp), "%s.%ld", c->save_path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        DDL_LOG(DDL_LOG_WARN, DDL_SUBSYS_COLL, "DDL_TUNING_SAVE: cannot write %s: %s", tmp, strerror(errno));
        return;
    }
    fprintf(f, "# Written by libddl's online selection (DDL_TUNING_SAVE): %d nodes x %d GPUs x %d lanes, %s helpers.\n"
            "# Read it back with DDL_TUNING_FILE=%s; sizes outside its bands are still chosen online.\n",
            c->info.nnodes, c->info.gpus_per_node, c->info.lanes,
            c->helper_mode == DDL_HELPERS_SERVE ? "serve" : "collective", c->save_path);
    const ddl_model_t *m = &c->set.tuning.model;
    for (int d = 0; d < DDL_GRID_MAX_DIMS; d++)
        if (m->measured[d])
            ddl_tuning_write_link(f, d, &m->link[d]);
    ddl_online_write(&c->online[DDL_COLL_ALLREDUCE], f); /* a tuning file's bands are the allreduce's */
    if (fclose(f) != 0 || rename(tmp, c->save_path) != 0) {
        DDL_LOG(DDL_LOG_WARN, DDL_SUBSYS_COLL, "DDL_TUNING_SAVE: cannot write %s: %s", c->save_path, strerror(errno));
        unlink(tmp);
    }
}

/* A call of `bytes` of collective coll that online selection chose: its
 * time on this rank (negative: not timed) and its chunk (0: none) into the
 * class, and the agreement and decision that may follow. */
static ddl_status_t record(ddl_comm_t *c, ddl_coll_t coll, size_t bytes, double seconds, size_t chunk)
{
    ddl_online_t *o = &c->online[coll];
    double v[DDL_ONLINE_MAX_CANDIDATES];
    int n = ddl_online_observe(o, bytes, seconds, chunk, v);
    if (n == 0)
        return DDL_OK;
    /* Only the owners' times count: a lane call ends for its owner at the
     * node's results barrier, after its helpers' work, while a helper's time on
     * the MPI path is only how late it woke (on an oversubscribed node, noise). */
    if (c->info.role == DDL_ROLE_HELPER)
        memset(v, 0, sizeof(double) * (size_t)n);
    /* The data is right on every rank, but a rank that missed the agreement
     * would choose alone from now on: the communicator cannot go on. */
    ddl_status_t st = ddl_agree_max(c, c->select_comm, v, n);
    if (st != DDL_OK)
        return ddl_comm_fail(c, ddl_fail(st, "online selection: %s", ddl_last_error()));
    int cls = ddl_online_class_of(bytes);
    double before = o->cls[cls].reference;
    ddl_online_outcome_t out = ddl_online_settle(o, bytes, v);
    if (c->info.rank != 0)
        return DDL_OK;
    int dim = o->cls[cls].dim_decided;
    if ((out == DDL_ONLINE_DIMENSION || out == DDL_ONLINE_DECIDED) && dim)
        log_decision(c, coll, cls, dim);
    if (out == DDL_ONLINE_DECIDED) {
        if (!dim)
            log_decision(c, coll, cls, 0);
        if (c->save_path[0] && coll == DDL_COLL_ALLREDUCE)
            save(c);
    } else if (out == DDL_ONLINE_SWITCHED || out == DDL_ONLINE_CONFIRMED) {
        const ddl_online_class_t *k = &o->cls[cls];
        int won = out == DDL_ONLINE_CONFIRMED;
        char range[64], winner[64], loser[64];
        class_range(coll, cls, range, sizeof(range));
        ddl_online_describe(k, k->chosen, winner, sizeof(winner));
        ddl_online_describe(k, k->rival, loser, sizeof(loser)); /* after the duel: the other one */
        char as[64];
        DDL_INFO(DDL_SUBSYS_COLL, "online selection, %s: %s %s %s: the middle of its %d calls %.1f us against %.1f us "
                 "(the two in turn%s)", range, winner, won ? "confirmed against" : "instead of", loser,
                 DDL_ONLINE_RECENT, v[won ? 0 : 1] * 1e6, v[won ? 1 : 0] * 1e6, times_as(cls, as, sizeof(as)));
        if (!won && c->save_path[0] && coll == DDL_COLL_ALLREDUCE)
            save(c);
    } else if (out == DDL_ONLINE_DRIFTED || out == DDL_ONLINE_FASTER) {
        char range[64], chosen[64], as[64];
        class_range(coll, cls, range, sizeof(range));
        ddl_online_describe(&o->cls[cls], o->cls[cls].chosen, chosen, sizeof(chosen));
        DDL_INFO(DDL_SUBSYS_COLL, "online selection, %s: %s now takes %.1f us against %.1f us when chosen "
                 "(DDL_SELECT_DRIFT=%d%%%s): %s", range, chosen, v[0] * 1e6, before * 1e6, c->set.select_drift,
                 times_as(cls, as, sizeof(as)),
                 out == DDL_ONLINE_DRIFTED ? "timing the candidates again" : "kept, with the new time as its reference");
    }
    return DDL_OK;
}

ddl_status_t ddl_select_record(ddl_comm_t *c, const ddl_call_t *call, size_t bytes, double seconds, ddl_status_t st)
{
    /* A failed call teaches nothing.  Every owner reaches the same verdict
     * on a call (the agreement's), so the owners' classes stay in step; a
     * collective-mode helper records what its owner recorded instead where
     * it could differ (ddl_select_replay). */
    if (!call->cand || st != DDL_OK)
        return st;
    int nodes = c->info.nnodes > 1 && call->cand->algo != DDL_ALGO_MPI;
    return record(c, call->coll, bytes, seconds, nodes ? (size_t)call->plan.chunk : 0);
}

int ddl_select_owner_class(ddl_coll_t coll, size_t bytes)
{
    return (int)coll * DDL_ONLINE_CLASSES + ddl_online_class_of(bytes);
}

ddl_status_t ddl_select_replay(ddl_comm_t *c, int owner_class)
{
    if (owner_class < 0)
        return DDL_OK;
    ddl_coll_t coll = (ddl_coll_t)(owner_class / DDL_ONLINE_CLASSES);
    size_t bytes = (size_t)1 << (owner_class % DDL_ONLINE_CLASSES); /* the class's smallest size: all its calls choose alike */
    online_candidate(c, coll, bytes);
    /* Its own times count for nothing (only the owners' do), but the calls
     * that time must be timed on every rank alike. */
    return record(c, coll, bytes, ddl_online_wants_time(&c->online[coll], bytes) ? 0 : -1, 0);
}

/* Online selection's chunk candidates: half or twice the chunk, in whole 4 KiB
 * pages and within the scratch buffers. */
static size_t scale_chunk(const ddl_comm_t *c, size_t chunk, int shift)
{
    if (shift < 0)
        chunk = chunk / 2 / 4096 * 4096;
    else if (shift > 0)
        chunk *= 2;
    return chunk < 4096 ? 4096 : chunk > c->scratch_bytes ? c->scratch_bytes : chunk;
}

/* This call's algorithms and chunk: a tuning band for its size first, then
 * DDL_LANE_ALGO and DDL_CHUNK_SIZE, then the cost model; online selection's
 * candidate (call->cand) replaces the lane algorithm, scales the chunk and,
 * with DDL_EXPLORE, fixes the multiring's dimensions. */
static void plan_call(ddl_comm_t *c, ddl_call_t *call, size_t bytes, int multiring)
{
    const ddl_band_t *band = ddl_tuning_find(&c->set.tuning, bytes);
    const ddl_candidate_t *cand = call->cand;
    ddl_call_plan_t *p = &call->plan;
    memset(p, 0, sizeof(*p));
    p->multiring = multiring;
    p->coll = call->coll;
    p->lane_algo = band && band->lane_algo ? band->lane_algo : c->set.lane_algo;
    p->chunk = ddl_lane_chunk(c, bytes, multiring);
    if (cand && cand->lane_algo)
        p->lane_algo = cand->lane_algo;
    if (cand && cand->chunk_shift)
        p->chunk = scale_chunk(c, p->chunk, cand->chunk_shift);
    const unsigned char *dims = cand && cand->ndims ? cand->dim_algo : band && band->ndims ? band->dim_algo : NULL;
    int ndims = cand && cand->ndims ? cand->ndims : band ? band->ndims : 0;
    if (multiring && dims) {
        p->dims_fixed = 1;
        for (int d = 1; d <= ndims && d < DDL_GRID_MAX_DIMS; d++)
            p->dim_algo[d] = dims[d];
    }
}

ddl_status_t ddl_route_lane(ddl_comm_t *c, ddl_call_t *call, int multiring)
{
    /* Serve-mode helpers take their owner's plan from its request (ddl_lane_path). */
    if (c->info.role == DDL_ROLE_OWNER || c->helper_mode == DDL_HELPERS_COLLECTIVE)
        plan_call(c, call, (size_t)call->count * ddl_dtype_size(call->dtype), multiring);
    return ddl_lane_path(c, call, multiring);
}
