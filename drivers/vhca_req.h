/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * An RC QP's requester on the wire, as its three parts share it: the
 * requester (vhca_req.c) sends the WQEs, the completer (vhca_comp.c)
 * takes the responses and retires them, and a reset (vhca_qpstate.c)
 * forgets them.  The flight list, req.fl, holds what each WQE on the
 * wire needs to be completed or sent again.
 */
#ifndef VHCA_REQ_H
#define VHCA_REQ_H

#include "vhca.h"

/*
 * WQEs an RC requester has on the wire at once: a power of two, and more
 * than the 128 that perftest keeps posted, so small messages are bounded
 * by VHCA_REQ_MAX_PKTS, not by this.
 */
#define VHCA_REQ_WINDOW		256

#define VHCA_REQ_FL_MASK		(VHCA_REQ_WINDOW - 1)
static_assert((VHCA_REQ_WINDOW & VHCA_REQ_FL_MASK) == 0);
/*
 * Packets on the wire at most for one QP, unless one WQE has more.  After
 * a loss go-back-N sends them all again, so this is what a loss can cost;
 * RoCE runs on lossless Ethernet, where the bound is what keeps the path
 * full: the smallest bound at which WRITEs moved as much as with larger
 * ones, below where the sender's own qdisc began to drop
 * (bench/RESULTS.md, "Bounds on packets in flight").
 */
#define VHCA_REQ_MAX_PKTS	512
/*
 * The same for all of a device's RC QPs together, split evenly among
 * those with requests on the wire (vhca_req_max_pkts()): the packets wait
 * in one qdisc, whichever QP sent them, and with VHCA_REQ_MAX_PKTS each,
 * four or eight QPs overflowed it.  The largest bound with which several
 * QPs lost nothing.  A queue drains so many packets or so many bytes a
 * second, whichever runs out first, so the bound is in bytes too, for
 * jumbo frames (bench/RESULTS.md, "Bounds on packets in flight").
 */
#define VHCA_REQ_DEV_PKTS	1024
#define VHCA_REQ_DEV_BYTES	(2 * 1024 * 1024)
/* A QP's share never goes below this, however many QPs are busy. */
#define VHCA_REQ_MIN_PKTS	16
/*
 * Congestion (ECN): a CNP from the responder, or a READ response that a
 * queue on the way marked, halves the QP's window, down to
 * VHCA_REQ_MIN_PKTS, at most once per VHCA_REQ_CUT_GAP: a queue's AQM
 * (CoDel's interval is 100 ms) marks again while the packets sent before
 * the cut drain.  For each window's worth of packets acknowledged after
 * that, the window climbs half the way back to what it was before the
 * cut, then on by VHCA_REQ_CWND_AI packets a window, as DCQCN's fast
 * recovery and additive increase do with a rate.
 */
#define VHCA_REQ_CUT_GAP		(HZ / 10)
#define VHCA_REQ_CWND_AI		8
/*
 * A request packet asks for an ACK at least this often.  The last packet
 * sent in a run of the send ring asks too: the responder ACKs only what
 * is asked for (the IBA lets it coalesce the rest), so a stream of small
 * messages is not answered packet by packet, and nothing waits for an
 * ACK that was not asked for.
 */
#define VHCA_REQ_ACKREQ_EVERY	32
/* Responses one QP may have waiting for its work. */
#define VHCA_REQ_RXQ_MAX		1024

/*
 * Where a WQE the requester sends comes from: the send ring, or a
 * rendezvous it reads for the QP's tag-matching SRQ (vhca_tm_job_wqe()).
 */
enum vhca_req_src {
	VHCA_REQ_RING,
	VHCA_REQ_TM_READ,
	VHCA_REQ_TM_FIN,
};

/* What an RC requester remembers of a WQE on the wire. */
struct vhca_req_wqe {
	u64 wr_id;
	u32 slot;	/* its SQ index, or its rendezvous's index */
	u32 psn;	/* of its first packet */
	u32 npkts;	/* PSNs it takes: a READ's are its responses' */
	u32 got;	/* response packets placed so far */
	u32 asked;	/* @got when the rest of a READ was asked for again */
	u32 len;
	u8 opcode;
	u8 flags;
	u8 status;	/* what it completes with once answered */
	u8 src;		/* enum vhca_req_src */
};

/* vhca_req.c */
void vhca_req_ask_read(struct vhca_qp *qp, const struct vhca_req_wqe *e,
		       const struct vhca_swqe *w);
struct vhca_swqe *vhca_req_fetch(struct vhca_qp *qp, u8 src, u32 slot);
s64 vhca_req_source(struct vhca_qp *qp, u8 src, const struct vhca_swqe *w,
		    struct vhca_seg *seg, unsigned int *nseg, int access);

/* vhca_qpstate.c */
void vhca_req_cwnd_reset(struct vhca_req *q);
void vhca_req_set_busy(struct vhca_qp *qp, bool busy);

#endif /* VHCA_REQ_H */
