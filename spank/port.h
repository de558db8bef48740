/* SPDX-License-Identifier: Apache-2.0 */
/* The owners' torch.distributed rendezvous port (MASTER_PORT) for one step:
 * the same on every node without talking, and different for steps that can
 * run at the same time on the first node.  Pure: unit-tested without Slurm. */
#ifndef DDL_SPANK_PORT_H
#define DDL_SPANK_PORT_H

#include <stdint.h>

#define DDL_PORT_BASE 20000
#define DDL_PORT_JOBS 1000 /* consecutive jobs that never share a port */
#define DDL_PORT_STEPS 30  /* consecutive steps of a job that never share one */

/* resv_ports: SLURM_STEP_RESV_PORTS ("12000-12003", set when the site
 * configures MpiParams=ports=): Slurm reserved those ports for this step on
 * each of its nodes, so the first is used.  Otherwise (NULL or unreadable)
 * DDL_PORT_BASE + (jobid mod 1000) * 30 + stepid mod 30: steps collide only
 * when their jobs are a multiple of 1000 apart or a job's steps run 30 apart
 * at the same time. */
int ddl_master_port(uint32_t jobid, uint32_t stepid, const char *resv_ports);

#endif
