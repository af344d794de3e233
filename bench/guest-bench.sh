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
BENCH_GID=0000:0000:0000:0000:0000:ffff:0a4c:0001

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

# the programs, and the provider's post_recv cost in this guest
. bench/measure.sh
measure_local() {
	measure "$1"
	build/bench/post_recv "$1" | while read -r k v; do result "$1" "$k" "$v"; done
}

modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 && measure_local rxe0
rdma link del rxe0 2>/dev/null
rmmod rdma_rxe 2>/dev/null

rdma link add vhca0 type vhca netdev eth0 && measure_local vhca0
rdma link del vhca0 2>/dev/null

build/bench/memcpy_bw | while read -r k v; do result guest "$k" "$v"; done
