#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The whole test suite: set-up, build, lint (W=1, sparse, checkpatch), host
# tests, the guest harness's self-test, then in guests of Debian's kernel
# netfilter steering and rxe beside vhca, two vhca devices on one host,
# network namespaces (tests/guest/netns.sh), the RDMA CM and iSER tests,
# rdma-core's pyverbs suite, what users run (libfabric, UCX, NFS over
# RDMA, SRP), the two-guest link test and its underlays.  Then every supported Debian system (tools/system.sh:
# 6.1, 6.12-rt, trixie's 6.12 and trixie-backports' kernel with rdma-core
# 56), each built as its users build it: its Debian packages built
# (lintian-clean) and installed (DKMS for each kernel, and on trixie the
# upgrade to trixie-backports' kernel), each kernel booted with them, its device suite, its data path
# (tests/guest/leg.sh) and, where its rdma-core differs (trixie's 56),
# pyverbs.  Then on the debug kernel (tools/debug-kernel.sh: KASAN,
# lockdep, UBSAN, kmemleak, fault injection): the KUnit suites, the device
# and kernel ULP (kernel verbs, NVMe-oF, iSER) tests, every allocation of every verb failed in
# turn, the ring fuzzer and the scenario fuzzer (whose processes run in
# network namespaces), two guests at a time, then the packet fuzzer from
# one guest at the other (its checks that are fixed in time run on
# Debian's kernel, before).
# Ends with "N passed, N failed".
#
# VHCA_DEBUG_KERNEL=0 leaves the debug kernel out (a quicker run for
# development): KUnit then runs under UML (kunit/run.sh), the device and
# kernel ULP tests and the fuzzers on Debian's kernel; fault injection
# does not run.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
cd "$VHCA_ROOT"

bash tools/setup.sh || die "set-up failed"
logs=$(mktemp -d "${TMPDIR:-/tmp}/vhca-test.XXXXXX")

# The debug kernel: built from a fresh cache (about 70 CPU-minutes), a
# no-op afterwards.  It is the longest path of a fresh run, so it starts
# first.  It builds in the background at the lowest priority while the
# suites on Debian's kernel run, on the CPU time their guests leave idle,
# and its own suites run last.  A failure fails those suites, not the
# whole run.
debug=${VHCA_DEBUG_KERNEL:-1}
if [ "$debug" = 1 ]; then
	(nice -n 19 bash tools/debug-kernel.sh && nice -n 19 make -s debug) \
		>"$logs/debug-kernel.log" 2>&1 &
	debug_pid=$!
fi
make -s all || die "build failed"
# phase NAME: the time since the last phase (or the start) was NAME's,
# for the summary
phases=()
phase_t=0
phase() {
	phases+=("$((SECONDS - phase_t))s $1")
	phase_t=$SECONDS
	# as it happens too: a run stopped from outside shows how far it got
	echo "# at ${SECONDS}s: $1 done"
}
phase "set-up and build"
passed=0
failed=0
skipped=0
# what the closing summary lists: each suite's time, each failure, and
# each suite that did not run
times=()
failures=()
not_run=()

# The other supported systems (tools/system.sh): each one's kernel, and
# for trixie its root, set up, and vhca built for it, then the packages
# built and installed on bookworm and on trixie (tests/packages.sh
# install, native builds), in the background while the suites of the
# primary system run; their legs run after those.
systems=(bookworm-6.1 bookworm-rt trixie trixie-backports)
(
	for s in "${systems[@]}"; do
		t0=$SECONDS
		nice -n 10 bash tools/system.sh build "$s" >"$logs/build-$s.log" 2>&1
		echo "$? $((SECONDS - t0))" >"$logs/build-$s.rc"
	done
	for g in bookworm trixie; do
		t0=$SECONDS
		nice -n 10 bash tests/packages.sh install "$g" \
			>"$logs/packages-install-$g.log" 2>&1
		echo "$? $((SECONDS - t0))" >"$logs/packages-install-$g.rc"
	done
) &
systems_pid=$!

# check NAME CMD...: one test that passes when CMD succeeds
check() {
	local name=$1
	shift
	if "$@" >"$logs/$name.log" 2>&1; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		sed 's/^/#   /' "$logs/$name.log" | tail -n 40
		failed=$((failed + 1))
		failures+=("$name")
	fi
}

# tap_count LOG: "PASSED SKIPPED FAILED", then a line for each way LOG
# breaks its plans.  LOG holds one TAP stream or more (two guests print
# one each), each opened by its plan line "1..N"; a check before any
# plan, or a stream of more or fewer than N checks, breaks them.  An
# "ok ... # SKIP" line is a skip, not a pass.
tap_count() {
	awk '
	function close_stream() {
		if (open && ran != plan)
			bad[++nb] = "planned " plan " checks, ran " ran
		open = 0
	}
	/^1\.\.[0-9]+$/ { close_stream(); open = 1; plan = substr($0, 4) + 0; ran = 0; next }
	/^(ok|not ok)( |$)/ {
		if (!open && !early++)
			bad[++nb] = "checks before any plan"
		ran++
		if (/^not ok/) f++
		else if (/^ok [^#]*# SKIP/) s++
		else p++
	}
	END {
		close_stream()
		print p + 0, s + 0, f + 0
		for (i = 1; i <= nb; i++) print bad[i]
	}' "$1"
}

# tally NAME RC SECS: count a suite's TAP log: each "ok"/"not ok" line
# counts, a "# SKIP" apart; each broken plan, a non-zero status with no
# failure to explain it and a suite that ran no test count as one failure
# each.
tally() {
	local name=$1 rc=$2 p s f line counts entry
	echo "# $name took ${3}s"
	times+=("$3 $name")
	counts=$(tap_count "$logs/$name.log")
	read -r p s f <<<"$counts"
	# the first ten failures, each with the comments under it that say
	# why, for the summary at the end (the full log may not be kept)
	entry=
	while IFS= read -r line; do
		if [[ $line == "not ok "* ]]; then
			[ -z "$entry" ] || failures+=("$entry")
			entry="$name: $line"
		else
			entry+=$'\n'"#     $line"
		fi
	done < <(awk '/^not ok / { if (++n > 10) exit; print; k = 6; next }
		k && /^#/ { print; k--; next } { k = 0 }' "$logs/$name.log")
	[ -z "$entry" ] || failures+=("$entry")
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		echo "not ok - $name: $line"
		failures+=("$name: $line")
		f=$((f + 1))
	done < <(tail -n +2 <<<"$counts")
	# a status that no failure above explains
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name exited with status $rc"
		failures+=("$name: exited with status $rc")
		f=1
	fi
	if [ "$p" = 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name ran no test"
		failures+=("$name: ran no test")
		f=1
	fi
	passed=$((passed + p))
	skipped=$((skipped + s))
	failed=$((failed + f))
}

# tap NAME CMD...: a suite printing TAP, its output shown as it runs
tap() {
	local name=$1 rc t0=$SECONDS
	shift
	echo "# $name"
	"$@" 2>&1 | tee "$logs/$name.log"
	rc=${PIPESTATUS[0]}
	tally "$name" "$rc" $((SECONDS - t0))
}

# lane NAME CMD [NAME CMD]...: suites one after the other, quietly, each
# leaving NAME.log and NAME.rc ("status seconds") for show_lane
lane() {
	local t0
	while [ $# -ge 2 ]; do
		t0=$SECONDS
		bash -c "$2" >"$logs/$1.log" 2>&1
		echo "$? $((SECONDS - t0))" >"$logs/$1.rc"
		echo "# $1 done in $((SECONDS - t0))s"
		shift 2
	done
}

# boot_lane BOOT OPTS NAME CMD [NAME CMD]...: the suites in one boot of
# tools/guest.sh OPTS (tests/guest/suites.sh), each leaving NAME.log and
# NAME.rc as lane's do, from its part of the boot's output; and BOOT's own
# check, that the boot's kernel reported no problem (guest.sh's status 2:
# its report, after the last suite's part, is BOOT's log).  A suite that
# did not end (the boot hung or died) keeps the rest of the output and
# guest.sh's status; one that did not begin fails with a line that says so.
boot_lane() {
	local boot=$1 opts=$2 job="bash tests/guest/suites.sh" a rc t0=$SECONDS
	shift 2
	for a in "$@"; do job+=" $(printf '%q' "$a")"; done
	# shellcheck disable=SC2086
	tools/guest.sh $opts "$job" >"$logs/$boot.out" 2>&1
	rc=$?
	awk -v dir="$logs" -v boot="$boot" '
	/^### vhca-suite [^ ]+ begin$/ { cur = $3; next }
	/^### vhca-suite [^ ]+ end / {
		print $5, $6 >(dir "/" $3 ".rc")
		close(dir "/" $3 ".rc")
		cur = ""
		next
	}
	{
		f = dir "/" (cur != "" ? cur ".log" : boot ".trailer")
		print >f
	}
	' "$logs/$boot.out"
	while [ $# -ge 2 ]; do
		[ -e "$logs/$1.log" ] ||
			echo "not ok - $1 did not begin: its boot ended first" >"$logs/$1.log"
		[ -e "$logs/$1.rc" ] || echo "$([ "$rc" = 0 ] && echo 1 || echo "$rc") 0" >"$logs/$1.rc"
		echo "# $1 done in $(cut -d' ' -f2 "$logs/$1.rc")s"
		shift 2
	done
	{
		echo "1..1"
		if [ "$rc" = 2 ]; then
			echo "not ok 1 - the kernel of $boot reported no problem (tools/guest.sh: status 2)"
		else
			echo "ok 1 - the kernel of $boot reported no problem"
		fi
		sed 's/^/# /' "$logs/$boot.trailer" 2>/dev/null
	} >"$logs/$boot.log"
	echo "$([ "$rc" = 2 ] && echo 2 || echo 0) $((SECONDS - t0))" >"$logs/$boot.rc"
}

# show_lane NAME [NAME CMD]...: print and count what lane left
show_lane() {
	local rc secs
	while [ $# -ge 2 ]; do
		echo "# $1"
		cat "$logs/$1.log"
		read -r rc secs <"$logs/$1.rc" || rc=1 secs=0
		tally "$1" "$rc" "$secs"
		shift 2
	done
}

echo "# lint"
check "W=1 -Werror build" make -s lint-build
check "sparse C=2" make -s lint-sparse
check "checkpatch --strict" make -s lint-checkpatch
check "kernel-doc -Wall" make -s lint-kerneldoc

tap host bash tests/host/run.sh

# kunit_uml: the KUnit suites under UML, without the debug kernel
kunit_uml() {
	local kp kf ks
	echo "# kunit (UML)"
	bash kunit/run.sh 2>&1 | tee "$logs/kunit.log"
	kp=$(sed -n 's/^kunit: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$logs/kunit.log")
	kf=$(sed -n 's/^kunit: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$logs/kunit.log")
	ks=$(sed -n 's/^kunit: [0-9]* passed, [0-9]* failed, \([0-9]*\) skipped.*/\1/p' "$logs/kunit.log")
	passed=$((passed + ${kp:-0}))
	skipped=$((skipped + ${ks:-0}))
	failed=$((failed + ${kf:-1}))
}
[ "$debug" = 1 ] || kunit_uml

tap harness bash tests/harness.sh
# The suites of one guest each, in two lanes: a guest keeps about one CPU
# busy (TCG), so one at a time left the other CPU idle once the other
# systems' builds were done (in the run stopped at 5400 s they were, 19
# minutes before these suites were).  The lanes are about equal (the run
# prints each suite's time).  Without the debug kernel, the device suite
# and the kernel ULPs run here too: otherwise they run on the debug build
# of this kernel's source (below), and the device suite and the ULPs'
# data paths on every other system with two CPUs (the legs).
p1=(guest-examples "tools/guest.sh 'bash tests/guest/examples.sh'"
	guest-pyverbs "tools/guest.sh 'bash tests/guest/pyverbs.sh'"
	guest-rdmacm "tools/guest.sh 'bash tests/guest/rdmacm.sh'"
	guest-iser "tools/guest.sh 'bash tests/guest/iser.sh'"
	guest-steer "tools/guest.sh 'bash tests/guest/steer.sh'")
p2=(guest-twodev "tools/guest.sh 'bash tests/guest/twodev.sh'"
	guest-netns "tools/guest.sh 'bash tests/guest/netns.sh'"
	guest-clients "tools/guest.sh --timeout 900 'bash tests/guest/clients.sh'")
if [ "$debug" != 1 ]; then
	p1+=(guest-device "tools/guest.sh 'bash tests/guest/device.sh'")
	p2+=(guest-kulp "tools/guest.sh 'bash tests/guest/kulp.sh'")
fi
t0=$SECONDS
lane "${p1[@]}" &
lane "${p2[@]}"
wait $!
echo "# two lanes of one-guest suites took $((SECONDS - t0))s"
show_lane "${p1[@]}"
show_lane "${p2[@]}"
# The two-guest suites, one at a time.
tap guest-twohost tools/guest.sh --timeout 1500 \
	--peer 'bash tests/guest/twohost.sh' \
	'bash tests/guest/twohost.sh'
# VLAN, containers, bridge and bonds: a second link between the guests.
# In the same boot as the topics above (--link2 for all), rxe's UD
# client over IPv6 could not create its AH to the peer's link-local GID
# once the underlays had run, with eth2 down again or not: cause not
# found, so they keep their own boot.
tap guest-underlay tools/guest.sh --link2 --timeout 1500 \
	--peer 'TWOHOST_TOPICS=underlay bash tests/guest/twohost.sh' \
	'TWOHOST_TOPICS=underlay bash tests/guest/twohost.sh'
# The packet fuzzer's steps that are fixed in time (spoofing, forged READ
# responses, the READ flood) between Debian's kernels; the fuzz itself
# runs between debug kernels below.
fw_checks="FUZZ_PHASES=checks bash tests/guest/fuzz-wire.sh"
[ "$debug" != 1 ] ||
	tap guest-fuzz-wire-checks tools/guest.sh --timeout 1500 \
		--peer "$fw_checks" "$fw_checks"

# Each system's leg: each of its kernels booted with the packages
# installed above (tests/packages.sh boot), its device suite and data path
# (tests/guest/leg.sh: every QP type data-checked, kernel verbs, NVMe-oF
# with and without SRQs, FLUSH with rdma-core 56), and pyverbs where its
# rdma-core differs from the primary's (trixie's 56).  6.1's pyverbs run
# (440 s) left with the run stopped at 5400 s: what its kernel's verbs
# lack, the device suite checks there (ATOMIC WRITE, FLUSH).  Two guests
# at a time.
phase "lint, host, and the suites on Debian's 6.12"
t0=$SECONDS
wait "$systems_pid"
echo "# the other systems: waited $((SECONDS - t0))s for their builds"
phase "waiting for the other systems' builds and packages"
built() {
	local rc secs
	read -r rc secs <"$logs/build-$1.rc" || rc=1 secs=0
	echo "$1: tools/system.sh build took ${secs}s"
	grep -E '^vhca: ' "$logs/build-$1.log"
	[ "$rc" = 0 ] || tail -n 30 "$logs/build-$1.log"
	[ "$rc" = 0 ]
}
for s in "${systems[@]}"; do
	name="$s: vhca.ko (W=1 -Werror, sparse), provider and tests build"
	check "$name" built "$s"
	sed 's/^/# /' "$logs/$name.log"
done
show_lane packages-install-bookworm - packages-install-trixie -
leg() {
	local s=$1 what=$2
	case $what in
	device) echo "tools/guest.sh --system $s 'bash tests/guest/device.sh'" ;;
	leg) echo "tools/guest.sh --system $s 'bash tests/guest/leg.sh'" ;;
	pyverbs) echo "tools/guest.sh --system $s --timeout 1200 'bash tests/guest/pyverbs.sh'" ;;
	esac
}
# The realtime kernel is 6.12's source with PREEMPT_RT: its own locking
# (sleeping spinlocks, threaded interrupts and softirqs) is the data
# path's, which its leg runs; the device suite there (278 s) checked the
# same control path as 6.12's on the debug kernel.
l1=(packages-bookworm "bash tests/packages.sh boot bookworm"
	sys-bookworm-6.1-device "$(leg bookworm-6.1 device)"
	sys-bookworm-6.1-leg "$(leg bookworm-6.1 leg)"
	sys-bookworm-rt-leg "$(leg bookworm-rt leg)"
	sys-trixie-backports-leg "$(leg trixie-backports leg)")
# trixie's pyverbs, rdma-core 56's own suite, is the longest of these (a
# run's times are printed)
l2=(packages-trixie "bash tests/packages.sh boot trixie"
	sys-trixie-device "$(leg trixie device)"
	sys-trixie-leg "$(leg trixie leg)"
	sys-trixie-pyverbs "$(leg trixie pyverbs)"
	sys-trixie-backports-device "$(leg trixie-backports device)")
t0=$SECONDS
lane "${l1[@]}" &
lane "${l2[@]}"
wait $!
echo "# two lanes of the other systems' legs took $((SECONDS - t0))s"
phase "two lanes of the other systems' legs"
show_lane "${l1[@]}"
show_lane "${l2[@]}"

debug_ok=0
if [ "$debug" = 1 ]; then
	t0=$SECONDS
	wait "$debug_pid" && debug_ok=1
	echo "# debug kernel: waited $((SECONDS - t0))s for its build"
	phase "waiting for the debug kernel"
	grep 'debug kernel .* built in' "$logs/debug-kernel.log" | sed 's/^/# /'
	[ "$debug_ok" = 1 ] || tail -n 40 "$logs/debug-kernel.log" | sed 's/^/#   /'
fi

# The debug kernel's suites, in two lanes: each of these guests keeps one
# CPU busy (KASAN under TCG), and leaves the other idle: two at a time.
# Each lane's suites share one boot (boot_lane): a boot of this kernel and
# kmemleak's scans at its end take about 70 s of a CPU, more than some of
# the suites.  The device suite and kulp are the longest of these; the
# short ones go with them so that the lanes are about equal (the run
# prints each one's time).  Then the wire fuzzer, between two debug
# guests.  The fuzzers' counts here (60,000 WQEs, 10 scenarios a process,
# 30,000 packets) are smaller than their defaults, for CI's time: each
# still draws every one of its categories many times over.  kunit.sh
# clears the kernel's log (dmesg -C), so it goes first: guest.sh reads the
# reports of the suites after it from the log, and of all of them from
# the console.
debug_b1=(guest-kunit-debug "bash tests/guest/kunit.sh"
	guest-kulp-debug "bash tests/guest/kulp.sh"
	guest-failnth-debug "bash tests/guest/failnth.sh"
	guest-fuzz-rings-debug "RINGFUZZ_COUNT=60000 bash tests/guest/fuzz-rings.sh")
debug_b2=(guest-device-debug "bash tests/guest/device.sh"
	guest-iser-debug "bash tests/guest/iser.sh"
	guest-scenario-debug "bash tests/guest/scenario.sh 10")
debug_lane1() {
	boot_lane guest-debug-boot1 "--debug --timeout 3600" "${debug_b1[@]}"
	lane guest-harness-debug "bash tests/harness.sh debug"
}
debug_lane2() {
	boot_lane guest-debug-boot2 "--debug --timeout 3600" "${debug_b2[@]}"
}
# every one of them by name, the lanes' and the wire fuzzer's
debug_suites=()
for ((i = 0; i < ${#debug_b1[@]}; i += 2)); do debug_suites+=("${debug_b1[i]}"); done
for ((i = 0; i < ${#debug_b2[@]}; i += 2)); do debug_suites+=("${debug_b2[i]}"); done
debug_suites+=(guest-debug-boot1 guest-debug-boot2 guest-harness-debug guest-fuzz-wire-debug)
if [ "$debug" != 1 ]; then
	echo "# debug kernel: not run (VHCA_DEBUG_KERNEL=0)"
	# KUnit runs under UML instead (kunit_uml), and the fuzzers on
	# Debian's kernel: NAME for NAME-debug; the others do not run
	for s in "${debug_suites[@]}"; do
		case ${s%-debug} in
		guest-kunit|guest-fuzz-rings|guest-scenario|guest-fuzz-wire) ;;
		*) not_run+=("$s") ;;
		esac
	done
	tap guest-fuzz-rings tools/guest.sh 'bash tests/guest/fuzz-rings.sh'
	tap guest-scenario tools/guest.sh 'bash tests/guest/scenario.sh'
	tap guest-fuzz-wire tools/guest.sh --timeout 1500 \
		--peer 'bash tests/guest/fuzz-wire.sh' 'bash tests/guest/fuzz-wire.sh'
elif [ "$debug_ok" = 1 ]; then
	t0=$SECONDS
	debug_lane1 &
	debug_lane2
	wait $!
	echo "# two lanes of debug suites took $((SECONDS - t0))s"
	phase "two lanes of debug suites"
	show_lane "${debug_b1[@]}" guest-debug-boot1 -
	show_lane guest-harness-debug -
	show_lane "${debug_b2[@]}" guest-debug-boot2 -
	# Both guests on the debug kernel.  With the fuzzer's guest on
	# Debian's kernel (--peer-stock) the fuzz ran six times faster and
	# the debug victim fell behind: TCP between the two stalled for
	# minutes after it, and the steps that follow failed to connect.
	fw_fuzz="FUZZ_PHASES=fuzz FUZZ_COUNT=30000 bash tests/guest/fuzz-wire.sh"
	tap guest-fuzz-wire-debug tools/guest.sh --debug --timeout 2400 \
		--peer "$fw_fuzz" "$fw_fuzz"
else
	echo "not ok - debug kernel: tools/debug-kernel.sh or make debug failed"
	failures+=("debug kernel: tools/debug-kernel.sh or make debug failed")
	not_run+=("${debug_suites[@]}")
	failed=$((failed + 1))
fi

rm -rf "$logs"
# A summary where the end of a long log is all that is shown: the
# slowest suites, the whole run's time and every failure.
echo "# slowest suites (seconds):"
printf '%s\n' "${times[@]}" | sort -rn | head -n 12 | sed 's/^/#   /'
phase "the rest (the wire fuzzer on the debug kernel)"
echo "# the run's phases:"
printf '#   %s\n' "${phases[@]}"
echo "# the whole run took ${SECONDS}s"
for f in "${failures[@]}"; do
	echo "# failed: $f"
done
[ ${#not_run[@]} = 0 ] || echo "# not run: ${not_run[*]}"
echo "# skipped (in their suites' plans, neither passed nor failed): $skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
