// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* --only-known CASE: each known kernel defect alone, one WQE or one race. */
#include "ringfuzz.h"

/* One WQE on a fresh QP of @type connected to itself, and its doorbell. */
static int known_one(enum ibv_qp_type type, enum peer_kind kind,
		     void (*craft)(struct vhca_swqe *w, struct fqp *q))
{
	double t;
	struct ibv_wc wc;
	struct fqp *q = &qps[0];
	struct vhca_mring *r;
	struct vhca_swqe *w;
	int i, n = 0;

	cqs[0].cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cqs[0].cq)
		return -1;
	q->type = type;
	q->kind = kind;
	q->srq = -1;
	q->ia = (struct ibv_qp_init_attr){
		.qp_type = type, .send_cq = cqs[0].cq, .recv_cq = cqs[0].cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 32, .max_recv_sge = 32,
			 .max_inline_data = 64 },
	};
	q->qp = ibv_create_qp(pd, &q->ia);
	if (!q->qp)
		return -1;
	q->v = vqp(q->qp);
	nqp = 1;
	q->access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC;
	if (kind == P_WIRE ? qp_connect(q) :
	    qp_connect_fixed(q, q->qp->qp_num))
		return -1;
	printf("# QP %#x (%s), max_inline %u, max_send_sge %u, connected to "
	       "%s\n", q->qp->qp_num, qpt_name(type), q->v->max_inline,
	       q->v->max_send_sge, kind == P_WIRE ? "nobody's GID" : "itself");
	r = &q->v->sq;
	w = vhca_mring_slot(r, r->idx);
	memset(w, 0, (size_t)1 << r->log2_stride);
	craft(w, q);
	trace = 1;
	dump_swqe("known swqe", q, r->idx, w, (size_t)1 << r->log2_stride);
	r->idx++;
	__atomic_store_n(&r->hdr->producer, r->idx, __ATOMIC_RELEASE);
	t = now();
	doorbell(q);
	printf("# the doorbell returned after %.3f s\n", now() - t);
	for (i = 0; i < 3000 && !n; i++) {
		n = ibv_poll_cq(cqs[0].cq, 1, &wc);
		usleep(10000);
	}
	printf("# completion after %.3f s: %s\n", now() - t,
	       n > 0 ? ibv_wc_status_str(wc.status) : "none");
	destroy_qp(q);
	ibv_destroy_cq(cqs[0].cq);
	cqs[0].cq = NULL;
	return 0;
}

/* RDMA READ, INLINE, 16 bytes, from this QP's own full-access MR. */
static void craft_read_inline(struct vhca_swqe *w, struct fqp *q)
{
	(void)q;
	w->wr_id = 1;
	w->opcode = IB_UVERBS_WR_RDMA_READ;
	w->flags = VHCA_SWQE_F_SIGNALED | VHCA_SWQE_F_INLINE;
	w->inline_len = 16;
	w->rdma.remote_addr = mrs[0].addr;
	w->rdma.rkey = mrs[0].mr->rkey;
}

/* RDMA WRITE of one 16-byte SGE on a UD QP (the union read as rdma). */
static void craft_ud_write(struct vhca_swqe *w, struct fqp *q)
{
	(void)q;
	w->wr_id = 2;
	w->opcode = IB_UVERBS_WR_RDMA_WRITE;
	w->flags = VHCA_SWQE_F_SIGNALED;
	w->num_sge = 1;
	w->sge[0].addr = mrs[0].addr;
	w->sge[0].length = 16;
	w->sge[0].lkey = mrs[0].mr->lkey;
	w->rdma.remote_addr = mrs[0].addr + 4096;
	w->rdma.rkey = mrs[0].mr->rkey;
}

static void craft_ud_write_imm(struct vhca_swqe *w, struct fqp *q)
{
	craft_ud_write(w, q);
	w->opcode = IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
}

/*
 * A 2 GiB SEND to the wire: 32 SGEs over one 64 MiB MR.  At a path MTU
 * of 256 that is 8 Mi packets, which the doorbell builds and transmits in
 * one go, under rcu_read_lock() and the QP's mutex.
 */
unsigned int big_sges = 32;	/* --sges: fewer for a smaller SEND */

static struct ibv_mr *big_mr(void)
{
	static struct ibv_mr *big;
	size_t len = 64 << 20;
	void *p;

	if (!big) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		big = p == MAP_FAILED ? NULL : ibv_reg_mr(pd, p, len, full);
	}
	return big;
}

static void craft_wire_2g(struct vhca_swqe *w, struct fqp *q)
{
	struct ibv_mr *big = big_mr();
	size_t len = 64 << 20;
	int i;

	printf("# a 64 MiB MR: %s; QP max_send_sge %u\n", big ? "yes" : "no",
	       q->v->max_send_sge);
	w->wr_id = 3;
	w->opcode = IB_UVERBS_WR_SEND;
	w->flags = VHCA_SWQE_F_SIGNALED;
	w->num_sge = q->v->max_send_sge < big_sges ? q->v->max_send_sge :
							big_sges;
	for (i = 0; big && i < w->num_sge; i++) {
		w->sge[i].addr = (uintptr_t)big->addr;
		w->sge[i].length = (uint32_t)len;
		w->sge[i].lkey = big->lkey;
	}
}

/*
 * The same 2 GiB SEND on an RC QP connected to itself, into a receive WQE
 * of 32 SGEs over the same MR: a 2 GiB copy in the doorbell.
 */
static void craft_self_2g(struct vhca_swqe *w, struct fqp *q)
{
	struct vhca_mring *r = &q->v->rq;
	struct vhca_rwqe *rw = vhca_mring_slot(r, r->idx);
	unsigned int i, n;

	craft_wire_2g(w, q);
	n = q->v->max_recv_sge < big_sges ? q->v->max_recv_sge : big_sges;
	rw->wr_id = 4;
	rw->num_sge = n;
	for (i = 0; i < n; i++)
		rw->sge[i] = w->sge[i];
	r->idx++;
	__atomic_store_n(&r->hdr->producer, r->idx, __ATOMIC_RELEASE);
	printf("# a receive WQE of %u SGEs of 64 MiB posted\n", n);
}

static const struct known {
	const char *name;
	enum ibv_qp_type type;
	enum peer_kind kind;
	void (*craft)(struct vhca_swqe *w, struct fqp *q);
	const char *what;
} knowns[] = {
	{ "read-inline", IBV_QPT_RC, P_SELF, craft_read_inline,
	  "RDMA READ with INLINE on an RC QP connected to itself" },
	{ "ud-write", IBV_QPT_UD, P_NONE, craft_ud_write,
	  "RDMA WRITE on a UD QP" },
	{ "ud-write-imm", IBV_QPT_UD, P_NONE, craft_ud_write_imm,
	  "RDMA WRITE_WITH_IMM on a UD QP" },
	{ "uc-wire-2g", IBV_QPT_UC, P_WIRE, craft_wire_2g,
	  "a 2 GiB SEND (32 SGEs of 64 MiB) on a UC QP to the wire" },
	{ "rc-wire-2g", IBV_QPT_RC, P_WIRE, craft_wire_2g,
	  "a 2 GiB SEND (32 SGEs of 64 MiB) on an RC QP to the wire" },
	{ "rc-self-2g", IBV_QPT_RC, P_SELF, craft_self_2g,
	  "a 2 GiB SEND on an RC QP connected to itself (a 2 GiB copy)" },
};

/*
 * RESIZE_CQ from two threads at once on one CQ, past the provider's lock
 * (which serialises its own callers): uverbs holds the CQ only for
 * reading, and vhca_resize_cq() reads cq->ring for its response after it
 * has dropped cq->lock.  Each response must describe one ring: its
 * mmap_size must be what its log2_slots make, and its key must map.
 */
struct resize_arg {
	struct ibv_cq *cq;
	int sizes[2];
	unsigned long calls, ok, mismatched, unmappable;
};

struct resize_resp {
	struct ib_uverbs_resize_cq_resp core;
	struct vhca_create_cq_resp drv;
};

static volatile int resize_stop;

static void *resize_thread(void *arg)
{
	struct resize_arg *a = arg;
	long page = sysconf(_SC_PAGESIZE);

	while (!resize_stop) {
		struct vhca_cmd_resize_cq cmd;
		struct resize_resp resp = {};
		size_t want;
		void *p;

		if (ibv_cmd_resize_cq(a->cq, a->sizes[a->calls++ & 1], &cmd,
				      sizeof(cmd), &resp.core, sizeof(resp)))
			continue;
		a->ok++;
		want = VHCA_RING_HDR_SIZE +
		       ((size_t)VHCA_CQE_STRIDE << resp.drv.log2_slots);
		want = (want + page - 1) & ~(size_t)(page - 1);
		if (resp.drv.mmap_size != want) {
			a->mismatched++;
			if (a->mismatched <= 3)
				printf("# a response of %u slots says mmap_size %u "
				       "(%zu expected), key %#llx\n",
				       1U << resp.drv.log2_slots,
				       resp.drv.mmap_size, want,
				       (unsigned long long)resp.drv.mmap_key);
		}
		p = mmap(NULL, resp.drv.mmap_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, ctx->cmd_fd, (off_t)resp.drv.mmap_key);
		if (p == MAP_FAILED)
			a->unmappable++;
		else
			munmap(p, resp.drv.mmap_size);
	}
	return NULL;
}

static int cq_resize_race(void)
{
	struct resize_arg a[2] = { { .sizes = { 64, 128 } },
				   { .sizes = { 4096, 8192 } } };
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	pthread_t th[2];
	int i;

	if (!cq)
		return -1;
	a[0].cq = a[1].cq = cq;
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, resize_thread, &a[i]);
	sleep(20);
	resize_stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 2; i++)
		printf("# thread %d: %lu resizes, %lu done, %lu responses whose "
		       "size is another ring's, %lu keys that did not map\n", i,
		       a[i].calls, a[i].ok, a[i].mismatched, a[i].unmappable);
	/*
	 * A key that no longer maps is fair: the other thread's resize may
	 * have replaced that ring already.  A size that is not the ring's
	 * whose slot count the same response gives is not.
	 */
	check(!a[0].mismatched && !a[1].mismatched,
	      "cq-resize-race: every resize's response describes one ring");
	/* the provider's mapping is the first ring's: stale, but mapped */
	return ibv_destroy_cq(cq);
}

int run_known(const char *name)
{
	size_t i;

	if (!strcmp(name, "list"))
		printf("cq-resize-race: RESIZE_CQ from two threads at once\n");
	if (!strcmp(name, "cq-resize-race")) {
		check(cq_resize_race() == 0, "cq-resize-race: the CQ is destroyed");
		return 0;
	}

	for (i = 0; i < sizeof(knowns) / sizeof(knowns[0]); i++) {
		if (!strcmp(name, "list")) {
			printf("%s: %s\n", knowns[i].name, knowns[i].what);
			continue;
		}
		if (strcmp(name, knowns[i].name))
			continue;
		printf("# known defect %s: %s\n", knowns[i].name, knowns[i].what);
		fflush(stdout);
		check(known_one(knowns[i].type, knowns[i].kind,
				knowns[i].craft) == 0,
		      "known %s: the WQE was posted and the process lives on",
		      knowns[i].name);
		return 0;
	}
	if (!strcmp(name, "list"))
		return 0;
	fprintf(stderr, "no known case %s\n", name);
	return -1;
}
