# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, tag matching on the wire: a's RC QP takes its
# receives from a tag-matching SRQ on vhca0; b's plain RC QP sends to it,
# from vhca0 and then from rxe0, which knows nothing of tags (a sender
# needs no support of its own).  tests/guest/tm.c's serve and send modes:
# eager messages matched across packets and placed after their header,
# every byte checked; unexpected ones and the phase sync; no tag;
# rendezvous: one the receiving QP reads with an RDMA READ of its own and
# answers with the FIN, one too large for its tag, left to software (its
# headers in the tag's buffer, TM_RNDV_INCOMPLETE), which software reads
# and answers itself, and one read while the process's own READs go on
# the QP; an unexpected message that fails, after which the SRQ is in
# phase with what software received.
#
# Sourced by twohost.sh, which runs tm_PHASE_a in guest a and tm_PHASE_b
# in guest b, in step; PHASE is vhca (b on vhca0) or rxe (b on rxe0).

tm_serve() {
	tap_run "tm-serve-$1" timeout 120 build/tests/tm vhca0 serve "$(v4gid vhca0)"
}
tm_send() {
	tap_run "tm-send-$1" timeout 120 build/tests/tm "$1" send "$(v4gid "$1")" 10.76.1.1
}

tm_vhca_a() { tm_serve vhca0; }
tm_vhca_b() { tm_send vhca0; }
tm_rxe_a() { tm_serve rxe0; }
tm_rxe_b() { tm_send rxe0; }
