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
#include <rdma/ib_verbs.h>

#include "vhca-abi.h"

#define VHCA_PORT		1
#define VHCA_GID_TBL_LEN	128
#define VHCA_MAX_PD		65536
#define VHCA_MAX_QP_WR		32768	/* a power of two */
#define VHCA_MAX_CQE		65536	/* a power of two */
#define VHCA_VENDOR_ID		0xffffff	/* no OUI: a software device */

struct vhca_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;		/* on vhca_dev_list */
	/* ib_register_device() zeroes ibdev.attrs and refills it from here */
	struct ib_device_attr attrs;

	struct mutex port_lock;		/* port_state, active_mtu */
	enum ib_port_state port_state;
	enum ib_mtu active_mtu;

	struct ida pd_ida;
};

struct vhca_ucontext {
	struct ib_ucontext ibuc;
};

struct vhca_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/* Placeholders until the objects get their rings; see vhca_verbs.c. */
struct vhca_cq {
	struct ib_cq ibcq;
};

struct vhca_qp {
	struct ib_qp ibqp;
};

static inline struct vhca_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vhca_dev, ibdev);
}

static inline struct vhca_pd *to_vpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vhca_pd, ibpd);
}

/* vhca_main.c */
struct vhca_dev *vhca_dev_get_by_netdev(struct net_device *ndev);
int vhca_dev_list_add(struct vhca_dev *vdev);
void vhca_dev_list_del(struct vhca_dev *vdev);

/* vhca_dev.c */
int vhca_dev_add(const char *name, struct net_device *ndev);
void vhca_port_update(struct vhca_dev *vdev);
__be64 vhca_node_guid(const u8 *mac);
enum ib_mtu vhca_active_mtu(unsigned int netdev_mtu);

/* vhca_net.c */
int vhca_net_init(void);
void vhca_net_exit(void);

/* vhca_verbs.c */
extern const struct ib_device_ops vhca_verbs_ops;

/* vhca_ring.c: queue geometry */
struct vhca_qgeom {
	u32 log2_slots;
	u32 log2_stride;
	u32 max_wr;	/* what the verbs report back: >= what was asked */
	u32 max_sge;
};

int vhca_rq_geometry(u32 max_wr, u32 max_sge, u32 max_wr_limit,
		     struct vhca_qgeom *g);
int vhca_cq_geometry(u32 cqe, struct vhca_qgeom *g);
size_t vhca_ring_bytes(const struct vhca_qgeom *g);

#endif /* VHCA_H */
