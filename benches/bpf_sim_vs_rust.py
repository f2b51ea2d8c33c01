"""The shipped BPF schemes on the simulator (``scheme: {bpf: NAME}``, compiled natively) against
the simulator's own Rust algorithm of the same name, on the cases of benches/bpf_vs_sim.py:
whole-run metrics, whether the cwnd traces are identical, the first time they differ, and the
simulation loop's wall time of each (metadata ``wall_time_s``).

    .venv/bin/python benches/bpf_sim_vs_rust.py [--duration 10] [--cases PREFIX ...]

Results are in docs/bpf-schemes.md ("In the simulator").
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl  # noqa: E402

import ccbench  # noqa: E402
from bpf_vs_sim import CASES, SIM_SCHEME, metrics  # noqa: E402


def run(case, scheme, duration: float, out: Path):
    name, central, n, *other = case
    doc = {"duration": duration, "seed": 1, "central": central,
           "flows": [{"scheme": scheme, "flows": n}, *(other[0] if other else [])]}
    return ccbench.run(doc, out, packets=False, budget=False)


def trace_diff(a, b) -> str:
    """'identical', or when and by how much the cwnd traces first differ."""
    fa, fb = a.flows, b.flows
    cols = ["time_ns", "flow", "cwnd", "ssthresh", "inflight", "delivered"]
    j = fa.select(cols).join(fb.select(cols), on=["time_ns", "flow"], suffix="_r")
    d = j.filter((pl.col("cwnd") != pl.col("cwnd_r")) | (pl.col("ssthresh") != pl.col("ssthresh_r")))
    if d.height == 0:
        return "identical"
    t = d["time_ns"][0] / 1e9
    c, r = j["cwnd"].cast(pl.Int64), j["cwnd_r"].cast(pl.Int64)
    rel = (c - r).abs().mean() / r.mean()
    return f"differ from {t:.2f} s (mean |cwnd diff| {100 * rel:.1f} %)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--cases", nargs="*", default=[])
    a = ap.parse_args()
    print("| case | BPF tput | Rust tput | BPF mean OWD | Rust mean OWD | BPF loss % | Rust loss % | cwnd traces |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for key, case in CASES.items():
            if a.cases and not any(key.startswith(p) for p in a.cases):
                continue
            scheme = case[0]
            bpf = run(case, {"bpf": scheme}, a.duration, Path(tmp) / f"{key}-bpf")
            rust = run(case, SIM_SCHEME.get(scheme, scheme), a.duration, Path(tmp) / f"{key}-rust")
            mb, mr = metrics(bpf), metrics(rust)
            print(f"| {key} | {mb['tput']:.2f} | {mr['tput']:.2f} | {mb['mean_owd']:.2f} | "
                  f"{mr['mean_owd']:.2f} | {mb['loss']:.3f} | {mr['loss']:.3f} | {trace_diff(bpf, rust)} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
