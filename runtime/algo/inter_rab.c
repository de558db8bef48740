/* SPDX-License-Identifier: Apache-2.0 */
/* Rabenseifner's allreduce: a reduce-scatter that halves the block while it
 * doubles the distance (neighbours first, with the largest blocks), then the
 * allgather in reverse, over 2^k ranks; with P = 2^k + rem, the first
 * 2*rem ranks pair up first (the even one hands its data to the odd one) and get
 * the result back at the end, as in recursive doubling.  Each rank moves about
 * 2 * n * (1 - 1/2^k) elements in 2k steps instead of n * k.  Nearest first:
 * with nodes numbered by rack, half the data stays in the rack and only the
 * last, smallest blocks cross the uplinks (distant first, as before, sent half
 * the data over them: 3.6x the time on a 4:1 fat tree in ddl-sim,
 * bench/SCALE.md).  Every block is reduced at one place, so all ranks end
 * with the same bits. */
#include "config.h"

#include "inter.h"
#include "steps.h"
#include "slice.h"

int ddl_rab_max_steps(int size) { return size > 1 ? 2 * ddl_log2_floor(size) + 2 : 0; }

static int real_rank(int newrank, int rem) { return newrank < rem ? 2 * newrank + 1 : newrank + rem; }

int ddl_rab_build(int rank, int size, size_t n, ddl_step_t *steps)
{
    if (size == 1)
        return 0;
    int k = ddl_log2_floor(size), pof2 = 1 << k, rem = size - pof2, s = 0, newrank;
    ddl_step_t *st;
    if (rank < 2 * rem) {
        st = &steps[s++];
        *st = (ddl_step_t){-1, 0, 0, -1, 0, 0, DDL_COMBINE_NONE, 0};
        if (rank % 2 == 0) {
            st->send_peer = rank + 1;
            st->send_n = n;
            newrank = -1;
        } else {
            st->recv_peer = rank - 1;
            st->recv_n = n;
            st->combine = DDL_COMBINE_RECV_FIRST;
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (newrank >= 0) {
        /* The pof2 blocks of the balanced partition; [lo, hi) are the blocks this
         * rank is still responsible for. */
        int lo = 0, hi = pof2;
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int partner = newrank ^ mask, mid = lo + (hi - lo) / 2;
            int keep_lo = (newrank & mask) == 0;
            int send_lo = keep_lo ? mid : lo, send_hi = keep_lo ? hi : mid;
            int recv_lo = keep_lo ? lo : mid, recv_hi = keep_lo ? mid : hi;
            size_t so, sn, ro, rn, end;
            ddl_slice(n, (size_t)pof2, (size_t)send_lo, &so, &sn);
            ddl_slice(n, (size_t)pof2, (size_t)(send_hi - 1), &end, &sn);
            sn = end + sn - so;
            ddl_slice(n, (size_t)pof2, (size_t)recv_lo, &ro, &rn);
            ddl_slice(n, (size_t)pof2, (size_t)(recv_hi - 1), &end, &rn);
            rn = end + rn - ro;
            int peer = real_rank(partner, rem);
            st = &steps[s++];
            *st = (ddl_step_t){peer, so, sn, peer, ro, rn,
                               peer < rank ? DDL_COMBINE_RECV_FIRST : DDL_COMBINE_RECV_SECOND, 0};
            lo = recv_lo;
            hi = recv_hi;
        }
        /* Allgather: the same exchanges in reverse, each doubling the range. */
        for (int mask = pof2 >> 1; mask > 0; mask >>= 1) {
            int partner = newrank ^ mask, width = hi - lo;
            int plo = (newrank & mask) ? lo - width : lo + width;
            size_t so, sn, ro, rn, end;
            ddl_slice(n, (size_t)pof2, (size_t)lo, &so, &sn);
            ddl_slice(n, (size_t)pof2, (size_t)(hi - 1), &end, &sn);
            sn = end + sn - so;
            ddl_slice(n, (size_t)pof2, (size_t)plo, &ro, &rn);
            ddl_slice(n, (size_t)pof2, (size_t)(plo + width - 1), &end, &rn);
            rn = end + rn - ro;
            int peer = real_rank(partner, rem);
            steps[s++] = (ddl_step_t){peer, so, sn, peer, ro, rn, DDL_COMBINE_NONE, 0};
            if (plo < lo)
                lo = plo;
            hi = lo + 2 * width;
        }
    }
    if (rank < 2 * rem) {
        st = &steps[s++];
        *st = (ddl_step_t){-1, 0, 0, -1, 0, 0, DDL_COMBINE_NONE, 0};
        if (rank % 2 == 1) {
            st->send_peer = rank - 1;
            st->send_n = n;
        } else {
            st->recv_peer = rank + 1;
            st->recv_n = n;
        }
    }
    return s;
}

/* The model's time: 2 log2(P) steps over the power-of-two core, 2(P-1)/P of
 * the data, and the extra ranks' hand-in and hand-back. */
double ddl_model_rab(const ddl_model_t *m, int dim, int p, double b)
{
    if (p < 2)
        return 0;
    const ddl_link_t *l = &m->link[dim];
    int k = ddl_log2_floor(p), core = 1 << k;
    double t = 2.0 * k * l->alpha + 2.0 * (core - 1) / core * b * l->beta + (double)(core - 1) / core * b * m->gamma;
    if (core != p) /* the extra ranks hand their data in and get the result back */
        t += 2 * l->alpha + 2 * b * l->beta + b * m->gamma;
    return t;
}
