"""A self-contained interactive page comparing runs of one experiment (`ccbench compare`,
`--backend both`): two runs as side-by-side tables with large differences highlighted and A/B
overlays (A solid, B dashed; one colour per curve); three or more as one row per run × curve
and overlays with one colour per run and one dash per flow; linked, zoomable time axes."""
from __future__ import annotations

import html
from pathlib import Path

import polars as pl

from ..analysis.compare import METRICS
from ..analysis.metrics import DEFINITIONS
from .markup import CSS, fmt, th_title
from .interactive import DASHES, add_hover, add_line, styles, thin, time_figure

#: |B − A| / |A| above this is highlighted
HIGHLIGHT_PCT = 10.0


def _table(c) -> str:
    head = "<tr><th class='l'>curve</th>" + "".join(
        f"<th{th_title(DEFINITIONS.get(m))}>{html.escape(lbl)} A</th><th{th_title(DEFINITIONS.get(m))}>"
        f"{html.escape(lbl)} B</th><th>Δ %</th>" for m, lbl in METRICS) + "</tr>"
    rows = []
    for r in c.table.iter_rows(named=True):
        cells = [f"<td class='l'>{html.escape(str(r['curve']))}</td>"]
        for m, _ in METRICS:
            d = r.get(f"{m}_diff_pct")
            hi = d is not None and abs(d) > HIGHLIGHT_PCT
            cells.append(f"<td>{fmt(r.get(f'{m}_a'), '.2f')}</td><td>{fmt(r.get(f'{m}_b'), '.2f')}</td>"
                         f"<td class='{'hi' if hi else ''}'>{fmt(d, '+.1f')}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _overlays(runs, intervals, labels, interval: float, style, how: str):
    """Per-interval throughput and delay per curve, then cwnd and smoothed RTT per flow, of
    each run (``runs``: [(tag, Results)], ``intervals``: their per-interval tables);
    ``style(run index, curve or flow index)`` -> (colour, dash); ``how`` says which is which."""
    from .bk import Range1d
    dur = max(r.experiment["duration_ns"] for _, r in runs) / 1e9
    x = Range1d(0, dur, bounds=(0, dur))
    curves = list(dict.fromkeys(c for df in intervals for c in df["curve"].to_list()))
    figs = []
    for col, unit, title in (("rate_mbps", "Mbit/s", "throughput"), ("delay_ms", "ms", "mean one-way delay")):
        f = time_figure(f"{title} per {interval:g} s interval per flow ({how})", unit, x)
        for k, ((tag, _), df) in enumerate(zip(runs, intervals)):
            for ci, cur in enumerate(curves):
                g = df.filter((pl.col("curve") == cur) & pl.col(col).is_not_null()).sort("t_s")
                if g.height:
                    add_line(f, g["t_s"].to_numpy() + interval / 2, g[col].to_numpy(), f"{tag}: {cur}",
                             style(k, ci))
        add_hover(f, unit, "{0.00}")
        figs.append(f)
    for col, scale, unit, title in (("cwnd", 1.0, "packets", "congestion window"),
                                    ("srtt_us", 1e-3, "ms", "smoothed RTT")):
        f = time_figure(f"{title} per flow ({how})", unit, x)
        for k, (tag, res) in enumerate(runs):
            fl = res.flows
            if fl is None or col not in fl.columns:
                continue
            s = fl.filter(pl.col(col) > 0).sort("flow", "time_ns")
            for (fid,), g in s.group_by("flow", maintain_order=True):
                t, y = thin(g["time_ns"].to_numpy() / 1e9, g[col].cast(pl.Float64).to_numpy() * scale)
                i = int(fid)
                add_line(f, t, y, f"{tag}: {labels[i] if i < len(labels) else f'flow {i + 1}'}",
                         style(k, i), 1.2)
        add_hover(f, unit, "{0.000}")
        figs.append(f)
    return figs + _probe_overlay(runs, x, style, how)


def _probe_overlay(runs, x, style, how: str) -> list:
    """The latency probes' RTT of each run (runs with probe flows only)."""
    from ..analysis.probes import probe_series
    series = [(k, tag, probe_series(res)) for k, (tag, res) in enumerate(runs)]
    if not any(s.height for _, _, s in series):
        return []
    f = time_figure(f"RTT under load: latency probes ({how})", "ms", x)
    for k, tag, s in series:
        for (fid, lab), g in s.group_by("flow", "label", maintain_order=True):
            add_line(f, *thin(g["t_s"].to_numpy(), g["rtt_ms"].to_numpy()), f"{tag}: {lab}",
                     style(k, int(fid)), 1.2)
    add_hover(f, "ms", "{0.00}")
    return [f]


def figures(c, interval: float):
    """A/B overlays: one colour per curve, A solid, B dashed."""
    curves = list(dict.fromkeys(c.a_intervals["curve"].to_list() + c.b_intervals["curve"].to_list()))
    colours = [col for col, _ in styles(max(len(curves), len(c.a.experiment["flows"])))]
    return _overlays([("A", c.a), ("B", c.b)], [c.a_intervals, c.b_intervals],
                     [fl["label"] for fl in c.a.experiment["flows"]], interval,
                     lambda k, i: (colours[i % len(colours)], ("solid", "dashed")[k]),
                     f"A {c.name_a} solid, B {c.name_b} dashed")


def render(c, interval: float = 0.5) -> str:
    from .bk import column, components, library
    figs = figures(c, interval)
    script, (div,) = components([column(figs, sizing_mode="stretch_width")])
    ja, jb = c.jain
    meta = lambda r: (f"{html.escape(str(r.meta.get('backend')))} · seed {html.escape(str(r.meta.get('seed')))} · "
                      f"{html.escape(str(r.path))}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>ccbench comparison</title>"
            f"<style>{CSS} td.hi{{background:#ffe0b2;font-weight:bold}}</style>"
            f"{library()}{script}</head><body>"
            f"<h1>ccbench comparison — A: {html.escape(c.name_a)}, B: {html.escape(c.name_b)}</h1>"
            f"<p class='meta'>A: {meta(c.a)}<br>B: {meta(c.b)}</p>"
            + _warnings_and_differences(c)
            + f"<h2>Summary</h2><p class='meta'>Aggregation interval {interval:g} s; Δ % = (B − A) / |A|; "
            f"highlighted where |Δ| &gt; {HIGHLIGHT_PCT:g} %. Jain's index over flows: A {fmt(ja, '.4f')}, "
            f"B {fmt(jb, '.4f')}.</p>{_table(c)}<h2>Time series</h2>{div}</body></html>")


def _many_table(c) -> str:
    head = "<tr><th class='l'>run</th><th class='l'>curve</th>" + "".join(
        f"<th{th_title(DEFINITIONS.get(m))}>{html.escape(lbl)}</th><th>Δ % vs A</th>"
        for m, lbl in METRICS) + "</tr>"
    rows = []
    for r in c.table.iter_rows(named=True):
        cells = [f"<td class='l'>{html.escape(r['run'])}</td>",
                 f"<td class='l'>{html.escape(str(r['curve']))}</td>"]
        for m, _ in METRICS:
            d = r.get(f"{m}_vs_a_pct")
            hi = d is not None and abs(d) > HIGHLIGHT_PCT
            cells.append(f"<td>{fmt(r.get(m), '.2f')}</td>"
                         f"<td class='{'hi' if hi else ''}'>{fmt(d, '+.1f')}</td>")
        total = str(r["curve"]).startswith("Total")
        rows.append(f"<tr{' style=font-weight:bold' if total else ''}>" + "".join(cells) + "</tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def many_figures(c, interval: float):
    """Overlays of every run: one colour per run, one dash per flow (the legend names both)."""
    colours = [col for col, _ in styles(len(c.runs))]
    return _overlays(list(zip(c.tags, c.runs)), c.intervals,
                     [fl["label"] for fl in c.runs[0].experiment["flows"]], interval,
                     lambda k, i: (colours[k], DASHES[i % len(DASHES)]), "colour: run, dash: flow")


def render_many(c, interval: float = 0.5) -> str:
    """The page of a :class:`ccbench.analysis.compare.MultiComparison`."""
    from .bk import column, components, library
    script, (div,) = components([column(many_figures(c, interval), sizing_mode="stretch_width")])
    runs = "<br>".join(f"{t}: {html.escape(n)} · seed {html.escape(str(r.meta.get('seed')))} · "
                       f"{html.escape(str(r.path))}" for t, n, r in zip(c.tags, c.names, c.runs))
    jain = ", ".join(f"{t} {fmt(j, '.4f')}" for t, j in zip(c.tags, c.jain))
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>ccbench comparison</title>"
            f"<style>{CSS} td.hi{{background:#ffe0b2;font-weight:bold}}</style>"
            f"{library()}{script}</head><body>"
            f"<h1>ccbench comparison of {len(c.runs)} runs</h1><p class='meta'>{runs}</p>"
            + _warnings_and_differences(c)
            + f"<h2>Summary</h2><p class='meta'>Aggregation interval {interval:g} s; Δ % = (run − A)"
            f" / |A| for the same curve; highlighted where |Δ| &gt; {HIGHLIGHT_PCT:g} %. Jain's index "
            f"over flows: {jain}.</p>{_many_table(c)}<h2>Time series</h2>{div}</body></html>")


def _warnings_and_differences(c) -> str:
    return ("".join(f"<p class='bad'><b>Warning</b>: {html.escape(w)}</p>" for w in c.warnings)
            + ("<p class='meta'>Set-up differences: " + "; ".join(html.escape(d) for d in c.differences)
               + "</p>" if c.differences else "<p class='meta'>Set-up differences: none in "
               "duration, links, flows, TCP settings and seed.</p>"))


def write_comparison_report(c, out_dir: str | Path, interval: float = 0.5) -> Path:
    """Write OUT_DIR/report.html for a :class:`ccbench.analysis.compare.Comparison` or a
    :class:`~ccbench.analysis.compare.MultiComparison`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.html"
    path.write_text(render_many(c, interval) if hasattr(c, "runs") else render(c, interval))
    return path


__all__ = ["HIGHLIGHT_PCT", "render", "render_many", "write_comparison_report"]
