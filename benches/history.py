"""The regression guard: the simulator's headline speed figures of this commit, appended as one
JSON line to benches/history/bench.jsonl (kept in the repository; `make bench` runs it after
benches/run.py). docs/benchmarks.md ("Bench history") says how to read it.

    .venv/bin/python benches/history.py                    # flows curve + run.py's last results
    .venv/bin/python benches/history.py --no-append        # print the record only

A record holds the commit (and whether the tree had uncommitted changes), the date, the 1-minute
load average before and after, and:
* `loop_vs_ns3`: per scenario of benches/out/results.json (benches/run.py, if that file is
  newer than this commit's other figures would be: written within `--max-age` hours), ns-3's
  `Simulator::Run` time / ccbench's loop time, per ns-3 build;
* `us_per_pkt`: the event loop's CPU time per bottleneck packet (benches/flows_scaling.py, best of
  `--rounds`) at each flow count, with host noise off (`exact`) and on (`kernel`);
* `flows_growth`: µs/pkt at the most flows / at 1 flow, per noise model;
* `noise_over_exact`: loop CPU with noise / without, per flow count;
* `quickstart`: `ccbench run examples/quickstart.yaml --quiet` (report included) as a user runs
  it, a fresh process each time after one warm-up run: best wall and best CPU (user + sys) of
  `--quickstart-runs` (docs/benchmarks.md, "Quickstart"; target: wall ≤ 1.0 s on a quiet machine).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
ROOT = BENCHES.parent
HISTORY = BENCHES / "history" / "bench.jsonl"
sys.path.insert(0, str(BENCHES))

import flows_scaling  # noqa: E402  (a sibling script)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def ns3_ratios(path: Path, max_age_h: float) -> dict | None:
    """ns-3 loop time / ccbench loop time per scenario and ns-3 build, from run.py's JSON."""
    if not path.exists() or time.time() - path.stat().st_mtime > max_age_h * 3600:
        return None
    res = json.loads(path.read_text()).get("results", {})
    out = {}
    for name, per in sorted(res.items()):
        cc = per.get("ccbench") or {}
        for sim, r in per.items():
            if sim.startswith("ns-3") and r.get("ok") and cc.get("ok") and cc.get("run_s") and r.get("run_s"):
                out.setdefault(name, {})[sim] = round(r["run_s"] / cc["run_s"], 1)
    return out or None


def quickstart(runs: int) -> dict | None:
    """Best wall and CPU seconds of `ccbench run examples/quickstart.yaml` (None: runs=0)."""
    if runs <= 0:
        return None
    walls, cpus = [], []
    # bytecode cached, as an installed package has it (some shells set PYTHONDONTWRITEBYTECODE)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "ccbench", "run", str(ROOT / "examples" / "quickstart.yaml"),
               "-o", str(Path(tmp) / "q"), "--quiet"]
        for i in range(runs + 1):   # the first warms the page cache and the bytecode
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 env=env)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            if os.waitstatus_to_exitcode(status) not in (0, 1):   # 1: an expectation failed
                raise SystemExit(f"quickstart run failed: {p.stderr.read().decode()[-2000:]}")
            p.stderr.close()
            if i:
                walls.append(wall)
                cpus.append(ru.ru_utime + ru.ru_stime)
    return {"runs": runs, "wall_s": round(min(walls), 3), "cpu_s": round(min(cpus), 3)}


def record(flows: list[int], rounds: int, duration: float, ccsim: str, ns3: dict | None,
           quickstart_runs: int = 5) -> dict:
    load0 = os.getloadavg()[0]
    quick = quickstart(quickstart_runs)
    rows = flows_scaling.measure({"ccsim": ccsim}, flows, ["exact", "kernel"], duration, rounds)
    load1 = os.getloadavg()[0]
    us = {m: {str(r["flows"]): round(r["us_per_pkt"], 4) for r in rows if r["noise"] == m}
          for m in ("exact", "kernel")}
    cpu = {(r["noise"], r["flows"]): r["loop_cpu_s"] for r in rows}
    lo, hi = str(min(flows)), str(max(flows))
    return {
        "commit": git("rev-parse", "--short=12", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "load": [round(load0, 2), round(load1, 2)],
        "machine": f"{os.cpu_count()} CPUs, {os.uname().machine}",
        "duration_s": duration, "rounds": rounds,
        "loop_vs_ns3": ns3,
        "us_per_pkt": us,
        "flows_growth": {m: round(us[m][hi] / us[m][lo], 2) for m in us},
        "noise_over_exact": {str(n): round(cpu["kernel", n] / cpu["exact", n], 3) for n in flows},
        "quickstart": quick,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", default="1,10,100,1000", help="comma list of flow counts")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--ccsim", default=str(ROOT / "target/release/ccsim"))
    ap.add_argument("--results", type=Path, default=BENCHES / "out" / "results.json",
                    help="benches/run.py's results (the ns-3 ratios)")
    ap.add_argument("--max-age", type=float, default=6.0, help="hours; older results are left out")
    ap.add_argument("--history", type=Path, default=HISTORY)
    ap.add_argument("--quickstart-runs", type=int, default=5,
                    help="runs of the quickstart to take the best of (0: skip it)")
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args(argv)
    if not Path(a.ccsim).exists():
        raise SystemExit(f"{a.ccsim} missing: cargo build --release -p ccbench-sim --bin ccsim")
    rec = record([int(x) for x in a.flows.split(",")], a.rounds, a.duration, a.ccsim,
                 ns3_ratios(a.results, a.max_age), a.quickstart_runs)
    line = json.dumps(rec, sort_keys=True)
    print(line)
    if not a.no_append:
        a.history.parent.mkdir(parents=True, exist_ok=True)
        with a.history.open("a") as f:
            f.write(line + "\n")
        print(f"appended to {a.history}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
