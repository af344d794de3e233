// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit tests of the ring index rules (uapi/vhca-abi.h), the queue geometry
 * (drivers/vhca_ring.c) and the attributes derived from the netdev.
 */
#include <kunit/test.h>
#include <net/addrconf.h>

#include "vhca.h"

static void ring_empty_full(struct kunit *test)
{
	const u32 log2 = 3;	/* 8 slots */

	KUNIT_EXPECT_TRUE(test, vhca_ring_empty(5, 5));
	KUNIT_EXPECT_FALSE(test, vhca_ring_full(5, 5, log2));
	KUNIT_EXPECT_EQ(test, vhca_ring_free(5, 5, log2), 8U);

	KUNIT_EXPECT_FALSE(test, vhca_ring_empty(13, 5));
	KUNIT_EXPECT_TRUE(test, vhca_ring_full(13, 5, log2));
	KUNIT_EXPECT_EQ(test, vhca_ring_free(13, 5, log2), 0U);

	KUNIT_EXPECT_EQ(test, vhca_ring_used(12, 5), 7U);
	KUNIT_EXPECT_FALSE(test, vhca_ring_full(12, 5, log2));
	KUNIT_EXPECT_EQ(test, vhca_ring_free(12, 5, log2), 1U);
}

/* Free-running indices wrap at 2^32; the arithmetic must not care. */
static void ring_wraparound(struct kunit *test)
{
	const u32 log2 = 4;
	u32 cons = 0xfffffffcU, prod = cons;
	int i;

	for (i = 0; i < 16; i++) {
		KUNIT_EXPECT_EQ(test, vhca_ring_used(prod, cons), (u32)i);
		KUNIT_EXPECT_FALSE(test, vhca_ring_full(prod, cons, log2));
		prod++;
	}
	KUNIT_EXPECT_EQ(test, prod, 12U);
	KUNIT_EXPECT_TRUE(test, vhca_ring_full(prod, cons, log2));
	KUNIT_EXPECT_TRUE(test, vhca_ring_sane(prod, cons, log2));

	/* Slots keep walking the ring across the wrap. */
	KUNIT_EXPECT_EQ(test, vhca_ring_slot(0xffffffffU, log2), 15U);
	KUNIT_EXPECT_EQ(test, vhca_ring_slot(0, log2), 0U);
	KUNIT_EXPECT_EQ(test, vhca_ring_slot(17, log2), 1U);

	/* Drain across the wrap too. */
	while (!vhca_ring_empty(prod, cons))
		cons++;
	KUNIT_EXPECT_EQ(test, cons, 12U);
}

/* An index a scribbling process wrote must be recognised as impossible. */
static void ring_corrupt_indices(struct kunit *test)
{
	const u32 log2 = 6;

	KUNIT_EXPECT_TRUE(test, vhca_ring_sane(64, 0, log2));
	KUNIT_EXPECT_FALSE(test, vhca_ring_sane(65, 0, log2));
	/* consumer ahead of producer: looks like 2^32 - 1 used */
	KUNIT_EXPECT_FALSE(test, vhca_ring_sane(0, 1, log2));
	KUNIT_EXPECT_FALSE(test, vhca_ring_sane(0x80000000U, 0, log2));
	KUNIT_EXPECT_EQ(test, vhca_ring_free(0, 1, log2), 0U);
	KUNIT_EXPECT_TRUE(test, vhca_ring_full(0, 1, log2));
}

static void rq_geometry_rounding(struct kunit *test)
{
	struct vhca_qgeom g;
	u32 wr, sge;

	for (wr = 1; wr <= 4100; wr += 7) {
		KUNIT_ASSERT_EQ(test, vhca_rq_geometry(wr, 1, VHCA_MAX_QP_WR, &g), 0);
		KUNIT_EXPECT_GE(test, g.max_wr, wr);
		KUNIT_EXPECT_LT(test, g.max_wr, 2 * wr);
		KUNIT_EXPECT_EQ(test, g.max_wr, 1U << g.log2_slots);
	}
	KUNIT_ASSERT_EQ(test, vhca_rq_geometry(1024, 1, VHCA_MAX_QP_WR, &g), 0);
	KUNIT_EXPECT_EQ(test, g.max_wr, 1024U);

	for (sge = 0; sge <= VHCA_MAX_SGE; sge++) {
		size_t need = sizeof(struct vhca_rwqe) +
			      max(sge, 1U) * sizeof(struct vhca_sge);

		KUNIT_ASSERT_EQ(test, vhca_rq_geometry(16, sge, VHCA_MAX_QP_WR, &g), 0);
		KUNIT_EXPECT_GE(test, g.max_sge, max(sge, 1U));
		KUNIT_EXPECT_LE(test, g.max_sge, (u32)VHCA_MAX_SGE);
		KUNIT_EXPECT_GE(test, 1UL << g.log2_stride, need);
		KUNIT_EXPECT_GE(test, 1UL << g.log2_stride, (unsigned long)VHCA_WQE_MIN_STRIDE);
		/* the reported SGEs really fit in a slot */
		KUNIT_EXPECT_LE(test, sizeof(struct vhca_rwqe) +
				g.max_sge * sizeof(struct vhca_sge),
				1UL << g.log2_stride);
	}
	/* 1 SGE asked, 3 fit in the 64-byte minimum stride: report 3 */
	KUNIT_ASSERT_EQ(test, vhca_rq_geometry(1, 1, VHCA_MAX_QP_WR, &g), 0);
	KUNIT_EXPECT_EQ(test, g.max_sge, 3U);
	KUNIT_EXPECT_EQ(test, g.log2_stride, 6U);
}

static void rq_geometry_limits(struct kunit *test)
{
	struct vhca_qgeom g;

	KUNIT_EXPECT_EQ(test, vhca_rq_geometry(0, 1, VHCA_MAX_QP_WR, &g), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_rq_geometry(VHCA_MAX_QP_WR, 1, VHCA_MAX_QP_WR, &g), 0);
	KUNIT_EXPECT_EQ(test, g.max_wr, (u32)VHCA_MAX_QP_WR);
	KUNIT_EXPECT_EQ(test, vhca_rq_geometry(VHCA_MAX_QP_WR + 1, 1, VHCA_MAX_QP_WR, &g),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_rq_geometry(U32_MAX, 1, VHCA_MAX_QP_WR, &g), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_rq_geometry(8, VHCA_MAX_SGE + 1, VHCA_MAX_QP_WR, &g),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_rq_geometry(8, U32_MAX, VHCA_MAX_QP_WR, &g), -EINVAL);
}

static void sq_geometry(struct kunit *test)
{
	struct vhca_qgeom g;
	u32 inl, sge;

	/* 0 WRs still get a slot; the header alone makes the minimum */
	KUNIT_ASSERT_EQ(test, vhca_sq_geometry(0, 0, 0, VHCA_MAX_QP_WR, &g, &inl), 0);
	KUNIT_EXPECT_EQ(test, g.max_wr, 1U);
	KUNIT_EXPECT_EQ(test, 1U << g.log2_stride, 128U);
	KUNIT_EXPECT_EQ(test, g.max_sge, 4U);
	KUNIT_EXPECT_EQ(test, inl, 64U);

	for (sge = 0; sge <= VHCA_MAX_SGE; sge++) {
		KUNIT_ASSERT_EQ(test, vhca_sq_geometry(10, sge, 100, VHCA_MAX_QP_WR,
						       &g, &inl), 0);
		KUNIT_EXPECT_GE(test, g.max_wr, 10U);
		KUNIT_EXPECT_GE(test, g.max_sge, max(sge, 1U));
		KUNIT_EXPECT_GE(test, inl, 100U);
		KUNIT_EXPECT_LE(test, VHCA_SWQE_HDR_SIZE +
				g.max_sge * sizeof(struct vhca_sge),
				1UL << g.log2_stride);
		KUNIT_EXPECT_LE(test, VHCA_SWQE_HDR_SIZE + inl, 1UL << g.log2_stride);
	}
	/* the most inline there is fits, and is what is reported */
	KUNIT_ASSERT_EQ(test, vhca_sq_geometry(1, 1, VHCA_MAX_INLINE, VHCA_MAX_QP_WR,
					       &g, &inl), 0);
	KUNIT_EXPECT_EQ(test, inl, (u32)VHCA_MAX_INLINE);

	KUNIT_EXPECT_EQ(test, vhca_sq_geometry(VHCA_MAX_QP_WR + 1, 1, 0, VHCA_MAX_QP_WR,
					       &g, &inl), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_sq_geometry(1, VHCA_MAX_SGE + 1, 0, VHCA_MAX_QP_WR,
					       &g, &inl), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_sq_geometry(1, 1, VHCA_MAX_INLINE + 1, VHCA_MAX_QP_WR,
					       &g, &inl), -EINVAL);
}

static void cq_geometry(struct kunit *test)
{
	struct vhca_qgeom g;

	KUNIT_EXPECT_EQ(test, vhca_cq_geometry(0, &g), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_cq_geometry(VHCA_MAX_CQE + 1, &g), -EINVAL);
	KUNIT_ASSERT_EQ(test, vhca_cq_geometry(100, &g), 0);
	KUNIT_EXPECT_EQ(test, g.max_wr, 128U);
	KUNIT_EXPECT_EQ(test, 1U << g.log2_stride, (u32)VHCA_CQE_STRIDE);
	KUNIT_ASSERT_EQ(test, vhca_cq_geometry(VHCA_MAX_CQE, &g), 0);
	KUNIT_EXPECT_EQ(test, g.max_wr, (u32)VHCA_MAX_CQE);
}

static void ring_bytes(struct kunit *test)
{
	struct vhca_qgeom g;
	size_t bytes;

	KUNIT_ASSERT_EQ(test, vhca_rq_geometry(1, 1, VHCA_MAX_QP_WR, &g), 0);
	bytes = vhca_ring_bytes(&g);
	KUNIT_EXPECT_EQ(test, bytes, (size_t)PAGE_SIZE);

	KUNIT_ASSERT_EQ(test, vhca_rq_geometry(VHCA_MAX_QP_WR, VHCA_MAX_SGE,
					       VHCA_MAX_QP_WR, &g), 0);
	bytes = vhca_ring_bytes(&g);
	KUNIT_EXPECT_TRUE(test, PAGE_ALIGNED(bytes));
	KUNIT_EXPECT_GE(test, bytes, VHCA_RING_HDR_SIZE +
			((size_t)VHCA_MAX_QP_WR << g.log2_stride));
	KUNIT_EXPECT_EQ(test, sizeof(struct vhca_ring_hdr), (size_t)VHCA_RING_HDR_SIZE);
	KUNIT_EXPECT_EQ(test, offsetof(struct vhca_ring_hdr, consumer),
			(size_t)VHCA_RING_IDX_ALIGN);
}

static void port_mtu(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vhca_active_mtu(1500), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, vhca_active_mtu(9000), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, vhca_active_mtu(65535), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, vhca_active_mtu(UINT_MAX), IB_MTU_4096);
	/* 4096 payload needs the RoCEv2 headers on top */
	KUNIT_EXPECT_EQ(test, vhca_active_mtu(4096), IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, vhca_active_mtu(576), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, (int)vhca_active_mtu(68), 0);
}

static void node_guid_not_rxe(struct kunit *test)
{
	static const u8 mac1[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	static const u8 mac2[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x57 };
	__be64 rxe_guid;

	/* rxe's node GUID is the EUI-64 of the MAC */
	addrconf_addr_eui48((u8 *)&rxe_guid, mac1);
	KUNIT_EXPECT_NE(test, be64_to_cpu(vhca_node_guid(mac1)),
			be64_to_cpu(rxe_guid));
	KUNIT_EXPECT_NE(test, be64_to_cpu(vhca_node_guid(mac1)),
			be64_to_cpu(vhca_node_guid(mac2)));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(vhca_node_guid(mac1)),
			be64_to_cpu(vhca_node_guid(mac1)));
	/* same vendor bytes as the MAC, so it still reads as this NIC's */
	KUNIT_EXPECT_EQ(test, be64_to_cpu(vhca_node_guid(mac1)) >> 40,
			be64_to_cpu(rxe_guid) >> 40);
}

static void kring(struct kunit *test, struct vhca_uring *r, u32 log2_slots,
		  u32 log2_stride)
{
	struct vhca_qgeom g = { .log2_slots = log2_slots,
				.log2_stride = log2_stride };

	KUNIT_ASSERT_EQ(test, vhca_uring_create(r, NULL, &g), 0);
	KUNIT_ASSERT_NOT_NULL(test, r->hdr);
}

/* Resize's move: entries in order from slot 0, and never a lost one. */
static void ring_move(struct kunit *test)
{
	struct vhca_uring from, to, small, wide;
	u32 i, *slot;

	kring(test, &from, 2, 6);	/* 4 slots */
	kring(test, &to, 3, 6);
	kring(test, &small, 1, 6);
	kring(test, &wide, 3, 7);
	/* 4 entries across the wrap of the 32-bit indices */
	for (i = 0; i < 4; i++) {
		slot = vhca_uring_slot(&from, 0xfffffffeU + i);
		*slot = 0xabc0 + i;
	}
	KUNIT_EXPECT_EQ(test, vhca_ring_move(&to, &from, 0xfffffffeU, 2), 4);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, *(u32 *)vhca_uring_slot(&to, i), 0xabc0 + i);
	KUNIT_EXPECT_EQ(test, to.hdr->producer, 4U);
	KUNIT_EXPECT_EQ(test, to.hdr->consumer, 0U);

	/* 5 entries in 4 slots cannot be; 3 do not fit in 2; strides differ */
	KUNIT_EXPECT_EQ(test, vhca_ring_move(&to, &from, 0, 5), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_ring_move(&to, &from, 7, 6), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_ring_move(&small, &from, 0, 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_ring_move(&wide, &from, 0, 1), -EINVAL);
	/* an empty ring moves as nothing */
	KUNIT_EXPECT_EQ(test, vhca_ring_move(&small, &from, 9, 9), 0);
	KUNIT_EXPECT_EQ(test, small.hdr->producer, 0U);

	vhca_uring_destroy(&from);
	vhca_uring_destroy(&to);
	vhca_uring_destroy(&small);
	vhca_uring_destroy(&wide);
}

/*
 * A user CQ's arms in ctrl: NEXT wins over SOLICITED, an arm is taken
 * once, and a value that jumps around (it is the process's to write)
 * arms at most; it never does more than set notify.
 */
static void cq_arm(struct kunit *test)
{
	struct vhca_cq cq = {};

	kring(test, &cq.ring, 2, 6);
	vhca_cq_take_arm(&cq);
	KUNIT_EXPECT_EQ(test, cq.notify, 0);

	cq.ring.hdr->ctrl += VHCA_CQ_ARM_SOLICITED;
	vhca_cq_take_arm(&cq);
	KUNIT_EXPECT_EQ(test, cq.notify, IB_CQ_SOLICITED);
	cq.ring.hdr->ctrl += VHCA_CQ_ARM_NEXT;
	vhca_cq_take_arm(&cq);
	KUNIT_EXPECT_EQ(test, cq.notify, IB_CQ_NEXT_COMP);
	/* a later solicited arm does not narrow a pending next one */
	cq.ring.hdr->ctrl += VHCA_CQ_ARM_SOLICITED;
	vhca_cq_take_arm(&cq);
	KUNIT_EXPECT_EQ(test, cq.notify, IB_CQ_NEXT_COMP);

	/* taken once: after the CQ fired (notify 0), the same value is old */
	cq.notify = 0;
	vhca_cq_take_arm(&cq);
	KUNIT_EXPECT_EQ(test, cq.notify, 0);

	/* both counters at once, and the NEXT counter wrapping */
	cq.ring.hdr->ctrl = cq.arm_seen + VHCA_CQ_ARM_SOLICITED + 0xffff;
	vhca_cq_take_arm(&cq);
	KUNIT_EXPECT_EQ(test, cq.notify, IB_CQ_NEXT_COMP);
	cq.notify = 0;
	cq.ring.hdr->ctrl = 0xdeadbeef;
	vhca_cq_take_arm(&cq);
	KUNIT_EXPECT_EQ(test, cq.notify, IB_CQ_NEXT_COMP);
	KUNIT_EXPECT_EQ(test, cq.arm_seen, 0xdeadbeefU);

	vhca_uring_destroy(&cq.ring);
}

static struct kunit_case vhca_ring_cases[] = {
	KUNIT_CASE(ring_empty_full),
	KUNIT_CASE(ring_wraparound),
	KUNIT_CASE(ring_corrupt_indices),
	KUNIT_CASE(ring_bytes),
	KUNIT_CASE(ring_move),
	KUNIT_CASE(cq_arm),
	{}
};

static struct kunit_case vhca_geometry_cases[] = {
	KUNIT_CASE(rq_geometry_rounding),
	KUNIT_CASE(rq_geometry_limits),
	KUNIT_CASE(sq_geometry),
	KUNIT_CASE(cq_geometry),
	{}
};

static struct kunit_case vhca_attr_cases[] = {
	KUNIT_CASE(port_mtu),
	KUNIT_CASE(node_guid_not_rxe),
	{}
};

static struct kunit_suite vhca_ring_suite = {
	.name = "vhca-ring",
	.test_cases = vhca_ring_cases,
};

static struct kunit_suite vhca_geometry_suite = {
	.name = "vhca-geometry",
	.test_cases = vhca_geometry_cases,
};

static struct kunit_suite vhca_attr_suite = {
	.name = "vhca-attr",
	.test_cases = vhca_attr_cases,
};

kunit_test_suites(&vhca_ring_suite, &vhca_geometry_suite, &vhca_attr_suite);
