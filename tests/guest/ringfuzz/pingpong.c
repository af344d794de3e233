// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The clean ping-pong at the end, on the device the fuzz went through: RC
 * SENDs both ways, a WRITE and a READ, then SENDs through fresh XRC
 * objects.
 */
#include "ringfuzz.h"

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 5000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep(1000);
	}
	return 0;
}

/* A fresh XRC domain, its SRQ, an XRC_SEND QP and an XRC_RECV QP. */
struct xleg {
	struct ibv_xrcd *xrcd;
	struct ibv_cq *cq;	/* the SRQ's */
	struct ibv_srq *srq;
	struct ibv_qp *ini, *tgt;
};

/*
 * SENDs from a fresh XRC_SEND QP into a fresh XRC SRQ through a fresh
 * XRC_RECV QP (2 checks): each lands in the SRQ's WQE, byte for byte, and
 * completes on the SRQ's CQ with the XRC_RECV QP's number.  @cq is the
 * XRC_SEND QP's, @a and @b the buffers of @ma and @mb, all of @p.
 */
static void pingpong_xrc(struct xleg *x, struct ibv_pd *p, struct ibv_cq *cq,
			 unsigned char *a, unsigned char *b, struct ibv_mr *ma,
			 struct ibv_mr *mb, size_t len)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct fqp s = { .type = IBV_QPT_XRC_SEND, .kind = P_PAIR, .peer = -1,
			 .srq = -1, .access = full & ~IBV_ACCESS_LOCAL_WRITE };
	struct fqp r = s;
	static const uint32_t sizes[] = { 1, 7, 64, 1000, 4096, 8191, 65536 };
	const int n = sizeof(sizes) / sizeof(sizes[0]);
	uint32_t srqn = 0;
	struct ibv_wc wc;
	int ok, i, good;

	x->xrcd = ibv_open_xrcd(ctx, &xa);
	x->cq = x->xrcd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (x->cq) {
		struct ibv_srq_init_attr_ex sa = {
			.attr = { .max_wr = 16, .max_sge = 1 },
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE |
				     IBV_SRQ_INIT_ATTR_XRCD |
				     IBV_SRQ_INIT_ATTR_CQ |
				     IBV_SRQ_INIT_ATTR_PD,
			.srq_type = IBV_SRQT_XRC,
			.xrcd = x->xrcd, .cq = x->cq, .pd = p,
		};
		struct ibv_qp_init_attr_ex ia = {
			.qp_type = IBV_QPT_XRC_SEND, .send_cq = cq,
			.cap = { .max_send_wr = 16, .max_send_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = p,
		};
		struct ibv_qp_init_attr_ex ta = {
			.qp_type = IBV_QPT_XRC_RECV,
			.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x->xrcd,
		};

		x->srq = ibv_create_srq_ex(ctx, &sa);
		x->ini = ibv_create_qp_ex(ctx, &ia);
		x->tgt = ibv_create_qp_ex(ctx, &ta);
	}
	s.qp = x->ini;
	r.qp = x->tgt;
	ok = x->srq && x->ini && x->tgt && !ibv_get_srq_num(x->srq, &srqn) &&
	     !qp_connect_fixed(&s, x->tgt->qp_num) &&
	     !qp_connect_fixed(&r, x->ini->qp_num);
	check(ok, "pingpong: a fresh XRC domain, XRC SRQ %u, XRC_SEND and "
	      "XRC_RECV QPs, connected", srqn);
	if (!ok)
		return;

	for (i = 0, good = 0; i < n; i++) {
		uint32_t k, sz = sizes[i];
		struct ibv_sge ss = { (uintptr_t)a, sz, ma->lkey };
		struct ibv_sge ds = { (uintptr_t)b, (uint32_t)len, mb->lkey };
		struct ibv_recv_wr rw = { .wr_id = 200 + i, .sg_list = &ds,
					  .num_sge = 1 }, *brw;
		struct ibv_send_wr sw = {
			.wr_id = 300 + i, .sg_list = &ss, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bsw;

		sw.qp_type.xrc.remote_srqn = srqn;
		for (k = 0; k < sz; k++)
			a[k] = (unsigned char)rnd(256);
		memset(b, 0, sz);
		if (ibv_post_srq_recv(x->srq, &rw, &brw) ||
		    ibv_post_send(x->ini, &sw, &bsw))
			break;
		if (wait_wc(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != (uint64_t)(300 + i))
			break;
		if (wait_wc(x->cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != (uint64_t)(200 + i) || wc.byte_len != sz ||
		    wc.qp_num != x->tgt->qp_num || memcmp(a, b, sz))
			break;
		good++;
	}
	check(good == n, "pingpong: %d XRC SENDs of 1 to 65536 bytes into the "
	      "XRC SRQ, on its CQ with the XRC_RECV QP's number, byte for "
	      "byte (%d)", n, good);
}

/* What pingpong_xrc() made, destroyed: QPs, SRQ, domain, CQ.  0 or -1. */
static int xleg_destroy(struct xleg *x)
{
	int err = 0;

	if (x->ini && ibv_destroy_qp(x->ini))
		err = -1;
	if (x->tgt && ibv_destroy_qp(x->tgt))
		err = -1;
	if (x->srq && ibv_destroy_srq(x->srq))
		err = -1;
	if (x->xrcd && ibv_close_xrcd(x->xrcd))
		err = -1;
	if (x->cq && ibv_destroy_cq(x->cq))
		err = -1;
	return err;
}

void pingpong(void)
{
	struct xleg xl = { 0 };
	const size_t len = 64 << 10;
	struct ibv_pd *p = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = p ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	unsigned char *a = malloc(len), *b = malloc(len);
	struct ibv_mr *ma = NULL, *mb = NULL;
	struct fqp x = { .type = IBV_QPT_RC, .kind = P_PAIR, .peer = -1,
			 .srq = -1 };
	struct fqp y = x;
	static const uint32_t sizes[] = { 1, 7, 64, 1000, 1024, 4096, 8191,
					  65536 };
	int ok = 1, i, good;
	struct ibv_wc wc;

	check(p && cq && a && b, "pingpong: fresh PD and CQ on the fuzzed device");
	if (!p || !cq || !a || !b)
		return;
	ma = ibv_reg_mr(p, a, len, full);
	mb = ibv_reg_mr(p, b, len, full);
	x.ia = (struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	x.qp = ibv_create_qp(p, &x.ia);
	y.qp = ibv_create_qp(p, &x.ia);
	check(ma && mb && x.qp && y.qp, "pingpong: MRs and two RC QPs");
	if (!ma || !mb || !x.qp || !y.qp)
		return;
	x.access = y.access = full & ~IBV_ACCESS_LOCAL_WRITE;
	ok = !qp_connect_fixed(&x, y.qp->qp_num) &&
	     !qp_connect_fixed(&y, x.qp->qp_num);
	check(ok, "pingpong: both QPs to RTS, connected");
	if (!ok)
		return;

	good = 0;
	for (i = 0; i < 16; i++) {
		uint32_t n = sizes[i % 8];
		struct ibv_qp *s = i & 1 ? y.qp : x.qp, *d = i & 1 ? x.qp : y.qp;
		unsigned char *sb = i & 1 ? b : a, *db = i & 1 ? a : b;
		struct ibv_mr *sm = i & 1 ? mb : ma, *dm = i & 1 ? ma : mb;
		struct ibv_sge ss = { (uintptr_t)sb, n, sm->lkey };
		struct ibv_sge ds = { (uintptr_t)db, (uint32_t)len, dm->lkey };
		struct ibv_recv_wr rw = { .wr_id = 100 + i, .sg_list = &ds,
					  .num_sge = 1 }, *brw;
		struct ibv_send_wr sw = { .wr_id = i, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bsw;
		int got = 0, j;
		uint32_t k;

		for (k = 0; k < n; k++)
			sb[k] = (unsigned char)rnd(256);
		memset(db, 0, n);
		if (ibv_post_recv(d, &rw, &brw) || ibv_post_send(s, &sw, &bsw))
			break;
		for (j = 0; j < 2; j++) {
			if (wait_wc(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
				break;
			if (wc.wr_id == (uint64_t)(100 + i) && wc.byte_len == n)
				got |= 1;
			if (wc.wr_id == (uint64_t)i)
				got |= 2;
		}
		if (got != 3 || memcmp(sb, db, n))
			break;
		good++;
	}
	check(good == 16, "pingpong: 16 SENDs of 1 to 65536 bytes, received "
	      "byte for byte (%d)", good);

	/* RDMA WRITE x -> y and READ it back into a */
	{
		struct ibv_sge ss = { (uintptr_t)a, 8192, ma->lkey };
		struct ibv_send_wr sw = {
			.wr_id = 1000, .sg_list = &ss, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)b + 4096, mb->rkey },
		}, *bsw;
		uint32_t k;

		for (k = 0; k < 8192; k++)
			a[k] = (unsigned char)rnd(256);
		ok = !ibv_post_send(x.qp, &sw, &bsw) && wait_wc(cq, &wc) == 1 &&
		     wc.status == IBV_WC_SUCCESS && !memcmp(a, b + 4096, 8192);
		check(ok, "pingpong: RDMA WRITE of 8192 bytes lands byte for byte");
		memset(a + 16384, 0, 8192);
		ss.addr = (uintptr_t)a + 16384;
		sw.opcode = IBV_WR_RDMA_READ;
		sw.wr_id = 1001;
		ok = !ibv_post_send(x.qp, &sw, &bsw) && wait_wc(cq, &wc) == 1 &&
		     wc.status == IBV_WC_SUCCESS &&
		     !memcmp(a + 16384, b + 4096, 8192);
		check(ok, "pingpong: RDMA READ of 8192 bytes comes back byte for byte");
	}
	pingpong_xrc(&xl, p, cq, a, b, ma, mb, len);
	check(!xleg_destroy(&xl) && !ibv_destroy_qp(x.qp) &&
	      !ibv_destroy_qp(y.qp) && !ibv_dereg_mr(ma) && !ibv_dereg_mr(mb) &&
	      !ibv_destroy_cq(cq) && !ibv_dealloc_pd(p),
	      "pingpong: everything destroyed, the XRC objects too");
	free(a);
	free(b);
}
