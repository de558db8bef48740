#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The "ddl" backend when a peer stalls: torch rank 1 stops calling for
three deadlines (DDL_TIMEOUT) while rank 0 waits on an all_reduce with
async_op=True.  Rank 0's work.wait() must raise ddl.DDLError (a
RuntimeError) with the library's message naming the deadline, within about
one deadline.  Rank 1's late call then either fails the same way, or finds
rank 0's signature (sent before it gave up), agrees, and waits in the
system MPI_Allreduce for a peer that will not come: the library's watch of
the system MPI's collectives ends the job after DDL_TIMEOUT
(runtime/core/mpi_watch.h).  Either way nothing hangs.  Prints "stall: rank
R raised after S s: MESSAGE" per rank that raised.

Under mpirun with DDL_LANES: the owners are every DDL_LANES-th rank and the
helpers serve in this program (so their end does not race the owners');
under srun --ddl-lanes the helpers run ddl-helper, which ends the step once
its owner's communicator has failed, after a grace that lets the owner see
its exception first.
"""
import os
import sys
import time

import torch
import torch.distributed as dist

import ddl
import ddl.torch_backend  # noqa: F401  (registers "ddl")


def main():
    if "RANK" not in os.environ:  # under mpirun: owners are every DDL_LANES-th rank
        lanes = int(os.environ.get("DDL_LANES", "1"))
        me = int(os.environ["OMPI_COMM_WORLD_RANK"])
        if me % lanes:
            comm = ddl.Comm(helpers="serve")
            try:
                comm.serve()
            except ddl.DDLError as e:  # its owner's call failed
                print(f"stall: helper rank {me}: {e}", flush=True)
            return 0
        os.environ["RANK"] = str(me // lanes)
        os.environ["WORLD_SIZE"] = str(int(os.environ["OMPI_COMM_WORLD_SIZE"]) // lanes)
    dist.init_process_group("ddl")
    rank = dist.get_rank()
    deadline = float(os.environ["DDL_TIMEOUT"])
    t = torch.ones(1 << 18)
    dist.all_reduce(t)  # one call that works
    ok = bool((t == dist.get_world_size()).all())
    if rank == 1:
        time.sleep(3 * deadline)
    start = time.monotonic()
    try:
        dist.all_reduce(t, async_op=True).wait()
        print(f"stall: rank {rank} FAILED: the all_reduce returned", flush=True)
        return 1
    except ddl.DDLError as e:
        waited = time.monotonic() - start
        print(f"stall: rank {rank} raised after {waited:.1f} s: {e}", flush=True)
        ok &= waited < 3 * deadline and "DDL_TIMEOUT" in str(e)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
