/* SPDX-License-Identifier: Apache-2.0 */
/* Online selection's bookkeeping (select/online.c), with the agreement done
 * here as MPI would: the elementwise maximum over simulated ranks. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "exchange.h"
#include "online.h"
#include "paths.h"
#include "signature.h"
#include "tuning.h"
#include "unit.h"

#define RANKS 4

static const ddl_online_job_t two_nodes = {.nnodes = 2,
                                           .path = DDL_ALGO_LANE,
                                           .with_mpi = 1,
                                           .lane_algos = 1,
                                           .chunks = 1,
                                           .drift = 0.5,
                                           .exchange_min = DDL_SIG_DATA_BYTES,
                                           .exchange_max = DDL_SIG_EXCHANGE_BYTES};

static int same(const ddl_candidate_t *a, const ddl_candidate_t *b)
{
    return a->algo == b->algo && a->lane_algo == b->lane_algo && a->chunk_shift == b->chunk_shift &&
           a->mpi_form == b->mpi_form && a->ndims == b->ndims && memcmp(a->dim_algo, b->dim_algo, sizeof(a->dim_algo)) == 0;
}

/* The multiring's best algorithm along each node dimension, for cost(): each
 * other choice costs its dimension's share more, the same whatever the other
 * dimensions run, so every stage has one right answer. */
static const unsigned char best_dims[DDL_GRID_MAX_DIMS] = {0, DDL_DIM_RD, DDL_DIM_RING, DDL_DIM_RD};

/* A rank's time for candidate c: a cost per candidate and size that all ranks
 * share, times this rank's own noise (up to +-noise), so that ranks disagree
 * locally about which candidate is fastest. */
static double cost(const ddl_candidate_t *c, size_t bytes, int rank, unsigned *seed, double noise)
{
    double base = c->algo == DDL_ALGO_MPI ? 2e-6 + bytes / 1e9 : 20e-6 + bytes / (2e9 + 1e8 * c->lane_algo);
    base *= 1.0 + 0.05 * c->chunk_shift * c->chunk_shift;
    for (int d = 1; d <= c->ndims; d++)
        base *= c->dim_algo[d] == best_dims[d] ? 1.0 : 1.1 + 0.1 * d;
    double jitter = ((double)rand_r(seed) / RAND_MAX * 2 - 1) * noise;
    return base * (1 + jitter) * (1 + 0.01 * rank);
}

/* One call of `bytes` on every rank in lock step: every rank runs the same
 * candidate; when one asks for an agreement all do, and all settle alike.
 * Returns the outcome (0 when no agreement was due). */
static int call_all(ddl_online_t *o, size_t bytes, int chunked, unsigned *seeds, double noise, double scale)
{
    const ddl_candidate_t *c0 = ddl_online_next(&o[0], bytes, chunked);
    double v[RANKS][DDL_ONLINE_MAX_CANDIDATES], agreed[DDL_ONLINE_MAX_CANDIDATES] = {0};
    int n0 = -1;
    for (int r = 0; r < RANKS; r++) {
        const ddl_candidate_t *c = ddl_online_next(&o[r], bytes, chunked);
        ck_assert(same(c, c0));
        double t = ddl_online_wants_time(&o[r], bytes) ? cost(c, bytes, r, &seeds[r], noise) * scale : -1;
        int n = ddl_online_observe(&o[r], bytes, t, c->algo == DDL_ALGO_MPI ? 0 : 65536u << (1 + c->chunk_shift), v[r]);
        if (r == 0)
            n0 = n;
        ck_assert_int_eq(n, n0); /* every rank asks for the agreement at the same call */
        for (int i = 0; i < n; i++)
            agreed[i] = v[r][i] > agreed[i] ? v[r][i] : agreed[i];
    }
    if (n0 == 0)
        return 0;
    int out0 = ddl_online_settle(&o[0], bytes, agreed);
    for (int r = 1; r < RANKS; r++)
        ck_assert_int_eq(ddl_online_settle(&o[r], bytes, agreed), out0);
    return out0;
}

START_TEST(test_classes)
{
    ck_assert_int_eq(ddl_online_class_of(0), 0);
    ck_assert_int_eq(ddl_online_class_of(1), 0);
    ck_assert_int_eq(ddl_online_class_of(8), 3);
    ck_assert_int_eq(ddl_online_class_of(15), 3);
    ck_assert_int_eq(ddl_online_class_of(16), 4);
    ck_assert_int_eq(ddl_online_class_of((size_t)64 << 20), 26);
    ck_assert_int_eq(ddl_online_class_of(SIZE_MAX), DDL_ONLINE_CLASSES - 1);
}
END_TEST

/* Between nodes, job adds the MPI path's `form` (named `name`) to the classes
 * from 8 KiB to class `top` and to no other, as the last candidate there
 * (beside the lanes' two, the MPI path and, below 64 KiB, its exchange). */
static void mpi_form_classes(const ddl_online_job_t *job, int top, int form, const char *name)
{
    static ddl_online_t o;
    char got[64];
    ddl_online_init(&o, job);
    for (int cls = 10; cls <= top + 2; cls++) {
        ddl_online_next(&o, (size_t)1 << cls, 0);
        const ddl_online_class_t *k = &o.cls[cls];
        int with_exchange = cls >= 13 && cls <= 15, with_form = cls >= 13 && cls <= top;
        ck_assert_int_eq(k->ncand, 3 + with_exchange + with_form);
        if (with_form) {
            const ddl_candidate_t *last = &k->cand[k->ncand - 1];
            ck_assert(last->algo == DDL_ALGO_MPI && last->mpi_form == form);
            ddl_online_describe(k, k->ncand - 1, got, sizeof(got));
            ck_assert_str_eq(got, name);
        }
    }
}

START_TEST(test_candidates)
{
    ddl_online_t o;
    ddl_online_init(&o, &two_nodes);
    /* Two nodes, chunked: ring, rd (Rabenseifner's steps are the ring's), mpi, half and twice the chunk. */
    ddl_online_next(&o, 1 << 20, 1);
    const ddl_online_class_t *k = &o.cls[20];
    ck_assert_int_eq(k->state, DDL_CLASS_EXPLORING);
    ck_assert_int_eq(k->ncand, 5);
    ck_assert_int_eq(k->cand[0].lane_algo, DDL_INTER_RING);
    ck_assert_int_eq(k->cand[1].lane_algo, DDL_INTER_RD);
    ck_assert_int_eq(k->cand[2].algo, DDL_ALGO_MPI);
    ck_assert_int_eq(k->cand[3].chunk_shift, -1);
    ck_assert_int_eq(k->cand[4].chunk_shift, 1);
    /* Not chunked: no chunk sizes. */
    ddl_online_next(&o, 64, 0);
    ck_assert_int_eq(o.cls[6].ncand, 3);

    ddl_online_job_t job = two_nodes;
    job.nnodes = 3;
    ddl_online_init(&o, &job);
    ddl_online_next(&o, 64, 0);
    ck_assert_int_eq(o.cls[6].ncand, 4);
    ck_assert_int_eq(o.cls[6].cand[2].lane_algo, DDL_INTER_RAB);

    /* A grid: the multiring, then the lane algorithms beside it, MPI, the
     * multiring's half and twice chunk; rounds as the job says. */
    job.path = DDL_ALGO_MULTIRING;
    job.rounds = 4;
    ddl_online_init(&o, &job);
    ddl_online_next(&o, 1 << 20, 1);
    k = &o.cls[20];
    ck_assert_int_eq(k->ncand, 7);
    ck_assert_int_eq(k->rounds, 4);
    ck_assert_int_eq(k->cand[0].algo, DDL_ALGO_MULTIRING);
    for (int i = 1; i <= 3; i++)
        ck_assert_int_eq(k->cand[i].algo, DDL_ALGO_LANE);
    ck_assert_int_eq(k->cand[3].lane_algo, DDL_INTER_RAB);
    ck_assert_int_eq(k->cand[4].algo, DDL_ALGO_MPI);
    ck_assert(k->cand[5].algo == DDL_ALGO_MULTIRING && k->cand[5].chunk_shift == -1);
    ck_assert(k->cand[6].algo == DDL_ALGO_MULTIRING && k->cand[6].chunk_shift == 1);
    job.lane_algos = job.with_mpi = 0; /* DDL_ALGO=multiring: its chunks alone */
    job.rounds = 0;
    ddl_online_init(&o, &job);
    ddl_online_next(&o, 1 << 20, 1);
    ck_assert_int_eq(o.cls[20].ncand, 3);
    ck_assert_int_eq(o.cls[20].rounds, 3);
    ck_assert_int_eq(o.cls[20].cand[0].algo, DDL_ALGO_MULTIRING);

    /* Between nodes, the classes of 8 KiB to 64 KiB - 1 (some of their sizes
     * past what the MPI path's exchange carries by default, their smallest
     * within what it can carry: 63 KiB) time the exchange with the data beside
     * the system MPI. */
    ddl_online_init(&o, &two_nodes);
    for (int cls = 10; cls <= 17; cls++) {
        ddl_online_next(&o, (size_t)1 << cls, 0);
        k = &o.cls[cls];
        int with = cls >= 13 && cls <= 15;
        ck_assert_int_eq(k->ncand, 3 + with);
        ck_assert(k->cand[2].algo == DDL_ALGO_MPI && k->cand[2].mpi_form == DDL_MPI_FORM_PLAIN);
        if (with)
            ck_assert(k->cand[3].algo == DDL_ALGO_MPI && k->cand[3].mpi_form == DDL_MPI_FORM_EXCHANGE);
    }
    char name[64];
    ddl_online_describe(&o.cls[14], 3, name, sizeof(name));
    ck_assert_str_eq(name, "mpi/exchange");
    /* Between hosts, where a repeated call on the MPI path up to 128 KiB
     * starts early, the classes above what the signatures carry by default
     * (8 KiB) that reach down to 128 KiB also time the MPI path without the
     * early start, last of the MPI path's candidates; on one host, none. */
    job = two_nodes;
    job.early_max = DDL_MPI_EARLY_MAX_BYTES;
    mpi_form_classes(&job, 17, DDL_MPI_FORM_AFTER, "mpi/after");
    job.early_max = 0;
    ddl_online_init(&o, &job);
    ddl_online_next(&o, (size_t)1 << 16, 0);
    ck_assert_int_eq(o.cls[16].ncand, 3);
    /* With a power of two of owners, the MPI path in halves: the classes
     * above 8 KiB that reach down to 512 KiB, last. */
    job.halves_max = DDL_SIG_HALVES_BYTES;
    mpi_form_classes(&job, 18, DDL_MPI_FORM_HALVES, "mpi/halves");
    /* With the early start too: up to its largest call, mpi/after and the
     * halves, and no plain form (whose repeated calls would start early). */
    job.early_max = DDL_MPI_EARLY_MAX_BYTES;
    ddl_online_init(&o, &job);
    for (int cls = 12; cls <= 19; cls++) {
        ddl_online_next(&o, (size_t)1 << cls, 0);
        const ddl_online_class_t *kc = &o.cls[cls];
        int forms[DDL_MPI_FORM_COUNT] = {0};
        for (int i = 0; i < kc->ncand; i++)
            if (kc->cand[i].algo == DDL_ALGO_MPI)
                forms[kc->cand[i].mpi_form]++;
        int both = cls >= 13 && cls <= 17;
        ck_assert_int_eq(forms[DDL_MPI_FORM_PLAIN], !both);
        ck_assert_int_eq(forms[DDL_MPI_FORM_AFTER], both);
        ck_assert_int_eq(forms[DDL_MPI_FORM_HALVES], cls >= 13 && cls <= 18);
    }
    /* The order of the exploring calls: the MPI path's candidates first, all
     * rounds of each in a row (a lane call just before would leave the helpers
     * spinning into them), then the lane algorithms in turn. */
    job = two_nodes;
    job.mpi_first = 1;
    ddl_online_init(&o, &job);
    k = &o.cls[14];
    double v[DDL_ONLINE_MAX_CANDIDATES];
    for (int call = 0; call < 20; call++) {
        const ddl_candidate_t *c = ddl_online_next(&o, 1 << 14, 0);
        if (call < 10)
            ck_assert(c->algo == DDL_ALGO_MPI && (c->mpi_form == DDL_MPI_FORM_EXCHANGE) == (call >= 5));
        else
            ck_assert(c->algo == DDL_ALGO_LANE && c->lane_algo == (call % 2 ? DDL_INTER_RD : DDL_INTER_RING));
        ck_assert_int_eq(ddl_online_observe(&o, 1 << 14, 1e-6 * (call + 1), 0, v), call == 19 ? 4 : 0);
    }
    /* Each candidate's best round: the first of its block, or of its turns. */
    ck_assert(v[2] == 1e-6 && v[3] == 6e-6 && v[0] == 11e-6 && v[1] == 12e-6);
    /* Without mpi_first (collective mode: the lanes' first call checks the
     * helpers' arguments too) every candidate in turn, the lanes first. */
    ddl_online_init(&o, &two_nodes);
    for (int call = 0; call < 4; call++) {
        ck_assert_int_eq(ddl_online_next(&o, 1 << 14, 0)->algo, call < 2 ? DDL_ALGO_LANE : DDL_ALGO_MPI);
        ddl_online_observe(&o, 1 << 14, 1e-6, 0, v);
    }

    job = two_nodes;
    job.nnodes = 1; /* one node: the lanes or MPI, nothing else matters */
    ddl_online_init(&o, &job);
    ddl_online_next(&o, 1 << 20, 1);
    ck_assert_int_eq(o.cls[20].ncand, 2);

    job = two_nodes; /* DDL_ALGO=lane, DDL_LANE_ALGO and DDL_CHUNK_SIZE set: nothing to choose */
    job.with_mpi = job.lane_algos = job.chunks = 0;
    ddl_online_init(&o, &job);
    const ddl_candidate_t *c = ddl_online_next(&o, 1 << 20, 1);
    ck_assert_int_eq(o.cls[20].state, DDL_CLASS_DECIDED);
    ck_assert_int_eq(c->algo, DDL_ALGO_LANE);
    for (int i = 0; i < 1000; i++) {
        ck_assert(!ddl_online_wants_time(&o, 1 << 20));
        ck_assert_int_eq(ddl_online_observe(&o, 1 << 20, -1, 0, v), 0); /* never an agreement */
    }
}
END_TEST

/* Ranks with different local timings end with the same decision, the one
 * with the least slowest-rank time, after exactly candidates x rounds calls. */
START_TEST(test_agreement)
{
    static ddl_online_t o[RANKS];
    unsigned seeds[RANKS];
    for (int r = 0; r < RANKS; r++) {
        ddl_online_init(&o[r], &two_nodes);
        seeds[r] = 1000u + (unsigned)r;
    }
    int disagreed_locally = 0;
    for (size_t bytes = 8; bytes <= ((size_t)256 << 20); bytes *= 4) {
        int cls = ddl_online_class_of(bytes), chunked = bytes >= (1 << 18), calls = 0, out = 0;
        while (out != DDL_ONLINE_DECIDED) {
            out = call_all(o, bytes, chunked, seeds, 0.3, 1);
            calls++;
            ck_assert_int_le(calls, 100);
        }
        const ddl_online_class_t *k = &o[0].cls[cls];
        /* The exploration's whole cost, with one untimed warm-up call where there is one round. */
        ck_assert_int_eq(calls, k->planned + (k->rounds == 1));
        int best = 0, local_best[RANKS];
        for (int i = 1; i < k->ncand; i++)
            best = k->agreed[i] < k->agreed[best] ? i : best;
        for (int r = 0; r < RANKS; r++) {
            const ddl_online_class_t *kr = &o[r].cls[cls];
            ck_assert_int_eq(kr->state, DDL_CLASS_DECIDED);
            ck_assert_int_eq(kr->chosen, best);
            ck_assert_mem_eq(kr->agreed, k->agreed, sizeof(double) * (size_t)k->ncand);
            local_best[r] = 0;
            for (int i = 1; i < kr->ncand; i++)
                local_best[r] = kr->fastest[i] < kr->fastest[local_best[r]] ? i : local_best[r];
            disagreed_locally |= local_best[r] != local_best[0];
            /* Later calls run the decision on every rank. */
            ck_assert(same(ddl_online_next(&o[r], bytes, chunked), &kr->cand[best]));
        }
        /* Small messages go to MPI, large ones to a lane algorithm, as the costs say. */
        if (bytes <= 8192 || bytes >= 131072)
            ck_assert_int_eq(k->cand[best].algo, bytes <= 8192 ? DDL_ALGO_MPI : DDL_ALGO_LANE);
    }
    ck_assert(disagreed_locally); /* else the test showed nothing */
}
END_TEST

static void decide(ddl_online_t *o, size_t bytes, int chunked, unsigned *seeds)
{
    while (call_all(o, bytes, chunked, seeds, 0, 1) != DDL_ONLINE_DECIDED)
        ;
}

/* The duel after a decision: DDL_ONLINE_RECENT calls each of the choice and
 * its rival, every one timed, the choice's at `scale` of their cost; the
 * outcome of the check after them. */
static int confirm(ddl_online_t *o, size_t bytes, unsigned *seeds, double scale)
{
    const ddl_online_class_t *k = &o[0].cls[ddl_online_class_of(bytes)];
    ck_assert_int_eq(k->confirming, 1);
    int chosen = k->chosen, runs[2] = {0, 0};
    for (int i = 0; i < 2 * DDL_ONLINE_RECENT; i++) {
        ck_assert(ddl_online_wants_time(&o[0], bytes));
        const ddl_candidate_t *c = ddl_online_next(&o[0], bytes, 1);
        int mine = c == &k->cand[chosen];
        ck_assert(mine || c == &k->cand[k->rival]);
        runs[mine]++;
        int out = call_all(o, bytes, 1, seeds, 0, mine ? scale : 1);
        ck_assert_int_eq(out != 0, i == 2 * DDL_ONLINE_RECENT - 1);
        if (out) {
            ck_assert_int_eq(runs[0], DDL_ONLINE_RECENT);
            ck_assert_int_eq(k->confirming, 0);
            ck_assert_int_ge(k->window, DDL_ONLINE_MIN_WINDOW);
            return out;
        }
    }
    return 0;
}

/* A choice made on a lucky round: its calls, run in turn with the
 * runner-up's, slower at the middle, hand the class to the runner-up, on
 * every rank at the same call; as fast or a little faster, it stays.  A
 * runner-up further off than DDL_ONLINE_DUEL_SPAN gets no duel. */
START_TEST(test_confirm)
{
    static ddl_online_t o[RANKS];
    unsigned seeds[RANKS] = {1, 2, 3, 4};
    size_t bytes = 1 << 20;
    int cls = ddl_online_class_of(bytes);
    const ddl_online_class_t *k = &o[0].cls[cls];
    const double scales[3] = {1, 0.99, 1.01}; /* the choice's duel calls against the runner-up's */
    for (int t = 0; t < 3; t++) {
        for (int r = 0; r < RANKS; r++)
            ddl_online_init(&o[r], &two_nodes);
        decide(o, bytes, 1, seeds);
        int chosen = k->chosen, up = -1;
        for (int i = 0; i < k->ncand; i++)
            if (i != chosen && (up < 0 || k->agreed[i] < k->agreed[up]))
                up = i;
        ck_assert_int_ge(up, 0);
        ck_assert_int_eq(k->rival, up);
        /* cost() has no noise here: the runner-up's calls take its round's time */
        double scale = t == 0 ? 1 : scales[t] * k->agreed[up] / k->agreed[chosen];
        int out = confirm(o, bytes, seeds, scale);
        if (t < 2) {
            ck_assert_int_eq(out, DDL_ONLINE_CONFIRMED);
            ck_assert_int_eq(k->chosen, chosen);
        } else {
            ck_assert_int_eq(out, DDL_ONLINE_SWITCHED);
            ck_assert_int_eq(k->chosen, up);
            ck_assert_int_eq(k->rival, chosen);
            ck_assert_double_eq_tol(k->reference, k->agreed[up], k->agreed[up] * 1e-9);
            for (int r = 0; r < RANKS; r++)
                ck_assert_int_eq(o[r].cls[cls].chosen, up);
            const ddl_candidate_t *next = ddl_online_next(&o[0], bytes, 1);
            ck_assert(same(next, &k->cand[up]));
        }
        ck_assert_int_eq(k->state, DDL_CLASS_DECIDED);
        ck_assert(ddl_online_next(&o[0], bytes, 1) == &k->cand[k->chosen]);
    }
    /* 32 KiB: the MPI path's forms and the lanes within the span, the
     * runner-up of the choice's own family; the rival is the other family's best. */
    for (int r = 0; r < RANKS; r++)
        ddl_online_init(&o[r], &two_nodes);
    size_t mid = 1 << 15;
    decide(o, mid, 0, seeds);
    const ddl_online_class_t *m = &o[0].cls[ddl_online_class_of(mid)];
    int mpi = m->cand[m->chosen].algo == DDL_ALGO_MPI, other = -1, up = -1;
    for (int i = 0; i < m->ncand; i++) {
        if (i != m->chosen && (up < 0 || m->agreed[i] < m->agreed[up]))
            up = i;
        if ((m->cand[i].algo == DDL_ALGO_MPI) != mpi && (other < 0 || m->agreed[i] < m->agreed[other]))
            other = i;
    }
    ck_assert_int_ne(up, other); /* else the test showed nothing */
    ck_assert_int_eq(m->confirming, 1);
    ck_assert_int_eq(m->rival, other);
    /* In serve mode (mpi_first) the duel runs in two blocks, the MPI path's first. */
    ddl_online_job_t serve = two_nodes;
    serve.mpi_first = 1;
    for (int r = 0; r < RANKS; r++)
        ddl_online_init(&o[r], &serve);
    decide(o, mid, 0, seeds);
    ck_assert_int_eq(m->confirming, 1);
    ck_assert_int_ne(m->cand[m->chosen].algo == DDL_ALGO_MPI, m->cand[m->rival].algo == DDL_ALGO_MPI);
    for (int i = 0; i < 2 * DDL_ONLINE_RECENT; i++) {
        ck_assert_int_eq(ddl_online_next(&o[0], mid, 0)->algo == DDL_ALGO_MPI, i < DDL_ONLINE_RECENT);
        call_all(o, mid, 0, seeds, 0, 1);
    }
    ck_assert_int_eq(m->confirming, 0);
    /* 8 bytes: the MPI path far ahead of the lanes, no duel, checked from the next call on. */
    for (int r = 0; r < RANKS; r++)
        ddl_online_init(&o[r], &two_nodes);
    decide(o, 8, 0, seeds);
    const ddl_online_class_t *small = &o[0].cls[ddl_online_class_of(8)];
    ck_assert_int_eq(small->confirming, 0);
    ck_assert_int_ge(small->window, DDL_ONLINE_MIN_WINDOW);
}
END_TEST

/* DDP's buckets of one class differ in size (here 2.1 and 2.7 MB, in turn):
 * from 1 MiB up each call counts as if of the class's smallest size, so the
 * exploration and the duel choose the candidate that is fastest per byte,
 * whichever bucket each candidate's calls happened to get. */
START_TEST(test_mixed_sizes)
{
    static ddl_online_t o[RANKS];
    unsigned seeds[RANKS] = {1, 2, 3, 4};
    const size_t sizes[2] = {2202009, 2831155};
    int cls = ddl_online_class_of(sizes[0]);
    ck_assert_int_eq(ddl_online_class_of(sizes[1]), cls);
    ck_assert_int_ge(cls, DDL_ONLINE_PER_BYTE_CLASS);
    const ddl_online_class_t *k = &o[0].cls[cls];
    for (int offset = 0; offset < 2; offset++) {
        for (int r = 0; r < RANKS; r++)
            ddl_online_init(&o[r], &two_nodes);
        int call = 0, dueled = 0;
        while (k->state != DDL_CLASS_DECIDED || k->confirming) {
            dueled |= k->confirming;
            call_all(o, sizes[(call++ + offset) % 2], 1, seeds, 0, 1);
            ck_assert_int_le(call, 200);
        }
        ck_assert(dueled); /* else the test showed nothing of the duel */
        unsigned seed = 0;
        int best = 0;
        for (int i = 1; i < k->ncand; i++)
            if (cost(&k->cand[i], sizes[0], 0, &seed, 0) < cost(&k->cand[best], sizes[0], 0, &seed, 0))
                best = i;
        ck_assert_int_eq(k->chosen, best);
    }
}
END_TEST

/* The MPI path against the lanes' candidates, timed as often in all: at 256
 * KiB between 2 nodes one MPI candidate against four of the lanes, 3 rounds
 * each of the lanes', 12 of MPI's, in either visiting order.  Then with
 * noise (+-30% per call) and MPI 15% faster than every lane candidate, MPI
 * must win nearly always; timed 3 rounds each, the lanes' best of 12 calls
 * beat MPI's best of 3 in about half the trials. */
START_TEST(test_fair_paths)
{
    static ddl_online_t o;
    size_t bytes = 256 << 10;
    int cls = ddl_online_class_of(bytes);
    for (int mpi_first = 0; mpi_first <= 1; mpi_first++) {
        ddl_online_job_t job = two_nodes;
        job.mpi_first = mpi_first;
        ddl_online_init(&o, &job);
        ddl_online_next(&o, bytes, 1);
        const ddl_online_class_t *k = &o.cls[cls];
        ck_assert_int_eq(k->ncand, 5);
        int visits[DDL_ONLINE_MAX_CANDIDATES] = {0}, mpi = 0, lanes = 0;
        double v[DDL_ONLINE_MAX_CANDIDATES];
        for (int call = 0; k->state == DDL_CLASS_EXPLORING; call++) {
            ck_assert_int_le(call, 100);
            const ddl_candidate_t *c = ddl_online_next(&o, bytes, 1);
            int timed = ddl_online_wants_time(&o, bytes);
            if (timed) {
                visits[c - k->cand]++;
                *(c->algo == DDL_ALGO_MPI ? &mpi : &lanes) += 1;
            }
            if (ddl_online_observe(&o, bytes, timed ? 1e-3 : -1, 65536, v))
                ddl_online_settle(&o, bytes, v);
        }
        ck_assert_int_eq(mpi, lanes);
        for (int i = 0; i < k->ncand; i++)
            ck_assert_int_eq(visits[i], k->cand[i].algo == DDL_ALGO_MPI ? 12 : 3);
    }
    /* 4 MiB, two rounds: the MPI path's extra rounds only on one host. */
    size_t big = 4 << 20;
    for (int one_host = 0; one_host <= 1; one_host++) {
        ddl_online_job_t job = two_nodes;
        job.one_host = one_host;
        ddl_online_init(&o, &job);
        ddl_online_next(&o, big, 1);
        const ddl_online_class_t *k = &o.cls[ddl_online_class_of(big)];
        int nm = 0;
        for (int i = 0; i < k->ncand; i++)
            nm += k->cand[i].algo == DDL_ALGO_MPI;
        ck_assert_int_eq(k->rounds, 2);
        ck_assert_int_eq(nm, 1);
        ck_assert_int_eq(k->other_rounds, 2);
        ck_assert_int_eq(k->mpi_rounds, one_host ? 2 * (k->ncand - 1) : 2);
        ck_assert_int_eq(k->planned, k->mpi_rounds + (k->ncand - 1) * 2);
    }
    int mpi_won = 0, trials = 200;
    unsigned seed = 7;
    for (int t = 0; t < trials; t++) {
        ddl_online_init(&o, &two_nodes);
        double v[DDL_ONLINE_MAX_CANDIDATES];
        while (o.cls[cls].state != DDL_CLASS_DECIDED) {
            const ddl_candidate_t *c = ddl_online_next(&o, bytes, 1);
            double jitter = 1 + ((double)rand_r(&seed) / RAND_MAX * 2 - 1) * 0.3;
            double time = (c->algo == DDL_ALGO_MPI ? 1e-3 : 1.15e-3) * jitter;
            if (ddl_online_observe(&o, bytes, ddl_online_wants_time(&o, bytes) ? time : -1, 65536, v))
                ddl_online_settle(&o, bytes, v);
        }
        mpi_won += o.cls[cls].cand[o.cls[cls].chosen].algo == DDL_ALGO_MPI;
    }
    ck_assert_msg(mpi_won >= trials * 9 / 10, "MPI, 15%% faster, won %d of %d explorations", mpi_won, trials);
}
END_TEST

START_TEST(test_drift)
{
    static ddl_online_t o[RANKS];
    unsigned seeds[RANKS] = {1, 2, 3, 4};
    for (int r = 0; r < RANKS; r++)
        ddl_online_init(&o[r], &two_nodes);
    size_t bytes = 1 << 20;
    int cls = ddl_online_class_of(bytes);
    decide(o, bytes, 1, seeds);
    ck_assert_int_eq(confirm(o, bytes, seeds, 1), DDL_ONLINE_CONFIRMED);
    const ddl_online_class_t *k = &o[0].cls[cls];
    long window = k->window;
    /* About DDL_ONLINE_CHECK_SECONDS of calls between checks. */
    ck_assert_int_ge(window, DDL_ONLINE_MIN_WINDOW);
    ck_assert_double_le(window * k->reference, DDL_ONLINE_CHECK_SECONDS * 1.5);
    /* Within the drift (+20%), and one very slow call: steady. */
    int timed = 0;
    for (long i = 0; i < window; i++) {
        timed += ddl_online_wants_time(&o[0], bytes);
        double scale = i == window - 3 ? 10 : 1.2;
        int out = call_all(o, bytes, 1, seeds, 0, scale);
        ck_assert_int_eq(out, i == window - 1 ? DDL_ONLINE_STEADY : 0);
    }
    ck_assert_int_eq(timed, DDL_ONLINE_RECENT); /* only the calls before the check read the clock */
    /* Three times slower: drifted at the end of the next window, and explored again. */
    for (long i = 0; i < window; i++)
        ck_assert_int_eq(call_all(o, bytes, 1, seeds, 0, 3), i == window - 1 ? DDL_ONLINE_DRIFTED : 0);
    ck_assert_int_eq(k->state, DDL_CLASS_NEW);
    ddl_online_next(&o[0], bytes, 1);
    ck_assert_int_eq(k->state, DDL_CLASS_EXPLORING);
    ck_assert_int_eq(k->explorations, 2);
    for (int r = 1; r < RANKS; r++)
        ddl_online_next(&o[r], bytes, 1);
    /* Faster by more than the drift: the choice stays, its new time becomes
     * the reference (a reference timed on a busy host would otherwise make
     * every check explore again), and the calls between checks grow with it;
     * then slower than the new reference explores again. */
    decide(o, bytes, 1, seeds);
    ck_assert_int_eq(confirm(o, bytes, seeds, 1), DDL_ONLINE_CONFIRMED);
    window = k->window;
    int chosen = k->chosen;
    double reference = k->reference;
    for (long i = 0; i < window; i++)
        ck_assert_int_eq(call_all(o, bytes, 1, seeds, 0, 0.4), i == window - 1 ? DDL_ONLINE_FASTER : 0);
    ck_assert_int_eq(k->state, DDL_CLASS_DECIDED);
    ck_assert_int_eq(k->chosen, chosen);
    ck_assert_double_lt(k->reference, reference * 0.5);
    ck_assert_int_ge(k->window, window * 2);
    window = k->window;
    for (long i = 0; i < window; i++)
        ck_assert_int_eq(call_all(o, bytes, 1, seeds, 0, 1), i == window - 1 ? DDL_ONLINE_DRIFTED : 0);
}
END_TEST

/* DDL_EXPLORE with the multiring on a 1x2x2x2 grid: ring and rd along each
 * node dimension in turn, from the innermost out, the decided ones fixed and
 * the outer ones on the ring; then the class's candidates, the multiring with
 * the decided dimensions; a tuning file reads them back; a drift times them
 * again. */
START_TEST(test_dimensions)
{
    static ddl_online_t o[RANKS];
    unsigned seeds[RANKS] = {9, 10, 11, 12};
    size_t bytes = 1 << 20;
    int cls = ddl_online_class_of(bytes);
    for (int with_mpi = 0; with_mpi <= 1; with_mpi++) {
        ddl_online_job_t job = {.nnodes = 8, .path = DDL_ALGO_MULTIRING, .with_mpi = with_mpi, .drift = 0.5, .dims = 3};
        for (int r = 0; r < RANKS; r++)
            ddl_online_init(&o[r], &job);
        const ddl_online_class_t *k = &o[0].cls[cls];
        for (int d = 1; d <= 3; d++) {
            const ddl_candidate_t *c = ddl_online_next(&o[0], bytes, 1);
            ck_assert_int_eq(k->stage, d);
            ck_assert_int_eq(k->ncand, 2);
            for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(k->cand[i].algo, DDL_ALGO_MULTIRING);
                ck_assert_int_eq(k->cand[i].ndims, 3);
                for (int e = 1; e <= 3; e++) /* decided, this stage's trial, then the ring */
                    ck_assert_int_eq(k->cand[i].dim_algo[e], e < d ? best_dims[e] : e == d ? i : DDL_DIM_RING);
            }
            ck_assert_ptr_eq(c, &k->cand[0]);
            int out;
            while ((out = call_all(o, bytes, 1, seeds, 0.02, 1)) == 0)
                ;
            ck_assert_int_eq(k->dim_decided, d);
            ck_assert_int_eq(k->dim_algo[d], best_dims[d]);
            /* The last dimension decides the class when the multiring is its one candidate. */
            ck_assert_int_eq(out, d == 3 && !with_mpi ? DDL_ONLINE_DECIDED : DDL_ONLINE_DIMENSION);
        }
        if (with_mpi) {
            decide(o, bytes, 1, seeds);
            ck_assert_int_eq(k->ncand, 2);
            ck_assert_int_eq(k->cand[1].algo, DDL_ALGO_MPI);
            ck_assert_int_eq(k->cand[1].ndims, 0);
        }
        const ddl_candidate_t *m = &k->cand[with_mpi ? 0 : k->chosen]; /* the multiring */
        ck_assert_int_eq(m->algo, DDL_ALGO_MULTIRING);
        ck_assert_mem_eq(m->dim_algo + 1, best_dims + 1, 3);
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        ck_assert_int_eq(ddl_online_write(&o[0], f), 1);
        fclose(f);
        ddl_tuning_t t;
        ck_assert_msg(ddl_tuning_parse(text, &t) == DDL_OK, "%s", text);
        const ddl_band_t *b = ddl_tuning_find(&t, bytes);
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(b->algo, k->cand[k->chosen].algo);
        if (b->algo == DDL_ALGO_MULTIRING) {
            ck_assert_int_eq(b->ndims, 3);
            ck_assert_mem_eq(b->dim_algo + 1, best_dims + 1, 3);
        }
        free(text);
    }
    /* Three times slower: explored again from the first dimension. */
    while (call_all(o, (size_t)1 << 20, 1, seeds, 0, 3) != DDL_ONLINE_DRIFTED)
        ;
    ddl_online_next(&o[0], (size_t)1 << 20, 1);
    ck_assert_int_eq(o[0].cls[cls].stage, 1);
    ck_assert_int_eq(o[0].cls[cls].cand[1].dim_algo[1], DDL_DIM_RD);
    ck_assert_int_eq(o[0].cls[cls].cand[1].dim_algo[3], DDL_DIM_RING); /* decided rd before: forgotten */
}
END_TEST

START_TEST(test_save_reload)
{
    static ddl_online_t o[RANKS];
    unsigned seeds[RANKS] = {5, 6, 7, 8};
    for (int r = 0; r < RANKS; r++)
        ddl_online_init(&o[r], &two_nodes);
    size_t sizes[] = {8, 16, 64, 8192, 16384, 32768, (size_t)4 << 20, (size_t)8 << 20, (size_t)64 << 20};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        decide(o, sizes[i], sizes[i] >= (1 << 18), seeds);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int bands = ddl_online_write(&o[0], f);
    fclose(f);
    ck_assert_int_gt(bands, 1);
    ck_assert_int_lt(bands, (int)(sizeof(sizes) / sizeof(sizes[0]))); /* 8 and 16 B: one band */
    ddl_tuning_t t;
    ck_assert_msg(ddl_tuning_parse(text, &t) == DDL_OK, "%s", text);
    ck_assert_int_eq(t.nbands, bands);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        const ddl_online_class_t *k = &o[0].cls[ddl_online_class_of(sizes[i])];
        const ddl_candidate_t *c = &k->cand[k->chosen];
        /* Every size of the class reads the decision back. */
        for (size_t bytes = sizes[i]; bytes < 2 * sizes[i]; bytes += sizes[i] / 4 + 1) {
            const ddl_band_t *b = ddl_tuning_find(&t, bytes);
            ck_assert_ptr_nonnull(b);
            ck_assert_int_eq(b->algo, c->algo);
            ck_assert_int_eq(b->lane_algo, c->lane_algo);
            ck_assert_int_eq(b->mpi_form, c->mpi_form);
            ck_assert_uint_eq(b->chunk, c->algo == DDL_ALGO_MPI ? 0 : k->chunk[k->chosen]);
        }
    }
    ck_assert_ptr_null(ddl_tuning_find(&t, 1 << 10)); /* classes never called stay online */
    free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("select");
    TCase *tc = tcase_create("online");
    tcase_add_test(tc, test_classes);
    tcase_add_test(tc, test_candidates);
    tcase_add_test(tc, test_agreement);
    tcase_add_test(tc, test_fair_paths);
    tcase_add_test(tc, test_drift);
    tcase_add_test(tc, test_confirm);
    tcase_add_test(tc, test_mixed_sizes);
    tcase_add_test(tc, test_dimensions);
    tcase_add_test(tc, test_save_reload);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
