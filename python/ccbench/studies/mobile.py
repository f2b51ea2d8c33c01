"""Mobile broadband (M. Pakmehr, *TCP Congestion Control Characteristics and Their Impacts in
QoS over Mobile Broadband Networks*, MSc thesis, University of Oslo, 2014): three operators'
links (ccbench's cellular presets) × NewReno-style Reno / CUBIC / Vegas × bulk, on-off and
constant-rate workloads × the Android ("limited") and 16-MiB ("unlimited") buffers.

The study's metrics, computed per run from its tables: goodput = payload bytes per second over
the transfer (KiB/s), RTT = mean of the sender's RTT samples (ccbench: the smoothed RTT sampled
every 10 ms while data is in flight, the closest to tshark's per-ACK mean it records),
"OWD" = mean inter-arrival time of data packets at the receiver (the thesis's metric; ≈ MSS /
goodput), ssthresh changes = changes of ssthresh in the 10-ms samples. The corrected versions
the study lacked: true one-way delay, and retransmissions. For the claims about the traces
(Chapter 5's figures) a run also records its peak cwnd, flight and RTT, the delivery rate in
the second before its first retransmission, and, for on-off runs, how long each burst takes to
arrive.

The claims of the thesis (MB-1 … MB-40, ``claims.yaml``) are scored by the ``SCORERS`` below on
the per-run table (:func:`measure`); the published numbers are ``published.yaml``, the misses
and their explanations ``known-differences.yaml``.
"""
from __future__ import annotations

import math

import polars as pl
import yaml

from .claims import Data, Score, Scorers, default_band, finite, mean_sd, order_holds
from .common import STUDIES_DIR, Check, Ctx, Output, Table, cc_of, fig_path, kernel_schemes, patch, \
    rel_diff

NAME = "mobile-broadband"
TITLE = "TCP over 3G mobile broadband"
CAMPAIGNS = {"bulk": "bulk.yaml", "onoff": "onoff.yaml", "stream": "stream.yaml"}
INTRO = ("M. Pakmehr, *TCP Congestion Control Characteristics and Their Impacts in QoS over "
         "Mobile Broadband Networks*, MSc thesis, University of Oslo, 2014 (Tables 4.1-4.3, "
         "5.1-5.8, Equations 5.1-5.9, §6.2, Chapter 7). The three networks are ccbench's "
         "cellular presets (docs/network-conditions.md), whose parameters were inferred from "
         "the thesis's own tables, not measured traces: agreement with the goodput of Reno and "
         "CUBIC is partly by construction, and the orderings are the real test. The thesis "
         "prints means without spread, so every numeric test is the default band. Published "
         "numbers: `published.yaml`; the claims: `claims.yaml`; the misses: "
         "`known-differences.yaml`.")
NETS = ("evdo", "hspa-capped", "hspa")
NET_NAME = {"evdo": "eth1 (EV-DO)", "hspa-capped": "ppp0 (HSPA+ 3 Mbit/s cap)",
            "hspa": "ppp1 (HSPA+)"}
SHORT = {"evdo": "eth1", "hspa-capped": "ppp0", "hspa": "ppp1"}
CCS = ("reno", "cubic", "vegas")
# the stream tables of the thesis: (load, buffer set) -> table number
STREAM_TABLES = {("stream50", "unlimited"): "5.5", ("stream25", "unlimited"): "5.6",
                 ("stream50", "limited"): "5.7", ("stream25", "limited"): "5.8"}
TABLES = {("bulk", "unlimited"): "5.1", ("bulk", "limited"): "5.2",
          ("onoff", "unlimited"): "5.3", ("onoff", "limited"): "5.4", **STREAM_TABLES}
ONOFF_PERIOD = 6.0  # s: 1 s on, 5 s off


def published() -> dict:
    return yaml.safe_load((STUDIES_DIR / NAME / "published.yaml").read_text())


def reduce(key: str, doc: dict, scale: str) -> dict:
    """medium: 3 repeats. reduced (CI): one repeat; streams only at 50 %, at the thesis's
    per-cell rates, and 60-s runs."""
    if scale == "medium":
        return patch(doc, {"sweep.repeats": 3})
    d = patch(doc, {"sweep.repeats": 1})
    if key == "stream":
        d = patch(d, {("sweep", "axes", "pct"): [50], ("sweep", "axes", "rate"): ["thesis"],
                      ("sweep", "derive", "flows[0].stop"): "60", ("sweep", "derive", "duration"): "70"})
    return d


def kernel(key: str, doc: dict, scale: str) -> dict | None:
    """Kernel subset: reno, cubic and (as BPF, where it can be built) vegas, unlimited buffers,
    bulk and onoff, one run each (real time: up to a few minutes per bulk run)."""
    if key not in ("bulk", "onoff") or scale == "reduced":
        return None
    return patch(doc, {("sweep", "axes", "cc"): {"path": "flows[0].scheme", "values": kernel_schemes(list(CCS))},
                       "sweep.variants": {"unlimited": doc["sweep"]["variants"]["unlimited"]},
                       "sweep.repeats": 1})


# ---------------------------------------------------------------------------- per run

def run_table(ctx: Ctx, key: str, kernel: bool = False) -> pl.DataFrame:
    idx = (ctx.kernel_index if kernel else ctx.index)[key]
    rows = []
    for r in idx.iter_rows(named=True):
        d = ctx.run_dir(key, r["run_key"], kernel)
        fs = pl.read_parquet(d / "flowstats.parquet").row(0, named=True)
        f = pl.read_parquet(d / "flows.parquet", columns=["time_ns", "srtt_us", "ssthresh",
                                                          "inflight", "cwnd", "retrans"])
        f = f.filter(pl.col("srtt_us") > 0)
        start = fs["start_ns"] / 1e9
        end = (fs["completed_ns"] or fs["last_arrival_ns"] or 0) / 1e9
        active = max(end - start, 1e-9)
        if key == "onoff":
            active = ctx.duration(key)
        good = fs["app_bytes"] / 1024 / active
        busy = f.filter(pl.col("inflight") > 0)
        rtt = float(busy["srtt_us"].mean() or float("nan")) / 1e6
        ss = f["ssthresh"]
        changes = int((ss.fill_null(-1).diff().fill_null(0) != 0).sum())
        npk = fs["delivered_pkts"]
        inter = ((fs["last_arrival_ns"] - fs["first_arrival_ns"]) / max(npk - 1, 1) / 1e6
                 if fs["last_arrival_ns"] else float("nan"))
        owd = fs["delay_sum_ns"] / max(npk, 1) / 1e6
        if key == "stream":
            load = f"stream{r['pct']}" + ("" if r.get("rate", "thesis") == "thesis" else "-common")
        else:
            load = key
        row = {"load": load, "buffer": r["variant"], "net": r["net"], "cc": cc_of(r["cc"]),
               "repeat": r["repeat"], "goodput": good, "rtt": rtt,
               "interarrival_ms": inter, "ssth": changes, "owd_ms": owd,
               "retrans": fs["retrans_pkts"], "delivered_pkts": npk,
               "max_cwnd": int(f["cwnd"].max() or 0),
               "max_inflight": int(f["inflight"].max() or 0),
               "rtt_max": float(busy["srtt_us"].max() or float("nan")) / 1e6,
               "completed": fs["completed_ns"] is not None}
        row.update(_trace_metrics(d, f, fs["start_ns"], key))
        rows.append(row)
    return pl.DataFrame(rows)


def _trace_metrics(d, f: pl.DataFrame, start_ns: int, key: str) -> dict:
    """What the thesis reads off its traces (Figs 5.1-5.5): the first retransmission (s after
    the start), the delivery rate in the second before it (Mbit/s), the packets retransmitted
    within a second of it (a loss burst), and for on-off runs the peak cwnd of the first burst
    and the mean time a burst takes to arrive (first to last delivery of an on period)."""
    out = {"first_loss_s": float("nan"), "rate_before_loss_mbit": float("nan"),
           "burst_retrans": 0, "cwnd_first_burst": float("nan"),
           "burst_arrival_s": float("nan")}
    t = (f["time_ns"] - start_ns) / 1e9
    lossy = f.with_columns(t.alias("t")).filter(pl.col("retrans") > 0)
    iv = pl.read_parquet(d / "intervals.parquet", columns=["bin", "delivered_bytes"])
    w = 0.01  # the study's campaigns sample every 10 ms
    if lossy.height:
        t0 = float(lossy["t"][0])
        base = int(f.filter(pl.col("time_ns") < lossy["time_ns"][0])["retrans"].max() or 0)
        after = lossy.filter(pl.col("t") <= t0 + 1.0)
        out["first_loss_s"] = t0
        out["burst_retrans"] = int(after["retrans"].max() or 0) - base
        b0, b1 = int(round((t0 + start_ns / 1e9 - 1.0) / w)), int(round((t0 + start_ns / 1e9) / w))
        got = iv.filter((pl.col("bin") >= b0) & (pl.col("bin") < b1))["delivered_bytes"].sum()
        out["rate_before_loss_mbit"] = float(got) * 8 / 1e6
    if key == "onoff":
        first = f.with_columns(t.alias("t")).filter(pl.col("t") < ONOFF_PERIOD)
        out["cwnd_first_burst"] = float(first["cwnd"].max() or float("nan"))
        ivt = iv.filter(pl.col("delivered_bytes") > 0).with_columns(
            (pl.col("bin") * w - start_ns / 1e9).alias("t"))
        ivt = ivt.with_columns((pl.col("t") // ONOFF_PERIOD).alias("period"))
        per = ivt.group_by("period").agg(pl.col("t").max().alias("last"))
        per = per.with_columns((pl.col("last") + w - pl.col("period") * ONOFF_PERIOD).alias("arr"))
        if per.height:
            out["burst_arrival_s"] = float(per["arr"].mean())
    return out


def cell_mean(df, col, **eq) -> float:
    f = df
    for k, v in eq.items():
        f = f.filter(pl.col(k) == v)
    v = f[col].mean() if f.height else None
    return float(v) if v is not None else float("nan")


def cell_values(df, col, **eq) -> list[float]:
    f = df
    for k, v in eq.items():
        f = f.filter(pl.col(k) == v)
    return [float(x) for x in f[col].to_list() if x is not None]


# ---------------------------------------------------------------------------- analysis

_TABLES: dict[int, tuple] = {}


def tables(ctx: Ctx) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The per-run tables of every campaign (simulator, kernel or None), read once per context:
    analyse() and measure() share them."""
    key = id(ctx)
    if key not in _TABLES or _TABLES[key][0] is not ctx:
        df = pl.concat([run_table(ctx, k) for k in CAMPAIGNS], how="diagonal_relaxed")
        kdf = (pl.concat([run_table(ctx, k, True) for k in ctx.kernel_index],
                         how="diagonal_relaxed") if ctx.kernel_index else None)
        _TABLES.clear()
        _TABLES[key] = (ctx, df, kdf)
    return _TABLES[key][1], _TABLES[key][2]


def analyse(ctx: Ctx) -> Output:
    out = Output()
    pub = published()
    df, kdf = tables(ctx)
    loads = list(dict.fromkeys(df["load"].to_list()))
    for load in loads:
        rows = []
        for buf in ("unlimited", "limited"):
            for cc in CCS:
                for net in NETS:
                    p = pub[load.removesuffix("-common")][buf][net][cc]
                    eq = dict(load=load, buffer=buf, net=net, cc=cc)
                    g, rt = cell_mean(df, "goodput", **eq), cell_mean(df, "rtt", **eq)
                    kg = cell_mean(kdf, "goodput", **eq) if kdf is not None else float("nan")
                    kr = cell_mean(kdf, "rtt", **eq) if kdf is not None else float("nan")
                    d = rel_diff(p["goodput_KiBps"], g)
                    rows.append([buf, cc, NET_NAME[net], p["goodput_KiBps"], g, kg,
                                 f"{d:.0f}" if d is not None else "–", p["rtt_s"], rt, kr,
                                 p["interarrival_ms"], cell_mean(df, "interarrival_ms", **eq),
                                 cell_mean(df, "owd_ms", **eq), p["ssthresh_changes"],
                                 cell_mean(df, "ssth", **eq), cell_mean(df, "retrans", **eq)])
        common = load.endswith("-common")
        out.tables.append(Table(
            f"{load}: published | simulator | kernel"
            + (" (one common rate per network: the published columns are the thesis's "
               "per-cell-rate streams)" if common else ""),
            ["buffers", "CC", "network", "goodput KiB/s pub", "sim", "kernel", "d_r %",
             "RTT s pub", "sim", "kernel", "'OWD' ms pub (inter-arrival)", "sim",
             "true OWD ms sim", "ssthresh changes pub", "sim", "retransmissions sim"], rows,
            note="'OWD' is the thesis's metric (mean inter-arrival time at the receiver); "
                 "'true OWD' is the one-way delay ccbench measures on one clock. ssthresh "
                 "changes are counted in 10-ms samples (the thesis polled every ~60-70 ms)."))
    _checks(df, out)
    _figure(ctx, df, out)
    out.notes.append("Streams: the scored tables (stream50, stream25) stream each cell at 50 % / "
                     "25 % of the bulk goodput the thesis measured in that cell (Tables 4.2, "
                     "4.3), as the thesis did; the stream50-common / stream25-common tables use "
                     "one common rate per network (50 % / 25 % of about 2.2, 2.96, 10.4 "
                     "Mbit/s), so the CCs are compared at the same load (not scored).")
    return out


def _checks(df: pl.DataFrame, out: Output) -> None:
    """Project checks that are not claims of the thesis (printed, not counted)."""
    streams = [x for x in set(df["load"].to_list()) if x.startswith("stream")]
    if streams:
        worst = max(((s, net, cc, cell_mean(df, "rtt", load=s, net=net, cc=cc, buffer="unlimited")
                      / (2 * _base_delay(net))) for s in streams for net in NETS for cc in CCS),
                    key=lambda t: t[3])
        out.checks.append(Check(
            "streams, unlimited buffers: RTTs stay close to the base RTT (below twice it) — a "
            "project check, not a claim of the thesis (its Table 5.7 has CUBIC on ppp1 at "
            "0.561 s)", worst[3] < 2.0,
            f"highest RTT / base: {worst[0]} {worst[1]} {worst[2]} ×{worst[3]:.2f}"))


# ---------------------------------------------------------------------------- measure

def measure(ctx: Ctx) -> Data:
    df, kdf = tables(ctx)
    return Data(sim=df, kernel=kdf, pub=published(), scale=ctx.scale)


def _base_delay(net: str) -> float:
    """One-way central delay of the preset, s (docs/network-conditions.md)."""
    from ..config.conditions import PRESETS
    from ..config.units import parse_time
    return parse_time(PRESETS[net]["delay"], ("central", "delay")) / 1e9


def _figure(ctx: Ctx, df: pl.DataFrame, out: Output) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..plots.style import log_axis
    pub = published()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    marks = {"reno": "o", "cubic": "s", "vegas": "^"}
    cols = {"evdo": "tab:blue", "hspa-capped": "tab:orange", "hspa": "tab:green"}
    for load in ("bulk",):
        for buf in ("unlimited", "limited"):
            for net in NETS:
                for cc in CCS:
                    p = pub[load][buf][net][cc]
                    g = cell_mean(df, "goodput", load=load, buffer=buf, net=net, cc=cc)
                    r = cell_mean(df, "rtt", load=load, buffer=buf, net=net, cc=cc)
                    fill = cols[net] if buf == "unlimited" else "none"
                    axes[0].scatter(p["goodput_KiBps"], g, marker=marks[cc], edgecolors=cols[net],
                                    facecolors=fill)
                    axes[1].scatter(p["rtt_s"], r, marker=marks[cc], edgecolors=cols[net],
                                    facecolors=fill)
    for ax, lab in zip(axes, ("bulk goodput, KiB/s", "bulk RTT, s")):
        lim = [min(ax.get_xlim()[0], ax.get_ylim()[0]), max(ax.get_xlim()[1], ax.get_ylim()[1])]
        ax.plot(lim, lim, color="grey", lw=0.8)
        ax.set(xlabel=f"published {lab}", ylabel=f"ccbench simulator {lab}")
        log_axis(ax, "x")
        log_axis(ax, "y")
        ax.grid(alpha=0.3)
    from matplotlib.lines import Line2D
    axes[0].legend(handles=[Line2D([], [], marker=m, ls="", color="k", label=c) for c, m in marks.items()]
                   + [Line2D([], [], marker="o", ls="", color=c, label=n) for n, c in cols.items()],
                   fontsize=7, title="filled: unlimited, open: limited", title_fontsize=7)
    fig.tight_layout()
    fig.savefig(fig_path(ctx, "mobile-bulk.png"), dpi=90)
    plt.close(fig)
    out.figures.append(("mobile-bulk.png", "Bulk transfers: ccbench simulator against the "
                        "published goodput and RTT, per network, CC and buffer set (grey: equal)"))
