#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Training step time with DistributedDataParallel: gloo's allreduce against the
DDL hook and against the "ddl" backend (DDP without a hook), in the same job,
on real models with synthetic data.

    srun -N2 --gpus-per-node=1 --ddl-lanes=2 python3 examples/train_bench.py --model mlp

The owners train three copies of the model, DDP with gloo's allreduce, DDP with
the DDL hook and DDP on a "ddl" process group (--no-backend: the first two),
from the same initial weights on the same batches, taking turns step by step
(the order rotates), so that all see the same machine; the helpers serve the
DDL copies.  --zero: every copy's optimizer is ZeroRedundancyOptimizer on its
copy's group (gloo for the hook's).  Models: resnet18 (torchvision's),
transformer (encoder blocks), mlp (4 Linear 2048x2048 layers: 67 MB of
gradients, little compute).

The steps are timed once online selection has settled every bucket size of
the DDL copy (warm-up steps go on until it has, at most --settle-steps more),
so that they show what a long job sees, not its first calls timing candidates.
Rank 0 prints, per hook, the median step time, the median compute time of the
same step without any allreduce (DDP's no_sync) plus the optimizer step, the
time the gradients take to allreduce on their own, and the share of that hidden
behind backward; for the DDL copy each bucket's hand-over and end (medians, ms
into the step); then the speed-up, the largest difference between the two
copies' losses, and whether every rank ends with identical parameters.  It
exits non-zero when the losses differ by more than --tolerance or the
parameters differ between ranks.  --json writes it all.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

# About 0.2-0.3 s of compute per step for one process on this workplace's
# cores (Debian's torch uses the reference BLAS).
DEFAULT_BATCH = {"resnet18": 4, "transformer": 2, "mlp": 16}


def build(name):
    """A new model, and the shape of one batch: (input shape, classes)."""
    nn = torch.nn
    if name == "resnet18":
        import torchvision

        return torchvision.models.resnet18(num_classes=1000), ((3, 64, 64), 1000)
    if name == "transformer":
        d, seq = 512, 16
        layers = [nn.TransformerEncoderLayer(d, 8, 4 * d, dropout=0.0, batch_first=True) for _ in range(2)]
        return nn.Sequential(*layers, nn.Flatten(), nn.Linear(d * seq, 16)), ((seq, d), 16)
    if name == "mlp":
        w = 2048
        return nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(w, w), nn.ReLU())], nn.Linear(w, 16)), ((w,), 16)
    raise SystemExit(f"unknown model {name}")


class Trainer:
    """One DDP copy of the model with its optimizer and its timings."""

    def __init__(self, name, model, args, hook_comm=None, group=None):
        from torch.nn.parallel import DistributedDataParallel as DDP

        self.name = name
        self.ddp = DDP(model, bucket_cap_mb=args.bucket_mb, process_group=group)
        if hook_comm is not None:
            import ddl.torch_hook

            self.ddp.register_comm_hook(hook_comm, self.timed(ddl.torch_hook.allreduce_avg))  # the one added line
        if args.zero:
            from torch.distributed.optim import ZeroRedundancyOptimizer

            self.opt = ZeroRedundancyOptimizer(self.ddp.parameters(), optimizer_class=torch.optim.SGD, lr=args.lr,
                                               process_group=group)
        else:
            self.opt = torch.optim.SGD(self.ddp.parameters(), lr=args.lr)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.times, self.opt_times, self.losses, self.busy = [], [], [], []
        self.posts = []  # per step, each bucket the hook started: [handed over, bytes, done], seconds into the step
        self.t0 = None
        self.bucket_bytes = set()  # every bucket size the hook has seen

    def timed(self, hook):
        """The hook, noting when DDP hands it each bucket (seconds into the step) and its bytes."""

        def timed_hook(state, bucket):
            self.bucket_bytes.add(bucket.buffer().numel() * bucket.buffer().element_size())
            if self.t0 is None:
                return hook(state, bucket)
            t0, post = self.t0, [time.perf_counter() - self.t0, bucket.buffer().numel() * bucket.buffer().element_size(), None]
            self.posts[-1].append(post)

            def done(fut):
                post[2] = time.perf_counter() - t0
                return fut.value()

            return hook(state, bucket).then(done)

        return timed_hook

    def step(self, x, y, record=True):
        cpu0 = host_cpu()
        t0 = time.perf_counter()
        self.t0 = t0 if record else None
        self.posts.append([])
        self.opt.zero_grad(set_to_none=False)
        loss = self.loss_fn(self.ddp(x), y)
        loss.backward()  # returns when DDP has every bucket's result
        t1 = time.perf_counter()
        self.opt.step()
        if record:
            self.opt_times.append(time.perf_counter() - t1)
            self.times.append(time.perf_counter() - t0)
            cpu1 = host_cpu()
            if cpu1[1] > cpu0[1]:  # the share of the host's CPUs busy during the step
                self.busy.append((cpu1[0] - cpu0[0]) / (cpu1[1] - cpu0[1]))
        return loss.detach()

    def compute_only(self, x, y):
        """Forward and backward without any allreduce (nothing is updated)."""
        t0 = time.perf_counter()
        self.opt.zero_grad(set_to_none=False)
        with self.ddp.no_sync():
            self.loss_fn(self.ddp(x), y).backward()
        return time.perf_counter() - t0

    def params(self):
        return torch.cat([p.detach().reshape(-1) for p in self.ddp.module.parameters()])


def host_cpu():
    """(busy, all) jiffies of this host from /proc/stat: busy counts user,
    system, interrupt and softirq time (the kernel's TCP work included)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:8]]
    except OSError:
        return 0, 0
    return sum(v) - v[3] - v[4], sum(v)  # less idle and iowait


def overlap_bound(trainer, alone, total_bytes):
    """The shortest step the hook could give (median over the steps): each
    bucket's allreduce starts when DDP hands it over, or when the one before
    ends, and moves at the rate of the allreduce alone; then the optimizer."""
    steps = []
    for posts, opt in zip((p for p in trainer.posts if p), trainer.opt_times):
        end = 0.0
        for at, nbytes, _ in posts:
            end = max(end, at) + alone * nbytes / total_bytes
        steps.append(end + opt)
    return statistics.median(steps) if steps else None


def bucket_timeline(trainer):
    """Per bucket, in hand-over order, the medians over the steps of: when DDP
    handed it over, when its result was there (ms into the step), how long it
    ran (from its hand-over or the end of the bucket before, whichever is
    later, to its end), and its bytes."""
    steps = [p for p in trainer.posts if p and all(b[2] is not None for b in p)]
    if not steps or any(len(p) != len(steps[0]) for p in steps):
        return []
    rows = []
    for i in range(len(steps[0])):
        ran = [p[i][2] - max(p[i][0], p[i - 1][2] if i else 0.0) for p in steps]
        rows.append({"handed_ms": statistics.median(p[i][0] for p in steps) * 1e3,
                     "done_ms": statistics.median(p[i][2] for p in steps) * 1e3,
                     "ran_ms": statistics.median(ran) * 1e3, "bytes": steps[0][i][1]})
    return rows


def comm_alone(bucket_bytes, allreduce, repeat=3):
    """Median time to allreduce a step's buckets once (DDP's sizes, in its
    order: sizes whose online selection has settled), nothing else running."""
    bufs = [torch.ones(n // 4) for n in bucket_bytes]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for b in bufs:
            allreduce(b)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(args):
    import torch.distributed as dist
    import ddl

    torch.set_num_threads(1)
    comm = ddl.Comm(helpers="serve")
    if not comm.is_owner:  # this lane serves its owner's allreduces
        comm.serve()
        comm.destroy()
        ddl.finalize()
        return 0
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    groups = {"gloo": None, "ddl": None}
    if args.backend:
        import ddl.torch_backend  # noqa: F401  (registers "ddl"; the group shares comm)

        groups["backend"] = dist.new_group(backend="ddl")
    trainers = []
    for name, group in groups.items():
        torch.manual_seed(args.seed)  # the same initial weights for every copy, on every rank
        model, (shape, classes) = build(args.model)
        trainers.append(Trainer(name, model, args, comm if name == "ddl" else None, group))
    gen = torch.Generator().manual_seed(args.seed + 1 + rank)  # each rank its own data
    batch = args.batch or DEFAULT_BATCH[args.model]

    def data():
        return torch.randn(batch, *shape, generator=gen), torch.randint(0, classes, (batch,), generator=gen)

    def warm_step():
        x, y = data()
        for t in trainers:
            t.step(x, y, record=False)

    for _ in range(args.warmup):  # DDP rebuilds its buckets after the first step
        warm_step()
    trainers[1].bucket_bytes.clear()  # the sizes of the first step's buckets, before the rebuild, come no more
    warm_step()
    # Then until online selection has settled every bucket size, so that the
    # steps timed are what a long job sees (a size met once per step takes a
    # few dozen steps to time its candidates; the answer is the same on every
    # rank after the same calls, so all ranks stop together).
    settling = 0
    while settling < args.settle_steps and not all(comm.choice(b)[1] for b in trainers[1].bucket_bytes):
        warm_step()
        settling += 1
    if rank == 0:
        print(f"{args.model:12s} online selection settled after {args.warmup + 1 + settling} warm-up steps: " +
              ", ".join(f"{b / 1e6:.1f} MB {comm.choice(b)[0]}" for b in sorted(trainers[1].bucket_bytes)), flush=True)
    cpu0 = host_cpu()
    forward_backward = statistics.median(trainers[0].compute_only(*data()) for _ in range(args.compute_steps))
    cpu1 = host_cpu()
    compute_busy = (cpu1[0] - cpu0[0]) / max(1, cpu1[1] - cpu0[1])
    comm.reset_stats()
    for i in range(args.steps):
        x, y = data()
        for t in trainers[i % len(trainers):] + trainers[:i % len(trainers)]:
            loss = t.step(x, y)
            dist.all_reduce(loss)
            t.losses.append(loss.item() / world)
    # Where the lanes' bucket calls spent their time (the hook's and the
    # backend's copies share the communicator): this owner's phases.
    phases = comm.phases()
    numel = sum(p.numel() for p in trainers[0].ddp.module.parameters())
    buckets = [post[1] for post in trainers[1].posts[-1]]  # the last step's, float32
    alone = {"gloo": comm_alone(buckets, dist.all_reduce),
             "ddl": comm_alone(buckets, lambda b: comm.allreduce(b, op="avg"))}
    if "backend" in groups:
        alone["backend"] = comm_alone(buckets, lambda b: dist.all_reduce(b, group=groups["backend"]))
    result = {"model": args.model, "world": world, "params": numel, "bucket_mb": args.bucket_mb,
              "batch": batch, "hooks": {}}
    identical = True
    for t in trainers:
        flat = t.params()
        gathered = [torch.empty_like(flat) for _ in range(world)]
        dist.all_gather(gathered, flat)
        same = all(torch.equal(g, flat) for g in gathered)
        identical &= same
        median = statistics.median(t.times)
        # Communication that did not overlap: what the step took beyond its
        # compute (forward and backward without allreduce, plus the optimizer step).
        compute = forward_backward + statistics.median(t.opt_times)
        exposed = max(0.0, median - compute)
        hidden = max(0.0, min(1.0, 1.0 - exposed / alone[t.name])) if alone[t.name] > 0 else 1.0
        bound = overlap_bound(t, alone[t.name], sum(buckets))
        result["hooks"][t.name] = {"overlap_bound_s": bound,
                                   "last_bucket_at_s": statistics.median(p[-1][0] for p in t.posts if p) if bound else None,"step_median_s": median, "compute_median_s": compute,
                                   "comm_alone_s": alone[t.name], "hidden_share": hidden, "identical": same,
                                   "host_busy_share": statistics.median(t.busy) if t.busy else None,
                                   "losses": t.losses, "step_times": t.times, "buckets": bucket_timeline(t)}
    g, d = result["hooks"]["gloo"], result["hooks"]["ddl"]
    worst = max(abs(a - b) / max(1.0, abs(a)) for h in result["hooks"].values() for a, b in
                zip(g["losses"], h["losses"]))
    same_copies = all(torch.equal(trainers[0].params(), t.params()) for t in trainers[1:])
    calls = phases["copy in"][1]
    per_call = {name: s / calls * 1e3 for name, (s, _) in phases.items() if calls and name != "early"}
    result.update(speedup=g["step_median_s"] / d["step_median_s"], loss_difference=worst,
                  compute_host_busy_share=compute_busy,
                  copies_identical=same_copies, lane_calls=calls, lane_phases_ms_per_call=per_call)
    if "backend" in result["hooks"]:
        b = result["hooks"]["backend"]
        result.update(backend_speedup=g["step_median_s"] / b["step_median_s"],
                      backend_over_hook=d["step_median_s"] / b["step_median_s"])
    ok = identical and worst <= args.tolerance
    names = list(groups)
    if rank == 0:
        for name in names:
            h = result["hooks"][name]
            print(f"{args.model:12s} {name:7s} {world} GPUs, buckets {args.bucket_mb:g} MB: step "
                  f"{h['step_median_s'] * 1e3:7.1f} ms  compute {h['compute_median_s'] * 1e3:7.1f} ms  allreduce alone "
                  f"{h['comm_alone_s'] * 1e3:7.1f} ms  hidden {h['hidden_share'] * 100:5.1f}%  host CPUs busy "
                  f"{(h['host_busy_share'] or 0) * 100:3.0f}%  parameters identical "
                  f"on every rank: {h['identical']}", flush=True)
        print(f"{args.model:12s} host CPUs busy during compute alone: {compute_busy * 100:.0f}%", flush=True)
        for name in names:
            h = result["hooks"][name]
            if h["overlap_bound_s"]:
                print(f"{args.model:12s} {name}: the last bucket is handed over {h['last_bucket_at_s'] * 1e3:.1f} ms into "
                      f"the step; at its allreduce-alone rate the best step would be {h['overlap_bound_s'] * 1e3:.1f} ms "
                      f"({g['step_median_s'] / h['overlap_bound_s']:.2f}x gloo's step)", flush=True)
        for name in names:
            rows = result["hooks"][name]["buckets"]
            if rows:
                rate = result["hooks"][name]["comm_alone_s"] * 1e3 / sum(buckets)
                print(f"{args.model:12s} {name} buckets (ms into the step: handed over, done, ran for, alone's rate would take): " +
                      "; ".join(f"{r['handed_ms']:.0f} {r['done_ms']:.0f} {r['ran_ms']:.1f} {r['bytes'] * rate:.1f}" for r in rows),
                      flush=True)
        if calls:
            print(f"{args.model:12s} ddl lane calls in the timed steps ({calls}, hook and backend), rank 0's ms per call: " +
                  ", ".join(f"{name} {ms:.2f}" for name, ms in per_call.items()), flush=True)
        print(f"{args.model:12s} ddl vs gloo: {result['speedup']:.2f}x; losses differ by at most {worst:.1e} "
              f"(relative) over {args.steps} steps; final parameters of the two copies "
              f"{'bit-identical' if same_copies else 'differ'}{'' if ok else '  <- FAILED'}", flush=True)
        if "backend_speedup" in result:
            print(f"{args.model:12s} ddl backend vs gloo: {result['backend_speedup']:.2f}x; vs the hook: "
                  f"{result['backend_over_hook']:.2f}x", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f)
    dist.destroy_process_group()
    comm.destroy()
    ddl.finalize()
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["resnet18", "transformer", "mlp"], default="mlp")
    ap.add_argument("--steps", type=int, default=20, help="measured steps per hook")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--settle-steps", type=int, default=60,
                    help="at most this many more warm-up steps while online selection times candidates")
    ap.add_argument("--compute-steps", type=int, default=5)
    ap.add_argument("--batch", type=int, help="per rank (default: by model)")
    ap.add_argument("--bucket-mb", type=float, default=25, help="DDP's bucket_cap_mb (default 25, DDP's own)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--tolerance", type=float, default=1e-5, help="largest relative difference of the losses")
    ap.add_argument("--json", help="write the results here (rank 0)")
    ap.add_argument("--no-backend", dest="backend", action="store_false",
                    help="no third copy on the \"ddl\" process group")
    ap.add_argument("--zero", action="store_true", help="ZeroRedundancyOptimizer for every copy")
    sys.exit(run(ap.parse_args()))


if __name__ == "__main__":
    main()
