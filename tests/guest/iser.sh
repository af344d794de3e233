#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# iSER on vhca0: LIO's ib_isert target (a 64 MiB file, set up
# through configfs) and open-iscsi's ib_iser initiator in one guest.  The
# initiator logs in over iSER, data goes both ways and is read back, and it
# logs out: RDMA CM, fast registration, SEND_WITH_INV and the target's
# RDMA READ/WRITE, from a second kernel ULP.
. tests/guest/lib.sh

A=10.76.0.1
IQN=iqn.2026-11.org.vhca:target
ip link set eth0 up
ip addr add $A/24 dev eth0
rdma link add vhca0 type vhca netdev eth0 || { fail "rdma link add"; tap_done; exit; }
sleep 1
C=/sys/kernel/config/target
TPG=$C/iscsi/$IQN/tpgt_1
DISK=$C/core/fileio_0/disk0

# LIO through configfs, as targetcli would set it up
target_up() {
	modprobe ib_isert &&
	{ mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config; } &&
	truncate -s 64M /tmp/iser.img &&
	mkdir -p $DISK &&
	echo fd_dev_name=/tmp/iser.img,fd_dev_size=67108864 >$DISK/control &&
	echo 1 >$DISK/enable &&
	mkdir -p $TPG/lun/lun_0 &&
	ln -s $DISK $TPG/lun/lun_0/disk0 &&
	mkdir $TPG/np/$A:3260 &&
	echo 1 >$TPG/np/$A:3260/iser &&
	echo 0 >$TPG/attrib/authentication &&
	echo 1 >$TPG/attrib/generate_node_acls &&
	echo 1 >$TPG/attrib/cache_dynamic_acls &&
	echo 0 >$TPG/attrib/demo_mode_write_protect &&
	echo 1 >$TPG/enable
}

target_down() {
	echo 0 >$TPG/enable
	rmdir $TPG/np/$A:3260
	rm -f $TPG/lun/lun_0/disk0
	rmdir $TPG/lun/lun_0 $TPG $C/iscsi/$IQN
	rmdir $DISK $C/core/fileio_0
}

# the SCSI disk of the iSCSI session, once it has appeared
iser_disk() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$b" ] && basename "$b" && return
	done
	return 1
}

login() {
	modprobe -a ib_iser sd_mod &&	# no udev here to load sd_mod
	mkdir -p /run/lock/iscsi &&
	{ pgrep -x iscsid >/dev/null || iscsid; } &&
	timeout 60 iscsiadm -m discovery -t st -p $A -I iser >/dev/null &&
	timeout 60 iscsiadm -m node -T $IQN -p $A -I iser --login &&
	wait_for 20 iser_disk
}

transport_is_iser() {
	iscsiadm -m session -P 1 | grep -q 'Iface Transport: iser'
}
no_session() { ! iser_disk && ! iscsiadm -m session >/dev/null 2>&1; }

roundtrip() {
	local d
	d=/dev/$(iser_disk) && test -b "$d" &&
	head -c 8M /dev/urandom >/tmp/data &&
	dd if=/tmp/data of="$d" bs=1M oflag=direct status=none &&
	dd if="$d" of=/tmp/back bs=1M count=8 iflag=direct status=none &&
	cmp /tmp/data /tmp/back
}

check "LIO target with an iSER portal on vhca0's address" target_up
check "iscsiadm discovery and login over iSER" login
check "the session's transport is iSER" transport_is_iser
check "both ends' RC QPs are on vhca0" test "$(rdma res show qp |
	grep -c 'link vhca0/1 .*type RC .*comm \[rdma_cm\]')" -ge 2
check "8 MiB written and read back byte for byte over iSER" roundtrip
check "logout" timeout 60 iscsiadm -m node -T $IQN -p $A -I iser --logout
check "no session or disk left" wait_for 20 no_session
check "target removed" target_down
check "ib_iser and ib_isert unload" modprobe -r ib_iser ib_isert
check "rdma link del vhca0" rdma link del vhca0
tap_done
