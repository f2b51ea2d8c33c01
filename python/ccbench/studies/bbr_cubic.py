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

from .claims import Data, finite, welch
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


def diff90(df: pl.DataFrame, a: str, b: str, col: str, *, bdp) -> tuple[float, float]:
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


def share_curve(df, variant, rate=None):
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
                c = crossing(share_curve(df, v, rate))
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

    from ..plots.style import log_axis
    rates = sorted(set(df["rate_mbps"].to_list()))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for v, ls in (("mix-1+1", ":"), ("mix-2+2", "-"), ("mix-4+4", "--"), ("shallow-2+2", "-.")):
        for rate in rates:
            pts = share_curve(df, v, rate)
            if pts:
                axes[0].plot([p[0] for p in pts], [p[1] for p in pts], ls, marker="o",
                             label=f"{v} {rate:g} Mbit/s")
    axes[0].axhline(0.5, color="grey", lw=0.8)
    axes[0].set(xlabel="buffer (BDP)", ylabel="BBR share", title="BBR share vs buffer")
    for v in ("bbr-4", "shallow-4", "mix-2+2"):
        g = df.filter(pl.col("variant") == v).group_by("bdp").agg(pl.col("loss_pct").mean()).sort("bdp")
        if g.height:
            axes[1].plot(g["bdp"], g["loss_pct"], marker="o", label=v)
    axes[1].set(xlabel="buffer (BDP)", ylabel="loss %", title="bottleneck loss")
    for v in ("bbr-4", "shallow-4", "cubic-4"):
        g = df.filter(pl.col("variant") == v).group_by("bdp").agg(pl.col("queue_bdp").mean()).sort("bdp")
        if g.height:
            axes[2].plot(g["bdp"], g["queue_bdp"], marker="o", label=v)
    axes[2].set(xlabel="buffer (BDP)", ylabel="mean backlog (BDP)", title="standing queue")
    log_axis(axes[2], "y")
    for a in axes:
        log_axis(a, "x", df["bdp"].to_list())
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
