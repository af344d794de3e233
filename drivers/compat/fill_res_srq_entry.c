// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* rdma res show srq -d asks the driver for its part (6.2). */
#include <rdma/ib_verbs.h>

static int vhca_probe_fill(struct sk_buff *msg, struct ib_srq *srq)
{
	return 0;
}

const struct ib_device_ops vhca_probe_ops = {
	.fill_res_srq_entry = vhca_probe_fill,
};
