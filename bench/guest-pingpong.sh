#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in the guest (bench/run.sh --pingpong boots it).  The ping-pongs,
# many times over, on rxe0 and on vhca0, one device loaded at a time:
# each run's time per iteration, the worst run, and the runs that did not
# finish within PP_TIMEOUT seconds (a lost wake-up would show there: the
# programs poll, and a message that nobody moves leaves both waiting).
# bench/run.sh boots it twice, the host idle and the host's CPUs busy.
ip link set eth0 up
ip addr add 10.76.0.1/24 dev eth0
N=${VHCA_BENCH_ITERS:-2000}
RUNS=${VHCA_BENCH_RUNS:-10}
PP_TIMEOUT=60
BENCH_GID=0000:0000:0000:0000:0000:ffff:0a4c:0001

result() { echo "RESULT $1 $2 ${3:-n/a}"; }

. bench/measure.sh

# runs DEV PROG: RUNS runs of PROG, a server and a client against it
runs() {
	local dev=$1 prog=$2 g v worst=0 hung=0 i srv rc src
	for _ in $(seq 50); do g=$(gid_index "$dev"); [ -n "$g" ] && break; sleep 0.2; done
	for i in $(seq "$RUNS"); do
		next_port
		timeout "$PP_TIMEOUT" "$prog" -d "$dev" -p "$BENCH_PORT" -g "$g" -n "$N" \
			>/tmp/pp.srv 2>&1 &
		srv=$!
		sleep 1
		timeout "$PP_TIMEOUT" "$prog" -d "$dev" -p "$BENCH_PORT" -g "$g" -n "$N" \
			127.0.0.1 >/tmp/pp.cli 2>&1
		rc=$?
		wait "$srv"
		src=$?
		if [ "$rc" = 124 ] || [ "$src" = 124 ]; then
			hung=$((hung + 1))
			echo "# $dev $prog run $i: timed out after ${PP_TIMEOUT}s:"
			tail -n 3 /tmp/pp.cli /tmp/pp.srv | sed 's/^/#   /'
			continue
		fi
		v=$(sed -n 's/.* \([0-9.]*\) usec\/iter.*/\1/p' /tmp/pp.cli | head -n 1)
		result "$dev" "${prog#ibv_}_usec_per_iter" "$v"
		[ -z "$v" ] || worst=$(awk -v a="$worst" -v b="$v" 'BEGIN { print (b > a ? b : a) }')
	done
	result "$dev" "${prog#ibv_}_worst_run_usec" "$worst"
	result "$dev" "${prog#ibv_}_runs_timed_out_of_$RUNS" "$hung"
}

measure_pp() {
	runs "$1" ibv_rc_pingpong
	runs "$1" ibv_srq_pingpong
}

modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 && measure_pp rxe0
rdma link del rxe0 2>/dev/null
rmmod rdma_rxe 2>/dev/null

rdma link add vhca0 type vhca netdev eth0 && measure_pp vhca0
rdma link del vhca0 2>/dev/null
