/* SPDX-License-Identifier: Apache-2.0 */
/* The inter-node algorithms' step lists, executed by P simulated ranks with
 * buffered point-to-point messages: every rank must end with the full
 * reduction, bit-identical, for any rank count and any count. */
#include "config.h"

#include <check.h>

#include "unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "model.h"
#include "reduce.h"
#include "inter.h"
#include "steps.h"

#define MAXP 12
#define MAXN 300

typedef struct {
    int used;
    size_t n;
    float data[MAXN];
} msg_t;

static msg_t queue[MAXP][MAXP][8]; /* [src][dst] FIFO of at most 8 messages */
static int qhead[MAXP][MAXP], qtail[MAXP][MAXP];

typedef int (*build_fn)(int rank, int size, size_t n, ddl_step_t *steps);

static void simulate(build_fn build, int P, size_t n, float (*bufs)[MAXN])
{
    ddl_step_t steps[MAXP][2 * MAXP + 4];
    int nsteps[MAXP], cur[MAXP], sent[MAXP];
    memset(qhead, 0, sizeof(qhead));
    memset(qtail, 0, sizeof(qtail));
    for (int r = 0; r < P; r++) {
        nsteps[r] = build(r, P, n, steps[r]);
        cur[r] = sent[r] = 0;
    }
    ddl_reduce_fn_t sum = ddl_reduce_fn(DDL_DTYPE_F32, DDL_REDOP_SUM);
    for (int progress = 1; progress;) {
        progress = 0;
        for (int r = 0; r < P; r++) {
            if (cur[r] == nsteps[r])
                continue;
            ddl_step_t *st = &steps[r][cur[r]];
            if (!sent[r] && st->send_peer >= 0) {
                msg_t *m = &queue[r][st->send_peer][qtail[r][st->send_peer]++ % 8];
                m->n = st->send_n;
                memcpy(m->data, bufs[r] + st->send_off, st->send_n * sizeof(float));
                sent[r] = 1;
                progress = 1;
            }
            if (st->recv_peer >= 0) {
                int s = st->recv_peer;
                if (qhead[s][r] == qtail[s][r])
                    continue; /* not arrived yet */
                msg_t *m = &queue[s][r][qhead[s][r]++ % 8];
                ck_assert_uint_eq(m->n, st->recv_n);
                float *dst = bufs[r] + st->recv_off;
                if (st->combine == DDL_COMBINE_NONE)
                    memcpy(dst, m->data, m->n * sizeof(float));
                else if (st->combine == DDL_COMBINE_RECV_FIRST)
                    sum(dst, m->data, dst, m->n);
                else
                    sum(dst, dst, m->data, m->n);
            }
            cur[r]++;
            sent[r] = 0;
            progress = 1;
        }
    }
    for (int r = 0; r < P; r++)
        ck_assert_msg(cur[r] == nsteps[r], "P=%d n=%zu: rank %d stuck at step %d of %d", P, n, r, cur[r], nsteps[r]);
}

/* Run build's steps on P simulated ranks over n floats whose sum depends on
 * the order of operations: every rank must hold the same bits, close to the
 * double-precision sum, within max_steps steps. */
static void check_run(build_fn build, int max_steps, int P, size_t n, int seed, const char *label)
{
    static float bufs[MAXP][MAXN];
    double expect[MAXN] = {0};
    for (int r = 0; r < P; r++)
        for (size_t i = 0; i < n; i++) {
            bufs[r][i] = (float)((r * (7 + seed) + (int)i * 13) % 19) * 0.1f + (r == seed % P ? 1e7f : 0);
            expect[i] += bufs[r][i];
        }
    simulate(build, P, n, bufs);
    ck_assert_int_le(build(0, P, n, (ddl_step_t[2 * MAXP + 4]){0}), max_steps);
    for (size_t i = 0; i < n; i++) {
        for (int r = 1; r < P; r++)
            ck_assert_msg(memcmp(&bufs[r][i], &bufs[0][i], sizeof(float)) == 0,
                          "%s P=%d n=%zu element %zu: rank %d has %.9g, rank 0 %.9g", label, P, n, i, r, bufs[r][i],
                          bufs[0][i]);
        double err = bufs[0][i] - expect[i];
        ck_assert_msg(err < 8 && err > -8, "%s P=%d n=%zu element %zu: %.9g, expected %.9g", label, P, n, i,
                      bufs[0][i], expect[i]);
    }
}

static void check_algo(build_fn build, int (*max_steps)(int))
{
    size_t counts[] = {0, 1, 2, 5, 11, 17, 100, 299};
    for (int P = 1; P <= MAXP; P++)
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
            check_run(build, max_steps(P), P, counts[c], 0, "");
}

/* Every row of inter_algos.def (a new algorithm is tested here as it is
 * added: the loop runs over the table, as selection does). */
START_TEST(test_every_row)
{
    ck_assert_int_ge(DDL_INTER_ALGOS, 3); /* ring, rd and rab at least */
    for (int i = 0; i < DDL_INTER_ALGOS; i++)
        check_algo(ddl_inter_algos[i].build, ddl_inter_algos[i].max_steps);
}
END_TEST

/* The multiring on a grid, with a given algorithm per dimension. */
static ddl_grid_t grid_now;
static unsigned char dims_now[DDL_GRID_MAX_DIMS];
static int build_multiring(int rank, int size, size_t n, ddl_step_t *steps)
{
    (void)size;
    return ddl_multiring_build(rank, &grid_now, dims_now, n, steps);
}
static int max_multiring(int size)
{
    (void)size;
    return ddl_multiring_max_steps(&grid_now);
}

START_TEST(test_multiring_per_dimension)
{
    static const char *const grids[] = {"1x2x2", "1x3x2", "1x2x3", "1x2x2x2", "1x3x4", "1x2x3x2", "1x5"};
    for (size_t gi = 0; gi < sizeof(grids) / sizeof(grids[0]); gi++) {
        ck_assert_int_eq(ddl_grid_parse(grids[gi], &grid_now), 0);
        int P = 1, nd = grid_now.ndims - 1;
        for (int d = 1; d < grid_now.ndims; d++)
            P *= grid_now.dims[d];
        for (unsigned mask = 0; mask < (1u << nd); mask++) {
            char label[64];
            snprintf(label, sizeof(label), "grid %s dims", grids[gi]);
            for (int d = 1; d <= nd; d++) {
                dims_now[d] = (mask >> (d - 1)) & 1 ? DDL_DIM_RD : DDL_DIM_RING;
                strncat(label, dims_now[d] ? " rd" : " ring", sizeof(label) - strlen(label) - 1);
            }
            size_t counts[] = {0, 1, 7, 100, 299};
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
                check_run(build_multiring, max_multiring(P), P, counts[c], 1, label);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched");
    TCase *tc = tcase_create("sched");
    tcase_add_test(tc, test_every_row);
    tcase_add_test(tc, test_multiring_per_dimension);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
