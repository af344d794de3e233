// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* create_cq takes the uverbs attribute bundle (6.11); a udata before. */
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

static int vhca_probe_create_cq(struct ib_cq *cq,
				const struct ib_cq_init_attr *attr,
				struct uverbs_attr_bundle *attrs)
{
	return 0;
}

const struct ib_device_ops vhca_probe_ops = {
	.create_cq = vhca_probe_create_cq,
};
