#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# vhca's KUnit suites (kunit/) in the debug kernel: `make debug` builds
# vhca.ko once more with them in (build/debug/tests/kunit/vhca.ko); loading
# it runs them under KASAN, lockdep and UBSAN, and KUnit writes KTAP to the
# kernel log.  Each test case becomes one TAP line here; a skipped case is
# a "# SKIP", never a pass.
#
#   bash tests/guest/kunit.sh
. tests/guest/lib/lib.sh

ko=build/debug/tests/kunit/vhca.ko
# what kunit/*.c declares (kunit/cases.sh): a line for each case, and
# seven checks
ncases=$(sh kunit/cases.sh)
tap_plan $((ncases + 7))
check "the KUnit build of vhca.ko is there" test -f $ko
check "kunit loads" modprobe kunit
# insmod does not load what the module needs: modprobe does
deps=$(modinfo -F depends $ko | tr , ' ')
# shellcheck disable=SC2086
check "vhca's dependencies load ($deps)" modprobe -a $deps
dmesg -C
check "insmod vhca.ko (with its KUnit suites)" insmod $ko
dmesg -t >/tmp/kunit.log
check "rmmod vhca" rmmod vhca

# KTAP: the suites unindented, their cases at 4 spaces ("ok N name"),
# the parameters of a case at 8
cases=$(grep -E '^    (not )?ok [0-9]+ ' /tmp/kunit.log)
check "KUnit ran test cases" test -n "$cases"
while IFS= read -r line; do
	[ -n "$line" ] || continue
	name=$(echo "$line" | sed 's/^ *\(not \)\{0,1\}ok [0-9]* //')
	case $line in
	*"# SKIP"*) skip_one "kunit: ${name%%#*}" "${name#*# SKIP}" ;;
	*"not ok "*) fail "kunit: $name"
		grep -B30 -F "$line" /tmp/kunit.log | grep '^ *# ' |
			tail -n 10 | sed 's/^ */#   /' ;;
	*) pass "kunit: $name" ;;
	esac
done <<<"$cases"
# every case in kunit/*.c reported, none lost to a suite that did not run
check_eq "every KUnit case of kunit/*.c reported" \
	"$(grep -c . <<<"$cases")" "$ncases"
echo "#   $(grep -cE '^(not )?ok [0-9]+ ' /tmp/kunit.log) suites"
tap_done
