#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# rdma-core's own tests (the installed python3-pyverbs and its test suite)
# on vhca0, with an IPv4 address so the RDMA CM tests have one to use.
# Each rdma-core release has its list of the tests that must run on vhca0
# (pyverbs-RELEASE.expected).  PYVERBS_RXE=1 then runs the same suite on
# rdma_rxe on the same netdev, for comparison: its results are printed as
# comments, a reference, not counted.
ip link set eth0 up
ip addr add 10.76.0.1/24 dev eth0
release=$(dpkg-query -W -f '${Version}' python3-pyverbs | cut -d. -f1)
expected=tests/guest/pyverbs-$release.expected
[ -f "$expected" ] || { echo "not ok 1 - no $expected for rdma-core $release"; exit 1; }

# the RDMA CM tests need the IPv4 address as a GID (the core adds GIDs
# from a work item)
wait_v4_gid() {
	for _ in $(seq 100); do
		grep -qsx "0000:0000:0000:0000:0000:ffff:0a4c:0001" \
			/sys/class/infiniband/"$1"/ports/1/gids/* && return
		sleep 0.2
	done
}
# the ODP tests on huge pages need some free (they skip without)
echo 8 > /proc/sys/vm/nr_hugepages
rdma link add vhca0 type vhca netdev eth0 || { echo "not ok 1 - rdma link add"; exit 1; }
wait_v4_gid vhca0
rm -rf /tmp/rdma-core-tests
cp -r /usr/share/doc/rdma-core/tests /tmp/rdma-core-tests
find /tmp/rdma-core-tests -name '*.gz' -exec gunzip {} +
# Debian's python, which has pyverbs, whatever python is first in PATH
echo "# pyverbs of rdma-core $release on vhca0"
timeout 900 /usr/bin/python3 tests/guest/pyverbs_tap.py /tmp/rdma-core-tests vhca0 \
	"$expected"
rc=$?
[ "${PYVERBS_RXE:-0}" = 1 ] || exit $rc

rdma link del vhca0
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev eth0 || { echo "not ok - rdma link add rxe0"; exit 1; }
wait_v4_gid rxe0
timeout 900 /usr/bin/python3 tests/guest/pyverbs_tap.py /tmp/rdma-core-tests rxe0 \
	/dev/null >/tmp/rxe.tap 2>&1
# with no list, every test that ran is an unlisted one: "# not in ...:"
echo "# rxe0, the same suite: $(grep -c '^# not in /dev/null: ok ' /tmp/rxe.tap) passed," \
	"$(grep -c '^# not in /dev/null: not ok ' /tmp/rxe.tap) failed," \
	"$(grep -c '^# skipped ' /tmp/rxe.tap) skipped"
grep -E '^# not in /dev/null: not ok |test_odp' /tmp/rxe.tap |
	sed 's/^/# rxe0: /'
exit $rc
