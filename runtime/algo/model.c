/* SPDX-License-Identifier: Apache-2.0 */
/* The alpha-beta cost model (model.h).  Pure; uses the algorithm table for
 * each algorithm's cost, which lives in the algorithm's own file
 * (inter_ring.c, inter_rd.c, inter_rab.c, inter_multiring.c). */
#include "config.h"

#include <math.h>

#include "algo.h"
#include "inter.h"
#include "model.h"
#include "parse.h"

int ddl_model_lane_algo(const ddl_model_t *m, int p, double bytes, double *cost)
{
    int best = -1;
    double best_t = 0;
    for (int i = 0; i < DDL_INTER_ALGOS; i++) {
        double t = ddl_inter_algos[i].cost(m, 0, p, bytes);
        if (best < 0 || t * ddl_inter_algos[i].margin < best_t * ddl_inter_algos[best].margin) {
            best = i;
            best_t = t;
        }
    }
    if (cost)
        *cost = best_t;
    return (int)ddl_inter_algos[best].id;
}

/* Per byte, the lane's thread: the reduction across G buffers (G - 1 passes;
 * a copy for one GPU) and the write-back into all G. */
static double thread_per_byte(const ddl_model_t *m, int gpus)
{
    return (double)((gpus > 1 ? gpus - 1 : 1) + (gpus > 1 ? gpus : 1)) * m->gamma;
}

size_t ddl_model_chunk(const ddl_model_t *m, const ddl_grid_t *grid, int p, int gpus, size_t bytes, size_t max_chunk)
{
    const size_t floor_chunk = 64 * 1024;
    if (p < 2 || bytes <= floor_chunk)
        return max_chunk < floor_chunk ? max_chunk : floor_chunk;
    /* Per-byte time of each stage, and the latency of one chunk's trip. */
    double stage[2 * DDL_GRID_MAX_DIMS + 1], a = 0;
    int n = 0;
    stage[n++] = thread_per_byte(m, gpus);
    if (grid && grid->ndims > 1) {
        double share = 1.0;
        for (int d = 1; d < grid->ndims; d++) {
            int md = grid->dims[d];
            double t = (double)(md - 1) / md * share * m->link[d].beta;
            stage[n++] = t; /* reduce-scatter inward */
            stage[n++] = t; /* allgather outward */
            a += 2.0 * (md - 1) * m->link[d].alpha;
            share /= md;
        }
    } else {
        stage[n++] = 2.0 * (p - 1) / p * m->link[0].beta;
        a = 2.0 * (p - 1) * m->link[0].alpha;
    }
    double slowest = 0, total = 0;
    for (int i = 0; i < n; i++) {
        total += stage[i];
        slowest = stage[i] > slowest ? stage[i] : slowest;
    }
    double c = sqrt((double)bytes * a / (total - slowest));
    size_t chunk = (size_t)ddl_double_to_ll(c, 0, (long long)max_chunk) / 4096 * 4096;
    if (chunk < floor_chunk)
        chunk = floor_chunk;
    return chunk > max_chunk ? max_chunk : chunk;
}

double ddl_model_lane_time(const ddl_model_t *m, const ddl_grid_t *grid, int p, int gpus, double bytes, double chunk)
{
    if (bytes <= 0)
        return 0;
    double per = chunk < bytes ? chunk : bytes, t = 0, first = 0;
    for (double left = bytes; left > 0; left -= per) {
        double b = left < per ? left : per, link;
        if (grid && grid->ndims > 1) {
            unsigned char dims[DDL_GRID_MAX_DIMS];
            link = ddl_model_multiring(m, grid, b, dims);
        } else
            ddl_model_lane_algo(m, p, b, &link);
        double thread = thread_per_byte(m, gpus) * b;
        t += link > thread ? link : thread;
        if (left == bytes)
            first = link < thread ? link : thread;
    }
    return t + first;
}
