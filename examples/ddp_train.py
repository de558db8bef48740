#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Train a small MLP with DistributedDataParallel on synthetic data, with the
default gloo allreduce or with gradients averaged through DDL lanes.

Launch one process per lane under Slurm (the plugin exports RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT to the owners; helpers run ddl-helper):

    srun -N2 --gpus-per-node=1 --ddl-lanes=2 python3 examples/ddp_train.py --hook ddl
    srun -N2 --gpus-per-node=1 --ddl-lanes=1 python3 examples/ddp_train.py --hook gloo

It prints the loss of every step, the step time, and a digest of the final
parameters; --json FILE writes them for comparison.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hook", choices=["gloo", "ddl"], default="ddl")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--json", help="write losses, step times and parameters here (rank 0)")
    args = ap.parse_args()
    torch.set_num_threads(1)

    comm = None
    if args.hook == "ddl":
        import ddl
        import ddl.torch_hook
        comm = ddl.Comm(helpers="serve")  # owners run DDP; helpers only serve
        if not comm.is_owner:  # helpers=app: this lane serves its owner's allreduces
            comm.serve()
            comm.destroy()
            ddl.finalize()
            return
    # The owners: one process per GPU, as the script would run without lanes.
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(args.seed)  # the same initial weights everywhere
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                                torch.nn.Linear(64, 1))
    ddp = DDP(model)
    if comm is not None:
        ddp.register_comm_hook(comm, ddl.torch_hook.allreduce_avg)  # the one added line
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)

    data = torch.Generator().manual_seed(args.seed + 1 + rank)  # each rank its own shard
    w_true = torch.randn(32, 1, generator=torch.Generator().manual_seed(args.seed))
    losses, times = [], []
    for step in range(args.steps):
        x = torch.randn(args.batch, 32, generator=data)
        y = x @ w_true + 0.1 * torch.randn(args.batch, 1, generator=data)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / world)
        if rank == 0:
            print(f"step {step:3d}  loss {losses[-1]:.6f}  {times[-1] * 1e3:.2f} ms", flush=True)

    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    same = all(torch.equal(g, flat) for g in gathered)
    if rank == 0:
        times_sorted = sorted(times)
        print(f"hook {args.hook}: {world} GPUs, final loss {losses[-1]:.6f}, median step "
              f"{times_sorted[len(times) // 2] * 1e3:.2f} ms, parameters identical on every rank: {same}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"hook": args.hook, "world": world, "losses": losses, "step_times": times,
                           "params": flat.tolist(), "identical": same}, f)
    dist.destroy_process_group()
    if comm is not None:
        comm.destroy()
        import ddl
        ddl.finalize()
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
