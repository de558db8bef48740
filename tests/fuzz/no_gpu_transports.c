/* SPDX-License-Identifier: Apache-2.0 */
/* The fuzz build links the runtime without its CUDA files; when the tree is
 * configured with CUDA, the transport table still names the device transports.
 * The harnesses never pass device buffers, and host-p2p comes first in the
 * table, so empty entries stand in. */
#include "config.h"

#include "transport.h"

const ddl_transport_t ddl_transport_staged, ddl_transport_cuda_mpi, ddl_transport_nccl;
