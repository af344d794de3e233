// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * On-demand paging on one host: ODP MRs (IBV_ACCESS_ON_DEMAND) on both
 * ends of RC and UC QPs of one device, whose pages the engine faults in
 * as it copies.  Every transfer is data-checked; the memory under the MRs
 * is taken away in each way a process can take it (MADV_DONTNEED,
 * copy-on-write after fork(), munmap) and must be followed, or fail with
 * an error completion.  Prefetch through ibv_advise_mr().  Prints TAP.
 * Usage: odp DEVICE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"

/* more than one chunk of the engine (1 MiB), not a whole page */
#define LEN	((2 << 20) + 4096 + 77)
#define ODP	(IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE | \
		 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;

/* Two QPs of one type connected to each other, with a CQ each. */
struct pair {
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_srq *srq;	/* b's, if asked for */
};

static int pair_up(struct pair *p, enum ibv_qp_type type, bool srq)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 2 } };
	int i;

	memset(p, 0, sizeof(*p));
	if (srq) {
		p->srq = ibv_create_srq(pd, &sa);
		if (!p->srq)
			return -1;
	}
	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr qa = {
			.qp_type = type,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8,
				 .max_send_sge = 2, .max_recv_sge = 2 },
		};

		p->cq[i] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		if (!p->cq[i])
			return -1;
		qa.send_cq = qa.recv_cq = p->cq[i];
		qa.srq = i ? p->srq : NULL;
		p->qp[i] = ibv_create_qp(pd, &qa);
		if (!p->qp[i])
			return -1;
	}
	return qp_rts_to(p->qp[0], p->qp[1]->qp_num, &gid) ||
	       qp_rts_to(p->qp[1], p->qp[0]->qp_num, &gid) ? -1 : 0;
}

static void pair_down(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
		if (p->cq[i])
			ibv_destroy_cq(p->cq[i]);
	}
	if (p->srq)
		ibv_destroy_srq(p->srq);
}

/* A fresh anonymous mapping: none of its pages exists yet. */
static char *fresh(size_t len)
{
	char *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return b == MAP_FAILED ? NULL : b;
}

static void fill(char *b, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (char)(i * 7 + seed + (i >> 12));
}

/* Whether @b holds what fill(@seed) put there. */
static bool filled(const char *b, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (char)(i * 7 + seed + (i >> 12)))
			return false;
	return true;
}

static struct ibv_mr *reg(void *b, size_t len, int access)
{
	return ibv_reg_mr(pd, b, len, access);
}

/* Post one WQE of @op from a's @src to b's @dst (an rkey's for RDMA). */
static int post(struct pair *p, enum ibv_wr_opcode op, struct ibv_mr *lmr,
		void *laddr, uint32_t len, struct ibv_mr *rmr, void *raddr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len,
			       .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (rmr) {
		wr.wr.rdma.remote_addr = (uintptr_t)raddr;
		wr.wr.rdma.rkey = rmr->rkey;
	}
	return ibv_post_send(p->qp[0], &wr, &bad);
}

static int post_recv(struct pair *p, struct ibv_mr *mr, void *addr,
		     uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return p->srq ? ibv_post_srq_recv(p->srq, &wr, &bad) :
			ibv_post_recv(p->qp[1], &wr, &bad);
}

/* a's completion status for the WQE just posted */
static int sent(struct pair *p)
{
	return next_wc(p->cq[0]).status;
}

/*
 * A SEND of LEN bytes from an ODP buffer into an untouched ODP buffer
 * on @type, through b's RQ or SRQ.
 */
static void send_case(enum ibv_qp_type type, bool srq, const char *name)
{
	char *s = fresh(LEN), *d = fresh(LEN);
	struct ibv_mr *smr, *dmr;
	struct ibv_wc wc;
	struct pair p;
	int st = -1;

	fill(s, LEN, 3);
	smr = reg(s, LEN, ODP);
	dmr = reg(d, LEN, ODP);
	if (!smr || !dmr || pair_up(&p, type, srq)) {
		check(0, "%s: set-up (%s)", name, strerror(errno));
		return;
	}
	if (!post_recv(&p, dmr, d, LEN) &&
	    !post(&p, IBV_WR_SEND, smr, s, LEN, NULL, NULL))
		st = sent(&p);
	wc = next_wc(p.cq[1]);
	check(st == IBV_WC_SUCCESS && wc.status == IBV_WC_SUCCESS &&
	      wc.byte_len == LEN,
	      "%s: SEND of %d bytes, ODP to untouched ODP: both complete (%d, %d, %u)",
	      name, LEN, st, wc.status, wc.byte_len);
	check(filled(d, LEN, 3), "%s: every byte arrived", name);
	pair_down(&p);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
	munmap(s, LEN);
	munmap(d, LEN);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex da;
	char *s, *d, *f;
	struct ibv_mr *smr, *dmr, *mr, *pinned, *rmr;
	char *rbuf;
	struct ibv_sge sge;
	struct pair p;
	int st, fds[2], fdd[2];
	pid_t child;
	char c;
	FILE *tmp;

	if (argc != 2)
		return 2;
	ctx = open_dev(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	check(pd && !ibv_query_gid(ctx, 1, 0, &gid), "context, PD and GID 0 of %s",
	      argv[1]);
	if (!pd)
		return tap_done();

	memset(&da, 0, sizeof(da));
	st = ibv_query_device_ex(ctx, NULL, &da);
	check(!st && (da.odp_caps.general_caps & IBV_ODP_SUPPORT),
	      "ibv_query_device_ex: general_odp_caps has ODP_SUPPORT (0x%llx)",
	      (unsigned long long)da.odp_caps.general_caps);
	/* the wire's requester and responder fault nothing in yet */
	check(!da.odp_caps.per_transport_caps.rc_odp_caps &&
	      !da.odp_caps.per_transport_caps.uc_odp_caps &&
	      !da.odp_caps.per_transport_caps.ud_odp_caps,
	      "no transport claims ODP while the wire does not fault (rc 0x%x, uc 0x%x, ud 0x%x)",
	      da.odp_caps.per_transport_caps.rc_odp_caps,
	      da.odp_caps.per_transport_caps.uc_odp_caps,
	      da.odp_caps.per_transport_caps.ud_odp_caps);

	s = fresh(LEN);
	d = fresh(LEN);
	mr = reg(s, LEN, ODP | IBV_ACCESS_MW_BIND);
	check(!mr, "ODP with MW_BIND is refused (%s)", strerror(errno));
	errno = 0;
	smr = reg(s, LEN, ODP);
	dmr = smr ? reg(d, LEN, ODP) : NULL;
	check(smr && dmr, "two ODP MRs over untouched memory (%s)",
	      strerror(errno));
	if (!smr || !dmr || pair_up(&p, IBV_QPT_RC, false)) {
		check(0, "RC pair (%s)", strerror(errno));
		return tap_done();
	}

	/* WRITE and READ between untouched ODP buffers, then touched ones */
	fill(s, LEN, 1);
	st = post(&p, IBV_WR_RDMA_WRITE, smr, s, LEN, dmr, d) ?: sent(&p);
	check(st == IBV_WC_SUCCESS && filled(d, LEN, 1),
	      "RC WRITE of %d bytes, ODP into untouched ODP: data checked (%d)",
	      LEN, st);
	memset(s, 0, LEN);
	fill(d, LEN, 2);
	st = post(&p, IBV_WR_RDMA_READ, smr, s, LEN, dmr, d) ?: sent(&p);
	check(st == IBV_WC_SUCCESS && filled(s, LEN, 2),
	      "RC READ of %d bytes out of ODP into ODP: data checked (%d)", LEN,
	      st);

	/*
	 * MADV_DONTNEED frees the destination's pages (their invalidation
	 * empties the engine's map): a WRITE must land in the new pages the
	 * process sees, not in the freed ones.
	 */
	madvise(d, LEN, MADV_DONTNEED);
	check(d[0] == 0 && d[LEN - 1] == 0,
	      "MADV_DONTNEED: the destination reads zeros again");
	fill(s, LEN, 4);
	st = post(&p, IBV_WR_RDMA_WRITE, smr, s, LEN, dmr, d) ?: sent(&p);
	check(st == IBV_WC_SUCCESS && filled(d, LEN, 4),
	      "a WRITE after MADV_DONTNEED lands where the process reads (%d)",
	      st);
	/* and the source: new pages, new bytes */
	madvise(s, LEN, MADV_DONTNEED);
	fill(s, LEN, 5);
	st = post(&p, IBV_WR_RDMA_WRITE, smr, s, LEN, dmr, d) ?: sent(&p);
	check(st == IBV_WC_SUCCESS && filled(d, LEN, 5),
	      "a WRITE from a source given new pages sends the new bytes (%d)",
	      st);

	/*
	 * Copy-on-write: after fork() the parent's pages are shared with
	 * the child, read-only.  A WRITE into the parent's MR must break
	 * the sharing for the parent: the child keeps its bytes.
	 */
	if (pipe(fds) || pipe(fdd))
		return tap_done();
	child = fork();
	if (!child) {
		/* wait for the parent's WRITE, then check our copy */
		if (read(fds[0], &c, 1) != 1)
			_exit(2);
		_exit(filled(d, LEN, 5) ? 0 : 1);
	}
	fill(s, LEN, 6);
	st = post(&p, IBV_WR_RDMA_WRITE, smr, s, LEN, dmr, d) ?: sent(&p);
	check(st == IBV_WC_SUCCESS && filled(d, LEN, 6),
	      "after fork(): a WRITE into the parent's MR lands in the parent (%d)",
	      st);
	c = 1;
	if (write(fds[1], &c, 1) != 1)
		return tap_done();
	waitpid(child, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "the child's copy-on-write pages kept its bytes (status %d)", st);

	/* prefetch */
	sge = (struct ibv_sge){ .addr = (uintptr_t)d, .length = LEN,
				.lkey = dmr->lkey };
	madvise(d, LEN, MADV_DONTNEED);
	check(!ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1),
	      "ibv_advise_mr PREFETCH_WRITE, FLUSH (%s)", strerror(errno));
	check(!ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1),
	      "ibv_advise_mr PREFETCH (%s)", strerror(errno));
	check(!ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0,
			     &sge, 1),
	      "ibv_advise_mr PREFETCH_NO_FAULT (%s)", strerror(errno));
	fill(s, LEN, 7);
	st = post(&p, IBV_WR_RDMA_WRITE, smr, s, LEN, dmr, d) ?: sent(&p);
	check(st == IBV_WC_SUCCESS && filled(d, LEN, 7),
	      "a WRITE into the prefetched range: data checked (%d)", st);
	pinned = reg(s, 4096, IBV_ACCESS_LOCAL_WRITE);
	sge.lkey = pinned ? pinned->lkey : 0;
	sge.length = 4096;
	errno = 0;
	check(pinned && ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
				      &sge, 1) == EFAULT,
	      "ibv_advise_mr on a pinned MR's lkey: EFAULT");
	sge = (struct ibv_sge){ .addr = (uintptr_t)d + LEN - 10, .length = 20,
				.lkey = dmr->lkey };
	check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1) ==
	      EFAULT, "ibv_advise_mr past the MR's end: EFAULT");

	/* a file-backed mapping: the bytes reach the file */
	tmp = tmpfile();
	f = tmp && !ftruncate(fileno(tmp), LEN) ?
	    mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(tmp), 0) :
	    MAP_FAILED;
	mr = f != MAP_FAILED ? reg(f, LEN, ODP) : NULL;
	if (mr) {
		char *back = malloc(LEN);

		fill(s, LEN, 8);
		st = post(&p, IBV_WR_RDMA_WRITE, smr, s, LEN, mr, f) ?: sent(&p);
		check(st == IBV_WC_SUCCESS && back &&
		      pread(fileno(tmp), back, LEN, 0) == LEN &&
		      filled(back, LEN, 8),
		      "a WRITE into a MAP_SHARED file's ODP MR reaches the file (%d)",
		      st);
		free(back);
		ibv_dereg_mr(mr);
	} else {
		check(0, "ODP MR over a MAP_SHARED file (%s)", strerror(errno));
	}

	/*
	 * munmap of a registered range: the MR stays, its pages are gone
	 * for good.  A WRITE into it fails (remote access error), and so
	 * the QP; nothing else happens.
	 */
	munmap(d, LEN);
	st = post(&p, IBV_WR_RDMA_WRITE, smr, s, LEN, dmr, d) ?: sent(&p);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "a WRITE into an unmapped ODP range: remote access error (%s)",
	      ibv_wc_status_str(st));
	pair_down(&p);
	check(!ibv_dereg_mr(dmr), "the unmapped range's MR deregisters");
	rbuf = aligned_alloc(4096, 4096);
	rmr = rbuf ? reg(rbuf, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (rmr && !pair_up(&p, IBV_QPT_RC, false) &&
	    !post_recv(&p, rmr, rbuf, 4096)) {
		munmap(s, LEN);
		st = post(&p, IBV_WR_SEND, smr, s, 64, NULL, NULL) ?: sent(&p);
		check(st == IBV_WC_LOC_PROT_ERR,
		      "a SEND from an unmapped ODP range: local protection error (%s)",
		      ibv_wc_status_str(st));
		pair_down(&p);
	} else {
		check(0, "RC pair and a receive for it (%s)", strerror(errno));
	}
	ibv_dereg_mr(smr);
	if (rmr)
		ibv_dereg_mr(rmr);
	if (pinned)
		ibv_dereg_mr(pinned);

	send_case(IBV_QPT_RC, false, "RC");
	send_case(IBV_QPT_RC, true, "RC into an SRQ");
	send_case(IBV_QPT_UC, false, "UC");
	return tap_done();
}
