#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Several suites in one boot of a guest, one after the other:
#
#   bash tests/guest/suites.sh NAME CMD [NAME CMD]...
#
# A boot of the debug kernel costs about 70 s of a CPU before and after
# its job (the boot, then kmemleak's two scans), more than some of its
# suites; tools/test.sh boots it once for each lane of suites.  Each suite
# runs as it would alone, between two marker lines that tools/test.sh
# splits the output by:
#
#   ### vhca-suite NAME begin
#   ### vhca-suite NAME end STATUS SECONDS (uptime U)
#
# the uptime places the suite among the kernel's timestamps, should the
# kernel report a problem at the end of the boot.  Whatever a suite left
# behind (a link, a loaded vhca or rxe) is named in its part and removed
# before the next one, so that one suite's failure does not become the
# next one's.
cd /vhca || exit 1
while [ $# -ge 2 ]; do
	echo "### vhca-suite $1 begin"
	t0=$SECONDS
	bash -c "$2" </dev/null
	rc=$?
	left=$(rdma link show 2>/dev/null | awk '{ print $2 }' | cut -d/ -f1 | sort -u)
	for l in $left; do
		echo "# suites.sh: $1 left link $l; deleting it"
		timeout 60 rdma link del "$l"
	done
	for m in vhca rdma_rxe; do
		[ ! -e /sys/module/$m ] || { echo "# suites.sh: $1 left $m loaded; removing it"; modprobe -r $m; }
	done
	echo "### vhca-suite $1 end $rc $((SECONDS - t0)) (uptime $(cut -d' ' -f1 /proc/uptime))"
	shift 2
done
exit 0
