#!/usr/bin/env python3
"""Campaign-layer benchmark: what a campaign costs beyond the simulator's own loop, and how
the executors scale — all measured side by side in one invocation.

    .venv/bin/python benches/campaign.py [--runs 500] [--rounds 2] [--skip-dask]
                                         [--keep tables|summary]

The campaign: N repeats of one short experiment (2 flows, cubic and bbr, 10 Mbit/s, 1 s
simulated, no per-packet records), so each run's loop is ~1 ms and everything else is the
campaign layer (results conversion and writing, metrics, bookkeeping). Configurations, each
into a fresh directory, interleaved over ``--rounds`` rounds (the best round is reported):

* ``in-process``: jobs=1 — per-run overhead = (campaign wall − Σ loop time) / N
* ``pool-1``, ``pool-2``: the local process pool with 1 and 2 workers (throughput ratio)
* ``dask-2``: a Dask LocalCluster with 2 workers (ratio to pool-2)

``--keep`` is the campaigns' option (default tables: each run's Parquet tables written;
summary: only its metadata and index rows, ``ccbench sweep --keep summary``).

Pool and Dask walls include starting the workers (a fixed ~1-2 s); the steady throughput
(10th to last finished run) leaves it out.
Reported with each: CPU time of this process and its children (also split into user and
system time: the system time is mostly the file system and varies with other work on the
machine), and the load average, since the benchmark shares the machine. Writes
benches/out/campaign.json.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
ROOT = BENCHES.parent
sys.path.insert(0, str(ROOT / "python"))

CAMPAIGN = """\
duration: 1
seed: 1
central: {rate: 10Mbit, delay: 10ms, queue: 1bdp}
flows:
  - {scheme: cubic}
  - {scheme: bbr}
repeats: %d
"""


def cpu_split() -> tuple[float, float]:
    """User and system CPU seconds of this process and its children (system time here is
    mostly the file system: a folder, three or more files and a rename a run)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + c.ru_utime, s.ru_stime + c.ru_stime


def one(name: str, camp: Path, work: Path, n: int, keep: str = "tables", rnd: int = 0) -> dict:
    from ccbench.campaign import run_campaign
    kw = {"in-process": dict(jobs=1), "pool-1": dict(jobs=1), "pool-2": dict(jobs=2),
          "dask-2": dict(jobs=2, dask="local")}[name]
    executor = None
    # a fresh directory per round, all removed at the end: deleting the previous round's
    # runs here made the next campaign's folders cost 2-5x the system time (ext4 mounted
    # with discard; docs/benchmarks.md, "The run's folder in system calls"), and the
    # earlier configurations' writes are flushed before the clock starts
    out = work / f"{name}-{rnd}"
    os.sync()
    load0 = os.getloadavg()[0]
    stamps = []
    (u0, s0), t0 = cpu_split(), time.perf_counter()
    c0 = u0 + s0
    if name == "pool-1":  # a pool of one worker, not the in-process executor
        from ccbench.campaign.executors import LocalPool
        executor = LocalPool(1)
    if keep != "tables":
        kw["keep"] = keep
    res = run_campaign(camp, out, executor=executor, **kw,
                       progress=lambda *_: stamps.append(time.perf_counter()))
    if executor is not None:
        executor.close()
    wall = time.perf_counter() - t0
    u1, s1 = cpu_split()
    c1 = u1 + s1
    assert res.ok and res.executed == n, res.summary()
    # steady state: from the 10th finished run to the last (worker start-up excluded)
    steady = (len(stamps) - 10) / (stamps[-1] - stamps[9])
    return {"config": name, "runs": n, "wall_s": wall, "loop_s": res.loop_s,
            "runs_per_s": n / wall, "steady_runs_per_s": steady,
            "startup_s": stamps[0] - t0,
            "overhead_ms_per_run": (wall - res.loop_s) / n * 1e3,
            "cpu_s": c1 - c0, "cpu_ms_per_run": (c1 - c0) / n * 1e3,
            "user_ms_per_run": (u1 - u0) / n * 1e3, "sys_ms_per_run": (s1 - s0) / n * 1e3,
            "load_before": load0, "load_after": os.getloadavg()[0],
            "executor": res.executor}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--keep", choices=("tables", "summary"), default="tables",
                    help="what each run keeps (ccbench sweep --keep; default tables)")
    a = ap.parse_args()
    configs = ["in-process", "pool-1", "pool-2"] + ([] if a.skip_dask else ["dask-2"])
    work = Path(tempfile.mkdtemp(prefix="ccbench-campaign-bench-"))
    camp = work / "campaign.yaml"
    camp.write_text(CAMPAIGN % a.runs)
    rows = []
    try:
        for rnd in range(a.rounds):
            order = configs if rnd % 2 == 0 else configs[::-1]
            for name in order:
                r = one(name, camp, work, a.runs, a.keep, rnd)
                r["round"] = rnd
                rows.append(r)
                print(f"round {rnd} {name:<10} {r['wall_s']:6.2f} s  {r['runs_per_s']:6.1f} runs/s"
                      f" (steady {r['steady_runs_per_s']:6.1f}, first run after "
                      f"{r['startup_s']:.2f} s)  overhead {r['overhead_ms_per_run']:5.1f} ms/run  cpu "
                      f"{r['cpu_ms_per_run']:5.1f} ms/run (user {r['user_ms_per_run']:.1f}, sys "
                      f"{r['sys_ms_per_run']:.1f})  load {r['load_before']:.2f}"
                      f"->{r['load_after']:.2f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    best = {c: min((r for r in rows if r["config"] == c), key=lambda r: r["wall_s"])
            for c in configs}
    ip = best["in-process"]
    print()
    print(f"per-run overhead beyond the loop (in-process, best of {a.rounds}): "
          f"{ip['overhead_ms_per_run']:.1f} ms wall, {ip['cpu_ms_per_run']:.1f} ms CPU "
          f"(user {ip['user_ms_per_run']:.1f}, sys {ip['sys_ms_per_run']:.1f}; loop "
          f"{ip['loop_s'] / a.runs * 1e3:.2f} ms/run)")
    def ratio(a, b, key):
        return best[a][key] / best[b][key]

    r21, s21 = ratio("pool-2", "pool-1", "runs_per_s"), ratio("pool-2", "pool-1",
                                                               "steady_runs_per_s")
    print(f"pool 2 workers / 1 worker throughput: {r21:.2f}x whole campaign, {s21:.2f}x steady")
    summary = {"keep": a.keep, "overhead_ms_per_run": ip["overhead_ms_per_run"],
               "overhead_cpu_ms_per_run": ip["cpu_ms_per_run"], "pool2_over_pool1": r21,
               "pool2_over_pool1_steady": s21}
    if "dask-2" in best:
        rd, sd = ratio("dask-2", "pool-2", "runs_per_s"), ratio("dask-2", "pool-2",
                                                               "steady_runs_per_s")
        print(f"dask LocalCluster 2 workers / pool 2 workers throughput: {rd:.2f}x whole "
              f"campaign, {sd:.2f}x steady")
        summary["dask2_over_pool2"] = rd
        summary["dask2_over_pool2_steady"] = sd
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    out = BENCHES / "out"
    out.mkdir(exist_ok=True)
    (out / "campaign.json").write_text(json.dumps({
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit, "cpus": os.cpu_count(), "python": platform.python_version(),
        "command": " ".join([Path(sys.executable).name] + sys.argv), "summary": summary,
        "rows": rows}, indent=2) + "\n")
    print(f"wrote {out / 'campaign.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
