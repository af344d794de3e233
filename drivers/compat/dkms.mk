# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# DKMS's build of vhca (dkms.conf): the compatibility probes against the
# kernel being built for, then kbuild.  DKMS adds -jN and KERNELRELEASE to
# a MAKE command that starts with "make", so the probes run from here
# rather than ahead of make in dkms.conf.
#
#   make -f drivers/compat/dkms.mk KDIR=... M=...

all:
	sh drivers/compat/probe.sh $(KDIR) drivers/vhca_probed.h
	$(MAKE) -C $(KDIR) M=$(M) CONFIG_INFINIBAND_VHCA=m modules
