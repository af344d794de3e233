#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Two builds of vhca.ko, alternated in one boot of the two guests of the
# wire benchmark, on one perftest pair (a diagnosis, not a benchmark):
#
#   bench/ab.sh [--rounds N] [--seconds S] [--rxe-client|--local] A.ko B.ko PROG [ARGS...]
#   e.g. bench/ab.sh /tmp/old.ko build/vhca.ko ib_read_bw -s 65536
#
# The emulated hosts' speed drifts by more than most changes are worth,
# and differs from boot to boot; within one boot, in the order A B B A
# repeated, a steady drift falls out of the comparison.  Each round loads
# one module in both guests, runs PROG for S seconds (8) with a the
# server and b the client, and unloads it.  Prints each round's MB/s and
# each build's mean, and how many packets the server's qdisc marked CE and
# dropped.
# --rxe-client: b's client runs on rxe, whose requester, unlike vhca's,
# does not bound what it asks of a responder (a's builds only answer).
# --local: one guest, server and client both on vhca0 over eth0: the
# local engine, not the wire.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tools/lib.sh"

rounds=4 secs=8 rxe=0 local=0
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift ;;
	--seconds) secs=$2; shift ;;
	--rxe-client) rxe=1 ;;
	--local) local=1 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 3 ] || die "usage: bench/ab.sh [--rounds N] [--seconds S] [--rxe-client|--local] A.ko B.ko PROG [ARGS...]"
ab="$VHCA_ROOT/build/ab"
mkdir -p "$ab"
cp "$1" "$ab/A.ko"
cp "$2" "$ab/B.ko"
prog=$3
shift 3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vhca-ab.XXXXXX")
trap '[ -n "${VHCA_AB_KEEP:-}" ] || rm -rf "$tmp"' EXIT
cmd="ROUNDS=$rounds SECONDS_=$secs RXE_CLIENT=$rxe LOCAL=$local PROG=$prog ARGS='$*' bash bench/guest-ab.sh"
rc=0
peer=(--peer "$cmd")
[ "$local" = 0 ] || peer=()
"$VHCA_ROOT/tools/guest.sh" --timeout $((rounds * 4 * (secs + 60) + 120)) \
	"${peer[@]}" "$cmd" >"$tmp/guests.log" 2>&1 || rc=$?
grep '^QDISC ' "$tmp/guests.log" | awk '
	{ print; mk[$3] += $5; dr[$3] += $7; n[$3]++ }
	END {
		for (k in n)
			printf "%s: the server'"'"'s qdisc marked %.0f and dropped %.0f packets a round, mean of %d\n",
				k, mk[k] / n[k], dr[k] / n[k], n[k]
	}' || true
grep '^AB ' "$tmp/guests.log" | awk '
	{ print; sum[$3] += $4; n[$3]++ }
	END {
		for (k in sum)
			printf "%s: mean %.2f MB/s over %d rounds\n", k, sum[k] / n[k], n[k]
		if (n["A"] && n["B"] && sum["A"])
			printf "B/A: %.3f\n", (sum["B"] / n["B"]) / (sum["A"] / n["A"])
	}' || true
[ "$rc" = 0 ] || { tail -n 40 "$tmp/guests.log"; die "the guests failed ($rc)"; }
