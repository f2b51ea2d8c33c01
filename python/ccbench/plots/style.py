"""The house style of the static figures: size, font, legend layout, colours, and saving.

Every matplotlib figure module draws on an axis from :func:`new_figure` (or its own
``plt.subplots(figsize=FIGSIZE)``) and hands it to :func:`save`, which adds the grid and the
legend below the plot (entries in rows of ``LABELS_IN_ROW``, as CoCo-Beholder lays them out) and
closes the figure.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FIGSIZE = (16, 9)
FONT_SIZE = 12
LABELS_IN_ROW = 4


def palette() -> list[str]:
    """The colour cycle every figure draws its curves with, in order."""
    return plt.rcParams["axes.prop_cycle"].by_key()["color"]


def new_figure(colors=None, **kw):
    """A (figure, axis) of the house size; ``colors`` replaces the colour cycle."""
    fig, ax = plt.subplots(figsize=FIGSIZE, **kw)
    if colors:
        ax.set_prop_cycle(color=list(colors))
    return fig, ax


def log_axis(ax, which: str = "x", values=None, max_ticks: int = 8) -> None:
    """Make ``ax``'s x (or y) axis logarithmic with labels that never overprint: plain numbers
    (``0.5``, ``2``, not ``5×10⁻¹``), no labels on minor ticks (matplotlib labels them when the
    axis spans less than a decade or two, and they ran into each other), and with ``values``
    (the swept values) ticks at those of them :func:`ccbench.campaign.axes.log_ticks` keeps."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter
    from ..campaign.axes import log_ticks
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_minor_formatter(NullFormatter())
    if values is not None and len(log_ticks(values, max_ticks)):
        axis.set_major_locator(FixedLocator(log_ticks(values, max_ticks)))
    else:
        axis.set_major_locator(LogLocator(base=10, numticks=max_ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))


def _by_rows(items, ncol):
    """Legend entries reordered so that matplotlib's column-major fill reads row by row."""
    return list(itertools.chain(*[items[i::ncol] for i in range(ncol)]))


def save(fig, ax, path, **legend_kw) -> Path:
    """Grid on ``ax``, the legend of its labelled artists below it, write ``path``, close."""
    ax.grid()
    handles, labels = ax.get_legend_handles_labels()
    extra = ()
    if handles:
        # below the axis's own tick labels and x label, whatever the axis's height (a fixed
        # offset in axes units put the legend over "Time (s)" on half-height subplots)
        box = ax.get_tightbbox(fig.canvas.get_renderer())
        y = ax.transAxes.inverted().transform((0, box.y0))[1] if box is not None else -0.1
        pad = 6 / max(ax.get_window_extent().height, 1)  # 6 px
        legend = ax.legend(_by_rows(handles, LABELS_IN_ROW), _by_rows(labels, LABELS_IN_ROW),
                           ncol=LABELS_IN_ROW, bbox_to_anchor=(0.5, y - pad), loc="upper center",
                           fontsize=FONT_SIZE, **legend_kw)
        extra = (legend,)
    path = Path(path)
    fig.savefig(path, bbox_extra_artists=extra, bbox_inches="tight", pad_inches=0.2)
    plt.close(fig)
    return path


__all__ = ["FIGSIZE", "FONT_SIZE", "LABELS_IN_ROW", "new_figure", "palette", "save"]
