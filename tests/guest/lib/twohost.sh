# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# What the suites of a two-guest boot share (tests/guest/twohost.sh,
# tests/guest/fuzz-wire.sh), sourced after lib.sh.  eth1 of each guest
# shares one link, 10.76.1.0/24: guest a (VHCA_GUEST=a) is 10.76.1.1,
# guest b 10.76.1.2; $me is this guest's host number and $peer the
# other's.

case ${VHCA_GUEST:-} in
a) me=1 peer=2 ;;
b) me=2 peer=1 ;;
*) echo "VHCA_GUEST must be a or b"; exit 2 ;;
esac

# v4gid DEV: the index of DEV's GID of this guest's eth1 address
v4gid() { gid_of "$1" "10.76.1.$me"; }
# has_v4gid DEV: DEV lists that address (the core adds GIDs from a work item)
has_v4gid() { [ -n "$(v4gid "$1")" ]; }

# eth1_vhca0: eth1 up at this guest's address, and vhca0 on it (2 checks)
eth1_vhca0() {
	ip link set eth1 up
	ip addr add "10.76.1.$me/24" dev eth1
	check "guest $VHCA_GUEST: eth1 has carrier" \
		wait_for 10 grep -q 1 /sys/class/net/eth1/carrier
	check "guest $VHCA_GUEST: rdma link add vhca0 on eth1" \
		rdma link add vhca0 type vhca netdev eth1
}

# peer_up: vhca0 has eth1's IPv4 address as a GID, and the other guest
# answers over the shared link (2 checks)
peer_up() {
	check "guest $VHCA_GUEST: its IPv4 address is a GID" \
		wait_for 10 has_v4gid vhca0
	check "guest $VHCA_GUEST: the peer answers over the shared link" \
		wait_for 90 ping -c 1 -W 1 "10.76.1.$peer"
}

# stat NAME: a counter of vhca0 as `rdma statistic` shows it
stat() {
	rdma statistic show link vhca0/1 | tr -s ' ' '\n' |
		grep -A1 -x "$1" | tail -n 1
}

# tell ADDR WORDS, hear WORD: one guest says a step is over and the other
# waits for it (HEAR_TIME seconds, 600); both go on whatever the step's
# result, so they stay in step.  hear_word: the next words the other guest
# tells, whatever they are.
tell() { wait_for 120 bash -c "echo '$2' >/dev/tcp/$1/7000"; }
hear() { timeout "${HEAR_TIME:-600}" busybox nc -l -p 7000 | grep -qx "$1"; }
hear_word() { timeout "${HEAR_TIME:-600}" busybox nc -l -p 7000 | head -n 1; }
