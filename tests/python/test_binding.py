#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The Python binding under mpirun (every rank calls, collective mode): every
type NumPy and torch share with the runtime, in place and out of place, against
a reference computed here from all ranks' inputs; errors as exceptions."""
import os
import sys

import numpy as np
import torch

# The source tree's package, unless the test is of an installed one (run-python-install.sh).
if os.environ.get("DDL_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import ddl  # noqa: E402

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL rank {comm.rank}: {what}", flush=True)


def inputs(n, owner, dtype):
    """Owner o's input: small integers, exact in every type, so sums are exact."""
    return (np.arange(n) * (owner + 1) % 7 - 3).astype(dtype)


comm = ddl.Comm()
owners = comm.owner_size if comm.is_owner else comm.gpus_per_node * comm.nnodes
me = comm.owner_rank if comm.is_owner else 0
for dtype in ["float32", "float64", "float16", "int8", "uint8", "int32", "uint32", "int64", "uint64"]:
    for op in ["sum", "max", "min", "avg"]:
        for n in [0, 1, 13, 70001]:
            stack = np.stack([inputs(n, o, dtype) for o in range(owners)])
            integer = np.dtype(dtype).kind in "iu"
            # The reference, serially: integers wrap in their type, floats in double.
            total = stack.sum(0, dtype=dtype if integer else np.float64)
            if op == "sum":
                ref = total
            elif op == "max":
                ref = stack.max(0)
            elif op == "min":
                ref = stack.min(0)
            else:
                ref = np.floor_divide(total, owners).astype(dtype) if integer else total / owners
            all_in = list(stack)
            buf = all_in[me].copy()
            out = np.full_like(buf, 0x55)
            res = comm.allreduce(buf, op=op, out=out)
            got_in = comm.allreduce(buf, op=op)
            if not comm.is_owner:
                continue
            check(res is out, "out= is returned")
            exact = np.array_equal(out, np.asarray(ref).astype(dtype)) if integer else \
                np.allclose(out.astype(np.float64), ref, atol=1e-3)
            check(exact, f"numpy {dtype} {op} n={n} out-of-place")
            check(np.array_equal(out, got_in), f"numpy {dtype} {op} n={n}: in-place differs from out-of-place")

for dtype in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64]:
    t = torch.arange(1000, dtype=torch.float64).to(dtype) * 0 + (me + 1)
    comm.allreduce(t, op="sum")
    if comm.is_owner:
        check(bool((t.double() == owners * (owners + 1) / 2).all()), f"torch {dtype} sum")

# choice(): a size class never called (1 KiB to 2 KiB - 1: the sizes above
# are outside it) is still to be explored; calls settle it, after the same
# call on every rank (the loop ends together).
small = np.ones(300, dtype=np.float32)
name, settled = comm.choice(small.nbytes)
check((name, settled) == ("exploring", False), f"choice of a size never called: {name!r}, {settled}")
for calls in range(500):
    name, settled = comm.choice(small.nbytes)
    if settled:
        break
    comm.allreduce(small)
check(settled and name not in ("", "exploring") and calls > 0, f"choice after {calls} calls: {name!r}, {settled}")
# The reduce-scatter has classes of its own: the allreduce's settled size is
# still to be explored for it, and an unknown collective is refused.
name, settled = comm.choice(small.nbytes, "reduce_scatter")
check((name, settled) == ("exploring", False), f"reduce_scatter's choice of a size it never called: {name!r}")
try:
    comm.choice(small.nbytes, "alltoall")
    check(False, "choice of an unknown collective raised nothing")
except ddl.DDLError as e:
    check("none of allreduce, reduce_scatter and allgather" in str(e), f"unknown collective: {e}")

# Nonblocking: several requests in flight, waited for out of order, against
# the same reference; the result buffers poisoned first.
n = 70001
reqs = []
for k, (dtype, op) in enumerate([("float32", "sum"), ("int32", "max"), ("float64", "avg"), ("int64", "sum"),
                                 ("float32", "min"), ("uint8", "sum")]):
    stack = np.stack([inputs(n, o, dtype) * (k + 1) for o in range(owners)]).astype(dtype)
    integer = np.dtype(dtype).kind in "iu"
    total = stack.sum(0, dtype=dtype if integer else np.float64)
    ref = {"sum": total, "max": stack.max(0), "min": stack.min(0), "avg": total / owners}[op]
    buf = stack[me].copy()
    out = np.full_like(buf, 0x55)
    reqs.append((comm.allreduce_async(buf, op=op, out=out), out, ref, dtype, op, integer))
for req, out, ref, dtype, op, integer in reversed(reqs):
    res = req.wait()
    if comm.is_owner:
        check(res is out and req.is_completed(), f"async {dtype} {op}: wait returns out, is_completed after")
        good = np.array_equal(out, np.asarray(ref).astype(dtype)) if integer else \
            np.allclose(out.astype(np.float64), ref, atol=1e-3)
        check(good, f"async {dtype} {op} n={n}")
t = torch.full((100003,), float(me + 1))
r = comm.allreduce_async(t, op="sum")
while not r.is_completed():
    pass
check(not comm.is_owner or bool((t == owners * (owners + 1) / 2).all()), "async torch tensor polled with is_completed")

# The DDP hook refuses a ddl communicator whose owners are not torch.distributed's
# processes (what a launch without lanes gives), naming both numbers.
if comm.is_owner:
    import torch.distributed as dist
    import ddl.torch_hook

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        ddl.torch_hook._check_world(comm)
        check(owners == 1, "a 1-process torch world accepted with more owners")
    except RuntimeError as e:
        check(f"{owners} owner(s)" in str(e) and "1 process(es)" in str(e), f"world check: {e}")
    dist.destroy_process_group()

# Errors: Python exceptions with the runtime's or the binding's message.
try:
    comm.allreduce(np.zeros(4, dtype=np.complex64))
    check(False, "complex accepted")
except TypeError as e:
    check("not supported" in str(e), f"complex: {e}")
try:
    comm.allreduce(np.zeros((4, 4), dtype=np.float32)[:, 1])
    check(False, "non-contiguous accepted")
except ValueError as e:
    check("contiguous" in str(e), f"non-contiguous: {e}")
try:
    comm.allreduce(np.zeros(4, dtype=np.float32), op="median")
    check(False, "op median accepted")
except ValueError as e:
    check("median" in str(e), f"bad op: {e}")
# Big-endian data would be reduced as native garbage: refused before any rank calls.
try:
    comm.allreduce(np.ones(4, dtype=">f4"))
    check(False, "big-endian array accepted")
except TypeError as e:
    check("byte order" in str(e), f"big-endian: {e}")
# out overlapping buf (but not the same memory) would read what it already wrote.
base = np.zeros(16, dtype=np.float32)
try:
    comm.allreduce(base[0:8], out=base[4:12])
    check(False, "overlapping out accepted")
except ValueError as e:
    check("overlaps" in str(e), f"overlap: {e}")
handle = comm._handle
comm.destroy()
comm._handle = handle  # the destroyed communicator, as a careless caller would keep it
try:
    comm.allreduce(np.zeros(4, dtype=np.float32))
    check(False, "a destroyed communicator accepted")
except ddl.DDLError as e:
    check(e.status == -1 and "not a live communicator" in str(e), f"runtime error: {e}")
comm._handle = None
ddl.finalize()
print(f"binding rank {comm.rank}: {passed} passed, {failed} failed", flush=True)
sys.exit(1 if failed else 0)
