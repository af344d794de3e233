// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The netdev side of vhca: the port follows its netdev's state, and a device
 * goes away with its netdev.
 */
#include <linux/netdevice.h>

#include "vhca.h"

static int vhca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct vhca_dev *vdev;

	vdev = vhca_dev_get_by_netdev(ndev);
	if (!vdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		/*
		 * rtnl is held here and unregistration sleeps on things that
		 * want it, so it runs from the core's unregistration work.
		 * The netdev's own unregistration waits for the reference the
		 * core holds until then.
		 */
		ib_unregister_device_queued(&vdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		vhca_port_update(vdev);
		break;
	default:
		break;
	}

	ib_device_put(&vdev->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block vhca_netdev_nb = {
	.notifier_call = vhca_netdev_event,
};

int vhca_net_init(void)
{
	return register_netdevice_notifier(&vhca_netdev_nb);
}

void vhca_net_exit(void)
{
	unregister_netdevice_notifier(&vhca_netdev_nb);
}
