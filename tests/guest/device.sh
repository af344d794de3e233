#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The vhca device in one guest: module autoload, rdma link add/show/del,
# ibv_devices/ibv_devinfo through the provider, GIDs, P_Key, the sysfs
# parent, the port following the netdev (admin state, carrier, MTU) with its
# async events, netdev removal, two links, and rmmod with links present.
. tests/guest/lib/lib.sh
tap_plan 714

ib=/sys/class/infiniband

link() { rdma link show "$1/1" 2>/dev/null | sed 's/[[:space:]]*$//'; }
link_state_is() { [ "$(link "$1")" = "link $1/1 state $2" ]; }
gid_index() {
	grep -slx "$2" "$ib/$1"/ports/1/gids/* 2>/dev/null | head -n 1 | xargs -r basename
}
has_gid() { [ -n "$(gid_index "$1" "$2")" ]; }
no_gid() { ! has_gid "$1" "$2"; }
gone() { [ ! -e "$ib/$1" ]; }

# watch_events DEV LOG: hold DEV open and log its async events until unwatch
watch_events() {
	ibv_asyncwatch -d "$1" >"$2" 2>&1 &
	watcher=$!
	# it has the device open before anything happens
	wait_for 10 bash -c "ls -l /proc/$watcher/fd | grep -q /dev/infiniband/uverbs"
}
unwatch() {
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
}

ip link set eth0 up
wait_for 10 grep -q 1 /sys/class/net/eth0/carrier

# --- loading --------------------------------------------------------------
check "vhca is not loaded before first use" bash -c '! grep -q "^vhca " /proc/modules'
check "rdma link add loads vhca through its rdma-link alias" \
	rdma link add vhca0 type vhca netdev eth0
check "the loaded module is the freshly built one (depmod'ed updates/)" \
	bash -c 'grep -q "^vhca " /proc/modules && modinfo -n vhca | grep -q /updates/vhca.ko'
check_eq "rdma link show" "$(link vhca0)" \
	"link vhca0/1 state ACTIVE physical_state LINK_UP netdev eth0"

# --- through libibverbs and the provider -----------------------------------
check_eq "ibv_devices and ibv_devinfo -v print no libibverbs warning" \
	"$(ibv_devices 2>&1 >/dev/null; ibv_devinfo -v 2>&1 >/dev/null)" ""
check "ibv_devices lists vhca0 with its node GUID" \
	bash -c "ibv_devices | grep -qE '^[[:space:]]+vhca0[[:space:]]+$(sed 's/://g' $ib/vhca0/node_guid)\$'"
check_eq "hca_id" "$(ibv_devinfo -d vhca0 | sed -n 's/^hca_id:[[:space:]]*//p')" vhca0
check_eq "transport" "$(field vhca0 transport)" "InfiniBand (0)"
check_eq "link_layer" "$(field vhca0 link_layer)" Ethernet
check_eq "port state" "$(field vhca0 state)" "PORT_ACTIVE (4)"
check_eq "phys_state" "$(field vhca0 phys_state)" "LINK_UP (5)"
check_eq "max_mtu" "$(field vhca0 max_mtu)" "4096 (5)"
check_eq "active_mtu at netdev MTU 1500" "$(field vhca0 active_mtu)" "1024 (3)"
check_eq "sys_image_guid is the node GUID" \
	"$(field vhca0 sys_image_guid)" "$(field vhca0 node_guid)"
check_eq "pkey_tbl_len" "$(field vhca0 pkey_tbl_len)" 1
check_eq "P_Key 0xffff at index 0" "$(cat $ib/vhca0/ports/1/pkeys/0)" 0xffff
# what tools size themselves from
check "device_cap_flags: RC_RNR_NAK_GEN (it sends RNR NAKs)" \
	bash -c "ibv_devinfo -v -d vhca0 | grep -qw RC_RNR_NAK_GEN"
check_eq "max_ah" "$(field vhca0 max_ah)" 65536
check_eq "max_res_rd_atom: 128 for each of 65536 QPs" \
	"$(field vhca0 max_res_rd_atom)" 8388608
check_eq "local_ca_ack_delay" "$(field vhca0 local_ca_ack_delay)" 15
check "node_desc can be set (modify_device)" \
	bash -c "echo 'vhca test node' > $ib/vhca0/node_desc"
check_eq "and reads back" "$(cat $ib/vhca0/node_desc)" "vhca test node"
uverbs_abi() {
	local d
	for d in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$d/ibdev")" = "$1" ] && cat "$d/abi_version"
	done
}
check_eq "uverbs ABI version" "$(uverbs_abi vhca0)" 22088
check_eq "hca_type (what the provider matches on)" "$(cat $ib/vhca0/hca_type)" vhca
check "the device's parent owns the netdev (device/net/eth0)" \
	test -d $ib/vhca0/device/net/eth0
tap_run verbs build/tests/verbs_basic vhca0
tap_run rings build/tests/rings vhca0
tap_run mr build/tests/mr vhca0
tap_run mw build/tests/mw vhca0
# ODP MRs on the same-host engine: faults, invalidations, prefetch
tap_run odp build/tests/odp vhca0
tap_run xrc build/tests/xrc vhca0
# tag matching: tags, phase sync, the races, rendezvous
tap_run tm build/tests/tm vhca0
# ATOMIC WRITE is in the kernel's verbs from 6.2 on (drivers/compat/atomic_write.c)
tap_run atomic build/tests/atomic vhca0 "$(kernel_at_least 6.2 && echo yes || echo no)"
tap_run mcast build/tests/mcast vhca0 eth0
# a process killed with a QP attached: uverbs detaches it, and the
# netdev leaves the group
mcast_killed() {
	local pid
	build/tests/mcast vhca0 eth0 killed >/tmp/mc.out 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q attached /tmp/mc.out && break; sleep 0.1; done
	grep -q attached /tmp/mc.out && grep -q ff020000000000000000000100020003 /proc/net/igmp6 || return 1
	kill -9 $pid
	wait $pid
	for _ in $(seq 100); do
		grep -q ff020000000000000000000100020003 /proc/net/igmp6 || return 0
		sleep 0.1
	done
	return 1
}
check "multicast: a process killed with a QP attached leaves the group" mcast_killed
tap_run qp build/tests/qp vhca0
tap_run send build/tests/send vhca0
tap_run hostile build/tests/hostile vhca0
# isolation's SQD case sends RC to fe80::200:5eff:fe00:53, which no host
# answers: a neighbour entry stands in for the host that is not there
ip -6 neigh replace fe80::200:5eff:fe00:53 lladdr 00:00:5e:00:00:53 \
	dev eth0 nud permanent
tap_run isolation build/tests/isolation vhca0
# `rdma res show srq -d` needs no privilege and reads the SRQ's ring,
# which a resize replaces and frees (it read it unlocked before): 50
# reads while a process resizes an SRQ without pause
srq_res_race() {
	local pid n
	build/tests/isolation vhca0 srq-resize 0 &
	pid=$!
	sleep 0.2
	for n in $(seq 50); do
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			rdma res show srq -d >/dev/null || break
	done
	kill -0 $pid || return 1	# it stopped by itself: a resize failed
	kill -TERM $pid
	wait $pid && [ "$n" = 50 ]
}
check "rdma res show srq -d, unprivileged, 50 times against an SRQ resized without pause" srq_res_race
# no CAP_IPC_LOCK (dropped from the bounding set), 64 KiB of RLIMIT_MEMLOCK
tap_run hostile-memlock setpriv --bounding-set -ipc_lock \
	bash -c "ulimit -l 64 && exec build/tests/hostile vhca0 memlock"

# --- GIDs from the netdev's addresses ---------------------------------------
ip addr add 10.76.0.1/24 dev eth0
ip -6 addr add fd76::1/64 dev eth0 nodad
v4=0000:0000:0000:0000:0000:ffff:0a4c:0001
v6=fd76:0000:0000:0000:0000:0000:0000:0001
check "IPv4 address appears as a GID" wait_for 10 has_gid vhca0 $v4
check "IPv6 address appears as a GID" wait_for 10 has_gid vhca0 $v6
check_eq "IPv4 GID is RoCE v2" \
	"$(cat $ib/vhca0/ports/1/gid_attrs/types/"$(gid_index vhca0 $v4)" 2>&1)" "RoCE v2"
check_eq "IPv4 GID names its netdev" \
	"$(cat $ib/vhca0/ports/1/gid_attrs/ndevs/"$(gid_index vhca0 $v4)" 2>&1)" eth0
tap_run ud build/tests/ud vhca0 "$(gid_index vhca0 $v4)"
ip addr del 10.76.0.1/24 dev eth0
check "removing the address removes its GID" wait_for 10 no_gid vhca0 $v4
check "the IPv6 GID stays" has_gid vhca0 $v6

# --- counters, each provoked ----------------------------------------------
tap_run counters-no-wqe build/tests/counters vhca0 no-wqe
# vhcad on vd0, whose peer nobody answers for: a permanent neighbour entry
# lets UD datagrams to 10.81.0.2 leave; a pfifo of no room drops them all
ip link add vd0 type veth peer name vd1
ip link set vd0 up
ip link set vd1 up
ip addr add 10.81.0.1/24 dev vd0
ip neigh replace 10.81.0.2 lladdr 52:54:00:00:81:02 dev vd0 nud permanent
v4d=0000:0000:0000:0000:0000:ffff:0a51:0001
check "rdma link add vhcad on vd0" rdma link add vhcad type vhca netdev vd0
check "vhcad has vd0's IPv4 GID" wait_for 10 has_gid vhcad $v4d
tc qdisc add dev vd0 root pfifo limit 0
tap_run counters-dropped build/tests/counters vhcad dropped \
	"$(gid_index vhcad $v4d)" 10.81.0.2
tc qdisc del dev vd0 root
tap_run counters-sent build/tests/counters vhcad sent \
	"$(gid_index vhcad $v4d)" 10.81.0.2
# rcvd_queue_full: forged READ responses from vd1 to an RC QP of vhcad in
# RTR, whose requester (the QP's work) takes none of them before RTS: the
# first 1024 wait, the rest are counted (counters.c).  (With the QP in RTS
# and the blast alone on CPU 0 at SCHED_FIFO, the work still ran in the
# blast when the host was busy: 1500 taken, none counted.)
qf_blast() {
	python3 tests/guest/pktfuzz.py blast --dev vd1 --victim 10.81.0.1 \
		--src 10.81.0.2 --qpn "$1" --psns 1500 --rounds 1
}
ip neigh replace 10.81.0.1 lladdr "$(cat /sys/class/net/vd0/address)" \
	dev vd1 nud permanent
rm -f /tmp/qf.in
mkfifo /tmp/qf.in
build/tests/counters vhcad queue-full "$(gid_index vhcad $v4d)" 10.81.0.2 \
	</tmp/qf.in >/tmp/counters-queue-full.tap 2>&1 &
qf_pid=$!
exec {qf_in}>/tmp/qf.in
wait_for 10 grep -q '^# qpn' /tmp/counters-queue-full.tap
check "1500 forged responses blasted at an RC QP in RTR" \
	qf_blast "$(sed -n 's/^# qpn //p' /tmp/counters-queue-full.tap)"
echo 1500 >&"$qf_in"
exec {qf_in}>&-
wait "$qf_pid"
check_eq "counters-queue-full exit status" "$?" 0
tap_import counters-queue-full </tmp/counters-queue-full.tap
rdma link del vhcad
ip link del vd0

# --- beside rxe -------------------------------------------------------------
# A provider must not break other devices: libibverbs consults every
# provider when it matches any device.  A steered vhca device leaves UDP
# port 4791 free, so rdma_rxe (which binds it when it loads) loads beside
# it; one netdev carries one RoCE stack.  steer.sh has both on a wire.
pingpong() {
	ibv_rc_pingpong -d "$1" -g "$2" -n 20 >/tmp/pp-server.log 2>&1 &
	local srv=$! rc
	wait_listen 18515
	timeout 60 ibv_rc_pingpong -d "$1" -g "$2" -n 20 127.0.0.1 || return 1
	wait $srv
}
ip link add xv0 type veth peer name xv1
ip addr add 10.79.0.1/24 dev xv0
ip link set xv0 up
ip link set xv1 up
xv0gid=0000:0000:0000:0000:0000:ffff:0a4f:0001
check "rdma_rxe loads while vhca0 is on eth0 (UDP 4791 is free)" \
	modprobe rdma_rxe
rdma link del vhca0
if rdma link add rxe0 type rxe netdev eth0; then
	link_refused "vhca0 on rxe0's netdev is refused: EBUSY" \
		"Device or resource busy" \
		"vhca: rxe0 does RoCE on this netdev already" vhca0 eth0
	check "and no vhca0 is left behind" gone vhca0
	check "vhca0 on another netdev beside rxe0" \
		rdma link add vhca0 type vhca netdev xv0
	wait_for 10 has_gid vhca0 $xv0gid
	check_eq "ibv_devices succeeds and lists both, with no warning" \
		"$(ibv_devices 2>&1 | awk 'NR > 2 { print $1 }' | sort | tr '\n' ' '; echo "rc=${PIPESTATUS[0]}")" \
		"rxe0 vhca0 rc=0"
	check "ibv_rc_pingpong on rxe0 works with vhca's provider installed" \
		pingpong rxe0 1
	check "and on vhca0 beside it" \
		pingpong vhca0 "$(gid_index vhca0 $xv0gid)"
	rdma link del vhca0
	check_eq "with rxe0 alone, ibv_devices succeeds" \
		"$(ibv_devices 2>&1 | awk 'NR > 2 { print $1 }'; echo "rc=${PIPESTATUS[0]}")" \
		"rxe0
rc=0"
	rdma link del rxe0
else
	fail "rxe0 on eth0, for the tests beside rxe"
fi
rmmod rdma_rxe
ip link del xv0
rdma link add vhca0 type vhca netdev eth0
wait_for 10 has_gid vhca0 $v6

# --- the port follows the netdev, with async events ------------------------
watch_events vhca0 /tmp/async.log
ip link set eth0 down
check "admin down: DOWN, DISABLED" wait_for 5 link_state_is vhca0 "DOWN physical_state DISABLED netdev eth0"
ip link set eth0 up
check "admin up: ACTIVE, LINK_UP" wait_for 10 link_state_is vhca0 "ACTIVE physical_state LINK_UP netdev eth0"
check "IBV_EVENT_PORT_ERR delivered" wait_for 5 grep -q PORT_ERR /tmp/async.log
check "IBV_EVENT_PORT_ACTIVE delivered" wait_for 5 grep -q PORT_ACTIVE /tmp/async.log

# --- the device goes away while a process holds it open --------------------
check "rdma link del completes while a process has the device open" \
	timeout 20 rdma link del vhca0
check "that process is told: IBV_EVENT_DEVICE_FATAL" \
	wait_for 5 grep -q DEVICE_FATAL /tmp/async.log
unwatch
check "vhca0 is gone" gone vhca0
check "and can be added again" rdma link add vhca0 type vhca netdev eth0

# The same with a CQ and an SRQ mapped and in use.  The held QP connects
# to itself through GID 0, which the new vhca0 gets from eth0 shortly,
# once its port is up.
wait_for 10 link_state_is vhca0 "ACTIVE physical_state LINK_UP netdev eth0"
wait_gid vhca0
# GID 0 is eth0's link-local address, which the admin down and up above
# made anew: until its DAD is over it resolves to no MAC, and the QP's
# move to RTR times out (seen when this ran on an idle host)
wait_for 10 bash -c '! ip -6 addr show dev eth0 scope link tentative | grep -q inet6'
coproc HOLD { build/tests/rings vhca0 hold 2>&1; }
read -r -t 30 ready hold_qpn <&"${HOLD[0]}"
check_eq "a process holds a CQ, an SRQ, an MR and an RC QP that sent 3 SENDs to itself on vhca0" \
	"$ready" ready
[ "$ready" = ready ] || echo "#   $ready $hold_qpn"
# rdma res -d: the driver's part of each entry (drivers/vhca_restrack.c)
# res_d KIND PATTERN [FILTER...]: an object's attributes on one line
# (trixie's rdma wraps a QP's), searched for PATTERN (grep -E)
res_d() {
	local kind=$1 pat=$2 out filter="dev vhca0"
	shift 2
	[ "$kind" = qp ] && filter="link vhca0/1"
	out=$(rdma res show "$kind" $filter "$@" -dd)
	echo "$out"
	tr -s '\n ' '  ' <<<"$out" | grep -Eq -- "$pat"
}
check "rdma res show cq -d: its ring, nothing produced or consumed, not armed" \
	res_d cq "drv_depth 16 drv_prod 0 drv_cons 0 drv_armed no drv_overflowed 0"
# the core asks drivers for an SRQ's details from 6.2 on
# (drivers/compat/fill_res_srq_entry.c)
if kernel_at_least 6.2; then
	check "rdma res show srq -d: its ring, one WQE posted, none taken" \
		res_d srq "drv_depth 16 drv_prod 1 drv_cons 0 drv_limit 0"
else
	skip 1 "$(uname -r)'s core asks no driver for an SRQ's details"
fi
check "rdma res show mr -d: a valid user MR" res_d mr "drv_kind user drv_valid 1"
check "rdma res show qp -d: QP1's engine, rings and PSN" \
	res_d qp "lqpn 1 .*drv_engine idle drv_sq_depth [0-9]+ drv_sq_prod [0-9]+ drv_sq_cons [0-9]+ drv_rq_depth [0-9]+ drv_rq_prod [0-9]+ drv_rq_cons [0-9]+ drv_expected_psn 0x[0-9a-f]+" lqpn 1
# the held QP: 8-slot rings, 3 WQEs through each; its peer (itself) is
# on this host, so no PSN, MSN or window of the wire's is shown
check "rdma res show qp -d: a data QP's path and rings, as its 3 SENDs to itself left them" \
	res_d qp "lqpn $hold_qpn .*drv_engine idle drv_path local drv_sq_depth 8 drv_sq_prod 3 drv_sq_cons 3 drv_rq_depth 8 drv_rq_prod 3 drv_rq_cons 3 ?$" \
	lqpn "$hold_qpn"
check "rdma link del completes while its rings are mapped" \
	timeout 20 rdma link del vhca0
hold_pid=$HOLD_PID
echo go >&"${HOLD[1]}"
read -r -t 30 after <&"${HOLD[0]}"
wait "$hold_pid"
check_eq "the process survives using its stale rings, polls nothing and tears down (every verb 0)" \
	"$?" 0
echo "#   $after"
check "vhca0 can be added again" rdma link add vhca0 type vhca netdev eth0

# --- a second link, carrier and MTU on a veth -------------------------------
ip link add veth0 type veth peer name veth1
ip link set veth0 up
ip link set veth1 up
check "second link on another netdev" rdma link add vhca1 type vhca netdev veth0
check_eq "both links listed" "$(rdma link show | sed 's/[[:space:]]*$//' | sort)" \
	"link vhca0/1 state ACTIVE physical_state LINK_UP netdev eth0
link vhca1/1 state ACTIVE physical_state LINK_UP netdev veth0"
check "node GUIDs of the two links differ" \
	test "$(cat $ib/vhca0/node_guid)" != "$(cat $ib/vhca1/node_guid)"
check "a second vhca on eth0 is refused" \
	bash -c '! rdma link add vhca9 type vhca netdev eth0'
check "the refused link left nothing behind" gone vhca9
check "a taken device name is refused" \
	bash -c '! rdma link add vhca0 type vhca netdev veth1'
check "veth1 stays free for a link of its own" \
	bash -c 'rdma link add vhca8 type vhca netdev veth1 && rdma link del vhca8' 
link_refused "a non-Ethernet netdev (lo) is refused: EINVAL" \
	"Invalid argument" "lo: vhca: not an Ethernet device" vhcalo lo
ip link add link veth1 name veth1.5 type vlan id 5
link_refused "a VLAN is refused: EINVAL" "Invalid argument" \
	"veth1.5: vhca: a VLAN device: add the link on veth1," vhcav veth1.5
ip link del veth1.5
check "a missing netdev is refused" \
	bash -c '! rdma link add vhcax type vhca netdev nosuchdev'
ip link set veth1 down
check "peer down (no carrier): DOWN, POLLING" \
	wait_for 5 link_state_is vhca1 "DOWN physical_state POLLING netdev veth0"
ip link set veth1 up
check "carrier back: ACTIVE" \
	wait_for 10 link_state_is vhca1 "ACTIVE physical_state LINK_UP netdev veth0"
ip link set veth0 mtu 9000
check_eq "active_mtu at netdev MTU 9000" "$(field vhca1 active_mtu)" "4096 (5)"
ip link set veth0 mtu 4096
check_eq "active_mtu at netdev MTU 4096 (headers do not fit 4096)" \
	"$(field vhca1 active_mtu)" "2048 (4)"
# each row of the admin guide's MTU table at both its edges (the netdev
# MTU less 96 bytes of headers)
mtu_edges() {
	local m want got bad=0
	for m in 4192:"4096 (5)" 4191:"2048 (4)" 2144:"2048 (4)" 2143:"1024 (3)" \
		1120:"1024 (3)" 1119:"512 (2)" 608:"512 (2)" 607:"256 (1)" 352:"256 (1)"; do
		want=${m#*:}
		ip link set veth0 mtu "${m%%:*}" || return 1
		got=$(field vhca1 active_mtu)
		echo "netdev MTU ${m%%:*}: active_mtu $got"
		[ "$got" = "$want" ] || { echo "  wanted $want"; bad=1; }
	done
	return $bad
}
check "active_mtu at each edge of the MTU table, 4192 down to 352" mtu_edges
check "at 352 the port is ACTIVE" \
	link_state_is vhca1 "ACTIVE physical_state LINK_UP netdev veth0"
ip link set veth0 mtu 351
check "at 351, too small for RoCE's smallest MTU: DOWN" \
	wait_for 5 link_state_is vhca1 "DOWN physical_state POLLING netdev veth0"
ip link set veth0 mtu 1500
check "MTU 1500 again: ACTIVE" \
	wait_for 5 link_state_is vhca1 "ACTIVE physical_state LINK_UP netdev veth0"
check_eq "active_mtu back to 1024" "$(field vhca1 active_mtu)" "1024 (3)"

# --- netdev removal, link del, rmmod with links ----------------------------
ip link del veth0
check "deleting the netdev unregisters its device" wait_for 10 gone vhca1
check "vhca0 is unaffected" link_state_is vhca0 "ACTIVE physical_state LINK_UP netdev eth0"
check "rdma link del vhca0" rdma link del vhca0
check "vhca0 is gone" gone vhca0
check "the name can be used again" rdma link add vhca0 type vhca netdev eth0
ip link add veth2 type veth peer name veth3
ip link set veth2 up
ip link set veth3 up
check "a link on veth2 too" rdma link add vhca2 type vhca netdev veth2
watch_events vhca2 /tmp/async2.log
check "rmmod vhca with two links present and one in use" timeout 30 rmmod vhca
check "the user of vhca2 is told: IBV_EVENT_DEVICE_FATAL" \
	wait_for 5 grep -q DEVICE_FATAL /tmp/async2.log
unwatch
check "no device left" bash -c "[ -z \"\$(ls $ib)\" ]"
check_eq "rdma link show is empty" "$(rdma link show)" ""
check "modprobe vhca and add a link again" \
	bash -c 'modprobe vhca && rdma link add vhca0 type vhca netdev eth0'
check "ACTIVE after reload" link_state_is vhca0 "ACTIVE physical_state LINK_UP netdev eth0"
rdma link del vhca0
rmmod vhca

tap_done
