// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A positive control for the debug guest: one real fault, so that the
 * harness can show a KASAN report or a lockdep splat fails the run.  It
 * does its fault at load and refuses to stay loaded.  Never load it
 * outside that test.
 *
 *   insmod vhca_fault_test.ko fault=kasan	  a read past a kmalloc()
 *   insmod vhca_fault_test.ko fault=lockdep  two mutexes taken in both orders
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compiler.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

static char *fault = "";
module_param(fault, charp, 0444);
MODULE_PARM_DESC(fault, "kasan or lockdep");

static DEFINE_MUTEX(vhca_fault_a);
static DEFINE_MUTEX(vhca_fault_b);

static int vhca_fault_kasan(void)
{
	size_t len = 16;
	char *p = kmalloc(len, GFP_KERNEL);
	char c;

	if (!p)
		return -ENOMEM;
	/* hidden from the compiler, which would warn of the overflow */
	OPTIMIZER_HIDE_VAR(len);
	c = READ_ONCE(p[len]);
	pr_info("read %d past the end of a %zu-byte allocation\n", c, len);
	kfree(p);
	return 0;
}

/* A then B, then B then A: one thread, no deadlock, but a lock cycle. */
static void vhca_fault_lockdep(void)
{
	mutex_lock(&vhca_fault_a);
	mutex_lock(&vhca_fault_b);
	mutex_unlock(&vhca_fault_b);
	mutex_unlock(&vhca_fault_a);
	mutex_lock(&vhca_fault_b);
	mutex_lock(&vhca_fault_a);
	mutex_unlock(&vhca_fault_a);
	mutex_unlock(&vhca_fault_b);
	pr_info("took two mutexes in both orders\n");
}

static int __init vhca_fault_init(void)
{
	if (!strcmp(fault, "kasan"))
		return vhca_fault_kasan() ?: -EAGAIN;
	if (!strcmp(fault, "lockdep")) {
		vhca_fault_lockdep();
		return -EAGAIN;
	}
	pr_err("fault=kasan or fault=lockdep\n");
	return -EINVAL;
}
module_init(vhca_fault_init);

MODULE_DESCRIPTION("vhca: a deliberate fault for the debug guest's harness test");
MODULE_LICENSE("Dual BSD/GPL");
