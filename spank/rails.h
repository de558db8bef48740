/* SPDX-License-Identifier: Apache-2.0 */
/* A rail as the node knows it.  The site names a rail once, in the form its
 * fabric uses (rails=eth1, rails=mlx5_0:1, rails=cxi0, rails=hsn0); each
 * network stack selects a NIC by its own kind of name (an interface for TCP,
 * an RDMA device and port for UCX and NCCL's IB transport, a cxi index for
 * Cray MPICH).  Resolving a rail finds the names of each kind that the same
 * NIC has on this node, from sysfs; fabric.h turns them into every stack's
 * variables. */
#ifndef DDL_SPANK_RAILS_H
#define DDL_SPANK_RAILS_H

#include <stddef.h>

#define DDL_RAIL_NAME_MAX 32

typedef struct {
    char name[DDL_RAIL_NAME_MAX];   /* as the site wrote it */
    char netdev[DDL_RAIL_NAME_MAX]; /* its network interface ("" if none) */
    char rdma[DDL_RAIL_NAME_MAX];   /* its RDMA device, such as mlx5_0 ("" if none) */
    int port;                       /* the RDMA device's port */
    int cxi;                        /* N of its cxiN device, -1 if none */
    int found;                      /* this node has it */
} ddl_rail_t;

/* Resolve `name` against the sysfs tree at `sysfs` ("/sys" on a node; a test
 * gives a tree of its own).  A network interface counts as present when this
 * network namespace has it (sysfs shows the host's when a namespace was
 * entered without remounting it).  When the node lacks it, found is 0 and the
 * kinds are guessed from the name's form: "dev:port" an RDMA device, "cxiN" a
 * cxi device, anything else an interface; ddl-topo plans another node's rails
 * that way. */
void ddl_rail_resolve(const char *sysfs, const char *name, ddl_rail_t *r);

/* What the node has of that name, for a message: "network interface eth1",
 * "RDMA device mlx5_0 port 1 (interface ib0)", ... */
const char *ddl_rail_describe(const ddl_rail_t *r, char *buf, size_t len);

#endif
