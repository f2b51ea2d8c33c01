"""A self-contained interactive page comparing two runs of one experiment (`ccbench compare`,
`--backend both`): side-by-side tables with large differences highlighted, and A/B overlays
(A solid, B dashed; one colour per curve) on linked, zoomable time axes."""
from __future__ import annotations

import html
from pathlib import Path

import polars as pl

from ..analysis.compare import METRICS
from .markup import CSS, fmt
from .interactive import add_hover, add_line, styles, thin, time_figure

#: |B − A| / |A| above this is highlighted
HIGHLIGHT_PCT = 10.0


def _table(c) -> str:
    head = "<tr><th class='l'>curve</th>" + "".join(
        f"<th>{html.escape(lbl)} A</th><th>{html.escape(lbl)} B</th><th>Δ %</th>" for _, lbl in METRICS) + "</tr>"
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


def figures(c, interval: float):
    from .bk import Range1d
    dur = max(c.a.experiment["duration_ns"], c.b.experiment["duration_ns"]) / 1e9
    x = Range1d(0, dur, bounds=(0, dur))
    curves = list(dict.fromkeys(c.a_intervals["curve"].to_list() + c.b_intervals["curve"].to_list()))
    st = dict(zip(curves, styles(len(curves))))
    figs = []
    for col, unit, title in (("rate_mbps", "Mbit/s", "throughput"), ("delay_ms", "ms", "mean one-way delay")):
        f = time_figure(f"{title} per {interval:g} s interval per flow (A {c.name_a} solid, B {c.name_b} dashed)",
                 unit, x)
        for cur in curves:
            for tag, df, dash in (("A", c.a_intervals, "solid"), ("B", c.b_intervals, "dashed")):
                g = df.filter((pl.col("curve") == cur) & pl.col(col).is_not_null()).sort("t_s")
                if g.height:
                    add_line(f, g["t_s"].to_numpy() + interval / 2, g[col].to_numpy(), f"{tag}: {cur}",
                          (st[cur][0], dash))
        add_hover(f, unit, "{0.00}")
        figs.append(f)
    for col, scale, unit, title in (("cwnd", 1.0, "packets", "congestion window"),
                                    ("srtt_us", 1e-3, "ms", "smoothed RTT")):
        f = time_figure(f"{title} per flow (A solid, B dashed)", unit, x)
        labels = [fl["label"] for fl in c.a.experiment["flows"]]
        lst = styles(len(labels))
        for tag, res, dash in (("A", c.a, "solid"), ("B", c.b, "dashed")):
            fl = res.flows
            if fl is None or col not in fl.columns:
                continue
            s = fl.filter(pl.col(col) > 0).sort("flow", "time_ns")
            for (fid,), g in s.group_by("flow", maintain_order=True):
                t, y = thin(g["time_ns"].to_numpy() / 1e9, g[col].cast(pl.Float64).to_numpy() * scale)
                i = int(fid)
                add_line(f, t, y, f"{tag}: {labels[i] if i < len(labels) else i}",
                      (lst[i % len(lst)][0], dash), 1.2)
        add_hover(f, unit, "{0.000}")
        figs.append(f)
    return figs


def render(c, interval: float = 0.5) -> str:
    from .bk import column, components, library
    figs = figures(c, interval)
    script, (div,) = components([column(figs, sizing_mode="stretch_width")])
    ja, jb = c.jain
    meta = lambda r: (f"{html.escape(str(r.meta.get('backend')))} · seed {r.meta.get('seed')} · "
                      f"{html.escape(str(r.path))}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>ccbench comparison</title>"
            f"<style>{CSS} td.hi{{background:#ffe0b2;font-weight:bold}}</style>"
            f"{library()}{script}</head><body>"
            f"<h1>ccbench comparison — A: {html.escape(c.name_a)}, B: {html.escape(c.name_b)}</h1>"
            f"<p class='meta'>A: {meta(c.a)}<br>B: {meta(c.b)}</p>"
            + "".join(f"<p class='bad'><b>Warning</b>: {html.escape(w)}</p>" for w in c.warnings)
            + ("<p class='meta'>Set-up differences: " + "; ".join(html.escape(d) for d in c.differences)
               + "</p>" if c.differences else "<p class='meta'>Set-up differences: none in "
               "duration, links, flows, TCP settings and seed.</p>")
            + f"<h2>Summary</h2><p class='meta'>Aggregation interval {interval:g} s; Δ % = (B − A) / |A|; "
            f"highlighted where |Δ| &gt; {HIGHLIGHT_PCT:g} %. Jain's index over flows: A {fmt(ja, '.4f')}, "
            f"B {fmt(jb, '.4f')}.</p>{_table(c)}<h2>Time series</h2>{div}</body></html>")


def write_comparison_report(c, out_dir: str | Path, interval: float = 0.5) -> Path:
    """Write OUT_DIR/report.html for a :class:`ccbench.analysis.compare.Comparison`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.html"
    path.write_text(render(c, interval))
    return path


__all__ = ["HIGHLIGHT_PCT", "render", "write_comparison_report"]
