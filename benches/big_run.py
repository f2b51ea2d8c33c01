"""The big run of issue 31: 1000 CUBIC flows × 10 Gbit/s × 60 s with packet records on
(`benches/scenarios/big.yaml`), run as `ccbench run FILE --no-plots --quiet` in a child
process, its CPU time split by stage and given per simulated second (docs/benchmarks.md,
"Big run"):

* **loop**: the CPU time of the thread that runs the simulator core's `run_sim`, less the
  time that thread spends in the Python callback taking the records it hands over
  (`Spill.sink`);
* **records**: the rest of the process's CPU time while the simulation runs (that callback,
  the threads writing the streamed Parquet files, decoding the rows left at the end) and
  writing the results directory (`write_results`: the other tables, metadata);
* **summary**: reading the results back and the summary table `ccbench run` prints
  (`load`, `summary_text`);
* **other**: the rest of the process (interpreter and imports, resolving the file, budget).

Each is CPU time (user + system) read with `time.process_time` (every thread: polars writes
with a thread pool) or `time.thread_time` in the child; the total is the child's own rusage,
as is the peak RSS. The output size is the results folder's bytes.

    .venv/bin/python benches/big_run.py                     # the full 60 s
    .venv/bin/python benches/big_run.py --duration 5        # a quick check
    .venv/bin/python benches/big_run.py --duration 5 --rounds 3 \\
        --tree before=/tmp/base/python --tree after=python   # interleaved, best of 3

`--tree LABEL=DIR` puts DIR (a checkout's `python/` folder) first on the child's path, so two
versions of the Python side can be compared with the same core; `--keep DIR` keeps the
results folders (one per label) to compare their Parquet files.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "benches" / "scenarios" / "big.yaml"
STAGES = ("loop", "records", "summary", "other")


def _timed(owner, name: str, acc: dict, key: str) -> None:
    """Replace ``owner.name`` by a wrapper that adds its CPU time to ``acc[key]``: the
    process's (every thread) and, as ``key + "_thread"``, the calling thread's."""
    fn = getattr(owner, name)

    def wrapper(*a, **kw):
        t0, t1 = time.process_time(), time.thread_time()
        try:
            return fn(*a, **kw)
        finally:
            acc[key] = acc.get(key, 0.0) + time.process_time() - t0
            acc[key + "_thread"] = acc.get(key + "_thread", 0.0) + time.thread_time() - t1

    wrapper.__text_signature__ = getattr(fn, "__text_signature__", None)  # sim._core_spills
    wrapper.__wrapped__ = fn
    setattr(owner, name, wrapper)


def child(argv: list[str], report: str) -> int:
    """Run the CLI in this process with the stages timed; write them as JSON to `report`."""
    import resource
    acc: dict[str, float] = {}
    from ccbench import _core, api, cli
    from ccbench.backends import sim
    from ccbench.results import spill
    _timed(_core, "run_sim", acc, "run_sim")
    _timed(spill.Spill, "sink", acc, "sink")
    _timed(sim, "simulate", acc, "simulate")
    _timed(api, "write_results", acc, "write")
    _timed(api, "load", acc, "load")
    _timed(api, "summary_text", acc, "summary_text")
    import contextlib
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        rc = cli.main(argv)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    total = ru.ru_utime + ru.ru_stime
    g = acc.get
    # the loop is the core's thread (the caller's) outside the callback; what other threads
    # did meanwhile (polars writing the streamed Parquet files) is records writing
    loop = g("run_sim_thread", 0) - g("sink_thread", 0)
    stages = {"loop": loop, "records": g("simulate", 0) - loop + g("write", 0),
              "summary": g("load", 0) + g("summary_text", 0)}
    stages["other"] = total - sum(stages.values())
    Path(report).write_text(json.dumps({"rc": rc, "cpu_s": total, "stages": stages, "raw": acc,
                                        "peak_rss_mib": ru.ru_maxrss / 1024}))
    return rc


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(tree: str | None, scenario: Path, out: Path) -> dict:
    """One child run of `scenario` into `out`; its stages, size and times."""
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(tree).resolve()), str(ROOT / "benches")]
                                            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    with tempfile.NamedTemporaryFile(suffix=".json") as rep:
        argv = ["run", str(scenario), "-o", str(out), "--no-plots", "--quiet"]
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child",
                                 rep.name, "--", *argv], env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            raise SystemExit(f"ccbench run {scenario} failed (status {status})")
        r = json.loads(Path(rep.name).read_text())
    meta = json.loads((out / "metadata.json").read_text())
    r.update(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime, out_bytes=_du(out),
             packet_rows=meta["tables"].get("packets", {}).get("rows", 0),
             loop_wall_s=meta["wall_time_s"], events=meta["sim"]["events"],
             peak_rss_mib=usage.ru_maxrss / 1024)
    r["stages"]["other"] = r["cpu_s"] - sum(v for k, v in r["stages"].items() if k != "other")
    return r


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        return child(sys.argv[sys.argv.index("--") + 1:], sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, help="seconds simulated (default: the file's 60)")
    ap.add_argument("--rounds", type=int, default=1, help="runs per tree, interleaved; best kept")
    ap.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR",
                    help="a checkout's python/ folder to run (repeat to compare; default: "
                         "the installed ccbench)")
    ap.add_argument("--keep", metavar="DIR", help="keep the results folders under DIR/LABEL")
    ap.add_argument("--json", metavar="FILE", help="also write every run's figures here")
    a = ap.parse_args()
    trees = dict(t.split("=", 1) for t in a.tree) or {"installed": None}
    doc = yaml.safe_load(SCENARIO.read_text())
    if a.duration:
        doc["duration"] = a.duration
    dur = float(doc["duration"])
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(dir=a.keep) as d:
        scen = Path(d) / "big.yaml"
        scen.write_text(yaml.safe_dump(doc))
        for r in range(a.rounds):
            order = list(trees.items())[::(-1 if r % 2 else 1)]
            for label, tree in order:
                out = (Path(a.keep) / label) if a.keep else Path(d) / label
                got = measure(tree, scen, out)
                got.update(label=label, round=r)
                runs.append(got)
                print(f"round {r} {label}: {got['cpu_s']:.1f} CPU s, "
                      + ", ".join(f"{k} {v:.1f}" for k, v in got["stages"].items()), flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(table(runs, dur))
    if a.json:
        Path(a.json).write_text(json.dumps({"duration_s": dur, "runs": runs}, indent=1))
    return 0


def table(runs: list[dict], dur: float) -> str:
    """Markdown, best (least CPU) run per label: CPU s per simulated second by stage."""
    best: dict[str, dict] = {}
    for r in runs:
        if r["label"] not in best or r["cpu_s"] < best[r["label"]]["cpu_s"]:
            best[r["label"]] = r
    lines = [f"simulated {dur:g} s; CPU s per simulated second",
             "| tree | total | loop | records | summary | other | wall s | peak RSS MiB | "
             "output MB | packet rows | events |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, r in best.items():
        st = r["stages"]
        lines.append(f"| {label} | {r['cpu_s'] / dur:.3f} | "
                     + " | ".join(f"{st[k] / dur:.3f}" for k in STAGES)
                     + f" | {r['wall_s']:.1f} | {r['peak_rss_mib']:.0f} | {r['out_bytes'] / 1e6:.1f} | "
                     f"{r['packet_rows']:,} | {r['events']:,} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
