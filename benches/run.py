#!/usr/bin/env python3
"""ccbench speed benchmark: the same dumbbell scenarios on ccbench and on ns-3, side by side.

    .venv/bin/python benches/run.py [--scenarios a,b,c,d] [--skip-ns3] [--skip-ccbench]
                                   [--ns3 auto|system|optimized|both] [--repeat N]

Each run is a fresh child process; its peak RSS is that child's own, taken by /usr/bin/time
(%M; fallback os.wait4), not the RUSAGE_CHILDREN maximum over all children. Wall time is the
child's whole life (start-up, set-up, simulation, output), measured here; the simulators' own timers are kept in the JSON.
ccbench runs as `ccbench run <yaml> -o <dir> --no-packets --no-plots --quiet` (sim backend,
per-packet records off, no plots).

Writes benches/out/results.json and benches/out/results.md. Standard library only; polars (the
project venv) is used to read ccbench's flowstats.parquet, in a separate .venv/bin/python.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
ROOT = BENCHES.parent
BUILD = BENCHES / "build"
OUT = BENCHES / "out"
VENV_PY = ROOT / ".venv" / "bin" / "python"

# The ns-3 twin of each benches/scenarios/<name>.yaml (keep the two in step).
SCENARIOS = {
    "a": dict(flows=1, duration=10, centralRate="100Mbps", sideRate="1Gbps", queue=1000,
              what="1 cubic, 100 Mbit/s, 10 s"),
    "b": dict(flows=2, duration=60, centralRate="100Mbps", sideRate="1Gbps", queue=1000,
              what="2 cubic, 100 Mbit/s, 60 s"),
    "c": dict(flows=10, duration=10, centralRate="1Gbps", sideRate="10Gbps", queue=2000,
              what="10 cubic, 1 Gbit/s, 10 s"),
    "d": dict(flows=100, duration=10, centralRate="1Gbps", sideRate="10Gbps", queue=2000,
              what="100 cubic, 1 Gbit/s, 10 s"),
}
NS3_BINARIES = {"system": BUILD / "ns3-dumbbell", "optimized": BUILD / "ns3-dumbbell-opt"}
APT_HINT = "apt-get update && apt-get install -y libns3-dev g++ pkg-config   (or benches/setup.sh)"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_measured(cmd: list[str], label: str, cwd: Path = ROOT) -> dict:
    """Runs cmd in a fresh child; returns stdout, wall time and that child's own peak RSS."""
    gnu_time = Path("/usr/bin/time")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        # A forked child's ru_maxrss starts from the parent's RSS at fork time, so the peak is
        # taken by GNU time, whose own small process forks the simulator (%M: KiB).
        full = ([str(gnu_time), "-f", "%M %U %S", "-o", tf.name] + cmd) if gnu_time.exists() else cmd
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=out, stderr=err, cwd=cwd)
        last = t0
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            time.sleep(0.05)
            now = time.perf_counter()
            if now - last >= 30:
                log(f"    ... {label}: {now - t0:.0f} s so far")
                last = now
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        res = {"cmd": cmd, "returncode": p.returncode, "wall_s": wall,
               "peak_rss_mb": ru.ru_maxrss / 1024.0,  # Linux: KiB
               "user_s": ru.ru_utime, "sys_s": ru.ru_stime,
               "stdout": out.read().decode(errors="replace"),
               "stderr": err.read().decode(errors="replace"),
               "rss_source": "wait4 (includes the parent's RSS at fork)",
               "loadavg_1min_before_after": [load0, os.getloadavg()[0]]}
        if gnu_time.exists():
            fields = (tf.read().strip().splitlines() or [""])[-1].split()
            if len(fields) == 3:
                res["peak_rss_mb"] = int(fields[0]) / 1024.0
                res["user_s"], res["sys_s"] = float(fields[1]), float(fields[2])
                res["rss_source"] = "/usr/bin/time %M"
    if res["returncode"] != 0:
        log(f"    {label} FAILED (exit {res['returncode']}):\n{res['stderr'][-3000:]}")
    return res


def flow_stats(values: list[float]) -> dict:
    if not values:
        return {"mean": None, "min": None, "max": None, "total": None}
    return {"mean": sum(values) / len(values), "min": min(values), "max": max(values),
            "total": sum(values)}


def best_of(n: int, fn) -> dict:
    """Runs fn n times; returns the fastest successful run with every wall time attached."""
    runs = [fn() for _ in range(max(1, n))]
    ok = [r for r in runs if r.get("ok")]
    if not ok:
        return runs[-1]
    best = min(ok, key=lambda r: r["wall_s"])
    best["all_wall_s"] = [r["wall_s"] for r in ok]
    return best


# ---------------------------------------------------------------------------------------- ns-3

def ensure_ns3(which: str) -> Path | None:
    binary = NS3_BINARIES[which]
    src = BENCHES / "ns3" / "dumbbell.cc"
    if which == "optimized":
        if not binary.exists():
            log(f"ns-3 optimized binary missing: run benches/ns3/build-optimized.sh (~20 min)")
            return None
        return binary
    if binary.exists() and binary.stat().st_mtime >= src.stat().st_mtime:
        return binary
    if subprocess.run(["pkg-config", "--exists", "ns3-core"]).returncode != 0 and not any(
            "ns3." in line for line in subprocess.run(
                ["pkg-config", "--list-all"], capture_output=True, text=True).stdout.splitlines()):
        log(f"ns-3 is not installed. Install it with:\n    {APT_HINT}")
        return None
    log("building the ns-3 dumbbell (benches/ns3/build.sh) ...")
    r = subprocess.run([str(BENCHES / "ns3" / "build.sh")])
    if r.returncode != 0 or not binary.exists():
        log(f"ns-3 build failed; is libns3-dev installed?\n    {APT_HINT}")
        return None
    return binary


def run_ns3(binary: Path, name: str, seed: int) -> dict:
    s = SCENARIOS[name]
    cmd = [str(binary), f"--flows={s['flows']}", f"--duration={s['duration']}",
           f"--centralRate={s['centralRate']}", "--centralDelay=10ms",
           f"--sideRate={s['sideRate']}", "--sideDelay=1ms",
           f"--centralQueue={s['queue']}", f"--sideQueue={s['queue']}", f"--seed={seed}"]
    r = run_measured(cmd, f"ns-3 {name}")
    if r["returncode"] != 0:
        return {"ok": False, "error": r["stderr"][-2000:], "cmd": cmd}
    j = json.loads(r["stdout"].strip().splitlines()[-1])
    thr = j["throughput_mbps"]
    return {
        "ok": True, "cmd": cmd, "wall_s": r["wall_s"], "peak_rss_mb": r["peak_rss_mb"],
        "cpu_s": r["user_s"] + r["sys_s"], "loadavg": r["loadavg_1min_before_after"],
        "internal_wall_s": j["wall_time_s"], "run_s": j["run_time_s"],
        "events": j["events"],
        # both directions of the central link, as ccbench's sim.bottleneck_packets counts
        "bottleneck_packets": j["bottleneck_packets"] + j["bottleneck_packets_rev"],
        "bottleneck_packets_data": j["bottleneck_packets"],
        "bottleneck_packets_ack": j["bottleneck_packets_rev"], "drops": j["drops"],
        "throughput_mbps": thr, "throughput": flow_stats(thr),
        "mode": f"ns-3 {j['ns3_version']} ({j['ns3_build']} build)", "raw": j,
    }


# ------------------------------------------------------------------------------------ ccbench

def ccbench_cmd() -> list[str] | None:
    exe = ROOT / ".venv" / "bin" / "ccbench"
    if exe.exists():
        return [str(exe)]
    if VENV_PY.exists():
        return [str(VENV_PY), "-m", "ccbench"]
    if shutil.which("ccbench"):
        return ["ccbench"]
    return None


def read_flowstats(path: Path) -> list[dict]:
    code = ("import json,sys,polars as pl; "
            "print(json.dumps(pl.read_parquet(sys.argv[1]).to_dicts()))")
    # In a separate interpreter: importing polars here would grow this process, and every
    # later child's fork-time RSS with it.
    r = subprocess.run([str(VENV_PY), "-c", code, str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return json.loads(r.stdout)


def run_ccbench(name: str, seed: int) -> dict:
    base = ccbench_cmd()
    if base is None:
        return {"ok": False, "error": "no ccbench (expected .venv/bin/ccbench or .venv/bin/python)"}
    yaml = BENCHES / "scenarios" / f"{name}.yaml"
    outdir = OUT / "ccbench" / name
    if outdir.exists():
        shutil.rmtree(outdir)
    outdir.parent.mkdir(parents=True, exist_ok=True)
    cmd = base + ["run", str(yaml), "-o", str(outdir), "--no-packets", "--no-plots", "--quiet",
                  "--seed", str(seed)]
    r = run_measured(cmd, f"ccbench {name}")
    if r["returncode"] != 0:
        return {"ok": False, "error": r["stderr"][-2000:], "cmd": cmd}
    meta = json.loads((outdir / "metadata.json").read_text())
    sim = meta.get("sim", {})
    dur = SCENARIOS[name]["duration"]
    rows = sorted(read_flowstats(outdir / "flowstats.parquet"), key=lambda row: row["flow"])
    mss = meta.get("experiment", {}).get("mss", 1448)
    # Throughput as ns-3's PacketSink counts it: payload bytes received in order by the
    # application. app_bytes (payload acknowledged) is the closest column; fall back to
    # delivered IP bytes scaled to payload (delivered counts retransmitted copies too).
    thr = []
    for row in rows:
        if row.get("app_bytes") is not None:
            b = row["app_bytes"]
        else:
            b = row["delivered_bytes"] * mss / (mss + 52)
        thr.append(b * 8 / dur / 1e6)
    ip_thr = [row["delivered_bytes"] * 8 / dur / 1e6 for row in rows]
    drops = sum(row.get("dropped_pkts") or 0 for row in rows)
    return {
        "ok": True, "cmd": cmd, "wall_s": r["wall_s"], "peak_rss_mb": r["peak_rss_mb"],
        "cpu_s": r["user_s"] + r["sys_s"], "loadavg": r["loadavg_1min_before_after"],
        "internal_wall_s": meta.get("wall_time_s"), "run_s": meta.get("wall_time_s"),
        "events": sim.get("events"), "bottleneck_packets": sim.get("bottleneck_packets"),
        "throughput_mbps": thr, "throughput": flow_stats(thr),
        "delivered_ip_mbps": flow_stats(ip_thr), "drops": drops,
        "mode": "ccbench sim backend, per-packet records off (--no-packets), no plots",
        "sim": sim, "ccbench_version": meta.get("ccbench_version"),
    }


# ------------------------------------------------------------------------------------- report

def fmt(x, spec=".3g"):
    if x is None:
        return "–"
    if isinstance(x, float):
        return format(x, spec)
    return str(x)


def rate(n, s):
    return None if (n is None or not s) else n / s


def table(results: dict) -> str:
    head = ("| scen | simulator | wall s | wall s / sim s | CPU s | loop s | loop s / sim s | events "
            "| events / loop s | bottleneck pkts | bneck pkts / loop s | peak RSS MB "
            "| drops | thr mean Mbit/s | min | max | total |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    ratios = []
    for name, per in results.items():
        dur = SCENARIOS[name]["duration"]
        for sim, r in per.items():
            if not r.get("ok"):
                lines.append(f"| {name} | {sim} | failed |" + " |" * (head.count("|") - 4))
                continue
            t = r["throughput"]
            lines.append(
                f"| {name} | {sim} | {r['wall_s']:.2f} | {r['wall_s'] / dur:.3f} | {r['cpu_s']:.2f} "
                f"| {fmt(r['run_s'], '.3g')} | {fmt(rate(r['run_s'], dur), '.3g')} | {fmt(r['events'])} "
                f"| {fmt(rate(r['events'], r['run_s']), '.3g')} | {fmt(r['bottleneck_packets'])} "
                f"| {fmt(rate(r['bottleneck_packets'], r['run_s']), '.3g')} "
                f"| {r['peak_rss_mb']:.0f} | {fmt(r.get('drops'))} | {fmt(t['mean'], '.2f')} | {fmt(t['min'], '.2f')} "
                f"| {fmt(t['max'], '.2f')} | {fmt(t['total'], '.2f')} |")
        cc = per.get("ccbench")
        for sim, r in per.items():
            if sim.startswith("ns-3") and r.get("ok") and cc and cc.get("ok"):
                loop = (f", loop only {r['run_s'] / cc['run_s']:.1f}×"
                        if cc.get("run_s") and r.get("run_s") else "")
                ratios.append(f"| {name} | {sim} | **{r['wall_s'] / cc['wall_s']:.1f}×** "
                              f"| {r['cpu_s'] / cc['cpu_s']:.1f}× | "
                              + (f"{r['run_s'] / cc['run_s']:.1f}×" if loop else "–")
                              + f" | {dur / cc['wall_s']:.2f} | {dur / r['wall_s']:.3f} |")
    if ratios:
        lines += ["", "Speed ratio ccbench / ns-3 (= ns-3 time / ccbench time, same scenario, same "
                  "invocation):", "",
                  "| scen | vs | wall (process) | CPU time | simulation loop "
                  "| ccbench sim-s per wall-s | ns-3 sim-s per wall-s |",
                  "|---|---|---|---|---|---|---|"]
        lines += ratios
    return "\n".join(lines)


def machine() -> dict:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version(), "git_commit": commit,
            "loadavg_at_report": os.getloadavg()}


HEADER_NOTE = (
    "wall s = whole child process (start-up + set-up + run + output); CPU s = its user + system "
    "CPU time (less sensitive to other load on the machine); loop s = the simulator's own timer "
    "(ns-3: Simulator::Run; ccbench: metadata wall_time_s, the Rust run_sim call); events/s and "
    "packets/s are per loop second; peak RSS = that child's own; drops = packets dropped "
    "anywhere; throughput = application payload per flow / duration (ns-3: PacketSink bytes, "
    "ccbench: flowstats app_bytes); bottleneck pkts = packets put on the central link, both "
    "directions (data + ACKs); events are each simulator's own count (not comparable 1:1).")


def header_text(modes, mach) -> str:
    header = [f"# ccbench vs ns-3 speed benchmark ({datetime.datetime.now().isoformat(timespec='seconds')})",
              "", "Modes: " + "; ".join(modes), "",
              "Machine: " + json.dumps(mach), "",
              HEADER_NOTE, ""]
    return "\n".join(header) + "\n"


def main() -> int:
    global OUT
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--scenarios", default="a,b,c,d", help="comma list of a,b,c,d")
    ap.add_argument("--skip-ns3", action="store_true")
    ap.add_argument("--skip-ccbench", action="store_true")
    ap.add_argument("--ns3", default="auto", choices=["auto", "system", "optimized", "both"],
                    help="which ns-3 build: Debian's libns3 (system), the one of "
                         "benches/ns3/build-optimized.sh (optimized); auto = both if the optimized "
                         "binary exists, else system")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per scenario and simulator; the fastest is reported (all walls kept)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report-only", action="store_true",
                    help="re-print the tables of OUT/results.json without running anything")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    bad = [n for n in names if n not in SCENARIOS]
    if bad:
        ap.error(f"unknown scenario(s) {bad}; known: {','.join(SCENARIOS)}")

    ns3_bins = {}
    if not args.skip_ns3:
        which_ns3 = args.ns3
        if which_ns3 == "auto":
            which_ns3 = "both" if NS3_BINARIES["optimized"].exists() else "system"
        for which in (["system", "optimized"] if which_ns3 == "both" else [which_ns3]):
            b = ensure_ns3(which)
            if b:
                ns3_bins[f"ns-3 {which}"] = b
        if not ns3_bins:
            log("ns-3 unavailable: running ccbench only.")

    OUT = args.out
    OUT.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        saved = json.loads((OUT / "results.json").read_text())
        print(header_text(saved["modes"], saved["machine"]) + table(saved["results"]))
        return 0
    results: dict = {}
    modes = set()
    for name in names:
        s = SCENARIOS[name]
        per = results.setdefault(name, {})
        if not args.skip_ccbench:
            log(f"[{name}] ccbench: {s['what']} ...")
            per["ccbench"] = r = best_of(args.repeat, lambda: run_ccbench(name, args.seed))
            if r.get("ok"):
                modes.add(r["mode"])
                log(f"    ccbench {name}: {r['wall_s']:.2f} s wall, "
                    f"throughput total {r['throughput']['total']:.2f} Mbit/s")
        for label, b in ns3_bins.items():
            hint = " (expect minutes)" if s["flows"] >= 10 else ""
            log(f"[{name}] {label}: {s['what']}{hint} ...")
            per[label] = r = best_of(args.repeat, lambda: run_ns3(b, name, args.seed))
            if r.get("ok"):
                modes.add(r["mode"])
                log(f"    {label} {name}: {r['wall_s']:.2f} s wall, {r['events']} events, "
                    f"throughput total {r['throughput']['total']:.2f} Mbit/s")

    md = table(results)
    text = header_text(sorted(modes), machine()) + md + "\n"
    (OUT / "results.md").write_text(text)
    (OUT / "results.json").write_text(json.dumps(
        {"machine": machine(), "modes": sorted(modes), "seed": args.seed,
         "scenarios": {n: SCENARIOS[n] for n in names}, "results": results}, indent=1))
    print(text)
    log(f"wrote {OUT / 'results.json'} and {OUT / 'results.md'}")
    return 0 if all(r.get("ok") for per in results.values() for r in per.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
