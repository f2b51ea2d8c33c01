"""Collection: the engine's column files, the agents' samples and summaries → the results
tables (the simulator's schema, docs/architecture.md) and the engine's metadata."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

DROP_REASONS = ("none", "queue", "loss")

_NP = {"u8": np.uint8, "bool": np.uint8, "u32": np.uint32, "u64": np.uint64, "i32": np.int32,
       "i64": np.int64, "f64": np.float64}


def _read_table(d: Path, name: str, manifest: list) -> pl.DataFrame:
    cols = []
    for col, dt in manifest:
        arr = np.fromfile(d / f"{name}.{col}.bin", dtype=_NP[dt])
        s = pl.Series(col, arr.astype(bool) if dt == "bool" else arr)
        if dt == "i64":
            s = s.to_frame().select(pl.when(pl.col(col) == np.iinfo(np.int64).min).then(None)
                                    .otherwise(pl.col(col)).alias(col)).to_series()
        if col == "drop_reason":  # codes of the simulator's DROP_REASONS categories
            s = pl.Series(col, np.asarray(DROP_REASONS, dtype=object)[arr].astype(str), dtype=pl.String)
        if col == "drop_link":
            s = s.to_frame().select(pl.when(pl.col(col) < 0).then(None).otherwise(pl.col(col))
                                    .alias(col)).to_series()
        cols.append(s)
    return pl.DataFrame(cols)


FLOW_SCHEMA = {"time_ns": pl.Int64, "flow": pl.UInt32, "cwnd": pl.UInt32, "ssthresh": pl.Int64,
               "srtt_us": pl.Float64, "rttvar_us": pl.Float64, "min_rtt_us": pl.Float64,
               "inflight": pl.UInt32, "delivered": pl.UInt64, "bytes_acked": pl.UInt64,
               "retrans": pl.UInt64, "lost": pl.UInt64, "ca_state": pl.String,
               "pacing_rate_bps": pl.Float64, "delivery_rate_bps": pl.Float64}


def _flows_table(exp: dict, work: Path) -> pl.DataFrame:
    parts = []
    for f in exp["flows"]:
        p = work / f"flow{f['id']}.csv"
        if not p.is_file() or p.stat().st_size == 0:
            continue
        df = pl.read_csv(p, infer_schema_length=0)  # all strings; cast below
        if df.height == 0:
            continue
        df = df.with_columns(pl.lit(f["id"]).alias("flow"))
        casts = [pl.col(c).cast(t) if c != "flow" else pl.col(c).cast(t)
                 for c, t in FLOW_SCHEMA.items() if c in df.columns]
        casts += [pl.col(c).cast(pl.Float64) for c in df.columns if c.startswith("cc_")]
        parts.append(df.with_columns(casts))
    if not parts:
        return pl.DataFrame(schema=FLOW_SCHEMA)
    df = pl.concat(parts, how="diagonal")
    order = list(FLOW_SCHEMA) + sorted(c for c in df.columns if c.startswith("cc_"))
    return df.select(order).sort(["time_ns", "flow"])


def derived_tables(pk: pl.DataFrame, exp: dict, app_bytes: dict, completed: dict):
    """intervals, delay_hist and flowstats from the per-packet records (as the simulator's
    recorder aggregates them; docs/architecture.md)."""
    w = exp["sample_interval_ns"]
    hb = exp.get("hist_bucket_ns", 10_000)
    u64 = pl.UInt64
    sent = pk.group_by("flow", (pl.col("sent_ns") // w).alias("bin")).agg(
        pl.col("size").sum().cast(u64).alias("sent_bytes"), pl.len().cast(u64).alias("sent_pkts"))
    arr = pk.filter(pl.col("arrival_ns").is_not_null()).with_columns(
        (pl.col("arrival_ns") - pl.col("sent_ns")).alias("delay"))
    dl = arr.group_by("flow", (pl.col("arrival_ns") // w).alias("bin")).agg(
        pl.col("size").sum().cast(u64).alias("delivered_bytes"),
        pl.len().cast(u64).alias("delivered_pkts"),
        pl.col("delay").sum().cast(u64).alias("delay_sum_ns"))
    dr = pk.filter(pl.col("drop_ns").is_not_null()).group_by(
        "flow", (pl.col("drop_ns") // w).alias("bin")).agg(
        pl.col("size").sum().cast(u64).alias("dropped_bytes"), pl.len().cast(u64).alias("dropped_pkts"))
    iv = sent.join(dl, on=["flow", "bin"], how="full", coalesce=True).join(
        dr, on=["flow", "bin"], how="full", coalesce=True)
    cols = ["sent_bytes", "sent_pkts", "delivered_bytes", "delivered_pkts", "delay_sum_ns",
            "dropped_bytes", "dropped_pkts"]
    intervals = iv.with_columns([pl.col(c).fill_null(0).cast(u64) for c in cols]).select(
        pl.col("bin").cast(pl.Int64), pl.col("flow").cast(pl.UInt32), *cols).sort(["bin", "flow"])
    delay_hist = arr.group_by("flow", (pl.col("delay") // hb).alias("bucket")).agg(
        pl.len().cast(u64).alias("count")).select(
        pl.col("flow").cast(pl.UInt32), pl.col("bucket").cast(pl.UInt32), "count").sort(["flow", "bucket"])
    rows = []
    for f in exp["flows"]:
        i = f["id"]
        p = pk.filter(pl.col("flow") == i)
        a = p.filter(pl.col("arrival_ns").is_not_null())
        d = p.filter(pl.col("drop_ns").is_not_null())
        rows.append({
            "flow": i, "sent_bytes": int(p["size"].sum() or 0), "sent_pkts": p.height,
            "delivered_bytes": int(a["size"].sum() or 0), "delivered_pkts": a.height,
            "dropped_bytes": int(d["size"].sum() or 0), "dropped_pkts": d.height,
            "retrans_pkts": int(p["retrans"].sum() or 0),
            "first_sent_ns": p["sent_ns"].min(), "last_sent_ns": p["sent_ns"].max(),
            "first_arrival_ns": a["arrival_ns"].min(), "last_arrival_ns": a["arrival_ns"].max(),
            "delay_sum_ns": int((a["arrival_ns"] - a["sent_ns"]).sum() or 0),
            "app_bytes": int(app_bytes.get(i, 0)), "start_ns": int(f.get("start_ns") or 0),
            "completed_ns": completed.get(i),
        })
    schema = {"flow": pl.UInt32, **{k: u64 for k in ("sent_bytes", "sent_pkts", "delivered_bytes",
              "delivered_pkts", "dropped_bytes", "dropped_pkts", "retrans_pkts")},
              **{k: pl.Int64 for k in ("first_sent_ns", "last_sent_ns", "first_arrival_ns",
                                       "last_arrival_ns")},
              "delay_sum_ns": u64, "app_bytes": u64, "start_ns": pl.Int64, "completed_ns": pl.Int64}
    flowstats = pl.DataFrame(rows, schema=schema)
    return intervals, delay_hist, flowstats


CONNS_SCHEMA = {"conn": pl.UInt32, "flow": pl.UInt32, "size_bytes": pl.UInt64, "start_ns": pl.Int64,
                "completed_ns": pl.Int64, "acked_bytes": pl.UInt64, "retrans_pkts": pl.UInt64}


def _conns_table(exp: dict, work: Path) -> pl.DataFrame | None:
    """The simulator's `conns` table from the arrivals agents' CSVs: one row per connection,
    numbered after the resolved flows in arrival order over all groups (as the simulator)."""
    groups = [f for f in exp["flows"] if f.get("arrivals")]
    if not groups:
        return None
    parts = []
    for f in groups:
        p = work / f"conns{f['id']}.csv"
        if p.is_file() and p.stat().st_size:
            df = pl.read_csv(p, schema_overrides={"completed_ns": pl.Int64})
            parts.append(df.with_columns(pl.lit(f["id"]).alias("flow")))
    if not parts:
        return pl.DataFrame(schema=CONNS_SCHEMA)
    df = pl.concat(parts, how="vertical_relaxed").sort(["start_ns", "flow", "i"])
    n = len(exp["flows"])
    return df.with_columns((pl.int_range(pl.len()) + n).alias("conn")).select(
        [pl.col(c).cast(t) for c, t in CONNS_SCHEMA.items()])


def collect(exp: dict, work: Path, agents: list[dict]):
    """Turn the engine's column files and the agents' samples into the results tables."""
    d = work / "engine"
    st = json.loads((d / "stats.json").read_text())
    man = st.pop("columns")
    pk_full = _read_table(d, "packets", man["packets"])
    queues = _read_table(d, "queues", man["queues"])
    release = _read_table(d, "release", man["release"])
    pk = pk_full.drop("intended_ns")
    app = {f["flow"]: f["app_bytes"] for f in st["flows"]}
    completed = {}
    for f in exp["flows"]:
        if f.get("bytes"):
            c = st["flows"][f["id"]].get("completed_ns")
            if c is None:  # fall back on the agent's own observation (SIOCOUTQ = 0)
                c = next((a.get("completed_ns") for a in agents if a.get("flow") == f["id"]), None)
            completed[f["id"]] = c
    intervals, delay_hist, flowstats = derived_tables(pk, exp, app, completed)
    tables = {"flows": _flows_table(exp, work), "queues": queues, "intervals": intervals,
              "delay_hist": delay_hist, "flowstats": flowstats}
    conns = _conns_table(exp, work)
    if conns is not None:
        tables["conns"] = conns
        # app_bytes of an arrivals group: bytes acknowledged over its connections (simulator)
        acked = dict(conns.group_by("flow").agg(pl.col("acked_bytes").sum()).iter_rows())
        tables["flowstats"] = flowstats.with_columns(
            pl.col("flow").replace_strict(acked, default=None, return_dtype=pl.UInt64)
            .fill_null(pl.col("app_bytes")).alias("app_bytes"))
    if exp.get("record_packets", True):
        tables["packets"] = pk
        tables["emu_release"] = release
    meta = {
        "engine": {k: v for k, v in st.items() if k not in ("flows", "release_error_ns")},
        "release_error_ns": st["release_error_ns"],
        "engine_cpu_frac": st["engine_cpu_frac"],
        "engine_busy_frac": st.get("engine_busy_frac"),
        "engine_flows": st["flows"],
    }
    return tables, meta

