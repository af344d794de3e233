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
. tests/guest/lib.sh

in_c1() { ip netns exec c1 "$@"; }
v4gid() {
	grep -slx "0000:0000:0000:0000:0000:ffff:0a4d:000$2" \
		/sys/class/infiniband/"$1"/ports/1/gids/* | head -n 1 |
		xargs -r basename
}
has_v4gid() { [ -n "$(v4gid "$1" "$2")" ]; }
# rc_pair: an RC pingpong, server on vhca0 in c1, client on rxe0; data
# checked.  Succeeds only if both ends do.
rc_pair() {
	local srv ok=0
	in_c1 timeout 30 ibv_rc_pingpong -d vhca0 -g "$(v4gid vhca0 2)" \
		-n 50 -s 4096 -m 1024 -c >/tmp/rc-server.log 2>&1 &
	srv=$!
	wait_for 60 in_c1 bash -c 'ss -Hltn "sport = :18515" | grep -q .' ||
		{ echo "no server listening"; ok=1; }
	timeout 30 ibv_rc_pingpong -d rxe0 -g "$(v4gid rxe0 1)" -n 50 \
		-s 4096 -m 1024 -c 10.77.0.2 >/tmp/rc-client.log 2>&1 ||
		{ echo "client: $?"; ok=1; }
	wait "$srv" || { echo "server: $?"; ok=1; }
	cat /tmp/rc-server.log /tmp/rc-client.log
	! grep -q "invalid data" /tmp/rc-server.log /tmp/rc-client.log || ok=1
	return $ok
}
no_rc_pair() { ! rc_pair; }
vhca0_del() { in_c1 rdma link del vhca0; }
steer_on() { echo 1 >/sys/module/vhca/parameters/steer; }
# UDP datagrams the IP stack delivered in c1
udp_in() { in_c1 cat /proc/net/snmp | awk '/^Udp:/ { if (n++) print $2 }'; }
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

udp0=$(udp_in) rcvd0=$(rcvd)
check "steer=0: RC pingpong rxe0 -> vhca0 in c1" rc_pair
udp=$(($(udp_in) - udp0)) got=$(($(rcvd) - rcvd0))
check "steer=0: it came through c1's UDP socket (UDP $udp >= vhca0 $got > 100)" \
	test "$got" -gt 100 -a "$udp" -ge "$got"

check "an nftables rule in c1 drops UDP 4791" nft_drop
check "steer=0: the rule stops the RC pingpong" no_rc_pair
check "steer=0: the rule's counter saw vhca0's packets" \
	test "$(nft_dropped)" -gt 0

check "steering back on for the next link" steer_on
check "vhca0 deleted in c1" vhca0_del
check "vhca0 on veth1 again, steered" vhca0_in_c1
dropped0=$(nft_dropped) udp0=$(udp_in) rcvd0=$(rcvd)
check "steer=1: the same pingpong goes through, past the rule" rc_pair
udp=$(($(udp_in) - udp0)) got=$(($(rcvd) - rcvd0))
check "steer=1: vhca0 took its packets before netfilter (UDP $udp, vhca0 $got)" \
	test "$got" -gt 100 -a $((udp * 100)) -lt "$got"
check_eq "steer=1: the rule dropped nothing more" "$(nft_dropped)" "$dropped0"

in_c1 rdma link del vhca0
rdma link del rxe0
ip netns del c1
tap_done
