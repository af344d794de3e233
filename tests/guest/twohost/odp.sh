# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, on-demand paging on the wire: ODP MRs whose
# pages the device meets missing in every batch (datacheck -P drops them
# before it fills its buffer), on the sending end, the receiving end or
# both.  A requester faults them in before a WQE goes; an RC responder
# answers a packet that finds one missing with an RNR NAK and faults it
# in (sent_odp_rnr_naks), and its READ responses fault their own.  UC
# and UD have no retry: their receivers hold such a packet, and those
# behind it, until the pages are in (rcvd_odp_held), so not one may be
# lost on the way, into an RQ or an SRQ.  Then rdma-core's and perftest's ODP
# options (ibv_rc_pingpong -o, -P and -O, every buffer spot-checked;
# ib_write_bw --odp: perftest refuses ODP atomics), a source unmapped
# under a WRITE on the wire, and rxe on the other end (vhca's receives
# from an SRQ there, for RC and UC).
#
# Sourced by twohost.sh, which runs odp_PHASE_a in guest a and odp_PHASE_b
# in guest b, in step; PHASE is vhca (b on vhca0) or rxe (b on rxe0).

# unmap DEV [SERVER]: tests/guest/odpunmap.c, a 32 MiB WRITE from an ODP
# MR that b unmaps from 4 MiB on while it goes
unmap() {
	local dev=$1
	shift
	timeout "${T:-120}" build/tests/odpunmap "$dev" "$(v4gid "$dev")" "$@"
}

# dcp DEV [ARGS] [SERVER]: dc over RC, 32 KiB at most, fewer messages
dcp() {
	local dev=$1
	shift
	dc "$dev" -s 32768 -n 64 "$@"
}

odp_vhca_a() {
	rnr0=$(stat sent_odp_rnr_naks)
	check "guest a: datacheck server on vhca0, ODP (-P), client vhca0 with ODP in b: every RC op" \
		dcp vhca0 -P
	check "guest a: its responder met pages missing and answered RNR NAKs (sent_odp_rnr_naks grew)" \
		grew sent_odp_rnr_naks "$rnr0"
	check "guest a: datacheck server on vhca0, ATOMIC WRITEs into ODP from b" \
		dcp vhca0 -P
	held0=$(stat rcvd_odp_held)
	for t in uc ud; do
		check "guest a: datacheck server on vhca0, ODP (-P), $t client sending from ODP in b" \
			dcp vhca0 -P
	done
	check "guest a: UC and UD packets that met pages missing were held for them (rcvd_odp_held grew)" \
		grew rcvd_odp_held "$held0"
	check "guest a: datacheck server on vhca0, ODP, receives from an SRQ (-S), ud client in b" \
		dcp vhca0 -P -S
	check "guest a: ibv_rc_pingpong -o server on vhca0, client in b" \
		rc vhca0 -o
	check "guest a: ibv_rc_pingpong -o -P (prefetch) server on vhca0, client in b" \
		rc vhca0 -o -P
	check "guest a: ibv_rc_pingpong -O (implicit ODP) server on vhca0, client in b" \
		rc vhca0 -O
	rnr0=$(stat sent_odp_rnr_naks)
	check "guest a: datacheck server on vhca0, ODP: FETCH_AND_ADDs into it from b" \
		dcp vhca0 -P
	check "guest a: the atomics met words missing (sent_odp_rnr_naks grew)" \
		grew sent_odp_rnr_naks "$rnr0"
	rnr0=$(stat sent_odp_rnr_naks)
	check "guest a: datacheck server on vhca0, ODP: COMPARE_AND_SWAPs into it from b" \
		dcp vhca0 -P
	check "guest a: the compare-and-swaps met words missing (sent_odp_rnr_naks grew)" \
		grew sent_odp_rnr_naks "$rnr0"
	check "guest a: ib_write_bw --odp server on vhca0, client in b" \
		pt ib_write_bw vhca0 --odp
	tap_run "guest a: odpunmap server on vhca0" unmap vhca0
}

odp_vhca_b() {
	check "guest b: datacheck client on vhca0, ODP (-P), to a's ODP server: every RC op" \
		retry dcp vhca0 -P -t rc 10.76.1.1
	check "guest b: datacheck client on vhca0, ODP: ATOMIC WRITEs (-w) into a's ODP" \
		retry dcp vhca0 -P -w -t rc -o awrite 10.76.1.1
	check "guest b: datacheck uc client on vhca0 sending from ODP (-P)" \
		retry dcp vhca0 -P -t uc 10.76.1.1
	check "guest b: datacheck ud client on vhca0 sending from ODP (-P)" \
		retry dcp vhca0 -P -t ud -s 1024 10.76.1.1
	check "guest b: datacheck ud client on vhca0, to a's ODP receives from an SRQ" \
		retry dcp vhca0 -t ud -s 1024 10.76.1.1
	check "guest b: ibv_rc_pingpong -o client on vhca0 (buffers spot-checked)" \
		retry rc vhca0 -o 10.76.1.1
	check "guest b: ibv_rc_pingpong -o -P client on vhca0" \
		retry rc vhca0 -o -P 10.76.1.1
	check "guest b: ibv_rc_pingpong -O (implicit ODP) client on vhca0" \
		retry rc vhca0 -O 10.76.1.1
	check "guest b: datacheck client on vhca0, ODP: FETCH_AND_ADDs (results into ODP)" \
		retry dcp vhca0 -P -t rc -o fadd 10.76.1.1
	check "guest b: datacheck client on vhca0, ODP: COMPARE_AND_SWAPs, each after a decoy that must not swap" \
		retry dcp vhca0 -P -t rc -o cswap 10.76.1.1
	check "guest b: ib_write_bw --odp client on vhca0" \
		retry pt ib_write_bw vhca0 --odp 10.76.1.1
	# the rest of a WRITE that cannot be read fails it at once, without
	# waiting for the QP's retransmission timer
	tap_run "guest b: odpunmap client on vhca0, its source unmapped mid-message" \
		unmap vhca0 10.76.1.1
}

# rxe0 (6.12: no ODP of its own) meets vhca's ODP: its requester gets RNR
# NAKs in the middle of messages, its responder answers a requester that
# faults its pages in
odp_rxe_a() {
	rnr0=$(stat sent_odp_rnr_naks)
	# its receives from an SRQ (-S): the RQ's are the vhca phase's
	check "guest a: datacheck server on vhca0, ODP, receives from an SRQ, client rxe0 in b: every RC op" \
		dcp vhca0 -P -S
	check "guest a: rxe0's requests met pages missing: RNR NAKs (sent_odp_rnr_naks grew)" \
		grew sent_odp_rnr_naks "$rnr0"
	check "guest a: datacheck server on vhca0, ODP, client rxe0 in b: FETCH_AND_ADDs" \
		dcp vhca0 -P
	check "guest a: datacheck server on vhca0, ODP, client rxe0 in b: COMPARE_AND_SWAPs" \
		dcp vhca0 -P
	check "guest a: datacheck client on vhca0, ODP, server rxe0 in b: every RC op" \
		retry dcp vhca0 -P -t rc 10.76.1.2
	check "guest a: datacheck server on vhca0, ODP, receives from an SRQ, uc client rxe0 in b" \
		dcp vhca0 -P -S
}

odp_rxe_b() {
	check "guest b: datacheck client on rxe0, server vhca0 with ODP in a" \
		retry dcp rxe0 -t rc 10.76.1.1
	check "guest b: datacheck client on rxe0, FETCH_AND_ADDs into vhca0's ODP in a" \
		retry dcp rxe0 -t rc -o fadd 10.76.1.1
	check "guest b: datacheck client on rxe0, COMPARE_AND_SWAPs into vhca0's ODP in a" \
		retry dcp rxe0 -t rc -o cswap 10.76.1.1
	check "guest b: datacheck server on rxe0, client vhca0 with ODP in a" \
		dcp rxe0
	check "guest b: datacheck uc client on rxe0, to vhca0's ODP SRQ in a" \
		retry dcp rxe0 -t uc 10.76.1.1
}
