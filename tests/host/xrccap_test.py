#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""tests/guest/xrccap.py against captures made here, one per case: an XRC
SEND and its ACK as the IBA lays them out pass; each fault in them (an
XRCETH naming another SRQ, or a reserved byte set, an ACK with an XRCETH,
an RC opcode, a bad ICRC, a kind asked for and not there) fails.  Prints
TAP."""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import zlib

CAP = os.path.join(os.path.dirname(__file__), "..", "guest", "xrccap.py")
REQ, RESP, SRQ = "10.76.1.2", "10.76.1.1", 5


def frame(src, dst, op, ext, payload=b"", crc_xor=0):
    """An Ethernet frame of RoCEv2 with BTH opcode @op, then @ext and
    @payload; its ICRC as IBA A17.3.3 has it, XORed with @crc_xor."""
    bth = struct.pack("!BBHII", op, 0, 0xFFFF, 0x12, 7)
    body = bth + ext + payload
    udp_len = 8 + len(body) + 4
    ip_len = 20 + udp_len

    def ip(tos, ttl, csum):
        return struct.pack("!BBHHHBBH4s4s", 0x45, tos, ip_len, 1, 0x4000,
                           ttl, 17, csum, socket.inet_aton(src),
                           socket.inet_aton(dst))

    def udp(csum):
        return struct.pack("!HHHH", 49152, 4791, udp_len, csum)

    masked = body[:4] + b"\xff" + body[5:]
    crc = zlib.crc32(b"\xff" * 8 + ip(0xFF, 0xFF, 0xFFFF) + udp(0xFFFF) +
                     masked) ^ crc_xor
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip(0, 64, 0) + \
        udp(0) + body + struct.pack("<I", crc)


def pcap(frames):
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for f in frames:
        out += struct.pack("<IIII", 0, 0, len(f), len(f)) + f
    return out


def xrceth(srq, resv=0):
    return struct.pack("!I", resv << 24 | srq)


ACK = 0xB1
AETH = struct.pack("!I", 0x1F << 24)
SEND = frame(REQ, RESP, 0xA4, xrceth(SRQ), b"abcd")
GOOD_ACK = frame(RESP, REQ, ACK, AETH)
CASES = [
    ("an XRC SEND_ONLY naming the SRQ, and its ACK", [SEND, GOOD_ACK], 0),
    ("an XRCETH naming another SRQ",
     [frame(REQ, RESP, 0xA4, xrceth(SRQ + 1), b"abcd"), GOOD_ACK], 1),
    ("an XRCETH with its reserved byte set",
     [frame(REQ, RESP, 0xA4, xrceth(SRQ, 1), b"abcd"), GOOD_ACK], 1),
    ("an ACK with an XRCETH",
     [SEND, frame(RESP, REQ, ACK, xrceth(SRQ) + AETH)], 1),
    ("an RC SEND_ONLY", [frame(REQ, RESP, 0x04, b"", b"abcd"), GOOD_ACK], 1),
    ("a bad ICRC", [frame(REQ, RESP, 0xA4, xrceth(SRQ), b"abcd", 1),
                    GOOD_ACK], 1),
    ("a SEND with no ACK, when an ACK is wanted", [SEND], 1),
]

print("1..%d" % len(CASES))
failed = 0
with tempfile.TemporaryDirectory() as d:
    for i, (what, frames, want) in enumerate(CASES, 1):
        path = os.path.join(d, "%d.pcap" % i)
        with open(path, "wb") as f:
            f.write(pcap(frames))
        r = subprocess.run([sys.executable, CAP, path, REQ, str(SRQ),
                            "send", "ack"], capture_output=True, text=True)
        ok = (r.returncode == 0) == (want == 0)
        failed += not ok
        print("%s %d - xrccap.py %s %s" % ("ok" if ok else "not ok", i,
              "passes" if want == 0 else "fails", what))
        if not ok:
            for line in (r.stdout + r.stderr).splitlines():
                print("#   " + line)
sys.exit(1 if failed else 0)
