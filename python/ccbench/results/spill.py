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
not, is written with `ROW_GROUP_ROWS` rows per row group (`PARQUET_OPTIONS`), which makes the
Parquet bytes independent of the chunk size (tests/test_spill.py).

The tables with fixed columns (`STREAMED`: ``packets``, ``queues``) skip the chunk files: each
chunk goes straight into the table's Parquet file, written by a background thread
(`ParquetStream`, the same ``sink_parquet`` fed a frame at a time, so the same bytes) while the
run goes on; `write_results` moves the finished file into the results. A packet row that went
out while its packet was still in the network may learn its fate later; when the run ends with
such late fates, the streamed file is read back a slice at a time, patched and written again
(what the chunk files cost before, now only for those runs). ``flows`` keeps its chunk files:
its ``cc_*`` columns are known only at the end.
"""
from __future__ import annotations

import queue
import threading
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
#: Those whose chunks go straight into their Parquet file (columns fixed from the first chunk).
STREAMED = ("packets", "queues")
#: How every results table is written (results/writer.py and `ParquetStream`).
PARQUET_OPTIONS = dict(compression="zstd", statistics=True, row_group_size=ROW_GROUP_ROWS)


class SpilledTable:
    """A table held as IPC chunk files plus a tail frame; quacks like a DataFrame where
    `write_results` and `schema.check` look (``columns``, ``schema``, ``height``)."""

    def __init__(self, name: str, files: list[tuple[Path, int]], tail: pl.DataFrame,
                 late: dict[str, pl.DataFrame] | None = None,
                 base: tuple[Path, int] | None = None):
        self.name = name
        self.files = files
        self.tail = tail
        self.late = {k: v for k, v in (late or {}).items() if v.height}
        self.base = base   # (a streamed Parquet file, its rows): the rows before `files`
        self.schema = tail.schema
        self.columns = tail.columns
        self.height = (base[1] if base else 0) + sum(n for _, n in files) + tail.height

    def _frames(self):
        """The table's rows, a chunk at a time, in the table's columns and order."""
        cols = self.columns
        off = 0
        if self.base:
            path, rows = self.base
            scan = pl.scan_parquet(path)
            for start in range(0, rows, 2 * ROW_GROUP_ROWS):
                df = scan.slice(start, 2 * ROW_GROUP_ROWS).collect()
                yield self._apply_late(df.select(cols), off)
                off += df.height
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


class StreamedTable:
    """A table written whole into its Parquet file while the run went on (`ParquetStream`);
    `write_results` moves the file. Quacks like `SpilledTable` (``columns``, ``schema``,
    ``height``, ``collect``)."""

    def __init__(self, name: str, parquet: Path, schema, height: int):
        self.name = name
        self.parquet = Path(parquet)
        self.schema = schema
        self.columns = list(schema)
        self.height = height

    def lazy(self) -> pl.LazyFrame:
        return pl.scan_parquet(self.parquet)

    def collect(self) -> pl.DataFrame:
        return pl.read_parquet(self.parquet)


class _Abort(Exception):
    """Stops a `ParquetStream`'s writer (the run failed or was interrupted)."""


class ParquetStream:
    """One Parquet file written by a background thread from the frames `push`ed to it: a
    ``sink_parquet`` whose source waits for the next frame (at most two wait, so the run
    blocks rather than holding more). `close` ends the file; `abort` stops the writer,
    leaving a partial file for its owner's temporary folder to take away."""

    def __init__(self, path: Path, schema):
        self.path = Path(path)
        self.schema = schema
        self.rows = 0
        self._q: queue.Queue = queue.Queue(maxsize=2)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._write, name=f"parquet {self.path.name}",
                                        daemon=True)
        self._thread.start()

    def _source(self, with_columns, predicate, n_rows, batch_size):
        while True:
            df = self._q.get()
            if df is None:
                return
            if df is _Abort:
                raise _Abort(self.path.name)
            yield df if with_columns is None else df.select(with_columns)

    def _write(self) -> None:
        from polars.io.plugins import register_io_source
        try:
            register_io_source(self._source, schema=self.schema).sink_parquet(
                self.path, **PARQUET_OPTIONS)
        except BaseException as e:   # noqa: BLE001  (raised in the owner's thread)
            self._error = e

    def _put(self, item) -> None:
        while True:
            if not self._thread.is_alive():
                raise RuntimeError(f"writing {self.path.name} stopped: {self._error!r}")
            try:
                self._q.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def push(self, df: pl.DataFrame) -> None:
        if df.schema != self.schema:
            raise ValueError(f"{self.path.name}: a chunk with columns {df.schema} "
                             f"after {self.schema}")
        self._put(df)
        self.rows += df.height

    def close(self) -> None:
        """Write the rest and end the file (raises what the writer raised)."""
        self._put(None)
        self._thread.join()
        if self._error is not None:
            raise RuntimeError(f"writing {self.path.name} failed") from self._error

    def abort(self) -> None:
        """Stop the writer and wait for it (nothing of the file is kept)."""
        while self._thread.is_alive():
            try:
                self._q.put(_Abort, timeout=0.2)
                break
            except queue.Full:
                try:
                    self._q.get_nowait()
                except queue.Empty:
                    pass
        self._thread.join()


class Spill:
    """Receives the chunks the simulator hands over: those of `STREAMED` tables go into their
    Parquet file (`ParquetStream`), the others are written as IPC files, all into
    `directory` (removed by whoever made it; nothing here outlives the run). `tables` ends
    the streams; `abort` stops them (the run failed)."""

    def __init__(self, directory: str | Path, rows: int = SPILL_ROWS):
        self.directory = Path(directory)
        self.rows = int(rows)
        self.files: dict[str, list[tuple[Path, int]]] = {t: [] for t in SPILLED}
        self.streams: dict[str, ParquetStream] = {}
        self.chunks = dict.fromkeys(SPILLED, 0)   # chunks handed over, per table

    def sink(self, name: str, cols: list) -> None:
        df = decode(cols)
        self.chunks[name] += 1
        if name in STREAMED:
            st = self.streams.get(name)
            if st is None:
                st = self.streams[name] = ParquetStream(
                    self.directory / f"{name}.streamed.parquet", df.schema)
            st.push(df)
        else:
            files = self.files[name]
            path = self.directory / f"{name}.{len(files):06d}.arrow"
            df.write_ipc(path, compression="uncompressed")
            files.append((path, df.height))
        from ..interrupt import checkpoint
        checkpoint("spill")   # tests of interruption stop here (ccbench.interrupt)

    def abort(self) -> None:
        for st in self.streams.values():
            st.abort()
        self.streams = {}

    def tables(self, tables: dict[str, pl.DataFrame], late: dict[str, pl.DataFrame]) -> dict:
        """The run's tables, those with chunks on disk as `SpilledTable` or `StreamedTable`
        (the rest as given)."""
        out = dict(tables)
        try:
            for name, files in self.files.items():
                if files and name in out:
                    out[name] = SpilledTable(name, files, out[name],
                                             late if name == "packets" else None)
            for name, st in self.streams.items():
                out[name] = self._end_stream(name, st, out[name],
                                             late if name == "packets" else {})
        except BaseException:
            self.abort()
            raise
        self.streams = {}
        return out

    @staticmethod
    def _end_stream(name: str, st: ParquetStream, tail: pl.DataFrame, late: dict):
        """The tail written and the file closed; with late fates for the streamed rows, a
        `SpilledTable` that patches them while the table is written again."""
        if not any(v.height for v in late.values()):
            if tail.height:
                st.push(tail.select(list(st.schema)))
            st.close()
            return StreamedTable(name, st.path, st.schema, st.rows)
        st.close()
        return SpilledTable(name, [], tail, late, base=(st.path, st.rows))
