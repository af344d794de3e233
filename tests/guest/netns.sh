#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Network namespaces on one host.  The same-host engine must follow the
# sender's namespace: an address is this host's only if it is local there.
#
#   ns x: vx0 10.78.0.1 ---- vy0 10.78.0.2 :ns y    (x's peer, on the wire)
#   ns z: vz0 10.78.0.2 ---- vz1                    (the same address, elsewhere)
#
# vhcax, vhcay and vhcaz on vx0, vy0 and vz0.  From x, 10.78.0.2 is y,
# across the veth: UD, UC and RC traffic must cross it (vy0 counts it),
# never be handed to vhcay or vhcaz by the engine.  Then `rdma system set
# netns exclusive`: a device moved to a namespace is seen there only.
. tests/guest/lib/lib.sh
tap_plan 27

in_ns() { local n=$1; shift; ip netns exec "$n" "$@"; }
rx() { in_ns "$1" cat "/sys/class/net/$2/statistics/rx_packets"; }
# ns_gid_of NS DEV A.B.C.D: gid_of as a process in NS sees DEV
ns_gid_of() { in_ns "$1" bash -c ". tests/guest/lib/lib.sh >/dev/null; gid_of $2 $3"; }

# topology: the namespaces, veths and addresses of the picture above
topology() {
	local l
	ip netns add x
	ip netns add y
	ip netns add z
	ip link add vx0 netns x type veth peer name vy0 netns y
	ip link add vz0 netns z type veth peer name vz1 netns z
	in_ns x ip addr add 10.78.0.1/24 dev vx0
	in_ns y ip addr add 10.78.0.2/24 dev vy0
	in_ns z ip addr add 10.78.0.2/24 dev vz0
	for l in x:vx0 y:vy0 z:vz0 z:vz1 x:lo y:lo z:lo; do
		in_ns "${l%%:*}" ip link set "${l#*:}" up
	done
}

# links: vhcaz, vhcay, vhcax, each added in its netdev's namespace, as
# its owner would add it; gx and gy their IPv4 GIDs' indexes as x and y
# see them
links() {
	local d
	for d in z y x; do
		check "$1: rdma link add vhca$d on v${d}0 (in ns $d)" \
			in_ns "$d" rdma link add "vhca$d" type vhca netdev "v${d}0"
	done
	wait_for 20 test -n "$(ns_gid_of x vhcax 10.78.0.1)"
	wait_for 20 test -n "$(ns_gid_of y vhcay 10.78.0.2)"
	gx=$(ns_gid_of x vhcax 10.78.0.1)
	gy=$(ns_gid_of y vhcay 10.78.0.2)
}

# unlink_all MODE: each link deleted where it is: under exclusive, vhcaz
# stayed in the initial namespace (the core adds a link's device there
# whoever adds it), x's and y's were moved to theirs
unlink_all() {
	local d ns
	for d in x y z; do
		ns=$d
		[ "$1:$d" != exclusive:z ] || ns=
		check "$1: rdma link del vhca$d (in ns ${ns:-of the host})" \
			${ns:+in_ns "$ns"} rdma link del "vhca$d"
	done
	ip netns del x
	ip netns del y
	ip netns del z
}

# pingpong PROG: PROG's server on vhcay in y, its client on vhcax in x to
# 10.78.0.2; both must finish, and vy0 must have received the traffic, at
# least one packet per iteration (the engine, had it kept the traffic,
# would have passed vy0 by; the TCP exchange is a dozen packets)
pingpong() {
	local prog=$1 srv y0 z0 y1 z1 rc=0
	y0=$(rx y vy0)
	z0=$(rx z vz0)
	# not in_ns, a function: $! must be the server's own, for the kill
	ip netns exec y "$prog" -d vhcay -g "$gy" -n 100 >/tmp/srv.log 2>&1 &
	srv=$!
	wait_for 30 in_ns y bash -c "ss -Hltn 'sport = :18515' | grep -q ."
	in_ns x timeout 60 "$prog" -d vhcax -g "$gx" -n 100 10.78.0.2 \
		>/tmp/cli.log 2>&1 || rc=1
	timeout 10 tail --pid=$srv -f /dev/null >/dev/null 2>&1 ||
		kill $srv 2>/dev/null
	wait $srv || rc=1
	y1=$(rx y vy0)
	z1=$(rx z vz0)
	echo "# $prog: vy0 received $((y1 - y0)) packets, vz0 $((z1 - z0))"
	[ $rc = 0 ] || { sed 's/^/#   /' /tmp/cli.log /tmp/srv.log | tail -n 8; return 1; }
	[ $((y1 - y0)) -ge 100 ]
}

topology
links shared
check "UD from ns x to 10.78.0.2 goes to x's peer on the wire, not to vhcaz (ibv_ud_pingpong)" \
	pingpong ibv_ud_pingpong
check "UC from ns x to 10.78.0.2 goes to x's peer on the wire (ibv_uc_pingpong)" \
	pingpong ibv_uc_pingpong
check "RC from ns x to 10.78.0.2 goes to x's peer on the wire (ibv_rc_pingpong)" \
	pingpong ibv_rc_pingpong
unlink_all shared

# --- rdma system set netns exclusive ----------------------------------------
# devs [NS]: the RDMA devices a process in NS (or here) sees
devs() {
	${1:+in_ns "$1"} rdma dev show | awk '{ sub(":", "", $2); print $2 }' |
		sort | tr '\n' ' '
}
# the mode changes only while no namespace but the initial one exists,
# and a deleted namespace goes away in the background
check "rdma system set netns exclusive" \
	wait_for 30 rdma system set netns exclusive
check_eq "rdma system shows netns exclusive" \
	"$(rdma system show netns | awk '{ print $2 }')" exclusive
topology
links exclusive
for n in x y; do
	check "rdma dev set vhca$n netns $n" rdma dev set "vhca$n" netns "$n"
done
check_eq "the initial namespace no longer sees vhcax and vhcay" "$(devs)" "vhcaz "
check_eq "ns x sees vhcax only" "$(devs x)" "vhcax "
check_eq "ns y sees vhcay only" "$(devs y)" "vhcay "
check_eq "ns x: ibv_devices lists vhcax only" \
	"$(in_ns x ibv_devices | awk 'NR > 2 { print $1 }' | tr '\n' ' ')" "vhcax "
check "ns y: a process cannot open vhcax" \
	bash -c "! ip netns exec y ibv_devinfo -d vhcax"
# the GIDs are filled again in the device's new namespace
wait_for 20 test -n "$(ns_gid_of x vhcax 10.78.0.1)"
wait_for 20 test -n "$(ns_gid_of y vhcay 10.78.0.2)"
gx=$(ns_gid_of x vhcax 10.78.0.1)
gy=$(ns_gid_of y vhcay 10.78.0.2)
check "RC from ns x to ns y, each device in its own namespace (ibv_rc_pingpong)" \
	pingpong ibv_rc_pingpong
unlink_all exclusive
check "rdma system set netns shared" rdma system set netns shared
check "rmmod vhca" rmmod vhca
tap_done
