"""intervals, delay_hist and flowstats of an imported run, from its packets table, with the
simulator's recorder definitions (docs/architecture.md "Results directory"): sent counts
binned by send time, delivered bytes/packets and the delay sum by arrival time, drops by drop
time; the histogram of one-way delays in `hist_bucket_ns` buckets; per-flow totals."""
from __future__ import annotations

import polars as pl

from ..results.schema import SCHEMAS

U64 = pl.UInt64


def derive_tables(pk: pl.DataFrame, exp: dict, app_bytes: dict, completed: dict):
    w = int(exp["sample_interval_ns"])
    hb = int(exp.get("hist_bucket_ns", 10_000))
    sent = pk.group_by("flow", (pl.col("sent_ns") // w).alias("bin")).agg(
        pl.col("size").sum().cast(U64).alias("sent_bytes"), pl.len().cast(U64).alias("sent_pkts"))
    arr = pk.filter(pl.col("arrival_ns").is_not_null()).with_columns(
        (pl.col("arrival_ns") - pl.col("sent_ns")).alias("delay"))
    dl = arr.group_by("flow", (pl.col("arrival_ns") // w).alias("bin")).agg(
        pl.col("size").sum().cast(U64).alias("delivered_bytes"),
        pl.len().cast(U64).alias("delivered_pkts"),
        pl.col("delay").sum().cast(U64).alias("delay_sum_ns"))
    dr = pk.filter(pl.col("drop_ns").is_not_null()).group_by(
        "flow", (pl.col("drop_ns") // w).alias("bin")).agg(
        pl.col("size").sum().cast(U64).alias("dropped_bytes"), pl.len().cast(U64).alias("dropped_pkts"))
    iv = sent.join(dl, on=["flow", "bin"], how="full", coalesce=True).join(
        dr, on=["flow", "bin"], how="full", coalesce=True)
    cols = [c for c in SCHEMAS["intervals"] if c not in ("bin", "flow")]
    intervals = iv.with_columns([pl.col(c).fill_null(0).cast(U64) for c in cols]).select(
        pl.col("bin").cast(pl.Int64), pl.col("flow").cast(pl.UInt32), *cols).sort(["flow", "bin"])
    delay_hist = arr.group_by("flow", (pl.col("delay") // hb).alias("bucket")).agg(
        pl.len().cast(U64).alias("count")).select(
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
    flowstats = pl.DataFrame(rows, schema=SCHEMAS["flowstats"])
    return intervals, delay_hist, flowstats
