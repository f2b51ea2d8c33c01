"""Per-run metric rows of the campaign index: one row per flow, with ccbench.analysis's
definitions (docs/metrics.md).

Columns: flow, group, scheme, direction, flow_label; avg_tput_mbps, mean_delay_ms,
median_delay_ms, p95_delay_ms, loss_pct (dropped bytes / sent bytes), bytes_sent,
bytes_dropped, bytes_in_flight_end, coco_loss_pct and bytes_lost (CoCo-Beholder's sent −
delivered) (the per-flow metrics of ``analyze(per-flow)``); retrans_pkts (flowstats); jain (Jain's index over the run's
flows, the same on each row of a run); utilization_pct (the first bottleneck link on the
flow's data path, ``link_utilization``); fct_mean_ms, fct_completed, fct_flows (finite
flows and short-flow arrivals, ``fct_table``; null for long-running flows);
probe_median_rtt_ms, probe_p99_rtt_ms (the run's latency probes pooled, ``analysis.probes``:
the RTT under load, the same on each row of a run; null without probes).

Two routes to the same rows:

* ``run_rows`` of a run recorded without per-packet rows (every campaign's default) reads
  the few columns the rows need (flowstats, delay_hist, the bottleneck links' queue samples,
  conns, probes) straight into plain numbers: one run's rows cost well under a millisecond,
  where ``analyze`` and ``link_utilization`` spent ~8 ms in polars passes building the
  per-interval tables the index never uses. The arithmetic is ``analysis``'s, term for term
  (gather.gather_aggregate, metrics._curve_stats and _summary_rows, pantheon.link_utilization,
  workloads.fct_table, probes.probe_series); tests/test_campaign_metrics.py checks both routes
  give the same rows on runs with loss, finite flows, arrivals, probes and two bottlenecks.
* ``analysis_rows`` goes through ``analysis.analyze`` itself; ``run_rows`` uses it for runs
  with per-packet records (exact percentiles from the packets).
"""
from __future__ import annotations

import numpy as np
import polars as pl

from .. import analysis
from ..analysis.metrics import LABELS as LOSS_LIKE_LABELS, LOSS_LABEL

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
#: Axis and column titles of the metric columns, shared by the campaign plots and pages.
LABELS = {"avg_tput_mbps": "throughput (Mbit/s)", "mean_delay_ms": "mean one-way delay (ms)",
          "median_delay_ms": "median one-way delay (ms)",
          "p95_delay_ms": "p95 one-way delay (ms)", "loss_pct": LOSS_LABEL,
          "coco_loss_pct": LOSS_LIKE_LABELS["coco_loss_pct"],
          "retrans_pkts": "retransmitted packets", "jain": "Jain's index over the run's flows",
          "utilization_pct": "bottleneck utilisation (%)", "fct_mean_ms": "mean FCT (ms)",
          "probe_median_rtt_ms": "RTT under load, median of the probes (ms)",
          "probe_p99_rtt_ms": "RTT under load, p99 of the probes (ms)"}


def _fct_table(results):
    fn = getattr(analysis, "fct_table", None)
    if fn is None:
        from ..analysis.workloads import fct_table as fn
    return fn(results)


def run_rows(results) -> pl.DataFrame:
    """The index rows (without campaign columns) of one run (loaded, or as computed)."""
    if not _direct(results):
        return analysis_rows(results)
    return pl.DataFrame(_fast_rows(results), schema=SCHEMA, orient="row")


def row_columns(results) -> dict[str, list]:
    """``run_rows`` as plain lists by column (the SCHEMA's, in order): what a campaign
    session hands from run to index (index.MetricsCache builds the DataFrame of many runs
    at once; one per run cost ~0.3 ms)."""
    if not _direct(results):
        rows = analysis_rows(results)
        return {c: rows[c].to_list() for c in SCHEMA}
    rows = _fast_rows(results)
    if not rows:
        return {c: [] for c in SCHEMA}
    # the values the DataFrame would hold: floats in the Float64 columns (an int or a numpy
    # float there would print differently in summary.json), ints in the Int64 ones
    kind = {pl.Float64: float, pl.Int64: int, pl.String: str}
    return {c: [None if x is None else kind[SCHEMA[c]](x) for x in v]
            for c, v in zip(SCHEMA, zip(*rows))}


def _direct(results) -> bool:
    """Whether the rows come from the columns (a run without per-packet records)."""
    return not results.has("packets") and results.has("flowstats") \
        and results.has("delay_hist")


def analysis_rows(results) -> pl.DataFrame:
    """The index rows of one run through ``analysis.analyze`` (the reference route)."""
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


# --- the direct route: a run without per-packet records --------------------------------------

def _fast_rows(results) -> list[tuple]:
    """``analysis_rows``'s values, from the columns (see the module docs)."""
    from ..analysis.estimators import hist_percentile_bucket, jain_index
    from ..analysis.metrics import MIN_DURATION_NS
    exp = results.experiment
    fs = results.values("flowstats", _FLOWSTATS)
    flows = sorted((f for f in exp["flows"] if not f.get("probe")), key=lambda f: f["id"])
    by_flow = {fl: i for i, fl in enumerate(fs["flow"])}
    hist = _hist(results.arrays("delay_hist", ("flow", "bucket", "count")))
    w = int(exp["hist_bucket_ns"])
    stats = {}
    for f in flows:  # metrics._curve_stats and _summary_rows for one-flow curves
        i = by_flow.get(f["id"])
        sent = int(fs["sent_bytes"][i] or 0) if i is not None else 0
        dropped = int(fs["dropped_bytes"][i] or 0) if i is not None else 0
        n = int(fs["delivered_pkts"][i]) if i is not None else 0
        start = fs["first_arrival_ns"][i] if n > 0 else None
        avg = mean = med = p95 = None
        dbytes = 0
        if start is not None:
            end, dbytes = fs["last_arrival_ns"][i], fs["delivered_bytes"][i]
            if end - start >= MIN_DURATION_NS:
                avg = (dbytes * 8) / (((end - start) / 1e9) * 1e6)
            mean = fs["delay_sum_ns"][i] / n / 1e6
            b, c = hist.get(f["id"], ((), ()))
            if int(np.sum(c)) != n:
                raise ValueError(f"{results.path}: delay_hist holds {int(np.sum(c))} packets "
                                 f"for flow {f['id']} but flowstats {n}; inconsistent results "
                                 "directory")
            med, p95 = ((hist_percentile_bucket(b, c, q) + 0.5) * w / 1e6 for q in (50, 95))
        lost = sent - dbytes
        stats[f["id"]] = (avg, mean, med, p95,
                          dropped / sent * 100.0 if sent != 0 else None, sent, dropped,
                          lost - dropped, lost / sent * 100.0 if sent != 0 else None, lost)
    jain = jain_index([s[0] for s in stats.values() if s[0] is not None])
    util = _utilization(results, fs)
    bottlenecks = [int(x) for x in exp.get("bottleneck_links") or []]
    retrans = dict(zip(fs["flow"], fs["retrans_pkts"]))
    fct = _fct(results, fs, by_flow)
    rtt = _probe_rtts(results)
    rows = []
    for f in flows:
        link = next((int(l) for l in f.get("path", []) if int(l) in bottlenecks), None)
        rows.append((f["id"], f["group"], f["scheme"], f["direction"], f["label"],
                     *stats[f["id"]], retrans.get(f["id"]), jain, util.get(link),
                     *fct.get(f["id"], (None, None, None)),
                     rtt["probe_median_rtt_ms"], rtt["probe_p99_rtt_ms"]))
    return rows


#: The flowstats columns the rows read.
_FLOWSTATS = ("flow", "sent_bytes", "dropped_bytes", "delivered_pkts", "delivered_bytes",
              "first_arrival_ns", "last_arrival_ns", "delay_sum_ns", "retrans_pkts",
              "first_sent_ns", "start_ns", "completed_ns")


def _hist(cols: dict) -> dict[int, tuple]:
    """Per flow: its delay_hist buckets (ascending, counts > 0) and their counts, summed over
    duplicate buckets as gather_aggregate's group-by does."""
    fl, b, c = (cols[k].astype(np.int64) for k in ("flow", "bucket", "count"))
    if not len(fl):
        return {}
    order = np.lexsort((b, fl))
    fl, b, c = fl[order], b[order], c[order]
    first = np.ones(len(fl), dtype=bool)
    first[1:] = (fl[1:] != fl[:-1]) | (b[1:] != b[:-1])
    at = np.flatnonzero(first)
    fl, b, c = fl[at], b[at], np.add.reduceat(c, at)
    fl, b, c = fl[c > 0], b[c > 0], c[c > 0]
    cut = np.flatnonzero(fl[1:] != fl[:-1]) + 1
    return {int(fl[i]): (b[i:j], c[i:j])
            for i, j in zip([0, *cut.tolist()], [*cut.tolist(), len(fl)])}


def _utilization(results, fs: dict) -> dict:
    """pantheon.link_utilization's utilization_pct of each bottleneck link."""
    exp = results.experiment
    by_id = {int(l["id"]): l for l in exp["links"]}
    out = {}
    q = results.arrays("queues", ("link", "time_ns", "tx_bytes")) \
        if results.in_memory("queues") else None
    for lid in (int(x) for x in exp.get("bottleneck_links") or []):
        rate = by_id[lid].get("rate_bps")
        users = {f["id"] for f in exp["flows"] if lid in [int(x) for x in f.get("path", [])]}
        out[lid] = None
        if not users or not results.has("queues") or rate is None:
            continue
        rows = [i for i, fl in enumerate(fs["flow"]) if fl in users]
        first = [fs["first_sent_ns"][i] for i in rows if fs["first_sent_ns"][i] is not None]
        last = [fs["last_arrival_ns"][i] for i in rows if fs["last_arrival_ns"][i] is not None]
        if not first or not last:
            continue
        t0, t1 = min(first), max(last)
        if q is not None:
            sel = q["link"] == lid
            times, tx = q["time_ns"][sel], q["tx_bytes"][sel]
        else:  # spilled or on disk: only this link's rows
            s = (results.scan("queues").filter(pl.col("link").cast(pl.Int64) == lid)
                 .select("time_ns", "tx_bytes").collect(engine="streaming"))
            times, tx = s["time_ns"].to_numpy(), s["tx_bytes"].to_numpy()
        order = np.argsort(times, kind="stable")
        times = [0] + times[order].tolist()
        tx = [0] + tx[order].tolist()
        inside = [i for i, t in enumerate(times) if t0 <= t <= t1]
        if len(inside) >= 2:
            a, b = inside[0], inside[-1]
            mbps = 8 * (tx[b] - tx[a]) / ((times[b] - times[a]) / 1e9) / 1e6
            out[lid] = 100 * mbps / (rate / 1e6)
    return out


def _fct(results, fs: dict, by_flow: dict) -> dict:
    """Per flow: workloads.fct_table's mean FCT (ms), completed and count."""
    exp = results.experiment
    per: dict[int, list] = {}
    for f in exp["flows"]:
        if f.get("bytes") is None or f.get("arrivals") or f["id"] not in by_flow:
            continue
        i = by_flow[f["id"]]
        per.setdefault(f["id"], []).append((fs["start_ns"][i], fs["completed_ns"][i]))
    if results.has("conns"):
        c = results.values("conns", ("flow", "start_ns", "completed_ns"))
        for fl, start, done in zip(c["flow"], c["start_ns"], c["completed_ns"]):
            per.setdefault(exp["flows"][fl]["id"], []).append((start, done))
    out = {}
    for fl, xs in per.items():
        fct = [d - s for s, d in xs if d is not None]
        # polars evaluates fct_table's ``mean() / 1e6`` as a product with 1e-6: the same here
        out[fl] = (sum(fct) / len(fct) * 1e-6 if fct else None, len(fct), len(xs))
    return out


# --- a run kept as its summary (``ccbench sweep --keep summary``) ---------------------------

#: The file of a run kept without its tables: its index rows (api.run's ``summary.json``).
SUMMARY = "summary.json"


def summary_doc(rows: pl.DataFrame | dict) -> dict:
    """What a run kept as its summary stores: its index rows (a DataFrame or
    ``row_columns``), column by column (JSON keeps every float to the bit)."""
    if isinstance(rows, dict):
        return {"format": 1, "index_rows": {c: rows[c] for c in SCHEMA}}
    return {"format": 1, "index_rows": {c: rows[c].to_list() for c in SCHEMA}}


def rows_of_dir(run_dir) -> pl.DataFrame:
    """The index rows of a finished run's directory: from its ``summary.json`` when it was
    kept as its summary, else computed from its tables."""
    import json
    from pathlib import Path
    from ..results import load
    f = Path(run_dir) / SUMMARY
    if f.is_file():
        doc = json.loads(f.read_text())
        return pl.DataFrame(doc["index_rows"], schema=SCHEMA)
    return run_rows(load(run_dir))
