/* SPDX-License-Identifier: Apache-2.0 */
/* The table of stacks (fabric.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "fabric.h"

/* Which of a rail's names a row takes. */
typedef enum {
    TAKES_NETDEV,      /* the interface: eth1 */
    TAKES_RDMA,        /* the RDMA device: mlx5_0 */
    TAKES_RDMA_PORT,   /* the RDMA device and port: mlx5_0:1 */
    TAKES_UCX_DEVICE,  /* UCX's device: the RDMA port where there is one, else the interface */
    TAKES_CXI_MAPPING, /* the node's local ranks per cxi index, where every rail is a cxi device */
} takes_t;

typedef struct {
    unsigned stack;
    const char *var;
    takes_t takes;
    const char *prefix; /* before the name ("=": NCCL's exact match) */
    const char *fixed;  /* a value of its own, set where the rail has the name `takes` says */
    const char *unless;
} fabric_row_t;

static const fabric_row_t rows[] = {
    /* Open MPI's TCP transport: the interface, and eager limits above a
     * lane's largest message (half a chunk, at most 1 MiB): a rendezvous
     * handshake queues behind the other direction's data on a loaded link
     * and stalls the pipeline (on the emulated 1 Gbit/s rails a 64 MiB
     * allreduce took 0.45 s with the 64 KiB default, 0.29 s with this).
     * Open MPI refuses if_include beside a job's if_exclude. */
    {DDL_STACK_TCP, "OMPI_MCA_btl_tcp_if_include", TAKES_NETDEV, "", NULL, "OMPI_MCA_btl_tcp_if_exclude"},
    {DDL_STACK_TCP, "OMPI_MCA_btl_tcp_eager_limit", TAKES_NETDEV, "", "1048576", NULL},
    {DDL_STACK_TCP, "OMPI_MCA_btl_tcp_rndv_eager_limit", TAKES_NETDEV, "", "1048576", NULL},
    /* UCX takes an RDMA port (mlx5_0:1) or an interface (its tcp transport). */
    {DDL_STACK_UCX, "UCX_NET_DEVICES", TAKES_UCX_DEVICE, "", NULL, NULL},
    /* libfabric: its tcp provider by interface, its verbs provider by device. */
    {DDL_STACK_OFI, "FI_TCP_IFACE", TAKES_NETDEV, "", NULL, NULL},
    {DDL_STACK_OFI, "FI_VERBS_DEVICE_NAME", TAKES_RDMA, "", NULL, NULL},
    /* Cray MPICH picks a NIC per local rank from a node-wide map. */
    {DDL_STACK_CRAY, "MPICH_OFI_NIC_POLICY", TAKES_CXI_MAPPING, "", "USER", NULL},
    {DDL_STACK_CRAY, "MPICH_OFI_NIC_MAPPING", TAKES_CXI_MAPPING, "", NULL, NULL},
    /* NCCL: '=' asks for exactly this device, not every name it prefixes. */
    {DDL_STACK_NCCL, "NCCL_IB_HCA", TAKES_RDMA_PORT, "=", NULL, NULL},
    {DDL_STACK_NCCL, "NCCL_SOCKET_IFNAME", TAKES_NETDEV, "=", NULL, NULL},
};

static const char *const stack_names[] = {"tcp", "ucx", "ofi", "cray", "nccl"};
#define NSTACKS (sizeof(stack_names) / sizeof(stack_names[0]))

const char *ddl_fabric_accepted(void)
{
    return "auto, or a comma-separated list of tcp, ucx, ofi, cray, nccl";
}

int ddl_fabric_parse(const char *value, unsigned *stacks)
{
    if (strcmp(value, "auto") == 0) {
        *stacks = DDL_STACKS_ALL;
        return 0;
    }
    unsigned got = 0;
    while (*value) {
        size_t n = strcspn(value, ","), i;
        for (i = 0; i < NSTACKS; i++)
            if (strlen(stack_names[i]) == n && strncmp(value, stack_names[i], n) == 0)
                break;
        if (i == NSTACKS)
            return -1;
        got |= 1u << i;
        value += n;
        if (*value == ',' && *++value == '\0')
            return -1;
    }
    if (!got)
        return -1;
    *stacks = got;
    return 0;
}

/* "0:0,2;1:1,3": the node's local ranks on each cxi NIC, or "" unless every
 * task's rail is a cxi device. */
static void cxi_mapping(const ddl_rail_t *rails, const int *task_rail, int ntasks, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int t = 0; t < ntasks; t++)
        if (rails[task_rail[t]].cxi < 0)
            return;
    for (int t = 0; t < ntasks; t++) {
        int nic = rails[task_rail[t]].cxi, first = 1;
        int seen = 0; /* listed with an earlier task of the same NIC */
        for (int u = 0; u < t; u++)
            seen |= rails[task_rail[u]].cxi == nic;
        if (seen)
            continue;
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%d:", used ? ";" : "", nic);
        for (int u = t; u < ntasks; u++)
            if (rails[task_rail[u]].cxi == nic) {
                used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%d", first ? "" : ",", u);
                first = 0;
            }
    }
    if (used >= len)
        out[0] = '\0'; /* a partial map would send ranks to the wrong NIC */
}

void ddl_fabric_env(unsigned stacks, const ddl_rail_t *rails, const int *task_rail, int ntasks, int task,
                    ddl_fabric_emit_t emit, void *ctx)
{
    const ddl_rail_t *r = &rails[task_rail[task]];
    char name[4096], value[4096 + 8];
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const fabric_row_t *row = &rows[i];
        if (!(stacks & row->stack))
            continue;
        switch (row->takes) {
        case TAKES_NETDEV: snprintf(name, sizeof(name), "%s", r->netdev); break;
        case TAKES_RDMA: snprintf(name, sizeof(name), "%s", r->rdma); break;
        case TAKES_RDMA_PORT: snprintf(name, sizeof(name), r->rdma[0] ? "%s:%d" : "", r->rdma, r->port); break;
        case TAKES_UCX_DEVICE:
            if (r->rdma[0])
                snprintf(name, sizeof(name), "%s:%d", r->rdma, r->port);
            else
                snprintf(name, sizeof(name), "%s", r->netdev);
            break;
        case TAKES_CXI_MAPPING: cxi_mapping(rails, task_rail, ntasks, name, sizeof(name)); break;
        }
        if (!name[0])
            continue; /* the rail has no name of this kind */
        snprintf(value, sizeof(value), "%s%s", row->prefix, row->fixed ? row->fixed : name);
        emit(ctx, row->var, value, row->unless);
    }
}
