// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The core resizes user CQs only, through resize_user_cq (7.x). */
#include <rdma/ib_verbs.h>

static int vhca_probe_resize(struct ib_cq *cq, unsigned int cqe,
			     struct ib_udata *udata)
{
	return 0;
}

const struct ib_device_ops vhca_probe_ops = {
	.resize_user_cq = vhca_probe_resize,
};
