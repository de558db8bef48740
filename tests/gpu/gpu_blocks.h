/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DDL_TEST_GPU_BLOCKS_H
#define DDL_TEST_GPU_BLOCKS_H

#include "ddl.h"

/* ddl_reduce_scatter and ddl_allgather on device buffers (gpu_blocks.c):
 * every rank that calls collectives calls it (the owners with their buffers,
 * collective-mode helpers with none).  Adds its cases to *cases and returns
 * this rank's failures, each printed. */
int ddl_test_gpu_blocks(ddl_comm_t *comm, const ddl_comm_info_t *info, int quick, int *cases);

#endif
