# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash disable=SC2046,SC2086,SC2154
# (dc_args's and FO_ARGS' words are split on purpose; me and peer: lib/twohost.sh)
# tests/guest/twohost.sh, underlays: RoCEv2 where real networks put it.
# A VLAN of eth1 (its GID on vhca0, tagged frames with the 802.1p
# priority the RDMA CM's traffic class maps to, steering, the CM and
# every QP type data-checked, NVMe-oF over it), a macvlan and an ipvlan
# moved into a container's namespace with a link of their own, a link on
# a bridge, and on a bond of eth1 and eth2 (active-backup, failed over
# under a running transfer, and 802.3ad).  vhca to vhca, then vhca to rxe
# where rxe has the set-up: not in a namespace (rxe's socket is the
# initial namespace's), nor through a failover (the core deletes a bond's
# GIDs and adds them again at each one, and rxe's QP, which looks its
# source GID up by index, stops there).  Needs tools/guest.sh --link2.
#
# Sourced by twohost.sh, which runs underlay_PHASE_a in guest a and
# underlay_PHASE_b in guest b, in step.  Each step undoes what it built.

# vgid DEV: the index of DEV's GID of this guest's VLAN 100 address;
# vdc: dc (twohost.sh's datacheck) from that GID
vgid() { gid_of "$1" "10.100.0.$me"; }
vdc() { GID=vgid dc "$@"; }
# gid_ndev DEV INDEX: the netdev the core gives GID INDEX of DEV
gid_ndev() { cat "/sys/class/infiniband/$1/ports/1/gid_attrs/ndevs/$2"; }
# vlan_gid DEV: DEV has the VLAN's address as a GID, on eth1.100
vlan_gid() {
	local i
	i=$(vgid "$1") && [ -n "$i" ] && [ "$(gid_ndev "$1" "$i")" = eth1.100 ]
}

# vlan_up, vlan_down: VLAN 100 on eth1, 10.100.0.$me/24; its egress map
# makes priority 6 (the CM's for TOS 16: rt_tos2priority()) PCP 5
vlan_up() {
	ip link add link eth1 name eth1.100 type vlan id 100 \
		egress-qos-map 6:5 &&
		ip addr add "10.100.0.$me/24" dev eth1.100 &&
		ip link set eth1.100 up &&
		wait_for 60 ping -c 1 -W 1 "10.100.0.$peer"
}
vlan_down() { ip link del eth1.100; }

# ctl_to DEV: this guest's control address (10.76.1.$me, which tell and
# hear use) onto DEV, and the peer reached again through it
ctl_to() {
	ip addr flush dev eth1
	ip addr add "10.76.1.$me/24" dev "$1" &&
		wait_for 90 ping -c 1 -W 1 "10.76.1.$peer"
}

# capture_start IF FILTER, capture_stop: tcpdump's one-line decode of
# what crosses IF, link-level headers (the 802.1Q tag) included
capture_start() {
	tcpdump -i "$1" -e -nn -l "$2" >/tmp/cap.txt 2>/dev/null &
	echo $! >/tmp/cap.pid
	sleep 1
}
capture_stop() { kill "$(cat /tmp/cap.pid)"; wait "$(cat /tmp/cap.pid)" 2>/dev/null; true; }
# tagged_p5 N: at least N RoCEv2 frames of VLAN 100 with priority 5.
# ib_send_bw's 500 SENDs of 4 packets make 2000 and more; tcpdump loses
# some when the guest is slow (387 seen on the debug kernel), and
# without the priority none has it.
tagged_p5() {
	local n
	n=$(grep -c 'vlan 100, p 5,.*\.4791: UDP' /tmp/cap.txt)
	echo "frames of VLAN 100 with priority 5 to port 4791: $n"
	[ "$n" -ge "$1" ]
}
# rcvd_sum: vhca0's receive counters added up (rcvd_*)
rcvd_sum() {
	rdma statistic show link vhca0/1 | tr -s ' ' '\n' |
		awk 'p ~ /^rcvd_/ { s += $1 } { p = $0 } END { print s + 0 }'
}
# rcvd_past N: rcvd_sum is more than N
rcvd_past() { [ "$(rcvd_sum)" -gt "$1" ]; }
# blast_vid VID: 160 READ responses with a good ICRC, from b to QPNs 16 and
# 17 of a's eth1 address, tagged with VLAN id VID (0: untagged)
blast_vid() {
	python3 tests/guest/pktfuzz.py blast --dev eth1 --victim 10.76.1.1 \
		--peer 10.76.1.1 --src 10.76.1.2 --qpn 16,17 --rounds 5 \
		--vid "$1"
}
# vid_step_a, vid_step_b: b's frames tagged for VLAN 200, which a is not
# on, must reach nothing of vhca0's; the same frames untagged must (eth1
# promiscuous on a, past virtio's VLAN filter, as a switch port in trunk
# mode would deliver them)
vid_step_a() {
	local n0
	ip link set eth1 promisc on
	n0=$(rcvd_sum)
	check "guest a: tell b to send frames tagged for VLAN 200" \
		tell 10.76.1.2 vid200
	check "guest a: b sent them" hear vid-sent
	check_eq "guest a: tagged for a VLAN it is not on, vhca0 counts none" \
		"$(rcvd_sum)" "$n0"
	check "guest a: tell b to send them untagged" tell 10.76.1.2 vid0
	check "guest a: b sent them" hear vid-sent
	check "guest a: untagged, vhca0 counts them" \
		wait_for 10 rcvd_past $((n0 + 159))
	ip link set eth1 promisc off
}
vid_step_b() {
	check "guest b: hears a wants frames for VLAN 200" hear vid200
	check "guest b: 160 frames tagged for VLAN 200 sent" blast_vid 200
	check "guest b: tells a" tell 10.76.1.1 vid-sent
	check "guest b: hears a wants them untagged" hear vid0
	check "guest b: 160 frames sent untagged" blast_vid 0
	check "guest b: tells a" tell 10.76.1.1 vid-sent
}
# relink STEER: vhca0 on eth1 again, made with the module parameter
# steer=STEER, and the VLAN's GID back on it
relink() {
	rdma link del vhca0 && echo "$1" >/sys/module/vhca/parameters/steer &&
		rdma link add vhca0 type vhca netdev eth1 &&
		wait_for 20 vlan_gid vhca0
}
# sendbw_cm DEV [SERVER]: ib_send_bw through the RDMA CM over VLAN 100,
# TOS 16 (which the CM maps to priority 6)
sendbw_cm() {
	local dev=$1
	shift
	timeout "${T:-150}" ib_send_bw -d "$dev" -R -T 16 -s 4096 -n 500 \
		-F "$@"
}
# sendbw_cm_server DEV: sendbw_cm's server, started again after a try
# that served no client, for 180 s.  perftest 4.5 (Debian 12's 4.5+0.17):
# once the server accepted the client's control connection, the client
# connects its data QP, and if the server does not listen for that yet,
# the REQ is rejected and the client tries again with the CM IDs it has
# just destroyed (rdma_cm_client_connection()): it crashes in
# rdma_resolve_addr() or waits for good, and the server for it.  retry
# starts a new client; a new server must be there for it.
sendbw_cm_server() {
	local end=$((SECONDS + 180)) tries=1 out
	until out=$(T=45 sendbw_cm "$@" 2>&1); do
		if [ $SECONDS -ge $end ]; then
			printf '%s\n%d tries\n' "$out" $tries
			return 1
		fi
		tries=$((tries + 1))
	done
	[ $tries = 1 ] || echo "a client served at try $tries"
}
# sendbw_cm_client DEV ARGS: sendbw_cm's client, tried as long as
# sendbw_cm_server tries
sendbw_cm_client() { RETRY_FOR=180 retry sendbw_cm "$@"; }
# ns_dc NS DEV ADDR [SERVER]: datacheck over DEV in namespace NS, from
# its GID of ADDR
ns_dc() {
	local ns=$1 dev=$2 addr=$3
	shift 3
	timeout 300 ip netns exec "$ns" build/tests/datacheck -d "$dev" \
		-g "$(gid_of "$dev" "$addr")" -p 18530 $(dc_args rc) "$@"
}

# container KIND NS DEV: a KIND (macvlan or ipvlan) of eth2 moved into a
# new namespace NS as DEV, 10.77.0.$me/24, with the link vhcac on it
container() {
	ip link set eth2 up &&
		ip netns add "$2" &&
		if [ "$1" = macvlan ]; then
			ip link add "$3" link eth2 type macvlan mode bridge
		else
			ip link add "$3" link eth2 type ipvlan mode l2
		fi &&
		ip link set "$3" netns "$2" &&
		ip -n "$2" addr add "10.77.0.$me/24" dev "$3" &&
		ip -n "$2" link set "$3" up &&
		ip netns exec "$2" rdma link add vhcac type vhca netdev "$3" &&
		wait_for 20 test -n "$(gid_of vhcac "10.77.0.$me")" &&
		wait_for 60 ip netns exec "$2" ping -c 1 -W 1 "10.77.0.$peer"
}
container_down() { rdma link del vhcac; ip netns del "$1"; }
# container_pair KIND: both ends in a KIND, data-checked RC and rping
container_pair() {
	local kind=$1 ns=c$1
	check "guest $VHCA_GUEST: a link on a $kind in a namespace" \
		container "$kind" "$ns" "${kind:0:3}0"
	if [ "$VHCA_GUEST" = a ]; then
		check "guest a: RC data-checked over the $kind (server)" \
			ns_dc "$ns" vhcac 10.77.0.1
		check "guest a: rping -V over the $kind (server)" \
			ip netns exec "$ns" timeout 120 rping -s -a 10.77.0.1 -C 20 -S 5000
	else
		check "guest b: RC data-checked over the $kind (client)" \
			retry ns_dc "$ns" vhcac 10.77.0.2 10.77.0.1
		check "guest b: rping -V over the $kind (client)" \
			retry ip netns exec "$ns" rping -c -a 10.77.0.1 -C 20 -S 5000 -V
	fi
	check "guest $VHCA_GUEST: the $kind's link and namespace removed" \
		container_down "$ns"
}

# ucm_server, ucm_client: ucmatose's 4 connections over VLAN 100.  The
# client starts once a's server listens: a client tried before that
# gave up on the first connection's REJ (no listener) while the server
# had taken another, and the REJ its exit sent for that one ended the
# server (seen in CI).
ucm_server() {
	local srv rc
	timeout 120 ucmatose -b 10.100.0.1 -c 4 >/tmp/ucm.log 2>&1 &
	srv=$!
	# b goes on either way: a server that never listened fails here
	cm_listening ucmatose
	tell 10.76.1.2 ucm-listening
	wait $srv
	rc=$?
	cat /tmp/ucm.log
	return $rc
}
ucm_client() {
	hear ucm-listening && retry timeout 60 ucmatose -s 10.100.0.1 -c 4
}

ul_vlan_vhca_a() {
	local rx0 udp0 t
	check "guest a: VLAN 100 on eth1" vlan_up
	check "guest a: the VLAN's address is a GID of vhca0, on eth1.100" \
		wait_for 20 vlan_gid vhca0
	link_refused "guest a: a link on the VLAN device is refused" \
		"Invalid argument" "vhca: a VLAN device: add the link on eth1" \
		vhca1 eth1.100
	rx0=$(stat rcvd_pkts) udp0=$(udp_in)
	for t in $DC_TYPES; do
		check "guest a: $t data-checked over VLAN 100 (server)" \
			vdc vhca0 $(dc_args "$t")
	done
	check "guest a: the VLAN's RoCEv2 was steered, not through UDP" \
		steered "$rx0" "$udp0"
	check "guest a: rping -V over VLAN 100 (server)" rp -s 10.100.0.1
	check "guest a: ucmatose over VLAN 100 (server)" ucm_server
	capture_start eth1 "vlan 100 and udp port 4791"
	check "guest a: ib_send_bw -R -T 16 over VLAN 100 (server)" \
		sendbw_cm_server vhca0 -p 18600
	capture_stop
	check "guest a: its frames and the peer's leave tagged, priority 5" \
		tagged_p5 100
	vid_step_a
	check "guest a: vhca0 again, with steer=0" relink 0
	rx0=$(stat rcvd_pkts) udp0=$(udp_in)
	check "guest a: rc data-checked over VLAN 100 through the socket (server)" \
		vdc vhca0 $(dc_args rc)
	check "guest a: the VLAN's RoCEv2 came through UDP" \
		unsteered "$rx0" "$udp0"
	check "guest a: vhca0 again, steered" relink 1
	check "guest a: VLAN removed" vlan_down
}

ul_vlan_vhca_b() {
	local t
	check "guest b: VLAN 100 on eth1" vlan_up
	check "guest b: the VLAN's address is a GID of vhca0, on eth1.100" \
		wait_for 20 vlan_gid vhca0
	for t in $DC_TYPES; do
		check "guest b: $t data-checked over VLAN 100 (client)" \
			retry vdc vhca0 $(dc_args "$t") 10.100.0.1
	done
	check "guest b: rping -V over VLAN 100 (client)" \
		retry rp -c 10.100.0.1
	check "guest b: ucmatose over VLAN 100 (client)" ucm_client
	check "guest b: ib_send_bw -R -T 16 over VLAN 100 (client)" \
		sendbw_cm_client vhca0 -p 18600 10.100.0.1
	vid_step_b
	check "guest b: rc data-checked over VLAN 100 to a's socket (client)" \
		retry vdc vhca0 $(dc_args rc) 10.100.0.1
	check "guest b: VLAN removed" vlan_down
}
ul_containers_vhca_a() { container_pair macvlan; container_pair ipvlan; }
ul_containers_vhca_b() { ul_containers_vhca_a; }

# A VLAN between vhca0 and rxe0, NVMe-oF over it; a bridge; bonds.

# link_on STEP TYPE DEV: STEP (words: a function and its arguments), then
# this guest's link (vhca0, or rxe0 for TYPE rxe) added on DEV
link_on() {
	local name=vhca0
	[ "$2" = rxe ] && name=rxe0
	$1 && rdma link add $name type "$2" netdev "$3"
}
# the active-backup failover's transfer: 400 SENDs and WRITEs of up to
# 1 MiB, every byte checked, with an ACK timeout of 4 s (seven retries
# outlast the failover's gap, when one end has switched ports and the
# other not yet)
FO_ARGS="-t rc -o send,write -s 65536 -n 400 -T 20"
# fo_report: what the failover's transfer said, and the bond's ports
fo_report() {
	{
		cat /tmp/fo.log
		grep -E "Slave Interface|MII Status|Currently Active" /proc/net/bonding/bond0
		rdma statistic show link vhca0/1 2>/dev/null
		rdma statistic show link rxe0/1 2>/dev/null
		ip -s link show eth1; ip -s link show eth2; ip -s link show bond0
		dmesg | tail -n 15
	} | sed 's/^/#   /'
}
# eth2_tx, eth2_tx_grew N: packets eth2 sent; more than 1000 past N
eth2_tx() { cat /sys/class/net/eth2/statistics/tx_packets; }
eth2_tx_grew() {
	echo "eth2 sent $(($(eth2_tx) - $1)) packets since the failover"
	[ $(($(eth2_tx) - $1)) -gt 1000 ]
}
# fail_over: bond0's active port made eth2
fail_over() {
	echo eth2 >/sys/class/net/bond0/bonding/active_slave && active_is eth2
}
bridge_up() {
	ip link add br0 type bridge &&
		ip link set br0 up &&
		ip link set eth1 master br0 &&
		ctl_to br0
}
bridge_down() {
	ip link set eth1 nomaster && ip link del br0 && ctl_to eth1
}
# bond_up MODE: bond0 of eth1 and eth2 in MODE, the control address on it
bond_up() {
	ip link add bond0 type bond mode "$1" miimon 100 \
		${2:+lacp_rate fast xmit_hash_policy layer3+4} &&
		ip link set eth1 down && ip link set eth2 down &&
		ip link set eth1 master bond0 && ip link set eth2 master bond0 &&
		ip link set bond0 up &&
		ctl_to bond0
}
bond_down() {
	ip link del bond0 && ip link set eth1 up && ctl_to eth1
}
active_is() { [ "$(cat /sys/class/net/bond0/bonding/active_slave)" = "$1" ]; }
# lacp_up: the 802.3ad aggregator has both ports and a partner
lacp_up() {
	grep -q "Number of ports: 2" /proc/net/bonding/bond0 &&
		! grep -q "Partner Mac Address: 00:00:00:00:00:00" /proc/net/bonding/bond0
}
# has_gid DEV ADDR, no_gid DEV ADDR: whether DEV has ADDR as a GID
has_gid() { [ -n "$(gid_of "$1" "$2")" ]; }
no_gid() { ! has_gid "$@"; }

# not_enslaved: eth1, which vhca0 steers, cannot be made a bridge port
not_enslaved() {
	local rc=0
	ip link add br9 type bridge || return
	ip link set eth1 master br9 && rc=1
	ip link del br9
	return $rc
}

ul_vlan_rxe_a() {
	check "guest a: VLAN 100 on eth1" vlan_up
	check "guest a: RC data-checked over VLAN 100 with rxe (server)" \
		vdc vhca0 $(dc_args rc)
	check "guest a: rping -V over VLAN 100 with rxe (client)" \
		retry rp -c 10.100.0.2
	nvme_host 10.100.0.2 "guest a: NVMe-oF over VLAN 100, target rxe0 in b"
	check "guest a: tell b the NVMe host is done" tell 10.76.1.2 nvme-done
	check "guest a: VLAN removed" vlan_down
}

ul_bridge_rxe_a() {
	local rx0
	check "guest a: eth1 with a steered link cannot join a bridge" \
		not_enslaved
	rdma link del vhca0
	check "guest a: eth1 in bridge br0, vhca0 on br0" link_on bridge_up vhca br0
	check "guest a: vhca0 has br0's address" wait_for 20 has_gid vhca0 10.76.1.1
	link_refused "guest a: a link on a bridge port is refused" \
		"Device or resource busy" "vhca: a port of a bridge or bond" \
		vhca1 eth1
	rx0=$(stat rcvd_pkts)
	check "guest a: RC data-checked through br0 with rxe (server)" \
		dc vhca0 $(dc_args rc)
	check "guest a: UD data-checked through br0 with rxe (client)" \
		retry dc vhca0 $(dc_args ud) 10.76.1.2
	check "guest a: the bridge's RoCEv2 reached vhca0" grew rcvd_pkts $((rx0 + 100))
	rdma link del vhca0
	check "guest a: bridge removed, vhca0 back on eth1" \
		link_on bridge_down vhca eth1
}

ul_bond_vhca_a() {
	local rx0 srv rc
	rdma link del vhca0
	check "guest a: bond0 of eth1 and eth2, active-backup" bond_up active-backup
	rdma link add vhca0 type vhca netdev bond0
	check "guest a: vhca0 has bond0's address" wait_for 20 has_gid vhca0 10.76.1.1
	ip addr add 10.79.0.1/24 dev bond0
	check "guest a: an address added to bond0 becomes a GID" \
		wait_for 20 has_gid vhca0 10.79.0.1
	ip addr del 10.79.0.1/24 dev bond0
	check "guest a: and goes when it is removed" \
		wait_for 20 no_gid vhca0 10.79.0.1
	rx0=$(stat rcvd_pkts)
	dc vhca0 $FO_ARGS >/tmp/fo.log 2>&1 &
	srv=$!
	check "guest a: the failover transfer's server listens" wait_listen 18530
	tell 10.76.1.2 serving
	check "guest a: a transfer from b runs" \
		wait_for 120 grew rcvd_pkts $((rx0 + 2000))
	check "guest a: tell b to fail over" tell 10.76.1.2 failover
	check "guest a: bond0 fails over to eth2" fail_over
	wait $srv
	rc=$?
	fo_report
	check_eq "guest a: the transfer ends with every byte checked" "$rc" 0
	rdma link del vhca0
	check "guest a: bond removed, vhca0 back on eth1" \
		link_on bond_down vhca eth1
}

ul_lacp_rxe_a() {
	rdma link del vhca0
	check "guest a: bond0 of eth1 and eth2, 802.3ad" bond_up 802.3ad lacp
	check "guest a: LACP agrees with the peer on both ports" \
		wait_for 90 lacp_up
	rdma link add vhca0 type vhca netdev bond0
	check "guest a: vhca0 on the 802.3ad bond has its address" \
		wait_for 20 has_gid vhca0 10.76.1.1
	check "guest a: RC data-checked over 802.3ad with rxe (server)" \
		dc vhca0 $(dc_args rc)
	rdma link del vhca0
	check "guest a: bond removed, vhca0 back on eth1" \
		link_on bond_down vhca eth1
}

ul_vlan_rxe_b() {
	check "guest b: VLAN 100 on eth1" vlan_up
	check "guest b: rxe0 has the VLAN's address as a GID" \
		wait_for 20 vlan_gid rxe0
	check "guest b: RC data-checked over VLAN 100 with vhca (client)" \
		retry vdc rxe0 $(dc_args rc) 10.100.0.1
	check "guest b: rping over VLAN 100 with vhca (server)" rp -s 10.100.0.2
	nvme_target 10.100.0.2 1 "guest b: NVMe-oF target on rxe0 over VLAN 100"
	check "guest b: VLAN removed" vlan_down
}

ul_bridge_rxe_b() {
	rdma link del rxe0
	check "guest b: eth1 in bridge br0, rxe0 on br0" link_on bridge_up rxe br0
	check "guest b: RC data-checked through br0 with vhca (client)" \
		retry dc rxe0 $(dc_args rc) 10.76.1.1
	check "guest b: UD data-checked through br0 with vhca (server)" \
		dc rxe0 $(dc_args ud)
	rdma link del rxe0
	check "guest b: bridge removed, rxe0 back on eth1" \
		link_on bridge_down rxe eth1
}

ul_bond_vhca_b() {
	local cl rc tx0
	rdma link del vhca0
	check "guest b: bond0 of eth1 and eth2, active-backup, vhca0 on it" \
		link_on "bond_up active-backup" vhca bond0
	check "guest b: hears a's server is up" hear serving
	dc vhca0 $FO_ARGS 10.76.1.1 >/tmp/fo.log 2>&1 &
	cl=$!
	check "guest b: hears it is time to fail over" hear failover
	tx0=$(eth2_tx)
	check "guest b: bond0 fails over to eth2" fail_over
	wait $cl
	rc=$?
	fo_report
	check_eq "guest b: the transfer ends with every byte checked" "$rc" 0
	check "guest b: the transfer went on through eth2 after the failover" \
		eth2_tx_grew "$tx0"
	rdma link del vhca0
	check "guest b: bond removed, vhca0 back on eth1" \
		link_on bond_down vhca eth1
}

ul_lacp_rxe_b() {
	rdma link del rxe0
	check "guest b: bond0 of eth1 and eth2, 802.3ad, rxe0 on it" \
		link_on "bond_up 802.3ad lacp" rxe bond0
	check "guest b: LACP agrees with the peer on both ports" \
		wait_for 90 lacp_up
	check "guest b: RC data-checked over 802.3ad with vhca (client)" \
		retry dc rxe0 $(dc_args rc) 10.76.1.1
	rdma link del rxe0
	check "guest b: bond removed, rxe0 back on eth1" \
		link_on bond_down rxe eth1
}

# UNDERLAY_STEPS picks steps (both guests must get the same), for work on
# one of them; a run that leaves some out runs fewer checks than planned
ul_steps=" ${UNDERLAY_STEPS:-vlan containers bridge bond lacp} "
ul_run() {
	local step f
	for step in vlan containers bridge bond lacp; do
		f=ul_${step}_$1_$VHCA_GUEST
		[[ $ul_steps == *" $step "* ]] && declare -F "$f" >/dev/null &&
			"$f"
	done
}
underlay_vhca_a() { ul_run vhca; }
underlay_vhca_b() { ul_run vhca; }
underlay_rxe_a() { ul_run rxe; }
underlay_rxe_b() { ul_run rxe; }
