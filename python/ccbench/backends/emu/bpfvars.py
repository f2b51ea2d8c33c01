"""A BPF scheme's own variables on the kernel backend (``scheme: {bpf: ..., record: [...]}``,
docs/bpf-schemes.md "Recording a program's variables"): while the run goes, a thread reads the
program's global-data maps (``.bss``, ``.data``, ``.rodata``: the ones that share the
struct_ops map's BTF) every sampling interval through ``bpftool map dump``, whose output has
the variables by name (BTF-formatted); after the run each flow of the scheme gets the values
as ``cc_<var>`` columns of the flows table, the latest reading at or before each sample
(empty for a sample before the first reading, which is taken as the run starts). The
simulator reads the same globals from its build of the same file (backends/bpfsim.py), so a
recorded variable has one meaning on both backends: globals are shared by every socket of the
program, in the kernel as in the simulator."""
from __future__ import annotations

import threading
import time

import polars as pl

from ...config.bpfschemes import column_of
from .bpf import global_maps, read_globals

#: The fastest the thread reads (one bpftool process per map per reading).
MIN_INTERVAL_NS = 50_000_000


class VarSampler:
    """Reads the recorded globals of the run's BPF schemes until stopped."""

    def __init__(self, exp: dict, entries: list[dict], t0: int):
        self.t0 = t0
        self.interval = max(int(exp.get("sample_interval_ns") or 0), MIN_INTERVAL_NS) / 1e9
        # (flow ids, variables, map ids) per registered program that records something
        self.jobs: list[tuple[list[int], list[str], list[int]]] = []
        for e in entries:
            flows = [f for f in exp["flows"]
                     if (f.get("bpf") or {}).get("record") and f["bpf"].get("path") == e.get("src")]
            if flows:
                record = list(dict.fromkeys(v for f in flows for v in f["bpf"]["record"]))
                self.jobs.append(([f["id"] for f in flows], record, global_maps(e)))
        self.rows: list[list[tuple[int, dict]]] = [[] for _ in self.jobs]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bpf-vars", daemon=True)

    def start(self) -> "VarSampler":
        if self.jobs:
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        # the first reading at the run's start (t0), then one per interval
        if self._stop.wait(max(0.0, (self.t0 - time.monotonic_ns()) / 1e9)):
            return
        while not self._stop.is_set():
            now = max(0, time.monotonic_ns() - self.t0)
            for rows, (_, record, maps) in zip(self.rows, self.jobs):
                vals = read_globals(maps)
                rows.append((now, {v: vals.get(v) for v in record}))
            self._stop.wait(self.interval)

    def merge(self, flows: pl.DataFrame) -> pl.DataFrame:
        """``flows`` with each recording flow's cc_<var> columns (as-of each sample's time)."""
        for rows, (ids, record, _) in zip(self.rows, self.jobs):
            if not rows:
                continue
            vals = pl.DataFrame({"time_ns": [t for t, _ in rows],
                                 **{column_of(v): [r[v] for _, r in rows] for v in record}},
                                schema={"time_ns": pl.UInt64, **{column_of(v): pl.Float64 for v in record}})
            mine = flows.filter(pl.col("flow").is_in(ids))
            rest = flows.filter(~pl.col("flow").is_in(ids))
            mine = mine.drop([c for c in vals.columns if c != "time_ns" and c in mine.columns])
            joined = mine.sort("time_ns").join_asof(vals, on="time_ns", strategy="backward")
            flows = pl.concat([rest, joined], how="diagonal").sort(["time_ns", "flow"])
        return flows


__all__ = ["VarSampler", "MIN_INTERVAL_NS"]
