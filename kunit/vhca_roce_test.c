// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit tests of the RoCEv2 invariant CRC: the fields a router may change
 * do not change it, every other header field and the payload do.  That
 * it matches other RoCE implementations is the two-guest test's to show
 * (rxe drops packets whose ICRC it disagrees with).
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "vhca.h"

#define PKT_LEN	(40 + 8 + 12 + 8 + 32)

/* A UD SEND_ONLY over IPv4 or IPv6, with 32 bytes of payload. */
static void build(u8 *p, bool v6)
{
	u32 l3 = v6 ? 40 : 20, i;
	struct vhca_bth *bth = (void *)(p + l3 + 8);
	struct udphdr *udp = (void *)(p + l3);

	memset(p, 0, PKT_LEN);
	if (v6) {
		struct ipv6hdr *ip6 = (void *)p;

		p[0] = 0x60;
		ip6->payload_len = htons(8 + 12 + 8 + 32 + 4);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		ip6->saddr.s6_addr[15] = 1;
		ip6->daddr.s6_addr[15] = 2;
	} else {
		struct iphdr *ip = (void *)p;

		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons(20 + 8 + 12 + 8 + 32 + 4);
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->saddr = htonl(0x0a4c0101);
		ip->daddr = htonl(0x0a4c0102);
	}
	udp->source = htons(0xc000);
	udp->dest = htons(VHCA_ROCE_UDP_PORT);
	udp->len = htons(8 + 12 + 8 + 32 + 4);
	bth->opcode = VHCA_OP_UD_SEND_ONLY;
	bth->pkey = htons(0xffff);
	bth->qpn = htonl(0x11);
	bth->apsn = htonl(5);
	for (i = 0; i < 32; i++)
		p[l3 + 8 + 12 + 8 + i] = i;
}

static void icrc_masks(struct kunit *test, bool v6)
{
	u32 l3 = v6 ? 40 : 20, len = l3 + 8 + 12 + 8 + 32, crc;
	u8 *p = kunit_kzalloc(test, PKT_LEN, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	build(p, v6);
	crc = vhca_icrc(p, len);

	/* variant fields: no change */
	if (v6) {
		p[0] = 0x6f;	/* traffic class */
		p[1] = 0xab;
		p[3] = 0x12;	/* flow label */
		p[7] = 1;	/* hop limit */
	} else {
		p[1] = 0x88;	/* TOS */
		p[8] = 1;	/* TTL */
		p[10] = 0x12;	/* header checksum */
		p[11] = 0x34;
	}
	p[l3 + 6] = 0x55;	/* UDP checksum */
	p[l3 + 8 + 4] = 0x77;	/* BTH resv8a */
	KUNIT_EXPECT_EQ(test, vhca_icrc(p, len), crc);

	/* invariant fields: a change shows */
	p[l3 + 8 + 7] ^= 1;	/* destination QP */
	KUNIT_EXPECT_NE(test, vhca_icrc(p, len), crc);
	p[l3 + 8 + 7] ^= 1;
	p[len - 1] ^= 0x80;	/* the payload's last bit */
	KUNIT_EXPECT_NE(test, vhca_icrc(p, len), crc);
	p[len - 1] ^= 0x80;
	p[v6 ? 39 : 19] ^= 1;	/* destination address */
	KUNIT_EXPECT_NE(test, vhca_icrc(p, len), crc);
	p[v6 ? 39 : 19] ^= 1;
	KUNIT_EXPECT_EQ(test, vhca_icrc(p, len), crc);
}

static void icrc_ipv4(struct kunit *test)
{
	icrc_masks(test, false);
}

static void icrc_ipv6(struct kunit *test)
{
	icrc_masks(test, true);
}

/*
 * A FLUSH rxe (Linux 6.12) sent from 10.77.0.1 to 10.77.0.2, as captured
 * on the wire, and its ICRC: not IBA's, as rxe's CRC covers the BTH, FETH
 * and RETH twice (vhca_icrc_rxe()).
 */
static void icrc_rxe_flush(struct kunit *test)
{
	static const u8 pkt[] = {
		/* IPv4 */
		0x45, 0x00, 0x00, 0x40, 0x0c, 0x85, 0x40, 0x00, 0x40, 0x11,
		0x19, 0x8c, 0x0a, 0x4d, 0x00, 0x01, 0x0a, 0x4d, 0x00, 0x02,
		/* UDP */
		0xc0, 0x22, 0x12, 0xb7, 0x00, 0x2c, 0x00, 0x00,
		/* BTH: RC FLUSH to QP 2, PSN 3, AckReq */
		0x1c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x02,
		0x80, 0x00, 0x00, 0x03,
		/* FETH: global, range */
		0x00, 0x00, 0x00, 0x01,
		/* RETH: VA, rkey 0x202, length 3000 */
		0x00, 0x00, 0x55, 0x79, 0xe8, 0x73, 0xf0, 0x64,
		0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x0b, 0xb8,
	};
	const u32 wire = 0x01f8d560;	/* 60 d5 f8 01, least significant first */

	KUNIT_EXPECT_EQ(test, vhca_icrc_rxe(pkt, sizeof(pkt)), wire);
	KUNIT_EXPECT_NE(test, vhca_icrc(pkt, sizeof(pkt)), wire);
}

/*
 * The opcode table against IBA table 38: the extension headers of every
 * opcode vhca speaks (their bytes, which is where the payload starts),
 * and what each packet is.  Opcodes it does not speak have no entry.
 */
static void pkt_table(struct kunit *test)
{
	static const struct {
		u8 opcode;
		u8 hlen;
		u32 is;
	} want[] = {
		{ VHCA_OP_RC | VHCA_OP_SEND_FIRST, 0, VHCA_PKT_SEND | VHCA_PKT_FIRST },
		{ VHCA_OP_RC | VHCA_OP_SEND_MIDDLE, 0, VHCA_PKT_SEND },
		{ VHCA_OP_RC | VHCA_OP_SEND_ONLY_IMM, 4,
		  VHCA_PKT_SEND | VHCA_PKT_FIRST | VHCA_PKT_LAST },
		{ VHCA_OP_UC | VHCA_OP_WRITE_FIRST, 16,
		  VHCA_PKT_WRITE | VHCA_PKT_FIRST },
		{ VHCA_OP_UC | VHCA_OP_WRITE_LAST_IMM, 4,
		  VHCA_PKT_WRITE | VHCA_PKT_LAST },
		{ VHCA_OP_RC | VHCA_OP_WRITE_ONLY_IMM, 20,
		  VHCA_PKT_WRITE | VHCA_PKT_FIRST | VHCA_PKT_LAST },
		{ VHCA_OP_RC | VHCA_OP_READ_REQ, 16, VHCA_PKT_READ },
		{ VHCA_OP_RC | VHCA_OP_READ_RESP_FIRST, 4,
		  VHCA_PKT_RESP | VHCA_PKT_FIRST },
		{ VHCA_OP_RC | VHCA_OP_READ_RESP_MIDDLE, 0, VHCA_PKT_RESP },
		{ VHCA_OP_RC | VHCA_OP_READ_RESP_LAST, 4,
		  VHCA_PKT_RESP | VHCA_PKT_LAST },
		{ VHCA_OP_RC | VHCA_OP_ACK, 4, VHCA_PKT_RESP },
		{ VHCA_OP_RC | VHCA_OP_ATOMIC_ACK, 12, VHCA_PKT_RESP },
		{ VHCA_OP_RC | VHCA_OP_CMP_SWAP, 28, VHCA_PKT_ATOMIC },
		{ VHCA_OP_RC | VHCA_OP_FETCH_ADD, 28, VHCA_PKT_ATOMIC },
		{ VHCA_OP_RC | VHCA_OP_SEND_LAST_INV, 4,
		  VHCA_PKT_SEND | VHCA_PKT_LAST | VHCA_PKT_INV },
		{ VHCA_OP_RC | VHCA_OP_ATOMIC_WRITE, 16,
		  VHCA_PKT_ATOMIC_WRITE | VHCA_PKT_PAYLOAD },
		/* FETH, then RETH; no payload */
		{ VHCA_OP_RC | VHCA_OP_FLUSH, 20,
		  VHCA_PKT_FLUSH | VHCA_PKT_FETH | VHCA_PKT_RETH },
		/* XRC: an XRCETH on every request, none on a response */
		{ VHCA_OP_XRC | VHCA_OP_SEND_ONLY, 4,
		  VHCA_PKT_SEND | VHCA_PKT_XRCETH },
		{ VHCA_OP_XRC | VHCA_OP_SEND_MIDDLE, 4,
		  VHCA_PKT_SEND | VHCA_PKT_XRCETH },
		{ VHCA_OP_XRC | VHCA_OP_WRITE_FIRST, 20,
		  VHCA_PKT_WRITE | VHCA_PKT_RETH | VHCA_PKT_XRCETH },
		{ VHCA_OP_XRC | VHCA_OP_READ_REQ, 20,
		  VHCA_PKT_READ | VHCA_PKT_XRCETH },
		{ VHCA_OP_XRC | VHCA_OP_FETCH_ADD, 32,
		  VHCA_PKT_ATOMIC | VHCA_PKT_XRCETH },
		{ VHCA_OP_XRC | VHCA_OP_SEND_ONLY_INV, 8,
		  VHCA_PKT_SEND | VHCA_PKT_INV | VHCA_PKT_XRCETH },
		{ VHCA_OP_XRC | VHCA_OP_READ_RESP_FIRST, 4,
		  VHCA_PKT_RESP | VHCA_PKT_FIRST },
		{ VHCA_OP_XRC | VHCA_OP_ATOMIC_ACK, 12, VHCA_PKT_RESP },
		{ VHCA_OP_UD_SEND_ONLY, 8, VHCA_PKT_SEND | VHCA_PKT_DETH },
		{ VHCA_OP_UD_SEND_ONLY_IMM, 12, VHCA_PKT_SEND | VHCA_PKT_IMM },
		{ VHCA_OP_CNP, 0, VHCA_PKT_CNP },
	};
	/*
	 * reserved in RC and XRC; READ, atomics and FLUSH in UC; ATOMIC
	 * WRITE and FLUSH in XRC; UD's SEND_FIRST
	 */
	static const u8 none[] = { VHCA_OP_RC | 0x15, VHCA_OP_RC | 0x18,
				   VHCA_OP_UC | VHCA_OP_READ_REQ,
				   VHCA_OP_UC | VHCA_OP_CMP_SWAP,
				   VHCA_OP_UC | VHCA_OP_ATOMIC_WRITE,
				   VHCA_OP_UC | VHCA_OP_FLUSH,
				   VHCA_OP_XRC | 0x15, VHCA_OP_XRC | 0x18,
				   VHCA_OP_XRC | VHCA_OP_ATOMIC_WRITE,
				   VHCA_OP_XRC | VHCA_OP_FLUSH, 0x60, 0x80 };
	unsigned int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		u32 f = vhca_pkt_ops[want[i].opcode];

		KUNIT_EXPECT_EQ_MSG(test, vhca_pkt_hlen(f), want[i].hlen,
				    "opcode %#x", want[i].opcode);
		KUNIT_EXPECT_EQ_MSG(test, f & want[i].is, want[i].is,
				    "opcode %#x", want[i].opcode);
	}
	for (i = 0; i < ARRAY_SIZE(none); i++)
		KUNIT_EXPECT_EQ_MSG(test, vhca_pkt_ops[none[i]], 0,
				    "opcode %#x", none[i]);
	/* a request is one of six things, and no message part is a CNP */
	for (i = 0; i < 256; i++) {
		u32 f = vhca_pkt_ops[i];

		if (!f)
			continue;
		n++;
		if (!(f & (VHCA_PKT_RESP | VHCA_PKT_CNP)))
			KUNIT_EXPECT_EQ_MSG(test, hweight32(f & (VHCA_PKT_SEND |
				VHCA_PKT_WRITE | VHCA_PKT_READ |
				VHCA_PKT_ATOMIC | VHCA_PKT_ATOMIC_WRITE |
				VHCA_PKT_FLUSH)), 1,
				"opcode %#x", i);
	}
	/* RC, UC, XRC, UD, CNP */
	KUNIT_EXPECT_EQ(test, n, 25 + 12 + 23 + 2 + 1);
	/* and an XRC request's XRCETH is the only thing RC's lacks */
	for (i = VHCA_OP_XRC; i < VHCA_OP_XRC + 0x20; i++)
		if (vhca_pkt_ops[i] && !(vhca_pkt_ops[i] & VHCA_PKT_RESP))
			KUNIT_EXPECT_EQ_MSG(test, vhca_pkt_ops[i],
					    vhca_pkt_ops[i - VHCA_OP_XRC] |
					    VHCA_PKT_XRCETH,
					    "opcode %#x", i);
}

static struct kunit_case vhca_roce_cases[] = {
	KUNIT_CASE(icrc_ipv4),
	KUNIT_CASE(icrc_ipv6),
	KUNIT_CASE(icrc_rxe_flush),
	KUNIT_CASE(pkt_table),
	{}
};

static struct kunit_suite vhca_roce_suite = {
	.name = "vhca-roce",
	.test_cases = vhca_roce_cases,
};

kunit_test_suite(vhca_roce_suite);
