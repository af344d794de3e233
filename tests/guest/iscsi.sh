# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# iSER, sourced by the tests that run it: LIO's ib_isert target (a 64 MiB
# file, set up through configfs as targetcli would) and open-iscsi's
# ib_iser initiator, whose disk gets 8 MiB written and read back.

IQN=iqn.2026-11.org.vhca:target
iser_cfg=/sys/kernel/config/target

# iser_target_up ADDR: the target's iSER portal listens on ADDR:3260
iser_target_up() {
	local tpg=$iser_cfg/iscsi/$IQN/tpgt_1 disk=$iser_cfg/core/fileio_0/disk0
	modprobe ib_isert &&
	{ mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config; } &&
	truncate -s 64M /tmp/iser.img &&
	mkdir -p $disk &&
	echo fd_dev_name=/tmp/iser.img,fd_dev_size=67108864 >$disk/control &&
	echo 1 >$disk/enable &&
	mkdir -p $tpg/lun/lun_0 &&
	ln -s $disk $tpg/lun/lun_0/disk0 &&
	mkdir "$tpg/np/$1:3260" &&
	echo 1 >"$tpg/np/$1:3260/iser" &&
	echo 0 >$tpg/attrib/authentication &&
	echo 1 >$tpg/attrib/generate_node_acls &&
	echo 1 >$tpg/attrib/cache_dynamic_acls &&
	echo 0 >$tpg/attrib/demo_mode_write_protect &&
	echo 1 >$tpg/enable
}

# iser_target_down ADDR: all of it gone again, ib_isert unloaded
iser_target_down() {
	local tpg=$iser_cfg/iscsi/$IQN/tpgt_1
	echo 0 >$tpg/enable
	rmdir "$tpg/np/$1:3260"
	rm -f $tpg/lun/lun_0/disk0
	rmdir $tpg/lun/lun_0 $tpg $iser_cfg/iscsi/$IQN
	rmdir $iser_cfg/core/fileio_0/disk0 $iser_cfg/core/fileio_0
	iser_unload
}

# ib_isert unloaded.  Each connection holds the module until the target's
# connection release work has run, which can be after the initiator's
# logout returned (twohost, Debian's 6.12: "in use" once): 30 s for that,
# then what holds it.
iser_unload() {
	local t0=$SECONDS
	wait_for 30 modprobe -r ib_isert && {
		[ $SECONDS = "$t0" ] || echo "unloaded after $((SECONDS - t0)) s"
		return 0
	}
	modprobe -r ib_isert
	echo "refcnt $(cat /sys/module/ib_isert/refcnt)," \
		"holders: $(ls /sys/module/ib_isert/holders)"
	return 1
}

# the SCSI disk of the iSCSI session, once it has appeared
iser_disk() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$b" ] && basename "$b" && return
	done
	return 1
}

# iser_login ADDR: discovery and login over iSER; the session's disk appears
iser_login() {
	modprobe -a ib_iser sd_mod &&	# no udev here to load sd_mod
	mkdir -p /run/lock/iscsi &&
	{ pgrep -x iscsid >/dev/null || iscsid; } &&
	timeout 60 iscsiadm -m discovery -t st -p "$1" -I iser >/dev/null &&
	timeout 60 iscsiadm -m node -T $IQN -p "$1" -I iser --login &&
	wait_for 20 iser_disk
}

# Logging out unbinds the session from the iSCSI transport's work, which
# deletes the SCSI target's device; a runtime-PM request of that device
# still pending then is flushed from a WQ_MEM_RECLAIM work, and Debian's
# 6.12 warns (check_flush_dependency; seen once, in a twohost run).  With
# runtime PM forbidden first, no request is left pending.
iser_logout() {
	local c
	for c in /sys/class/iscsi_session/session*/device/target*/power/control \
		 /sys/class/iscsi_session/session*/device/target*/*/power/control; do
		[ ! -e "$c" ] || echo on >"$c"
	done
	sleep 0.5	# a request queued before runs, and finds nothing to do
	timeout 60 iscsiadm -m node -T $IQN -p "$1" -I iser --logout
}

iser_transport_is_iser() {
	iscsiadm -m session -P 1 | grep -q 'Iface Transport: iser'
}

iser_no_session() { ! iser_disk && ! iscsiadm -m session >/dev/null 2>&1; }

# 8 MiB written to the session's disk and read back, byte for byte
iser_roundtrip() {
	local d
	d=/dev/$(iser_disk) && test -b "$d" &&
	head -c 8M /dev/urandom >/tmp/data &&
	dd if=/tmp/data of="$d" bs=1M oflag=direct status=none &&
	dd if="$d" of=/tmp/back bs=1M count=8 iflag=direct status=none &&
	cmp /tmp/data /tmp/back
}
