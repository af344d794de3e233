#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The wire benchmark's ceiling: what the kernel's own TCP gets through the
# same link in the same guests, in MB/s (2^20 bytes, as perftest counts).
#
#   tcp_ceiling.py -s            receive one stream, tell the sender how
#                                many bytes arrived
#   tcp_ceiling.py -c ADDR SECS  send for SECS seconds, print MB/s
import socket
import sys
import time

PORT = 5201


def server():
    with socket.create_server(("", PORT)) as ls:
        conn, _ = ls.accept()
        with conn:
            n = 0
            while True:
                b = conn.recv(1 << 16)
                if not b:
                    break
                n += len(b)
            conn.sendall(str(n).encode())


def client(addr, secs):
    buf = bytes(1 << 16)
    with socket.create_connection((addr, PORT), timeout=60) as s:
        start = time.monotonic()
        while time.monotonic() - start < secs:
            s.sendall(buf)
        s.shutdown(socket.SHUT_WR)
        n = int(s.recv(64))
        print("%.2f" % (n / (time.monotonic() - start) / (1 << 20)))


if sys.argv[1:2] == ["-s"]:
    server()
else:
    client(sys.argv[2], float(sys.argv[3]))
