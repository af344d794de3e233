#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in the guest (bench/run.sh --nvme boots it).  Block storage over
# RDMA in one boot: an nvmet subsystem with one null_blk namespace,
# reached through nvme-loop (no transport at all: the limit), then
# through nvme-rdma on vhca0 and on rxe0, host and target in this guest;
# then LIO's iSER target on a second null_blk device, reached by
# open-iscsi's iSER initiator on vhca0 and on rxe0.  fio with libaio and
# direct I/O measures each disk alike.  ROUNDS rounds (2), the transports
# taking turns within each.  Prints "RESULT <loop|vhca0|rxe0> <metric>
# <value>" lines, "n/a" where a run failed.  With AB="A B ...", vhca0
# runs once a round as each of build/ab/A.ko, B.ko ... (in that order,
# then the reverse), and its lines say vhca0-A, vhca0-B ...: builds
# compared in one boot.
. tests/guest/lib/lib.sh

A=10.76.0.1
NQN=vhca-bench
IQN=iqn.2026-11.org.vhca:bench
cfg=/sys/kernel/config
ROUNDS=${ROUNDS:-2}
RUNTIME=${RUNTIME:-10}

result() { echo "RESULT $1 $2 ${3:-n/a}"; }

# fio_job DEV NAME FIO-ARGS...: one time-based job on DEV, its JSON kept
fio_job() {
	local dev=$1 name=$2
	shift 2
	timeout $((RUNTIME + 60)) fio --name="$name" --filename="$dev" \
		--ioengine=libaio --direct=1 --time_based --runtime="$RUNTIME" \
		--ramp_time=2 --numjobs=1 --output-format=json "$@" \
		>/tmp/fio-"$name".json 2>/tmp/fio-"$name".err
}
# fio_get NAME EXPR: a figure of the last run of job NAME (python: j is
# the job's JSON)
fio_get() {
	python3 -c "import json, sys; j = json.load(open('/tmp/fio-$1.json'))['jobs'][0]; print('%.1f' % ($2))" 2>/dev/null
}

# measure WHO DEV: the three jobs on block device DEV, as WHO; PREFIX
# names the protocol (nvme, iser)
measure() {
	local who=$1 dev=$2 p=$PREFIX
	test -b "$dev" || { echo "# $who: no $dev"; return 1; }
	fio_job "$dev" rr32 --rw=randread --bs=4k --iodepth=32 &&
		result "$who" "${p}_4k_randread_qd32_kiops" "$(fio_get rr32 "j['read']['iops'] / 1000")"
	fio_job "$dev" sw8 --rw=write --bs=128k --iodepth=8 &&
		result "$who" "${p}_128k_write_qd8_MBps" "$(fio_get sw8 "j['write']['bw_bytes'] / 1e6")"
	fio_job "$dev" rr1 --rw=randread --bs=4k --iodepth=1 &&
		result "$who" "${p}_4k_randread_qd1_usec" "$(fio_get rr1 "j['read']['lat_ns']['mean'] / 1000")"
}

# --- the target side: null_blk and nvmet ---------------------------------
# two null_blk devices that complete in the submitting context: the
# storage costs next to nothing, what is measured is the path to it
modprobe null_blk nr_devices=2 gb=4 bs=4096 irqmode=0 queue_mode=2 \
	submit_queues=2 || { echo "# no null_blk"; exit 1; }
modprobe -a configfs nvmet nvme-loop nvmet-rdma nvme-rdma ib_isert ib_iser sd_mod
mountpoint -q $cfg || mount -t configfs none $cfg
ip link set eth0 up
ip addr add $A/24 dev eth0
sub=$cfg/nvmet/subsystems/$NQN
{ mkdir $sub $sub/namespaces/1 &&
	echo 1 >$sub/attr_allow_any_host &&
	echo -n /dev/nullb0 >$sub/namespaces/1/device_path &&
	echo 1 >$sub/namespaces/1/enable; } || { echo "# no nvmet subsystem"; exit 1; }

# nvmet_port N TRTYPE [ADDR]: port N of TRTYPE serves the subsystem
nvmet_port() {
	local port=$cfg/nvmet/ports/$1
	mkdir "$port" && echo "$2" >"$port/addr_trtype" || return
	if [ -n "${3:-}" ]; then
		echo ipv4 >"$port/addr_adrfam" && echo "$3" >"$port/addr_traddr" &&
			echo 4420 >"$port/addr_trsvcid" || return
	fi
	ln -s "$sub" "$port/subsystems/$NQN"
}
nvmet_port_down() {
	rm -f "$cfg/nvmet/ports/$1/subsystems/$NQN"
	rmdir "$cfg/nvmet/ports/$1"
}
# nvme_disk: the namespace's block device once connected
nvme_disk() {
	local d
	for d in /sys/block/nvme*n1; do
		# not a path's hidden disk (nvme0c0n1) under native multipath
		[[ ${d##*/} =~ ^nvme[0-9]+n1$ ]] && echo "/dev/${d##*/}" && return
	done
	return 1
}

nvme_loop() {
	nvmet_port 2 loop && nvme connect -t loop -n $NQN >/dev/null &&
		wait_for 10 nvme_disk && PREFIX=nvme measure loop "$(nvme_disk)"
	nvme disconnect -n $NQN >/dev/null
	nvmet_port_down 2
}

# nvme_rdma DEV: the same subsystem over nvme-rdma on DEV
nvme_rdma() {
	nvmet_port 1 rdma $A &&
		timeout 60 nvme connect -t rdma -a $A -s 4420 -n $NQN >/dev/null &&
		wait_for 10 nvme_disk && PREFIX=nvme measure "$1" "$(nvme_disk)"
	nvme disconnect -n $NQN >/dev/null
	nvmet_port_down 1
}

# --- iSER: LIO with an iblock backstore on /dev/nullb1 ---------------------
tpg=$cfg/target/iscsi/$IQN/tpgt_1
disk=$cfg/target/core/iblock_0/nullb1
{ mkdir -p $disk &&
	echo udev_path=/dev/nullb1 >$disk/control &&
	echo 1 >$disk/enable &&
	mkdir -p $tpg/lun/lun_0 &&
	ln -s $disk $tpg/lun/lun_0/nullb1 &&
	echo 0 >$tpg/attrib/authentication &&
	echo 1 >$tpg/attrib/generate_node_acls &&
	echo 1 >$tpg/attrib/cache_dynamic_acls &&
	echo 0 >$tpg/attrib/demo_mode_write_protect &&
	echo 1 >$tpg/enable; } || { echo "# no iSCSI target"; exit 1; }
iser_disk() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$b" ] && echo "/dev/$(basename "$b")" && return
	done
	return 1
}

# iser DEV: a portal with iSER on, the initiator logged in through it
iser() {
	mkdir "$tpg/np/$A:3260" && echo 1 >"$tpg/np/$A:3260/iser" &&
		timeout 60 iscsiadm -m discovery -t st -p $A -I iser >/dev/null &&
		timeout 60 iscsiadm -m node -T $IQN -p $A -I iser --login >/dev/null &&
		wait_for 20 iser_disk && PREFIX=iser measure "$1" "$(iser_disk)"
	timeout 60 iscsiadm -m node -T $IQN -p $A -I iser --logout >/dev/null
	timeout 10 iscsiadm -m node -o delete >/dev/null 2>&1
	rmdir "$tpg/np/$A:3260"
}
mkdir -p /run/lock/iscsi
pgrep -x iscsid >/dev/null || iscsid

# on_dev DEV [WHO]: add the link of DEV (vhca0 or rxe0) on eth0, run
# both protocols on it as WHO (DEV), delete it
on_dev() {
	local type=${1%0}
	if ! { rdma link add "$1" type "$type" netdev eth0 && wait_gid "$1"; }; then
		echo "# no $1"
		return 1
	fi
	nvme_rdma "${2:-$1}"
	iser "${2:-$1}"
	rdma link del "$1"
}

# on_build K: vhca0 as build/ab/K.ko
on_build() {
	if ! { rmmod vhca && insmod "build/ab/$1.ko"; }; then
		echo "# no $1.ko"
		return 1
	fi
	on_dev vhca0 "vhca0-$1"
}

modprobe -a vhca rdma_rxe
for r in $(seq "$ROUNDS"); do
	echo "# round $r"
	nvme_loop
	if [ -n "${AB:-}" ]; then
		ks=$AB
		# shellcheck disable=SC2086 # a list of names
		[ $((r % 2)) = 1 ] || ks=$(printf '%s\n' $AB | tac)
		for k in $ks; do on_build "$k"; done
	else
		on_dev vhca0
	fi
	on_dev rxe0
done
