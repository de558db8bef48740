/* SPDX-License-Identifier: Apache-2.0 */
/* The emulated CUDA runtime and NCCL behave like a GPU where the device path
 * relies on it: a host access to device memory faults, streams run later and
 * in order (the legacy default stream waiting for blocking streams; waits on
 * host memory; host functions holding later work), IPC works
 * between processes with CUDA's rules, errors are CUDA's (out of memory,
 * sticky faults), and NCCL refuses two ranks on one GPU.  Each test runs in a
 * process of its own (check's fork mode), so each starts with a fresh
 * emulator; those that need a second process fork before their first CUDA
 * call, as CUDA requires. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "unit.h"

void *ddl_emu_kernel_view(const void *p, size_t bytes);

#define OK(call) ck_assert_int_eq((call), cudaSuccess)

START_TEST(test_host_access_to_device_memory_faults)
{
    void *p;
    OK(cudaMalloc(&p, 4096));
    *(volatile char *)p = 1; /* SIGSEGV, as on a GPU */
}
END_TEST

START_TEST(test_copies_and_direction_checks)
{
    char in[1000], out[1000];
    for (int i = 0; i < 1000; i++)
        in[i] = (char)i;
    void *a, *b;
    OK(cudaMalloc(&a, sizeof(in)));
    OK(cudaMalloc(&b, sizeof(in)));
    OK(cudaMemcpy(a, in, sizeof(in), cudaMemcpyHostToDevice));
    OK(cudaMemcpy(b, a, sizeof(in), cudaMemcpyDeviceToDevice));
    OK(cudaMemcpy(out, b, sizeof(in), cudaMemcpyDefault));
    ck_assert_mem_eq(in, out, sizeof(in));
    OK(cudaMemset(b, 7, 10));
    OK(cudaMemcpy(out, b, 10, cudaMemcpyDeviceToHost));
    ck_assert_int_eq(out[9], 7);
    /* The wrong direction, a range past the allocation: invalid, remembered once. */
    ck_assert_int_eq(cudaMemcpy(out, a, 10, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy(out, a, sizeof(in) + 1, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidValue);
    OK(cudaGetLastError());
    ck_assert_int_eq(cudaFree((char *)a + 1), cudaErrorInvalidValue); /* not an allocation's base */
    OK(cudaFree(a));
    OK(cudaFree(b));
}
END_TEST

/* The driver's cuStreamWaitValue32, as libddl finds it. */
typedef CUresult (*wait_value_fn)(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);
static wait_value_fn wait_value(void)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    OK(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &q));
    ck_assert_int_eq(q, cudaDriverEntryPointSuccess);
    return (wait_value_fn)fn;
}

/* A word of pinned host memory that streams wait on, as ddl_wait_stream's. */
static uint32_t *host_word(void)
{
    void *p, *dev;
    OK(cudaHostAlloc(&p, sizeof(uint32_t), cudaHostAllocMapped | cudaHostAllocPortable));
    OK(cudaHostGetDevicePointer(&dev, p, 0));
    ck_assert_ptr_eq(dev, p); /* unified addressing */
    *(volatile uint32_t *)p = 0;
    return p;
}

START_TEST(test_streams_run_later_and_in_order)
{
    int value = 42, got = 0;
    void *d;
    cudaStream_t blocking, nonblocking;
    cudaEvent_t ev, legacy_ev, other_ev;
    uint32_t *word = host_word();
    OK(cudaMalloc(&d, 4096));
    OK(cudaStreamCreate(&blocking));
    OK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
    OK(cudaEventCreate(&ev));
    OK(cudaEventCreate(&legacy_ev));
    OK(cudaEventCreate(&other_ev));
    /* Held on the device until the host writes the word (a host function would hold every stream). */
    ck_assert_int_eq(wait_value()((CUstream)blocking, (CUdeviceptr)word, 5, CU_STREAM_WAIT_VALUE_GEQ), CUDA_SUCCESS);
    OK(cudaMemcpyAsync(d, &value, sizeof(value), cudaMemcpyHostToDevice, blocking));
    OK(cudaEventRecord(ev, blocking));
    ck_assert_int_eq(cudaStreamQuery(blocking), cudaErrorNotReady);
    ck_assert_int_eq(cudaEventQuery(ev), cudaErrorNotReady);
    /* The legacy default stream waits for the blocking stream; a non-blocking one does not. */
    OK(cudaMemsetAsync((char *)d + 64, 0, 64, NULL));
    OK(cudaEventRecord(legacy_ev, NULL));
    OK(cudaMemsetAsync((char *)d + 128, 0, 64, nonblocking));
    OK(cudaEventRecord(other_ev, nonblocking));
    OK(cudaEventSynchronize(other_ev));
    ck_assert_int_eq(cudaEventQuery(legacy_ev), cudaErrorNotReady);
    OK(cudaGetLastError()); /* not ready is not an error */
    /* A stream made to wait for the event runs after it. */
    OK(cudaStreamWaitEvent(nonblocking, ev, 0));
    OK(cudaMemcpyAsync(&got, d, sizeof(got), cudaMemcpyDeviceToHost, nonblocking));
    __atomic_store_n(word, 4, __ATOMIC_RELEASE); /* not yet: GEQ 5 */
    usleep(20000);
    ck_assert_int_eq(got, 0);
    __atomic_store_n(word, 6, __ATOMIC_RELEASE);
    OK(cudaStreamSynchronize(nonblocking));
    ck_assert_int_eq(got, 42);
    OK(cudaDeviceSynchronize());
    OK(cudaEventQuery(legacy_ev));
    OK(cudaStreamDestroy(blocking));
    OK(cudaStreamDestroy(nonblocking));
    OK(cudaFree(d));
}
END_TEST

/* CUDA lets a host function hold device work queued after it on any stream
 * (the emulation does): one that waits for such work waits for good. */
static atomic_int host_fn_saw;
static void CUDART_CB look_for_later_work(void *arg)
{
    for (int i = 0; i < 100; i++) { /* 100 ms */
        if (*(volatile int *)arg)
            break;
        usleep(1000);
    }
    atomic_store(&host_fn_saw, *(volatile int *)arg);
}

START_TEST(test_host_function_holds_later_work)
{
    static int flag;
    int one = 1;
    void *d;
    cudaStream_t a, b;
    OK(cudaMalloc(&d, 64));
    OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    OK(cudaLaunchHostFunc(a, look_for_later_work, &flag));
    /* Queued after the host function, on another stream: it may not start before it returned. */
    OK(cudaMemcpyAsync(d, &one, sizeof(one), cudaMemcpyHostToDevice, b));
    OK(cudaMemcpyAsync(&flag, d, sizeof(flag), cudaMemcpyDeviceToHost, b));
    OK(cudaStreamSynchronize(b));
    ck_assert_int_eq(flag, 1);
    OK(cudaStreamSynchronize(a));
    ck_assert_int_eq(atomic_load(&host_fn_saw), 0);
    OK(cudaFree(d));
}
END_TEST

/* IPC: the exporter sends its handle through a pipe to a child that has not
 * touched CUDA; the child opens it and reads, then (told the allocation is
 * freed) fails to open it again. */
START_TEST(test_ipc_between_processes)
{
    int to_child[2], to_parent[2];
    ck_assert_int_eq(pipe(to_child), 0);
    ck_assert_int_eq(pipe(to_parent), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        cudaIpcMemHandle_t h;
        void *p;
        int v = 0, rc = 0;
        if (read(to_child[0], &h, sizeof(h)) != sizeof(h) || cudaIpcOpenMemHandle(&p, h, 0) != cudaSuccess ||
            cudaMemcpy(&v, p, sizeof(v), cudaMemcpyDeviceToHost) != cudaSuccess || v != 1234)
            rc = 1;
        else if (cudaIpcCloseMemHandle(p) != cudaSuccess)
            rc = 2;
        char ack = 'x';
        if (write(to_parent[1], &ack, 1) != 1 || read(to_child[0], &ack, 1) != 1)
            rc = 3;
        else if (cudaIpcOpenMemHandle(&p, h, 0) != cudaErrorMapBufferObjectFailed)
            rc = 4; /* the allocation was freed */
        _exit(rc);
    }
    void *d, *mapped;
    int v = 1234;
    OK(cudaMalloc(&d, 1 << 20));
    OK(cudaMemcpy(d, &v, sizeof(v), cudaMemcpyHostToDevice));
    cudaIpcMemHandle_t h;
    ck_assert_int_eq(cudaIpcGetMemHandle(&h, (char *)d + 256), cudaErrorInvalidValue); /* only the base */
    OK(cudaIpcGetMemHandle(&h, d));
    ck_assert_int_eq(cudaIpcOpenMemHandle(&mapped, h, 0), cudaErrorDeviceUninitialized); /* not one's own */
    ck_assert_int_eq(write(to_child[1], &h, sizeof(h)), sizeof(h));
    char ack;
    ck_assert_int_eq(read(to_parent[0], &ack, 1), 1);
    OK(cudaFree(d));
    ck_assert_int_eq(write(to_child[1], &ack, 1), 1);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child's IPC check %d", WEXITSTATUS(status));
}
END_TEST

START_TEST(test_out_of_memory_and_addresses_reused)
{
    setenv("DDL_EMU_DEVICE_MEMORY", "1M", 1);
    void *a, *b, *c;
    ck_assert_int_eq(cudaMalloc(&a, 2 << 20), cudaErrorMemoryAllocation);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorMemoryAllocation);
    OK(cudaMalloc(&a, 512 << 10));
    OK(cudaMalloc(&b, 512 << 10));
    ck_assert_int_eq(cudaMalloc(&c, 1), cudaErrorMemoryAllocation);
    OK(cudaFree(a));
    OK(cudaMalloc(&c, 512 << 10));
    ck_assert_ptr_eq(c, a); /* first fit: a stale pointer meets new data */
}
END_TEST

START_TEST(test_visible_devices)
{
    setenv("DDL_EMU_GPUS", "4", 1);
    setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
    int n, dev;
    char bus[32];
    OK(cudaGetDeviceCount(&n));
    ck_assert_int_eq(n, 2);
    OK(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
    ck_assert_str_eq(bus, "0000:4C:00.0");
    OK(cudaDeviceGetByPCIBusId(&dev, "0000:19:00.0"));
    ck_assert_int_eq(dev, 1);
    ck_assert_int_eq(cudaDeviceGetByPCIBusId(&dev, "0000:3b:00.0"), cudaErrorInvalidDevice); /* hidden */
    ck_assert_int_eq(cudaSetDevice(2), cudaErrorInvalidDevice);
    void *p;
    OK(cudaSetDevice(1));
    OK(cudaMalloc(&p, 64));
    struct cudaPointerAttributes attr;
    OK(cudaPointerGetAttributes(&attr, p));
    ck_assert_int_eq(attr.type, cudaMemoryTypeDevice);
    ck_assert_int_eq(attr.device, 1);
    OK(cudaPointerGetAttributes(&attr, &n));
    ck_assert_int_eq(attr.type, cudaMemoryTypeUnregistered);
}
END_TEST

START_TEST(test_a_fault_is_sticky)
{
    void *p, *q;
    OK(cudaMalloc(&p, 64));
    OK(cudaFree(p));
    ck_assert_ptr_null(ddl_emu_kernel_view(p, 64)); /* a kernel reading freed memory */
    ck_assert_int_eq(cudaMalloc(&q, 64), cudaErrorIllegalAddress);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorIllegalAddress);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
}
END_TEST

/* Rank r of a 2-rank communicator on device dev[r]: the init's result, and
 * for a good one the sum of an allreduce checked (exit 9 when wrong). */
static int nccl_rank(ncclUniqueId id, int r, int dev)
{
    ncclComm_t comm;
    if (cudaSetDevice(dev) != cudaSuccess)
        return 8;
    ncclResult_t rc = ncclCommInitRank(&comm, 2, id, r);
    if (rc != ncclSuccess)
        return (int)rc;
    float x[3] = {1.0f + r, 2.0f, 3.0f}, y[3];
    void *d;
    cudaStream_t s;
    if (cudaMalloc(&d, sizeof(x)) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess ||
        cudaMemcpy(d, x, sizeof(x), cudaMemcpyHostToDevice) != cudaSuccess ||
        ncclAllReduce(d, d, 3, ncclFloat32, ncclSum, comm, s) != ncclSuccess ||
        ncclAllReduce(x, x, 3, ncclFloat32, ncclSum, comm, s) != ncclInvalidArgument || /* host memory */
        cudaStreamSynchronize(s) != cudaSuccess || cudaMemcpy(y, d, sizeof(y), cudaMemcpyDeviceToHost) != cudaSuccess)
        return 10;
    ncclCommDestroy(comm);
    return y[0] == 3.0f && y[1] == 4.0f && y[2] == 6.0f ? 0 : 9;
}

static void two_ranks(int dev0, int dev1, int expect)
{
    ncclUniqueId id;
    ck_assert_int_eq(ncclGetUniqueId(&id), ncclSuccess);
    pid_t pids[2];
    for (int r = 0; r < 2; r++)
        if ((pids[r] = fork()) == 0) {
            setenv("DDL_EMU_GPUS", "2", 1);
            _exit(nccl_rank(id, r, r ? dev1 : dev0));
        }
    for (int r = 0; r < 2; r++) {
        int status;
        ck_assert_int_eq(waitpid(pids[r], &status, 0), pids[r]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == expect, "rank %d: %d, expected %d", r,
                      WEXITSTATUS(status), expect);
    }
    char path[160];
    snprintf(path, sizeof(path), "/dev/shm%s", id.internal);
    ck_assert_msg(access(path, F_OK) != 0, "%s left behind", path);
}

START_TEST(test_nccl_allreduce_and_duplicate_gpu)
{
    two_ranks(0, 1, ncclSuccess);
    two_ranks(1, 1, ncclInvalidUsage); /* "Duplicate GPU detected" */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda-emu");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test_raise_signal(tc, test_host_access_to_device_memory_faults, SIGSEGV);
    tcase_add_test(tc, test_copies_and_direction_checks);
    tcase_add_test(tc, test_streams_run_later_and_in_order);
    tcase_add_test(tc, test_host_function_holds_later_work);
    tcase_add_test(tc, test_ipc_between_processes);
    tcase_add_test(tc, test_out_of_memory_and_addresses_reused);
    tcase_add_test(tc, test_visible_devices);
    tcase_add_test(tc, test_a_fault_is_sticky);
    tcase_add_test(tc, test_nccl_allreduce_and_duplicate_gpu);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
