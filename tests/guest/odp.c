// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * On-demand paging on one host: ODP MRs (IBV_ACCESS_ON_DEMAND) on both
 * ends of RC, UC and UD QPs of one device, receives from RQs and SRQs,
 * whose pages the engine faults in as it copies; atomics, ATOMIC WRITE
 * and FLUSH on ODP words.  Every transfer is data-checked; the memory under the MRs
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

/* FLUSH came with rdma-core 56 */
#if VHCA_RDMA_CORE >= 56
#define QP_EX_WITH_FLUSH	IBV_QP_EX_WITH_FLUSH
#define ACCESS_FLUSH_GLOBAL	IBV_ACCESS_FLUSH_GLOBAL
#else
#define QP_EX_WITH_FLUSH	0
#define ACCESS_FLUSH_GLOBAL	0
#endif

/*
 * The atomics on ODP words: the target word and the local 8 bytes the
 * original value goes to are in untouched ODP pages, faulted in by the
 * engine; then an ATOMIC WRITE and a FLUSH, through an extended QP.
 */
static void atomic_case(void)
{
	/* ATOMIC WRITE is in the kernel's verbs from 6.2 on */
	bool aw = dev_has_atomic_write(ctx);
	const uint64_t ops = IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			     (aw ? IBV_QP_EX_WITH_ATOMIC_WRITE : 0) |
			     QP_EX_WITH_FLUSH;
	int acc = ODP | IBV_ACCESS_REMOTE_ATOMIC | ACCESS_FLUSH_GLOBAL;
	char *t = fresh(2 * 4096), *r = fresh(4096);
	struct ibv_mr *tmr = t ? reg(t, 2 * 4096, acc) : NULL;
	struct ibv_mr *rmr = r ? reg(r, 4096, ODP) : NULL;
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
	};
	struct ibv_qp *q[2] = { NULL, NULL };
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct qp_path path[2] = {
		{ .gid = &gid, .access = ACCESS_FLUSH_GLOBAL },
		{ .gid = &gid, .access = ACCESS_FLUSH_GLOBAL },
	};
	uint64_t *word = (uint64_t *)(t + 4096 + 8), val = 0x1122334455667788;
	uint64_t *res = (uint64_t *)(r + 64);
	struct ibv_qp_ex *qx;
	int i, st[4] = { -1, -1, -1, -1 };

	ia.send_cq = ia.recv_cq = cq;
	for (i = 0; cq && i < 2; i++)
		q[i] = ibv_create_qp_ex(ctx, &ia);
	qx = q[0] && q[1] ? ibv_qp_to_qp_ex(q[0]) : NULL;
	if (qx) {
		path[0].dest = q[1]->qp_num;
		path[1].dest = q[0]->qp_num;
	}
	if (!tmr || !rmr || !qx || qp_rts_path(q[0], &path[0]) ||
	    qp_rts_path(q[1], &path[1])) {
		check(0, "atomics: set-up (%s)", strerror(errno));
		goto out;
	}
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(qx, tmr->rkey, (uintptr_t)word, 5);
	ibv_wr_set_sge(qx, rmr->lkey, (uintptr_t)res, 8);
	if (!ibv_wr_complete(qx))
		st[0] = next_wc(cq).status;
	check(st[0] == IBV_WC_SUCCESS && *res == 0 && *word == 5,
	      "FETCH_AND_ADD on an untouched ODP word, result into untouched ODP (%d, %llu, %llu)",
	      st[0], (unsigned long long)*res, (unsigned long long)*word);
	madvise(t, 2 * 4096, MADV_DONTNEED);
	madvise(r, 4096, MADV_DONTNEED);
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_cmp_swp(qx, tmr->rkey, (uintptr_t)word, 0, 42);
	ibv_wr_set_sge(qx, rmr->lkey, (uintptr_t)res, 8);
	if (!ibv_wr_complete(qx))
		st[1] = next_wc(cq).status;
	check(st[1] == IBV_WC_SUCCESS && *res == 0 && *word == 42,
	      "CMP_AND_SWP after MADV_DONTNEED of both: the new zero pages (%d, %llu, %llu)",
	      st[1], (unsigned long long)*res, (unsigned long long)*word);
	madvise(t, 2 * 4096, MADV_DONTNEED);
	if (aw) {
		ibv_wr_start(qx);
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(qx, tmr->rkey, (uintptr_t)word, &val);
		if (!ibv_wr_complete(qx))
			st[2] = next_wc(cq).status;
		check(st[2] == IBV_WC_SUCCESS &&
		      !memcmp(word, &val, sizeof(val)),
		      "ATOMIC WRITE into an ODP word given new pages (%d, 0x%llx)",
		      st[2], (unsigned long long)*word);
	} else {
		skip(1, "ATOMIC WRITE: not in this kernel's verbs");
	}
#if VHCA_RDMA_CORE >= 56
	madvise(t, 2 * 4096, MADV_DONTNEED);
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(qx, tmr->rkey, (uintptr_t)t, 2 * 4096,
		     IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	if (!ibv_wr_complete(qx))
		st[3] = next_wc(cq).status;
	check(st[3] == IBV_WC_SUCCESS,
	      "FLUSH of an ODP range with no pages (%d)", st[3]);
#else
	skip(1, "FLUSH: rdma-core %d has no ibv_wr_flush()", VHCA_RDMA_CORE);
#endif
out:
	for (i = 0; i < 2; i++)
		if (q[i])
			ibv_destroy_qp(q[i]);
	if (cq)
		ibv_destroy_cq(cq);
	if (tmr)
		ibv_dereg_mr(tmr);
	if (rmr)
		ibv_dereg_mr(rmr);
	munmap(t, 2 * 4096);
	munmap(r, 4096);
}

/*
 * A UD SEND out of an untouched ODP buffer, to this host's other QP: the
 * datagram carries the process's bytes (and a second one, after
 * MADV_DONTNEED, its new ones).  With @odp_recv the receive buffer is an
 * ODP MR too, in b's RQ or SRQ (@srq), and its page is dropped before
 * each datagram: UD has no retry, so the engine must fault it in before
 * it delivers.
 */
static void ud_case(bool odp_recv, bool srq, const char *name)
{
	char *s = fresh(4096), *d = fresh(4096);
	struct ibv_mr *smr = s ? reg(s, 4096, ODP) : NULL;
	struct ibv_mr *dmr = d ? reg(d, 4096, odp_recv ? ODP :
				     IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .hop_limit = 1 } };
	struct ibv_send_wr wr = { .wr_id = 1, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge ss = { .addr = (uintptr_t)s, .length = 1000 };
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	struct pair p = { 0 };
	int i, st;

	if (!smr || !dmr || pair_up(&p, IBV_QPT_UD, srq) ||
	    !(ah = ibv_create_ah(pd, &aa))) {
		check(0, "%s: set-up (%s)", name, strerror(errno));
		goto out;
	}
	ss.lkey = smr->lkey;
	wr.sg_list = &ss;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = p.qp[1]->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	for (i = 0; i < 2; i++) {
		fill(s, 1000, 10 + i);
		if (odp_recv)
			madvise(d, 4096, MADV_DONTNEED);
		else
			memset(d, 0, 4096);
		st = post_recv(&p, dmr, d, 4096) ?:
		     ibv_post_send(p.qp[0], &wr, &bad) ?: sent(&p);
		wc = next_wc(p.cq[1]);
		check(st == IBV_WC_SUCCESS && wc.status == IBV_WC_SUCCESS &&
		      wc.byte_len == 1040 && filled(d + 40, 1000, 10 + i),
		      "%s: SEND %d out of %s ODP pages: data checked (%d, %d, %u)",
		      name, i, i ? "new" : "untouched", st, wc.status,
		      wc.byte_len);
		madvise(s, 4096, MADV_DONTNEED);
	}
out:
	pair_down(&p);
	if (ah)
		ibv_destroy_ah(ah);
	if (smr)
		ibv_dereg_mr(smr);
	if (dmr)
		ibv_dereg_mr(dmr);
	munmap(s, 4096);
	munmap(d, 4096);
}

/*
 * Implicit ODP: one MR over the whole address space (address 0, length
 * SIZE_MAX), its lkey and rkey good for any mapped buffer of the process.
 */
static void implicit_case(void)
{
	char *s = fresh(LEN), *d = fresh(LEN), *r = fresh(LEN);
	struct ibv_mr *mr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP);
	struct pair p;
	int st;

	check(mr != NULL, "implicit ODP MR: ibv_reg_mr(NULL, SIZE_MAX) (%s)",
	      strerror(errno));
	if (!mr || pair_up(&p, IBV_QPT_RC, false)) {
		check(0, "implicit: RC pair (%s)", strerror(errno));
		return;
	}
	fill(s, LEN, 20);
	st = post(&p, IBV_WR_RDMA_WRITE, mr, s, LEN, mr, d) ?: sent(&p);
	check(st == IBV_WC_SUCCESS && filled(d, LEN, 20),
	      "implicit: WRITE of %d bytes between two untouched buffers through its keys (%d)",
	      LEN, st);
	st = post(&p, IBV_WR_RDMA_READ, mr, r, LEN, mr, d) ?: sent(&p);
	check(st == IBV_WC_SUCCESS && filled(r, LEN, 20),
	      "implicit: READ of them back into a third: data checked (%d)", st);
	munmap(d, LEN);
	st = post(&p, IBV_WR_RDMA_WRITE, mr, s, LEN, mr, d) ?: sent(&p);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "implicit: a WRITE where nothing is mapped: remote access error (%s)",
	      ibv_wc_status_str(st));
	pair_down(&p);
	check(!ibv_dereg_mr(mr), "implicit: the MR deregisters");
	munmap(s, LEN);
	munmap(r, LEN);
}

/*
 * The children `rdma res show mr -dd` gives implicit MR @mr (each a 16 MiB
 * range of the address space the device faulted a page of in), or -1.
 */
static long children(const char *dev, const struct ibv_mr *mr)
{
	char cmd[128], key[32], out[16384], *at, *end, *c;
	long n = -1;
	size_t len;
	FILE *f;

	/* an MR's driver fields may come on lines of their own: one string */
	snprintf(cmd, sizeof(cmd), "rdma res show mr dev %s -dd 2>&1", dev);
	snprintf(key, sizeof(key), "lkey 0x%x ", mr->lkey);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	len = fread(out, 1, sizeof(out) - 1, f);
	pclose(f);
	out[len] = 0;
	for (c = out; *c; c++)
		if (*c == '\n')
			*c = ' ';
	at = strstr(out, key);
	if (!at)
		return -1;
	end = strstr(at, " dev ");	/* the next MR's */
	c = strstr(at, " drv_children ");
	if (c && (!end || c < end))
		n = strtol(c + 14, NULL, 10);
	return n;
}

/*
 * An implicit MR's children go with the pages under them: 64 of them
 * made by WRITEs one page each into a 1 GiB mapping, then munmap().  A
 * process that maps and unmaps as it goes must not pile them up, to the
 * cap (4096) where faults fail.
 */
static void implicit_reap_case(const char *dev)
{
	const size_t kid = 16 << 20, n = 64;
	char *s = fresh(4096), *m = fresh((n + 1) * kid), *b, *d;
	struct ibv_mr *mr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP);
	long before, after = -1;
	struct pair p;
	int st = 0, i;
	size_t k;

	if (!s || !m || !mr || pair_up(&p, IBV_QPT_RC, false)) {
		check(0, "implicit reap: buffers, MR and RC pair (%s)",
		      strerror(errno));
		return;
	}
	b = (char *)(((uintptr_t)m + kid - 1) & ~(uintptr_t)(kid - 1));
	fill(s, 4096, 30);
	for (k = 0; k < n && !st; k++)
		st = post(&p, IBV_WR_RDMA_WRITE, mr, s, 4096, mr, b + k * kid) ?:
		     sent(&p);
	before = children(dev, mr);
	check(!st && filled(b + (n - 1) * kid, 4096, 30) && before > (long)n,
	      "implicit reap: WRITEs into 64 ranges of 16 MiB made a child each (%ld children, %s)",
	      before, ibv_wc_status_str(st));
	munmap(m, (n + 1) * kid);
	/* the children are freed by a work item: a second, at most */
	for (i = 0; i < 100; i++) {
		after = children(dev, mr);
		if (after >= 0 && after <= before - (long)n)
			break;
		usleep(10000);
	}
	check(after >= 0 && after <= before - (long)n,
	      "implicit reap: munmap() of them freed their children (%ld -> %ld)",
	      before, after);
	d = fresh(4096);
	st = d ? post(&p, IBV_WR_RDMA_WRITE, mr, s, 4096, mr, d) ?: sent(&p) : -1;
	check(st == IBV_WC_SUCCESS && filled(d, 4096, 30),
	      "implicit reap: a WRITE into a new mapping after that: data checked (%d)",
	      st);
	pair_down(&p);
	check(!ibv_dereg_mr(mr), "implicit reap: the MR deregisters");
	munmap(s, 4096);
	if (d)
		munmap(d, 4096);
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
	check(!st && (da.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	      (da.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT),
	      "ibv_query_device_ex: general_odp_caps has ODP_SUPPORT and IMPLICIT (0x%llx)",
	      (unsigned long long)da.odp_caps.general_caps);
	/*
	 * RC: everything; UC: what it has (no READ nor atomics); UD: sends
	 * and receives; XRC: RC's, into SRQs.  Bits 6 and 7 (FLUSH, ATOMIC WRITE) are there where
	 * the kernel has them.
	 */
	check(!st && (da.odp_caps.per_transport_caps.rc_odp_caps & 0x3f) ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
	       IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
	       IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV) &&
	      da.odp_caps.per_transport_caps.uc_odp_caps ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
	       IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_SRQ_RECV) &&
	      da.odp_caps.per_transport_caps.ud_odp_caps ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
	       IBV_ODP_SUPPORT_SRQ_RECV) &&
	      da.xrc_odp_caps ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE |
	       IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
	       IBV_ODP_SUPPORT_SRQ_RECV),
	      "odp_caps: rc 0x%x (0x3f and FLUSH/ATOMIC_WRITE), uc 0x%x (0x27), ud 0x%x (0x23), xrc 0x%x (0x3d)",
	      da.odp_caps.per_transport_caps.rc_odp_caps,
	      da.odp_caps.per_transport_caps.uc_odp_caps,
	      da.odp_caps.per_transport_caps.ud_odp_caps, da.xrc_odp_caps);

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
	send_case(IBV_QPT_UC, true, "UC into an SRQ");
	atomic_case();
	ud_case(false, false, "UD");
	ud_case(true, false, "UD into ODP");
	ud_case(true, true, "UD into ODP through an SRQ");
	implicit_case();
	implicit_reap_case(argv[1]);
	return tap_done();
}
