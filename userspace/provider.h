/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* libvhca's objects, shared between its files. */
#ifndef VHCA_PROVIDER_H
#define VHCA_PROVIDER_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "verbs-private.h"
#include "vhca-abi.h"

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/*
 * The kernel's IB_UVERBS_DEVICE_ATOMIC_WRITE capability: rdma-core 44's
 * copy of ib_user_verbs.h has no name for it.
 */
#define VHCA_UVERBS_DEVICE_ATOMIC_WRITE	(1ULL << 40)
/*
 * IB_UVERBS_DEVICE_FLUSH_GLOBAL, which neither rdma-core 44 nor 56 names
 * (applications test the bit in device_cap_flags_ex).
 */
#define VHCA_UVERBS_DEVICE_FLUSH_GLOBAL	(1ULL << 38)

struct vhca_context {
	struct verbs_context vctx;
	uint32_t max_sge;
	bool ring_ctrl;	/* the kernel honours ctrl (VHCA_CAP_RING_CTRL) */
	bool cqe_ts;	/* it time-stamps CQEs (VHCA_CAP_CQE_TS) */
	bool atomic_write;	/* the device has ATOMIC WRITE (its kernel's verbs do) */
	bool flush;	/* it has FLUSH to global visibility (likewise) */
};

static inline struct vhca_context *to_vctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct vhca_context, vctx.context);
}

/*
 * A ring mapped from the kernel.  idx is this side's own index: the only
 * copy it trusts.  The other side's index is read from the header.
 */
struct vhca_mring {
	struct vhca_ring_hdr *hdr;
	unsigned char *slots;
	void *map;
	size_t map_size;
	uint32_t log2_slots;
	uint32_t log2_stride;
	uint32_t idx;
};

/*
 * A protection domain, or a parent domain (ibv_alloc_parent_domain(3)):
 * one that wraps a protection domain (@parent_of) under the same kernel
 * handle, so every command on it names that PD.  Its allocators are
 * never called: vhca's rings are the kernel's memory, mapped, and the
 * provider allocates no queue memory of its own.  A PD that parent
 * domains wrap (@parents) is not freed before them.
 */
struct vhca_pd {
	struct ibv_pd ibpd;
	uint32_t pdn;
	struct vhca_pd *parent_of;
	unsigned int parents;
};

/* Whether @ibpd, of @context, is a parent domain (for a CQ's PD). */
static inline bool vhca_is_parent_domain(struct ibv_context *context,
					 struct ibv_pd *ibpd)
{
	return ibpd && ibpd->context == context &&
	       container_of(ibpd, struct vhca_pd, ibpd)->parent_of;
}

/* The most attributes a call of vhca_method() carries. */
#define VHCA_METHOD_MAX_ATTRS	4

/*
 * One of vhca's own uverbs methods (vhca-abi.h): a plain RDMA_VERBS_IOCTL
 * on @context's command file, of @n attributes.  Returns 0 or an errno.
 */
static inline int vhca_method(struct ibv_context *context, uint16_t object,
			      uint16_t method,
			      const struct ib_uverbs_attr *attr, uint16_t n)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[VHCA_METHOD_MAX_ATTRS];
	} req = {
		.hdr = {
			/* the kernel wants it exact */
			.length = sizeof(req.hdr) + n * sizeof(*attr),
			.object_id = object,
			.method_id = method,
			.num_attrs = n,
		},
	};

	if (n > VHCA_METHOD_MAX_ATTRS)
		return EINVAL;
	memcpy(req.attr, attr, n * sizeof(*attr));
	return ioctl(context->cmd_fd, RDMA_VERBS_IOCTL, &req) ? errno : 0;
}

struct vhca_srq;

struct vhca_cq {
	union {			/* libibverbs may treat it as a verbs_cq */
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
	pthread_spinlock_t lock;
	struct vhca_mring ring;	/* we consume */
	bool ring_ctrl;		/* arm through ring.hdr->ctrl */
	/* ibv_start_poll() .. ibv_end_poll(), under lock (cq.c) */
	const struct vhca_cqe *cur;	/* the CQE the read_* calls read */
	uint32_t poll_prod;		/* the producer index start_poll saw */
	/* the tag-matching SRQs that complete here, under lock (srq.c) */
	struct vhca_srq *tm_srqs;
	struct vhca_cqe tm_cqe;	/* a list operation's, as start_poll took it */
	/*
	 * how it was armed since a list operation's completion last asked
	 * the kernel for the event: VHCA_TM_ARM_* (tm.c, vhca_tm_event())
	 */
	uint32_t tm_arm;
};

#define VHCA_TM_ARM_SOLICITED	1U
#define VHCA_TM_ARM_NEXT	2U

/*
 * The completion of a tag-matching SRQ's list operation, which the
 * provider makes itself when it applies the operation (srq.c).
 */
struct vhca_tm_wc {
	uint64_t wr_id;
	uint8_t opcode;		/* IBV_WC_TM_ADD, _DEL or _SYNC */
	uint8_t status;		/* IBV_WC_SUCCESS or IBV_WC_TM_ERR */
	uint16_t flags;		/* VHCA_CQE_F_TM_SYNC_REQ */
};

struct vhca_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock;
	struct vhca_mring ring;	/* we produce */
	uint32_t max_sge;
	/*
	 * Tag matching (IBV_SRQT_TM): the tag table (vhca-abi.h), whose
	 * tags we add and remove under lock and the engine takes; a slot's
	 * generation, the high half of the handles of its tags; the posting
	 * number of the next tag; and the completions of list operations
	 * not yet polled, a ring of max_ops that we produce under lock and
	 * the CQ's poll consumes under its own.
	 */
	struct vhca_mring tm;
	uint32_t tm_ntags;
	uint16_t *tm_gen;
	uint32_t tm_seq;
	struct vhca_tm_wc *ops;
	uint32_t max_ops;
	uint32_t ops_prod;
	uint32_t ops_cons;
	struct vhca_cq *cq;
	struct vhca_srq *cq_next;	/* on cq->tm_srqs */
};

/* An address handle is its address vector, copied into each UD WQE. */
struct vhca_ah {
	struct ibv_ah ibah;
	struct vhca_av av;
};

/* The send doorbell: POST_SEND with no WR, built once per QP. */
struct vhca_doorbell {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_send cmd;	/* ends in send_wr[] */
};

struct vhca_qp {
	struct verbs_qp vqp;
	struct vhca_doorbell db;
	struct ib_uverbs_post_send_resp db_resp;
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	/*
	 * An XRC_RECV QP, created or opened, is the kernel's alone: it has
	 * neither ring, and nothing may touch them.
	 */
	struct vhca_mring sq;	/* we produce */
	struct vhca_mring rq;	/* we produce; unmapped with an SRQ, on XRC */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	bool ring_ctrl;		/* the kernel says when a doorbell is due */
	/* ibv_wr_*: the batch between ibv_wr_start() and its end (wr.c) */
	struct vhca_swqe *wr_cur;	/* the WQE the setters fill, or NULL */
	uint32_t wr_prod;		/* the next free slot */
	uint32_t wr_cons;		/* the consumer index last read */
	int wr_err;			/* the batch's first error */
	bool wr_addr;	/* wr_cur has its UD address or XRC SRQ number */
};

/* vhca_swqe.xrc_srqn: XRCETH carries 24 bits */
#define VHCA_XRC_SRQN_MAX	0xffffffU

/*
 * Whether a WQE of @op on a @type QP must say where it goes: a UD one its
 * address, an XRC_SEND one the remote XRC SRQ unless it stays local
 * (LOCAL_INV, BIND_MW: vhca-abi.h).
 */
static inline bool vhca_wqe_needs_dest(enum ibv_qp_type type,
				       enum ibv_wr_opcode op)
{
	if (type == IBV_QPT_UD)
		return true;
	return type == IBV_QPT_XRC_SEND && op != IBV_WR_LOCAL_INV &&
	       op != IBV_WR_BIND_MW;
}

/* A QP's send WQEs may be posted in its current state (ibv_post_send(3)). */
static inline bool vhca_sq_postable(struct ibv_qp *qp)
{
	enum ibv_qp_state state = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);

	return state != IBV_QPS_RESET && state != IBV_QPS_INIT &&
	       state != IBV_QPS_RTR;
}

/* IBV_SEND_* flags as a send WQE's VHCA_SWQE_F_* (inline aside). */
static inline uint8_t vhca_swqe_flags(unsigned int send_flags)
{
	return ((send_flags & IBV_SEND_SIGNALED) ? VHCA_SWQE_F_SIGNALED : 0) |
	       ((send_flags & IBV_SEND_SOLICITED) ? VHCA_SWQE_F_SOLICITED : 0) |
	       ((send_flags & IBV_SEND_FENCE) ? VHCA_SWQE_F_FENCE : 0);
}

/*
 * Whether @op sends data out of its SGEs, which may then go inline
 * instead: SENDs and WRITEs.  A READ or atomic writes its SGEs and a
 * LOCAL_INV has none.
 */
static inline bool vhca_op_sends_data(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

/* A BIND_MW WQE (vhca-abi.h): the window's new @rkey and what it covers. */
static inline void vhca_swqe_bind(struct vhca_swqe *w, uint32_t rkey,
				  const struct ibv_mw_bind_info *b)
{
	w->ex = rkey;
	w->bind.addr = b->addr;
	w->bind.length = b->length;
	w->bind.mr_lkey = b->length ? b->mr->lkey : 0;
	w->bind.access = b->mw_access_flags;	/* IBV_ACCESS_* == IB_ACCESS_* */
	w->num_sge = 0;
	w->inline_len = 0;
}

uint64_t vhca_wr_ops_of(struct ibv_context *context, enum ibv_qp_type type);
uint64_t vhca_wr_op_bit(unsigned int opcode);
void vhca_wr_init(struct vhca_qp *qp);

/* ring.c */
int vhca_mring_map(struct vhca_mring *r, int cmd_fd, uint64_t key,
		   uint32_t size, uint32_t log2_slots, uint32_t log2_stride,
		   size_t entry);
int vhca_ring_doorbell(struct vhca_qp *qp);
uint32_t vhca_ctrl_after_post(const struct vhca_mring *r);
void vhca_sq_publish(struct vhca_qp *qp, uint32_t prod);
int vhca_sq_kick(struct vhca_qp *qp);
bool vhca_bind_postable(const struct ibv_qp *qp, const struct ibv_mw *mw,
			enum ibv_mw_type type, uint32_t rkey,
			const struct ibv_mw_bind_info *b);

/* Bytes of a receive WQE with @max_sge SGEs. */
static inline size_t vhca_rwqe_bytes(uint32_t max_sge)
{
	return sizeof(struct vhca_rwqe) + (size_t)max_sge * sizeof(struct vhca_sge);
}
void vhca_mring_unmap(struct vhca_mring *r);
int vhca_post_rwqes(struct vhca_mring *r, pthread_spinlock_t *lock,
		    uint32_t max_sge, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
void vhca_mring_reset(struct vhca_mring *r, pthread_spinlock_t *lock);

static inline void *vhca_mring_slot(const struct vhca_mring *r, uint32_t idx)
{
	return r->slots + ((size_t)vhca_ring_slot(idx, r->log2_slots) <<
			   r->log2_stride);
}

/*
 * Room for one more WQE at @prod?  *cons is the consumer index last seen;
 * only when the ring looks full is it read again.  Acquire pairs with the
 * engine's release of the consumer: it is done with a slot we reuse.
 */
static inline bool vhca_mring_room(const struct vhca_mring *r, uint32_t prod,
				   uint32_t *cons)
{
	if (!vhca_ring_full(prod, *cons, r->log2_slots))
		return true;
	*cons = __atomic_load_n(&r->hdr->consumer, __ATOMIC_ACQUIRE);
	return !vhca_ring_full(prod, *cons, r->log2_slots);
}

struct ibv_cq_ex *vhca_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr);
int vhca_query_rt_values(struct ibv_context *context,
			 struct ibv_values_ex *values);
struct ibv_cq *vhca_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
int vhca_destroy_cq(struct ibv_cq *cq);
int vhca_resize_cq(struct ibv_cq *ibcq, int cqe);
int vhca_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
void vhca_cq_clean(struct ibv_cq *cq, uint32_t qpn, bool recvs);
int vhca_req_notify_cq(struct ibv_cq *cq, int solicited_only);

struct ibv_srq *vhca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
struct ibv_srq *vhca_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr);
int vhca_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
int vhca_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int vhca_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int vhca_destroy_srq(struct ibv_srq *srq);
int vhca_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

int vhca_tm_attach(struct vhca_srq *srq, int cmd_fd,
		   const struct vhca_create_srq_resp *drv, struct ibv_cq *cq,
		   uint32_t max_ops);
void vhca_tm_detach(struct vhca_srq *srq);
int vhca_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op,
		      struct ibv_ops_wr **bad_op);
bool vhca_tm_take_wc(struct vhca_cq *cq, struct vhca_cqe *cqe);

struct ibv_qp *vhca_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *vhca_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *vhca_open_qp(struct ibv_context *context,
			    struct ibv_qp_open_attr *attr);
int vhca_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int vhca_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr *init);
int vhca_destroy_qp(struct ibv_qp *qp);
int vhca_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int vhca_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);
int vhca_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);

struct ibv_ah *vhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int vhca_destroy_ah(struct ibv_ah *ah);

#endif /* VHCA_PROVIDER_H */
