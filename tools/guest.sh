#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Boot Debian's Linux 6.12 under qemu (TCG) with this host's userspace, the
# freshly built vhca.ko (depmod'ed into the kernel's module tree, so modprobe
# finds it) and the provider installed, run one command in it and return its
# output and exit status.
#
#   tools/guest.sh [--system NAME [--root DIR] | --debug [--peer-stock]] [--nic2]
#                  [--peer 'CMD' [--link2]] [--udp] [--gdb PORT] [--timeout S] CMD...
#
# --system NAME boots another supported Debian system (tools/system.sh):
# its kernel, its userspace as the root, and its build (build/sys/NAME)
# on /vhca/build, where the default is this machine's Debian 12, Debian's
# 6.12 and build/.  With --root, DIR is the root instead: a system on
# which the packages were installed (tests/packages.sh), booted as it is,
# with its own vhca module (DKMS's) and provider, nothing of this clone's
# build, and the kernel's modules from DIR where the kernel's package is
# installed in it (else from NAME's unpacked image, with DIR's updates/).
#
# CMD runs as root in /vhca (this clone, read-only) with bash.  eth0 is a
# virtio NIC on a link of its own.  --nic2 adds eth1; --peer boots a second
# guest running its own CMD whose eth1 shares that link (VHCA_GUEST is "a" in
# the first guest and "b" in the peer).  The link is a stream over a unix
# socket between the two qemus: it loses nothing, and a guest that falls
# behind holds the other back, as pause frames (PFC) do on the lossless
# Ethernet RoCE is deployed on.  --link2 gives the two guests a second
# such link, eth2 (two ports for a bond).  --udp makes it UDP datagrams instead,
# which the receiving qemu drops when a burst overruns its socket buffer.
# --gdb opens qemu's gdbstub on 127.0.0.1:PORT (the peer's on PORT+1), for
# tools/vcpu-prof.py.  --debug boots the debug kernel of
# tools/debug-kernel.sh (KASAN, lockdep, UBSAN, kmemleak) with the vhca.ko
# and test modules `make debug` built against it; the job finds those test
# modules in $VHCA_KMODS (build/tests with Debian's kernel); with
# --peer-stock the peer boots Debian's kernel (a fuzzer's host need not pay
# for KASAN).
#
# Exit status: 0 when every CMD succeeded; 1 when a CMD failed; 2 when a
# guest's dmesg shows an Oops, BUG, WARNING, lockdep, KASAN, UBSAN, hung-task,
# soft lockup or RCU stall report, kmemleak found a leak, or a guest did not
# finish (hang, crash, timeout).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

nic2=0 link2=0 peer= timeout=600 udp=0 gdb= debug=0 peer_debug= system= inst=
while [ $# -gt 0 ]; do
	case $1 in
	--system) system=$2; shift ;;
	--root) inst=$(cd "$2" && pwd) || die "--root $2: no such folder"; shift ;;
	--debug) debug=1 ;;
	--peer-stock) peer_debug=0 ;;
	--nic2) nic2=1 ;;
	--peer) peer=$2; nic2=1; shift ;;
	--link2) link2=1 ;;
	--udp) udp=1 ;;
	--gdb) gdb=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--) shift; break ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
peer_debug=${peer_debug:-$debug}
[ $# -gt 0 ] || die "usage: tools/guest.sh [--system NAME [--root DIR] | --debug [--peer-stock]] [--nic2] [--peer CMD] [--udp] [--gdb PORT] [--timeout S] CMD..."
[ -z "$inst" ] || [ -n "$system" ] || die "--root needs --system: which kernel to boot"
[ -z "$inst" ] || [ -z "$peer" ] || die "--root boots one guest: no --peer"
[ "$link2" = 0 ] || { [ -n "$peer" ] && [ "$udp" = 0 ]; } ||
	die "--link2 is a second stream link between two guests: --peer, no --udp"

# select_kernel DEBUG: the kernel a guest boots, in the caller's variables
# kver, kid (one build of it: the debug kernel is rebuilt under the same
# release when its config changes), kimg (the folder with lib/modules/$kver),
# vmlinuz, ko, kmods, mem, kargs, groot (the guest's root) and gbuild (its
# /vhca/build).
select_kernel() {
	groot=/
	gbuild="$VHCA_ROOT/build"
	if [ -n "$system" ]; then
		local conf="$VHCA_CACHE/systems/$system" r moddir rootstamp
		[ -f "$conf" ] || die "no system $system: run tools/system.sh build $system"
		# shellcheck disable=SC1090
		. "$conf"
		kid=$kver
		kimg=${moddir%/lib/modules/*}
		groot=${r:-/}
		gbuild="$VHCA_ROOT/build/sys/$system"
		ko="$gbuild/vhca.ko"
		kmods=build/tests
		[ -n "$inst" ] || [ -f "$ko" ] || die "$ko missing: run tools/system.sh build $system"
		if [ -n "$inst" ]; then
			groot=$inst
			# nothing of this clone's build: an empty /vhca/build
			gbuild="$VHCA_CACHE/nobuild"
			mkdir -p "$gbuild"
		fi
		mem=2048
		kargs=
		return
	fi
	if [ "$1" = 1 ]; then
		dk="$VHCA_CACHE/debug-kernel"
		kver=$(cat "$dk/kver" 2>/dev/null) || die "no debug kernel: run tools/debug-kernel.sh"
		# no stamp: a build that did not finish
		kid=$(cat "$dk/stamp" 2>/dev/null) || die "the debug kernel's build did not finish: run tools/debug-kernel.sh"
		kid="$kver-$kid"
		kimg="$dk/root"
		vmlinuz="$kimg/vmlinuz"
		[ -f "$kimg/vmlinuz" ] || die "no debug kernel: run tools/debug-kernel.sh"
		ko="$VHCA_ROOT/build/debug/vhca.ko"
		kmods=build/debug/tests
		[ -f "$ko" ] || die "build/debug/vhca.ko missing: run make debug"
		# KASAN's shadow takes an eighth of the memory, kmemleak and
		# lockdep their own tables
		mem=3072
		# Without ACPI: under KASAN, lockdep and kmemleak the AML
		# interpreter ran qemu's PCI routing method (_PRT) into its
		# 30 s loop timeout, boot after boot, and left a virtio device
		# with no INTx route.  The MP table routes PCI; guest-init then
		# leaves by reboot (-no-reboot).
		kargs=acpi=off
	else
		kver=$(vhca_kver)
		kimg="$VHCA_CACHE/kernel/$kver"
		vmlinuz="$kimg/vmlinuz"
		kid=$kver
		[ -f "$kimg/vmlinuz" ] || die "no unpacked kernel: run tools/setup.sh"
		ko="$VHCA_ROOT/build/vhca.ko"
		kmods=build/tests
		[ -f "$ko" ] || die "build/vhca.ko missing: run make"
		mem=2048
		kargs=
	fi
}
# both kernels are checked before a guest boots
(select_kernel "$debug") || exit 1
[ "$peer_debug" = "$debug" ] || (select_kernel "$peer_debug") || exit 1
[ -n "$inst" ] || [ -f "$VHCA_ROOT/build/${system:+sys/$system/}libvhca-rdmav34.so" ] ||
	die "provider missing: run make (or tools/system.sh build $system)"

# The module tree the guest sees: Debian's, hard-linked, plus vhca.ko and a
# depmod of its own.  depmod replaces its files instead of writing through
# the links, so the unpacked image stays pristine.
stage_modules() {
	[ -z "$inst" ] || { inst_modules; return; }
	# one stage per clone: two clones' guests must not swap vhca.ko
	local stages stage
	stages="$VHCA_CACHE/stage/$(printf %s "$VHCA_ROOT" | sha256sum | cut -c1-8)"
	stage="$stages/$kid"
	local dst="$stage/lib/modules/$kver/updates/vhca.ko"

	# Guests of one clone that start together (tools/test.sh's lanes, or
	# by hand) take turns: one of them found the first one's stage half
	# copied, and booted with no virtio-net module.
	mkdir -p "$stages"
	(
		flock 9
		if [ ! -f "$stage/.complete" ]; then
			# the stages of earlier builds of this release are stale
			rm -rf "$stage" "$stages/$kver"-*
			mkdir -p "$stage/lib/modules"
			cp -al "$kimg/lib/modules/$kver" "$stage/lib/modules/"
			touch "$stage/.complete"
		fi
		if ! cmp -s "$ko" "$dst"; then
			mkdir -p "$(dirname "$dst")"
			cp "$ko" "$dst.tmp" && mv "$dst.tmp" "$dst"
			depmod -b "$stage" "$kver"
		fi
	) 9>"$stages.lock"
	echo "$stage"
}

# inst_modules: the module tree of the installed root (--root), as its
# kernel package and DKMS left it; where the kernel is unpacked outside it
# (the bookworm systems), the image's modules and the root's updates/ in a
# stage of this run, depmod'ed as the kernel's package would have
inst_modules() {
	if [ -d "$inst/lib/modules/$kver/kernel" ]; then
		echo "$inst"
		return
	fi
	local stage="$work/stage"
	rm -rf "$stage"
	mkdir -p "$stage/lib/modules"
	cp -al "$kimg/lib/modules/$kver" "$stage/lib/modules/"
	rm -rf "$stage/lib/modules/$kver/updates"
	[ ! -d "$inst/lib/modules/$kver/updates" ] ||
		cp -a "$inst/lib/modules/$kver/updates" "$stage/lib/modules/$kver/"
	depmod -b "$stage" "$kver"
	echo "$stage"
}

# A busybox initramfs that loads 9p and overlayfs and switch_roots into an
# overlay of the host's / (read-only) and a tmpfs.
build_initramfs() {
	local key img dir m
	key=$(cat "$here/initramfs-init" "$here/guest.sh" | sha256sum | cut -c1-12)
	img="$VHCA_CACHE/initramfs-$kid-$key.cpio.gz"
	if [ ! -f "$img" ]; then
		dir=$(mktemp -d)
		mkdir -p "$dir"/{bin,mod,proc,sys,dev}
		cp /bin/busybox "$dir/bin/busybox"
		ln -s busybox "$dir/bin/sh"
		cp "$here/initramfs-init" "$dir/init"
		chmod +x "$dir/init"
		# none of them when built in (the debug kernel)
		: >"$dir/mod/order"
		# virtio_pci is a module in 6.1, built in later
		for m in $(modprobe -d "$kimg" -S "$kver" --show-depends -a virtio_pci 9pnet_virtio 9p overlay |
			   awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++'); do
			case $m in
			*.xz) xz -dc "$m" >"$dir/mod/$(basename "${m%.xz}")" ;;
			*) cp "$m" "$dir/mod/" ;;
			esac
			basename "${m%.xz}" >>"$dir/mod/order"
		done
		# two guests may build the same image at once (the debug lanes):
		# each its own file, renamed into place whole
		(cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) >"$img.$$.tmp"
		mv -f "$img.$$.tmp" "$img"
		rm -rf "$dir"
	fi
	echo "$img"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/vhca-guest.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

port= port2=
[ "$udp" = 0 ] || { port=$(free_port); port2=$(free_port); }

# start_guest NAME CMD LINKMODE: LINKMODE is listen, connect or none
start_guest() {
	local name=$1 cmd=$2 link=$3 out="$work/$1" mac
	local dk kver kid kimg vmlinuz ko kmods mem kargs groot gbuild stage initrd

	select_kernel "$([ "$name" = a ] && echo "$debug" || echo "$peer_debug")"
	stage=$(stage_modules)
	initrd=$(build_initramfs)
	mkdir -p "$out"
	# tools/guest-init installs this clone's provider but on a root that
	# has the package's
	[ -z "$inst" ] || : >"$out/installed"
	printf 'export VHCA_GUEST=%s VHCA_KMODS=%s\n%s\n' "$name" "$kmods" "$cmd" >"$out/job"
	mac=$([ "$name" = a ] && echo 0a || echo 0b)
	# tsc=reliable: under a loaded TCG host the clocksource watchdog marks
	# the TSC unstable and the guest falls back to the HPET.  Then every
	# gettimeofday() is a system call reading an emulated HPET, and
	# perftest's estimate of the TSC rate (a regression of rdtsc against
	# gettimeofday) misses its r^2 >= 0.9 bar: it prints "Can't produce a
	# report" and exits 1 after the traffic went through.  TCG's TSC
	# follows the host's monotonic clock and is the same on every vCPU.
	#
	# +rdrand: qemu64 has no RDRAND, so the guest's crng stayed unseeded
	# until a test first read /dev/urandom.  The read then seeded it and
	# flipped the crng_is_ready static key, rewriting code another vCPU
	# was running.  TCG got that cross-modification wrong once in CI (a
	# fatal trap in the middle of urandom_read_iter's patched NOP).  With
	# RDRAND the kernel trusts the CPU's entropy and seeds the crng in
	# early boot, before the second vCPU starts.
	#
	# -cx16: four guest deaths, double faults in a kworker or in softirq,
	# all had RIP on a successor of the cmpxchg16b in SLUB's allocation
	# fast path (this_cpu_cmpxchg128 in __kmalloc_node_track_caller_noprof:
	# +0xd5 after a failed exchange three times, +0x21a after a successful
	# one), with EFLAGS in the frame that no guest code can produce (the
	# last: RAX's low 32 bits | 0x242).  The kernel patches that
	# instruction in at boot only when the CPU has CX16; without it the
	# site keeps its call to this_cpu_cmpxchg16b_emu(), plain loads and
	# stores under local_irq_save().  Bandwidth on the wire is the same.
	#
	# debug-threads=on names qemu's threads ("CPU 0/TCG"), so that the
	# host's share of each vCPU and of the main loop can be told apart
	# (bench/host_cpu.py).
	local args=(
		-accel tcg -name debug-threads=on -cpu qemu64,+rdrand,-cx16 -m "$mem" -smp 2 -nodefaults -no-reboot
		-display none -serial "file:$out/console" -monitor none
		-kernel "$vmlinuz" -initrd "$initrd"
		-append "console=ttyS0 loglevel=5 panic=-1 rw tsc=reliable $kargs"
		-virtfs "local,path=$groot,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$stage/lib/modules,mount_tag=modules,security_model=none,readonly=on"
		-virtfs "local,path=$VHCA_ROOT,mount_tag=vhca,security_model=none,readonly=on"
		-virtfs "local,path=$gbuild,mount_tag=vhcabuild,security_model=none,readonly=on"
		-virtfs "local,path=$out,mount_tag=out,security_model=none"
		-netdev user,id=n0,restrict=on
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:00:$mac:00"
	)
	case $udp,$link in
	0,listen) args+=(-netdev "stream,id=n1,server=on,addr.type=unix,addr.path=$work/link") ;;
	0,connect) args+=(-netdev "stream,id=n1,server=off,addr.type=unix,addr.path=$work/link") ;;
	1,listen) args+=(-netdev "socket,id=n1,udp=127.0.0.1:$port2,localaddr=127.0.0.1:$port") ;;
	1,connect) args+=(-netdev "socket,id=n1,udp=127.0.0.1:$port,localaddr=127.0.0.1:$port2") ;;
	esac
	local n1speed=
	[ "$link2" = 0 ] || n1speed=,speed=10000,duplex=full
	[ "$link" = none ] ||
		args+=(-device "virtio-net-pci,netdev=n1,mac=52:54:00:00:$mac:01$n1speed")
	if [ "$link2" = 1 ]; then
		local srv=on
		[ "$link" = listen ] || srv=off
		# a speed and duplex, which an 802.3ad bond's ports need
		args+=(-netdev "stream,id=n2,server=$srv,addr.type=unix,addr.path=$work/link2"
			-device "virtio-net-pci,netdev=n2,mac=52:54:00:00:$mac:02,speed=10000,duplex=full")
	fi
	if [ -n "$gdb" ]; then
		local gport=$gdb
		[ "$name" = a ] || gport=$((gdb + 1))
		args+=(-gdb "tcp:127.0.0.1:$gport")
	fi
	timeout --foreground "$timeout" qemu-system-x86_64 "${args[@]}" \
		>"$out/qemu.log" 2>&1 &
	pids+=($!)
}

# and from the debug kernel: kmemleak's leaks (its report, /out/kmemleak,
# is read with dmesg), soft lockups and RCU stalls.  Lockdep's reports
# start with WARNING: or BUG: but for the non-static key one; its boot
# banner ("RCU lockdep checking is enabled") is not a report.
bad='Oops|BUG:|WARNING:|NETDEV WATCHDOG|Kernel panic|general protection|KASAN|UBSAN|INFO: trying to register non-static key|INFO: lockdep is turned off|possible recursive locking|possible circular locking|blocked for more than|unregister_netdevice: waiting|Call Trace|unreferenced object|suspected memory leak|leak detector disabled|soft lockup|self-detected stall|rcu: INFO'

# A user-space fault the kernel logs, which is a known bug of a Debian
# program and no problem of the kernel's: perftest 4.5+0.17 (Debian 12),
# ib_send_bw -R's client, rejected as it connects its data QP before the
# server listens for it, tries again with the CM IDs it has just destroyed
# (rdma_cm_client_connection()) and faults in librdmacm 44's
# rdma_resolve_addr() (tests/guest/twohost/underlay.sh tries it again).
# Nothing else a line like it says is let through: another program, or
# another library, is a report.
known='\] traps: ib_send_bw\[[0-9]+\] general protection fault ip:[0-9a-f]+ sp:[0-9a-f]+ error:0 in librdmacm\.so\.1\.3\.44\.0\[[0-9a-f]+,[0-9a-f]+\+[0-9a-f]+\]'

# kernel_log DIR: what a guest's kernel said, but for the known faults.
# /out/kmemleak is there only on a kernel with kmemleak; the status is 0
# whatever is missing or left out, as pipefail would otherwise take cat's
# or grep's for the pipeline's.
kernel_log() {
	cat "$1/dmesg" "$1/console" "$1/kmemleak" 2>/dev/null |
		grep -Ev "$known" || true
}

# report NAME: print a guest's output; returns 0, 1 (CMD failed) or 2
report() {
	local name=$1 out="$work/$1" rc
	[ -z "$peer" ] || echo "----- guest $name -----"
	cat "$out/log" 2>/dev/null || true
	rc=$(cat "$out/rc" 2>/dev/null || echo none)
	if [ "$rc" = none ]; then
		echo "vhca-guest($name): no exit status (hung, crashed or timed out)"
		# the first report names the fault; the tail says where it ended
		if grep -Eq "$bad|double fault" "$out/console" 2>/dev/null; then
			echo "vhca-guest($name): the console's first report:"
			grep -E -m1 -B3 -A40 "$bad|double fault" "$out/console"
		fi
		echo "vhca-guest($name): the console's tail:"
		tail -n 40 "$out/console" 2>/dev/null || true
		tail -n 5 "$out/qemu.log" 2>/dev/null || true
		return 2
	fi
	if grep -Eqs "$known" "$out/dmesg" "$out/console"; then
		echo "vhca-guest($name): perftest's known fault in librdmacm, not a kernel report:"
		grep -Ehs "$known" "$out/dmesg" "$out/console" | sort -u
	fi
	if kernel_log "$out" | grep -Eq "$bad"; then
		echo "vhca-guest($name): kernel reported a problem:"
		kernel_log "$out" | grep -E -B2 -A20 "$bad" | head -n 60
		return 2
	fi
	[ "$rc" = 0 ] || return 1
}

boot() {
	if [ "$nic2" = 1 ]; then
		start_guest a "$*" listen
		if [ -n "$peer" ]; then
			# qemu's listening socket exists once guest a is
			# up; connecting may race it, so wait for it first.
			for _ in $(seq 100); do
				[ "$udp" = 0 ] || break
				[ -S "$work/link" ] &&
					{ [ "$link2" = 0 ] || [ -S "$work/link2" ]; } && break
				sleep 0.1
			done
			start_guest b "$peer" connect
		fi
	else
		start_guest a "$*" none
	fi
	# A guest that died booting would leave its peer waiting for it
	# until the timeout: stop the peer at once (boot_died, below).
	local p alive=1 t0=$SECONDS
	while [ "$alive" = 1 ]; do
		if boot_died || boot_hung "$t0"; then
			for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
			break
		fi
		alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		sleep 1
	done
	for p in "${pids[@]}"; do wait "$p" || true; done
	pids=()
}

# A guest whose kernel died before its job started (no log yet) never
# ran anything of ours: under TCG, Debian's kernel now and then takes an
# int3 Oops while patching its own text at boot.  Boot once more, saying
# so; a second such death is reported like any other.
boot_died() {
	local g
	for g in a ${peer:+b}; do
		[ ! -e "$work/$g/log" ] || continue
		[ -e "$work/$g/boot-hung" ] && return 0
		grep -q "Kernel panic" "$work/$g/console" 2>/dev/null &&
			return 0
	done
	return 1
}

# boot_hung T0: a guest started at T0 that has not begun its job after
# boot_wait seconds never ran anything of ours either: TCG has stalled a
# guest's boot for good before (its console stopped in the ACPI probe, 1 s
# into the boot).  A guest takes 3 s to its job alone, a minute at worst on
# the debug kernel with every lane busy.
boot_wait=300
boot_hung() {
	local g
	[ $((SECONDS - $1)) -ge "$boot_wait" ] || return 1
	for g in a ${peer:+b}; do
		if [ ! -e "$work/$g/log" ]; then
			: >"$work/$g/boot-hung"
			return 0
		fi
	done
	return 1
}

boot "$@"
if boot_died; then
	echo "vhca-guest: a guest's kernel died or hung while booting, before its job; booting again. Its console:"
	grep -E -A3 "Oops|RIP" "$work"/*/console | head -n 12 || true
	for g in a b; do
		[ ! -e "$work/$g/boot-hung" ] ||
			{ echo "(guest $g: no job after ${boot_wait}s; the console's tail)"; tail -n 5 "$work/$g/console"; }
	done
	[ "$udp" = 0 ] || { port=$(free_port); port2=$(free_port); }
	rm -rf "$work"/a "$work"/b "$work"/link
	boot "$@"
fi

status=0
report a || status=$?
if [ -n "$peer" ]; then
	report b || { r=$?; [ "$r" -lt "$status" ] || status=$r; }
fi
exit "$status"
