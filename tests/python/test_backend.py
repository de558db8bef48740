#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The "ddl" torch.distributed backend against gloo, in one job: every
collective a DDP, FSDP or ZeRO job calls, with FSDP's shapes (a flat
parameter padded to a multiple of the world), sync and async_op=True, each
result compared with gloo's on the same data; DDP with backend "ddl" and no
hook, and ZeroRedundancyOptimizer over it, to the same parameters as over
gloo; a size mismatch and a type libddl lacks raise on every rank, and the
group goes on.

Run one process per lane (DDL_HELPERS=serve): the owners are torch's ranks
(RANK and WORLD_SIZE from the Slurm plugin, or from the MPI rank under
mpirun), the helpers serve.  Prints "backend: N checks, 0 failures" on rank 0
and exits non-zero on any failure.
"""
import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

import ddl

failures, checks = [], 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print(f"FAIL rank {dist.get_rank()}: {what}", file=sys.stderr, flush=True)


def same(a, b, what, tol=0.0):
    check(a.shape == b.shape and (torch.equal(a, b) if tol == 0 else torch.allclose(a, b, rtol=tol, atol=tol)),
          f"{what}: differs from gloo (max difference {(a.double() - b.double()).abs().max().item():g})")


def data(shape, dtype, salt):
    """Each rank's own values, exactly representable (small integers)."""
    g = torch.Generator().manual_seed(1000 * salt + dist.get_rank())
    return torch.randint(-8, 9, shape, generator=g).to(dtype)


def gloo_all_reduce(t, op, gloo):
    """gloo's all_reduce of t, through float32 for the 16-bit floats it lacks
    (the data are small integers: exact in either)."""
    wide = t.float() if t.dtype in (torch.bfloat16, torch.float16) else t.clone()
    dist.all_reduce(wide, op=op, group=gloo)
    return wide.to(t.dtype)


def collectives(gloo):
    world, rank = dist.get_world_size(), dist.get_rank()
    for dtype in (torch.float32, torch.bfloat16, torch.float64, torch.int32, torch.int64, torch.uint8):
        for n in (1, 13, 70001):
            x = data((n,), dtype, n)
            for op in ("SUM", "MAX", "MIN", "PRODUCT"):
                if op == "PRODUCT" and (dtype.is_floating_point is False or n > 13):
                    continue  # integer products overflow differently; large products overflow
                ours = x.clone()
                dist.all_reduce(ours, op=getattr(dist.ReduceOp, op))
                same(ours, gloo_all_reduce(x, getattr(dist.ReduceOp, op), gloo), f"all_reduce {op} {dtype} n={n}")
            # FSDP's shapes: a flat parameter padded to world x shard.
            shard = (n + world - 1) // world
            flat = data((shard * world,), dtype, n + 1)
            out = torch.empty(shard, dtype=dtype)
            dist.reduce_scatter_tensor(out, flat) if hasattr(dist, "reduce_scatter_tensor") \
                else dist._reduce_scatter_base(out, flat)
            ref = gloo_all_reduce(flat, dist.ReduceOp.SUM, gloo)  # gloo has no reduce-scatter: this rank's shard
            same(out, ref[rank * shard:(rank + 1) * shard], f"reduce_scatter_tensor {dtype} shard={shard}")
            gathered, ref = torch.empty(shard * world, dtype=dtype), [torch.empty(shard, dtype=dtype) for _ in
                                                                     range(world)]
            mine = data((shard,), dtype, n + 2)
            dist._all_gather_base(gathered, mine)
            ref = [r.view(torch.uint8) for r in ref]  # as bytes: gloo lacks some of the types
            dist.all_gather(ref, mine.view(torch.uint8), group=gloo)
            ref = [r.view(dtype) for r in ref]
            same(gathered, torch.cat(ref), f"all_gather_into_tensor {dtype} shard={shard}")
    # The list forms, async_op=True, AVG.
    x = data((4, 5), torch.float32, 7)
    outs = [torch.empty(4, 5) for _ in range(world)]
    work = dist.all_gather(outs, x, async_op=True)
    work.wait()
    refs = [torch.empty(4, 5) for _ in range(world)]
    dist.all_gather(refs, x, group=gloo)
    same(torch.stack(outs), torch.stack(refs), "all_gather list, async_op")
    inputs = [data((3, 3), torch.float32, 20 + j) for j in range(world)]
    out = torch.empty(3, 3)
    dist.reduce_scatter(out, inputs)
    ref = torch.stack(inputs).clone()
    dist.all_reduce(ref, group=gloo)
    same(out, ref[rank], "reduce_scatter list")
    x = data((1000,), torch.float32, 30)
    ours, ref = x.clone(), x.clone()
    dist.all_reduce(ours, op=dist.ReduceOp.AVG, async_op=True).wait()
    dist.all_reduce(ref, group=gloo)
    same(ours, ref / world, "all_reduce AVG, async_op", tol=1e-6)
    # Through gloo underneath: broadcast, barrier, all_to_all, send/recv, a bitwise op.
    b = data((6,), torch.float32, 40)
    dist.broadcast(b, src=world - 1)
    rb = data((6,), torch.float32, 40)
    dist.broadcast(rb, src=world - 1, group=gloo)
    same(b, rb, "broadcast")
    dist.barrier()
    a_in, a_out = torch.arange(world, dtype=torch.float32) + 10 * rank, torch.empty(world)
    dist.all_to_all_single(a_out, a_in)
    same(a_out, torch.arange(world, dtype=torch.float32) * 10 + rank, "all_to_all_single")
    if world > 1:
        t = torch.full((3,), float(rank))
        if rank == 0:
            dist.send(t, dst=1)
        elif rank == 1:
            dist.recv(t, src=0)
            check(torch.equal(t, torch.zeros(3)), "send/recv")
    bits = torch.tensor([1 << rank], dtype=torch.int32)
    dist.all_reduce(bits, op=dist.ReduceOp.BOR)
    check(bits.item() == (1 << world) - 1, "all_reduce BOR through gloo")


def train(group, zero, steps=5):
    """DDP (no hook) on group, plain SGD or ZeroRedundancyOptimizer: the parameters after steps."""
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
    ddp = DDP(model, process_group=group, bucket_cap_mb=0.001)  # several buckets
    opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.SGD, lr=0.1, process_group=group) \
        if zero else torch.optim.SGD(ddp.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(2 + dist.get_rank())
    for _ in range(steps):
        x, y = torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def bad_calls():
    world, rank = dist.get_world_size(), dist.get_rank()
    if world > 1:
        out = torch.empty(4 * world + (1 if rank == 0 else 0))  # rank 0's output is one too long
        try:
            dist._all_gather_base(out, torch.ones(4))
            check(False, "a size mismatch in all_gather_into_tensor did not raise")
        except (ValueError, RuntimeError) as e:
            check(("must hold" in str(e)) if rank == 0 else ("differently" in str(e) or "refused" in str(e)),
                  f"size mismatch message: {e}")
    try:
        dist.all_reduce(torch.ones(3, dtype=torch.int16))
        check(False, "complex64 did not raise")
    except TypeError as e:
        check("int16" in str(e), f"type message: {e}")
    x = torch.ones(5)
    dist.all_reduce(x)  # the group goes on
    check(torch.equal(x, torch.full((5,), float(world))), "all_reduce after the bad calls")


def main():
    comm = None
    if "RANK" not in os.environ:  # under mpirun: owners are every DDL_LANES-th rank
        lanes = int(os.environ.get("DDL_LANES", "1"))
        me = int(os.environ["OMPI_COMM_WORLD_RANK"])
        if me % lanes:
            comm = ddl.Comm(helpers="serve")
            comm.serve()
            return 0
        os.environ["RANK"] = str(me // lanes)
        os.environ["WORLD_SIZE"] = str(int(os.environ["OMPI_COMM_WORLD_SIZE"]) // lanes)
    torch.set_num_threads(1)
    dist.init_process_group("ddl")
    gloo = dist.new_group(backend="gloo")
    collectives(gloo)
    for zero in (False, True):
        ours, ref = train(None, zero), train(gloo, zero)
        same(ours, ref, f"DDP backend=ddl{' with ZeroRedundancyOptimizer' if zero else ''}", tol=1e-6)
        everyone = [torch.empty_like(ours) for _ in range(dist.get_world_size())]
        dist.all_gather(everyone, ours, group=gloo)
        check(all(torch.equal(e, ours) for e in everyone), "parameters differ between ranks")
    bad_calls()
    total = torch.tensor([len(failures)])
    dist.all_reduce(total, group=gloo)
    if dist.get_rank() == 0:
        print(f"backend: {checks} checks, {int(total.item())} failures", flush=True)
    dist.destroy_process_group()
    return 1 if total.item() else 0


if __name__ == "__main__":
    sys.exit(main())
