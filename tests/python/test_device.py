#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The binding's device branch (a CUDA tensor's pointer and its stream).  On a
GPU with a CUDA torch: real CUDA tensors on torch's current stream.  On a
libddl built with --enable-cuda-emulation: a tensor-like object over emulated
device memory stands in for a CUDA torch.Tensor (Debian's torch has no CUDA),
and torch.cuda.current_stream gives an emulated stream.  Comm.allreduce, out
of place and in place, and the DDP hook (allreduce_avg through its future),
against a reference computed here from every rank's inputs."""
import ctypes
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import ddl  # noqa: E402
import ddl.torch_hook  # noqa: E402

H2D, D2H = 1, 2  # cudaMemcpyKind
comm = ddl.Comm()
real = torch.cuda.is_available()
if real:
    torch.cuda.set_device((comm.node * comm.gpus_per_node + comm.gpu) % torch.cuda.device_count())
else:
    emu = ctypes.CDLL("libddl-cuda-emu.so")  # the emulator libddl is linked with, already loaded
    devices = ctypes.c_int()
    assert emu.cudaGetDeviceCount(ctypes.byref(devices)) == 0, "no emulated device"
    assert emu.cudaSetDevice((comm.node * comm.gpus_per_node + comm.gpu) % devices.value) == 0
    stream = ctypes.c_void_p()
    assert emu.cudaStreamCreate(ctypes.byref(stream)) == 0
    torch.cuda.current_stream = lambda device=None: types.SimpleNamespace(cuda_stream=stream.value)


class CudaTensor(torch.Tensor):
    """A real CUDA tensor with the two helpers the checks below use."""

    @staticmethod
    def of(values, dtype):
        host = torch.from_numpy(np.ascontiguousarray(values, dtype=dtype))
        # Still in flight on the current stream when the allreduce is posted: it must wait for it.
        return host.pin_memory().to("cuda", non_blocking=True).as_subclass(CudaTensor)

    def read(self):
        return torch.Tensor.cpu(self).numpy()

    def free(self):
        pass


class DeviceTensor:
    """What the binding reads of a contiguous CUDA tensor, over cudaMalloc'ed memory."""

    def __init__(self, values, dtype):
        self.host = np.ascontiguousarray(values, dtype=dtype)
        self.dtype = getattr(torch, self.host.dtype.name)
        self.device = types.SimpleNamespace(type="cuda", index=0)
        self.ptr = ctypes.c_void_p()
        assert emu.cudaMalloc(ctypes.byref(self.ptr), ctypes.c_size_t(max(self.host.nbytes, 1))) == 0
        # Still in flight on the stream when the allreduce is posted: it must wait for it.
        self._copy(self.ptr, self.host.ctypes.data, H2D, emu.cudaMemcpyAsync, stream)

    def _copy(self, dst, src, kind, fn, *extra):
        if self.host.nbytes:
            assert fn(dst, ctypes.c_void_p(src), ctypes.c_size_t(self.host.nbytes), kind, *extra) == 0

    def data_ptr(self):
        return self.ptr.value

    def numel(self):
        return self.host.size

    def element_size(self):
        return self.host.itemsize

    def is_contiguous(self):
        return True

    def read(self):
        out = np.empty_like(self.host)
        self._copy(ctypes.c_void_p(out.ctypes.data), self.ptr.value, D2H, emu.cudaMemcpy)
        return out

    def free(self):
        emu.cudaFree(self.ptr)


class Bucket:
    """The part of DDP's GradBucket the hook uses."""

    def __init__(self, tensor):
        self._tensor = tensor

    def buffer(self):
        return self._tensor


new_tensor = CudaTensor.of if real else DeviceTensor
passed = failed = 0


def check(cond, what):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if not cond:
        print(f"FAIL rank {comm.rank}: {what}", flush=True)


if not comm.is_owner and comm.helpers == "serve":
    comm.serve()  # until the owners destroy the communicator
    sys.exit(0)
owners = comm.owner_size if comm.is_owner else comm.gpus_per_node * comm.nnodes
me = comm.owner_rank if comm.is_owner else 0
for dtype in ["float32", "float16"]:
    for n in [1, 13, 70001]:
        stack = np.stack([(np.arange(n) * (o + 1) % 7 - 3).astype(dtype) for o in range(owners)])
        total = stack.sum(0, dtype=np.float64)
        for op, ref in [("sum", total), ("avg", total / owners)]:
            src, out = new_tensor(stack[me], dtype), new_tensor(np.full(n, 0x55), dtype)
            res = comm.allreduce(src, op=op, out=out)
            check(res is out, "out= is returned")
            got = out.read()
            check(np.allclose(got.astype(np.float64), ref, atol=1e-2) or not comm.is_owner,
                  f"device {dtype} {op} n={n} out of place")
            check(np.array_equal(src.read(), stack[me]) or not comm.is_owner, f"device {dtype} {op}: input changed")
            comm.allreduce(src, op=op)
            check(np.array_equal(src.read(), got) or not comm.is_owner, f"device {dtype} {op} n={n} in place")
            src.free()
            out.free()
        # Reduce-scatter and allgather: device tensors staged through the host.
        blocks = np.concatenate([stack[me] * (b + 1) for b in range(owners)])  # block b: scaled by b + 1
        src, out = new_tensor(blocks, dtype), new_tensor(np.full(n, 0x55), dtype)
        comm.reduce_scatter(src, out)
        check(np.allclose(out.read().astype(np.float64), total * (me + 1), atol=1e-2) or not comm.is_owner,
              f"device reduce_scatter {dtype} n={n}")
        src.free()
        out.free()
        src, out = new_tensor(stack[me], dtype), new_tensor(np.full(owners * n, 0x55), dtype)
        comm.allgather(src, out)
        check(np.array_equal(out.read(), stack.reshape(-1)) or not comm.is_owner, f"device allgather {dtype} n={n}")
        src.free()
        out.free()
        # The DDP hook: an average through the request and its future.
        grad = new_tensor(stack[me], dtype)
        fut = ddl.torch_hook.allreduce_avg(comm, Bucket(grad))
        check(fut.wait() is grad, "the hook's future gives the bucket")
        check(np.allclose(grad.read().astype(np.float64), total / owners, atol=1e-2) or not comm.is_owner,
              f"hook {dtype} n={n}")
        grad.free()
comm.destroy()
print(f"device binding rank {comm.rank}: {passed} passed, {failed} failed", flush=True)
sys.exit(1 if failed else 0)
