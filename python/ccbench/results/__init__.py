"""Results directories: loading (and, in writer.py, atomic writing) of the tables of one run.

The schema is documented in docs/architecture.md ("Results directory") and declared in
schema.py.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .schema import SCHEMAS

TABLES = tuple(SCHEMAS)


@dataclass
class Results:
    """The tables and metadata of one run. Absent tables are None (e.g. packets when off)."""

    path: Path
    meta: dict
    packets: pl.DataFrame | None
    flows: pl.DataFrame | None
    queues: pl.DataFrame | None
    intervals: pl.DataFrame | None
    delay_hist: pl.DataFrame | None
    flowstats: pl.DataFrame | None
    #: One row per short-flow arrival (groups with ``arrivals``), else None.
    conns: pl.DataFrame | None = None

    @property
    def experiment(self) -> dict:
        return self.meta["experiment"]


def load(path: str | Path) -> Results:
    """Load a results directory written by any backend."""
    path = Path(path)
    meta_file = path / "metadata.json"
    if not meta_file.is_file():
        raise FileNotFoundError(f"{path} is not a ccbench results directory (no metadata.json)")
    meta = json.loads(meta_file.read_text())
    from .marker import check
    check(path, meta)  # missing tables: IncompleteResults; cut-short report/plots: a warning
    tables = {}
    for name in TABLES:
        f = path / f"{name}.parquet"
        tables[name] = pl.read_parquet(f) if f.is_file() else None
    return Results(path=path, meta=meta, **tables)
