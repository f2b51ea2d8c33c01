"""Tables out of ccbench: a run's or a campaign's tables as CSV (or Parquet copies) for
spreadsheets, R and pandas users (`ccbench export csv|parquet DIR`; docs/results.md).

A run directory's tables are its Parquet files (packets, flows, queues, intervals, delay_hist,
flowstats, conns); a campaign directory's is its index (one row per run and flow, the swept
values beside the metrics). Large tables are written streaming from their Parquet files, so a
run of 10^8 packets converts without being held in memory.
"""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from . import TABLES

FORMATS = ("csv", "parquet")


class ExportError(ValueError):
    """A table or directory that cannot be exported (the message names the fix)."""


def _sources(src: Path) -> dict[str, Path]:
    """The exportable tables of a results or campaign directory, by name."""
    if (src / "metadata.json").is_file():
        return {t: src / f"{t}.parquet" for t in TABLES if (src / f"{t}.parquet").is_file()}
    if (src / "index.parquet").is_file():
        return {"index": src / "index.parquet"}
    raise ExportError(f"{src} is neither a results directory (metadata.json) nor a campaign "
                      "directory (index.parquet)")


def export_tables(src: str | Path, fmt: str = "csv", out: str | Path | None = None,
                  tables: list[str] | None = None) -> list[Path]:
    """Write the tables of ``src`` (all, or those named) as ``fmt`` files into ``out``
    (default ``src/export-<fmt>``); returns the files written. Lists (a flow's path) become
    JSON text in CSV, which has no nested values."""
    if fmt not in FORMATS:
        raise ExportError(f"format {fmt!r}: use one of {', '.join(FORMATS)}")
    src = Path(src)
    have = _sources(src)
    names = list(have) if not tables else tables
    unknown = [t for t in names if t not in have]
    if unknown:
        raise ExportError(f"{src} has no table {', '.join(map(repr, unknown))}; it has: "
                          f"{', '.join(have)}")
    dest = Path(out) if out is not None else src / f"export-{fmt}"
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for t in names:
        lf = pl.scan_parquet(have[t])
        target = dest / f"{t}.{fmt}"
        if fmt == "csv":
            nested = [c for c, d in lf.collect_schema().items() if isinstance(d, (pl.List, pl.Array, pl.Struct))]
            if nested:
                lf = lf.with_columns(pl.col(c).map_elements(
                    lambda v: json.dumps(v.to_list() if hasattr(v, "to_list") else v),
                    return_dtype=pl.String) for c in nested)
            lf.sink_csv(target)
        else:
            lf.sink_parquet(target)
        written.append(target)
    return written


__all__ = ["ExportError", "FORMATS", "export_tables"]
