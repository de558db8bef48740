/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DDL lanes: multi-lane, topology-aware allreduce.
 *
 * Every GPU is served by L processes ("lanes"): lane 0 owns the GPU's buffer,
 * lanes 1..L-1 are helpers that reduce and transfer a share of it.  Local rank t
 * of a node serves GPU t / L as lane t % L.
 */
#ifndef DDL_H
#define DDL_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include <ddl/status.h>
#include <ddl/version.h>

#ifdef __cplusplus
extern "C" {
#endif


typedef enum {
    DDL_DTYPE_F32 = 0,
    DDL_DTYPE_F64,
    DDL_DTYPE_F16,  /* IEEE binary16, stored as uint16_t */
    DDL_DTYPE_BF16, /* bfloat16, stored as uint16_t */
    DDL_DTYPE_I8,
    DDL_DTYPE_U8,
    DDL_DTYPE_I32,
    DDL_DTYPE_U32,
    DDL_DTYPE_I64,
    DDL_DTYPE_U64,
    DDL_DTYPE_COUNT
} ddl_dtype_t;

typedef enum {
    DDL_REDOP_SUM = 0,
    DDL_REDOP_PROD,
    DDL_REDOP_MIN,
    DDL_REDOP_MAX,
    /* Sum divided by the number of GPUs.  Floating types round as the type
     * does; integer types take the floor of the (wrapping) sum / GPUs. */
    DDL_REDOP_AVG,
    DDL_REDOP_COUNT
} ddl_redop_t;

typedef enum {
    DDL_ROLE_OWNER = 0,  /* lane 0: owns the GPU's buffer */
    DDL_ROLE_HELPER = 1, /* lanes 1..L-1 */
} ddl_role_t;

typedef enum {
    /* Every rank calls ddl_allreduce; helpers' buffer arguments are ignored. */
    DDL_HELPERS_COLLECTIVE = 0,
    /* Helpers call ddl_serve() and take part in every collective the owners
     * start, until the owners destroy the communicator. */
    DDL_HELPERS_SERVE = 1,
} ddl_helper_mode_t;

/* Pass as sendbuf for an in-place allreduce (sendbuf == recvbuf works too). */
#define DDL_IN_PLACE ((const void *)1)

typedef struct {
    int lanes;                     /* processes per GPU, >= 1 */
    int gpus_per_node;             /* 0: node ranks / lanes */
    int node_size;                 /* 0: a node is what MPI_COMM_TYPE_SHARED finds;
                                      N: split it into virtual nodes of N ranks
                                      (emulation switch for tests and benchmarks) */
    ddl_helper_mode_t helper_mode;
} ddl_config_t;

typedef struct {
    int rank, size;             /* in the communicator the ddl comm was built from */
    int node, nnodes;           /* node index and count (virtual nodes count as nodes) */
    int local_rank, local_size; /* on this node */
    int gpu, gpus_per_node;     /* GPU this rank serves, and GPUs per node */
    int lane, lanes;            /* lane of this rank, lanes per GPU */
    ddl_role_t role;
    int owner_rank, owner_size; /* rank among owners (node * G + gpu); -1 on helpers */
} ddl_comm_info_t;

typedef struct ddl_comm ddl_comm_t;

/* Fill *cfg from DDL_LANES, DDL_GPUS_PER_NODE, DDL_NODE_SIZE and DDL_HELPERS
 * (defaults 1, 0, 0, collective).  Returns DDL_ERR_INVALID_ARG on a malformed value. */
ddl_status_t ddl_config_init(ddl_config_t *cfg);

/* A PowerAI DDL option string ("-mode r:4x2 -dump_iter 100 -dbg_level 1", as
 * in DDL_OPTIONS) into the DDL_* settings the next communicator reads, over
 * the environment (which stays as it is; a later string replaces these):
 * -mode sets DDL_ALGO=multiring, DDL_TOPOLOGY and DDL_EXPLORE (p: 1, r: 0),
 * -dbg_level DDL_DEBUG.  *dump_iter (may be NULL) gets -dump_iter.  Every rank
 * of a communicator must apply the same string (ddl-helper applies
 * DDL_OPTIONS). */
ddl_status_t ddl_options_apply(const char *options, long *dump_iter);

/* For programs without MPI of their own (bindings, ddl-helper): MPI_Init_thread
 * unless MPI is initialised already; ddl_finalize_mpi finalises it only if
 * ddl_init_mpi initialised it. */
ddl_status_t ddl_init_mpi(void);
ddl_status_t ddl_finalize_mpi(void);
/* ddl_comm_create on MPI_COMM_WORLD (for callers that cannot name it). */
ddl_status_t ddl_comm_create_world(const ddl_config_t *cfg, ddl_comm_t **out);

/* Collective over every rank of comm.  comm is duplicated. */
ddl_status_t ddl_comm_create(MPI_Comm comm, const ddl_config_t *cfg, ddl_comm_t **out);
/* Collective over every rank (helpers in serve mode call it after ddl_serve returns). */
ddl_status_t ddl_comm_destroy(ddl_comm_t *comm);
ddl_status_t ddl_comm_info(const ddl_comm_t *comm, ddl_comm_info_t *info);
/* The owners only, one rank per GPU, ordered node * G + gpu; MPI_COMM_NULL on helpers.
 * Owned by the ddl comm: do not free it. */
MPI_Comm ddl_comm_owners(const ddl_comm_t *comm);

/* ddl_allreduce and ddl_malloc are declared with their names in parentheses:
 * PowerAI DDL's header (ddl.hpp) may define macros of the same names, which
 * pass calls with these arguments on to these functions. */

/* Blocking allreduce.  Owners pass their buffers; in collective mode helpers call
 * it too with the same count, dtype and op (their buffers are ignored). */
ddl_status_t(ddl_allreduce)(const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype, ddl_redop_t op,
                            ddl_comm_t *comm);

/* Where the buffers of a call are. */
typedef enum {
    DDL_MEM_AUTO = 0, /* ask CUDA about the pointers (host memory when CUDA is absent) */
    DDL_MEM_HOST,
    DDL_MEM_DEVICE,   /* cudaMalloc'd memory of the owner's GPU */
} ddl_memory_t;

/* ddl_allreduce with the memory kind stated and, for device buffers, a CUDA
 * stream (a cudaStream_t, or NULL for the legacy default stream): the
 * collective starts after the work queued on that stream, and its result is
 * in recvbuf when the call returns.  ddl_allreduce is this call with
 * DDL_MEM_AUTO and no stream (it waits for the whole device instead).
 * Device buffers need a library built with CUDA (ddl-info says). */
ddl_status_t ddl_allreduce_stream(const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype,
                                  ddl_redop_t op, ddl_memory_t mem, void *stream, ddl_comm_t *comm);

/* Nonblocking allreduce.  The call checks its arguments and queues the
 * collective; *req says when it is done.  Requests complete in the order they
 * were posted, on every rank in the same order, and give the same result as
 * ddl_allreduce.  With MPI_THREAD_MULTIPLE (ddl_init_mpi asks for it) a
 * progress thread of the communicator carries them, together with the helpers,
 * while the caller goes on; otherwise they run inside ddl_test and ddl_wait.
 * The buffers belong to the request until it is done.  Posting is safe from
 * any thread; the order of posting is the order of the collectives. */
typedef struct ddl_request ddl_request_t;
ddl_status_t ddl_iallreduce(const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype, ddl_redop_t op,
                            ddl_comm_t *comm, ddl_request_t **req);
/* For device buffers: the collective starts after the work queued on stream
 * at the time of the call (an event the progress thread polls; the calling
 * thread does not wait).  stream NULL: after the work of the legacy default
 * stream (which follows every blocking stream). */
ddl_status_t ddl_iallreduce_stream(const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype,
                                   ddl_redop_t op, ddl_memory_t mem, void *stream, ddl_comm_t *comm,
                                   ddl_request_t **req);
/* Reduce-scatter and allgather over the owners (one rank per GPU, ordered
 * node * G + gpu as ddl_comm_owners; P of them).  Owner r's recvbuf gets
 * block r of the reduction (op) of every owner's sendbuf of P x recvcount
 * elements; in ddl_allgather every owner's recvbuf gets every owner's
 * sendcount elements, owner r's at block r.  They run on the lanes and the
 * MPI path as ddl_allreduce does, with its checks (a rank that passes another
 * count, type or op fails the call on every rank with DDL_ERR_MISMATCH).
 * In place as NCCL's: recvbuf = sendbuf + r x recvcount for the
 * reduce-scatter, sendbuf = recvbuf + r x sendcount (or DDL_IN_PLACE) for
 * the allgather; other overlaps are undefined.  Host or device memory (both
 * buffers of a rank the same kind), as ddl_allreduce: without a stream the
 * call waits for the device's queued work first; the _stream forms state the
 * memory and take a stream, as ddl_allreduce_stream and
 * ddl_iallreduce_stream do.  Device buffers are staged through host memory,
 * where the lanes work.  In collective mode helpers call them too, with the
 * same count, dtype and op. */
ddl_status_t ddl_reduce_scatter(const void *sendbuf, void *recvbuf, int64_t recvcount, ddl_dtype_t dtype,
                                ddl_redop_t op, ddl_comm_t *comm);
ddl_status_t ddl_ireduce_scatter(const void *sendbuf, void *recvbuf, int64_t recvcount, ddl_dtype_t dtype,
                                 ddl_redop_t op, ddl_comm_t *comm, ddl_request_t **req);
ddl_status_t ddl_allgather(const void *sendbuf, void *recvbuf, int64_t sendcount, ddl_dtype_t dtype,
                           ddl_comm_t *comm);
ddl_status_t ddl_iallgather(const void *sendbuf, void *recvbuf, int64_t sendcount, ddl_dtype_t dtype,
                            ddl_comm_t *comm, ddl_request_t **req);
ddl_status_t ddl_reduce_scatter_stream(const void *sendbuf, void *recvbuf, int64_t recvcount, ddl_dtype_t dtype,
                                       ddl_redop_t op, ddl_memory_t mem, void *stream, ddl_comm_t *comm);
ddl_status_t ddl_ireduce_scatter_stream(const void *sendbuf, void *recvbuf, int64_t recvcount, ddl_dtype_t dtype,
                                        ddl_redop_t op, ddl_memory_t mem, void *stream, ddl_comm_t *comm,
                                        ddl_request_t **req);
ddl_status_t ddl_allgather_stream(const void *sendbuf, void *recvbuf, int64_t sendcount, ddl_dtype_t dtype,
                                  ddl_memory_t mem, void *stream, ddl_comm_t *comm);
ddl_status_t ddl_iallgather_stream(const void *sendbuf, void *recvbuf, int64_t sendcount, ddl_dtype_t dtype,
                                   ddl_memory_t mem, void *stream, ddl_comm_t *comm, ddl_request_t **req);
/* *done = 1 and the request's status once it has completed (its error message
 * becomes this thread's ddl_last_error); *done = 0 and DDL_OK before. */
ddl_status_t ddl_test(ddl_request_t *req, int *done);
/* Wait for the request; returns its status.  A request that fails, and every
 * request behind it on the communicator, fails on every rank. */
ddl_status_t ddl_wait(ddl_request_t *req);
/* Device work queued on stream after this call waits for the request to
 * complete; the calling thread does not (the stream waits on the device, with
 * cuStreamWaitValue32, on the communicator's count of completed requests;
 * where the driver has no stream memory operations the calling thread waits
 * for the request instead).  Needs a library built with CUDA and the progress
 * thread (MPI_THREAD_MULTIPLE).  The request may be freed at once. */
ddl_status_t ddl_wait_stream(ddl_request_t *req, void *stream);
/* Release a request.  One still in flight completes and is released then
 * (its buffers stay the library's until ddl_comm_destroy, which waits for it). */
ddl_status_t ddl_request_free(ddl_request_t *req);

/* Helpers in serve mode: do this rank's part of every collective its owner starts;
 * returns DDL_OK when the owners destroy the communicator. */
ddl_status_t ddl_serve(ddl_comm_t *comm);

/* Host memory in shared memory: the node's other ranks read an owner's buffer
 * from it without a copy.  Any other host buffer works too, staged through
 * shared memory.  Local, not collective. */
ddl_status_t(ddl_malloc)(ddl_comm_t *comm, size_t size, void **ptr);
ddl_status_t ddl_free(ddl_comm_t *comm, void *ptr);

/* Traffic between nodes, per dimension: entry 0 is the lane algorithms' ring
 * over all nodes; with DDL_TOPOLOGY, entries 1.. are the grid's node dimensions
 * (nodes of a rack, racks, ...).  Counted for this rank since creation or the
 * last reset: bytes it sent, and seconds its transfers were in flight. */
typedef struct {
    int dim;
    int size;                      /* ranks along it */
    unsigned long long bytes_sent;
    double seconds;
} ddl_dim_stats_t;

/* Fills at most max entries; returns their number, or a negative status. */
int ddl_comm_stats(const ddl_comm_t *comm, ddl_dim_stats_t *stats, int max);

/* Where this rank's lane-path calls spent their time, phase by phase, since
 * creation or the last reset: copy in, node barrier, signatures, reduce and
 * exchange (between nodes: of it, intra-node reduce, wait between nodes and
 * write-back), results barrier, copy out; then a call's fixed cost before its
 * data moves, across those: queued (a request, from ddl_iallreduce to the
 * lane path taking it up) and start (from there to its first chunk handed to
 * the transport, whose first bytes leave then; on one node to the node's
 * reduce); last, early: the calls between nodes whose first chunk left
 * before the nodes' signatures agreed (a repeat of a call they agreed on
 * before), and their time from then until the signatures agreed.  name is a
 * static string. */
typedef struct {
    const char *name;
    double seconds;
    unsigned long long calls; /* lane-path calls counted (early: those that started early) */
} ddl_phase_stats_t;

/* Fills at most max entries (12 phases); returns their number, or a negative status. */
int ddl_comm_phases(const ddl_comm_t *comm, ddl_phase_stats_t *phases, int max);
/* Resets both the traffic and the phase counters. */
void ddl_comm_stats_reset(ddl_comm_t *comm);

/* How ddl_allreduce moves a message of `bytes` bytes on this communicator, as
 * a tuning file names it ("mpi", "mpi/exchange", "lane/ring chunk=64K",
 * "multiring chunk=128K", ...), into buf.  Returns 1 when that is settled (a
 * tuning-file band, a fixed rule, or online selection's decision), 0 while
 * online selection is still timing candidates for the size (the next calls
 * explore; buf says "exploring"), or a negative status.  Every rank gets the
 * same answer after the same calls. */
int ddl_comm_choice(const ddl_comm_t *comm, size_t bytes, char *buf, size_t len);
/* The same for the collective named ("allreduce", "reduce_scatter" or
 * "allgather"; its bytes are its larger buffer's, as its selection counts
 * them): each chooses in size classes of its own. */
int ddl_comm_collective_choice(const ddl_comm_t *comm, const char *collective, size_t bytes, char *buf, size_t len);

/* The library's version ("0.1.0"): DDL_VERSION_STRING of the libddl that runs,
 * which may differ from the headers a program was built with. */
const char *ddl_version(void);

const char *ddl_dtype_name(ddl_dtype_t dtype);
size_t ddl_dtype_size(ddl_dtype_t dtype);
const char *ddl_redop_name(ddl_redop_t op);

#ifdef __cplusplus
}
#endif

/* ddl.hpp's C ddl_malloc macro sends a communicator first argument here. */
#undef DDL_NATIVE_MALLOC
#define DDL_NATIVE_MALLOC (ddl_malloc)

#endif /* DDL_H */
