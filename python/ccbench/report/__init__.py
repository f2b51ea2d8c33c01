"""A single self-contained HTML page per run: what was run, the headline numbers, every plot.

The page embeds the plotting library (Bokeh, inline resources), every figure and its data: it
works offline and can be moved or mailed on its own. Static PNGs are separate (`ccbench plot`,
`ccbench run --png`).
"""
from __future__ import annotations

import html
from pathlib import Path

from .. import analysis
from ..results import Results, load

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;
color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right} th{background:#f3f3f3}
td.l,th.l{text-align:left} .meta{color:#555} figure{margin:1em 0} img{max-width:100%;border:1px solid #eee}
pre{background:#f7f7f7;padding:.8em;overflow:auto;font-size:.85em}
.verdicts{padding:.6em 1em;border-radius:6px;margin:1em 0} .verdicts.ok{background:#e8f5e9}
.verdicts.bad{background:#fdecea} tr.bad td:first-child{color:#b00020;font-weight:bold}
tr.ok td:first-child{color:#1b5e20;font-weight:bold}
"""


def _fmt(v, spec=".3f"):
    if v is None:
        return "N/A"
    if isinstance(v, float):
        return format(v, spec)
    return html.escape(str(v))


def _table(rows: list[dict], cols: list[tuple[str, str, str]]) -> str:
    """cols: (key, header, format spec); the first column is left-aligned."""
    head = "".join(f'<th class="{"l" if i == 0 else ""}">{html.escape(h)}</th>'
                   for i, (_, h, _) in enumerate(cols))
    body = []
    for r in rows:
        cells = "".join(f'<td class="{"l" if i == 0 else ""}">{_fmt(r.get(k), s)}</td>'
                        for i, (k, _, s) in enumerate(cols))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _rate(bps):
    if bps is None:
        return "unlimited"
    return f"{bps / 1e9:g} Gbit/s" if bps >= 1e9 else f"{bps / 1e6:g} Mbit/s"


def _queue(q):
    parts = []
    if q.get("packets") is not None:
        parts.append(f"{q['packets']} pkt")
    if q.get("bytes") is not None:
        parts.append(f"{q['bytes']} B")
    return f"{q['kind']} " + (" / ".join(parts) if parts else "unlimited")


def _provenance(results: Results) -> str:
    import json
    meta = {k: v for k, v in results.meta.items() if k != "experiment"}
    return ("<h2>Provenance</h2><details><summary>run metadata (versions, commit, host, seed, "
            "timing)</summary><pre>" + html.escape(json.dumps(meta, indent=1, default=str))
            + "</pre></details><details><summary>resolved experiment</summary><pre>"
            + html.escape(json.dumps(results.experiment, indent=1, default=str)) + "</pre></details>")


def _verdicts_panel(verdicts, title: str = "Expectations") -> str:
    """The pass/fail panel at the top of a report (run or campaign verdicts)."""
    if not verdicts:
        return ""
    from ..expect import METRICS

    def unit(v):
        u = getattr(v, "unit", None)
        return u if u is not None else METRICS.get(v.metric, ("",))[0]
    fails = sum(not v.passed for v in verdicts)
    rows = "".join(
        f"<tr class='{'ok' if v.passed else 'bad'}'><td class='l'>{'PASS' if v.passed else 'FAIL'}</td>"
        f"<td class='l'>{html.escape(v.name)}</td><td>{_fmt(v.value, '.4g')} "
        f"{html.escape(unit(v))}</td>"
        f"<td class='l'>{html.escape(v.bound)}</td><td class='l'>{html.escape(v.detail)}</td></tr>"
        for v in verdicts)
    return (f"<div class='verdicts {'bad' if fails else 'ok'}'><b>{html.escape(title)}: "
            f"{len(verdicts) - fails} passed, {fails} failed</b><table><tr><th class='l'>verdict</th>"
            f"<th class='l'>expectation</th><th>measured</th><th class='l'>bound</th>"
            f"<th class='l'>note</th></tr>{rows}</table></div>")


def render(results: Results, interval: float = 0.5, verdicts=None) -> str:
    from bokeh.embed import components
    from bokeh.resources import Resources
    from .interactive import run_figures
    exp = results.experiment
    from bokeh.layouts import column
    sections = run_figures(results, interval)
    # one root per section: Bokeh re-indexes the document on every root added
    from bokeh.settings import settings
    settings.perform_document_validation.set_value(False)  # our figures; saves ~10 %
    try:
        script, divs = components([column(fs, sizing_mode="stretch_width") for _, fs in sections])
    finally:
        settings.perform_document_validation.unset_value()
    meta = results.meta
    links = exp["links"]
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>ccbench report: "
           f"{html.escape(str(meta.get('source') or results.path.name))}</title>"
           f"<style>{_CSS}</style>{Resources(mode='inline', components=['bokeh']).render()}{script}</head><body>"]
    out.append(f"<h1>ccbench report — {html.escape(str(meta.get('source') or results.path.name))}</h1>")
    sim = meta.get("sim", {})
    dur = exp["duration_ns"] / 1e9
    wall = meta.get("wall_time_s") or 0.0
    out.append(
        f"<p class='meta'>backend <b>{html.escape(meta.get('backend', '?'))}</b> · seed {exp.get('seed')} · "
        f"{dur:g} s simulated in {wall:.2f} s wall ({dur / wall if wall else float('inf'):.1f}× real time, "
        f"{sim.get('events', 0):,} events) · ccbench {html.escape(str(meta.get('ccbench_version')))} · "
        f"created {html.escape(str(meta.get('created')))} · per-packet records "
        f"{'on' if exp.get('record_packets') else 'off (metrics from per-interval aggregates)'}</p>")

    if verdicts is None:
        from .. import expect
        verdicts = expect.evaluate(results)
    out.append(_verdicts_panel(verdicts))

    # Topology
    out.append("<h2>Network</h2>")
    out.append(divs[0])
    rows = [{"name": links[i]["name"], "rate": _rate(links[i]["rate_bps"]),
             "delay": f"{links[i]['delay_ns'] / 1e6:g} ms", "queue": _queue(links[i]["queue"])}
            for i in exp.get("bottleneck_links", [])]
    out.append("<p>Bottleneck (central) links:</p>")
    out.append(_table(rows, [("name", "link", ""), ("rate", "rate", ""), ("delay", "one-way delay", ""),
                             ("queue", "queue", "")]))
    frows = []
    for f in exp["flows"]:
        first, last = links[f["path"][0]], links[f["path"][-1]]
        frows.append({
            "label": f["label"], "start": f["start_ns"] / 1e9,
            "stop": None if f.get("stop_ns") is None else f["stop_ns"] / 1e9,
            "bytes": f.get("bytes"), "rtt": f.get("base_rtt_ns", 0) / 1e6,
            "side": f"{_rate(first['rate_bps'])}, {first['delay_ns'] / 1e6:g} ms / "
                    f"{_rate(last['rate_bps'])}, {last['delay_ns'] / 1e6:g} ms",
            "params": ", ".join(f"{k}={v}" for k, v in (f.get("params") or {}).items()) or "",
        })
    out.append(_table(frows, [("label", "flow", ""), ("start", "start s", "g"), ("stop", "stop s", "g"),
                              ("bytes", "bytes", ""), ("rtt", "base RTT ms", "g"),
                              ("side", "first / last link", ""), ("params", "CC parameters", "")]))

    # Headline numbers
    out.append(f"<h2>Results</h2><p class='meta'>Aggregation interval {interval:g} s (tables and "
               f"plots of this page); throughput and delay as CoCo-Beholder defines them (see "
               f"docs/metrics.md); sizes are IP bytes. Plots: drag to pan, wheel to zoom the "
               f"time axis (linked across plots), click a legend entry to hide its curve.</p>")
    cols = [("curve", "curve", ""), ("avg_tput_mbps", "avg throughput Mbit/s", ".2f"),
            ("mean_delay_ms", "mean OWD ms", ".2f"), ("median_delay_ms", "median OWD ms", ".2f"),
            ("p95_delay_ms", "p95 OWD ms", ".2f"), ("loss_pct", "loss %", ".3f")]
    for grouping in ("per-flow", "per-scheme", "total"):
        an = analysis.analyze(results, grouping=grouping, interval=interval)
        out.append(f"<h3>{grouping}</h3>")
        out.append(_table(list(an.summary.iter_rows(named=True)), cols))
        if grouping != "total" and an.overall_jain is not None:
            out.append(f"<p>Jain's index over {grouping.split('-')[1]}s: <b>{an.overall_jain:.4f}</b></p>")
    try:
        util = analysis.link_utilization(results)
        out.append("<h3>Link utilisation</h3>")
        out.append(_table(list(util.iter_rows(named=True)),
                          [(c, c, ".2f") for c in util.columns]))
    except Exception as e:  # report what we can; never fail the page on one table
        out.append(f"<p class='meta'>link utilisation unavailable: {html.escape(str(e))}</p>")
    from ..analysis import workloads
    fct = workloads.fct_summary(results)
    if not fct.is_empty():
        out.append("<h3>Flow completion times</h3><p class='meta'>FCT from the SYN to the ACK of the "
                   "last byte; slowdown = FCT / (2·base RTT + wire bytes at the path's slowest link).</p>")
        out.append(_table(list(fct.iter_rows(named=True)),
                          [("label", "group", ""), ("flows", "flows", ""), ("completed", "completed", ""),
                           ("fct_mean_ms", "mean FCT ms", ".2f"), ("fct_median_ms", "median FCT ms", ".2f"),
                           ("fct_p99_ms", "p99 FCT ms", ".2f"), ("slowdown_mean", "mean slowdown", ".2f"),
                           ("slowdown_p99", "p99 slowdown", ".2f")]))
    good = workloads.goodput_table(results)
    if good.height and good["app_rate_bps"].null_count() < good.height:
        out.append("<h3>Application-limited flows</h3>")
        out.append(_table([r for r in good.iter_rows(named=True) if r["app_rate_bps"] is not None],
                          [("label", "flow", ""), ("app_rate_bps", "app rate bit/s", ""),
                           ("goodput_bps", "goodput bit/s", ".0f"), ("goodput_ratio", "goodput / app rate", ".4f")]))
    ps = analysis.pantheon_summary(results)
    out.append("<h3>Pantheon summary</h3>")
    out.append(_table(list(ps.iter_rows(named=True)), [(c, c, ".3f") for c in ps.columns]))

    for (title, _), div in list(zip(sections, divs))[1:]:
        out.append(f"<h2>{html.escape(title)}</h2>{div}")
    out.append(_provenance(results))
    out.append("</body></html>")
    return "\n".join(out)


def write_report(results: Results | str | Path, interval: float = 0.5, verdicts=None) -> Path:
    """Write <results>/report.html, self-contained (library, figures and data embedded)."""
    if not isinstance(results, Results):
        results = load(results)
    path = results.path / "report.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render(results, interval, verdicts))
    tmp.replace(path)
    return path
