// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory windows and rereg_mr on one device: QP pairs connected to each
 * other, so the same-host engine carries their requests.  What a window
 * grants, to whom and until when; what a bind may and may not do; what
 * rereg_mr changes.  TAP output.
 *
 *   mw DEV
 */
#include <stdlib.h>
#include <unistd.h>

#include "lib/testlib.h"

#define BUF 65536
#define WIN_OFF 4096	/* the window covers [buf + WIN_OFF, + WIN_LEN) */
#define WIN_LEN 8192

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static unsigned char *buf, *src;
static struct ibv_mr *smr;	/* src: what WRITEs send, READs fill */

/* Two QPs of @pd connected to each other: a owns the memory, b uses it. */
struct pair {
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;
};

static struct ibv_qp *make_qp(struct ibv_pd *p, struct ibv_cq *cq,
			      enum ibv_qp_type t)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};

	return ibv_create_qp(p, &ia);
}

static int pair_up(struct pair *p, enum ibv_qp_type t)
{
	p->cqa = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	p->cqb = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	p->a = p->cqa ? make_qp(pd, p->cqa, t) : NULL;
	p->b = p->cqb ? make_qp(pd, p->cqb, t) : NULL;
	if (!p->a || !p->b)
		return -1;
	return qp_rts_to(p->a, p->b->qp_num, &gid) ||
	       qp_rts_to(p->b, p->a->qp_num, &gid) ? -1 : 0;
}

static void pair_down(struct pair *p)
{
	ibv_destroy_qp(p->a);
	ibv_destroy_qp(p->b);
	ibv_destroy_cq(p->cqa);
	ibv_destroy_cq(p->cqb);
}

static int post(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	return ibv_post_send(qp, wr, &bad);
}

/* A type 2 bind of @mw over [addr, addr + len) of @mr from @qp, as @key. */
static int bind2(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t key,
		 struct ibv_mr *mr, size_t off, size_t len, unsigned int acc)
{
	struct ibv_send_wr wr = {
		.wr_id = 2, .opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = mw, .rkey = key, .bind_info = {
			.mr = mr, .addr = (uintptr_t)mr->addr + off,
			.length = len, .mw_access_flags = acc } },
	};

	return post(qp, &wr);
}

/* An RDMA @op of @len bytes at @addr, @rkey, from @qp: its status. */
static int rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
		uint32_t rkey, uint64_t addr, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)src, len, smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .opcode = op, .sg_list = &sge, .num_sge = 1,
		.wr.rdma = { .remote_addr = addr, .rkey = rkey },
	};

	if (post(qp, &wr))
		return -2;
	return next_wc(cq).status;
}

/* LOCAL_INV of @key from @p's a: its status. */
static int inv(struct pair *p, uint32_t key)
{
	struct ibv_send_wr wr = { .wr_id = 3, .opcode = IBV_WR_LOCAL_INV,
				  .invalidate_rkey = key };
	struct ibv_wc wc;

	if (post(p->a, &wr))
		return -2;
	wc = next_wc(p->cqa);
	return wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_LOCAL_INV ?
	       -3 : (int)wc.status;
}

/*
 * A SEND_WITH_INV of @key from @p's b into a receive of a, in @mr: the
 * sender's completion in *@swc, the receiver's in *@rwc.
 */
static void send_inv(struct pair *p, struct ibv_mr *mr, uint32_t key,
		     struct ibv_wc *swc, struct ibv_wc *rwc)
{
	struct ibv_sge rs = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 4, .sg_list = &rs, .num_sge = 1 },
			   *rbad;
	struct ibv_send_wr s = { .wr_id = 5, .opcode = IBV_WR_SEND_WITH_INV,
				 .invalidate_rkey = key };

	swc->status = NO_WC;
	rwc->status = NO_WC;
	if (ibv_post_recv(p->a, &rwr, &rbad) || post(p->b, &s))
		return;
	*swc = next_wc(p->cqb);
	*rwc = next_wc(p->cqa);
}

static uint64_t win_addr(size_t off)
{
	return (uintptr_t)buf + WIN_OFF + off;
}

static int bind_status(struct pair *p, struct ibv_mw *mw, uint32_t key,
		       struct ibv_mr *mr, size_t off, size_t len,
		       unsigned int acc)
{
	struct ibv_wc wc;

	if (bind2(p->a, mw, key, mr, off, len, acc))
		return -2;
	wc = next_wc(p->cqa);
	return wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW ?
	       -3 : (int)wc.status;
}

/*
 * A fresh pair @p in place of the one whose error ended the last check;
 * @mw, bound under @key, freed by its a and bound again over the window
 * under the next key, which is returned.  Each step is a check: a check
 * after it that wants an access error must not get one from a window
 * that failed to bind.
 */
static uint32_t rebind(struct pair *p, enum ibv_qp_type t, struct ibv_mw *mw,
		       uint32_t key, struct ibv_mr *mr, unsigned int acc)
{
	int up, iv, bd;

	pair_down(p);
	up = pair_up(p, t);
	iv = inv(p, key);
	key = ibv_inc_rkey(key);
	bd = bind_status(p, mw, key, mr, WIN_OFF, WIN_LEN, acc);
	check(!up && !iv && !bd,
	      "the window bound again on a fresh pair (pair %d, LOCAL_INV %d, bind %d)",
	      up, iv, bd);
	return key;
}

static void type2_tests(struct ibv_mr *mr, enum ibv_qp_type t)
{
	const char *tn = t == IBV_QPT_RC ? "RC" : "UC";
	unsigned int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_wc swc, rwc;
	struct pair p, q;
	uint32_t key;
	int st;

	check(mw && mw->type == IBV_MW_TYPE_2, "%s: ibv_alloc_mw(type 2)", tn);
	if (!mw || pair_up(&p, t)) {
		check(0, "%s: a QP pair", tn);
		return;
	}
	key = ibv_inc_rkey(mw->rkey);
	check(!bind_status(&p, mw, key, mr, WIN_OFF, WIN_LEN, rw),
	      "%s: IBV_WR_BIND_MW completes with IBV_WC_BIND_MW", tn);
	memset(src, 0x5a, 64);
	memset(buf, 0, BUF);
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, key, win_addr(100), 64);
	check(!st && buf[WIN_OFF + 100] == 0x5a && buf[WIN_OFF + 163] == 0x5a &&
	      !buf[WIN_OFF + 164], "%s: a WRITE through the window lands (%d)",
	      tn, st);
	if (t == IBV_QPT_RC) {
		st = rdma(p.b, p.cqb, IBV_WR_RDMA_READ, key, win_addr(0), 64);
		check(!st && src[0] == 0, "RC: a READ through it (%d)", st);
	}
	check(bind_status(&p, mw, key, mr, WIN_OFF, WIN_LEN, rw) ==
	      IBV_WC_MW_BIND_ERR, "%s: a bound type 2 window binds no more",
	      tn);
	pair_down(&p);

	/*
	 * Bound to a, which is gone: the new a (likely with a's QPN) is
	 * another QP.  UC's requester never knows; the bytes tell.
	 */
	pair_up(&p, t);
	memset(src, 0x77, 64);
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, key, win_addr(0), 64);
	check(t == IBV_QPT_RC ? st == IBV_WC_REM_ACCESS_ERR :
	      !st && buf[WIN_OFF] != 0x77,
	      "%s: a type 2 window answers only the QP that bound it (%d)",
	      tn, st);
	pair_down(&p);

	pair_up(&p, t);
	check(ibv_dereg_mr(mr) == EBUSY, "%s: dereg_mr with a window bound: EBUSY",
	      tn);
	/* from any QP of the PD */
	check(!inv(&p, key), "%s: LOCAL_INV of the window", tn);
	key = ibv_inc_rkey(key);
	check(!bind_status(&p, mw, key, mr, WIN_OFF, WIN_LEN,
			   IBV_ACCESS_REMOTE_WRITE),
	      "%s: the free window binds again, with a new key", tn);
	if (t == IBV_QPT_RC) {
		st = rdma(p.b, p.cqb, IBV_WR_RDMA_READ, key, win_addr(0), 64);
		check(st == IBV_WC_REM_ACCESS_ERR,
		      "RC: no READ through a window that grants WRITE only (%d)",
		      st);
		key = rebind(&p, t, mw, key, mr, rw);
		st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, key,
			  win_addr(WIN_LEN - 32), 64);
		check(st == IBV_WC_REM_ACCESS_ERR,
		      "RC: no WRITE past the window's end (%d)", st);
		key = rebind(&p, t, mw, key, mr, rw);
		/* SEND_WITH_INV from b invalidates a's window */
		send_inv(&p, mr, key, &swc, &rwc);
		check(swc.status == IBV_WC_SUCCESS &&
		      rwc.status == IBV_WC_SUCCESS &&
		      (rwc.wc_flags & IBV_WC_WITH_INV) &&
		      rwc.invalidated_rkey == key,
		      "RC: SEND_WITH_INV invalidates the window of the QP it reaches");
		st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, key, win_addr(0), 64);
		check(st == IBV_WC_REM_ACCESS_ERR,
		      "RC: no WRITE through the invalidated window (%d)", st);
		pair_down(&p);
		/* a SEND_WITH_INV for a window of another QP fails */
		pair_up(&p, t);
		pair_up(&q, t);
		key = ibv_inc_rkey(key);
		bind_status(&q, mw, key, mr, WIN_OFF, WIN_LEN, rw);
		send_inv(&p, mr, key, &swc, &rwc);
		st = rdma(q.b, q.cqb, IBV_WR_RDMA_WRITE, key, win_addr(0), 64);
		check(swc.status != IBV_WC_SUCCESS && swc.status != NO_WC && !st,
		      "RC: a SEND_WITH_INV for another QP's window fails, which keeps working (%d, %d)",
		      swc.status, st);
		pair_down(&q);
		pair_down(&p);
	} else {
		pair_down(&p);
	}
	check(!ibv_dealloc_mw(mw), "%s: dealloc_mw", tn);
}

static void type1_tests(struct ibv_mr *mr)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind mb = {
		.wr_id = 9, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)buf + WIN_OFF,
			       .length = WIN_LEN,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	uint32_t first;
	struct ibv_wc wc;
	struct pair p;
	int st;

	check(mw && mw->type == IBV_MW_TYPE_1, "ibv_alloc_mw(type 1)");
	if (!mw || pair_up(&p, IBV_QPT_RC))
		return;
	first = mw->rkey;
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, first, win_addr(0), 64);
	check(st == IBV_WC_REM_ACCESS_ERR, "type 1: unbound, its key grants nothing (%d)", st);
	pair_down(&p);
	pair_up(&p, IBV_QPT_RC);
	st = ibv_bind_mw(p.a, mw, &mb);
	wc = next_wc(p.cqa);
	check(!st && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW &&
	      wc.wr_id == 9 && mw->rkey != first && (mw->rkey ^ first) >> 8 == 0,
	      "type 1: ibv_bind_mw completes and moves the key on");
	memset(src, 0x6b, 64);
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, mw->rkey, win_addr(8), 64);
	check(!st && buf[WIN_OFF + 8] == 0x6b, "type 1: a WRITE through it lands (%d)", st);
	{
		struct ibv_send_wr inv = { .wr_id = 3, .opcode = IBV_WR_LOCAL_INV,
					   .invalidate_rkey = mw->rkey };

		post(p.a, &inv);
		wc = next_wc(p.cqa);
		check(wc.status != IBV_WC_SUCCESS && wc.status != NO_WC,
		      "type 1: LOCAL_INV cannot invalidate it (%s)",
		      ibv_wc_status_str(wc.status));
	}
	pair_down(&p);
	pair_up(&p, IBV_QPT_RC);
	{
		struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW,
					  .bind_mw = { .mw = mw,
						       .rkey = ibv_inc_rkey(mw->rkey),
						       .bind_info = mb.bind_info } },
				   *bad;

		check(ibv_post_send(p.a, &wr, &bad) == EINVAL && bad == &wr,
		      "type 1 through ibv_post_send: EINVAL");
	}
	first = mw->rkey;
	mb.bind_info.length = 0;
	st = ibv_bind_mw(p.a, mw, &mb);
	wc = next_wc(p.cqa);
	check(!st && wc.status == IBV_WC_SUCCESS, "type 1: bound again with length 0");
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, first, win_addr(0), 64);
	check(st == IBV_WC_REM_ACCESS_ERR, "type 1: its old key grants nothing (%d)", st);
	pair_down(&p);
	ibv_dealloc_mw(mw);
}

static void rereg_tests(void)
{
	unsigned char *b2 = aligned_alloc(4096, 8192), *b3 = aligned_alloc(4096, 4096);
	struct ibv_mr *m = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mr *ro = ibv_reg_mr(pd, b3, 4096, IBV_ACCESS_REMOTE_READ);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	uint32_t key = m ? m->rkey : 0;
	struct pair p;
	int st;

	if (!m || !ro || !pd2 || !b2 || pair_up(&p, IBV_QPT_RC)) {
		check(0, "rereg_mr: set up");
		return;
	}
	memset(src, 0x11, 64);
	memset(buf, 0, 64);
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, m->rkey, (uintptr_t)buf, 64);
	check(!st && buf[0] == 0x11, "rereg_mr: before, a WRITE lands (%d)", st);
	check(!ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			    IBV_ACCESS_LOCAL_WRITE) && m->rkey == key,
	      "rereg_mr(CHANGE_ACCESS) in place keeps the keys");
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, key, (uintptr_t)buf, 64);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "rereg_mr: no WRITE once remote write is taken away (%d)", st);
	pair_down(&p);
	pair_up(&p, IBV_QPT_RC);
	check(!ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
	      "rereg_mr: remote write given back");
	memset(src, 0x22, 64);
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, m->rkey, (uintptr_t)buf, 64);
	check(!st && buf[0] == 0x22, "rereg_mr: a WRITE lands again (%d)", st);

	check(!ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0) &&
	      m->pd == pd2, "rereg_mr(CHANGE_PD)");
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, m->rkey, (uintptr_t)buf, 64);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "rereg_mr: an MR of another PD takes no WRITE (%d)", st);
	pair_down(&p);
	pair_up(&p, IBV_QPT_RC);
	{
		/* a receive into it fails, and its sender hears first */
		struct ibv_sge rs = { (uintptr_t)buf, 64, m->lkey };
		struct ibv_sge ss = { (uintptr_t)src, 64, smr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 4, .sg_list = &rs,
					   .num_sge = 1 }, *rbad;
		struct ibv_recv_wr bwr = { .wr_id = 6, .sg_list = &ss,
					   .num_sge = 1 };
		struct ibv_send_wr sw = { .wr_id = 5, .opcode = IBV_WR_SEND,
					  .sg_list = &ss, .num_sge = 1 };
		struct ibv_wc swc, rwc;

		ibv_post_recv(p.b, &bwr, &rbad);
		ibv_post_recv(p.a, &rwr, &rbad);
		post(p.b, &sw);
		swc = next_wc(p.cqb);
		rwc = next_wc(p.cqa);
		check(swc.wr_id == 5 && swc.status == IBV_WC_REM_OP_ERR &&
		      rwc.status == IBV_WC_LOC_PROT_ERR,
		      "rereg_mr: a SEND into an MR of another PD: the sender's first completion %s (wr_id %llu), the receiver's %s",
		      ibv_wc_status_str(swc.status),
		      (unsigned long long)swc.wr_id,
		      ibv_wc_status_str(rwc.status));
	}
	pair_down(&p);
	pair_up(&p, IBV_QPT_RC);
	check(!ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, 0),
	      "rereg_mr: back to the QP's PD");

	memset(b2, 0, 8192);
	check(!ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b2, 8192,
			    0) && m->addr == b2,
	      "rereg_mr(CHANGE_TRANSLATION) to another buffer");
	memset(src, 0x33, 200);
	memset(buf, 0, 64);
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, m->rkey, (uintptr_t)b2 + 4000,
		  200);
	check(!st && b2[4000] == 0x33 && b2[4199] == 0x33 && !buf[0],
	      "rereg_mr: a WRITE lands in the new buffer, across its page (%d)",
	      st);
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, m->rkey, (uintptr_t)buf, 64);
	check(st == IBV_WC_REM_ACCESS_ERR && !buf[0],
	      "rereg_mr: the old buffer is no longer in it (%d)", st);
	pair_down(&p);

	/* pinned without write access: write access needs a new pin */
	pair_up(&p, IBV_QPT_RC);
	check(!ibv_rereg_mr(ro, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
	      "rereg_mr: write access for an MR registered read-only");
	memset(src, 0x44, 64);
	memset(b3, 0, 64);
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, ro->rkey, (uintptr_t)b3, 64);
	check(!st && b3[0] == 0x44, "rereg_mr: a WRITE lands in it (%d)", st);
	pair_down(&p);
	check(!ibv_dereg_mr(m) && !ibv_dereg_mr(ro) && !ibv_dealloc_pd(pd2),
	      "rereg_mr: the MRs and the second PD go");
	free(b2);
	free(b3);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex da;
	struct ibv_mr *mr, *plain;
	struct ibv_mw *mw;
	struct pair p;
	int st;

	ctx = open_dev(argc > 1 ? argv[1] : "vhca0");
	if (!ctx || ibv_query_gid(ctx, 1, 0, &gid))
		return printf("Bail out! no device\n"), 1;
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF);
	src = aligned_alloc(4096, 4096);
	smr = ibv_reg_mr(pd, src, 4096, IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND);
	if (!smr || !mr)
		return printf("Bail out! MRs: %s\n", strerror(errno)), 1;

	st = ibv_query_device_ex(ctx, NULL, &da);
	check(!st && da.orig_attr.max_mw > 0 &&
	      (da.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (da.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B),
	      "ibv_query_device: windows of type 1 and 2B, max_mw %d",
	      da.orig_attr.max_mw);
	errno = 0;
	mw = ibv_alloc_mw(pd, 3);
	check(!mw && errno, "ibv_alloc_mw(type 3) fails: %s", strerror(errno));

	/* the MR grants no remote access: only the window does */
	pair_up(&p, IBV_QPT_RC);
	st = rdma(p.b, p.cqb, IBV_WR_RDMA_WRITE, mr->rkey, win_addr(0), 64);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "the MR's own rkey grants no remote write (%d)", st);
	pair_down(&p);

	type2_tests(mr, IBV_QPT_RC);
	type2_tests(mr, IBV_QPT_UC);
	type1_tests(mr);
	rereg_tests();

	/* binds the kernel refuses */
	plain = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	pair_up(&p, IBV_QPT_RC);
	st = bind_status(&p, mw, ibv_inc_rkey(mw->rkey), plain, 0, 4096,
			 IBV_ACCESS_REMOTE_READ);
	check(st == IBV_WC_MW_BIND_ERR, "a bind to an MR without MW_BIND access: IBV_WC_MW_BIND_ERR (%d)", st);
	pair_down(&p);
	pair_up(&p, IBV_QPT_RC);
	st = bind_status(&p, mw, ibv_inc_rkey(mw->rkey), mr, BUF - 4096, 8192,
			 IBV_ACCESS_REMOTE_READ);
	check(st == IBV_WC_MW_BIND_ERR, "a bind past the MR's end: IBV_WC_MW_BIND_ERR (%d)", st);
	pair_down(&p);
	pair_up(&p, IBV_QPT_RC);
	st = bind_status(&p, mw, ibv_inc_rkey(mw->rkey), mr, 0, 4096,
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED);
	check(st == IBV_WC_MW_BIND_ERR, "a zero-based window: IBV_WC_MW_BIND_ERR (%d)", st);
	pair_down(&p);

	/* a window still bound when deallocated lets its MR go */
	pair_up(&p, IBV_QPT_RC);
	check(!bind_status(&p, mw, ibv_inc_rkey(mw->rkey), mr, 0, 4096,
			   IBV_ACCESS_REMOTE_READ), "a window bound to the MR");
	pair_down(&p);
	check(ibv_dereg_mr(mr) == EBUSY, "its MR stays while it is bound");
	errno = 0;
	st = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE);
	check(st && errno == EBUSY,
	      "rereg_mr of an MR with a window bound: EBUSY (%s)",
	      strerror(errno));
	check(!ibv_dealloc_mw(mw), "dealloc_mw of a bound window");
	check(!ibv_dereg_mr(mr), "then the MR goes");
	ibv_dereg_mr(plain);
	return tap_done();
}
