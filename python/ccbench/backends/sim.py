"""The simulator backend: resolved experiment → Rust event loop → Parquet tables."""
from __future__ import annotations

import json
import sys
import time
from typing import Callable

from .. import _core
from ..results.schema import Encoded, decode
from ..results.spill import Spill


def _progress_printer(stream=sys.stderr) -> Callable[[int, int], None]:
    """Live bar on a terminal, periodic lines otherwise (ccbench.progress)."""
    from ..progress import printer
    return printer("simulating", stream)


class NotOnSimulator(RuntimeError):
    """The experiment uses something only the emulation backend can run."""


def check_supported(experiment: dict) -> None:
    """Raise NotOnSimulator when a flow is a command scheme (real programs: emu only) or a BPF
    object (.o) rather than its C source (the simulator compiles the source natively)."""
    from ..config.semantic import sim_refusal
    err = sim_refusal(experiment)
    if err is not None:
        raise NotOnSimulator(str(err))


def _core_spills() -> bool:
    """Whether the compiled core hands records over in chunks (`run_sim(..., sink=)`); a
    checkout whose `_core` was built before that still runs, holding the tables whole."""
    return "sink=" in (getattr(_core.run_sim, "__text_signature__", None) or "")


def simulate(experiment: dict, progress: bool | Callable[[int, int], None] = False,
             capture: dict | None = None, spill: Spill | None = None, lazy: bool = False):
    """Run a resolved experiment; returns ({table: DataFrame}, stats dict, wall seconds).
    `capture`: write pcapng captures (ccbench.capture.export.capture_config). `spill`: the
    core hands the rows of packets, flows and queues over in chunks written to its folder
    while the run goes on; those tables come back as `SpilledTable` (ccbench.results.spill).
    `lazy`: the tables not spilled come back encoded (`schema.Encoded`), decoded when a
    `Results` first reads them."""
    check_supported(experiment)
    cb = _progress_printer() if progress is True else (progress or None)
    from .bpfsim import prepare
    text = json.dumps(prepare(experiment), sort_keys=True)  # BPF schemes built natively
    from ..cc.runtime import externals
    ext = externals(experiment)  # Python schemes (docs/python-schemes.md)
    t0 = time.perf_counter()
    kw = {"capture_json": json.dumps(capture) if capture else None}
    if ext:
        kw["externals"] = ext
    if spill is not None and not _core_spills():
        spill = None   # a core built before streaming: the tables come whole at the end
    if spill is not None:
        kw.update(sink=spill.sink, spill_rows=spill.rows)
    out = _core.run_sim(text, cb, **kw)
    wall = time.perf_counter() - t0
    tables = {}
    raw = out["tables"]
    spilled = {n for n, files in spill.files.items() if files} if spill is not None else set()
    for name in list(raw):
        if lazy and name not in spilled:
            tables[name] = Encoded(raw.pop(name))
        else:
            tables[name] = decode(raw.pop(name))  # frees each table's buffers as it goes
    if spill is not None:
        late = {k: decode(v) for k, v in out["late"].items()}
        spill.held_max = dict(out["held_max"])
        tables = spill.tables(tables, late)
    return tables, json.loads(out["stats"]), wall
