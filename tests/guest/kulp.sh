#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Kernel ULPs on vhca0: NVMe over Fabrics, the nvme-rdma host and the
# nvmet-rdma target in one guest, connected over vhca0.  It uses kernel
# QPs, CQs and (use_srq=1) SRQs on vhca's rings, the DMA MR, fast
# registration (REG_MR, LOCAL_INV, SEND_WITH_INV) and RDMA READ/WRITE
# issued by the target.  Ends with `rdma link del` while a controller is
# connected, which must tear everything down.
. tests/guest/lib.sh

A=10.76.0.1 NQN=vhca-test
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5648ca00-0000-4000-8000-000000000001
ip link set eth0 up
ip addr add $A/24 dev eth0
rdma link add vhca0 type vhca netdev eth0 || { fail "rdma link add"; tap_done; exit; }
sleep 1
check "nvme-rdma and nvmet load" modprobe -a nvme-rdma nvmet
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
truncate -s 96M /tmp/ns.img
cfg=/sys/kernel/config/nvmet

target_up() {
	modprobe nvmet-rdma use_srq="$1" &&
	mkdir $cfg/subsystems/$NQN &&
	echo 1 >$cfg/subsystems/$NQN/attr_allow_any_host &&
	mkdir $cfg/subsystems/$NQN/namespaces/1 &&
	echo -n /tmp/ns.img >$cfg/subsystems/$NQN/namespaces/1/device_path &&
	echo 1 >$cfg/subsystems/$NQN/namespaces/1/enable &&
	mkdir $cfg/ports/1 &&
	echo rdma >$cfg/ports/1/addr_trtype && echo ipv4 >$cfg/ports/1/addr_adrfam &&
	echo $A >$cfg/ports/1/addr_traddr && echo 4420 >$cfg/ports/1/addr_trsvcid &&
	ln -s $cfg/subsystems/$NQN $cfg/ports/1/subsystems/$NQN
}

target_down() {
	rm -f $cfg/ports/1/subsystems/$NQN
	rmdir $cfg/ports/1 2>/dev/null
	echo 0 >$cfg/subsystems/$NQN/namespaces/1/enable 2>/dev/null
	rmdir $cfg/subsystems/$NQN/namespaces/1 $cfg/subsystems/$NQN 2>/dev/null
	modprobe -r nvmet-rdma
}

connect() {
	timeout 60 nvme connect -t rdma -a $A -s 4420 -n $NQN --hostnqn=$HOSTNQN &&
		wait_for 10 test -b /dev/nvme0n1
}

# (a block device: dd or fio would happily create a file of that name)
data_roundtrip() {
	test -b /dev/nvme0n1 &&
	head -c 8M /dev/urandom >/tmp/data &&
	dd if=/tmp/data of=/dev/nvme0n1 bs=1M oflag=direct status=none &&
	dd if=/dev/nvme0n1 of=/tmp/back bs=1M count=8 iflag=direct status=none &&
	cmp /tmp/data /tmp/back
}

# two writers on disjoint halves, block sizes up to 128 KiB (fast-register
# MRs of many pages), every block read back and checked
fio_verify() {
	test -b /dev/nvme0n1 &&
	timeout 300 fio --name=vhca --filename=/dev/nvme0n1 --direct=1 \
		--ioengine=libaio --rw=randwrite --bsrange=4k-128k --iodepth=16 \
		--numjobs=2 --size=32M --offset_increment=32M --verify=crc32c \
		--verify_fatal=1 --group_reporting --output=/tmp/fio.log ||
		{ tail -n 20 /tmp/fio.log; return 1; }
}

for srq in 0 1; do
	check "nvmet-rdma target on vhca0 (use_srq=$srq)" target_up $srq
	check "nvme connect -t rdma over vhca0 (use_srq=$srq)" connect
	[ "$srq" = 1 ] &&
		check "the target's queues share vhca SRQs" \
			test "$(rdma res show srq dev vhca0 | grep -c nvmet)" -ge 1
	check "fast-register MRs exist for the host's I/O" \
		test "$(rdma res show mr dev vhca0 | grep -c "comm \[nvme_rdma\]")" -ge 1
	check "8 MiB written and read back byte for byte (use_srq=$srq)" data_roundtrip
	check "fio randwrite + crc32c verify, 2 jobs, QD16 (use_srq=$srq)" fio_verify
	if [ "$srq" = 0 ]; then
		check "nvme disconnect" nvme disconnect -n $NQN
		check "target removed" target_down
	fi
done

# the device goes away under a connected controller: nvme-rdma and
# nvmet-rdma are told to let go, and link del completes
check "rdma link del with a controller connected completes" timeout 120 rdma link del vhca0
check "the controller is gone" wait_for 30 test ! -b /dev/nvme0n1
target_down
check "nvme-rdma unloads" modprobe -r nvme-rdma
check "vhca unloads" modprobe -r vhca
tap_done
