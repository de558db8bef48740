/* SPDX-License-Identifier: Apache-2.0 */
/* The GPU interface (gpu.h) in libddl: the CUDA module (gpu_module.h) when it
 * loads, host memory only when it does not.
 *
 * The module is found, in this order: the file DDL_CUDA_MODULE names (none:
 * no module, host memory only); the
 * installed layout, ddl-lanes/libddl-cuda.so beside libddl itself (so that
 * any prefix works); libddl-cuda.so beside libddl (a build tree, where libtool
 * keeps both in .libs).  It is looked for once, the first time the device
 * path is asked about; a module from another build is refused, with the
 * reason kept for the messages below and for ddl-info. */
#include "config.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI's MPIX_Query_cuda_support (after mpi.h) */
#endif

#include "comm.h"
#include "ddl/version.h"
#include "gpu.h"
#include "gpu_module.h"
#include "log.h"

/* What a user without the module is told to do. */
#define DDL_GPU_INSTALL_HINT                                                                                           \
    "install the CUDA module (Debian: apt install libddl0-cuda; RPM: ddl-lanes-cuda; from source: configure with "   \
    "the CUDA toolkit), or name it with DDL_CUDA_MODULE"

static const ddl_gpu_module_t *module;
static char module_path[PATH_MAX], module_why[PATH_MAX + 256];
static pthread_once_t module_once = PTHREAD_ONCE_INIT;

/* dlopen of one candidate: 1 when it is a module of this build (module set);
 * else 0 with why. */
static int try_module(const char *path, int must_exist)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        if (must_exist)
            snprintf(module_why, sizeof(module_why), "DDL_CUDA_MODULE=%s does not load: %s", path, dlerror());
        else
            (void)dlerror();
        return 0;
    }
    const ddl_gpu_module_t *m = dlsym(h, DDL_GPU_MODULE_SYMBOL);
    if (!m)
        snprintf(module_why, sizeof(module_why), "%s is not a DDL lanes CUDA module (no %s)", path,
                 DDL_GPU_MODULE_SYMBOL);
    else if (strcmp(m->version, DDL_VERSION_STRING) != 0 || m->comm_bytes != sizeof(ddl_comm_t) ||
             m->call_bytes != sizeof(ddl_call_t))
        snprintf(module_why, sizeof(module_why), "%s is the CUDA module of another build (version %s, this libddl "
                 "%s): install the module of this libddl's version", path, m->version, DDL_VERSION_STRING);
    else {
        module = m;
        snprintf(module_path, sizeof(module_path), "%s", path);
        return 1; /* never closed: its kernels and streams live as long as the process */
    }
    dlclose(h);
    return 0;
}

static void load_module(void)
{
    snprintf(module_why, sizeof(module_why), "no %s found beside libddl", DDL_GPU_MODULE_FILE);
    const char *named = getenv("DDL_CUDA_MODULE");
    if (named && *named) {
        if (strcmp(named, "none") == 0)
            snprintf(module_why, sizeof(module_why), "DDL_CUDA_MODULE=none");
        else
            try_module(named, 1);
        return;
    }
    Dl_info self;
    if (!dladdr((void *)load_module, &self) || !self.dli_fname)
        return;
    char dir[PATH_MAX], path[PATH_MAX + 64];
    snprintf(dir, sizeof(dir), "%s", self.dli_fname);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';
    snprintf(module_why, sizeof(module_why), "no %s in %s/%s", DDL_GPU_MODULE_FILE, dir, PACKAGE);
    snprintf(path, sizeof(path), "%s/%s/%s", dir, PACKAGE, DDL_GPU_MODULE_FILE);
    if (try_module(path, 0))
        return;
    snprintf(path, sizeof(path), "%s/%s", dir, DDL_GPU_MODULE_FILE);
    try_module(path, 0);
}

const ddl_gpu_module_t *ddl_gpu_loaded(void)
{
    pthread_once(&module_once, load_module);
    return module;
}

int ddl_gpu_module_status(char *text, size_t len)
{
    if (ddl_gpu_loaded())
        snprintf(text, len, "%s, %s", module_path, module->kind);
    else
        snprintf(text, len, "%s", module_why);
    return module != NULL;
}

/* ---- without the module ------------------------------------------------------- */

/* The driver's cuPointerGetAttribute, where the process has loaded a CUDA
 * driver (an application that allocates device memory has): without the
 * module, a device pointer is still told apart from host memory, and refused
 * by name instead of read on the host.  The driver's ABI: attribute 2 is
 * CU_POINTER_ATTRIBUTE_MEMORY_TYPE, memory type 2 CU_MEMORYTYPE_DEVICE. */
typedef int (*pointer_attribute_fn)(void *data, int attribute, unsigned long long ptr);
static pointer_attribute_fn pointer_attribute;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static void find_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD); /* only a driver already loaded */
    pointer_attribute = (pointer_attribute_fn)dlsym(h ? h : RTLD_DEFAULT, "cuPointerGetAttribute");
    (void)dlerror();
}

static int driver_says_device(const void *p)
{
    pthread_once(&driver_once, find_driver);
    unsigned int type = 0;
    return p && pointer_attribute && pointer_attribute(&type, 2, (unsigned long long)(uintptr_t)p) == 0 && type == 2;
}

static ddl_status_t no_module(const char *what)
{
    return ddl_error(DDL_ERR_NOT_SUPPORTED, "%s: this libddl has no CUDA module (%s); %s", what, module_why,
                     DDL_GPU_INSTALL_HINT);
}

/* ---- the interface -------------------------------------------------------------- */

int ddl_gpu_devices(char *why, size_t len)
{
    if (ddl_gpu_loaded())
        return module->devices(why, len);
    snprintf(why, len, "no CUDA module: %s", module_why);
    return 0;
}

int ddl_gpu_nccl_available(char *why, size_t len)
{
    if (ddl_gpu_loaded())
        return module->nccl_available(why, len);
    snprintf(why, len, "no CUDA module");
    return 0;
}

int ddl_gpu_is_device(const void *p)
{
    return ddl_gpu_loaded() ? module->is_device(p) : driver_says_device(p);
}

ddl_status_t ddl_gpu_alloc_zeroed(int device, size_t bytes, void **p)
{
    *p = NULL;
    return ddl_gpu_loaded() ? module->alloc_zeroed(device, bytes, p) : no_module("device memory");
}

ddl_status_t ddl_gpu_export(const void *p, ddl_gpu_ref_t *ref, char *pci_bus_id, size_t len)
{
    if (ddl_gpu_loaded())
        return module->export_buffer(p, ref, pci_bus_id, len);
    char what[64];
    snprintf(what, sizeof(what), "device buffer %p", p);
    return no_module(what);
}

ddl_status_t ddl_gpu_memcpy(void *dst, const void *src, size_t bytes, double timeout)
{
    if (ddl_gpu_loaded())
        return module->memcpy(dst, src, bytes, timeout);
    if (driver_says_device(dst) || driver_says_device(src))
        return no_module("copying a device buffer");
    memcpy(dst, src, bytes);
    return DDL_OK;
}

ddl_status_t ddl_gpu_wait_queued(void *stream, double timeout)
{
    return ddl_gpu_loaded() ? module->wait_queued(stream, timeout) : DDL_OK; /* no device work without it */
}

ddl_status_t ddl_gpu_record(void *stream, void **event)
{
    *event = NULL;
    return ddl_gpu_loaded() ? module->record(stream, event) : DDL_OK;
}

ddl_status_t ddl_gpu_wait_recorded(void *event, double timeout)
{
    return event && ddl_gpu_loaded() ? module->wait_recorded(event, timeout) : DDL_OK;
}

void ddl_gpu_event_free(void *event)
{
    if (event && ddl_gpu_loaded())
        module->event_free(event);
}

ddl_status_t ddl_gpu_host_word(uint32_t **word, uint32_t value)
{
    *word = NULL;
    return ddl_gpu_loaded() ? module->host_word(word, value) : no_module("ddl_wait_stream (use ddl_wait)");
}

ddl_status_t ddl_gpu_stream_wait_word(void *stream, uint32_t *word, uint32_t value)
{
    return ddl_gpu_loaded() ? module->stream_wait_word(stream, word, value) : no_module("ddl_wait_stream");
}

ddl_status_t ddl_gpu_allreduce(ddl_comm_t *c, ddl_call_t *call, const void *own_send, void *own_recv)
{
    return ddl_gpu_loaded() ? module->allreduce(c, call, own_send, own_recv) : no_module("ddl_allreduce");
}

void ddl_gpu_comm_release(ddl_comm_t *c)
{
    if (c->gpu && module)
        module->comm_release(c);
}

static int mpi_cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support();
#else
    return 0;
#endif
}

/* Collective, on every rank whether its module loads or not: one rank
 * without the module must not leave the others waiting here. */
ddl_status_t ddl_gpu_comm_setup(ddl_comm_t *c)
{
    char why_nccl[256] = "no CUDA device", why_dev[256] = "";
    int devices = ddl_gpu_devices(why_dev, sizeof(why_dev));
    int mine[3] = {ddl_gpu_loaded() != NULL, mpi_cuda_aware(),
                   devices > 0 && ddl_gpu_nccl_available(why_nccl, sizeof(why_nccl))},
        all[3];
    if (MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, c->world) != MPI_SUCCESS)
        return ddl_error(DDL_ERR_MPI, "MPI_Allreduce of the ranks' device transports failed");
    int want = c->set.gpu_transport;
    if ((want == DDL_GPU_MPI || want == DDL_GPU_NCCL) && !all[0])
        return ddl_error(DDL_ERR_NOT_SUPPORTED, "DDL_GPU_TRANSPORT=%s needs the CUDA module on every rank%s%s; %s, "
                         "or use auto or staged", ddl_gpu_transport_names[want], mine[0] ? "" : ": this rank: ",
                         mine[0] ? "" : module_why, DDL_GPU_INSTALL_HINT);
    if (want == DDL_GPU_MPI && !all[1])
        return ddl_error(DDL_ERR_NOT_SUPPORTED, "DDL_GPU_TRANSPORT=mpi needs a CUDA-aware MPI on every rank%s; use "
                         "auto or staged", mine[1] ? "" : " (this rank's MPI is not)");
    if (want == DDL_GPU_NCCL && !all[2])
        return ddl_error(DDL_ERR_NOT_SUPPORTED, "DDL_GPU_TRANSPORT=nccl needs NCCL and a GPU on every rank%s%s; use "
                         "auto or staged", mine[2] ? "" : ": this rank: ", mine[2] ? "" : why_nccl);
    if (want == DDL_GPU_AUTO)
        c->set.gpu_transport = all[2] ? DDL_GPU_NCCL : all[1] ? DDL_GPU_MPI : DDL_GPU_STAGED;
    if (c->info.rank == 0 && all[0])
        DDL_INFO(DDL_SUBSYS_INIT, "device buffers go between nodes by %s%s%s%s",
                 ddl_gpu_transport_names[c->set.gpu_transport], devices ? "" : " (rank 0: ", devices ? "" : why_dev,
                 devices ? "" : ")");
    return DDL_OK;
}
