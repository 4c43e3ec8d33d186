"""--profile: each tool once with its client under `perf stat` and once
under `strace -c`, the server's process tree attached; task-clock, context
switches and syscalls per unit of work, as a table, JSON and Markdown."""

import json
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional

from .common import say, warn
from .report import fmt_cpu, fmt_rate, write_results
from .rows import Row
from .tools import Variant

if TYPE_CHECKING:
    from .runner import Bench


PERF_EVENTS = "task-clock,context-switches,cpu-migrations"


def parse_perf(path: Path) -> Dict[str, float]:
    """`perf stat -x,` output: value,unit,event,..."""
    d = {}
    for line in path.read_text().splitlines():
        f = line.split(",")
        if len(f) > 2 and not line.startswith("#"):
            try:
                d[f[2]] = float(f[0])
            except ValueError:
                pass  # "<not counted>"
    return d


def parse_strace(path: Path) -> Dict[str, int]:
    """`strace -c` table: calls per syscall (the errors column may be empty)."""
    d = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) >= 5 and re.fullmatch(r"[\d.]+", f[0]) and f[-1] != "total":
            d[f[-1]] = int(f[3])
    return d


def profile_one(bench: "Bench", row: Row, v: Variant, kind: str) -> Optional[dict]:
    """One run of `v` with the client under perf stat / strace -c and the
    server's whole process tree attached (-p PID; both follow new threads
    and forked children).  Returns per-unit counts, or None on failure."""
    srv = bench.servers[v.server]
    sfile, cfile, serr = bench.work / f"{kind}-srv", bench.work / f"{kind}-cli", bench.work / f"{kind}-srv.err"
    for f in (sfile, cfile):
        f.unlink(missing_ok=True)
    if kind == "perf":
        attach = ["perf", "stat", "-x,", "-e", PERF_EVENTS, "-o", str(sfile), "-p", str(srv.proc.pid)]
        wrap = ["perf", "stat", "-x,", "-e", PERF_EVENTS, "-o", str(cfile), "--"]
    else:
        attach = ["strace", "-f", "-c", "-o", str(sfile), "-p", str(srv.proc.pid)]
        wrap = ["strace", "-f", "-c", "-o", str(cfile), "--"]
    with open(serr, "w") as fe:
        att = subprocess.Popen(attach, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fe)
    try:
        for _ in range(50):  # strace says "attached"; perf counts from the start
            if att.poll() is not None or kind == "perf" or "attached" in serr.read_text():
                break
            time.sleep(0.1)
        time.sleep(0.3)
        rc, out, err, _, _ = bench.run_client(wrap + v.argv, v.timeout * (3 if kind == "strace" else 1), None)
        srv.settle()
    finally:
        if att.poll() is None:
            att.send_signal(signal.SIGINT)
        try:
            att.wait(timeout=10)
        except subprocess.TimeoutExpired:
            att.kill()
            att.wait(timeout=5)
    try:
        if rc != 0:
            raise ValueError(f"exit status {rc}")
        res = v.parse(out)
        metric = row.metrics[-1][0]  # UDP_STREAM: per packet received
        rate, units = res[metric]
        if kind == "perf":
            c, s = parse_perf(cfile), parse_perf(sfile)
            return {"rate": rate, "units": units, "metric": metric,
                    "client_task_clock_us": c.get("task-clock", 0) * 1000 / units,
                    "server_task_clock_us": s.get("task-clock", 0) * 1000 / units,
                    "client_ctx_switches": c.get("context-switches", 0) / units,
                    "server_ctx_switches": s.get("context-switches", 0) / units,
                    "migrations": (c.get("cpu-migrations", 0) + s.get("cpu-migrations", 0)) / units}
        c, s = parse_strace(cfile), parse_strace(sfile)
        both = {}
        for side, d in (("c", c), ("s", s)):
            for k, n in d.items():
                both[f"{side}:{k}"] = n / units
        top = sorted(both.items(), key=lambda kv: -kv[1])[:6]
        return {"rate_under_strace": rate, "units": units, "metric": metric,
                "client_syscalls": sum(c.values()) / units, "server_syscalls": sum(s.values()) / units,
                "top": {k: round(x, 3) for k, x in top}}
    except (ValueError, KeyError, StopIteration, AttributeError, IndexError, OSError, json.JSONDecodeError) as e:
        warn(f"{row.title} {v.tool} under {kind}: failed ({e or type(e).__name__})")
        for line in out.strip().splitlines()[-3:] + err.strip().splitlines()[-3:]:
            warn(f"    {line[:200]}")
        return None


def run_profile(a, bench: "Bench", rows: List[Row], meta: dict) -> int:
    kinds = [k for k in ("perf", "strace") if shutil.which(k)]
    for k in ("perf", "strace"):
        if k not in kinds:
            bench.notes.append(f"--profile: `{k}` not found, its columns are left out")
    results = []
    for r in rows:
        for v in r.variants:
            rec = {"row": r.key, "title": r.title, "tool": v.tool, "unit": r.metrics[-1][1]}
            for k in kinds:
                rec[k] = profile_one(bench, r, v, k)
                if rec[k] is None:
                    bench.fails += 1
            results.append(rec)
            p, s = rec.get("perf") or {}, rec.get("strace") or {}
            say(f"  {r.title:<28} {v.tool:<22} ctx/unit {fmt_cpu(p.get('client_ctx_switches'))}/"
                f"{fmt_cpu(p.get('server_ctx_switches'))}  syscalls/unit {fmt_cpu(s.get('client_syscalls'))}/"
                f"{fmt_cpu(s.get('server_syscalls'))}")
    hdr = (f"{'row':<30} {'tool':<22} {'rate (perf)':>11} {'unit':<11} {'task-clock us/unit c/s':>23} "
           f"{'ctx-sw/unit c/s':>16} {'syscalls/unit c/s':>18}  top syscalls per unit (c: client, s: server)")
    lines = [hdr, "-" * len(hdr)]
    md = ["# bench/run --profile", "", f"- date: {meta['date']}", f"- host: {meta['host']}",
          f"- CPU placement (`--pin`): {meta['pin']}",
          f"- ours: git {meta['git']}", f"- command: `{meta['command']}`",
          "- one run per tool with the client under `perf stat` / `strace -f -c` and the server attached "
          "(`-p PID`, following its threads and children); counts per unit of work (MB, transaction, "
          "packet received); rates under strace are not comparable and not shown", "",
          "| row | tool | rate (under perf stat) | task-clock us/unit client/server | context switches/unit client/server "
          "| syscalls/unit client/server | top syscalls per unit |", "|---|---|--:|--:|--:|--:|---|"]
    prev = None
    for rec in results:
        p, s = rec.get("perf") or {}, rec.get("strace") or {}
        title = rec["title"] if rec["title"] != prev else ""
        prev = rec["title"]
        tc = f"{fmt_cpu(p.get('client_task_clock_us'))}/{fmt_cpu(p.get('server_task_clock_us'))}"
        cs = f"{fmt_cpu(p.get('client_ctx_switches'))}/{fmt_cpu(p.get('server_ctx_switches'))}"
        sc = f"{fmt_cpu(s.get('client_syscalls'))}/{fmt_cpu(s.get('server_syscalls'))}"
        top = ", ".join(f"{k} {fmt_cpu(x)}" for k, x in (s.get("top") or {}).items())
        lines.append(f"{title:<30} {rec['tool']:<22} {fmt_rate(p.get('rate')):>11} {rec['unit'] if title else '':<11} "
                     f"{tc:>23} {cs:>16} {sc:>18}  {top}")
        md.append(f"| {title} | {rec['tool']} | {fmt_rate(p.get('rate'))} {rec['unit']} | {tc} | {cs} | {sc} | {top} |")
    say("")
    say("\n".join(lines))
    stamp = meta["date"].replace("-", "").replace(":", "")
    doc = dict(meta, failed_runs=bench.fails, notes=bench.notes, profile=results)
    write_results(a.out, "profile", stamp, doc,
                  "\n".join(md + ([""] + [f"- {n}" for n in bench.notes] if bench.notes else [])) + "\n")
    return 1 if bench.fails else 0

