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

static struct kunit_case vhca_roce_cases[] = {
	KUNIT_CASE(icrc_ipv4),
	KUNIT_CASE(icrc_ipv6),
	{}
};

static struct kunit_suite vhca_roce_suite = {
	.name = "vhca-roce",
	.test_cases = vhca_roce_cases,
};

kunit_test_suite(vhca_roce_suite);
