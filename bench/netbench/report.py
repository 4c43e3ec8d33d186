"""Reporting: number formats, the per-row statistics (median, spread,
ratios ours/peer, CPU per unit), the text table, the Markdown report and
writing the JSON and Markdown files."""

import json
import shutil
import statistics
from pathlib import Path
from typing import List, Optional

from .common import HOST, REPO, say
from .rows import Row


# ---------------------------------------------------------------- formats
def fmt_rate(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 1000 else f"{x:.1f}" if x >= 100 else f"{x:.2f}"


def fmt_cpu(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}" if x >= 100 else f"{x:.2f}" if x >= 1 else f"{x:.3f}"


def fmt_pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def fmt_ratio(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.2f}"


# ---------------------------------------------------------------- summary
def paired_ratio(runs: List[dict], row: str, metric: str, ours: str, peer: str) -> Optional[float]:
    """The median over rounds of ours/peer within the round: the two ran back
    to back, so a machine that drifts between rounds moves both alike."""
    def by_rep(tool):
        return {r["rep"]: r["metrics"][metric]["rate"] for r in runs
                if r["row"] == row and r["tool"] == tool and "metrics" in r}
    a, b = by_rep(ours), by_rep(peer)
    ratios = [a[k] / b[k] for k in a if k in b and b[k]]
    return statistics.median(ratios) if ratios else None


def summarize(rows: List[Row], runs: List[dict]) -> List[dict]:
    out = []
    for row in rows:
        ref = row.variants[0].tool
        for metric, unit, cpu_unit in row.metrics:
            lines = []
            for v in row.variants:
                ok = [r for r in runs if r["row"] == row.key and r["tool"] == v.tool and "metrics" in r]
                rates = [r["metrics"][metric]["rate"] for r in ok]
                per = lambda key: [r[key] / r["metrics"][metric]["units"] for r in ok]
                tot = [(r["client_cpu_us"] + r["server_cpu_us"]) / r["metrics"][metric]["units"] for r in ok]
                lines.append({
                    "tool": v.tool, "n": len(ok),
                    "median": statistics.median(rates) if ok else None,
                    "min": min(rates) if ok else None, "max": max(rates) if ok else None,
                    "cpu_per_unit": statistics.median(tot) if ok else None,
                    "client_cpu_per_unit": statistics.median(per("client_cpu_us")) if ok else None,
                    "server_cpu_per_unit": statistics.median(per("server_cpu_us")) if ok else None,
                    # share of that CPU spent in the tools' own user space (the rest is the kernel)
                    "user_share": statistics.median(
                        [(r["client_user_us"] + r["server_user_us"]) / max(1, r["client_cpu_us"] + r["server_cpu_us"])
                         for r in ok]) if ok else None,
                    "other_cpus_median": statistics.median([r.get("other_cpus", 0) for r in ok]) if ok else None,
                    "command": " ".join(v.argv).replace(str(REPO) + "/", ""), "note": v.note,
                })
            r0 = lines[0]
            for ln in lines:
                ok = ln["median"] and r0["median"] and ln["tool"] != ref
                ln["ratio"] = r0["median"] / ln["median"] if ok else None
                ln["paired_ratio"] = paired_ratio(runs, row.key, metric, ref, ln["tool"]) if ok else None
                okc = ln["cpu_per_unit"] and r0["cpu_per_unit"] is not None and ln["tool"] != ref
                ln["cpu_ratio"] = r0["cpu_per_unit"] / ln["cpu_per_unit"] if okc else None
            out.append({"row": row.key, "title": row.title, "metric": metric, "unit": unit,
                        "cpu_unit": cpu_unit, "reference": ref, "ext": row.ext, "notes": row.notes,
                        "tools": lines})
    return out


def text_table(summary: List[dict]) -> str:
    hdr = (f"{'row':<30} {'unit':<12} {'tool':<22} {'n':>2} {'median':>10} {'spread (min..max)':>23} "
           f"{'ours/peer':>9} {'paired':>6} {'cpu/unit':>9} {'(cli/srv)':>15} {'cpu unit':<8} {'cpu ours/peer':>13} {'user':>5}")
    lines = [hdr, "-" * len(hdr)]
    for s in summary:
        for i, t in enumerate(s["tools"]):
            title = s["title"] if i == 0 else ""
            unit = s["unit"] if i == 0 else ""
            spread = f"{fmt_rate(t['min'])}..{fmt_rate(t['max'])}" if t["n"] else "-"
            split = f"{fmt_cpu(t['client_cpu_per_unit'])}/{fmt_cpu(t['server_cpu_per_unit'])}" if t["n"] else "-"
            lines.append(f"{title:<30} {unit:<12} {t['tool']:<22} {t['n']:>2} {fmt_rate(t['median']):>10} "
                         f"{spread:>23} {fmt_ratio(t['ratio']):>9} {fmt_ratio(t.get('paired_ratio')):>6} {fmt_cpu(t['cpu_per_unit']):>9} {split:>15} "
                         f"{s['cpu_unit'] if i == 0 else '':<8} {fmt_ratio(t['cpu_ratio']):>13} {fmt_pct(t['user_share']):>5}")
    return "\n".join(lines)


def markdown(meta: dict, summary: List[dict], notes: List[str]) -> str:
    md = ["# netperf-ng side by side: bench/run", ""]
    md += [f"- date: {meta['date']}", f"- host: {meta['host']}, loopback {HOST}",
           f"- ours: {meta['versions'].get('ours', '?')}, git {meta['git']}"]
    for t in ("stock", "iperf3", "sockperf", "qperf"):
        if t in meta["versions"]:
            md.append(f"- {t}: {meta['versions'][t]}")
    p = meta["params"]
    md += [f"- command: `{meta['command']}`",
           f"- {p['reps']} repetitions per tool, tools of a row alternating (round robin, the first rotating), "
           f"time-based rows `{p['len_s']}` s each, TCP_CRR `-l -{p['crr_trans']}`",
           f"- CPU: user+system of each tool's own processes, client + server, per unit of work "
           f"({meta['cpu']}); median over runs; ratios are ours/peer (rate > 1: ours faster; CPU < 1: ours cheaper); "
           "paired: the median over rounds of ours/peer within a round (the two ran back to back)",
           "- user: the share of that CPU spent in the tools' own user space; the rest is kernel time",
           f"- CPU placement (`--pin`): {meta['pin']}",
           "", "| row | unit | tool | n | median | spread (min..max) | ours/peer | paired | CPU/unit (client/server) | CPU unit | CPU ours/peer | user |",
           "|---|---|---|--:|--:|---|--:|--:|--:|---|--:|--:|"]
    for s in summary:
        for i, t in enumerate(s["tools"]):
            spread = f"{fmt_rate(t['min'])}..{fmt_rate(t['max'])}" if t["n"] else "-"
            cpu = (f"{fmt_cpu(t['cpu_per_unit'])} ({fmt_cpu(t['client_cpu_per_unit'])}/"
                   f"{fmt_cpu(t['server_cpu_per_unit'])})") if t["n"] else "-"
            name = f"**{t['tool']}**" if t["tool"] == s["reference"] else t["tool"]
            md.append(f"| {s['title'] if i == 0 else ''} | {s['unit'] if i == 0 else ''} | {name} | {t['n']} | "
                      f"{fmt_rate(t['median'])} | {spread} | {fmt_ratio(t['ratio'])} | "
                      f"{fmt_ratio(t.get('paired_ratio'))} | {cpu} | "
                      f"{s['cpu_unit'] if i == 0 else ''} | {fmt_ratio(t['cpu_ratio'])} | {fmt_pct(t['user_share'])} |")
    row_notes = []
    for s in summary:
        for n in s["notes"]:
            if f"{s['title']}: {n}" not in row_notes:
                row_notes.append(f"{s['title']}: {n}")
    if row_notes or notes:
        md += ["", "Notes:", ""] + [f"- {n}" for n in row_notes + notes]
    md += ["", "Commands (ports are chosen per run):", ""]
    seen = set()
    for s in summary:
        for t in s["tools"]:
            if (s["row"], t["tool"]) not in seen:
                seen.add((s["row"], t["tool"]))
                md.append(f"- {s['title']} / {t['tool']}: `{t['command']}`")
    return "\n".join(md) + "\n"


def write_results(out_dir: str, prefix: str, stamp: str, doc: dict, md: str) -> None:
    """OUT/PREFIX-STAMP.{json,md}, copied to OUT/PREFIX-latest.{json,md}."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{prefix}-{stamp}.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / f"{prefix}-{stamp}.md").write_text(md)
    shutil.copy(out / f"{prefix}-{stamp}.json", out / f"{prefix}-latest.json")
    shutil.copy(out / f"{prefix}-{stamp}.md", out / f"{prefix}-latest.md")
    say(f"\nwrote {out}/{prefix}-{stamp}.json\n      {out}/{prefix}-{stamp}.md  (and {prefix}-latest.*)")
