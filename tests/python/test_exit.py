# SPDX-License-Identifier: Apache-2.0
"""A program that trains and simply ends: no destroy(), no ddl.finalize().
It must exit 0 on every rank (the binding destroys the open communicator and
finalises MPI at interpreter exit); in serve mode the helpers' serve() returns
when their owners' communicators go at exit."""
import sys

import numpy as np

import ddl

comm = ddl.Comm()
if comm.helpers == "serve" and not comm.is_owner:
    comm.serve()
    sys.exit(0)
a = np.full(1001, comm.owner_rank + 1, dtype=np.float32)
comm.allreduce(a)
if comm.is_owner and not (a == comm.owner_size * (comm.owner_size + 1) / 2).all():
    print(f"FAIL rank {comm.rank}: allreduce gave {a[:3]}", file=sys.stderr)
    sys.exit(1)
