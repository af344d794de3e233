// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* reg_user_mr is given a DMA handle (PCIe TPH steering tags, 6.17). */
#include <rdma/ib_verbs.h>

static struct ib_mr *vhca_probe_reg(struct ib_pd *pd, u64 start, u64 len,
				    u64 iova, int access, struct ib_dmah *dmah,
				    struct ib_udata *udata)
{
	return NULL;
}

const struct ib_device_ops vhca_probe_ops = {
	.reg_user_mr = vhca_probe_reg,
};
