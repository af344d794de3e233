# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# NVMe over Fabrics on RDMA, sourced by the tests that run it: an nvmet-rdma
# target with one namespace (a 96 MiB file), and the nvme-rdma host's
# connect, data and fio checks against /dev/nvme0n1.

NQN=vhca-test
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5648ca00-0000-4000-8000-000000000001
nvmet_cfg=/sys/kernel/config/nvmet

# nvme_target_up ADDR USE_SRQ: the target listens on ADDR:4420
nvme_target_up() {
	local cfg=$nvmet_cfg
	[ -f /tmp/ns.img ] || truncate -s 96M /tmp/ns.img
	# configfs's mount point exists once the module (nvmet's) is loaded
	modprobe nvmet-rdma use_srq="$2" &&
	{ mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config; } &&
	mkdir $cfg/subsystems/$NQN &&
	echo 1 >$cfg/subsystems/$NQN/attr_allow_any_host &&
	mkdir $cfg/subsystems/$NQN/namespaces/1 &&
	echo -n /tmp/ns.img >$cfg/subsystems/$NQN/namespaces/1/device_path &&
	# the file backend opens it O_DIRECT, which tmpfs has from 6.6 on;
	# before, it must go through the page cache
	{ dd if=/dev/zero of=/tmp/ns.img bs=4k count=1 conv=notrunc oflag=direct \
		status=none 2>/dev/null ||
		echo 1 >$cfg/subsystems/$NQN/namespaces/1/buffered_io; } &&
	echo 1 >$cfg/subsystems/$NQN/namespaces/1/enable &&
	mkdir $cfg/ports/1 &&
	echo rdma >$cfg/ports/1/addr_trtype && echo ipv4 >$cfg/ports/1/addr_adrfam &&
	echo "$1" >$cfg/ports/1/addr_traddr && echo 4420 >$cfg/ports/1/addr_trsvcid &&
	ln -s $cfg/subsystems/$NQN $cfg/ports/1/subsystems/$NQN
}

nvme_target_down() {
	local cfg=$nvmet_cfg
	rm -f $cfg/ports/1/subsystems/$NQN
	rmdir $cfg/ports/1 2>/dev/null
	echo 0 >$cfg/subsystems/$NQN/namespaces/1/enable 2>/dev/null
	rmdir $cfg/subsystems/$NQN/namespaces/1 $cfg/subsystems/$NQN 2>/dev/null
	modprobe -r nvmet-rdma
}

# nvme_connect ADDR [OPTION]...: the host connects and the namespace
# appears; the options go to nvme connect
nvme_connect() {
	local addr=$1
	shift
	modprobe nvme-rdma &&
	timeout 60 nvme connect -t rdma -a "$addr" -s 4420 -n $NQN \
		--hostnqn=$HOSTNQN "$@" &&
		wait_for 10 test -b /dev/nvme0n1
}

# 8 MiB written and read back, byte for byte (a block device: dd or fio
# would happily create a file of that name)
nvme_roundtrip() {
	test -b /dev/nvme0n1 &&
	head -c 8M /dev/urandom >/tmp/data &&
	dd if=/tmp/data of=/dev/nvme0n1 bs=1M oflag=direct status=none &&
	dd if=/dev/nvme0n1 of=/tmp/back bs=1M count=8 iflag=direct status=none &&
	cmp /tmp/data /tmp/back
}

# nvme_fio SIZE: two writers on disjoint SIZE ranges, block sizes up to
# 128 KiB (fast-register MRs of many pages), QD16, every block read back
# and checked
nvme_fio() {
	test -b /dev/nvme0n1 || return
	timeout 300 fio --name=vhca --filename=/dev/nvme0n1 --direct=1 \
		--ioengine=libaio --rw=randwrite --bsrange=4k-128k --iodepth=16 \
		--numjobs=2 --size="$1" --offset_increment="$1" --verify=crc32c \
		--verify_fatal=1 --group_reporting --output=/tmp/fio.log ||
		{ tail -n 20 /tmp/fio.log; return 1; }
}

# nvme_ios: reads and writes /dev/nvme0n1 has completed
nvme_ios() { awk '{ print $1 + $5 }' /sys/block/nvme0n1/stat 2>/dev/null; }
# nvme_ios_past N: more than N
nvme_ios_past() { [ "$(nvme_ios)" -gt "$1" ]; }

# nvme_load: fio at QD32 on /dev/nvme0n1 in the background, for up to two
# minutes, once its I/O is seen moving (check runs it in a subshell: the
# PID is in /tmp/load.pid)
nvme_load() {
	local n0
	n0=$(nvme_ios) || return
	fio --name=load --filename=/dev/nvme0n1 --direct=1 --ioengine=libaio \
		--rw=randrw --bs=64k --iodepth=32 --numjobs=2 --time_based \
		--runtime=120 --output=/tmp/load.log >/dev/null 2>&1 &
	echo $! >/tmp/load.pid
	wait_for 60 nvme_ios_past $((n0 + 200))
}

# nvme_load_ends: fio is gone within 120 s: 4 times nvme's I/O timeout
# (30 s), which a request caught in a teardown may have to wait out; a
# debug kernel beside a second lane of tests took more than 90 s once
nvme_load_ends() { timeout 120 tail --pid="$(cat /tmp/load.pid)" -f /dev/null; }

# nvme_killed_load: SIGKILL to fio with its requests in flight; it is
# gone within 120 s (exit waits for the block layer to finish them)
nvme_killed_load() {
	nvme_load || return
	pkill -KILL -x fio	# every job, not only the parent
	nvme_load_ends
}
