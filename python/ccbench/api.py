"""The importable steps behind the CLI: load an experiment, run it, analyse and plot results.

    import ccbench
    exp = ccbench.load_experiment("examples/quickstart.yaml")
    res = ccbench.run(exp, "results/quickstart")      # → ccbench.Results (polars DataFrames)
    an = ccbench.analyze(res, "per-scheme", interval=0.5)
    ccbench.plot(res)

Every command of the CLI about one experiment or one run goes through this module (campaigns
through ``ccbench.campaign``, the catalogue through ``ccbench.catalogue``): experiments
(`load_experiment`, `resolve`, `validate`), runs (`run`, `run_both`), results (`summary_text`,
`stats_text`, `analyze`, `plot`, `report`, `check`), comparisons (`compare`, `comparison_text`,
`compare_runs`, `write_comparison`), the registry (`schemes`) and the emulation host (`doctor`, `clean`).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import hashlib
import json
import platform
import re
import subprocess
from pathlib import Path

from . import config as _config
from . import interrupt  # noqa: F401  (the CLI's Ctrl-C/SIGTERM handling, ccbench.interrupt)
from .config.errors import ConfigError, ConfigErrors
from .results import Results, load
from .results.export import ExportError, export_tables  # noqa: F401  (the CLI's door)
from .results.writer import write_results
from .capture.export import DEFAULT_SNAPLEN as PCAP_SNAPLEN

#: What `run` keeps of a run: its tables (default), or only its metadata and summary.
KEEP = ("tables", "summary")

__version__ = "0.1.0"


def _read_yaml(path: Path):
    """The document's data, or None when it cannot be read or parsed (the config layer then
    reports why, with the line). Shape-guarded: no alias bomb or deep nesting gets through."""
    try:
        return _config.read_yaml(path).data
    except _config.ConfigErrors:
        return None


def _results(results: Results | str | Path) -> Results:
    return results if isinstance(results, Results) else load(results)


def load_experiment(path: str | Path, *, seed: int | None = None, coco: dict | None = None,
                    lenient: bool = False) -> dict:
    """Resolve an experiment file: native ccbench YAML, or a CoCo-Beholder layout file (a
    top-level list of flow groups) with the central link given by `coco` options
    (base, delta, step, jitter, runtime, rate, max_delay_us, queue, first_queue, second_queue)."""
    path = Path(path)
    if path.is_dir():
        raise FileNotFoundError(f"experiment file {path} is a directory, not a file; "
                                "give the YAML file inside it")
    if not path.exists():
        raise FileNotFoundError(f"experiment file {path} does not exist")
    doc = _read_yaml(path)
    if isinstance(doc, list):
        opts = dict(coco or {})
        if seed is not None:
            opts["seed"] = seed
        return _config.load_coco(path, lenient=lenient, schemes=registry(), **opts)
    if coco:
        raise _config.ConfigError(
            "--" + next(iter(coco)).replace("_", "-"),
            "CoCo-Beholder central-link options apply only to layout files",
            "set the central link in the experiment file's `central:` mapping instead")
    exp = _config.load(path, seed=seed, schemes=registry())
    if isinstance(doc, dict) and doc.get("expect") is not None:
        from . import expect as _expect
        try:
            exp["expect"] = _expect.parse(doc["expect"], exp["flows"], exp["links"],
                                          duration_ns=exp.get("duration_ns"))
        except _expect.ExpectError as e:
            raise _config.ConfigError("expect", str(e), source=str(path)) from None
    return exp


def resolve(path: str | Path, *, seed: int | None = None, coco: dict | None = None,
            lenient: bool = False) -> dict:
    """The resolved experiment of a file, as the backends receive it (`ccbench resolve`); the
    same as `load_experiment`."""
    return load_experiment(path, seed=seed, coco=coco, lenient=lenient)


def validate(path: str | Path, *, seed: int | None = None, coco: dict | None = None,
             lenient: bool = False) -> list[ConfigError]:
    """Every problem of an experiment file (native or CoCo-Beholder layout), as a list of
    `ConfigError` (empty = valid). A missing file raises `FileNotFoundError`."""
    try:
        exp = load_experiment(path, seed=seed, coco=coco, lenient=lenient)
    except ConfigErrors as errs:
        return list(errs.errors)
    except ConfigError as e:
        return [e]
    return _core_param_errors(exp, str(path))


_PARAM_MSG = re.compile(r'parameter "([^"]+)" of scheme "[^"]+" (.*)$')


def _core_param_errors(exp: dict, source: str) -> list[ConfigError]:
    """The scheme-parameter ranges only the simulator knows (`beta` of cubic in [1, 1023],
    an integer): build each group's congestion control once, as `run` would, without running
    anything, so that `validate` refuses what `run` would refuse."""
    try:
        from ._core import Stepper
    except ImportError:
        return []
    out: list[ConfigError] = []
    seen: set = set()
    for f in exp.get("flows", []):
        g = f.get("group", 0)
        if g in seen or f.get("python") or not f.get("params"):
            continue
        seen.add(g)
        probe = {**exp, "flows": [{**f, "id": 0}]}
        probe.pop("expect", None)
        try:
            Stepper(json.dumps(probe, sort_keys=True))
        except Exception as e:   # only the parameter messages are ours to report here
            m = _PARAM_MSG.search(str(e))
            if m:
                out.append(ConfigError(("flows", g, "params", m.group(1)), m.group(2),
                                       source=source))
    return out


@functools.lru_cache(maxsize=1)
def _git_commit() -> str | None:
    """The checkout's commit (once per process: campaigns run thousands of runs)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def new_scheme(name: str, out_dir: str | Path = "."):
    """``ccbench new scheme NAME``: write NAME.c (a commented congestion control in C that runs
    on both backends) and NAME.yaml (it next to CUBIC, with expectations) into ``out_dir``;
    the files written."""
    from .cc.scaffold import new_scheme as _new
    return _new(name, out_dir)


def version_text() -> str:
    """``ccbench --version``: the package, the compiled core and, in a git checkout, the
    commit (with "modified" when tracked files have changes)."""
    from . import _core
    commit = _git_commit()
    where = ", installed package"
    if commit:
        try:
            st = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=Path(__file__).parent, capture_output=True, text=True,
                                timeout=5).stdout
        except (OSError, subprocess.SubprocessError):
            st = ""
        where = f", commit {commit[:12]}{' (modified)' if st.strip() else ''}"
    return f"ccbench {__version__} (simulator core {getattr(_core, '__version__', '?')}{where})"


def run(experiment: dict | str | Path, out_dir: str | Path | None = None, *,
        seed: int | None = None, packets: bool | None = None, progress=False,
        overwrite: bool = True, source: str | None = None, backend: str = "sim",
        reload: bool = True, pcap: int | None = None, budget: bool = True,
        memory_budget: int | str | None = None, spill_rows: int | None = None,
        keep: str = "tables", summarize=None, recover: bool = True,
        compact: bool = False) -> Results:
    """Run an experiment and write its results directory.

    `experiment` is a resolved experiment dict, an experiment document (a dict as the YAML
    file would give, resolved here) or a path to an experiment file. `seed` and
    `packets` override the file's values. `backend` is "sim" (the simulator) or "emu" (real
    kernel TCP in network namespaces, docs/emulation.md; needs root). `pcap`: also write
    pcapng captures to DIR/pcap/, keeping this many bytes per packet (0 = whole packets;
    docs/captures.md). Returns the loaded `Results` (``reload=False``: the tables as
    computed, without reading them back).

    Before anything runs, the run's memory and time are estimated (ccbench.budget) and a
    run over budget raises ``budget.BudgetError`` with the estimate; ``memory_budget``
    (bytes) replaces the default (80 % of the available memory), ``budget=False`` skips it.

    On the simulator the per-packet records and the flow and queue samples go to disk in
    chunks of at least ``spill_rows`` rows while the run goes on (default: the environment's
    CCBENCH_SPILL_ROWS, else ``results.spill.SPILL_ROWS``; docs/robustness.md): the tables
    written are the same whatever the chunk size.

    ``keep="summary"`` writes the directory without its tables: ``metadata.json``,
    ``complete.json`` and, with ``summarize`` (a function of the run's `Results` as computed,
    called before anything is written, returning a JSON-able dict), its ``summary.json`` —
    all in the same atomic rename. Campaigns use it (``ccbench sweep --keep summary``,
    docs/campaigns.md). The `Results` returned then holds the tables that were in memory
    (those spilled to disk during the run are None: their chunks are gone).

    ``recover=False``: leave the temporaries of killed writers beside ``out_dir`` alone (the
    caller removes them; a campaign does once per session, results.writer.write_results).
    ``compact=True``: ``metadata.json`` as one line of JSON rather than indented (campaigns
    write thousands; the indented encoder is CPython's pure-Python one)."""
    _check_run_args(backend, spill_rows)
    if keep not in KEEP:
        raise ValueError(f"keep must be one of {', '.join(KEEP)}, got {keep!r}")
    if keep == "summary" and pcap is not None:
        raise ValueError("keep='summary' writes no tables; captures (pcap) need keep='tables'")
    plan = _prepare_run(experiment, out_dir, seed=seed, packets=packets, source=source,
                        backend=backend, budget=budget, memory_budget=memory_budget)
    temps = _run_temporaries(plan, backend, pcap)
    try:
        done = _execute_run(plan, temps, backend=backend, progress=progress, pcap=pcap,
                            spill_rows=spill_rows, keep=keep)
    except BaseException:
        _remove_temporaries(temps)
        raise
    # the metadata is built inside the try whose finally removes the temporaries: an
    # interrupt there (git rev-parse may take a while) must not leave the spill behind
    try:
        path = _record_run(plan, done, temps, backend=backend, overwrite=overwrite,
                           keep=keep, summarize=summarize, recover=recover,
                           compact=compact)
    finally:
        _remove_temporaries(temps)
    if keep == "summary":   # the tables in memory (decoded when used); spilled ones are gone
        from .results import TABLES
        from .results.schema import Encoded
        import polars as pl
        # the metadata as written (its text kept, not read back)
        return Results(path=path, meta=json.loads(done.meta_json), **{
            t: v if isinstance(v, (pl.DataFrame, Encoded)) else None
            for t, v in ((t, done.tables.get(t)) for t in TABLES)})
    if temps.cap_dir is not None:
        from .capture.export import write_mapping
        write_mapping(load(path), path / "pcap")
    if reload:
        done.tables = None  # read back from disk below: never hold the computed and loaded copies at once
        return load(path)
    return _results_as_computed(path, done.tables, done.meta_json)


@dataclasses.dataclass
class _RunPlan:
    """What `run` runs and where: the experiment as the backend receives it (without its
    expectations, which go to the metadata only), its source and the results directory."""
    exp: dict
    expectations: object
    source: str | None
    out_dir: Path | str


@dataclasses.dataclass
class _RunTemporaries:
    """The run's temporary folders beside its results directory: pcapng captures being
    written (``pcap`` runs) and the simulator's spilled records (results/spill.py)."""
    cap_dir: Path | None = None
    spill_dir: Path | None = None   # once made (make_spill_dir, by the first chunk)
    make_spill_dir: object = None


@dataclasses.dataclass
class _RunOutput:
    """What the backend gave: its tables, its own metadata (``sim`` statistics or the
    emulator's), the capture summary and the wall time."""
    tables: dict | None
    stats: dict | None
    emu_meta: dict | None
    cap_summary: dict | None
    wall: float
    meta_json: str | None = None   # the text of metadata.json as written


def _check_run_args(backend: str, spill_rows) -> None:
    if backend == "both":
        raise ValueError("backend 'both' writes three directories: use ccbench.run_both")
    if backend not in ("sim", "emu"):
        raise ValueError(f"unknown backend {backend!r}: use 'sim', 'emu' or run_both()")
    import numbers
    if spill_rows is not None and (isinstance(spill_rows, bool)
                                   or not isinstance(spill_rows, numbers.Integral)
                                   or spill_rows < 1):
        raise ValueError(f"spill_rows must be a positive number of rows, got {spill_rows!r} "
                         "(None: CCBENCH_SPILL_ROWS or results.spill.SPILL_ROWS)")


def _prepare_run(experiment, out_dir, *, seed, packets, source, backend, budget,
                 memory_budget) -> _RunPlan:
    """Resolve the experiment, apply the overrides, name the results directory and check
    the run's memory and time budget (ccbench.budget)."""
    from .backends import sim as _sim
    if not isinstance(experiment, dict):
        source = source or str(experiment)
        experiment = load_experiment(experiment, seed=seed)
    elif "schema" not in experiment:  # a document, not yet resolved
        experiment = _config.resolve(experiment, seed=seed, source=source or "<dict>",
                                     schemes=registry())
    exp = dict(experiment)
    expectations = exp.pop("expect", None)  # not a simulator input; kept in the metadata
    if seed is not None:
        exp["seed"] = int(seed)
    if packets is not None:
        exp["record_packets"] = bool(packets)
    if out_dir is None:
        stem = Path(source).stem if source else "experiment"
        out_dir = Path("results") / stem
    from . import budget as _budget
    streamed = backend == "sim" and _sim._core_spills()
    # the free disk beside the results folder (its nearest existing parent; budget.free_disk)
    _budget.check(exp, memory_budget=memory_budget, enabled=budget, streamed=streamed,
                  disk_dir=Path(out_dir).parent if streamed else None)
    return _RunPlan(exp=exp, expectations=expectations, source=source, out_dir=out_dir)


def _run_temporaries(plan: _RunPlan, backend: str, pcap: int | None) -> _RunTemporaries:
    import tempfile
    out_dir = Path(plan.out_dir)
    temps = _RunTemporaries()
    if pcap is not None:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        temps.cap_dir = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.pcap-", dir=out_dir.parent))
    if backend == "sim":
        # The records that grow with the run go to disk in chunks while it runs
        # (results/spill.py); a killed run's folder is a stale temporary (results/writer.py).
        # Made when the first chunk comes: a short run that spills nothing makes no folder
        # (making and removing one was ~0.5 ms of a campaign's 1-s run).
        import os

        def make_spill_dir() -> Path:
            # (the results folder's parent is made here or by the writer, when missing:
            # a campaign's runs/ is there already, a stat a run fewer)
            out_dir.parent.mkdir(parents=True, exist_ok=True)
            temps.spill_dir = Path(tempfile.mkdtemp(
                prefix=f".{out_dir.name}.tmp-{os.getpid()}-spill-", dir=out_dir.parent))
            return temps.spill_dir
        temps.make_spill_dir = make_spill_dir
    return temps


def _remove_temporaries(temps: _RunTemporaries) -> None:
    import shutil
    for d in (temps.cap_dir, temps.spill_dir):
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)


def _execute_run(plan: _RunPlan, temps: _RunTemporaries, *, backend, progress, pcap,
                 spill_rows, keep: str = "tables") -> _RunOutput:
    """Run the experiment on the backend, capturing into ``temps.cap_dir`` if asked."""
    exp, cap_dir = plan.exp, temps.cap_dir
    emu_meta = stats = cap_summary = None
    if cap_dir is not None:
        from .capture import export as _cap
    if backend == "emu":
        from .backends import emu as _emu
        if cap_dir is not None:
            tables, emu_meta, wall = _emu.emulate(exp, progress=progress,
                                                  capture=_cap.capture_config(exp, cap_dir / "pcap", pcap))
            cap_summary = _cap.summary_of({"capture": emu_meta.pop("capture", None)})
        else:
            tables, emu_meta, wall = _emu.emulate(exp, progress=progress)
    else:
        from .backends import sim as _sim
        from .results.spill import Spill, spill_rows as default_spill_rows
        capture = _cap.capture_config(exp, cap_dir / "pcap", pcap) if cap_dir else None
        rows = int(spill_rows) if spill_rows is not None else default_spill_rows()
        tables, stats, wall = _sim.simulate(exp, progress=progress, capture=capture,
                                            spill=Spill(temps.make_spill_dir, rows),
                                            lazy=keep == "summary")
        if capture:
            cap_summary = _cap.summary_of(stats)
            stats = {k: v for k, v in stats.items() if k != "capture"}
    return _RunOutput(tables=tables, stats=stats, emu_meta=emu_meta, cap_summary=cap_summary,
                      wall=wall)


def _record_run(plan: _RunPlan, done: _RunOutput, temps: _RunTemporaries, *, backend,
                overwrite, keep: str = "tables", summarize=None, recover: bool = True,
                compact: bool = False) -> Path:
    """Write the results directory: the tables (``keep="tables"``) or the run's summary
    (``keep="summary"``), the metadata and the captures."""
    from . import _core
    exp = plan.exp
    meta = {
        "ccbench_version": __version__,
        "core_version": _core.__version__,
        "backend": backend,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": plan.source,
        "experiment": exp,
        "experiment_sha256": hashlib.sha256(json.dumps(exp, sort_keys=True).encode()).hexdigest(),
        "seed": exp.get("seed"),
        "wall_time_s": done.wall,
        **({"emu": done.emu_meta} if backend == "emu" else {"sim": done.stats}),
        "host": {"python": platform.python_version(), "platform": platform.platform()},
        "git_commit": _git_commit(),
        **({"expect": plan.expectations} if plan.expectations else {}),
        **({"capture": done.cap_summary} if done.cap_summary else {}),
    }
    cap_dir = temps.cap_dir
    written: dict = {}
    if keep == "summary":
        meta["kept"] = "summary"
        files = {}
        if summarize is not None:
            computed = Results(path=Path(plan.out_dir), meta={**meta, "tables": {}},
                               **done.tables)
            files["summary.json"] = (json.dumps(summarize(computed), sort_keys=True)
                                     + "\n").encode()
        path = write_results(plan.out_dir, {}, meta, overwrite=overwrite, files=files,
                             recover=recover, compact=compact, written=written)
    else:
        path = write_results(plan.out_dir, done.tables, meta, overwrite=overwrite,
                             extra_dirs={"pcap": cap_dir / "pcap"} if cap_dir else None,
                             recover=recover, compact=compact, written=written)
    done.meta_json = written["metadata.json"]  # the Results returned read it, not the file
    return path


def _results_as_computed(path: Path, tables: dict, meta_json: str) -> Results:
    """The `Results` of a run not read back (``reload=False``): the computed tables, with
    the metadata as written (`meta_json`, its text)."""
    from .results import TABLES, unread
    import polars as pl
    written = json.loads(meta_json)
    # a table spilled during the run is read from its Parquet file when first used
    return Results(path=path, meta=written, **{
        t: (v if v is None or isinstance(v, pl.DataFrame) else unread())
        for t, v in ((t, tables.get(t)) for t in TABLES)})


def export_pcap(results: Results | str | Path, out_dir: str | Path | None = None, *,
                snaplen: int = PCAP_SNAPLEN, progress=False, run_scheme_code: bool = False) -> dict:
    """pcapng per capture point of a finished run (default RESULTS/pcap; docs/captures.md);
    returns {dir, snaplen, points: [{name, file, kind, description, packets}]}. A run with
    Python or BPF schemes is simulated again only with ``run_scheme_code``."""
    from .capture.export import export_pcap as _export
    return _export(results, out_dir, snaplen=snaplen, progress=progress,
                   run_scheme_code=run_scheme_code)


def import_pcap(inputs, out_dir: str | Path, *, mapping=None, coco: bool | None = None,
                sample_interval: float = 0.01) -> Results:
    """Captures from a testbed (a CoCo-Beholder dumps folder, or capture files with a
    mapping) → a standard results directory (docs/captures.md)."""
    from .capture.importer import import_pcap as _import
    return _import(inputs, out_dir, mapping=mapping, coco=coco, sample_interval=sample_interval)


def run_both(experiment: dict | str | Path, out_dir: str | Path | None = None, *,
             seed: int | None = None, packets: bool | None = None, progress=False,
             source: str | None = None, interval: float = 0.5, plots: bool = True,
             budget: bool = True, memory_budget: int | None = None):
    """Run the same resolved experiment on the simulator (OUT/sim) and on the emulator
    (OUT/emu, real kernel TCP; needs root), then compare them (OUT/compare: compare.txt,
    compare.csv, overlay plots and report.html; without `plots` only the two tables). Returns
    the `Comparison` (A = sim, B = emu; `.a`, `.b` are the two `Results`)."""
    from .backends import sim as _sim

    if not isinstance(experiment, dict):
        source = source or str(experiment)
        experiment = load_experiment(experiment, seed=seed)
    if out_dir is None:
        out_dir = Path("results") / (Path(source).stem if source else "experiment")
    out = Path(out_dir)
    _sim.check_supported(experiment)
    from .doctor import preflight
    preflight(experiment)  # fail before the simulator spends time when emu cannot run here
    kw = dict(seed=seed, packets=packets, progress=progress, source=source, budget=budget,
              memory_budget=memory_budget)
    sim = run(experiment, out / "sim", backend="sim", **kw)
    emu = run(experiment, out / "emu", backend="emu", **kw)
    c = compare(sim, emu, interval=interval)
    write_comparison(c, out / "compare", interval=interval, plots=plots)
    return c


def compare(a: Results | str | Path, b: Results | str | Path, interval: float = 0.5, *,
            allow_different: bool = False):
    """Two runs of the same experiment side by side: a `Comparison` whose `.table` holds per-flow
    and total throughput, delay and loss of A and B and their differences in % of A, with
    `.differences` (set-up) and `.warnings` (an inaccurate emulated run). Runs of different
    durations or links raise `analysis.compare.CompareError` unless `allow_different`."""
    from .analysis.compare import compare as _compare
    return _compare(a, b, interval=interval, allow_different=allow_different)


def compare_runs(runs: list[Results | str | Path], interval: float = 0.5, *,
                 allow_different: bool = False):
    """Two or more runs of the same experiment: a `MultiComparison` whose `.table` holds one
    row per run × curve (flows and the run's total: throughput, delay, loss, and Δ % against
    the first run), with `.differences` across all runs and `.warnings`; the same refusal rule
    as `compare`."""
    from .analysis.compare import compare_many
    return compare_many(runs, interval=interval, allow_different=allow_different)


def comparison_text(c) -> str:
    """A `Comparison` or `MultiComparison` as the aligned text table of `compare.txt`."""
    from .analysis.compare import MultiComparison, text, text_many
    return text_many(c) if isinstance(c, MultiComparison) else text(c)


def write_comparison(c, out_dir: str | Path, *, interval: float = 0.5, fmt: str = "png",
                     plots: bool = True) -> list[Path]:
    """Write a `Comparison` into `out_dir`: compare.txt, compare.csv and, with `plots`, the
    overlay figures (compare-rate, -delay, -cwnd) and the interactive report.html."""
    from .analysis.compare import write_table
    files = write_table(c, out_dir)
    if plots:
        from .plots.compare import plot_comparison
        from .report.comparison import write_comparison_report
        files += plot_comparison(c, out_dir, fmt)
        files.append(write_comparison_report(c, out_dir, interval))
    return files


def analyze(results: Results | str | Path, grouping: str = "per-flow", interval: float = 0.5,
            subset_fields=None):
    """Metrics of a run for one grouping (see docs/metrics.md)."""
    from . import analysis
    return analysis.analyze(_results(results), grouping=grouping, interval=interval,
                            subset_fields=subset_fields)


def plot(results: Results | str | Path, out_dir: str | Path | None = None, *,
         groupings=("per-flow", "total", "per-scheme", "per-direction", "per-scheme-direction"),
         interval: float = 0.5, fmt: str = "png", jobs: int | None = 1):
    """Write the plots and statistics files of a run (default: <results>/plots). `jobs`:
    processes drawing in parallel (None: every core)."""
    from . import plots
    results = _results(results)
    out_dir = Path(out_dir) if out_dir else results.path / "plots"
    inside = out_dir.resolve().parent == results.path.resolve()
    if inside:
        from .results import marker
        marker.begin(results.path, "plots")
    files = plots.plot_all(results, out_dir, groupings=groupings, interval=interval, fmt=fmt,
                           jobs=jobs)
    if inside:
        marker.finish(results.path, "plots", [Path(f).resolve() for f in files])
    return files


def seed_note(experiment: dict) -> str | None:
    """A note when nothing in the resolved experiment draws from the seed, so every seed
    gives the same simulated result (None otherwise)."""
    from .config.semantic import seed_note as _note
    return _note(experiment)


def schemes() -> list[dict]:
    """The simulator's congestion-control catalogue."""
    from . import _core
    return _core.schemes()


def dgram_schemes() -> list[dict]:
    """The datagram transport's schemes (docs/datagram.md), each with ``transport: dgram``. A
    file parameter (no numeric default) for which the package ships a file (Indigo's published
    checkpoint) carries that file's absolute path as ``shipped``."""
    from . import _core
    from .config.native import shipped_file
    out = _core.dgram_schemes()
    for s in out:
        for p in s["params"]:
            if p["default"] is None and (f := shipped_file(s["name"], p["name"])) is not None:
                p["shipped"] = f
    return out


def scheme_catalogue() -> list[dict]:
    """Every registered scheme, TCP then datagram, each with its ``transport`` ("tcp" or
    "dgram") and the ``backends`` that run it here: the simulator always; the kernel for a
    datagram scheme (ccbench-dgram) and for a TCP scheme this kernel offers or has a module
    for (tcp_NAME)."""
    from .backends.emu.doctor import kernel_modules
    kernel = kernel_modules()
    return ([{**s, "transport": "tcp", "backends": ["sim", "emu"] if s["name"] in kernel else ["sim"]}
             for s in schemes()]
            + [{**s, "backends": ["sim", "emu"]} for s in dgram_schemes()])


def bpf_schemes() -> list[str]:
    """The BPF congestion controls shipped for the kernel backend (docs/bpf-schemes.md)."""
    from .config.bpfschemes import shipped
    return shipped()


def registry() -> list[dict] | None:
    """The registry the config layer checks scheme names and parameters against: the
    simulator's TCP catalogue and the datagram schemes, or None (no check) when the compiled
    core is not built."""
    try:
        return schemes() + dgram_schemes()
    except ImportError:
        return None


def summary_text(results: Results | str | Path, interval: float = 0.5) -> str:
    """The table `ccbench run` prints: per flow and in total, throughput, mean and p95 one-way
    delay and loss; Jain's index over flows and the bottleneck utilisation when defined."""
    from .analysis.cache import Computed
    results = _results(results)
    # shared with the report of this run
    computed = Computed.of(results, interval).plan("per-flow", "total")
    an = computed.analyze("per-flow")
    tot = computed.analyze("total")
    rows = list(an.summary.iter_rows(named=True)) + list(tot.summary.iter_rows(named=True))

    def f(v, spec=".2f"):
        return "N/A" if v is None else format(v, spec)

    w = max([len("curve")] + [len(str(r["curve"])) for r in rows])
    head = f"{'curve':<{w}}  {'tput Mbit/s':>11}  {'mean ms':>8}  {'p95 ms':>8}  {'loss %':>7}"
    emu = results.meta.get("emu") or {}
    lines = [] if emu.get("accurate", True) else [
        "INACCURATE emulated run (" + ("; ".join(emu.get("inaccurate_reasons") or []) or "?")
        + "): the numbers below may be the machine's"]
    lines += [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{str(r['curve']):<{w}}  {f(r['avg_tput_mbps']):>11}  {f(r['mean_delay_ms']):>8}  "
                     f"{f(r['p95_delay_ms']):>8}  {f(r['loss_pct'], '.3f'):>7}")
    if an.overall_jain is not None:
        lines.append(_jain_line(results, an))
    try:
        ps = computed.pantheon()
        if "utilization_pct" in ps.columns:
            u = ps.filter(ps["flow"] == "all")["utilization_pct"] if "flow" in ps.columns else None
            if u is not None and len(u) and u[0] is not None:
                lines.append(f"Bottleneck utilisation: {u[0]:.2f} %")
    except Exception:  # the summary table must not hide a finished run
        pass
    from .analysis.probes import probe_text
    lines += probe_text(results)
    from .analysis.metrics import LOSS_NOTE
    lines.append(LOSS_NOTE)
    return "\n".join(lines)


def _jain_line(results: Results, an) -> str:
    """Jain's index over the flows; per direction when flows run both ways (flows of opposite
    directions do not compete, so the pooled index mixes two questions)."""
    from .analysis.estimators import jain_index
    dirs = {f["id"]: f["direction"] for f in results.experiment["flows"]}
    if len(set(dirs.values())) < 2:
        return f"Jain's index over flows: {an.overall_jain:.4f}"
    by: dict[str, list[float]] = {}
    for r in an.summary.iter_rows(named=True):
        if r["avg_tput_mbps"] is not None:  # a per-flow curve: flows is [its id]
            by.setdefault(dirs[r["flows"][0]], []).append(r["avg_tput_mbps"])
    parts = [f"{d} {jain_index(v):.4f} ({len(v)} flow{'s' if len(v) > 1 else ''})"
             for d, v in by.items() if v and jain_index(v) is not None]
    return (f"Jain's index per direction: {', '.join(parts)}; over all flows "
            f"{an.overall_jain:.4f}")


def stats_text(results: Results | str | Path, groupings=("per-flow",), interval: float = 0.5) -> str:
    """CoCo-Beholder's statistics file of each grouping, then the Pantheon summary table
    (`ccbench stats`)."""
    from . import analysis
    from .analysis.cache import Computed
    results = _results(results)
    computed = Computed.of(results, interval).plan(*groupings, "total")  # one pass, ranks once
    out = []
    for g in groupings:
        out.append(f"######## {g} ########")
        out.append(analysis.stats_text(computed.analyze(g)))
    out.append("######## Pantheon summary ########")
    out.append(analysis.pantheon_text(computed.pantheon()).rstrip("\n"))
    return "\n".join(out)


def report(results: Results | str | Path, *, interval: float = 0.5, verdicts=None) -> Path:
    """Write the run's self-contained interactive page, <results>/report.html (docs/report.md).
    `verdicts`: the expectations' verdicts to show (default: evaluated here)."""
    from .report import write_report
    return write_report(_results(results), interval=interval, verdicts=verdicts)


def check(results: Results | str | Path, expect: str | Path | None = None):
    """Evaluate a run's expectations (docs/expectations.md): a list of verdicts, each with
    `.passed` and `.line()`. `expect`: a YAML file (an experiment with `expect:` or a bare list)
    whose expectations replace the run's own."""
    from . import expect as _expect
    results = _results(results)
    if expect is not None:
        doc = _read_yaml(Path(expect))
        doc = doc.get("expect") if isinstance(doc, dict) else doc
        results.meta["expect"] = _expect.parse(doc, results.experiment["flows"],
                                               results.experiment["links"])
    return _expect.evaluate(results)


def junit(verdicts, suite: str) -> str:
    """Verdicts as JUnit XML (one test case per expectation)."""
    from . import expect as _expect
    return _expect.junit(verdicts, suite)


def doctor(schemes=(), file: str | Path | None = None) -> tuple[str, bool]:
    """Can this machine run the emulation backend? The checks as text, and whether every required
    one passed; `schemes` and the schemes of the experiment `file` are checked in the kernel."""
    from . import doctor as _doctor
    schemes = list(schemes)
    if file is not None:
        schemes += _doctor.experiment_schemes(load_experiment(file))
    return _doctor.report(sorted(set(schemes)) or None)


def clean(run_id: str | None = None, verbose: bool = False, force: bool = False) -> dict:
    """Remove the namespaces, processes and work directories killed emulation runs left (all, or
    one run id); needs root. A run whose process is alive (it holds its lock) is skipped, unless
    `run_id` names it and `force` is set. Returns what was removed (and "skipped")."""
    from .backends import emu as _emu
    return _emu.clean(run_id, verbose=verbose, force=force)
