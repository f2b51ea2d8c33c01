"""Overlay figures of a comparison (``ccbench.analysis.compare``): per-interval throughput and
delay per flow, and every flow's cwnd; two runs: A solid, B dashed, one colour per flow; more
runs: one colour per run, one line style per flow."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from ..analysis.compare import Comparison, MultiComparison
from .style import FONT_SIZE, new_figure, palette, save


def _overlay(c: Comparison, path: Path, column: str, ylabel: str, title: str) -> Path:
    fig, ax = new_figure()
    colors = palette()
    for i, curve in enumerate(c.table["curve"].to_list()):
        if curve.startswith("Total"):
            continue
        color = colors[i % len(colors)]
        for df, style, name in ((c.a_intervals, "-", c.name_a), (c.b_intervals, "--", c.name_b)):
            g = df.filter(pl.col("curve") == curve).drop_nulls(column).sort("t_s")
            ax.plot(g["t_s"].to_numpy(), g[column].to_numpy(), style, color=color, lw=1.2,
                    label=f"{curve} [{name}]")
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    ax.set_ylabel(ylabel, fontsize=FONT_SIZE)
    ax.set_title(title + " — solid: A, dashed: B", loc="right", fontsize=FONT_SIZE)
    return save(fig, ax, path)


def _overlay_cwnd(c: Comparison, path: Path) -> Path:
    fig, ax = new_figure()
    colors = palette()
    labels = {f["id"]: f["label"] for f in c.a.experiment["flows"]}
    for res, style, name in ((c.a, "-", c.name_a), (c.b, "--", c.name_b)):
        if res.flows is None:
            continue
        for (fid,), g in res.flows.sort("flow", "time_ns").group_by("flow", maintain_order=True):
            ax.plot(g["time_ns"].to_numpy() / 1e9, g["cwnd"].to_numpy(), style,
                    color=colors[int(fid) % len(colors)], lw=1, label=f"{labels[int(fid)]} [{name}]")
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    ax.set_ylabel("Congestion window (packets)", fontsize=FONT_SIZE)
    ax.set_title("cwnd — solid: A, dashed: B", loc="right", fontsize=FONT_SIZE)
    return save(fig, ax, path)


_STYLES = ("-", "--", ":", "-.")


def _many_overlay(c: MultiComparison, path: Path, column: str, ylabel: str, title: str) -> Path:
    fig, ax = new_figure()
    colors = palette()
    for i, (tag, df) in enumerate(zip(c.tags, c.intervals)):
        for k, curve in enumerate(dict.fromkeys(df["curve"].to_list())):
            g = df.filter(pl.col("curve") == curve).drop_nulls(column).sort("t_s")
            ax.plot(g["t_s"].to_numpy(), g[column].to_numpy(), _STYLES[k % len(_STYLES)],
                    color=colors[i % len(colors)], lw=1.2, label=f"{tag}: {curve}")
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    ax.set_ylabel(ylabel, fontsize=FONT_SIZE)
    ax.set_title(title + " — colour: run, line style: flow", loc="right", fontsize=FONT_SIZE)
    return save(fig, ax, path)


def _many_cwnd(c: MultiComparison, path: Path) -> Path:
    fig, ax = new_figure()
    colors = palette()
    labels = {f["id"]: f["label"] for f in c.runs[0].experiment["flows"]}
    for i, (tag, res) in enumerate(zip(c.tags, c.runs)):
        if res.flows is None:
            continue
        for (fid,), g in res.flows.sort("flow", "time_ns").group_by("flow", maintain_order=True):
            ax.plot(g["time_ns"].to_numpy() / 1e9, g["cwnd"].to_numpy(),
                    _STYLES[int(fid) % len(_STYLES)], color=colors[i % len(colors)], lw=1,
                    label=f"{tag}: {labels.get(int(fid), f'flow {int(fid) + 1}')}")
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    ax.set_ylabel("Congestion window (packets)", fontsize=FONT_SIZE)
    ax.set_title("cwnd — colour: run, line style: flow", loc="right", fontsize=FONT_SIZE)
    return save(fig, ax, path)


def plot_comparison(c: Comparison | MultiComparison, out_dir: str | Path,
                    fmt: str = "png") -> list[Path]:
    """Write ``compare-rate``, ``compare-delay`` and ``compare-cwnd`` figures into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if isinstance(c, MultiComparison):
        return [_many_overlay(c, out / f"compare-rate.{fmt}", "rate_mbps", "Throughput (Mbit/s)",
                              "Per-interval throughput"),
                _many_overlay(c, out / f"compare-delay.{fmt}", "delay_ms", "One-way delay (ms)",
                              "Per-interval mean one-way delay"),
                _many_cwnd(c, out / f"compare-cwnd.{fmt}")]
    return [_overlay(c, out / f"compare-rate.{fmt}", "rate_mbps", "Throughput (Mbit/s)",
                     "Per-interval throughput"),
            _overlay(c, out / f"compare-delay.{fmt}", "delay_ms", "One-way delay (ms)",
                     "Per-interval mean one-way delay"),
            _overlay_cwnd(c, out / f"compare-cwnd.{fmt}")]


__all__ = ["plot_comparison"]
