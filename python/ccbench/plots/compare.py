"""Overlay figures of a comparison (``ccbench.analysis.compare``): per-interval throughput and
delay per flow, and every flow's cwnd; two runs: A solid, B dashed, one colour per flow; more
runs: one colour per run, one line style per flow."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from ..analysis.compare import Comparison, MultiComparison
from .style import FONT_SIZE, new_figure, palette, save


_STYLES = ("-", "--", ":", "-.")


def _overlay(path: Path, series, column: str, ylabel: str, title: str, style) -> Path:
    """Per-interval ``column`` of every curve of each run (``series``: [(tag, intervals)]);
    ``style(run index, curve index)`` -> (line style, colour)."""
    fig, ax = new_figure()
    curves = [c for c in dict.fromkeys(c for _, df in series for c in df["curve"].to_list())
              if not c.startswith("Total")]
    for k, (tag, df) in enumerate(series):
        for ci, curve in enumerate(curves):
            g = df.filter(pl.col("curve") == curve).drop_nulls(column).sort("t_s")
            ls, color = style(k, ci)
            ax.plot(g["t_s"].to_numpy(), g[column].to_numpy(), ls, color=color, lw=1.2,
                    label=f"{tag}: {curve}")
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    ax.set_ylabel(ylabel, fontsize=FONT_SIZE)
    ax.set_title(title, loc="right", fontsize=FONT_SIZE)
    return save(fig, ax, path)


def _cwnd(path: Path, runs, labels: dict, title: str, style) -> Path:
    """Every flow's cwnd of each run (``runs``: [(tag, Results)]); ``style(run, flow)``."""
    fig, ax = new_figure()
    for k, (tag, res) in enumerate(runs):
        if res.flows is None:
            continue
        for (fid,), g in res.flows.sort("flow", "time_ns").group_by("flow", maintain_order=True):
            ls, color = style(k, int(fid))
            ax.plot(g["time_ns"].to_numpy() / 1e9, g["cwnd"].to_numpy(), ls, color=color, lw=1,
                    label=f"{tag}: {labels.get(int(fid), f'flow {int(fid) + 1}')}")
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    ax.set_ylabel("Congestion window (packets)", fontsize=FONT_SIZE)
    ax.set_title(title, loc="right", fontsize=FONT_SIZE)
    return save(fig, ax, path)


def plot_comparison(c: Comparison | MultiComparison, out_dir: str | Path,
                    fmt: str = "png") -> list[Path]:
    """Write ``compare-rate``, ``compare-delay`` and ``compare-cwnd`` figures into ``out_dir``:
    two runs A solid and B dashed, one colour per flow; more runs one colour per run, one line
    style per flow."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    colors = palette()
    if isinstance(c, MultiComparison):
        series, runs = list(zip(c.tags, c.intervals)), list(zip(c.tags, c.runs))
        first, how = c.runs[0], " — colour: run, line style: flow"

        def style(k, i):
            return _STYLES[i % len(_STYLES)], colors[k % len(colors)]
    else:
        series, runs = [("A", c.a_intervals), ("B", c.b_intervals)], [("A", c.a), ("B", c.b)]
        first, how = c.a, " — solid: A, dashed: B"

        def style(k, i):
            return ("-", "--")[k], colors[i % len(colors)]
    labels = {f["id"]: f["label"] for f in first.experiment["flows"]}
    return [_overlay(out / f"compare-rate.{fmt}", series, "rate_mbps", "Throughput (Mbit/s)",
                     "Per-interval throughput" + how, style),
            _overlay(out / f"compare-delay.{fmt}", series, "delay_ms", "One-way delay (ms)",
                     "Per-interval mean one-way delay" + how, style),
            _cwnd(out / f"compare-cwnd.{fmt}", runs, labels, "cwnd" + how, style)]


__all__ = ["plot_comparison"]
