/* SPDX-License-Identifier: Apache-2.0 */
/* Recursive doubling for any rank count: with P = 2^k + rem, the first 2*rem
 * ranks pair up and the even one hands its data to the odd one, 2^k ranks run
 * k exchange steps, and the odd ones hand the result back.  Every combine puts
 * the lower ranks' data first, so both partners compute the same bits. */
#include "config.h"

#include "inter.h"
#include "steps.h"

int ddl_rd_max_steps(int size) { return size > 1 ? ddl_log2_floor(size) + 2 : 0; }

static void set_step(ddl_step_t *st, int send_peer, int recv_peer, size_t n, ddl_combine_t combine)
{
    st->send_peer = send_peer;
    st->send_off = 0;
    st->send_n = send_peer >= 0 ? n : 0;
    st->recv_peer = recv_peer;
    st->recv_off = 0;
    st->recv_n = recv_peer >= 0 ? n : 0;
    st->combine = combine;
    st->dim = 0;
}

int ddl_rd_build(int rank, int size, size_t n, ddl_step_t *steps)
{
    if (size == 1)
        return 0;
    int pof2 = 1 << ddl_log2_floor(size), rem = size - pof2, k = 0, newrank;
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            set_step(&steps[k++], rank + 1, -1, n, DDL_COMBINE_NONE);
            newrank = -1;
        } else {
            set_step(&steps[k++], -1, rank - 1, n, DDL_COMBINE_RECV_FIRST);
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int np = newrank ^ mask;
            int peer = np < rem ? 2 * np + 1 : np + rem;
            set_step(&steps[k++], peer, peer, n, peer < rank ? DDL_COMBINE_RECV_FIRST : DDL_COMBINE_RECV_SECOND);
        }
    }
    if (rank < 2 * rem) {
        if (rank % 2 == 1)
            set_step(&steps[k++], rank - 1, -1, n, DDL_COMBINE_NONE);
        else
            set_step(&steps[k++], -1, rank + 1, n, DDL_COMBINE_NONE);
    }
    return k;
}

/* The model's time: log2(P) steps of the whole chunk, two more with extra ranks. */
double ddl_model_rd(const ddl_model_t *m, int dim, int p, double b)
{
    if (p < 2)
        return 0;
    const ddl_link_t *l = &m->link[dim];
    int k = ddl_log2_floor(p), steps = k + ((1 << k) == p ? 0 : 2);
    return steps * (l->alpha + b * (l->beta + m->gamma));
}
