// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit tests of what the engine does with untrusted ring contents: keys,
 * PDs, access and ranges of SGEs, receive rings whose producer index or
 * WQEs a process has scribbled over, and fast registration's rules.
 */
#include <kunit/test.h>
#include <linux/vmalloc.h>

#include "vhca_wqe.h"

struct engine_fixture {
	struct vhca_dev vdev;
	struct vhca_mr mr;
	struct ib_pd pd, other_pd;
	struct vhca_qp qp, other_qp;	/* of pd, of other_pd */
	u32 key;
};

static int engine_init(struct kunit *test)
{
	struct engine_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	u32 index;

	KUNIT_ASSERT_NOT_NULL(test, f);
	/* what the code under test may count, as on a real device */
	f->vdev.cnt = alloc_percpu(struct vhca_counters);
	KUNIT_ASSERT_NOT_NULL(test, f->vdev.cnt);
	xa_init_flags(&f->vdev.mr_xa, XA_FLAGS_ALLOC1);
	f->mr.iova = 0x10000;
	f->mr.length = 0x2000;
	f->mr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	f->mr.pd = &f->pd;
	f->qp.ibqp.pd = &f->pd;
	f->qp.uid = 7;
	f->other_qp.ibqp.pd = &f->other_pd;
	f->other_qp.uid = 8;
	KUNIT_ASSERT_EQ(test, xa_alloc(&f->vdev.mr_xa, &index, &f->mr,
				       XA_LIMIT(1, VHCA_MAX_MR), GFP_KERNEL), 0);
	f->key = index << 8 | 0x5a;
	f->mr.ibmr.lkey = f->key;
	f->mr.key = f->key;
	test->priv = f;
	return 0;
}

static void engine_exit(struct kunit *test)
{
	struct engine_fixture *f = test->priv;

	xa_destroy(&f->vdev.mr_xa);
	free_percpu(f->vdev.cnt);
}

static struct vhca_mr *find(struct engine_fixture *f, u32 key, struct ib_pd *pd,
			    int access, u64 va, u32 len)
{
	return vhca_mr_find(&f->vdev, key, pd, access, va, len);
}

static void mr_keys(struct kunit *test)
{
	struct engine_fixture *f = test->priv;

	KUNIT_EXPECT_PTR_EQ(test, find(f, f->key, &f->pd, 0, 0x10000, 16), &f->mr);
	/* the index is right but the variant byte is stale */
	KUNIT_EXPECT_NULL(test, find(f, f->key ^ 1, &f->pd, 0, 0x10000, 16));
	KUNIT_EXPECT_NULL(test, find(f, f->key + 0x100, &f->pd, 0, 0x10000, 16));
	KUNIT_EXPECT_NULL(test, find(f, 0, &f->pd, 0, 0x10000, 16));
	KUNIT_EXPECT_NULL(test, find(f, U32_MAX, &f->pd, 0, 0x10000, 16));
	/* another protection domain's key is no key */
	KUNIT_EXPECT_NULL(test, find(f, f->key, &f->other_pd, 0, 0x10000, 16));
}

static void mr_access(struct kunit *test)
{
	struct engine_fixture *f = test->priv;

	KUNIT_EXPECT_NOT_NULL(test, find(f, f->key, &f->pd, IB_ACCESS_REMOTE_WRITE,
					 0x10000, 16));
	KUNIT_EXPECT_NULL(test, find(f, f->key, &f->pd, IB_ACCESS_REMOTE_READ,
				     0x10000, 16));
	KUNIT_EXPECT_NULL(test, find(f, f->key, &f->pd, IB_ACCESS_REMOTE_ATOMIC,
				     0x10000, 8));
}

static void mr_ranges(struct kunit *test)
{
	struct engine_fixture *f = test->priv;

	KUNIT_EXPECT_NOT_NULL(test, find(f, f->key, &f->pd, 0, 0x10000, 0x2000));
	KUNIT_EXPECT_NOT_NULL(test, find(f, f->key, &f->pd, 0, 0x11fff, 1));
	KUNIT_EXPECT_NOT_NULL(test, find(f, f->key, &f->pd, 0, 0x12000, 0));
	KUNIT_EXPECT_NULL(test, find(f, f->key, &f->pd, 0, 0xffff, 2));
	KUNIT_EXPECT_NULL(test, find(f, f->key, &f->pd, 0, 0x11fff, 2));
	KUNIT_EXPECT_NULL(test, find(f, f->key, &f->pd, 0, 0x10000, 0x2001));
	/* a length that wraps the address space */
	KUNIT_EXPECT_NULL(test, find(f, f->key, &f->pd, 0, U64_MAX - 4, 16));
	KUNIT_EXPECT_NULL(test, find(f, f->key, &f->pd, 0, 0x10000, U32_MAX));
}

static void sge_lists(struct kunit *test)
{
	struct engine_fixture *f = test->priv;
	struct vhca_sge sge[4] = {
		{ .addr = 0x10000, .length = 100, .lkey = f->key },
		{ .addr = 0x10100, .length = 0, .lkey = 0xdead },	/* skipped */
		{ .addr = 0x10200, .length = 200, .lkey = f->key },
		{ .addr = 0x11f00, .length = 0x200, .lkey = f->key },	/* past the end */
	};
	struct vhca_seg seg[4];
	unsigned int n;

	KUNIT_EXPECT_EQ(test, vhca_sges(&f->vdev, sge, 3, &f->pd,
					IB_ACCESS_LOCAL_WRITE, seg, &n), 300);
	KUNIT_EXPECT_EQ(test, n, 2U);
	KUNIT_EXPECT_EQ(test, vhca_sges(&f->vdev, sge, 4, &f->pd, 0, seg, &n), -1);
	sge[0].lkey++;
	KUNIT_EXPECT_EQ(test, vhca_sges(&f->vdev, sge, 1, &f->pd, 0, seg, &n), -1);
}

/* A QP with a 4-slot receive ring in kernel memory, as a process sees it. */
static struct vhca_qp *ring_qp(struct kunit *test)
{
	struct vhca_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct vhca_qgeom g;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_EQ(test, vhca_rq_geometry(4, 1, VHCA_MAX_QP_WR, &g), 0);
	qp->rq.g = g;
	qp->rq.hdr = kunit_kzalloc(test, vhca_ring_bytes(&g), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp->rq.hdr);
	spin_lock_init(&qp->rq_lock);
	return qp;
}

static void pop_recv(struct kunit *test)
{
	struct vhca_qp *qp = ring_qp(test);
	struct vhca_rwqe *slot = vhca_uring_slot(&qp->rq, 0);
	u8 *out = kunit_kzalloc(test, VHCA_MAX_RWQE_STRIDE, GFP_KERNEL);
	struct vhca_rwqe *wqe = (struct vhca_rwqe *)out;
	u32 max_sge, stride = 1U << qp->rq.g.log2_stride;

	KUNIT_EXPECT_FALSE(test, vhca_pop_recv(qp, wqe, &max_sge));

	slot->wr_id = 7;
	slot->num_sge = 1000;	/* past the maximum: the caller refuses it */
	qp->rq.hdr->producer = 1;
	memset(out, 0xcc, VHCA_MAX_RWQE_STRIDE);
	KUNIT_EXPECT_TRUE(test, vhca_pop_recv(qp, wqe, &max_sge));
	KUNIT_EXPECT_EQ(test, wqe->wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, wqe->num_sge, 1000U);
	KUNIT_EXPECT_EQ(test, max_sge, qp->rq.g.max_sge);
	KUNIT_EXPECT_GT(test, wqe->num_sge, max_sge);
	/* one slot's worth copied, not what num_sge claims */
	KUNIT_EXPECT_EQ(test, out[stride], 0xcc);
	KUNIT_EXPECT_EQ(test, qp->rq.hdr->consumer, 1U);
	KUNIT_EXPECT_FALSE(test, vhca_pop_recv(qp, wqe, &max_sge));
}

static void pop_recv_corrupt(struct kunit *test)
{
	struct vhca_qp *qp = ring_qp(test);
	struct vhca_rwqe wqe[64];
	u32 max_sge;

	/* more posted than the ring has slots */
	qp->rq.hdr->producer = 5;
	KUNIT_EXPECT_FALSE(test, vhca_pop_recv(qp, wqe, &max_sge));
	qp->rq.hdr->producer = 0x80000000U;
	KUNIT_EXPECT_FALSE(test, vhca_pop_recv(qp, wqe, &max_sge));
	/* a producer behind the kernel's consumer */
	qp->rq_cons = 3;
	qp->rq.hdr->producer = 2;
	KUNIT_EXPECT_FALSE(test, vhca_pop_recv(qp, wqe, &max_sge));
	/* the consumer index the process sees is not rewound by any of it */
	KUNIT_EXPECT_EQ(test, qp->rq_cons, 3U);
	KUNIT_EXPECT_EQ(test, qp->rq.hdr->consumer, 0U);
	/* and a sane producer again works from the kernel's own index */
	qp->rq.hdr->producer = 4;
	KUNIT_EXPECT_TRUE(test, vhca_pop_recv(qp, wqe, &max_sge));
	KUNIT_EXPECT_EQ(test, qp->rq_cons, 4U);
}

/* A fast-register MR of @pages 4 KiB pages backed by @buf. */
static struct vhca_mr *fast_mr(struct kunit *test, struct engine_fixture *f,
			       u8 *buf, u32 pages, u32 *key)
{
	struct vhca_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	u32 index, i;

	KUNIT_ASSERT_NOT_NULL(test, mr);
	mr->type = VHCA_MR_FAST;
	mr->pd = &f->pd;
	mr->max_pages = pages + 1;
	mr->fpages = kunit_kcalloc(test, mr->max_pages, sizeof(u64), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr->fpages);
	/* in reverse order, so a linear mapping would land elsewhere */
	for (i = 0; i < pages; i++)
		mr->fpages[i] = (uintptr_t)buf + (pages - 1 - i) * SZ_4K;
	mr->npages = pages;
	KUNIT_ASSERT_EQ(test, xa_alloc(&f->vdev.mr_xa, &index, mr,
				       XA_LIMIT(1, VHCA_MAX_MR), GFP_KERNEL), 0);
	*key = index << 8 | 0x11;
	return mr;
}

static void fast_reg(struct kunit *test)
{
	struct engine_fixture *f = test->priv;
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	u8 *buf = kunit_kzalloc(test, 2 * SZ_4K, GFP_KERNEL);
	u64 iova = 0xabc0000 + 0x100;	/* 0x100 into the first page */
	struct vhca_mr *mr;
	u32 key, room;
	u8 *p;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	mr = fast_mr(test, f, buf, 2, &key);

	/* no key works before REG_MR */
	KUNIT_EXPECT_NULL(test, find(f, key, &f->pd, 0, iova, 1));
	/* a region past the page list, another PD, a user MR: refused */
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(&f->vdev, &f->pd, key, iova,
					       2 * SZ_4K, rw, 12),
			(int)IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(&f->vdev, &f->other_pd, key,
					       iova, 16, rw, 12),
			(int)IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(&f->vdev, &f->pd, f->key, iova,
					       16, rw, 12),
			(int)IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_NULL(test, find(f, key, &f->pd, 0, iova, 1));

	KUNIT_ASSERT_EQ(test, vhca_mr_fast_reg(&f->vdev, &f->pd, key, iova,
					       2 * SZ_4K - 0x100, rw, 12),
			(int)IB_WC_SUCCESS);
	KUNIT_EXPECT_PTR_EQ(test, find(f, key, &f->pd, IB_ACCESS_REMOTE_WRITE,
				       iova, 2 * SZ_4K - 0x100), mr);
	KUNIT_EXPECT_NULL(test, find(f, key, &f->pd, IB_ACCESS_REMOTE_READ,
				     iova, 1));
	KUNIT_EXPECT_NULL(test, find(f, key, &f->pd, 0, iova, 2 * SZ_4K));
	/* a valid MR is not registered again before it is invalidated */
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(&f->vdev, &f->pd, key, iova,
					       16, rw, 12),
			(int)IB_WC_LOC_PROT_ERR);

	/* bytes land in the page the list names, not the next one along */
	p = vhca_mr_map(mr, iova, &room);
	KUNIT_EXPECT_PTR_EQ(test, p, buf + SZ_4K + 0x100);
	KUNIT_EXPECT_EQ(test, room, SZ_4K - 0x100);
	p = vhca_mr_map(mr, iova + SZ_4K - 0x100, &room);
	KUNIT_EXPECT_PTR_EQ(test, p, buf);
	KUNIT_EXPECT_EQ(test, room, (u32)SZ_4K);

	/* invalidation: the right key, once, in its own PD */
	KUNIT_EXPECT_FALSE(test, vhca_invalidate(&f->vdev, &f->qp, key ^ 1,
						 false));
	KUNIT_EXPECT_FALSE(test, vhca_invalidate(&f->vdev, &f->other_qp,
						 key, false));
	KUNIT_EXPECT_FALSE(test, vhca_invalidate(&f->vdev, &f->qp, f->key,
						 false));
	KUNIT_EXPECT_TRUE(test, vhca_invalidate(&f->vdev, &f->qp, key,
						false));
	KUNIT_EXPECT_FALSE(test, vhca_invalidate(&f->vdev, &f->qp, key,
						 false));
	KUNIT_EXPECT_NULL(test, find(f, key, &f->pd, 0, iova, 1));
	/* and with a new variant byte it registers again */
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(&f->vdev, &f->pd, key + 1, iova,
					       16, rw, 12),
			(int)IB_WC_SUCCESS);
	KUNIT_EXPECT_NULL(test, find(f, key, &f->pd, 0, iova, 1));
	KUNIT_EXPECT_PTR_EQ(test, find(f, key + 1, &f->pd, 0, iova, 16), mr);
}

/* One WQE of @opcode and @flags through vhca_wqe_check() on a @type QP. */
static int wqe_check(enum ib_qp_type type, bool user, u8 opcode, u8 flags)
{
	/* only ever compared with NULL: the type is uverbs' own */
	static u64 uobj;
	/*
	 * Static: with KASAN's redzones a QP on the stack made this frame
	 * 2240 bytes.  The cases of a suite run one at a time.
	 */
	static struct vhca_qp qp;
	struct vhca_swqe w = { .opcode = opcode, .flags = flags };

	memset(&qp, 0, sizeof(qp));
	qp.ibqp.qp_type = type;
	qp.ibqp.uobject = user ? (void *)&uobj : NULL;
	return vhca_wqe_check(&qp, &w);
}

static void wqe_opcodes(struct kunit *test)
{
	const int bad = IB_WC_LOC_QP_OP_ERR;
	unsigned int op;

	/* what each QP type has */
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_RDMA_READ, 0), 0);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UC, true, IB_UVERBS_WR_RDMA_READ, 0), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UD, true, IB_UVERBS_WR_RDMA_READ, 0), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UC, true, IB_UVERBS_WR_RDMA_WRITE, 0), 0);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UD, true, IB_UVERBS_WR_RDMA_WRITE, 0), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_GSI, false,
					IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, 0), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UD, true, IB_UVERBS_WR_SEND_WITH_IMM, 0), 0);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UC, true,
					IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, 0), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UC, true, IB_UVERBS_WR_SEND_WITH_INV, 0),
			bad);
	/* inline data only where the SGEs are what is sent */
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_SEND,
					VHCA_SWQE_F_INLINE), 0);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_RDMA_WRITE,
					VHCA_SWQE_F_INLINE), 0);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_RDMA_READ,
					VHCA_SWQE_F_INLINE), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true,
					IB_UVERBS_WR_ATOMIC_CMP_AND_SWP,
					VHCA_SWQE_F_INLINE), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_LOCAL_INV,
					VHCA_SWQE_F_INLINE), bad);
	/* fast registration is the kernel's */
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, false, VHCA_WR_REG_MR, 0), 0);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, VHCA_WR_REG_MR, 0), bad);
	/* every opcode vhca has not, on every type */
	for (op = 0; op < 256; op++) {
		if (vhca_wr_op(op))
			continue;
		KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, false, op, 0), bad);
		KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UD, true, op, 0), bad);
	}
	/* windows bind on connected QPs, with nothing inline */
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UC, true, IB_UVERBS_WR_BIND_MW, 0), 0);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UD, true, IB_UVERBS_WR_BIND_MW, 0), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_BIND_MW,
					VHCA_SWQE_F_INLINE), bad);
	/* ATOMIC WRITE: RC only, its 8 bytes in the WQE, never inline */
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_ATOMIC_WRITE, 0), 0);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UC, true, IB_UVERBS_WR_ATOMIC_WRITE, 0), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_ATOMIC_WRITE,
					VHCA_SWQE_F_INLINE), bad);
	KUNIT_EXPECT_TRUE(test, vhca_wr_is(IB_UVERBS_WR_ATOMIC_WRITE,
					   VHCA_OPF_RD_ATOMIC));
#ifdef VHCA_FLUSH
	/*
	 * FLUSH: RC only, no data, so never inline; counted as a READ, and
	 * answered by a READ response of no bytes
	 */
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_FLUSH, 0), 0);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_UC, true, IB_UVERBS_WR_FLUSH, 0), bad);
	KUNIT_EXPECT_EQ(test, wqe_check(IB_QPT_RC, true, IB_UVERBS_WR_FLUSH,
					VHCA_SWQE_F_INLINE), bad);
	KUNIT_EXPECT_TRUE(test, vhca_wr_is(IB_UVERBS_WR_FLUSH,
					   VHCA_OPF_RD_ATOMIC | VHCA_OPF_EMPTY_RESP));
	KUNIT_EXPECT_FALSE(test, vhca_wr_is(IB_UVERBS_WR_FLUSH,
					    VHCA_OPF_DATA_OUT));
#endif
	KUNIT_EXPECT_NULL(test, vhca_wr_op(IB_UVERBS_WR_TSO));
	KUNIT_EXPECT_NULL(test, vhca_wr_op(0xff));
}

#ifdef VHCA_FLUSH
/*
 * FLUSH at its responder: the FETH's values, the QP's grant, then the
 * key's, over the range or the whole MR.
 */
static void flush_checks(struct kunit *test)
{
	struct engine_fixture *f = test->priv;
	const u8 g = IB_FLUSH_GLOBAL, p = IB_FLUSH_PERSISTENT;
	const u8 r = IB_FLUSH_RANGE, m = IB_FLUSH_MR;
	struct vhca_qp *qp = &f->qp;

	qp->ibqp.device = &f->vdev.ibdev;
	f->other_qp.ibqp.device = &f->vdev.ibdev;
	qp->attr.qp_access_flags = IB_ACCESS_FLUSH_GLOBAL |
				   IB_ACCESS_FLUSH_PERSISTENT;
	f->other_qp.attr.qp_access_flags = qp->attr.qp_access_flags;
	rcu_read_lock();
	/* the MR does not grant it yet */
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x10000, 16, g, r),
			IB_WC_REM_ACCESS_ERR);
	f->mr.access |= IB_ACCESS_FLUSH_GLOBAL;
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x10000, 16, g, r), 0);
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x10000, 0x2000, g, r), 0);
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x12000, 0, g, r), 0);
	/* a range reaching past either end */
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x11ff8, 16, g, r),
			IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0xfff8, 16, g, r),
			IB_WC_REM_ACCESS_ERR);
	/* the whole MR: address and length are not looked at */
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0, SZ_1G, g, m), 0);
	/* no vhca MR grants persistence */
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x10000, 16, p, r),
			IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x10000, 16, g | p, m),
			IB_WC_REM_ACCESS_ERR);
	/* values the IBA does not have */
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x10000, 16, 0, r),
			IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x10000, 16, g | 4, r),
			IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x10000, 16, g, 2),
			IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0, SZ_2G + 1, g, m),
			IB_WC_REM_INV_REQ_ERR);
	/* a stale key; another PD's QP */
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key ^ 1, 0x10000, 16, g, m),
			IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, vhca_flush(&f->other_qp, f->key, 0x10000, 16, g,
					 m), IB_WC_REM_ACCESS_ERR);
	/* the QP must grant the type */
	qp->attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE;
	KUNIT_EXPECT_EQ(test, vhca_flush(qp, f->key, 0x10000, 16, g, r),
			IB_WC_REM_INV_REQ_ERR);
	rcu_read_unlock();
}
#endif

/* A READ batch holds an MR: invalidation waits; a late batch backs off. */
static void mr_readers(struct kunit *test)
{
	struct engine_fixture *f = test->priv;

	f->mr.type = VHCA_MR_FAST;
	KUNIT_EXPECT_TRUE(test, vhca_mr_read_begin(&f->mr, f->key));
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr.readers), 1);
	vhca_mr_read_end(&f->mr);
	KUNIT_EXPECT_TRUE(test, vhca_invalidate(&f->vdev, &f->qp, f->key,
						false));
	/* found before the key went, begun after: nothing is read */
	KUNIT_EXPECT_FALSE(test, vhca_mr_read_begin(&f->mr, f->key));
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr.readers), 0);
}

/*
 * The local engine holds the fast-register MRs of what a copy touches; a
 * key that went since the lookup fails the copy, moves no byte and leaves
 * nothing held.
 */
static void copy_held_keys(struct kunit *test)
{
	struct engine_fixture *f = test->priv;
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	u8 *buf = kunit_kzalloc(test, SZ_4K, GFP_KERNEL);
	u8 out[32] = {};
	struct vhca_seg src[2], dst = { .kdst = out, .len = sizeof(out) };
	struct vhca_mr *mr;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(buf, 0x5a, SZ_4K);
	mr = fast_mr(test, f, buf, 1, &key);
	KUNIT_ASSERT_EQ(test, vhca_mr_fast_reg(&f->vdev, &f->pd, key, 0x1000,
					       SZ_4K, rw, 12),
			(int)IB_WC_SUCCESS);
	src[0] = (struct vhca_seg){ .mr = mr, .key = key, .va = 0x1000,
				    .len = 16 };
	src[1] = src[0];	/* the same MR twice */
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&dst, 1, 0, src, 2, 0, 32, NULL),
			0);
	KUNIT_EXPECT_EQ(test, out[31], 0x5a);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->readers), 0);
	/* the second segment's key is stale: the first is let go again */
	memset(out, 0, sizeof(out));
	src[1].key ^= 1;
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&dst, 1, 0, src, 2, 0, 32, NULL),
			1);
	KUNIT_EXPECT_EQ(test, out[0], 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->readers), 0);
	/* a copy that starts past it does not touch it */
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&dst, 1, 0, src, 2, 0, 16, NULL),
			0);
	/* invalidated after the lookup, before the copy */
	src[1].key ^= 1;
	KUNIT_EXPECT_TRUE(test, vhca_mr_revoke(mr, key));
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&dst, 1, 0, src, 1, 0, 16, NULL),
			1);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->readers), 0);
}

/*
 * An ODP MR's map (vhca_odp.c): a copy goes ahead only over pages that
 * are there, writable where it writes, and no invalidation is under way;
 * otherwise it says which pages to fault in, holding nothing.
 */
static void copy_held_odp(struct kunit *test)
{
	struct page *pg[2] = { alloc_page(GFP_KERNEL | __GFP_ZERO),
			       alloc_page(GFP_KERNEL | __GFP_ZERO) };
	struct vhca_mr mr = { .type = VHCA_MR_ODP, .iova = 0x20000,
			      .offset = 0x10, .length = 2 * SZ_4K - 0x10,
			      .max_pages = 2 };
	unsigned long map[2] = {};
	u8 in[64], *p;
	u64 orig;
	struct vhca_seg ks = { .kbuf = in, .len = sizeof(in) };
	struct vhca_seg os = { .mr = &mr, .va = 0x20000 + SZ_4K - 0x10 - 8,
			       .len = 32 };	/* across the two pages */
	struct vhca_fault fault;

	KUNIT_ASSERT_TRUE(test, pg[0] && pg[1]);
	memset(in, 0xc3, sizeof(in));
	mr.odp_map = map;
	/* nothing there: fault in what the copy needs, to be written */
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&os, 1, 4, &ks, 1, 0, 8, &fault),
			VHCA_COPY_FAULT);
	KUNIT_EXPECT_PTR_EQ(test, fault.mr, &mr);
	KUNIT_EXPECT_EQ(test, fault.va, os.va + 4);
	KUNIT_EXPECT_EQ(test, fault.len, 8);
	KUNIT_EXPECT_TRUE(test, fault.write);
	/* without a place to say so: a lost key, of the destination */
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&os, 1, 4, &ks, 1, 0, 8, NULL),
			2);
	/* there, but read-only: still a fault for a write */
	map[0] = (unsigned long)pg[0];
	map[1] = (unsigned long)pg[1];
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&os, 1, 0, &ks, 1, 0, 32, &fault),
			VHCA_COPY_FAULT);
	map[0] |= 1;
	map[1] |= 1;
	/* an invalidation under way: nothing moves */
	atomic_set(&mr.odp_inval, 1);
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&os, 1, 0, &ks, 1, 0, 32, &fault),
			VHCA_COPY_FAULT);
	atomic_set(&mr.odp_inval, 0);
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&os, 1, 0, &ks, 1, 0, 32, &fault),
			0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr.readers), 0);
	/* the bytes are where the map said: the end of page 0, then page 1 */
	p = page_address(pg[0]);
	KUNIT_EXPECT_EQ(test, p[SZ_4K - 8], 0xc3);
	KUNIT_EXPECT_EQ(test, p[SZ_4K - 9], 0);
	p = page_address(pg[1]);
	KUNIT_EXPECT_EQ(test, p[23], 0xc3);
	KUNIT_EXPECT_EQ(test, p[24], 0);
	/* past the map: a fault, never a page beyond it */
	os.va = 0x20000 + 2 * SZ_4K;
	KUNIT_EXPECT_EQ(test, vhca_copy_held(&os, 1, 0, &ks, 1, 0, 8, &fault),
			VHCA_COPY_FAULT);

	/*
	 * An atomic on an ODP word (at 0x18 of page 0): with its page gone,
	 * nothing done and which page to fault in, or a lost key without a
	 * place to say so; with the page back, done.
	 */
	map[0] = 0;
	KUNIT_EXPECT_EQ(test, vhca_atomic(&mr, 0, 0x20008, false, 3, 0, &orig,
					  &fault), -EFAULT);
	KUNIT_EXPECT_PTR_EQ(test, fault.mr, &mr);
	KUNIT_EXPECT_EQ(test, fault.va, 0x20008);
	KUNIT_EXPECT_TRUE(test, fault.write);
	KUNIT_EXPECT_EQ(test, vhca_atomic(&mr, 0, 0x20008, false, 3, 0, &orig,
					  NULL), -EACCES);
	map[0] = (unsigned long)pg[0] | 1;
	memset(page_address(pg[0]), 0, 64);
	KUNIT_EXPECT_EQ(test, vhca_atomic(&mr, 0, 0x20008, false, 3, 0, &orig,
					  &fault), 0);
	KUNIT_EXPECT_EQ(test, orig, 0ULL);
	KUNIT_EXPECT_EQ(test, *(u64 *)(page_address(pg[0]) + 0x18), 3ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr.readers), 0);
	__free_page(pg[0]);
	__free_page(pg[1]);
}

/*
 * A bound type 2 window: an rkey for requests on its QP, within its range
 * and access, never an lkey; a SEND_WITH_INV on another QP leaves it, one
 * on its QP frees it and lets its MR go.
 */
static void mw_keys(struct kunit *test)
{
	struct engine_fixture *f = test->priv;
	struct vhca_qp *other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	struct vhca_mr *win = kunit_kzalloc(test, sizeof(*win), GFP_KERNEL);
	const int w = IB_ACCESS_REMOTE_WRITE;
	u32 index, key;

	KUNIT_ASSERT_NOT_NULL(test, win);
	KUNIT_ASSERT_NOT_NULL(test, other);
	other->ibqp.pd = &f->pd;	/* the same PD, another QP */
	other->uid = 9;
	KUNIT_ASSERT_EQ(test, xa_alloc(&f->vdev.mr_xa, &index, win,
				       XA_LIMIT(1, VHCA_MAX_MR), GFP_KERNEL), 0);
	key = index << 8 | 0x33;
	win->type = VHCA_MR_MW;
	win->mw_type = IB_MW_TYPE_2;
	win->pd = &f->pd;
	win->parent = &f->mr;
	win->iova = 0x10800;
	win->length = 0x100;
	win->access = w;
	win->qp_uid = f->qp.uid;
	win->key = key;
	spin_lock_init(&win->lock);
	atomic_set(&f->mr.nr_mw, 1);

	KUNIT_EXPECT_PTR_EQ(test, vhca_mr_find_remote(&f->vdev, key, &f->qp, w,
						      0x10800, 0x100), win);
	KUNIT_EXPECT_NULL(test, vhca_mr_find(&f->vdev, key, &f->pd, 0,
					     0x10800, 16));
	KUNIT_EXPECT_NULL(test, vhca_mr_find_remote(&f->vdev, key, other, w,
						    0x10800, 16));
	KUNIT_EXPECT_NULL(test, vhca_mr_find_remote(&f->vdev, key, &f->qp,
						    IB_ACCESS_REMOTE_READ,
						    0x10800, 16));
	KUNIT_EXPECT_NULL(test, vhca_mr_find_remote(&f->vdev, key, &f->qp, w,
						    0x108f8, 16));
	KUNIT_EXPECT_FALSE(test, vhca_invalidate(&f->vdev, other, key,
						 true));
	KUNIT_EXPECT_TRUE(test, vhca_invalidate(&f->vdev, &f->qp, key,
						true));
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr.nr_mw), 0);
	KUNIT_EXPECT_NULL(test, vhca_mr_find_remote(&f->vdev, key, &f->qp, w,
						    0x10800, 16));
	xa_erase(&f->vdev.mr_xa, index);
}

/*
 * A bind that found a window just before dealloc_mw took it out of the
 * key table, and runs just after: it binds nothing, and the MR is free to
 * go (before, the MR stayed busy for good and uverbs warned at exit).
 */
static void mw_bind_dead(struct kunit *test)
{
	struct engine_fixture *f = test->priv;
	struct vhca_mr *win = kunit_kzalloc(test, sizeof(*win), GFP_KERNEL);
	struct vhca_swqe w = {};
	u32 index;
	int status;

	KUNIT_ASSERT_NOT_NULL(test, win);
	KUNIT_ASSERT_EQ(test, xa_alloc(&f->vdev.mr_xa, &index, win,
				       XA_LIMIT(1, VHCA_MAX_MR), GFP_KERNEL), 0);
	win->type = VHCA_MR_MW;
	win->mw_type = IB_MW_TYPE_1;
	win->pd = &f->pd;
	spin_lock_init(&win->lock);
	f->mr.access |= IB_ACCESS_MW_BIND;
	w.ex = index << 8 | 0x44;
	w.bind.mr_lkey = f->key;
	w.bind.addr = 0x10800;
	w.bind.length = 0x100;
	w.bind.access = IB_ACCESS_REMOTE_WRITE;

	/* the window is still where the bind looks it up: the race's state */
	vhca_mw_kill(win);
	rcu_read_lock();
	status = vhca_mw_bind(&f->vdev, &f->qp, &w);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, status, IB_WC_MW_BIND_ERR);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr.nr_mw), 0);
	KUNIT_EXPECT_NULL(test, vhca_mr_find_remote(&f->vdev, w.ex, &f->qp,
						    IB_ACCESS_REMOTE_WRITE,
						    0x10800, 16));
	xa_erase(&f->vdev.mr_xa, index);
}

/*
 * The atomics' and ATOMIC WRITE's word: stored and swapped in the page the
 * MR names; refused, untouched, where it is not one aligned word in
 * memory, or once the key was invalidated.  The core keeps an MR's iova
 * and its memory at the same offset in a page, so only a page list entry
 * out of line (which no ULP can make) gets there; nothing may be stored
 * then past the word's page.
 */
static void atomic_word(struct kunit *test)
{
	struct engine_fixture *f = test->priv;
	int acc = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		  IB_ACCESS_REMOTE_ATOMIC;
	u8 *buf = kunit_kzalloc(test, 2 * SZ_4K, GFP_KERNEL);
	const u64 iova = 0xabc0000, v = 0x1122334455667788ULL;
	struct vhca_mr *mr;
	u64 orig = 0, word;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	mr = fast_mr(test, f, buf, 2, &key);
	KUNIT_ASSERT_EQ(test, vhca_mr_fast_reg(&f->vdev, &f->pd, key, iova,
					       2 * SZ_4K, acc, 12),
			(int)IB_WC_SUCCESS);
	/* iova + 8 is 8 bytes into the second page of buf (a reversed list) */
	KUNIT_EXPECT_EQ(test, vhca_atomic_store(mr, key, iova + 8, v, NULL),
			0);
	memcpy(&word, buf + SZ_4K + 8, sizeof(word));
	KUNIT_EXPECT_EQ(test, word, v);
	KUNIT_EXPECT_EQ(test, vhca_atomic(mr, key, iova + 8, true, v, 5, &orig,
					  NULL), 0);
	KUNIT_EXPECT_EQ(test, orig, v);
	KUNIT_EXPECT_EQ(test,
			vhca_atomic(mr, key, iova + 8, false, 2, 0, &orig,
				    NULL), 0);
	KUNIT_EXPECT_EQ(test, orig, 5ULL);
	memcpy(&word, buf + SZ_4K + 8, sizeof(word));
	KUNIT_EXPECT_EQ(test, word, 7ULL);

	/* the first page's entry 4 bytes off: its last word crosses out */
	mr->fpages[0] = (uintptr_t)buf + SZ_4K + 4;
	memset(buf, 0x5a, 2 * SZ_4K);
	KUNIT_EXPECT_EQ(test, vhca_atomic_store(mr, key, iova + SZ_4K - 8, v,
						NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_atomic(mr, key, iova + SZ_4K - 8, false, 1,
					  0, &orig, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_atomic_store(mr, key, iova + 8, v, NULL),
			-EINVAL);
	KUNIT_EXPECT_NULL(test, memchr_inv(buf, 0x5a, 2 * SZ_4K));

	/*
	 * Found before a LOCAL_INV, run after it: the key is checked again
	 * under the hold the invalidation waits for, and nothing is stored.
	 */
	mr->fpages[0] = (uintptr_t)buf + SZ_4K;
	KUNIT_EXPECT_TRUE(test, vhca_mr_revoke(mr, key));
	KUNIT_EXPECT_EQ(test, vhca_atomic_store(mr, key, iova + 8, v, NULL),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_atomic(mr, key, iova + 8, false, 1, 0,
					  &orig, NULL), -EACCES);
	KUNIT_EXPECT_NULL(test, memchr_inv(buf, 0x5a, 2 * SZ_4K));
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->readers), 0);
}

static struct kunit_case vhca_engine_cases[] = {
	KUNIT_CASE(mr_keys),
	KUNIT_CASE(mr_access),
	KUNIT_CASE(mr_ranges),
	KUNIT_CASE(sge_lists),
	KUNIT_CASE(pop_recv),
	KUNIT_CASE(pop_recv_corrupt),
	KUNIT_CASE(fast_reg),
	KUNIT_CASE(wqe_opcodes),
	KUNIT_CASE(mr_readers),
	KUNIT_CASE(copy_held_keys),
	KUNIT_CASE(copy_held_odp),
	KUNIT_CASE(mw_keys),
	KUNIT_CASE(mw_bind_dead),
	KUNIT_CASE(atomic_word),
#ifdef VHCA_FLUSH
	KUNIT_CASE(flush_checks),
#endif
	{}
};

static struct kunit_suite vhca_engine_suite = {
	.name = "vhca-engine",
	.init = engine_init,
	.exit = engine_exit,
	.test_cases = vhca_engine_cases,
};

kunit_test_suite(vhca_engine_suite);
