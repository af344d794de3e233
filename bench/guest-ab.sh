#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in both guests of bench/ab.sh: $ROUNDS times the order A B B A of
# build/ab/A.ko and B.ko, each loaded in turn as vhca0 on eth1, and one
# $PROG run of $SECONDS_ seconds on it, a the server and b the client.
# b prints "AB <round> <A|B> <MB/s>".
# shellcheck disable=SC2086 # perftest options, split as on a command line
set -- $ARGS
. bench/link.sh
. bench/measure.sh
modprobe vhca && rmmod vhca	# its dependencies stay loaded
port=18600
r=0
for _ in $(seq "$ROUNDS"); do
	for k in A B B A; do
		r=$((r + 1)) port=$((port + 1))
		insmod "build/ab/$k.ko" || exit 1
		rdma link add vhca0 type vhca netdev eth1 || exit 1
		for _ in $(seq 50); do g=$(gid_index vhca0); [ -n "$g" ] && break; sleep 0.2; done
		if [ "$me" = 1 ]; then
			timeout $((SECONDS_ + 120)) "$PROG" -d vhca0 -p "$port" -x "$g" \
				-D "$SECONDS_" "$@" >/tmp/server 2>&1
		else
			for _ in $(seq 60); do
				out=$(timeout $((SECONDS_ + 120)) "$PROG" -d vhca0 -p "$port" \
					-x "$g" -D "$SECONDS_" "$@" 10.76.1.1 2>&1)
				grep -q "Couldn't connect" <<<"$out" || break
				sleep 1
			done
			v=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $4 } END { print v }' <<<"$out")
			echo "AB $r $k ${v:-none}"
		fi
		sleep 2		# the peer's last packets
		rdma link del vhca0
		rmmod vhca || exit 1
	done
done
