#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""A RoCEv2 packet fuzzer: mutated packets with a correct ICRC, sent from
this host's NIC to a victim's UDP port 4791 (tests/guest/fuzz-wire.sh).

    pktfuzz.py fuzz --dev eth1 --victim IP --peer IP [--seed S] [--count N]
               [--time S] [--protect QPN,...] [--tm QPN]
    pktfuzz.py inject --dev eth1 --victim IP --peer IP --kind uc|rc
               --src IP [--count N]
    pktfuzz.py readflood --dev eth1 --victim IP --peer IP [--count N]
               [--stop-pid PID | --stop-comm NAME]
    pktfuzz.py dupack --dev eth1 --victim IP --peer IP [--count N]
               [--time S]
    pktfuzz.py blast --dev eth1 --victim IP --src IP --qpn QPN,...
               [--op OP] [--psns N] [--rounds N] [--time S] [--rate R]

--vid N tags every frame with VLAN id N (802.1Q).

Frames go out through an AF_PACKET socket, Ethernet header and all, so any
IP source can be written (spoofing) and no route is asked.  The same kind
of socket sniffs eth1: the victim's QPs, their types, the PSNs they expect
and the READ keys their peers use are learned from the genuine traffic
between the two hosts (--peer is the genuine peer's address).  The fuzz's
own frames carry TTL (hop limit) 77, which the sniffer skips.

fuzz: --count packets (bounded by --time seconds), drawn from a
seeded random generator (the seed is printed; --seed replays it, and
--skip N generates but does not send the first N, --dump prints each frame
sent, to cut a failing run down to a packet).  Categories: every BTH
opcode; truncated and oversized extension headers; pad counts; payloads of
0, MTU-1, MTU, MTU+1 and as long as the link takes; PSNs exact, +-1, far
ahead and behind, at the wrap; TVer, P_Key, M, AckReq, SE and reserved
bits; spoofed IPv4 and IPv6 sources; XRC requests whose XRCETH names the
SRQ learned, another or none; duplicate READ requests; forged ACKs,
NAKs of every syndrome, READ responses and atomic ACKs for the victim's
requesters; UD and QP1 datagrams; CNPs; IP-level oddities; garbage and
runts.  QPNs in --protect (the victim's data-checked connections) only get
what no correct responder may act on: malformed headers, and for RC,
requests outside the PSN window and responses outside the requester's.
A well-formed packet in the window is the peer's to send, spoofed or not
(the spoofed kind is `inject`'s).  --tm names an RC QP of the victim on a
tag-matching SRQ: most TMH-bearing SENDs go to it, at the PSN it expects.

inject: --count spoofed SEND ONLY packets of 1024 bytes of 0xee, from
--src, into the victim's UC (or RC) QP, each right after a genuine
message's last packet with the PSN the victim expects next.  Delivered,
the data-checking ping-pong there prints "invalid data".

readflood: learns an RC QP whose peer READs from it (RETH: va, rkey,
length), SIGSTOPs the local READ client (--stop-pid, or the newest
process named --stop-comm), waits until the READs it had posted have
drained (the engine runs the ring without it) so that the QP is idle,
sends --count duplicate READ requests far behind the expected PSN, counts
the READ response bytes the victim sends for them, and prints the
amplification (victim bytes per fuzz byte), failing above --max-amp.
SIGCONT at the end.  It fails as inconclusive when the sniffer dropped
frames while counting or the client did not stay stopped to the end
(its exit would have destroyed the victim's QP, which answers nothing).

dupack: after each of --count RC READ requests from --peer (or until 5 s
pass without one), a SEND ONLY from --peer with the PSN of the peer's
latest SEND or WRITE on that QP: a duplicate, which the victim does
not execute again.  No ACK of the victim's, to these or to its genuine
requests, may name a PSN of a READ (rxe's requester completes the READ
such an ACK names, without its data).  It fails if one does, or if it
sent no duplicate; that they reached the victim's responder, its
rcvd_duplicate_requests counter says.

blast: forged responses of opcode --op (a READ response MIDDLE by
default) for QPNs --qpn at --psns (16) PSNs spread over the PSN space,
from --src, for --time seconds, --rounds rounds or until SIGTERM, at
most --rate a second: whatever the requester's PSN, some are ahead of
it.  With --op 0x81, CNPs (their 16 reserved bytes): --psns 1 --rounds 1
sends one to each QPN.
"""
import argparse
import collections
import os
import random
import signal
import socket
import struct
import sys
import time
import zlib

ETH_P_ALL = 0x0003
SOL_PACKET = 263        # <linux/socket.h>
PACKET_STATISTICS = 6   # <linux/if_packet.h>: struct tpacket_stats
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
ROCE_PORT = 4791
MARK_TTL = 77           # the fuzz's frames: the sniffer skips them
MTU = 1024              # the victim's path MTU (the tests' -m 1024)
GSI_QKEY = 0x80010000
PSN_MASK = 0xFFFFFF
ONES8 = b"\xff" * 8

# opcodes (the low five bits; the class in the top three)
RC, UC, RD, UD, CNP_CLASS, XRC = 0x00, 0x20, 0x40, 0x60, 0x80, 0xA0
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM = 0, 1, 2, 3
SEND_ONLY, SEND_ONLY_IMM = 4, 5
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM = 6, 7, 8, 9
WRITE_ONLY, WRITE_ONLY_IMM, READ_REQ = 10, 11, 12
RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY, ACK, ATOMIC_ACK = \
    13, 14, 15, 16, 17, 18
CMP_SWAP, FETCH_ADD, SEND_LAST_INV, SEND_ONLY_INV = 19, 20, 22, 23
CNP = 0x81
REQ_OPS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 19, 20, 22, 23]
UC_OPS = list(range(0, 12))
RESP_OPS = [13, 14, 15, 16, 17, 18]


def ext_len(op):
    """Bytes of extension headers the IBA puts after the BTH for @op."""
    cls, o = op & 0xE0, op & 0x1F
    n = 0
    if cls == XRC:
        n += 4                                  # XRCETH
        cls = RC
    if cls == RD:
        n += 4 + 8                              # RDETH, DETH
        cls = RC
    if cls in (RC, UC):
        if o in (WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_IMM, READ_REQ):
            n += 16                             # RETH
        if o in (CMP_SWAP, FETCH_ADD):
            n += 28                             # AtomicETH
        if o in (RR_FIRST, RR_LAST, RR_ONLY, ACK, ATOMIC_ACK):
            n += 4                              # AETH
        if o == ATOMIC_ACK:
            n += 8                              # AtomicAckETH
        if o in (SEND_LAST_IMM, SEND_ONLY_IMM, WRITE_LAST_IMM,
                 WRITE_ONLY_IMM, SEND_LAST_INV, SEND_ONLY_INV):
            n += 4                              # ImmDt, IETH
        return n
    if cls == UD:
        return 8 + (4 if o == SEND_ONLY_IMM else 0)
    if op == CNP:
        return 16
    return 0


def ipcsum(h):
    s = sum(struct.unpack("!10H", h))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def eui64_ll(mac):
    """The fe80:: address a MAC's EUI-64 makes."""
    e = bytes([mac[0] ^ 2]) + mac[1:3] + b"\xff\xfe" + mac[3:6]
    return b"\xfe\x80" + b"\x00" * 6 + e


class Wire:
    """Builds frames (the ICRC computed incrementally over cached
    prefixes) and sends them."""

    def __init__(self, dev, smac, dmac):
        self.dev = dev
        self.eth4 = dmac + smac + struct.pack("!H", ETH_P_IP)
        self.eth6 = dmac + smac + struct.pack("!H", ETH_P_IPV6)
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.bind((dev, 0))
        # Our frames count against this buffer until the victim frees
        # them, and a send waits for room: beyond net.core.wmem_max (so
        # SO_SNDBUFFORCE, as root), for blast's frames that a victim
        # queues, whose work must not run until the blast is over.
        self.sock.setsockopt(socket.SOL_SOCKET, 32, 1 << 22)
        # PACKET_QDISC_BYPASS: the fuzz does not fill the qdisc that the
        # genuine peer's packets wait in (a full driver ring drops ours)
        self.sock.setsockopt(263, 20, 1)
        self.cache = {}
        self.sent = 0
        self.bytes = 0
        self.dropped = 0
        self.toolong = 0
        self.dump = False
        self.mute = False

    def head4(self, src, dst, udp_len, sport, tos):
        key = (src, dst, udp_len, sport, tos)
        h = self.cache.get(key)
        if h is None:
            ip_len = 20 + udp_len
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, ip_len, 0, 0x4000,
                             MARK_TTL, 17, 0, src, dst)
            ip = ip[:10] + struct.pack("!H", ipcsum(ip)) + ip[12:]
            udp = struct.pack("!HHHH", sport, ROCE_PORT, udp_len, 0)
            masked = ONES8 + struct.pack(
                "!BBHHHBBH4s4s", 0x45, 0xFF, ip_len, 0, 0x4000, 0xFF, 17,
                0xFFFF, src, dst) + udp[:6] + b"\xff\xff"
            h = (self.eth4 + ip + udp, zlib.crc32(masked))
            if len(self.cache) > 50000:
                self.cache.clear()
            self.cache[key] = h
        return h

    def head6(self, src, dst, udp_len, sport, tc):
        key = (src, dst, udp_len, sport, tc)
        h = self.cache.get(key)
        if h is None:
            ip = struct.pack("!IHBB16s16s", (6 << 28) | (tc << 20) | 0x12345,
                             udp_len, 17, MARK_TTL, src, dst)
            udp = struct.pack("!HHHH", sport, ROCE_PORT, udp_len, 0)
            masked = ONES8 + struct.pack("!IHBB16s16s", 0x6FFFFFFF, udp_len,
                                         17, 0xFF, src, dst) + \
                udp[:6] + b"\xff\xff"
            h = (self.eth6 + ip + udp, zlib.crc32(masked))
            if len(self.cache) > 50000:
                self.cache.clear()
            self.cache[key] = h
        return h

    def roce(self, src, dst, bth, body, sport=0xC000, tos=0, bad_icrc=False):
        """A RoCEv2 packet: BTH (12 bytes) and body, then the ICRC."""
        udp_len = 8 + len(bth) + len(body) + 4
        if len(src) == 4:
            head, crc = self.head4(src, dst, udp_len, sport, tos)
        else:
            head, crc = self.head6(src, dst, udp_len, sport, tos)
        mbth = bth[:4] + b"\xff" + bth[5:]
        crc = zlib.crc32(body, zlib.crc32(mbth, crc))
        if bad_icrc:
            crc ^= 1 << (crc & 31)
        return self.send(head + bth + body + struct.pack("<I", crc))

    def send(self, frame):
        if self.mute:
            return False
        if self.dump:
            print("frame %d %s" % (self.sent, frame.hex()))
        while True:
            try:
                self.sock.send(frame)
                break
            except OSError as e:        # ENOBUFS: the qdisc is full
                if e.errno == 90:       # EMSGSIZE: longer than the MTU
                    self.toolong += 1
                    return False
                if e.errno not in (105, 11):
                    raise
                self.dropped += 1
                time.sleep(0.001)
        self.sent += 1
        self.bytes += len(frame)
        return True


class QP:
    def __init__(self, qpn):
        self.qpn = qpn
        self.kind = None            # 'RC', 'UC', 'UD', 'XRC' (a TGT or INI)
        self.xsrq = None            # XRC: an SRQ its peer's requests name
        self.resp_psn = None        # the PSN its responder expects next
        self.req_psn = None         # a PSN its requester has in flight
        self.qkey = None
        self.reth = None            # (va, rkey, len) a peer READs with
        self.wreth = None           # (va, rkey, len) a peer WRITEs with
        self.sw_psn = None          # the PSN of the latest SEND or WRITE
        self.reads = collections.deque(maxlen=4096)  # (PSN, packets)
        self.protected = False
        self.last_op = None
        self.pkts = 0

    def __repr__(self):
        f = lambda v: "-" if v is None else "0x%06x" % v
        s = "QPN 0x%06x %s resp_psn %s req_psn %s pkts %d" % (
            self.qpn, self.kind, f(self.resp_psn), f(self.req_psn), self.pkts)
        if self.qkey is not None:
            s += " qkey 0x%x" % self.qkey
        if self.xsrq is not None:
            s += " xrc_srq 0x%x" % self.xsrq
        if self.reth:
            s += " read(va 0x%x rkey 0x%x len %d)" % self.reth
        if self.wreth:
            s += " write(va 0x%x rkey 0x%x len %d)" % self.wreth
        if self.protected:
            s += " protected"
        return s


class Sniffer:
    """The genuine traffic between the victim and its peer, from eth1."""

    def __init__(self, dev, victim, peer):
        self.victim = socket.inet_aton(victim)
        self.peer = socket.inet_aton(peer)
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                  socket.htons(ETH_P_ALL))
        try:    # past net.core.rmem_max: root may
            self.sock.setsockopt(socket.SOL_SOCKET, 33, 1 << 25)
        except OSError:             # SO_RCVBUFFORCE
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                                 1 << 25)
        self.sock.bind((dev, 0))
        self.sock.setblocking(False)
        self.qps = {}
        self.victim_mac = None
        self.on_victim_frame = None     # readflood's counter
        self.last_req = None            # (qp, op, psn) of the latest request
        self.frames = 0

    def qp(self, qpn):
        q = self.qps.get(qpn)
        if q is None:
            q = self.qps[qpn] = QP(qpn)
        return q

    def poll(self, budget=4096):
        n = 0
        while n < budget:
            try:
                f = self.sock.recv(2048)
            except BlockingIOError:
                break
            n += 1
            self.parse(f)
        return n

    def drops(self):
        """Frames the socket dropped since the last call (it resets)."""
        st = self.sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
        return struct.unpack("II", st)[1]

    def watch(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            if not self.poll():
                time.sleep(0.002)

    def parse(self, f):
        if len(f) < 14 + 20 + 8 + 12 or f[12:14] != b"\x08\x00":
            return
        ip = f[14:34]
        if ip[0] != 0x45 or ip[9] != 17 or ip[8] == MARK_TTL:
            return
        src, dst = ip[12:16], ip[16:20]
        if f[36:38] != b"\x12\xb7":         # UDP destination 4791
            return
        self.frames += 1
        bth = f[42:54]
        op = bth[0]
        qpn = int.from_bytes(bth[5:8], "big")
        psn = int.from_bytes(bth[9:12], "big")
        ext = f[54:]
        if src == self.victim and dst == self.peer:
            self.victim_mac = f[6:12]
            if self.on_victim_frame:
                self.on_victim_frame(op, psn, f)
            return
        if src != self.peer or dst != self.victim:
            return
        cls, o = op & 0xE0, op & 0x1F
        if cls == UD and o in (SEND_ONLY, SEND_ONLY_IMM):
            q = self.qp(qpn)
            q.kind = "UD"
            q.qkey = int.from_bytes(ext[0:4], "big")
            q.pkts += 1
            return
        if cls not in (RC, UC, XRC) or op == CNP:
            return
        q = self.qp(qpn)
        q.kind = {RC: "RC", UC: "UC", XRC: "XRC"}[cls]
        q.pkts += 1
        q.last_op = o
        if cls != UC and o in RESP_OPS:
            q.req_psn = psn
            return
        if cls == XRC and len(ext) >= 4:
            q.xsrq = int.from_bytes(ext[1:4], "big")
            ext = ext[4:]
        npkts = 1
        if o == READ_REQ and len(ext) >= 16:
            va, rkey, ln = struct.unpack("!QII", ext[:16])
            q.reth = (va, rkey, ln)
            npkts = max(1, (ln + MTU - 1) // MTU)
            q.reads.append((psn, npkts))
        elif o in (WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_IMM) and \
                len(ext) >= 16:
            q.wreth = struct.unpack("!QII", ext[:16])
        if o <= WRITE_ONLY_IMM:
            q.sw_psn = psn
        q.resp_psn = (psn + npkts) & PSN_MASK
        self.last_req = (q, o, psn)


class Fuzzer:
    def __init__(self, args, wire, sniff, rng):
        self.a = args
        self.w = wire
        self.s = sniff
        self.r = rng
        self.victim = socket.inet_aton(args.victim)
        self.peer = socket.inet_aton(args.peer)
        vmac = sniff.victim_mac or wire.eth4[0:6]
        self.victim6 = eui64_ll(vmac)
        self.peer6 = eui64_ll(wire.eth4[6:12])
        self.counts = {}
        self.sweep = 0
        self.cats = [
            (self.c_opcode, 10), (self.c_ext_trunc, 6), (self.c_ext_over, 4),
            (self.c_pad, 4), (self.c_len, 5), (self.c_psn, 8),
            (self.c_bth, 6), (self.c_spoof, 6), (self.c_resp, 10),
            (self.c_dupread, 5), (self.c_atomic, 3), (self.c_ud, 5),
            (self.c_qp1, 3), (self.c_cnp, 2), (self.c_ip, 3),
            (self.c_garbage, 4), (self.c_valid_icrc_garbage, 3),
            (self.c_bad_icrc, 2), (self.c_tmh, 5),
        ]
        self.table = []
        for fn, wgt in self.cats:
            self.table += [fn] * wgt

    # --- targets -----------------------------------------------------
    def live(self, kind=None):
        return [q for q in self.s.qps.values()
                if q.kind and (kind is None or q.kind == kind)]

    def target(self, kind=None):
        """A learned QP (maybe), or an arbitrary QPN."""
        r = self.r.random()
        qs = self.live(kind)
        if qs and r < 0.75:
            return self.r.choice(qs)
        qpn = self.r.choice([0, 1, 2, 0xFFFFFF, 0x800000,
                             self.r.randrange(1 << 24)])
        # an arbitrary QPN may be a real QP's (the victim's first is 2):
        # then it is that QP, protection and all
        q = self.s.qps.get(qpn)
        if q is None:
            q = QP(qpn)
            q.kind = kind
        return q

    def stranger(self):
        """A QPN none of the QPs learned or protected has."""
        while True:
            qpn = self.r.randrange(3, 1 << 24)
            if qpn not in self.s.qps:
                return QP(qpn)

    def psn_near(self, base):
        if base is None:
            base = self.r.randrange(1 << 24)
        r = self.r.randrange(10)
        if r == 0:
            d = 0
        elif r == 1:
            d = -1
        elif r == 2:
            d = 1
        elif r == 3:
            d = self.r.randrange(2, 0x800000)          # ahead
        elif r == 4:
            d = -self.r.randrange(2, 0x800000)         # behind
        elif r == 5:
            return self.r.choice([0, PSN_MASK, 0x7FFFFF, 0x800000])
        elif r == 6:
            d = 0x800000                               # exactly half
        elif r == 7:
            d = self.r.randrange(-64, 64)
        else:
            return self.r.randrange(1 << 24)
        return (base + d) & PSN_MASK

    def safe_psn(self, q, op, psn, wellformed):
        """Keep a protected QP's window clear of well-formed packets.
        Returns the PSN to use, or None to retarget.  The PSNs learned
        lag the wire by up to a poll (256 packets of the fuzz), so
        "ahead" keeps a margin of 0x10000 from them."""
        if not q.protected or not wellformed:
            return psn
        o = op & 0x1F
        r = self.r
        if q.kind == "UC":
            return None                 # any PSN starts a UC message
        if o in RESP_OPS:
            base = q.req_psn
            if base is None:
                return None
            d = ((psn - base + 0x800000) & PSN_MASK) - 0x800000
            if o == ACK:
                ok = d <= -0x10000 or d >= 0x10000     # ahead: not sent
            else:
                # a READ response or atomic ACK ahead completes the
                # requester's WQEs (lost-send's defect): behind only
                ok = d <= -0x10000
            if not ok:
                psn = (base - 0x10000 - r.randrange(0x100000)) & PSN_MASK
            return psn
        base = q.resp_psn
        if base is None:
            return None
        d = ((psn - base + 0x800000) & PSN_MASK) - 0x800000
        if 0 <= d < 0x10000:
            if r.random() < 0.5:
                psn = base - 1 - r.randrange(0x1000)        # a duplicate
            else:
                psn = base + 0x10000 + r.randrange(0x100000)
            psn &= PSN_MASK
            d = ((psn - base + 0x800000) & PSN_MASK) - 0x800000
        if o in (CMP_SWAP, FETCH_ADD) and -64 < d < 0:
            psn = (base - 0x1000) & PSN_MASK     # clear of kept results
        return psn

    # --- fields ------------------------------------------------------
    def reth(self, q):
        r = self.r
        va, rkey, ln = (q.reth or q.wreth or
                        (r.randrange(1 << 48), r.randrange(1 << 32), 65536))
        if r.random() < 0.9:
            ln = min(ln, r.choice([0, 1, 8, MTU]))   # a READ of 1 packet
        c = r.randrange(8)
        if c == 0:
            va = r.choice([0, (1 << 64) - 1, (1 << 64) - 4096, va + ln,
                           va + ln - 1, va - 1])
        elif c == 1:
            rkey = r.choice([0, 0xFFFFFFFF, rkey ^ 1, rkey + 0x100,
                             r.randrange(1 << 32)])
        elif c == 2:
            ln = r.choice([0, 1, MTU - 1, MTU, MTU + 1, ln + 1, 1 << 31,
                           0xFFFFFFFF, (1 << 32) - MTU])
        elif c == 3:
            va, ln = (1 << 64) - 8, 4096          # wraps the address space
        return struct.pack("!QII", va & ((1 << 64) - 1), rkey & 0xFFFFFFFF,
                           ln & 0xFFFFFFFF)

    def ext_bytes(self, op, q, n):
        """@n bytes of plausible extension headers for @op."""
        o, r = op & 0x1F, self.r
        out = b""
        if (op & 0xE0) == XRC and o not in RESP_OPS:
            # the XRCETH: the SRQ the peer names, another, none, garbage
            srq = q.xsrq if q.xsrq is not None and r.random() < 0.7 else \
                r.choice([0, 1, 2, 0xFFFFFF, r.randrange(1 << 24)])
            if r.random() < 0.1:
                srq |= r.randrange(1, 256) << 24       # reserved bits
            out = struct.pack("!I", srq) + self.ext_bytes(RC | o, q, n - 4)
        elif (op & 0xE0) == XRC:
            out = self.ext_bytes(RC | o, q, n)
        elif (op & 0xE0) in (RC, UC):
            if o in (WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_IMM, READ_REQ):
                out += self.reth(q)
            if o in (CMP_SWAP, FETCH_ADD):
                va = (q.reth or (r.randrange(1 << 48), 0, 0))[0]
                va += r.choice([0, 1, 4, 8, 65536, -8])
                rkey = (q.reth or (0, r.randrange(1 << 32), 0))[1]
                out += struct.pack("!QIQQ", va & ((1 << 64) - 1), rkey,
                                   r.randrange(1 << 64), r.randrange(1 << 64))
            if o in RESP_OPS and o != RR_MIDDLE:
                out += struct.pack("!I", (r.randrange(256) << 24) |
                                   r.randrange(1 << 24))
            if o == ATOMIC_ACK:
                out += struct.pack("!Q", r.randrange(1 << 64))
            if o in (SEND_LAST_INV, SEND_ONLY_INV):
                out += struct.pack("!I", (q.reth or q.wreth or
                                          (0, r.randrange(1 << 32), 0))[1])
        elif (op & 0xE0) == UD:
            qk = q.qkey if q.qkey is not None and r.random() < 0.7 else \
                r.choice([GSI_QKEY, 0, 0xFFFFFFFF, r.randrange(1 << 32)])
            out += struct.pack("!II", qk, r.randrange(1 << 24))
        if len(out) < n:
            out += r.randbytes(n - len(out))
        return out[:n]

    def payload(self, n):
        return b"\xa5" * n if n < 4096 else b"\xa5" * 4096

    def bth(self, op, q, psn, pad=0, flags=None, pkey=0xFFFF, ackreq=None,
            resv=0):
        if flags is None:
            flags = pad << 4
            if self.r.random() < 0.1:
                flags |= 0x80                         # SE
        if ackreq is None:
            ackreq = self.r.random() < 0.3
        return struct.pack("!BBHII", op, flags, pkey,
                           (resv << 24) | (q.qpn & 0xFFFFFF),
                           (0x80000000 if ackreq else 0) | (psn & PSN_MASK))

    def maxlen(self, v6=False):
        """The most RoCE body bytes a 1500-byte IP packet carries."""
        return 1500 - (40 if v6 else 20) - 8 - 12 - 4

    def emit(self, op, q, psn, body, src=None, wellformed=True, **kw):
        psn2 = self.safe_psn(q, op, psn, wellformed)
        if psn2 is None:
            q = self.stranger()
            psn2 = psn
        bth = self.bth(op, q, psn2, **kw)
        return self.send(bth, body, src)

    def send(self, bth, body, src=None, bad_icrc=False, tos=0):
        v6 = src is not None and len(src) == 16
        dst = self.victim6 if v6 else self.victim
        if src is None:
            src = self.peer
        if self.r.random() < 0.05:
            tos = self.r.choice([3, 2, 1, 0xB8])    # CE: draws a CNP
        sport = 0xC000 | self.r.randrange(16)
        self.w.roce(src, dst, bth, body, sport=sport, tos=tos,
                    bad_icrc=bad_icrc)

    # --- categories ------------------------------------------------------
    def valid_op(self, kind):
        if kind == "UC":
            return UC | self.r.choice(UC_OPS)
        if kind == "XRC":
            return XRC | self.r.choice(REQ_OPS)
        return RC | self.r.choice(REQ_OPS)

    def c_opcode(self):
        """Every opcode value in turn, its headers as the IBA has them."""
        op = self.sweep & 0xFF
        self.sweep += 1
        q = self.target()
        n = ext_len(op)
        pl = self.r.choice([0, 4, 64, MTU])
        supported = ((op & 0xE0) in (RC, UC, XRC) and (op & 0x1F) in
                     (REQ_OPS + RESP_OPS)) or op in (0x64, 0x65, CNP)
        psn = self.psn_near(q.resp_psn)
        return self.emit(op, q, psn, self.ext_bytes(op, q, n) +
                         self.payload(pl), wellformed=supported,
                         pad=(-pl) & 3 if pl else 0)

    def ext_op(self):
        return self.r.choice([RC | WRITE_FIRST, RC | WRITE_ONLY,
                              RC | WRITE_ONLY_IMM, RC | READ_REQ,
                              RC | CMP_SWAP, RC | FETCH_ADD,
                              RC | SEND_LAST_IMM, RC | SEND_ONLY_IMM,
                              RC | SEND_LAST_INV, RC | SEND_ONLY_INV,
                              UC | WRITE_ONLY, UC | WRITE_FIRST,
                              UC | SEND_ONLY_IMM, UC | WRITE_ONLY_IMM,
                              RC | RR_FIRST, RC | RR_LAST, RC | RR_ONLY,
                              RC | ACK, RC | ATOMIC_ACK, 0x64, 0x65, CNP,
                              XRC | SEND_ONLY, XRC | WRITE_FIRST,
                              XRC | READ_REQ, XRC | FETCH_ADD,
                              XRC | SEND_ONLY_INV, XRC | RR_ONLY,
                              XRC | ACK])

    def c_ext_trunc(self):
        """The packet ends inside its extension headers."""
        op = self.ext_op()
        q = self.target()
        n = ext_len(op)
        cut = self.r.randrange(n)
        pad = self.r.randrange(4)
        return self.emit(op, q, self.psn_near(q.resp_psn or q.req_psn),
                         self.ext_bytes(op, q, n)[:cut], wellformed=False,
                         pad=pad)

    def c_ext_over(self):
        """Headers and a payload that is the wrong length for them."""
        op = self.ext_op()
        q = self.target()
        n = ext_len(op) + self.r.choice([1, 2, 3, 4, 8, 16, 28, 64, 200])
        return self.emit(op, q, self.psn_near(q.resp_psn or q.req_psn),
                         self.ext_bytes(op, q, n), pad=self.r.randrange(4))

    def c_pad(self):
        """A pad count larger than what follows the headers."""
        q = self.target()
        op = self.valid_op(q.kind) if self.r.random() < 0.7 else \
            self.r.choice([0x64, 0x65, RC | RR_ONLY, RC | RR_MIDDLE,
                           RC | ACK])
        n = ext_len(op)
        pl = self.r.randrange(4)
        return self.emit(op, q, self.psn_near(q.resp_psn), self.ext_bytes(
            op, q, n) + self.payload(pl), pad=self.r.randrange(pl, 4) or 3)

    def c_len(self):
        """Payloads against the path MTU."""
        q = self.target()
        op = self.valid_op(q.kind) if self.r.random() < 0.7 else \
            self.r.choice([RC | RR_FIRST, RC | RR_MIDDLE, RC | RR_LAST,
                           RC | RR_ONLY, 0x64])
        n = ext_len(op)
        room = self.maxlen() - n
        pl = self.r.choice([0, 1, MTU - 1, MTU, MTU + 1, MTU + 4, room,
                            room - 3, self.r.randrange(room)])
        return self.emit(op, q, self.psn_near(q.resp_psn or q.req_psn),
                         self.ext_bytes(op, q, n) + self.payload(pl),
                         pad=(-pl) & 3)

    def tmh(self, n):
        """@n payload bytes that begin as a tag-matching header: each TMH
        opcode or a stray one, a tag the victim's TM SRQ has posted
        (tm.c's hold) or any, and for some an RVH of any address, rkey
        and length."""
        r = self.r
        op = r.choice([0, 1, 1, 2, 3, 3, r.randrange(256)])
        tag = r.choice([0x40 + r.randrange(8), r.randrange(1 << 64)])
        out = struct.pack("!BBHIQ", op, 0, r.choice([0, 0xFFFF]),
                          r.randrange(1 << 32), tag)
        if r.random() < 0.6:
            out += struct.pack("!QII", r.randrange(1 << 64),
                               r.randrange(1 << 32),
                               r.choice([0, 1, 6000, 0xFFFFFFFF,
                                         r.randrange(1 << 32)]))
        out += r.randbytes(max(0, n - len(out)))
        return out[:n]

    def c_tmh(self):
        """SENDs to RC QPs whose payload is a TMH, and an RVH, of every
        length around theirs: a QP on a tag-matching SRQ parses them at a
        message's first packet."""
        q = self.target("RC")
        psn = self.psn_near(q.resp_psn)
        if getattr(self.a, "tm", 0) and self.r.random() < 0.8:
            q = self.s.qp(self.a.tm)
            q.kind = "RC"
            if q.resp_psn is not None and self.r.random() < 0.8:
                psn = q.resp_psn
        op = RC | self.r.choice([SEND_ONLY, SEND_ONLY, SEND_ONLY_IMM,
                                 SEND_FIRST, SEND_MIDDLE, SEND_LAST])
        n = ext_len(op)
        pl = self.r.choice([0, 1, 15, 16, 17, 31, 32, 33, 48, 64, 65, 100,
                            MTU, MTU - 7])
        return self.emit(op, q, psn,
                         self.ext_bytes(op, q, n) + self.tmh(pl),
                         pad=(-pl) & 3)

    def c_psn(self):
        """Well-formed requests at PSNs around the window."""
        q = self.target()
        op = self.valid_op(q.kind)
        n = ext_len(op)
        pl = self.r.choice([0, 8, MTU])
        return self.emit(op, q, self.psn_near(q.resp_psn),
                         self.ext_bytes(op, q, n) + self.payload(pl),
                         pad=(-pl) & 3)

    def c_bth(self):
        """TVer, P_Key, MigReq, AckReq, SE and the reserved bits."""
        q = self.target()
        op = self.valid_op(q.kind) if self.r.random() < 0.8 else 0x64
        n = ext_len(op)
        pl = self.r.choice([0, 16])
        c = self.r.randrange(6)
        flags = self.r.randrange(256) & 0xF0
        pkey = 0xFFFF
        wellformed = True
        if c == 0:
            flags = (flags & 0xCF) | self.r.randrange(1, 16)    # TVer
            wellformed = False
        elif c == 1:
            pkey = self.r.choice([0, 0x7FFE, 0x8000, 0x1234, 0xFFFE, 0x7FFF,
                                  self.r.randrange(1 << 16)])
            wellformed = (pkey & 0x7FFF) == 0x7FFF
        elif c == 2:
            flags |= 0x40                                       # MigReq
        return self.emit(op, q, self.psn_near(q.resp_psn),
                         self.ext_bytes(op, q, n) + self.payload(pl),
                         wellformed=wellformed, flags=flags, pkey=pkey,
                         resv=self.r.choice([0, 0, 0x40, 0xFF, 0x80]),
                         ackreq=self.r.random() < 0.5)

    def spoof_src(self):
        r = self.r
        if r.random() < 0.3:
            return b"\xfe\x80" + b"\x00" * 6 + r.randbytes(8)
        return r.choice([
            bytes([10, 76, 1, r.choice([3, 77, 99, 254])]),
            bytes([10, 76, 2, r.randrange(1, 255)]),
            bytes([192, 0, 2, r.randrange(1, 255)]),
            bytes([127, 0, 0, 1]), bytes([0, 0, 0, 0]),
            bytes([224, 0, 0, 1]), bytes([255, 255, 255, 255]),
            self.victim, r.randbytes(4)])

    def c_spoof(self):
        """Spoofed IPv4 and IPv6 sources, the rest as c_psn's."""
        q = self.target()
        op = self.valid_op(q.kind) if self.r.random() < 0.8 else \
            self.r.choice([RC | ACK, RC | RR_ONLY, 0x64, CNP])
        n = ext_len(op)
        pl = self.r.choice([0, 32, MTU])
        psn = self.psn_near(q.resp_psn if (op & 0x1F) not in RESP_OPS
                            else q.req_psn)
        return self.emit(op, q, psn, self.ext_bytes(op, q, n) +
                         self.payload(pl), src=self.spoof_src(),
                         pad=(-pl) & 3)

    def c_resp(self):
        """Forged ACKs, NAKs (every syndrome), READ responses and atomic
        ACKs for the victim's requesters."""
        qs = [q for q in self.live("RC") + self.live("XRC")
              if q.req_psn is not None]
        q = self.r.choice(qs) if qs and self.r.random() < 0.8 else \
            self.target("RC")
        op = (XRC if q.kind == "XRC" else RC) | self.r.choice(RESP_OPS)
        o = op & 0x1F
        psn = self.psn_near(q.req_psn)
        body = b""
        if o != RR_MIDDLE:
            syn = self.r.randrange(256) if self.r.random() < 0.5 else \
                self.r.choice([0x1F, 0x00, 0x20, 0x3F, 0x60, 0x61, 0x62,
                               0x63, 0x64, 0x7F, 0x80, 0xE0])
            body += struct.pack("!I", (syn << 24) | self.r.randrange(1 << 24))
        if o == ATOMIC_ACK:
            body += struct.pack("!Q", self.r.randrange(1 << 64))
        if o in (RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY):
            pl = self.r.choice([0, 1, MTU - 1, MTU, MTU + 1, 64])
            body += self.payload(pl)
        return self.emit(op, q, psn, body, pad=(-len(body)) & 3 if
                         self.r.random() < 0.8 else self.r.randrange(4),
                         ackreq=False)

    def c_dupread(self):
        """READ requests behind the expected PSN, for a large MR."""
        qs = [q for q in self.live("RC") if q.reth]
        q = self.r.choice(qs) if qs else self.target("RC")
        base = q.resp_psn if q.resp_psn is not None else \
            self.r.randrange(1 << 24)
        psn = (base - self.r.choice([1, 2, 64, 1000, 0x10000, 0x7FFFFF])) \
            & PSN_MASK
        va, rkey, ln = q.reth or (0, 0, 0)
        if self.r.random() < 0.9:
            ln = min(ln, MTU)       # the flood of long READs is readflood's
        if self.r.random() < 0.3:
            reth = self.reth(q)
        else:
            reth = struct.pack("!QII", va, rkey, ln)
        return self.emit(RC | READ_REQ, q, psn, reth, ackreq=False)

    def c_atomic(self):
        q = self.target("RC")
        op = RC | self.r.choice([CMP_SWAP, FETCH_ADD])
        return self.emit(op, q, self.psn_near(q.resp_psn),
                         self.ext_bytes(op, q, 28) +
                         (b"" if self.r.random() < 0.8 else b"\0" * 8))

    def c_ud(self):
        """Datagrams for the victim's UD QPs."""
        q = self.target("UD")
        op = self.r.choice([0x64, 0x65])
        n = ext_len(op)
        src = self.spoof_src() if self.r.random() < 0.3 else None
        room = self.maxlen(src is not None and len(src) == 16) - n
        pl = self.r.choice([0, 1, 40, MTU, MTU + 1, 2048 - 64, room])
        pl = min(pl, room)
        return self.emit(op, q, self.r.randrange(1 << 24),
                         self.ext_bytes(op, q, n) + self.payload(pl),
                         src=src, pad=(-pl) & 3, ackreq=False)

    def c_qp1(self):
        """MADs for QP1 (GSI): CM and others, headers mostly garbage."""
        r = self.r
        q = QP(1)
        q.qkey = GSI_QKEY if r.random() < 0.8 else r.randrange(1 << 32)
        mad = struct.pack("!BBBBHHQHHI", 1, r.choice([7, 3, 4, 0x81, 1,
                                                      r.randrange(256)]),
                          r.choice([2, 1, 0]), r.choice([3, 1, 2, 6,
                                                         r.randrange(256)]),
                          0, 0, r.randrange(1 << 64),
                          r.choice([0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16,
                                    0x17, 0x18, 0x19, r.randrange(1 << 16)]),
                          0, 0)
        mad += r.randbytes(r.choice([232, 232, 0, 10, 500]))
        op = 0x64
        body = self.ext_bytes(op, q, 8) + mad
        src = self.spoof_src() if r.random() < 0.3 else None
        return self.emit(op, q, r.randrange(1 << 24), body, src=src,
                         pad=(-len(mad)) & 3, ackreq=False)

    def c_cnp(self):
        q = self.target("RC")
        return self.emit(CNP, q, self.r.randrange(1 << 24),
                         b"\0" * self.r.choice([0, 4, 15, 16, 17, 64]),
                         ackreq=False, resv=self.r.choice([0x40, 0]))

    def c_ip(self):
        """IP options, lengths that disagree, fragments, IPv6."""
        r = self.r
        q = self.target()
        op = self.valid_op(q.kind)
        n = ext_len(op)
        body = self.ext_bytes(op, q, n) + self.payload(r.choice([0, 64]))
        psn = self.safe_psn(q, op, self.psn_near(q.resp_psn), True)
        if psn is None:
            q, psn = self.stranger(), 0
        bth = self.bth(op, q, psn)
        c = r.randrange(5)
        if c == 4:      # IPv6, the peer's link-local address
            return self.send(bth, body, src=self.peer6)
        udp_len = 8 + 12 + len(body) + 4
        ihl, tot, frag, ulen = 5, 20 + udp_len, 0x4000, udp_len
        if c == 0:
            ihl = 6
        elif c == 1:
            ulen = r.choice([0, 7, 8, 20, udp_len - 1, udp_len + 1,
                             udp_len + 100, 0xFFFF])
        elif c == 2:
            tot = r.choice([20, 28, tot - 1, tot + 1, tot + 100])
        else:
            frag = r.choice([0x2000, 0x2001, 0x0001, 0x3FFF])
        opts = b"\x01\x01\x01\x00" if ihl == 6 else b""
        tot += len(opts)
        src = self.peer
        ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tot & 0xFFFF,
                         r.randrange(1 << 16), frag, MARK_TTL, 17, 0, src,
                         self.victim) + opts
        s = sum(struct.unpack("!%dH" % (len(ip) // 2), ip))
        s = (s & 0xFFFF) + (s >> 16)
        s = (s & 0xFFFF) + (s >> 16)
        ip = ip[:10] + struct.pack("!H", ~s & 0xFFFF) + ip[12:]
        udp = struct.pack("!HHHH", 0xC000, ROCE_PORT, ulen & 0xFFFF, 0)
        masked = ONES8 + ip[:1] + b"\xff" + ip[2:8] + b"\xff" + ip[9:10] + \
            b"\xff\xff" + ip[12:] + udp[:6] + b"\xff\xff"
        mbth = bth[:4] + b"\xff" + bth[5:]
        crc = zlib.crc32(masked + mbth + body)
        self.w.send(self.w.eth4 + ip + udp + bth + body +
                    struct.pack("<I", crc))

    def c_garbage(self):
        """Random bytes and runts to UDP 4791 (their ICRC is wrong)."""
        n = self.r.choice([0, 1, 3, 8, 11, 12, 15, 16, 19, 20,
                           self.r.randrange(80)])
        data = self.r.randbytes(n)
        udp_len = 8 + n
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000,
                         MARK_TTL, 17, 0, self.peer, self.victim)
        ip = ip[:10] + struct.pack("!H", ipcsum(ip)) + ip[12:]
        self.w.send(self.w.eth4 + ip + struct.pack(
            "!HHHH", 0xC000, ROCE_PORT, udp_len, 0) + data)

    def c_valid_icrc_garbage(self):
        """A random BTH and body that pass the ICRC."""
        q = self.target()
        bth = bytearray(self.r.randbytes(12))
        if self.r.random() < 0.5:
            bth[1] &= 0xF0                      # TVer 0
            bth[2:4] = b"\xff\xff"
        if self.r.random() < 0.5:
            bth[5:8] = q.qpn.to_bytes(3, "big")
        op = bth[0]
        if (op & 0xE0) in (RC, UC, XRC) and q.protected:
            bth[1] |= 1                         # TVer 1: never in a window
        body = self.r.randbytes(self.r.choice([0, 1, 2, 3, 4, 8, 16, 28, 40,
                                               self.r.randrange(200)]))
        return self.send(bytes(bth), body)

    def c_bad_icrc(self):
        """A well-formed packet whose ICRC is wrong: never acted on."""
        q = self.target()
        op = self.valid_op(q.kind)
        n = ext_len(op)
        bth = self.bth(op, q, self.psn_near(q.resp_psn))
        return self.send(bth, self.ext_bytes(op, q, n) + self.payload(64),
                         bad_icrc=True)

    def run(self, count, seconds, skip=0):
        t0 = time.time()
        end = t0 + seconds
        i = 0
        next_poll = 0
        while i < count:
            if i >= next_poll:
                self.s.poll()
                next_poll = i + 256
                if time.time() > end:
                    print("pktfuzz: time cap of %d s reached" % seconds)
                    break
            fn = self.r.choice(self.table)
            self.w.mute = i < skip
            fn()
            name = fn.__name__[2:]
            self.counts[name] = self.counts.get(name, 0) + 1
            i += 1
            if i % 20000 == 0:
                dt = time.time() - t0
                print("pktfuzz: %d packets, %.0f s, %.0f pkt/s" %
                      (i, dt, i / dt), flush=True)
        return i, time.time() - t0


def pid_of(comm):
    """The newest process whose name is @comm, or None."""
    best = None
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/comm" % d) as f:
                    if f.read().strip() == comm:
                        best = max(best or 0, int(d))
            except OSError:
                pass
    return best


def proc_state(pid):
    """The state letter of @pid (T: stopped), or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def rx_bytes(dev):
    with open("/sys/class/net/%s/statistics/rx_bytes" % dev) as f:
        return int(f.read())


def find_mac(dev):
    with open("/sys/class/net/%s/address" % dev) as f:
        return mac_bytes(f.read().strip())


def arp_mac(ip):
    try:
        with open("/proc/net/arp") as f:
            for line in f.readlines()[1:]:
                p = line.split()
                if p[0] == ip and p[3] != "00:00:00:00:00:00":
                    return mac_bytes(p[3])
    except OSError:
        pass
    return None


def learn(args, sniff, seconds, want=None):
    """Sniff until @want(sniff) holds or @seconds pass."""
    end = time.time() + seconds
    while time.time() < end:
        if not sniff.poll():
            time.sleep(0.005)
        if want and want(sniff):
            return True
    return want is None


def setup(args):
    sniff = Sniffer(args.dev, args.victim, args.peer)
    smac = find_mac(args.dev)
    dmac = arp_mac(args.victim)
    if dmac is None:
        learn(args, sniff, 10, lambda s: s.victim_mac is not None)
        dmac = sniff.victim_mac
    if dmac is None:
        sys.exit("pktfuzz: no MAC for %s" % args.victim)
    # what fuzz-wire.sh waits for before it starts the traffic to sniff
    print("pktfuzz: sniffing on %s" % args.dev, flush=True)
    wire = Wire(args.dev, smac, dmac)
    if args.vid:
        # --vid: an 802.1Q tag after the MACs, for a VLAN the victim may
        # not be on (tests/guest/twohost/underlay.sh)
        tag = struct.pack("!HH", 0x8100, args.vid)
        wire.eth4 = wire.eth4[:12] + tag + wire.eth4[12:]
        wire.eth6 = wire.eth6[:12] + tag + wire.eth6[12:]
    return sniff, wire


def cmd_fuzz(args):
    seed = args.seed if args.seed is not None else \
        int.from_bytes(os.urandom(4), "big")
    print("pktfuzz: seed %d (replay: --seed %d)" % (seed, seed), flush=True)
    sniff, wire = setup(args)
    wire.dump = args.dump
    protect = set(int(x, 0) for x in args.protect.split(",") if x) \
        if args.protect else set()
    learn(args, sniff, args.learn)
    for qpn in protect:
        sniff.qp(qpn).protected = True
        if sniff.qps[qpn].kind is None:
            sniff.qps[qpn].kind = "RC"     # told, not seen: stay away
    print("pktfuzz: learned from %d frames:" % sniff.frames)
    for q in sorted(sniff.qps.values(), key=lambda q: q.qpn):
        print("pktfuzz:   " + repr(q))
    fz = Fuzzer(args, wire, sniff, random.Random(seed))
    n, dt = fz.run(args.count, args.time, args.skip)
    print("pktfuzz: seed %d: %d packets generated, %d sent (%d bytes) in "
          "%.1f s: %.0f pkt/s; %d send retries" %
          (seed, n, wire.sent, wire.bytes, dt,
           n / dt if dt else 0, wire.dropped))
    if wire.toolong:
        print("pktfuzz: %d frames were longer than %s takes" %
              (wire.toolong, args.dev))
    print("pktfuzz: by category: " + ", ".join(
        "%s %d" % kv for kv in sorted(fz.counts.items())))
    for q in sorted(sniff.qps.values(), key=lambda q: q.qpn):
        print("pktfuzz:   after: " + repr(q))
    if n < args.min_count:
        print("pktfuzz: only %d packets, fewer than --min-count %d" %
              (n, args.min_count))
        return 1
    return 0


def cmd_inject(args):
    """Spoofed SEND ONLYs into the victim's UC or RC QP."""
    sniff, wire = setup(args)
    kind = args.kind.upper()
    src = socket.inet_aton(args.src)
    dst = socket.inet_aton(args.victim)
    op = (UC if kind == "UC" else RC) | SEND_ONLY
    body = b"\xee" * MTU
    sent = 0
    end = time.time() + args.time
    seen = 0
    while sent < args.count and time.time() < end:
        sniff.last_req = None
        if not learn(args, sniff, 5, lambda s: s.last_req is not None and
                     s.last_req[0].kind == kind and
                     s.last_req[1] in (SEND_LAST, SEND_ONLY, SEND_LAST_IMM,
                                       SEND_ONLY_IMM)):
            if sent:
                break           # the messages have ended
            continue
        q, o, psn = sniff.last_req
        seen += 1
        npsn = (psn + 1) & PSN_MASK
        bth = struct.pack("!BBHII", op, 0, 0xFFFF, q.qpn, npsn)
        wire.roce(src, dst, bth, body)
        sent += 1
        print("pktfuzz: inject: %s SEND ONLY from %s to QPN 0x%06x PSN "
              "0x%06x (after the peer's PSN 0x%06x)" %
              (kind, args.src, q.qpn, npsn, psn), flush=True)
    print("pktfuzz: inject: %d sent" % sent)
    return 0 if sent else 1


def cmd_readflood(args):
    """Duplicate READs far behind the window: the victim's bytes per ours."""
    sniff, wire = setup(args)
    if not learn(args, sniff, args.learn_max,
                 lambda s: any(q.reth and q.resp_psn is not None
                               for q in s.qps.values())):
        print("pktfuzz: readflood: no READ seen")
        return 1
    q = [q for q in sniff.qps.values() if q.reth][0]
    if args.stop_comm:          # the READ client, now that it reads
        args.stop_pid = pid_of(args.stop_comm)
        print("pktfuzz: readflood: %s is PID %s" % (args.stop_comm,
                                                    args.stop_pid))
    if args.stop_pid:
        os.kill(args.stop_pid, signal.SIGSTOP)
        end = time.time() + 10      # the signal is delivered, not taken
        while proc_state(args.stop_pid) not in ("T", "t", None) and \
                time.time() < end:
            time.sleep(0.05)
        if proc_state(args.stop_pid) not in ("T", "t"):
            print("pktfuzz: readflood: PID %s did not stop (state %s): "
                  "inconclusive" % (args.stop_pid,
                                    proc_state(args.stop_pid)))
            return 1
    # The engine executes what the client had posted without it: the
    # flood starts once the wire has been quiet for 2 s.
    last, quiet, end = rx_bytes(args.dev), time.time(), time.time() + 120
    while time.time() - quiet < 2:
        if time.time() > end:
            print("pktfuzz: readflood: the READ traffic did not drain")
            return 1
        sniff.poll()
        if rx_bytes(args.dev) != last:
            last, quiet = rx_bytes(args.dev), time.time()
        time.sleep(0.05)
    while sniff.poll():
        pass
    sniff.drops()
    va, rkey, ln = q.reth
    npkts = max(1, (ln + MTU - 1) // MTU)
    base = (q.resp_psn - 0x400000) & PSN_MASK
    ranges = []
    got = [0, 0]

    def count(op, psn, f):
        if RR_FIRST <= (op & 0x1F) <= RR_ONLY and (op & 0xE0) == RC:
            for b in ranges:
                if 0 <= ((psn - b) & PSN_MASK) < npkts:
                    got[0] += 1
                    got[1] += len(f)
                    return
    sniff.on_victim_frame = count
    print("pktfuzz: readflood: %r; %d READs of %d bytes (%d packets each) "
          "from PSN 0x%06x down" % (q, args.count, ln, npkts, base))
    t0 = time.time()
    b0 = wire.bytes
    rx0 = rx_bytes(args.dev)
    for i in range(args.count):
        psn = (base - i * npkts) & PSN_MASK
        ranges.append(psn)
        bth = struct.pack("!BBHII", RC | READ_REQ, 0, 0xFFFF, q.qpn, psn)
        wire.roce(socket.inet_aton(args.peer), socket.inet_aton(args.victim),
                  bth, struct.pack("!QII", va, rkey, ln))
        sniff.poll()
    sent = wire.bytes - b0
    # the responses end when a second brings none
    last, idle = got[1], time.time()
    while time.time() - idle < 2 and time.time() - t0 < args.time:
        sniff.poll()
        if got[1] != last:
            last, idle = got[1], time.time()
        time.sleep(0.01)
    rx = rx_bytes(args.dev) - rx0
    dropped = sniff.drops()
    state = proc_state(args.stop_pid) if args.stop_pid else "T"
    if args.stop_pid and state:
        os.kill(args.stop_pid, signal.SIGCONT)
    print("pktfuzz: readflood: %s received %d bytes meanwhile: %.0fx what "
          "it sent" % (args.dev, rx, rx / sent if sent else 0))
    full = args.count * (npkts * (14 + 20 + 8 + 12 + MTU + 4) + 8 + 8)
    print("pktfuzz: readflood: sent %d READ requests, %d bytes; the victim "
          "answered with %d READ response packets, %d bytes, in %.1f s: "
          "amplification %.0fx (%.0fx if every READ were answered)" %
          (args.count, sent, got[0], got[1], time.time() - t0,
           got[1] / sent if sent else 0, full / sent if sent else 0))
    if args.max_amp is not None and sent and got[1] / sent > args.max_amp:
        print("pktfuzz: readflood: amplification above %gx" % args.max_amp)
        return 1
    if dropped:
        print("pktfuzz: readflood: the sniffer dropped %d frames while "
              "counting: inconclusive" % dropped)
        return 1
    if state not in ("T", "t"):
        print("pktfuzz: readflood: PID %s ended during the flood (state "
              "%s), and its QP with it: inconclusive" %
              (args.stop_pid, state))
        return 1
    return 0


def cmd_dupack(args):
    """Duplicate SENDs while the victim answers READs: its ACKs must name
    no READ's PSN."""
    sniff, wire = setup(args)
    acks = []

    def ack(op, psn, f):
        # AETH after the BTH; syndrome 000xxxxx: an ACK (not a NAK)
        if op == RC | ACK and len(f) >= 58 and f[54] >> 5 == 0:
            acks.append(psn)
    sniff.on_victim_frame = ack
    src, dst = socket.inet_aton(args.peer), socket.inet_aton(args.victim)
    sent, dups = 0, set()
    end = time.time() + args.time
    while sent < args.count and time.time() < end:
        sniff.last_req = None
        if not learn(args, sniff, max(0.0, min(5.0, end - time.time())),
                     lambda s: s.last_req is not None and
                     s.last_req[1] == READ_REQ and
                     s.last_req[0].kind == "RC" and
                     s.last_req[0].sw_psn is not None):
            if sent:
                break       # 5 s without a READ: they are over
            continue
        q, _, rpsn = sniff.last_req
        # a SEND ONLY with the PSN of the peer's latest SEND or WRITE,
        # while the READ is answered: a duplicate, which the responder
        # does not execute again
        bth = struct.pack("!BBHII", RC | SEND_ONLY, 0, 0xFFFF, q.qpn,
                          q.sw_psn)
        wire.roce(src, dst, bth, b"")
        sent += 1
        dups.add(q.sw_psn)
        print("pktfuzz: dupack: QPN 0x%06x: a duplicate SEND of PSN "
              "0x%06x after the READ request of PSN 0x%06x" %
              (q.qpn, q.sw_psn, rpsn), flush=True)
        sniff.watch(0.05)
    sniff.watch(1)
    reads = [r for q in sniff.qps.values() for r in q.reads]
    inside = [a for a in acks
              if any(0 <= ((a - p) & PSN_MASK) < n for p, n in reads)]
    print("pktfuzz: dupack: %d duplicates sent (of %d PSNs), %d READ "
          "requests seen; the victim sent %d ACKs, %d of them of a READ's "
          "PSN%s" % (sent, len(dups), len(reads), len(acks), len(inside),
           (" (0x%06x ...)" % inside[0]) if inside else ""))
    return 0 if sent and not inside else 1


def cmd_blast(args):
    """Forged responses of one opcode for QPNs --qpn, at PSNs all round
    the 24-bit space, from --src, until --time or --rounds is up."""
    sniff, wire = setup(args)
    src = socket.inet_aton(args.src)
    dst = socket.inet_aton(args.victim)
    op = int(args.op, 0)
    o = op & 0x1F
    body = b""
    if o in (RR_FIRST, RR_LAST, RR_ONLY, ACK, ATOMIC_ACK):
        body += struct.pack("!I", 0x1F << 24)        # AETH: an ACK
    if o == ATOMIC_ACK:
        body += b"\0" * 8
    if op == CNP:
        body = b"\0" * 16
    qpns = [int(x, 0) for x in args.qpn.split(",")]
    # SIGTERM ends it early: the test is over once its victim failed
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    t0 = time.time()
    end = t0 + args.time
    n = rounds = 0
    while time.time() < end and not stop and \
            (not args.rounds or rounds < args.rounds):
        rounds += 1
        for qpn in qpns:
            for k in range(args.psns):
                bth = struct.pack("!BBHII", op, 0, 0xFFFF, qpn,
                                  (k << 24) // args.psns)
                wire.roce(src, dst, bth, body)
                n += 1
        # --rate: the victim must still hear its peer's TCP meanwhile
        if args.rate and n > args.rate * (time.time() - t0):
            time.sleep(n / args.rate - (time.time() - t0))
    print("pktfuzz: blast: %d packets of opcode 0x%02x for QPNs %s from %s"
          % (n, op, args.qpn, args.src))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["fuzz", "inject", "readflood", "dupack",
                                    "blast"])
    p.add_argument("--dev", default="eth1")
    p.add_argument("--victim", default="10.76.1.1")
    p.add_argument("--peer", default="10.76.1.2")
    p.add_argument("--seed", type=int)
    p.add_argument("--count", type=int, default=100000)
    p.add_argument("--min-count", type=int, default=0)
    p.add_argument("--time", type=float, default=300)
    p.add_argument("--learn", type=float, default=3,
                   help="seconds to sniff before the fuzz")
    p.add_argument("--learn-max", type=float, default=60)
    p.add_argument("--skip", type=int, default=0)
    p.add_argument("--dump", action="store_true")
    p.add_argument("--protect", default="")
    p.add_argument("--tm", type=lambda x: int(x, 0), default=0)
    p.add_argument("--kind", default="uc")
    p.add_argument("--src", default="10.76.1.99")
    p.add_argument("--stop-pid", type=int)
    p.add_argument("--stop-comm")
    p.add_argument("--max-amp", type=float,
                   help="readflood fails above this amplification")
    p.add_argument("--qpn", default="2,3,4,5")
    p.add_argument("--op", default="0x0e")
    p.add_argument("--rate", type=float, default=0,
                   help="blast: packets a second at most (0: no bound)")
    p.add_argument("--psns", type=int, default=16,
                   help="blast: PSNs a round, spread over the space")
    p.add_argument("--rounds", type=int, default=0,
                   help="blast: rounds at most (0: until --time)")
    p.add_argument("--vid", type=int, default=0,
                   help="frames tagged with this VLAN id (0: untagged)")
    args = p.parse_args()
    return {"fuzz": cmd_fuzz, "inject": cmd_inject,
            "readflood": cmd_readflood, "dupack": cmd_dupack,
            "blast": cmd_blast}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
