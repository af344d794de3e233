/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The one place where kernels differ.  vhca is written against the newest
 * interfaces; each VHCA_HAVE_* comes from a compile-time probe of the
 * kernel being built for (drivers/compat/NAME.c, run by
 * drivers/compat/probe.sh into vhca_probed.h, which make and DKMS do
 * before kbuild), never from a version number, so a distribution kernel
 * with a backport gets the interface it really has.  What an older kernel
 * lacks is reported as absent (ATOMIC WRITE is then neither advertised
 * nor accepted), never imitated.
 */
#ifndef VHCA_COMPAT_H
#define VHCA_COMPAT_H

#include <linux/mm.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca_probed.h"

#ifdef VHCA_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#ifdef VHCA_HAVE_ATOMIC_WRITE
#define VHCA_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define VHCA_DEVICE_ATOMIC_WRITE	0
#endif

/*
 * FLUSH's QP access flags, where the kernel has them.  A QP may grant
 * both (rdma-core 56's tests and programs do on every RC QP, as mlx5
 * allows): the grant is a permission, and what a FLUSH may do is decided
 * by the MR its rkey names, which only has what the device offers.
 */
#ifdef VHCA_HAVE_ACCESS_FLUSH
#define VHCA_ACCESS_FLUSH	(IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT)
#else
#define VHCA_ACCESS_FLUSH	0
#endif

/*
 * FLUSH (IBA 1.5) to global visibility, where the kernel's verbs have it:
 * the device says so, its MRs may grant it, and the opcode table has the
 * work request.  Persistence is not offered: vhca's MRs are not
 * persistent memory.
 */
#if defined(VHCA_HAVE_FLUSH) && defined(VHCA_HAVE_ACCESS_FLUSH)
#define VHCA_FLUSH			1
#define VHCA_DEVICE_FLUSH		IB_DEVICE_FLUSH_GLOBAL
#define VHCA_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#else
#define VHCA_DEVICE_FLUSH		0
#define VHCA_ACCESS_FLUSH_GLOBAL	0
#endif

/*
 * A per-CPU workqueue: named so where the flag exists (a workqueue that
 * names neither WQ_PERCPU nor WQ_UNBOUND is warned about there), the
 * default before.
 */
#ifdef VHCA_HAVE_WQ_PERCPU
#define VHCA_WQ_PERCPU	WQ_PERCPU
#else
#define VHCA_WQ_PERCPU	0
#endif

/*
 * create_cq's last argument: the uverbs attribute bundle, or before it
 * the driver's udata alone.
 */
#ifdef VHCA_HAVE_CREATE_CQ_ATTRS
#define vhca_create_cq_arg uverbs_attr_bundle
static inline struct ib_udata *
vhca_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define vhca_create_cq_arg ib_udata
static inline struct ib_udata *vhca_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/*
 * The core resizes user CQs only, through resize_user_cq with an unsigned
 * size, on the kernels that have it; vhca's resize serves both kinds.
 */
#ifdef VHCA_HAVE_RESIZE_USER_CQ
#define VHCA_OP_RESIZE_CQ	resize_user_cq
#define VHCA_RESIZE_CQE		unsigned int
#else
#define VHCA_OP_RESIZE_CQ	resize_cq
#define VHCA_RESIZE_CQE		int
#endif

/*
 * Counter (un)binding's QP, ibqp, and the port the kernels that pass one
 * name: vhca has one port, so it needs only the parameter.
 */
#ifdef VHCA_HAVE_COUNTER_PORT
#define VHCA_COUNTER_QP_PARAMS	struct ib_qp *ibqp, u32 port
#else
#define VHCA_COUNTER_QP_PARAMS	struct ib_qp *ibqp
#endif

/*
 * The DMA handle reg_user_mr is given where the core has them (PCIe TPH
 * steering tags).  vhca has no alloc_dmah: no handle of its device can
 * exist, and the MR code is never given one.
 */
#ifdef VHCA_HAVE_REG_USER_MR_DMAH
#define VHCA_REG_USER_MR_DMAH_PARAM	struct ib_dmah *dmah,
#else
#define VHCA_REG_USER_MR_DMAH_PARAM
#endif

/* from_timer() was renamed, unchanged. */
#ifndef VHCA_HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, timer, field)	from_timer(var, timer, field)
#endif

static inline struct ib_umem *vhca_umem_get(struct ib_device *dev,
					    unsigned long addr, size_t len,
					    int access)
{
#ifdef VHCA_HAVE_IB_UMEM_GET_VA
	return ib_umem_get_va(dev, addr, len, access);
#else
	return ib_umem_get(dev, addr, len, access);
#endif
}

/*
 * An ODP umem's HMM pfns, as ib_umem_odp_map_dma_and_lock() left them, and
 * the access masks it takes: the umem's own bits before 6.16, HMM's since.
 */
static inline unsigned long *vhca_odp_pfns(struct ib_umem_odp *odp)
{
#ifdef VHCA_HAVE_UMEM_ODP_MAP
	return odp->map.pfn_list;
#else
	return odp->pfn_list;
#endif
}

#ifdef VHCA_HAVE_UMEM_ODP_MAP
#define VHCA_ODP_ACCESS_READ	0
#define VHCA_ODP_ACCESS_WRITE	HMM_PFN_WRITE
#else
#define VHCA_ODP_ACCESS_READ	ODP_READ_ALLOWED_BIT
#define VHCA_ODP_ACCESS_WRITE	(ODP_READ_ALLOWED_BIT | ODP_WRITE_ALLOWED_BIT)
#endif

/*
 * ODP capabilities of RC beyond the verbs' first six: ATOMIC WRITE and
 * FLUSH on ODP MRs have bits of their own since 6.16.
 */
#ifdef VHCA_HAVE_ODP_ATOMIC_WRITE
#define VHCA_ODP_SUPPORT_ATOMIC_WRITE	IB_ODP_SUPPORT_ATOMIC_WRITE
#else
#define VHCA_ODP_SUPPORT_ATOMIC_WRITE	0
#endif
#ifdef VHCA_HAVE_ODP_FLUSH
#define VHCA_ODP_SUPPORT_FLUSH		IB_ODP_SUPPORT_FLUSH
#else
#define VHCA_ODP_SUPPORT_FLUSH		0
#endif

/* A UDP tunnel socket is set up and released by its struct sock, or whole. */
static inline void vhca_udp_tunnel_setup(struct net *net, struct socket *sock,
					 struct udp_tunnel_sock_cfg *cfg)
{
#ifdef VHCA_HAVE_UDP_TUNNEL_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

static inline void vhca_udp_tunnel_release(struct socket *sock)
{
#ifdef VHCA_HAVE_UDP_TUNNEL_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

static inline void vhca_vm_flags_mod(struct vm_area_struct *vma,
				     vm_flags_t set, vm_flags_t clear)
{
#ifdef VHCA_HAVE_VM_FLAGS_MOD
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/* Only a kernel that keeps the mark has anything to mark. */
static inline void vhca_mark_name_assigned_by_user(struct ib_device *ibdev)
{
#ifdef VHCA_HAVE_IB_MARK_NAME_ASSIGNED_BY_USER
	ib_mark_name_assigned_by_user(ibdev);
#endif
}

#endif /* VHCA_COMPAT_H */
