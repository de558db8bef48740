/* SPDX-License-Identifier: Apache-2.0 */
/* Status codes of every DDL lanes API (native ddl.h and PowerAI ddl.hpp): 0 is
 * success, errors are negative, and ddl_status_string names each. */
#ifndef DDL_STATUS_H
#define DDL_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DDL_OK = 0,
    DDL_ERR_INVALID_ARG = -1,   /* a bad argument or configuration value */
    DDL_ERR_NO_MEMORY = -2,     /* out of memory or shared memory */
    DDL_ERR_NOT_SUPPORTED = -3, /* not available in this build or on this layout */
    DDL_ERR_TIMED_OUT = -4,     /* a peer did not answer within DDL_TIMEOUT */
    DDL_ERR_PEER_FAILED = -5,   /* a peer exited or reported an error */
    DDL_ERR_SYSTEM = -6,        /* a system call failed */
    DDL_ERR_MPI = -7,           /* an MPI call failed */
    DDL_ERR_MISMATCH = -8,      /* ranks called with different count, type, op or call order */
    DDL_ERR_LAYOUT = -9,        /* the ranks do not form nodes x GPUs x lanes */
    DDL_ERR_DEVICE = -10,       /* a CUDA or NCCL call failed */
    DDL_ERR_INTERNAL = -11,     /* a bug in the library: please report it */
} ddl_status_t;

const char *ddl_status_string(ddl_status_t status);
/* The message of this thread's last error, "" when there is none. */
const char *ddl_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
