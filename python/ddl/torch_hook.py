# SPDX-License-Identifier: Apache-2.0
"""A DistributedDataParallel communication hook that averages each gradient
bucket through DDL lanes.  The process group stays what the script uses (gloo,
say); only the gradient allreduce changes:

    model.register_comm_hook(ddl.Comm(), ddl.torch_hook.allreduce_avg)

The hook starts the bucket's allreduce and returns at once: the lanes (the
owner's progress thread and the helper processes) carry it while backward goes
on computing the next buckets, and several buckets travel at the same time.
A completion thread waits for each request in order and completes DDP's
future; DDP waits for the futures at the end of backward.

Copies per bucket: a bucket in host memory is copied once into the lanes'
shared memory and once back, by the owner's progress thread (DDP's bucket
storage is ordinary process memory, which the node's other processes cannot
read); a bucket in device memory is read and written in place over CUDA IPC.
"""
import queue
import threading

import torch


class _Completer:
    """Completes futures in posting order on a thread of its own: it waits for
    each request (ctypes releases the GIL meanwhile) and sets the future."""

    def __init__(self):
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="ddl-hook-completer", daemon=True)
        self._thread.start()

    def add(self, request, future):
        self._queue.put((request, future))

    def close(self):
        self._queue.put(None)
        self._thread.join()

    def _run(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            request, future = item
            try:
                future.set_result(request.wait())
            except Exception as e:  # a DDLError: DDP's wait raises it
                future.set_exception(e)


def _check_world(comm):
    """The ddl communicator must hold the same processes as torch.distributed:
    each owner is one of its ranks.  A launch without lanes makes every process
    its own one-owner communicator, which would average nothing."""
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        return
    world = dist.get_world_size()
    if comm.owner_size != world:
        raise RuntimeError(
            f"ddl: the ddl communicator has {comm.owner_size} owner(s) (GPUs) but torch.distributed has {world} "
            f"process(es); start the job with srun --ddl-lanes=N (or mpirun with DDL_LANES) so that every "
            f"torch.distributed process is one owner of the same ddl communicator")


def _completer(comm):
    c = getattr(comm, "_hook_completer", None)
    if c is None:
        _check_world(comm)
        c = comm._hook_completer = _Completer()
        comm._on_destroy.append(c.close)
    return c


def allreduce_avg(comm, bucket):
    """DDP comm hook: average the bucket over the GPUs (owners) in place, asynchronously."""
    completer = _completer(comm)
    future = torch.futures.Future()
    completer.add(comm.allreduce_async(bucket.buffer(), op="avg"), future)
    return future
