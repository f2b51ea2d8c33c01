#!/usr/bin/env python3
"""Simulator vs kernel agreement study (not a test; needs root and `make build`).

Every combination of scheme (reno, cubic, bbr), number of flows (1, 2, started together),
bottleneck queue (0.5, 1, 4 BDP droptail) and central one-way delay (10, 40 ms) on a dumbbell
of RATE is run on the simulator and on the emulator (`--backend emu`: real kernel TCP over the
same netmodel links). For each it records, per flow and for the total: throughput, mean and p95
one-way delay, loss, and Jain's index over flows (ccbench.compare, whole run), with the
relative difference kernel vs simulator, plus the emulator's accuracy verdict (release error,
steal, engine busy share).

    sudo .venv/bin/python benches/agreement.py [--duration 10] [--rate 50] [--out DIR]
         [--schemes reno,cubic,bbr] [--flows 1,2] [--queues 0.5,1,4] [--delays 10,40]
         [--report-only]

Writes DIR/<case>/{sim,emu} (results), DIR/agreement.json and DIR/agreement.md (the table;
differences above 5 % in throughput or 10 % in delay are marked with *).
The results of the study and the explanation of every marked difference are in
docs/emulation.md, "Agreement with the simulator".
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import polars as pl  # noqa: E402

import ccbench  # noqa: E402
from ccbench import config  # noqa: E402

TPUT_TOL = 5.0    # %: largest throughput difference counted as agreement
DELAY_TOL = 10.0  # %: the same for one-way delay


def experiment(scheme: str, flows: int, queue_bdp: float, delay_ms: int, rate_mbit: int,
               duration: float) -> dict:
    return config.resolve({
        "duration": duration, "seed": 1,
        "central": {"rate": f"{rate_mbit}Mbit", "delay": f"{delay_ms}ms",
                    "queue": f"{queue_bdp:g}bdp"},
        "flows": [{"scheme": scheme, "flows": flows, "direction": "->"}],
        "record_packets": True,
    }, source=f"agreement {scheme} x{flows} q={queue_bdp:g}bdp d={delay_ms}ms")


def case_name(scheme, flows, q, d) -> str:
    return f"{scheme}-f{flows}-q{q:g}-d{d}"


def run_case(scheme, flows, q, d, rate, duration, out: Path) -> dict:
    exp = experiment(scheme, flows, q, d, rate, duration)
    t = time.monotonic()
    emu = ccbench.run(exp, out / "emu", backend="emu")
    sim = ccbench.run(exp, out / "sim", backend="sim")
    c = ccbench.compare(sim, emu)
    rows = c.table.to_dicts()
    em = emu.meta["emu"]
    re_ = em["release_error_ns"]
    return {
        "case": case_name(scheme, flows, q, d), "scheme": scheme, "flows": flows,
        "queue_bdp": q, "delay_ms": d, "rate_mbit": rate, "duration_s": duration,
        "rows": rows, "jain_sim": c.jain[0], "jain_emu": c.jain[1],
        "emu_accurate": em["accurate"], "emu_reasons": em["inaccurate_reasons"],
        "release_p50_us": re_["p50"] / 1e3, "release_p99_us": re_["p99"] / 1e3,
        "release_p999_us": re_["p999"] / 1e3, "release_max_us": re_["max"] / 1e3,
        "engine_busy_frac": em.get("engine_busy_frac"), "steal_frac": em.get("steal_frac"),
        "sim_retrans": sim.flowstats["retrans_pkts"].to_list(),
        "emu_retrans": emu.flowstats["retrans_pkts"].to_list(),
        "wall_s": round(time.monotonic() - t, 1),
    }


def _f(v, spec=".1f"):
    return "–" if v is None else format(v, spec)


def report(results: list[dict]) -> str:
    lines = [
        "| case | curve | tput sim | tput kernel | Δ% | mean OWD sim | kernel | Δ% | p95 OWD sim "
        "| kernel | Δ% | loss % sim | kernel | Jain sim | kernel | emu p99/max µs |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for row in r["rows"]:
            if r["flows"] == 1 and row["curve"].startswith("Total"):
                continue

            def d(m, tol):
                v = row.get(f"{m}_diff_pct")
                return "–" if v is None else f"{v:+.1f}" + (" *" if abs(v) > tol else "")
            lines.append(
                f"| {r['case']} | {row['curve']} | {_f(row['avg_tput_mbps_a'])} | "
                f"{_f(row['avg_tput_mbps_b'])} | {d('avg_tput_mbps', TPUT_TOL)} | "
                f"{_f(row['mean_delay_ms_a'])} | {_f(row['mean_delay_ms_b'])} | "
                f"{d('mean_delay_ms', DELAY_TOL)} | {_f(row['p95_delay_ms_a'])} | "
                f"{_f(row['p95_delay_ms_b'])} | {d('p95_delay_ms', DELAY_TOL)} | "
                f"{_f(row['loss_pct_a'], '.2f')} | {_f(row['loss_pct_b'], '.2f')} | "
                f"{_f(r['jain_sim'], '.3f') if r['flows'] > 1 else ''} | "
                f"{_f(r['jain_emu'], '.3f') if r['flows'] > 1 else ''} | "
                f"{r['release_p99_us']:.0f}/{r['release_max_us']:.0f}"
                + ("" if r["emu_accurate"] else " (inaccurate)") + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--rate", type=int, default=50, help="bottleneck rate, Mbit/s")
    ap.add_argument("--schemes", default="reno,cubic,bbr")
    ap.add_argument("--flows", default="1,2")
    ap.add_argument("--queues", default="0.5,1,4", help="droptail queue sizes in BDP")
    ap.add_argument("--delays", default="10,40", help="central one-way delays, ms")
    ap.add_argument("--out", default="benches/out/agreement")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite agreement.md from agreement.json without running")
    a = ap.parse_args()
    out = Path(a.out)
    js = out / "agreement.json"
    if a.report_only:
        results = json.loads(js.read_text())
    else:
        out.mkdir(parents=True, exist_ok=True)
        results = []
        cases = [(s, int(f), float(q), int(d)) for s in a.schemes.split(",")
                 for f in a.flows.split(",") for q in a.queues.split(",")
                 for d in a.delays.split(",")]
        for i, (s, f, q, d) in enumerate(cases):
            name = case_name(s, f, q, d)
            print(f"[{i + 1}/{len(cases)}] {name}", file=sys.stderr, flush=True)
            results.append(run_case(s, f, q, d, a.rate, a.duration, out / name))
            js.write_text(json.dumps(results, indent=1, default=str))
    md = report(results)
    (out / "agreement.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
