# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Sourced first by the guest side of the two-guest tools (bench/wire.sh,
# bench/profile.sh, bench/ab.sh), whose guests' eth1 share one link: sets
# me (1 in guest a, 2 in b), gives eth1 the address 10.76.1.$me, sets
# BENCH_GID to that address's GID as sysfs spells it, and waits until the
# peer answers.  VHCA_BENCH_MTU: eth1's MTU; RoCE takes the largest IB
# MTU that fits, 1024 at Ethernet's 1500 and 4096 at jumbo frames.
case ${VHCA_GUEST:-} in
a) me=1 ;;
b) me=2 ;;
*) echo "VHCA_GUEST must be a or b"; exit 2 ;;
esac
[ -z "${VHCA_BENCH_MTU:-}" ] || ip link set eth1 mtu "$VHCA_BENCH_MTU"
ip link set eth1 up
ip addr add 10.76.1.$me/24 dev eth1
# shellcheck disable=SC2034 # bench/measure.sh reads it
BENCH_GID=0000:0000:0000:0000:0000:ffff:0a4c:010$me
for _ in $(seq 90); do ping -c 1 -W 1 10.76.1.$((3 - me)) >/dev/null && break; done
