#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Where both guests' vCPUs spend their time during one perftest pair
# across the two guests' link (a diagnosis, not a benchmark):
#
#   bench/profile.sh [--rxe] [--stacks FUNCTION] PROG [ARGS...]
#   e.g. bench/profile.sh ib_read_bw -s 65536
#
# Guest a serves, b is the client.  Once the traffic runs, each guest is
# sampled through qemu's gdbstub for 8 s at 100 Hz (tools/vcpu-prof.py),
# and the report names the functions by the guest's own kallsyms.
# --stacks also shows the kernel-text words on the stack of the samples
# in FUNCTION (native_queued_spin_lock_slowpath, say): who was spinning.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tools/lib.sh"

dev=vhca0 stacks=
while [ $# -gt 0 ]; do
	case $1 in
	--rxe) dev=rxe0 ;;
	--stacks) stacks=$2; shift ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || die "usage: bench/profile.sh [--rxe] [--stacks FUNCTION] PROG [ARGS...]"
prog=$1
shift

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vhca-profile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
port=$(free_port)
cmd="DEV=$dev PROG=$prog SECONDS_=25 ARGS='$*' bash bench/guest-profile.sh"
TMPDIR=$tmp "$VHCA_ROOT/tools/guest.sh" --gdb "$port" --timeout 300 \
	--peer "$cmd" "$cmd" >"$tmp/guests.log" 2>&1 &
guests=$!
for _ in $(seq 120); do
	started=$(ls "$tmp"/vhca-guest.*/a/started 2>/dev/null) && break
	kill -0 "$guests" 2>/dev/null || break
	sleep 1
done
[ -n "${started:-}" ] || { cat "$tmp/guests.log"; die "the guests did not start"; }
out=$(dirname "$(dirname "$started")")
sleep 8		# connected, and past the programs' setup
python3 "$here/../tools/vcpu-prof.py" sample "$port" 8 100 "$tmp/a.samples" &
python3 "$here/../tools/vcpu-prof.py" sample "$((port + 1))" 8 100 "$tmp/b.samples"
wait %2
cp "$out/a/kallsyms" "$tmp/a.kallsyms"
cp "$out/b/kallsyms" "$tmp/b.kallsyms"
rc=0
wait "$guests" || rc=$?
for g in a b; do
	echo "== guest $g ($([ $g = a ] && echo server || echo client)), $prog $* on $dev"
	python3 "$here/../tools/vcpu-prof.py" report "$tmp/$g.kallsyms" \
		"$tmp/$g.samples" --top 25 ${stacks:+--stacks "$stacks"}
done
echo "== the client's last lines"
sed -n '/^----- guest b/,$p' "$tmp/guests.log" | tail -n 3
[ "$rc" = 0 ] || { echo "the guests failed ($rc):"; tail -n 20 "$tmp/guests.log"; }
exit "$rc"
