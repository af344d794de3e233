# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Sourced by the guest side of both benchmarks: the programs they measure
# on a device, and how their figures are read.  The caller defines
#   pair CMD...   runs CMD as the server and as the client, and prints the
#                 client's output
#   result DEV METRIC VALUE
# and sets N (iterations), D (seconds) and BENCH_GID (the GID, as sysfs
# spells it, whose index the programs use).

gid_index() {
	local f
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = "$BENCH_GID" ] &&
			basename "$f" && return
	done
}

# Each pair meets on a TCP port of its own.  A client that outlives its
# server (the server failed, or gave up waiting) then cannot meet the
# next program's server and put the two guests out of step for the rest
# of the run; it fails alone, and the next pair meets as planned.
BENCH_PORT=18515
next_port() { BENCH_PORT=$((BENCH_PORT + 1)); }

measure() {
	local dev=$1 g v
	for _ in $(seq 50); do g=$(gid_index "$dev"); [ -n "$g" ] && break; sleep 0.2; done

	next_port
	v=$(pair ibv_rc_pingpong -d "$dev" -p "$BENCH_PORT" -g "$g" -n "$N" | sed -n 's/.* \([0-9.]*\) usec\/iter.*/\1/p')
	result "$dev" rc_pingpong_usec_per_iter "$v"
	next_port
	v=$(pair ibv_srq_pingpong -d "$dev" -p "$BENCH_PORT" -g "$g" -n "$N" | sed -n 's/.* \([0-9.]*\) usec\/iter.*/\1/p' | head -n 1)
	result "$dev" srq_pingpong_usec_per_iter "$v"
	next_port
	v=$(pair ib_send_lat -d "$dev" -p "$BENCH_PORT" -x "$g" -n "$N" -s 2 | awk '$1 == 2 { print $5 }')
	result "$dev" send_lat_usec "$v"
	for t in send write read; do
		next_port
		v=$(pair "ib_${t}_bw" -d "$dev" -p "$BENCH_PORT" -x "$g" -D "$D" -s 65536 | awk '$1 == 65536 { print $4 }')
		result "$dev" "${t}_bw_MBps" "$v"
	done
	# several QPs: the engine's work and the receive path spread over
	# the CPUs (no lock shared between QPs on the way)
	next_port
	v=$(pair ib_write_bw -d "$dev" -p "$BENCH_PORT" -x "$g" -D "$D" -s 65536 -q 4 | awk '$1 == 65536 { print $4 }')
	result "$dev" write_bw_4qp_MBps "$v"
	next_port
	v=$(pair ib_send_bw -d "$dev" -p "$BENCH_PORT" -x "$g" -D "$D" -s 65536 --use-srq | awk '$1 == 65536 { print $4 }')
	result "$dev" send_bw_srq_MBps "$v"
	next_port
	v=$(pair ib_send_bw -d "$dev" -p "$BENCH_PORT" -x "$g" -D "$D" -s 64 | awk '$1 == 64 { print $5 }')
	result "$dev" send_64B_Mpps "$v"
	# XRC beside RC (rxe has no XRC: n/a), on one host and on the wire
	next_port
	v=$(pair ib_send_lat -d "$dev" -p "$BENCH_PORT" -x "$g" -n "$N" -s 2 -c XRC | awk '$1 == 2 { print $5 }')
	result "$dev" send_lat_xrc_usec "$v"
	next_port
	v=$(pair ib_send_bw -d "$dev" -p "$BENCH_PORT" -x "$g" -D "$D" -s 65536 -c XRC | awk '$1 == 65536 { print $4 }')
	result "$dev" send_bw_xrc_MBps "$v"
}
