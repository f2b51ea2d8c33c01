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
from ..analysis.metrics import DEFINITIONS, LABELS, LOSS_DEFINITION, LOSS_LABEL
from .markup import CSS, fmt, queue_text, rate_text, table, verdicts_panel

#: the Pantheon summary's columns as the page shows them (the id column left out: the label
#: names the flow); its loss is Pantheon's, named for what it is
PANTHEON_COLS = [("curve", "flow", ""), ("avg_tput_mbps", "throughput Mbit/s (Pantheon)", ".3f",
                                        "8 · delivered bytes / (last arrival − first arrival)"),
                 ("p95_delay_ms", "p95 OWD ms", ".3f"),
                 ("loss_pct", LABELS["pantheon_loss_pct"], ".3f", DEFINITIONS["pantheon_loss_pct"]),
                 ("capacity_mbps", "capacity Mbit/s", ".3f",
                  "rate of the slowest rate-limited link on the flow's data path"),
                 ("utilization_pct", "utilisation % (Pantheon)", ".3f",
                  "throughput (Pantheon) / capacity; can read slightly above 100 %")]
#: the link utilisation table's columns (``analysis.link_utilization``)
UTIL_COLS = [("name", "link", ""), ("rate_mbps", "rate Mbit/s", ".2f"),
             ("flows", "flows crossing it", "", "flow numbers as in the labels (1 = Flow 1)"),
             ("t_start_s", "from s", ".2f", "first queue sample in the flows' active period"),
             ("t_end_s", "to s", ".2f", "last queue sample in the flows' active period"),
             ("tx_mbps", "serialised Mbit/s", ".2f", "bits the link sent in [from, to] / span"),
             ("utilization_pct", "utilisation %", ".2f",
              "serialised / rate over [from, to]; never above 100 %")]

def _provenance(results: Results) -> str:
    import json
    meta = {k: v for k, v in results.meta.items() if k != "experiment"}
    return ("<h2>Provenance</h2><details><summary>run metadata (versions, commit, host, seed, "
            "timing)</summary><pre>" + html.escape(json.dumps(meta, indent=1, default=str))
            + "</pre></details><details><summary>resolved experiment</summary><pre>"
            + html.escape(json.dumps(results.experiment, indent=1, default=str)) + "</pre></details>")


def render(results: Results, interval: float = 0.5, verdicts=None) -> str:
    from .bk import column, components
    from ..analysis.cache import Computed
    from .interactive import GROUPINGS, run_figures
    exp = results.experiment
    computed = Computed.of(results, interval).plan(*GROUPINGS)
    sections = run_figures(results, interval, GROUPINGS, computed=computed)
    script, divs = components([column(fs, sizing_mode="stretch_width") for _, fs in sections])
    out = _page_head(results, exp, script)
    if verdicts is None:
        from .. import expect
        verdicts = expect.evaluate(results)
    out.append(verdicts_panel(verdicts))
    out += _network(exp, divs[0])
    out += _headline(results, computed, interval)
    out += _workload_tables(results, computed)
    for (title, _), div in list(zip(sections, divs))[1:]:
        out.append(f"<h2>{html.escape(title)}</h2>{div}")
    out.append(_provenance(results))
    out.append("</body></html>")
    return "\n".join(out)


def _page_head(results: Results, exp: dict, script: str) -> list[str]:
    """The document's head (library and figure scripts), title and the run's meta line."""
    from .bk import library
    meta = results.meta
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>ccbench report: "
           f"{html.escape(str(meta.get('source') or results.path.name))}</title>"
           f"<style>{CSS}</style>{library()}{script}</head><body>"]
    out.append(f"<h1>ccbench report — {html.escape(str(meta.get('source') or results.path.name))}</h1>")
    sim = meta.get("sim", {})
    dur = exp["duration_ns"] / 1e9
    wall = meta.get("wall_time_s") or 0.0
    emu = meta.get("emu") or {}
    if meta.get("backend") == "emu" and not emu.get("accurate", True):
        why = "; ".join(emu.get("inaccurate_reasons") or []) or "see the provenance below"
        out.append(f"<p class='bad'><b>Inaccurate emulated run</b>: the emulator could not hold "
                   f"the link model to its timing ({html.escape(why)}). Differences from the "
                   "simulator or from other kernel runs may be the machine's; run it again on "
                   "a quiet machine.</p>")
    timing = (f"{dur:g} s emulated in real time ({wall:.2f} s wall)" if meta.get("backend") == "emu"
              else f"{dur:g} s simulated in {wall:.2f} s wall ({dur / wall if wall else float('inf'):.1f}× "
                   f"real time, {sim.get('events', 0):,} events)")
    out.append(
        f"<p class='meta'>backend <b>{html.escape(meta.get('backend', '?'))}</b> · seed {html.escape(str(exp.get('seed')))} · "
        f"{timing} · ccbench {html.escape(str(meta.get('ccbench_version')))} · "
        f"created {html.escape(str(meta.get('created')))} · per-packet records "
        f"{'on' if exp.get('record_packets') else 'off (metrics from per-interval aggregates)'}</p>")
    return out


def _network(exp: dict, div: str) -> list[str]:
    """The Network section: the topology figure, the bottleneck links and the flows."""
    out = ["<h2>Network</h2>"]
    links = exp["links"]
    out.append(div)
    rows = [{"name": links[i]["name"], "rate": rate_text(links[i]["rate_bps"]),
             "delay": f"{links[i]['delay_ns'] / 1e6:g} ms", "queue": queue_text(links[i]["queue"])}
            for i in exp.get("bottleneck_links", [])]
    out.append("<p>Bottleneck (central) links:</p>")
    out.append(table(rows, [("name", "link", ""), ("rate", "rate", ""), ("delay", "one-way delay", ""),
                             ("queue", "queue", "")]))
    frows = []
    for f in exp["flows"]:
        first, last = links[f["path"][0]], links[f["path"][-1]]
        frows.append({
            "label": f["label"], "start": f["start_ns"] / 1e9,
            "stop": None if f.get("stop_ns") is None else f["stop_ns"] / 1e9,
            "bytes": f.get("bytes"), "rtt": f.get("base_rtt_ns", 0) / 1e6,
            "side": f"{rate_text(first['rate_bps'])}, {first['delay_ns'] / 1e6:g} ms / "
                    f"{rate_text(last['rate_bps'])}, {last['delay_ns'] / 1e6:g} ms",
            "params": ", ".join(f"{k}={v}" for k, v in (f.get("params") or {}).items()) or "",
        })
    out.append(table(frows, [("label", "flow", ""), ("start", "start s", "g"), ("stop", "stop s", "g"),
                              ("bytes", "bytes", ""), ("rtt", "base RTT ms", "g"),
                              ("side", "first / last link", ""), ("params", "CC parameters", "")]))
    return out


def _headline(results: Results, computed, interval: float) -> list[str]:
    """The Results section's headline numbers: each grouping's summary and Jain's index, and
    the links' utilisation."""
    out = []
    out.append(f"<h2>Results</h2><p class='meta'>Aggregation interval {interval:g} s (tables and "
               f"plots of this page); throughput and delay as CoCo-Beholder defines them; "
               f"{html.escape(LOSS_DEFINITION)} — hover a column's header for its definition; "
               f"flows are numbered from 1 as in their labels (the tables' <code>flow</code> "
               f"column holds the 0-based id); sizes are IP bytes. Plots: drag to pan, wheel to zoom the "
               f"time axis (linked across plots), click a legend entry to hide its curve.</p>")
    cols = [("curve", "curve", ""), ("avg_tput_mbps", "avg throughput Mbit/s", ".2f"),
            ("mean_delay_ms", "mean OWD ms", ".2f"), ("median_delay_ms", "median OWD ms", ".2f"),
            ("p95_delay_ms", "p95 OWD ms", ".2f"), ("loss_pct", LOSS_LABEL, ".3f", LOSS_DEFINITION),
            ("bytes_in_flight_end", LABELS["bytes_in_flight_end"], "")]
    for grouping in ("per-flow", "per-scheme", "total"):
        an = computed.analyze(grouping)
        out.append(f"<h3>{grouping}</h3>")
        out.append(table(list(an.summary.iter_rows(named=True)), cols))
        if grouping != "total" and an.overall_jain is not None:
            out.append(f"<p>Jain's index over {grouping.split('-')[1]}s: <b>{an.overall_jain:.4f}</b></p>")
    out += _probe_table(results)
    try:
        util = analysis.link_utilization(results)
        out.append("<h3>Link utilisation</h3>")
        out.append(table([dict(r, flows=", ".join(str(i + 1) for i in r["flows"]))
                          for r in util.iter_rows(named=True)], UTIL_COLS))
    except Exception as e:  # report what we can; never fail the page on one table
        out.append(f"<p class='meta'>link utilisation unavailable: {html.escape(str(e))}</p>")
    return out


def _probe_table(results: Results) -> list[str]:
    """The latency probes' RTT percentiles (docs/metrics.md, "Latency probes")."""
    from ..analysis.probes import probe_summary
    ps = probe_summary(results)
    if not ps.height:
        return []
    return ["<h3>Latency probes: RTT under load</h3><p class='meta'>Round trip of each probe "
            "(sent by the probe flow, echoed by its receiver) beside the load; lost = no echo "
            "before the end of the run.</p>",
            table(list(ps.iter_rows(named=True)),
                  [("label", "probe flow", ""), ("sent", "probes", ""),
                   ("lost_pct", "lost %", ".1f", "probes whose echo never came back"),
                   ("min_rtt_ms", "min RTT ms", ".2f"), ("median_rtt_ms", "median RTT ms", ".2f"),
                   ("mean_rtt_ms", "mean RTT ms", ".2f"), ("p90_rtt_ms", "p90 RTT ms", ".2f"),
                   ("p99_rtt_ms", "p99 RTT ms", ".2f"), ("max_rtt_ms", "max RTT ms", ".2f")])]


def _workload_tables(results: Results, computed) -> list[str]:
    """Flow completion times, application-limited flows' goodput, the Pantheon summary."""
    out = []
    from ..analysis import workloads
    fct = workloads.fct_summary(results)
    if not fct.is_empty():
        out.append("<h3>Flow completion times</h3><p class='meta'>FCT from the SYN to the ACK of the "
                   "last byte; slowdown = FCT / (2·base RTT + wire bytes at the path's slowest link).</p>")
        out.append(table(list(fct.iter_rows(named=True)),
                          [("label", "group", ""), ("flows", "flows", ""), ("completed", "completed", ""),
                           ("fct_mean_ms", "mean FCT ms", ".2f"), ("fct_median_ms", "median FCT ms", ".2f"),
                           ("fct_p99_ms", "p99 FCT ms", ".2f"), ("slowdown_mean", "mean slowdown", ".2f"),
                           ("slowdown_p99", "p99 slowdown", ".2f")]))
    good = workloads.goodput_table(results)
    if good.height and good["app_rate_bps"].null_count() < good.height:
        out.append("<h3>Application-limited flows</h3>")
        out.append(table([r for r in good.iter_rows(named=True) if r["app_rate_bps"] is not None],
                          [("label", "flow", ""), ("app_rate_bps", "app rate bit/s", ""),
                           ("goodput_bps", "goodput bit/s", ".0f"), ("goodput_ratio", "goodput / app rate", ".4f")]))
    ps = computed.pantheon()
    out.append("<h3>Pantheon summary</h3>")
    out.append(table(list(ps.iter_rows(named=True)), PANTHEON_COLS))
    return out


def write_report(results: Results | str | Path, interval: float = 0.5, verdicts=None) -> Path:
    """Write <results>/report.html, self-contained (library, figures and data embedded)."""
    if not isinstance(results, Results):
        results = load(results)
    from ..results import marker
    path = results.path / "report.html"
    tmp = path.with_suffix(".html.tmp")
    marker.begin(results.path, "report")
    tmp.write_text(render(results, interval, verdicts))
    from ..interrupt import checkpoint
    checkpoint("report")
    tmp.replace(path)
    marker.finish(results.path, "report", [path.name])
    return path
