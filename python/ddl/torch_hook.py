"""A DistributedDataParallel communication hook that averages each gradient
bucket through DDL lanes.  The process group stays what the script uses (gloo,
say); only the gradient allreduce changes:

    model.register_comm_hook(ddl.Comm(), ddl.torch_hook.allreduce_avg)
"""
import torch


def allreduce_avg(comm, bucket):
    """DDP comm hook: average the bucket over the GPUs (owners) in place."""
    tensor = bucket.buffer()
    comm.allreduce(tensor, op="avg")
    future = torch.futures.Future()
    future.set_result(tensor)
    return future
