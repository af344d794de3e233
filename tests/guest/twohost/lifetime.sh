# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, the device going away under its users: rdma link
# del under a WRITE server that b's rxe0 writes to; eth1 moved into a
# network namespace, as a container has it, with vhca0 on a macvlan'd
# netdev there (RoCEv2 through the IP stack); the namespace deleted under
# the device, and vhca unloaded.
#
# Sourced by twohost.sh, which runs lifetime_PHASE_a in guest a and
# lifetime_PHASE_b in guest b, in step; PHASE is vhca (b on vhca0) or rxe
# (b on rxe0).

# deleted_server: the same, but the server's device is deleted under it
# (rdma link del) instead: the deletion returns, the server ends (told
# by its device's fatal event, or by its client's end) before its
# timeout and not by a signal, and vhca0 comes back for what follows
deleted_server() {
	local srv ok=0 rc
	T=150 write_server 30 18601 120 || ok=1
	timeout 60 rdma link del vhca0 || { echo "link del: $?"; ok=1; }
	wait "$srv"
	rc=$?
	echo "server exit status $rc"
	# 0 or perftest's 1, not a timeout (124) or a signal (128 + n)
	[ "$rc" -le 1 ] || ok=1
	rdma link add vhca0 type vhca netdev eth1 &&
		wait_for 10 has_v4gid vhca0 || ok=1
	return $ok
}
# deleted_client: b's side of deleted_server, on rxe0.  rxe takes a
# retry_cnt of 7, perftest's, as "retry for ever" (rxe_comp.c), where the
# IBA has 7 retries; so its WRITEs into the void do not fail, and it ends
# when its 30 s are up.  It must have met its server, and end on its own.
deleted_client() {
	local out rc
	write_client rxe0 18601 || return 1
	echo "exit status $rc"
	# 0 or perftest's 1, not a timeout (124) or a signal (128 + n)
	[ "$rc" -le 1 ]
}
# in_c1 CMD...: CMD in guest a's network namespace c1; ports4791 [NS]:
# UDP sockets bound to 4791 in namespace NS (default: the initial one)
in_c1() { ip netns exec c1 "$@"; }
ports4791() {
	${1:+ip netns exec "$1"} ss -Hlun 'sport = :4791' | wc -l
}
# vhca0_gone: no vhca0 (a netdev's departure unregisters it from a work item)
vhca0_gone() { wait_for 20 bash -c '! rdma link show vhca0/1'; }
c1_enter() { ip link set eth1 netns c1 && vhca0_gone; }
c1_link_del() { rdma link del vhca0 && [ "$(ports4791 c1)" = 0 ]; }
# c1_delete: c1 goes with vhca0 on its eth1; eth1 comes home, vhca0 goes,
# and nothing is left to keep vhca from unloading
c1_delete() {
	ip netns del c1 && wait_for 20 test -e /sys/class/net/eth1 &&
		vhca0_gone && modprobe -r vhca
}

lifetime_rxe_a() {
	check "guest a: b reports done" hear all-done
	check "guest a: rdma link del vhca0 under a WRITE server, client rxe0 in b" \
		deleted_server

	# eth1 moves into namespace c1: vhca0 on it goes, as when a netdev
	# is removed, and comes back inside c1 with its port bound there
	ip netns add c1
	check "guest a: eth1 moved into namespace c1 takes vhca0 with it" \
		c1_enter
	in_c1 ip link set lo up
	in_c1 ip link set eth1 up
	in_c1 ip addr add 10.76.1.1/24 dev eth1
	# A macvlan holds eth1's rx_handler, so vhca0 cannot steer there: it
	# receives through the UDP sockets it binds in c1
	check "guest a: a macvlan on eth1 in c1 (eth1's rx_handler is taken)" \
		in_c1 ip link add mv0 link eth1 type macvlan mode bridge
	check "guest a: rdma link add vhca0 on eth1 inside c1" \
		in_c1 rdma link add vhca0 type vhca netdev eth1
	wait_for 10 has_v4gid vhca0
	check "guest a: vhca0 says RoCEv2 goes through the IP stack there" \
		bash -c 'dmesg | grep -q "eth1: vhca: the netdev has an rx_handler already"'
	check_eq "guest a: UDP 4791 is bound in c1 (IPv4, IPv6), not outside" \
		"$(ports4791 c1) $(ports4791)" "2 0"
	check "guest a: rping server on vhca0 in c1, client rxe0 in b" \
		in_c1 timeout 120 rping -s -a 10.76.1.1 -C 20 -S 5000
	rcvd0=$(stat rcvd_pkts) udp0=$(udp_in c1)
	check "guest a: ib_write_bw server on vhca0 in c1, client rxe0 in b" \
		in_c1 timeout 150 ib_write_bw -d vhca0 -x "$(v4gid vhca0)" \
		-m 1024 -s 65536 -n 200 -F
	check "guest a: they came through c1's UDP socket" \
		unsteered "$rcvd0" "$udp0" c1
	check "guest a: rdma link del vhca0 in c1 releases c1's port" \
		c1_link_del
	# and the namespace deleted under a device on its netdev
	in_c1 rdma link add vhca0 type vhca netdev eth1
	check "guest a: deleting c1 under vhca0 takes vhca0 and frees vhca" \
		c1_delete
}

lifetime_rxe_b() {
	check "guest b: tell a we are done" tell 10.76.1.1 all-done
	check "guest b: a WRITE client on rxe0 whose server's vhca0 is deleted connects and ends" \
		deleted_client
	check "guest b: rping client on rxe0 (data checked), server vhca0 in a's namespace c1" \
		retry rp -c 10.76.1.1
	check "guest b: ib_write_bw client on rxe0, server vhca0 in a's namespace c1" \
		retry pt ib_write_bw rxe0 10.76.1.1
}
