/* SPDX-License-Identifier: Apache-2.0 */
/* The alpha-beta cost model: the formulas, the choices they lead to, and the
 * chunk size, on the default links and on links with a slow outer dimension. */
#include "config.h"

#include <check.h>
#include <math.h>

#include "unit.h"

#include "algo.h"
#include "grid.h"
#include "inter.h"
#include "model.h"

START_TEST(test_formulas)
{
    ddl_model_t m;
    ddl_model_defaults(&m);
    m.link[0] = (ddl_link_t){10e-6, 1e-9};
    m.gamma = 0.5e-9;
    double b = 1e6;
    /* P = 4: ring 6 alpha + 1.5 b beta + 0.75 b gamma; rd 2 (alpha + b (beta + gamma));
     * rab 4 alpha + 1.5 b beta + 0.75 b gamma. */
    ck_assert_double_eq_tol(ddl_model_ring(&m, 0, 4, b), 6 * 10e-6 + 1.5e-3 + 0.375e-3, 1e-12);
    ck_assert_double_eq_tol(ddl_model_rd(&m, 0, 4, b), 2 * (10e-6 + 1e-3 + 0.5e-3), 1e-12);
    ck_assert_double_eq_tol(ddl_model_rab(&m, 0, 4, b), 4 * 10e-6 + 1.5e-3 + 0.375e-3, 1e-12);
    /* P = 3: rd folds one rank in and out (3 steps); rab adds that to its 2-rank core. */
    ck_assert_double_eq_tol(ddl_model_rd(&m, 0, 3, b), 3 * (10e-6 + 1.5e-3), 1e-12);
    ck_assert_double_eq_tol(ddl_model_rab(&m, 0, 3, b), 2 * 10e-6 + 1e-3 + 0.25e-3 + 2 * 10e-6 + 2e-3 + 0.5e-3,
                            1e-12);
    ck_assert_double_eq(ddl_model_ring(&m, 0, 1, b), 0);
}
END_TEST

START_TEST(test_lane_choice)
{
    ddl_model_t m;
    ddl_model_defaults(&m);
    /* Small chunks are latency bound: recursive doubling; large ones bandwidth
     * bound: ring (2 nodes: ring and rab are the same, ring is kept). */
    ck_assert_int_eq(ddl_model_lane_algo(&m, 2, 1024, NULL), DDL_INTER_RD);
    ck_assert_int_eq(ddl_model_lane_algo(&m, 2, 64 << 20, NULL), DDL_INTER_RING);
    ck_assert_int_eq(ddl_model_lane_algo(&m, 8, 1024, NULL), DDL_INTER_RD);
    /* Rabenseifner only where its latency edge is large: 8 nodes, mid-size chunks. */
    ck_assert_int_eq(ddl_model_lane_algo(&m, 8, 64 << 20, NULL), DDL_INTER_RING);
    int rab_somewhere = 0;
    for (double b = 1024; b < (1 << 30); b *= 2)
        rab_somewhere |= ddl_model_lane_algo(&m, 8, b, NULL) == DDL_INTER_RAB;
    ck_assert_int_eq(rab_somewhere, 1);
    ck_assert_int_eq(ddl_model_lane_algo(&m, 3, 64 << 20, NULL), DDL_INTER_RING);
    /* The crossover moves with the latency. */
    double cost;
    size_t cross_fast = 0, cross_slow = 0;
    for (size_t b = 1024; b < ((size_t)1 << 30) && !cross_fast; b *= 2)
        if (ddl_model_lane_algo(&m, 2, (double)b, &cost) != DDL_INTER_RD)
            cross_fast = b;
    m.link[0].alpha *= 10;
    for (size_t b = 1024; b < ((size_t)1 << 30) && !cross_slow; b *= 2)
        if (ddl_model_lane_algo(&m, 2, (double)b, &cost) != DDL_INTER_RD)
            cross_slow = b;
    ck_assert_uint_gt(cross_slow, cross_fast);
    ck_assert_double_gt(cost, 0);
}
END_TEST

START_TEST(test_multiring_choice)
{
    ddl_model_t m;
    ddl_model_defaults(&m);
    ddl_grid_t g;
    ck_assert_int_eq(ddl_grid_parse("1x2x2", &g), 0);
    m.link[2].beta = 4 * m.link[1].beta; /* the uplink between racks is 4x slower */
    unsigned char algo[DDL_GRID_MAX_DIMS];
    double big = ddl_model_multiring(&m, &g, 64 << 20, algo);
    ck_assert_int_eq(algo[1], DDL_DIM_RING);
    ck_assert_int_eq(algo[2], DDL_DIM_RING);
    ddl_model_multiring(&m, &g, 256, algo);
    ck_assert_int_eq(algo[1], DDL_DIM_RD);
    ck_assert_int_eq(algo[2], DDL_DIM_RD);
    /* The chosen combination is the cheapest of all four. */
    for (unsigned mask = 0; mask < 4; mask++) {
        unsigned char trial[DDL_GRID_MAX_DIMS] = {0, (unsigned char)(mask & 1), (unsigned char)(mask >> 1)};
        ck_assert_double_le(big, ddl_model_multiring_cost(&m, &g, 64 << 20, trial) + 1e-15);
    }
    /* Outer links carry the block divided by the inner ring: a ring on the
     * inner dimension makes the slow dimension cheaper. */
    unsigned char ring_ring[DDL_GRID_MAX_DIMS] = {0, DDL_DIM_RING, DDL_DIM_RING};
    unsigned char rd_ring[DDL_GRID_MAX_DIMS] = {0, DDL_DIM_RD, DDL_DIM_RING};
    ck_assert_double_lt(ddl_model_multiring_cost(&m, &g, 64 << 20, ring_ring),
                        ddl_model_multiring_cost(&m, &g, 64 << 20, rd_ring));
}
END_TEST

START_TEST(test_chunk)
{
    ddl_model_t m;
    ddl_model_defaults(&m);
    size_t max = 4 << 20, prev = 0;
    for (size_t bytes = 1024; bytes <= ((size_t)1 << 30); bytes *= 2) {
        size_t c = ddl_model_chunk(&m, NULL, 2, 1, bytes, max);
        ck_assert_uint_ge(c, 64 * 1024);
        ck_assert_uint_le(c, max);
        ck_assert_uint_eq(c % 4096, 0);
        ck_assert_uint_ge(c, prev); /* larger slices, larger (or equal) chunks */
        prev = c;
    }
    /* Lane ring on 2 nodes: the transfer is the slowest stage, the reduction and
     * the write-back fill and drain: sqrt(bytes * 2 (P-1) alpha / (2 gamma)). */
    double want = sqrt(16.0 * (1 << 20) * 2 * m.link[0].alpha / (2 * m.gamma));
    size_t got = ddl_model_chunk(&m, NULL, 2, 1, 16 << 20, 64 << 20);
    ck_assert_double_le(fabs((double)got - want), 4096);
    ck_assert_uint_eq(ddl_model_chunk(&m, NULL, 2, 1, 1 << 30, 128 * 1024), 128 * 1024); /* capped */
    ck_assert_uint_eq(ddl_model_chunk(&m, NULL, 1, 1, 1 << 30, max), 64 * 1024);         /* one node: nothing to hide */
    /* A multiring's inner dimension is a stage of its own: its transfers fill
     * and drain the pipeline too, so chunks are smaller than the lane ring's. */
    ddl_grid_t g;
    ck_assert_int_eq(ddl_grid_parse("1x2x2", &g), 0);
    size_t lane = ddl_model_chunk(&m, NULL, 4, 1, 16 << 20, 64 << 20), multi = ddl_model_chunk(&m, &g, 4, 1, 16 << 20, 64 << 20);
    ck_assert_uint_lt(multi, lane / 2);
    /* Eight GPUs: the lane's thread reduces 7 passes and writes back 8, one
     * stage of 15 gamma per byte; on a fast link it is the slowest stage and
     * the link's transfer fills and drains: sqrt(bytes 2 (P-1) alpha / (2 (P-1)/P beta)). */
    ddl_model_t fast = m;
    fast.link[0].beta = 1.0 / 12.5e9;
    double want8 = sqrt(16.0 * (1 << 20) * 2 * fast.link[0].alpha / (fast.link[0].beta));
    size_t got8 = ddl_model_chunk(&fast, NULL, 2, 8, 16 << 20, 64 << 20);
    ck_assert_double_le(fabs((double)got8 - want8), 4096);
}
END_TEST

/* The model's time for a lane's slice: no less than either resource's total,
 * no more than both's, and the thread's share grows with the GPUs. */
START_TEST(test_lane_time)
{
    ddl_model_t m;
    ddl_model_defaults(&m);
    for (int gpus = 1; gpus <= 8; gpus *= 2)
        for (double bytes = 65536; bytes <= 1 << 28; bytes *= 16) {
            double chunk = 1 << 20, k = ceil(bytes / chunk), per = bytes < chunk ? bytes : chunk, link;
            ddl_model_lane_algo(&m, 4, per, &link);
            double thread = ((gpus > 1 ? gpus - 1 : 1) + gpus) * m.gamma * per;
            double t = ddl_model_lane_time(&m, NULL, 4, gpus, bytes, chunk);
            ck_assert_double_ge(t * (1 + 1e-9), k * (link > thread ? link : thread));
            ck_assert_double_le(t, k * (link + thread) * (1 + 1e-9) + (link < thread ? link : thread));
        }
    ck_assert_double_gt(ddl_model_lane_time(&m, NULL, 4, 8, 1 << 26, 1 << 20),
                        ddl_model_lane_time(&m, NULL, 4, 1, 1 << 26, 1 << 20));
    ck_assert_double_eq(ddl_model_lane_time(&m, NULL, 4, 8, 0, 1 << 20), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, test_formulas);
    tcase_add_test(tc, test_lane_choice);
    tcase_add_test(tc, test_multiring_choice);
    tcase_add_test(tc, test_chunk);
    tcase_add_test(tc, test_lane_time);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
