#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in the guest (bench/run.sh boots it).  Measures the same programs on
# rxe0 and on vhca0, one device loaded at a time (both want UDP 4791), and
# prints "RESULT <dev> <metric> <value>" lines, "n/a" where a device cannot
# run a program.
ip link set eth0 up
ip addr add 10.76.0.1/24 dev eth0
N=${VHCA_BENCH_ITERS:-2000}
D=${VHCA_BENCH_SECONDS:-3}

gid_index() {
	local f
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = 0000:0000:0000:0000:0000:ffff:0a4c:0001 ] &&
			basename "$f" && return
	done
}

# pair SERVER_CMD...: run a server in the background and the same command
# against 127.0.0.1 as the client; prints the client's output
pair() {
	"$@" >/tmp/server.out 2>&1 &
	local srv=$!
	sleep 2
	timeout 120 "$@" 127.0.0.1 2>&1
	wait $srv 2>/dev/null
}

result() { echo "RESULT $1 $2 ${3:-n/a}"; }

measure() {
	local dev=$1 g v
	for _ in $(seq 50); do g=$(gid_index "$dev"); [ -n "$g" ] && break; sleep 0.2; done

	v=$(pair ibv_rc_pingpong -d "$dev" -g "$g" -n "$N" | sed -n 's/.* \([0-9.]*\) usec\/iter.*/\1/p')
	result "$dev" rc_pingpong_usec_per_iter "$v"
	v=$(pair ibv_srq_pingpong -d "$dev" -g "$g" -n "$N" | sed -n 's/.* \([0-9.]*\) usec\/iter.*/\1/p' | head -n 1)
	result "$dev" srq_pingpong_usec_per_iter "$v"
	v=$(pair ib_send_lat -d "$dev" -x "$g" -n "$N" -s 2 | awk '$1 == 2 { print $5 }')
	result "$dev" send_lat_usec "$v"
	for t in send write read; do
		v=$(pair "ib_${t}_bw" -d "$dev" -x "$g" -D "$D" -s 65536 | awk '$1 == 65536 { print $4 }')
		result "$dev" "${t}_bw_MBps" "$v"
	done
	v=$(pair ib_send_bw -d "$dev" -x "$g" -D "$D" -s 65536 --use-srq | awk '$1 == 65536 { print $4 }')
	result "$dev" send_bw_srq_MBps "$v"
	v=$(pair ib_send_bw -d "$dev" -x "$g" -D "$D" -s 64 | awk '$1 == 64 { print $5 }')
	result "$dev" send_64B_Mpps "$v"
	build/bench/post_recv "$dev" | while read -r k v; do result "$dev" "$k" "$v"; done
}

modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 && measure rxe0
rdma link del rxe0 2>/dev/null
rmmod rdma_rxe 2>/dev/null

rdma link add vhca0 type vhca netdev eth0 && measure vhca0
rdma link del vhca0 2>/dev/null

build/bench/memcpy_bw | while read -r k v; do result guest "$k" "$v"; done
