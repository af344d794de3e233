#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Steering and netfilter, in one guest: vhca0 on veth1 in network
# namespace c1, rxe0 on its peer veth0 in the initial one, so their
# packets cross a wire (rxe binds UDP 4791 in the initial namespace, vhca
# in c1).  An nftables rule in c1 drops UDP 4791 on input.  With the
# module parameter steer=0, vhca0 receives through its UDP socket, after
# netfilter: the rule stops an RC pingpong, and without it the same
# pingpong goes through the socket.  With steering on (the default), the
# rule does not apply, as documented (Documentation/security.md).
# Then vhca beside rxe in one namespace: a steered device on another
# netdev works on the wire, one on rxe's netdev is refused, and one that
# is not steered is refused while rxe holds UDP 4791, and holds it itself
# otherwise.
. tests/guest/lib/lib.sh
tap_plan 35

in_c1() { ip netns exec c1 "$@"; }
# v4gid DEV HOST [NET]: the GID index of 10.NET.0.HOST (NET 77 unless said)
v4gid() { gid_of "$1" "10.${3:-77}.0.$2"; }
has_v4gid() { [ -n "$(v4gid "$@")" ]; }
# rc_pair [SERVER CLIENT NET]: an RC pingpong, server on SERVER (vhca0) in
# c1 at 10.NET.0.2 (77), client on CLIENT (rxe0) at 10.NET.0.1; data
# checked.  Succeeds only if both ends do.
rc_pair() {
	local srv ok=0 s=${1:-vhca0} c=${2:-rxe0} net=${3:-77}
	in_c1 timeout 30 ibv_rc_pingpong -d "$s" -g "$(v4gid "$s" 2 "$net")" \
		-n 50 -s 4096 -m 1024 -c >/tmp/rc-server.log 2>&1 &
	srv=$!
	wait_for 60 in_c1 bash -c 'ss -Hltn "sport = :18515" | grep -q .' ||
		{ echo "no server listening"; ok=1; }
	timeout 30 ibv_rc_pingpong -d "$c" -g "$(v4gid "$c" 1 "$net")" -n 50 \
		-s 4096 -m 1024 -c "10.$net.0.2" >/tmp/rc-client.log 2>&1 ||
		{ echo "client: $?"; ok=1; }
	wait "$srv" || { echo "server: $?"; ok=1; }
	cat /tmp/rc-server.log /tmp/rc-client.log
	! grep -q "invalid data" /tmp/rc-server.log /tmp/rc-client.log || ok=1
	return $ok
}
no_rc_pair() { ! rc_pair "$@"; }
vhca0_del() { in_c1 rdma link del vhca0; }
steer_on() { echo 1 >/sys/module/vhca/parameters/steer; }
rcvd() {
	rdma statistic show link vhca0/1 | tr -s ' ' '\n' |
		grep -A1 -x rcvd_pkts | sed -n 2p
}
vhca0_in_c1() {
	in_c1 rdma link add vhca0 type vhca netdev veth1 &&
		wait_for 20 has_v4gid vhca0 2
}
nft_drop() {
	in_c1 nft add table inet vhcatest &&
		in_c1 nft add chain inet vhcatest input \
			'{ type filter hook input priority 0; }' &&
		in_c1 nft add rule inet vhcatest input udp dport 4791 counter drop
}
nft_dropped() {
	in_c1 nft list chain inet vhcatest input |
		sed -n 's/.*counter packets \([0-9]*\).*/\1/p'
}

ip netns add c1
ip link add veth0 type veth peer name veth1
ip link set veth1 netns c1
ip addr add 10.77.0.1/24 dev veth0
ip link set veth0 up
in_c1 ip link set lo up
in_c1 ip addr add 10.77.0.2/24 dev veth1
in_c1 ip link set veth1 up
check "rxe0 on veth0" bash -c \
	'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev veth0'
check "rxe0 has its IPv4 GID" wait_for 20 has_v4gid rxe0 1
check "vhca loads with steer=0" modprobe vhca steer=0
check_eq "the parameter reads back" "$(cat /sys/module/vhca/parameters/steer)" N
check "vhca0 on veth1 in c1" vhca0_in_c1
check "the kernel log says vhca0 is not steered" \
	bash -c 'dmesg | grep -q "steering off: RoCEv2 goes through the IP stack"'

udp0=$(udp_in c1) rcvd0=$(rcvd)
check "steer=0: RC pingpong rxe0 -> vhca0 in c1" rc_pair
udp=$(($(udp_in c1) - udp0)) got=$(($(rcvd) - rcvd0))
check "steer=0: it came through c1's UDP socket (UDP $udp >= vhca0 $got > 100)" \
	test "$got" -gt 100 -a "$udp" -ge "$got"

check "an nftables rule in c1 drops UDP 4791" nft_drop
check "steer=0: the rule stops the RC pingpong" no_rc_pair
check "steer=0: the rule's counter saw vhca0's packets" \
	test "$(nft_dropped)" -gt 0

check "steering back on for the next link" steer_on
check "vhca0 deleted in c1" vhca0_del
check "vhca0 on veth1 again, steered" vhca0_in_c1
dropped0=$(nft_dropped) udp0=$(udp_in c1) rcvd0=$(rcvd)
check "steer=1: the same pingpong goes through, past the rule" rc_pair
udp=$(($(udp_in c1) - udp0)) got=$(($(rcvd) - rcvd0))
check "steer=1: vhca0 took its packets before netfilter (UDP $udp, vhca0 $got)" \
	test "$got" -gt 100 -a $((udp * 100)) -lt "$got"
check_eq "steer=1: the rule dropped nothing more" "$(nft_dropped)" "$dropped0"

# RoCEv2 to an address of the host that is not the link's netdev: c1's
# dummy interface holds 10.79.0.2, which datagrams reach through veth1
# (the weak host model).  Steering takes only what is for veth1's own
# addresses; these go on to c1's IP stack, whose rule drops them.
in_c1 ip link add dum0 type dummy
in_c1 ip addr add 10.79.0.2/24 dev dum0
in_c1 ip link set dum0 up
ip route add 10.79.0.0/24 via 10.77.0.2 dev veth0
# to_4791 ADDR: 20 UDP datagrams to ADDR's port 4791, a BTH's worth each
to_4791() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(20):
    s.sendto(b"\x04" + bytes(31), (sys.argv[1], 4791))' "$1"
}
# seen: every packet vhca0 counted, taken or refused (the rcvd_ counters)
seen() {
	rdma statistic show link vhca0/1 | awk '{ for (i = 3; i < NF; i++)
		if ($i ~ /^rcvd_/) n += $(i + 1) } END { print n + 0 }'
}
# control SEEN0 DROPPED0: vhca0 counted 20 more, the rule none
control() {
	local n
	for _ in $(seq 50); do
		n=$(($(seen) - $1))
		[ "$n" -ge 20 ] && break
		sleep 0.1
	done
	echo "vhca0 counted $n, the rule $(($(nft_dropped) - $2))"
	[ "$n" -ge 20 ] && [ "$(nft_dropped)" = "$2" ]
}
seen0=$(seen) dropped0=$(nft_dropped)
to_4791 10.79.0.2
sleep 1
check_eq "RoCEv2 to 10.79.0.2 (c1's dum0) arriving on veth1: vhca0 does not take it" \
	"$(($(seen) - seen0))" 0
check_eq "c1's IP stack gets the 20, and its rule drops them" \
	"$(($(nft_dropped) - dropped0))" 20
seen0=$(seen) dropped0=$(nft_dropped)
to_4791 10.77.0.2
check "the control: the same 20 to veth1's 10.77.0.2 are vhca0's, before the rule" \
	control "$seen0" "$dropped0"
ip route del 10.79.0.0/24

# --- beside rxe in one namespace -------------------------------------------
# vhca1 on veth2 in the initial namespace, where rdma_rxe holds UDP 4791,
# and vhca2 on its peer veth3 in c1: a steered device needs no socket.
ip link add veth2 type veth peer name veth3
ip link set veth3 netns c1
ip addr add 10.78.0.1/24 dev veth2
ip link set veth2 up
in_c1 ip addr add 10.78.0.2/24 dev veth3
in_c1 ip link set veth3 up
check "vhca1 on veth2, beside rxe0 in the initial namespace" \
	rdma link add vhca1 type vhca netdev veth2
check "vhca2 on veth3 in c1" in_c1 rdma link add vhca2 type vhca netdev veth3
check "both have their IPv4 GIDs" \
	wait_for 20 bash -c "$(declare -f gid_of v4gid has_v4gid); has_v4gid vhca1 1 78 && has_v4gid vhca2 2 78"
check "RC pingpong vhca1 -> vhca2 in c1, on the wire beside rxe0" \
	rc_pair vhca2 vhca1 78
check "and rxe0 -> vhca0 in c1, with vhca1 beside rxe0" rc_pair
link_refused "vhca3 on rxe0's netdev is refused: EBUSY" \
	"Device or resource busy" \
	"veth0: vhca: rxe0 does RoCE on this netdev already" vhca3 veth0
check "no vhca3 is left behind" test ! -e /sys/class/infiniband/vhca3

# Not steered, a device needs the port: not while rxe has it.
rdma link del vhca1
echo 0 >/sys/module/vhca/parameters/steer
link_refused "steer=0: vhca1 is refused while rxe holds UDP 4791: EADDRINUSE" \
	"Address already in use" \
	"veth2: vhca: not steered, and UDP port 4791 of its namespace is in use" \
	vhca1 veth2
check "no vhca1 is left behind" test ! -e /sys/class/infiniband/vhca1
rdma link del rxe0
rmmod rdma_rxe
check "with rxe gone, steer=0: vhca1 is made and binds UDP 4791" \
	bash -c 'rdma link add vhca1 type vhca netdev veth2 && ss -Hlun "sport = :4791" | grep -q .'
check "rdma_rxe cannot load meanwhile (it binds the port when it loads)" \
	bash -c '! modprobe rdma_rxe'
rdma link del vhca1
check "vhca1 gone, the port is free" bash -c '! ss -Hlun "sport = :4791" | grep -q .'
check "and rdma_rxe loads" modprobe rdma_rxe
steer_on

in_c1 rdma link del vhca2
in_c1 rdma link del vhca0
ip netns del c1
tap_done
