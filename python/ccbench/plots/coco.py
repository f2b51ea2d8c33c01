"""CoCo-Beholder's four plots per grouping, as its ``plot.py`` draws them: avg-rate, avg-delay,
avg-jain and ppt-delay (docs/metrics.md, "Plots"). Figures are 16×9 in; labels carry the
statistic in parentheses as CoCo-Beholder's.
"""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.ticker as plticker  # noqa: E402
import numpy as np  # noqa: E402

from ..analysis.metrics import MIN_DURATION_NS, Analysis  # noqa: E402
from .style import FONT_SIZE, new_figure, save  # noqa: E402

MAX_SCATTER_POINTS = 200_000
MAX_SECOND_TICKS = 60  # one x tick per second (CoCo-Beholder) up to this span, automatic above


def _x_limit(n_slots: int, slot_s: float):
    if n_slots in (0, 1):
        return -1, 1
    return 0, int(math.ceil((n_slots - 1) * slot_s))


def _marker(x) -> str | None:
    return "o" if len(x) == 1 else None


def _x_ticks(ax, span_s: float):
    ax.ticklabel_format(useOffset=False, style="plain")
    if span_s <= MAX_SECOND_TICKS:
        ax.xaxis.set_major_locator(plticker.MultipleLocator(base=1))
    else:
        ax.xaxis.set_major_locator(plticker.MaxNLocator(nbins=30, steps=[1, 2, 5, 10]))


def _slot_axes(ax, a: Analysis, ylabel: str, title: str):
    lo, hi = _x_limit(a.n_slots, a.interval_ns / 1e9)
    _x_ticks(ax, hi - lo)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("Time (s), aggregation interval %gs" % a.interval, fontsize=FONT_SIZE)
    ax.set_ylabel(ylabel, fontsize=FONT_SIZE)
    ax.set_title(title, loc="right", fontsize=FONT_SIZE)


def _mode_note(a: Analysis) -> str:
    return "" if a.mode == "packets" else " [aggregate mode]"


def rate_label(row: dict) -> str:
    if row["avg_tput_mbps"] is not None:
        v = "{:.2f} Mbps".format(row["avg_tput_mbps"])
    elif row["start_s"] is None:
        v = "no packets"
    else:
        v = "<{:g}ms duration".format(MIN_DURATION_NS / 1e6)
    return "{} ({})".format(row["curve"], v)


def _ms_label(curve: str, v) -> str:
    return "{} ({})".format(curve, "no packets" if v is None else "{:.2f} ms".format(v))


def plot_avg_rate(a: Analysis, path, colors=None) -> Path:
    fig, ax = new_figure(colors)
    for row in a.summary.to_dicts():
        pi = a.per_interval.filter(a.per_interval["curve"] == row["curve"])
        x = pi["t_s"].to_numpy()
        ax.plot(x, pi["rate_mbps"].to_numpy(), marker=_marker(x), label=rate_label(row))
    _slot_axes(ax, a, "Throughput (Mbit/s)",
               f"{a.grouping.notation} (<average throughput>){_mode_note(a)}")
    return save(fig, ax, path)


def plot_avg_delay(a: Analysis, path, colors=None) -> Path:
    fig, ax = new_figure(colors)
    for row in a.summary.to_dicts():
        pi = a.per_interval.filter(a.per_interval["curve"] == row["curve"]).drop_nulls("delay_ms")
        x = pi["t_s"].to_numpy()
        ax.plot(x, pi["delay_ms"].to_numpy(), marker=_marker(x),
                label=_ms_label(row["curve"], row["avg_delay_ms"]))
    _slot_axes(ax, a, "One-way delay (ms)",
               f"{a.grouping.notation} (<average delay>){_mode_note(a)}")
    return save(fig, ax, path)


def jain_label(a: Analysis) -> str:
    n = len(a.curves)
    v = "no average throughputs" if a.overall_jain is None else "{:f}".format(a.overall_jain)
    return "All {:d} {} ({})".format(n, "curve" if n == 1 else "curves", v)


def plot_avg_jain(a: Analysis, path, color=None) -> Path:
    fig, ax = new_figure()
    x = a.jain["t_s"].to_numpy()
    ax.plot(x, a.jain["jain"].to_numpy(), marker=_marker(x), label=jain_label(a),
            color=color or "C0")
    _slot_axes(ax, a, "Jain's index",
               "Label notation: All <curves number> curves "
               "(Jain's index over average throughputs of the curves)" + _mode_note(a))
    return save(fig, ax, path)


def plot_ppt_delay(a: Analysis, path, colors=None, max_points: int = MAX_SCATTER_POINTS) -> Path:
    """Per-packet delay scatter. Above ``max_points`` points in total, every k-th point of each
    curve is drawn (k = ceil(total / max_points)) and the title says so. In aggregate mode the
    points are per-sample-interval mean delays (the title says so)."""
    fig, ax = new_figure(colors)
    pts = [a.scatter(i) for i in range(len(a.curves))]
    total = sum(len(x) for x, _ in pts)
    k = max(1, math.ceil(total / max_points)) if max_points else 1
    xmax = 0.0
    for row, (x, y) in zip(a.summary.to_dicts(), pts):
        if k > 1:
            x, y = x[::k], y[::k]
        if len(x):
            xmax = max(xmax, float(np.max(x)))
        ax.plot(x, y, marker=".", ms=1, ls="", label=_ms_label(row["curve"], row["median_delay_ms"]),
                rasterized=True)
    _x_ticks(ax, xmax)
    ax.autoscale(enable=True, axis="x", tight=True)
    ax.set_xlabel("Time (s)", fontsize=FONT_SIZE)
    if a.mode == "packets":
        ax.set_ylabel("Per-packet one-way delay (ms)", fontsize=FONT_SIZE)
    else:
        ax.set_ylabel("One-way delay (ms), mean per %g s bin"
                      % (a.experiment["sample_interval_ns"] / 1e9), fontsize=FONT_SIZE)
    title = f"{a.grouping.notation} (<median per-packet delay>)"
    if a.mode != "packets":
        title += " [aggregate mode: per-bin mean delays, no per-packet records]"
    if k > 1:
        title += f" [1 packet in {k} shown: {math.ceil(total / k)} of {total}]"
    ax.set_title(title, loc="right", fontsize=FONT_SIZE)
    return save(fig, ax, path, scatterpoints=1, markerscale=10, handletextpad=0)
