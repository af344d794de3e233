// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* vm_flags is written through vm_flags_mod() (6.3); before, directly. */
#include <linux/mm.h>

void vhca_probe(struct vm_area_struct *vma);
void vhca_probe(struct vm_area_struct *vma)
{
	vm_flags_mod(vma, VM_DONTEXPAND, VM_MAYEXEC);
}
