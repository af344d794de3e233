#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in both guests of bench/ab.sh: $ROUNDS times the order A B B A of
# build/ab/A.ko and B.ko, each loaded in turn as vhca0 on eth1, and one
# $PROG run of $SECONDS_ seconds on it, a the server and b the client.
# With RXE_CLIENT=1, b's client runs on rxe0 and only a loads the builds.
# b prints "AB <round> <A|B> <MB/s> client_qdisc_drops <n>"; a prints "QDISC <round> <A|B>" and
# what eth1's fq_codel did in the round: how many packets it marked CE
# (each waited in the queue beyond CoDel's 5 ms target) and dropped.
# Sampling its backlog instead took tc 1-2 s a sample on those busy vCPUs.
# With LOCAL=1 there is one guest: the server and the client both run on
# vhca0 over eth0, through the local engine, and it prints both lines.
# shellcheck disable=SC2086 # perftest options, split as on a command line
set -- $ARGS
nic=eth1 server=10.76.1.1
if [ "${LOCAL:-}" = 1 ]; then
	VHCA_GUEST=a nic=eth0 server=127.0.0.1
	ip link set eth0 up
	ip addr add 10.76.0.1/24 dev eth0
	BENCH_GID=0000:0000:0000:0000:0000:ffff:0a4c:0001
	me=1
else
	. bench/link.sh
fi
. bench/measure.sh
. tests/guest/lib/lib.sh	# codel
modprobe vhca && rmmod vhca	# its dependencies stay loaded
dev=vhca0
if [ "$me" = 2 ] && [ "${RXE_CLIENT:-}" = 1 ]; then
	dev=rxe0
	modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth1 || exit 1
fi
loads() { [ "$dev" = vhca0 ]; }
port=18600
r=0
for _ in $(seq "$ROUNDS"); do
	for k in A B B A; do
		r=$((r + 1)) port=$((port + 1))
		if loads; then
			insmod "build/ab/$k.ko" || exit 1
			rdma link add vhca0 type vhca netdev "$nic" || exit 1
		fi
		for _ in $(seq 50); do g=$(gid_index "$dev"); [ -n "$g" ] && break; sleep 0.2; done
		if [ "$me" = 1 ] && [ "${LOCAL:-}" = 1 ]; then
			timeout $((SECONDS_ + 120)) "$PROG" -d vhca0 -p "$port" -x "$g" \
				-D "$SECONDS_" "$@" >/tmp/server 2>&1 &
			me=2	# and the client, below
		elif [ "$me" = 1 ]; then
			m0=$(codel ecn_mark) d0=$(codel dropped)
			timeout $((SECONDS_ + 120)) "$PROG" -d vhca0 -p "$port" -x "$g" \
				-D "$SECONDS_" "$@" >/tmp/server 2>&1
			echo "QDISC $r $k ecn_marks $(($(codel ecn_mark) - m0))" \
				"drops $(($(codel dropped) - d0))"
		fi
		if [ "$me" = 2 ]; then
			cd0=$(codel dropped)
			for _ in $(seq 60); do
				out=$(timeout $((SECONDS_ + 120)) "$PROG" -d "$dev" -p "$port" \
					-x "$g" -D "$SECONDS_" "$@" "$server" 2>&1)
				grep -q "Couldn't connect" <<<"$out" || break
				sleep 1
			done
			v=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $4 } END { print v }' <<<"$out")
			# UC is not resent: what the client's own qdisc dropped
			# was counted in its MB/s and never arrived
			echo "AB $r $k ${v:-none} client_qdisc_drops $(($(codel dropped) - cd0))"
			[ "${LOCAL:-}" != 1 ] || { wait; me=1; }
		fi
		sleep 2		# the peer's last packets
		if loads; then
			rdma link del vhca0
			rmmod vhca || exit 1
		fi
	done
done
