#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The benchmark (not a test).  Figures from TCG are only comparable within
# one run.
#
#   bench/run.sh          one guest boot measures the same programs on
#                         vhca0 and on rxe0, and prints one table with
#                         vhca/rxe ratios and the guest's memcpy bandwidth
#                         as the ceiling
#   bench/run.sh --clients  one guest boot runs what users run over RDMA
#                         (tests/guest/lib/clients.sh: libfabric, UCX,
#                         NFS over RDMA, SRP) on vhca0 and then on rxe0,
#                         one table with vhca/rxe ratios
#   bench/run.sh --nvme   one guest boot: NVMe-oF (nvmet on null_blk)
#                         through nvme-loop, the limit, and nvme-rdma on
#                         vhca0 and rxe0; iSER (LIO on null_blk) on vhca0
#                         and rxe0; fio 4k random read QD32 and QD1, 128k
#                         write QD8 (bench/guest-nvme.sh).  With
#                         VHCA_BENCH_AB="A B ..." vhca0 runs as each of
#                         build/ab/A.ko, B.ko ... in turn instead (builds
#                         of different commits compared in one boot), and
#                         VHCA_BENCH_ROUNDS=N sets the rounds (2)
#   bench/run.sh --pingpong  ibv_rc_pingpong and ibv_srq_pingpong, many
#                         runs each on vhca0 and rxe0 (bench/guest-
#                         pingpong.sh), in two boots: the host idle, then
#                         its CPUs busy (one spinning process per CPU, at
#                         the guest's priority), as a CI host running
#                         guests side by side is; each run's time, the
#                         worst run and the runs that never finished
#   bench/run.sh --odp    one boot of Debian 13 with Linux 7.3 (rxe has
#                         ODP there): registering 1 GiB pinned and ODP,
#                         and WRITEs into cold, warm and pinned pages
#                         (bench/odp.c), on vhca0 and rxe0
#   bench/run.sh --wire   two guests on one link, rxe0 to rxe0 and
#                         vhca0 to vhca0 across it, two rounds each
#                         (bench/wire.sh); for each bandwidth test also
#                         each guest's kernel time per data packet in the
#                         steady state, and what each qemu thread took
#                         of the host's CPUs meanwhile (bench/host_cpu.py)
#
# VHCA_BENCH_MTU=9000 bench/run.sh --wire runs the wire benchmark with
# eth1 at that MTU in both guests (RoCE then uses the largest IB MTU that
# fits: 4096 at jumbo frames, 1024 at the default 1500), an additional
# configuration whose table goes beside the default one, not in its place.
#
# The wire is tools/guest.sh's link: a unix stream between the two qemus,
# lossless like a RoCE fabric.  (A TCP stream held bursts of small frames
# 40 ms by Nagle's algorithm; UDP dropped any burst over about 90 frames
# in the receiving qemu's socket buffer, and both stacks then spent the
# link on go-back-N.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tools/lib.sh"
cd "$VHCA_ROOT"

bash tools/setup.sh
make -s all
# Every figure of the last run, round by round, stays in build/.
out=build/bench${1:+-${1#--}}.results
if [ "${1:-}" = --wire ]; then
	cmd='bash bench/guest-wire.sh'
	if [ -n "${VHCA_BENCH_MTU:-}" ]; then
		[[ $VHCA_BENCH_MTU =~ ^[0-9]+$ ]] ||
			die "VHCA_BENCH_MTU must be a number of bytes"
		cmd="VHCA_BENCH_MTU=$VHCA_BENCH_MTU $cmd"
		out=build/bench-wire-mtu$VHCA_BENCH_MTU.results
	fi
	# the host's view of the same windows: see bench/host_cpu.py
	rm -f "${out%.results}.host"
	python3 bench/host_cpu.py sample "${out%.results}.host" &
	sampler=$!
	tools/guest.sh --timeout 1800 --peer "$cmd" "$cmd" |
		tee "$out" | grep -Ev '^(RESULT|WINDOW|HOSTCLOCK)' || true
	kill "$sampler"
	wait "$sampler" 2>/dev/null || true
	awk -v target="usec figures: lower is better; MBps/Mpps: higher (target vhca/rxe >= 2 on the wire)" \
		-f bench/table.awk "$out"
	echo
	python3 bench/host_cpu.py report "${out%.results}.host" "$out"
elif [ "${1:-}" = --nvme ]; then
	ab=${VHCA_BENCH_AB:-} rounds=${VHCA_BENCH_ROUNDS:-2}
	[[ $ab =~ ^[A-Za-z0-9\ ]*$ && $rounds =~ ^[0-9]+$ ]] ||
		die "VHCA_BENCH_AB: build names (letters, digits); VHCA_BENCH_ROUNDS: a number"
	for k in $ab; do
		[ -f "build/ab/$k.ko" ] || die "no build/ab/$k.ko"
	done
	tools/guest.sh --timeout $((900 * rounds + 600)) \
		"AB='$ab' ROUNDS=$rounds bash bench/guest-nvme.sh" |
		tee "$out" | grep -v '^RESULT' || true
	awk -f bench/nvme-table.awk "$out"
elif [ "${1:-}" = --pingpong ]; then
	: >"$out"
	for load in idle busy; do
		spinners=()
		if [ "$load" = busy ]; then
			for _ in $(seq "$(nproc)"); do
				timeout 3600 sh -c 'while :; do :; done' &
				spinners+=($!)
			done
		fi
		echo "# the host's CPUs $load"
		tools/guest.sh --timeout 3000 'bash bench/guest-pingpong.sh' >"$out.$load" || true
		kill "${spinners[@]}" 2>/dev/null || true
		grep -v '^RESULT' "$out.$load" || true
		awk -v target="host $load: usec figures, lower is better" \
			-f bench/table.awk "$out.$load"
		sed "s/^RESULT /RESULT-$load /" "$out.$load" >>"$out"
		rm -f "$out.$load"
		echo
	done
elif [ "${1:-}" = --odp ]; then
	bash tools/system.sh build trixie-backports
	tools/guest.sh --system trixie-backports --timeout 1800 'bash bench/guest-odp.sh' |
		tee "$out" | grep -v '^RESULT' || true
	awk -v target="ms: lower is better; MBps: higher" -f bench/table.awk "$out"
elif [ "${1:-}" = --clients ]; then
	tools/guest.sh --timeout 1800 'bash bench/guest-clients.sh' | tee "$out" | grep -v '^RESULT' || true
	awk -v target="usec figures: lower is better; MBps: higher" \
		-f bench/table.awk "$out"
else
	tools/guest.sh --timeout 1800 'bash bench/guest-bench.sh' | tee "$out" | grep -v '^RESULT' || true
	awk -f bench/table.awk "$out"
fi
