"""The tools: how each one (our netperf, stock netperf, iperf3, sockperf,
qperf) is obtained (build, apt-get, versions), how its server and its
client are started, and how its client's output is parsed."""

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from .common import HOST, PEER_TOOLS, REPO, Usage, say, warn


# ---------------------------------------------------------------- parsers
# Each parser takes the client's stdout and returns {metric: (rate, units)}:
# rate in the row's unit, units = the amount of work done (MB = 10^6 bytes,
# transactions, packets), used for CPU per unit.

def num_lines(out: str) -> List[List[str]]:
    rows = []
    for line in out.splitlines():
        f = line.split()
        if f and re.fullmatch(r"\d+", f[0]):
            rows.append(f)
    return rows


def parse_netperf(kind: str, count: int = 0) -> Callable[[str], Dict[str, Tuple[float, float]]]:
    """Classic `-P 0` output.  stream/rr: the first numeric line with >= 5
    fields, last field the rate, the one before it the elapsed seconds.
    udp_stream: the send line (socket, size, elapsed, messages, errors, rate)
    and the receive line (socket, elapsed, messages, rate)."""
    def f(out: str) -> Dict[str, Tuple[float, float]]:
        lines = num_lines(out)
        if kind == "udp_stream":
            snd = next(x for x in lines if len(x) == 6)
            rcv = next(x for x in lines if len(x) == 4)
            s_el, s_n = float(snd[2]), float(snd[3])
            r_el, r_n = float(rcv[1]), float(rcv[2])
            return {"sent": (s_n / s_el, s_n), "recv": (r_n / r_el, r_n)}
        line = next(x for x in lines if len(x) >= 5)
        rate, elapsed = float(line[-1]), float(line[-2])
        if kind == "stream":
            return {"throughput": (rate, rate * elapsed / 8)}  # 10^6 bits/s; MB
        units = float(count) if count else rate * elapsed
        return {"trans": (rate, units)}
    return f


def parse_iperf3(kind: str) -> Callable[[str], Dict[str, Tuple[float, float]]]:
    def f(out: str) -> Dict[str, Tuple[float, float]]:
        end = json.loads(out)["end"]
        if kind == "stream":
            r = end["sum_received"]
            return {"throughput": (r["bytes"] * 8 / r["seconds"] / 1e6, r["bytes"] / 1e6)}
        s, r = end["sum_sent"], end["sum_received"]
        got = r["packets"] - r["lost_packets"]  # `packets` is the highest sequence number seen
        return {"sent": (s["packets"] / s["seconds"], s["packets"]),
                "recv": (got / r["seconds"], got)}
    return f


def _qperf_fields(out: str) -> Dict[str, float]:
    d = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\w+)\s*=\s*([\d.]+)", line)
        if m:
            d[m.group(1)] = float(m.group(2))
    return d


def parse_qperf(kind: str) -> Callable[[str], Dict[str, Tuple[float, float]]]:
    """`-uu -vvs -vvt` output (unified units: bytes, ns).  Latency tests:
    qperf's `latency` is half a round trip and `msg_rate` counts both
    directions, so transactions/s = loc_recv_msgs / loc_real_time
    (= 1e6 / (2 * latency_us))."""
    def f(out: str) -> Dict[str, Tuple[float, float]]:
        d = _qperf_fields(out)
        if kind == "stream":
            t = d["recv_real_time"] / 1e9
            return {"throughput": (d["recv_bytes"] * 8 / t / 1e6, d["recv_bytes"] / 1e6)}
        if kind == "udp_stream":
            return {"sent": (d["send_msgs"] / (d["send_real_time"] / 1e9), d["send_msgs"]),
                    "recv": (d["recv_msgs"] / (d["recv_real_time"] / 1e9), d["recv_msgs"])}
        n = d["loc_recv_msgs"]
        return {"trans": (n / (d["loc_real_time"] / 1e9), n)}
    return f


def parse_sockperf(out: str) -> Dict[str, Tuple[float, float]]:
    """ping-pong: one message each way per transaction.  Rate over the
    "valid duration" (sockperf drops the edges); work = all round trips of
    the run (warm-up excluded)."""
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)
    valid = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+); ReceivedMessages=(\d+)", out)
    total = re.search(r"\[Total Run\] RunTime=([\d.]+) sec;.*ReceivedMessages=(\d+)", out)
    return {"trans": (int(valid.group(3)) / float(valid.group(1)), float(total.group(2)))}


# ---------------------------------------------------------------- clients
@dataclass
class Variant:
    tool: str                 # column name: ours, stock, iperf3, sockperf, qperf, "ours --mmsg 32"
    server: str               # key of the server it talks to
    argv: List[str]           # client command, without `timeout`
    parse: Callable[[str], Dict[str, Tuple[float, float]]]
    timeout: int
    note: str = ""


class Clients:
    """Client commands of every tool: `a` the parsed arguments, `have` which
    tools are there, `ports` each server's port.  A method returns None when
    its tool is not there."""

    def __init__(self, a, have: Dict[str, bool], ports: Dict[str, int]):
        self.a, self.have, self.ports = a, have, ports
        self.len = a.len
        self.to = a.len + 30

    def netperf(self, kind: str, test: str, lenarg: str, opts: List[str], tool: str = "ours",
                timeout: Optional[int] = None, count: int = 0) -> Optional[Variant]:
        side = "stock" if tool == "stock" else "ours"
        if not self.have[side]:
            return None
        a = self.a
        binary = a.stock_dir / "netperf" if side == "stock" else REPO / "target/release/netperf"
        argv = [str(binary), "-H", HOST, "-p", str(self.ports[side]), "-t", test, "-l", lenarg, "-P", "0"]
        argv += a.netperf_args
        if opts:
            argv += ["--"] + opts
        return Variant(tool, side, argv, parse_netperf(kind, count), self.to if timeout is None else timeout)

    def pair(self, test: str, opts: List[str], kind: str, lenarg: Optional[str] = None, **kw) -> List[Variant]:
        """Ours and stock with identical options (whichever are there)."""
        lenarg = str(self.len) if lenarg is None else lenarg
        return [v for v in (self.netperf(kind, test, lenarg, opts, "ours", **kw),
                            self.netperf(kind, test, lenarg, opts, "stock", **kw)) if v]

    def iperf3(self, args: List[str], kind: str) -> Optional[Variant]:
        if not self.have["iperf3"]:
            return None
        return Variant("iperf3", "iperf3", ["iperf3", "-c", HOST, "-p", str(self.ports["iperf3"]), "-t", str(self.len),
                                            "-i", "0", "-J"] + args, parse_iperf3(kind), self.to)

    def qperf(self, test: str, msg: str, kind: str) -> Optional[Variant]:
        if not self.have["qperf"]:
            return None
        return Variant("qperf", "qperf", ["qperf", HOST, "-lp", str(self.ports["qperf"]), "-t", str(self.len),
                                          "-m", msg, "-uu", "-vvs", "-vvt", test], parse_qperf(kind), self.to)

    def sockperf(self, tcp: bool) -> Optional[Variant]:
        if not self.have["sockperf"]:
            return None
        key = "sockperf-tcp" if tcp else "sockperf-udp"
        argv = ["sockperf", "ping-pong"] + (["--tcp"] if tcp else []) + \
               ["-i", HOST, "-p", str(self.ports[key]), "-m", "14", "-t", str(self.len)]
        return Variant("sockperf", key, argv, parse_sockperf, self.to, note="-m 14 (sockperf's minimum)")


def probe_argv(port: int, test: str, opts: List[str]) -> List[str]:
    """A short test of our netperf with `opts` (does it take an --ext option?)."""
    lenarg = "-1" if test.endswith("_RR") else "1"
    return [str(REPO / "target/release/netperf"), "-H", HOST, "-p", str(port),
            "-t", test, "-l", lenarg, "-P", "0", "--"] + opts


# ---------------------------------------------------------------- servers
def server_specs(a, have: Dict[str, bool], proc_mode: bool) -> Dict[str, Tuple[List[str], str, str]]:
    """name -> (argv without the port, port option, protocol); everything on
    127.0.0.1 except qperf's listener, which has no bind option (its peers
    still connect to 127.0.0.1)."""
    specs = {"ours": ([str(REPO / "target/release/netserver"), "-D", "-4", "-L", HOST], "-p", "tcp")}
    if have["stock"]:
        extra = ["-f"] if proc_mode else []
        specs["stock"] = ([str(a.stock_dir / "netserver"), "-D", "-4", "-L", HOST] + extra, "-p", "tcp")
    if have["iperf3"]:
        specs["iperf3"] = (["iperf3", "-s", "-B", HOST, "-i", "0"], "-p", "tcp")
    if have["sockperf"]:
        specs["sockperf-tcp"] = (["sockperf", "server", "--tcp", "-i", HOST], "-p", "tcp")
        specs["sockperf-udp"] = (["sockperf", "server", "-i", HOST], "-p", "udp")
    if have["qperf"]:
        specs["qperf"] = (["qperf"], "-lp", "tcp")
    return specs


# ---------------------------------------------------------------- setup
def build(a) -> None:
    if a.no_build:
        say("not building (--no-build)")
    else:
        say("building netperf-ng: cargo build --release --bin netperf --bin netserver")
        if not shutil.which("cargo"):
            raise Usage("cargo not found in PATH (or use --no-build with existing target/release binaries)")
        r = subprocess.run(["timeout", "3600", "cargo", "build", "--release", "--bin", "netperf", "--bin", "netserver"],
                           cwd=REPO)
        if r.returncode != 0:
            raise Usage("cargo build --release failed")
    for b in ("netperf", "netserver"):
        if not os.access(REPO / "target/release" / b, os.X_OK):
            raise Usage(f"missing {REPO}/target/release/{b}")


def install_peers(a, wanted: List[str], notes: List[str]) -> Dict[str, bool]:
    """Install missing peer tools from Debian packages: `apt-get update` once,
    then `apt-get install -y PKG` per tool.  A tool that cannot be installed
    is skipped with a note."""
    have = {t: shutil.which(t) is not None for t in wanted}
    missing = [t for t in wanted if not have[t]]
    if missing and a.no_install:
        for t in missing:
            notes.append(f"{t}: not installed, skipped (--no-install)")
    elif missing:
        apt = shutil.which("apt-get")
        sudo = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
        if apt is None or sudo is None:
            for t in missing:
                notes.append(f"{t}: not installed and cannot install it "
                             f"({'no apt-get' if apt is None else 'not root and no sudo'}), skipped")
        else:
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            say(f"installing {', '.join(missing)} (apt-get update; apt-get install -y)")
            subprocess.run(sudo + ["timeout", "600", "apt-get", "update"], env=env)
            for t in missing:
                subprocess.run(sudo + ["timeout", "600", "apt-get", "install", "-y", "--no-install-recommends",
                                       PEER_TOOLS[t]], env=env)
                have[t] = shutil.which(t) is not None
                if not have[t]:
                    notes.append(f"{t}: not found after `apt-get install -y {PEER_TOOLS[t]}`, skipped")
    for n in notes:
        warn(n)
    return have


def tool_versions(a, have) -> Dict[str, str]:
    def first(cmd: List[str]) -> str:
        try:
            r = subprocess.run(["timeout", "5"] + cmd, capture_output=True, text=True)
            lines = [x for x in re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr).splitlines() if x.strip()]
            return lines[0].strip() if lines else "?"
        except OSError:
            return "?"
    v = {"ours": first([str(REPO / "target/release/netperf"), "-V"])}
    if have["stock"]:
        v["stock"] = first([str(a.stock_dir / "netperf"), "-V"])
    for t, cmd in (("iperf3", ["iperf3", "--version"]), ("sockperf", ["sockperf", "--version"]),
                   ("qperf", ["qperf", "--version"])):
        if have.get(t):
            v[t] = first(cmd)
    return v

