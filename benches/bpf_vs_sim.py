#!/usr/bin/env python3
"""BPF schemes on the kernel vs the simulator's built-in versions (not a test; needs root,
`make build` and `make bpf`).

For each shipped BPF scheme (vegas, dctcp, scalable, highspeed, veno, bic, htcp, westwood,
illinois, hybla, lp, yeah, cdg) and scenario, the same experiment runs on the kernel backend with
``scheme: {bpf: NAME}`` (the BPF program registered through struct_ops) and on the simulator
with ``scheme: NAME`` (crates/sim/src/cc), ``--repeats`` times each (seeds 1..N; the simulator's
host noise varies with the seed, the kernel varies by itself). Prints, per case and backend,
the mean over repeats (min–max) of total throughput, mean and p95 one-way delay, loss and
Jain's index (ccbench.compare's whole-run metrics). A case may add flows of another scheme
(the same on both backends: ``lp-vs-reno``'s Reno flow). The simulator's CDG is FreeBSD's;
it runs with the settings closest to Linux's tcp_cdg.c (``SIM_SCHEME``).

    sudo .venv/bin/python benches/bpf_vs_sim.py [--duration 10] [--repeats 3] [--out DIR]

Results are in docs/bpf-schemes.md ("Kernel vs simulator").
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import ccbench  # noqa: E402

CASES = {
    # name: (scheme, central, flows[, other flows])
    "vegas-1f-20M-20ms-q1bdp": ("vegas", {"rate": "20Mbit", "delay": "10ms", "queue": "1bdp"}, 1),
    "vegas-2f-20M-40ms-q2bdp": ("vegas", {"rate": "20Mbit", "delay": "20ms", "queue": "2bdp"}, 2),
    "dctcp-2f-50M-10ms-k20": ("dctcp", {"rate": "50Mbit", "delay": "5ms",
                                        "queue": {"limit": 200, "ecn-threshold": 20}}, 2),
    "dctcp-4f-100M-10ms-k40": ("dctcp", {"rate": "100Mbit", "delay": "5ms",
                                         "queue": {"limit": 400, "ecn-threshold": 40}}, 4),
    "scalable-1f-20M-20ms-loss0.5": ("scalable", {"rate": "20Mbit", "delay": "10ms", "queue": "1bdp",
                                                  "loss": 0.005}, 1),
    "highspeed-1f-100M-20ms-loss0.02": ("highspeed", {"rate": "100Mbit", "delay": "10ms", "queue": "1bdp",
                                                      "loss": 0.0002}, 1),
    "hybla-1f-20M-20ms-q1bdp": ("hybla", {"rate": "20Mbit", "delay": "10ms", "queue": "1bdp"}, 1),
    "hybla-1f-10M-200ms-loss1": ("hybla", {"rate": "10Mbit", "delay": "100ms", "queue": "1bdp", "loss": 0.01}, 1),
}


# The study algorithms' standard three cases: one and two flows on a clean 20 Mbit/s, 20 ms,
# 1-BDP path, and one flow with 1 % random loss.
_CLEAN = {"rate": "20Mbit", "delay": "10ms", "queue": "1bdp"}
for _s in ("veno", "bic", "htcp", "westwood", "illinois", "lp", "yeah", "cdg"):
    CASES[f"{_s}-1f-20M-20ms-q1bdp"] = (_s, _CLEAN, 1)
    CASES[f"{_s}-2f-20M-20ms-q1bdp"] = (_s, _CLEAN, 2)
    CASES[f"{_s}-1f-20M-20ms-loss1"] = (_s, {**_CLEAN, "loss": 0.01}, 1)
# LP next to a Reno flow (it should yield); YeAH on a queue deep enough for its decongestion
CASES["lp-vs-reno-20M-20ms-q1bdp"] = ("lp", _CLEAN, 1, [{"scheme": "reno", "flows": 1}])
CASES["yeah-1f-20M-20ms-q300"] = ("yeah", {**_CLEAN, "queue": 300}, 1)
CASES["cdg-1f-20M-20ms-q300"] = ("cdg", {**_CLEAN, "queue": 300}, 1)

# The simulator's scheme where it is not just the name: its CDG models FreeBSD's cc_cdg.c; these
# parameters are Linux's choices (back-off to 0.7071, no loss tolerance, exact exponential).
SIM_SCHEME = {"cdg": {"name": "cdg", "beta_delay": 70.71, "loss_tolerance": 0, "prob_exact": 1}}


def metrics(res) -> dict:
    c = ccbench.compare(res, res)
    total = [r for r in c.table.to_dicts() if r["curve"].startswith("Total")]
    row = total[0] if total else c.table.to_dicts()[0]
    return {"tput": row["avg_tput_mbps_a"], "mean_owd": row["mean_delay_ms_a"],
            "p95_owd": row["p95_delay_ms_a"], "loss": row["loss_pct_a"], "jain": c.jain[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="benches/out/bpf_vs_sim")
    ap.add_argument("--cases", default=",".join(CASES))
    a = ap.parse_args()
    out = Path(a.out)
    results = {}
    for name in a.cases.split(","):
        scheme, central, n, *other = CASES[name]
        results[name] = {}
        for backend, sch in (("kernel", {"bpf": scheme}), ("sim", SIM_SCHEME.get(scheme, scheme))):
            runs = []
            for seed in range(1, a.repeats + 1):
                exp = {"duration": a.duration, "seed": seed, "central": central,
                       "flows": [{"scheme": sch, "flows": n}] + (other[0] if other else [])}
                res = ccbench.run(exp, out / name / f"{backend}-{seed}",
                                  backend="emu" if backend == "kernel" else "sim")
                runs.append(metrics(res))
            results[name][backend] = runs
            print(name, backend, json.dumps(runs), flush=True)
    (out / "bpf_vs_sim.json").write_text(json.dumps(results, indent=1))
    lines = ["| case | backend | tput Mbit/s | mean OWD ms | p95 OWD ms | loss % | Jain |",
             "|---|---|---|---|---|---|---|"]
    for name, by in results.items():
        for backend, runs in by.items():
            def cell(k, f=".2f"):
                v = [r[k] for r in runs if r[k] is not None]
                if not v:
                    return "–"
                m = sum(v) / len(v)
                return f"{m:{f}} ({min(v):{f}}–{max(v):{f}})"
            lines.append(f"| {name} | {backend} | {cell('tput')} | {cell('mean_owd')} | "
                         f"{cell('p95_owd')} | {cell('loss', '.3f')} | {cell('jain', '.3f')} |")
    text = "\n".join(lines)
    (out / "bpf_vs_sim.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
