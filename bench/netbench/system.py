"""The machine side: CPU accounting of process trees (cgroups or /proc),
pinning, free ports and listening checks, whole-machine load from
/proc/stat, and the servers' processes."""

import os
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from .common import HOST, Usage


# ------------------------------------------------------------------ CPU
class Cpu:
    """How CPU time of a process tree is read.

    cgroup: every process tree (each server, each tool's clients) lives in
        its own new cgroup; its usage counts all threads and all forked
        children, reaped or not (the stock netserver and qperf fork a child
        per test and never leave its CPU in the parent's cutime).
    proc: fallback without a writable cgroup tree.  Clients: wait4() rusage
        of `timeout`, which includes the reaped tool.  Servers: utime + stime
        + cutime + cstime from /proc/PID/stat; the stock netserver then runs
        with -f (no fork per test).  qperf's per-test children are counted
        only once qperf has reaped them.
    """

    def __init__(self, mode: str):
        self.kind = ""
        self.root: Optional[Path] = None
        self.groups: List[Path] = []
        self.clk = os.sysconf("SC_CLK_TCK")
        if mode in ("auto", "cgroup") and self._find_cgroup_root():
            self.mode = "cgroup"
        elif mode == "cgroup":
            raise Usage("--cpu cgroup: no writable cgroup (v2, or v1 cpuacct) found; try --cpu proc")
        else:
            self.mode = "proc"

    def describe(self) -> str:
        return f"cgroup {self.kind}" if self.mode == "cgroup" else "proc (/proc/PID/stat, wait4)"

    def _find_cgroup_root(self) -> bool:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
        cands = [("v2", m[1]) for m in mounts if len(m) > 3 and m[2] == "cgroup2"]
        cands += [("v1", m[1]) for m in mounts
                  if len(m) > 3 and m[2] == "cgroup" and "cpuacct" in m[3].split(",")]
        for kind, mnt in cands:
            probe = Path(mnt) / f"bench-run-probe.{os.getpid()}"
            try:
                probe.mkdir()
            except OSError:
                continue
            ok = (probe / ("cpu.stat" if kind == "v2" else "cpuacct.usage")).exists()
            if ok:  # moving a process in must work too
                ok = subprocess.run(["sh", "-c", f"echo $$ > '{probe}/cgroup.procs'"],
                                    stderr=subprocess.DEVNULL).returncode == 0
            _rmdir(probe)
            if ok:
                self.kind, self.root = kind, Path(mnt)
                return True
        return False

    def new_group(self, name: str) -> Optional[Path]:
        if self.mode != "cgroup":
            return None
        g = self.root / f"bench-run-{name}.{os.getpid()}"
        g.mkdir()
        self.groups.append(g)
        return g

    def usage_us(self, group: Path) -> Tuple[int, int]:
        """(user+system, user) CPU microseconds used so far by the cgroup."""
        if self.kind == "v2":
            d = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
            return int(d["usage_usec"]), int(d["user_usec"])
        total = int((group / "cpuacct.usage").read_text()) // 1000
        d = dict(line.split() for line in (group / "cpuacct.stat").read_text().splitlines())
        return total, int(int(d["user"]) * 1_000_000 / self.clk)

    def proc_us(self, pid: int) -> Tuple[int, int]:
        """(user+system, user) CPU microseconds of a process and its reaped children."""
        s = Path(f"/proc/{pid}/stat").read_text()
        f = [int(x) for x in s[s.rindex(")") + 2:].split()[11:15]]
        # after the comm: utime=11 stime=12 cutime=13 cstime=14 (0-based)
        return int(sum(f) * 1_000_000 / self.clk), int((f[0] + f[2]) * 1_000_000 / self.clk)

    @staticmethod
    def procs(group: Path) -> List[int]:
        try:
            return [int(x) for x in (group / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def cleanup(self) -> None:
        for g in self.groups:
            for _ in range(40):
                pids = self.procs(g)
                if not pids:
                    break
                for p in pids:
                    kill_pid(p, signal.SIGKILL)
                time.sleep(0.05)
            _rmdir(g)
        self.groups = []


def _rmdir(p: Path) -> None:
    for _ in range(40):  # bounded: a cgroup goes away once its last task has exited
        try:
            p.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)


def kill_pid(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def pre_exec(group: Optional[Path], cpus: Optional[set]) -> Optional[Callable[[], None]]:
    """preexec_fn: move the child into `group` and pin it to `cpus` before
    exec; threads and children it creates inherit both."""
    if group is None and not cpus:
        return None
    path = str(group / "cgroup.procs") if group else None

    def f() -> None:
        if path:
            with open(path, "w") as fh:
                fh.write(str(os.getpid()))
        if cpus:
            os.sched_setaffinity(0, cpus)
    return f


def pin_plan(mode: str) -> Tuple[Optional[set], Optional[set], str]:
    """(server CPUs, client CPUs, description) for --pin."""
    allowed = sorted(os.sched_getaffinity(0))
    if mode == "none":
        return None, None, "none (the scheduler places every process)"
    if mode == "split" and len(allowed) >= 2:
        return {allowed[-1]}, {allowed[0]}, f"split (servers on CPU {allowed[-1]}, clients on CPU {allowed[0]})"
    why = "" if mode == "same" else " (only one CPU allowed, so split is same)"
    return {allowed[0]}, {allowed[0]}, f"same (servers and clients on CPU {allowed[0]}){why}"


# ---------------------------------------------------------------- ports
def _ports(files: List[str], states: Optional[set]) -> set:
    used = set()
    for fn in files:
        try:
            lines = Path(fn).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 3 and (states is None or f[3] in states):
                used.add(int(f[1].rsplit(":", 1)[1], 16))
    return used


def listening(port: int, proto: str) -> bool:
    if proto == "tcp":
        return port in _ports(["/proc/net/tcp", "/proc/net/tcp6"], {"0A"})
    return port in _ports(["/proc/net/udp", "/proc/net/udp6"], None)


def free_port(taken: set) -> int:
    used = _ports(["/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"], None) | taken
    for _ in range(500):
        p = random.randrange(20000, 32000)  # below the usual ephemeral range (32768-60999)
        if p not in used:
            taken.add(p)
            return p
    raise Usage("no free port found in 20000-32000")


# ---------------------------------------------------------------- machine load
class Machine:
    """Whole-machine CPU from /proc/stat, to see load from processes that
    are not ours (other users of a shared machine) during each run.

    foreign = machine busy time - our tools' CPU - ksoftirqd's CPU, per
    second of wall clock, in CPUs.  ksoftirqd is left out of "foreign"
    because on loopback it does our packets' receive work when softirqs
    pile up; it is reported on its own (no tool is charged for it).
    steal = time the hypervisor ran something else while our virtual CPUs
    wanted to run (other guests on a shared host).  "other load" = foreign
    + steal.  /proc/stat is sampled at the tick, so this is good to about
    1 % of a CPU over a 3 s run."""

    def __init__(self):
        self.clk = os.sysconf("SC_CLK_TCK")
        self.softirqd = [int(p) for p in os.listdir("/proc") if p.isdigit() and _comm(p).startswith("ksoftirqd/")]

    def sample(self) -> Tuple[float, float, float, float]:
        """(monotonic s, busy us, steal us, ksoftirqd us)"""
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        busy = f[0] + f[1] + f[2] + f[5] + f[6]  # user nice system irq softirq
        steal = f[7] if len(f) > 7 else 0
        ksirq = 0
        for pid in self.softirqd:
            try:
                st = Path(f"/proc/{pid}/stat").read_text()
                g = st[st.rindex(")") + 2:].split()
                ksirq += int(g[11]) + int(g[12])
            except OSError:
                pass
        k = 1_000_000 / self.clk
        return time.monotonic(), busy * k, steal * k, ksirq * k

    def busy_cpus(self, window: float) -> float:
        """CPUs busy over the next `window` seconds (nothing of ours runs then)."""
        t0, b0, _, _ = self.sample()
        time.sleep(window)
        t1, b1, _, _ = self.sample()
        return (b1 - b0) / 1e6 / max(t1 - t0, 1e-3)


def _comm(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


# ---------------------------------------------------------------- servers
class Server:
    def __init__(self, name: str, argv: List[str], port: int, proto: str, cpu: Cpu, work: Path,
                 cpus: Optional[set]):
        self.name, self.argv, self.port, self.proto, self.cpu, self.cpus = name, argv, port, proto, cpu, cpus
        self.log = work / f"server-{name}.log"
        self.group = cpu.new_group(f"srv-{name}")
        self.proc: Optional[subprocess.Popen] = None
        self.threads0 = 1
        self.procs0 = 1

    def start(self) -> None:
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=pre_exec(self.group, self.cpus))
        for _ in range(100):  # 5 s at most
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} server exited at start: {self.log.read_text()[-500:]}")
            if listening(self.port, self.proto):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError(f"{self.name} server does not listen on {HOST}:{self.port} after 5 s")
        time.sleep(0.1)
        self.threads0 = self._threads()
        self.procs0 = len(Cpu.procs(self.group)) if self.group else 1

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _threads(self) -> int:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("Threads:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    def cpu_us(self) -> Tuple[int, int]:
        if self.group:
            return self.cpu.usage_us(self.group)
        return self.cpu.proc_us(self.proc.pid)

    def settle(self) -> None:
        """Wait (at most 2 s) until the server is back to idle: no extra
        thread (ours), no forked child (stock netserver, qperf) still
        finishing the test, so the reading includes all of it."""
        for _ in range(100):
            busy = self._threads() > self.threads0
            if self.group:
                busy = busy or len(Cpu.procs(self.group)) > self.procs0
            else:
                busy = busy or bool(_children(self.proc.pid))
            if not busy:
                return
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                try:
                    self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
        if self.group:
            for p in Cpu.procs(self.group):
                kill_pid(p, signal.SIGKILL)


def _children(pid: int) -> List[int]:
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            out += [int(x) for x in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
    except OSError:
        pass
    return out

