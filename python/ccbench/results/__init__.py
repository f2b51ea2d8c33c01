"""Results directories: loading (and, in writer.py, atomic writing) of the tables of one run.

The schema is documented in docs/architecture.md ("Results directory") and declared in
schema.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from .schema import SCHEMAS, Encoded

TABLES = tuple(SCHEMAS)


#: Tables `load` leaves on disk until first used: the ones that grow with the run.
DEFERRED = ("packets", "flows", "queues")


class _Unread:
    """Stands for a table of a results folder not read yet."""

    def __repr__(self) -> str:
        return "<not read yet>"


_UNREAD = _Unread()


def unread() -> _Unread:
    """The value that makes `Results` read a table from its folder when first used."""
    return _UNREAD


class Results:
    """The tables and metadata of one run. Absent tables are None (e.g. packets when off);
    ``conns`` holds one row per short-flow arrival (groups with ``arrivals``), else None;
    ``probes`` one row per latency probe (``scheme: probe`` groups), else None.

    A table named in `DEFERRED` is read from the folder when first used, so analyses that only
    need aggregates over it (`scan`) never hold it whole (docs/robustness.md). A run not yet
    written (``api.run(..., summarize=)``) may hold a table as its spilled chunks
    (spill.SpilledTable: `scan` reads them a chunk at a time) or as the backend's encoded
    columns (schema.Encoded: decoded on first use)."""

    def __init__(self, path, meta: dict, packets=None, flows=None, queues=None, intervals=None,
                 delay_hist=None, flowstats=None, conns=None, probes=None):
        self.path = Path(path)
        self.meta = meta
        self._tables = {"packets": packets, "flows": flows, "queues": queues,
                        "intervals": intervals, "delay_hist": delay_hist,
                        "flowstats": flowstats, "conns": conns, "probes": probes}

    def _file(self, name: str) -> Path:
        return self.path / f"{name}.parquet"

    def _get(self, name: str):
        v = self._tables[name]
        if isinstance(v, _Unread):
            f = self._file(name)
            if not f.is_file():
                raise FileNotFoundError(f"{self.path}: {f.name} is gone since the folder was loaded")
            v = self._tables[name] = pl.read_parquet(f)
        elif isinstance(v, Encoded):
            v = self._tables[name] = v.collect()
        elif v is not None and not isinstance(v, pl.DataFrame):
            v = v.collect()  # a table spilled during the run (spill.SpilledTable), not held
        return v

    def in_memory(self, name: str) -> bool:
        """Whether table `name` has been read (or was given) as a DataFrame (or encoded
        columns, decoded on first use)."""
        return isinstance(self._tables[name], (pl.DataFrame, Encoded))

    def values(self, name: str, columns) -> dict[str, list]:
        """Columns of table `name` as lists of Python values (nulls as None), as
        ``table[c].to_list()``; a table still encoded (a run not yet written) decodes only
        these columns, without building its DataFrame (campaign index rows, ~0.3 ms a run)."""
        v = self._tables[name]
        if isinstance(v, Encoded):
            return {c: v.values(c) for c in columns}
        t = self._get(name)
        return {c: t.get_column(c).to_list() for c in columns}

    def arrays(self, name: str, columns) -> dict:
        """Columns of table `name` as numpy arrays, as ``table[c].to_numpy()``; see `values`."""
        v = self._tables[name]
        if isinstance(v, Encoded):
            return {c: v.array(c) for c in columns}
        t = self._get(name)
        return {c: t.get_column(c).to_numpy() for c in columns}

    def has(self, name: str) -> bool:
        """Whether the run has table `name` (without reading it)."""
        return self._tables[name] is not None

    def scan(self, name: str) -> pl.LazyFrame | None:
        """Table `name` as a LazyFrame: a scan of its Parquet file while it is not read (a
        query run with ``engine="streaming"`` then holds a bounded part of it), else the
        table in memory; None when the run has no such table."""
        v = self._tables[name]
        if isinstance(v, _Unread):
            return pl.scan_parquet(self._file(name))
        if isinstance(v, Encoded):
            v = self._get(name)
        return None if v is None else v.lazy()

    @property
    def experiment(self) -> dict:
        return self.meta["experiment"]

    def to_pandas(self, name: str):
        """Table ``name`` as a pandas DataFrame (needs pandas and pyarrow); None when the run
        has no such table."""
        if name not in TABLES:
            raise ValueError(f"unknown table {name!r}; tables: {', '.join(TABLES)}")
        t = self._get(name)
        return None if t is None else t.to_pandas()

    def __repr__(self) -> str:
        return f"Results({str(self.path)!r}, tables={[t for t in TABLES if self.has(t)]})"


def _table_property(name: str) -> property:
    return property(lambda self: self._get(name),
                    lambda self, v: self._tables.__setitem__(name, v),
                    doc=f"The {name} table (a polars DataFrame), or None.")


for _t in TABLES:
    setattr(Results, _t, _table_property(_t))


def load(path: str | Path) -> Results:
    """Load a results directory written by any backend (the tables in `DEFERRED` are read
    when first used)."""
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
        if not f.is_file():
            tables[name] = None
        else:
            tables[name] = _UNREAD if name in DEFERRED else pl.read_parquet(f)
    return Results(path=path, meta=meta, **tables)
