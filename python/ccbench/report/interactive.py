"""Interactive figures of one run for the self-contained report (Bokeh documents written as
JSON by :mod:`ccbench.report.bk`; BokehJS inlined).

Every statistic comes from :mod:`ccbench.analysis`; only what is drawn is thinned: sender
samples (cwnd, RTT, pacing rate, cc_*) and queue samples are reduced per series to at most
:data:`MAX_POINTS` points by keeping each bucket's first, minimum and maximum sample, so peaks
survive the reduction.
"""
from __future__ import annotations

import math
from itertools import cycle

import numpy as np
import polars as pl
from .bk import Category10_10, ColumnDataSource, Dark2_8, HoverTool, Legend, Range1d, figure

from .. import analysis
from ..analysis.cache import Computed
from ..analysis.queues import queue_timeseries
from .markup import queue_text, rate_text

MAX_POINTS = 2000  # per drawn series
WIDTH, HEIGHT = 1100, 300
TOOLS = "xpan,xwheel_zoom,box_zoom,reset,save"
DASHES = ("solid", "dashed", "dotted", "dotdash", "dashdot")


def styles(n: int):
    """(colour, dash) for n curves: ten colours, then the same ten dashed, dotted, ... so no
    two curves look alike (matplotlib's default cycle repeats after ten)."""
    out = []
    for i in range(n):
        out.append((Category10_10[i % 10], DASHES[(i // 10) % len(DASHES)]))
    return out


def widths(n: int) -> list[float]:
    """Line widths, widest first: a curve identical to a later one still shows around it."""
    if n <= 1 or n > 8:
        return [1.5] * n
    return [1.2 + 2.4 * (n - 1 - i) / (n - 1) for i in range(n)]


def thin(t: np.ndarray, y: np.ndarray, max_points: int = MAX_POINTS):
    """At most ~max_points of (t, y), keeping the first, min and max sample of each bucket (the
    first of equal extremes; NaN is neither unless the whole bucket is NaN)."""
    n = len(t)
    if n <= max_points:
        return t, y
    buckets = max(1, max_points // 3)
    edges = np.linspace(0, n, buckets + 1).astype(np.int64)
    starts = edges[:-1][edges[1:] > edges[:-1]]
    lens = np.diff(np.append(starts, n))
    pos = np.arange(n)
    keep = [starts]
    for v, reduce in ((np.where(np.isnan(y), np.inf, y), np.minimum),
                      (np.where(np.isnan(y), -np.inf, y), np.maximum)):
        ext = np.repeat(reduce.reduceat(v, starts), lens)   # each bucket's extreme
        keep.append(np.minimum.reduceat(np.where(v == ext, pos, n), starts))  # its first index
    idx = np.unique(np.concatenate(keep))
    return t[idx], y[idx]


def time_figure(title: str, ylabel: str, x_range=None, **kw) -> figure:
    f = figure(title=title, width=WIDTH, height=HEIGHT, tools=TOOLS, active_scroll="xwheel_zoom",
               x_axis_label="time (s)", y_axis_label=ylabel, sizing_mode="stretch_width",
               output_backend="canvas", **({"x_range": x_range} if x_range is not None else {}), **kw)
    f.add_layout(Legend(click_policy="hide", label_text_font_size="9pt"), "right")
    f.toolbar.logo = None
    return f


def add_line(f, t, y, label, style, width=1.5):
    color, dash = style
    src = ColumnDataSource({"t": np.asarray(t, dtype=float), "y": np.asarray(y, dtype=float)})
    f.line("t", "y", source=src, color=color, line_dash=dash, line_width=width, legend_label=label,
           name=label)


def add_hover(f, ylabel: str, fmt="{0.000}"):
    f.add_tools(HoverTool(tooltips=[("", "$name"), ("t", "@t{0.000} s"), (ylabel, f"@y{fmt}")],
                          mode="mouse"))


def grouping_figures(results, grouping: str, interval: float, x_range, computed=None):
    """Throughput and one-way delay per curve at the interval, and Jain's index over the curves."""
    an = (computed or Computed.of(results, interval)).analyze(grouping)
    pi = an.per_interval
    curves = list(dict.fromkeys(an.summary["curve"].to_list()))
    st = dict(zip(curves, styles(len(curves))))
    wd = dict(zip(curves, widths(len(curves))))
    rate = time_figure(f"{grouping}: throughput per {interval:g} s interval", "Mbit/s", x_range)
    delay = time_figure(f"{grouping}: mean one-way delay per {interval:g} s interval", "ms", x_range)
    for c in curves:
        g = pi.filter(pl.col("curve") == c).sort("t_s")
        if not g.height:
            continue
        t = g["t_s"].to_numpy() + interval / 2
        add_line(rate, t, g["rate_mbps"].to_numpy(), c, st[c], wd[c])
        d = g.filter(pl.col("delay_ms").is_not_null())
        if d.height:
            add_line(delay, d["t_s"].to_numpy() + interval / 2, d["delay_ms"].to_numpy(), c, st[c], wd[c])
    add_hover(rate, "Mbit/s", "{0.00}")
    add_hover(delay, "ms", "{0.00}")
    figs = [rate, delay]
    if len(curves) > 1 and an.jain.height:
        j = time_figure(f"{grouping}: Jain's index over the active curves", "Jain's index", x_range,
                 y_range=Range1d(0, 1.05))
        add_line(j, an.jain["t_s"].to_numpy() + interval / 2, an.jain["jain"].to_numpy(),
              "Jain's index", ("#333333", "solid"))
        add_hover(j, "index")
        figs.append(j)
    return figs


def packet_delay_figure(results, x_range):
    """Per-packet one-way delay against send time, per flow; each flow is thinned on its own
    (bucket min/max kept), so a small flow keeps its points beside a large one."""
    if not results.has("packets"):
        return None
    labels = {int(f["id"]): f["label"] for f in results.experiment["flows"]}
    ids = sorted(labels)
    st = dict(zip(ids, styles(len(ids))))
    # three columns of the delivered packets, read a part at a time (not the whole table)
    d = results.scan("packets").filter(pl.col("arrival_ns").is_not_null()).select(
        pl.col("flow").cast(pl.Int64), pl.col("sent_ns"),
        ((pl.col("arrival_ns") - pl.col("sent_ns")).cast(pl.Float64) / 1e6).alias("d")
    ).collect(engine="streaming").sort("flow", "sent_ns")
    if not d.height and not results.scan("packets").select(pl.len()).collect().item():
        return None
    f = time_figure("one-way delay of each packet (per flow, thinned for display: each flow's extremes kept)",
             "ms", x_range)
    for (fid,), g in d.group_by("flow", maintain_order=True):
        t, y = thin(g["sent_ns"].to_numpy() / 1e9, g["d"].to_numpy(), 3000)
        src = ColumnDataSource({"t": t, "y": y})
        color, _ = st.get(int(fid), ("#000", "solid"))
        f.scatter("t", "y", source=src, size=2, color=color, alpha=0.6,
                  legend_label=labels.get(int(fid), str(fid)), name=labels.get(int(fid), str(fid)))
    add_hover(f, "ms", "{0.00}")
    return f


SENDER = (("cwnd", 1.0, "congestion window", "packets"),
          ("srtt_us", 1e-3, "smoothed RTT", "ms"),
          ("pacing_rate_bps", 1e-6, "pacing rate", "Mbit/s"),
          ("delivery_rate_bps", 1e-6, "delivery-rate estimate", "Mbit/s"))


def sender_figures(results, x_range):
    """cwnd, smoothed RTT, pacing and delivery rate, and every cc_* variable, per flow."""
    fl = results.flows
    if fl is None or not fl.height:
        return []
    labels = {int(f["id"]): f["label"] for f in results.experiment["flows"]}
    ids = sorted(labels)
    st = dict(zip(ids, styles(len(ids))))
    wd = dict(zip(ids, widths(len(ids))))
    cols = [c for c in SENDER if c[0] in fl.columns]
    cols += [(c, 1.0, f"CC variable {c[3:]}", c[3:]) for c in fl.columns if c.startswith("cc_")]
    fl = fl.sort("flow", "time_ns")
    figs = []
    for col, scale, title, unit in cols:
        s = fl.select(pl.col("time_ns"), pl.col("flow"), pl.col(col).cast(pl.Float64))
        if col in ("srtt_us", "pacing_rate_bps", "delivery_rate_bps"):
            # 0 means "no estimate yet", not a measurement (srtt: in results written before
            # it became null until the first RTT sample)
            s = s.filter(pl.col(col) > 0)
        s = s.filter(pl.col(col).is_not_null() & pl.col(col).is_not_nan())
        if not s.height or (col.startswith("cc_") and s[col].min() == s[col].max()):
            continue
        f = time_figure(f"{title} per flow (sender samples)", unit, x_range)
        for (fid,), g in s.group_by("flow", maintain_order=True):
            t, y = thin(g["time_ns"].to_numpy() / 1e9, g[col].to_numpy() * scale)
            add_line(f, t, y, labels.get(int(fid), f"flow {int(fid) + 1}"), st.get(int(fid), ("#000", "solid")),
                  wd.get(int(fid), 1.2))
        add_hover(f, unit, "{0.000}")
        figs.append(f)
    return figs


def queue_figures(results, x_range):
    """Per bottleneck link: occupancy (packets), queueing delay and sojourn, cumulative drops and
    CE marks."""
    q = queue_timeseries(results)
    if not q.height:
        return []
    links = list(dict.fromkeys(q["link"].to_list()))
    st = dict(zip(links, styles(len(links))))
    occ = time_figure("queue occupancy per bottleneck link", "packets", x_range)
    dly = time_figure("queueing delay (bytes·8/rate; dashed: measured sojourn)", "ms", x_range)
    cnt = time_figure("bottleneck drops and CE marks, cumulative, per link (packets this queue "
                      "dropped; the run's loss % is over every link)", "packets", x_range)
    any_cnt = False
    for (lid,), g in q.group_by("link", maintain_order=True):
        name = f"link {lid}: {g['name'][0]}"
        t = g["time_s"].to_numpy()
        color, dash = st[lid]
        add_line(occ, *thin(t, g["packets"].to_numpy().astype(float)), name, (color, dash))
        if g["qdelay_ms"].null_count() < g.height:
            add_line(dly, *thin(t, g["qdelay_ms"].fill_null(float("nan")).to_numpy()), name, (color, "solid"))
        if g["sojourn_ms"].null_count() < g.height:
            add_line(dly, *thin(t, g["sojourn_ms"].fill_null(float("nan")).to_numpy()),
                  f"{name} sojourn", (color, "dashed"))
        for col, what, d in (("drops", "bottleneck drops", "solid"), ("marks", "CE marks", "dashed")):
            if (g[col].max() or 0) > 0:
                any_cnt = True
                add_line(cnt, *thin(t, g[col].to_numpy().astype(float)), f"{name} {what}", (color, d))
    for f, u in ((occ, "packets"), (dly, "ms"), (cnt, "packets")):
        add_hover(f, u, "{0.000}")
    return [occ, dly] + ([cnt] if any_cnt else [])


def fct_figures(results):
    """CDF of flow completion times per group, when the run has finite flows."""
    from ..analysis import workloads
    t = workloads.fct_table(results)
    t = t.filter(pl.col("fct_ns").is_not_null()).with_columns((pl.col("fct_ns") / 1e6).alias("fct_ms"))
    if not t.height:
        return []
    key = "label"
    groups = list(dict.fromkeys(t[key].to_list()))
    st = dict(zip(groups, styles(len(groups))))
    f = figure(title="flow completion time (CDF)", width=WIDTH, height=HEIGHT, tools=TOOLS,
               x_axis_type="log", x_axis_label="FCT (ms)", y_axis_label="fraction of flows",
               sizing_mode="stretch_width")
    f.add_layout(Legend(click_policy="hide"), "right")
    for gname in groups:
        v = np.sort(t.filter(pl.col(key) == gname)["fct_ms"].to_numpy())
        y = np.arange(1, len(v) + 1) / len(v)
        tv, yv = thin(v, y)
        src = ColumnDataSource({"t": tv, "y": yv})
        f.step("t", "y", source=src, mode="after", color=st[gname][0], line_dash=st[gname][1],
               legend_label=str(gname), name=str(gname))
    f.add_tools(HoverTool(tooltips=[("", "$name"), ("FCT", "@t{0.00} ms"), ("CDF", "@y{0.000}")]))
    return [f]


def sigma_ellipse(x: np.ndarray, y: np.ndarray):
    """Centre, axes and angle of the 1-σ covariance ellipse of the points; None for fewer than
    three points or points on one line (two points always are: their "ellipse" has a zero
    minor axis and was drawn as a stray line through them)."""
    if len(x) < 3:
        return None
    cov = np.cov(np.vstack([x, y]))
    if not np.all(np.isfinite(cov)):
        return None
    vals, vecs = np.linalg.eigh(cov)
    vals = np.clip(vals, 0, None)
    if vals[0] <= 1e-9 * vals[1]:  # collinear: no area to draw
        return None
    angle = math.atan2(vecs[1, 1], vecs[0, 1])
    return (float(x.mean()), float(y.mean()), 2 * math.sqrt(vals[1]), 2 * math.sqrt(vals[0]), angle)


def pantheon_figure(results, computed=None):
    """Pantheon's summary: each flow's average throughput against its p95 one-way delay (delay
    axis reversed: better is up and right), with one 1-σ ellipse per scheme over its flows."""
    ps = (computed or Computed.of(results, 0.5)).pantheon()
    ps = ps.filter(pl.col("flow") != "all")
    if not ps.height:
        return None
    scheme = {str(f["id"]): f["scheme"] for f in results.experiment["flows"]}
    ps = ps.with_columns(pl.col("flow").replace_strict(scheme, default="?").alias("scheme"))
    ps = ps.filter(pl.col("p95_delay_ms").is_not_null() & pl.col("avg_tput_mbps").is_not_null())
    if not ps.height:
        return None
    f = figure(title="throughput against p95 one-way delay (per flow; ellipse: 1σ per scheme of "
               "three or more flows)",
               width=WIDTH, height=420, tools="pan,wheel_zoom,box_zoom,reset,save",
               x_axis_label="p95 one-way delay (ms, reversed)", y_axis_label="average throughput (Mbit/s)",
               sizing_mode="stretch_width")
    f.x_range.flipped = True
    f.add_layout(Legend(click_policy="hide"), "right")
    schemes = list(dict.fromkeys(ps["scheme"].to_list()))
    pal = list(Dark2_8) + list(Category10_10)
    for s, color in zip(schemes, cycle(pal)):
        g = ps.filter(pl.col("scheme") == s)
        src = ColumnDataSource({"x": g["p95_delay_ms"].to_numpy(), "y": g["avg_tput_mbps"].to_numpy(),
                                "name": g["curve"].to_list()})
        f.scatter("x", "y", source=src, size=9, color=color, legend_label=s, alpha=0.85)
        e = sigma_ellipse(g["p95_delay_ms"].to_numpy(), g["avg_tput_mbps"].to_numpy())
        if e:
            f.ellipse(x=[e[0]], y=[e[1]], width=[e[2]], height=[e[3]], angle=[e[4]],
                      fill_alpha=0.08, fill_color=color, line_color=color, legend_label=s)
    f.add_tools(HoverTool(tooltips=[("", "@name"), ("p95 delay", "@x{0.00} ms"),
                                    ("throughput", "@y{0.00} Mbit/s")]))
    return f


def network_figure(exp: dict):
    """The topology: nodes, links (both directions on one edge), bottleneck links highlighted;
    hovering an edge shows each direction's rate, delay, queue and conditions."""
    links = exp["links"]
    bott = set(exp.get("bottleneck_links", []))
    core = []
    for i in exp.get("bottleneck_links", []):
        for n in (links[i]["src"], links[i]["dst"]):
            if n not in core:
                core.append(n)
    nodes = []
    for l in links:
        for n in (l["src"], l["dst"]):
            if n not in nodes:
                nodes.append(n)
    pos = {n: (float(i + 1), 0.0) for i, n in enumerate(core)}
    side: dict[str, list[str]] = {}
    for n in nodes:
        if n in pos:
            continue
        nb = next((l["dst"] if l["src"] == n else l["src"] for l in links
                   if n in (l["src"], l["dst"]) and (l["dst"] if l["src"] == n else l["src"]) in pos), None)
        side.setdefault(nb or "", []).append(n)
    for nb, ns in side.items():
        if nb in pos:
            bx = pos[nb][0]
            x = bx - 1 if (core and nb == core[0]) or bx <= 1 else bx + 1
        else:
            x = float(len(core) + 2)
        for k, n in enumerate(ns):
            pos[n] = (x, (k - (len(ns) - 1) / 2) * 1.0)
    edges: dict[tuple, list[dict]] = {}
    for i, l in enumerate(links):
        edges.setdefault(tuple(sorted((l["src"], l["dst"]))), []).append(dict(l, _i=i))

    def desc(l):
        c = l.get("conditions") or l.get("loss") or ""
        return (f"{l['name']}: {rate_text(l['rate_bps'])}, {l['delay_ns'] / 1e6:g} ms, "
                f"{queue_text(l['queue'])}" + (f", {c}" if c else ""))

    ys = [p[1] for p in pos.values()] or [0]
    f = figure(title="network (hover a link; thick: bottleneck)", width=WIDTH,
               height=max(220, int(80 * (max(ys) - min(ys) + 2))), tools="hover,pan,wheel_zoom,reset",
               sizing_mode="stretch_width", x_axis_type=None, y_axis_type=None,
               tooltips=[("", "@desc")])
    f.grid.visible = False
    f.toolbar.logo = None
    xs0, ys0, xs1, ys1, ds, widths, colors = [], [], [], [], [], [], []
    for (a, b), ls in edges.items():
        xs0.append(pos[a][0]); ys0.append(pos[a][1]); xs1.append(pos[b][0]); ys1.append(pos[b][1])
        ds.append(" | ".join(desc(l) for l in ls))
        hot = any(l["_i"] in bott for l in ls)
        widths.append(6 if hot else 2)
        colors.append("#d62728" if hot else "#888888")
    src = ColumnDataSource({"x0": xs0, "y0": ys0, "x1": xs1, "y1": ys1, "desc": ds, "w": widths,
                            "c": colors})
    f.segment("x0", "y0", "x1", "y1", source=src, line_width="w", line_color="c")
    nsrc = ColumnDataSource({"x": [pos[n][0] for n in nodes], "y": [pos[n][1] for n in nodes],
                             "desc": nodes})
    f.scatter("x", "y", source=nsrc, size=26, color="#1f77b4")
    f.text("x", "y", text="desc", source=nsrc, text_align="center", text_baseline="middle",
           text_color="white", text_font_size="9pt")
    return f


def probe_figure(results, x_range):
    """RTT under load: each latency probe's round trip at the time it left (Flent's ping
    plot), one line per probe flow; None without probes."""
    from ..analysis.probes import probe_series
    s = probe_series(results)
    if not s.height:
        return None
    f = time_figure("RTT under load: latency probes (each probe's round trip at its departure)",
                    "ms", x_range)
    labels = list(dict.fromkeys(s["label"].to_list()))
    for lab, (color, dash) in zip(labels, styles(len(labels))):
        g = s.filter(pl.col("label") == lab)
        t, y = thin(g["t_s"].to_numpy(), g["rtt_ms"].to_numpy())
        add_line(f, t, y, lab, (color, dash), 1.2)
    add_hover(f, "ms", "{0.00}")
    return f


#: the groupings drawn (the report's tables show three of them)
GROUPINGS = ("per-flow", "per-scheme", "per-direction", "total")


def run_figures(results, interval: float, groupings=GROUPINGS, computed=None):
    """(section title, [figures]) for the whole run; time axes are linked across figures."""
    dur = results.experiment["duration_ns"] / 1e9
    x = Range1d(0, dur, bounds=(0, dur))
    sections = [("Network", [network_figure(results.experiment)])]
    for g in groupings:
        try:
            figs = grouping_figures(results, g, interval, x, computed)
        except Exception:  # a grouping with one curve of no data (e.g. direction) is skipped
            continue
        sections.append((f"Throughput and delay: {g}", figs))
    pd = packet_delay_figure(results, x)
    if pd is not None:
        sections.append(("Per-packet delay", [pd]))
    pr = probe_figure(results, x)
    if pr is not None:
        sections.append(("RTT under load", [pr]))
    p = pantheon_figure(results, computed)
    if p is not None:
        sections.append(("Throughput against delay", [p]))
    sections.append(("Sender state", sender_figures(results, x)))
    sections.append(("Queues", queue_figures(results, x)))
    sections.append(("Flow completion", fct_figures(results)))
    return [(t, fs) for t, fs in sections if fs]


__all__ = ["GROUPINGS", "MAX_POINTS", "run_figures", "styles", "thin"]
