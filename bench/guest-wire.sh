#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in both guests of bench/wire.sh (VHCA_GUEST is a or b), whose eth1
# share one link: rxe0 to rxe0 first, then vhca0 to vhca0, the same
# programs each time.  Guest a runs the servers; b runs the clients and
# prints "RESULT <dev> <metric> <value>" lines.
case ${VHCA_GUEST:-} in
a) me=1 ;;
b) me=2 ;;
*) echo "VHCA_GUEST must be a or b"; exit 2 ;;
esac
ip link set eth1 up
ip addr add 10.76.1.$me/24 dev eth1
N=${VHCA_BENCH_ITERS:-1000}
D=${VHCA_BENCH_SECONDS:-3}
for _ in $(seq 90); do ping -c 1 -W 1 10.76.1.$((3 - me)) >/dev/null && break; done

gid_index() {
	local f
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = "0000:0000:0000:0000:0000:ffff:0a4c:010$me" ] &&
			basename "$f" && return
	done
}

# run CMD...: a's server, or b's client (retried until the server is up)
run() {
	local out
	if [ "$VHCA_GUEST" = a ]; then
		timeout 90 "$@" >/dev/null 2>&1
		return
	fi
	for _ in $(seq 30); do
		out=$(timeout 60 "$@" 10.76.1.1 2>&1) && { echo "$out"; return; }
		sleep 1
	done
}

result() { [ "$VHCA_GUEST" = b ] && echo "RESULT $1 $2 ${3:-n/a}"; }

measure() {
	local dev=$1 g v
	for _ in $(seq 50); do g=$(gid_index "$dev"); [ -n "$g" ] && break; sleep 0.2; done

	v=$(run ibv_rc_pingpong -d "$dev" -g "$g" -n "$N" | sed -n 's/.* \([0-9.]*\) usec\/iter.*/\1/p')
	result "$dev" rc_pingpong_usec_per_iter "$v"
	v=$(run ib_send_lat -d "$dev" -x "$g" -n "$N" -s 2 | awk '$1 == 2 { print $5 }')
	result "$dev" send_lat_usec "$v"
	for t in send write read; do
		v=$(run "ib_${t}_bw" -d "$dev" -x "$g" -D "$D" -s 65536 | awk '$1 == 65536 { print $4 }')
		result "$dev" "${t}_bw_MBps" "$v"
	done
	v=$(run ib_send_bw -d "$dev" -x "$g" -D "$D" -s 64 | awk '$1 == 64 { print $5 }')
	result "$dev" send_64B_Mpps "$v"
}

# Each guest switches when its last program of the phase is done; a
# client retries until the other guest's server of the next phase is up.
modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth1 && measure rxe0
rdma link del rxe0 2>/dev/null
rmmod rdma_rxe 2>/dev/null
sleep 2
rdma link add vhca0 type vhca netdev eth1 && measure vhca0
rdma link del vhca0 2>/dev/null
