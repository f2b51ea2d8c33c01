"""Queue occupancy time series from the ``queues`` table (for plots and reports)."""
from __future__ import annotations

import polars as pl


def queue_timeseries(results, links=None) -> pl.DataFrame:
    """Occupancy of ``links`` (default: the experiment's bottleneck links) over time.

    Columns: time_s, link, name, packets, bytes, qdelay_ms, drops, marks, sojourn_ms.
    ``qdelay_ms`` estimates the queueing delay a packet arriving at that instant would see:
    bytes · 8 / rate_bps (null on an unlimited link). ``sojourn_ms`` is the measured sojourn time
    of the packet most recently dequeued (null before the first, or in results written before
    the column existed); ``drops`` and ``marks`` (CE marks by the queue) are cumulative.
    """
    exp = results.experiment
    if links is None:
        links = exp.get("bottleneck_links") or []
    links = [int(l) for l in links]
    schema = {"time_s": pl.Float64, "link": pl.Int64, "name": pl.String, "packets": pl.Int64,
              "bytes": pl.Int64, "qdelay_ms": pl.Float64, "drops": pl.Int64,
              "marks": pl.Int64, "sojourn_ms": pl.Float64}
    if not results.has("queues") or not links:
        return pl.DataFrame(schema=schema)
    info = pl.DataFrame(
        {"link": [int(l["id"]) for l in exp["links"]],
         "name": [l.get("name", str(l["id"])) for l in exp["links"]],
         "rate_bps": [l.get("rate_bps") for l in exp["links"]]},
        schema={"link": pl.Int64, "name": pl.String, "rate_bps": pl.Float64})
    cols = results.scan("queues").collect_schema().names()
    marks = pl.col("marks").cast(pl.Int64) if "marks" in cols else pl.lit(None, pl.Int64)
    sojourn = (pl.col("sojourn_us").cast(pl.Float64).fill_nan(None) / 1e3
               if "sojourn_us" in cols else pl.lit(None, pl.Float64))
    q = (results.scan("queues").with_columns(pl.col("link").cast(pl.Int64))
         .filter(pl.col("link").is_in(links))
         .join(info.lazy(), on="link", how="left")
         .select((pl.col("time_ns").cast(pl.Int64) / 1e9).alias("time_s"), "link", "name",
                 pl.col("packets").cast(pl.Int64), pl.col("bytes").cast(pl.Int64),
                 (pl.col("bytes").cast(pl.Float64) * 8 / pl.col("rate_bps") * 1e3).alias("qdelay_ms"),
                 pl.col("drops").cast(pl.Int64), marks.alias("marks"),
                 sojourn.alias("sojourn_ms"))
         .collect(engine="streaming").sort("link", "time_s"))
    return q.cast(schema)
