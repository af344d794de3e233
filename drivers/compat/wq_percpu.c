// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* Workqueues say they are per-CPU, the default before it had a flag (6.17). */
#include <linux/workqueue.h>

int vhca_probe(void);
int vhca_probe(void)
{
	return WQ_PERCPU;
}
