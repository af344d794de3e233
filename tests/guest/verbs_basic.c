// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The provider through plain libibverbs: device list, context, device and
 * port queries, PDs, and EOPNOTSUPP from verbs vhca does not have yet.
 * Prints TAP.  Usage: verbs_basic DEVICE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"


int main(int argc, char **argv)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_device_attr_ex attr = {};
	struct ibv_port_attr port = {};
	struct ibv_context *ctx;
	struct ibv_pd *pd[64];
	struct ibv_srq_init_attr srq_attr = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	union ibv_gid gid;
	static char buf[4096];
	int i, num, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(&num);
	check(list != NULL, "ibv_get_device_list");
	for (i = 0; list && i < num; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			dev = list[i];
	check(dev != NULL, "%s is listed", argv[1]);
	if (!dev)
		return 1;
	check(ibv_get_device_guid(dev) != 0, "device has a node GUID");

	ctx = ibv_open_device(dev);
	check(ctx != NULL, "ibv_open_device (errno %d)", ctx ? 0 : errno);
	if (!ctx)
		return 1;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	check(ret == 0, "ibv_query_device_ex returns %d", ret);
	check(attr.orig_attr.node_guid == ibv_get_device_guid(dev),
	      "query_device node_guid matches the device list");
	check(attr.orig_attr.sys_image_guid == attr.orig_attr.node_guid,
	      "sys_image_guid is the node GUID");
	check(attr.orig_attr.phys_port_cnt == 1, "one port");
	check(attr.orig_attr.max_pd == 65536, "max_pd %d", attr.orig_attr.max_pd);
	check(attr.orig_attr.vendor_id == 0xffffff, "vendor_id 0x%x",
	      attr.orig_attr.vendor_id);
	check(attr.orig_attr.atomic_cap == IBV_ATOMIC_HCA,
	      "atomics, atomic against each other (IBV_ATOMIC_HCA)");

	ret = ibv_query_port(ctx, 1, &port);
	check(ret == 0, "ibv_query_port(1) returns %d", ret);
	check(port.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer Ethernet");
	check(port.state == IBV_PORT_ACTIVE, "port ACTIVE (state %d)", port.state);
	check(port.pkey_tbl_len == 1 && port.gid_tbl_len > 0,
	      "pkey_tbl_len 1, gid_tbl_len %d", port.gid_tbl_len);
	ret = ibv_query_port(ctx, 2, &port);
	check(ret != 0, "ibv_query_port(2) fails (%d)", ret);
	ret = ibv_query_gid(ctx, 1, 0, &gid);
	check(ret == 0 && gid.global.subnet_prefix != 0,
	      "GID 0 is the link-local address");

	for (i = 0; i < 64; i++)
		pd[i] = ibv_alloc_pd(ctx);
	for (ret = 0, i = 0; i < 64; i++)
		ret += pd[i] != NULL;
	check(ret == 64, "64 PDs allocated (%d)", ret);
	for (ret = 0, i = 0; i < 64; i++)
		ret += pd[i] && ibv_dealloc_pd(pd[i]) == 0;
	check(ret == 64, "64 PDs freed (%d)", ret);

	pd[0] = ibv_alloc_pd(ctx);
	check(pd[0] != NULL, "PD for the unsupported verbs");

	/* a parent domain: its PD's handle, and the PD outlives it */
	pd[1] = ibv_alloc_parent_domain(ctx, &(struct ibv_parent_domain_init_attr){
		.pd = pd[0] });
	check(pd[1] != NULL, "ibv_alloc_parent_domain of the PD (errno %d)",
	      pd[1] ? 0 : errno);
	ret = pd[1] ? ibv_dealloc_pd(pd[0]) : -1;
	check(ret == EBUSY, "the PD it wraps is not freed before it: EBUSY (%d)",
	      ret);
	errno = 0;
	pd[2] = pd[1] ? ibv_alloc_parent_domain(ctx,
			&(struct ibv_parent_domain_init_attr){ .pd = pd[1] }) :
			NULL;
	check(!pd[2] && errno == EINVAL,
	      "a parent domain of a parent domain: EINVAL (errno %d)", errno);
	mr = pd[1] ? ibv_reg_mr(pd[1], buf, sizeof(buf),
				IBV_ACCESS_LOCAL_WRITE) : NULL;
	check(mr && mr->pd == pd[1] && ibv_dereg_mr(mr) == 0,
	      "an MR registered in the parent domain");
	check(pd[1] && ibv_dealloc_pd(pd[1]) == 0,
	      "the parent domain is freed");

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	check(cq != NULL, "create_cq");
	errno = 0;
	qp = ibv_create_qp(pd[0], &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 } });
	ret = errno;
	check(!qp && ret == EOPNOTSUPP, "raw packet QP: EOPNOTSUPP (errno %d)",
	      ret);
	if (cq)
		ibv_destroy_cq(cq);
	mr = ibv_reg_mr(pd[0], buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	check(mr != NULL, "reg_mr");
	if (mr)
		ibv_dereg_mr(mr);
	srq = ibv_create_srq(pd[0], &srq_attr);
	check(srq != NULL, "create_srq");
	if (srq)
		ibv_destroy_srq(srq);

	check(ibv_dealloc_pd(pd[0]) == 0, "dealloc_pd");
	check(ibv_close_device(ctx) == 0, "ibv_close_device");
	ibv_free_device_list(list);
	return tap_done();
}
