/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * vhca's engine: the scheduler of the send rings (vhca_engine.c), the
 * executors it hands WQEs to here (vhca_local.c, vhca_ud.c), and what
 * stops a QP (vhca_qpstate.c).  The wire's executors are in vhca_wire.h.
 */
#ifndef VHCA_ENGINE_H
#define VHCA_ENGINE_H

#include "vhca_wqe.h"

/* vhca_engine.c: the send rings' scheduler */
#define VHCA_RNR	0x100	/* not a status: try the WQE again later */
#define VHCA_PARTIAL	0x102	/* not a status: the WQE goes on next run */
#define VHCA_FAULT	0x103	/* not a status: fault ODP pages in, again */
/*
 * Not a status: an RC peer on this host is not there, or not receiving
 * yet; the WQE is tried again after the QP's timeout, retry_cnt times, as
 * the wire's requester retransmits into silence.
 */
#define VHCA_NOPEER	0x104

/* Where a run of the send ring stopped. */
enum vhca_sq_stop {
	VHCA_SQ_IDLE,	/* nothing it can do until something is posted */
	VHCA_SQ_MORE,	/* the budget ran out with WQEs left */
	VHCA_SQ_WAIT,	/* an RNR timer will run it again */
	VHCA_SQ_BLOCKED, /* RC waits for responses, UC for its packets to
			  * leave the netdev; each kicks it
			  */
};

void vhca_sq_work(struct work_struct *work);
void vhca_qp_doorbell(struct vhca_qp *qp);

/* vhca_qpstate.c: what stops a QP */
void vhca_qp_flush_rq(struct vhca_qp *qp);
u32 vhca_qp_flush_sq(struct vhca_qp *qp);
void vhca_qp_set_error(struct vhca_qp *qp);
void vhca_qp_set_sq_error(struct vhca_qp *qp);
void vhca_qp_wqe_failed(struct vhca_qp *qp);
void vhca_exec_recv_failed(struct vhca_qp *qp, struct vhca_qp *peer,
			   u8 status);
void vhca_exec_abort(struct vhca_qp *qp);
void vhca_req_reset(struct vhca_qp *qp);

/* vhca_local.c: the same-host path of RC and UC */
int vhca_exec(struct vhca_dev *vdev, struct vhca_qp *qp,
	      const struct vhca_swqe *w, struct vhca_seg *sseg,
	      struct vhca_seg *dseg);
int vhca_exec_atomic(struct vhca_dev *vdev, struct vhca_qp *qp,
		     const struct vhca_swqe *w, struct vhca_seg *seg);
int vhca_exec_atomic_write(struct vhca_dev *vdev, struct vhca_qp *qp,
			   const struct vhca_swqe *w);
int vhca_exec_flush(struct vhca_dev *vdev, struct vhca_qp *qp,
		    const struct vhca_swqe *w);

/* vhca_ud.c: UD and GSI datagrams, here and on the wire */
int vhca_ud_exec(struct vhca_dev *vdev, struct vhca_qp *qp,
		 const struct vhca_swqe *w, struct vhca_seg *sseg);

#endif /* VHCA_ENGINE_H */
