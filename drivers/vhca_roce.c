// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * RoCEv2 packets: what each opcode carries, in one table, and the
 * invariant CRC (IBA annex A17.3.3).  The CRC covers the packet from
 * the IP header to the end of the payload and pad, with every field a
 * router may change replaced by ones: the IPv4 TOS, TTL and header
 * checksum, the IPv6 traffic class, flow label and hop limit, the UDP
 * checksum, and the BTH's reserved byte.  In front of all that comes the
 * 8-byte all-ones stand-in for the local route header that RoCEv2 lacks.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <kunit/visibility.h>

#include "vhca_roce.h"

#define VHCA_PKT_S	(VHCA_PKT_SEND | VHCA_PKT_PAYLOAD)
#define VHCA_PKT_W	(VHCA_PKT_WRITE | VHCA_PKT_PAYLOAD)
#define VHCA_PKT_RR	(VHCA_PKT_RESP | VHCA_PKT_PAYLOAD)
#define VHCA_PKT_ONLY	(VHCA_PKT_FIRST | VHCA_PKT_LAST)
#define VHCA_PKT_X	VHCA_PKT_XRCETH

/* IBA table 38, for the opcodes vhca speaks; the rest are not supported. */
const u32 vhca_pkt_ops[256] = {
	[VHCA_OP_RC | VHCA_OP_SEND_FIRST] = VHCA_PKT_S | VHCA_PKT_FIRST,
	[VHCA_OP_RC | VHCA_OP_SEND_MIDDLE] = VHCA_PKT_S,
	[VHCA_OP_RC | VHCA_OP_SEND_LAST] = VHCA_PKT_S | VHCA_PKT_LAST,
	[VHCA_OP_RC | VHCA_OP_SEND_LAST_IMM] =
		VHCA_PKT_S | VHCA_PKT_LAST | VHCA_PKT_IMM,
	[VHCA_OP_RC | VHCA_OP_SEND_ONLY] = VHCA_PKT_S | VHCA_PKT_ONLY,
	[VHCA_OP_RC | VHCA_OP_SEND_ONLY_IMM] =
		VHCA_PKT_S | VHCA_PKT_ONLY | VHCA_PKT_IMM,
	[VHCA_OP_RC | VHCA_OP_WRITE_FIRST] =
		VHCA_PKT_W | VHCA_PKT_FIRST | VHCA_PKT_RETH,
	[VHCA_OP_RC | VHCA_OP_WRITE_MIDDLE] = VHCA_PKT_W,
	[VHCA_OP_RC | VHCA_OP_WRITE_LAST] = VHCA_PKT_W | VHCA_PKT_LAST,
	[VHCA_OP_RC | VHCA_OP_WRITE_LAST_IMM] =
		VHCA_PKT_W | VHCA_PKT_LAST | VHCA_PKT_IMM,
	[VHCA_OP_RC | VHCA_OP_WRITE_ONLY] =
		VHCA_PKT_W | VHCA_PKT_ONLY | VHCA_PKT_RETH,
	[VHCA_OP_RC | VHCA_OP_WRITE_ONLY_IMM] =
		VHCA_PKT_W | VHCA_PKT_ONLY | VHCA_PKT_RETH | VHCA_PKT_IMM,
	[VHCA_OP_RC | VHCA_OP_READ_REQ] =
		VHCA_PKT_READ | VHCA_PKT_ONLY | VHCA_PKT_RETH,
	[VHCA_OP_RC | VHCA_OP_READ_RESP_FIRST] =
		VHCA_PKT_RR | VHCA_PKT_FIRST | VHCA_PKT_AETH,
	[VHCA_OP_RC | VHCA_OP_READ_RESP_MIDDLE] = VHCA_PKT_RR,
	[VHCA_OP_RC | VHCA_OP_READ_RESP_LAST] =
		VHCA_PKT_RR | VHCA_PKT_LAST | VHCA_PKT_AETH,
	[VHCA_OP_RC | VHCA_OP_READ_RESP_ONLY] =
		VHCA_PKT_RR | VHCA_PKT_ONLY | VHCA_PKT_AETH,
	[VHCA_OP_RC | VHCA_OP_ACK] = VHCA_PKT_RESP | VHCA_PKT_AETH,
	[VHCA_OP_RC | VHCA_OP_ATOMIC_ACK] =
		VHCA_PKT_RESP | VHCA_PKT_AETH | VHCA_PKT_ATMACK,
	[VHCA_OP_RC | VHCA_OP_CMP_SWAP] =
		VHCA_PKT_ATOMIC | VHCA_PKT_ONLY | VHCA_PKT_ATMETH,
	[VHCA_OP_RC | VHCA_OP_FETCH_ADD] =
		VHCA_PKT_ATOMIC | VHCA_PKT_ONLY | VHCA_PKT_ATMETH,
	[VHCA_OP_RC | VHCA_OP_SEND_LAST_INV] =
		VHCA_PKT_S | VHCA_PKT_LAST | VHCA_PKT_INV,
	[VHCA_OP_RC | VHCA_OP_SEND_ONLY_INV] =
		VHCA_PKT_S | VHCA_PKT_ONLY | VHCA_PKT_INV,
	[VHCA_OP_RC | VHCA_OP_FLUSH] =
		VHCA_PKT_FLUSH | VHCA_PKT_ONLY | VHCA_PKT_FETH | VHCA_PKT_RETH,
	[VHCA_OP_RC | VHCA_OP_ATOMIC_WRITE] =
		VHCA_PKT_ATOMIC_WRITE | VHCA_PKT_PAYLOAD | VHCA_PKT_ONLY |
		  VHCA_PKT_RETH,
	[VHCA_OP_UC | VHCA_OP_SEND_FIRST] = VHCA_PKT_S | VHCA_PKT_FIRST,
	[VHCA_OP_UC | VHCA_OP_SEND_MIDDLE] = VHCA_PKT_S,
	[VHCA_OP_UC | VHCA_OP_SEND_LAST] = VHCA_PKT_S | VHCA_PKT_LAST,
	[VHCA_OP_UC | VHCA_OP_SEND_LAST_IMM] =
		VHCA_PKT_S | VHCA_PKT_LAST | VHCA_PKT_IMM,
	[VHCA_OP_UC | VHCA_OP_SEND_ONLY] = VHCA_PKT_S | VHCA_PKT_ONLY,
	[VHCA_OP_UC | VHCA_OP_SEND_ONLY_IMM] =
		VHCA_PKT_S | VHCA_PKT_ONLY | VHCA_PKT_IMM,
	[VHCA_OP_UC | VHCA_OP_WRITE_FIRST] =
		VHCA_PKT_W | VHCA_PKT_FIRST | VHCA_PKT_RETH,
	[VHCA_OP_UC | VHCA_OP_WRITE_MIDDLE] = VHCA_PKT_W,
	[VHCA_OP_UC | VHCA_OP_WRITE_LAST] = VHCA_PKT_W | VHCA_PKT_LAST,
	[VHCA_OP_UC | VHCA_OP_WRITE_LAST_IMM] =
		VHCA_PKT_W | VHCA_PKT_LAST | VHCA_PKT_IMM,
	[VHCA_OP_UC | VHCA_OP_WRITE_ONLY] =
		VHCA_PKT_W | VHCA_PKT_ONLY | VHCA_PKT_RETH,
	[VHCA_OP_UC | VHCA_OP_WRITE_ONLY_IMM] =
		VHCA_PKT_W | VHCA_PKT_ONLY | VHCA_PKT_RETH | VHCA_PKT_IMM,
	/* RC's, but for FLUSH and ATOMIC WRITE; an XRCETH on each request */
	[VHCA_OP_XRC | VHCA_OP_SEND_FIRST] =
		VHCA_PKT_S | VHCA_PKT_FIRST | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_SEND_MIDDLE] = VHCA_PKT_S | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_SEND_LAST] =
		VHCA_PKT_S | VHCA_PKT_LAST | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_SEND_LAST_IMM] =
		VHCA_PKT_S | VHCA_PKT_LAST | VHCA_PKT_IMM | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_SEND_ONLY] =
		VHCA_PKT_S | VHCA_PKT_ONLY | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_SEND_ONLY_IMM] =
		VHCA_PKT_S | VHCA_PKT_ONLY | VHCA_PKT_IMM | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_WRITE_FIRST] =
		VHCA_PKT_W | VHCA_PKT_FIRST | VHCA_PKT_RETH | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_WRITE_MIDDLE] = VHCA_PKT_W | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_WRITE_LAST] =
		VHCA_PKT_W | VHCA_PKT_LAST | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_WRITE_LAST_IMM] =
		VHCA_PKT_W | VHCA_PKT_LAST | VHCA_PKT_IMM | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_WRITE_ONLY] =
		VHCA_PKT_W | VHCA_PKT_ONLY | VHCA_PKT_RETH | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_WRITE_ONLY_IMM] =
		VHCA_PKT_W | VHCA_PKT_ONLY | VHCA_PKT_RETH | VHCA_PKT_IMM |
		  VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_READ_REQ] =
		VHCA_PKT_READ | VHCA_PKT_ONLY | VHCA_PKT_RETH | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_READ_RESP_FIRST] =
		VHCA_PKT_RR | VHCA_PKT_FIRST | VHCA_PKT_AETH,
	[VHCA_OP_XRC | VHCA_OP_READ_RESP_MIDDLE] = VHCA_PKT_RR,
	[VHCA_OP_XRC | VHCA_OP_READ_RESP_LAST] =
		VHCA_PKT_RR | VHCA_PKT_LAST | VHCA_PKT_AETH,
	[VHCA_OP_XRC | VHCA_OP_READ_RESP_ONLY] =
		VHCA_PKT_RR | VHCA_PKT_ONLY | VHCA_PKT_AETH,
	[VHCA_OP_XRC | VHCA_OP_ACK] = VHCA_PKT_RESP | VHCA_PKT_AETH,
	[VHCA_OP_XRC | VHCA_OP_ATOMIC_ACK] =
		VHCA_PKT_RESP | VHCA_PKT_AETH | VHCA_PKT_ATMACK,
	[VHCA_OP_XRC | VHCA_OP_CMP_SWAP] =
		VHCA_PKT_ATOMIC | VHCA_PKT_ONLY | VHCA_PKT_ATMETH | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_FETCH_ADD] =
		VHCA_PKT_ATOMIC | VHCA_PKT_ONLY | VHCA_PKT_ATMETH | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_SEND_LAST_INV] =
		VHCA_PKT_S | VHCA_PKT_LAST | VHCA_PKT_INV | VHCA_PKT_X,
	[VHCA_OP_XRC | VHCA_OP_SEND_ONLY_INV] =
		VHCA_PKT_S | VHCA_PKT_ONLY | VHCA_PKT_INV | VHCA_PKT_X,
	[VHCA_OP_UD_SEND_ONLY] = VHCA_PKT_S | VHCA_PKT_ONLY | VHCA_PKT_DETH,
	[VHCA_OP_UD_SEND_ONLY_IMM] =
		VHCA_PKT_S | VHCA_PKT_ONLY | VHCA_PKT_DETH |
		  VHCA_PKT_IMM,
	[VHCA_OP_CNP] = VHCA_PKT_CNP,
};

/* crc32_le(~0, 8 bytes of 0xff): the masked LRH stand-in, done once. */
#define VHCA_ICRC_SEED	0xdebb20e3

/*
 * The CRC of vhca_icrc() before its final inversion, and in *@bth_off
 * where the BTH starts.
 */
static u32 vhca_icrc_state(const void *l3, u32 len, u32 *bth_off)
{
	u8 hdr[sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	       sizeof(struct vhca_bth)];
	const u8 *p = l3;
	u32 ip_len, n, crc;
	struct udphdr *udp;
	struct vhca_bth *bth;

	ip_len = (p[0] >> 4) == 4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	n = ip_len + sizeof(*udp) + sizeof(*bth);
	memcpy(hdr, p, n);
	if (ip_len == sizeof(struct iphdr)) {
		struct iphdr *ip = (struct iphdr *)hdr;

		ip->tos = 0xff;
		ip->ttl = 0xff;
		ip->check = CSUM_MANGLED_0;
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)hdr;

		/* version stays; traffic class and flow label become ones */
		hdr[0] |= 0x0f;
		ip6->flow_lbl[0] = 0xff;
		ip6->flow_lbl[1] = 0xff;
		ip6->flow_lbl[2] = 0xff;
		ip6->hop_limit = 0xff;
	}
	udp = (struct udphdr *)(hdr + ip_len);
	udp->check = CSUM_MANGLED_0;
	bth = (struct vhca_bth *)(udp + 1);
	bth->qpn |= htonl(~VHCA_BTH_QPN_MASK);

	crc = crc32_le(VHCA_ICRC_SEED, hdr, n);
	*bth_off = ip_len + sizeof(*udp);
	return crc32_le(crc, p + n, len - n);
}

/**
 * vhca_icrc() - the invariant CRC of a RoCEv2 packet
 * @l3: the packet's IP header (IPv4 without options, or IPv6)
 * @len: bytes from @l3 to the end of the pad, the ICRC itself excluded
 *
 * The caller has checked that @len covers the IP, UDP and base transport
 * headers.  The wire carries the result least significant byte first
 * (cpu_to_le32()).
 *
 * Return: the ICRC.
 */
u32 vhca_icrc(const void *l3, u32 len)
{
	u32 bth_off;

	return ~vhca_icrc_state(l3, len, &bth_off);
}
EXPORT_SYMBOL_IF_KUNIT(vhca_icrc);

/**
 * vhca_icrc_rxe() - the ICRC Linux's rxe puts on, and wants of, a FLUSH
 * @l3: as for vhca_icrc()
 * @len: as for vhca_icrc()
 *
 * rxe's opcode table has no payload offset for FLUSH (Linux 6.2 to 7.3
 * at least), so the payload its ICRC goes on over is the packet from the
 * BTH on: the BTH, FETH and RETH a second time, as they are.  IBA's ICRC
 * (vhca_icrc()) fails rxe's check, and rxe's fails IBA's.
 *
 * Return: that CRC.
 */
u32 vhca_icrc_rxe(const void *l3, u32 len)
{
	u32 bth_off, crc = vhca_icrc_state(l3, len, &bth_off);

	return ~crc32_le(crc, (const u8 *)l3 + bth_off, len - bth_off);
}
EXPORT_SYMBOL_IF_KUNIT(vhca_icrc_rxe);

/**
 * vhca_pkt_bounds() - where a packet's payload is
 * @skb: the packet, linear, from its UDP header on
 * @bth: its BTH
 * @pkt: its opcode's VHCA_PKT_* flags
 * @hlen: set to the offset of its payload from skb->data
 * @len: set to the payload's length
 *
 * Return: false if the extension headers @pkt says it has, and its pad,
 * do not fit between the BTH and the ICRC.
 */
bool vhca_pkt_bounds(const struct sk_buff *skb, const struct vhca_bth *bth,
		     u32 pkt, u32 *hlen, u32 *len)
{
	u32 pad = (bth->flags & VHCA_BTH_PAD_MASK) >> VHCA_BTH_PAD_SHIFT;

	*hlen = sizeof(struct udphdr) + sizeof(*bth) + vhca_pkt_hlen(pkt);
	if (skb->len < *hlen + pad + VHCA_ICRC_SIZE)
		return false;
	*len = skb->len - *hlen - pad - VHCA_ICRC_SIZE;
	return true;
}
