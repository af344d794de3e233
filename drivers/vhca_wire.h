/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * vhca on the wire: what the netdev side (vhca_net.c), the receive path
 * (vhca_recv.c), the requester (vhca_req.c), the completer (vhca_comp.c)
 * and the responder (vhca_resp.c) pass between them.  The requester and
 * completer are executors of the engine (vhca_engine.h).
 */
#ifndef VHCA_WIRE_H
#define VHCA_WIRE_H

#include "vhca_engine.h"

/* The transport headers of a packet vhca sends. */
struct vhca_tx_hdr {
	u8 opcode;
	bool se;
	bool ackreq;
	u32 dqpn;
	u32 psn;
	bool has_xrceth;	/* an XRC request's, naming SRQ @xrcsrq */
	u32 xrcsrq;
	bool has_deth;
	u32 qkey;
	u32 sqpn;
	bool becn;
	bool has_feth;		/* a FLUSH's FETH, before the RETH */
	u32 feth;
	bool rxe_icrc;		/* with rxe's ICRC for a FLUSH (vhca_icrc_rxe()) */
	bool has_reth;		/* or the AtomicETH, with @swap and @compare */
	bool has_atomic;
	u64 va;
	u32 rkey;
	u32 dmalen;
	u64 swap;
	u64 compare;
	bool has_imm;		/* ImmDt, or the IETH of a SEND_WITH_INV */
	__be32 imm;
	bool has_aeth;
	u32 aeth;
	bool has_orig;		/* AtomicAckETH */
	u64 orig;
};

/* A UC, RC or XRC request packet from the wire, as the responder takes it. */
struct vhca_resp_msg {
	u8 op;		/* without the class bits */
	u32 flags;	/* VHCA_PKT_* of its opcode */
	bool rc;	/* RC's protocol: RC or XRC */
	bool xrc;
	u32 xrcsrq;	/* XRC: the SRQ its XRCETH names */
	bool se;
	bool ackreq;
	bool ce;	/* its IP header's ECN field says Congestion Experienced */
	u32 dqpn;
	u32 psn;
	u32 feth;	/* a FLUSH's */
	u64 va;
	u32 rkey;
	u32 dmalen;
	u64 swap;
	u64 compare;
	__be32 imm;	/* ImmDt, or the IETH's rkey */
	const u8 *data;
	u32 len;
	const struct sk_buff *skb;	/* its IP header: where it came from */
};

/* What a UD datagram's transport headers say. */
struct vhca_ud_hdr {
	u32 dqpn;
	u32 sqpn;
	u32 qkey;
	u32 psn;
	__be32 imm;
	bool has_imm;
	bool se;
};

/* A UD datagram from the wire, as the engine delivers it. */
struct vhca_ud_msg {
	struct vhca_ud_hdr h;
	u8 grh[40];	/* the IPv6 header, or 20 zero bytes and the IPv4 one */
	u8 net;		/* RDMA_NETWORK_IPV4 or _IPV6 */
	u16 vlan;	/* the VLAN it came on, or VHCA_NO_VLAN */
	const u8 *data;
	u32 len;
};

/* vhca_net.c: the netdev, the UDP sockets, sending packets */
int vhca_net_init(int (*rcv)(struct sock *sk, struct sk_buff *skb));
void vhca_net_exit(void);
int vhca_net_get(struct vhca_dev *vdev);
void vhca_net_put(struct vhca_dev *vdev);
struct sk_buff *vhca_net_alloc(struct vhca_dev *vdev,
			       const struct vhca_tx_hdr *h, u32 len,
			       u8 **payload);
void vhca_bth_set_ackreq(struct sk_buff *skb);
bool vhca_net_on_path(const struct sk_buff *skb, const struct vhca_av *av,
		      const union ib_gid *sgid);
void vhca_net_send_qp(struct vhca_dev *vdev, struct sk_buff *skb,
		      struct vhca_qp *qp);
void vhca_net_send_av(struct vhca_dev *vdev, struct sk_buff *skb,
		      struct vhca_qp *qp, const struct vhca_av *av,
		      const union ib_gid *sgid);
void vhca_net_send(struct vhca_dev *vdev, struct sk_buff *skb,
		   const struct vhca_av *av, const struct ib_gid_attr *sgid,
		   struct vhca_qp *qp);
u32 vhca_net_room(struct vhca_qp *qp, bool *wait, int max);
void vhca_net_drain(struct vhca_qp *qp);

/* vhca_recv.c: steering, parsing and checking what arrives */
bool vhca_recv_steer(struct vhca_dev *vdev);
void vhca_recv_unsteer(struct vhca_dev *vdev);
void vhca_recv_vlan_event(struct net_device *dev, unsigned long event);
bool vhca_recv_steers(const struct net_device *dev);
int vhca_recv_udp(struct sock *sk, struct sk_buff *skb);

/*
 * Bytes per packet: the path MTU, but no more than the netdev carries
 * (modify_qp makes path_mtu at least 256 before RTR).
 */
static inline u32 vhca_qp_mtu(struct vhca_dev *vdev, struct vhca_qp *qp)
{
	enum ib_mtu mtu = min(READ_ONCE(qp->attr.path_mtu),
			      READ_ONCE(vdev->active_mtu));

	return ib_mtu_enum_to_int(max(mtu, IB_MTU_256));
}

/* The class of the opcodes @qp sends and receives on the wire. */
static inline u8 vhca_qp_class(const struct vhca_qp *qp)
{
	if (vhca_qpt_xrc(qp->ibqp.qp_type))
		return VHCA_OP_XRC;
	return qp->ibqp.qp_type == IB_QPT_UC ? VHCA_OP_UC : VHCA_OP_RC;
}

/*
 * An RC QP whose peer is on another host: vhca_comp.c and vhca_req.c run
 * its send ring.
 */
static inline bool vhca_rc_on_wire(const struct vhca_qp *qp)
{
	return qp->req.fl && READ_ONCE(qp->dst_dev) == U32_MAX;
}

/* vhca_req.c: the requester on the wire: RC's go-back-N, and UC */
int vhca_req_init(struct vhca_qp *qp);
void vhca_req_destroy(struct vhca_qp *qp);
enum vhca_sq_stop vhca_req_run(struct vhca_qp *qp, unsigned int *budget);
int vhca_req_uc(struct vhca_dev *vdev, struct vhca_qp *qp,
		const struct vhca_swqe *w, struct vhca_seg *sseg,
		unsigned int ns, u32 len);

/* vhca_comp.c: the completer of RC on the wire */
bool vhca_comp_run(struct vhca_qp *qp, enum vhca_sq_stop *stop);
bool vhca_comp_response(struct vhca_dev *vdev, struct sk_buff *skb,
			const struct vhca_bth *bth, u32 pkt, bool ce);
bool vhca_comp_cnp(struct vhca_dev *vdev, struct sk_buff *skb,
		   const struct vhca_bth *bth);

/**
 * struct vhca_held - a UC or UD packet held for an ODP fault (vhca_held.c)
 * @node: in its QP's resp.held
 * @deliver: delivers it to its QP as the receive path would: returns
 *	VHCA_FAULT if a page was missing (resp.hodp has it) and it is to be
 *	tried again, anything else when it is done with.  Called under the
 *	QP's resp.lock and rcu_read_lock().
 * @begun: UC: its PSN was taken into the message, only its placement is
 *	left to do
 * @uc: a UC packet, its data in @data
 * @ud: a UD datagram, its data in @data
 * @data: a copy of the payload
 */
struct vhca_held {
	struct list_head node;
	int (*deliver)(struct vhca_qp *qp, struct vhca_held *h);
	bool begun;
	union {
		struct vhca_resp_msg uc;
		struct vhca_ud_msg ud;
	};
	u8 data[];
};

struct vhca_held *vhca_held_new(struct vhca_qp *qp, const u8 *data, u32 len,
				bool fault);
void vhca_held_add(struct vhca_qp *qp, struct vhca_held *h);
void vhca_held_purge(struct vhca_qp *qp);
void vhca_held_work(struct work_struct *work);
void vhca_held_drain(struct vhca_qp *qp);

/* vhca_ud.c: a UD datagram from the wire */
void vhca_ud_from_wire(struct vhca_dev *vdev, const struct vhca_ud_msg *m);

/* vhca_mcast.c: the groups the receive path looks in */
bool vhca_mcast_joined(struct vhca_dev *vdev, const union ib_gid *mgid);
unsigned int vhca_mcast_qps(struct vhca_dev *vdev, const union ib_gid *mgid,
			    struct vhca_qp **qps);

/* vhca_resp.c: the responder of UC and RC on the wire */
void vhca_resp_recv(struct vhca_dev *vdev, const struct vhca_resp_msg *m);
void vhca_resp_rd_work(struct work_struct *work);
void vhca_resp_rd_drain(struct vhca_qp *qp);
void vhca_resp_fault_work(struct work_struct *work);
void vhca_resp_fault_drain(struct vhca_qp *qp);

#endif /* VHCA_WIRE_H */
