"""The campaign index: one tidy table, a row per run × flow.

Columns: ``run_key, point, label, repeat, seed``, the swept columns (``variant``, each axis,
each derived value; named as in the campaign file), the flow columns and metrics of
metrics.py, and ``ccbench_version, backend``. Rows are ordered by point, repeat and flow, so
the same campaign gives the same index however often it was interrupted.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl

from .metrics import SCHEMA, rows_of_dir
from .plan import Plan, column_dtype, column_value
from .store import CampaignDirError

INDEX = "index.parquet"
METRICS_CACHE = "metrics.parquet"
_CACHE_SCHEMA = {"run_key": pl.String, "ccbench_version": pl.String, **SCHEMA}


def _write(df: pl.DataFrame, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    df.write_parquet(tmp, compression="zstd", statistics=True)
    os.replace(tmp, path)


class MetricsCache:
    """Metric rows by run key, kept in DIR/metrics.parquet."""

    def __init__(self, root: Path):
        self.path = Path(root) / METRICS_CACHE
        self.rows: dict[str, pl.DataFrame] = {}
        self.dirty = False
        if self.path.is_file():
            try:
                df = pl.read_parquet(self.path)
                if df.columns != list(_CACHE_SCHEMA):
                    # written by a ccbench with other metric columns: recompute from the runs
                    raise ValueError("metric columns changed")
                for (key,), part in df.group_by("run_key", maintain_order=True):
                    self.rows[key] = part
            except Exception:  # a damaged cache is rebuilt from the runs
                self.rows = {}

    def add(self, key: str, rows: pl.DataFrame, version: str) -> None:
        self.rows[key] = rows.select(
            pl.lit(key).alias("run_key"), pl.lit(version).alias("ccbench_version"),
            *rows.columns).cast(_CACHE_SCHEMA)
        self.dirty = True

    def get(self, key: str, run_dir: Path) -> pl.DataFrame:
        """Rows of a finished run, computed from its results directory when not cached."""
        if key not in self.rows:
            try:
                rows = rows_of_dir(run_dir)
                version = json.loads((Path(run_dir) / "metadata.json").read_text()
                                     ).get("ccbench_version")
            except Exception as e:
                raise CampaignDirError(f"{run_dir} is a damaged results directory ({e}); "
                                       "delete it and rerun the campaign to run it again"
                                       ) from e
            self.add(key, rows, version)
        return self.rows[key]

    def save(self) -> None:
        if self.dirty and self.rows:
            _write(pl.concat(list(self.rows.values())), self.path)
            self.dirty = False


def build_index(runs: list, plan: Plan, store, cache: MetricsCache) -> pl.DataFrame:
    """The index of every finished run of ``runs`` (of ``plan``; failed and missing runs are
    absent)."""
    points = {r.point.index: r.point for r in runs}.values()
    dtypes = {c: column_dtype([p.values.get(c) for p in points]) for c in plan.columns}
    parts = []
    for r in runs:
        if not store.is_done(r.key):
            continue
        m = cache.get(r.key, store.run_dir(r.key))
        cols = [pl.lit(v, dtype=t).alias(k) for k, v, t in (
            ("point", r.point.index, pl.Int64), ("label", r.point.label, pl.String),
            ("repeat", r.repeat, pl.Int64), ("seed", r.seed, pl.UInt64))]
        cols += [pl.lit(column_value(r.point.values.get(c), dtypes[c]), dtype=dtypes[c]).alias(c)
                 for c in plan.columns]
        parts.append(m.select(pl.col("run_key"), *cols, *SCHEMA, "ccbench_version"))
    if not parts:
        schema = {"run_key": pl.String, "point": pl.Int64, "label": pl.String,
                  "repeat": pl.Int64, "seed": pl.UInt64, **dtypes, **SCHEMA,
                  "ccbench_version": pl.String}
        df = pl.DataFrame(schema=schema)
    else:
        df = pl.concat(parts, how="vertical")
    df = df.with_columns(pl.lit(plan.backend).alias("backend"))
    return df.sort("point", "repeat", "flow", maintain_order=True)


def write_index(df: pl.DataFrame, root: Path) -> Path:
    path = Path(root) / INDEX
    _write(df, path)
    return path


def load_index(path: str | Path) -> pl.DataFrame:
    """The index of a campaign directory (or an index.parquet file)."""
    p = Path(path)
    f = p / INDEX if p.is_dir() else p
    if not f.is_file():
        raise FileNotFoundError(f"{path} is not a campaign directory (no {INDEX}); run "
                                "`ccbench sweep FILE -o DIR` first")
    return pl.read_parquet(f)
