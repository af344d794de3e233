// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What one local user can do to another's QPs and to the kernel through
 * the same-host engine, which must hold the line the wire holds:
 *
 * - a third QP sends and writes into a connected UC (or RC) QP: dropped,
 *   counted off path, and the connected pair still works;
 * - a destroyed QP's number and a deregistered MR's key index are not
 *   handed out again at once, and fresh keys are not consecutive;
 * - a QP in the error state whose producer a thread keeps a ring ahead:
 *   one doorbell returns while the thread still feeds it.
 *
 * Prints TAP.  Usage: isolation DEVICE
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "provider.h"
#include "lib/testlib.h"

static struct ibv_context *ctx;
static const char *dev_name;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;

#define MSG	64

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq *c,
			      uint32_t depth)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c, .recv_cq = c, .qp_type = type,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static int post_one(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf,
		    struct ibv_mr *mr, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = MSG, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, void *buf, struct ibv_mr *mr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = MSG, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 },
		*bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/*
 * Poll @c until no completion comes for @ms, and (unless @first is NULL)
 * QP @other's first completion has come, whose status goes to *@first:
 * 30 s at most.  Returns how many of them were receives of QP @qpn.
 */
static int drain_for(struct ibv_cq *c, uint32_t qpn, uint32_t other, int ms,
		     int *first)
{
	struct ibv_wc wc;
	int recvs = 0, idle = 0, waited = 0;

	if (first)
		*first = NO_WC;
	while (idle < ms || (first && *first == NO_WC && waited < 30000)) {
		if (ibv_poll_cq(c, 1, &wc) == 1) {
			if (wc.qp_num == qpn && (wc.opcode & IBV_WC_RECV))
				recvs++;
			if (first && *first == NO_WC && wc.qp_num == other)
				*first = wc.status;
			idle = 0;
		} else {
			usleep(1000);
			idle++;
			waited++;
		}
	}
	return recvs;
}

/* drain_for() of no other QP */
static int drain(struct ibv_cq *c, uint32_t qpn, int ms)
{
	return drain_for(c, qpn, 0, ms, NULL);
}

/*
 * A and B connected to each other; C, of the same type, pointed at B.
 * What C sends or writes must not reach B.
 */
static void third_qp(enum ibv_qp_type type)
{
	const char *t = type == IBV_QPT_RC ? "RC" : "UC";
	struct ibv_qp *a = make_qp(type, cq, 8), *b = make_qp(type, cq, 8);
	struct ibv_qp *c = make_qp(type, cq, 8);
	char *buf = calloc(4, 4096);
	struct ibv_mr *mr = buf ? ibv_reg_mr(pd, buf, 4 * 4096,
					     IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_REMOTE_WRITE) : NULL;
	char *bbuf = buf + 4096, *cbuf = buf + 8192, *bwin = buf + 12288;
	long long off0, off1;
	struct ibv_wc wc;
	int recvs, cst;

	int err = !a || !b || !c || !mr ? -1 : 0;

	if (!err)
		err = qp_rts_to(a, b->qp_num, &gid);
	if (!err)
		err = qp_rts_to(b, a->qp_num, &gid);
	if (!err)
		err = qp_rts_to(c, b->qp_num, &gid);
	if (err) {
		check(0, "%s third QP: set up (%s)", t,
		      err < 0 ? "no QP or MR" : strerror(err));
		goto out;
	}
	memset(cbuf, 0xc3, MSG);
	memset(bwin, 0, MSG);
	drain(cq, 0, 20);
	off0 = port_counter(dev_name, "rcvd_off_path");
	check(!post_recv(b, bbuf, mr), "%s third QP: B posts a receive", t);
	check(!post_one(c, IBV_WR_SEND, cbuf, mr, 0, 0) &&
	      !post_one(c, IBV_WR_RDMA_WRITE, cbuf, mr, (uintptr_t)bwin,
			mr->rkey),
	      "%s third QP: C, pointed at B, posts a SEND and a WRITE", t);
	/*
	 * RC: C's SEND is tried again after each timeout, as into a wire
	 * where nobody answers, then fails; its completion must not be
	 * left to come in a later test's poll
	 */
	recvs = drain_for(cq, b->qp_num, c->qp_num, 300, &cst);
	check(recvs == 0 && cst == (type == IBV_QPT_RC ? IBV_WC_RETRY_EXC_ERR :
				    IBV_WC_SUCCESS),
	      "%s third QP: B, connected to A, takes nothing of C's (%d receives; C's SEND: %s)",
	      t, recvs, cst == NO_WC ? "no completion" : ibv_wc_status_str(cst));
	check(bwin[0] == 0, "%s third QP: C's WRITE did not land in B's memory", t);
	off1 = port_counter(dev_name, "rcvd_off_path");
	/* RC: the SEND fails, and takes C to ERR, which flushes the WRITE */
	check(off0 >= 0 && off1 >= off0 + (type == IBV_QPT_RC ? 1 : 2),
	      "%s third QP: counted in rcvd_off_path (%lld -> %lld)", t,
	      off0, off1);
	memset(buf, 0xa5, MSG);
	check(!post_one(a, IBV_WR_SEND, buf, mr, 0, 0),
	      "%s third QP: A sends to B", t);
	wc.status = NO_WC;
	for (int i = 0; i < 2; i++) {
		wc = next_wc(cq);
		if (wc.status != IBV_WC_SUCCESS || (wc.opcode & IBV_WC_RECV))
			break;
	}
	check(wc.status == IBV_WC_SUCCESS && wc.qp_num == b->qp_num &&
	      bbuf[0] == (char)0xa5,
	      "%s third QP: B takes A's message (%s, QPN %#x)", t,
	      ibv_wc_status_str(wc.status), wc.qp_num);
out:
	drain(cq, 0, 20);
	if (c)
		ibv_destroy_qp(c);
	if (b)
		ibv_destroy_qp(b);
	if (a)
		ibv_destroy_qp(a);
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
}

/* SQD to SQD with a new AV: to this host's own GID, the engine's path. */
static int sqd_to_local(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_SQD,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .hop_limit = 64 } },
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV) ? errno : 0;
}

/*
 * A path changes in SQD only once the send queue drained: an RC SEND on
 * the wire that nobody answers (a link-local GID whose MAC no host has)
 * would otherwise go on by the engine's path, half wire and half local.
 */
static void sqd_path(void)
{
	union ibv_gid nobody = { .raw = { 0xfe, 0x80, [8] = 0x02, [9] = 0x00,
					  [10] = 0x5e, [11] = 0xff, [12] = 0xfe,
					  [15] = 0x53 } };
	struct qp_path p = { .dest = 0x123, .gid = &nobody, .timeout = 20 };
	struct ibv_qp *busy = make_qp(IBV_QPT_RC, cq, 8);
	struct ibv_qp *idle = make_qp(IBV_QPT_RC, cq, 8);
	char *buf = malloc(MSG);
	struct ibv_mr *mr = buf ? ibv_reg_mr(pd, buf, MSG, 0) : NULL;
	struct ibv_qp_attr sqd = { .qp_state = IBV_QPS_SQD };
	int err;

	err = !busy || !idle || !mr ? -1 : qp_rts_path(busy, &p);
	if (!err)
		err = qp_rts_path(idle, &p);
	if (err) {
		check(0, "SQD path: two RC QPs towards a GID nobody has (%s)",
		      err < 0 ? "no QP or MR" : strerror(err));
		goto out;
	}
	check(!ibv_modify_qp(idle, &sqd, IBV_QP_STATE) && !sqd_to_local(idle),
	      "SQD path: a drained QP in SQD changes its path to a local GID");
	check(!post_one(busy, IBV_WR_SEND, buf, mr, 0, 0) &&
	      !ibv_modify_qp(busy, &sqd, IBV_QP_STATE),
	      "SQD path: a QP with a SEND on the wire goes to SQD");
	err = sqd_to_local(busy);
	check(err == EBUSY,
	      "SQD path: its path does not change while the SEND is on the wire (%s)",
	      err ? strerror(err) : "it changed");
out:
	if (busy)
		ibv_destroy_qp(busy);
	if (idle)
		ibv_destroy_qp(idle);
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	drain(cq, 0, 20);
}

/*
 * The device's multicast groups (1024): user processes together may make
 * 960 of them, the rest are the kernel's.  One UD QP joins new groups
 * until it is refused.
 */
static void mcast_reserve(void)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UD, cq, 8);
	union ibv_gid mgid = { .raw = { 0xff, 0x0e, [12] = 0x0e, [13] = 0x35 } };
	int n, err = 0, i, bad;

	if (!qp) {
		check(0, "multicast reserve: a UD QP");
		return;
	}
	for (n = 0; n < 1100; n++) {
		mgid.raw[14] = n >> 8;
		mgid.raw[15] = n;
		if (ibv_attach_mcast(qp, &mgid, 0)) {
			err = errno;
			break;
		}
	}
	check(n == 960 && err == ENOMEM,
	      "multicast reserve: a user's QP joins 960 new groups, then ENOMEM (%d, %s)",
	      n, err ? strerror(err) : "no error");
	for (i = 0, bad = 0; i < n; i++) {
		mgid.raw[14] = i >> 8;
		mgid.raw[15] = i;
		if (ibv_detach_mcast(qp, &mgid, 0))
			bad++;
	}
	err = ibv_destroy_qp(qp);
	check(!bad && !err,
	      "multicast reserve: it leaves them all again (%d detaches failed, destroy: %s)",
	      bad, err ? strerror(err) : "ok");
}

/*
 * A UD datagram whose source GID is gone (an address removed after the AH
 * was made; here a GID index with no entry, written into the WQE by
 * hand): no namespace to be local in, no route; it is dropped and
 * counted, and the QP keeps sending.
 */
static void ud_no_source(void)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .hop_limit = 64 },
	};
	struct ibv_qp *ibqp = make_qp(IBV_QPT_UD, cq, 8);
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge rsge;
	struct ibv_recv_wr rw = { .wr_id = 3, .sg_list = &rsge, .num_sge = 1 },
		*rbad;
	char *rbuf = malloc(4096);
	struct ibv_mr *rmr = rbuf ? ibv_reg_mr(pd, rbuf, 4096,
					       IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_wc wc[3];
	long long nr0, nr1;
	struct vhca_qp *q;
	struct vhca_swqe *w;
	int n = 0, i;

	if (!ibqp || !ah || !rmr || qp_self_rts(ibqp, &gid)) {
		check(0, "UD without a source GID: a UD QP, an AH to itself");
		goto out;
	}
	/* room for the GRH: a datagram takes 40 bytes of its receive */
	rsge = (struct ibv_sge){ .addr = (uintptr_t)rbuf, .length = 4096,
				 .lkey = rmr->lkey };
	if (ibv_post_recv(ibqp, &rw, &rbad)) {
		check(0, "UD without a source GID: a receive posted");
		goto out;
	}
	nr0 = port_counter(dev_name, "send_no_route");
	q = container_of(ibqp, struct vhca_qp, vqp.qp);
	w = vhca_mring_slot(&q->sq, q->sq.idx++);
	memset(w, 0, (size_t)1 << q->sq.log2_stride);
	w->wr_id = 1;
	w->opcode = IB_UVERBS_WR_SEND;
	w->flags = VHCA_SWQE_F_SIGNALED;
	w->ud.av = container_of(ah, struct vhca_ah, ibah)->av;
	w->ud.av.sgid_index = 127;	/* the table's last entry: unused */
	w->ud.remote_qpn = ibqp->qp_num;
	w->ud.remote_qkey = 0x11111111;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ibqp->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	check(!ibv_post_send(ibqp, &wr, &bad),
	      "UD without a source GID: a datagram to itself posted behind it");
	for (i = 0; i < 3000 && n < 3; i++) {
		int r = ibv_poll_cq(cq, 3 - n, wc + n);

		n += r > 0 ? r : 0;
		if (n < 3)
			usleep(1000);
	}
	/* the core keeps counters it read for their lifespan (10 ms) */
	usleep(100000);
	nr1 = port_counter(dev_name, "send_no_route");
	check(n == 3 && wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS,
	      "UD without a source GID: it completes successfully, lost as on a wire (%d completions, %s)",
	      n, n ? ibv_wc_status_str(wc[0].status) : "none");
	check(nr0 >= 0 && nr1 == nr0 + 1,
	      "UD without a source GID: counted in send_no_route (%lld -> %lld)",
	      nr0, nr1);
	for (i = 1; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			break;
	check(n == 3 && i == 3,
	      "UD without a source GID: the QP still sends, and receives its next datagram");
out:
	if (ibqp)
		ibv_destroy_qp(ibqp);
	if (ah)
		ibv_destroy_ah(ah);
	if (rmr)
		ibv_dereg_mr(rmr);
	free(rbuf);
	drain(cq, 0, 20);
}

/* A destroyed QP's number and an MR's key index, not handed out at once. */
static void numbers(void)
{
	struct ibv_qp *q = make_qp(IBV_QPT_RC, cq, 8);
	struct ibv_mr *mr[8] = {};
	uint32_t qpn = q ? q->qp_num : 0, idx;
	char *buf = malloc(4096);
	int i, seq = 0, ok = 1;

	if (q)
		ibv_destroy_qp(q);
	q = make_qp(IBV_QPT_RC, cq, 8);
	/* one handed out cyclically is above every number used so far */
	check(q && q->qp_num > qpn,
	      "a new QP gets a number above the one a QP destroyed just before had (%#x, then %#x)",
	      qpn, q ? q->qp_num : 0);
	if (q)
		ibv_destroy_qp(q);

	for (i = 0; buf && i < 8; i++) {
		mr[i] = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
		ok &= mr[i] != NULL;
		if (i && mr[i] && mr[i - 1])
			seq += (uint8_t)mr[i]->rkey ==
			       (uint8_t)(mr[i - 1]->rkey + 1);
	}
	check(ok, "register 8 MRs");
	if (!ok)
		goto out;
	check(seq < 7, "fresh keys' variant bytes do not count up one by one (%d of 7 steps did)",
	      seq);
	for (i = 0, idx = 0; i < 8; i++)
		if (mr[i]->rkey >> 8 > idx)
			idx = mr[i]->rkey >> 8;
	ibv_dereg_mr(mr[7]);
	mr[7] = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	check(mr[7] && mr[7]->rkey >> 8 > idx,
	      "a new MR's key index is above those of the MRs before it, one of them just deregistered (%#x, then %#x)",
	      idx, mr[7] ? mr[7]->rkey >> 8 : 0);
out:
	for (i = 0; i < 8; i++)
		if (mr[i])
			ibv_dereg_mr(mr[i]);
	free(buf);
}

struct feeder {
	struct vhca_qp *qp;
	atomic_int stop;
	atomic_int done;	/* 1: stopped when told; 2: gave up waiting */
	atomic_int started;
	unsigned long moves;
};

/*
 * Keep the producer of an error-state QP's send ring a whole ring ahead
 * of the kernel's consumer, as a hostile process can: every slot the
 * flush frees is posted again at once.  Gives up after 8 s.
 */
static void *feed(void *arg)
{
	struct feeder *f = arg;
	struct vhca_mring *r = &f->qp->sq;
	uint32_t slots = 1U << r->log2_slots;
	time_t end = time(NULL) + 8;

	atomic_store(&f->started, 1);
	while (!atomic_load(&f->stop)) {
		uint32_t cons = __atomic_load_n(&r->hdr->consumer,
						__ATOMIC_ACQUIRE);

		__atomic_store_n(&r->hdr->producer, cons + slots,
				 __ATOMIC_RELEASE);
		f->moves++;
		if (!(f->moves & 0xfff) && time(NULL) >= end) {
			atomic_store(&f->done, 2);
			return NULL;
		}
	}
	atomic_store(&f->done, 1);
	return NULL;
}

/* The calling thread's CPU time in the doorbell system call, in ns. */
static long long doorbell_cpu_ns(struct vhca_qp *qp, ssize_t *w)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	/* the provider's own doorbell: POST_SEND with no WR */
	*w = write(qp->vqp.qp.context->cmd_fd, &qp->db, sizeof(qp->db));
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	return (t1.tv_sec - t0.tv_sec) * 1000000000LL + t1.tv_nsec - t0.tv_nsec;
}

/* tries counted for each figure of bounded_flush(): it keeps the least */
#define FLUSH_TRIES	3

/*
 * What one doorbell of a QP in the error state costs its caller: the CPU
 * time of flushing one full ring, against that of the doorbell while a
 * thread keeps the producer a ring ahead.  The engine's work goes on with
 * the rest, on its own time; the caller's system call must not.  A
 * ratio of two figures of the same run, not a time limit.
 */
static void bounded_flush(void)
{
	struct ibv_cq *fcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	struct ibv_qp *ibqp = fcq ? make_qp(IBV_QPT_UC, fcq, 4096) : NULL;
	long long one_ring = 0, fed = 0;
	struct vhca_qp *qp;
	uint32_t slots, c0;
	int done = 0, i, n;
	ssize_t w;

	if (!ibqp || qp_self_rts(ibqp, &gid) ||
	    ibv_modify_qp(ibqp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR },
			  IBV_QP_STATE)) {
		check(0, "bounded flush: a UC QP in the error state");
		goto out;
	}
	qp = container_of(ibqp, struct vhca_qp, vqp.qp);
	slots = 1U << qp->sq.log2_slots;

	/*
	 * The figure is the caller's only if the doorbell ran the ring
	 * itself, not the engine's work that RTS queued (it then only
	 * kicks the work): a try counts when the consumer moved a ring by
	 * the time the doorbell returned.  Each figure is the least of
	 * FLUSH_TRIES counted tries: a vCPU that the host preempts inside
	 * the system call only adds to a try's time.
	 */
	for (i = 0, n = 0; i < 2 * FLUSH_TRIES && n < FLUSH_TRIES; i++) {
		long long t;

		usleep(100000);
		c0 = __atomic_load_n(&qp->sq.hdr->consumer, __ATOMIC_ACQUIRE);
		__atomic_store_n(&qp->sq.hdr->producer, c0 + slots,
				 __ATOMIC_RELEASE);
		t = doorbell_cpu_ns(qp, &w);
		if (w == (ssize_t)sizeof(qp->db) &&
		    __atomic_load_n(&qp->sq.hdr->consumer, __ATOMIC_ACQUIRE) ==
		    c0 + slots && (!n++ || t < one_ring))
			one_ring = t;
	}
	check(n > 0,
	      "bounded flush: one doorbell flushes a full ring of %u WQEs (%lld us, the least of %d of %d tries)",
	      slots, one_ring / 1000, n, i);
	if (!n)
		goto out;

	/*
	 * A doorbell that only kicked the engine's work costs microseconds,
	 * one that flushed costs a good part of a ring (the figures vary by
	 * half between runs under TCG): below an eighth, it ran nothing,
	 * and the try does not count.
	 */
	for (i = 0, n = 0; i < 2 * FLUSH_TRIES && n < FLUSH_TRIES && !done; i++) {
		struct feeder f = { .qp = qp };
		long long t;
		pthread_t th;

		usleep(100000);
		if (pthread_create(&th, NULL, feed, &f)) {
			check(0, "bounded flush: start the feeding thread");
			goto out;
		}
		while (!atomic_load(&f.started))
			usleep(1000);
		usleep(50000);
		t = doorbell_cpu_ns(qp, &w);
		done = atomic_load(&f.done);
		atomic_store(&f.stop, 1);
		pthread_join(th, NULL);
		if (w != (ssize_t)sizeof(qp->db))
			break;
		if (t >= one_ring / 8 && (!n++ || t < fed))
			fed = t;
	}
	check(w == (ssize_t)sizeof(qp->db) && done == 0,
	      "bounded flush: the doorbell returns while a thread keeps the producer a ring ahead (%s)",
	      done == 2 ? "only once the thread gave up, 8 s later" :
	      done ? "the thread stopped first" : "yes");
	/* a ring, and the second look at the producer that hands the rest on */
	check(n > 0 && fed <= 4 * one_ring + 500000,
	      "bounded flush: that doorbell costs its caller about a ring's flushing (%lld us, %.1f rings, the least of %d of %d tries)",
	      fed / 1000, (double)fed / one_ring, n, i);
out:
	if (ibqp)
		check(!ibv_destroy_qp(ibqp), "bounded flush: destroy the QP");
	if (fcq)
		ibv_destroy_cq(fcq);
}

static volatile sig_atomic_t stop_resizing;

static void stop_handler(int sig)
{
	(void)sig;
	stop_resizing = 1;
}

/*
 * isolation DEVICE srq-resize N: resize one SRQ N times (0: until
 * SIGTERM), between 16 and 4096 WRs, for a reader of its ring to race
 * (tests/guest/device.sh runs `rdma res show srq -d` meanwhile).  Exit
 * status 0 if every resize succeeded.
 */
static int srq_resize(int n)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &ia);
	int i, errors = 0;

	if (!srq)
		return 1;
	signal(SIGTERM, stop_handler);
	for (i = 0; (!n || i < n) && !stop_resizing; i++) {
		struct ibv_srq_attr a = { .max_wr = i & 1 ? 16 : 4096 };

		errors += !!ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);
	}
	errors += !!ibv_destroy_srq(srq);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 && (argc != 4 || strcmp(argv[2], "srq-resize"))) {
		fprintf(stderr, "usage: isolation DEVICE [srq-resize N]\n");
		return 2;
	}
	dev_name = argv[1];
	ctx = open_dev(dev_name);
	if (argc == 4) {
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		return pd ? srq_resize(atoi(argv[3])) : 1;
	}
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	check(pd && cq && !ibv_query_gid(ctx, 1, 0, &gid), "open %s", dev_name);
	if (!pd || !cq)
		return tap_done();
	third_qp(IBV_QPT_UC);
	third_qp(IBV_QPT_RC);
	numbers();
	ud_no_source();
	sqd_path();
	mcast_reserve();
	bounded_flush();
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
