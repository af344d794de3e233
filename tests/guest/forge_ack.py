#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Send one RoCEv2 RC ACK, valid in every field and in its ICRC, from this
host's SRC to DST's QP QPN, acknowledging PSN.  For the tests that check
what a requester does with an ACK it should not believe.

    forge_ack.py SRC DST QPN PSN        (QPN and PSN: 0x-hex or decimal)

The IP header is written here (a raw socket), since the ICRC covers it.
"""
import socket
import struct
import sys
import zlib

src, dst = sys.argv[1], sys.argv[2]
qpn, psn = int(sys.argv[3], 0) & 0xFFFFFF, int(sys.argv[4], 0) & 0xFFFFFF

# BTH: RC ACKNOWLEDGE (0x11), no SE/M/pad, TVer 0, P_Key 0xffff; AETH:
# syndrome 0x1f (an ACK, credits not counted), MSN 0
bth = struct.pack("!BBHII", 0x11, 0, 0xFFFF, qpn, psn)
aeth = struct.pack("!I", 0x1F << 24)
udp_len = 8 + len(bth) + len(aeth) + 4
ip_len = 20 + udp_len


def ip_header(tos, ttl, csum):
    return struct.pack("!BBHHHBBH4s4s", 0x45, tos, ip_len, 0x1234, 0x4000,
                       ttl, socket.IPPROTO_UDP, csum,
                       socket.inet_aton(src), socket.inet_aton(dst))


def udp_header(csum):
    return struct.pack("!HHHH", 49152, 4791, udp_len, csum)


# The invariant CRC (IBA A17.3.3): 8 bytes of ones for the LRH, then the
# headers with every field a router may change as ones (TOS, TTL, the IP
# and UDP checksums, the BTH's reserved byte), then the rest.
masked_bth = bth[:4] + b"\xff" + bth[5:]
icrc = zlib.crc32(b"\xff" * 8 + ip_header(0xFF, 0xFF, 0xFFFF) +
                  udp_header(0xFFFF) + masked_bth + aeth)
packet = ip_header(0, 64, 0) + udp_header(0) + bth + aeth + \
    struct.pack("<I", icrc)

s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
s.sendto(packet, (dst, 0))
