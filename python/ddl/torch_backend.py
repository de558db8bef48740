# SPDX-License-Identifier: Apache-2.0
"""The "ddl" torch.distributed backend: a process group whose allreduce,
reduce-scatter and allgather run on DDL lanes, for any script that names its
backend (init_process_group, Lightning, Accelerate, DDP without a hook, FSDP,
ZeRO):

    import torch, ddl                       # ddl registers "ddl" (or: import ddl.torch_backend)
    torch.distributed.init_process_group("ddl")
    ddp = DistributedDataParallel(model)    # no hook: the group's allreduce is the lanes'

Under `srun --ddl-lanes=N` the owners (one process per GPU) are
torch.distributed's ranks and the helpers run ddl-helper, as for the hook
(ddl.torch_hook); the group's rank must be the owner's rank.

What runs where:
- all_reduce (SUM, AVG, PRODUCT, MIN, MAX), reduce_scatter and
  reduce_scatter_tensor (_reduce_scatter_base), all_gather and
  all_gather_into_tensor (_allgather_base): the lanes, as requests queued in
  the order of the calls; a completion thread finishes torch's future for
  each, so async_op=True and DDP's overlap work.  CPU tensors of the types
  libddl has, on the CPU or a GPU (all_reduce takes the lanes' device
  path; the others stage device tensors through host memory).
- Everything else (broadcast, barrier, all_to_all, send/recv, gather,
  scatter, reduce, the bitwise ops): a gloo group over the same ranks and
  store, made with this one.
A type libddl lacks raises TypeError on every rank; a call whose sizes do not
fit (an output that is not world x the input) raises ValueError on that rank
and a DDLError (DDL_ERR_MISMATCH) on the others; a failed collective raises
ddl.DDLError (a RuntimeError) with the library's message from the work's
wait().
"""
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import Work, _create_work_from_future

import ddl
from ddl.torch_hook import _completer

# torch's reduction -> libddl's op name; the rest go to gloo.
_OPS = {"SUM": "sum", "AVG": "avg", "PRODUCT": "prod", "MIN": "min", "MAX": "max"}
# torch types libddl has (ddl.DTYPES by name).
_TYPES = {getattr(torch, name) for name in ddl.DTYPES if hasattr(torch, name)}


_comms = []  # the groups' communicators


def _owner_comm():
    """The program's ddl communicator where it has one (the hook's, say, or an
    earlier group's): a second one would wait for helpers that serve the
    first; else a new one."""
    for ref in reversed(ddl._open_comms):
        comm = ref()
        if comm is not None and comm._handle is not None:
            return comm
    return ddl.Comm()


def _op_name(op):
    for name, ours in _OPS.items():
        if op == getattr(dist.ReduceOp, name):
            return ours
    return None


def _check_type(what, t):
    if t.dtype not in _TYPES:
        raise TypeError(f"ddl backend: {what} of {t.dtype}: libddl has no such type (it has "
                        f"{', '.join(sorted(str(x).replace('torch.', '') for x in _TYPES))})")


class _Work(Work):
    """The Work torch.distributed's Python functions get: its wait() raises
    the collective's error.  torch 1.13's own future-wrapping Work returns
    from wait() without a word when its future failed, and torch's
    synchronous calls only wait(): a mismatch would pass unseen there.  Its
    methods are Python's only (1.13 has no trampoline for them), so the
    group's C++ callers (DDP's reducer, its parameter check) get torch's own
    Work, whose future (which DDP reads) does raise."""

    def __init__(self, fut, request_fut):
        super().__init__()
        self._fut = fut
        self._request_fut = request_fut

    def wait(self, timeout=None):
        # The request's own future first: it raises the library's DDLError as
        # it is, where the chained one wraps it in a RuntimeError ("Got the
        # following error when running the callback: ...").
        self._request_fut.wait()
        self._fut.wait()
        return True

    def is_completed(self):
        return self._fut.done()

    def is_success(self):
        if not self._fut.done():
            return False
        try:
            self._fut.value()
            return True
        except Exception:
            return False

    def get_future(self):
        return self._fut

    def result(self):
        return self._fut.value()


_C10D = os.path.join("torch", "distributed", "distributed_c10d.py")


def _python_caller():
    """Does torch.distributed's Python API call the group (not its C++ side)?"""
    f = sys._getframe(1)
    while f is not None and f.f_globals.get("__name__") == __name__:
        f = f.f_back
    return f is not None and f.f_code.co_filename.endswith(_C10D)


class ProcessGroupDDL(dist.ProcessGroup):
    """torch.distributed's process group on a ddl communicator (ddl.Comm)."""

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self.comm = _owner_comm()
        if not self.comm.is_owner:
            raise RuntimeError(f"ddl backend: rank {self.comm.rank} is a helper (lane {self.comm.lane}); helpers "
                               f"run ddl-helper (the plugin's default, helpers=daemon) or serve: call "
                               f"ddl.Comm(helpers='serve').serve() on them instead of init_process_group")
        if (self.comm.owner_rank, self.comm.owner_size) != (rank, size):
            raise RuntimeError(f"ddl backend: torch.distributed says rank {rank} of {size}, but this process is "
                               f"owner {self.comm.owner_rank} of {self.comm.owner_size} of the ddl communicator; "
                               f"start the job with srun --ddl-lanes=N (the plugin sets RANK and WORLD_SIZE for "
                               f"the owners), or launch one owner per torch rank")
        self._gloo = dist.ProcessGroupGloo(dist.PrefixStore("ddl-backend/gloo/", store), rank, size, timeout)
        self._completer = _completer(self.comm)  # the communicator's one completion thread (the hook's too)
        # Kept until exit, when ddl.finalize destroys it on every owner at
        # once (its helpers serve until then): a group that
        # destroy_process_group drops is freed at no common point.
        _comms.append(self.comm)

    def getBackendName(self):
        return "ddl"

    def _start(self, request, then):
        """The Work of a lanes request: its future completes on the completion
        thread, then `then` makes torch's result of it (a failure passes on:
        value() raises it into the chained future)."""
        fut = torch.futures.Future()
        self._completer.add(request, fut)
        result = fut.then(lambda f: (f.value(), then(f))[1])
        return _Work(result, fut) if _python_caller() else _create_work_from_future(result)

    # -- on the lanes -------------------------------------------------------

    def allreduce(self, tensors, opts=None):
        op = _op_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        if op is None:
            return self._gloo.allreduce(tensors, opts)
        if len(tensors) != 1:
            raise ValueError(f"ddl backend: allreduce of {len(tensors)} tensors; one per process")
        t = tensors[0]
        _check_type("allreduce", t)
        if t.is_contiguous():
            return self._start(self.comm.allreduce_async(t, op=op), lambda f: [t])
        flat = t.contiguous()
        return self._start(self.comm.allreduce_async(flat, op=op), lambda f: [t.copy_(flat)])

    def _reduce_scatter_base(self, output, input, opts=None):
        op = _op_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        if op is None:
            raise ValueError("ddl backend: reduce_scatter with a bitwise op; use SUM, AVG, PRODUCT, MIN or MAX")
        _check_type("reduce_scatter", input)
        out = output if output.is_contiguous() else output.contiguous()
        request = self.comm.reduce_scatter_async(input.contiguous(), out, op=op)
        return self._start(request, lambda f: [output.copy_(out) if out is not output else output])

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        if len(output_tensors) != 1 or len(input_tensors) != 1:
            raise ValueError("ddl backend: reduce_scatter of several tensors per process; one per process")
        inputs = input_tensors[0]
        if len(inputs) != self.size() or any(x.shape != output_tensors[0].shape for x in inputs):
            raise ValueError(f"ddl backend: reduce_scatter needs {self.size()} inputs shaped as the output")
        return self._reduce_scatter_base(output_tensors[0], torch.cat([x.reshape(-1) for x in inputs]), opts)

    def _allgather_base(self, output, input, opts=None):
        _check_type("allgather", input)
        out = output if output.is_contiguous() else output.contiguous()
        request = self.comm.allgather_async(input.contiguous(), out)
        return self._start(request, lambda f: [output.copy_(out) if out is not output else output])

    def allgather(self, output_tensors, input_tensors, opts=None):
        if len(output_tensors) != 1 or len(input_tensors) != 1:
            raise ValueError("ddl backend: allgather of several tensors per process; one per process")
        outputs, t = output_tensors[0], input_tensors[0]
        if len(outputs) != self.size() or any(x.numel() != t.numel() for x in outputs):
            # Uneven sizes: gloo's own refusal says what it needs.
            return self._gloo.allgather(output_tensors, input_tensors)
        _check_type("allgather", t)
        flat = torch.empty(self.size() * t.numel(), dtype=t.dtype)

        def scatter_out(f):
            for j, x in enumerate(outputs):
                x.copy_(flat[j * t.numel():(j + 1) * t.numel()].view_as(x))
            return outputs

        return self._start(self.comm.allgather_async(t.contiguous().reshape(-1), flat), scatter_out)

    # -- through gloo -------------------------------------------------------

    def allreduce_coalesced(self, tensors, opts=None):
        return self._gloo.allreduce_coalesced(tensors, opts)

    def broadcast(self, tensors, opts=None):
        return self._gloo.broadcast(tensors, opts)

    def barrier(self, opts=None):
        return self._gloo.barrier(opts) if opts is not None else self._gloo.barrier()

    def reduce(self, tensors, opts=None):
        return self._gloo.reduce(tensors, opts)

    def gather(self, output_tensors, input_tensors, opts=None):
        return self._gloo.gather(output_tensors, input_tensors, opts)

    def scatter(self, output_tensors, input_tensors, opts=None):
        return self._gloo.scatter(output_tensors, input_tensors, opts)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        return self._gloo.alltoall(output_tensors, input_tensors, opts)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        return self._gloo.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

    def send(self, tensors, dst, tag):
        return self._gloo.send(tensors, dst, tag)

    def recv(self, tensors, src, tag):
        return self._gloo.recv(tensors, src, tag)

    def recv_anysource(self, tensors, tag):
        return self._gloo.recv_anysource(tensors, tag)


def _create(store, rank, size, timeout=timedelta(minutes=30)):
    return ProcessGroupDDL(store, rank, size, timeout)


def register():
    """Make "ddl" a backend name for init_process_group and new_group (once)."""
    if not hasattr(dist.Backend, "DDL"):
        dist.Backend.register_backend("ddl", _create)


register()
