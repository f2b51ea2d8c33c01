#!/usr/bin/env python3
"""Accuracy benchmark of the emulation backend (not a test; needs root and `make build`).

One kernel flow (cubic, then bbr) alone on a dumbbell whose central link has 10 ms one-way
delay and a 1-BDP droptail queue, at 100 Mbit/s and at 1 Gbit/s. For each run it prints the
utilisation of the configured rate (bottleneck bytes on the wire after the first 2 s), the
engine's release error (p50/p99/p99.9/max), the engine's CPU share of its core, the CPU others
used on the engine's core, host steal time, TUN drops and the accuracy verdict.

    sudo .venv/bin/python benches/emu_accuracy.py [--duration 10] [--rates 100,1000]
         [--schemes cubic,bbr] [--flows 1,16] [--buffers 64MiB] [--repeat 3]
         [--json out.json]

`--flows N` runs N flows of the scheme together (started at 0 s) instead of one; `--buffers
64MiB` raises the TCP buffers' max (wmem and rmem) so that one flow can fill 2 Gbit/s;
`--repeat K` runs each combination K times.
Targets: ≥ 95 % utilisation and p99 ≤ 100 µs at 1 Gbit/s on a 2-core machine; the same at
2 Gbit/s with one flow and at 1 Gbit/s with 16 flows.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import polars as pl  # noqa: E402

import ccbench  # noqa: E402
from ccbench import config  # noqa: E402
from ccbench.backends.emu.common import cpu_times, cpu_usage  # noqa: E402


def experiment(scheme: str, rate_mbit: int, duration: float, flows: int = 1,
               buffers: str | None = None) -> dict:
    exp = {
        "duration": duration, "seed": 1,
        "central": {"rate": f"{rate_mbit}Mbit", "delay": "10ms", "queue": "1bdp"},
        "flows": [{"scheme": scheme, "flows": flows, "direction": "->"}],
        "record_packets": True,
    }
    if buffers:
        exp["tcp"] = {"wmem": [4096, 16384, buffers], "rmem": [4096, 131072, buffers]}
    return config.resolve(exp, source=f"emu_accuracy {flows} x {scheme} {rate_mbit} Mbit/s")


def cpu_busy(seconds: float = 1.0) -> float:
    """The machine's CPU busy share over the next `seconds` (/proc/stat): how quiet it is
    just before a run (the load average lags: it still counts the previous run's processes)."""
    a = cpu_times()
    time.sleep(seconds)
    return cpu_usage(a, cpu_times())["cpu"]["busy"]


def measure(scheme: str, rate_mbit: int, duration: float, out: Path, warmup: float = 2.0,
            flows: int = 1, buffers: str | None = None) -> dict:
    exp = experiment(scheme, rate_mbit, duration, flows, buffers)
    load_start = os.getloadavg()[0]
    busy_before = cpu_busy()
    res = ccbench.run(exp, out, backend="emu")
    load_end = os.getloadavg()[0]
    em = res.meta["emu"]
    fwd = exp["flows"][0]["path"][1]
    q = res.queues.filter(pl.col("link") == fwd).sort("time_ns")
    t0, t1 = int(warmup * 1e9), int(duration * 1e9)
    tx = dict(zip(q["time_ns"].to_list(), q["tx_bytes"].to_list()))
    a, b = max(t for t in tx if t <= t0), max(t for t in tx if t <= t1)
    util = (tx[b] - tx[a]) * 8 / (rate_mbit * 1e6 * (b - a) / 1e9)
    re_ = em["release_error_ns"]
    return {
        "scheme": scheme, "flows": flows, "rate_mbit": rate_mbit, "duration_s": duration,
        "buffers": buffers,
        "utilisation": round(util, 4),
        "release_p50_us": re_["p50"] / 1e3, "release_p99_us": re_["p99"] / 1e3,
        "release_p999_us": re_["p999"] / 1e3, "release_max_us": re_["max"] / 1e3,
        "released_pkts": re_["count"],
        "engine_cpu": round(em["engine_cpu_frac"], 3),
        "engine_busy": round(em.get("engine_busy_frac") or 0, 3),
        "foreign_cpu_on_engine_core": em.get("foreign_cpu_frac_on_engine_cpu"),
        "steal": em.get("steal_frac"),
        "tun_drops": em["tun_drops"],
        "retrans_pkts": int(res.flowstats["retrans_pkts"].sum()),
        "accurate": em["accurate"], "reasons": em["inaccurate_reasons"],
        "load_start": round(load_start, 2), "load_end": round(load_end, 2),
        "cpu_busy_before": round(busy_before, 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--rates", default="100,1000", help="Mbit/s, comma-separated")
    ap.add_argument("--schemes", default="cubic,bbr")
    ap.add_argument("--flows", default="1", help="flow counts, comma-separated")
    ap.add_argument("--buffers", help="the TCP buffers' max (wmem and rmem), e.g. 64MiB; "
                    "default Linux's (wmem max 4 MiB: one CUBIC flow then fills ~60 %% of 2 Gbit/s "
                    "at 20 ms)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each combination")
    ap.add_argument("--offloads", default="on",
                    help="the TUNs' offloads, comma-separated on/off (each run sets "
                    "CCBENCH_EMU_OFFLOADS; on,off interleaves the two packet paths)")
    ap.add_argument("--json", help="also write the rows to this file")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ccbench-emu-bench-") as tmp:
        for rate, n, scheme, k, off in itertools.product(
                [int(r) for r in a.rates.split(",")], [int(f) for f in a.flows.split(",")],
                a.schemes.split(","), range(a.repeat), a.offloads.split(",")):
            os.environ["CCBENCH_EMU_OFFLOADS"] = off
            r = measure(scheme, rate, a.duration, Path(tmp) / f"{scheme}-{rate}-{n}-{k}-{off}",
                        flows=n, buffers=a.buffers)
            r["offloads"] = off
            rows.append(r)
            print(f"{n:>2} x {scheme:<6} {rate:>5} Mbit/s  offloads {off:<3}  util {r['utilisation'] * 100:6.2f} %  "
                  f"release p50 {r['release_p50_us']:6.1f} µs  p99 {r['release_p99_us']:7.1f} µs  "
                  f"p99.9 {r['release_p999_us']:7.1f} µs  max {r['release_max_us']:8.1f} µs  "
                  f"engine CPU {r['engine_cpu'] * 100:5.1f} % (busy {r['engine_busy'] * 100:5.1f} %)  foreign {100 * (r['foreign_cpu_on_engine_core'] or 0):5.1f} %  "
                  f"steal {100 * (r['steal'] or 0):4.1f} %  tun drops {r['tun_drops']}  "
                  f"load {r['load_start']:.2f} -> {r['load_end']:.2f} (CPU busy before "
                  f"{100 * r['cpu_busy_before']:.0f} %)  "
                  f"{'accurate' if r['accurate'] else 'INACCURATE: ' + '; '.join(r['reasons'])}",
                  flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
