// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The scenario fuzzer: one of several processes, in several network
 * namespaces, that share a board (a file in /dev/shm) where each posts
 * the QPNs, GIDs and rkeys of its objects.  Each scenario is a random
 * sequence of verbs calls, legitimate and not, on this process's device:
 * create, modify (to random states, pointed at anyone's QP on the board),
 * destroy QPs; register (pinned or ODP), re-register and deregister MRs,
 * and take an ODP MR's pages away under it (MADV_DONTNEED); allocate, bind
 * and deallocate windows; create, resize and destroy CQs and SRQs;
 * attach and detach multicast groups; post SENDs, WRITEs, READs and
 * atomics at the board's QPs and keys; and WQEs written by hand into its
 * own send ring, garbage included, with a doorbell.  Every call must
 * return (an error is fine); the kernel must not complain (the guest's
 * dmesg is checked, and the script sets panic_on_warn).
 *
 * Usage: scenfuzz DEVICE BOARD SLOT SEED SCENARIOS
 * Prints "scenarios N" at the end and exits 0 if it ran them all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "provider.h"
#include "lib/testlib.h"

#define SLOTS		8	/* processes on the board */
#define PER_SLOT	16	/* QPs and keys each posts */
#define NQP		6
#define NMR		4
#define NMW		3
#define BUF		(64 * 1024)

struct board_slot {
	uint32_t qpn[PER_SLOT];
	uint32_t rkey[PER_SLOT];
	uint64_t addr[PER_SLOT];
	union ibv_gid gid;
};

static struct board_slot *board;
static unsigned int seed;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_srq *srq;
static struct ibv_qp *qp[NQP];
static struct ibv_mr *mr[NMR];
static struct ibv_mw *mw[NMW];
static char *buf;
static int slot, gid_count;

static unsigned int rnd(unsigned int n)
{
	return n ? (unsigned int)rand_r(&seed) % n : 0;
}

static uint32_t rnd32(void)
{
	return (uint32_t)rand_r(&seed) << 16 ^ (uint32_t)rand_r(&seed);
}

/* Someone's QPN, rkey and address from the board, or garbage. */
static void pick(uint32_t *qpn, uint32_t *rkey, uint64_t *addr,
		 union ibv_gid *gid)
{
	struct board_slot *s = &board[rnd(SLOTS)];
	int i = rnd(PER_SLOT);

	*qpn = __atomic_load_n(&s->qpn[i], __ATOMIC_RELAXED);
	*rkey = __atomic_load_n(&s->rkey[i], __ATOMIC_RELAXED);
	*addr = __atomic_load_n(&s->addr[i], __ATOMIC_RELAXED) + rnd(256) * 8;
	memcpy(gid, &s->gid, sizeof(*gid));
	switch (rnd(8)) {
	case 0:
		*qpn = rnd32() & 0xffffff;
		break;
	case 1:
		*rkey ^= 1U << rnd(32);
		break;
	case 2:
		*addr = rnd32();
		break;
	}
}

static void publish(void)
{
	struct board_slot *s = &board[slot];
	int i;

	for (i = 0; i < NQP; i++)
		__atomic_store_n(&s->qpn[i], qp[i] ? qp[i]->qp_num : 0,
				 __ATOMIC_RELAXED);
	for (i = 0; i < NMR; i++) {
		__atomic_store_n(&s->rkey[i], mr[i] ? mr[i]->rkey : 0,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&s->addr[i], (uintptr_t)buf + i * (BUF / NMR),
				 __ATOMIC_RELAXED);
	}
	for (i = 0; i < NMW; i++)
		__atomic_store_n(&s->rkey[NMR + i], mw[i] ? mw[i]->rkey : 0,
				 __ATOMIC_RELAXED);
}

static void qp_create(int i)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = types[rnd(3)],
		.srq = rnd(3) ? NULL : srq,
		.cap = { .max_send_wr = 1 + rnd(64), .max_recv_wr = 1 + rnd(64),
			 .max_send_sge = 1 + rnd(4), .max_recv_sge = 1 + rnd(4),
			 .max_inline_data = rnd(128) },
	};

	if (qp[i])
		ibv_destroy_qp(qp[i]);
	if (ia.qp_type == IBV_QPT_UD)
		ia.srq = NULL;
	qp[i] = ibv_create_qp(pd, &ia);
}

/* A random walk of the state machine, pointed at someone on the board. */
static void qp_modify(struct ibv_qp *q)
{
	static const enum ibv_qp_state states[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR,
	};
	union ibv_gid dgid;
	uint32_t dqpn, rkey;
	uint64_t addr;
	struct qp_path p = {};

	pick(&dqpn, &rkey, &addr, &dgid);
	if (rnd(2)) {
		/* the whole way up, the common case of a real user */
		p.dest = dqpn;
		p.gid = &dgid;
		p.sgid_index = rnd(gid_count);
		p.rd_atomic = rnd(4);
		p.timeout = 8 + rnd(4);
		ibv_modify_qp(q, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
			      IBV_QP_STATE);
		qp_rts_path(q, &p);
	} else {
		struct ibv_qp_attr a = {
			.qp_state = states[rnd(7)], .dest_qp_num = dqpn,
			.path_mtu = IBV_MTU_256 + rnd(5), .port_num = 1,
			.qkey = 0x11111111, .qp_access_flags = rnd(16),
			.timeout = rnd(32), .retry_cnt = rnd(8),
			.rnr_retry = rnd(8), .min_rnr_timer = rnd(32),
			.max_rd_atomic = rnd(4), .max_dest_rd_atomic = rnd(4),
			.ah_attr = { .is_global = 1, .port_num = 1,
				     .grh = { .dgid = dgid, .hop_limit = 64,
					      .sgid_index = rnd(gid_count) } },
		};

		ibv_modify_qp(q, &a, IBV_QP_STATE | (rnd(2) ? 0 : rnd32() &
			      (IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_PATH_MTU |
			       IBV_QP_ACCESS_FLAGS | IBV_QP_TIMEOUT |
			       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			       IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |
			       IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
			       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_QKEY)));
	}
}

/* A legitimate WR, at someone on the board. */
static void post_one(struct ibv_qp *q)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_SEND_WITH_INV, IBV_WR_LOCAL_INV,
	};
	struct ibv_mr *m = mr[rnd(NMR)];
	struct ibv_sge sge;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_ah *ah = NULL;
	union ibv_gid dgid;
	uint32_t dqpn, rkey;
	uint64_t addr;

	if (!m)
		return;
	pick(&dqpn, &rkey, &addr, &dgid);
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf + rnd(BUF / 2),
				.length = rnd(2) ? 8 : rnd(BUF / 2),
				.lkey = m->lkey };
	wr.opcode = ops[rnd(9)];
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = rnd(2) ? IBV_SEND_SIGNALED : 0;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	wr.invalidate_rkey = rkey;
	if (q->qp_type == IBV_QPT_UD) {
		struct ibv_ah_attr aa = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = dgid, .hop_limit = 64,
				 .sgid_index = rnd(gid_count) },
		};

		ah = ibv_create_ah(pd, &aa);
		if (!ah)
			return;
		wr.opcode = IBV_WR_SEND;
		sge.length %= 1024;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = dqpn;
		wr.wr.ud.remote_qkey = rnd(2) ? 0x11111111 : rnd32();
	} else if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		   wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		sge.length = 8;
		wr.wr.atomic.remote_addr = addr & ~7ULL;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = rnd32();
	}
	ibv_post_send(q, &wr, &bad);
	if (ah)
		ibv_destroy_ah(ah);
}

/* Hand-written WQEs: a random slot's bytes, published by a doorbell. */
static void forge(struct ibv_qp *ibq)
{
	struct vhca_qp *q = container_of(ibq, struct vhca_qp, vqp.qp);
	struct vhca_swqe *w;
	struct ibv_mr *m;
	size_t stride;
	uint32_t dqpn, rkey;
	uint64_t addr;
	union ibv_gid dgid;
	unsigned int i;

	if (!q->sq.hdr)
		return;
	stride = (size_t)1 << q->sq.log2_stride;
	w = vhca_mring_slot(&q->sq, q->sq.idx);
	for (i = 0; i < stride / 4; i++)
		((uint32_t *)w)[i] = rnd(4) ? rnd32() : 0;
	pick(&dqpn, &rkey, &addr, &dgid);
	w->opcode = rnd(2) ? rnd(16) : rnd32();
	w->num_sge = rnd(2) ? 1 : rnd32();
	w->flags = rnd(256);
	w->rdma.rkey = rkey;
	w->rdma.remote_addr = addr;
	w->sge[0].addr = (uintptr_t)buf + rnd(BUF);
	w->sge[0].length = rnd(BUF);
	m = mr[rnd(NMR)];
	w->sge[0].lkey = m ? m->lkey : rnd32();
	q->sq.idx++;
	if (!rnd(4))	/* or a producer from anywhere */
		q->sq.idx += rnd32();
	__atomic_store_n(&q->sq.hdr->producer, q->sq.idx, __ATOMIC_RELEASE);
	if (write(ibq->context->cmd_fd, &q->db, sizeof(q->db)) < 0)
		return;	/* the kernel refused: fine */
}

static void mr_op(int i)
{
	int access = IBV_ACCESS_LOCAL_WRITE |
		     (rnd(2) ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		      IBV_ACCESS_REMOTE_ATOMIC : 0) |
		     (rnd(3) ? IBV_ACCESS_MW_BIND : IBV_ACCESS_ON_DEMAND);
	char *p = buf + i * (BUF / NMR);

	switch (rnd(4)) {
	case 3:
		/* an ODP MR's pages go: the engine must fault them in again */
		madvise(p, BUF / NMR, MADV_DONTNEED);
		break;
	case 0:
		if (mr[i] && !ibv_dereg_mr(mr[i]))
			mr[i] = NULL;
		break;
	case 1:
		if (mr[i])
			ibv_rereg_mr(mr[i], IBV_REREG_MR_CHANGE_ACCESS, pd, NULL,
				     0, access);
		break;
	default:
		if (!mr[i])
			mr[i] = ibv_reg_mr(pd, p, BUF / NMR, access);
	}
}

static void mw_op(int i)
{
	struct ibv_qp *q = qp[rnd(NQP)];
	struct ibv_mr *m = mr[rnd(NMR)];
	struct ibv_mw_bind b = {
		.wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = m, .addr = m ? (uintptr_t)m->addr : 0,
			       .length = rnd(2) ? 4096 : rnd32() % BUF,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};

	if (!mw[i]) {
		mw[i] = ibv_alloc_mw(pd, rnd(2) ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
		return;
	}
	if (rnd(3) && q && m && mw[i]->type == IBV_MW_TYPE_1) {
		ibv_bind_mw(q, mw[i], &b);
		return;
	}
	if (!ibv_dealloc_mw(mw[i]))
		mw[i] = NULL;
}

static void misc_op(void)
{
	union ibv_gid mgid = { .raw = { 0xff, 0x0e, [15] = rnd(8) } };
	struct ibv_qp *q = qp[rnd(NQP)];
	struct ibv_wc wc[16];

	switch (rnd(5)) {
	case 0:
		ibv_resize_cq(cq, 16 + rnd(1024));
		break;
	case 1:
		ibv_modify_srq(srq, &(struct ibv_srq_attr){ .max_wr = 1 + rnd(512) },
			       IBV_SRQ_MAX_WR);
		break;
	case 2:
		if (q && rnd(2))
			ibv_attach_mcast(q, &mgid, 0);
		else if (q)
			ibv_detach_mcast(q, &mgid, 0);
		break;
	case 3:
		if (q && !q->srq) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)buf, .length = 256,
				.lkey = mr[0] ? mr[0]->lkey : 0,
			};
			struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 },
				*bad;

			ibv_post_recv(q, &rw, &bad);
		}
		break;
	default:
		while (ibv_poll_cq(cq, 16, wc) > 0)
			;
	}
}

static void scenario(void)
{
	int steps = 10 + rnd(30), i;

	for (i = 0; i < steps; i++) {
		int k = rnd(NQP);

		switch (rnd(10)) {
		case 0:
			qp_create(k);
			break;
		case 1:
		case 2:
			if (qp[k])
				qp_modify(qp[k]);
			break;
		case 3:
		case 4:
			if (qp[k])
				post_one(qp[k]);
			break;
		case 5:
			if (qp[k])
				forge(qp[k]);
			break;
		case 6:
			mr_op(rnd(NMR));
			break;
		case 7:
			mw_op(rnd(NMW));
			break;
		default:
			misc_op();
		}
		publish();
	}
}

int main(int argc, char **argv)
{
	struct ibv_port_attr pa;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 2 } };
	int fd, n, i, ran;

	if (argc != 6) {
		fprintf(stderr, "usage: scenfuzz DEVICE BOARD SLOT SEED SCENARIOS\n");
		return 2;
	}
	slot = atoi(argv[3]) % SLOTS;
	seed = strtoul(argv[4], NULL, 0);
	n = atoi(argv[5]);
	fd = open(argv[2], O_RDWR | O_CREAT, 0666);
	if (fd < 0 || ftruncate(fd, SLOTS * sizeof(*board)))
		return 1;
	board = mmap(NULL, SLOTS * sizeof(*board), PROT_READ | PROT_WRITE,
		     MAP_SHARED, fd, 0);
	ctx = open_dev(argv[1]);
	if (board == MAP_FAILED || !ctx || ibv_query_port(ctx, 1, &pa))
		return 1;
	gid_count = pa.gid_tbl_len > 8 ? 8 : pa.gid_tbl_len;
	ibv_query_gid(ctx, 1, 0, &board[slot].gid);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	srq = pd ? ibv_create_srq(pd, &sa) : NULL;
	buf = aligned_alloc(4096, BUF);
	if (!pd || !cq || !srq || !buf)
		return 1;
	memset(buf, 0, BUF);
	for (ran = 0; ran < n; ran++)
		scenario();
	/* tear down what is left, in an order no user is told to keep */
	for (i = 0; i < NQP; i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
	for (i = 0; i < NMW; i++)
		if (mw[i])
			ibv_dealloc_mw(mw[i]);
	for (i = 0; i < NMR; i++)
		if (mr[i])
			ibv_dereg_mr(mr[i]);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("scenarios %d\n", ran);
	return 0;
}
