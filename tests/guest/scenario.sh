#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# The scenario fuzzer (tests/guest/scenfuzz.c): processes in three network
# namespaces drive random sequences of verbs calls and hand-written WQEs
# at each other's QPs and keys, through vhcaa (ns a), vhcab (ns b, a's peer
# on a veth) and vhca0 (the host's eth0).  Meanwhile one process is killed
# mid-run, again and again, on vhcab or on vhcam, whose netdev moves
# between namespaces c and a all along (each move takes the device away
# under its users, and it is added again in the new namespace); at the
# end a link is deleted under a running one.  A WARN panics the guest (panic_on_warn), a CPU held for
# 20 s is a soft lockup; either, or any kernel report, fails the run.
#
#   bash tests/guest/scenario.sh [SCENARIOS_PER_PROCESS [SEED]]
#
# CI runs 4 processes x 10 scenarios on the debug kernel (150 each on
# Debian's kernel without it) and checks that every one ran.
. tests/guest/lib/lib.sh

tap_plan 10
count=${1:-${SCENFUZZ_COUNT:-150}}
seed=${2:-${SCENFUZZ_SEED:-$RANDOM}}
echo "# seed $seed, $count scenarios per process"

check "panic_on_warn, soft lockups after 20 s panic" \
	sysctl -q kernel.panic_on_warn=1 kernel.softlockup_panic=1 \
	kernel.watchdog_thresh=10

in_ns() { local n=$1; shift; ip netns exec "$n" "$@"; }
ip netns add a
ip netns add b
ip link add va netns a type veth peer name vb netns b
in_ns a ip addr add 10.79.0.1/24 dev va
in_ns b ip addr add 10.79.0.2/24 dev vb
for l in a:va b:vb a:lo b:lo; do in_ns "${l%%:*}" ip link set "${l#*:}" up; done
ip link set eth0 up
check "rdma link add vhcaa on va (ns a), vhcab on vb (ns b), vhca0 on eth0" \
	bash -c 'ip netns exec a rdma link add vhcaa type vhca netdev va &&
		 ip netns exec b rdma link add vhcab type vhca netdev vb &&
		 rdma link add vhca0 type vhca netdev eth0'
for d in vhcaa vhcab vhca0; do wait_gid "$d"; done

# vm, vhcam's netdev, moves between namespaces c and a
ip netns add c
ip link add vm netns c type veth peer name vn
ip link set vn up
# move_vm FROM TO: vm into TO, addressed, and vhcam on it again (the move
# unregisters it, and the old one may still be on its way out)
move_vm() {
	local t
	if [ "$1" != "$2" ]; then in_ns "$1" ip link set vm netns "$2" || return 1; fi
	in_ns "$2" ip addr add 10.80.0.1/24 dev vm && in_ns "$2" ip link set vm up ||
		return 1
	for t in $(seq 50); do
		in_ns "$2" rdma link add vhcam type vhca netdev vm 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
check "rdma link add vhcam on vm (ns c)" move_vm c c
mover() {
	local here=c there=a moves=0 failed=0
	while [ ! -e /tmp/scen.stop ]; do
		sleep 0.$((RANDOM % 9 + 1))
		if move_vm $here $there; then
			moves=$((moves + 1))
		else
			failed=$((failed + 1))
		fi
		set -- $there $here
		here=$1 there=$2
	done
	echo "$moves $failed $here" >/tmp/scen.moves
}
rm -f /tmp/scen.stop
mover & mover_pid=$!

board=/dev/shm/vhca-scenfuzz
rm -f $board
# slot NS DEV N: one fuzzing process
fuzz() {
	local s=$1 ns=$2 dev=$3
	${ns:+in_ns "$ns"} build/tests/scenfuzz "$dev" $board "$s" \
		$((seed * 8 + s)) "$count" >"/tmp/scen.$s" 2>&1
}
fuzz 0 a vhcaa & p0=$!
fuzz 1 a vhcaa & p1=$!
fuzz 2 b vhcab & p2=$!
fuzz 3 "" vhca0 & p3=$!

# the victim: killed mid-run, over and over, as long as the others run,
# on vhcab and on the moving vhcam in turn
kills=0
while kill -0 $p0 $p1 $p2 $p3 2>/dev/null; do
	v=vhcab
	[ $((kills % 2)) = 0 ] || v=vhcam
	# ip netns exec execs the fuzzer in its own process: $! is the
	# fuzzer's (in_ns, a function, would leave a subshell's, and the
	# kill below would orphan the fuzzer instead of killing it)
	ip netns exec b build/tests/scenfuzz $v $board 4 $((seed + kills)) 1000000 \
		>/dev/null 2>&1 &
	v=$!
	sleep 0.$((RANDOM % 9 + 1))
	kill -9 $v 2>/dev/null
	wait $v 2>/dev/null
	kills=$((kills + 1))
done
rc=0
for p in $p0 $p1 $p2 $p3; do wait "$p" || rc=1; done
check "each killed process is gone, none left running" bash -c '! pgrep -x scenfuzz'
pkill -9 -x scenfuzz
touch /tmp/scen.stop
wait $mover_pid
read -r moves move_failed vm_ns </tmp/scen.moves
check "vm moved between namespaces under the fuzzers, vhcam added again each time ($moves moves, $move_failed failed)" \
	test "$moves" -ge 1 -a "$move_failed" = 0
ran=$(cat /tmp/scen.[0-3] | awk '$1 == "scenarios" { n += $2 } END { print n + 0 }')
echo "# a process was killed mid-run $kills times"
check_eq "4 processes ran every scenario ($count each)" "$rc:$ran" "0:$((4 * count))"
[ "$rc:$ran" = "0:$((4 * count))" ] || tail -n 5 /tmp/scen.[0-3] | sed 's/^/#   /'

# a link deleted under a process fuzzing it: its calls fail, nothing else
fuzz 5 "" vhca0 & p=$!
sleep 1
check "rdma link del vhca0 under a running fuzzer" rdma link del vhca0
wait $p
check "the fuzzer on the deleted link ended" bash -c "! kill -0 $p 2>/dev/null"
check "rdma link del vhcaa, vhcab, vhcam" \
	bash -c "ip netns exec a rdma link del vhcaa && ip netns exec b rdma link del vhcab &&
		 ip netns exec $vm_ns rdma link del vhcam"
ip netns del a
ip netns del b
ip netns del c
check "rmmod vhca" wait_for 20 rmmod vhca
rm -f $board
tap_done
