"""The row table: every row of the comparison (standard and --ext), its
title, metrics and units, which tools run it with which options, and its
notes."""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .tools import Clients, Variant


# ---------------------------------------------------------------- rows
@dataclass
class Row:
    key: str
    title: str
    metrics: List[Tuple[str, str, str]]   # (metric, rate unit, CPU unit)
    variants: List[Variant]
    ext: bool = False
    probe: Optional[List[str]] = None     # ours-only test options of an --ext row
    notes: List[str] = field(default_factory=list)


STREAM = [("throughput", "10^6bits/s", "us/MB")]
TRANS = [("trans", "trans/s", "us/trans")]
UDPS = [("sent", "pkt/s sent", "us/pkt"), ("recv", "pkt/s recvd", "us/pkt")]

UDP_STREAM_NOTES = [
    "same datagram size on the wire for all; iperf3 -u -b 0 is unpaced, writes on a connected socket and puts "
    "its own sequence number and timestamp in each payload; qperf udp_bw writes on a connected socket; "
    "netperf sends with sendto on an unconnected one",
    "sent = packets the sender's send calls accepted, recvd = packets the receiving tool read; "
    "CPU per packet of each line divides by that line's count"]

STANDARD_ROWS = ["tcp_stream_16k", "tcp_stream_64k", "tcp_rr", "udp_rr", "tcp_crr",
                 "udp_stream_1024", "udp_stream_64", "tcp_rr_b16", "udp_rr_b16"]
EXT_ROWS = ["udp_stream_64_mmsg", "udp_rr_b16_mmsg", "tcp_stream_64k_zerocopy", "tcp_rr_busy_poll"]
# Issue 29's fast paths (--fast-paths): UDP segmentation offload and
# receives that skip the copy, against our plain loops, stock netperf and
# iperf3's own (--gsro, --skip-rx-copy; iperf3 3.21 or later on PATH).
FAST_ROWS = ["udp_stream_1472_gso", "tcp_stream_64k_skip_rx_copy", "tcp_stream_64k_mptcp"]

FAST_NOTES = [
    "the first line (ours with both offloads) is the reference of every ratio",
    "packets are wire datagrams for every tool: ours counts each datagram of a segmented send or a "
    "coalesced receive (not system calls), iperf3 numbers each datagram it puts in a GSO buffer",
    "--gso 44: 44 x 1472 = 64768 bytes, the most 1472-byte datagrams one send can carry "
    "(UDP's 65507-byte limit); iperf3 --gsro fills the same 64768-byte buffer",
    "on loopback nothing is cut into frames: a segmented send travels as one packet and a GRO receiver "
    "takes it whole, so these rows show the per-call saving without a NIC's segmentation work"]


def build_rows(a, have: Dict[str, bool], ports: Dict[str, int]) -> Dict[str, Row]:
    L = a.len
    c = Clients(a, have, ports)
    np, pair, iperf3, qperf, sockperf = c.netperf, c.pair, c.iperf3, c.qperf, c.sockperf

    def row(key, title, metrics, variants, **kw) -> Row:
        return Row(key, title, metrics, [v for v in variants if v], **kw)

    crr_to = 60 + a.crr_trans // 500
    rows = [
        row("tcp_stream_16k", "TCP_STREAM 16K", STREAM,
            pair("TCP_STREAM", ["-m", "16K"], "stream") +
            [iperf3(["-l", "16K"], "stream"), qperf("tcp_bw", "16K", "stream")]),
        row("tcp_stream_64k", "TCP_STREAM 64K", STREAM,
            pair("TCP_STREAM", ["-m", "64K"], "stream") +
            [iperf3(["-l", "64K"], "stream"), qperf("tcp_bw", "64K", "stream")]),
        row("tcp_rr", "TCP_RR 1B", TRANS,
            pair("TCP_RR", [], "rr") + [sockperf(True), qperf("tcp_lat", "1", "rr")],
            notes=["sockperf: -m 14 (its minimum message: a 14-byte header)",
                   "qperf: trans/s = 1e6 / (2 x latency_us); its latency is half a round trip"]),
        row("udp_rr", "UDP_RR 1B", TRANS,
            pair("UDP_RR", [], "rr") + [sockperf(False), qperf("udp_lat", "1", "rr")],
            notes=["sockperf: -m 14 (its minimum message: a 14-byte header)",
                   "qperf: trans/s = 1e6 / (2 x latency_us); its latency is half a round trip"]),
        row("tcp_crr", "TCP_CRR", TRANS,
            pair("TCP_CRR", [], "rr", lenarg=f"-{a.crr_trans}", timeout=crr_to, count=a.crr_trans),
            notes=[f"count-based: -l -{a.crr_trans} (a timed TCP_CRR ends with a ~4 s idle wait)"]),
        row("udp_stream_1024", "UDP_STREAM 1024", UDPS,
            pair("UDP_STREAM", ["-m", "1024"], "udp_stream") +
            [iperf3(["-u", "-b", "0", "-l", "1024"], "udp_stream"), qperf("udp_bw", "1024", "udp_stream")],
            notes=UDP_STREAM_NOTES),
        row("udp_stream_64", "UDP_STREAM 64", UDPS,
            pair("UDP_STREAM", ["-m", "64"], "udp_stream") +
            [iperf3(["-u", "-b", "0", "-l", "64"], "udp_stream"), qperf("udp_bw", "64", "udp_stream")],
            notes=UDP_STREAM_NOTES),
        row("tcp_rr_b16", "TCP_RR 1B -b 16", TRANS, pair("TCP_RR", ["-b", "16"], "rr")),
        row("udp_rr_b16", "UDP_RR 1B -b 16", TRANS, pair("UDP_RR", ["-b", "16"], "rr")),
    ]

    def ext(key, title, metrics, test, base, extra, kind) -> Row:
        v = np(kind, test, str(L), base + extra, "ours")
        variants = [v] + pair(test, base, kind) if v else []
        if v:
            v.tool = "ours " + " ".join(extra)
        return Row(key, title + " " + " ".join(extra), metrics, variants, ext=True,
                   probe=[test, base + extra])

    def variant(v: Optional[Variant], name: str) -> Optional[Variant]:
        if v:
            v.tool = name
        return v

    def fast(key, title, metrics, test, base, ours_extras, iperf_base, iperf_extras, kind) -> Row:
        """The reference (ours with the last of `ours_extras`) first, then
        ours plain and with every other extra, stock, iperf3 plain and with
        its extras."""
        mine = [variant(np(kind, test, str(L), base + x, "ours"), " ".join(["ours"] + x))
                for x in ours_extras]
        peers = [variant(iperf3(iperf_base + x, kind), " ".join(["iperf3"] + x)) for x in iperf_extras]
        variants = [mine[-1]] + pair(test, base, kind)[:1] + mine[:-1] + pair(test, base, kind)[1:] + peers
        return Row(key, title, metrics, [v for v in variants if v], ext=True,
                   probe=[test, base + ours_extras[-1]], notes=FAST_NOTES)

    rows += [
        fast("udp_stream_1472_gso", "UDP_STREAM 1472", UDPS, "UDP_STREAM", ["-m", "1472"],
             [["--mmsg", "32"], ["--gso", "44"], ["--gso", "44", "--gro"]],
             ["-u", "-b", "0", "-l", "1472"], [[], ["--gsro"]], "udp_stream"),
        fast("tcp_stream_64k_skip_rx_copy", "TCP_STREAM 64K", STREAM, "TCP_STREAM", ["-m", "64K"],
             [["--skip-rx-copy"]], ["-l", "64K"], [[], ["--skip-rx-copy"]], "stream"),
        # iperf3's -m opens both ends with IPPROTO_MPTCP (its server re-opens
        # its listener when the client asks), as --mptcp does ours.
        fast("tcp_stream_64k_mptcp", "TCP_STREAM 64K", STREAM, "TCP_STREAM", ["-m", "64K"],
             [["--mptcp"]], ["-l", "64K"], [[], ["-m"]], "stream"),
    ]
    rows += [
        ext("udp_stream_64_mmsg", "UDP_STREAM 64", UDPS, "UDP_STREAM", ["-m", "64"], ["--mmsg", "32"], "udp_stream"),
        ext("udp_rr_b16_mmsg", "UDP_RR 1B -b 16", TRANS, "UDP_RR", ["-b", "16"], ["--mmsg", "32"], "rr"),
        ext("tcp_stream_64k_zerocopy", "TCP_STREAM 64K", STREAM, "TCP_STREAM", ["-m", "64K"], ["--zerocopy"], "stream"),
        ext("tcp_rr_busy_poll", "TCP_RR 1B", TRANS, "TCP_RR", [], ["--busy-poll", "50"], "rr"),
    ]
    return {r.key: r for r in rows}

