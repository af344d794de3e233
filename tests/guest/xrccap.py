#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Check XRC's packets in a capture against the IBA's layout.

    xrccap.py PCAP REQUESTER SRQN KIND...

PCAP is what tcpdump -w wrote on an Ethernet link (IPv4, no VLAN).
REQUESTER is the XRC_SEND QP's address; SRQN the XRC SRQ its requests
name.  Every RoCEv2 packet must carry a good ICRC.  Every packet between
the two ends must be of the XRC class (opcodes 0xa0 to 0xb7): each request
from REQUESTER with an XRCETH right after the BTH, its reserved byte zero
and its SRQ SRQN; each response from the other end without one (an ACK is
BTH, AETH and ICRC, nothing more).  Each KIND (send, write, read, resp,
ack, atomic, atomic_ack) must be seen at least once.  Prints what it
counted; exits 1 on the first packet that is wrong, or a KIND missing.
"""
import socket
import struct
import sys
import zlib

KINDS = {
    "send": range(0x00, 0x06), "write": range(0x06, 0x0C),
    "read": [0x0C], "resp": range(0x0D, 0x11), "ack": [0x11],
    "atomic_ack": [0x12], "atomic": [0x13, 0x14],
}
KINDS["send"] = list(KINDS["send"]) + [0x16, 0x17]
REQUESTS = ("send", "write", "read", "atomic")


def kind_of(op):
    return next((k for k, ops in KINDS.items() if op in ops), None)


def icrc(ip, udp_bth_rest):
    """The ICRC of a packet whose IPv4 header is @ip (A17.3.3)."""
    mip = ip[:1] + b"\xff" + ip[2:8] + b"\xff" + ip[9:10] + b"\xff\xff" + \
        ip[12:20]
    u = udp_bth_rest
    mudp = u[:6] + b"\xff\xff"
    mbth = u[8:12] + b"\xff" + u[13:20]
    return zlib.crc32(b"\xff" * 8 + mip + mudp + mbth + u[20:])


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data)[0]
    end = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    if struct.unpack_from(end + "I", data, 20)[0] != 1:
        sys.exit("xrccap: not an Ethernet capture")
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack_from(end + "IIII", data, off)[2]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def main():
    path, requester, srqn = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
    want = sys.argv[4:]
    seen = dict.fromkeys(KINDS, 0)
    first = None
    for n, fr in enumerate(frames(path)):
        if len(fr) < 14 + 20 + 8 + 12 + 4 or fr[12:14] != b"\x08\x00":
            continue
        ip = fr[14:34]
        if ip[0] != 0x45 or ip[9] != socket.IPPROTO_UDP:
            continue
        udp_len = struct.unpack_from("!H", fr, 38)[0]
        if struct.unpack_from("!H", fr, 36)[0] != 4791:
            continue
        u = fr[34:34 + udp_len]
        src = socket.inet_ntoa(ip[12:16])
        op = u[8]
        where = "packet %d (opcode %#x from %s)" % (n, op, src)
        if len(u) != udp_len:
            sys.exit("xrccap: %s: cut short in the capture" % where)
        if struct.unpack_from("<I", u, udp_len - 4)[0] != icrc(ip, u[:-4]):
            sys.exit("xrccap: %s: bad ICRC" % where)
        if op == 0x81:
            continue  # a CNP: of no class
        if op & 0xE0 != 0xA0:
            sys.exit("xrccap: %s: not an XRC opcode" % where)
        kind = kind_of(op & 0x1F)
        if kind is None:
            sys.exit("xrccap: %s: not an opcode XRC has" % where)
        seen[kind] += 1
        if (src == requester) != (kind in REQUESTS):
            sys.exit("xrccap: %s: a %s from the wrong end" % (where, kind))
        if kind in REQUESTS:
            resv, srq = u[20], struct.unpack_from("!I", u, 20)[0] & 0xFFFFFF
            if resv or srq != srqn:
                sys.exit("xrccap: %s: XRCETH %s, want SRQ %#x" %
                         (where, u[20:24].hex(), srqn))
            if first is None:
                first = (n, fr[54:58].hex())
        elif kind == "ack" and udp_len != 8 + 12 + 4 + 4:
            sys.exit("xrccap: %s: an ACK of %d bytes" % (where, udp_len))
    print("xrccap: " + ", ".join("%s %d" % kv for kv in seen.items()))
    if first:
        print("xrccap: packet %d: XRCETH at frame bytes 54-57: %s" % first)
    missing = [k for k in want if not seen.get(k)]
    if missing:
        sys.exit("xrccap: none seen of: " + " ".join(missing))


if __name__ == "__main__":
    main()
