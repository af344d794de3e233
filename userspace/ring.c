// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The kernel's rings: mapping them, and what posting to a send ring
 * shares between ibv_post_send() (qp.c) and ibv_wr_*() (wr.c):
 * publishing the producer, the doorbell, the check of a window bind.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "provider.h"

/*
 * Map a ring, checking that the geometry the kernel gave fits the mapping
 * (every slot is at least VHCA_WQE_MIN_STRIDE bytes) and that the largest
 * entry this ring holds (@entry bytes) fits a slot: anything else would let
 * one WQE overrun the next.
 */
int vhca_mring_map(struct vhca_mring *r, int cmd_fd, uint64_t key,
		   uint32_t size, uint32_t log2_slots, uint32_t log2_stride,
		   size_t entry)
{
	void *p;

	if (log2_slots > VHCA_RING_MAX_LOG2 || log2_stride > 16 ||
	    (1U << log2_stride) < VHCA_WQE_MIN_STRIDE ||
	    entry > (1U << log2_stride) ||
	    (uint64_t)VHCA_RING_HDR_SIZE +
	    ((uint64_t)1 << (log2_slots + log2_stride)) > size)
		return EPROTO;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		 (off_t)key);
	if (p == MAP_FAILED)
		return errno;
	r->map = p;
	r->map_size = size;
	r->hdr = p;
	r->slots = (unsigned char *)p + VHCA_RING_HDR_SIZE;
	r->log2_slots = log2_slots;
	r->log2_stride = log2_stride;
	r->idx = 0;
	return 0;
}

void vhca_mring_unmap(struct vhca_mring *r)
{
	if (r->map)
		munmap(r->map, r->map_size);
	r->map = NULL;
}

/*
 * Post receive WRs to a ring in order; stop at the first that cannot be
 * posted and return it through *bad_wr with a positive errno (EINVAL: too
 * many SGEs; ENOMEM: the ring is full).  WRs before it are posted, none
 * after it.  Used for RQs and SRQs alike.
 */
int vhca_post_rwqes(struct vhca_mring *r, pthread_spinlock_t *lock,
		    uint32_t max_sge, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	uint32_t prod, cons;
	int i, ret = 0;

	pthread_spin_lock(lock);
	prod = r->idx;
	/*
	 * Acquire pairs with the engine's release store of the consumer: it
	 * has finished copying a WQE out before we see its slot as free.
	 */
	cons = __atomic_load_n(&r->hdr->consumer, __ATOMIC_ACQUIRE);
	for (; wr; wr = wr->next) {
		struct vhca_rwqe *wqe;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			ret = EINVAL;
			break;
		}
		if (!vhca_mring_room(r, prod, &cons)) {
			ret = ENOMEM;
			break;
		}
		wqe = vhca_mring_slot(r, prod);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = (uint32_t)wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			wqe->sge[i].addr = wr->sg_list[i].addr;
			wqe->sge[i].length = wr->sg_list[i].length;
			wqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		prod++;
	}
	if (prod != r->idx) {
		r->idx = prod;
		/* Release: the WQEs are written before the index that shows them. */
		__atomic_store_n(&r->hdr->producer, prod, __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/* Forget a ring's contents (the QP went to RESET): both sides restart at 0. */
void vhca_mring_reset(struct vhca_mring *r, pthread_spinlock_t *lock)
{
	pthread_spin_lock(lock);
	r->idx = 0;
	__atomic_store_n(&r->hdr->producer, 0, __ATOMIC_RELEASE);
	pthread_spin_unlock(lock);
}

/* The send doorbell; it fails only when the device is gone. */
int vhca_ring_doorbell(struct vhca_qp *qp)
{
	if (write(qp->vqp.qp.context->cmd_fd, &qp->db, sizeof(qp->db)) !=
	    (ssize_t)sizeof(qp->db))
		return errno;
	return 0;
}

/*
 * Storing the producer, then a full barrier, then reading ctrl: the other
 * half of the kernel's store of ctrl, barrier, read of the producer
 * (struct vhca_ring_hdr).  Either side sees the other's store.
 */
uint32_t vhca_ctrl_after_post(const struct vhca_mring *r)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&r->hdr->ctrl, __ATOMIC_RELAXED);
}

/*
 * Make the WQEs up to @prod visible to the engine; caller holds sq_lock.
 * Release: the WQEs are written before the index that shows them.
 */
void vhca_sq_publish(struct vhca_qp *qp, uint32_t prod)
{
	qp->sq.idx = prod;
	__atomic_store_n(&qp->sq.hdr->producer, prod, __ATOMIC_RELEASE);
}

/*
 * After WQEs were published: ring the doorbell, unless the engine owns the
 * ring and will see them itself.  Returns 0 or the doorbell's errno.
 */
int vhca_sq_kick(struct vhca_qp *qp)
{
	if (qp->ring_ctrl && (vhca_ctrl_after_post(&qp->sq) & VHCA_SQ_ACTIVE))
		return 0;
	return vhca_ring_doorbell(qp);
}

/*
 * Whether a bind may be posted on @qp: @mw is a window of @type in its PD,
 * @rkey one of @mw's keys, and the MR, if any, in the same PD.  Which MR
 * and range it may name, and whether the window is free, the kernel
 * decides when the WQE runs.
 */
bool vhca_bind_postable(const struct ibv_qp *qp, const struct ibv_mw *mw,
			enum ibv_mw_type type, uint32_t rkey,
			const struct ibv_mw_bind_info *b)
{
	return mw && mw->type == type && mw->pd == qp->pd &&
	       !((rkey ^ mw->rkey) >> 8) &&
	       (!b->length || (b->mr && b->mr->pd == mw->pd));
}
