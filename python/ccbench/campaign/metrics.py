"""Per-run metric rows of the campaign index: one row per flow, computed by
ccbench.analysis from the run's results (definitions: docs/metrics.md).

Columns: flow, group, scheme, direction, flow_label; avg_tput_mbps, mean_delay_ms,
median_delay_ms, p95_delay_ms, loss_pct (dropped bytes / sent bytes), bytes_sent,
bytes_dropped, bytes_in_flight_end, coco_loss_pct and bytes_lost (CoCo-Beholder's sent −
delivered) (the per-flow metrics of ``analyze(per-flow)``); retrans_pkts (flowstats); jain (Jain's index over the run's
flows, the same on each row of a run); utilization_pct (the first bottleneck link on the
flow's data path, ``link_utilization``); fct_mean_ms, fct_completed, fct_flows (finite
flows and short-flow arrivals, ``fct_table``; null for long-running flows);
probe_median_rtt_ms, probe_p99_rtt_ms (the run's latency probes pooled, ``analysis.probes``:
the RTT under load, the same on each row of a run; null without probes).
"""
from __future__ import annotations

import polars as pl

from .. import analysis

SCHEMA = {
    "flow": pl.Int64, "group": pl.Int64, "scheme": pl.String, "direction": pl.String,
    "flow_label": pl.String, "avg_tput_mbps": pl.Float64, "mean_delay_ms": pl.Float64,
    "median_delay_ms": pl.Float64, "p95_delay_ms": pl.Float64, "loss_pct": pl.Float64,
    "bytes_sent": pl.Int64, "bytes_dropped": pl.Int64, "bytes_in_flight_end": pl.Int64,
    "coco_loss_pct": pl.Float64, "bytes_lost": pl.Int64, "retrans_pkts": pl.Int64,
    "jain": pl.Float64, "utilization_pct": pl.Float64, "fct_mean_ms": pl.Float64,
    "fct_completed": pl.Int64, "fct_flows": pl.Int64,
    "probe_median_rtt_ms": pl.Float64, "probe_p99_rtt_ms": pl.Float64,
}
#: Metric columns (numbers aggregated across repeats), in index order.
METRICS = ["avg_tput_mbps", "mean_delay_ms", "median_delay_ms", "p95_delay_ms", "loss_pct",
           "coco_loss_pct", "retrans_pkts", "jain", "utilization_pct", "fct_mean_ms",
           "probe_median_rtt_ms", "probe_p99_rtt_ms"]


def _fct_table(results):
    fn = getattr(analysis, "fct_table", None)
    if fn is None:
        from ..analysis.workloads import fct_table as fn
    return fn(results)


def run_rows(results) -> pl.DataFrame:
    """The index rows (without campaign columns) of one loaded run."""
    exp = results.experiment
    interval = exp["sample_interval_ns"] / 1e9  # a multiple of itself: valid in both modes
    an = analysis.analyze(results, grouping="per-flow", interval=interval)
    summ = {tuple(r["flows"]): r for r in an.summary.iter_rows(named=True)}
    util = {r["link"]: r["utilization_pct"]
            for r in analysis.link_utilization(results).iter_rows(named=True)}
    bottlenecks = [int(x) for x in exp.get("bottleneck_links") or []]
    retrans = {}
    if results.flowstats is not None:
        retrans = dict(zip(results.flowstats["flow"].to_list(),
                           results.flowstats["retrans_pkts"].to_list()))
    fct = _fct_table(results)
    fct_by = {}
    if fct.height:
        agg = fct.group_by("flow").agg(
            (pl.col("fct_ns").mean() / 1e6).alias("m"),
            pl.col("fct_ns").is_not_null().sum().alias("c"), pl.len().alias("n"))
        fct_by = {r["flow"]: r for r in agg.iter_rows(named=True)}
    rtt = _probe_rtts(results)
    rows = []
    for f in sorted(exp["flows"], key=lambda f: f["id"]):
        if f.get("probe"):  # latency probes are measurement traffic (analysis.probes)
            continue
        s = summ.get((f["id"],), {})
        link = next((int(l) for l in f.get("path", []) if int(l) in bottlenecks), None)
        fr = fct_by.get(f["id"])
        rows.append({
            "flow": f["id"], "group": f["group"], "scheme": f["scheme"],
            "direction": f["direction"], "flow_label": f["label"],
            "avg_tput_mbps": s.get("avg_tput_mbps"), "mean_delay_ms": s.get("mean_delay_ms"),
            "median_delay_ms": s.get("median_delay_ms"), "p95_delay_ms": s.get("p95_delay_ms"),
            "loss_pct": s.get("loss_pct"), "bytes_sent": s.get("bytes_sent"),
            "bytes_dropped": s.get("bytes_dropped"),
            "bytes_in_flight_end": s.get("bytes_in_flight_end"),
            "coco_loss_pct": s.get("coco_loss_pct"), "bytes_lost": s.get("bytes_lost"), "retrans_pkts": retrans.get(f["id"]),
            "jain": an.overall_jain, "utilization_pct": util.get(link),
            "fct_mean_ms": None if fr is None else fr["m"],
            "fct_completed": None if fr is None else fr["c"],
            "fct_flows": None if fr is None else fr["n"],
            **rtt,
        })
    return pl.DataFrame(rows, schema=SCHEMA)


def _probe_rtts(results) -> dict:
    """The run's latency probes pooled: median and 99th-percentile RTT (ms), nearest rank."""
    from ..analysis.estimators import percentile_nearest
    from ..analysis.probes import probe_series
    ms = probe_series(results)["rtt_ms"].to_numpy() if results.has("probes") else []
    if not len(ms):
        return {"probe_median_rtt_ms": None, "probe_p99_rtt_ms": None}
    return {"probe_median_rtt_ms": float(percentile_nearest(ms, 50)),
            "probe_p99_rtt_ms": float(percentile_nearest(ms, 99))}
