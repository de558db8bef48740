#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A plain TCP rate test for the emulated cluster (bench/emu-cluster.sh):

    tcp-rate.py recv ADDR PORT FLOWS SECONDS    count what FLOWS connections deliver
    tcp-rate.py send ADDR PORT SECONDS SRC...   one flow from each source address

The receiver prints each flow's and the total rate in Mbit/s, measured over the
middle of the run (the first and the last half second left out), so that
socket buffers filling up do not count."""
import socket
import sys
import threading
import time


def recv(addr, port, flows, seconds):
    srv = socket.create_server((addr, port), reuse_port=True)
    srv.listen(flows)
    counts = [[0, 0] for _ in range(flows)]  # bytes in the window, bytes before it
    start = [None]

    def drain(conn, i):
        while True:
            data = conn.recv(1 << 20)
            if not data:
                return
            now = time.monotonic()
            if start[0] is not None and start[0] + 0.5 <= now <= start[0] + seconds - 0.5:
                counts[i][0] += len(data)

    threads = []
    for i in range(flows):
        conn, _ = srv.accept()
        if start[0] is None:
            start[0] = time.monotonic()
        t = threading.Thread(target=drain, args=(conn, i))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    window = seconds - 1.0
    rates = [c[0] * 8 / window / 1e6 for c in counts]
    print(" ".join(f"{r:.0f}" for r in rates), f"total {sum(rates):.0f} Mbit/s")


def send(addr, port, seconds, sources):
    buf = b"\0" * (1 << 16)
    end = time.monotonic() + seconds

    def flow(src):
        s = socket.create_connection((addr, port), source_address=(src, 0))
        while time.monotonic() < end:
            s.sendall(buf)
        s.close()

    threads = [threading.Thread(target=flow, args=(src,)) for src in sources]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    if sys.argv[1] == "recv":
        recv(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        send(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5:])
