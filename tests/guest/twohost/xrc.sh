# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, XRC on the wire, vhca to vhca (no software
# peer has XRC): b's XRC_SEND QP names a's XRC SRQ in every request's
# XRCETH, a's XRC_RECV QP takes the receive WQEs, CQ and PD from that
# SRQ.  Every byte checked (datacheck -t xrc), through ibv_post_send and
# the ibv_wr_* API, with RNR on the SRQ and ODP at both ends; a capture
# of it checked against the IBA's layout (tests/guest/xrccap.py); a SEND
# naming an SRQ a lacks is refused; then rdma-core's ibv_xsrq_pingpong,
# perftest's -c XRC, the RDMA CM's rdma_xserver/rdma_xclient, and
# libfabric's rxm on the verbs provider's XRC domain.
#
# Sourced by twohost.sh, which runs xrc_vhca_a in guest a and xrc_vhca_b
# in guest b, in step.

# dcx DEV [ARGS] [SERVER]: datacheck over XRC (the client's -t says so),
# 32 KiB at most; the server's words in /tmp/dcx.log too
dcx() {
	local dev=$1 rc
	shift
	dc "$dev" -s 32768 -n 200 "$@" >/tmp/dcx.log 2>&1
	rc=$?
	cat /tmp/dcx.log
	return $rc
}
# xpp DEV [SERVER]: ibv_xsrq_pingpong, 500 rounds
xpp() {
	local dev=$1
	shift
	timeout "${T:-150}" ibv_xsrq_pingpong -d "$dev" -g "$(v4gid "$dev")" \
		-n 500 -m 1024 "$@"
}
# xperf PROG DEV [SERVER]: perftest's PROG over XRC
xperf() { local prog=$1 dev=$2; shift 2; pt "$prog" "$dev" -c XRC "$@"; }
XRC_PERF="ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw"
# xfi DEV [SERVER]: fi_pingpong over ofi_rxm on DEV's XRC domain (as in
# tests/guest/lib/clients.sh's fi_rdm_xrc), 200 round trips of 64 KiB,
# every message checked
xfi() {
	local dev=$1
	shift
	timeout "${T:-120}" env FI_VERBS_PREFER_XRC=1 FI_OFI_RXM_USE_SRX=1 \
		fi_pingpong -p 'verbs;ofi_rxm' -e rdm -d "$dev-xrc" -c \
		-S 65536 -I 200 "$@"
}

xrc_vhca_a() {
	local srqn p no_wqe0
	check "guest a: datacheck xrc server on vhca0, client in b: SENDs into its XRC SRQ, WRITEs and READs through the SRQ's PD" \
		dcx vhca0
	check "guest a: datacheck xrc server, client posting with ibv_wr_* (ibv_wr_set_xrc_srqn)" \
		dcx vhca0
	check "guest a: datacheck xrc server, ODP (-P) at both ends" \
		dcx vhca0 -P
	no_wqe0=$(stat rcvd_no_recv_wqe)
	check "guest a: datacheck xrc server, its SRQ's receives posted late (-R in b)" \
		dcx vhca0
	check "guest a: SENDs found the XRC SRQ empty and were answered RNR NAKs (rcvd_no_recv_wqe grew)" \
		grew rcvd_no_recv_wqe "$no_wqe0"
	tcpdump -i eth1 -nn -U -w /tmp/xrc.pcap udp port 4791 2>/dev/null &
	p=$!
	sleep 1
	check "guest a: datacheck xrc server, captured: SEND, WRITE, READ and FETCH_AND_ADD" \
		dcx vhca0
	sleep 1
	kill "$p"
	wait "$p" 2>/dev/null
	srqn=$(sed -n 's/^datacheck: XRC SRQ //p' /tmp/dcx.log)
	check "guest a: the capture: XRC opcodes, every request's XRCETH naming SRQ ${srqn:-?} after the BTH, none on a response, every ICRC good" \
		python3 tests/guest/xrccap.py /tmp/xrc.pcap 10.76.1.2 "${srqn:-0}" \
		send write read resp ack atomic atomic_ack
	check "guest a: datacheck xrc server; b's SEND naming an SRQ it lacks is refused" \
		dcx vhca0
	check "guest a: ibv_xsrq_pingpong server on vhca0, client in b" \
		xpp vhca0
	for p in $XRC_PERF; do
		check "guest a: $p -c XRC server on vhca0, client in b" \
			xperf "$p" vhca0
	done
	check "guest a: rdma_xserver -c x on vhca0, rdma_xclient in b" \
		timeout 120 rdma_xserver -c x
	check "guest a: fi_pingpong over ofi_rxm on vhca0-xrc, server; data checked" \
		xfi vhca0
}

xrc_vhca_b() {
	local p
	check "guest b: datacheck xrc client on vhca0, server in a" \
		retry dcx vhca0 -t xrc 10.76.1.1
	check "guest b: datacheck xrc client, ibv_wr_* API (-w)" \
		retry dcx vhca0 -t xrc -w 10.76.1.1
	check "guest b: datacheck xrc client, ODP (-P)" \
		retry dcx vhca0 -t xrc -P 10.76.1.1
	check "guest b: datacheck xrc client, the server's receives late (-R): RNR retries" \
		retry dcx vhca0 -t xrc -R 10.76.1.1
	check "guest b: datacheck xrc client, for a's capture" \
		retry dcx vhca0 -t xrc -n 16 -s 2048 -o send,write,read,fadd \
		10.76.1.1
	check "guest b: datacheck xrc client; a SEND naming an SRQ a lacks completes with REM_ACCESS_ERR (-X)" \
		retry dcx vhca0 -t xrc -n 16 -X 10.76.1.1
	check "guest b: ibv_xsrq_pingpong client on vhca0, server in a" \
		retry xpp vhca0 10.76.1.1
	for p in $XRC_PERF; do
		check "guest b: $p -c XRC client on vhca0, server in a" \
			retry xperf "$p" vhca0 10.76.1.1
	done
	check "guest b: rdma_xclient -c x on vhca0, rdma_xserver in a" \
		retry timeout 20 rdma_xclient -c x -s 10.76.1.1
	check "guest b: fi_pingpong over ofi_rxm on vhca0-xrc, client; data checked" \
		retry xfi vhca0 10.76.1.1
}
