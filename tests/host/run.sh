#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Host-side tests: the ABI header in userspace, the provider binary's
# contract with libibverbs, and the tests' own packet checkers.  Prints TAP.
set -u
cd "$(dirname "$0")/../.."
. tests/guest/lib/lib.sh	# the TAP helpers are not guest specific
tap_plan 62

build/tests/abi_test >/tmp/vhca-abi.tap 2>&1
rc=$?
tap_import abi </tmp/vhca-abi.tap
check_eq "abi_test exit status" "$rc" 0

so=build/libvhca-rdmav34.so
check "the provider is named for private ABI 34" test -f "$so"
check_eq "the provider exports no symbols" \
	"$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBR]$/ {print $3}')" ""
check_eq "every libibverbs symbol it uses is at IBVERBS_PRIVATE_34 or IBVERBS_1.x" \
	"$(objdump -T "$so" | awk '/\*UND\*/ && /ibv|verbs/ && !/IBVERBS_PRIVATE_34|IBVERBS_1\./')" ""
check "it registers itself from a constructor" \
	bash -c "objdump -T $so | grep -q verbs_register_driver_34 && readelf -S $so | grep -q init_array"
check "libibverbs loads it (dlopen resolves every symbol)" \
	python3 -c "import ctypes; ctypes.CDLL('libibverbs.so.1', mode=ctypes.RTLD_GLOBAL); ctypes.CDLL('$so')"
inst=$(mktemp -d)
installed() {
	make -s install DESTDIR="$inst" INSTALL_MOD_PATH="$inst" &&
	ls "$inst"/lib/modules/*/updates/vhca.ko* &&
	test -f "$inst/usr/lib/$(gcc -print-multiarch)/libibverbs/libvhca-rdmav34.so" &&
	grep -qx "driver vhca" "$inst/etc/libibverbs.d/vhca.driver"
}
check "make install places module, provider and driver file" installed
check_eq "make uninstall removes every file make install placed" \
	"$(make -s uninstall DESTDIR="$inst" INSTALL_MOD_PATH="$inst" && find "$inst" ! -type d)" ""
dkms_tree() {
	local v src
	v=$(make -s --no-print-directory version)
	src=$inst/usr/src/vhca-$v
	make -s dkms-source DESTDIR="$inst" &&
		grep -qx "PACKAGE_VERSION=\"$v\"" "$src/dkms.conf" &&
		test -f "$src/Kbuild" -a -f "$src/drivers/vhca_main.c" \
			-a -f "$src/uapi/vhca-abi.h"
}
check "make dkms-source lays out the tree DKMS builds, its version set" dkms_tree
rm -rf "$inst"

# bench/host_cpu.py's report, on samples whose shares are known: guest a's
# vCPU 0 at half a host CPU, b's at a whole one, b's main loop at a tenth;
# b's window (its clock 10 s behind the host's) lies inside the samples
hz=$(getconf CLK_TCK)
awk -v hz="$hz" 'BEGIN {
	for (i = 0; i <= 20; i++) {
		t = 100 + i * 0.2
		printf "%.3f a vcpu0 %d\n", t, 1000 + i * 0.2 * hz / 2
		printf "%.3f b vcpu0 %d\n", t, 5000 + i * 0.2 * hz
		printf "%.3f b main %d\n", t, 300 + i * 0.2 * hz / 10
	}
}' >"$inst.host"
printf '%s\n' "RESULT vhca0 read_bw_MBps 32" "WINDOW vhca0 read_bw 90.5 91.5" \
	"HOSTCLOCK 10.000" "WINDOW vhca0 read_bw 90.6 91.6" \
	"WINDOW rxe0 read_bw 94.0 95.0" "RESULT rxe0 read_bw_MBps 16" >"$inst.results"
out=$(python3 bench/host_cpu.py report "$inst.host" "$inst.results")
check_eq "host_cpu.py: each thread's share and the host CPU per MB" \
	"$(awk '$1 == "read_bw" && $2 == "vhca0" { print $3, $6, $8, $10, $11 }' <<<"$out")" \
	"50 100 10 160 50.0"
check_eq "host_cpu.py: a window outside the samples counts for nothing" \
	"$(awk '$1 == "read_bw" && $2 != "vhca0"' <<<"$out")" ""
printf '%s\n' "WINDOW vhca0 read_bw 100.5 101.5" >"$inst.results"
check_eq "host_cpu.py: without the guest's clock offset, no window" \
	"$(python3 bench/host_cpu.py report "$inst.host" "$inst.results")" \
	"host CPU: no window was sampled"
rm -f "$inst.host" "$inst.results"

# tools/vcpu-prof.py's report: RIPs named by the guest's kallsyms (a
# module's too), halted samples apart, user space as one, stack words
# named for the samples asked about
printf '%s\n' "ffffffff81000000 T pv_native_safe_halt" \
	"ffffffff81000100 T native_queued_spin_lock_slowpath" \
	"ffffffff81000200 t virtnet_poll_tx [virtio_net]" \
	"ffffffffc0000000 t vhca_resp_rd_work [vhca]" >"$inst.syms"
printf '%s\n' "01 ffffffff81000004" "02 ffffffff81000004" \
	"01 ffffffff81000120 ffffffff81000210 1234" "02 ffffffffc0000010" \
	"01 ffffffff81000130 ffffffff81000220" "02 7f0000001000" >"$inst.samples"
out=$(python3 tools/vcpu-prof.py report "$inst.syms" "$inst.samples" \
	--stacks spin_lock)
check_eq "vcpu-prof.py: idle per vCPU" "$(sed -n 1p <<<"$out")" \
	"6 samples; idle (halted) per vCPU: 01 33%, 02 33%"
check_eq "vcpu-prof.py: busy samples by function, per vCPU" \
	"$(awk '$2 ~ /^[0-9]+$/ { print $1, $2, $3, $NF }' <<<"$out" | head -n 3)" \
	"50.0 2 native_queued_spin_lock_slowpath 02:0]
25.0 1 vhca_resp_rd_work 02:1]
25.0 1 [user] 02:1]"
check_eq "vcpu-prof.py: who spun" "$(tail -n 1 <<<"$out")" \
	"     2  virtnet_poll_tx [virtio_net]"
rm -f "$inst.syms" "$inst.samples"
# the layering: calls run down, and headers are layers that include down
layers=$(python3 tools/layers.py drivers)
check_eq "tools/layers.py: no two of the driver's files call each other, even through others" \
	"$(sed -n 's/^files in loops: //p' <<<"$layers")" 0
check_eq "drivers/vhca.h includes no header of a layer above it" \
	"$(grep -c '#include "vhca_\(wqe\|engine\|wire\|req\)\.h"' drivers/vhca.h)" 0
# and in the provider: ibv_post_send() (qp.c) and ibv_wr_*() (wr.c) share
# ring.c's primitives, and neither calls the other back
pobj=$(mktemp -d)
for f in userspace/*.c; do
	cc -c -fPIC -DVHCA_RDMA_CORE="$(pkg-config --modversion libibverbs | cut -d. -f3)" \
		-Iuapi -Iuserspace -o "$pobj/vhca_$(basename "$f" .c).o" "$f"
done
check_eq "tools/layers.py: no two of the provider's files call each other, even through others" \
	"$(python3 tools/layers.py "$pobj" | sed -n 's/^files in loops: //p')" 0
rm -rf "$pobj"

# tools/guest.sh's scan of a guest's kernel log: the one known fault of a
# Debian program (perftest's ib_send_bw in librdmacm) is no report; the
# same fault in any other program or library is, as is a kernel's
eval "$(sed -n -e '/^bad=/p' -e '/^known=/p' -e '/^kernel_log() {/,/^}/p' tools/guest.sh)"
klog=$(mktemp -d)
# shellcheck disable=SC2154 # bad: tools/guest.sh's, from the eval
reports() {
	printf '%s\n' "$1" >"$klog/dmesg"
	kernel_log "$klog" | grep -Eq "$bad"
}
no_report() { ! reports "$1"; }
# trap_line PROGRAM LIBRARY: the line the kernel logs for such a fault
trap_line() {
	echo "[   39.868288] traps: $1[292] general protection fault ip:7f4230075472 sp:7ffddcc22bb0 error:0 in $2[a472,7f423006f000+15000]"
}
check "guest.sh: perftest's known fault in librdmacm is no kernel report" \
	no_report "$(trap_line ib_send_bw librdmacm.so.1.3.44.0)"
check "guest.sh: the same fault of another program is" \
	reports "$(trap_line datacheck librdmacm.so.1.3.44.0)"
check "guest.sh: the same fault in another library is" \
	reports "$(trap_line ib_send_bw libvhca-rdmav34.so)"
check "guest.sh: a kernel's general protection fault is a report" \
	reports '[   12.000000] general protection fault, probably for non-canonical address 0xdffffc0000000000: 0000 [#1] PREEMPT SMP KASAN'
rm -rf "$klog"

# the wire fuzzer keeps to its promise to the data-checked QPs: nothing a
# correct responder acts on, on a recording wire, for three seeds
check "pktfuzz.py: no packet a protected UC or RC QP would act on" \
	python3 tests/host/pktfuzz_protect.py
# the check of XRC's packets that tests/guest/twohost/xrc.sh runs on a
# capture fails each fault it is there for
tap_run xrccap python3 tests/host/xrccap_test.py
tap_done
