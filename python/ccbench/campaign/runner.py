"""Running a campaign: skip finished runs, execute the rest, commit each run as it finishes,
record failures and go on, keep the index up to date."""
from __future__ import annotations

import itertools
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import polars as pl

from .executors import make_executor
from .index import MetricsCache, build_index, write_index
from .plan import Plan, Run, expand
from .spec import Campaign, load_campaign
from .store import Store, utc_now

CHECKPOINT_S = 10.0  # write the metrics cache and index at most this often while running


@dataclass
class CampaignResult:
    """What a campaign did: the index of every finished run and this session's counts."""

    index: pl.DataFrame
    plan: Plan
    out_dir: Path
    executed: int = 0  # runs executed in this session
    skipped: int = 0  # already finished before it
    failures: list[dict] = field(default_factory=list)  # {key, label, repeat, error}
    wall_s: float = 0.0
    loop_s: float = 0.0  # the backends' own time summed over executed runs
    executor: str = ""

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        n = self.plan.n_runs
        lines = [f"{self.out_dir}: {n - len(self.failures)}/{n} runs finished "
                 f"({self.executed} run now, {self.skipped} already done) in "
                 f"{self.wall_s:.1f} s on {self.executor}; index: "
                 f"{self.out_dir / 'index.parquet'} ({self.index.height} rows)"]
        if self.failures:
            lines.append(f"{len(self.failures)} run{'s' if len(self.failures) > 1 else ''} "
                         f"failed (details in {self.out_dir / 'failed'}/<key>.json):")
            for f in self.failures[:20]:
                lines.append(f"  {f['label']} repeat {f['repeat']} [{f['key']}]: {f['error']}")
            if len(self.failures) > 20:
                lines.append(f"  … {len(self.failures) - 20} more")
            lines.append("rerun the same command to retry them (finished runs are kept)")
        return "\n".join(lines)


class Progress:
    """A rich progress bar on a terminal, plain lines otherwise, or nothing."""

    def __init__(self, total: int, done: int, mode: str | bool | Callable = "auto",
                 stream=None):
        self.total, self.done, self.failed = total, done, 0
        self.stream = stream or sys.stderr
        self.callback = mode if callable(mode) else None
        if mode == "auto":
            mode = "rich" if self.stream.isatty() else "plain"
        self.mode = mode if isinstance(mode, str) else ("plain" if mode else "off")
        self.t0 = time.monotonic()
        self.bar = None
        if self.mode == "rich":
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RP,
                                       TextColumn, TimeElapsedColumn, TimeRemainingColumn)
            self.bar = RP(TextColumn("[bold]{task.description}"), BarColumn(),
                          MofNCompleteColumn(), TextColumn("{task.fields[failed]} failed"),
                          TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                          console=Console(file=self.stream), transient=False)
            self.bar.start()
            self.task = self.bar.add_task("runs", total=total, completed=done, failed=0)

    def skip(self) -> None:
        """A run that needs no work (already finished, or a duplicate of another)."""
        self.done += 1
        if self.mode == "rich":
            self.bar.update(self.task, completed=self.done)

    def update(self, ok: bool, text: str) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        if self.callback:
            self.callback(self.done, self.total, ok, text)
        elif self.mode == "rich":
            self.bar.update(self.task, completed=self.done, failed=self.failed)
            if not ok:
                self.bar.console.print(f"[red]failed[/red] {text}")
        elif self.mode == "plain":
            el = time.monotonic() - self.t0
            w = len(str(self.total))
            print(f"[{self.done:>{w}}/{self.total}] {'ok    ' if ok else 'FAILED'} {text} "
                  f"({el:.0f} s{', ' + str(self.failed) + ' failed' if self.failed else ''})",
                  file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run_campaign(campaign: Campaign | str | Path, out_dir: str | Path | None = None, *,
                 jobs: int | None = None, dask: str | None = None, backend: str = "sim",
                 packets: bool = False, plots: bool = False,
                 allow_mixed_versions: bool = False, progress: Any = "auto",
                 executor=None, plan: Plan | None = None, keep: str = "tables"
                 ) -> CampaignResult:
    """Run every unfinished run of a campaign into ``out_dir`` and write its index.

    ``keep``: ``"tables"`` (default) keeps each run's results directory whole, to re-plot
    or re-analyse it; ``"summary"`` keeps only what the index and the report need (each
    run's metadata and index rows, no Parquet tables). A run kept as its summary counts as
    finished for ``keep="summary"``; ``keep="tables"`` runs it again to write its tables."""
    if backend not in ("sim", "emu"):
        raise ValueError(f"unknown backend {backend!r}: use 'sim' or 'emu'")
    check_keep(keep, plots)
    if not isinstance(campaign, Campaign):
        campaign = load_campaign(campaign)
    if plan is None:
        plan = expand(campaign, backend=backend, packets=packets)
    out = Path(out_dir) if out_dir is not None else Path("results") / campaign.name
    t0 = time.perf_counter()
    with Store(out, allow_mixed_versions=allow_mixed_versions) as store:
        ses = _Session(store=store, cache=MetricsCache(out),
                       res=CampaignResult(index=pl.DataFrame(), plan=plan, out_dir=out))
        tasks = _todo(ses, plan, backend=backend, plots=plots, keep=keep)
        first = next(tasks, None)  # is there anything to run at all?
        own = executor is None
        if first is not None and own:
            executor = make_executor(jobs=jobs, dask=dask, backend=backend)
        ses.res.executor = getattr(executor, "name", "none") if first else "nothing to run"
        if backend == "emu" and first:
            print("emulation campaign: runs are real time and run one at a time on each "
                  "machine", file=sys.stderr)
        store.begin(plan, executor=ses.res.executor, backend=backend,
                    options={"packets": packets, "plots": plots, "jobs": jobs, "dask": dask,
                             "keep": keep})
        ses.prog = Progress(plan.n_runs, ses.res.skipped + ses.dups, progress) \
            if first else None
        tasks = itertools.chain([first], tasks) if first else iter(())
        try:
            _execute(ses, plan, executor.map(tasks) if first else ())
        except BaseException:
            if own and executor is not None and hasattr(executor, "abort"):
                executor.abort()
                executor = None
            raise
        finally:
            if ses.prog:
                ses.prog.close()
            if own and executor is not None:
                executor.close()
            _close_session(ses, plan, out, t0)
    return ses.res


@dataclass
class _Session:
    """One campaign session's state, shared by its steps: the store and metrics cache, the
    result being filled, and the runs seen so far."""
    store: Store
    cache: MetricsCache
    res: CampaignResult
    # every run of the plan, without its experiment (the index)
    refs: list[Run] = field(default_factory=list)
    seen: set = field(default_factory=set)
    pending: dict[str, Run] = field(default_factory=dict)  # submitted, not finished
    # a lazy plan's runs whose point does not resolve
    lazy_failed: list[Run] = field(default_factory=list)
    dups: int = 0
    prog: Progress | None = None


def check_keep(keep: str, plots: bool = False) -> None:
    """Refuse a ``keep`` that is not one of api.KEEP, and plots of runs whose tables are not
    kept."""
    from ..api import KEEP
    if keep not in KEEP:
        raise ValueError(f"keep must be one of {', '.join(KEEP)}, got {keep!r}")
    if keep == "summary" and plots:
        raise ValueError("--plots draws each run from its tables: use --keep tables (the "
                         "default) with --plots, or drop --plots")


def _todo(ses: _Session, plan: Plan, *, backend: str, plots: bool, keep: str):
    """The runs to execute, each resolved as the executor asks for it (a lazy plan keeps no
    experiment longer than it takes to send it); the others are counted as they go by."""
    store, res = ses.store, ses.res
    for r in plan.iter_runs():
        if r.key in ses.seen:  # the same experiment and seed as another run: runs once
            ses.dups += 1
            if ses.prog is not None:
                ses.prog.skip()
            continue
        ses.seen.add(r.key)
        ses.refs.append(replace(r, experiment=None))
        if r.error is not None:
            ses.lazy_failed.append(ses.refs[-1])
        elif store.is_done(r.key) and (keep == "summary" or store.has_tables(r.key)):
            res.skipped += 1
            if ses.prog is not None:
                ses.prog.skip()
        else:
            ses.pending[r.key] = ses.refs[-1]
            yield {"key": r.key, "name": f"{r.point.label} r{r.repeat}",
                   "experiment": r.experiment, "backend": backend,
                   "out": str(store.run_dir(r.key)), "log": store.log_path,
                   "source": plan.campaign.campaign_file, "plots": plots, "keep": keep}


def _execute(ses: _Session, plan: Plan, outcomes) -> None:
    """Record each run's outcome as the executor reports it (checkpointing the index now
    and then), then the runs that could not run."""
    from ..api import __version__
    store, res = ses.store, ses.res
    last = time.monotonic()
    for o in outcomes:
        r = ses.pending.pop(o["key"])
        text = f"{r.point.label} repeat {r.repeat}"
        if o["ok"]:
            if o.get("files") is not None:
                store.commit_files(r.key, o["files"])
            store.clear_failure(r.key)
            ses.cache.add(r.key, o["rows"], __version__)
            res.loop_s += o.get("loop_s") or 0.0
            store.log("done", key=r.key, point=r.point.index, repeat=r.repeat,
                      wall_s=round(o["wall_s"], 4), loop_s=o.get("loop_s"),
                      host=o.get("host"))
        else:
            info = {"key": r.key, "label": r.point.label, "point": r.point.index,
                    "repeat": r.repeat, "seed": r.seed, "values": r.point.values,
                    "error": o["error"], "traceback": o.get("traceback"),
                    "host": o.get("host")}
            store.record_failure(r.key, info)
            store.log("failed", key=r.key, error=o["error"])
            res.failures.append(info)
        res.executed += 1
        ses.prog.update(o["ok"], text + ("" if o["ok"] else f": {o['error']}"))
        if time.monotonic() - last > CHECKPOINT_S:
            ses.cache.save()
            write_index(build_index(ses.refs, plan, store, ses.cache), res.out_dir)
            last = time.monotonic()
    for r in ses.lazy_failed:
        info = {"key": r.key, "label": r.point.label, "point": r.point.index,
                "repeat": r.repeat, "seed": None, "values": r.point.values,
                "error": r.error, "traceback": None, "host": None}
        store.record_failure(r.key, info)
        res.failures.append(info)
    # an executor that ended early: say so rather than lose them
    for k, r in ses.pending.items():
        res.failures.append({"key": k, "label": r.point.label, "repeat": r.repeat,
                             "error": "not run: the executor ended early"})


def _close_session(ses: _Session, plan: Plan, out: Path, t0: float) -> None:
    """The index, metrics cache and manifest as the session leaves them (also after an
    error or an interrupt)."""
    store, res = ses.store, ses.res
    res.index = build_index(ses.refs, plan, store, ses.cache)
    ses.cache.save()
    write_index(res.index, out)
    res.wall_s = time.perf_counter() - t0
    store.manifest["updated"] = utc_now()
    store.manifest["last_session"] = {"executed": res.executed, "skipped": res.skipped,
                                      "failed": len(res.failures),
                                      "wall_s": round(res.wall_s, 3)}
    store.write_manifest()
    store.log("end", executed=res.executed, failed=len(res.failures))
