"""Workload metrics: flow completion times of finite flows and short-flow arrivals, and the
goodput of application-limited / on/off / UDP flows (docs/metrics.md, "Workloads").

* **FCT** of a flow = ``completed_ns − start_ns``: from the application's open (the SYN) to
  the ACK of its last byte, so it includes the handshake RTT.
* **Ideal FCT** = ``2·base_rtt + wire_bytes·8 / C``: handshake plus one round trip, plus the
  flow's packets (payload + 52 header bytes each) serialised at ``C``, the slowest link of its
  data path — what the flow would take alone with an unlimited window.
* **Slowdown** = FCT / ideal FCT (≥ 1 up to the delayed-ACK and rounding terms).
* **Goodput** = payload bytes acknowledged (UDP: delivered) ÷ the flow's active time
  (start → stop or end of the run).
"""
from __future__ import annotations

import math

import polars as pl

from ..results import Results

HEADER_BYTES = 52


def _path_rate(exp: dict, f: dict) -> int | None:
    rates = [exp["links"][j]["rate_bps"] for j in f["path"]
             if exp["links"][j]["rate_bps"] is not None]
    return min(rates) if rates else None


def ideal_fct_ns(size: int, rate_bps: int | None, base_rtt_ns: int, mss: int) -> float:
    wire = size + math.ceil(size / mss) * HEADER_BYTES
    tx = wire * 8e9 / rate_bps if rate_bps else 0.0
    return 2 * base_rtt_ns + tx


def fct_table(results: Results) -> pl.DataFrame:
    """One row per finite flow (``bytes:`` groups) and per short-flow arrival: ``group, flow,
    conn`` (null for a ``bytes:`` flow), ``label, scheme, size_bytes, start_ns, completed_ns,
    fct_ns, ideal_ns, slowdown`` (nulls when the flow did not complete by the end)."""
    exp = results.experiment
    mss = exp["mss"]
    rows = []
    flows = exp["flows"]
    fs = results.flowstats
    if fs is not None:
        by_flow = {r["flow"]: r for r in fs.iter_rows(named=True)}
        for f in flows:
            if f.get("bytes") is None or f.get("arrivals") or f["id"] not in by_flow:
                continue
            r = by_flow[f["id"]]
            rows.append((f, None, f["bytes"], r["start_ns"], r["completed_ns"]))
    if results.conns is not None:
        for r in results.conns.iter_rows(named=True):
            rows.append((flows[r["flow"]], r["conn"], r["size_bytes"], r["start_ns"],
                         r["completed_ns"]))
    out = []
    for f, conn, size, start, done in rows:
        ideal = ideal_fct_ns(size, _path_rate(exp, f), f["base_rtt_ns"], mss)
        fct = None if done is None else done - start
        out.append({"group": f["group"], "flow": f["id"], "conn": conn, "label": f["label"],
                    "scheme": f["scheme"], "size_bytes": size, "start_ns": start,
                    "completed_ns": done, "fct_ns": fct, "ideal_ns": ideal,
                    "slowdown": None if fct is None else fct / ideal})
    schema = {"group": pl.Int64, "flow": pl.Int64, "conn": pl.Int64, "label": pl.String,
              "scheme": pl.String, "size_bytes": pl.Int64, "start_ns": pl.Int64,
              "completed_ns": pl.Int64, "fct_ns": pl.Int64, "ideal_ns": pl.Float64,
              "slowdown": pl.Float64}
    return pl.DataFrame(out, schema=schema).sort("start_ns")


def fct_summary(results: Results) -> pl.DataFrame:
    """Per group: flows, completed, mean/median/p99 FCT (ms), mean and p99 slowdown."""
    t = fct_table(results)
    if t.is_empty():
        return t
    return (t.group_by("group", maintain_order=True).agg(
        pl.col("label").first(), pl.len().alias("flows"),
        pl.col("fct_ns").is_not_null().sum().alias("completed"),
        (pl.col("fct_ns").mean() / 1e6).alias("fct_mean_ms"),
        (pl.col("fct_ns").median() / 1e6).alias("fct_median_ms"),
        (pl.col("fct_ns").quantile(0.99, "nearest") / 1e6).alias("fct_p99_ms"),
        pl.col("slowdown").mean().alias("slowdown_mean"),
        pl.col("slowdown").quantile(0.99, "nearest").alias("slowdown_p99"),
    ).sort("group"))


def goodput_table(results: Results) -> pl.DataFrame:
    """Per flow: ``flow, label, scheme, app_rate_bps`` (null = not app-limited),
    ``active_s, app_bytes, goodput_bps`` and, for app-limited flows, ``goodput_ratio`` =
    goodput / app rate (1 when the network carries all the application writes)."""
    exp = results.experiment
    fs = results.flowstats
    end = exp["duration_ns"]
    rows = []
    by_flow = {r["flow"]: r for r in fs.iter_rows(named=True)} if fs is not None else {}
    for f in exp["flows"]:
        r = by_flow.get(f["id"])
        if r is None:
            continue
        stop = f["stop_ns"] if f.get("stop_ns") is not None else end
        active = max(stop - f["start_ns"], 1) / 1e9
        rate = f.get("app_rate_bps")
        good = r["app_bytes"] * 8 / active
        rows.append({"flow": f["id"], "label": f["label"], "scheme": f["scheme"],
                     "app_rate_bps": rate, "active_s": active, "app_bytes": r["app_bytes"],
                     "goodput_bps": good, "goodput_ratio": good / rate if rate else None})
    return pl.DataFrame(rows, schema={"flow": pl.Int64, "label": pl.String, "scheme": pl.String,
                                      "app_rate_bps": pl.Int64, "active_s": pl.Float64,
                                      "app_bytes": pl.Int64, "goodput_bps": pl.Float64,
                                      "goodput_ratio": pl.Float64})


__all__ = ["fct_table", "fct_summary", "goodput_table", "ideal_fct_ns"]
