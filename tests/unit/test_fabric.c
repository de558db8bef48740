/* SPDX-License-Identifier: Apache-2.0 */
/* Rails as each stack names them (spank/rails.h, spank/fabric.h), on a sysfs
 * tree made here: a RoCE interface with its RDMA device, an InfiniBand HCA
 * with its IPoIB interface, Slingshot cxi devices with their hsn interfaces. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabric.h"
#include "options.h"
#include "rails.h"
#include "unit.h"

static char sysfs[64];

static void mkdirs(const char *rel)
{
    char path[512], *p;
    snprintf(path, sizeof(path), "%s/%s", sysfs, rel);
    for (p = path + strlen(sysfs) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    mkdir(path, 0755);
}

static void make_sysfs(void)
{
    snprintf(sysfs, sizeof(sysfs), "/tmp/ddl-test-sysfs-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(sysfs));
    mkdirs("class/net/eth1/device/infiniband/mlx5_2"); /* RoCE */
    mkdirs("class/net/eth2");                          /* plain Ethernet */
    mkdirs("class/infiniband/mlx5_0/ports/1");
    mkdirs("class/infiniband/mlx5_0/device/net/ib0"); /* IPoIB */
    mkdirs("class/infiniband/mlx5_2/ports/1");
    mkdirs("class/cxi/cxi0/device/net/hsn0");
    mkdirs("class/cxi/cxi1/device/net/hsn1");
    mkdirs("class/net/hsn1/device/cxi/cxi1");
}

static void remove_sysfs(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysfs);
    ck_assert_int_eq(system(cmd), 0);
}

/* The variables one task gets, "A=1 B=2 ", and the conflicts named. */
struct collected {
    char env[4096];
    char unless[512];
};

static void collect(void *ctx, const char *var, const char *value, const char *unless)
{
    struct collected *c = ctx;
    size_t n = strlen(c->env);
    snprintf(c->env + n, sizeof(c->env) - n, "%s=%s ", var, value);
    if (unless) {
        n = strlen(c->unless);
        snprintf(c->unless + n, sizeof(c->unless) - n, "%s<-%s ", var, unless);
    }
}

static const char *env_of(unsigned stacks, const ddl_rail_t *rails, const int *task_rail, int ntasks, int task,
                          struct collected *c)
{
    memset(c, 0, sizeof(*c));
    ddl_fabric_env(stacks, rails, task_rail, ntasks, task, collect, c);
    return c->env;
}

START_TEST(test_rail_names_on_the_node)
{
    ddl_rail_t r;
    ddl_rail_resolve(sysfs, "eth1", &r);
    ck_assert(r.found);
    ck_assert_str_eq(r.netdev, "eth1");
    ck_assert_str_eq(r.rdma, "mlx5_2");
    ck_assert_int_eq(r.cxi, -1);
    ddl_rail_resolve(sysfs, "mlx5_0:1", &r);
    ck_assert(r.found);
    ck_assert_str_eq(r.rdma, "mlx5_0");
    ck_assert_int_eq(r.port, 1);
    ck_assert_str_eq(r.netdev, "ib0");
    ddl_rail_resolve(sysfs, "mlx5_0", &r); /* port 1 when none is given */
    ck_assert(r.found);
    ck_assert_int_eq(r.port, 1);
    ddl_rail_resolve(sysfs, "mlx5_0:2", &r); /* the HCA has no port 2 */
    ck_assert(!r.found);
    ddl_rail_resolve(sysfs, "cxi1", &r);
    ck_assert(r.found);
    ck_assert_int_eq(r.cxi, 1);
    ck_assert_str_eq(r.netdev, "hsn1");
    ddl_rail_resolve(sysfs, "hsn1", &r); /* the interface of a cxi NIC */
    ck_assert(r.found);
    ck_assert_int_eq(r.cxi, 1);
    ddl_rail_resolve(sysfs, "eth9", &r);
    ck_assert(!r.found);
    ck_assert_str_eq(r.netdev, "eth9"); /* by its form, for ddl-topo */
    ddl_rail_resolve(sysfs, "mlx5_7:2", &r);
    ck_assert(!r.found);
    ck_assert_str_eq(r.rdma, "mlx5_7");
    ck_assert_str_eq(r.netdev, "");
    ck_assert_int_eq(r.port, 2);
}
END_TEST

START_TEST(test_every_stack_gets_its_own_name)
{
    ddl_rail_t rails[2];
    ddl_rail_resolve(sysfs, "eth2", &rails[0]);
    ddl_rail_resolve(sysfs, "mlx5_0:1", &rails[1]);
    int task_rail[4] = {0, 1, 0, 1};
    struct collected c;
    const char *env = env_of(DDL_STACKS_ALL, rails, task_rail, 4, 0, &c);
    ck_assert_str_eq(env, "OMPI_MCA_btl_tcp_if_include=eth2 OMPI_MCA_btl_tcp_eager_limit=1048576 "
                          "OMPI_MCA_btl_tcp_rndv_eager_limit=1048576 UCX_NET_DEVICES=eth2 FI_TCP_IFACE=eth2 "
                          "NCCL_SOCKET_IFNAME==eth2 ");
    ck_assert_str_eq(c.unless, "OMPI_MCA_btl_tcp_if_include<-OMPI_MCA_btl_tcp_if_exclude ");
    /* An HCA: UCX, verbs and NCCL's IB transport by device and port; the TCP
     * stacks by its IPoIB interface. */
    env = env_of(DDL_STACKS_ALL, rails, task_rail, 4, 1, &c);
    ck_assert_str_eq(env, "OMPI_MCA_btl_tcp_if_include=ib0 OMPI_MCA_btl_tcp_eager_limit=1048576 "
                          "OMPI_MCA_btl_tcp_rndv_eager_limit=1048576 UCX_NET_DEVICES=mlx5_0:1 FI_TCP_IFACE=ib0 "
                          "FI_VERBS_DEVICE_NAME=mlx5_0 NCCL_IB_HCA==mlx5_0:1 NCCL_SOCKET_IFNAME==ib0 ");
    /* RoCE: named by its interface, UCX and NCCL still get the RDMA port. */
    ddl_rail_resolve(sysfs, "eth1", &rails[0]);
    env = env_of(DDL_STACK_UCX | DDL_STACK_NCCL, rails, task_rail, 4, 2, &c);
    ck_assert_str_eq(env, "UCX_NET_DEVICES=mlx5_2:1 NCCL_IB_HCA==mlx5_2:1 NCCL_SOCKET_IFNAME==eth1 ");
    /* An RDMA device without an interface: no interface variable at all. */
    ddl_rail_resolve(sysfs, "mlx5_7:1", &rails[0]);
    env = env_of(DDL_STACKS_ALL, rails, task_rail, 4, 0, &c);
    ck_assert_str_eq(env, "UCX_NET_DEVICES=mlx5_7:1 FI_VERBS_DEVICE_NAME=mlx5_7 NCCL_IB_HCA==mlx5_7:1 ");
    /* One stack: only its rows. */
    ddl_rail_resolve(sysfs, "eth2", &rails[0]);
    env = env_of(DDL_STACK_UCX, rails, task_rail, 4, 0, &c);
    ck_assert_str_eq(env, "UCX_NET_DEVICES=eth2 ");
}
END_TEST

START_TEST(test_cray_mpich_node_map)
{
    ddl_rail_t rails[2];
    ddl_rail_resolve(sysfs, "cxi0", &rails[0]);
    ddl_rail_resolve(sysfs, "hsn1", &rails[1]);
    int task_rail[4] = {0, 1, 0, 1};
    struct collected c;
    const char *env = env_of(DDL_STACK_CRAY, rails, task_rail, 4, 3, &c);
    ck_assert_str_eq(env, "MPICH_OFI_NIC_POLICY=USER MPICH_OFI_NIC_MAPPING=0:0,2;1:1,3 ");
    /* Every task of the node gets the same map. */
    struct collected c0;
    ck_assert_str_eq(env_of(DDL_STACK_CRAY, rails, task_rail, 4, 0, &c0), env);
    /* A rail that is no cxi NIC: no map, which would send a rank to the wrong NIC. */
    ddl_rail_resolve(sysfs, "eth2", &rails[1]);
    ck_assert_str_eq(env_of(DDL_STACK_CRAY, rails, task_rail, 4, 0, &c), "");
}
END_TEST

START_TEST(test_fabric_and_rails_arguments)
{
    unsigned stacks = 0;
    ck_assert_int_eq(ddl_fabric_parse("auto", &stacks), 0);
    ck_assert_uint_eq(stacks, DDL_STACKS_ALL);
    ck_assert_int_eq(ddl_fabric_parse("ucx,nccl", &stacks), 0);
    ck_assert_uint_eq(stacks, DDL_STACK_UCX | DDL_STACK_NCCL);
    const char *bad[] = {"", "ucx,", ",ucx", "verbs", "ucx,,tcp", "UCX"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(ddl_fabric_parse(bad[i], &stacks) == -1, "fabric=%s accepted", bad[i]);
    ddl_spank_policy_t p;
    char err[512];
    ddl_spank_policy_defaults(&p);
    ck_assert_uint_eq(p.stacks, DDL_STACKS_ALL);
    char *ok[] = {"rails=mlx5_0:1,mlx5_1:1,hsn0,cxi3", "fabric=ucx,ofi"};
    ck_assert_int_eq(ddl_spank_policy_parse(2, ok, &p, err, sizeof(err)), 0);
    ck_assert_int_eq(p.nrails, 4);
    ck_assert_str_eq(p.rails[1], "mlx5_1:1");
    ck_assert_uint_eq(p.stacks, DDL_STACK_UCX | DDL_STACK_OFI);
    char *bad_args[] = {"rails=mlx5_0:", "rails=:1", "rails=mlx5_0:1:2", "rails=mlx5_0:x", "rails=mlx5_0:1234",
                        "fabric=verbs"};
    for (size_t i = 0; i < sizeof(bad_args) / sizeof(bad_args[0]); i++) {
        ddl_spank_policy_defaults(&p);
        ck_assert_msg(ddl_spank_policy_parse(1, &bad_args[i], &p, err, sizeof(err)) == -1, "%s accepted",
                      bad_args[i]);
    }
    ck_assert_ptr_nonnull(strstr(err, "fabric takes auto, or a comma-separated list of tcp, ucx, ofi, cray, nccl"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fabric");
    TCase *tc = tcase_create("fabric");
    tcase_add_checked_fixture(tc, make_sysfs, remove_sysfs);
    tcase_add_test(tc, test_rail_names_on_the_node);
    tcase_add_test(tc, test_every_stack_gets_its_own_name);
    tcase_add_test(tc, test_cray_mpich_node_map);
    tcase_add_test(tc, test_fabric_and_rails_arguments);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
