/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Tag matching (IBV_SRQT_TM, vhca_tm.c): a tag-matching SRQ's tag table,
 * what the engine and the responder make of a SEND to one, and the
 * rendezvous the engine finishes for a sender on this host, or the
 * requester reads from one on the wire.
 */
#ifndef VHCA_TM_H
#define VHCA_TM_H

#include "vhca_engine.h"

int vhca_tm_create(struct vhca_srq *srq, struct ib_ucontext *uctx,
		   u32 max_tags);
void vhca_tm_destroy(struct vhca_srq *srq);

static inline bool vhca_tm_srq(const struct vhca_qp *qp)
{
	return qp->ibqp.srq && to_vsrq(qp->ibqp.srq)->tm;
}

int vhca_tm_take(struct vhca_qp *dst, u32 src_qpn, const u8 *hdr,
		 u32 avail, u32 len, struct vhca_rwqe *wqe,
		 struct vhca_tm_rx *rx);
void vhca_tm_lost(struct vhca_qp *dst, const struct vhca_tm_rx *rx);
void vhca_tm_rmsg(struct vhca_rmsg *m, const struct vhca_tm_rx *rx,
		  bool data);
u8 vhca_tm_status(const struct vhca_tm_rx *rx);
int vhca_tm_rndv_run(struct vhca_dev *vdev, struct vhca_qp *qp);
void vhca_tm_rndv_abort(struct vhca_qp *qp);

/* Rendezvous from the wire, which the requester reads (struct vhca_tm_jobs). */
int vhca_tm_jobs_init(struct vhca_qp *qp);
void vhca_tm_jobs_free(struct vhca_qp *qp);
bool vhca_tm_job_room(struct vhca_qp *qp, const struct vhca_rwqe *tag,
		      const struct vhca_tm_rx *rx);
void vhca_tm_job_add(struct vhca_qp *qp, const struct vhca_rwqe *tag,
		     const struct vhca_tm_rx *rx);
bool vhca_tm_job_next(struct vhca_qp *qp, bool *fin, u32 *idx);
void vhca_tm_job_went(struct vhca_qp *qp, bool fin);
struct vhca_swqe *vhca_tm_job_wqe(struct vhca_qp *qp, bool fin, u32 idx);
s64 vhca_tm_job_source(struct vhca_qp *qp, const struct vhca_swqe *w,
		       struct vhca_seg *seg, unsigned int *nseg, int access);
void vhca_tm_job_done(struct vhca_qp *qp, bool fin, u32 idx, u8 status);
void vhca_tm_jobs_reset(struct vhca_qp *qp);

#endif /* VHCA_TM_H */
