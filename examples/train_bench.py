#!/usr/bin/python3
"""Training step time with DistributedDataParallel: gloo's allreduce against the
DDL hook, on real models with synthetic data.

    srun -N2 --gpus-per-node=1 --ddl-lanes=1 python3 examples/train_bench.py --model mlp --hook gloo
    srun -N2 --gpus-per-node=1 --ddl-lanes=2 python3 examples/train_bench.py --model mlp --hook ddl

Models: resnet18 (torchvision's), transformer (encoder blocks), mlp (4 Linear
2048x2048 layers: 67 MB of gradients, little compute).  Rank 0 prints the median
step time, the median compute time of the same step without any allreduce
(DDP's no_sync), the time the gradients take to allreduce on their own, the
share of that hidden behind backward, and whether the parameters are identical
on every rank; --json writes it all, with the losses, for --compare.

    python3 examples/train_bench.py --compare gloo.json ddl.json
"""
import argparse
import hashlib
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

BUCKET_MB = 25  # DDP's default bucket_cap_mb: the comm-alone time uses the same pieces


def build(name, batch, gen):
    """The model and a function that makes one batch (inputs, targets) from gen."""
    nn = torch.nn
    if name == "resnet18":
        import torchvision

        model = torchvision.models.resnet18(num_classes=1000)
        return model, lambda: (torch.randn(batch, 3, 64, 64, generator=gen),
                               torch.randint(0, 1000, (batch,), generator=gen))
    if name == "transformer":
        d, seq = 512, 16
        layers = [nn.TransformerEncoderLayer(d, 8, 4 * d, dropout=0.0, batch_first=True) for _ in range(2)]
        model = nn.Sequential(*layers, nn.Flatten(), nn.Linear(d * seq, 16))
        return model, lambda: (torch.randn(batch, seq, d, generator=gen), torch.randint(0, 16, (batch,), generator=gen))
    if name == "mlp":
        w = 2048
        model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(w, w), nn.ReLU())], nn.Linear(w, 16))
        return model, lambda: (torch.randn(batch, w, generator=gen), torch.randint(0, 16, (batch,), generator=gen))
    raise SystemExit(f"unknown model {name}")


# About 0.2-0.3 s of compute per step for one process on this workplace's
# cores (Debian's torch uses the reference BLAS).
DEFAULT_BATCH = {"resnet18": 4, "transformer": 2, "mlp": 16}


def comm_alone(params, allreduce, repeat):
    """Median time to allreduce every gradient once, in DDP-sized pieces, nothing else running."""
    total = sum(p.numel() for p in params)
    piece = BUCKET_MB * (1 << 20) // 4
    bufs = [torch.ones(min(piece, total - o)) for o in range(0, total, piece)]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        allreduce(bufs)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(args):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    comm = None
    if args.hook == "ddl":
        import ddl
        import ddl.torch_hook

        comm = ddl.Comm(helpers="serve")
        if not comm.is_owner:  # this lane serves its owner's allreduces
            comm.serve()
            comm.destroy()
            ddl.finalize()
            return 0
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)  # the same initial weights everywhere
    gen = torch.Generator().manual_seed(args.seed + 1 + rank)  # each rank its own data
    model, batch = build(args.model, args.batch or DEFAULT_BATCH[args.model], gen)
    ddp = DDP(model, bucket_cap_mb=BUCKET_MB)
    if comm is not None:
        ddp.register_comm_hook(comm, ddl.torch_hook.allreduce_avg)  # the one added line
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    loss_fn = torch.nn.CrossEntropyLoss()

    opt_times = []

    def step(sync=True):
        x, y = batch()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        if sync:
            loss = loss_fn(ddp(x), y)
            loss.backward()  # returns when DDP has every bucket's result
            t1 = time.perf_counter()
            opt.step()
            opt_times.append(time.perf_counter() - t1)
        else:
            with ddp.no_sync():  # compute only: no allreduce, no update
                loss = loss_fn(ddp(x), y)
                loss.backward()
        return time.perf_counter() - t0, loss.detach()

    for _ in range(args.warmup):  # DDP rebuilds its buckets after the first step
        step()
    forward_backward = statistics.median(step(sync=False)[0] for _ in range(args.compute_steps))
    losses, times = [], []
    for _ in range(args.steps):
        t, loss = step()
        times.append(t)
        dist.all_reduce(loss)
        losses.append(loss.item() / world)

    if comm is not None:
        alone = comm_alone(list(model.parameters()), lambda bufs: [comm.allreduce(b, op="avg") for b in bufs], 3)
    else:
        alone = comm_alone(list(model.parameters()), lambda bufs: [dist.all_reduce(b) for b in bufs], 3)
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    same = all(torch.equal(g, flat) for g in gathered)
    median = statistics.median(times)
    # Communication that did not overlap: what the step took beyond its compute
    # (forward and backward without allreduce, plus the optimizer step).
    compute = forward_backward + statistics.median(opt_times)
    exposed = max(0.0, median - compute)
    hidden = max(0.0, min(1.0, 1.0 - exposed / alone)) if alone > 0 else 1.0
    result = {"model": args.model, "hook": args.hook, "world": world, "params": flat.numel(),
              "step_median_s": median, "compute_median_s": compute, "comm_alone_s": alone, "hidden_share": hidden,
              "identical": same, "losses": losses, "step_times": times,
              "param_digest": hashlib.sha256(flat.numpy().tobytes()).hexdigest()}
    if rank == 0:
        print(f"{args.model:12s} {args.hook:5s} {world} GPUs  step {median * 1e3:7.1f} ms  compute {compute * 1e3:7.1f} ms  "
              f"allreduce alone {alone * 1e3:7.1f} ms  hidden {hidden * 100:5.1f}%  final loss {losses[-1]:.6f}  "
              f"parameters identical on every rank: {same}", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f)
    dist.destroy_process_group()
    if comm is not None:
        comm.destroy()
        ddl.finalize()
    return 0 if same else 1


def compare(paths, tol):
    """gloo against ddl: the speed-up, and whether they trained alike."""
    a, b = (json.load(open(p)) for p in paths)
    worst = max(abs(x - y) / max(1.0, abs(x)) for x, y in zip(a["losses"], b["losses"]))
    same_params = a["param_digest"] == b["param_digest"]
    ok = a["identical"] and b["identical"] and worst <= tol and len(a["losses"]) == len(b["losses"])
    print(f"{a['model']:12s} {b['hook']} vs {a['hook']}: step {b['step_median_s'] * 1e3:.1f} ms vs "
          f"{a['step_median_s'] * 1e3:.1f} ms = {a['step_median_s'] / b['step_median_s']:.2f}x; hidden "
          f"{b['hidden_share'] * 100:.0f}% vs {a['hidden_share'] * 100:.0f}%; losses differ by at most {worst:.1e} "
          f"(relative); final parameters {'bit-identical' if same_params else 'differ'} between the runs; "
          f"identical on every rank: {a['identical']} / {b['identical']}")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["resnet18", "transformer", "mlp"], default="mlp")
    ap.add_argument("--hook", choices=["gloo", "ddl"], default="ddl")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--compute-steps", type=int, default=5)
    ap.add_argument("--batch", type=int, help="per rank (default: by model)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--json", help="write the results here (rank 0)")
    ap.add_argument("--compare", nargs=2, metavar=("GLOO.json", "DDL.json"))
    ap.add_argument("--tolerance", type=float, default=1e-5, help="--compare: largest relative loss difference")
    args = ap.parse_args()
    sys.exit(compare(args.compare, args.tolerance) if args.compare else run(args))


if __name__ == "__main__":
    main()
