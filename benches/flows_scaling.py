"""Cost of the simulator's event loop per bottleneck packet against the number of flows, with
host noise off (`noise: exact`) and on (the default `kernel` model), measured with `ccsim`
(the Rust core without Python: crates/sim/src/bin/ccsim.rs), which reports the loop's own
thread CPU time apart from set-up and building the output tables (docs/benchmarks.md).

N CUBIC flows share a 1 Gbit/s, 10 ms dumbbell (1-BDP queue, default side links) for
`--duration` simulated seconds. Every configuration runs once per round; the rounds
interleave the binaries (`--ccsim` given more than once compares builds side by side) and the
best loop CPU time of each configuration is kept.

    cargo build --release -p ccbench-sim --bin ccsim
    .venv/bin/python benches/flows_scaling.py                       # 1..10000 flows
    .venv/bin/python benches/flows_scaling.py --flows 1,1000 --rounds 5 \\
        --ccsim before=/tmp/base/target/release/ccsim --ccsim after=target/release/ccsim
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))


def experiment(n: int, duration: float, noise: str) -> dict:
    from ccbench import config
    return config.resolve({
        "duration": duration, "seed": 1, "packets": False, "host": {"noise": noise},
        "central": {"rate": "1Gbit", "delay": "10ms", "queue": "1bdp"},
        "flows": [{"scheme": "cubic", "flows": n}]})


def run_ccsim(binary: str, exp_file: Path) -> dict:
    out = subprocess.run([binary, str(exp_file)], check=True, capture_output=True, text=True)
    d = json.loads(out.stdout)
    return {"loop_cpu_s": d["loop_cpu_s"], "wall_s": d["wall_time_s"], "events": d["sim"]["events"],
            "bottleneck_packets": d["sim"]["bottleneck_packets"]}


def measure(binaries: dict[str, str], flows: list[int], modes: list[str], duration: float,
            rounds: int) -> list[dict]:
    """Best loop CPU per (binary, flows, mode) over `rounds` interleaved rounds."""
    best: dict[tuple, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for n in flows:
            for m in modes:
                f = Path(tmp) / f"f{n}-{m}.json"
                f.write_text(json.dumps(experiment(n, duration, m)))
                files[n, m] = f
        for r in range(rounds):
            order = list(binaries.items())
            if r % 2:
                order.reverse()
            for n in flows:
                for m in modes:
                    for label, b in order:
                        got = run_ccsim(b, files[n, m])
                        key = (label, n, m)
                        if key not in best or got["loop_cpu_s"] < best[key]["loop_cpu_s"]:
                            best[key] = got
    rows = []
    for (label, n, m), d in best.items():
        rows.append({"build": label, "flows": n, "noise": m, **d,
                     "us_per_pkt": 1e6 * d["loop_cpu_s"] / max(d["bottleneck_packets"], 1),
                     "events_per_pkt": d["events"] / max(d["bottleneck_packets"], 1)})
    return sorted(rows, key=lambda x: (x["build"], x["noise"], x["flows"]))


def table(rows: list[dict]) -> str:
    """Markdown: per build, mode and flow count; × = µs/pkt against the fewest flows."""
    lines = ["| build | noise | flows | loop CPU s | bottleneck pkts | events/pkt | µs/pkt | × fewest flows | noise/exact |",
             "|---|---|---|---|---|---|---|---|---|"]
    first = {}
    exact = {(r["build"], r["flows"]): r["loop_cpu_s"] for r in rows if r["noise"] == "exact"}
    for r in rows:
        base = first.setdefault((r["build"], r["noise"]), r["us_per_pkt"])
        ex = exact.get((r["build"], r["flows"]))
        ratio = f"{r['loop_cpu_s'] / ex:.2f}" if ex and r["noise"] != "exact" else ""
        lines.append(f"| {r['build']} | {r['noise']} | {r['flows']} | {r['loop_cpu_s']:.3f} | "
                     f"{r['bottleneck_packets']} | {r['events_per_pkt']:.2f} | {r['us_per_pkt']:.3f} | "
                     f"{r['us_per_pkt'] / base:.2f} | {ratio} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", default="1,10,100,1000,10000", help="comma list of flow counts")
    ap.add_argument("--noise", default="exact,kernel", help="comma list of host noise models")
    ap.add_argument("--duration", type=float, default=2.0, help="seconds simulated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ccsim", action="append", metavar="[LABEL=]PATH",
                    help="ccsim binary (repeat to compare builds); default target/release/ccsim")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    a = ap.parse_args(argv)
    binaries = {}
    for spec in a.ccsim or [str(ROOT / "target/release/ccsim")]:
        label, _, path = spec.rpartition("=")
        binaries[label or "ccsim"] = path
    for p in binaries.values():
        if not Path(p).exists():
            raise SystemExit(f"{p} missing: cargo build --release -p ccbench-sim --bin ccsim")
    load0 = os.getloadavg()[0]
    rows = measure(binaries, [int(x) for x in a.flows.split(",")], a.noise.split(","),
                   a.duration, a.rounds)
    load1 = os.getloadavg()[0]
    print(f"1-min load average {load0:.2f} -> {load1:.2f}; best of {a.rounds} rounds")
    print(table(rows))
    if a.json:
        a.json.write_text(json.dumps({"load": [load0, load1], "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
