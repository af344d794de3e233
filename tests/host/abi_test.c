// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * uapi/vhca-abi.h as the provider sees it: compiled as strict userspace C
 * (-Wpedantic), its layouts and its ring index helpers.  Prints TAP.
 */
#include <stddef.h>
#include <stdio.h>

#include "vhca-abi.h"

static int n, failed;

#define CHECK(cond)							\
	do {								\
		n++;							\
		failed += !(cond);					\
		printf("%sok %d - %s\n", (cond) ? "" : "not ", n, #cond); \
	} while (0)

int main(void)
{
	__u32 p, c;
	int i;

	CHECK(sizeof(struct vhca_ring_hdr) == VHCA_RING_HDR_SIZE);
	CHECK(offsetof(struct vhca_ring_hdr, producer) == 0);
	CHECK(offsetof(struct vhca_ring_hdr, consumer) == VHCA_RING_IDX_ALIGN);
	CHECK(sizeof(struct vhca_sge) == 16);
	CHECK(sizeof(struct vhca_rwqe) == 16);
	CHECK(offsetof(struct vhca_rwqe, sge) == 16);
	CHECK(sizeof(struct vhca_alloc_ucontext_resp) == 16);
	CHECK(offsetof(struct vhca_alloc_ucontext_resp, caps) == 8);
	/* ctrl shares the consumer's cache line, right after it */
	CHECK(offsetof(struct vhca_ring_hdr, ctrl) ==
	      offsetof(struct vhca_ring_hdr, consumer) + 4);
	CHECK(sizeof(struct vhca_alloc_pd_resp) == 8);
	CHECK(sizeof(struct vhca_cqe) == VHCA_CQE_STRIDE);
	CHECK(offsetof(struct vhca_cqe, status) == 32);
	CHECK(offsetof(struct vhca_cqe, smac) == 40);
	CHECK(sizeof(struct vhca_create_cq_resp) == 24);
	/* a tag-matching SRQ's table too */
	CHECK(sizeof(struct vhca_create_srq_resp) == 40);
	CHECK(offsetof(struct vhca_cqe, tm_tag) == 40);
	CHECK(offsetof(struct vhca_cqe, tm_ex) == 24);
	CHECK(sizeof(struct vhca_tm_hdr) == VHCA_RING_HDR_SIZE);
	CHECK(offsetof(struct vhca_tm_hdr, synced) == VHCA_RING_IDX_ALIGN);
	CHECK(sizeof(struct vhca_tm_tag) == VHCA_TM_TAG_STRIDE);
	CHECK(offsetof(struct vhca_tm_tag, sge) == 32);
	CHECK(sizeof(struct vhca_create_qp_resp) == 56);
	CHECK(sizeof(struct vhca_swqe) == VHCA_SWQE_HDR_SIZE);
	CHECK(offsetof(struct vhca_swqe, sge) == VHCA_SWQE_HDR_SIZE);
	CHECK(sizeof(struct vhca_av) == 32);

	/* a 4-slot ring driven across the 2^32 wrap */
	p = c = 0xfffffffeU;
	for (i = 0; i < 4; i++)
		p++;
	CHECK(vhca_ring_full(p, c, 2) && vhca_ring_sane(p, c, 2));
	CHECK(vhca_ring_slot(p, 2) == vhca_ring_slot(c, 2));
	CHECK(vhca_ring_free(p, c, 2) == 0);
	c += 3;
	CHECK(vhca_ring_used(p, c) == 1 && vhca_ring_free(p, c, 2) == 3);
	CHECK(!vhca_ring_sane(p, c + 2, 2));
	CHECK(!vhca_ring_sane(p + 1, c - 4, 2));

	printf("1..%d\n", n);
	return failed != 0;
}
