/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * RoCEv2 on the wire: the InfiniBand transport headers carried in UDP
 * (port 4791) over IPv4 or IPv6, and the invariant CRC that ends every
 * packet.  Layouts are the IBA's (volume 1, chapter 9, and annex A17).
 */
#ifndef VHCA_ROCE_H
#define VHCA_ROCE_H

#include <linux/types.h>

struct sk_buff;

#define VHCA_ROCE_UDP_PORT	4791
#define VHCA_ICRC_SIZE		4

/* Base transport header. */
struct vhca_bth {
	u8 opcode;
	u8 flags;		/* SE, MigReq, PadCnt, TVer */
	__be16 pkey;
	__be32 qpn;		/* resv8a in the top byte, then DestQP */
	__be32 apsn;		/* AckReq, 7 reserved bits, then the PSN */
};

#define VHCA_BTH_SE		0x80
#define VHCA_BTH_MIG		0x40
#define VHCA_BTH_PAD_SHIFT	4
#define VHCA_BTH_PAD_MASK	0x30
#define VHCA_BTH_TVER_MASK	0x0f
#define VHCA_BTH_QPN_MASK	0x00ffffff
/* In resv8a: the BECN of a CNP (annex A17.9.3); the ICRC masks it. */
#define VHCA_BTH_BECN		0x40000000
#define VHCA_BTH_PSN_MASK	0x00ffffff
#define VHCA_BTH_ACKREQ		0x80000000

/* Datagram extended transport header. */
struct vhca_deth {
	__be32 qkey;
	__be32 sqp;		/* 8 reserved bits, then the source QP */
};

/* RDMA extended transport header. */
struct vhca_reth {
	__be64 va;
	__be32 rkey;
	__be32 dmalen;
} __packed;

/* ACK extended transport header: a syndrome, then the MSN. */
struct vhca_aeth {
	__be32 smsn;
};

#define VHCA_AETH_MSN_MASK	0x00ffffff
#define VHCA_AETH_TYPE_MASK	0xe0	/* of the syndrome */
#define VHCA_AETH_ACK		0x00	/* low 5 bits: credits */
#define VHCA_AETH_RNR_NAK	0x20	/* low 5 bits: the RNR timer */
#define VHCA_AETH_NAK		0x60	/* low 5 bits: one of these */
#define VHCA_NAK_PSN_SEQ	0
#define VHCA_NAK_INV_REQ	1
#define VHCA_NAK_REM_ACCESS	2
#define VHCA_NAK_REM_OP		3
/* An ACK's credit field when end-to-end credits are not used. */
#define VHCA_AETH_NO_CREDITS	0x1f

/* Atomic extended transport header. */
struct vhca_atomic_eth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/*
 * Opcodes: a transport class in the top three bits, then the operation.
 * vhca speaks UD SEND and the RC, UC and XRC operations on the wire; XRC
 * has RC's, but for ATOMIC WRITE and FLUSH.
 */
enum {
	VHCA_OP_CLASS_MASK		= 0xe0,
	VHCA_OP_RC			= 0x00,
	VHCA_OP_UC			= 0x20,
	VHCA_OP_XRC			= 0xa0,
	VHCA_OP_SEND_FIRST		= 0x00,
	VHCA_OP_SEND_MIDDLE		= 0x01,
	VHCA_OP_SEND_LAST		= 0x02,
	VHCA_OP_SEND_LAST_IMM		= 0x03,
	VHCA_OP_SEND_ONLY		= 0x04,
	VHCA_OP_SEND_ONLY_IMM		= 0x05,
	VHCA_OP_WRITE_FIRST		= 0x06,
	VHCA_OP_WRITE_MIDDLE		= 0x07,
	VHCA_OP_WRITE_LAST		= 0x08,
	VHCA_OP_WRITE_LAST_IMM		= 0x09,
	VHCA_OP_WRITE_ONLY		= 0x0a,
	VHCA_OP_WRITE_ONLY_IMM		= 0x0b,
	VHCA_OP_READ_REQ		= 0x0c,
	VHCA_OP_READ_RESP_FIRST		= 0x0d,
	VHCA_OP_READ_RESP_MIDDLE	= 0x0e,
	VHCA_OP_READ_RESP_LAST		= 0x0f,
	VHCA_OP_READ_RESP_ONLY		= 0x10,
	VHCA_OP_ACK			= 0x11,
	VHCA_OP_ATOMIC_ACK		= 0x12,
	VHCA_OP_CMP_SWAP		= 0x13,
	VHCA_OP_FETCH_ADD		= 0x14,
	VHCA_OP_SEND_LAST_INV		= 0x16,
	VHCA_OP_SEND_ONLY_INV		= 0x17,
	VHCA_OP_FLUSH			= 0x1c,
	VHCA_OP_ATOMIC_WRITE		= 0x1d,
	VHCA_OP_UD_SEND_ONLY		= 0x64,
	VHCA_OP_UD_SEND_ONLY_IMM	= 0x65,
	/* RoCEv2's congestion notification, a class of its own */
	VHCA_OP_CNP			= 0x81,
};

/*
 * What a packet of an opcode is and carries, as vhca_pkt_ops[] in
 * vhca_roce.c says for every opcode vhca speaks (0 for the others): the
 * parser, the responder and the requester read it there instead of
 * deriving it from the opcode's value.
 */
enum {
	VHCA_PKT_FIRST		= 1 << 0,	/* starts a message (ONLY: and ends it) */
	VHCA_PKT_LAST		= 1 << 1,	/* ends one */
	VHCA_PKT_SEND		= 1 << 2,	/* a SEND: takes a receive WQE */
	VHCA_PKT_WRITE		= 1 << 3,	/* an RDMA WRITE */
	VHCA_PKT_READ		= 1 << 4,	/* an RDMA READ request */
	VHCA_PKT_ATOMIC		= 1 << 5,	/* an atomic request */
	VHCA_PKT_RESP		= 1 << 6,	/* for the requester: READ response, ACK */
	VHCA_PKT_PAYLOAD	= 1 << 7,	/* carries data */
	VHCA_PKT_RETH		= 1 << 8,
	VHCA_PKT_AETH		= 1 << 9,
	VHCA_PKT_ATMETH		= 1 << 10,	/* AtomicETH */
	VHCA_PKT_ATMACK		= 1 << 11,	/* AtomicAckETH */
	VHCA_PKT_DETH		= 1 << 12,	/* a datagram */
	VHCA_PKT_IMM		= 1 << 13,	/* ImmDt */
	VHCA_PKT_INV		= 1 << 14,	/* IETH: an rkey to invalidate */
	VHCA_PKT_CNP		= 1 << 15,
	/* an ATOMIC WRITE: a RETH and 8 bytes stored at once (annex A19) */
	VHCA_PKT_ATOMIC_WRITE	= 1 << 16,
	VHCA_PKT_FLUSH		= 1 << 17,	/* a FLUSH (annex A19) */
	VHCA_PKT_FETH		= 1 << 18,	/* its FETH, before the RETH */
	/* an XRC request's XRCETH, first after the BTH: the SRQ it is for */
	VHCA_PKT_XRCETH		= 1 << 19,
};

/* The XRCETH: 8 reserved bits, then the number of an XRC SRQ. */
#define VHCA_XRCETH_SRQ_MASK	0x00ffffff

/*
 * The FLUSH extended transport header: the placement type (IB_FLUSH_*
 * bits) and the selectivity level (IB_FLUSH_RANGE or IB_FLUSH_MR) in its
 * low byte; the rest is reserved, sent as zeroes.
 */
#define VHCA_FETH_PLT_MASK	0x0f
#define VHCA_FETH_SEL_SHIFT	4
#define VHCA_FETH_SEL_MASK	0x30

extern const u32 vhca_pkt_ops[256];

/* Bytes of the extension headers a packet with VHCA_PKT_* @f has. */
static inline u32 vhca_pkt_hlen(u32 f)
{
	return (f & VHCA_PKT_XRCETH ? sizeof(__be32) : 0) +
	       (f & VHCA_PKT_FETH ? sizeof(__be32) : 0) +
	       (f & VHCA_PKT_RETH ? sizeof(struct vhca_reth) : 0) +
	       (f & VHCA_PKT_AETH ? sizeof(struct vhca_aeth) : 0) +
	       (f & VHCA_PKT_ATMETH ? sizeof(struct vhca_atomic_eth) : 0) +
	       (f & VHCA_PKT_ATMACK ? sizeof(u64) : 0) +
	       (f & VHCA_PKT_DETH ? sizeof(struct vhca_deth) : 0) +
	       (f & (VHCA_PKT_IMM | VHCA_PKT_INV) ? sizeof(__be32) : 0);
}

/* A CNP's payload: reserved bytes, sent as zeroes. */
#define VHCA_CNP_LEN		16

/* The GSI QP's well-known Q_Key (IBA 13.4.6.1). */
#define VHCA_GSI_QKEY		0x80010000

/* @a - @b in the 24-bit PSN space, as a signed distance. */
static inline s32 vhca_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

u32 vhca_icrc(const void *l3, u32 len);
u32 vhca_icrc_rxe(const void *l3, u32 len);
bool vhca_pkt_bounds(const struct sk_buff *skb, const struct vhca_bth *bth,
		     u32 pkt, u32 *hlen, u32 *len);
/* vhca_net_alloc() to vhca_put_icrc(): rxe's ICRC goes in this slot */
#define VHCA_ICRC_RXE_MARK	0xffffffffu

#endif /* VHCA_ROCE_H */
