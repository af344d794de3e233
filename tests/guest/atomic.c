// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ATOMIC WRITE and the atomics' word on one device: RC pairs connected to
 * each other, so the same-host engine carries their requests.  Who may
 * post an ATOMIC WRITE and how, what it stores and where, what refuses
 * it, through an MR at its address and at another iova.  TAP output.
 *
 *   atomic DEV
 */
#include <stdlib.h>
#include <unistd.h>

#include "lib/testlib.h"

#define PAGE 4096
#define BUF (2 * PAGE)
#define IOVA 0x10000000ull	/* where iova_tests() puts buf */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static unsigned char *buf, *res;
static struct ibv_mr *mr, *rmr;	/* buf: all remote access; res: results */

/* a sends through the ibv_wr_* API into b's memory */
struct pair {
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *ax;
};

static struct ibv_qp *make_qp(struct ibv_cq *cq, enum ibv_qp_type t,
			      uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t, .pd = pd,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
	};

	return ibv_create_qp_ex(ctx, &ia);
}

static int pair_up(struct pair *p)
{
	const uint64_t ops = IBV_QP_EX_WITH_ATOMIC_WRITE |
			     IBV_QP_EX_WITH_RDMA_WRITE |
			     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

	p->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	p->a = p->cq ? make_qp(p->cq, IBV_QPT_RC, ops) : NULL;
	p->b = p->cq ? make_qp(p->cq, IBV_QPT_RC, ops) : NULL;
	if (!p->a || !p->b)
		return -1;
	p->ax = ibv_qp_to_qp_ex(p->a);
	return !p->ax || qp_rts_to(p->a, p->b->qp_num, &gid) ||
	       qp_rts_to(p->b, p->a->qp_num, &gid) ? -1 : 0;
}

static void pair_down(struct pair *p)
{
	ibv_destroy_qp(p->a);
	ibv_destroy_qp(p->b);
	ibv_destroy_cq(p->cq);
}

/* One ATOMIC WRITE of @val from @p's a: ibv_wr_complete()'s errno. */
static int awrite(struct pair *p, uint32_t rkey, uint64_t addr, uint64_t val)
{
	ibv_wr_start(p->ax);
	p->ax->wr_id = 9;
	p->ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(p->ax, rkey, addr, &val);
	return ibv_wr_complete(p->ax);
}

/* What a fresh pair's one ATOMIC WRITE completes with (-1: not posted). */
static int awrite_status(uint32_t rkey, uint64_t addr, uint64_t val)
{
	struct pair p;
	int st = -1;

	if (!pair_up(&p) && !awrite(&p, rkey, addr, val))
		st = next_wc(p.cq).status;
	pair_down(&p);
	return st;
}

/*
 * What a fresh pair's one atomic (@op) completes with, its original value
 * to res (-1: not posted).
 */
static int atomic_status(enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr)
{
	struct pair p;
	int st = -1;

	if (pair_up(&p))
		goto out;
	ibv_wr_start(p.ax);
	p.ax->wr_id = 8;
	p.ax->wr_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP)
		ibv_wr_atomic_cmp_swp(p.ax, rkey, addr, 0, 1);
	else
		ibv_wr_atomic_fetch_add(p.ax, rkey, addr, 1);
	ibv_wr_set_sge(p.ax, rmr->lkey, (uintptr_t)res, 8);
	if (!ibv_wr_complete(p.ax))
		st = next_wc(p.cq).status;
out:
	pair_down(&p);
	return st;
}

#define NOWHERE ((size_t)-1)

/*
 * Whether buf holds @c everywhere but the 8 bytes at @off (NOWHERE: none),
 * which hold @v.
 */
static int only_word(size_t off, uint64_t v, unsigned char c)
{
	size_t i;

	for (i = 0; i < BUF; i++)
		if ((off == NOWHERE || i < off || i >= off + 8) && buf[i] != c)
			return 0;
	return off == NOWHERE || !memcmp(buf + off, &v, 8);
}

static int untouched(unsigned char c)
{
	return only_word(NOWHERE, 0, c);
}

/*
 * The checks of create_tests() to iova_tests(): where the device has no
 * ATOMIC WRITE, absent_tests() runs two and the rest are skipped, so the
 * count is the same on every kernel.
 */
#define AWRITE_CHECKS	17

/*
 * A device whose kernel's verbs have no ATOMIC WRITE (6.1): it must not
 * be offered.  What needs it cannot run, and is skipped.
 */
static void absent_tests(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *q;

	q = cq ? make_qp(cq, IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE) : NULL;
	check(!q && errno == EOPNOTSUPP,
	      "no ATOMIC WRITE on the device: an RC QP with it in send_ops_flags: EOPNOTSUPP");
	if (q)
		ibv_destroy_qp(q);
	q = cq ? make_qp(cq, IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE) : NULL;
	check(q != NULL, "an RC QP with the other operations is made");
	if (q)
		ibv_destroy_qp(q);
	if (cq)
		ibv_destroy_cq(cq);
	skip(AWRITE_CHECKS - 2, "the device has no ATOMIC WRITE");
}

static void create_tests(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *q;

	q = make_qp(cq, IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_WRITE);
	check(!q && errno == EOPNOTSUPP,
	      "a UC QP with ATOMIC_WRITE in send_ops_flags: EOPNOTSUPP");
	if (q)
		ibv_destroy_qp(q);
	q = make_qp(cq, IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_WRITE);
	check(!q && errno == EOPNOTSUPP,
	      "a UD QP with ATOMIC_WRITE in send_ops_flags: EOPNOTSUPP");
	if (q)
		ibv_destroy_qp(q);
	ibv_destroy_cq(cq);
}

static void store_tests(void)
{
	const uint64_t v = 0x0123456789abcdefull, flag = 0x600dd00dfeedf00dull;
	uint64_t data = 0x1122334455667788ull;
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_ATOMIC_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { (uintptr_t)buf, mr->rkey } },
			   *bad = NULL;
	struct ibv_wc wc, wc2;
	struct pair p;
	int e;

	if (pair_up(&p)) {
		check(0, "an RC pair with ATOMIC_WRITE in send_ops_flags");
		return;
	}
	check(1, "an RC pair with ATOMIC_WRITE in send_ops_flags");
	memset(buf, 0xa5, BUF);
	e = awrite(&p, mr->rkey, (uintptr_t)buf + 8, v);
	wc = next_wc(p.cq);
	check(!e && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_ATOMIC_WRITE && wc.wr_id == 9,
	      "ibv_wr_atomic_write(): completes as IBV_WC_ATOMIC_WRITE");
	check(only_word(8, v, 0xa5),
	      "its 8 bytes land at the address, in order, and no other byte changes");

	/* a WRITE of data, then the flag that publishes it, in one batch */
	memset(buf, 0xa5, BUF);
	ibv_wr_start(p.ax);
	p.ax->wr_id = 1;
	p.ax->wr_flags = 0;
	ibv_wr_rdma_write(p.ax, mr->rkey, (uintptr_t)buf + 64);
	ibv_wr_set_sge(p.ax, rmr->lkey, (uintptr_t)&res[8], 8);
	memcpy(&res[8], &data, 8);
	p.ax->wr_id = 2;
	p.ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(p.ax, mr->rkey, (uintptr_t)buf + PAGE - 8, &flag);
	e = ibv_wr_complete(p.ax);
	wc = next_wc(p.cq);
	check(!e && wc.status == IBV_WC_SUCCESS && wc.wr_id == 2 &&
	      !memcmp(buf + 64, &data, 8) && !memcmp(buf + PAGE - 8, &flag, 8),
	      "a WRITE and the ATOMIC WRITE after it in one batch: both land");

	e = awrite(&p, mr->rkey, (uintptr_t)buf + 12, v);
	check(e == EINVAL, "an unaligned remote address: ibv_wr_complete() says EINVAL");
	ibv_wr_start(p.ax);
	ibv_wr_atomic_write(p.ax, mr->rkey, (uintptr_t)buf, &v);
	ibv_wr_set_sge(p.ax, rmr->lkey, (uintptr_t)res, 8);
	e = ibv_wr_complete(p.ax);
	check(e == EINVAL, "an ATOMIC WRITE with an SGE: EINVAL (its data is in the call)");
	ibv_wr_start(p.ax);
	ibv_wr_atomic_write(p.ax, mr->rkey, (uintptr_t)buf, &v);
	ibv_wr_set_inline_data(p.ax, res, 8);
	e = ibv_wr_complete(p.ax);
	check(e == EINVAL, "an ATOMIC WRITE with inline data: EINVAL");
	e = ibv_post_send(p.a, &wr, &bad);
	check(e == EINVAL && bad == &wr,
	      "ibv_post_send() with IBV_WR_ATOMIC_WRITE: EINVAL, *bad_wr set (no room for its 8 bytes)");
	check(ibv_poll_cq(p.cq, 1, &wc2) == 0,
	      "none of the refused ones was posted: no completion");
	pair_down(&p);
}

static void refusal_tests(void)
{
	struct ibv_mr *ro = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_READ);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *other = pd2 ? ibv_reg_mr(pd2, buf, BUF,
					       IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_REMOTE_WRITE) : NULL;

	memset(buf, 0x3c, BUF);
	check(ro && awrite_status(ro->rkey, (uintptr_t)buf, 1) ==
	      IBV_WC_REM_ACCESS_ERR && untouched(0x3c),
	      "through an rkey without remote write: REM_ACCESS_ERR, memory untouched");
	check(other && awrite_status(other->rkey, (uintptr_t)buf, 1) ==
	      IBV_WC_REM_ACCESS_ERR && untouched(0x3c),
	      "through an rkey of another PD: REM_ACCESS_ERR, memory untouched");
	check(awrite_status(mr->rkey, (uintptr_t)buf + BUF, 1) ==
	      IBV_WC_REM_ACCESS_ERR && untouched(0x3c),
	      "past the MR's end: REM_ACCESS_ERR, memory untouched");
	if (ro)
		ibv_dereg_mr(ro);
	if (other)
		ibv_dereg_mr(other);
	if (pd2)
		ibv_dealloc_pd(pd2);
}

/*
 * An MR at an iova other than its address (the core keeps the two at the
 * same offset in a page, so an aligned iova is an aligned word): the
 * atomics and ATOMIC WRITE find the word by iova.  KUnit's atomic_word
 * covers a word that is not aligned in memory, which no MR from here can
 * make.
 */
static void iova_tests(void)
{
	struct ibv_mr *im = ibv_reg_mr_iova(pd, buf, BUF, IOVA,
					    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_ATOMIC);

	memset(buf, 0x77, BUF);
	check(im && awrite_status(im->rkey, IOVA + PAGE, 0x4242) ==
	      IBV_WC_SUCCESS && only_word(PAGE, 0x4242, 0x77),
	      "through an MR at another iova: the ATOMIC WRITE lands at iova - IOVA");
	memset(res, 0, 8);
	check(im && atomic_status(IBV_WR_ATOMIC_FETCH_AND_ADD, im->rkey,
				  IOVA + PAGE) == IBV_WC_SUCCESS &&
	      !memcmp(res, &(uint64_t){ 0x4242 }, 8) &&
	      only_word(PAGE, 0x4243, 0x77),
	      "and a fetch-and-add there sees it, and adds 1");
	check(im && atomic_status(IBV_WR_ATOMIC_CMP_AND_SWP, im->rkey,
				  IOVA + PAGE + 8) == IBV_WC_SUCCESS &&
	      only_word(PAGE, 0x4243, 0x77),
	      "a compare-and-swap that does not match the next word leaves it");
	if (im)
		ibv_dereg_mr(im);
}

int main(int argc, char **argv)
{
	ctx = argc > 1 ? open_dev(argv[1]) : NULL;
	if (!ctx) {
		check(0, "open %s", argc > 1 ? argv[1] : "(no device named)");
		return tap_done();
	}
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(PAGE, BUF);
	res = aligned_alloc(64, 64);
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	rmr = pd && res ? ibv_reg_mr(pd, res, 64, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr || !rmr || ibv_query_gid(ctx, 1, 0, &gid)) {
		check(0, "set up a PD, MRs and GID 0");
		return tap_done();
	}
	/* argv[2]: whether the kernel's verbs have it, as the caller knows */
	check(dev_has_atomic_write(ctx) == (argc > 2 && !strcmp(argv[2], "yes")),
	      "the device says it has ATOMIC WRITE (IB_UVERBS_DEVICE_ATOMIC_WRITE) exactly when its kernel's verbs do (%s)",
	      argc > 2 ? argv[2] : "not said");
	if (!dev_has_atomic_write(ctx)) {
		absent_tests();
		return tap_done();
	}
	create_tests();
	store_tests();
	refusal_tests();
	iova_tests();
	return tap_done();
}
