/* SPDX-License-Identifier: Apache-2.0 */
/* Ring allreduce: P-1 reduce-scatter steps, then P-1 allgather steps.  Each
 * block is reduced once, at one place, and then copied: every rank ends with
 * the same bits.  The pass is shared with the multiring, which runs one along
 * each grid dimension. */
#include "config.h"

#include "inter.h"
#include "steps.h"
#include "slice.h"

int ddl_ring_max_steps(int size) { return size > 1 ? 2 * (size - 1) : 0; }

int ddl_ring_pass(int i, int m, int right, int left, size_t off, size_t n, int gather, int dim, ddl_step_t *steps)
{
    for (int j = 0; j < m - 1; j++) {
        /* Reduce-scatter: send block i - j, receive and reduce block i - j - 1;
         * this rank then holds block i + 1 complete.  Allgather: send block
         * i + 1 - j (complete), receive block i - j. */
        int send_blk = ((i - j + (gather ? 1 : 0)) % m + m) % m;
        int recv_blk = ((i - j - (gather ? 0 : 1)) % m + m) % m;
        ddl_step_t *st = &steps[j];
        st->send_peer = right;
        ddl_slice(n, (size_t)m, (size_t)send_blk, &st->send_off, &st->send_n);
        st->send_off += off;
        st->recv_peer = left;
        ddl_slice(n, (size_t)m, (size_t)recv_blk, &st->recv_off, &st->recv_n);
        st->recv_off += off;
        st->combine = gather ? DDL_COMBINE_NONE : DDL_COMBINE_RECV_FIRST;
        st->dim = dim;
    }
    return m > 1 ? m - 1 : 0;
}

int ddl_ring_build(int rank, int size, size_t n, ddl_step_t *steps)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int k = ddl_ring_pass(rank, size, right, left, 0, n, 0, 0, steps);
    return k + ddl_ring_pass(rank, size, right, left, 0, n, 1, 0, steps + k);
}

/* The model's time: 2(P-1) steps, each moving and reducing 1/P of the data. */
double ddl_model_ring(const ddl_model_t *m, int dim, int p, double b)
{
    if (p < 2)
        return 0;
    const ddl_link_t *l = &m->link[dim];
    return 2.0 * (p - 1) * l->alpha + 2.0 * (p - 1) / p * b * l->beta + (double)(p - 1) / p * b * m->gamma;
}
