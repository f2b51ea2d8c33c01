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
        # rows added as plain columns (metrics.row_columns), made DataFrames together
        self.pending: dict[str, tuple[dict, str]] = {}
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

    def add(self, key: str, rows: pl.DataFrame | dict, version: str) -> None:
        """A run's rows: a DataFrame of metrics.SCHEMA, or its columns as lists
        (metrics.row_columns; kept as they are until the next `get` or `save`, which make
        one DataFrame of all of them: a DataFrame a run cost ~0.3 ms)."""
        self.dirty = True
        if isinstance(rows, dict):   # (a key already in rows keeps its place there)
            self.pending[key] = (rows, version)
            return
        self.pending.pop(key, None)
        n = rows.height   # built eagerly: a lazy select per run cost ~0.3 ms
        df = pl.DataFrame([pl.Series("run_key", [key] * n, pl.String),
                           pl.Series("ccbench_version", [version] * n, pl.String),
                           *rows.get_columns()])
        self.rows[key] = df if df.schema == _CACHE_SCHEMA else df.cast(_CACHE_SCHEMA)

    def _settle(self) -> None:
        """The rows added as columns, as one DataFrame sliced by run."""
        if not self.pending:
            return
        cols: dict[str, list] = {c: [] for c in _CACHE_SCHEMA}
        sizes = []
        for key, (rows, version) in self.pending.items():
            n = len(rows["flow"])
            sizes.append((key, n))
            cols["run_key"].extend([key] * n)
            cols["ccbench_version"].extend([version] * n)
            for c in SCHEMA:
                cols[c].extend(rows[c])
        df = pl.DataFrame(cols, schema=_CACHE_SCHEMA)
        at = 0
        for key, n in sizes:
            self.rows[key] = df.slice(at, n)
            at += n
        self.pending = {}

    def get(self, key: str, run_dir: Path) -> pl.DataFrame:
        """Rows of a finished run, computed from its results directory when not cached."""
        if key in self.pending:
            self._settle()
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
        self._settle()
        if self.dirty and self.rows:
            _write(pl.concat(list(self.rows.values())), self.path)
            self.dirty = False


def build_index(runs: list, plan: Plan, store, cache: MetricsCache) -> pl.DataFrame:
    """The index of every finished run of ``runs`` (of ``plan``; failed and missing runs are
    absent)."""
    points = {r.point.index: r.point for r in runs}.values()
    dtypes = {c: column_dtype([p.values.get(c) for p in points]) for c in plan.columns}
    schema = {"run_key": pl.String, "point": pl.Int64, "label": pl.String,
              "repeat": pl.Int64, "seed": pl.UInt64, **dtypes}
    done = [r for r in runs if store.is_done(r.key)]
    if not done:
        df = pl.DataFrame(schema={**schema, **SCHEMA, "ccbench_version": pl.String})
    else:
        # the metric rows of every run at once, joined to one row per run of its columns
        # (a select of literals per run cost ~0.4 ms a run, at every checkpoint)
        metrics = pl.concat([cache.get(r.key, store.run_dir(r.key)) for r in done],
                            how="vertical")
        per_run = pl.DataFrame({
            "run_key": [r.key for r in done], "point": [r.point.index for r in done],
            "label": [r.point.label for r in done], "repeat": [r.repeat for r in done],
            "seed": [r.seed for r in done],
            **{c: [column_value(r.point.values.get(c), dtypes[c]) for r in done]
               for c in plan.columns}}, schema=schema)
        df = (metrics.join(per_run, on="run_key", how="left", maintain_order="left")
              .select(*schema, *SCHEMA, "ccbench_version"))
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
