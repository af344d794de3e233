/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * vhca: a RoCEv2 HCA whose queues are hardware-style rings shared with
 * userspace.  Driver-wide declarations.
 */
#ifndef VHCA_H
#define VHCA_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca-abi.h"
#include "vhca_compat.h"
#include "vhca_roce.h"

#define VHCA_PORT		1
#define VHCA_GID_TBL_LEN	128
#define VHCA_MAX_PD		65536
#define VHCA_MAX_CQ		65536
#define VHCA_MAX_SRQ		65536
#define VHCA_MAX_MR		((1 << 24) - 1)	/* the index part of a key */
#define VHCA_MAX_QP		65536
#define VHCA_FIRST_QPN		2	/* QP0 and QP1 are special */
/*
 * What user processes cannot take of the device-wide tables, so that the
 * kernel's ULPs (NVMe-oF, iSER, SRP, NFS) still connect once every
 * process together took the rest: QPNs for 1024 queues, keys for as many
 * MRs as their pools hold, a few multicast groups.
 */
#define VHCA_KERNEL_QPS		1024
#define VHCA_KERNEL_KEYS	65536
#define VHCA_KERNEL_MCAST	64
/* as rxe: perftest sets a peer's max_rd_atomic to its own */
#define VHCA_MAX_RD_ATOM	128
/* kernel AHs, each a copy of its address vector; user AHs are the provider's */
#define VHCA_MAX_AH		65536
/* multicast groups a device's QPs attach to: a list walked per datagram */
#define VHCA_MAX_MCAST_GRP	1024
/* QPs attached to one group: slots scanned whole per datagram */
#define VHCA_MAX_MCAST_QP	32
/*
 * Local CA ACK delay, 4.096 us * 2^15 = 134 ms: what a responder may take
 * to answer.  On an emulated host a stalled guest answered later than
 * 67 ms (2^14), which a peer's timeout sized from 14 would call lost.
 */
#define VHCA_ACK_DELAY		15
#define VHCA_MAX_QP_WR		32768	/* a power of two */
/*
 * CQEs of a CQ, a power of two: a ring's most (VHCA_RING_MAX_LOG2).
 * libfabric's rxm asks its verbs CQ for (rx + tx size) * universe size,
 * 196608 by default; each CQE is 64 bytes of ring, which counts against
 * the process's RLIMIT_MEMLOCK.
 */
#define VHCA_MAX_CQE		BIT(VHCA_RING_MAX_LOG2)
#define VHCA_MAX_FAST_PAGES	4096	/* page list of a fast-register MR */
#define VHCA_VENDOR_ID		0xffffff	/* no OUI: a software device */

/* Wire counters, as `rdma statistic` shows them (vhca_counters.c). */
enum vhca_counter {
	VHCA_CNT_SENT_PKTS,
	VHCA_CNT_RCVD_PKTS,
	VHCA_CNT_SEND_NO_ROUTE,
	VHCA_CNT_SEND_DROPPED,
	VHCA_CNT_RCVD_BAD_ICRC,
	VHCA_CNT_RCVD_BAD_HDR,
	VHCA_CNT_RCVD_UNSUPPORTED,
	VHCA_CNT_RCVD_NO_QP,
	VHCA_CNT_RCVD_NO_WQE,
	VHCA_CNT_RCVD_UNEXPECTED,
	VHCA_CNT_RCVD_QUEUE_FULL,
	VHCA_CNT_RCVD_OFF_PATH,
	/* RC reliability: the requester's... */
	VHCA_CNT_RCVD_SEQ_NAKS,
	VHCA_CNT_RCVD_RNR_NAKS,
	VHCA_CNT_RETRANS_TIMEOUTS,
	VHCA_CNT_RETRANS_PKTS,
	VHCA_CNT_READ_REASKS,
	/* ...and the responder's */
	VHCA_CNT_SENT_SEQ_NAKS,
	VHCA_CNT_RCVD_DUPLICATES,
	VHCA_CNT_ODP_RNR,	/* RNR NAKs for ODP pages to fault in */
	VHCA_CNT_ODP_HELD,	/* UC/UD packets held for ODP pages */
	/* congestion: CNPs for CE-marked packets, and what they cut */
	VHCA_CNT_SENT_CNPS,
	VHCA_CNT_RCVD_CNPS,
	VHCA_CNT_WINDOW_CUTS,
	VHCA_CNT_MAX
};

struct vhca_netsock;
struct vhca_odp_tree;

/*
 * The counters are per CPU: the wire path bumps one or more for every
 * packet, on whichever CPU receives or sends it, and one device-wide
 * atomic would move its cache line between the CPUs for each of them.
 * this_cpu_add() is safe from any context.  A read sums the CPUs' copies;
 * on a 32-bit machine it may catch one of them half-written, which a
 * statistic can afford.
 */
struct vhca_counters {
	u64 c[VHCA_CNT_MAX];
};

/* A counter set QPs are bound to: its rdma_counter's id keys it. */
struct vhca_qp_counter {
	struct vhca_counters __percpu *pc;
};

struct vhca_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct vhca_netsock *netsock;	/* its namespace's UDP sockets */
	bool steered;			/* vhca_recv_steer() took ndev; rtnl */
	struct list_head steered_vlans;	/* struct vhca_steered_vlan; rtnl */
	struct list_head list;		/* on vhca_dev_list */
	/* ib_register_device() zeroes ibdev.attrs and refills it from here */
	struct ib_device_attr attrs;

	struct mutex port_lock;		/* port_state, active_mtu */
	enum ib_port_state port_state;
	enum ib_mtu active_mtu;

	struct ida pd_ida;
	struct ida cq_ida;
	struct ida srq_ida;
	struct xarray mr_xa;	/* key >> 8 -> struct vhca_mr */
	struct xarray qp_xa;	/* qpn -> struct vhca_qp */
	struct xarray xsrq_xa;	/* XRC SRQ number -> struct vhca_srq */
	u32 mr_next;		/* xa_alloc_cyclic()'s cursor in mr_xa */
	u32 qp_next;		/* and in qp_xa */
	atomic_t nr_user_keys;	/* keys of user MRs and windows */
	atomic_t nr_user_qps;	/* QPs of user processes */
	atomic_t nr_held;	/* packets its QPs hold (vhca_held.c) */
	atomic64_t qp_uid;	/* the last vhca_qp.uid handed out */
	atomic_t nr_ah;		/* kernel AHs, at most VHCA_MAX_AH */
	struct xarray counter_xa;	/* rdma_counter id -> vhca_qp_counter */
	atomic_t rc_busy;	/* RC QPs with requests on the wire */
	struct mutex mcast_lock;	/* changes to mcasts, after rtnl */
	struct list_head mcasts;	/* struct vhca_mcast (RCU) */
	unsigned int nr_mcast;		/* groups on mcasts */
	struct vhca_counters __percpu *cnt;
};

static inline void vhca_count_n(struct vhca_dev *vdev, enum vhca_counter c,
				u64 n)
{
	this_cpu_add(vdev->cnt->c[c], n);
}

static inline void vhca_count(struct vhca_dev *vdev, enum vhca_counter c)
{
	vhca_count_n(vdev, c, 1);
}

/* Queue geometry; the kernel's copy is the only one it trusts. */
struct vhca_qgeom {
	u32 log2_slots;
	u32 log2_stride;
	u32 max_wr;	/* what the verbs report back: >= what was asked */
	u32 max_sge;
};

struct vhca_ucontext {
	struct ib_ucontext ibuc;
};

struct vhca_pd {
	struct ib_pd ibpd;
	u32 pdn;
	atomic_t nr_odp_mrs;	/* its ODP MRs: the wire's requester prefaults */
};

/**
 * struct vhca_umap - a ring's memory, mapped into one user context
 * @rdma: the core's mmap entry; its offset is the key userspace maps
 * @buf: the pages, mapped for the kernel; freed with the entry
 *	(vhca_mmap_free), so that a racing mmap() can never map memory
 *	already given back
 * @pages: the pages, charged to the memory cgroup of the process that
 *	created the ring
 * @npages: how many
 * @mm: the process's mm, whose pinned_vm counts them against its
 *	RLIMIT_MEMLOCK, as the memory of an MR counts, for as long as
 *	they are mapped
 * @linger: on the list of rings whose entry is gone while a process
 *	still maps them (vhca_ring.c)
 */
struct vhca_umap {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	struct page **pages;
	unsigned int npages;
	struct mm_struct *mm;
	struct list_head linger;
};

/**
 * struct vhca_uring - a ring, shared with userspace or the kernel's own
 * @g: the geometry, the kernel's own copy: never read back from the ring
 * @hdr: the header; NULL for a ring that does not exist (the RQ of a QP on
 *	an SRQ).  Userspace writes a shared ring's header too.
 * @bytes: mapping size
 * @umap: the memory and its mmap entry; NULL for a kernel object's ring,
 *	which is vmalloc memory only the kernel sees
 */
struct vhca_uring {
	struct vhca_qgeom g;
	struct vhca_ring_hdr *hdr;
	size_t bytes;
	struct vhca_umap *umap;
};

/**
 * struct vhca_cq - a completion queue
 * @ibcq: the core's CQ
 * @ring: the CQE ring; the kernel produces, userspace consumes
 * @cqn: its number
 * @lock: serialises producers
 * @prod: the kernel's producer index, the only copy it trusts
 * @overflowed: a CQE did not fit; the CQ is in error and takes no more
 * @timestamps: created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION: each
 *	CQE carries when it was written (vhca_cqe.ts, ts_real)
 * @notify: armed for the next completion (IB_CQ_NEXT_COMP), the next
 *	solicited or failed one (IB_CQ_SOLICITED), or not (0)
 * @arm_seen: a user CQ's ctrl word as last read: a change is an arm
 * @poll_lock: serialises a kernel CQ's pollers (its consumer index)
 * @resize_lock: serialises resizes, which the core lets run side by side
 *	(uverbs looks a CQ up shared for RESIZE_CQ)
 */
struct vhca_cq {
	struct ib_cq ibcq;
	struct vhca_uring ring;
	u32 cqn;
	spinlock_t lock;	/* prod, overflowed, notify */
	u32 prod;
	bool overflowed;
	bool timestamps;
	u8 notify;
	u32 arm_seen;
	spinlock_t poll_lock;	/* a kernel CQ's consumer index */
	struct mutex resize_lock;	/* the ring's replacement */
};

/* An XRC domain: the core keeps its TGT QPs; an XRC SRQ names it. */
struct vhca_xrcd {
	struct ib_xrcd ibxrcd;
};

/*
 * @uid: unique on the device for its lifetime: a receive taken from an
 * XRC SRQ remembers it with the number, which a new SRQ may reuse.
 */
/**
 * struct vhca_tm - a tag-matching SRQ's tags (vhca_tm.c)
 * @table: the tag table the provider maps (struct vhca_tm_hdr, then one
 *	struct vhca_tm_tag a slot): the provider adds and removes tags,
 *	the engine takes them
 * @ntags: its slots; the engine never reads past them, whatever the
 *	table says
 * @lock: one message's decision at a time: each sees the count of
 *	unexpected messages the one before it left
 * @unexpected: messages with a TMH delivered to receive WQEs because no
 *	tag took them; the table's header shows it to the provider
 */
struct vhca_tm {
	struct vhca_uring table;
	u32 ntags;
	spinlock_t lock;	/* unexpected; the tags taken */
	u32 unexpected;
};

struct vhca_srq {
	struct ib_srq ibsrq;
	struct vhca_uring ring;
	u32 srqn;
	u64 uid;
	u32 limit;	/* armed when non-zero; one-shot */
	spinlock_t lock;	/* cons, limit; tm */
	u32 cons;	/* the engine's consumer index */
	spinlock_t post_lock;	/* a kernel SRQ's producer index */
	struct vhca_tm *tm;	/* IB_SRQT_TM only */
};

enum vhca_mr_type {
	VHCA_MR_USER,	/* pinned user pages */
	VHCA_MR_DMA,	/* all of the kernel's memory: get_dma_mr */
	VHCA_MR_FAST,	/* a page list, valid between REG_MR and invalidation */
	VHCA_MR_MW,	/* a memory window: a view onto a user MR, by rkey */
	VHCA_MR_ODP,	/* user memory paged in on demand (vhca_odp.c) */
};

/*
 * Not an IB_ACCESS_* flag: a lookup (vhca_mr_find(), vhca_sges(),
 * vhca_mr_find_remote()) that may be given an ODP MR, because its caller
 * faults pages in when a copy finds them missing (vhca_copy_held() with a
 * struct vhca_fault).  Other paths get no ODP MR: an access error.
 */
#define VHCA_FIND_ODP	BIT(30)

/**
 * struct vhca_mr - a memory region, or the engine's side of a window
 *
 * Every key the engine accepts names one of these in mr_xa, as an entry of
 * a NIC's memory protection table would: MRs, and the windows bound onto
 * them (struct vhca_mw holds one; its @ibmr is only the key's storage).
 *
 * @ibmr: lkey == rkey: index in mr_xa << 8 | a random variant byte
 * @key: the key the engine accepts: ibmr's, except that a fast-register
 *	MR has 0 (no key) until a REG_MR WQE runs and again once invalidated,
 *	whatever its user wrote into ibmr.  Released after the fields below.
 * @type: enum vhca_mr_type
 * @umem: the pinned user memory, or an ODP MR's (struct ib_umem_odp)
 * @iova: the address the region starts at for its users
 * @length: its length
 * @access: IB_ACCESS_* the region grants
 * @pd: its protection domain
 * @pages: the pinned pages of a user MR, in order
 * @offset: where iova falls in the first page (or fast-register page)
 * @odp_map: an ODP MR's pages the engine may touch: struct page
 *	pointers, bit 0 set if writable, 0 where there is none (vhca_odp.c)
 * @odp_inval: an ODP MR's invalidations under way
 * @odp_users: an ODP MR's faults under way, plus one until deregistration
 * @odp_tree: an implicit ODP MR's children (vhca_odp.c), else NULL
 * @fpages: a fast-register MR's page list: kernel virtual addresses, as
 *	the core's virtual DMA mapping hands them out
 * @max_pages: room in @fpages, @pages or @odp_map
 * @npages: entries map_mr_sg filled in
 * @page_shift: log2 of the page size of @fpages, fixed by REG_MR
 * @rcu: kernel MRs are freed after a grace period without waiting for it
 * @readers: copies under way that outlive one lookup: READ response
 *	batches, and the local engine's chunks into it or out of it.
 *	Invalidation waits for them, so no byte moves once it has completed
 * @nr_mw: windows bound to this MR; -1 once dereg_mr has begun, or while
 *	rereg_mr runs, so that no window binds to it meanwhile, and neither
 *	goes ahead while one is bound
 * @parent: a window's MR while it is bound (never NULL again once set:
 *	a reader that found the window before it lost its key may still map
 *	through it, under RCU, and dereg_mr waits a grace period)
 * @qp_uid: the QP a bound type 2 window belongs to (vhca_qp.uid)
 * @mw_type: a window's IB_MW_TYPE_*
 * @dead: a window being deallocated: a bind that found it before it left
 *	mr_xa binds nothing (it would hold its MR's @nr_mw for good)
 * @lock: serialises a window's binds and invalidations
 */
struct vhca_mr {
	struct ib_mr ibmr;
	u32 key;
	u8 type;
	struct ib_umem *umem;
	u64 iova;
	u64 length;
	int access;
	struct ib_pd *pd;
	struct page **pages;
	u32 offset;
	unsigned long *odp_map;
	atomic_t odp_inval;
	atomic_t odp_users;
	struct vhca_odp_tree *odp_tree;
	u64 *fpages;
	u32 max_pages;
	u32 npages;
	u32 page_shift;
	struct rcu_head rcu;
	atomic_t readers;
	atomic_t nr_mw;
	struct vhca_mr *parent;
	u64 qp_uid;
	u8 mw_type;
	bool dead;
	spinlock_t lock;	/* a window's binds and invalidations */
};

/* A memory window: the core's object and the key table's entry for it. */
struct vhca_mw {
	struct ib_mw ibmw;
	struct vhca_mr *win;
};

/* An address handle of a kernel user: the AV its UD WQEs carry. */
struct vhca_ah {
	struct ib_ah ibah;
	struct vhca_av av;
};

/*
 * One piece of a message: @len bytes at @va in @mr, or at @kbuf (a source)
 * or @kdst (a destination) in the kernel.
 */
struct vhca_seg {
	struct vhca_mr *mr;
	u32 key;
	u64 va;
	const u8 *kbuf;
	u8 *kdst;
	u32 len;
};

/**
 * struct vhca_fault - pages of an ODP MR that a copy found missing
 * @mr: the MR, found under RCU: vhca_odp_get() it before leaving RCU
 * @va: the first byte the copy needed
 * @len: how many it needed there
 * @write: it was to write them
 */
struct vhca_fault {
	struct vhca_mr *mr;
	u64 va;
	u32 len;
	bool write;
};

/*
 * Faults in a row of one copy before it fails: each was undone by an
 * invalidation before the copy could start, which a process unmapping and
 * mapping its buffer in a loop could do for ever.
 */
#define VHCA_ODP_TRIES		16

/**
 * struct vhca_odp_retry - the faults of one step of the engine that copies
 *	in process context (vhca_odp_miss(), vhca_odp_resolve())
 * @fault: the pages it found missing, their MR held while @pending
 * @pending: @fault waits for vhca_odp_resolve()
 * @lost: a miss found that fault failed: the step's copy failed
 * @failed: the MR whose fault failed (compared, never followed): the
 *	step's next miss there fails, as if its key had gone
 * @failed_write: and whether that fault was to write
 * @faults: faults in a row for the step
 */
struct vhca_odp_retry {
	struct vhca_fault fault;
	bool pending;
	bool lost;
	const struct vhca_mr *failed;
	bool failed_write;
	u8 faults;
};

/*
 * Atomics, ATOMIC WRITEs and FLUSHes an RC responder remembers, to answer
 * a duplicate the same without executing it again.
 */
#define VHCA_RESP_ATOMIC_RES	VHCA_MAX_RD_ATOM

struct vhca_atomic_res {
	bool valid;
	u32 kind;	/* VHCA_PKT_ATOMIC, _ATOMIC_WRITE or _FLUSH */
	u32 psn;
	u64 orig;	/* an atomic's */
};

/*
 * An RDMA READ the RC responder answers: its packets leave as the netdev
 * frees the ones before them, VHCA_RD_INFLIGHT of the QP's at most.  A
 * READ of 8 MiB is 8192 packets at IB MTU 1024: sent at once, most of them
 * wait in the qdisc, where CoDel drops them for their age, and the
 * requester's retries of the rest meet the same fate until they run out.
 */
struct vhca_rd_resp {
	u64 va;
	u32 rkey;
	u32 len;
	u32 psn;
	u32 msn;
	u32 mtu;
	u32 npkts;
	u32 sent;
	u32 xsrqn;	/* XRC TGT: its XRC SRQ, whose PD its rkey is of */
	u64 xsrq_uid;
};

/*
 * READs a responder remembers: what the requester may have outstanding
 * (VHCA_MAX_RD_ATOM), and as many answered already, whose responses a
 * requester that timed out may ask for again; a power of two.
 */
#define VHCA_RD_QUEUE		(2 * VHCA_MAX_RD_ATOM)
struct vhca_req_wqe;

/**
 * struct vhca_req - an RC requester on the wire, under the QP's lock
 * @cons: the sequence number of the oldest WQE on the wire.  The
 *	requester numbers what it sends in order of its own: the send
 *	ring's WQEs and, among them, the READs and FINs of the rendezvous it
 *	reads for a tag-matching SRQ (@tmj), which no ring slot holds
 * @next: the sequence number of the next WQE to transmit; those from
 *	@cons up to it are on the wire, and their ring slots stay the
 *	kernel's
 * @sent: one past the latest sent; after a rewind those from @next up to
 *	it go again, and a READ or atomic among them keeps its responses
 * @user: the SQ index of the next send ring WQE to go for the first time
 * @reads: READs and atomics among them
 * @retry_left: timeouts and sequence NAKs in a row, without the responder
 *	acknowledging a later PSN, left before RETRY_EXC_ERR
 * @acked: the latest PSN an ACK or NAK said everything before had arrived
 * @skip: packets of the oldest WQE the responder has (a sequence NAK said
 *	so); its resend starts after them
 * @rewound: the oldest WQE is on its way again; @acked stays
 * @partial: the SEND or WRITE at @next - 1 has packets left from @tail,
 *	which wait for room in the window; no later WQE goes before them
 * @tail: the first of them
 * @lost: the rest of that SEND or WRITE could not be read (an ODP page
 *	that cannot be had) and did not go: the completer goes back to the
 *	oldest WQE at once, and the resend fails this one (no retry spent)
 * @psn_high: one past the latest PSN sent (a READ's: its responses'); a
 *	packet before it goes again
 * @timed_out: the timer fired; the work retransmits
 * @moved: the oldest WQE made progress since the timer last started
 * @busy: counted in the device's rc_busy: WQEs are on the wire
 * @timer: the retransmission timer
 * @rxq: responses from the wire, for the QP's work
 * @fl: VHCA_REQ_WINDOW entries, by sequence number
 * @tmj: the rendezvous it reads, with a tag-matching SRQ; else NULL
 * @held: the last packet of the latest SEND or WRITE, not yet sent: it
 *	asks for an ACK if no other packet follows it in this run
 * @unacked: packets sent since the last that asked for an ACK
 * @cwnd: packets this QP may have on the wire, halved for congestion
 * @cwnd_target: what @cwnd was before the last cut, which it climbs back to
 * @cwnd_acked: packets acknowledged since @cwnd last changed
 * @cut_next: no cut before this time (jiffies)
 * @congested: a CNP, or a CE-marked READ response, arrived: the work cuts
 *	@cwnd (set in softirq)
 * @flush_rxe: FLUSHes go with the ICRC rxe computes (vhca_icrc_rxe()):
 *	flipped each time one is sent again, kept once one is answered
 */
struct vhca_req {
	u32 cons;
	u32 next;
	u32 sent;
	u32 user;
	unsigned int reads;
	unsigned int retry_left;
	u32 acked;
	u32 skip;
	bool rewound;
	bool partial;
	u32 tail;
	bool lost;
	u32 psn_high;
	bool timed_out;
	bool moved;
	bool busy;
	struct timer_list timer;
	struct sk_buff_head rxq;
	struct vhca_req_wqe *fl;
	struct vhca_tm_jobs *tmj;
	struct sk_buff *held;
	u32 unacked;
	u32 cwnd;
	u32 cwnd_target;
	u32 cwnd_acked;
	unsigned long cut_next;
	bool congested;
	bool flush_rxe;
};

/*
 * What a message's tag-matching header made of it, on a tag-matching SRQ
 * (vhca_tm_take()).  The kinds: a matched eager message lands after its
 * header in the tag's buffer; a matched rendezvous is read from the
 * sender's buffer afterwards (struct vhca_tm_rndv on this host, struct
 * vhca_tm_job from the wire), or, _SW, is left to software: its headers
 * land in the tag's buffer, which completes IBV_WC_TM_RNDV_INCOMPLETE (a
 * buffer too small for the data; from the wire, also a QP not in RTS or
 * with VHCA_TM_JOBS under way); an unexpected message and one with no
 * tag land whole in a receive WQE of the SRQ.
 */
enum vhca_tm_kind {
	VHCA_TM_NONE,
	VHCA_TM_EAGER,
	VHCA_TM_RNDV,
	VHCA_TM_RNDV_SW,
	VHCA_TM_UNEXPECTED,
	VHCA_TM_NO_TAG,
};

/* The TMH (struct ibv_tmh), and a rendezvous's RVH after it. */
#define VHCA_TMH_LEN		16
#define VHCA_RVH_LEN		16
/*
 * The most a rendezvous message may carry (tm_caps.max_rndv_hdr_size):
 * its TMH, RVH and 32 bytes of the application's, which land nowhere.
 */
#define VHCA_TM_RNDV_HDR	64

/**
 * struct vhca_tm_rx - a message's receive on a tag-matching SRQ
 * @kind: enum vhca_tm_kind
 * @tag: the TMH's tag
 * @ctx: the TMH's app_ctx, as it came (big-endian)
 * @va: a rendezvous's RVH: the sender's buffer
 * @rkey: and its rkey
 * @len: and its length
 * @sink: where the headers of a matched message land, out of the way
 */
struct vhca_tm_rx {
	u8 kind;
	u64 tag;
	__be32 ctx;
	u64 va;
	u32 rkey;
	u32 len;
	u8 sink[VHCA_TM_RNDV_HDR];
};

/*
 * Rendezvous from the wire one QP's requester reads at once for its
 * tag-matching SRQ.  One arriving while they are all under way is left to
 * software (IBV_WC_TM_RNDV_INCOMPLETE), which tag_matching.md lets a
 * device do with any rendezvous, so a peer holds no more of the QP's
 * memory than this.  Their READs go max_rd_atomic at a time, and a
 * ConnectX responder takes 16 at most (its max_qp_rd_atom): jobs beyond
 * that would only wait their turn.
 */
#define VHCA_TM_JOBS		16

/**
 * struct vhca_tm_job - a rendezvous from the wire, matched to a tag, that
 *	its QP's requester reads into the tag's buffer, then answers with a
 *	FIN (vhca_tm_job_next())
 * @rx: what its header said: the sender's buffer, the tag and app_ctx
 * @wr_id: the tag's completion's
 * @num_sge: the tag's buffer, as the tag gave it
 * @sge: and its SGEs, looked up again for each use
 * @read: the tag is complete: its READ was answered (DATA_VALID) or
 *	failed; the FIN goes next if it was answered
 */
struct vhca_tm_job {
	struct vhca_tm_rx rx;
	u64 wr_id;
	u32 num_sge;
	struct vhca_sge sge[VHCA_TM_MAX_SGE];
	bool read;
};

/**
 * struct vhca_tm_jobs - a QP's rendezvous from the wire, oldest first
 * @job: VHCA_TM_JOBS of them, by index modulo
 * @head: the oldest not finished: its FIN is not acknowledged yet; the
 *	requester's, read by the responder for room
 * @tail: where the responder adds the next, under resp.lock; stored with
 *	release once the job is written
 * @read: the next job whose READ goes for the first time (qp->lock)
 * @fin: the next job whose FIN does
 * @wqe: the send WQE a job's READ or FIN goes as (vhca_tm_job_wqe())
 */
struct vhca_tm_jobs {
	struct vhca_tm_job job[VHCA_TM_JOBS];
	u32 head;
	u32 tail;
	u32 read;
	u32 fin;
	u8 wqe[VHCA_SWQE_HDR_SIZE + VHCA_TM_MAX_SGE * sizeof(struct vhca_sge)]
		__aligned(8);
};

/**
 * struct vhca_resp - the responder of a message that arrives in packets
 * @lock: serialises the packets of one QP (and modify_qp's resets); a
 *	bottom-half lock, never held with interrupts off, for the ACKs and
 *	NAKs sent under it reach dev_queue_xmit()
 * @epsn: the PSN expected next
 * @msn: RC: messages completed, for the AETH
 * @nak_sent: RC: a sequence NAK went for @epsn; no second one
 * @answered: RC: the newest request executed is answered by a response
 *	packet of its own (a READ, atomic, ATOMIC WRITE or FLUSH), which
 *	acknowledges the requests before it (vhca_resp_duplicate())
 * @atomic: RC: the last VHCA_RESP_ATOMIC_RES atomics' results, by PSN
 * @atomic_next: the slot of @atomic to use next
 * @closed: the QP entered ERR: no WQE is taken until it is reset
 * @active: a message is under way
 * @dropping: it is being dropped; only a FIRST or ONLY starts anew
 * @write: it is an RDMA WRITE (else a SEND)
 * @have_wqe: @wqe holds a receive WQE taken for a SEND
 * @xsrqn: XRC TGT: the XRC SRQ of the message under way, which the
 *	receive WQE held came from
 * @xsrq_uid: and its uid (vhca_xsrq_find())
 * @off: bytes of the message placed so far
 * @va: a WRITE's next remote address
 * @rkey: a WRITE's rkey
 * @dmalen: a WRITE's total length
 * @wqe: the receive WQE (VHCA_MAX_RWQE_STRIDE bytes); its SGEs are looked
 *	up again for each packet, so no MR is held between packets
 * @seg: VHCA_MAX_SGE segments for that lookup
 * @rd: RC: the READs taken (VHCA_RD_QUEUE), those from @rd_old to
 *	@rd_tail remembered, so that a duplicate request is answered again
 *	from the READ it repeats and never taken as a new one
 * @rd_old: the oldest READ remembered
 * @rd_head: the READ whose packets go next; those before it are all sent
 * @rd_tail: where the next READ request goes
 * @rd_wait: READs wait for packets in flight to be freed (read without
 *	the lock by the skb destructor)
 * @cnp_next: RC: no CNP to the requester before this time (jiffies)
 * @fault_work: faults in @fault, out of softirq (vhca_resp_fault())
 * @fault: ODP pages a packet found missing, their MR held while
 *	@fault_busy
 * @fault_busy: @fault_work has @fault to fault in
 * @fault_failed: it failed: the packet's next miss fails it
 * @faults: faults in a row of the packet expected next
 * @held: UC and UD: packets from the wire held for an ODP fault, oldest
 *	first (struct vhca_held, vhca_held.c)
 * @nr_held: how many
 * @held_run: @held_work delivers them: later packets queue behind
 * @hodp: the faults of the first held packet
 * @held_work: faults its pages in and delivers what is held
 * @tm: a SEND to a tag-matching SRQ: what its header made of it, from its
 *	first packet (vhca_tm_take())
 * @skip: bytes of the message still to skip, not place: a matched eager
 *	message's header
 */
struct vhca_resp {
	spinlock_t lock;	/* all of it */
	u32 epsn;
	u32 msn;
	bool nak_sent;
	bool answered;
	struct vhca_atomic_res *atomic;
	unsigned int atomic_next;
	bool closed;
	bool active;
	bool dropping;
	bool write;
	bool have_wqe;
	u32 xsrqn;
	u64 xsrq_uid;
	u32 off;
	u64 va;
	u32 rkey;
	u32 dmalen;
	struct vhca_rwqe *wqe;
	struct vhca_seg *seg;
	struct vhca_rd_resp *rd;
	unsigned int rd_old;
	unsigned int rd_head;
	unsigned int rd_tail;
	bool rd_wait;
	unsigned long cnp_next;
	struct work_struct fault_work;
	struct vhca_fault fault;
	bool fault_busy;
	bool fault_failed;
	u8 faults;
	struct list_head held;
	unsigned int nr_held;
	bool held_run;
	struct vhca_odp_retry hodp;
	struct work_struct held_work;
	struct vhca_tm_rx tm;
	u32 skip;
};

/* Answer no READ queued, and forget them all.  Caller holds @r->lock. */
static inline void vhca_resp_rd_forget(struct vhca_resp *r)
{
	r->rd_head = r->rd_tail;
	r->rd_old = r->rd_tail;
}

/**
 * struct vhca_tm_rndv - a matched rendezvous for the sender's engine to
 *	finish (vhca_tm_rndv_run()), after the SEND that carried it
 * @peer_qpn: the QP it arrived on, of the device @peer_dev
 * @peer_dev: its ib_device index
 * @rx: what its header said
 * @wr_id: the tag's completion's
 * @num_sge: the tag's buffer
 * @sge: and its SGEs
 * @off: the bytes read so far
 * @odp: the faults of its read
 * @fin: the data is in and the tag completed; the FIN waits for a receive
 *	WQE of the sender's
 * @rnr_left: RNR retries the FIN has left (the receiving QP's rnr_retry)
 */
struct vhca_tm_rndv {
	u32 peer_qpn;
	u32 peer_dev;
	struct vhca_tm_rx rx;
	u64 wr_id;
	u32 num_sge;
	struct vhca_sge sge[VHCA_TM_MAX_SGE];
	u32 off;
	struct vhca_odp_retry odp;
	bool fin;
	u8 rnr_left;
};

/**
 * struct vhca_exec_state - how far the local engine got in a send WQE
 * @wr_id: the WQE's, when it started
 * @len: its length
 * @off: the bytes moved
 * @opcode: its opcode, when it started
 * @took: the responder's receive WQE was taken for it (into qp->rwqe)
 * @xsrqn: XRC: the number of the XRC SRQ it was taken from
 * @xsrq_uid: and that SRQ's uid, which a new SRQ of that number lacks
 * @odp: the ODP faults of the step under way: a chunk here, and the
 *	WQEs of the wire's requester and completer, which fault in process
 *	context too
 * @tm: a SEND to a tag-matching SRQ: what its header made of it
 *
 * A SEND, RDMA WRITE or RDMA READ moves VHCA_EXEC_RUN bytes a run of the
 * send ring.  Between runs the WQE's slot is the user's to rewrite: the
 * engine reads it again, and a WQE whose opcode, wr_id or length changed
 * fails.
 */
struct vhca_exec_state {
	u64 wr_id;
	s64 len;
	u32 off;
	u8 opcode;
	bool took;
	u32 xsrqn;
	u64 xsrq_uid;
	struct vhca_odp_retry odp;
	struct vhca_tm_rx tm;
};

/* Largest receive WQE: the header and VHCA_MAX_SGE SGEs, rounded up. */
#define VHCA_MAX_RWQE_STRIDE	1024

/**
 * struct vhca_qp - a queue pair
 * @ibqp: the core's QP; qp_num is the index in qp_xa
 * @sq: the send ring
 * @rq: the receive ring; rq.hdr is NULL when the QP uses an SRQ
 * @max_inline: inline bytes a send WQE can carry
 * @sig_all: every send WR completes (IB_SIGNAL_ALL_WR)
 * @user: a user process's QP, counted in vhca_dev.nr_user_qps
 * @rq_cons: the kernel's consumer index of the receive ring
 * @rq_lock: guards rq_cons against the engines of QPs sending here
 * @sq_cons: the engine's consumer index of the send ring
 * @wire_pkt: UC on the wire: the next packet of WQE @sq_cons, which one
 *	run of the ring left unsent (vhca_req_uc())
 * @exec: the local engine: how far WQE @sq_cons got (vhca_exec())
 * @sq_work: the engine's work on the send ring (delayed for RNR)
 * @rnr_left: RNR retries left for the WQE at sq_cons
 * @rnr_wait: the RNR timer's work owns the send ring; doorbells wait for it
 * @wqe: the send WQE being executed, copied out of the ring
 * @rwqe: the responder's receive WQE, copied out of its ring
 * @seg: 2 * VHCA_MAX_SGE segments: the message's, then the receive's
 * @lock: serialises modify and query
 * @state: the QP state
 * @attr: the attributes modify_qp set, as query_qp reports them
 * @dst_dev: ib_device index of the vhca device the AV's DGID belongs to,
 *	resolved when the AV is set; U32_MAX when none here has it
 * @err_pending: a receive WQE of this RC QP failed in a peer's engine; the
 *	QP's own work moves it to the error state
 * @sq_post_lock: a kernel QP's send producer index
 * @rq_post_lock: a kernel QP's receive producer index
 * @av: a connected QP's address vector on the wire, from its ah_attr;
 *	written under both qp->lock and resp.lock, so the requester and the
 *	responder each read it under their own
 * @sgid: its source GID, copied with it, as an HCA's QP context holds it:
 *	no GID table lookup per packet
 * @dst_cache: the route to its DGID, reset when it changes
 * @resp: a UC or RC QP's responder, for messages arriving from the wire
 * @net_inflight: packets sent and not yet freed by the netdev: an RC
 *	responder's READ responses, a UC requester's SENDs and WRITEs
 * @uc_wait: UC: a message waits for @net_inflight to fall; the packet
 *	destructor that sees it kicks @sq_work
 * @rd_cpu: RC: the CPU that last freed one, where @rd_work runs; -1 first
 * @rd_work: RC: sends the READs queued, kicked by their requests and as
 *	@net_inflight falls
 * @req: an RC QP's requester on the wire
 * @cnt: the counter set it is bound to (`rdma statistic qp bind`), which
 *	counts its events instead of the device's counters; RCU
 * @uid: never the same for two QPs of the device, as QPNs are once one
 *	is freed: what a type 2 window remembers of the QP it is bound to
 * @nr_mcast: multicast groups it is attached to (vdev->mcast_lock)
 * @rndv: a rendezvous its SEND carried to a tag-matching SRQ, which its
 *	engine reads into the tag's buffer next (vhca_tm_rndv_run()) while
 *	rndv.rx.kind is VHCA_TM_RNDV; under qp->lock
 * @xsrq: XRC TGT: the XRC SRQ of the message being received, whose
 *	receive WQEs, CQ and PD it uses; set under RCU, from the number the
 *	message carries, by the one path its peer reaches it by (an INI of
 *	this host: that INI's engine, under its qp->lock; one on the wire:
 *	the responder, under resp.lock), before each use in the same RCU
 *	section
 */
struct vhca_qp {
	struct ib_qp ibqp;
	u64 uid;
	unsigned int nr_mcast;
	struct vhca_srq *xsrq;
	struct vhca_tm_rndv rndv;
	struct vhca_uring sq;
	struct vhca_uring rq;
	u32 max_inline;
	bool sig_all;
	bool user;
	u32 rq_cons;
	spinlock_t rq_lock;	/* rq_cons */
	u32 sq_cons;
	u32 wire_pkt;
	struct vhca_exec_state exec;
	struct delayed_work sq_work;
	u8 rnr_left;
	bool rnr_wait;
	void *wqe;
	struct vhca_rwqe *rwqe;
	struct vhca_seg *seg;
	struct mutex lock;	/* state, attr, the send ring */
	enum ib_qp_state state;
	struct ib_qp_attr attr;
	u32 dst_dev;
	bool err_pending;
	spinlock_t sq_post_lock;	/* sq producer of a kernel QP */
	spinlock_t rq_post_lock;	/* rq producer of a kernel QP */
	struct vhca_av av;
	union ib_gid sgid;
	struct dst_cache dst_cache;
	struct vhca_resp resp;
	atomic_t net_inflight;
	bool uc_wait;
	int rd_cpu;
	struct work_struct rd_work;
	struct vhca_req req;
	struct vhca_qp_counter __rcu *cnt;	/* bound set, or NULL */
};

/* States in which a QP takes incoming messages. */
static inline bool vhca_qps_receives(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQE;
}

static inline struct vhca_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vhca_dev, ibdev);
}

static inline struct vhca_pd *to_vpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vhca_pd, ibpd);
}

static inline struct vhca_mr *to_vmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct vhca_mr, ibmr);
}

static inline struct vhca_mw *to_vmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct vhca_mw, ibmw);
}

static inline struct vhca_qp *to_vqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct vhca_qp, ibqp);
}

/*
 * Count an event of @qp: in the counter set it is bound to, if any, else
 * in its device's counters.  Any context.
 */
static inline void vhca_count_qp_n(struct vhca_qp *qp, enum vhca_counter c,
				   u64 n)
{
	struct vhca_qp_counter *qc;

	rcu_read_lock();
	qc = rcu_dereference(qp->cnt);
	if (qc)
		this_cpu_add(qc->pc->c[c], n);
	else
		vhca_count_n(to_vdev(qp->ibqp.device), c, n);
	rcu_read_unlock();
}

static inline void vhca_count_qp(struct vhca_qp *qp, enum vhca_counter c)
{
	vhca_count_qp_n(qp, c, 1);
}

static inline struct vhca_cq *to_vcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct vhca_cq, ibcq);
}

static inline struct vhca_srq *to_vsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct vhca_srq, ibsrq);
}

static inline struct vhca_ah *to_vah(struct ib_ah *ibah)
{
	return container_of(ibah, struct vhca_ah, ibah);
}

/*
 * The PD @qp's memory keys must be of: an XRC TGT QP has none of its own,
 * but that of the XRC SRQ of the message under way.
 */
static inline struct ib_pd *vhca_qp_pd(const struct vhca_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_TGT ? qp->xsrq->ibsrq.pd :
						   qp->ibqp.pd;
}

/* The two halves of an XRC connection: the INI sends, the TGT receives. */
static inline bool vhca_qpt_xrc(enum ib_qp_type type)
{
	return type == IB_QPT_XRC_INI || type == IB_QPT_XRC_TGT;
}

/* Reliable connected: RC, and XRC's halves, which run RC's protocol. */
static inline bool vhca_qpt_rc(enum ib_qp_type type)
{
	return type == IB_QPT_RC || vhca_qpt_xrc(type);
}

/* The GSI QP has QPN 1 on RoCE; kernel and user UD QPs talk to it. */
static inline bool vhca_qpt_ud(enum ib_qp_type type)
{
	return type == IB_QPT_UD || type == IB_QPT_GSI;
}

/* vhca_lookup.c */
struct vhca_dev *vhca_dev_get_by_netdev(struct net_device *ndev);
int vhca_dev_list_add(struct vhca_dev *vdev);
bool vhca_dev_list_del(struct vhca_dev *vdev);
void vhca_dev_gone(void);
void vhca_dev_unregister_all(void);
void vhca_dev_wait_gone(void);
struct net *vhca_gid_net(const struct ib_gid_attr *sgid);
struct vhca_dev *vhca_dev_by_gid(struct vhca_dev *self, const union ib_gid *gid,
				 struct net *net);
struct vhca_dev *vhca_dev_by_index(struct vhca_dev *self, u32 index);
struct vhca_dev *vhca_dev_by_netdev_rcu(const struct net_device *ndev);
struct vhca_qp *vhca_qp_find(struct vhca_dev *vdev, u32 dev, u32 qpn);
struct vhca_srq *vhca_xsrq_find(const struct vhca_qp *tgt, u32 srqn, u64 uid);

/* vhca_dev.c */
int vhca_dev_add(const char *name, struct net_device *ndev);
int vhca_dev_check_upper(struct net_device *ndev,
			 struct netdev_notifier_changeupper_info *info);
void vhca_port_update(struct vhca_dev *vdev);
__be64 vhca_node_guid(const u8 *mac);
enum ib_mtu vhca_active_mtu(unsigned int netdev_mtu);

/* vhca_cq.c */
int vhca_cq_post(struct vhca_cq *cq, const struct vhca_cqe *cqe,
		 bool solicited);
void vhca_cq_take_arm(struct vhca_cq *cq);
void vhca_cq_user_event(struct vhca_cq *cq, bool failed);
int vhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* vhca_mr.c */
extern const struct ib_device_ops vhca_mr_ops;
struct vhca_mr *vhca_mr_find(struct vhca_dev *vdev, u32 key, struct ib_pd *pd,
			     int access, u64 va, u32 len);
struct vhca_mr *vhca_mr_find_remote(struct vhca_dev *vdev, u32 key,
				    const struct vhca_qp *qp, int access,
				    u64 va, u32 len);
struct vhca_mr *vhca_mr_find_remote_whole(struct vhca_dev *vdev, u32 key,
					  const struct vhca_qp *qp,
					  int access);
int vhca_mr_key_alloc(struct vhca_dev *vdev, struct vhca_mr *mr, bool valid);
void vhca_mr_key_free(struct vhca_dev *vdev, struct vhca_mr *mr);
bool vhca_mr_revoke(struct vhca_mr *mr, u32 key);
void *vhca_mr_map(struct vhca_mr *mr, u64 va, u32 *room);
void vhca_mr_unmap(struct vhca_mr *mr, void *p);
int vhca_mr_fast_reg(struct vhca_dev *vdev, struct ib_pd *pd, u32 key,
		     u64 iova, u64 length, int access, u32 page_shift);
bool vhca_mr_read_begin(struct vhca_mr *mr, u32 key);
void vhca_mr_read_end(struct vhca_mr *mr);

/* vhca_odp.c */
int vhca_odp_init(void);
void vhca_odp_exit(void);
int vhca_odp_init_mr(struct vhca_mr *mr, u64 start, u64 len);
void vhca_odp_release(struct vhca_mr *mr);
bool vhca_odp_get(struct vhca_mr *mr);
void vhca_odp_put(struct vhca_mr *mr);
int vhca_odp_fault(struct vhca_mr *mr, u64 va, u64 len, bool write,
		   bool fault);
unsigned int vhca_odp_children(const struct vhca_mr *mr);
bool vhca_odp_hold(struct vhca_mr *mr, u64 va, u32 len, bool write);
void *vhca_odp_map(struct vhca_mr *mr, u64 va, u32 *room);
bool vhca_odp_miss(struct vhca_odp_retry *r, const struct vhca_fault *f);
void vhca_odp_resolve(struct vhca_odp_retry *r);
void vhca_odp_retry_reset(struct vhca_odp_retry *r);

/* vhca_mcast.c */
extern const struct ib_device_ops vhca_mcast_ops;
void vhca_mcast_qp_gone(struct vhca_qp *qp);
void vhca_mcast_dev_gone(struct vhca_dev *vdev);

/* vhca_mw.c */
extern const struct ib_device_ops vhca_mw_ops;
int vhca_mw_bind(struct vhca_dev *vdev, struct vhca_qp *qp,
		 const struct vhca_swqe *w);
void vhca_mw_kill(struct vhca_mr *win);
bool vhca_mw_invalidate(struct vhca_mr *win, u32 key,
			const struct vhca_qp *remote);

/**
 * vhca_invalidate() - run a LOCAL_INV, or a SEND_WITH_INV that arrived
 * @vdev: the device
 * @qp: the QP that posted the LOCAL_INV, or that the SEND_WITH_INV is for
 * @key: the key to invalidate
 * @remote: a SEND_WITH_INV: a type 2 window must belong to @qp
 *
 * Fast-register MRs and type 2 windows of @qp's PD can be invalidated;
 * nothing else can.  MRs and windows share the key table: the key's type
 * says whose invalidation runs, here in the caller, so that neither
 * vhca_mr.c nor vhca_mw.c calls the other back.  Caller holds
 * rcu_read_lock().
 *
 * Return: true if @key was valid and is not any more.
 */
static inline bool vhca_invalidate(struct vhca_dev *vdev,
				   const struct vhca_qp *qp, u32 key,
				   bool remote)
{
	struct vhca_mr *mr = key ? xa_load(&vdev->mr_xa, key >> 8) : NULL;

	if (!mr || READ_ONCE(mr->pd) != vhca_qp_pd(qp))
		return false;
	if (mr->type == VHCA_MR_MW)
		return vhca_mw_invalidate(mr, key, remote ? qp : NULL);
	return mr->type == VHCA_MR_FAST && vhca_mr_revoke(mr, key);
}

/* vhca_counters.c */
extern const struct ib_device_ops vhca_counter_ops;

/* vhca_kverbs.c */
extern const struct ib_device_ops vhca_kverbs_ops;

/* vhca_verbs.c */
extern const struct ib_device_ops vhca_verbs_ops;
extern const struct uapi_definition vhca_uapi_defs[];
int vhca_av_from_ah(const struct rdma_ah_attr *attr, struct vhca_av *av);

int vhca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int vhca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int vhca_fill_res_srq_entry(struct sk_buff *msg, struct ib_srq *ibsrq);
int vhca_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int vhca_check_udata_in(struct ib_udata *udata);
struct ib_ucontext *vhca_udata_uctx(struct ib_udata *udata);
int vhca_udata_begin(struct ib_udata *udata, size_t resp_len,
		     struct ib_ucontext **uctx);

/* vhca_qp.c */
extern const struct ib_device_ops vhca_qp_ops;

/* vhca_ring.c */
int vhca_rq_geometry(u32 max_wr, u32 max_sge, u32 max_wr_limit,
		     struct vhca_qgeom *g);
int vhca_sq_geometry(u32 max_wr, u32 max_sge, u32 max_inline,
		     u32 max_wr_limit, struct vhca_qgeom *g, u32 *inline_cap);
int vhca_cq_geometry(u32 cqe, struct vhca_qgeom *g);
size_t vhca_ring_bytes(const struct vhca_qgeom *g);
int vhca_uring_create(struct vhca_uring *r, struct ib_ucontext *uctx,
		      const struct vhca_qgeom *g);
void vhca_uring_destroy(struct vhca_uring *r);
int vhca_ring_move(struct vhca_uring *to, const struct vhca_uring *from,
		   u32 cons, u32 prod);
u64 vhca_uring_key(const struct vhca_uring *r);
int vhca_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);

void vhca_mmap_free(struct rdma_user_mmap_entry *entry);
void vhca_ring_exit(void);

/* Slot @idx of a ring (the index is masked here). */
static inline void *vhca_uring_slot(const struct vhca_uring *r, u32 idx)
{
	return (u8 *)r->hdr + VHCA_RING_HDR_SIZE +
	       ((size_t)vhca_ring_slot(idx, r->g.log2_slots) << r->g.log2_stride);
}

#endif /* VHCA_H */
