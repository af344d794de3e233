// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* A timer's callback finds its owner with timer_container_of() (6.16). */
#include <linux/timer.h>

struct vhca_probe_owner {
	struct timer_list t;
};

struct vhca_probe_owner *vhca_probe(struct timer_list *t);
struct vhca_probe_owner *vhca_probe(struct timer_list *t)
{
	struct vhca_probe_owner *o = timer_container_of(o, t, t);

	return o;
}
