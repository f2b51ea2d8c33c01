"""Re-measure the algorithm findings of docs/fidelity.md ("Algorithms against their sources")
with the default host timing noise, several seeds per point, and the CC's internal variables.

    python benches/algo_fidelity.py hldg-e4  [--seeds 5]      # HLDG / CDG against CUBIC (E4/H11)
    python benches/algo_fidelity.py hldg-f1  [--seeds 5]      # five HLDG flows, long RTTs (F1)
    python benches/algo_fidelity.py hldg-2ms [--seeds 5]      # one HLDG flow, 10 Mbit/s, 2 ms (H5)
    python benches/algo_fidelity.py rtt4 --scheme vegas|bbr [--duration 60] [--seeds 5]
    sudo python benches/algo_fidelity.py rtt4 --scheme bbr --backend emu --seeds 2
    python benches/algo_fidelity.py bbr-shallow [--backend emu] [--seeds 5]

Each prints one JSON line per run (the point, the seed and the measured values) and a summary;
`--out FILE` appends the lines to FILE. Setups follow examples/studies/cdg-hldg/ (FreeBSD-like
endpoint: 1-ms RTT ticks, 100-ms delayed ACKs) and examples/studies/coco-beholder/ (rtt4).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

FREEBSD_TCP = {"rtt-granularity": "1ms", "delayed-ack-timeout": "100ms", "init-cwnd": 10, "rwnd": "4MiB",
               "push-ack": False}  # FreeBSD does not ACK a PSH segment early, nor did Linux < 6.6
LINUX_TCP = {"rtt-granularity": "0ms", "delayed-ack-timeout": "40ms"}


def scheme(cc: str):
    """A scheme name, or a scheme with parameters as JSON ('{"name": "hldg", "lambda": 0.9}')."""
    return json.loads(cc) if cc.startswith("{") else cc


def run(doc: dict, seed: int, backend: str = "sim"):
    import ccbench
    from ccbench import config
    exp = config.resolve({**doc, "seed": seed})
    out = Path(tempfile.mkdtemp(prefix="algo-fid-"))
    return ccbench.run(exp, out, backend=backend)


def tput(res, t0: float, t1: float) -> dict[int, float]:
    """Per-flow delivered IP bit/s over [t0, t1)."""
    import polars as pl
    b = res.experiment["sample_interval_ns"] / 1e9
    iv = res.intervals.filter((pl.col("bin") >= round(t0 / b)) & (pl.col("bin") < round(t1 / b)))
    per = iv.group_by("flow").agg(pl.col("delivered_bytes").sum()).sort("flow")
    return {f: v * 8 / (t1 - t0) for f, v in zip(per["flow"], per["delivered_bytes"])}


def flow_rows(res, f: int, t0: float, t1: float):
    import polars as pl
    return res.flows.filter((pl.col("flow") == f) & (pl.col("time_ns") >= int(t0 * 1e9))
                            & (pl.col("time_ns") < int(t1 * 1e9)))


def jain(xs) -> float:
    xs = list(xs)
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else float("nan")


def modes(rows) -> dict:
    m = rows["cc_mode"].drop_nulls().to_list()
    n = max(len(m), 1)
    switches = sum(1 for a, b in zip(m, m[1:]) if a != b)
    return {"delay": m.count(0) / n, "loss": m.count(1) / n, "probe": m.count(2) / n,
            "switches": switches}


def hldg_e4(args) -> list[dict]:
    out = []
    for cc in args.cc:
        for rate in args.rates:
            for rtt in args.rtts:
                for bdp in args.bdps:
                    q = max(2, round(bdp * rate * 1e6 * rtt / 1000 / 8 / 1500))
                    doc = {"duration": 150, "packets": False, "sample-interval": "100ms",
                           "tcp": FREEBSD_TCP,
                           "central": {"rate": f"{rate}Mbit", "delay": f"{rtt / 2}ms", "queue": q},
                           "flows": [{"scheme": scheme(cc), "start": 0},
                                     {"scheme": "cubic", "start": 10, "stop": 110, "tcp": LINUX_TCP}]}
                    for seed in range(1, args.seeds + 1):
                        res = run(doc, seed)
                        tp = tput(res, 20, 110)
                        r = {"cc": cc, "rate": rate, "rtt": rtt, "bdp": bdp, "queue_ms": q * 12000 / (rate * 1e3),
                             "seed": seed, "share": tp[0] / (tp[0] + tp[1])}
                        if cc == "hldg":
                            r.update(modes(flow_rows(res, 0, 20, 110)))
                        out.append(r)
                        emit(args, r)
    return out


def hldg_f1(args) -> list[dict]:
    out = []
    for rtt in args.rtts:
        doc = {"duration": 340, "packets": False, "sample-interval": "100ms", "tcp": FREEBSD_TCP,
               "central": {"rate": "12Mbit", "delay": f"{rtt / 2}ms", "queue": 1000},
               "flows": [{"scheme": args.scheme_spec or "hldg", "start": 10 * i, "stop": 300 + 10 * i}
                         for i in range(5)]}
        for seed in range(1, args.seeds + 1):
            res = run(doc, seed)
            tp = tput(res, 50, 300)
            r = {"rtt": rtt, "seed": seed, "jain": jain(tp.values()),
                 "mbps": [round(tp[f] / 1e6, 2) for f in sorted(tp)], "util": sum(tp.values()) / 12e6}
            out.append(r)
            emit(args, r)
    return out


def hldg_2ms(args) -> list[dict]:
    out = []
    for cc in args.cc:
        doc = {"duration": 120, "packets": False, "sample-interval": "100ms", "tcp": FREEBSD_TCP,
               "central": {"rate": "10Mbit", "delay": "1ms", "queue": 1000},
               "flows": [{"scheme": scheme(cc)}]}
        for seed in range(1, args.seeds + 1):
            res = run(doc, seed)
            tp = tput(res, 36, 116)
            rows = flow_rows(res, 0, 36, 116)
            r = {"cc": cc, "seed": seed, "util": tp[0] / 10e6,
                 "cwnd_mean": rows["cwnd"].mean()}
            if "cc_rtt_ebase_ms" in rows.columns:
                r["rtt_ebase_ms"] = rows["cc_rtt_ebase_ms"].median()
                r["cwnd_at_2_frac"] = (rows["cwnd"] <= 2).mean()
            out.append(r)
            emit(args, r)
    return out


def rtt4(args) -> list[dict]:
    out = []
    for buf in args.buffers:
        doc = {"duration": args.duration, "packets": False, "sample-interval": "100ms",
               "central": {"rate": "100Mbit", "delay": "0ms", "queue": buf},
               "flows": [{"scheme": args.scheme, "left-rate": "100Mbit", "right-rate": "100Mbit",
                          "right-delay": f"{d}ms"} for d in (50, 100, 150, 200)]}
        for seed in range(1, args.seeds + 1):
            res = run(doc, seed, args.backend)
            t0 = 0.0
            tp = tput(res, t0, args.duration)
            r = {"scheme": args.scheme, "backend": args.backend, "buffer": buf, "seed": seed,
                 "mbps": [round(tp.get(f, 0) / 1e6, 2) for f in range(4)], "jain": jain(tp.values()),
                 "last_third_mbps": [round(v / 1e6, 2) for v in
                                     tput(res, args.duration * 2 / 3, args.duration).values()]}
            if args.backend == "emu":
                r["loadavg"] = os.getloadavg()[0]
            out.append(r)
            emit(args, r)
    return out


def bbr_shallow(args) -> list[dict]:
    out = []
    for rate in args.rates:
        for bdp in args.bdps:
            q = f"{round(bdp * rate * 1e6 * 0.025 / 8 * 1500 / 1514)}B"
            doc = {"duration": args.duration, "packets": False, "sample-interval": "100ms",
                   "central": {"rate": f"{rate}Mbit", "delay": "12.5ms", "queue": {"left": q, "right": 10000}},
                   "flows": [{"scheme": args.scheme_spec or "bbr", "start": 2 * i, "left-rate": "1Gbit"}
                             for i in range(4)]}
            for seed in range(1, args.seeds + 1):
                res = run(doc, seed, args.backend)
                fs = res.flowstats
                d = args.duration
                tp = tput(res, d * 0.5, d * 0.85)
                r = {"backend": args.backend, "rate": rate, "bdp": bdp, "seed": seed,
                     "loss_pct": 100 * fs["dropped_pkts"].sum() / fs["sent_pkts"].sum(),
                     "util_ss": sum(tp.values()) / (rate * 1e6)}
                if args.backend == "emu":
                    r["loadavg"] = os.getloadavg()[0]
                out.append(r)
                emit(args, r)
    return out


def emit(args, r: dict) -> None:
    line = json.dumps(r)
    print(line, flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")


def summary(rows: list[dict], keys: list[str], vals: list[str]) -> None:
    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    for k, rs in groups.items():
        parts = []
        for v in vals:
            xs = [r[v] for r in rs if v in r and isinstance(r[v], (int, float)) and not math.isnan(r[v])]
            if xs:
                sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
                parts.append(f"{v} {statistics.mean(xs):.3f} ± {sd:.3f}")
        print("SUMMARY", dict(zip(keys, k)), "n", len(rs), "; ".join(parts), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["hldg-e4", "hldg-f1", "hldg-2ms", "rtt4", "bbr-shallow"])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--cc", nargs="+", default=None)
    ap.add_argument("--rates", type=float, nargs="+", default=None)
    ap.add_argument("--rtts", type=float, nargs="+", default=None)
    ap.add_argument("--bdps", type=float, nargs="+", default=None)
    ap.add_argument("--buffers", type=int, nargs="+", default=[1000])
    ap.add_argument("--scheme", default="bbr")
    ap.add_argument("--scheme-spec", type=json.loads, default=None,
                    help="a scheme as JSON, e.g. '{\"name\": \"hldg\", \"lambda\": 0.9}'")
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--backend", default="sim", choices=["sim", "emu"])
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.what == "hldg-e4":
        a.cc = a.cc or ["cdg", "hldg"]
        a.rates, a.rtts, a.bdps = a.rates or [12], a.rtts or [40, 240], a.bdps or [1, 4, 8]
        summary(hldg_e4(a), ["cc", "rate", "rtt", "bdp"], ["share", "loss", "delay", "probe", "switches"])
    elif a.what == "hldg-f1":
        a.rtts = a.rtts or [40, 180, 240, 340]
        summary(hldg_f1(a), ["rtt"], ["jain", "util"])
    elif a.what == "hldg-2ms":
        a.cc = a.cc or ["hldg", "cdg"]
        summary(hldg_2ms(a), ["cc"], ["util", "cwnd_mean", "rtt_ebase_ms", "cwnd_at_2_frac"])
    elif a.what == "rtt4":
        summary(rtt4(a), ["scheme", "backend", "buffer"], ["jain"])
    else:
        a.rates, a.bdps = a.rates or [40], a.bdps or [0.25, 0.5]
        summary(bbr_shallow(a), ["backend", "rate", "bdp"], ["loss_pct", "util_ss"])


if __name__ == "__main__":
    main()
