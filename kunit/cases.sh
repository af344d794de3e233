#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# The count of KUnit cases kunit/*.c declare, each of which a run must
# report: the plan of kunit/run.sh (UML) and of tests/guest/kunit.sh (the
# debug kernel).
#
#   sh kunit/cases.sh
cat "$(dirname "$0")"/*.c | grep -c 'KUNIT_CASE[A-Z_]*('
