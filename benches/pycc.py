"""Cost of congestion control written in Python (docs/python-schemes.md, docs/gym.md).

One invocation, side by side, on one flow over a 100 Mbit/s, 10 ms dumbbell (1 Gbit/s, 1 ms
side links, 1000-packet queues), 30 simulated seconds:

* per-ACK: the Python Reno port (ccbench.schemes.reno) against the built-in Rust Reno
  (target: within 10x);
* periodic: a Python rate controller called every 10 ms (ccbench.schemes.aimd_rate, held at
  95 Mbit/s so that it carries about the traffic Reno does) against the built-in Reno
  (target: within 2x);
* gym (with --gym): environment steps per second for a 10 ms monitor interval.

Each variant runs --repeat times, interleaved; the best wall time and the best CPU time
(process time of the simulating thread; less sensitive to a loaded machine) are reported.

    .venv/bin/python benches/pycc.py [--repeat 3] [--duration 30] [--packets] [--gym]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from ccbench import config  # noqa: E402
from ccbench.backends.sim import simulate  # noqa: E402


def experiment(scheme, duration: float, packets: bool) -> dict:
    return config.resolve({
        "duration": duration, "seed": 1, "packets": packets,
        "central": {"rate": "100Mbit", "delay": "10ms", "queue": 1000},
        "flows": [{"scheme": scheme, "flows": 1, "left-rate": "1Gbit", "left-delay": "1ms",
                   "right-rate": "1Gbit", "right-delay": "1ms", "left-queues": 1000,
                   "right-queues": 1000}]})


VARIANTS = {
    "rust-reno": "reno",
    "python-reno": {"python": "ccbench.schemes.reno:Reno"},
    "python-periodic-10ms": {"python": "ccbench.schemes.aimd_rate:AimdRate",
                             "params": {"rate": 95e6, "step": 0.0}},
}


def measure(exp: dict) -> tuple[float, float, int]:
    c0 = time.process_time()
    t0 = time.perf_counter()
    tables, stats, wall = simulate(exp)
    cpu = time.process_time() - c0
    return wall, cpu, int(tables["flowstats"]["delivered_pkts"].sum())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--packets", action="store_true", help="record the per-packet table too")
    ap.add_argument("--gym", action="store_true", help="also measure gym steps/s")
    ap.add_argument("--json", type=Path, help="write the numbers here")
    a = ap.parse_args(argv)
    exps = {k: experiment(v, a.duration, a.packets) for k, v in VARIANTS.items()}
    best: dict[str, list[float]] = {k: [float("inf"), float("inf"), 0] for k in exps}
    load0 = os.getloadavg()[0]
    for _ in range(a.repeat):
        for k, e in exps.items():
            wall, cpu, pkts = measure(e)
            b = best[k]
            best[k] = [min(b[0], wall), min(b[1], cpu), pkts]
    base = best["rust-reno"]
    rows = []
    for k, (wall, cpu, pkts) in best.items():
        rows.append({"variant": k, "wall_s": wall, "cpu_s": cpu, "delivered_pkts": pkts,
                     "wall_ratio": wall / base[0], "cpu_ratio": cpu / base[1]})
    out = {"duration_s": a.duration, "packets": a.packets, "repeat": a.repeat,
           "load_before": load0, "load_after": os.getloadavg()[0], "rows": rows}
    if a.gym:
        from ccbench.gym.bench import steps_per_second
        out["gym"] = steps_per_second()
    print(f"one flow, 100 Mbit/s, {a.duration:g} s simulated, packets table "
          f"{'on' if a.packets else 'off'}, best of {a.repeat}; load {load0:.1f} -> "
          f"{out['load_after']:.1f}")
    print("| variant | wall s | CPU s | wall / rust-reno | CPU / rust-reno | delivered pkts |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['variant']} | {r['wall_s']:.3f} | {r['cpu_s']:.3f} | {r['wall_ratio']:.2f}x"
              f" | {r['cpu_ratio']:.2f}x | {r['delivered_pkts']} |")
    if a.gym:
        g = out["gym"]
        print(f"gym: {g['steps_per_s']:.0f} steps/s ({g['steps']} steps of {g['interval_ms']} ms, "
              f"{g['rate']}, {g['wall_s']:.2f} s wall, {g['cpu_s']:.2f} s CPU"
              f" -> {g['steps_per_cpu_s']:.0f} steps per CPU s)")
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
