// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The send rings: WQEs written straight into the SQ's slots, and posts. */
#include "ringfuzz.h"

static const uint8_t legit_ops[] = {
	IB_UVERBS_WR_SEND, IB_UVERBS_WR_SEND_WITH_IMM, IB_UVERBS_WR_RDMA_WRITE,
	IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, IB_UVERBS_WR_RDMA_READ,
	IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD,
	IB_UVERBS_WR_SEND_WITH_INV, IB_UVERBS_WR_LOCAL_INV,
};

static uint8_t any_opcode(void)
{
	int r = rnd(100);

	if (r < 70)
		return legit_ops[rnd(sizeof(legit_ops))];
	if (r < 78)
		return VHCA_WR_REG_MR;
	if (r < 90)
		return rnd(14);	/* every IB_UVERBS_WR_* value */
	return (uint8_t)rnd(256);
}

static uint8_t any_flags(void)
{
	if (chance(85))
		return rnd(16);	/* SIGNALED, SOLICITED, FENCE, INLINE */
	return (uint8_t)rnd(256);
}

static uint32_t any_inline_len(uint32_t max, uint32_t room)
{
	switch (rnd(12)) {
	case 0:
		return 0;
	case 1:
		return max;
	case 2:
		return max + 1;
	case 3:
		return room;
	case 4:
		return room + 1;
	case 5:
		return 0xffffffff;
	case 6:
		return 0x80000000;
	case 7:
		return VHCA_MAX_INLINE + 1;
	default:
		return rnd(max + 1);
	}
}

static void fill_av(struct vhca_av *av, struct fqp *q)
{
	static const uint8_t mcast[16] = { 0xff, 0x02, [15] = 1 };
	union ibv_gid nb = nobody_gid();
	int r = rnd(10);

	memset(av, 0, sizeof(*av));
	if (r < 6)
		memcpy(av->dgid, gid.raw, 16);
	else if (r < 8)
		memcpy(av->dgid, nb.raw, 16);
	else if (r < 9)
		memcpy(av->dgid, mcast, 16);
	else if (gid.raw[0] == 0xfe) {
		memcpy(av->dgid, gid.raw, 16);
		av->dgid[15] ^= (uint8_t)(1 + rnd(255));	/* a neighbour */
	} else {
		memcpy(av->dgid, nb.raw, 16);
	}
	av->flow_label = chance(80) ? 0 : (uint32_t)rnd64();
	/*
	 * Any source GID for a datagram that stays on this host; on the
	 * wire only GID 0, link-local like the destinations above, so that
	 * nothing is addressed beyond the guest's own link.
	 */
	av->sgid_index = r < 6 && chance(20) ? (uint8_t)rnd(256) : 0;
	av->hop_limit = chance(80) ? 64 : (uint8_t)rnd(256);
	av->traffic_class = chance(80) ? 0 : (uint8_t)rnd(256);
	av->network_type = chance(70) ? (gid.raw[10] == 0xff ? 1 : 2) :
			   (uint8_t)rnd(256);
	if (chance(20))
		for (int i = 0; i < 6; i++)
			av->dmac[i] = (uint8_t)rnd(256);
	(void)q;
}

static uint32_t any_qpn(void)
{
	int i = rnd(nqp);

	if (chance(80) && qps[i].qp)
		return qps[i].qp->qp_num;
	return chance(50) ? rnd(1 << 24) : (uint32_t)rnd64();
}

/*
 * Steer the random phase around the kernel defects already known (see
 * --only-known); --allow-known lets them through.
 */
static void avoid_known(const struct fqp *q, struct vhca_swqe *w)
{
	if (allow_known)
		return;
	/* read-inline: an RDMA READ with INLINE on a local RC (or XRC) QP */
	if (qpt_rc(q->type) && q->kind != P_WIRE &&
	    w->opcode == IB_UVERBS_WR_RDMA_READ)
		w->flags &= ~VHCA_SWQE_F_INLINE;
	/* ud-write: RDMA WRITE (with or without immediate) on a UD QP */
	if (q->type == IBV_QPT_UD &&
	    (w->opcode == IB_UVERBS_WR_RDMA_WRITE ||
	     w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM))
		w->opcode = IB_UVERBS_WR_SEND;
}

/*
 * A number the kernel takes from userspace but numbers itself: a basic
 * SRQ's.  It tells only XRC SRQs theirs; but one allocator numbers all of
 * a device's SRQs, lowest free first, from 1, and the world's SRQs are
 * the device's only ones, made together: of 1 to NSRQ, the numbers no XRC
 * SRQ has are basic SRQs'.  (Were it wrong, it is one more number.)
 */
uint32_t basic_srqn(void)
{
	uint32_t n;
	int i;

	for (n = 1; n <= NSRQ; n++) {
		for (i = NBSRQ; i < NSRQ; i++)
			if (srqs[i].srq && srqs[i].num == n)
				break;
		if (i == NSRQ)
			return n;
	}
	return 1;
}

/* One of the world's XRC SRQs' numbers, or 0 if it has none. */
static uint32_t xrc_srqn(void)
{
	const struct fsrq *s = &srqs[NBSRQ + rnd(NSRQ - NBSRQ)];

	return s->srq ? s->num : 0;
}

/*
 * The SRQ an XRC_SEND WQE names: mostly one of the domain's, else a basic
 * SRQ's number, none, or any number, of 24 bits (XRCETH's) or more (the
 * provider refuses those; the ring takes whatever it is given).  Other
 * types' WQEs leave the word 0, but the kernel must ignore whatever it
 * holds: sometimes garbage, or a real XRC SRQ's number.
 */
static uint32_t any_xrc_srqn(const struct fqp *q)
{
	int r = rnd(100);

	if (q->type != IBV_QPT_XRC_SEND)
		return r < 90 ? 0 : r < 95 ? xrc_srqn() : (uint32_t)rnd64();
	if (r < 55)
		return xrc_srqn();
	if (r < 65)
		return basic_srqn();
	if (r < 72)
		return 0;
	if (r < 85)
		return rnd(1 << 24);
	if (r < 92)	/* a real one, with bits above XRCETH's 24 */
		return xrc_srqn() | (1 + rnd(255)) << 24;
	return (uint32_t)rnd64();
}

static void gen_swqe(struct fqp *q, struct vhca_swqe *w, size_t stride)
{
	uint32_t room_sge = (uint32_t)(stride - VHCA_SWQE_HDR_SIZE) /
			    sizeof(struct vhca_sge);
	const struct fmr *m = &mrs[chance(60) ? 0 : rnd(NMR)];
	uint32_t i, n, rlen;

	memset(w, 0, stride);
	w->wr_id = rnd64();
	w->opcode = any_opcode();
	w->flags = any_flags();
	if ((w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	     w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) && chance(60))
		w->flags &= ~VHCA_SWQE_F_INLINE;
	w->num_sge = any_num_sge(q->v->max_send_sge);
	w->ex = chance(50) ? any_key() : (uint32_t)rnd64();
	if (w->flags & VHCA_SWQE_F_INLINE) {
		w->inline_len = any_inline_len(q->v->max_inline,
					       (uint32_t)stride - VHCA_SWQE_HDR_SIZE);
		n = (uint32_t)(stride - VHCA_SWQE_HDR_SIZE) / 8;
		for (i = 0; i < n; i++)
			((uint64_t *)w->sge)[i] = rnd64();
	} else {
		w->inline_len = chance(90) ? 0 : (uint32_t)rnd64();
		n = w->num_sge < room_sge ? w->num_sge : room_sge;
		for (i = 0; i < n; i++)
			fill_sge(&w->sge[i]);
		/* atomics: one 8-byte SGE, mostly */
		if (n && chance(50) &&
		    (w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
		     w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD)) {
			w->num_sge = 1;
			w->sge[0].length = 8;
			w->sge[0].addr = mrs[0].addr + (rnd(1024) << 3);
			w->sge[0].lkey = mrs[0].mr->lkey;
		}
	}
	if (q->type == IBV_QPT_UD && chance(90)) {
		fill_av(&w->ud.av, q);
		w->ud.remote_qpn = any_qpn();
		w->ud.remote_qkey = chance(70) ? QKEY :
				    chance(50) ? 0x80000000 : (uint32_t)rnd64();
	} else if (w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
		   w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) {
		w->atomic.remote_addr = chance(60) ?
			mrs[0].addr + (rnd(8192) << 3) : any_addr(m, 8);
		w->atomic.compare_add = rnd64();
		w->atomic.swap = rnd64();
		w->atomic.rkey = chance(70) && m->mr ? m->mr->rkey : any_key();
	} else if (chance(95)) {
		rlen = any_len(m);
		w->rdma.remote_addr = any_addr(m, rlen);
		w->rdma.rkey = chance(70) && m->mr ? m->mr->rkey : any_key();
	} else {
		for (i = 0; i < sizeof(w->raw); i++)
			w->raw[i] = (uint8_t)rnd(256);
	}
	/* a wire QP's peer is DEV: its MR, mostly */
	if (q->kind == P_WIRE && far.mr && q->type != IBV_QPT_UD && chance(70)) {
		struct fmr fm = { .mr = far.mr, .addr = (uintptr_t)far.buf,
				  .len = BUFSZ };

		if (w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
		    w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) {
			w->atomic.remote_addr = chance(70) ?
				fm.addr + (rnd(BUFSZ / 8) << 3) : any_addr(&fm, 8);
			w->atomic.rkey = chance(80) ? far.mr->rkey : any_key();
		} else {
			rlen = any_len(&fm);
			w->rdma.remote_addr = any_addr(&fm, rlen);
			w->rdma.rkey = chance(80) ? far.mr->rkey : any_key();
		}
	}
	if (w->opcode == VHCA_WR_REG_MR && chance(50)) {
		w->reg.iova = any_addr(m, 4096);
		w->reg.length = chance(50) ? any_len(m) : rnd64();
		w->reg.access = chance(50) ? (uint32_t)full : (uint32_t)rnd64();
		w->reg.page_shift = chance(50) ? 12 : rnd(70);
	}
	w->xrc_srqn = any_xrc_srqn(q);
	avoid_known(q, w);
}

void dump_swqe(const char *what, const struct fqp *q, uint32_t idx,
		      const struct vhca_swqe *w, size_t stride)
{
	uint32_t i, n;

	if (!trace)
		return;
	fprintf(stderr, "%s qp#%ld %s qpn=%#x idx=%#x op=%#x fl=%#x nsge=%u "
		"ex=%#x inl=%#x xsrqn=%#x u=", what, (long)(q - qps),
		qpt_name(q->type), q->qp->qp_num, idx, w->opcode, w->flags,
		w->num_sge, w->ex, w->inline_len, w->xrc_srqn);
	for (i = 0; i < sizeof(w->raw); i++)
		fprintf(stderr, "%02x", w->raw[i]);
	n = (uint32_t)(stride - VHCA_SWQE_HDR_SIZE) / sizeof(struct vhca_sge);
	if (w->num_sge < n)
		n = w->num_sge;
	if (w->flags & VHCA_SWQE_F_INLINE)
		n = 0;
	for (i = 0; i < n; i++)
		fprintf(stderr, " sge%u=%#llx/%#x/%#x", i,
			(unsigned long long)w->sge[i].addr,
			w->sge[i].length, w->sge[i].lkey);
	fprintf(stderr, "\n");
}

/* A legitimate post through the provider: publishes and rings. */
void legit_send(struct fqp *q)
{
	struct ibv_sge sge = { .addr = mrs[0].addr + rnd(4096),
			       .length = rnd(64), .lkey = mrs[0].mr->lkey };
	struct ibv_send_wr wr = { .wr_id = rnd64(), .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = chance(50) ? IBV_SEND_SIGNALED : 0 };
	struct ibv_send_wr *bad;
	struct ibv_ah *ah = NULL;

	if (q->type == IBV_QPT_UD) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					  .grh = { .dgid = gid, .hop_limit = 1 } };

		ah = ibv_create_ah(pd, &aa);
		if (!ah)
			return;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = any_qpn();
		wr.wr.ud.remote_qkey = QKEY;
	} else if ((q->type == IBV_QPT_RC || q->type == IBV_QPT_XRC_SEND) &&
		   chance(30)) {
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = mrs[0].addr + 8192;
		wr.wr.rdma.rkey = mrs[0].mr->rkey;
	}
	/* an SRQ of the domain: the one on pd2 refuses the WRITE's key */
	if (q->type == IBV_QPT_XRC_SEND)
		wr.qp_type.xrc.remote_srqn = xrc_srqn();
	if (trace)
		fprintf(stderr, "post_send qp#%ld op=%d len=%u xsrqn=%#x\n",
			(long)(q - qps), wr.opcode, sge.length,
			wr.qp_type.xrc.remote_srqn);
	st.posts++;
	ibv_post_send(q->qp, &wr, &bad);
	if (ah)
		ibv_destroy_ah(ah);
}

void fuzz_send(struct fqp *q)
{
	struct vhca_mring *r = &q->v->sq;
	size_t stride;
	int k = 1 + rnd(4), i;
	uint32_t cons;

	/* an XRC_RECV QP has no ring to write: its doorbell is all there is */
	if (!has_sq(q)) {
		doorbell(q);
		return;
	}
	stride = (size_t)1 << r->log2_stride;
	for (i = 0; i < k; i++) {
		cons = __atomic_load_n(&r->hdr->consumer, __ATOMIC_ACQUIRE);
		/* mostly into free slots; sometimes over what waits */
		if (vhca_ring_full(r->idx, cons, r->log2_slots) && chance(80))
			break;
		gen_swqe(q, vhca_mring_slot(r, r->idx), stride);
		dump_swqe("swqe", q, r->idx, vhca_mring_slot(r, r->idx), stride);
		r->idx++;
		st.wqes++;
		if (q->type == IBV_QPT_XRC_SEND)
			st.xwqes++;
	}
	__atomic_store_n(&r->hdr->producer, r->idx, __ATOMIC_RELEASE);
	if (chance(80))
		doorbell(q);
	else if (chance(50))
		legit_send(q);
}
