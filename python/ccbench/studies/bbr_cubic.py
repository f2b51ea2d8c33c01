"""BBR vs CUBIC at the bottleneck (S. Claypool, "Sharing but not Caring: Performance of TCP BBR
and TCP CUBIC at the Network Bottleneck", WPI MQP 2019; AICT 2019): share, loss, standing queue
and the fairness crossing point across 0.25-8 BDP byte-limited queues.

The study's metrics (its §"Analysis"): per-flow throughput = IP bytes received (headers and
retransmissions included) over the steady-state window, rows 50-80 % of each flow's 300 s;
protocol throughput = sum over its flows; share = T_BBR / (T_BBR + T_CUBIC); loss = router
drops / packets sent over rows 50-85 %; queue occupancy = backlog bytes / BDP bytes.
"""
from __future__ import annotations

import math

import polars as pl

from .claims import PARTLY, NOT, REPRODUCED, Data, Score, Scorers, band_1_5, finite, pm, welch
from .common import (Ctx, Output, Table, experiment, fig_path, patch, queue_window,
                     slot_series, window_flow_tput)

NAME = "bbr-vs-cubic"
TITLE = "BBR vs CUBIC at the bottleneck"
CAMPAIGNS = {"main": "campaign.yaml", "step": "capacity-step.yaml"}
INTRO = ("S. Claypool, *Sharing but not Caring: Performance of TCP BBR and TCP CUBIC at the "
         "Network Bottleneck*, WPI MQP-CEW-1904, 2019. The report's figures carry its per-point "
         "values; its text prints the few numbers quoted in the claims below (1-1.5 BDP of "
         "standing queue, about 10 % shallow-buffer loss, a 20-s cycle, 50 % shares at about "
         "5 and 3 BDP). Every claim of Chapters 4-6 is scored (`claims.yaml`). Setup and "
         "deviations: README.md.")

RTPROP = 0.025        # s: the study's RTprop (BDP = R/8 x 25 ms)
FLOW_LIFE = 300.0     # s of every flow at full scale

REDUCED_VARIANTS = ("bbr-4", "mix-2+2", "shallow-4", "shallow-2+2", "cubic-4")


def reduce(key: str, doc: dict, scale: str) -> dict:
    """The capacity step (BC-2): one trial below full scale. The main campaign: reduced (CI):
    80 Mbit/s, eight queue points, five mixes, 60-s runs, one trial (40 runs).
    medium: 80 Mbit/s, every queue point and mix but BBR-2/BBR-8, 120-s runs, one trial
    (63 runs)."""
    if key == "step":
        return patch(doc, {"sweep.repeats": 1})
    if scale == "medium":
        variants = {k: v for k, v in doc["sweep"]["variants"].items()
                    if k not in ("bbr-2", "bbr-8")}
        return patch(doc, {"duration": 120, "sweep.variants": variants, "sweep.repeats": 1,
                           ("sweep", "axes", "central.rate"): ["80Mbit"]})
    variants = {k: v for k, v in doc["sweep"]["variants"].items() if k in REDUCED_VARIANTS}
    return patch(doc, {"duration": 60, "sweep.variants": variants, "sweep.repeats": 1,
                       ("sweep", "axes", "central.rate"): ["80Mbit"],
                       ("sweep", "axes", "bdp"): [0.25, 0.5, 0.75, 1.25, 1.75, 2, 4, 8]})


def _plain(flows: list[dict]) -> list[dict]:
    """The kernel's own BBR for the 4.19-parameterised simulator one (its parameters are
    module-internal on the kernel)."""
    return [{**g, "scheme": g["scheme"]["name"] if isinstance(g["scheme"], dict)
             else g["scheme"]} for g in flows]


def kernel(key: str, doc: dict, scale: str) -> dict:
    """The kernel subset, one trial each, 120 s (40 s reduced): at full scale the 2+2 mix at
    80 Mbit/s and 0.5, 1.5, 1.75, 2, 4, 8 BDP and 4 BBR at 0.5 and 8 BDP (the cells of BC-4...BC-18;
    8 runs); below it the 2+2 mix at the scale's first rate and 0.5, 2, 8 BDP. The capacity
    step (BC-2) once. The kernel's BBR is this machine's; CUBIC is paced as in the file
    (`tcp: {pacing: fq}`: SO_MAX_PACING_RATE on the kernel)."""
    if key == "step":
        return patch(doc, {"sweep.repeats": 1, "flows": _plain(doc["flows"])})
    v = doc["sweep"]["variants"]
    dur = 40 if scale == "reduced" else 120
    if scale != "full":
        return patch(doc, {"duration": dur,
                           "sweep.variants": {"mix-2+2": {"flows": _plain(v["mix-2+2"]["flows"])}},
                           "sweep.repeats": 1,
                           ("sweep", "axes", "central.rate"): [doc["sweep"]["axes"]["central.rate"][0]],
                           ("sweep", "axes", "bdp"): [0.5, 2, 8]})
    return patch(doc, {"duration": dur,
                       "sweep.variants": {"mix-2+2": {"flows": _plain(v["mix-2+2"]["flows"])},
                                          "bbr-4": {"flows": _plain(v["bbr-4"]["flows"])}},
                       "sweep.repeats": 1, ("sweep", "axes", "central.rate"): ["80Mbit"],
                       ("sweep", "axes", "bdp"): [0.5, 1.5, 1.75, 2, 4, 8],
                       "sweep.exclude": [{"variant": "bbr-4", "bdp": b} for b in (1.5, 1.75, 2, 4)]})


# ---------------------------------------------------------------------------- per run

def _bottleneck(exp: dict) -> int:
    return next(l["id"] for l in exp["links"] if l["name"] == "r1->r2")


def run_table(ctx: Ctx, key: str, kernel: bool = False) -> pl.DataFrame:
    """One row per run: variant, rate, bdp, repeat, BBR and CUBIC throughput and
    utilisation, share, loss %, queue occupancy (BDP), BBR utilisation IQR over 0.5-s bins."""
    idx = (ctx.kernel_index if kernel else ctx.index)[key]
    runs = idx.group_by("run_key").agg(pl.first("variant"), pl.first("central.rate"),
                                       pl.first("bdp"), pl.first("repeat"),
                                       pl.col("scheme"), pl.col("flow"))
    rows = []
    for r in runs.iter_rows(named=True):
        d = ctx.run_dir(key, r["run_key"], kernel)
        exp = experiment(d)
        # the run's own length: the kernel subset's runs are shorter than the full scale's
        dur = exp["duration_ns"] / 1e9
        t0, t1, t1_loss = 0.5 * dur, 0.8 * dur, 0.85 * dur
        rate = exp["links"][_bottleneck(exp)]["rate_bps"]
        tput = window_flow_tput(d, t0, t1)
        fam = {f: ("cubic" if s == "cubic" else "bbr") for f, s in zip(r["flow"], r["scheme"])}
        tb = sum(v for f, v in tput.items() if fam.get(f) == "bbr")
        tc = sum(v for f, v in tput.items() if fam.get(f) == "cubic")
        q = queue_window(d, _bottleneck(exp), t0, t1_loss)
        bdp_bytes = rate / 8 * RTPROP
        iqr = _bbr_iqr(d, fam, t0, t1, rate)
        bdp = float(r["bdp"])
        qs = _queue_shape(d, _bottleneck(exp), t0, t1_loss)
        row = {"variant": r["variant"], "rate_mbps": rate / 1e6, "bdp": bdp,
               "repeat": r["repeat"], "bbr_mbps": tb, "cubic_mbps": tc,
               "util": (tb + tc) / (rate / 1e6),
               "share": (tb / (tb + tc) if len(set(fam.values())) == 2 and tb + tc > 0
                         else float("nan")),
               "loss_pct": q["loss_pct"], "queue_bdp": q["backlog_bytes"] / bdp_bytes,
               "bbr_iqr": iqr, "flow_mbps": [tput[f] for f in sorted(tput)],
               "loss_frac": qs["loss_frac"], "queue_p99_bdp": qs["p99_bytes"] / bdp_bytes,
               "queue_max_bdp": qs["max_bytes"] / bdp_bytes,
               "limit_bdp": bdp * 1500 / 1514}
        row.update(_rtts(d, fam, t0, t1))
        # the costlier shapes only where a claim reads them
        row["period_s"] = (_share_period(d, fam, rate) if r["variant"].startswith(("mix", "shallow-2"))
                           and abs(bdp - 1.75) < 1e-9 else float("nan"))
        row.update(_probe_rtt_cycle(d, fam, _bottleneck(exp))
                   if r["variant"] == "mix-2+2" and abs(bdp - 1.75) < 1e-9
                   else {"probe_alt": float("nan"), "probe_drop_ratio": float("nan"),
                         "probe_n": 0, "probe_min_ms": float("nan"), "probe_max_ms": float("nan")})
        row["probe_sync"] = (_probe_sync(d, fam, t0, dur) if r["variant"] == "bbr-4"
                             and bdp == 8 else float("nan"))
        rows.append(row)
    return pl.DataFrame(rows).sort(["variant", "rate_mbps", "bdp", "repeat"])


def _queue_shape(run_dir, link: int, t0: float, t1: float) -> dict[str, float]:
    """The bottleneck's backlog peaks (99th percentile and maximum of the 100-ms samples,
    bytes) and the fraction of the window's 0.5-s intervals with at least one drop."""
    q = pl.read_parquet(run_dir / "queues.parquet", columns=["time_ns", "link", "bytes", "drops"])
    q = q.filter((pl.col("link") == link) & (pl.col("time_ns") >= int(t0 * 1e9))
                 & (pl.col("time_ns") < int(t1 * 1e9)))
    if q.height < 2:
        return {"loss_frac": float("nan"), "p99_bytes": float("nan"), "max_bytes": float("nan")}
    per = (q.with_columns((pl.col("time_ns") // 500_000_000).alias("slot"))
           .group_by("slot").agg(pl.col("drops").max()).sort("slot"))
    d = per["drops"].diff().drop_nulls()
    return {"loss_frac": float((d > 0).mean()) if d.len() else float("nan"),
            "p99_bytes": float(q["bytes"].quantile(0.99)), "max_bytes": float(q["bytes"].max())}


def _rtts(run_dir, fam, t0, t1) -> dict[str, float]:
    """Mean smoothed RTT (ms) of the BBR and of the CUBIC flows over the window."""
    f = pl.read_parquet(run_dir / "flows.parquet", columns=["time_ns", "flow", "srtt_us"])
    f = f.filter((pl.col("time_ns") >= int(t0 * 1e9)) & (pl.col("time_ns") < int(t1 * 1e9))
                 & (pl.col("srtt_us") > 0))
    out = {}
    for k in ("bbr", "cubic"):
        sel = f.filter(pl.col("flow").is_in([x for x, v in fam.items() if v == k]))
        m = sel["srtt_us"].mean() if sel.height else None
        out[f"rtt_{k}_ms"] = float(m) / 1000 if m is not None else float("nan")
    return out


def _share_period(run_dir, fam, rate) -> float:
    """The dominant period (s) of BBR's 0.5-s share after 10 s: the lag of the highest
    autocorrelation peak between 5 and 60 s (up to half the series)."""
    s = slot_series(run_dir, 0.5).filter(pl.col("slot") >= 20)
    bbr = [f for f, k in fam.items() if k == "bbr"]
    g = (s.with_columns(pl.col("flow").is_in(bbr).alias("b"))
         .group_by("slot").agg((pl.col("mbps") * pl.col("b")).sum().alias("bb"),
                               pl.col("mbps").sum().alias("all")).sort("slot"))
    x = [b / a if a > 0 else 0.0 for b, a in zip(g["bb"].to_list(), g["all"].to_list())]
    n = len(x)
    if n < 160:  # at least 80 s after the first 10: lags up to 40 s, twice the 20-s cycle
        return float("nan")
    m = sum(x) / n
    x = [v - m for v in x]
    var = sum(v * v for v in x)
    if var == 0:
        return float("nan")
    ac = {lag: sum(x[i] * x[i + lag] for i in range(n - lag)) / var for lag in range(10, min(121, n // 2))}
    peaks = [l for l in ac if ac.get(l - 1, -9) < ac[l] >= ac.get(l + 1, -9)]
    return max(peaks, key=lambda l: ac[l]) * 0.5 if peaks else float("nan")


def _bbr_modes(run_dir, cols: list[str]) -> pl.DataFrame | None:
    """The BBR flows' samples with ``cc_mode``: the simulator records the mode; the kernel's
    TCP_CC_INFO does not, but only PROBE_RTT runs with a cwnd gain of 1 (tcp_bbr.c,
    bbr_update_gains), so there the mode is read from ``cc_cwnd_gain``."""
    have = pl.read_parquet_schema(run_dir / "flows.parquet")
    if not all(c in have for c in cols):
        return None
    if "cc_mode" in have:
        return pl.read_parquet(run_dir / "flows.parquet",
                               columns=["time_ns", "flow", "cc_mode"] + cols).sort("time_ns")
    if "cc_cwnd_gain" not in have:
        return None
    f = pl.read_parquet(run_dir / "flows.parquet", columns=["time_ns", "flow", "cc_cwnd_gain"] + cols)
    return f.with_columns(pl.when(pl.col("cc_cwnd_gain") == 1.0).then(3).otherwise(2)
                          .alias("cc_mode")).drop("cc_cwnd_gain").sort("time_ns")


def _probe_episodes(f: pl.DataFrame) -> list[tuple[float, float]]:
    """(start s, end s) of each PROBE_RTT episode of one BBR flow (cc_mode 3)."""
    t, m = f["time_ns"].to_list(), f["cc_mode"].to_list()
    eps, start = [], None
    for ti, mi in zip(t, m):
        if mi == 3 and start is None:
            start = ti
        elif mi != 3 and start is not None:
            eps.append((start / 1e9, ti / 1e9))
            start = None
    return eps


def _probe_rtt_cycle(run_dir, fam, link) -> dict[str, float]:
    """BC-15's mechanism: the min-RTT estimate each BBR flow leaves a ProbeRTT with; the share
    of consecutive pairs that alternate between <= 1.3 x RTprop and >= 2 x RTprop; and the
    ratio of the bottleneck's drops in the 10 s after an inflated estimate to those after a
    low one."""
    nan = {"probe_alt": float("nan"), "probe_drop_ratio": float("nan"), "probe_n": 0,
           "probe_min_ms": float("nan"), "probe_max_ms": float("nan")}
    f = _bbr_modes(run_dir, ["cc_min_rtt_us"])
    if f is None:
        return nan
    q = pl.read_parquet(run_dir / "queues.parquet", columns=["time_ns", "link", "drops"]) \
        .filter(pl.col("link") == link).sort("time_ns")
    qt, qd = q["time_ns"].to_list(), q["drops"].to_list()

    def drops(a, b):
        import bisect
        i, j = bisect.bisect_left(qt, int(a * 1e9)), bisect.bisect_left(qt, int(b * 1e9))
        j = min(j, len(qd) - 1)
        return qd[j] - qd[min(i, j)] if qd else 0

    alt = pairs = 0
    all_ests = []
    after = {"low": [], "high": []}
    lo, hi = 1.3 * RTPROP * 1e6, 2 * RTPROP * 1e6
    for fl in [x for x, k in fam.items() if k == "bbr"]:
        g = f.filter(pl.col("flow") == fl)
        ests = []
        for a, b in _probe_episodes(g):
            if a < 10:
                continue
            after_b = g.filter(pl.col("time_ns") >= int(b * 1e9)).head(1)
            if after_b.height:
                ests.append((b, float(after_b["cc_min_rtt_us"][0])))
        all_ests.append(ests)
        for (b0, e0), (b1, e1) in zip(ests, ests[1:]):
            pairs += 1
            alt += (e0 <= lo and e1 >= hi) or (e0 >= hi and e1 <= lo)
        for b, e in ests:
            kind = "high" if e >= hi else "low" if e <= lo else None
            if kind:
                after[kind].append(drops(b, b + 10))
    if not pairs:
        return nan
    every = [e for fl_ests in all_ests for _, e in fl_ests]
    mh = sum(after["high"]) / len(after["high"]) if after["high"] else float("nan")
    ml = sum(after["low"]) / len(after["low"]) if after["low"] else float("nan")
    return {"probe_alt": alt / pairs, "probe_min_ms": min(every) / 1000,
            "probe_max_ms": max(every) / 1000,
            "probe_drop_ratio": (mh / ml if ml and ml > 0 else (float("inf") if mh > 0 else float("nan"))),
            "probe_n": pairs}


def _probe_sync(run_dir, fam, t0, dur) -> float:
    """BC-1: the share of the first BBR flow's ProbeRTT episodes (after every flow started)
    that every other BBR flow matches with a ProbeRTT starting within 200 ms."""
    f = _bbr_modes(run_dir, [])
    if f is None:
        return float("nan")
    bbr = sorted(x for x, k in fam.items() if k == "bbr")
    eps = {fl: [a for a, _ in _probe_episodes(f.filter(pl.col("flow") == fl)) if a >= 10]
           for fl in bbr}
    ref = eps[bbr[0]]
    if not ref:
        return float("nan")
    hit = sum(all(any(abs(a - b) <= 0.2 for b in eps[o]) for o in bbr[1:]) for a in ref)
    return hit / len(ref)


def _bbr_iqr(run_dir, fam, t0, t1, rate) -> float:
    """Interquartile range of the BBR flows' summed utilisation over 0.5-s bins in the window:
    wide when the shares alternate (the study's cyclic behaviour)."""
    s = slot_series(run_dir, 0.5)
    s = s.filter((pl.col("slot") >= int(t0 / 0.5)) & (pl.col("slot") < int(t1 / 0.5)))
    bbr = [f for f, k in fam.items() if k == "bbr"]
    if not bbr or s.height == 0:
        return float("nan")
    per = (s.filter(pl.col("flow").is_in(bbr)).group_by("slot")
           .agg(pl.col("mbps").sum()))["mbps"] / (rate / 1e6)
    return float(per.quantile(0.75) - per.quantile(0.25))


def _mean(df: pl.DataFrame, variant: str, col: str, *, bdp=None, rate=None) -> float:
    f = df.filter(pl.col("variant") == variant)
    if bdp is not None:
        f = f.filter(pl.col("bdp") == bdp)
    if rate is not None:
        f = f.filter(pl.col("rate_mbps") == rate)
    v = f[col].drop_nans().mean() if f.height else None
    return float(v) if v is not None else float("nan")


def _diff90(df: pl.DataFrame, a: str, b: str, col: str, *, bdp) -> tuple[float, float]:
    """Mean of ``a``'s runs minus mean of ``b``'s (all rates) at ``bdp``, and the half-width of
    its 90 % interval (claims.welch)."""
    def runs(v):
        return df.filter((pl.col("variant") == v) & (pl.col("bdp") == bdp))[col].to_list()
    diff, hw = welch(runs(a), runs(b))
    return (diff, hw) if finite(hw) else (float("nan"), float("nan"))


def crossing(points: list[tuple[float, float]], level: float = 0.5) -> float | None:
    """The buffer (BDP) at which the share first falls through ``level``, interpolated in
    log(buffer); None if it never does."""
    pts = sorted(points)
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if y0 >= level > y1:
            a = (y0 - level) / (y0 - y1)
            return math.exp(math.log(x0) + a * (math.log(x1) - math.log(x0)))
    return None


def _share_curve(df, variant, rate=None):
    f = df.filter(pl.col("variant") == variant)
    if rate is not None:
        f = f.filter(pl.col("rate_mbps") == rate)
    g = f.group_by("bdp").agg(pl.col("share").mean()).sort("bdp")
    return list(zip(g["bdp"].to_list(), g["share"].to_list()))


# ---------------------------------------------------------------------------- analysis

def analyse(ctx: Ctx) -> Output:
    out = Output()
    df = _tables(ctx)["sim"]
    kdf = _tables(ctx)["kernel"]
    rates = sorted(set(df["rate_mbps"].to_list()))
    bdps = sorted(set(df["bdp"].to_list()))

    # tables
    for rate in rates:
        rows = []
        for b in bdps:
            row = [b]
            for v in ("mix-1+1", "mix-2+2", "mix-4+4", "shallow-2+2"):
                row.append(_mean(df, v, "share", bdp=b, rate=rate))
            for v in ("bbr-4", "shallow-4", "cubic-4"):
                row.append(_mean(df, v, "loss_pct", bdp=b, rate=rate))
            for v in ("bbr-4", "cubic-4"):
                row.append(_mean(df, v, "queue_bdp", bdp=b, rate=rate))
            rows.append(row)
        out.tables.append(Table(
            f"{rate:g} Mbit/s: BBR share, loss and standing queue against the buffer (simulator, mean of trials)",
            ["buffer (BDP)", "share 1+1", "share 2+2", "share 4+4", "share SH 2+2",
             "loss % 4 BBR", "loss % 4 SH", "loss % 4 CUBIC", "queue 4 BBR (BDP)",
             "queue 4 CUBIC (BDP)"], rows))
    crows = []
    for rate in rates:
        for v in ("mix-1+1", "mix-2+2", "mix-4+4", "shallow-2+2"):
            if df.filter(pl.col("variant") == v).height:
                c = crossing(_share_curve(df, v, rate))
                crows.append([f"{rate:g}", v, "a few BDP (BBR_Shallow: smaller than BBR)",
                              f"{c:.2f}" if c else "none in range", ""])
    out.tables.append(Table("Fair-share crossing point (share = 0.5), BDP",
                            ["Mbit/s", "mix", "published (trend)", "ccbench simulator", "kernel"],
                            crows))
    if kdf is not None and kdf.height:
        krows = []
        kr = float(kdf["rate_mbps"][0])
        for b in sorted(set(kdf["bdp"].to_list())):
            krows.append([b, _mean(df, "mix-2+2", "share", bdp=b, rate=kr),
                          _mean(kdf, "mix-2+2", "share", bdp=b),
                          _mean(df, "mix-2+2", "loss_pct", bdp=b, rate=kr),
                          _mean(kdf, "mix-2+2", "loss_pct", bdp=b),
                          _mean(df, "mix-2+2", "util", bdp=b, rate=kr),
                          _mean(kdf, "mix-2+2", "util", bdp=b)])
        out.tables.append(Table(
            f"2 BBR + 2 CUBIC at {kr:g} Mbit/s: simulator (4.19 BBR) beside this machine's kernel",
            ["buffer (BDP)", "share sim", "share kernel", "loss % sim", "loss % kernel",
             "util sim", "util kernel"], krows,
            note="The kernel's BBR is the running kernel's (ACK-aggregation allowance and "
                 "pacing margin present, unlike 4.19); kernel runs last 120 s (40 s at "
                 "the CI scale), one trial each; the steady-state windows scale with the run."))
    _figures(ctx, df, out)
    out.notes.append("share uses the steady-state window (50-80 % of each flow's life); "
                     "loss the router's drops over packets sent in 50-85 %.")
    return out


def _figures(ctx: Ctx, df: pl.DataFrame, out: Output) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rates = sorted(set(df["rate_mbps"].to_list()))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for v, ls in (("mix-1+1", ":"), ("mix-2+2", "-"), ("mix-4+4", "--"), ("shallow-2+2", "-.")):
        for rate in rates:
            pts = _share_curve(df, v, rate)
            if pts:
                axes[0].plot([p[0] for p in pts], [p[1] for p in pts], ls, marker="o",
                             label=f"{v} {rate:g} Mbit/s")
    axes[0].axhline(0.5, color="grey", lw=0.8)
    axes[0].set(xscale="log", xlabel="buffer (BDP)", ylabel="BBR share", title="BBR share vs buffer")
    for v in ("bbr-4", "shallow-4", "mix-2+2"):
        g = df.filter(pl.col("variant") == v).group_by("bdp").agg(pl.col("loss_pct").mean()).sort("bdp")
        if g.height:
            axes[1].plot(g["bdp"], g["loss_pct"], marker="o", label=v)
    axes[1].set(xscale="log", xlabel="buffer (BDP)", ylabel="loss %", title="bottleneck loss")
    for v in ("bbr-4", "shallow-4", "cubic-4"):
        g = df.filter(pl.col("variant") == v).group_by("bdp").agg(pl.col("queue_bdp").mean()).sort("bdp")
        if g.height:
            axes[2].plot(g["bdp"], g["queue_bdp"], marker="o", label=v)
    axes[2].set(xscale="log", yscale="log", xlabel="buffer (BDP)", ylabel="mean backlog (BDP)",
                title="standing queue")
    for a in axes:
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(fig_path(ctx, "bbr-cubic.png"), dpi=90)
    plt.close(fig)
    out.figures.append(("bbr-cubic.png", "BBR share, bottleneck loss and standing queue "
                        "against the buffer, mean over trials (all rates pooled in the last two)"))


# ---------------------------------------------------------------------------- BC-2: the step

def step_table(ctx: Ctx, kernel: bool = False) -> pl.DataFrame:
    """One row per capacity-step run (BC-2): mean throughput over 41-45 s (after the drop to
    10 Mbit/s), the time from the increase at 20 s until the 100-ms throughput first reaches
    18 Mbit/s, and the longest plateau (consecutive bins within +-3 % of each other) while it
    climbs from 11 to 18 Mbit/s."""
    idx = (ctx.kernel_index if kernel else ctx.index).get("step")
    if idx is None or not idx.height:
        return pl.DataFrame()
    rows = []
    for rk in idx["run_key"].unique().sort().to_list():
        d = ctx.run_dir("step", rk, kernel)
        iv = pl.read_parquet(d / "intervals.parquet", columns=["bin", "delivered_bytes"])
        w = experiment(d)["sample_interval_ns"] / 1e9
        x = iv.group_by("bin").agg(pl.col("delivered_bytes").sum()).sort("bin")
        mbps = dict(zip(x["bin"].to_list(), (x["delivered_bytes"] * 8 / w / 1e6).to_list()))
        series = [mbps.get(b, 0.0) for b in range(int(round(20 / w)), int(round(40 / w)))]
        reach = next((i for i, v in enumerate(series) if v >= 18), None)
        start = next((i for i, v in enumerate(series) if v > 11), None)
        plateau = 0
        if reach is not None and start is not None:
            ramp = series[start:reach + 1]
            run = 1
            for a, b in zip(ramp, ramp[1:]):
                run = run + 1 if abs(b - a) <= 0.03 * max(a, b) else 1
                plateau = max(plateau, run)
        after = [mbps.get(b, 0.0) for b in range(int(round(41 / w)), int(round(45 / w)))]
        rows.append({"run": rk, "after_drop_mbps": sum(after) / len(after),
                     "reach18_s": reach * w if reach is not None else float("nan"),
                     "plateau_bins": plateau})
    return pl.DataFrame(rows)


# ---------------------------------------------------------------------------- the claims

def _tables(ctx: Ctx) -> dict:
    """The per-run tables of both backends, computed once per analysis."""
    cache = ctx.__dict__.setdefault("_bbr_tables", {})
    if not cache:
        cache["sim"] = run_table(ctx, "main")
        cache["kernel"] = (run_table(ctx, "main", kernel=True)
                           if "main" in ctx.kernel_index else None)
        cache["step"] = step_table(ctx)
        cache["kstep"] = step_table(ctx, kernel=True) if "step" in ctx.kernel_index else None
    return cache


def measure(ctx: Ctx) -> Data:
    t = _tables(ctx)
    return Data(sim={"main": t["sim"], "step": t["step"]},
                kernel={"main": t["kernel"], "step": t["kstep"]},
                pub=published(), scale=ctx.scale)


def published() -> dict:
    import yaml
    from .common import STUDIES_DIR
    return yaml.safe_load((STUDIES_DIR / NAME / "published.yaml").read_text())


SCORERS = Scorers()


def _cell(df, variant, *, rate=None, bdp=None) -> pl.DataFrame:
    if df is None or not df.height:
        return pl.DataFrame()
    f = df.filter(pl.col("variant") == variant)
    if rate is not None:
        f = f.filter(pl.col("rate_mbps") == rate)
    if bdp is not None:
        f = f.filter((pl.col("bdp") - bdp).abs() < 1e-9)
    return f


def _vals(df, col) -> list[float]:
    if not df.height:
        return []
    return [x for x in df[col].to_list() if x is not None and not math.isnan(x)]


def _avg(df, col) -> float:
    v = _vals(df, col)
    return sum(v) / len(v) if v else float("nan")


def _kernel_note(d: Data, variant: str, col: str, bdp: float, fmt: str = ".2f",
                 rate: float | None = 80.0) -> str:
    k = d.kernel["main"] if d.kernel else None
    c = _cell(k, variant, bdp=bdp)
    if rate is not None and c.height:
        c = c.filter(pl.col("rate_mbps") == rate)
    return f"{pm(_vals(c, col), fmt)} (kernel {c['rate_mbps'][0]:g} Mbit/s)" if c.height else ""


def _rates(d: Data) -> list[float]:
    return sorted(set(d.sim["main"]["rate_mbps"].to_list()))


def _rate80(d: Data) -> float | None:
    """The report's main rate, 80 Mbit/s, if this scale ran it."""
    return 80.0 if 80.0 in _rates(d) else None


def _at80(d: Data, variant: str, bdp: float) -> tuple[pl.DataFrame | None, Score | None]:
    """The runs of ``variant`` at 80 Mbit/s and ``bdp``, or the "too few runs" score when this
    scale did not run that cell."""
    r = _rate80(d)
    c = _cell(d.sim["main"], variant, rate=r, bdp=bdp)
    if r is None or not c.height:
        return None, Score.too_few(f"{variant} at 80 Mbit/s and {bdp:g} BDP did not run at this scale")
    return c, None


@SCORERS("BC-1")
def _bc1(d: Data) -> Score:
    c, few = _at80(d, "bbr-4", 8)
    if few:
        return few
    fair = [max(abs(x / (80.0 / 4) - 1) for x in fl) for fl in c["flow_mbps"].to_list()]
    sync = _vals(c, "probe_sync")
    ok = max(fair) <= 0.10 and sync and min(sync) >= 0.9
    k = _cell(d.kernel["main"] if d.kernel else None, "bbr-4", bdp=8)
    kt = ""
    if k.height:
        kf = [max(abs(x / (float(k["rate_mbps"][0]) / 4) - 1) for x in fl) for fl in k["flow_mbps"].to_list()]
        kt = (f"largest deviation {max(kf) * 100:.1f} %; ProbeRTTs matched "
              f"{pm(_vals(k, 'probe_sync'), '.2f')} (today's BBR, ProbeRTT read from a cwnd gain of 1)")
    return Score.test(bool(ok), f"largest per-flow deviation from R/4 {max(fair) * 100:.1f} %; "
                      f"ProbeRTTs matched by all flows {pm(sync, '.2f')}", kernel=kt)


@SCORERS("BC-2")
def _bc2(d: Data) -> Score:
    s = d.sim["step"]
    if s is None or not s.height:
        return Score.too_few("the capacity-step campaign did not run")
    follow = all(abs(x / 10 - 1) <= 0.10 for x in s["after_drop_mbps"].to_list())
    smooth = all(p < 3 for p in s["plateau_bins"].to_list()) and not any(
        math.isnan(x) for x in s["reach18_s"].to_list())
    k = d.kernel.get("step") if d.kernel else None
    kt = (f"41-45 s {pm(k['after_drop_mbps'].to_list(), '.1f')} Mbit/s; 18 Mbit/s after "
          f"{pm(k['reach18_s'].to_list(), '.1f')} s; longest plateau "
          f"{max(k['plateau_bins'].to_list())} bins (today's kernel BBR)"
          if k is not None and k.height else "")
    return Score.test(follow and smooth,
                      f"41-45 s {pm(s['after_drop_mbps'].to_list(), '.1f')} Mbit/s; 18 Mbit/s "
                      f"{pm(s['reach18_s'].to_list(), '.1f')} s after the increase; longest "
                      f"plateau on the way {max(s['plateau_bins'].to_list())} bins of 100 ms "
                      "(4.19 BBR parameters)", kernel=kt, partly=follow)


@SCORERS("BC-3")
def _bc3(d: Data) -> Score:
    cells, txt = [], []
    for v in ("bbr-2", "bbr-4", "bbr-8"):
        for r in _rates(d):
            c = _cell(d.sim["main"], v, rate=r, bdp=8)
            if c.height:
                q = _avg(c, "queue_bdp")
                cells.append(1.0 <= q <= 1.5)
                txt.append(f"{v[4:]}×{r:g}: {q:.2f}")
    return Score.cells(sum(cells), len(cells), "mean queue (BDP) at 8 BDP: " + ", ".join(txt),
                       kernel="4 BBR, 8 BDP: " + _kernel_note(d, "bbr-4", "queue_bdp", 8))


@SCORERS("BC-4")
def _bc4(d: Data) -> Score:
    c, few = _at80(d, "bbr-4", 8)
    if few:
        return few
    q, p = _avg(c, "queue_bdp"), _avg(c, "queue_p99_bdp")
    return Score.test(1.0 <= q <= 1.3 and 1.3 <= p <= 1.7,
                      f"mean {pm(_vals(c, 'queue_bdp'))} BDP, 99th percentile "
                      f"{pm(_vals(c, 'queue_p99_bdp'))} BDP",
                      kernel=_kernel_note(d, "bbr-4", "queue_bdp", 8) and
                      f"mean {_kernel_note(d, 'bbr-4', 'queue_bdp', 8)}, 99th percentile "
                      f"{_kernel_note(d, 'bbr-4', 'queue_p99_bdp', 8)}",
                      partly=1.0 <= q <= 1.5)


@SCORERS("BC-5")
def _bc5(d: Data) -> Score:
    r = _rate80(d) or _rates(d)[0]
    c = _cell(d.sim["main"], "cubic-4", rate=r, bdp=8)
    if not c.height:
        return Score.too_few("4 CUBIC at 8 BDP did not run at this scale")
    full = [m >= 0.95 * lim for m, lim in zip(c["queue_max_bdp"].to_list(), c["limit_bdp"].to_list())]
    drops = [x > 0 for x in c["loss_pct"].to_list()]
    return Score.test(all(full) and all(drops),
                      f"{r:g} Mbit/s: backlog peaks {pm(_vals(c, 'queue_max_bdp'))} BDP of a "
                      f"{c['limit_bdp'][0]:.2f}-BDP limit; loss {pm(_vals(c, 'loss_pct'), '.3f')} %")


@SCORERS("BC-6")
def _bc6(d: Data) -> Score:
    r = _rate80(d) or _rates(d)[0]
    b, c = _cell(d.sim["main"], "bbr-4", rate=r, bdp=8), _cell(d.sim["main"], "cubic-4", rate=r, bdp=8)
    if not b.height or not c.height:
        return Score.too_few("4 BBR and 4 CUBIC at 8 BDP did not both run at this scale")
    rb, rc = _avg(b, "rtt_bbr_ms"), _avg(c, "rtt_cubic_ms")
    x, y = rb / (RTPROP * 1000), rb / rc
    return Score.test(2.0 <= x <= 2.5 and 0.2 <= y <= 0.3,
                      f"{r:g} Mbit/s: BBR RTT {rb:.1f} ms = {x:.2f} × RTprop; CUBIC {rc:.1f} ms; "
                      f"ratio {y:.2f}", partly=x < 3 and y < 0.5)


def _loss_cell(d, variant, r, b) -> tuple[float, float]:
    c = _cell(d.sim["main"], variant, rate=r, bdp=b)
    return _avg(c, "loss_pct"), _avg(c, "loss_frac")


@SCORERS("BC-7")
def _bc7(d: Data) -> Score:
    c, few = _at80(d, "bbr-4", 0.5)
    if few:
        return few
    lo, hi = band_1_5(d.pub["BC-7"]["loss_pct"])
    loss, frac = _avg(c, "loss_pct"), _avg(c, "loss_frac")
    return Score.test(lo <= loss <= hi and frac >= 0.9,
                      f"loss {pm(_vals(c, 'loss_pct'))} % (band {lo:.1f}-{hi:.1f}); drops in "
                      f"{frac * 100:.0f} % of the 0.5-s intervals",
                      kernel=_kernel_note(d, "bbr-4", "loss_pct", 0.5) and
                      f"loss {_kernel_note(d, 'bbr-4', 'loss_pct', 0.5)} %, drops in "
                      f"{_kernel_note(d, 'bbr-4', 'loss_frac', 0.5)} of the 0.5-s intervals",
                      partly=loss > 1 and frac >= 0.9)


def _bc8_rate(d: Data, variant: str, r: float) -> tuple[bool, bool, str]:
    """(BC-8's test passes, its ordering holds, text) for one variant and rate."""
    lo, hi = band_1_5(d.pub["BC-7"]["loss_pct"])
    sh = [_loss_cell(d, variant, r, b)[0] for b in (0.25, 0.5, 0.75)]
    l125, l2 = _loss_cell(d, variant, r, 1.25)[0], _loss_cell(d, variant, r, 2)[0]
    deep = [_loss_cell(d, variant, r, b)[0] for b in (2, 4, 8)]
    if not finite(*sh, l125, l2, *deep):
        return False, False, f"{r:g}: not every buffer ran"
    ok = all(lo <= x <= hi for x in sh) and l125 > 0 and l125 > l2 and all(x < 0.1 for x in deep)
    order = min(sh) > l125 > max(deep) and all(x < 0.1 for x in deep)
    return ok, order, (f"{r:g} Mbit/s: {'/'.join(f'{x:.1f}' for x in sh)} % at 0.25/0.5/0.75, "
                       f"{l125:.2f} % at 1.25, ≤ {max(deep):.3f} % at 2-8 BDP")


@SCORERS("BC-8")
def _bc8(d: Data) -> Score:
    res = [_bc8_rate(d, "bbr-4", r) for r in _rates(d)]
    if not any(o for _, o, _ in res) and all("not every" in t for _, _, t in res):
        return Score.too_few("; ".join(t for _, _, t in res))
    return Score.test(all(ok for ok, _, _ in res), "; ".join(t for _, _, t in res),
                      partly=all(o for _, o, _ in res))


@SCORERS("BC-9")
def _bc9(d: Data) -> Score:
    ok, txt = [], []
    for r in _rates(d):
        deep = _avg(_cell(d.sim["main"], "bbr-4", rate=r, bdp=8), "util")
        sh = [_avg(_cell(d.sim["main"], "bbr-4", rate=r, bdp=b), "util") for b in (0.25, 0.5, 0.75)]
        sh = [x for x in sh if finite(x)]
        if sh and finite(deep):
            ok.append(all(x >= 0.9 * deep for x in sh))
            txt.append(f"{r:g}: {min(sh):.3f} vs {deep:.3f} at 8 BDP")
    if not ok:
        return Score.too_few("4 BBR did not run at ≤ 0.75 and 8 BDP")
    return Score.test(all(ok), "lowest shallow-buffer utilisation vs 8 BDP: " + "; ".join(txt))


@SCORERS("BC-10")
def _bc10(d: Data) -> Score:
    res = []
    for v in ("bbr-2", "bbr-4", "bbr-8"):
        for r in _rates(d):
            if _cell(d.sim["main"], v, rate=r).height:
                ok, _, t = _bc8_rate(d, v, r)
                res.append((ok, f"{v[4:]} flows {t}"))
    return Score.cells(sum(o for o, _ in res), len(res),
                       "; ".join(t for o, t in res if not o)[:600] or "every configuration passes")


@SCORERS("BC-11")
def _bc11(d: Data) -> Score:
    c, few = _at80(d, "mix-2+2", 0.5)
    if few:
        return few
    lo, hi = band_1_5(d.pub["BC-11"]["loss_pct"])
    loss = _avg(c, "loss_pct")
    others = "; ".join(f"{x:g} Mbit/s {_avg(_cell(d.sim['main'], 'mix-2+2', rate=x, bdp=0.5), 'loss_pct'):.1f} %"
                       for x in _rates(d) if x != 80.0)
    return Score.test(lo <= loss <= hi, f"loss {pm(_vals(c, 'loss_pct'))} % (band {lo:.1f}-{hi:.1f})"
                      + (f"; {others}" if others else ""),
                      kernel=_kernel_note(d, "mix-2+2", "loss_pct", 0.5) and
                      f"loss {_kernel_note(d, 'mix-2+2', 'loss_pct', 0.5, rate=None)} %",
                      partly=loss > 1)


def _share_ok(d, variant, r, b) -> tuple[bool, float]:
    s = _avg(_cell(d.sim["main"], variant, rate=r, bdp=b), "share")
    return finite(s) and s >= 0.8, s


@SCORERS("BC-12")
def _bc12(d: Data) -> Score:
    c, few = _at80(d, "mix-2+2", 0.5)
    if few:
        return few
    ok, _ = _share_ok(d, "mix-2+2", 80.0, 0.5)
    return Score.test(ok, f"BBR share {pm(_vals(c, 'share'), '.3f')}",
                      kernel=_kernel_note(d, "mix-2+2", "share", 0.5, ".3f", rate=None))


@SCORERS("BC-13")
def _bc13(d: Data) -> Score:
    res = []
    for v in ("mix-1+1", "mix-2+2", "mix-4+4"):
        for r in _rates(d):
            for b in (0.25, 0.5, 0.75):
                if _cell(d.sim["main"], v, rate=r, bdp=b).height:
                    ok, s = _share_ok(d, v, r, b)
                    res.append((ok, f"{v[4:]} {r:g} Mbit/s {b} BDP: {s:.2f}"))
    return Score.cells(sum(o for o, _ in res), len(res),
                       "below 0.8: " + ("; ".join(t for o, t in res if not o) or "none"))


@SCORERS("BC-14")
def _bc14(d: Data) -> Score:
    r = _rate80(d)
    c = _cell(d.sim["main"], "mix-2+2", rate=r, bdp=1.75)
    per = _vals(c, "period_s")
    if r is None or not per:
        return Score.too_few("2+2 at 80 Mbit/s and 1.75 BDP with a long enough run did not "
                             "run at this scale")
    k = d.kernel["main"] if d.kernel else None
    kp = _vals(_cell(k, "mix-2+2", bdp=1.75), "period_s") if k is not None else []
    return Score.test(all(18 <= p <= 22 for p in per),
                      "dominant period " + ", ".join(f"{p:.1f} s" for p in per) + " per trial",
                      kernel=("dominant period " + ", ".join(f"{p:.1f} s" for p in kp)) if kp else "",
                      partly=any(18 <= p <= 22 for p in per))


@SCORERS("BC-15")
def _bc15(d: Data) -> Score:
    r = _rate80(d)
    c = _cell(d.sim["main"], "mix-2+2", rate=r, bdp=1.75)
    alt, ratio = _vals(c, "probe_alt"), _vals(c, "probe_drop_ratio")
    if r is None or not alt:
        return Score.too_few("2+2 at 80 Mbit/s and 1.75 BDP did not run at this scale")
    a = sum(alt) / len(alt)
    rr = sum(ratio) / len(ratio) if ratio else float("nan")
    k = _cell(d.kernel["main"] if d.kernel else None, "mix-2+2", bdp=1.75)
    kt = (f"alternate in {_avg(k, 'probe_alt') * 100:.0f} % of {int(sum(k['probe_n'].to_list()))} "
          f"pairs; estimates {_probe_range(k)}" if k.height and _vals(k, "probe_alt") else "")
    return Score.test(a >= 0.5 and finite(rr) and rr > 1,
                      f"consecutive ProbeRTT estimates alternate in {a * 100:.0f} % of "
                      f"{int(sum(c['probe_n'].to_list()))} pairs; estimates {_probe_range(c)}; "
                      f"drops after an inflated estimate / after a low one {rr:.2f}",
                      kernel=kt, partly=a >= 0.5)


def _probe_range(c: pl.DataFrame) -> str:
    lo, hi = _vals(c, "probe_min_ms"), _vals(c, "probe_max_ms")
    return f"{min(lo):.1f}-{max(hi):.1f} ms" if lo and hi else "–"


@SCORERS("BC-16")
def _bc16(d: Data) -> Score:
    ok, txt, order = [], [], []
    m = d.sim["main"]
    for r in _rates(d):
        c = _cell(m, "mix-2+2", rate=r)
        if not c.height:
            continue
        lo = c.filter(pl.col("bdp") <= 1.25)
        mid = c.filter((pl.col("bdp") >= 1.5) & (pl.col("bdp") <= 4))
        sh = c.filter(pl.col("bdp") <= 0.75)
        deep = c.filter(pl.col("bdp") >= 1.5)
        il, im = _avg(lo, "bbr_iqr"), _avg(mid, "bbr_iqr")
        fs, fd = _avg(sh, "loss_frac"), _avg(deep, "loss_frac")
        if not finite(il, im, fs, fd):
            continue
        ok.append(im >= 2 * il and fd < 0.5 and fs >= 0.9)
        order.append(im > il and fd < fs)
        txt.append(f"{r:g} Mbit/s: IQR {il:.3f} → {im:.3f}; drops in {fs * 100:.0f} % → "
                   f"{fd * 100:.0f} % of intervals")
    if not ok:
        return Score.too_few("2+2 did not run on both sides of 1.5 BDP at this scale")
    return Score.test(all(ok), "; ".join(txt), partly=all(order))


@SCORERS("BC-17")
def _bc17(d: Data) -> Score:
    """BBR's share falls from 1.5 to 8 BDP with at most one inversion, and that one inside the
    trial-to-trial noise: a rise larger than twice the standard error of the difference of the
    two buffers' means is an inversion beyond the noise (one trial per buffer cannot tell)."""
    ok, txt, unjudged = [], [], False
    for r in _rates(d):
        m = d.sim["main"].filter((pl.col("variant") == "mix-2+2") & (pl.col("rate_mbps") == r)
                                 & (pl.col("bdp") >= 1.5))
        g = m.group_by("bdp").agg(pl.col("share").mean().alias("m"), pl.col("share").std().alias("sd"),
                                  pl.len().alias("n")).sort("bdp")
        if g.height < 3:
            continue
        pts = g.rows(named=True)
        rises, big = 0, 0
        for a, b in zip(pts, pts[1:]):
            if b["m"] <= a["m"]:
                continue
            rises += 1
            if min(a["n"], b["n"]) < 2:
                unjudged = True
            elif b["m"] - a["m"] > 2 * math.sqrt(a["sd"] ** 2 / a["n"] + b["sd"] ** 2 / b["n"]):
                big += 1
        ok.append(pts[-1]["m"] < pts[0]["m"] and rises <= 1 and big == 0)
        txt.append(f"{r:g} Mbit/s: " + " → ".join(f"{p['m']:.2f}" for p in pts)
                   + f" ({rises} rise{'' if rises == 1 else 's'}, {big} beyond the trials' noise)")
    if not ok:
        return Score.too_few("2+2 ran at fewer than three buffers ≥ 1.5 BDP")
    if unjudged and all(ok):
        return Score.too_few("one trial per buffer: a rise cannot be told from the noise")
    kt = ""
    if d.kernel and d.kernel.get("main") is not None:
        kp = [(b, x) for b, x in _share_curve(d.kernel["main"], "mix-2+2") if b >= 1.5]
        if kp:
            kr = sum(b > a for (_, a), (_, b) in zip(kp, kp[1:]))
            kt = ("2+2 at 80 Mbit/s, BBR share over " + ", ".join(f"{b:g}" for b, _ in kp)
                  + " BDP: " + " → ".join(f"{x:.2f}" for _, x in kp)
                  + f" ({kr} rise{'' if kr == 1 else 's'}, one run per buffer; today's BBR)")
    return Score.test(all(ok), "BBR share over " + ", ".join(
        f"{p['bdp']:g}" for p in pts) + " BDP: " + "; ".join(txt), kernel=kt)


def _crossing_claim(d: Data, variant: str, lo_b: float, hi_b: float, paper: float) -> tuple[bool, str, float | None]:
    r = _rate80(d)
    m = d.sim["main"]
    s_lo = _avg(_cell(m, variant, rate=r, bdp=lo_b), "share")
    s_hi = _avg(_cell(m, variant, rate=r, bdp=hi_b), "share")
    cross = crossing(_share_curve(m, variant, r)) if r is not None else None
    ok = finite(s_lo, s_hi) and s_lo > 0.5 > s_hi
    return ok, (f"share {s_lo:.3f} at {lo_b:g} BDP, {s_hi:.3f} at {hi_b:g} BDP; crossing "
                + (f"{cross:.2f} BDP" if cross else "none") + f" (paper ≈{paper:g})"), cross


@SCORERS("BC-18")
def _bc18(d: Data) -> Score:
    if _rate80(d) is None or not _cell(d.sim["main"], "mix-2+2", rate=80.0, bdp=4).height:
        return Score.too_few("2+2 at 80 Mbit/s and 4 BDP did not run at this scale")
    ok, txt, _ = _crossing_claim(d, "mix-2+2", 4, 8, d.pub["BC-18"]["crossing_bdp"])
    k = d.kernel["main"] if d.kernel else None
    kt = ""
    if k is not None and k.height:
        kc = crossing(_share_curve(k, "mix-2+2"))
        kt = "crossing " + (f"{kc:.2f} BDP" if kc else "none") + f" ({k['rate_mbps'][0]:g} Mbit/s)"
    return Score.test(ok, txt, kernel=kt)


@SCORERS("BC-19")
def _bc19(d: Data) -> Score:
    res = []
    for b in (0.25, 0.5, 0.75, 1.25):
        if not _cell(d.sim["main"], "shallow-4", bdp=b).height:
            continue
        if _avg(_cell(d.sim["main"], "bbr-4", bdp=b), "loss_pct") < 0.1:
            continue  # BBR does not lose here: nothing to cut
        diff, hw = _diff90(d.sim["main"], "shallow-4", "bbr-4", "loss_pct", bdp=b)
        if not finite(hw):
            return Score.too_few(f"one trial per buffer: no interval of the loss difference at {b} BDP")
        res.append((diff + hw < 0, f"{b} BDP: {diff:+.2f} ± {hw:.2f}"))
    if not res:
        return Score.too_few("BBR_Shallow and BBR did not run below 1.5 BDP at this scale")
    n = sum(o for o, _ in res)
    txt = "BBR_Shallow − BBR loss, points (90 % interval, rates pooled): " + "; ".join(t for _, t in res)
    return Score(REPRODUCED if n == len(res) else PARTLY if n else NOT, txt)


@SCORERS("BC-20")
def _bc20(d: Data) -> Score:
    if _rate80(d) is None or not _cell(d.sim["main"], "shallow-2+2", rate=80.0, bdp=2).height:
        return Score.too_few("BBR_Shallow 2+2 at 80 Mbit/s and 2 BDP did not run at this scale")
    ok, txt, cs = _crossing_claim(d, "shallow-2+2", 2, 4, d.pub["BC-20"]["crossing_bdp"])
    cb = crossing(_share_curve(d.sim["main"], "mix-2+2", 80.0))
    below = cs is not None and cb is not None and cs < cb
    return Score.test(ok and below, txt + (f"; BBR's {cb:.2f} BDP" if cb else ""), partly=below)
