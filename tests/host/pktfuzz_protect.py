#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""pktfuzz's promise to the data-checked QPs (--protect), checked without
a network: the fuzz runs against a recording wire, and no packet it builds
for a protected QP may be one a correct responder acts on.

  tests/host/pktfuzz_protect.py [PACKETS [SEED...]]

A protected UC QP must get no UC request that passes the ICRC from the
peer's address with TVer 0, a full P_Key and its headers whole: any PSN
starts a UC message.  A protected RC QP must get no such RC request in
the PSN window [expected, expected + 0x10000).  The protected UC QP is
QPN 2, the number the victim's first QP gets and one the fuzz also draws
as an "arbitrary" QPN.  Prints the count of such packets per seed and
exits 1 if any seed had one."""
import os
import random
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "guest"))
import pktfuzz as pf  # noqa: E402

PEER, VICTIM = "10.76.1.2", "10.76.1.1"
UC_QPN, RC_QPN, RC_PSN = 2, 0x11, 0x123456


class RecordingWire(pf.Wire):
    """A Wire whose packets are kept, not sent."""

    def __init__(self):     # noqa: the parent's opens a packet socket
        self.eth4 = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b"\x08\x00"
        self.eth6 = self.eth4[:12] + b"\x86\xdd"
        self.cache = {}
        self.sent = self.bytes = self.dropped = self.toolong = 0
        self.dump = self.mute = False
        self.packets = []

    def roce(self, src, dst, bth, body, sport=0xC000, tos=0, bad_icrc=False):
        self.packets.append((src, bth, body, bad_icrc))
        return True

    def send(self, frame):  # raw frames: IP oddities, garbage
        return True


class QuietSniffer:
    """What the fuzz learned: the two protected QPs, a READ server."""

    def __init__(self):
        self.victim_mac = None
        self.qps = {}
        for qpn, kind, psn in ((UC_QPN, "UC", 0x42), (RC_QPN, "RC", RC_PSN),
                               (0x12, "RC", 0x200)):
            q = self.qps[qpn] = pf.QP(qpn)
            q.kind, q.resp_psn, q.req_psn = kind, psn, psn
            q.protected = qpn != 0x12
        self.qps[0x12].reth = (0x7f0000000000, 0x1234, 1 << 20)

    def poll(self, budget=0):
        return 0


def acted_on(src, bth, body, bad_icrc):
    """Why a correct responder would act on this packet, or None."""
    op, flags, pkey = bth[0], bth[1], int.from_bytes(bth[2:4], "big")
    qpn = int.from_bytes(bth[5:8], "big")
    psn = int.from_bytes(bth[8:12], "big") & pf.PSN_MASK
    pad = (flags >> 4) & 3
    if bad_icrc or src != pf.socket.inet_aton(PEER) or flags & 0xF or \
            (pkey & 0x7FFF) != 0x7FFF or len(body) < pf.ext_len(op) + pad:
        return None
    cls, o = op & 0xE0, op & 0x1F
    if qpn == UC_QPN and cls == pf.UC and o in pf.UC_OPS:
        return "a UC request (opcode 0x%02x)" % op
    d = (psn - RC_PSN) & pf.PSN_MASK
    if qpn == RC_QPN and cls == pf.RC and o in pf.REQ_OPS and d < 0x10000:
        return "an RC request (opcode 0x%02x) in the window" % op
    return None


def run(count, seed):
    args = types.SimpleNamespace(victim=VICTIM, peer=PEER)
    wire = RecordingWire()
    fz = pf.Fuzzer(args, wire, QuietSniffer(), random.Random(seed))
    out = sys.stdout
    sys.stdout = open(os.devnull, "w")      # run()'s progress lines
    try:
        fz.run(count, 1e9)
    finally:
        sys.stdout.close()
        sys.stdout = out
    bad = [(i, why) for i, p in enumerate(wire.packets)
           if (why := acted_on(*p))]
    print("# seed %d: %d packets built, %d a protected QP would act on%s" %
          (seed, len(wire.packets), len(bad),
           "".join("\n#   packet %d: %s" % b for b in bad[:5])))
    return not bad


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 30000
    seeds = [int(s) for s in sys.argv[2:]] or [1, 2, 3]
    ok = [run(count, s) for s in seeds]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
