// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What a hostile process can write into its own rings, case by case: WQEs
 * the provider would never write, put straight into the mapped send ring
 * (the provider's own mapping, reached through its objects), each then
 * published by one legitimate post that rings the doorbell.  The engine
 * must fail each with an error completion, never act on it.  Then resizes
 * of one CQ from several threads at once, past the provider's lock.
 * Prints TAP.  Usage: hostile DEVICE
 *
 * hostile DEVICE memlock: run with RLIMIT_MEMLOCK at 64 KiB and without
 * CAP_IPC_LOCK; ring memory counts against that limit, as MRs do, for as
 * long as it is mapped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "provider.h"
#include "lib/testlib.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static union ibv_gid gid;
static uint64_t *buf;

#define BUF_BYTES	4096

static struct ibv_qp *make_qp(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};

	return ibv_create_qp(pd, &ia);
}

/*
 * The next free slot of @ibqp's send ring, zeroed and taken: the post
 * after it publishes it with its own WQE.
 */
static struct vhca_swqe *forge(struct ibv_qp *ibqp)
{
	struct vhca_qp *qp = container_of(ibqp, struct vhca_qp, vqp.qp);
	struct vhca_swqe *w = vhca_mring_slot(&qp->sq, qp->sq.idx++);

	memset(w, 0, (size_t)1 << qp->sq.log2_stride);
	w->wr_id = 0xbad;
	w->flags = VHCA_SWQE_F_SIGNALED;
	return w;
}

/* One legitimate, signaled WR that publishes what forge() wrote. */
static int post_legit(struct ibv_qp *qp, struct ibv_ah *ah)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x900d, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (ah) {
		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = qp->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
	} else {
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)(buf + 8);
		wr.wr.rdma.rkey = mr->rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* Poll @n completions within 3 s into @wc; returns how many came. */
static int poll_n(struct ibv_wc *wc, int n)
{
	int got = 0, i;

	for (i = 0; i < 3000 && got < n; i++) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return got;
		got += r;
		if (got < n)
			usleep(1000);
	}
	return got;
}

/*
 * Forge one WQE with @fill on a fresh QP of @type, publish it, and check
 * it completes with @status and the QP then flushes the legitimate WR.
 */
static void forged(const char *what, enum ibv_qp_type type,
		   void (*fill)(struct vhca_swqe *w), enum ibv_wc_status status)
{
	struct ibv_qp *qp = make_qp(type);
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc[2];
	int n;

	if (!qp || qp_self_rts(qp, &gid)) {
		check(0, "%s: QP set up", what);
		if (qp)
			ibv_destroy_qp(qp);
		return;
	}
	if (type == IBV_QPT_UD) {
		struct ibv_ah_attr aa = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = gid, .hop_limit = 64 },
		};

		ah = ibv_create_ah(pd, &aa);
	}
	fill(forge(qp));
	check(!post_legit(qp, ah), "%s: the legitimate post after it", what);
	n = poll_n(wc, 2);
	check(n == 2, "%s: two completions (%d)", what, n);
	if (n >= 1)
		check(wc[0].wr_id == 0xbad && wc[0].status == status,
		      "%s: it completes with %s (wr_id %#llx, %s)", what,
		      ibv_wc_status_str(status),
		      (unsigned long long)wc[0].wr_id,
		      ibv_wc_status_str(wc[0].status));
	if (n == 2)
		check(wc[1].wr_id == 0x900d &&
		      wc[1].status == IBV_WC_WR_FLUSH_ERR,
		      "%s: the WR behind it is flushed (%s)", what,
		      ibv_wc_status_str(wc[1].status));
	if (ah)
		ibv_destroy_ah(ah);
	check(!ibv_destroy_qp(qp), "%s: destroy_qp", what);
}

/* An RC READ whose local "buffer" is its own inline bytes. */
static void read_inline(struct vhca_swqe *w)
{
	w->opcode = IB_UVERBS_WR_RDMA_READ;
	w->flags |= VHCA_SWQE_F_INLINE;
	w->inline_len = 8;
	w->rdma.remote_addr = (uintptr_t)buf;
	w->rdma.rkey = mr->rkey;
}

/* An RDMA WRITE on a UD QP, which has none. */
static void write_ud(struct vhca_swqe *w)
{
	w->opcode = IB_UVERBS_WR_RDMA_WRITE;
	w->num_sge = 1;
	w->rdma.remote_addr = (uintptr_t)buf;
	w->rdma.rkey = mr->rkey;
	w->sge[0] = (struct vhca_sge){ .addr = (uintptr_t)buf, .length = 8,
				       .lkey = mr->lkey };
}

/* A READ on UC, which has none. */
static void read_uc(struct vhca_swqe *w)
{
	write_ud(w);
	w->opcode = IB_UVERBS_WR_RDMA_READ;
}

/* An atomic whose result would land in its own inline bytes. */
static void atomic_inline(struct vhca_swqe *w)
{
	w->opcode = IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
	w->flags |= VHCA_SWQE_F_INLINE;
	w->inline_len = 8;
	w->atomic.remote_addr = (uintptr_t)buf;
	w->atomic.rkey = mr->rkey;
}

/* Fast registration, which a user's ring cannot describe. */
static void reg_mr(struct vhca_swqe *w)
{
	w->opcode = VHCA_WR_REG_MR;
	w->ex = mr->rkey;
	w->reg.iova = (uintptr_t)buf;
	w->reg.length = 1ULL << 40;
	w->reg.access = IBV_ACCESS_REMOTE_WRITE;
	w->reg.page_shift = 12;
}

/* An opcode no verb has. */
static void garbage_op(struct vhca_swqe *w)
{
	w->opcode = 0x1f;
}

struct resizer {
	struct ibv_cq *cq;
	int seed;
	int errors;
};

/*
 * Resize through the uverbs command itself: the provider's lock, which
 * serialises its own resizes, is not there to save the kernel.
 */
static void *resize_loop(void *arg)
{
	struct resizer *r = arg;
	unsigned int seed = r->seed;
	int i;

	for (i = 0; i < 200; i++) {
		struct {
			struct ib_uverbs_resize_cq_resp core;
			struct vhca_create_cq_resp drv;
		} resp = {};
		struct vhca_cmd_resize_cq cmd;

		if (ibv_cmd_resize_cq(r->cq, 16 + rand_r(&seed) % 4000, &cmd,
				      sizeof(cmd), &resp.core, sizeof(resp)))
			r->errors++;
	}
	return NULL;
}

static void concurrent_resize(void)
{
	struct ibv_cq *rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct resizer r[4];
	pthread_t t[4];
	int i, started = 0, errors = 0;

	check(rcq != NULL, "create a CQ to resize");
	if (!rcq)
		return;
	for (i = 0; i < 4; i++) {
		r[i] = (struct resizer){ .cq = rcq, .seed = i + 1 };
		started += !pthread_create(&t[i], NULL, resize_loop, &r[i]);
	}
	for (i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		errors += r[i].errors;
	}
	check(started == 4 && !errors,
	      "800 resizes of one CQ from 4 threads at once succeed (%d threads, %d errors)",
	      started, errors);
	/*
	 * The provider still maps the first ring, which the kernel let go:
	 * destroy only, as a process that broke its own CQ would.
	 */
	check(!ibv_destroy_cq(rcq), "destroy the resized CQ");
}

/* The mmap offset (the ring's key) of the mapping at @addr, or -1. */
static long long map_offset(const void *addr)
{
	unsigned long long start, end, off;
	FILE *f = fopen("/proc/self/maps", "r");
	long long ret = -1;
	char line[512];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) == 3 &&
		    start == (uintptr_t)addr)
			ret = off;
	if (f)
		fclose(f);
	return ret;
}

/* This process's pinned_vm in KiB (VmPin), or -1. */
static long vm_pin_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* 0 if a CQ of @cqe is created (it is destroyed again), or its errno */
static int cq_refused(int cqe)
{
	struct ibv_cq *c;
	int err;

	errno = 0;
	c = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	err = c ? 0 : errno;
	if (c)
		ibv_destroy_cq(c);
	return err;
}

/*
 * VmPin once it reads @want, or after 5 s: vhca looks at rings whose pages
 * outlive their object once a second.
 */
static long vm_pin_settles(long want)
{
	long pin = vm_pin_kib();
	int tries;

	for (tries = 0; tries < 50 && pin != want; tries++) {
		usleep(100000);
		pin = vm_pin_kib();
	}
	return pin;
}

#define KEPT	3	/* CQs of 256 whose rings are kept mapped: 60 of 64 KiB */

/*
 * A ring mapped a second time and kept past its CQ's destroy stays
 * charged until it is unmapped; otherwise create, map and destroy in a
 * loop would hold any amount of the kernel's memory.
 */
static void kept_mappings(void)
{
	void *keep[KEPT] = {};
	long pin0, pin;
	size_t len = 0;
	int i, err;

	pin0 = vm_pin_settles(0);
	check(pin0 == 0,
	      "the rings destroyed and unmapped so far are uncharged within 5 s: VmPin %ld kB",
	      pin0);

	for (i = 0; i < KEPT; i++) {
		struct ibv_cq *c = ibv_create_cq(ctx, 256, NULL, NULL, 0);
		struct vhca_cq *vc = (struct vhca_cq *)c;
		long long off;

		if (!c)
			break;
		len = vc->ring.map_size;
		off = map_offset(vc->ring.map);
		if (off >= 0)
			keep[i] = mmap(NULL, len, PROT_READ, MAP_SHARED,
				       ctx->cmd_fd, (off_t)off);
		ibv_destroy_cq(c);
		if (off < 0 || keep[i] == MAP_FAILED) {
			keep[i] = NULL;
			break;
		}
	}
	check(i == KEPT && len == 5 * 4096,
	      "%d CQs of 256 (5 pages each) created, their rings mapped again, destroyed (%d)",
	      KEPT, i);
	pin = vm_pin_kib();
	check(pin == KEPT * 20,
	      "their pages stay charged while mapped: VmPin %ld kB (%d expected)",
	      pin, KEPT * 20);
	err = cq_refused(256);
	check(err == ENOMEM,
	      "another CQ of 256 is over the limit while they are mapped: ENOMEM (%d)", err);
	for (i = 0; i < KEPT; i++)
		if (keep[i])
			munmap(keep[i], len);
	pin = vm_pin_settles(0);
	check(pin == 0, "unmapped, they are uncharged within 5 s: VmPin %ld kB", pin);
	check(!cq_refused(256), "and a CQ of 256 fits again");
}

/* Rings count against RLIMIT_MEMLOCK: the caller set it to 64 KiB. */
static int memlock(void)
{
	struct ibv_cq *small;
	int err;

	small = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	check(small != NULL, "a CQ of 16 (one page) fits under a 64 KiB RLIMIT_MEMLOCK");
	err = cq_refused(65536);
	check(err == ENOMEM,
	      "a CQ of 65536 (4 MiB of ring) does not: ENOMEM (%d)", err);
	if (small)
		ibv_destroy_cq(small);
	check(!cq_refused(256),
	      "what was freed is uncharged: a CQ of 256 (5 pages) fits again");
	kept_mappings();
	ibv_close_device(ctx);
	return tap_done();
}

int main(int argc, char **argv)
{
	if (argc != 2 && (argc != 3 || strcmp(argv[2], "memlock"))) {
		fprintf(stderr, "usage: hostile DEVICE [memlock]\n");
		return 2;
	}
	ctx = open_dev(argv[1]);
	if (!ctx) {
		check(0, "open %s", argv[1]);
		return tap_done();
	}
	if (argc == 3)
		return memlock();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_BYTES);
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF_BYTES,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	check(cq && mr && !ibv_query_gid(ctx, 1, 0, &gid), "set up PD, CQ, MR");
	if (!cq || !mr)
		return tap_done();
	memset(buf, 0, BUF_BYTES);

	forged("RC READ with INLINE", IBV_QPT_RC, read_inline,
	       IBV_WC_LOC_QP_OP_ERR);
	forged("RDMA WRITE on UD", IBV_QPT_UD, write_ud, IBV_WC_LOC_QP_OP_ERR);
	forged("RDMA READ on UC", IBV_QPT_UC, read_uc, IBV_WC_LOC_QP_OP_ERR);
	forged("RC FETCH_ADD with INLINE", IBV_QPT_RC, atomic_inline,
	       IBV_WC_LOC_QP_OP_ERR);
	forged("REG_MR on a user QP", IBV_QPT_RC, reg_mr, IBV_WC_LOC_QP_OP_ERR);
	forged("opcode 0x1f", IBV_QPT_RC, garbage_op, IBV_WC_LOC_QP_OP_ERR);
	check(buf[0] == 0, "the MR the forged READ and FETCH_ADD named is untouched");
	concurrent_resize();

	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
