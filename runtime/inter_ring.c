/* Ring allreduce: P-1 reduce-scatter steps, then P-1 allgather steps.  Each
 * block is reduced once, at one place, and then copied: every rank ends with
 * the same bits. */
#include "config.h"

#include "steps.h"
#include "slice.h"

int ddl_ring_max_steps(int size) { return size > 1 ? 2 * (size - 1) : 0; }

int ddl_ring_build(int rank, int size, size_t n, ddl_step_t *steps)
{
    if (size == 1)
        return 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size, k = 0;
    for (int s = 0; s < 2 * (size - 1); s++) {
        int gather = s >= size - 1;
        int j = gather ? s - (size - 1) : s;
        /* Reduce-scatter: send block r - j, receive and reduce block r - j - 1.
         * Allgather: send block r + 1 - j (complete), receive block r - j. */
        int send_blk = ((rank - j + (gather ? 1 : 0)) % size + size) % size;
        int recv_blk = ((rank - j - (gather ? 0 : 1)) % size + size) % size;
        ddl_step_t *st = &steps[k++];
        st->send_peer = right;
        ddl_slice(n, (size_t)size, (size_t)send_blk, &st->send_off, &st->send_n);
        st->recv_peer = left;
        ddl_slice(n, (size_t)size, (size_t)recv_blk, &st->recv_off, &st->recv_n);
        st->combine = gather ? DDL_COMBINE_NONE : DDL_COMBINE_RECV_FIRST;
        st->dim = 0;
    }
    return k;
}
