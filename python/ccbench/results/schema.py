"""The results tables' schemas, declared once for Python; the one decoder of the column
encoding both backends produce; and the check every written table passes.

The Rust writers declare the same columns in `netmodel::records::schema`
(`ccbench._core.table_schemas()`); tests/test_results_schema.py fails when the two drift.
Column meanings: docs/architecture.md, "Results directory".

Encoding: a column is ``(name, dtype, buffer, categories)``, its values little-endian in the
buffer; dtype is one of u8 u32 u64 i32 i64 f64 bool cat (u8 codes into ``categories``). Nulls:
``i64::MIN`` in i64 columns, a negative ``drop_link``, NaN in f64 columns. The simulator hands
columns over through its bindings, the emulator's engine and agents as files
(``<table>.<column>.bin`` plus a ``<table>.columns.json`` manifest).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import numpy as np
import polars as pl

U32, U64, I32, I64, F64 = pl.UInt32, pl.UInt64, pl.Int32, pl.Int64, pl.Float64

SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    "packets": {"flow": U32, "seq": U64, "size": U32, "retrans": pl.Boolean, "sent_ns": I64,
                "arrival_ns": I64, "drop_link": I32, "drop_ns": I64, "drop_reason": pl.String},
    "flows": {"time_ns": I64, "flow": U32, "cwnd": U32, "ssthresh": I64, "srtt_us": F64,
              "rttvar_us": F64, "min_rtt_us": F64, "inflight": U32, "delivered": U64,
              "bytes_acked": U64, "retrans": U64, "lost": U64, "ca_state": pl.String,
              "pacing_rate_bps": F64, "delivery_rate_bps": F64},
    "queues": {"time_ns": I64, "link": U32, "packets": U32, "bytes": U64, "drops": U64,
               "dropped_bytes": U64, "tx_bytes": U64, "loss_drops": U64, "marks": U64,
               "sojourn_us": F64},
    "intervals": {"bin": I64, "flow": U32, "sent_bytes": U64, "sent_pkts": U64,
                  "delivered_bytes": U64, "delivered_pkts": U64, "delay_sum_ns": U64,
                  "dropped_bytes": U64, "dropped_pkts": U64},
    "delay_hist": {"flow": U32, "bucket": U32, "count": U64},
    "flowstats": {"flow": U32, "sent_bytes": U64, "sent_pkts": U64, "delivered_bytes": U64,
                  "delivered_pkts": U64, "dropped_bytes": U64, "dropped_pkts": U64,
                  "retrans_pkts": U64, "first_sent_ns": I64, "last_sent_ns": I64,
                  "first_arrival_ns": I64, "last_arrival_ns": I64, "delay_sum_ns": U64,
                  "app_bytes": U64, "start_ns": I64, "completed_ns": I64},
    "conns": {"conn": U32, "flow": U32, "size_bytes": U64, "start_ns": I64,
              "completed_ns": I64, "acked_bytes": U64, "retrans_pkts": U64},
    # latency probes (scheme: probe): rtt_ns null = no echo came back
    "probes": {"flow": U32, "seq": U64, "sent_ns": I64, "rtt_ns": I64},
}
#: Categories of the string columns (codes in the encoding).
CATEGORIES = {("packets", "drop_reason"): ("none", "queue", "loss", "unseen", "channel"),
              ("flows", "ca_state"): ("open", "disorder", "cwr", "recovery", "loss")}
#: `flows` ends with the algorithm's own `cc_<name>` Float64 columns.
CC_PREFIX = "cc_"

#: Encoding dtype of each polars type (cat for strings).
DTYPE_OF = {pl.UInt8: "u8", U32: "u32", U64: "u64", I32: "i32", I64: "i64", F64: "f64",
            pl.Boolean: "bool", pl.String: "cat"}
_NP = {"u8": np.uint8, "u32": np.uint32, "u64": np.uint64, "i32": np.int32, "i64": np.int64,
       "f64": np.float64, "bool": np.uint8}
NULL_I64 = np.iinfo(np.int64).min


class SchemaError(ValueError):
    """A table does not have its declared columns and types."""


def decode_column(name: str, dtype: str, buf, cats=None) -> pl.Series:
    """One encoded column as a polars Series, with its nulls."""
    if dtype == "cat":
        # each code's category as text (str() of it, as numpy's astype(str) gave), picked by
        # polars: 20x faster than a numpy object array for a packets table's drop_reason
        codes = pl.Series(np.frombuffer(buf, dtype=np.uint8))
        return pl.Series(name, [str(c) for c in cats], dtype=pl.String).gather(codes)
    arr = np.frombuffer(buf, dtype=_NP[dtype])
    if dtype == "bool":
        return pl.Series(name, arr.astype(bool))
    if dtype == "f64":  # NaN is null_mask's rule, done by polars on the way in
        return pl.Series(name, arr, nan_to_null=True)
    s = pl.Series(name, arr)
    nulls = null_mask(name, dtype, arr)
    if nulls is not None and nulls.any():
        s = s.set(pl.Series(nulls), None)
    return s


def decode(cols: Iterable[tuple]) -> pl.DataFrame:
    """A table from its encoded columns ``(name, dtype, buffer, categories)``. A list is
    emptied as it is decoded, so each column's buffer is freed once its Series exists (the
    records are held about once, not twice)."""
    if isinstance(cols, list):
        cols.reverse()
        series = []
        while cols:
            series.append(decode_column(*cols.pop()))
        return pl.DataFrame(series)
    return pl.DataFrame([decode_column(*c) for c in cols])


def null_mask(name: str, dtype: str, arr: np.ndarray) -> np.ndarray | None:
    """Which values of an encoded column stand for null (the one statement of the rules that
    `decode_column`, `column_values` and `Encoded.array` apply):
    NaN in f64, the minimum in i64, a negative `drop_link`; None for a column without nulls."""
    if dtype == "f64":
        return np.isnan(arr)
    if dtype == "i64":
        return arr == NULL_I64
    if dtype == "i32" and name == "drop_link":
        return arr < 0
    return None


def column_values(name: str, dtype: str, buf, cats=None) -> list:
    """One encoded column as a list of Python values, nulls as None: what
    ``decode_column(...).to_list()`` gives, without building a Series (a campaign's index
    rows read a few columns of three small tables a run: ~30 Series a run cost ~0.5 ms)."""
    if dtype == "cat":
        return [str(cats[c]) for c in np.frombuffer(buf, dtype=np.uint8).tolist()]
    arr = np.frombuffer(buf, dtype=_NP[dtype])
    if dtype == "bool":
        return arr.astype(bool).tolist()
    out = arr.tolist()
    nulls = null_mask(name, dtype, arr)
    if nulls is not None and nulls.any():
        return [None if n else x for x, n in zip(out, nulls.tolist())]
    return out


class Encoded:
    """A table as a backend encoded it, decoded when first used (`Results` decodes it on
    first access): a run that keeps only its summary decodes only the tables it reads, and
    only the columns it reads (`values`, `array`)."""

    def __init__(self, cols: list):
        self.cols = cols

    def collect(self) -> pl.DataFrame:
        return decode(self.cols)

    def _col(self, name: str) -> tuple:
        for c in self.cols:
            if c[0] == name:
                return c
        raise KeyError(f"no column {name!r} in the encoded table")

    def values(self, name: str) -> list:
        """Column `name` as Python values (nulls as None), as ``collect()[name].to_list()``."""
        return column_values(*self._col(name))

    def array(self, name: str) -> np.ndarray:
        """Column `name` as a numpy array, as ``collect()[name].to_numpy()`` (a column with
        nulls goes through polars, which gives them as NaN)."""
        c = self._col(name)
        dtype, buf = c[1], c[2]
        if dtype in _NP and dtype != "bool":
            arr = np.frombuffer(buf, dtype=_NP[dtype])
            nulls = null_mask(name, dtype, arr)
            if nulls is None or not nulls.any():
                return arr
        return decode_column(*c).to_numpy()


def read_columns(directory: str | Path, table: str) -> pl.DataFrame | None:
    """A table written as column files into `directory` (None if it is not there)."""
    d = Path(directory)
    man = d / f"{table}.columns.json"
    if not man.is_file():
        return None
    cols = [(c, dt, (d / f"{table}.{c}.bin").read_bytes(), cats)
            for c, dt, cats in json.loads(man.read_text())]
    return decode(cols)


def empty(table: str) -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMAS[table])


def check(table: str, df: pl.DataFrame) -> None:
    """Raise SchemaError unless `df` has exactly the declared columns of `table`, in order,
    with their types (`flows` may end with Float64 `cc_*` columns). Other tables (a
    backend's own diagnostics, e.g. emu_release) are not checked."""
    want = SCHEMAS.get(table)
    if want is None:
        return
    schema = df.schema  # once: a DataFrame builds a new Schema object on every access
    cols = list(schema)
    core = cols[:len(want)]
    extra = cols[len(want):]
    if core != list(want):
        raise SchemaError(f"table {table}: columns {cols} differ from the declared {list(want)} "
                          "(ccbench/results/schema.py)")
    for c, t in want.items():
        if schema[c] != t:
            raise SchemaError(f"table {table}: column {c} is {schema[c]}, declared {t}")
    for c in extra:
        if table != "flows" or not c.startswith(CC_PREFIX):
            raise SchemaError(f"table {table}: undeclared column {c}")
        if schema[c] != F64:
            raise SchemaError(f"table {table}: column {c} is {schema[c]}, cc_* columns are Float64")
