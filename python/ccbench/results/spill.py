"""Records that grow with a run, spilled to disk while it runs and written as Parquet from the
chunks, so that neither the simulator core nor Python holds a whole table (docs/robustness.md,
"Records streamed to disk").

The simulator hands over the rows of ``packets``, ``flows`` and ``queues`` in chunks
(``_core.run_sim(..., sink=Spill.sink)``); each chunk is written at once as an Arrow IPC file
into a temporary folder beside the results folder. At the end a `SpilledTable` stands for the
whole table: the chunks, then the rows recorded after the last chunk, with

* the ``cc_<name>`` columns of ``flows`` that appeared after a chunk was written added to it
  as nulls (the core fills them with NaN, which decodes to null);
* the fates of packets whose row went out while they were still in the network
  (``late_arrivals``, ``late_drops``) applied to their rows.

`write_results` writes it with ``sink_parquet`` a row group at a time. Every table, spilled or
not, is written with `ROW_GROUP_ROWS` rows per row group, which makes the Parquet bytes
independent of the chunk size (tests/test_spill.py).
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from .schema import decode

#: Rows per Parquet row group of every results table (spilled or not).
ROW_GROUP_ROWS = 1 << 18
#: Rows per chunk the core hands over (a chunk of packets: ~24 MiB in the core); the
#: environment's CCBENCH_SPILL_ROWS replaces it (tests use small chunks).
SPILL_ROWS = 1 << 19


def spill_rows() -> int:
    """The chunk size of this process: CCBENCH_SPILL_ROWS or `SPILL_ROWS`."""
    import os
    v = os.environ.get("CCBENCH_SPILL_ROWS")
    if v is None:
        return SPILL_ROWS
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"CCBENCH_SPILL_ROWS must be a positive number of rows, got {v!r}")
    return n
#: The tables the simulator spills.
SPILLED = ("packets", "flows", "queues")


class SpilledTable:
    """A table held as IPC chunk files plus a tail frame; quacks like a DataFrame where
    `write_results` and `schema.check` look (``columns``, ``schema``, ``height``)."""

    def __init__(self, name: str, files: list[tuple[Path, int]], tail: pl.DataFrame,
                 late: dict[str, pl.DataFrame] | None = None):
        self.name = name
        self.files = files
        self.tail = tail
        self.late = {k: v for k, v in (late or {}).items() if v.height}
        self.schema = tail.schema
        self.columns = tail.columns
        self.height = sum(n for _, n in files) + tail.height

    def _frames(self):
        """The table's rows, a chunk at a time, in the table's columns and order."""
        cols = self.columns
        off = 0
        for path, n in self.files:
            df = pl.read_ipc(path)
            missing = [pl.lit(None, dtype=self.schema[c]).alias(c) for c in cols if c not in df.columns]
            if missing:
                df = df.with_columns(missing)
            yield self._apply_late(df.select(cols), off)
            off += n
        yield self._apply_late(self.tail, off)

    def _apply_late(self, df: pl.DataFrame, off: int) -> pl.DataFrame:
        """Rows ``off ..`` of `packets` with the fates learnt after they went out (in the
        order learnt: the last one of a row wins, as it would have in the core)."""
        for kind, cols in (("late_arrivals", ["arrival_ns"]),
                           ("late_drops", ["drop_link", "drop_ns", "drop_reason"])):
            late = self.late.get(kind)
            if late is None:
                continue
            late = (late.filter((pl.col("row") >= off) & (pl.col("row") < off + df.height))
                    .unique("row", keep="last", maintain_order=True))
            if not late.height:
                continue
            late = late.select((pl.col("row") - off).cast(pl.UInt32).alias("_row"),
                               *[pl.col(c).alias(f"_late_{c}") for c in cols])
            df = (df.with_row_index("_row")
                  .join(late, on="_row", how="left", maintain_order="left")
                  .with_columns([pl.coalesce(f"_late_{c}", c).alias(c) for c in cols])
                  .select(self.columns))
        return df

    def lazy(self) -> pl.LazyFrame:
        """The whole table as a LazyFrame that reads one chunk at a time."""
        from polars.io.plugins import register_io_source

        def source(with_columns, predicate, n_rows, batch_size):
            for df in self._frames():
                if with_columns is not None:
                    df = df.select(with_columns)
                if predicate is not None:
                    df = df.filter(predicate)
                yield df

        return register_io_source(source, schema=self.schema)

    def collect(self) -> pl.DataFrame:
        """The whole table in memory (what the spill avoids; for callers that need it)."""
        return pl.concat(list(self._frames()))


class Spill:
    """Receives the chunks the simulator hands over and writes each as an IPC file into
    `directory` (removed by whoever made it; nothing here outlives the run)."""

    def __init__(self, directory: str | Path, rows: int = SPILL_ROWS):
        self.directory = Path(directory)
        self.rows = int(rows)
        self.files: dict[str, list[tuple[Path, int]]] = {t: [] for t in SPILLED}

    def sink(self, name: str, cols: list) -> None:
        df = decode(cols)
        files = self.files[name]
        path = self.directory / f"{name}.{len(files):06d}.arrow"
        df.write_ipc(path, compression="uncompressed")
        files.append((path, df.height))
        from ..interrupt import checkpoint
        checkpoint("spill")   # tests of interruption stop here (ccbench.interrupt)

    def tables(self, tables: dict[str, pl.DataFrame], late: dict[str, pl.DataFrame]) -> dict:
        """The run's tables, those with chunks on disk as `SpilledTable` (the rest as given)."""
        out = dict(tables)
        for name, files in self.files.items():
            if files and name in out:
                out[name] = SpilledTable(name, files, out[name], late if name == "packets" else None)
        return out
