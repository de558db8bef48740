/* ddl-tune: time every candidate algorithm on the allocation it runs in, for a
 * range of sizes, and write the tuning file that picks the fastest per size
 * band.  Run it like the application (one process per lane), then point
 * DDL_TUNING_FILE at the file. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algo.h"
#include "bench_stats.h"
#include "comm.h"
#include "parse.h"

#define MAX_SIZES 40

typedef struct {
    int algo, lane_algo;
    const char *name;
} candidate_t;

static const candidate_t candidates[] = {
    {DDL_ALGO_MPI, DDL_INTER_AUTO, "mpi"},
    {DDL_ALGO_LANE, DDL_INTER_RING, "lane/ring"},
    {DDL_ALGO_LANE, DDL_INTER_RD, "lane/rd"},
    {DDL_ALGO_LANE, DDL_INTER_RAB, "lane/rab"},
};
#define NCAND (int)(sizeof(candidates) / sizeof(candidates[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: ddl-tune [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-o FILE]\n"
               "Time mpi, lane/ring, lane/rd and lane/rab (f32 sum, shared buffers) from MIN to MAX bytes\n"
               "(default 1K to 64M, factor 4, 10 iterations) and write FILE (default ddl-tuning.conf).\n");
}

/* The slowest owner's median time of `iters` calls, in microseconds. */
static double time_size(ddl_comm_t *c, float *buf, size_t count, long iters)
{
    int owner = c->info.role == DDL_ROLE_OWNER;
    double *t = calloc((size_t)iters, sizeof(double)), med = 0, worst = 0;
    for (long i = -1; i < iters; i++) { /* one warm-up call */
        if (owner)
            MPI_Barrier(c->owners);
        double t0 = MPI_Wtime();
        if (ddl_allreduce(owner ? DDL_IN_PLACE : NULL, owner ? buf : NULL, (int64_t)count, DDL_DTYPE_F32,
                          DDL_REDOP_SUM, c) != DDL_OK) {
            fprintf(stderr, "ddl-tune: rank %d: %s\n", c->info.rank, ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    med = bench_median(t, (size_t)iters) * 1e6;
    if (owner)
        MPI_Allreduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, c->owners);
    free(t);
    return worst;
}

int main(int argc, char **argv)
{
    size_t min = 1024, max = 64u << 20;
    long factor = 4, iters = 10;
    const char *path = "ddl-tuning.conf";
    int opt;
    MPI_Init(&argc, &argv);
    while ((opt = getopt(argc, argv, "b:e:f:n:o:h")) != -1) {
        int bad = 0;
        switch (opt) {
        case 'b': bad = ddl_parse_size(optarg, &min) || min < 4; break;
        case 'e': bad = ddl_parse_size(optarg, &max); break;
        case 'f': bad = ddl_parse_long(optarg, 2, 64, &factor); break;
        case 'n': bad = ddl_parse_long(optarg, 1, 100000, &iters); break;
        case 'o': path = optarg; break;
        case 'h': usage(stdout); MPI_Finalize(); return 0;
        default: usage(stderr); MPI_Finalize(); return 2;
        }
        if (bad) {
            fprintf(stderr, "ddl-tune: invalid value '%s' for -%c\n", optarg, opt);
            MPI_Finalize();
            return 2;
        }
    }
    /* Measure the algorithms themselves, not an earlier tuning file. */
    setenv("DDL_TUNING_FILE", "/dev/null", 1);
    ddl_config_t cfg;
    ddl_comm_t *c;
    if (ddl_config_init(&cfg) != DDL_OK || ddl_comm_create(MPI_COMM_WORLD, &cfg, &c) != DDL_OK) {
        fprintf(stderr, "ddl-tune: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int owner = c->info.role == DDL_ROLE_OWNER;
    if (!owner && c->helper_mode == DDL_HELPERS_SERVE) {
        ddl_status_t st = ddl_serve(c);
        ddl_comm_destroy(c);
        MPI_Finalize();
        return st == DDL_OK ? 0 : 1;
    }
    float *buf = NULL;
    if (owner && ddl_malloc(c, max, (void **)&buf) != DDL_OK) {
        fprintf(stderr, "ddl-tune: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    for (size_t s = min; s <= max && nsizes < MAX_SIZES; s *= (size_t)factor)
        sizes[nsizes++] = s / 4 * 4;
    /* On one node the lane algorithms between nodes do not run: lane/ring stands for all. */
    int ncand = c->info.nnodes > 1 ? NCAND : 2;
    double t[NCAND][MAX_SIZES];
    for (int k = 0; k < ncand; k++) {
        c->set.algo = candidates[k].algo;
        c->set.lane_algo = candidates[k].lane_algo;
        for (int i = 0; i < nsizes; i++) {
            if (owner)
                memset(buf, 0, sizes[i]);
            t[k][i] = time_size(c, buf, sizes[i] / 4, iters);
        }
    }
    if (c->info.rank == 0) {
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "ddl-tune: cannot write %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        time_t now = time(NULL);
        fprintf(f, "# ddl-tune: %d nodes x %d GPUs x %d lanes, f32 sum, median of %ld calls, %s", c->info.nnodes,
                c->info.gpus_per_node, c->info.lanes, iters, ctime(&now));
        fprintf(f, "# %12s", "bytes");
        for (int k = 0; k < ncand; k++)
            fprintf(f, " %12s", candidates[k].name);
        fprintf(f, "   (us)\n");
        int best[MAX_SIZES];
        for (int i = 0; i < nsizes; i++) {
            best[i] = 0;
            fprintf(f, "# %12zu", sizes[i]);
            for (int k = 0; k < ncand; k++) {
                fprintf(f, " %12.1f", t[k][i]);
                if (t[k][i] < t[best[i]][i])
                    best[i] = k;
            }
            fprintf(f, "\n");
        }
        /* A band from each measured size to the next where the winner changes. */
        for (int i = 0; i < nsizes;) {
            int j = i;
            while (j + 1 < nsizes && best[j + 1] == best[i])
                j++;
            char lo[32], hi[32];
            snprintf(lo, sizeof(lo), "%zu", i == 0 ? (size_t)0 : sizes[i]);
            if (j + 1 < nsizes)
                snprintf(hi, sizeof(hi), "%zu", sizes[j + 1]);
            else
                snprintf(hi, sizeof(hi), "inf");
            fprintf(f, "%s-%s %s\n", lo, hi, candidates[best[i]].name);
            i = j + 1;
        }
        fclose(f);
        printf("ddl-tune: wrote %s\n", path);
    }
    if (owner)
        ddl_free(c, buf);
    ddl_comm_destroy(c);
    MPI_Finalize();
    return 0;
}
