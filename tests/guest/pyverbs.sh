#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# rdma-core's own tests (Debian's python3-pyverbs 44 and its test suite) on
# vhca0, with an IPv4 address so the RDMA CM tests have one to use.
ip link set eth0 up
ip addr add 10.76.0.1/24 dev eth0
rdma link add vhca0 type vhca netdev eth0 || { echo "not ok 1 - rdma link add"; exit 1; }
# the RDMA CM tests need the IPv4 address as a GID (the core adds GIDs
# from a work item)
for _ in $(seq 100); do
	grep -qsx "0000:0000:0000:0000:0000:ffff:0a4c:0001" \
		/sys/class/infiniband/vhca0/ports/1/gids/* && break
	sleep 0.2
done
rm -rf /tmp/rdma-core-tests
cp -r /usr/share/doc/rdma-core/tests /tmp/rdma-core-tests
find /tmp/rdma-core-tests -name '*.gz' -exec gunzip {} +
# Debian's python, which has pyverbs, whatever python is first in PATH
timeout 900 /usr/bin/python3 tests/guest/pyverbs_tap.py /tmp/rdma-core-tests vhca0 \
	tests/guest/pyverbs.expected
