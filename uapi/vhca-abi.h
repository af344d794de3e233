/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * vhca kernel <-> provider ABI: ring layout, index rules and the driver
 * payloads of the uverbs commands.  This header is the single definition of
 * the ring format; the kernel driver, its engine and the rdma-core provider
 * all include it.  Documentation/rings.md explains it with a diagram.
 *
 * Everything in a shared ring is written by an untrusted party (userspace
 * for producer rings, or a confused one for consumer rings); the kernel keeps
 * its own copy of the geometry and re-validates every index it reads.
 */
#ifndef VHCA_ABI_USER_H
#define VHCA_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/*
 * uverbs ABI version of vhca devices (sysfs abi_version).  Deliberately not
 * a small number: providers that match a device by its parent's PCI
 * modalias accept small versions, and must never bind a vhca device that
 * sits on their NIC's netdev.
 */
#define VHCA_UVERBS_ABI_VERSION 0x5648

/* What sysfs hca_type says; the provider matches devices on it. */
#define VHCA_HCA_TYPE "vhca"

/*
 * Ring header.  The producer and consumer indices are free-running 32-bit
 * counters (they are never masked when stored) and sit 128 bytes apart so
 * that the two sides never share a cache line or an adjacent-line prefetch
 * pair.  Slot i of the ring lives at
 *	VHCA_RING_HDR_SIZE + (i & (nslots - 1)) * stride
 * with nslots and stride powers of two given at create time.
 *
 * used = producer - consumer (mod 2^32); the ring is empty when used == 0
 * and full when used == nslots, so every slot is usable.  A used count above
 * nslots can only come from a corrupted index and is treated as such.
 */
#define VHCA_RING_IDX_ALIGN	128
#define VHCA_RING_HDR_SIZE	(2 * VHCA_RING_IDX_ALIGN)
#define VHCA_RING_MAX_LOG2	20	/* 1M slots */

struct vhca_ring_hdr {
	__u32 producer;
	__u8 rsvd0[VHCA_RING_IDX_ALIGN - 4];
	__u32 consumer;
	__u32 ctrl;		/* written by the consumer's side: see below */
	__u8 rsvd1[VHCA_RING_IDX_ALIGN - 8];
};

/*
 * ctrl shares the consumer's cache line and is written only by the side
 * that writes the consumer index.  Zero (what an older kernel leaves) is
 * always safe: it means "ring the doorbell" on a send ring, and "nothing to
 * do" on a receive ring.
 *
 * Send ring, written by the kernel: VHCA_SQ_ACTIVE says the engine owns the
 * ring and will read the producer index again before it lets go, so a post
 * needs no doorbell.  The engine clears the bit, issues a full barrier and
 * then re-reads the producer; a poster stores the producer, issues a full
 * barrier and then reads ctrl.  One of the two sees the other's store, so
 * no WQE is left without an engine to run it.
 *
 * Receive ring of a QP, written by the kernel: VHCA_RQ_FLUSH says the QP is
 * in the error state.  Receive WQEs are then flushed only when the doorbell
 * rings, so a poster that sees it (same barrier pairing) rings it once.
 *
 * CQ ring, written by the provider: two 16-bit arm counters.  Adding
 * VHCA_CQ_ARM_NEXT arms the CQ for its next completion, adding
 * VHCA_CQ_ARM_SOLICITED for its next solicited or failed one: no system
 * call.  The kernel remembers the last value it saw; after storing a
 * completion's producer index and a full barrier it reads ctrl, and a
 * changed counter arms the CQ (NEXT winning over SOLICITED), which that
 * completion may then fire.  A consumer that arms and then, after a full
 * barrier, polls again therefore never misses an event.  A bogus value is
 * the process's own business: at most one event per completion.
 */
#define VHCA_SQ_ACTIVE		0x1U
#define VHCA_RQ_FLUSH		0x1U
#define VHCA_CQ_ARM_NEXT	1U
#define VHCA_CQ_ARM_SOLICITED	0x10000U
#define VHCA_CQ_ARM_NEXT_MASK	0xffffU

static inline __u32 vhca_ring_used(__u32 prod, __u32 cons)
{
	return prod - cons;
}

/* True if the indices describe a possible ring state. */
static inline int vhca_ring_sane(__u32 prod, __u32 cons, __u32 log2_slots)
{
	return vhca_ring_used(prod, cons) <= (1U << log2_slots);
}

static inline int vhca_ring_empty(__u32 prod, __u32 cons)
{
	return prod == cons;
}

static inline int vhca_ring_full(__u32 prod, __u32 cons, __u32 log2_slots)
{
	return vhca_ring_used(prod, cons) >= (1U << log2_slots);
}

/* Free slots; 0 for a full or corrupted ring. */
static inline __u32 vhca_ring_free(__u32 prod, __u32 cons, __u32 log2_slots)
{
	__u32 used = vhca_ring_used(prod, cons);

	return used >= (1U << log2_slots) ? 0 : (1U << log2_slots) - used;
}

static inline __u32 vhca_ring_slot(__u32 idx, __u32 log2_slots)
{
	return idx & ((1U << log2_slots) - 1);
}

/* Scatter/gather entry as stored in a WQE. */
struct vhca_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* Receive WQE: this header, then num_sge struct vhca_sge. */
struct vhca_rwqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 rsvd;
	struct vhca_sge sge[];
};

/* WQE strides are powers of two between these bounds. */
#define VHCA_WQE_MIN_STRIDE	64
#define VHCA_MAX_SGE		32
#define VHCA_CQE_STRIDE		64

/*
 * Send WQE: a 64-byte header, then num_sge struct vhca_sge, or inline_len
 * bytes of data when VHCA_SWQE_F_INLINE is set.  opcode takes the
 * IB_UVERBS_WR_* values, or VHCA_WR_REG_MR; the union is read according to
 * it (and to the QP type for ud).  The stride is a power of two >= 64 + the
 * larger of the SGE array and the inline data the QP was created for.
 *
 * ex is the immediate data (network order) of the _WITH_IMM opcodes, the
 * rkey to invalidate of SEND_WITH_INV and LOCAL_INV, the key to make
 * valid of REG_MR, and the window's new rkey of BIND_MW.
 *
 * BIND_MW binds the window whose rkey index ex names (type 1, for
 * ibv_bind_mw(), or type 2) to [addr, addr + length) of the MR mr_lkey
 * names, granting access (IB_ACCESS_REMOTE_*), and gives it the key ex.
 * A type 1 window bound with length 0 is unbound.  It completes with
 * IB_WC_MW_BIND_ERR if the kernel's rules for windows refuse it.
 *
 * ATOMIC_WRITE (RC) stores the 8 bytes of atomic.swap, in the order they
 * lie in the WQE, at atomic.remote_addr (8-byte aligned) through
 * atomic.rkey, which must grant remote write, in one store.  It has no
 * SGEs and no inline data, and completes as IB_WC_ATOMIC_WRITE.
 *
 * FLUSH (RC, IB_UVERBS_WR_FLUSH) asks the responder to make what was
 * placed in [flush.remote_addr, + flush.length) of flush.rkey's MR
 * (flush.level IB_FLUSH_RANGE), or in the whole MR (IB_FLUSH_MR, which
 * ignores address and length), reach flush.type: IB_FLUSH_GLOBAL
 * (visible to every reader) and/or IB_FLUSH_PERSISTENT.  The MR must
 * grant the matching IB_ACCESS_FLUSH_*.  It has no SGEs and no inline
 * data, and completes as IB_WC_FLUSH.
 */

/*
 * An XRC_INI QP's WQE names in xrc_srqn the XRC SRQ of the responder's
 * XRC domain that a SEND's receive comes from and whose PD a WRITE's,
 * READ's or atomic's rkey must belong to (ibv_wr_set_xrc_srqn(),
 * wr.qp_type.xrc.remote_srqn); every WQE of such a QP but LOCAL_INV,
 * BIND_MW and REG_MR needs one.  Other QPs leave it 0.
 */

/*
 * Fast registration, the kernel's IB_WR_REG_MR: makes ex valid for the
 * region described by reg over the MR's page list.  Only kernel QPs have
 * MRs with page lists; on a user QP it completes with IB_WC_LOC_QP_OP_ERR.
 */
#define VHCA_WR_REG_MR		0x20
enum {
	VHCA_SWQE_F_SIGNALED	= 1 << 0,
	VHCA_SWQE_F_SOLICITED	= 1 << 1,
	VHCA_SWQE_F_FENCE	= 1 << 2,
	VHCA_SWQE_F_INLINE	= 1 << 3,
};

/*
 * The kernel's enum rdma_network_type for RoCEv2, which no uapi header
 * carries: vhca_av.network_type and vhca_cqe.network_hdr_type.
 */
enum {
	VHCA_NETWORK_IPV4	= 2,	/* RDMA_NETWORK_IPV4 */
	VHCA_NETWORK_IPV6	= 3,	/* RDMA_NETWORK_IPV6 */
};

/* Where a UD send goes: the address vector of an address handle. */
struct vhca_av {
	__u8 dgid[16];
	__u32 flow_label;
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 network_type;	/* VHCA_NETWORK_*; for UD, the source GID's rules */
	__u8 dmac[6];
	__u16 rsvd;
};

struct vhca_swqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 flags;		/* VHCA_SWQE_F_* */
	__u16 num_sge;
	__u32 ex;		/* see above */
	__u32 inline_len;
	__u32 xrc_srqn;		/* XRC_INI: the remote XRC SRQ, 24 bits */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 rsvd;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 length;
			__u8 type;	/* IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT */
			__u8 level;	/* IB_FLUSH_RANGE or IB_FLUSH_MR */
			__u8 rsvd[6];
		} flush;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 rsvd;
		} atomic;
		struct {
			struct vhca_av av;
			__u32 remote_qpn;
			__u32 remote_qkey;
		} ud;
		struct {
			__aligned_u64 iova;
			__aligned_u64 length;
			__u32 access;	/* IB_ACCESS_* */
			__u32 page_shift;	/* of the page list */
		} reg;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 access;	/* IB_ACCESS_* */
		} bind;
		__u8 raw[40];
	};
	struct vhca_sge sge[];
};

#define VHCA_SWQE_HDR_SIZE	64
#define VHCA_MAX_INLINE		512

/* vhca_cqe.flags: which optional fields of the completion are valid. */
enum {
	VHCA_CQE_F_GRH		= 1 << 0,	/* a GRH slot leads the buffer */
	/* ex (tm_ex on a tag-matching receive) holds immediate data */
	VHCA_CQE_F_IMM		= 1 << 1,
	/* the same holds an invalidated rkey */
	VHCA_CQE_F_INV		= 1 << 2,
	VHCA_CQE_F_NET_HDR	= 1 << 3,	/* network_hdr_type is valid */
	VHCA_CQE_F_SMAC		= 1 << 4,	/* smac is valid */
	VHCA_CQE_F_VLAN		= 1 << 5,	/* vlan_id is valid */
	/* a tag-matching receive: tm_tag and ex (the TMH's app_ctx) */
	VHCA_CQE_F_TM		= 1 << 6,
	VHCA_CQE_F_TM_MATCH	= 1 << 7,	/* IBV_WC_TM_MATCH */
	VHCA_CQE_F_TM_DATA	= 1 << 8,	/* IBV_WC_TM_DATA_VALID */
	/* the provider's own, on a list operation's: IBV_WC_TM_SYNC_REQ */
	VHCA_CQE_F_TM_SYNC_REQ	= 1 << 9,
};

/*
 * The opcodes of tag-matching completions, ibv_wc_opcode's values (the
 * kernel's ib_wc_opcode has none).  TM_RECV: a message with a TMH, matched
 * to a tag (VHCA_CQE_F_TM_MATCH; VHCA_CQE_F_TM_DATA once its data is in
 * the tag's buffer) or delivered to a receive WQE of the SRQ as
 * unexpected (neither flag).  TM_NO_TAG: any other message, into a
 * receive WQE.
 */
#define VHCA_WC_TM_RECV		133
#define VHCA_WC_TM_NO_TAG	134
/* its status when a matched rendezvous could not be read */
#define VHCA_WC_TM_RNDV_INCOMPLETE	23

/*
 * Completion queue entry: one VHCA_CQE_STRIDE slot, written by the engine,
 * carrying everything struct ibv_wc and struct ib_wc report.  status and
 * opcode use the ibv_wc_status and ibv_wc_opcode values; the kernel's
 * ib_wc_status and ib_wc_opcode have the same ones for everything a user
 * CQ can see (IB_UVERBS_WC_* for sends, IB_WC_RECV = 1 << 7 onwards).
 */
struct vhca_cqe {
	__aligned_u64 wr_id;
	__u32 byte_len;
	__u32 ex;		/* immediate data (network order) or rkey */
	__u32 qp_num;
	__u32 src_qp;
	union {
		__u32 vendor_err;
		/*
		 * VHCA_CQE_F_TM with _IMM or _INV: the immediate data or the
		 * rkey, ex being the TMH's app_ctx there.  The engine reports
		 * no vendor error.
		 */
		__u32 tm_ex;
	};
	__u16 flags;		/* VHCA_CQE_F_* */
	__u16 pkey_index;
	__u8 status;
	__u8 opcode;
	__u8 sl;
	__u8 dlid_path_bits;
	__u16 slid;
	__u8 network_hdr_type;	/* VHCA_NETWORK_* */
	__u8 rsvd0;
	union {
		struct {
			__u8 smac[6];
			__u16 vlan_id;
		};
		__aligned_u64 tm_tag;	/* VHCA_CQE_F_TM */
	};
	/*
	 * On a CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION
	 * (VHCA_CAP_CQE_TS): when the engine wrote the CQE, in ns of
	 * CLOCK_MONOTONIC (the device's raw clock: hca_core_clock 1 GHz)
	 * and of CLOCK_REALTIME, both read once.  Zero otherwise.
	 */
	__aligned_u64 ts;
	__aligned_u64 ts_real;
};

/* Driver payload of alloc_ucontext's response. */
struct vhca_alloc_ucontext_resp {
	__u32 ring_hdr_size;	/* VHCA_RING_HDR_SIZE of the running kernel */
	__u32 max_sge;
	__u32 caps;		/* VHCA_CAP_* */
	__u32 rsvd;
};

/* The kernel honours ctrl of the ring header (doorbell-free posts, arms). */
#define VHCA_CAP_RING_CTRL	0x1U
/* The kernel time-stamps the CQEs of CQs that ask (vhca_cqe.ts). */
#define VHCA_CAP_CQE_TS		0x2U

/*
 * Every ring of a user object is mapped from the uverbs file at mmap_key
 * (an rdma_user_mmap_entry offset) for mmap_size bytes, MAP_SHARED.
 */

/* Driver payload of create_cq's response. */
struct vhca_create_cq_resp {
	__aligned_u64 mmap_key;
	__u32 mmap_size;
	__u32 log2_slots;
	__u32 cqn;
	__u32 rsvd;
};

/*
 * Driver payload of create_srq's response.  A tag-matching SRQ has its
 * tag table too (tm_mmap_size not 0): 2^tm_log2_tags entries, the number
 * the SRQ was given (Documentation/rings.md).
 */
struct vhca_create_srq_resp {
	__aligned_u64 mmap_key;
	__u32 mmap_size;
	__u32 log2_slots;
	__u32 log2_stride;
	__u32 max_sge;		/* SGEs a WQE may carry: the kernel checks it */
	__aligned_u64 tm_mmap_key;
	__u32 tm_mmap_size;
	__u32 tm_log2_tags;
};

/*
 * The tag table of a tag-matching SRQ (IBV_SRQT_TM), mapped like a ring:
 * this header, then one struct vhca_tm_tag per tag the SRQ may hold.
 * The provider adds and removes tags in it and the engine takes them, with
 * no system call either way (Documentation/rings.md, "Tag matching").
 *
 * unexpected: written by the engine: the messages with a TMH it delivered
 * to the SRQ's receive WQEs because no tag took them.  synced: written by
 * the provider: how many of those software has handled (its last
 * IBV_WR_TAG_SYNC, or an operation with IBV_OPS_TM_SYNC).  The engine
 * matches tags only while the two are equal.
 */
struct vhca_tm_hdr {
	__u32 unexpected;
	__u8 rsvd0[VHCA_RING_IDX_ALIGN - 4];
	__u32 synced;
	__u8 rsvd1[VHCA_RING_IDX_ALIGN - 4];
};

/*
 * A tag.  state: VHCA_TM_POSTED, VHCA_TM_TAKEN or VHCA_TM_FREE in its low
 * two bits, and above them the entry's posting number, which orders the
 * tags for matching (the provider's count of additions, modulo 2^30).  The
 * provider writes the other fields of an entry that is not POSTED, then
 * stores state with release order; the engine takes a POSTED entry by
 * compare-and-swap of the whole word to TAKEN, so an entry removed and
 * added again meanwhile is not taken with the old one's fields.
 */
enum {
	VHCA_TM_FREE	= 0,
	VHCA_TM_POSTED	= 1,
	VHCA_TM_TAKEN	= 2,
	VHCA_TM_STATE_MASK = 3,
	VHCA_TM_SEQ_SHIFT = 2,
};

#define VHCA_TM_MAX_SGE		4
#define VHCA_TM_TAG_STRIDE	128
/* Tags a tag-matching SRQ may hold at most (tm_caps.max_num_tags). */
#define VHCA_TM_MAX_TAGS	1024
/*
 * List operations outstanding at most (tm_caps.max_ops): the provider
 * completes each as it applies it, so only its queue of completions not
 * yet polled bounds them.
 */
#define VHCA_TM_MAX_OPS		1024

struct vhca_tm_tag {
	__u32 state;
	__u32 num_sge;
	__aligned_u64 tag;
	__aligned_u64 mask;	/* matches if TMH.tag & mask == tag */
	__aligned_u64 wr_id;	/* its completion's (recv_wr_id) */
	struct vhca_sge sge[VHCA_TM_MAX_SGE];
	__u8 rsvd[VHCA_TM_TAG_STRIDE - 32 - 16 * VHCA_TM_MAX_SGE];
};

/*
 * Driver payload of create_qp's response: the SQ, and the RQ unless the
 * QP takes its receives from an SRQ (then rq_mmap_size is 0), and the
 * limits the kernel will check WQEs against.  The provider takes them from
 * here: libibverbs does not fill the core response fields on every path.
 */
struct vhca_create_qp_resp {
	__aligned_u64 sq_mmap_key;
	__aligned_u64 rq_mmap_key;
	__u32 sq_mmap_size;
	__u32 rq_mmap_size;
	__u32 sq_log2_slots;
	__u32 sq_log2_stride;
	__u32 rq_log2_slots;
	__u32 rq_log2_stride;
	__u32 max_inline;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 rsvd;
};

/*
 * Resizing a CQ: resize_cq's driver response is a struct
 * vhca_create_cq_resp for the new ring, which holds the CQEs not yet
 * polled, in order, from slot 0 (consumer 0, producer their count).  The
 * old ring's key stops working; unmap it.
 *
 * Resizing a user SRQ: uverbs' MODIFY_SRQ has no response, so the provider
 * calls vhca's own method on the SRQ object instead of IB_SRQ_MAX_WR.  Its
 * response is a struct vhca_create_srq_resp for the new ring, which holds
 * the WQEs not yet consumed, in order, from slot 0 (the provider's next
 * producer index is the new ring's producer).
 */
enum vhca_ib_srq_methods {
	VHCA_IB_METHOD_SRQ_RESIZE = (1U << UVERBS_ID_NS_SHIFT),
};

enum vhca_ib_srq_resize_attrs {
	VHCA_IB_ATTR_SRQ_RESIZE_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	VHCA_IB_ATTR_SRQ_RESIZE_MAX_WR,		/* __u32 */
	VHCA_IB_ATTR_SRQ_RESIZE_RESP,		/* struct vhca_create_srq_resp */
};

/*
 * The event of completions the provider made itself: a tag-matching SRQ's
 * list operations complete in the provider, with no system call, so the
 * kernel sees no CQE to fire an armed CQ's event for.  After it queued
 * such completions on a CQ the process may have armed, the provider calls
 * this method on the CQ: the kernel applies the arms in ctrl and, if the
 * CQ is armed for the next completion (or for a solicited one, and
 * VHCA_CQ_EVENT_FAILED says one of them failed), fires its event.
 */
enum vhca_ib_cq_methods {
	VHCA_IB_METHOD_CQ_EVENT = (1U << UVERBS_ID_NS_SHIFT),
};

enum vhca_ib_cq_event_attrs {
	VHCA_IB_ATTR_CQ_EVENT_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	VHCA_IB_ATTR_CQ_EVENT_FLAGS,		/* __u32: VHCA_CQ_EVENT_* */
};

#define VHCA_CQ_EVENT_FAILED	1U

/* Driver payload of alloc_pd's response. */
struct vhca_alloc_pd_resp {
	__u32 pdn;
	__u32 rsvd;
};

#endif /* VHCA_ABI_USER_H */
