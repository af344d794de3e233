// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * FLUSH (IBA 1.5, ibv_wr_flush() of rdma-core 56): an RC QP on REQ asks
 * one on RESP to make what it wrote visible; RESP's MRs decide.  REQ and
 * RESP may be one vhca device (the same-host engine) or vhca and rxe on
 * two ends of a link (the wire, either way: tests/guest/flush.sh).  What
 * it completes with for each range, level, type and key, and, where REQ
 * is vhca, what the provider refuses.  TAP output.
 *
 *   flush REQ REQ_GID_INDEX RESP RESP_GID_INDEX yes|no
 *
 * The last argument says whether REQ's kernel has FLUSH in its verbs
 * (6.2 on), as its caller knows: the device must say the same.
 */
#include <stdlib.h>
#include <unistd.h>

#include "lib/testlib.h"

#if VHCA_RDMA_CORE >= 56

#define BUF 8192
/* IB_UVERBS_DEVICE_FLUSH_GLOBAL and _PERSISTENT: libibverbs names neither */
#define DEV_FLUSH_GLOBAL	(1ULL << 38)
#define DEV_FLUSH_PERSISTENT	(1ULL << 39)
#define QP_FLUSH (IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT)

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	uint8_t gidx;
};

static struct end req, resp;
static unsigned char *src, *dst;
static struct ibv_mr *smr;	/* src on REQ */
static struct ibv_mr *dmr;	/* dst on RESP: remote write and FLUSH_GLOBAL */
static bool req_vhca, resp_vhca;

struct pair {
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *a, *b;	/* a on REQ, b on RESP */
	struct ibv_qp_ex *ax;
};

static struct ibv_qp *make_qp(struct end *e, struct ibv_cq *cq,
			      enum ibv_qp_type t, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t, .pd = e->pd,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
	};

	return ibv_create_qp_ex(e->ctx, &ia);
}

/* b grants @b_access besides remote read, write and atomics */
static int pair_up(struct pair *p, int b_access)
{
	const uint64_t ops = IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_RDMA_WRITE;
	struct qp_path pa = { .gid = &resp.gid, .sgid_index = req.gidx,
			      .access = QP_FLUSH };
	struct qp_path pb = { .gid = &req.gid, .sgid_index = resp.gidx,
			      .access = b_access };

	memset(p, 0, sizeof(*p));
	p->acq = ibv_create_cq(req.ctx, 32, NULL, NULL, 0);
	p->bcq = ibv_create_cq(resp.ctx, 32, NULL, NULL, 0);
	p->a = p->acq ? make_qp(&req, p->acq, IBV_QPT_RC, ops) : NULL;
	p->b = p->bcq ? make_qp(&resp, p->bcq, IBV_QPT_RC, ops) : NULL;
	if (!p->a || !p->b)
		return -1;
	p->ax = ibv_qp_to_qp_ex(p->a);
	pa.dest = p->b->qp_num;
	pb.dest = p->a->qp_num;
	return !p->ax || qp_rts_path(p->a, &pa) || qp_rts_path(p->b, &pb) ?
	       -1 : 0;
}

static void pair_down(struct pair *p)
{
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->b)
		ibv_destroy_qp(p->b);
	if (p->acq)
		ibv_destroy_cq(p->acq);
	if (p->bcq)
		ibv_destroy_cq(p->bcq);
}

/* One signaled FLUSH from @p's a: ibv_wr_complete()'s errno. */
static int flush(struct pair *p, uint32_t rkey, uint64_t addr, size_t len,
		 uint8_t type, uint8_t level)
{
	ibv_wr_start(p->ax);
	p->ax->wr_id = 7;
	p->ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(p->ax, rkey, addr, len, type, level);
	return ibv_wr_complete(p->ax);
}

/* What a fresh pair's one FLUSH completes with (-1: not posted), b granting @b_access. */
static int flush_status(int b_access, uint32_t rkey, uint64_t addr,
			size_t len, uint8_t type, uint8_t level)
{
	struct pair p;
	int st = -1;

	if (!pair_up(&p, b_access) && !flush(&p, rkey, addr, len, type, level))
		st = next_wc(p.acq).status;
	pair_down(&p);
	return st;
}

static bool dev_flag(struct ibv_context *ctx, uint64_t flag)
{
	struct ibv_device_attr_ex da;

	return !ibv_query_device_ex(ctx, NULL, &da) &&
	       (da.device_cap_flags_ex & flag);
}

static bool is_vhca(struct ibv_context *ctx)
{
	return !strncmp(ibv_get_device_name(ctx->device), "vhca", 4);
}

/* What REQ, a vhca device, offers and refuses before anything is sent. */
static void provider_tests(void)
{
	struct ibv_cq *cq = ibv_create_cq(req.ctx, 4, NULL, NULL, 0);
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_FLUSH,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { (uintptr_t)dst, dmr->rkey } },
			   *bad = NULL;
	struct ibv_mr *pm;
	struct ibv_wc wc;
	struct ibv_qp *q;
	struct pair p;
	int e;

	check(!dev_flag(req.ctx, DEV_FLUSH_PERSISTENT),
	      "the device does not offer persistence (IB_UVERBS_DEVICE_FLUSH_PERSISTENT): its memory is not persistent");
	pm = ibv_reg_mr(req.pd, src, BUF, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_FLUSH_PERSISTENT);
	check(!pm, "an MR asking for IBV_ACCESS_FLUSH_PERSISTENT is refused (%s)",
	      pm ? "made" : strerror(errno));
	if (pm)
		ibv_dereg_mr(pm);
	q = cq ? make_qp(&req, cq, IBV_QPT_UC, IBV_QP_EX_WITH_FLUSH) : NULL;
	check(!q && errno == EOPNOTSUPP,
	      "a UC QP with IBV_QP_EX_WITH_FLUSH: EOPNOTSUPP (RC only)");
	if (q)
		ibv_destroy_qp(q);
	if (cq)
		ibv_destroy_cq(cq);

	if (pair_up(&p, QP_FLUSH)) {
		check(0, "an RC pair with IBV_QP_EX_WITH_FLUSH");
		pair_down(&p);
		return;
	}
	ibv_wr_start(p.ax);
	ibv_wr_flush(p.ax, dmr->rkey, (uintptr_t)dst, 64, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	ibv_wr_set_sge(p.ax, smr->lkey, (uintptr_t)src, 8);
	e = ibv_wr_complete(p.ax);
	check(e == EINVAL, "a FLUSH with an SGE: EINVAL (it moves no data)");
	ibv_wr_start(p.ax);
	ibv_wr_flush(p.ax, dmr->rkey, (uintptr_t)dst, 1ULL << 32,
		     IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	e = ibv_wr_complete(p.ax);
	check(e == EINVAL, "a range of 4 GiB: EINVAL (the RETH's length has 32 bits)");
	e = ibv_post_send(p.a, &wr, &bad);
	check(e == EINVAL && bad == &wr,
	      "ibv_post_send() with IBV_WR_FLUSH: EINVAL, *bad_wr set (no room for type and level)");
	check(ibv_poll_cq(p.acq, 1, &wc) == 0,
	      "none of the refused ones was posted: no completion");
	pair_down(&p);
}

static void data_tests(void)
{
	struct ibv_wc wc;
	struct pair p;
	int e;

	if (pair_up(&p, QP_FLUSH)) {
		check(0, "an RC pair with IBV_QP_EX_WITH_FLUSH, %s to %s",
		      ibv_get_device_name(req.ctx->device),
		      ibv_get_device_name(resp.ctx->device));
		pair_down(&p);
		return;
	}
	memset(dst, 0, BUF);
	memset(src, 0x5a, BUF);
	/* a WRITE, then the FLUSH of what it placed, in one batch */
	ibv_wr_start(p.ax);
	p.ax->wr_id = 1;
	p.ax->wr_flags = 0;
	ibv_wr_rdma_write(p.ax, dmr->rkey, (uintptr_t)dst + 100);
	ibv_wr_set_sge(p.ax, smr->lkey, (uintptr_t)src, 3000);
	p.ax->wr_id = 2;
	p.ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(p.ax, dmr->rkey, (uintptr_t)dst + 100, 3000,
		     IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	e = ibv_wr_complete(p.ax);
	wc = next_wc(p.acq);
	check(!e && wc.status == IBV_WC_SUCCESS && wc.wr_id == 2 &&
	      wc.opcode == IBV_WC_FLUSH,
	      "a WRITE, then a FLUSH (global, range) of it: completes as IBV_WC_FLUSH (status %d, opcode %d)",
	      wc.status, wc.opcode);
	check(dst[99] == 0 && dst[100] == 0x5a && dst[3099] == 0x5a &&
	      dst[3100] == 0, "and the WRITE's bytes are there, no others");
	check(ibv_poll_cq(p.bcq, 1, &wc) == 0,
	      "the responder takes no receive WQE and completes nothing for it");
	/* IBV_FLUSH_MR: address and length are ignored */
	e = flush(&p, dmr->rkey, 0, 12345678, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR);
	wc = next_wc(p.acq);
	check(!e && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FLUSH,
	      "a FLUSH of the whole MR, its address 0 and length past its end: success (status %d)",
	      wc.status);
	e = flush(&p, dmr->rkey, (uintptr_t)dst, 0, IBV_FLUSH_GLOBAL,
		  IBV_FLUSH_RANGE);
	wc = next_wc(p.acq);
	check(!e && wc.status == IBV_WC_SUCCESS,
	      "a FLUSH of an empty range: success (status %d)", wc.status);
	pair_down(&p);
}

static void refusal_tests(void)
{
	struct ibv_mr *nf = ibv_reg_mr(resp.pd, dst, BUF, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE);
	int st;

	st = flush_status(QP_FLUSH, dmr->rkey, (uintptr_t)dst, 64,
			  IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "a persistent FLUSH through an MR that grants global only: REM_ACCESS_ERR (%d)",
	      st);
	st = nf ? flush_status(QP_FLUSH, nf->rkey, (uintptr_t)dst, 64,
			       IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE) : -2;
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "through an MR without IBV_ACCESS_FLUSH_GLOBAL: REM_ACCESS_ERR (%d)",
	      st);
	st = flush_status(QP_FLUSH, dmr->rkey, (uintptr_t)dst + BUF - 8, 64,
			  IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "a range past the MR's end: REM_ACCESS_ERR (%d)", st);
	st = flush_status(QP_FLUSH, dmr->rkey ^ 0x5a, (uintptr_t)dst, 64,
			  IBV_FLUSH_GLOBAL, IBV_FLUSH_MR);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "a key no MR has, at MR level: REM_ACCESS_ERR (%d)", st);
	st = flush_status(0, dmr->rkey, (uintptr_t)dst, 64, IBV_FLUSH_GLOBAL,
			  IBV_FLUSH_RANGE);
	check(st == IBV_WC_REM_INV_REQ_ERR,
	      "to a QP that does not grant IBV_ACCESS_FLUSH_GLOBAL: REM_INV_REQ_ERR (%d)",
	      st);
	if (resp_vhca) {
		/* rxe's responder takes any of these; vhca's judges them */
		st = flush_status(QP_FLUSH, dmr->rkey, (uintptr_t)dst, 64, 0,
				  IBV_FLUSH_RANGE);
		check(st == IBV_WC_REM_INV_REQ_ERR,
		      "to vhca, a FLUSH of no placement type: REM_INV_REQ_ERR (%d)",
		      st);
		st = flush_status(QP_FLUSH, dmr->rkey, (uintptr_t)dst, 64,
				  IBV_FLUSH_GLOBAL, 2);
		check(st == IBV_WC_REM_INV_REQ_ERR,
		      "to vhca, a selectivity level that is no IBA value: REM_INV_REQ_ERR (%d)",
		      st);
	}
	if (nf)
		ibv_dereg_mr(nf);
}

static int open_end(struct end *e, const char *name, const char *gidx)
{
	e->ctx = open_dev(name);
	e->gidx = (uint8_t)atoi(gidx);
	e->pd = e->ctx ? ibv_alloc_pd(e->ctx) : NULL;
	return e->pd && !ibv_query_gid(e->ctx, 1, e->gidx, &e->gid) ? 0 : -1;
}

int main(int argc, char **argv)
{
	bool want;

	if (argc != 6 || open_end(&req, argv[1], argv[2]) ||
	    open_end(&resp, argv[3], argv[4])) {
		check(0, "open REQ and RESP (flush REQ GIDX RESP GIDX yes|no)");
		return tap_done();
	}
	want = !strcmp(argv[5], "yes");
	req_vhca = is_vhca(req.ctx);
	resp_vhca = is_vhca(resp.ctx);
	printf("# %s (gid %s) to %s (gid %s)\n", argv[1], argv[2], argv[3],
	       argv[4]);
	check(dev_flag(req.ctx, DEV_FLUSH_GLOBAL) == want,
	      "%s says it has FLUSH to global visibility (IB_UVERBS_DEVICE_FLUSH_GLOBAL) exactly when its kernel's verbs do (%s)",
	      argv[1], argv[5]);
	if (!want)
		return tap_done();
	src = aligned_alloc(4096, BUF);
	dst = aligned_alloc(4096, BUF);
	smr = src ? ibv_reg_mr(req.pd, src, BUF, IBV_ACCESS_LOCAL_WRITE) : NULL;
	dmr = dst ? ibv_reg_mr(resp.pd, dst, BUF, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_FLUSH_GLOBAL) : NULL;
	check(smr && dmr, "MRs, the responder's with IBV_ACCESS_FLUSH_GLOBAL");
	if (!smr || !dmr)
		return tap_done();
	if (req_vhca)
		provider_tests();
	data_tests();
	refusal_tests();
	return tap_done();
}

#else

int main(void)
{
	check(0, "flush: built against rdma-core %d, whose verbs have no ibv_wr_flush()",
	      VHCA_RDMA_CORE);
	return tap_done();
}

#endif
