/* SPDX-License-Identifier: Apache-2.0 */
/* The lane plan on hwloc XML descriptions of real node shapes, and the
 * plugin's option and plugstack parsing. */
#include "config.h"

#include <check.h>

#include "unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpulist.h"
#include "options.h"
#include "plan.h"
#include "port.h"
#include "procstat.h"
#include "topo.h"

static ddl_topo_t load(const char *name)
{
    char path[1024];
    const char *dir = getenv("top_srcdir");
    snprintf(path, sizeof(path), "%s/tests/fixtures/%s", dir ? dir : ".", name);
    ddl_topo_t t;
    char err[256];
    ck_assert_msg(ddl_topo_load(path, &t, err, sizeof(err)) == 0, "%s: %s", path, err);
    return t;
}

/* ids[i] = i for the first n ids (a step's GPUs or cores); returns n. */
static int first_ids(int n, int *ids)
{
    for (int i = 0; i < n; i++)
        ids[i] = i;
    return n;
}

/* No two tasks on one core, every core allocated, GPU and lane as t / L, t % L;
 * a helper on one core, an owner on its GPU's share minus one per helper. */
static void check_invariants(const ddl_plan_t *p, const int *cores, int ncores)
{
    int share = ncores / p->ngpus;
    for (int t = 0; t < p->ntasks; t++) {
        const ddl_task_plan_t *tp = &p->tasks[t];
        ck_assert_int_eq(tp->ncores, tp->role == DDL_ROLE_OWNER ? share - (p->lanes - 1) : 1);
        int has_first = 0;
        for (int c = 0; c < tp->ncores; c++)
            has_first |= tp->cores[c] == tp->core;
        ck_assert_msg(has_first, "task %d: its first core %d is not in its list", t, tp->core);
        for (int c = 0; c < tp->ncores; c++) {
            int allocated = 0;
            for (int i = 0; i < ncores; i++)
                allocated |= cores[i] == tp->cores[c];
            ck_assert_msg(allocated, "task %d on core %d, which is not allocated", t, tp->cores[c]);
            if (c > 0)
                ck_assert_int_gt(tp->cores[c], tp->cores[c - 1]);
            for (int u = 0; u < t; u++)
                for (int d = 0; d < p->tasks[u].ncores; d++)
                    ck_assert_msg(p->tasks[u].cores[d] != tp->cores[c], "tasks %d and %d share core %d", u, t,
                                  tp->cores[c]);
        }
    }
    for (int t = 0; t < p->ntasks; t++) {
        ck_assert_int_eq(p->tasks[t].gpu, t / p->lanes);
        ck_assert_int_eq(p->tasks[t].lane, t % p->lanes);
        ck_assert_int_eq(p->tasks[t].role, t % p->lanes == 0 ? DDL_ROLE_OWNER : DDL_ROLE_HELPER);
        int allocated = 0;
        for (int i = 0; i < ncores; i++)
            allocated |= cores[i] == p->tasks[t].core;
        ck_assert_msg(allocated, "task %d on core %d, which is not allocated", t, p->tasks[t].core);
        for (int u = 0; u < t; u++)
            ck_assert_msg(p->tasks[u].core != p->tasks[t].core, "tasks %d and %d share core %d", u, t, p->tasks[t].core);
    }
}

START_TEST(test_topology_read)
{
    ddl_topo_t t = load("two-socket-4gpu.xml");
    ck_assert_int_eq(t.ncores, 16);
    ck_assert_int_eq(t.ngpus, 4); /* the two NICs are not GPUs */
    ck_assert_str_eq(t.gpus[0].busid, "0000:07:00.0");
    ck_assert_str_eq(t.gpus[3].busid, "0000:8a:00.0");
    ck_assert_int_eq(t.gpus[2].numa, 1);
    ck_assert(t.gpus[0].local[0] && t.gpus[0].local[7] && !t.gpus[0].local[8]);
    ck_assert(t.gpus[3].local[15] && !t.gpus[3].local[0]);
    ddl_topo_free(&t);
    t = load("two-numa-8gpu.xml");
    ck_assert_int_eq(t.ngpus, 8); /* not the NVSwitch */
    ck_assert_int_eq(t.ncores, 32);
    ck_assert_int_eq(t.core_pu[1], 2); /* 2 threads per core: the core's first PU */
    ddl_topo_free(&t);
    t = load("amd-2gpu.xml");
    ck_assert_int_eq(t.ngpus, 2);
    ck_assert_uint_eq(t.gpus[0].vendor, 0x1002);
    ddl_topo_free(&t);
    t = load("no-gpu.xml");
    ck_assert_int_eq(t.ngpus, 0);
    ddl_topo_free(&t);
}
END_TEST

START_TEST(test_plan_local_cores)
{
    ddl_topo_t t = load("two-socket-4gpu.xml");
    int gpus[4], cores[16];
    first_ids(16, cores);
    ddl_plan_t p;
    char why[400];
    ck_assert_int_eq(ddl_plan_make(&t, gpus, first_ids(4, gpus), cores, 16, 4, 16, &p, why, sizeof(why)), DDL_OK);
    check_invariants(&p, cores, 16);
    for (int i = 0; i < 16; i++) {
        ck_assert_int_eq(p.tasks[i].near, DDL_NEAR_LOCAL);
        ck_assert_int_eq(p.tasks[i].core / 8, p.tasks[i].gpu / 2); /* GPUs 0-1 on socket 0 */
    }
    ddl_plan_free(&p);
    ddl_topo_free(&t);
}
END_TEST

START_TEST(test_plan_gpus_on_one_socket)
{
    /* 4 GPUs x 3 lanes on socket 0's 8 cores: 8 tasks local, 4 spill to socket 1. */
    ddl_topo_t t = load("one-socket-gpus.xml");
    int gpus[4], cores[16];
    first_ids(16, cores);
    ddl_plan_t p;
    char why[400];
    ck_assert_int_eq(ddl_plan_make(&t, gpus, first_ids(4, gpus), cores, 16, 3, 12, &p, why, sizeof(why)), DDL_OK);
    check_invariants(&p, cores, 16);
    int local = 0;
    for (int i = 0; i < 12; i++) {
        local += p.tasks[i].near == DDL_NEAR_LOCAL;
        if (p.tasks[i].near != DDL_NEAR_LOCAL)
            ck_assert_int_ge(p.tasks[i].core, 8);
    }
    ck_assert_int_eq(local, 8);
    /* Owners come first in their GPU's nearest class. */
    ck_assert_int_eq(p.tasks[0].near, DDL_NEAR_LOCAL);
    ddl_plan_free(&p);
    ddl_topo_free(&t);
}
END_TEST

START_TEST(test_plan_8gpu_partial_allocation)
{
    /* 8 GPUs x 2 lanes on 2 NUMA nodes, allocation of 8 cores on each socket. */
    ddl_topo_t t = load("two-numa-8gpu.xml");
    int gpus[8], cores[16];
    int n = ddl_cpulist_parse("0-7,16-23", cores, 16);
    ck_assert_int_eq(n, 16);
    ddl_plan_t p;
    char why[400];
    ck_assert_int_eq(ddl_plan_make(&t, gpus, first_ids(8, gpus), cores, n, 2, 16, &p, why, sizeof(why)), DDL_OK);
    check_invariants(&p, cores, n);
    for (int i = 0; i < 16; i++)
        ck_assert_msg(p.tasks[i].near == DDL_NEAR_LOCAL, "task %d is %s", i, ddl_nearness_name(p.tasks[i].near));
    ck_assert_int_eq(p.tasks[1].pu, 2); /* core 1's first PU */
    ddl_plan_free(&p);
    /* A step with GPUs 4-7 only: their cores are on NUMA node 1. */
    int some[4] = {4, 5, 6, 7};
    ck_assert_int_eq(ddl_plan_make(&t, some, 4, cores, n, 2, 8, &p, why, sizeof(why)), DDL_OK);
    for (int i = 0; i < 8; i++)
        ck_assert_int_ge(p.tasks[i].core, 16);
    ddl_plan_free(&p);
    ddl_topo_free(&t);
}
END_TEST

START_TEST(test_plan_errors)
{
    ddl_topo_t t = load("two-socket-4gpu.xml");
    int gpus[4] = {0, 1, 2, 3}, cores[16];
    first_ids(16, cores);
    ddl_plan_t p;
    char why[400];
    ck_assert_int_eq(ddl_plan_make(&t, gpus, 0, cores, 16, 2, 2, &p, why, sizeof(why)), DDL_ERR_LAYOUT);
    ck_assert_ptr_nonnull(strstr(why, "--gpus-per-node"));
    ck_assert_int_eq(ddl_plan_make(&t, gpus, 4, cores, 16, 2, 4, &p, why, sizeof(why)), DDL_ERR_LAYOUT);
    ck_assert_ptr_nonnull(strstr(why, "--ntasks-per-gpu=2"));
    ck_assert_ptr_nonnull(strstr(why, "needs 8 tasks"));
    ck_assert_int_eq(ddl_plan_make(&t, gpus, 4, cores, 6, 2, 8, &p, why, sizeof(why)), DDL_ERR_LAYOUT);
    ck_assert_ptr_nonnull(strstr(why, "6 cores"));
    ddl_topo_free(&t);
    t = load("no-gpu.xml");
    ck_assert_int_eq(ddl_plan_make(&t, gpus, 0, cores, 8, 1, 1, &p, why, sizeof(why)), DDL_ERR_LAYOUT);
    ddl_topo_free(&t);
}
END_TEST

START_TEST(test_plan_unknown_gpus_and_cores)
{
    /* A test cluster: fake GPUs not in the topology, more cores claimed than exist. */
    ddl_topo_t t = load("no-gpu.xml");
    int gpus[2] = {0, 1}, cores[4] = {0, 1, 8, 9};
    ddl_plan_t p;
    char why[400];
    ck_assert_int_eq(ddl_plan_make(&t, gpus, 2, cores, 4, 2, 4, &p, why, sizeof(why)), DDL_OK);
    check_invariants(&p, cores, 4);
    ck_assert_int_eq(p.tasks[0].pu, 0);
    ck_assert_int_eq(p.tasks[3].pu, -1); /* core 9 does not exist: not bound */
    ddl_plan_free(&p);
    ddl_topo_free(&t);
}
END_TEST

START_TEST(test_plan_owner_cores)
{
    /* GPUs 0-1 (socket 0) x 2 lanes on socket 0's 8 cores: 4 per GPU, so each
     * owner gets 3 cores local to its GPU, the lowest of its GPU's, and the
     * helper the remaining one. */
    ddl_topo_t t = load("two-socket-4gpu.xml");
    int gpus[4], cores[16];
    first_ids(16, cores);
    ddl_plan_t p;
    char why[400];
    ck_assert_int_eq(ddl_plan_make(&t, gpus, first_ids(2, gpus), cores, 8, 2, 4, &p, why, sizeof(why)), DDL_OK);
    check_invariants(&p, cores, 8);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(p.tasks[i].near, DDL_NEAR_LOCAL);
    ck_assert_int_eq(p.tasks[0].ncores, 3);
    ck_assert_int_eq(p.tasks[0].cores[0], 0);
    ck_assert_int_lt(p.tasks[0].cores[2], p.tasks[1].core); /* owner below its helper */
    ddl_plan_free(&p);
    /* An odd core left over: the share rounds down, the core stays unused. */
    ck_assert_int_eq(ddl_plan_make(&t, gpus, first_ids(2, gpus), cores, 9, 2, 4, &p, why, sizeof(why)), DDL_OK);
    ck_assert_int_eq(p.tasks[0].ncores, 3);
    ck_assert_int_eq(p.tasks[2].ncores, 3);
    ddl_plan_free(&p);
    ddl_topo_free(&t);
}
END_TEST

START_TEST(test_master_port)
{
    /* Neighbouring jobs and steps never share a port (the old formula gave job
     * j step 131 the port of job j+1 step 0). */
    static unsigned char seen[65536];
    memset(seen, 0, sizeof(seen));
    for (uint32_t job = 5000; job < 5000 + DDL_PORT_JOBS; job++)
        for (uint32_t step = 0; step < DDL_PORT_STEPS; step++) {
            int port = ddl_master_port(job, step, NULL);
            ck_assert_int_ge(port, 1024);
            ck_assert_int_le(port, 65535);
            ck_assert_msg(!seen[port], "job %u step %u reuses port %d", job, step, port);
            seen[port] = 1;
        }
    ck_assert_int_ne(ddl_master_port(7, 131, NULL), ddl_master_port(8, 0, NULL));
    ck_assert_int_ne(ddl_master_port(7, 0, NULL), ddl_master_port(7, 1, NULL));
    /* Ports Slurm reserved for the step win; a malformed list is ignored. */
    ck_assert_int_eq(ddl_master_port(7, 0, "12000-12003"), 12000);
    ck_assert_int_eq(ddl_master_port(7, 0, "12007,12009"), 12007);
    ck_assert_int_eq(ddl_master_port(7, 0, "x"), ddl_master_port(7, 0, NULL));
    ck_assert_int_eq(ddl_master_port(7, 0, "80"), ddl_master_port(7, 0, NULL));
}
END_TEST

START_TEST(test_procstat)
{
    ddl_procstat_t st;
    const char *odd = "1234 (a) b (c) d) S 99 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 556677 1000 50";
    ck_assert_int_eq(ddl_procstat_parse(odd, &st), 0);
    ck_assert_int_eq(st.state, 'S');
    ck_assert_int_eq(st.ppid, 99);
    ck_assert_uint_eq(st.start, 556677ULL);
    ck_assert_int_eq(ddl_procstat_parse("1234 (x) S 99", &st), -1);
    ck_assert_int_eq(ddl_procstat_parse("garbage", &st), -1);
    /* This process runs; with another start time it is another process. */
    ck_assert_int_eq(ddl_procstat_read(getpid(), &st), 0);
    ck_assert_int_eq(st.ppid, getppid());
    ck_assert_int_eq(ddl_process_alive(getpid(), st.start), 1);
    ck_assert_int_eq(ddl_process_alive(getpid(), st.start + 1), 0);
}
END_TEST

START_TEST(test_cpulist)
{
    int ids[16];
    char buf[64];
    ck_assert_int_eq(ddl_cpulist_parse("0-3,8,10-11", ids, 16), 7);
    ck_assert_str_eq(ddl_cpulist_format(ids, 7, buf, sizeof(buf)), "0-3,8,10-11");
    ck_assert_int_eq(ddl_cpulist_parse("5,1", ids, 16), 2);
    ck_assert_int_eq(ids[0], 1);
    const char *bad[] = {"", "a", "1-", "-1", "3-1", "1,,2", "1,", "1,1", "0-20", NULL};
    for (int i = 0; bad[i]; i++)
        ck_assert_msg(ddl_cpulist_parse(bad[i], ids, 16) == -1, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(test_lanes_option)
{
    int lanes;
    char err[256];
    ck_assert_int_eq(ddl_spank_parse_lanes("4", "--ddl-lanes", 16, &lanes, err, sizeof(err)), 0);
    ck_assert_int_eq(lanes, 4);
    const char *bad[] = {"0", "-1", "abc", "", "4x", "2.5", NULL};
    for (int i = 0; bad[i]; i++) {
        ck_assert_msg(ddl_spank_parse_lanes(bad[i], "--ddl-lanes", 16, &lanes, err, sizeof(err)) == -1, "'%s'", bad[i]);
        ck_assert_ptr_nonnull(strstr(err, "--ddl-lanes="));
    }
    ck_assert_int_eq(ddl_spank_parse_lanes("1000", "DDL_LANES", 16, &lanes, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "maximum of 16"));
    ck_assert_ptr_nonnull(strstr(err, "DDL_LANES=1000"));
}
END_TEST

START_TEST(test_plugstack_args)
{
    ddl_spank_policy_t p;
    char err[256];
    ddl_spank_policy_defaults(&p);
    char *ok[] = {"default_lanes=2", "max_lanes=8", "bind=no", "helpers=app", "helper=/opt/ddl/bin/ddl-helper"};
    ck_assert_int_eq(ddl_spank_policy_parse(5, ok, &p, err, sizeof(err)), 0);
    ck_assert_int_eq(p.default_lanes, 2);
    ck_assert_int_eq(p.max_lanes, 8);
    ck_assert_int_eq(p.bind, 0);
    ck_assert_int_eq(p.helpers, DDL_SPANK_HELPERS_APP);
    ck_assert_str_eq(p.helper_path, "/opt/ddl/bin/ddl-helper");
    struct {
        char *arg;
        const char *text;
    } bad[] = {{"lanes=4", "unknown plugstack argument 'lanes'"},
               {"max_lanes=0", "bad value: max_lanes takes an integer from 1 to 1024"},
               {"bind=maybe", "bad value: bind takes yes or no"}, {"helpers=thread", "helpers takes app or daemon"},
               {"helper=ddl-helper", "helper takes an absolute path"}, {"owner_cores=-1", "owner_cores takes an integer"},
               {"rails=a,,b", "rails takes 1 to 8 comma-separated device names"},
               {"default_lanes", "not key=value"}, {"=3", "not key=value"}, {"max_lanes=", "bad value"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ddl_spank_policy_defaults(&p);
        ck_assert_msg(ddl_spank_policy_parse(1, &bad[i].arg, &p, err, sizeof(err)) == -1, "%s accepted", bad[i].arg);
        ck_assert_msg(strstr(err, bad[i].text) != NULL, "%s: '%s'", bad[i].arg, err);
    }
    char *rails_ok[] = {"rails=rail0,eth1.2,ib_0"};
    ddl_spank_policy_defaults(&p);
    ck_assert_int_eq(ddl_spank_policy_parse(1, rails_ok, &p, err, sizeof(err)), 0);
    ck_assert_int_eq(p.nrails, 3);
    ck_assert_str_eq(p.rails[1], "eth1.2");
    /* Rails in turn over the node's lanes, lane-major: 3 rails, 2 GPUs x 2 lanes. */
    ck_assert_str_eq(ddl_spank_rail_of(&p, 0, 0, 2), "rail0");
    ck_assert_str_eq(ddl_spank_rail_of(&p, 1, 0, 2), "eth1.2");
    ck_assert_str_eq(ddl_spank_rail_of(&p, 0, 1, 2), "ib_0");
    ck_assert_str_eq(ddl_spank_rail_of(&p, 1, 1, 2), "rail0");
    char *rails_bad[] = {"rails=", "rails=a,,b", "rails=a,", "rails=e th0", "rails=$(x)"};
    for (int i = 0; i < 5; i++) {
        ddl_spank_policy_defaults(&p);
        ck_assert_msg(ddl_spank_policy_parse(1, &rails_bad[i], &p, err, sizeof(err)) == -1, "%s accepted", rails_bad[i]);
    }
    /* Every rail carries the same number of lanes for any lanes per GPU, the
     * owners are on different rails, and with 8 GPUs each GPU's lanes are on
     * its own rail: 8 rails with 2, 4 or 8 GPUs x 1, 2, 4 or 8 lanes (lane k of
     * every GPU on rail k mod 8 left rails idle below 8 lanes, and put every
     * owner on the first). */
    char *eight[] = {"rails=r0,r1,r2,r3,r4,r5,r6,r7"};
    ddl_spank_policy_defaults(&p);
    ck_assert_int_eq(ddl_spank_policy_parse(1, eight, &p, err, sizeof(err)), 0);
    for (int gpus = 2; gpus <= 8; gpus *= 2)
        for (int lanes = 1; lanes <= 8; lanes *= 2) {
            int per_rail[8] = {0}, owner_rails = 0;
            for (int g = 0; g < gpus; g++)
                for (int k = 0; k < lanes; k++) {
                    int r = ddl_spank_rail_of(&p, g, k, gpus)[1] - '0';
                    owner_rails |= k == 0 ? 1 << r : 0;
                    per_rail[r]++;
                    if (gpus == 8)
                        ck_assert_int_eq(r, g);
                }
            ck_assert_int_eq(__builtin_popcount((unsigned)owner_rails), gpus);
            for (int r = 0; r < 8; r++)
                ck_assert_msg(per_rail[r] == gpus * lanes / 8 || (gpus * lanes < 8 && per_rail[r] <= 1),
                              "%d GPUs x %d lanes: rail %d carries %d lanes", gpus, lanes, r, per_rail[r]);
        }
    ddl_spank_policy_defaults(&p);
    char *over[] = {"max_lanes=2", "default_lanes=4"};
    ck_assert_int_eq(ddl_spank_policy_parse(2, over, &p, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "above max_lanes"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, test_topology_read);
    tcase_add_test(tc, test_plan_local_cores);
    tcase_add_test(tc, test_plan_gpus_on_one_socket);
    tcase_add_test(tc, test_plan_8gpu_partial_allocation);
    tcase_add_test(tc, test_plan_errors);
    tcase_add_test(tc, test_plan_unknown_gpus_and_cores);
    tcase_add_test(tc, test_plan_owner_cores);
    tcase_add_test(tc, test_master_port);
    tcase_add_test(tc, test_procstat);
    tcase_add_test(tc, test_cpulist);
    tcase_add_test(tc, test_lanes_option);
    tcase_add_test(tc, test_plugstack_args);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
