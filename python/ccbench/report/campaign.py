"""A self-contained interactive page for a campaign directory (`ccbench sweep` writes it,
`ccbench report DIR` rewrites it): the expectations' verdicts, each metric's mean with its
confidence band against the x axis per group with a panel per facet value, box plots across
repeats, heat maps over two axes, a table of every point with its runs (links to their
report.html where written, and each run's per-flow numbers embedded), and the failures.

Numbers come from the campaign index and :func:`ccbench.campaign.aggregate`; nothing is
recomputed here. The layout (x axis, lines, facets) is :func:`ccbench.campaign.layout.choose`,
as for the static campaign plots.
"""
from __future__ import annotations

import html
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
from bokeh.models import (BasicTicker, ColorBar, ColumnDataSource, FactorRange, FixedTicker,
                          HoverTool, Legend, LinearColorMapper, Range1d)
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from ..analysis.metrics import LOSS_DEFINITION, LOSS_LABEL
from ..campaign.aggregate import aggregate
from ..campaign.axes import log_ticks
from ..campaign.index import load_index
from ..campaign.metrics import LABELS
from ..campaign.layout import Layout, choose, hue, metric_by, numeric_axis, ordered
from .markup import CSS, fmt, th_title, verdicts_panel
from .interactive import styles

METRICS = ("avg_tput_mbps", "p95_delay_ms", "mean_delay_ms", "loss_pct", "jain",
           "utilization_pct", "fct_mean_ms", "probe_median_rtt_ms")
BOX_METRICS = ("avg_tput_mbps", "p95_delay_ms")
HEAT_METRICS = ("avg_tput_mbps", "p95_delay_ms")
WIDTH, HEIGHT = 560, 340
TOOLS = "pan,wheel_zoom,box_zoom,reset,save"


def _xpos(values, col: str):
    """x positions of an axis's values: (numbers, unit, log?) or None for a categorical axis."""
    num = numeric_axis(list(values))
    if num is None:
        return None
    xs = np.array(num[0])
    pos = xs[xs > 0]
    log = bool(len(pos) == len(xs) and len(xs) and xs.max() / xs.min() > 20)
    return dict(zip(values, num[0])), num[1], log


def _x_range(nums: list[float], log: bool) -> Range1d:
    lo, hi = min(nums), max(nums)
    if log:
        return Range1d(lo / 1.4, hi * 1.4)
    pad = (hi - lo) * 0.05 or max(abs(lo) * 0.1, 1.0)
    return Range1d(lo - pad, hi + pad)


def metric_figures(stats: pl.DataFrame, lay, metric: str, xinfo, x_range, facets):
    """Mean with its confidence band against the x axis, one line per group, a panel per
    facet value (panels share their y axis)."""
    st = stats.filter(pl.col("metric") == metric)
    st = st.with_columns(hue(st, lay.by))
    hues = list(dict.fromkeys(st["hue"].to_list()))
    sty = dict(zip(hues, styles(len(hues))))
    level = st["level"][0] if st.height else 0.95
    figs, y_range = [], None
    xvals = ordered(st[lay.x].to_list())
    for fv in facets:
        sub = st if fv is None else st.filter(pl.col(lay.facet) == fv)
        title = (f"{LABELS.get(metric, metric)} vs {lay.x}"
                 + ("" if fv is None else f" — {lay.facet} = {fv}"))
        kw = {"y_range": y_range} if y_range is not None else {}
        if xinfo is None:
            kw["x_range"] = FactorRange(*[str(v) for v in xvals])
        else:
            kw["x_range"] = x_range
            kw["x_axis_type"] = "log" if xinfo[2] else "linear"
        f = figure(title=title, width=WIDTH if len(facets) > 1 else 2 * WIDTH, height=HEIGHT,
                   tools=TOOLS, x_axis_label=lay.x + (f" ({xinfo[1]})" if xinfo and xinfo[1] else ""),
                   y_axis_label=LABELS.get(metric, metric), **kw)
        f.toolbar.logo = None
        if xinfo and xinfo[2]:  # log axis: a tick at every swept value
            f.xaxis.ticker = FixedTicker(ticks=log_ticks(xinfo[0].values()))
        f.add_layout(Legend(click_policy="hide", label_text_font_size="8pt"), "right")
        y_range = f.y_range
        for h in hues:
            g = sub.filter((pl.col("hue") == h) & pl.col("mean").is_not_null())
            if not g.height:
                continue
            pos = [xinfo[0][v] if xinfo else xvals.index(v) for v in g[lay.x].to_list()]
            order = np.argsort(pos, kind="stable")
            rows = [g.row(int(i), named=True) for i in order]
            xs = [xinfo[0][r[lay.x]] if xinfo else str(r[lay.x]) for r in rows]
            mean = [r["mean"] for r in rows]
            lo = [r["ci_low"] if r["ci_low"] is not None else r["mean"] for r in rows]
            hi = [r["ci_high"] if r["ci_high"] is not None else r["mean"] for r in rows]
            src = ColumnDataSource({"x": xs, "mean": mean, "lo": lo, "hi": hi,
                                    "n": [r["n"] for r in rows], "label": [r["label"] for r in rows],
                                    "half": [r["ci_half"] if r["ci_half"] is not None else float("nan")
                                             for r in rows]})
            color, dash = sty[h]
            name = str(h)
            f.varea(x="x", y1="lo", y2="hi", source=src, fill_color=color, fill_alpha=0.15,
                    legend_label=name)
            f.line("x", "mean", source=src, color=color, line_dash=dash, line_width=2,
                   legend_label=name)
            f.scatter("x", "mean", source=src, color=color, size=7, legend_label=name, name=name)
        f.add_tools(HoverTool(tooltips=[("", "$name"), ("point", "@label"),
                                        ("mean", "@mean{0.000}"),
                                        (f"{level * 100:g} % CI", "± @half{0.000}"),
                                        ("runs", "@n")], mode="mouse"))
        figs.append(f)
    return figs


def box_figures(index: pl.DataFrame, lay, metric: str, facets):
    """Box plots across the runs at each x value per group (the group's flows in one run
    averaged first); each run is a dot (hover: its point, repeat and seed)."""
    keys = [lay.x] + lay.by + ([lay.facet] if lay.facet and lay.facet not in lay.by else [])
    per_run = (index.group_by(["run_key", "label", "repeat", "seed"] + keys, maintain_order=True)
               .agg(pl.col(metric).mean()).drop_nulls(metric))
    per_run = per_run.with_columns(hue(per_run, lay.by))
    hues = list(dict.fromkeys(per_run["hue"].to_list()))
    sty = dict(zip(hues, styles(len(hues))))
    xvals = [str(v) for v in ordered(index[lay.x].to_list())]
    figs, y_range = [], None
    for fv in facets:
        sub = per_run if fv is None else per_run.filter(pl.col(lay.facet) == fv)
        factors = [(xv, h) for xv in xvals for h in hues]
        kw = {"y_range": y_range} if y_range is not None else {}
        f = figure(title=f"{LABELS.get(metric, metric)} across repeats vs {lay.x}"
                   + ("" if fv is None else f" — {lay.facet} = {fv}"),
                   width=WIDTH if len(facets) > 1 else 2 * WIDTH, height=HEIGHT, tools=TOOLS, x_range=FactorRange(*factors),
                   x_axis_label=lay.x, y_axis_label=LABELS.get(metric, metric), **kw)
        f.toolbar.logo = None
        f.xaxis.major_label_orientation = 0.9 if len(hues) > 1 else 0
        f.xaxis.group_text_font_size = "8pt"
        y_range = f.y_range
        box = {k: [] for k in ("x", "q1", "q2", "q3", "lo", "hi", "c", "n")}
        dots = {k: [] for k in ("x", "y", "c", "label", "repeat", "seed")}
        for (xv, h) in factors:
            g = sub.filter((pl.col(lay.x).cast(pl.String) == xv) & (pl.col("hue") == h))
            if not g.height:
                continue
            v = g[metric].to_numpy().astype(float)
            q1, q2, q3 = np.percentile(v, [25, 50, 75])
            iqr = q3 - q1
            inside = v[(v >= q1 - 1.5 * iqr) & (v <= q3 + 1.5 * iqr)]
            for k, val in zip(box, ((xv, h), q1, q2, q3, inside.min(), inside.max(), sty[h][0],
                                    len(v))):
                box[k].append(val)
            for r in g.iter_rows(named=True):
                dots["x"].append((xv, h))
                dots["y"].append(r[metric])
                dots["c"].append(sty[h][0])
                dots["label"].append(r["label"])
                dots["repeat"].append(r["repeat"])
                dots["seed"].append(str(r["seed"]))
        bsrc = ColumnDataSource(box)
        f.segment("x", "lo", "x", "hi", source=bsrc, line_color="#555555")
        f.vbar(x="x", width=0.7, bottom="q1", top="q3", source=bsrc, fill_color="c",
               fill_alpha=0.45, line_color="#444444")
        f.rect(x="x", y="q2", width=0.7, height=0.0001, height_units="screen", source=bsrc,
               line_color="#111111", line_width=2)
        dsrc = ColumnDataSource(dots)
        dr = f.scatter("x", "y", source=dsrc, size=5, color="c", line_color="#222222",
                       alpha=0.9)
        f.add_tools(HoverTool(tooltips=[("point", "@label"), ("repeat", "@repeat"),
                                        ("seed", "@seed"), ("value", "@y{0.000}")],
                              renderers=[dr]))
        figs.append(f)
    return figs


def heat_figures(index: pl.DataFrame, lay, metric: str, level: float):
    """Mean ``metric`` over x and the next swept axis: one map per group, or a single map
    when the y axis determines the group (e.g. a scheme axis against a scheme group)."""
    ys = [c for c in lay.swept if c != lay.x]
    if not ys:
        return []
    y = ys[0]
    h = index.with_columns(hue(index, lay.by))
    single = h.group_by(y).agg(pl.col("hue").n_unique())["hue"].max() == 1
    by = [] if single else [b for b in lay.by if b != y]
    st = aggregate(index, by=by, metrics=[metric], level=level)
    st = st.with_columns(hue(st, by))
    xv = [str(v) for v in ordered(index[lay.x].to_list())]
    yv = [str(v) for v in ordered(index[y].to_list())]
    figs = []
    for g in dict.fromkeys(st["hue"].to_list()):
        cells = (st.filter(pl.col("hue") == g)
                 .group_by([lay.x, y], maintain_order=True).agg(pl.col("mean").mean()))
        cells = cells.filter(pl.col("mean").is_not_null())
        if not cells.height:
            continue
        vals = cells["mean"].to_numpy().astype(float)
        lo, hi = float(vals.min()), float(vals.max())
        mapper = LinearColorMapper(palette=Viridis256, low=lo, high=hi if hi > lo else lo + 1e-9)
        mid = (lo + hi) / 2
        src = ColumnDataSource({"x": [str(v) for v in cells[lay.x].to_list()],
                                "y": [str(v) for v in cells[y].to_list()], "v": vals,
                                "t": [format(v, ".3g") for v in vals],
                                "tc": ["white" if v < mid else "black" for v in vals]})
        f = figure(title=f"mean {LABELS.get(metric, metric)} over {lay.x} × {y}"
                   + ("" if g == "all" else f" — {g}"), width=WIDTH,
                   height=max(220, 60 * len(yv) + 120), tools="hover,save,reset",
                   x_range=FactorRange(*xv), y_range=FactorRange(*yv), x_axis_label=lay.x,
                   y_axis_label=y, tooltips=[(lay.x, "@x"), (y, "@y"), ("mean", "@v{0.000}")])
        f.toolbar.logo = None
        f.rect("x", "y", width=1, height=1, source=src, fill_color={"field": "v",
               "transform": mapper}, line_color=None)
        f.text("x", "y", text="t", source=src, text_align="center", text_baseline="middle",
               text_font_size="8pt", text_color="tc")
        f.add_layout(ColorBar(color_mapper=mapper, ticker=BasicTicker(), width=10), "right")
        f.grid.visible = False
        figs.append(f)
    return figs


def failures(root: Path) -> list[dict]:
    out = []
    for p in sorted((root / "failed").glob("*.json")) if (root / "failed").is_dir() else ():
        try:
            out.append(json.loads(p.read_text()))
        except (OSError, ValueError):
            out.append({"key": p.stem, "error": f"unreadable failure record {p.name}"})
    return sorted(out, key=lambda f: (f.get("point", 0) or 0, f.get("repeat", 0) or 0))


def _points_table(root: Path, index: pl.DataFrame, lay, manifest: dict, fails: list[dict]) -> str:
    """A row per point: its values, runs finished / planned, mean throughput and p95 delay per
    group; under it the runs (link to report.html or the results directory) and their flows."""
    reps = (manifest.get("plan") or {}).get("repeats")
    cols = [c for c in lay.swept]
    fail_by = {}
    for f in fails:
        fail_by.setdefault(f.get("point"), []).append(f)
    rows = []
    head = ("<tr><th>#</th><th class='l'>label</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols)
            + "<th>runs</th><th class='l'>per group: mean throughput Mbit/s · p95 delay ms</th>"
            "<th class='l'>runs of the point</th></tr>")
    for (pt,), g in index.group_by("point", maintain_order=True):
        first = g.row(0, named=True)
        keys = list(dict.fromkeys(g["run_key"].to_list()))
        nf = len(fail_by.get(pt, []))
        per = g.with_columns(hue(g, lay.by if lay.by != [lay.x] else [])).group_by("hue", maintain_order=True).agg(
            pl.col("avg_tput_mbps").mean(), pl.col("p95_delay_ms").mean())
        summ = "; ".join(f"{html.escape(str(r['hue']))}: {fmt(r['avg_tput_mbps'], '.2f')} · "
                         f"{fmt(r['p95_delay_ms'], '.1f')}" for r in per.iter_rows(named=True))
        runs = []
        for (key, rep, seed), rg in g.group_by(["run_key", "repeat", "seed"], maintain_order=True):
            rel = f"runs/{key}/"
            href = html.escape(rel, quote=True)
            link = (f"<a href='{href}report.html'>report</a>" if (root / rel / "report.html").is_file()
                    else f"<a href='{href}'>results</a>")
            flows = "".join(
                f"<tr><td class='l'>{html.escape(str(r['flow_label']))}</td><td class='l'>"
                f"{html.escape(str(r['scheme']))}</td><td>{fmt(r['avg_tput_mbps'], '.2f')}</td>"
                f"<td>{fmt(r['mean_delay_ms'], '.2f')}</td><td>{fmt(r['p95_delay_ms'], '.2f')}</td>"
                f"<td>{fmt(r['loss_pct'], '.3f')}</td><td>{fmt(r['utilization_pct'], '.1f')}</td></tr>"
                for r in rg.iter_rows(named=True))
            runs.append(f"<details><summary>repeat {html.escape(str(rep))} · seed {html.escape(str(seed))} · {link} · Jain "
                        f"{fmt(rg['jain'][0], '.3f')}</summary><table class='small'><tr>"
                        "<th class='l'>flow</th><th class='l'>scheme</th><th>tput Mbit/s</th>"
                        "<th>mean OWD ms</th><th>p95 OWD ms</th>"
                        f"<th{th_title(LOSS_DEFINITION)}>{LOSS_LABEL}</th><th>util %</th>"
                        f"</tr>{flows}</table></details>")
        vals = "".join(f"<td>{fmt(first[c], 'g')}</td>" for c in cols)
        bad = f" <span class='bad'>({nf} failed)</span>" if nf else ""
        rows.append(f"<tr id='point-{pt}'><td>{pt}</td><td class='l'>{html.escape(str(first['label']))}"
                    f"</td>{vals}<td>{len(keys)}{'/' + str(reps) if reps else ''}{bad}</td>"
                    f"<td class='l'>{summ}</td><td class='l'>{''.join(runs)}</td></tr>")
    done = set(index["point"].unique().to_list())
    for pt, fl in sorted(fail_by.items(), key=lambda p: p[0] if p[0] is not None else -1):
        if pt in done:
            continue
        rows.append(f"<tr id='point-{pt}' class='bad'><td>{pt}</td><td class='l'>"
                    f"{html.escape(str(fl[0].get('label')))}</td>" + "<td></td>" * len(cols)
                    + f"<td>0{'/' + str(reps) if reps else ''} <span class='bad'>({len(fl)} failed)"
                    "</span></td><td class='l'>no finished run</td><td></td></tr>")
    return f"<table class='points'>{head}{''.join(rows)}</table>"


def _failures_html(fails: list[dict]) -> str:
    if not fails:
        return "<p>No failed runs.</p>"
    rows = "".join(
        f"<tr><td class='l'>{html.escape(str(f.get('label')))}</td><td>{f.get('repeat')}</td>"
        f"<td>{f.get('seed')}</td><td class='l'><code>{html.escape(str(f.get('key')))}</code></td>"
        f"<td class='l'>{html.escape(str(f.get('error')))}"
        + (f"<details><summary>traceback</summary><pre>{html.escape(f['traceback'])}</pre></details>"
           if f.get("traceback") else "") + "</td></tr>" for f in fails)
    return ("<table><tr><th class='l'>point</th><th>repeat</th><th>seed</th><th class='l'>key</th>"
            f"<th class='l'>error</th></tr>{rows}</table><p class='meta'>Records in failed/&lt;key&gt;.json; "
            "rerun the same <code>ccbench sweep</code> command to retry them.</p>")


def figures(index: pl.DataFrame, root: Path | None = None, *, level: float = 0.95,
            x: str | None = None, by=("scheme",)):
    """(layout, [(kind, title, [figures])]) of a campaign index: metric against x with bands,
    box plots, heat maps. (None, []) without finished runs."""
    if not index.height:
        return None, []
    try:
        lay = choose(index, root, x=x, by=by)
    except ValueError:  # repeats only (no axis varies): the table of runs, no figure
        return Layout(x=None, by=[b for b in by if b in index.columns], facet=None, swept=[],
                      numeric=[]), []
    metrics = [m for m in METRICS if m in index.columns and index[m].drop_nulls().n_unique() > 1]
    stats = aggregate(index, by=lay.by, metrics=metrics, level=level)
    facets = [None] if lay.facet is None else ordered(index[lay.facet].to_list())
    xinfo = _xpos(ordered(index[lay.x].to_list()), lay.x)
    x_range = _x_range(list(xinfo[0].values()), xinfo[2]) if xinfo else None
    sections = []
    for m in metrics:
        mby = metric_by(index, m, lay.by)
        if mby == lay.by:
            figs = metric_figures(stats, lay, m, xinfo, x_range, facets)
        else:  # one value per run: one line per run-level group, not one per scheme
            figs = metric_figures(aggregate(index, by=mby, metrics=[m], level=level),
                                  replace(lay, by=mby), m, xinfo, x_range, facets)
        sections.append(("metric", LABELS.get(m, m), figs))
    for m in BOX_METRICS:
        if m in metrics:
            sections.append(("box", f"{LABELS[m]} across repeats",
                             box_figures(index, lay, m, facets)))
    for m in HEAT_METRICS:
        if m in metrics:
            figs = heat_figures(index, lay, m, level)
            if figs:
                sections.append(("heat", f"heat map: {LABELS[m]}", figs))
    return lay, sections


def render(root: str | Path, *, level: float = 0.95, x: str | None = None,
           by=("scheme",), verdicts=None) -> str:
    from bokeh.embed import components
    from bokeh.layouts import gridplot
    from bokeh.resources import Resources
    from bokeh.settings import settings
    root = Path(root)
    index = load_index(root)
    manifest = json.loads((root / "campaign.json").read_text()) if (root / "campaign.json").is_file() else {}
    fails = failures(root)
    if verdicts is None:
        from ..campaign.verdicts import evaluate_dir
        verdicts = evaluate_dir(root, index=index)
    lay, sections = figures(index, root, level=level, x=x, by=by)
    if sections:
        settings.perform_document_validation.set_value(False)
        try:
            script, divs = components([gridplot(fs, ncols=2,
                                                toolbar_location="right", merge_tools=False)
                                       for k, _, fs in sections])
        finally:
            settings.perform_document_validation.unset_value()
    else:
        script, divs = "", []
    name = manifest.get("name") or root.name
    plan = manifest.get("plan") or {}
    sess = (manifest.get("sessions") or [{}])[-1]
    n_runs = index["run_key"].n_unique() if index.height else 0
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>ccbench campaign: "
           f"{html.escape(name)}</title><style>{CSS} table.small{{font-size:.85em}} "
           f"span.bad,tr.bad td{{color:#b00020}} table.points td{{vertical-align:top}} "
           f"details summary{{cursor:pointer}}</style>"
           f"{Resources(mode='inline', components=['bokeh']).render() if divs else ''}{script}</head><body>",
           f"<h1>ccbench campaign — {html.escape(name)}</h1>",
           f"<p class='meta'>{html.escape(str(manifest.get('campaign_file') or ''))} · "
           f"{n_runs} of {plan.get('runs', '?')} runs finished ({plan.get('points', '?')} points × "
           f"{plan.get('repeats', '?')} repeats), {len(fails)} failed · backend "
           f"{html.escape(str(plan.get('backend', '?')))} · ccbench "
           f"{html.escape(str(manifest.get('ccbench_version')))} · commit "
           f"{html.escape(str(manifest.get('git_commit') or '?')[:12])}"
           f"{' (uncommitted changes)' if manifest.get('git_dirty') else ''} · last session "
           f"{html.escape(str(sess.get('started', '?')))} (executor: {html.escape(str(sess.get('executor', '?')))})</p>"]
    if plan.get("seed_note"):
        out.append(f"<p class='bad'>Note: {html.escape(str(plan['seed_note']))}</p>")
    out.append(verdicts_panel(verdicts, "Campaign expectations"))
    if sections:
        out.append(f"<p class='meta'>x axis: <b>{html.escape(lay.x)}</b>; one line per "
                   f"<b>{html.escape(' '.join(lay.by) or 'run')}</b>"
                   + (f"; one panel per <b>{html.escape(lay.facet)}</b>" if lay.facet else "")
                   + f". Bands and hover: mean across repeats with its {level * 100:g} % Student-t "
                   "confidence interval (flows of a group within a run averaged first; "
                   "docs/campaigns.md). Drag to pan, wheel to zoom, click a legend entry to hide "
                   "a line.</p>")
        last = None
        for (kind, title, _), div in zip(sections, divs):
            if kind != last:
                out.append({"metric": f"<h2>Metrics against {html.escape(lay.x)}</h2>",
                            "box": "<h2>Spread across repeats</h2>",
                            "heat": "<h2>Heat maps</h2>"}[kind])
                last = kind
            out.append(f"<h3>{html.escape(title)}</h3>{div}")
    else:
        out.append("<p>No finished run yet.</p>" if lay is None else
                   "<p>No swept value varies (repeats only): no figure; the runs are below.</p>")
    out.append("<h2>Points</h2><p class='meta'>Each run: a link to its report.html where one was "
               "written (<code>ccbench sweep --plots</code>, or <code>ccbench report "
               "DIR/runs/KEY</code>), else to its results directory; its per-flow numbers are "
               "embedded here.</p>")
    out.append(_points_table(root, index, lay, manifest, fails) if lay is not None else "")
    out.append(f"<h2>Failures</h2>{_failures_html(fails)}")
    out.append("<h2>Provenance</h2><details><summary>campaign.json</summary><pre>"
               + html.escape(json.dumps(manifest, indent=1, default=str)) + "</pre></details>")
    out.append("</body></html>")
    return "\n".join(out)


def write_campaign_report(root: str | Path, *, level: float = 0.95, x: str | None = None,
                          by=("scheme",), verdicts=None) -> Path:
    """Write DIR/report.html for a campaign directory (self-contained: library, figures and
    data embedded; links to the runs are relative, so DIR can be moved as a whole)."""
    root = Path(root)
    path = root / "report.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render(root, level=level, x=x, by=by, verdicts=verdicts))
    tmp.replace(path)
    return path


__all__ = ["render", "write_campaign_report"]
