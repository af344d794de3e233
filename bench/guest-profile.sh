#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in both guests of bench/profile.sh: one perftest pair on $DEV
# (vhca0 or rxe0) across eth1, guest a the server, b the client, for
# $SECONDS_ seconds.  Each guest leaves its /proc/kallsyms in /out for the
# host's report, and a writes /out/started when the server starts.
# shellcheck disable=SC2086 # perftest options, split as on a command line
set -- $ARGS
. bench/link.sh
if [ "$DEV" = vhca0 ]; then
	modprobe vhca
	rdma link add vhca0 type vhca netdev eth1
else
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev eth1
fi
. bench/measure.sh
for _ in $(seq 50); do g=$(gid_index "$DEV"); [ -n "$g" ] && break; sleep 0.2; done
cat /proc/kallsyms >/out/kallsyms
if [ "$me" = 1 ]; then
	touch /out/started
	timeout 300 "$PROG" -d "$DEV" -p 18515 -x "$g" -D "$SECONDS_" "$@" >/tmp/server 2>&1
else
	for _ in $(seq 30); do
		out=$(timeout 300 "$PROG" -d "$DEV" -p 18515 -x "$g" -D "$SECONDS_" "$@" 10.76.1.1 2>&1)
		grep -q "Couldn't connect" <<<"$out" || break
		sleep 1
	done
	echo "$out" | tail -n 3
fi
