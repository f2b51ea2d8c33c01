"""The simulator backend: resolved experiment → Rust event loop → Parquet tables."""
from __future__ import annotations

import json
import sys
import time
from typing import Callable

import numpy as np
import polars as pl

from .. import _core

_DTYPES = {"u8": np.uint8, "u32": np.uint32, "u64": np.uint64, "i32": np.int32,
           "i64": np.int64, "f64": np.float64, "bool": np.uint8}
NULL_I64 = np.iinfo(np.int64).min


def _column(name: str, dtype: str, buf: bytes, cats) -> pl.Series:
    if dtype == "cat":
        codes = np.frombuffer(buf, dtype=np.uint8)
        return pl.Series(name, np.asarray(cats, dtype=object)[codes].astype(str), dtype=pl.String)
    arr = np.frombuffer(buf, dtype=_DTYPES[dtype])
    if dtype == "bool":
        return pl.Series(name, arr.astype(bool))
    if dtype == "f64":
        return pl.Series(name, arr, nan_to_null=True)
    s = pl.Series(name, arr)
    if dtype == "i64" and (arr == NULL_I64).any():
        s = s.to_frame().select(
            pl.when(pl.col(name) == NULL_I64).then(None).otherwise(pl.col(name)).alias(name)
        ).to_series()
    if dtype == "i32" and name == "drop_link":
        s = s.to_frame().select(
            pl.when(pl.col(name) < 0).then(None).otherwise(pl.col(name)).alias(name)
        ).to_series()
    return s


def _progress_printer(stream=sys.stderr) -> Callable[[int, int], None]:
    """Live bar on a terminal, periodic lines otherwise (ccbench.progress)."""
    from ..progress import printer
    return printer("simulating", stream)


class NotOnSimulator(RuntimeError):
    """The experiment uses something only the emulation backend can run."""


def check_supported(experiment: dict) -> None:
    """Raise NotOnSimulator when a flow is a command scheme (real programs: emu only)."""
    cmd = [f for f in experiment.get("flows", []) if f.get("command")]
    if cmd:
        f = cmd[0]
        raise NotOnSimulator(
            f"{f['label']} is a command scheme ({f['command']['kind']} {f['scheme']!r}): "
            f"command schemes run only on --backend emu")


def simulate(experiment: dict, progress: bool | Callable[[int, int], None] = False):
    """Run a resolved experiment; returns ({table: DataFrame}, stats dict, wall seconds)."""
    check_supported(experiment)
    cb = _progress_printer() if progress is True else (progress or None)
    text = json.dumps(experiment, sort_keys=True)
    from ..cc.runtime import externals
    ext = externals(experiment)  # Python schemes (docs/python-schemes.md)
    t0 = time.perf_counter()
    out = _core.run_sim(text, cb, externals=ext) if ext else _core.run_sim(text, cb)
    wall = time.perf_counter() - t0
    tables = {}
    for name, cols in out["tables"].items():
        tables[name] = pl.DataFrame([_column(*c) for c in cols])
    return tables, json.loads(out["stats"]), wall
