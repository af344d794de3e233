#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The ring fuzzer (tests/guest/ringfuzz.c) on vhca0 over eth0: random and
# adversarial WQEs written straight into the mapped rings, scribbled ring
# headers, doorbells, arms, resizes, state changes and teardown with WQEs
# outstanding; then a clean ping-pong on the same device in the same
# process, and the link and the module go away cleanly.  guest.sh fails the
# run on any Oops, BUG, WARNING or KASAN report.
#
#   bash tests/guest/fuzz-rings.sh [RINGFUZZ ARGS...]
#
# With no arguments: --count $RINGFUZZ_COUNT (100000), --allow-known, and
# --seed $RINGFUZZ_SEED if set.  Arguments go to ringfuzz as they are, e.g.
# --only-known read-inline for one known kernel defect alone, or
# --seed N --count M --trace to replay a run.  RINGFUZZ_TRACE=N keeps the
# last N lines of the trace (stderr) in the log; RINGFUZZ_TRACE=all keeps
# all of it, as it is written (for a run that hangs the guest).
. tests/guest/lib/lib.sh

# the plan: 3 checks of the set-up, ringfuzz's 15 and its status, 2 at
# the end; the known defects' 17 when the fuzz runs as CI runs it; and
# RINGFUZZ_FAR's 4 (the veth pair, the address, ringfuzz's far QPs and
# the links' removal)
plan=21
[ $# != 0 ] || [ -n "${RINGFUZZ_FAR:-}" ] || plan=$((plan + 17))
[ -z "${RINGFUZZ_FAR:-}" ] || plan=$((plan + 4))
tap_plan $plan

ib=/sys/class/infiniband
nogid=0000:0000:0000:0000:0000:0000:0000:0000
gid0() { [ "$(cat $ib/vhca0/ports/1/gids/0 2>/dev/null)" != "$nogid" ]; }

ip link set eth0 up
wait_for 10 grep -q 1 /sys/class/net/eth0/carrier
check "rdma link add vhca0 type vhca netdev eth0" \
	rdma link add vhca0 type vhca netdev eth0
check "vhca0 has GID 0 (eth0's link-local address)" wait_for 20 gid0
echo "#   GID 0: $(cat $ib/vhca0/ports/1/gids/0 2>/dev/null)"
# The fuzzer's RC and UC QPs "on the wire" go to this link-local GID, which
# nobody has: a neighbour entry lets their RTR resolve its MAC at once.
check "a neighbour entry for nobody's GID" \
	ip -6 neigh replace fe80::5054:ff:fe00:beef lladdr 52:54:00:00:be:ef \
	dev eth0 nud permanent

dev=vhca0
args=("$@")
if [ $# = 0 ]; then
	# the defects --only-known reproduces are fixed: the random phase
	# is let at them too
	args=(--count "${RINGFUZZ_COUNT:-100000}" --allow-known)
	[ -z "${RINGFUZZ_SEED:-}" ] || args+=(--seed "$RINGFUZZ_SEED")
fi

# RINGFUZZ_FAR=1: the wire QPs get a real peer.  vhca1 on veth0 fuzzes;
# vhca2 on veth1 answers, at a link-local address of veth1 that did not
# fit vhca2's GID table (128 entries), so that no vhca device of this host
# claims it and the packets go through the veth pair.
if [ -n "${RINGFUZZ_FAR:-}" ]; then
	ip link add veth0 address 52:54:00:00:f0:00 type veth peer name veth1 \
		address 52:54:00:00:f1:00
	ip link set veth0 up
	ip link set veth1 up
	for i in $(seq 1 160); do
		ip -6 addr add "fe80::f1:$(printf %x "$i")/64" dev veth1 nodad
	done
	check "vhca1 on veth0, vhca2 on veth1" bash -c \
		'rdma link add vhca1 type vhca netdev veth0 &&
		 rdma link add vhca2 type vhca netdev veth1'
	sleep 3
	far=
	for i in $(seq 160 -1 1); do
		g=$(printf 'fe80:0000:0000:0000:0000:0000:00f1:%04x' "$i")
		if ! grep -qx "$g" $ib/vhca2/ports/1/gids/* 2>/dev/null; then
			far=fe80::f1:$(printf %x "$i")
			break
		fi
	done
	check "an address of veth1 that vhca2 has no GID for ($far)" test -n "$far"
	dev=vhca1
	args+=(--far vhca2 "$far")
fi
start=$SECONDS
# through a FIFO, so that what it printed is in the log even if the kernel
# dies under it (the guest has no /dev/fd for <(...))
fifo=/tmp/ringfuzz.fifo
rm -f $fifo
mkfifo $fifo
case ${RINGFUZZ_TRACE:-} in
'')
	build/tests/ringfuzz $dev "${args[@]}" >$fifo 2>&1 & ;;
all)
	build/tests/ringfuzz $dev "${args[@]}" --trace >$fifo 2>&1 & ;;
*)
	build/tests/ringfuzz $dev "${args[@]}" --trace >$fifo 2>/tmp/trace & ;;
esac
pid=$!
tap_import ringfuzz <$fifo
wait $pid
rc=$?
if [ -f /tmp/trace ]; then
	echo "#   the trace's last $RINGFUZZ_TRACE lines:"
	tail -n "$RINGFUZZ_TRACE" /tmp/trace | sed 's/^/#   trace: /'
fi
check_eq "ringfuzz exit status" "$rc" 0
echo "#   ringfuzz ran $((SECONDS - start)) s in all"
for d in vhca0 vhca1 vhca2; do
	rdma statistic show link $d/1 2>/dev/null | fold -w 160 | sed 's/^/#   /'
done
if [ -n "${RINGFUZZ_FAR:-}" ]; then
	check "rdma link del vhca1 and vhca2" \
		bash -c 'timeout 30 rdma link del vhca1 && timeout 30 rdma link del vhca2'
	ip link del veth0
fi

# The fixed defects' reproducers, one each, on the same device.
if [ $# = 0 ] && [ -z "${RINGFUZZ_FAR:-}" ]; then
	for k in read-inline ud-write ud-write-imm cq-resize-race; do
		timeout 120 build/tests/ringfuzz vhca0 --only-known $k \
			>/tmp/known.tap 2>&1
		rc=$?
		tap_import "known $k" </tmp/known.tap
		check_eq "known $k: exit status" "$rc" 0
	done
fi

check "rdma link del vhca0 after the fuzzer" timeout 30 rdma link del vhca0
check "rmmod vhca after the fuzzer" timeout 30 rmmod vhca
tap_done
