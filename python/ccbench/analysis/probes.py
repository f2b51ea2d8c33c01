"""Latency probes (``scheme: probe``; docs/metrics.md "Latency probes"): the round-trip time
a small, unresponsive flow sees beside the load, as Flent's RRUL test plots its pings
(Høiland-Jørgensen et al., "Flent: The FLExible Network Tester", VALUETOOLS 2017, §3).

The ``probes`` table holds one row per probe: ``sent_ns`` and ``rtt_ns`` (null when neither
the probe nor its echo came back before the run ended). Percentiles are nearest-rank
(``percentile_nearest``, as every delay percentile of ccbench).
"""
from __future__ import annotations

import numpy as np
import polars as pl

from .estimators import percentile_nearest

#: the summary's columns
SUMMARY_SCHEMA = {"flow": pl.Int64, "label": pl.String, "sent": pl.Int64, "answered": pl.Int64,
                  "lost_pct": pl.Float64, "min_rtt_ms": pl.Float64, "median_rtt_ms": pl.Float64,
                  "mean_rtt_ms": pl.Float64, "p90_rtt_ms": pl.Float64, "p99_rtt_ms": pl.Float64,
                  "max_rtt_ms": pl.Float64}


def probe_flows(exp: dict) -> list[dict]:
    """The experiment's probe flows."""
    return [f for f in exp.get("flows", []) if f.get("probe")]


def probe_series(results, t0_s: float = 0.0, t1_s: float | None = None) -> pl.DataFrame:
    """One row per answered probe: flow, label, t_s (when it left), rtt_ms — within
    [t0_s, t1_s) of its departure when given."""
    p = results.probes
    labels = {f["id"]: f["label"] for f in probe_flows(results.experiment)}
    if p is None or not p.height:
        return pl.DataFrame(schema={"flow": pl.Int64, "label": pl.String, "t_s": pl.Float64,
                                    "rtt_ms": pl.Float64})
    p = p.filter(pl.col("rtt_ns").is_not_null() & (pl.col("sent_ns") >= int(t0_s * 1e9)))
    if t1_s is not None:
        p = p.filter(pl.col("sent_ns") < int(t1_s * 1e9))
    return p.sort("flow", "sent_ns").select(
        pl.col("flow").cast(pl.Int64),
        pl.col("flow").cast(pl.Int64).replace_strict(labels, default="?", return_dtype=pl.String)
        .alias("label"),
        (pl.col("sent_ns") / 1e9).alias("t_s"), (pl.col("rtt_ns") / 1e6).alias("rtt_ms"))


def probe_summary(results, t0_s: float = 0.0, t1_s: float | None = None) -> pl.DataFrame:
    """Per probe flow: probes sent and answered, the share lost (unanswered, leaving out the
    probes sent in the run's last two largest RTTs: they may still be on their way), and the
    RTT's minimum,
    median, mean, 90th and 99th percentile and maximum (ms), over the probes that left in
    [t0_s, t1_s). Empty without probe flows."""
    p = results.probes
    end = int(results.experiment["duration_ns"])
    rows = []
    for f in probe_flows(results.experiment):
        g = pl.DataFrame(schema={"sent_ns": pl.Int64, "rtt_ns": pl.Int64}) if p is None else \
            p.filter((pl.col("flow") == f["id"]) & (pl.col("sent_ns") >= int(t0_s * 1e9)))
        if t1_s is not None:
            g = g.filter(pl.col("sent_ns") < int(t1_s * 1e9))
        rtt = g["rtt_ns"].drop_nulls().to_numpy().astype(np.int64)
        ms = rtt / 1e6
        has = len(rtt) > 0
        # an unanswered probe sent in the run's last two largest RTTs may still be on its way
        late = end - 2 * int(rtt.max() if has else 0)
        pending = g.filter(pl.col("rtt_ns").is_null() & (pl.col("sent_ns") >= late)).height
        sent = g.height - pending
        rows.append({
            "flow": f["id"], "label": f["label"], "sent": g.height, "answered": len(rtt),
            "lost_pct": 100.0 * (sent - len(rtt)) / sent if sent else None,
            "min_rtt_ms": float(ms.min()) if has else None,
            "median_rtt_ms": float(percentile_nearest(rtt, 50)) / 1e6 if has else None,
            "mean_rtt_ms": float(ms.mean()) if has else None,
            "p90_rtt_ms": float(percentile_nearest(rtt, 90)) / 1e6 if has else None,
            "p99_rtt_ms": float(percentile_nearest(rtt, 99)) / 1e6 if has else None,
            "max_rtt_ms": float(ms.max()) if has else None})
    return pl.DataFrame(rows, schema=SUMMARY_SCHEMA)


def probe_text(results) -> list[str]:
    """Lines for the run summary: each probe flow's RTT under load."""
    out = []
    for r in probe_summary(results).iter_rows(named=True):
        if not r["answered"]:
            out.append(f"{r['label']}: no probe answered ({r['sent']} sent)")
            continue
        out.append(f"{r['label']}: RTT median {r['median_rtt_ms']:.2f} ms, p90 "
                   f"{r['p90_rtt_ms']:.2f}, p99 {r['p99_rtt_ms']:.2f}, min {r['min_rtt_ms']:.2f}"
                   f" ({r['answered']}/{r['sent']} probes answered)")
    return out


__all__ = ["probe_flows", "probe_series", "probe_summary", "probe_text"]
