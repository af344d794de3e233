// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vhca module: its workqueues, the rdma link type, the netdev notifier
 * that follows each device's netdev, and debugfs.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "vhca_wire.h"

static int vhca_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return vhca_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops vhca_link_ops = {
	.type = "vhca",
	.newlink = vhca_newlink,
};

static int vhca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct vhca_dev *vdev;

	if (event == NETDEV_PRECHANGEUPPER)
		return vhca_dev_check_upper(ndev, arg);
	vdev = vhca_dev_get_by_netdev(ndev);
	if (!vdev) {
		vhca_recv_vlan_event(ndev, event);
		return NOTIFY_DONE;
	}

	switch (event) {
	case NETDEV_UNREGISTER:
		vhca_recv_unsteer(vdev);
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

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static struct dentry *vhca_debugfs;

static void vhca_debugfs_init(void)
{
	vhca_debugfs = debugfs_create_dir("vhca", NULL);
	vhca_wqe_debugfs_init(vhca_debugfs);
}

static void vhca_debugfs_exit(void)
{
	debugfs_remove_recursive(vhca_debugfs);
}
#else
static void vhca_debugfs_init(void) { }
static void vhca_debugfs_exit(void) { }
#endif

static int __init vhca_init(void)
{
	int err;

	err = vhca_odp_init();
	if (err)
		return err;
	err = vhca_work_init();
	if (err)
		goto err_odp;
	err = vhca_net_init(vhca_recv_udp);
	if (err)
		goto err_work;
	err = register_netdevice_notifier(&vhca_netdev_nb);
	if (err)
		goto err_net;
	vhca_debugfs_init();
	rdma_link_register(&vhca_link_ops);
	return 0;

err_net:
	vhca_net_exit();
err_work:
	vhca_work_exit();
err_odp:
	vhca_odp_exit();
	return err;
}

/*
 * Devices go before the netdev notifier: unregistering the notifier replays
 * NETDEV_UNREGISTER for every netdev, which would queue the unregistration
 * of each device on ib_core's workqueue instead.
 */
static void __exit vhca_exit(void)
{
	rdma_link_unregister(&vhca_link_ops);
	vhca_debugfs_exit();
	vhca_dev_unregister_all();
	unregister_netdevice_notifier(&vhca_netdev_nb);
	vhca_net_exit();
	vhca_dev_wait_gone();
	vhca_work_exit();
	vhca_ring_exit();
	rcu_barrier();	/* kernel MRs are freed by RCU callbacks */
	vhca_odp_exit();
}

module_init(vhca_init);
module_exit(vhca_exit);

MODULE_DESCRIPTION("vhca: RoCEv2 HCA with shared-memory rings");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("vhca");
