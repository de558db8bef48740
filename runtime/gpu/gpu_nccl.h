/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL as a lane transport: one communicator per lane (the ranks with the same
 * local index on every node, so one GPU per node in each and never two ranks
 * of one GPU in a communicator).  libnccl.so.2 is loaded at run time, so a
 * libddl built with CUDA runs where NCCL is absent; every NCCL wait polls with
 * the communicator's deadline and aborts the NCCL communicator when it passes. */
#ifndef DDL_GPU_NCCL_H
#define DDL_GPU_NCCL_H

#include <stddef.h>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "ddl.h"

typedef struct ddl_nccl ddl_nccl_t;

/* 1 when libnccl.so.2 loads and has what the transport calls; else 0 and why. */
int ddl_nccl_load(char *why, size_t len);
/* Collective over lane_comm; the caller's current device is the rank's GPU. */
ddl_status_t ddl_nccl_create(MPI_Comm lane_comm, double timeout, ddl_nccl_t **out);
/* Queue an in-place allreduce of n elements on stream (AVG queues a sum). */
ddl_status_t ddl_nccl_allreduce(ddl_nccl_t *n, void *buf, size_t count, ddl_dtype_t dtype, ddl_redop_t op,
                                cudaStream_t stream);
/* NCCL's asynchronous error state: DDL_OK while healthy. */
ddl_status_t ddl_nccl_check(ddl_nccl_t *n);
/* Destroy (abort = 1 after a failure: do not wait for peers). */
void ddl_nccl_free(ddl_nccl_t *n, int abort);

#endif
