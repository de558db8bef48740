# SPDX-License-Identifier: Apache-2.0
"""DDL lanes for Python: the communicator, allreduce, reduce-scatter and
allgather on NumPy arrays and PyTorch tensors (contiguous CPU buffers; CUDA
tensors for the allreduce), over libddl with ctypes.  With torch imported
first, `import ddl` also registers the "ddl" torch.distributed backend
(ddl.torch_backend).

    import ddl
    with ddl.Comm() as comm:            # layout from DDL_LANES etc. (the Slurm plugin sets them)
        comm.allreduce(array, op="avg")  # in place; out=... for out-of-place
        req = comm.allreduce_async(array)  # returns at once; the lanes carry it
        ...                                # compute meanwhile
        req.wait()                         # the result is in array

Errors from the runtime raise ddl.DDLError carrying its message.

A program may simply end: at interpreter exit (as mpi4py does) the
communicators still open are destroyed, newest first, and MPI is finalised if
ddl initialised it (ddl.finalize(), which a program may also call itself).

The library: DDL_LIBRARY when set (and only it: a path that does not load is
an error), else the first of these that loads: the libddl that `make install`
recorded beside this package, the build tree this package sits in, the one
ldconfig knows (ctypes.util.find_library), and libddl.so.0 as the dynamic
loader finds it (LD_LIBRARY_PATH, then the system's directories).
"""
import atexit
import ctypes
import ctypes.util
import os
import weakref

__all__ = ["Comm", "DDLError", "Request", "finalize", "library_version", "DTYPES", "OPS"]

# The release this package belongs to: libddl's ddl_version() of the same release.
__version__ = "0.1.0"

OPS = {"sum": 0, "prod": 1, "min": 2, "max": 3, "avg": 4}
# ddl_dtype_t codes by type name (NumPy's names; torch's map onto them).
DTYPES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 3, "int8": 4, "uint8": 5,
          "int32": 6, "uint32": 7, "int64": 8, "uint64": 9}
_HELPER_MODES = {"collective": 0, "serve": 1}


class DDLError(RuntimeError):
    """A ddl_status_t other than DDL_OK, with the runtime's message."""

    def __init__(self, status, name, message):
        super().__init__(f"{name}: {message}" if message else name)
        self.status = status


class _Config(ctypes.Structure):
    _fields_ = [("lanes", ctypes.c_int), ("gpus_per_node", ctypes.c_int),
                ("node_size", ctypes.c_int), ("helper_mode", ctypes.c_int)]


class _Phase(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("seconds", ctypes.c_double), ("calls", ctypes.c_ulonglong)]


class _Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int) for name in (
        "rank", "size", "node", "nnodes", "local_rank", "local_size", "gpu", "gpus_per_node",
        "lane", "lanes", "role", "owner_rank", "owner_size")]


def _candidates():
    """The libraries to try, in order, and whether the first one was asked for by name."""
    env = os.environ.get("DDL_LIBRARY")
    if env:
        return [env], True
    paths = []
    try:
        from . import _installed  # written by make install

        paths.append(_installed.LIBRARY)
    except ImportError:
        pass
    build_tree = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".libs", "libddl.so")
    if os.path.exists(build_tree):
        paths.append(build_tree)
    found = ctypes.util.find_library("ddl")
    paths += [found] if found else []
    return paths + ["libddl.so.0"], False


_lib = None


def _load():
    global _lib
    if _lib is not None:
        return _lib
    # Open MPI loads its components with dlopen: its symbols must be global.
    mpi = ctypes.util.find_library("mpi")
    if mpi:
        ctypes.CDLL(mpi, mode=ctypes.RTLD_GLOBAL)
    errors = []
    paths, explicit = _candidates()
    for path in paths:
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    else:
        if explicit:
            raise ImportError(f"ddl: DDL_LIBRARY={paths[0]} does not load ({errors[0]}); point it at a libddl.so, "
                              f"or unset it to use the installed library")
        raise ImportError("ddl: cannot load libddl (install DDL lanes, or set DDL_LIBRARY to its path): " +
                          "; ".join(errors))
    vp, i, ci = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64
    for name, args in {
        "ddl_init_mpi": [], "ddl_finalize_mpi": [],
        "ddl_config_init": [ctypes.POINTER(_Config)],
        "ddl_comm_create_world": [ctypes.POINTER(_Config), ctypes.POINTER(vp)],
        "ddl_comm_destroy": [vp], "ddl_comm_info": [vp, ctypes.POINTER(_Info)],
        "ddl_allreduce": [vp, vp, ci, i, i, vp], "ddl_serve": [vp],
        "ddl_allreduce_stream": [vp, vp, ci, i, i, i, vp, vp],
        "ddl_iallreduce_stream": [vp, vp, ci, i, i, i, vp, vp, ctypes.POINTER(vp)],
        "ddl_test": [vp, ctypes.POINTER(i)], "ddl_wait": [vp], "ddl_request_free": [vp],
        "ddl_reduce_scatter": [vp, vp, ci, i, i, vp],
        "ddl_ireduce_scatter": [vp, vp, ci, i, i, vp, ctypes.POINTER(vp)],
        "ddl_allgather": [vp, vp, ci, i, vp], "ddl_iallgather": [vp, vp, ci, i, vp, ctypes.POINTER(vp)],
        "ddl_reduce_scatter_stream": [vp, vp, ci, i, i, i, vp, vp],
        "ddl_ireduce_scatter_stream": [vp, vp, ci, i, i, i, vp, vp, ctypes.POINTER(vp)],
        "ddl_allgather_stream": [vp, vp, ci, i, i, vp, vp],
        "ddl_iallgather_stream": [vp, vp, ci, i, i, vp, vp, ctypes.POINTER(vp)],
    }.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = i
    lib.ddl_status_string.argtypes = [i]
    lib.ddl_status_string.restype = ctypes.c_char_p
    lib.ddl_last_error.argtypes = []
    lib.ddl_last_error.restype = ctypes.c_char_p
    lib.ddl_version.argtypes = []
    lib.ddl_version.restype = ctypes.c_char_p
    _lib = lib
    return lib


def library_version():
    """The version of the libddl this package loaded (ddl_version())."""
    return _load().ddl_version().decode()


def _check(status):
    if status != 0:
        lib = _load()
        raise DDLError(status, lib.ddl_status_string(status).decode(), lib.ddl_last_error().decode())


_MEM_HOST, _MEM_DEVICE = 1, 2  # ddl_memory_t


def _buffer(obj):
    """(address, element count, ddl dtype code, memory kind) of a contiguous array or tensor."""
    mem = _MEM_HOST
    if hasattr(obj, "data_ptr"):  # a torch.Tensor
        if obj.device.type == "cuda":
            mem = _MEM_DEVICE  # needs the CUDA module (ddl-info says)
        elif obj.device.type != "cpu":
            raise ValueError(f"ddl: tensor on {obj.device}: only CPU and CUDA tensors are supported")
        if not obj.is_contiguous():
            raise ValueError("ddl: the tensor is not contiguous; call .contiguous() first")
        name = str(obj.dtype).replace("torch.", "")
        ptr, count = obj.data_ptr(), obj.numel()
    elif hasattr(obj, "__array_interface__"):  # a NumPy array
        if not obj.flags["C_CONTIGUOUS"]:
            raise ValueError("ddl: the array is not C-contiguous; use numpy.ascontiguousarray")
        if not obj.flags["WRITEABLE"]:
            raise ValueError("ddl: the array is read-only")
        if not obj.dtype.isnative:
            raise TypeError(f"ddl: the array's byte order ({obj.dtype.str}) is not this machine's; "
                            "convert it first, e.g. arr.astype(arr.dtype.newbyteorder('='))")
        name = obj.dtype.name
        ptr, count = obj.__array_interface__["data"][0], obj.size
    else:
        raise TypeError(f"ddl: {type(obj).__name__} is neither a NumPy array nor a torch tensor")
    if name not in DTYPES:
        raise TypeError(f"ddl: type {name} is not supported (supported: {', '.join(DTYPES)})")
    return ptr, count, DTYPES[name], mem


def _stream_of(buf, mem):
    """The stream a call on buf is ordered after: a device tensor's current
    stream (its work queued there comes first); None otherwise."""
    if mem != _MEM_DEVICE:
        return ctypes.c_void_p(None)
    import torch

    return ctypes.c_void_p(torch.cuda.current_stream(buf.device).cuda_stream)


def _itemsize(obj):
    return obj.element_size() if hasattr(obj, "element_size") else obj.dtype.itemsize


# The communicators not yet destroyed, oldest first (weak: one the program
# drops is not kept alive by this list).
_open_comms = []


class Comm:
    """A ddl communicator over all MPI ranks (MPI is initialised if needed).

    Layout and helper mode come from the environment (DDL_LANES, DDL_GPUS_PER_NODE,
    DDL_NODE_SIZE, DDL_HELPERS; the Slurm plugin sets them); keyword arguments
    override them.  Collective: every rank creates it."""

    def __init__(self, lanes=None, gpus_per_node=None, node_size=None, helpers=None):
        lib = _load()
        cfg = _Config()
        _check(lib.ddl_config_init(ctypes.byref(cfg)))
        if lanes is not None:
            cfg.lanes = lanes
        if gpus_per_node is not None:
            cfg.gpus_per_node = gpus_per_node
        if node_size is not None:
            cfg.node_size = node_size
        if helpers is not None:
            if helpers not in _HELPER_MODES:
                raise ValueError(f"ddl: helpers={helpers!r}: use 'collective' or 'serve'")
            cfg.helper_mode = _HELPER_MODES[helpers]
        self.helpers = [k for k, v in _HELPER_MODES.items() if v == cfg.helper_mode][0]
        _check(lib.ddl_init_mpi())
        handle = ctypes.c_void_p()
        _check(lib.ddl_comm_create_world(ctypes.byref(cfg), ctypes.byref(handle)))
        self._handle = handle
        info = _Info()
        _check(lib.ddl_comm_info(handle, ctypes.byref(info)))
        for name, _ in _Info._fields_:
            setattr(self, name, getattr(info, name))
        self.is_owner = info.role == 0
        self._on_destroy = []  # e.g. the DDP hook's completion thread
        _open_comms.append(weakref.ref(self))

    def _call(self, buf, op, out):
        """The arguments of one allreduce: (send, recv, count, dtype, op, memory, stream, result object)."""
        if op not in OPS:
            raise ValueError(f"ddl: op {op!r} is not one of {', '.join(OPS)}")
        ptr, count, dtype, mem = _buffer(buf)
        target = buf
        if out is not None:
            optr, ocount, odtype, omem = _buffer(out)
            if (ocount, odtype, omem) != (count, dtype, mem):
                raise ValueError("ddl: out must have the size, type and device of buf")
            nbytes = count * _itemsize(buf)
            if optr != ptr and optr < ptr + nbytes and ptr < optr + nbytes:
                raise ValueError("ddl: out overlaps buf without being the same memory; pass out=None for an "
                                 "in-place allreduce, or a separate array")
            target = out
        else:
            optr = ptr
        return (ctypes.c_void_p(ptr), ctypes.c_void_p(optr), count, dtype, OPS[op], mem, _stream_of(buf, mem),
                target)

    def phases(self):
        """Where this rank's lane calls spent their time since the communicator
        began or reset_stats(): {phase: (seconds, calls)}, in the order of
        ddl_comm_phases ("copy in", "node barrier", "signatures", "reduce and
        exchange", ..., "queued", "start", "early")."""
        fn = _load().ddl_comm_phases
        fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Phase), ctypes.c_int]
        fn.restype = ctypes.c_int
        out = (_Phase * 32)()
        n = fn(self._handle, out, len(out))
        if n < 0:
            _check(n)
        return {out[i].name.decode(): (out[i].seconds, out[i].calls) for i in range(n)}

    def reset_stats(self):
        """Starts the traffic and phase counters again (ddl_comm_stats_reset)."""
        fn = _load().ddl_comm_stats_reset
        fn.argtypes = [ctypes.c_void_p]
        fn.restype = None
        fn(self._handle)

    def choice(self, nbytes, collective="allreduce"):
        """How a collective ("allreduce", "reduce_scatter" or "allgather") of
        nbytes bytes (its whole buffer) goes on this communicator, named as a
        tuning file names it ("mpi", "lane/ring chunk=64K", ...), and whether
        that is settled (False while online selection still times candidates
        for the size): (name, settled).  The same on every rank after the same
        calls (ddl_comm_collective_choice)."""
        # Bound here, not in _load: a libddl older than this call still loads
        # for everything else (DDL_LIBRARY may name any build).
        fn = _load().ddl_comm_collective_choice
        fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
        fn.restype = ctypes.c_int
        name = ctypes.create_string_buffer(64)
        rc = fn(self._handle, collective.encode(), nbytes, name, len(name))
        if rc < 0:
            _check(rc)
        return name.value.decode(), rc == 1

    def allreduce(self, buf, op="sum", out=None):
        """Allreduce buf into out (or in place).  Returns the result object."""
        *args, target = self._call(buf, op, out)
        _check(_load().ddl_allreduce_stream(*args, self._handle))
        return target

    def allreduce_async(self, buf, op="sum", out=None):
        """Start an allreduce of buf into out (or in place) and return at once.

        Returns a Request; its wait() gives the result object.  Requests
        complete in the order they were started.  The buffers must not be
        touched until the request is complete."""
        *args, target = self._call(buf, op, out)
        req = ctypes.c_void_p()
        _check(_load().ddl_iallreduce_stream(*args, self._handle, ctypes.byref(req)))
        return Request(req, target, (buf, out))

    def _blocks(self, name, send, recv, op):
        """The arguments of a reduce-scatter or allgather: (send, recv, count
        per block, dtype, op, memory, stream).

        Bad arguments raise ValueError or TypeError here, after this rank took
        its part in the call as one that refuses it (a NULL recvbuf: the
        library's refusal), so that every other rank fails the call with
        DDL_ERR_MISMATCH at once instead of waiting for this one."""
        if op not in OPS:
            raise ValueError(f"ddl: op {op!r} is not one of {', '.join(OPS)}")
        sptr, scount, sdtype, smem = _buffer(send)
        rptr, rcount, rdtype, rmem = _buffer(recv)
        # A collective-mode helper calls with its owner's shapes (its buffers are not used).
        p = self.owner_size if self.is_owner else self.gpus_per_node * self.nnodes
        gather = name == "allgather"
        count = scount if gather else rcount
        problem = None
        if (sdtype, smem) != (rdtype, rmem):
            problem = TypeError(f"ddl: {name}: the input and output differ in type or device")
        elif (rcount if gather else scount) != count * p:
            problem = ValueError(f"ddl: {name}: the {'output' if gather else 'input'} has "
                                 f"{rcount if gather else scount} elements; it must hold {count} x {p} (the "
                                 f"{'input' if gather else 'output'}'s elements x the owners)")
        if problem is not None:
            self._refuse(name, sdtype)
            raise problem
        return ctypes.c_void_p(sptr), ctypes.c_void_p(rptr), count, sdtype, OPS[op], smem, _stream_of(send, smem)

    def _refuse(self, name, dtype):
        """Take part in the call as a refusal (it fails on every rank)."""
        one = ctypes.c_int64(0)
        if name == "allgather":
            _load().ddl_allgather(ctypes.byref(one), None, 1, dtype, self._handle)
        else:
            _load().ddl_reduce_scatter(ctypes.byref(one), None, 1, dtype, 0, self._handle)

    def reduce_scatter(self, send, recv, op="sum"):
        """Reduce every owner's send (owner_size blocks) and keep block owner_rank in recv."""
        args = self._blocks("reduce_scatter", send, recv, op)
        _check(_load().ddl_reduce_scatter_stream(*args, self._handle))
        return recv

    def reduce_scatter_async(self, send, recv, op="sum"):
        """reduce_scatter as a Request (queued with the allreduces, in one order)."""
        args = self._blocks("reduce_scatter", send, recv, op)
        req = ctypes.c_void_p()
        _check(_load().ddl_ireduce_scatter_stream(*args, self._handle, ctypes.byref(req)))
        return Request(req, recv, (send, recv))

    def allgather(self, send, recv):
        """Every owner's send into recv (owner_size blocks, in owner order)."""
        s, r, count, dtype, _, mem, stream = self._blocks("allgather", send, recv, "sum")
        _check(_load().ddl_allgather_stream(s, r, count, dtype, mem, stream, self._handle))
        return recv

    def allgather_async(self, send, recv):
        """allgather as a Request."""
        s, r, count, dtype, _, mem, stream = self._blocks("allgather", send, recv, "sum")
        req = ctypes.c_void_p()
        _check(_load().ddl_iallgather_stream(s, r, count, dtype, mem, stream, self._handle, ctypes.byref(req)))
        return Request(req, recv, (send, recv))

    def serve(self):
        """Helpers in serve mode: take part in the owners' collectives until they destroy the communicator."""
        _check(_load().ddl_serve(self._handle))

    def destroy(self):
        for close in self._on_destroy:
            close()
        self._on_destroy = []
        if self._handle is not None:
            _open_comms[:] = [ref for ref in _open_comms if ref() not in (None, self)]
            _check(_load().ddl_comm_destroy(self._handle))
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
        return False


class Request:
    """An allreduce in flight (Comm.allreduce_async)."""

    def __init__(self, handle, result, keep):
        self._handle, self._result, self._keep = handle, result, keep
        self._status = None

    def is_completed(self):
        """True once the allreduce is done (it raises DDLError if it failed)."""
        if self._status is None:
            done = ctypes.c_int(0)
            status = _load().ddl_test(self._handle, ctypes.byref(done))
            if done.value:
                self._finish(status)
        return self._status is not None

    def wait(self):
        """Wait for the allreduce (the GIL is released meanwhile); returns the result object."""
        if self._status is None:
            self._finish(_load().ddl_wait(self._handle))
        return self._result

    def _finish(self, status):
        self._status = status
        self._keep = None
        _check(status)

    def __del__(self):
        # Dropped while in flight: wait for it first, because the buffers it
        # writes are kept alive only by this object.
        if getattr(self, "_handle", None) is not None and _lib is not None:
            if self._status is None:
                _lib.ddl_wait(self._handle)
            _lib.ddl_request_free(self._handle)
            self._handle = None


def finalize():
    """Destroy the communicators still open (newest first), then finalise MPI
    if ddl initialised it.  Called at interpreter exit; calling it again does
    nothing."""
    if _lib is None:  # ddl was never used: nothing to end
        return
    while _open_comms:
        comm = _open_comms.pop()()
        if comm is not None and comm._handle is not None:
            comm.destroy()
    _check(_lib.ddl_finalize_mpi())


atexit.register(finalize)

# The torch.distributed backend, where the program uses torch: registered now
# when torch is imported already (importing it here would cost every NumPy
# user a second), else by `import ddl.torch_backend`.
if "torch" in __import__("sys").modules:
    from . import torch_backend  # noqa: F401,E402  (registers "ddl")
