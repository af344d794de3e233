#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in both guests of bench/profile.sh: one perftest pair on $DEV
# (vhca0 or rxe0) across eth1, guest a the server, b the client, for
# $SECONDS_ seconds.  Each guest leaves its /proc/kallsyms in /out for the
# host's report, and a writes /out/started when the server starts.
case ${VHCA_GUEST:-} in
a) me=1 ;;
b) me=2 ;;
*) echo "VHCA_GUEST must be a or b"; exit 2 ;;
esac
# shellcheck disable=SC2086 # perftest options, split as on a command line
set -- $ARGS
ip link set eth1 up
ip addr add 10.76.1.$me/24 dev eth1
for _ in $(seq 90); do ping -c 1 -W 1 10.76.1.$((3 - me)) >/dev/null && break; done
if [ "$DEV" = vhca0 ]; then
	modprobe vhca
	rdma link add vhca0 type vhca netdev eth1
else
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev eth1
fi
BENCH_GID=0000:0000:0000:0000:0000:ffff:0a4c:010$me
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
