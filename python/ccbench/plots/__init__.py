"""Plots of a results directory (matplotlib, Agg backend). See docs/metrics.md.

``plot_all`` writes, for each grouping, CoCo-Beholder's ``<prefix>-avg-rate``, ``-avg-delay``,
``-avg-jain``, ``-ppt-delay`` figures and ``<prefix>-stats.log``, plus ``cwnd``, ``rtt`` and
``queue`` figures.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

from ..analysis import analyze, write_stats
from ..analysis.groupings import NAMED
from ..interrupt import checkpoint
from .coco import (MAX_SCATTER_POINTS, plot_avg_delay, plot_avg_jain, plot_avg_rate,
                   plot_ppt_delay)
from .fct import has_fcts, plot_fct_cdf, plot_fct_size, write_workload_stats
from .timeseries import plot_cwnd, plot_queue, plot_rtt

FORMATS = ("png", "svg", "pdf")
DEFAULT_GROUPINGS = tuple(NAMED)  # per-flow, total, per-scheme, per-direction, per-scheme-direction


def plot_grouping(analysis, out_dir, fmt: str = "png", colors: Sequence[str] | None = None,
                  max_points: int = MAX_SCATTER_POINTS) -> list[Path]:
    """The four CoCo-Beholder figures and the stats file of one :class:`Analysis`."""
    _check_fmt(fmt)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p = analysis.prefix
    return [
        plot_avg_rate(analysis, out / f"{p}-avg-rate.{fmt}", colors),
        plot_avg_delay(analysis, out / f"{p}-avg-delay.{fmt}", colors),
        plot_avg_jain(analysis, out / f"{p}-avg-jain.{fmt}", colors[0] if colors else None),
        plot_ppt_delay(analysis, out / f"{p}-ppt-delay.{fmt}", colors, max_points),
        write_stats(analysis, out / f"{p}-stats.log"),
    ]


def _check_fmt(fmt: str):
    if fmt not in FORMATS:
        raise ValueError(f"unknown plot format {fmt!r}; valid: {', '.join(FORMATS)}")


def plot_all(results, out_dir, groupings: Iterable[str | Sequence[str]] = DEFAULT_GROUPINGS,
             interval: float = 0.5, fmt: str = "png", *, mode: str = "auto",
             colors: Sequence[str] | None = None,
             max_points: int = MAX_SCATTER_POINTS, jobs: int | None = 1) -> list[Path]:
    """Write every figure and stats file of ``results`` into ``out_dir``; returns the paths.

    ``groupings``: names (``per-flow``, ``total``, ``per-scheme``, ``per-direction``,
    ``per-scheme-direction``) or lists of flow fields (a per-subset grouping, e.g.
    ``["group"]`` → prefix ``per-group``). ``jobs``: processes drawing in parallel (one
    grouping per task, the sender/queue/FCT figures one more; None: every core); each worker
    reads the results directory itself, so ``results`` must have been written to disk.
    """
    _check_fmt(fmt)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tasks = [("grouping", g) for g in groupings] + [("run", None)]
    opts = dict(interval=interval, fmt=fmt, mode=mode, colors=colors, max_points=max_points)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    path = getattr(results, "path", None)
    if jobs > 1 and path is not None and (Path(path) / "metadata.json").is_file():
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        # spawn, not fork: polars' thread pool must not be forked
        with ProcessPoolExecutor(min(jobs, len(tasks)),
                                 mp_context=multiprocessing.get_context("spawn")) as ex:
            parts = []
            for part in ex.map(_task, [str(path)] * len(tasks), [str(out)] * len(tasks),
                               tasks, [opts] * len(tasks)):
                parts.append(part)
                checkpoint("plots")   # tests of interruption stop here (ccbench.interrupt)
    else:
        parts = []
        for t in tasks:
            parts.append(_task(results, out, t, opts))
            checkpoint("plots")
    return [p for part in parts for p in part]


def _task(results, out, task, opts) -> list[Path]:
    """One unit of :func:`plot_all`: a grouping's figures and stats file, or the run's sender,
    queue and workload figures. ``results`` may be a results directory (in a worker)."""
    if not hasattr(results, "experiment"):
        import warnings

        from ..results import load
        from ..results.marker import IncompleteWarning
        with warnings.catch_warnings():  # the parent marked the plots as being written: not a
            warnings.simplefilter("ignore", IncompleteWarning)  # cut-short run in a worker
            results = load(results)
    out, fmt = Path(out), opts["fmt"]
    kind, g = task
    if kind == "grouping":
        if isinstance(g, str):
            a = analyze(results, g, opts["interval"], mode=opts["mode"])
        else:
            a = analyze(results, "per-subset", opts["interval"], list(g), mode=opts["mode"])
        return plot_grouping(a, out, fmt, opts["colors"], opts["max_points"])
    paths = [plot_cwnd(results, out / f"cwnd.{fmt}"), plot_rtt(results, out / f"rtt.{fmt}"),
             plot_queue(results, out / f"queue.{fmt}")]
    if has_fcts(results):
        paths.append(plot_fct_cdf(results, out / f"fct-cdf.{fmt}"))
        paths.append(plot_fct_size(results, out / f"fct-size.{fmt}"))
    if has_fcts(results) or any(f.get("app_rate_bps") or f.get("onoff")
                                for f in results.experiment["flows"]):
        paths.append(write_workload_stats(results, out / "workload-stats.log"))
    return paths


__all__ = ["DEFAULT_GROUPINGS", "FORMATS", "plot_all", "plot_avg_delay", "plot_avg_jain",
           "plot_avg_rate", "plot_cwnd", "plot_grouping", "plot_ppt_delay", "plot_queue",
           "plot_rtt"]
