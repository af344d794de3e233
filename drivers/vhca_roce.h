/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * RoCEv2 on the wire: the InfiniBand transport headers carried in UDP
 * (port 4791) over IPv4 or IPv6, and the invariant CRC that ends every
 * packet.  Layouts are the IBA's (volume 1, chapter 9, and annex A17).
 */
#ifndef VHCA_ROCE_H
#define VHCA_ROCE_H

#include <linux/types.h>

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

/*
 * Opcodes: a transport class in the top three bits, then the operation.
 * vhca speaks UD SEND and the UC operations on the wire so far.
 */
enum {
	VHCA_OP_CLASS_MASK		= 0xe0,
	VHCA_OP_UC			= 0x20,
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
	VHCA_OP_UD_SEND_ONLY		= 0x64,
	VHCA_OP_UD_SEND_ONLY_IMM	= 0x65,
};

/* The GSI QP's well-known Q_Key (IBA 13.4.6.1). */
#define VHCA_GSI_QKEY		0x80010000

u32 vhca_icrc(const void *l3, u32 len);

#endif /* VHCA_ROCE_H */
