# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# TAP helpers for guest tests: each check prints "ok N - what" or
# "not ok N - what" with the failing output as "#" lines.  A suite
# declares its checks first (tap_plan): tools/test.sh fails one that ran
# more or fewer, and counts "# SKIP" lines apart from passes.

tap_n=0
tap_failed=0
tap_planned=

# tap_plan N: this suite runs N checks, skipped ones included (the
# plan line comes before them, so a suite cut short is one that ran fewer)
tap_plan() {
	tap_planned=$1
	echo "1..$1"
}

# skip_one WHAT WHY: a check that does not apply here, an "ok ... # SKIP"
# line, which tools/test.sh counts as skipped, not passed
skip_one() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}

# skip N WHY: N such checks
skip() {
	local i
	for ((i = 1; i <= $1; i++)); do
		skip_one "skipped ($i of $1)" "$2"
	done
}

pass() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

fail() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}

# check WHAT CMD...: passes when CMD succeeds
check() {
	local what=$1 out t0=$SECONDS
	shift
	if out=$("$@" 2>&1); then
		pass "$what"
	else
		fail "$what"
		# a program's own words can come first (stderr before its
		# buffered stdout): keep them in view above the tail
		printf '%s\n' "$out" | head -n -20 | perftest_errors |
			head -n 5 | sed 's/^/#   /'
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/#   /'
	fi
	# where a suite's time goes, for tools/test.sh's budget
	[ $((SECONDS - t0)) -lt 15 ] || echo "#   (took $((SECONDS - t0)) s)"
}

# perftest_errors: a failed perftest's own words, from its output on
# stdin: the lines that are neither its banner ("name : value", one space
# or several before the colon; addresses, rules) nor its figures
perftest_errors() {
	grep -v 'GID:\|address:\|---\|^ *$\|^ [A-Za-z][^:]* : \|^ *[0-9#*]'
}

# clock_flake LOG...: a perftest program gave up on its estimate of the
# CPU clock, a regression of rdtsc against gettimeofday() whose r^2 must
# reach 0.9.  A busy host preempting the vCPU while it samples spoils that
# (seen: r^2 0.79, once in a whole run): the device is not what failed,
# as long as nothing else in the logs says something did.
clock_flake() {
	grep -q "Correlation coefficient r^2: .* < 0.9" "$@" &&
		! grep -qiE "failed status|completion with error|couldn't|mismatch|invalid data" "$@"
}
# clock_retry CMD...: CMD, a server and client pair whose output goes to
# /tmp/server.log and /tmp/client.log; once more if it failed only on
# perftest's clock estimate, and a second failure fails
clock_retry() {
	"$@" && return 0
	clock_flake /tmp/server.log /tmp/client.log || return 1
	echo "perftest's estimate of the CPU clock failed: once more"
	"$@"
}

# codel NAME: the counter NAME (dropped, ecn_mark) of eth1's fq_codel, at
# its root or under a shaper
codel() {
	tc -s qdisc show dev eth1 | sed -n '/^qdisc fq_codel/,$p' |
		tr -s ' (),' '\n' | grep -A1 -x "$1" | sed -n 2p
}

# check_eq WHAT GOT WANT
check_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		printf '#   got:  %s\n#   want: %s\n' "$2" "$3"
	fi
}

# wait_for SECONDS CMD...: poll until CMD succeeds
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

# wait_listen PORT: until a TCP server listens on PORT (30 s)
wait_listen() {
	wait_for 30 bash -c "ss -Hltn 'sport = :$1' | grep -q ."
}

# cm_listening [COMM]: until an RDMA CM ID (of program COMM, if given)
# listens: a server is up.  The CM's port space is not TCP's, so ss does
# not show it.
cm_listening() {
	wait_for 30 bash -c "rdma res show cm_id |
		grep -q 'state LISTEN${1:+.* comm $1}'"
}

# wait_gid DEV: until DEV's port 1 has a GID at index 0 (the core adds
# GIDs from a work item after rdma link add)
wait_gid() {
	wait_for 20 grep -qv '^0000:0000:0000:0000:0000:0000:0000:0000$' \
		"/sys/class/infiniband/$1/ports/1/gids/0"
}

# gid_of DEV A.B.C.D: the index of DEV's GID of that IPv4 address, or
# nothing while it has none
gid_of() {
	local hex
	# shellcheck disable=SC2086 # the four numbers, one argument each
	hex=$(printf '%02x%02x:%02x%02x' ${2//./ })
	grep -slx "0000:0000:0000:0000:0000:ffff:$hex" \
		/sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null |
		head -n 1 | xargs -r basename
}

# field DEV NAME: the value ibv_devinfo -v gives NAME for DEV ("1024 (3)")
field() {
	ibv_devinfo -v -d "$1" 2>/dev/null |
		sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -n 1
}

# tap_import PREFIX: renumber another program's TAP (stdin) into ours
tap_import() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "$1: ${line#ok * - }" ;;
		"not ok "*) fail "$1: ${line#not ok * - }" ;;
		"1.."*) echo "#   $1's plan: ${line#1..} checks" ;;
		*) echo "#   $line" ;;
		esac
	done
}

# tap_run NAME CMD...: run a program printing TAP, import its lines, and
# count its exit status as one more test
tap_run() {
	local name=$1 rc
	shift
	"$@" >"/tmp/$name.tap" 2>&1
	rc=$?
	tap_import "$name" <"/tmp/$name.tap"
	check_eq "$name exit status" "$rc" 0
}

# refused ERRNO_TEXT CMD...: CMD fails, saying the errno the admin guide
# gives (rdma prints "error: " and the kernel's errno's strerror)
refused() {
	local want=$1 out
	shift
	out=$("$@" 2>&1) && { printf '%s\n' "$out"; return 1; }
	printf '%s\n' "$out"
	grep -qF "error: $want" <<<"$out"
}

# udp_in [NS]: the datagrams the IP stack's UDP has delivered in namespace
# NS (default: the initial one), vhca's and rxe's sockets' among them
udp_in() {
	${1:+ip netns exec "$1"} cat /proc/net/snmp |
		awk '/^Udp:/ { if (n++) print $2 }'
}

# link_refused WHAT ERRNO_TEXT WHY DEV NETDEV: `rdma link add DEV type vhca
# netdev NETDEV` fails with ERRNO_TEXT (as refused), and the kernel log
# says why: a line matches WHY, a grep pattern (2 checks, WHAT and "the
# kernel log says why")
link_refused() {
	check "$1" refused "$2" rdma link add "$4" type vhca netdev "$5"
	check "the kernel log says why" in_dmesg "$3"
}

# in_dmesg PATTERN: a line of the kernel log matches PATTERN (grep)
in_dmesg() { dmesg | grep -q "$1"; }

# spot_ok LOG...: rdma-core's ibv_*_pingpong -c compares the first byte of
# each page of a received buffer, prints "invalid data in page N" for a
# mismatch and still exits 0: a spot check, which this makes count.  The
# data checks are datacheck's.
spot_ok() {
	! grep -H "invalid data" "$@"
}

# datacheck SERVER_DEV CLIENT_DEV [ARGS]: build/tests/datacheck between
# the two devices of this host (GID index ${DC_GID:-0}), server first; both
# ends must exit 0.  Prints what each end said.
datacheck() {
	local sd=$1 cd=$2 srv s c
	shift 2
	timeout 600 build/tests/datacheck -d "$sd" -g "${DC_GID:-0}" "$@" \
		>/tmp/dc-server.log 2>&1 &
	srv=$!
	timeout 600 build/tests/datacheck -d "$cd" -g "${DC_GID:-0}" "$@" \
		127.0.0.1 >/tmp/dc-client.log 2>&1
	c=$?
	wait $srv
	s=$?
	sed 's/^/server: /' /tmp/dc-server.log
	sed 's/^/client: /' /tmp/dc-client.log
	[ $s = 0 ] && [ $c = 0 ]
}

# vhca0_up [ADDR]: eth0 up, with ADDR/24 if given, and vhca0 on it with
# its first GID; without vhca0 the suite ends there, failing
vhca0_up() {
	ip link set eth0 up
	[ -z "${1:-}" ] || ip addr add "$1/24" dev eth0
	rdma link add vhca0 type vhca netdev eth0 || { fail "rdma link add"; tap_done; exit; }
	wait_gid vhca0
}

# kverbs_run: tests/kmod's kernel verbs test on vhca0, its TAP imported
kverbs_run() {
	dmesg -C
	check "vhca_kverbs_test loads and runs on vhca0" \
		insmod "${VHCA_KMODS:-build/tests}/vhca_kverbs_test.ko" dev=vhca0
	dmesg | sed -n 's/^\[[^]]*\] vhca_kverbs_test: //p' >/tmp/kverbs.tap
	tap_import kverbs </tmp/kverbs.tap
	# the plan is here, not the module's own: 7 tests for each QP type on an
	# RQ, 6 on an SRQ, 4 for LOCAL_INV under a WRITE
	# (tests/kmod/vhca_kverbs_test.c)
	check_eq "kverbs: all 43 of the module's tests reported" \
		"$(grep -cE '^(not )?ok ' /tmp/kverbs.tap)" 43
}

# kernel_at_least X.Y: the running kernel is X.Y or later, for what the
# tests expect of a kernel's verbs (the driver probes, it never compares)
kernel_at_least() {
	[ "$(printf '%s\n' "$1" "$(uname -r)" | sort -V | head -n 1)" = "$1" ]
}

# tap_done: the suite's status: 1 if a check failed or the count of
# checks is not the plan's
tap_done() {
	if [ -z "$tap_planned" ]; then
		echo "# no plan: tap_plan never ran"
		return 1
	fi
	if [ "$tap_n" != "$tap_planned" ]; then
		echo "# planned $tap_planned checks, ran $tap_n"
		return 1
	fi
	[ "$tap_failed" = 0 ]
}
