"""Time-series plots from the flow and queue samples: cwnd, RTT (srtt) and bottleneck queues."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from ..analysis.queues import queue_timeseries  # noqa: E402
from .style import FIGSIZE, FONT_SIZE, save  # noqa: E402


def _flow_labels(results) -> dict[int, str]:
    return {int(f["id"]): f["label"] for f in results.experiment["flows"]}


def _per_flow(results, path, column: str, scale: float, ylabel: str, title: str,
              positive: bool = False) -> Path:
    """``positive``: drop samples <= 0 (an estimate that does not exist yet, e.g. the smoothed
    RTT before a flow's first RTT sample, is 0 and would draw a line down to 0)."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    labels = _flow_labels(results)
    fl = results.flows
    if fl is not None and fl.height:
        fl = fl.select(pl.col("time_ns").cast(pl.Int64), pl.col("flow").cast(pl.Int64),
                       pl.col(column).cast(pl.Float64)).sort("flow", "time_ns")
        if positive:
            fl = fl.filter(pl.col(column) > 0)
        for (fid,), g in fl.group_by("flow", maintain_order=True):
            ax.plot(g["time_ns"].to_numpy() / 1e9, g[column].to_numpy() * scale,
                    label=labels.get(int(fid), f"flow {int(fid) + 1}"), lw=1)
    else:
        title += " (no flow samples)"
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    ax.set_ylabel(ylabel, fontsize=FONT_SIZE)
    ax.set_title(title, loc="right", fontsize=FONT_SIZE)
    return save(fig, ax, path)


def plot_cwnd(results, path) -> Path:
    """Congestion window (packets) of every flow over time."""
    return _per_flow(results, path, "cwnd", 1.0, "Congestion window (packets)",
                     "Congestion window per flow (sender samples)")


def plot_rtt(results, path) -> Path:
    """Smoothed RTT (srtt, ms) of every flow over time."""
    return _per_flow(results, path, "srtt_us", 1e-3, "Smoothed RTT (ms)",
                     "Smoothed RTT (srtt) per flow (sender samples; none before a flow's first "
                     "RTT sample)", positive=True)


def plot_queue(results, path, links=None) -> Path:
    """Occupancy of the bottleneck (central) queues: packets, with cumulative drops and CE
    marks on a right axis (top); delay estimate bytes·8/rate and, dashed, the measured sojourn
    time of the last dequeued packet (bottom)."""
    q = queue_timeseries(results, links)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=FIGSIZE, sharex=True)
    counts = None
    for (lid,), g in q.group_by("link", maintain_order=True):
        name = g["name"][0]
        t = g["time_s"].to_numpy()
        line, = top.plot(t, g["packets"].to_numpy(), lw=1, label=f"link {lid}: {name}")
        if g["qdelay_ms"].null_count() < g.height:
            bottom.plot(t, g["qdelay_ms"].to_numpy(), lw=1, color=line.get_color(),
                        label=f"link {lid}: {name}")
        if g["sojourn_ms"].null_count() < g.height:
            bottom.plot(t, g["sojourn_ms"].to_numpy(), lw=1, ls="--", color=line.get_color(),
                        label=f"link {lid}: sojourn")
        for col, ls in (("drops", ":"), ("marks", "-.")):
            if (g[col].max() or 0) > 0:
                counts = counts or top.twinx()
                counts.plot(t, g[col].to_numpy(), lw=0.8, ls=ls, color=line.get_color(),
                            label=f"link {lid}: {col}")
    if counts is not None:
        counts.set_ylabel("Drops, CE marks (cumulative)", fontsize=FONT_SIZE)
        counts.legend(loc="upper left", fontsize=FONT_SIZE - 2)
    top.set_ylabel("Queue (packets)", fontsize=FONT_SIZE)
    top.grid()
    top.set_title("Bottleneck queue occupancy" + ("" if q.height else " (no queue samples)"),
                  loc="right", fontsize=FONT_SIZE)
    bottom.set_ylabel("Queueing delay (ms): bytes·8/rate;\n-- sojourn", fontsize=FONT_SIZE)
    bottom.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    return save(fig, bottom, path)
