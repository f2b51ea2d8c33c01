"""Campaign plots (docs/campaigns.md, "Plots"): a metric against a swept axis with confidence
bars, one line per scheme (or other group), facets for a second axis; box plots across
repeats; heat maps over two numeric axes.

Axis values written with a unit (``0.25bdp``, ``10Mbit``, ``20ms``) are plotted at their
number when every value of the axis carries the same unit; a log x scale is used when the
values span more than a factor of 20.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from .style import log_axis  # noqa: E402

from ..campaign.aggregate import aggregate  # noqa: E402
from ..campaign.layout import choose, metric_by, numeric_axis  # noqa: E402
from ..campaign.layout import hue as _hue  # noqa: E402
from ..campaign.index import load_index  # noqa: E402
from ..campaign.metrics import LABELS  # noqa: E402

DEFAULT_METRICS = ("avg_tput_mbps", "p95_delay_ms", "loss_pct", "jain", "utilization_pct",
                   "probe_median_rtt_ms")
def _x(df: pl.DataFrame, col: str):
    """(x positions, tick labels, numeric?, unit) for the values of ``col`` in ``df``."""
    vals = df[col].to_list()
    num = numeric_axis(vals)
    if num is not None:
        return np.array(num[0]), None, True, num[1]
    cats = list(dict.fromkeys(vals))
    pos = {c: i for i, c in enumerate(cats)}
    return np.array([pos[v] for v in vals], dtype=float), [str(c) for c in cats], False, ""


def _log_scale(xs: np.ndarray) -> bool:
    xs = xs[np.isfinite(xs)]
    return bool(len(xs) and xs.min() > 0 and xs.max() / xs.min() > 20)


def plot_metric(stats: pl.DataFrame, x: str, metric: str, path, *, by: Sequence[str] = (),
                facet: str | None = None, title: str | None = None) -> Path:
    """``metric`` (mean with its confidence interval) against axis ``x``, one line per
    ``by`` group, one panel per value of ``facet``."""
    st = stats.filter(pl.col("metric") == metric)
    facets = [None] if facet is None else list(dict.fromkeys(st[facet].to_list()))
    fig, axes = plt.subplots(1, len(facets), figsize=(5.5 * len(facets) + 1, 4.2),
                             squeeze=False, sharey=True)
    level = st["level"][0] if st.height else 0.95
    for ax, fv in zip(axes[0], facets):
        sub = st if fv is None else st.filter(pl.col(facet) == fv)
        sub = sub.with_columns(_hue(sub, by))
        xs_all, ticks, numeric, unit = _x(sub, x)
        sub = sub.with_columns(pl.Series("_x", xs_all))
        for (h,), g in sub.group_by("hue", maintain_order=True):
            g = g.sort("_x")
            xs = g["_x"].to_numpy()
            ys = g["mean"].to_numpy().astype(float)
            err = g["ci_half"].fill_null(0.0).to_numpy().astype(float)
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=str(h))
        if numeric and _log_scale(xs_all):
            log_axis(ax, "x", xs_all)
            ax.minorticks_off()
        if ticks is not None:
            ax.set_xticks(range(len(ticks)))
            ax.set_xticklabels(ticks, rotation=30 if max(map(len, ticks)) > 6 else 0)
        ax.set_xlabel(x + (f" ({unit})" if unit else ""))
        ax.grid(True, alpha=0.3)
        if fv is not None:
            ax.set_title(f"{facet} = {fv}", fontsize="medium")
    axes[0][0].set_ylabel(LABELS.get(metric, metric))
    axes[0][-1].legend(fontsize="small", title=" ".join(by) or None)
    fig.suptitle(title or f"{LABELS.get(metric, metric)}: mean and {level * 100:g} % "
                 "confidence interval over repeats", fontsize="medium")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def plot_box(index: pl.DataFrame, x: str, metric: str, path, *,
             by: Sequence[str] = ("scheme",), facet: str | None = None) -> Path:
    """Box plots of ``metric`` across the runs at each value of ``x``, per ``by`` group
    (flows of one group in one run averaged first), one panel per value of ``facet``."""
    keys = [x] + list(by) + ([facet] if facet and facet not in by else [])
    per_run = (index.group_by(["run_key"] + keys, maintain_order=True)
               .agg(pl.col(metric).mean()).drop_nulls(metric))
    per_run = per_run.with_columns(_hue(per_run, by))
    xs_vals = list(dict.fromkeys(index[x].to_list()))
    num = numeric_axis(xs_vals)
    if num is not None:
        xs_vals = [v for _, v in sorted(zip(num[0], xs_vals))]
    hues = list(dict.fromkeys(per_run["hue"].to_list()))
    facets = [None] if facet is None else list(dict.fromkeys(index[facet].to_list()))
    width = max(6.0, 0.9 * len(xs_vals) * max(1, len(hues)))
    fig, axes = plt.subplots(1, len(facets), figsize=(width * len(facets) ** 0.8, 4.5),
                             squeeze=False, sharey=True)
    w = 0.8 / max(1, len(hues))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, fv in zip(axes[0], facets):
        sub = per_run if fv is None else per_run.filter(pl.col(facet) == fv)
        for j, h in enumerate(hues):
            data = [sub.filter((pl.col(x) == v) & (pl.col("hue") == h))[metric].to_numpy()
                    for v in xs_vals]
            keep = [(i - 0.4 + w * (j + 0.5), d) for i, d in enumerate(data) if len(d)]
            if keep:
                bp = ax.boxplot([d for _, d in keep], positions=[p for p, _ in keep],
                                widths=w * 0.9, patch_artist=True, manage_ticks=False)
                for b in bp["boxes"]:
                    b.set_facecolor(colors[j % len(colors)])
                    b.set_alpha(0.6)
            if ax is axes[0][-1]:
                ax.plot([], [], color=colors[j % len(colors)], lw=6, alpha=0.6, label=str(h))
        ax.set_xticks(range(len(xs_vals)))
        ax.set_xticklabels([str(v) for v in xs_vals])
        ax.set_xlabel(x)
        ax.grid(True, axis="y", alpha=0.3)
        if fv is not None:
            ax.set_title(f"{facet} = {fv}", fontsize="medium")
    axes[0][0].set_ylabel(LABELS.get(metric, metric))
    axes[0][-1].legend(fontsize="small", title=" ".join(by) or None)
    fig.suptitle(f"{LABELS.get(metric, metric)} across repeats", fontsize="medium")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def plot_heatmap(stats: pl.DataFrame, x: str, y: str, metric: str, path, *,
                 group: str | None = None) -> Path:
    """Mean ``metric`` over two axes (cells of several points — further axes — averaged);
    ``group`` names the group the statistics were filtered to, for the title."""
    st = (stats.filter(pl.col("metric") == metric)
          .group_by([x, y], maintain_order=True).agg(pl.col("mean").mean()))
    xv = list(dict.fromkeys(st[x].to_list()))
    yv = list(dict.fromkeys(st[y].to_list()))
    for vals in (xv, yv):
        num = numeric_axis(vals)
        if num is not None:
            vals[:] = [v for _, v in sorted(zip(num[0], vals))]
    grid = np.full((len(yv), len(xv)), np.nan)
    for r in st.iter_rows(named=True):
        if r["mean"] is not None:
            grid[yv.index(r[y]), xv.index(r[x])] = r["mean"]
    fig, ax = plt.subplots(figsize=(1.1 * len(xv) + 3, 0.7 * len(yv) + 2))
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    for i in range(len(yv)):
        for j in range(len(xv)):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.3g}", ha="center", va="center", fontsize="small",
                        color="w" if grid[i, j] < np.nanmean(grid) else "k")
    ax.set_xticks(range(len(xv)))
    ax.set_xticklabels([str(v) for v in xv])
    ax.set_yticks(range(len(yv)))
    ax.set_yticklabels([str(v) for v in yv])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    fig.colorbar(im, ax=ax, label=LABELS.get(metric, metric))
    ax.set_title(f"mean {LABELS.get(metric, metric)}" + (f" — {group}" if group else ""),
                 fontsize="medium")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


def plot_campaign(campaign_dir, out_dir=None, *, x: str | None = None,
                  by: Sequence[str] = ("scheme",), metrics: Sequence[str] = DEFAULT_METRICS,
                  level: float = 0.95, fmt: str = "png") -> list[Path]:
    """The standard campaign figures into ``out_dir`` (default DIR/plots): for each metric,
    its mean ± CI against ``x`` (default: the first numeric swept axis, else the first axis)
    with facets for a second axis; box plots of throughput and p95 delay across repeats;
    for two numeric axes, heat maps of throughput per group."""
    root = Path(campaign_dir)
    index = load_index(root)
    out = Path(out_dir) if out_dir else root / "plots"
    out.mkdir(parents=True, exist_ok=True)
    lay = choose(index, root, x=x, by=by)
    x, by, facet, numeric = lay.x, lay.by, lay.facet, lay.numeric
    stats = aggregate(index, by=by, metrics=list(metrics), level=level)
    files = []
    for m in metrics:
        if stats.filter((pl.col("metric") == m) & pl.col("mean").is_not_null()).is_empty():
            continue
        mby = metric_by(index, m, by)  # a run-level metric: not one identical line per scheme
        st = stats if mby == by else aggregate(index, by=mby, metrics=[m], level=level)
        files.append(plot_metric(st, x, m, out / f"{_safe(m)}-vs-{_safe(x)}.{fmt}", by=mby,
                                 facet=facet))
    for m in ("avg_tput_mbps", "p95_delay_ms"):
        if m in metrics and index[m].drop_nulls().len():
            files.append(plot_box(index, x, m, out / f"box-{_safe(m)}-vs-{_safe(x)}.{fmt}",
                                  by=by, facet=facet))
    ys = [c for c in numeric if c != x]
    if x in numeric and ys and "avg_tput_mbps" in metrics:
        y = ys[0]
        st = aggregate(index, by=by, metrics=["avg_tput_mbps"], level=level)
        groups = list(dict.fromkeys(_hue(st, by).to_list())) if by else [None]
        for g in groups:
            sub = st if g is None else st.with_columns(_hue(st, by)).filter(pl.col("hue") == g)
            files.append(plot_heatmap(sub, x, y, "avg_tput_mbps",
                                      out / f"heat-avg_tput_mbps-{_safe(x)}-{_safe(y)}"
                                      f"{'-' + _safe(g) if g else ''}.{fmt}", group=g))
    return files
