#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The wire benchmark (not a test): vhca0 to vhca0 against rxe0 to rxe0
# across two guests on one link.  See bench/run.sh.
exec bash "$(dirname "$0")/run.sh" --wire
