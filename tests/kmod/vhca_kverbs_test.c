// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Kernel verbs on a vhca device, as a ULP uses them: RC, UC and UD QPs,
 * each with its own receive queue and on an SRQ, connected to a second QP
 * of the same device, carry SENDs; then ib_drain_qp() must return with
 * every outstanding receive flushed, and a QP in ERR must flush whatever
 * is posted to it.  Then a LOCAL_INV on one QP while another QP's RDMA
 * WRITE into that MR is under way: the WRITE must fail, and no byte may
 * land once the invalidation completed.  Debian's kernel has no KUnit,
 * so this is a module: it
 * runs at load and prints TAP to the kernel log, "vhca_kverbs_test: " in
 * front of each line.
 *
 *   insmod vhca_kverbs_test.ko dev=vhca0
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev_name_param = "vhca0";
module_param_named(dev, dev_name_param, charp, 0444);
MODULE_PARM_DESC(dev, "the RDMA device to test (default vhca0)");

#define NSEND	4	/* SENDs that must arrive, one at a time */
#define NSENT	(NSEND + 1)	/* then one posted with BH disabled */
#define NRECV	12	/* receives posted: NRECV - NSENT stay for the drain */
#define MSG	64
#define BUF	(MSG + 40)	/* a UD receive starts with the GRH slot */
#define WAIT	(5 * HZ)

static int tap_n;
static int tap_failed;

static void tap(bool ok, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	tap_n++;
	if (!ok)
		tap_failed++;
	pr_info("%sok %d - %pV\n", ok ? "" : "not ", tap_n, &vaf);
	va_end(args);
}

enum { C_SEND_OK, C_SEND_FLUSH, C_RECV_OK, C_RECV_FLUSH, C_OTHER, C_MAX };

struct side {
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *buf;		/* NRECV receive buffers, then one send buffer */
	u64 dma;
};

struct tcase {
	enum ib_qp_type type;
	bool srq;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_srq *ib_srq;
	struct ib_ah *ah;
	struct side a, b;
	u32 gid_index;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	struct ib_cqe send_cqe;
	/* wr_id and wr_cqe share a union: a receive's cqe names its buffer */
	struct rcv {
		struct ib_cqe cqe;
		struct tcase *t;
		u32 idx;
	} rcv[NRECV + 1];
	atomic_t count[C_MAX];
	u32 next_rx;		/* the SEND the next receive must hold */
	bool data_ok;
	bool last_wqe;
	wait_queue_head_t wq;
};

static const char *qpt_name(enum ib_qp_type type)
{
	return type == IB_QPT_RC ? "RC" : type == IB_QPT_UC ? "UC" : "UD";
}

static void count(struct tcase *t, int which)
{
	atomic_inc(&t->count[which]);
	wake_up(&t->wq);
}

static void send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct tcase *t = container_of(wc->wr_cqe, struct tcase, send_cqe);

	count(t, wc->status == IB_WC_SUCCESS ? C_SEND_OK :
		 wc->status == IB_WC_WR_FLUSH_ERR ? C_SEND_FLUSH : C_OTHER);
}

/* byte @k of SEND @i: no two SENDs, no two offsets alike */
static u8 pattern(u32 i, u32 k)
{
	return (i * 151 + k * 7 + 0x5a) ^ (k >> 5);
}

/* what a receive buffer holds before a SEND lands in it */
#define POISON	0xee

/*
 * SEND @i, in order, in the receive buffer @p (after UD's GRH slot), and
 * the rest of the buffer as it was posted.  Returns -1, or the offset of
 * the first wrong byte.
 */
static int check_recv(struct tcase *t, const u8 *p, u32 i)
{
	u32 off = t->type == IB_QPT_UD ? 40 : 0, k;

	for (k = 0; k < MSG; k++)
		if (p[off + k] != pattern(i, k))
			return off + k;
	for (k = off + MSG; k < BUF; k++)
		if (p[k] != POISON)
			return k;
	return -1;
}

static void recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rcv *r = container_of(wc->wr_cqe, struct rcv, cqe);
	struct tcase *t = r->t;
	u32 off = t->type == IB_QPT_UD ? 40 : 0;
	int bad;

	if (wc->status == IB_WC_SUCCESS) {
		ib_dma_sync_single_for_cpu(t->dev, t->b.dma, NRECV * BUF,
					   DMA_BIDIRECTIONAL);
		bad = check_recv(t, t->b.buf + r->idx * BUF, t->next_rx);
		if (wc->byte_len != MSG + off || bad >= 0) {
			pr_info("%s receive %u (SEND %u): byte_len %u, first bad byte %d\n",
				qpt_name(t->type), r->idx, t->next_rx,
				wc->byte_len, bad);
			t->data_ok = false;
		}
		t->next_rx++;
		count(t, C_RECV_OK);
	} else {
		count(t, wc->status == IB_WC_WR_FLUSH_ERR ? C_RECV_FLUSH :
							    C_OTHER);
	}
}

static void qp_event(struct ib_event *ev, void *ctx)
{
	struct tcase *t = ctx;

	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED &&
	    ev->element.qp == t->b.qp) {
		t->last_wqe = true;
		wake_up(&t->wq);
	}
}

static bool wait_count(struct tcase *t, int which, int n)
{
	return wait_event_timeout(t->wq, atomic_read(&t->count[which]) >= n,
				  WAIT) > 0;
}

/* The device's first GID, and the MAC of its netdev for the AV. */
static int find_gid(struct tcase *t)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	u32 i;

	for (i = 0; i < t->dev->port_data[1].immutable.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(t->dev, 1, i);
		if (IS_ERR(attr))
			continue;
		t->gid_index = i;
		t->gid = attr->gid;
		rcu_read_lock();
		ndev = rdma_read_gid_attr_ndev_rcu(attr);
		if (!IS_ERR(ndev))
			ether_addr_copy(t->mac, ndev->dev_addr);
		rcu_read_unlock();
		rdma_put_gid_attr(attr);
		return IS_ERR(ndev) ? PTR_ERR(ndev) : 0;
	}
	return -ENODATA;
}

static void set_av(struct tcase *t, struct rdma_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->type = rdma_ah_find_type(t->dev, 1);
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, &t->gid, 0, t->gid_index, 64, 0);
	ether_addr_copy(ah->roce.dmac, t->mac);
}

static int side_create(struct tcase *t, struct side *s)
{
	struct ib_qp_init_attr init = {
		.event_handler = qp_event,
		.qp_context = t,
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = t->type,
		.srq = t->ib_srq,
	};

	s->cq = ib_alloc_cq(t->dev, t, 64, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(s->cq))
		return PTR_ERR(s->cq);
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	s->qp = ib_create_qp(t->pd, &init);
	if (IS_ERR(s->qp))
		return PTR_ERR(s->qp);
	s->buf = kmalloc((NRECV + 1) * BUF, GFP_KERNEL);
	if (!s->buf)
		return -ENOMEM;
	/* a byte no SEND wrote cannot pass for one */
	memset(s->buf, POISON, (NRECV + 1) * BUF);
	s->dma = ib_dma_map_single(t->dev, s->buf, (NRECV + 1) * BUF,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(t->dev, s->dma)) {
		s->dma = 0;
		return -ENOMEM;
	}
	return 0;
}

static void side_destroy(struct tcase *t, struct side *s)
{
	if (!IS_ERR_OR_NULL(s->qp))
		ib_destroy_qp(s->qp);
	if (s->dma)
		ib_dma_unmap_single(t->dev, s->dma, (NRECV + 1) * BUF,
				    DMA_BIDIRECTIONAL);
	kfree(s->buf);
	if (!IS_ERR_OR_NULL(s->cq))
		ib_free_cq(s->cq);
}

/* INIT, RTR and RTS, connected to @peer for RC and UC. */
static int to_rts(struct tcase *t, struct ib_qp *qp, struct ib_qp *peer)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qkey = 0x11111111,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	int mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT;
	int err;

	mask |= t->type == IB_QPT_UD ? IB_QP_QKEY : IB_QP_ACCESS_FLAGS;
	err = ib_modify_qp(qp, &a, mask);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	mask = IB_QP_STATE;
	if (t->type != IB_QPT_UD) {
		set_av(t, &a.ah_attr);
		a.path_mtu = IB_MTU_1024;
		a.dest_qp_num = peer->qp_num;
		a.rq_psn = 100;
		mask |= IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			IB_QP_RQ_PSN;
	}
	if (t->type == IB_QPT_RC) {
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	}
	err = ib_modify_qp(qp, &a, mask);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 100;
	mask = IB_QP_STATE | IB_QP_SQ_PSN;
	if (t->type == IB_QPT_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 1;
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	}
	return ib_modify_qp(qp, &a, mask);
}

static int post_recv(struct tcase *t, u32 idx)
{
	struct ib_sge sge = {
		.addr = t->b.dma + idx * BUF,
		.length = BUF,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &t->rcv[idx].cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return t->srq ? ib_post_srq_recv(t->ib_srq, &wr, NULL) :
			ib_post_recv(t->b.qp, &wr, NULL);
}

static int post_send(struct tcase *t, u8 tag)
{
	struct ib_sge sge = {
		.addr = t->a.dma + NRECV * BUF,
		.length = MSG,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = {
			.wr_cqe = &t->send_cqe,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
		},
		.ah = t->ah,
		.remote_qpn = t->b.qp->qp_num,
		.remote_qkey = 0x11111111,
	};

	u32 k;

	/* one SEND at a time: the buffer is rewritten for the next */
	ib_dma_sync_single_for_cpu(t->dev, t->a.dma, (NRECV + 1) * BUF,
				   DMA_BIDIRECTIONAL);
	for (k = 0; k < MSG; k++)
		t->a.buf[NRECV * BUF + k] = pattern(tag, k);
	ib_dma_sync_single_for_device(t->dev, t->a.dma, (NRECV + 1) * BUF,
				      DMA_BIDIRECTIONAL);
	return ib_post_send(t->a.qp, &wr.wr, NULL);
}

static int setup(struct tcase *t)
{
	struct ib_srq_init_attr sinit = {
		.attr = { .max_wr = NRECV, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct rdma_ah_attr ah;
	int err;

	t->pd = ib_alloc_pd(t->dev, 0);
	if (IS_ERR(t->pd))
		return PTR_ERR(t->pd);
	if (t->srq) {
		t->ib_srq = ib_create_srq(t->pd, &sinit);
		if (IS_ERR(t->ib_srq))
			return PTR_ERR(t->ib_srq);
	}
	err = find_gid(t) ?: side_create(t, &t->a) ?: side_create(t, &t->b);
	if (err)
		return err;
	if (t->type == IB_QPT_UD) {
		set_av(t, &ah);
		t->ah = rdma_create_ah(t->pd, &ah, RDMA_CREATE_AH_SLEEPABLE);
		if (IS_ERR(t->ah))
			return PTR_ERR(t->ah);
	}
	return to_rts(t, t->a.qp, t->b.qp) ?: to_rts(t, t->b.qp, t->a.qp);
}

static void teardown(struct tcase *t)
{
	if (!IS_ERR_OR_NULL(t->ah))
		rdma_destroy_ah(t->ah, RDMA_DESTROY_AH_SLEEPABLE);
	side_destroy(t, &t->b);
	side_destroy(t, &t->a);
	if (!IS_ERR_OR_NULL(t->ib_srq))
		ib_destroy_srq(t->ib_srq);
	if (!IS_ERR_OR_NULL(t->pd))
		ib_dealloc_pd(t->pd);
}

static void run_case(struct ib_device *dev, enum ib_qp_type type, bool srq)
{
	const char *name = qpt_name(type), *rq = srq ? "SRQ" : "RQ";
	struct ib_rdma_wr wwr = {};
	struct ib_recv_wr rwr = {};
	struct tcase *t;
	int err, i, left = NRECV - NSENT;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		tap(false, "%s on an %s: no memory", name, rq);
		return;
	}
	t->dev = dev;
	t->type = type;
	t->srq = srq;
	t->data_ok = true;
	t->send_cqe.done = send_done;
	for (i = 0; i <= NRECV; i++) {
		t->rcv[i].cqe.done = recv_done;
		t->rcv[i].t = t;
		t->rcv[i].idx = i;
	}
	init_waitqueue_head(&t->wq);

	err = setup(t);
	tap(!err, "%s on an %s: QPs created and connected (%d)", name, rq, err);
	if (err)
		goto out;

	for (i = 0; i < NRECV && !err; i++)
		err = post_recv(t, i);
	for (i = 0; i < NSEND && !err; i++) {
		err = post_send(t, i);
		if (!err && !wait_count(t, C_SEND_OK, i + 1))
			err = -ETIMEDOUT;
	}
	tap(!err && wait_count(t, C_RECV_OK, NSEND) && t->data_ok,
	    "%s on an %s: %d SENDs received intact (%d)", name, rq, NSEND,
	    err);

	/* as a ULP posts from its completion handler: softirq context */
	if (!err) {
		local_bh_disable();
		err = post_send(t, NSEND);
		local_bh_enable();
	}
	tap(!err && wait_count(t, C_RECV_OK, NSENT) && t->data_ok,
	    "%s on an %s: a SEND posted with BH disabled is received (%d)",
	    name, rq, err);

	/* The receiver drains with receives still posted. */
	ib_drain_qp(t->b.qp);
	if (srq) {
		/* they belong to the SRQ: only LAST_WQE_REACHED says so */
		tap(wait_event_timeout(t->wq, t->last_wqe, WAIT) > 0,
		    "%s on an SRQ: ib_drain_qp() returns; LAST_WQE_REACHED raised",
		    name);
		left = 0;
	} else {
		tap(wait_count(t, C_RECV_FLUSH, left),
		    "%s on an RQ: ib_drain_qp() returns; the %d receives left are flushed",
		    name, left);
	}
	ib_drain_qp(t->a.qp);
	tap(atomic_read(&t->count[C_SEND_OK]) == NSENT &&
	    atomic_read(&t->count[C_RECV_OK]) == NSENT &&
	    atomic_read(&t->count[C_RECV_FLUSH]) == left &&
	    !atomic_read(&t->count[C_SEND_FLUSH]) &&
	    !atomic_read(&t->count[C_OTHER]),
	    "%s on an %s: no completion lost, none twice (%d/%d sent, %d/%d received, %d/%d flushed, %d other)",
	    name, rq, atomic_read(&t->count[C_SEND_OK]), NSENT,
	    atomic_read(&t->count[C_RECV_OK]), NSENT,
	    atomic_read(&t->count[C_RECV_FLUSH]), left,
	    atomic_read(&t->count[C_OTHER]));

	/*
	 * What ib_drain_sq() posts: an RDMA WRITE without SGEs, whatever
	 * the QP type.  In ERR it must be taken and flushed.
	 */
	wwr.wr.wr_cqe = &t->send_cqe;
	wwr.wr.opcode = IB_WR_RDMA_WRITE;
	err = ib_post_send(t->b.qp, &wwr.wr, NULL);
	tap(!err && wait_count(t, C_SEND_FLUSH, 1),
	    "%s on an %s: an RDMA WRITE posted in ERR is flushed (%d)",
	    name, rq, err);
	if (!srq) {
		rwr.wr_cqe = &t->rcv[NRECV].cqe;
		err = ib_post_recv(t->b.qp, &rwr, NULL);
		tap(!err && wait_count(t, C_RECV_FLUSH, left + 1),
		    "%s on an RQ: a receive posted in ERR is flushed (%d)",
		    name, err);
	}
out:
	teardown(t);
	kfree(t);
}

/*
 * LOCAL_INV against another QP's WRITE.  The MR is as large as a vhca
 * fast-register page list goes: the engine moves it over several runs of
 * the send ring, and the invalidation lands between or inside them.
 */
#define INV_PAGES	4096
#define INV_LEN		(INV_PAGES * PAGE_SIZE)

struct inv_wait {
	struct ib_cqe cqe;
	int status;		/* -1 until the completion */
	wait_queue_head_t *wq;
};

static void inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct inv_wait *w = container_of(wc->wr_cqe, struct inv_wait, cqe);

	WRITE_ONCE(w->status, wc->status);
	wake_up(w->wq);
}

static int inv_status(struct inv_wait *w)
{
	wait_event_timeout(*w->wq, READ_ONCE(w->status) >= 0, 6 * WAIT);
	return READ_ONCE(w->status);
}

/* a lost race is tried again, a few times: a cut must be seen to pass */
#define INV_TRIES	4

struct inv_ctx {
	struct tcase *t;
	struct ib_mr *mr;
	u8 *src, *dst, *snap;
	u64 src_dma;
};

/*
 * One try: register, start the WRITE, invalidate once its first bytes have
 * landed.  Returns true, with nothing reported, when the WRITE finished
 * whole before the invalidation reached it: a race the test lost (the
 * guest's vCPUs are host threads, and one may stall for the length of the
 * WRITE), not a verdict.
 */
static bool inv_try(struct inv_ctx *c, int try)
{
	struct inv_wait reg_w, write_w, inv_w;
	struct ib_reg_wr reg = {};
	struct ib_rdma_wr wr = {};
	struct ib_send_wr inv = {};
	struct ib_sge sge = {};
	struct ib_mr *mr = c->mr;
	struct tcase *t = c->t;
	u32 landed;
	int err, i;

	reg_w = (struct inv_wait){ .cqe.done = inv_done, .status = -1,
				   .wq = &t->wq };
	write_w = reg_w;
	inv_w = reg_w;
	memset(c->dst, POISON, INV_LEN);
	/* each try's key is fresh, as a ULP's would be after LOCAL_INV */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = &reg_w.cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.mr = mr;
	reg.key = mr->rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	err = ib_post_send(t->b.qp, &reg.wr, NULL);
	if (!err)
		inv_status(&reg_w);
	if (err || reg_w.status != IB_WC_SUCCESS) {
		tap(false, "LOCAL_INV under a WRITE: REG_MR of a %u-page MR (%d, status %d)",
		    INV_PAGES, err, reg_w.status);
		return false;
	}

	sge.addr = c->src_dma;
	sge.length = INV_LEN;
	sge.lkey = t->pd->local_dma_lkey;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.wr_cqe = &write_w.cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = mr->iova;
	wr.rkey = mr->rkey;
	inv.opcode = IB_WR_LOCAL_INV;
	inv.wr_cqe = &inv_w.cqe;
	inv.send_flags = IB_SEND_SIGNALED;
	inv.ex.invalidate_rkey = mr->rkey;
	/* the invalidation goes once the WRITE's first bytes have landed */
	err = ib_post_send(t->a.qp, &wr.wr, NULL);
	for (i = 0; !err && i < 5000 && READ_ONCE(c->dst[0]) != c->src[0]; i++)
		usleep_range(100, 200);
	if (!err)
		err = ib_post_send(t->b.qp, &inv, NULL);
	if (!err)
		inv_status(&inv_w);
	memcpy(c->snap, c->dst, INV_LEN);
	inv_status(&write_w);
	for (landed = 0; landed < INV_LEN && c->dst[landed] == c->src[landed];)
		landed++;
	if (!err && inv_w.status == IB_WC_SUCCESS &&
	    write_w.status == IB_WC_SUCCESS && landed == INV_LEN && try < INV_TRIES) {
		pr_info("# LOCAL_INV under a WRITE: try %d of %d lost the race (the WRITE finished first)\n",
			try, INV_TRIES);
		return true;
	}
	tap(!err && inv_w.status == IB_WC_SUCCESS,
	    "LOCAL_INV under a WRITE: the LOCAL_INV, posted once the WRITE's first bytes landed, completes (%d, status %d)",
	    err, inv_w.status);
	tap(write_w.status == IB_WC_REM_ACCESS_ERR,
	    "LOCAL_INV under a WRITE: the 16 MiB WRITE fails with REM_ACCESS_ERR (status %d, %u bytes landed first)",
	    write_w.status, landed);
	tap(!memcmp(c->snap, c->dst, INV_LEN),
	    "LOCAL_INV under a WRITE: no byte lands once the LOCAL_INV completed");
	return false;
}

static void inv_case(struct ib_device *dev)
{
	struct inv_ctx c = {};
	struct sg_table sgt = {};
	struct scatterlist *sg;
	struct tcase *t;
	int err, n, i;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		tap(false, "LOCAL_INV under a WRITE: no memory");
		return;
	}
	c.t = t;
	t->dev = dev;
	t->type = IB_QPT_RC;
	init_waitqueue_head(&t->wq);

	err = setup(t);
	c.src = vmalloc(INV_LEN);
	c.dst = vmalloc(INV_LEN);
	c.snap = vmalloc(INV_LEN);
	if (!err && (!c.src || !c.dst || !c.snap))
		err = -ENOMEM;
	if (!err)
		err = sg_alloc_table(&sgt, INV_PAGES, GFP_KERNEL);
	if (err)
		goto out;
	for (i = 0; i < INV_LEN; i++)
		c.src[i] = pattern(i >> 12, i);
	for_each_sg(sgt.sgl, sg, INV_PAGES, i)
		sg_set_page(sg, vmalloc_to_page(c.dst + i * PAGE_SIZE),
			    PAGE_SIZE, 0);
	if (ib_dma_map_sg(dev, sgt.sgl, INV_PAGES, DMA_BIDIRECTIONAL) !=
	    INV_PAGES) {
		err = -EIO;
		goto out;
	}
	c.mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, INV_PAGES);
	if (IS_ERR(c.mr)) {
		err = PTR_ERR(c.mr);
		c.mr = NULL;
		goto unmap;
	}
	n = ib_map_mr_sg(c.mr, sgt.sgl, INV_PAGES, NULL, PAGE_SIZE);
	tap(n == INV_PAGES, "LOCAL_INV under a WRITE: all %u pages of the MR mapped (%d)",
	    INV_PAGES, n);
	if (n != INV_PAGES)
		goto unmap;
	c.src_dma = ib_dma_map_single(dev, c.src, INV_LEN, DMA_TO_DEVICE);
	for (i = 1; i <= INV_TRIES && inv_try(&c, i); i++)
		;
	ib_dma_unmap_single(dev, c.src_dma, INV_LEN, DMA_TO_DEVICE);
unmap:
	ib_dma_unmap_sg(dev, sgt.sgl, INV_PAGES, DMA_BIDIRECTIONAL);
out:
	if (err)
		tap(false, "LOCAL_INV under a WRITE: set-up failed (%d)", err);
	if (c.mr)
		ib_dereg_mr(c.mr);
	teardown(t);
	sg_free_table(&sgt);
	vfree(c.snap);
	vfree(c.dst);
	vfree(c.src);
	kfree(t);
}

static struct ib_device *test_dev;

/*
 * The device is found as a ULP finds it, through a client the core tells
 * of every device (ib_device_get_by_name() is not exported everywhere).
 */
static int test_client_add(struct ib_device *dev)
{
	if (!test_dev && !strcmp(dev_name(&dev->dev), dev_name_param) &&
	    ib_device_try_get(dev))
		test_dev = dev;
	return -EOPNOTSUPP;	/* nothing to keep per device */
}

static void test_client_remove(struct ib_device *dev, void *data)
{
}

static struct ib_client test_client = {
	.name = "vhca_kverbs_test",
	.add = test_client_add,
	.remove = test_client_remove,
};

static int __init vhca_kverbs_test_init(void)
{
	static const enum ib_qp_type types[] = {
		IB_QPT_RC, IB_QPT_UC, IB_QPT_UD
	};
	struct ib_device *dev;
	int i, err;

	err = ib_register_client(&test_client);
	if (err)
		return err;
	dev = test_dev;
	if (!dev) {
		ib_unregister_client(&test_client);
		pr_err("no RDMA device %s\n", dev_name_param);
		return -ENODEV;
	}
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		run_case(dev, types[i], false);
		run_case(dev, types[i], true);
	}
	inv_case(dev);
	ib_device_put(dev);
	ib_unregister_client(&test_client);
	pr_info("1..%d\n", tap_n);
	pr_info("%d passed, %d failed\n", tap_n - tap_failed, tap_failed);
	return 0;
}

static void __exit vhca_kverbs_test_exit(void)
{
}

module_init(vhca_kverbs_test_init);
module_exit(vhca_kverbs_test_exit);
MODULE_DESCRIPTION("Kernel verbs and ib_drain_qp() on a vhca device");
MODULE_LICENSE("Dual BSD/GPL");
