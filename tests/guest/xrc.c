// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * XRC on one host: an XRC domain shared between two processes through a
 * file, XRC SRQs written with ibv_post_srq_recv(), an XRC_SEND QP whose
 * every WQE names the SRQ it is for, and an XRC_RECV QP created by one
 * process, opened by the other with ibv_open_qp(), and used after its
 * creator is gone.  SENDs land in the SRQ named and complete on that
 * SRQ's CQ with the XRC_RECV QP's number; WRITE, READ and atomics check
 * the rkey against the named SRQ's PD; an SRQ of another domain, or none,
 * is refused.  Every transfer is data-checked.  Prints TAP.
 * Usage: xrc DEVICE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"

#define LEN	(64 * 1024 + 77)	/* more than one packet, not a page */
#define ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;

/* An XRC SRQ of @xrcd, its completions on @cq. */
static struct ibv_srq *xsrq(struct ibv_xrcd *xrcd, struct ibv_pd *spd,
			    struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.xrcd = xrcd, .cq = cq, .pd = spd,
	};

	return ibv_create_srq_ex(ctx, &a);
}

static struct ibv_qp *tgt_qp(struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *ini_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = cq,
		.cap = { .max_send_wr = 16, .max_send_sge = 2 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static int post_srq(struct ibv_srq *srq, struct ibv_mr *mr, void *buf,
		    uint32_t len, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len,
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* One signaled WQE of @op on INI QP @qp for XRC SRQ @srqn; its status. */
static int xpost(struct ibv_qp *qp, struct ibv_cq *cq, uint32_t srqn,
		 enum ibv_wr_opcode op, struct ibv_mr *lmr, void *laddr,
		 uint32_t len, uint32_t rkey, void *raddr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len,
			       .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int e;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)raddr;
		wr.wr.rdma.rkey = rkey;
	}
	e = ibv_post_send(qp, &wr, &bad);
	if (e)
		return -e;
	return next_wc(cq).status;
}

/*
 * The child: opens the domain through @path, creates an XRC_RECV QP in
 * it, says its number on @wfd, waits for a word on @rfd (the parent has
 * opened it), and exits, closing everything it had.
 */
static int child(const char *path, int wfd, int rfd)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *xrcd;
	struct ibv_qp *qp;
	uint32_t qpn = 0;
	char c;

	xa.fd = open(path, O_RDONLY);
	xrcd = xa.fd >= 0 ? ibv_open_xrcd(ctx, &xa) : NULL;
	qp = xrcd ? tgt_qp(xrcd) : NULL;
	if (qp)
		qpn = qp->qp_num;
	if (write(wfd, &qpn, sizeof(qpn)) != sizeof(qpn) ||
	    read(rfd, &c, 1) != 1)
		return 1;
	return qp ? 0 : 1;	/* exit closes the QP, the domain and the fd */
}

int main(int argc, char **argv)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};
	char path[] = "/tmp/xrc-domain-XXXXXX";
	struct ibv_xrcd *xrcd = NULL, *other = NULL;
	struct ibv_srq *srq = NULL, *srq2 = NULL, *foreign = NULL;
	struct ibv_qp *tgt = NULL, *ini = NULL;
	struct ibv_cq *scq = NULL, *rcq = NULL;
	struct ibv_pd *pd2 = NULL;
	struct ibv_mr *smr = NULL, *rmr = NULL, *rmr2 = NULL;
	struct ibv_device_attr_ex da = {};
	char *s = NULL, *r = NULL, *r2 = NULL;
	uint32_t srqn = 0, srqn2 = 0, fsrqn = 0, qpn = 0;
	int p2c[2], c2p[2], st, status;
	struct ibv_qp_open_attr oa;
	struct ibv_recv_wr rw = {}, *rbad;
	struct ibv_wc wc;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: xrc DEVICE\n");
		return 2;
	}
	ctx = open_dev(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	pd2 = ctx ? ibv_alloc_pd(ctx) : NULL;
	check(pd && pd2 && !ibv_query_gid(ctx, 1, 0, &gid) &&
	      !ibv_query_device_ex(ctx, NULL, &da),
	      "context, two PDs and GID 0 of %s", argv[1]);
	if (!pd || !pd2)
		return tap_done();
	check(da.orig_attr.device_cap_flags & IBV_DEVICE_XRC,
	      "ibv_query_device: IBV_DEVICE_XRC (0x%x)",
	      da.orig_attr.device_cap_flags);

	/* the domain, through a file the child opens too */
	xa.fd = mkstemp(path);
	xrcd = xa.fd >= 0 ? ibv_open_xrcd(ctx, &xa) : NULL;
	check(xrcd != NULL, "ibv_open_xrcd on a file, O_CREAT (%s)",
	      strerror(errno));
	xa.fd = -1;
	other = ibv_open_xrcd(ctx, &xa);
	check(other != NULL, "ibv_open_xrcd with no file: a domain of its own (%s)",
	      strerror(errno));
	if (!xrcd || !other)
		return tap_done();

	scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	srq = scq && rcq ? xsrq(xrcd, pd, rcq) : NULL;
	srq2 = srq ? xsrq(xrcd, pd2, rcq) : NULL;
	foreign = srq2 ? xsrq(other, pd, rcq) : NULL;
	st = srq && srq2 && foreign && !ibv_get_srq_num(srq, &srqn) &&
	     !ibv_get_srq_num(srq2, &srqn2) &&
	     !ibv_get_srq_num(foreign, &fsrqn);
	check(st && srqn && srqn2 && fsrqn && srqn != srqn2 && srqn != fsrqn,
	      "three XRC SRQs, numbered %u, %u and %u", srqn, srqn2, fsrqn);
	s = aligned_alloc(4096, 2 * LEN);
	r = aligned_alloc(4096, 2 * LEN);
	r2 = aligned_alloc(4096, LEN);
	smr = s ? ibv_reg_mr(pd, s, 2 * LEN, ACCESS) : NULL;
	rmr = r ? ibv_reg_mr(pd, r, 2 * LEN, ACCESS) : NULL;
	rmr2 = r2 ? ibv_reg_mr(pd2, r2, LEN, ACCESS) : NULL;
	if (!srq || !srq2 || !foreign || !smr || !rmr || !rmr2) {
		check(0, "buffers and MRs (%s)", strerror(errno));
		return tap_done();
	}

	/* the TGT QP: made by the child, which then exits */
	if (pipe(p2c) || pipe(c2p))
		return tap_done();
	pid = fork();
	if (!pid)
		_exit(child(path, c2p[1], p2c[0]));
	if (read(c2p[0], &qpn, sizeof(qpn)) != sizeof(qpn))
		qpn = 0;
	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		       IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = qpn;
	oa.xrcd = xrcd;
	oa.qp_type = IBV_QPT_XRC_RECV;
	tgt = qpn ? ibv_open_qp(ctx, &oa) : NULL;
	check(tgt != NULL, "the child's XRC_RECV QP %u, opened with ibv_open_qp (%s)",
	      qpn, strerror(errno));
	if (write(p2c[1], "x", 1) != 1 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		check(0, "the child that made it exits (status 0x%x)", status);
	else
		check(1, "the child that made it exits (status 0x%x)", status);
	if (!tgt)
		return tap_done();

	ini = ini_qp(scq);
	check(ini && !qp_rts_to(ini, tgt->qp_num, &gid) &&
	      !qp_rts_to(tgt, ini->qp_num, &gid),
	      "an XRC_SEND QP and the opened XRC_RECV QP connected, outliving the child (%s)",
	      strerror(errno));
	if (!ini)
		return tap_done();
	st = system("rdma res show qp -dd >/dev/null");
	check(st == 0, "rdma res show qp -dd with XRC QPs (%d)", st);

	rw.num_sge = 0;
	check(ibv_post_recv(ini, &rw, &rbad) == EINVAL && rbad == &rw &&
	      ibv_post_recv(tgt, &rw, &rbad) == EINVAL,
	      "ibv_post_recv on XRC QPs (no receive queue): EINVAL, *bad_wr set");

	/* SENDs into the SRQ named: the TGT QP's number, the SRQ's CQ */
	fill_seed(s, LEN, 1);
	memset(r, 0, LEN);
	memset(r2, 0, LEN);
	st = post_srq(srq, rmr, r, LEN, 11) ?: post_srq(srq2, rmr2, r2, LEN, 22);
	check(!st, "ibv_post_srq_recv on both SRQs");
	st = xpost(ini, scq, srqn2, IBV_WR_SEND, smr, s, LEN, 0, NULL);
	wc = next_wc(rcq);
	check(st == IBV_WC_SUCCESS && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == 22 && wc.qp_num == tgt->qp_num && wc.byte_len == LEN &&
	      wc.opcode == IBV_WC_RECV && filled_seed(r2, LEN, 1),
	      "SEND to the second SRQ: its WQE, on its CQ, the TGT QP's number, data checked (%d, %d, %llu, %u)",
	      st, wc.status, (unsigned long long)wc.wr_id, wc.qp_num);
	fill_seed(s, LEN, 2);
	st = xpost(ini, scq, srqn, IBV_WR_SEND, smr, s, LEN, 0, NULL);
	wc = next_wc(rcq);
	check(st == IBV_WC_SUCCESS && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == 11 && filled_seed(r, LEN, 2),
	      "SEND to the first: its WQE, data checked (%d, %d, %llu)",
	      st, wc.status, (unsigned long long)wc.wr_id);

	/* RDMA: the rkey must be of the named SRQ's PD */
	fill_seed(s, LEN, 3);
	st = xpost(ini, scq, srqn, IBV_WR_RDMA_WRITE, smr, s, LEN, rmr->rkey, r);
	check(st == IBV_WC_SUCCESS && filled_seed(r, LEN, 3),
	      "RDMA WRITE through the first SRQ's PD: data checked (%d)", st);
	memset(s + LEN, 0, LEN);
	st = xpost(ini, scq, srqn, IBV_WR_RDMA_READ, smr, s + LEN, LEN,
		   rmr->rkey, r);
	check(st == IBV_WC_SUCCESS && filled_seed(s + LEN, LEN, 3),
	      "RDMA READ back: data checked (%d)", st);
	*(uint64_t *)r = 37;
	st = xpost(ini, scq, srqn, IBV_WR_ATOMIC_FETCH_AND_ADD, smr, s, 8,
		   rmr->rkey, r);
	check(st == IBV_WC_SUCCESS && *(uint64_t *)s == 37 &&
	      *(uint64_t *)r == 42,
	      "FETCH_AND_ADD: original 37, now 42 (%d, %llu, %llu)", st,
	      (unsigned long long)*(uint64_t *)s,
	      (unsigned long long)*(uint64_t *)r);
	st = xpost(ini, scq, srqn2, IBV_WR_RDMA_WRITE, smr, s, 64, rmr->rkey, r);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "RDMA WRITE naming the second SRQ, with a key of the first's PD: remote access error (%s)",
	      ibv_wc_status_str(st));
	check(ibv_destroy_qp(ini) == 0, "the failed XRC_SEND QP is destroyed");

	/* an SRQ of another domain, and one that is not there */
	ini = ini_qp(scq);
	if (!ini || qp_rts_to(ini, tgt->qp_num, &gid) ||
	    ibv_modify_qp(tgt, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
			  IBV_QP_STATE) ||
	    qp_rts_to(tgt, ini->qp_num, &gid)) {
		check(0, "a new XRC_SEND QP, the TGT QP reset and connected to it (%s)",
		      strerror(errno));
		return tap_done();
	}
	st = post_srq(foreign, rmr, r, 64, 33);
	st = st ? -st : xpost(ini, scq, fsrqn, IBV_WR_SEND, smr, s, 64, 0, NULL);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "SEND naming an SRQ of another XRC domain: refused (%s)",
	      ibv_wc_status_str(st));
	ibv_destroy_qp(ini);
	ini = ini_qp(scq);
	if (!ini || qp_rts_to(ini, tgt->qp_num, &gid) ||
	    ibv_modify_qp(tgt, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
			  IBV_QP_STATE) ||
	    qp_rts_to(tgt, ini->qp_num, &gid)) {
		check(0, "another XRC_SEND QP (%s)", strerror(errno));
		return tap_done();
	}
	st = xpost(ini, scq, 0xabcdef, IBV_WR_SEND, smr, s, 64, 0, NULL);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "SEND naming no SRQ there is: refused (%s)", ibv_wc_status_str(st));
	wc = next_wc_within(rcq, 100);
	check(wc.status == NO_WC,
	      "and nothing completed on the SRQs' CQ (%d)", wc.status);

	check(!ibv_destroy_qp(ini) && !ibv_destroy_qp(tgt) &&
	      !ibv_destroy_srq(foreign) && !ibv_destroy_srq(srq2) &&
	      !ibv_destroy_srq(srq) && !ibv_close_xrcd(other) &&
	      !ibv_close_xrcd(xrcd),
	      "QPs, SRQs and domains are destroyed (%s)", strerror(errno));
	unlink(path);
	return tap_done();
}
