"""The measuring session: start the servers, run every chosen row with its
tools alternating (round robin), each run timed and CPU-accounted, repeated
when other load disturbed it, then summarize and write the results."""

import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .common import HOST, PEER_TOOLS, REPO, say, warn
from .profile import run_profile
from .report import fmt_cpu, fmt_rate, markdown, summarize, text_table, write_results
from .rows import Row, build_rows
from .system import Cpu, Machine, Server, free_port, kill_pid, pin_plan, pre_exec
from .tools import Variant, build, install_peers, num_lines, probe_argv, server_specs, tool_versions


# ---------------------------------------------------------------- the run
class Bench:
    def __init__(self, a):
        self.a = a
        self.cpu: Optional[Cpu] = None
        self.servers: Dict[str, Server] = {}
        self.client_groups: Dict[str, Optional[Path]] = {}
        self.running: Optional[subprocess.Popen] = None
        self.work = Path(tempfile.mkdtemp(prefix="bench-run."))
        self.server_cpus, self.client_cpus, self.pin = pin_plan(a.pin)
        self.machine = Machine()
        self.retried = 0
        self.notes: List[str] = []
        self.runs: List[dict] = []
        self.discarded: List[dict] = []
        self.fails = 0

    # -- cleanup: servers, a running client, cgroups, temp files
    def cleanup(self) -> None:
        if self.running is not None and self.running.poll() is None:
            kill_pid(self.running.pid, signal.SIGTERM)  # `timeout` passes it to its process group
            try:
                self.running.wait(timeout=7)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.running.pid, signal.SIGKILL)
                except OSError:
                    pass
        for s in self.servers.values():
            s.stop()
        if self.cpu:
            self.cpu.cleanup()
        shutil.rmtree(self.work, ignore_errors=True)

    def client_group(self, tool: str) -> Optional[Path]:
        key = re.sub(r"[^A-Za-z0-9]+", "-", tool)
        if key not in self.client_groups:
            self.client_groups[key] = self.cpu.new_group(f"cli-{key}")
        return self.client_groups[key]

    def run_client(self, argv: List[str], to: int, group: Optional[Path]) -> Tuple[int, str, str, Tuple[int, int], float]:
        """Run argv under `timeout`; returns (rc, stdout, stderr, (cpu_us, user_us), wall_s):
        the cgroup's delta, or wait4() rusage in proc mode."""
        out, err = self.work / "out", self.work / "err"
        c0 = self.cpu.usage_us(group) if group else (0, 0)
        t0 = time.monotonic()
        with open(out, "w") as fo, open(err, "w") as fe:
            self.running = subprocess.Popen(["timeout", "-k", "5", str(to)] + argv, stdin=subprocess.DEVNULL,
                                            stdout=fo, stderr=fe,
                                            preexec_fn=pre_exec(group, self.client_cpus))
            pid = self.running.pid
            deadline = time.monotonic() + to + 15  # backstop behind `timeout`
            rusage = None
            while True:
                wpid, status, ru = os.wait4(pid, os.WNOHANG)  # (polled so the backstop can act)
                if wpid == pid:
                    rc = os.waitstatus_to_exitcode(status)
                    rusage = ru
                    self.running.returncode = rc
                    break
                if time.monotonic() > deadline:
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        kill_pid(pid, signal.SIGKILL)
                time.sleep(0.02)
        self.running = None
        wall = time.monotonic() - t0
        if group:
            c1 = self.cpu.usage_us(group)
            cpu = (c1[0] - c0[0], c1[1] - c0[1])
        else:
            cpu = (int((rusage.ru_utime + rusage.ru_stime) * 1e6), int(rusage.ru_utime * 1e6))
        return rc, out.read_text(errors="replace"), err.read_text(errors="replace"), cpu, wall

    def wait_quiet(self) -> float:
        """Before a run: wait (at most --quiet-wait s) until other processes
        use less than --max-other CPUs; returns the last reading."""
        deadline = time.monotonic() + self.a.quiet_wait
        while True:
            busy = self.machine.busy_cpus(0.3)
            if busy <= self.a.max_other or time.monotonic() >= deadline:
                return busy
            time.sleep(0.5)

    def run_one(self, row: Row, v: Variant, rep: int) -> bool:
        """One run, repeated (at most --retries more times) when the "other
        load" during it (CPU used by processes not ours plus time stolen by
        the hypervisor) was above --max-other CPUs; a repeated attempt is
        kept in the JSON under discarded_runs."""
        for attempt in range(self.a.retries + 1):
            rec = self.attempt(row, v, rep)
            if rec is None or rec["other_cpus"] <= self.a.max_other or attempt == self.a.retries:
                return rec is not None
            rec["discarded"] = (f"other load {rec['other_cpus']:.2f} CPUs during the run "
                                f"(other processes {rec['foreign_cpus']:.2f}, hypervisor steal {rec['steal_cpus']:.2f})")
            self.runs.remove(rec)
            self.discarded.append(rec)
            self.retried += 1
            warn(f"{row.title} rep {rep} {v.tool}: {rec['discarded']}; running it again")
        return True

    def attempt(self, row: Row, v: Variant, rep: int) -> Optional[dict]:
        srv = self.servers[v.server]
        if not srv.alive():
            raise RuntimeError(f"{v.server} server is gone ({srv.log.read_text()[-300:]})")
        quiet = self.wait_quiet()
        m0 = self.machine.sample()
        s0 = srv.cpu_us()
        rc, out, err, (ccpu, cuser), wall = self.run_client(v.argv, v.timeout, self.client_group(v.tool))
        srv.settle()
        s1 = srv.cpu_us()
        m1 = self.machine.sample()
        scpu, suser = s1[0] - s0[0], s1[1] - s0[1]
        span = max(m1[0] - m0[0], 1e-3)
        foreign = (m1[1] - m0[1] - (m1[3] - m0[3]) - ccpu - scpu) / 1e6 / span
        rec = {"row": row.key, "tool": v.tool, "rep": rep, "rc": rc, "wall_s": round(wall, 3),
               "client_cpu_us": ccpu, "server_cpu_us": scpu, "client_user_us": cuser, "server_user_us": suser,
               "busy_before_cpus": round(quiet, 3), "foreign_cpus": round(max(foreign, 0.0), 3),
               "ksoftirqd_cpus": round((m1[3] - m0[3]) / 1e6 / span, 3),
               "steal_cpus": round((m1[2] - m0[2]) / 1e6 / span, 3)}
        rec["other_cpus"] = round(rec["foreign_cpus"] + rec["steal_cpus"], 3)
        try:
            if rc != 0:
                raise ValueError("timed out" if rc in (124, 137) else f"exit status {rc}")
            res = v.parse(out)
            for m, (rate, units) in res.items():
                if not (rate > 0 and units > 0):
                    raise ValueError(f"no {m} result")
        except (ValueError, KeyError, StopIteration, AttributeError, IndexError, json.JSONDecodeError) as e:
            rec["error"] = str(e) or type(e).__name__
            self.runs.append(rec)
            self.fails += 1
            warn(f"{row.title} rep {rep} {v.tool}: failed ({rec['error']})")
            for line in (out.strip().splitlines()[-4:] + err.strip().splitlines()[-4:]):
                warn(f"    {line[:200]}")
            return None
        rec["metrics"] = {m: {"rate": rate, "units": units} for m, (rate, units) in res.items()}
        self.runs.append(rec)
        first = row.metrics[0]
        rate, units = res[first[0]]
        say(f"  {row.title:<28} rep {rep} {v.tool:<22} {fmt_rate(rate):>12} {first[1]:<12}"
            f" cpu {fmt_cpu((ccpu + scpu) / units):>8} {first[2]:<9} other load {rec['other_cpus']:.2f} CPUs")
        return rec

    def probe_ext(self, row: Row) -> bool:
        """An --ext row runs only if our netperf takes its option: one short
        test against our netserver, any failure means "not supported"."""
        test, opts = row.probe
        argv = probe_argv(self.servers["ours"].port, test, opts)
        rc, out, err, _, _ = self.run_client(argv, 20, None if self.cpu.mode == "proc" else self.client_group("probe"))
        if rc == 0 and num_lines(out):
            return True
        why = (err.strip().splitlines() or out.strip().splitlines() or [f"exit status {rc}"])[0]
        self.notes.append(f"{row.title}: skipped, our netperf does not support `{' '.join(opts)}` ({why.strip()})")
        warn(self.notes[-1])
        return False



def run_meta(a, bench: Bench, have: Dict[str, bool], start: datetime.datetime) -> dict:
    # (with --no-build this names the tree, which may be newer than the binaries)
    git = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    rev = git.stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "date": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git": rev + ("+dirty" if dirty else ""),
        "host": f"{os.uname().sysname} {os.uname().release}, {os.cpu_count()} CPUs",
        "versions": tool_versions(a, have),
        "command": "bench/run " + " ".join(sys.argv[1:]),
        "cpu": bench.cpu.describe(),
        "pin": bench.pin,
        "params": {"reps": a.reps, "len_s": a.len, "crr_trans": a.crr_trans, "ext": a.ext,
                   "max_other_cpus": a.max_other, "retries": a.retries, "quiet_wait_s": a.quiet_wait,
                   "stock_dir": str(a.stock_dir) if a.stock_dir else None, "netperf_args": a.netperf_args},
    }


def run(a, bench: Bench) -> int:
    notes = bench.notes
    build(a)
    if a.stock_dir is None:
        notes.append("no stock netperf given (--stock DIR or NETPERF_STOCK_DIR): stock column left out")
        warn(notes[-1])
    have = install_peers(a, a.peers, notes)
    have.update({t: False for t in PEER_TOOLS if t not in a.peers})
    have["ours"] = True
    have["stock"] = a.stock_dir is not None
    bench.cpu = Cpu(a.cpu)

    taken: set = set()
    ports = {}
    specs = server_specs(a, have, bench.cpu.mode == "proc")
    for name, (argv, opt, proto) in specs.items():
        port = free_port(taken)
        ports[name] = port
        bench.servers[name] = Server(name, argv + [opt, str(port)], port, proto, bench.cpu, bench.work,
                                     bench.server_cpus)
    for s in bench.servers.values():
        s.start()
    say("servers: " + ", ".join(f"{k} :{s.port} pid {s.proc.pid}" for k, s in bench.servers.items())
        + f"; CPU via {bench.cpu.describe()}; pinning {bench.pin}")

    all_rows = build_rows(a, have, ports)
    rows = []
    for k in a.row_keys:
        r = all_rows[k]
        if not r.variants:
            continue
        if r.ext and not bench.probe_ext(r):
            continue
        if len(r.variants) < 2:
            notes.append(f"{r.title}: no peer available, ours alone")
        rows.append(r)
    start = datetime.datetime.now(datetime.timezone.utc)
    meta = run_meta(a, bench, have, start)
    if a.profile:
        say(f"{len(rows)} rows, profiling each tool once (perf stat, strace -c; len {a.len} s)")
        return run_profile(a, bench, rows, meta)
    total = sum(len(r.variants) for r in rows) * a.reps
    say(f"{len(rows)} rows, {total} runs, about {total * (a.len + 1) // 60 + 1} min "
        f"(reps {a.reps}, len {a.len} s, TCP_CRR -l -{a.crr_trans})")
    for r in rows:
        n = len(r.variants)
        for rep in range(1, a.reps + 1):
            order = [r.variants[(rep - 1 + i) % n] for i in range(n)]  # round robin, first one rotating
            for v in order:
                bench.run_one(r, v, rep)

    summary = summarize(rows, bench.runs)
    loaded = [r for r in bench.runs if r.get("other_cpus", 0) > a.max_other]
    fl = sorted(r.get("other_cpus", 0) for r in bench.runs)
    if fl:
        notes.append(f"other load during the runs (CPUs used by processes not ours, ksoftirqd excluded, plus "
                     f"hypervisor steal): median {statistics.median(fl):.2f}, max {fl[-1]:.2f}; "
                     f"{bench.retried} run(s) repeated because of it, {len(loaded)} kept above {a.max_other} "
                     f"after {a.retries} retries")
    table = text_table(summary)
    say("")
    say(f"netperf-ng {meta['git']} on {HOST}, {meta['host']}; reps {a.reps}, len {a.len} s; "
        f"CPU = client+server user+sys per unit ({meta['cpu']}); pinning {meta['pin']}; ratios ours/peer")
    say(table)
    for n in notes:
        say(f"note: {n}")

    stamp = start.strftime("%Y%m%dT%H%M%SZ")
    doc = dict(meta, failed_runs=bench.fails, notes=notes, rows=summary, runs=bench.runs,
               discarded_runs=bench.discarded)
    write_results(a.out, "run", stamp, doc, markdown(meta, summary, notes))
    if bench.fails:
        warn(f"{bench.fails} run(s) failed and are left out of the medians")
        return 1
    return 0
