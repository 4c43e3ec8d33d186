"""Command-line arguments of bench/run: the parser, the checks of their
values (usage errors exit with status 2) and the derived fields (row keys,
peer list, stock directory)."""

import argparse
import os
from pathlib import Path
from typing import List

from .common import PEER_TOOLS, REPO, Usage
from .rows import EXT_ROWS, FAST_ROWS, STANDARD_ROWS


def parse_args(argv: List[str]):
    p = argparse.ArgumentParser(
        prog="bench/run",
        description="netperf-ng vs stock netperf, iperf3, sockperf and qperf on loopback "
                    "(medians, spread, ratios, CPU per unit of work). See bench/README.md.",
        epilog="Exit status: 0 all runs succeeded, 1 some runs failed, 2 usage error or missing prerequisite.")
    p.add_argument("--stock", metavar="DIR", default=os.environ.get("NETPERF_STOCK_DIR") or None,
                   help="directory holding a built stock netperf and netserver 2.7.x "
                        "(default $NETPERF_STOCK_DIR; without it the stock column is left out; never built here)")
    p.add_argument("--reps", type=int, default=5, help="repetitions per tool and row (default 5)")
    p.add_argument("--len", type=int, default=3, help="seconds per time-based run, every tool (default 3)")
    p.add_argument("--crr-trans", type=int, default=20000, help="transactions per TCP_CRR run (-l -N; default 20000)")
    p.add_argument("--rows", default="", help="comma-separated row keys (default: all standard rows; "
                   "see --list)")
    p.add_argument("--ext", action="store_true",
                   help="also run the rows of our extension options (--mmsg, --zerocopy, --busy-poll), "
                        "each skipped if our netperf rejects the option")
    p.add_argument("--fast-paths", action="store_true",
                   help="only the rows of issue 29's fast paths (--gso/--gro, --skip-rx-copy, --mptcp) against our "
                        "plain loops, stock and iperf3's --gsro/--skip-rx-copy/-m (put iperf3 3.21+ first on PATH)")
    p.add_argument("--peers", default="iperf3,sockperf,qperf",
                   help="peer tools to include (default iperf3,sockperf,qperf; '' for none)")
    p.add_argument("--cpu", choices=("auto", "cgroup", "proc"), default="auto",
                   help="how CPU is read (default auto: cgroup when writable, else proc)")
    p.add_argument("--pin", choices=("split", "same", "none"), default="split",
                   help="CPU placement of every tool: split = servers on one CPU, clients on another (default); "
                        "same = all on one CPU; none = the scheduler decides (bimodal on small VMs)")
    p.add_argument("--max-other", type=float, default=0.25, metavar="CPUS",
                   help="a run during which the other load (CPU of processes not ours + hypervisor steal, "
                        "from /proc/stat) was above this many CPUs is run again (default 0.25)")
    p.add_argument("--retries", type=int, default=2, help="how many times such a run is repeated at most (default 2)")
    p.add_argument("--quiet-wait", type=float, default=20, metavar="SECS",
                   help="before each run, wait at most this long for other processes' load to drop below --max-other "
                        "(default 20)")
    p.add_argument("--netperf-args", default="", help="extra global netperf options for ours and stock")
    p.add_argument("--out", default=str(REPO / "bench/results"), help="where JSON and Markdown go (default bench/results)")
    p.add_argument("--no-build", action="store_true", help="do not run cargo build --release")
    p.add_argument("--no-install", action="store_true", help="do not apt-get install missing peer tools")
    p.add_argument("--seed", type=int, default=None, help="seed for the port choice")
    p.add_argument("--profile", action="store_true",
                   help="instead of the table: run each tool once under `perf stat` and once under `strace -c` "
                        "(server attached) and report task-clock, context switches and syscalls per unit of work")
    p.add_argument("--list", action="store_true", help="list the rows and exit")
    a = p.parse_args(argv)
    if a.reps < 1 or a.len < 1 or a.crr_trans < 1:
        raise Usage("--reps, --len and --crr-trans must be positive")
    if a.retries < 0 or a.quiet_wait < 0 or a.max_other <= 0:
        raise Usage("--retries and --quiet-wait must be >= 0, --max-other > 0")
    a.netperf_args = a.netperf_args.split()
    a.peers = [x for x in a.peers.split(",") if x]
    for t in a.peers:
        if t not in PEER_TOOLS:
            raise Usage(f"unknown peer '{t}' (iperf3, sockperf, qperf)")
    keys = [x for x in a.rows.split(",") if x] or \
        (FAST_ROWS if a.fast_paths else STANDARD_ROWS + (EXT_ROWS if a.ext else []))
    for k in keys:
        if k not in STANDARD_ROWS + EXT_ROWS + FAST_ROWS:
            raise Usage(f"unknown row '{k}' (see --list)")
    a.row_keys = keys
    a.stock_dir = None
    if a.stock:
        d = Path(a.stock).resolve()
        for b in ("netperf", "netserver"):
            if not (d / b).is_file() or not os.access(d / b, os.X_OK):
                raise Usage(f"stock dir '{a.stock}' has no executable '{b}'")
        a.stock_dir = d
    return a
