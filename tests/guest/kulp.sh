#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Kernel users of vhca0.  First a test module drives RC, UC and UD QPs,
# each with and without an SRQ, through kernel verbs and ib_drain_qp().
# Then NVMe over Fabrics: the nvme-rdma host and the nvmet-rdma target in
# one guest, connected over vhca0.  It uses kernel QPs, CQs and
# (use_srq=1) SRQs on vhca's rings, the DMA MR, fast registration (REG_MR,
# LOCAL_INV, SEND_WITH_INV) and RDMA READ/WRITE issued by the target.  fio
# is killed with SIGKILL with I/O in flight, and the device is torn down
# under I/O twice: by `rdma link del`, then by `rmmod vhca`.
. tests/guest/lib/lib.sh
tap_plan 74
. tests/guest/nvme.sh

A=10.76.0.1
vhca0_up $A

# --- kernel verbs as a ULP uses them, ib_drain_qp() on every QP type -------
kverbs_run
check_eq "no kernel warning (ib_drain_qp warns when its WR is refused)" \
	"$(dmesg | grep -E 'WARNING|failed to drain|BUG' | head -n 3)" ""
rmmod vhca_kverbs_test

check "nvme-rdma and nvmet load" modprobe -a nvme-rdma nvmet

# When the device goes, the core calls its clients' remove in reverse order
# of registration, so nvmet-rdma (loaded later) lets go first.  That
# disconnects the host, and if the host's error recovery frees its hold on
# the device before nvme-rdma's own remove runs, that remove finds no
# device and deletes nothing: the controller goes on reconnecting until
# ctrl_loss_tmo, 600 s by default.  nvme-rdma does that on any RDMA device;
# 30 s bounds it here.
lose=--ctrl-loss-tmo=30

for srq in 0 1; do
	check "nvmet-rdma target on vhca0 (use_srq=$srq)" nvme_target_up $A $srq
	check "nvme connect -t rdma over vhca0 (use_srq=$srq)" nvme_connect $A $lose
	[ "$srq" = 1 ] &&
		check "the target's queues share vhca SRQs" \
			test "$(rdma res show srq dev vhca0 | grep -c nvmet)" -ge 1
	check "fast-register MRs exist for the host's I/O" \
		test "$(rdma res show mr dev vhca0 | grep -c "comm \[nvme_rdma\]")" -ge 1
	check "8 MiB written and read back byte for byte (use_srq=$srq)" nvme_roundtrip
	check "fio randwrite + crc32c verify, 2 jobs, QD16 (use_srq=$srq)" nvme_fio 32M
	check "SIGKILL to fio with NVMe-oF I/O in flight (use_srq=$srq)" nvme_killed_load
	check "then 8 MiB written and read back byte for byte (use_srq=$srq)" nvme_roundtrip
	[ "$srq" = 1 ] && break
	# the device goes away under a controller doing I/O: nvme-rdma and
	# nvmet-rdma are told to let go, and link del completes
	check "fio running on the controller" nvme_load
	check "rdma link del under NVMe-oF I/O completes" timeout 120 rdma link del vhca0
	check "the controller is gone" wait_for 120 test ! -b /dev/nvme0n1
	check "fio ends" nvme_load_ends
	check "target removed" nvme_target_down
	check "rdma link add vhca0 again" rdma link add vhca0 type vhca netdev eth0
	wait_gid vhca0
done

# the module goes away under I/O: rmmod unregisters the device, with the
# same effect as link del above
check "fio running on the controller" nvme_load
check "rmmod vhca under NVMe-oF I/O completes" timeout 120 rmmod vhca
check "the controller is gone" wait_for 120 test ! -b /dev/nvme0n1
check "fio ends" nvme_load_ends
check_eq "no vhca device is left" "$(rdma link show | grep -c vhca)" 0
nvme_target_down
check "nvme-rdma unloads" modprobe -r nvme-rdma
tap_done
