"""CDG and HLDG (R. Al-Saadi, *A Hybrid Loss-Delay Gradient Congestion Control Algorithm for
the Internet*, PhD thesis, Swinburne University of Technology, 2019): the E-series
characterisation of CDG (single flow over a rate x RTT grid; CDG first against CUBIC over BDP
multiples and a 340-ms buffer; slow start), the H-series improvements HLDG brings (the
mechanism ladder, the standing queue, the share against CUBIC, lossy links), and the F-series
multi-flow, AQM and scavenger runs, on a FreeBSD-like endpoint (docs/hldg.md).

The thesis prints its results in tables (4.3, 4.4, 5.1-5.5, 6.1-6.5) and in figures with the
levels quoted in its text; examples/studies/cdg-hldg/published.yaml holds those numbers and
claims.yaml the thesis's claims (CH-1 ... CH-41), each scored below by one function of
``SCORERS`` on the per-run tables of ``measure``. Misses and their measured explanations:
known-differences.yaml.
"""
from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import yaml

from . import claims as cl
from .claims import Data, Score, Scorers, default_band, finite, pm
from .common import (STUDIES_DIR, Ctx, Output, Table, cc_of, experiment, fig_path, jain,
                     kernel_schemes, patch, queue_window, window_flow_tput)

NAME = "cdg-hldg"
TITLE = "CDG and HLDG: delay-gradient congestion control"
CAMPAIGNS = {"e1": "e1-single-cdg.yaml", "e4": "e4-vs-cubic.yaml",
             "e3": "e3-h12-340ms.yaml", "e5": "e5-slow-start.yaml", "h15": "h15-lossy.yaml",
             "f": "f-multiflow-aqm.yaml", "f2": "f2-rtt.yaml", "f4": "f4-scavenger.yaml",
             "e2": "e2-vegas-cubic.yaml", "e0": "e0-game.yaml", "ladder": "h-ladder.yaml",
             "h5": "h5-ladder.yaml", "h8": "h8-grid.yaml", "h10": "h10-modes.yaml",
             "h6": "h6-route-change.yaml", "h9": "h9-fixed-g.yaml",
             "h4": "h4-standing-queue.yaml", "h2": "h2-estimates.yaml"}
INTRO = ("R. Al-Saadi, *A Hybrid Loss-Delay Gradient Congestion Control Algorithm for the "
         "Internet*, PhD thesis, Swinburne University of Technology, 2019 (Ch. 2 and 4-7). CDG "
         "is FreeBSD's `cc_cdg`; HLDG is ccbench's implementation from the thesis text "
         "(docs/hldg.md). The thesis prints Tables 4.3, 4.4, 5.1-5.5 and 6.1-6.5 and quotes "
         "the levels of its figures in the text; each claim below is scored against those "
         "numbers (`published.yaml`).")
Q_TH_MS = 100.0  # HLDG's queuing-delay threshold of the mode detection (q_th_ms)
LOSS_MODE_CONSEC = 5  # CDG's loss_compete_consec_cong: beyond it CDG ignores the delay signal
Q_FULL = 4            # CDG's inferred queue state FULL (crates/sim/src/cc/cdg.rs)
KIB = 1500 / 1024     # one 1500-byte packet in KiB


def published() -> dict:
    return yaml.safe_load((STUDIES_DIR / NAME / "published.yaml").read_text())


def reduce(key: str, doc: dict, scale: str) -> dict:
    """medium: one seed per point, E4 without the 6-BDP buffer. reduced (CI): a few points,
    shorter single-flow runs."""
    A = ("sweep", "axes")
    if key in ("e2", "e0", "h10", "h6", "h5") or (key in ("h9", "h4", "h2") and scale == "medium"):
        return patch(doc, {"sweep.repeats": 1})
    if scale == "medium":
        d = patch(doc, {"sweep.repeats": 1})
        return patch(d, {A + ("bdp",): [1, 2, 4, 8]}) if key == "e4" else d
    d = patch(doc, {"sweep.repeats": 1})
    if key == "e3":
        return patch(d, {A + ("rate",): [12], A + ("rtt",): [40, 240]})
    if key == "e5":
        return patch(d, {A + ("rate",): [1.5, 50], A + ("rtt",): [10, 340]})
    if key == "h15":
        return patch(d, {"duration": 30, A + ("rate",): [1.5, 25], A + ("rtt",): [10, 240]})
    if key == "ladder":
        return patch(d, {"duration": 150})
    if key == "h9":
        return patch(d, {A + ("G",): {"path": "flows[0].scheme.G", "values": [3, 1536]},
                         A + ("rtt",): [10, 40], A + ("bdp",): [4]})
    if key == "h2":
        return patch(d, {"duration": 60, A + ("rtt",): [2, 40]})
    if key == "h4":
        return patch(d, {"duration": 40, A + ("rate",): [10], A + ("rtt",): [2, 40]})
    if key == "h8":
        return patch(d, {A + ("rate",): [4, 25], A + ("rtt",): [0, 240]})
    if key == "e1":
        return patch(d, {"duration": 60, A + ("rate",): [10, 20], A + ("rtt",): [2, 10, 100, 200]})
    if key == "e4":
        return patch(d, {A + ("rate",): [12], A + ("rtt",): [40], A + ("bdp",): [1, 2, 8]})
    if key == "f":
        v = doc["sweep"]["variants"]
        return patch(d, {"sweep.variants": {k: v[k] for k in ("fifo", "pie")},
                         A + ("cc",): {"path": "flows[*].scheme", "values": ["hldg", "cdg"]},
                         A + ("rtt",): [10]})
    if key == "f2":
        return patch(d, {A + ("rtt",): [10]})
    return patch(d, {"duration": 120, A + ("rtt",): [40]})


def kernel(key: str, doc: dict, scale: str) -> dict | None:
    """The kernel subset (medium and full): HLDG exists in no kernel; CDG runs as the shipped
    BPF program (``{bpf: cdg}``, Linux's tcp_cdg semantics, not FreeBSD's cc_cdg: no loss
    tolerance, no FreeBSD slow-start patch) at the cells of the CDG claims that miss (CH-2
    single flow, CH-9/CH-10 against CUBIC, CH-39 drops under PIE), with the F-series CUBIC
    control; one run per point (real time)."""
    if scale == "reduced":
        return None
    cdg = kernel_schemes(["cdg"])
    A = ("sweep", "axes")
    one = {"sweep.repeats": 1}
    if key == "f":
        v = doc["sweep"]["variants"]
        return patch(doc, {**one, "sweep.variants": {k: v[k] for k in ("fifo", "pie")},
                           A + ("cc",): {"path": "flows[*].scheme", "values": ["cubic"] + cdg},
                           A + ("rtt",): [10, 40]})
    if not cdg:
        return None
    if key == "e1":
        return patch(doc, {**one, A + ("cc",): {"path": "flows[0].scheme", "values": cdg},
                           A + ("rate",): [10, 25], A + ("rtt",): [10, 200, 300]})
    if key == "e4":
        return patch(doc, {**one, A + ("cc",): {"path": "flows[0].scheme", "values": cdg},
                           A + ("rate",): [12], A + ("rtt",): [40, 240], A + ("bdp",): [1, 8]})
    if key == "e3":
        cub = doc["sweep"]["variants"]["cdg"]["flows"][1]
        return patch(doc, {**one, "sweep.variants": {"cdg": {"flows": [
            {"scheme": cdg[0], "start": 0}, cub]}},
            A + ("rate",): [4, 12], A + ("rtt",): [40, 240]})
    return None


def _bl(exp: dict) -> int:
    return next(l["id"] for l in exp["links"] if l["name"] == "r1->r2")


def _runs(ctx: Ctx, key: str, kernel: bool = False):
    idx = (ctx.kernel_index if kernel else ctx.index).get(key)
    if idx is None or not idx.height:
        return
    cols = [c for c in ("variant", "cc", "rate", "rtt", "bdp", "loss", "G", "repeat") if c in idx.columns]
    g = idx.group_by("run_key").agg([pl.first(c) for c in cols])
    for r in g.sort([c for c in cols if g[c].dtype != pl.Object] + ["run_key"]).iter_rows(named=True):
        if "cc" in r:
            r["cc"] = cc_of(r["cc"])
        yield r, ctx.run_dir(key, r["run_key"], kernel)


def _df(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(rows) if rows else pl.DataFrame()


def _flow_drop_pct(d: Path, t0: float, t1: float) -> dict[int, float]:
    """Per-flow drop ratio (% of the packets the flow sent) over [t0, t1), from intervals."""
    iv = pl.read_parquet(d / "intervals.parquet", columns=["bin", "flow", "sent_pkts", "dropped_pkts"])
    w = experiment(d)["sample_interval_ns"] / 1e9
    s = iv.filter((pl.col("bin") >= round(t0 / w)) & (pl.col("bin") < round(t1 / w))) \
        .group_by("flow").agg(pl.col("sent_pkts").sum(), pl.col("dropped_pkts").sum())
    return {r["flow"]: 100.0 * r["dropped_pkts"] / r["sent_pkts"] if r["sent_pkts"] else float("nan")
            for r in s.iter_rows(named=True)}


def _qdelay(d: Path, exp: dict, t0: float, t1: float) -> pl.Series:
    """The bottleneck's queueing delay samples (ms) over [t0, t1)."""
    rate = exp["links"][_bl(exp)]["rate_bps"]
    q = pl.read_parquet(d / "queues.parquet", columns=["time_ns", "link", "bytes"]).filter(
        (pl.col("link") == _bl(exp)) & (pl.col("time_ns") >= int(t0 * 1e9))
        & (pl.col("time_ns") < int(t1 * 1e9)))
    return q["bytes"].cast(pl.Float64) * 8 / rate * 1e3


# ---------------------------------------------------------------------------- per-run tables

def e1_table(ctx: Ctx, kernel: bool = False) -> pl.DataFrame:
    dur = ctx.duration("e1")
    t0, t1 = 0.3 * dur, 0.967 * dur
    rows = []
    for r, d in _runs(ctx, "e1", kernel):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        tp = sum(window_flow_tput(d, t0, t1).values())
        q = queue_window(d, _bl(exp), t0, t1)
        rows.append({**{k: r[k] for k in ("cc", "rate", "rtt", "repeat")},
                     "util": tp * 1e6 / rate, "qdelay_ms": q["backlog_bytes"] * 8 / rate * 1e3})
    return _df(rows)


def backoff_stats(d: Path) -> dict:
    """The delay back-offs of one flow alone (CH-4/5/6, CH-13/14/19): from the first finite
    ssthresh (slow start excluded) to the end, counted per 300 s (the thesis's run length):
    back-offs (the scheme's `delay_backoffs` counter), those taken with cwnd below the BDP in
    the sample before, double back-offs (two in successive 100-ms samples, or two in one),
    cwnd after a back-off (KiB, median), the lowest 1-s throughput in the 5 s after it and
    the time until cwnd regains its value from before (medians); utilisation, mean and p99
    queueing delay over 30 s to the end; over the first 60 s (the thesis's 60-s runs): mean
    queueing delay, throughput, RTT spikes (episodes of queueing delay >= 15 ms) and the
    highest queueing delay."""
    exp = experiment(d)
    rate = exp["links"][_bl(exp)]["rate_bps"]
    bdp = rate * exp["flows"][0]["base_rtt_ns"] / 1e9 / 8 / 1500
    end = exp["duration_ns"] / 1e9
    f = (pl.read_parquet(d / "flows.parquet", columns=["time_ns", "flow", "cwnd", "ssthresh", "cc_delay_backoffs"])
         .filter(pl.col("flow") == 0).sort("time_ns")
         .with_columns((pl.col("time_ns") / 1e9).alias("t"), pl.col("cc_delay_backoffs").diff().fill_null(0).alias("db"),
                       pl.col("cwnd").shift(1).alias("prev_cwnd")))
    fin = f.filter(pl.col("ssthresh").is_not_null())
    t_ss = float(fin["t"][0]) if fin.height else end
    a = f.filter(pl.col("t") > t_ss)
    scale = (300.0 - t_ss) / max(end - t_ss, 1e-9)
    db = a["db"].to_list()
    n = float(sum(db))
    below = float(a.filter((pl.col("db") > 0) & (pl.col("prev_cwnd") < bdp))["db"].sum())
    double = sum(max(0, x - 1) for x in db) + sum(1 for p, x in zip(db, db[1:]) if p > 0 and x > 0)
    w = exp["sample_interval_ns"] / 1e9
    iv = pl.read_parquet(d / "intervals.parquet", columns=["bin", "flow", "delivered_bytes"]) \
        .filter(pl.col("flow") == 0).sort("bin")
    k = max(1, round(1.0 / w))
    sec = iv.with_columns((pl.col("delivered_bytes").rolling_sum(k) * 8 / 1e6).alias("mbps"),
                          (pl.col("bin") * w).alias("t"))
    post, dips, recs = [], [], []
    times, cw = a["t"].to_list(), a["cwnd"].to_list()
    for i, x in enumerate(db):
        if x <= 0:
            continue
        tb, pre = times[i], (cw[i - 1] if i else cw[i])
        post.append(cw[i] * KIB)
        s = sec.filter((pl.col("t") >= tb + 1.0) & (pl.col("t") < tb + 5.0))["mbps"]
        if s.len():
            dips.append(float(s.min()))
        back = next((times[j] - tb for j in range(i + 1, len(cw)) if cw[j] >= pre), None)
        if back is not None:
            recs.append(back)
    med = lambda xs: float(pl.Series(xs, dtype=pl.Float64).median()) if xs else float("nan")  # noqa: E731
    q30 = _qdelay(d, exp, 30.0, end)
    q60 = _qdelay(d, exp, 0.0, min(60.0, end))
    hi = (q60 >= 15.0).cast(pl.Int8).to_list()
    spikes = sum(1 for p, x in zip([0] + hi, hi) if x and not p)
    return {"backoffs": n * scale, "below_bdp": below * scale, "double": double * scale,
            "post_cwnd_kib": med(post), "dip_mbps": med(dips), "recover_s": med(recs),
            "bdp_kib": bdp * KIB,
            "util": sum(window_flow_tput(d, 30.0, end).values()) * 1e6 / rate,
            "qdelay_ms": float(q30.mean()), "q99_ms": float(q30.quantile(0.99)),
            "q60_ms": float(q60.mean()), "tput60": window_flow_tput(d, 0.0, min(60.0, end))[0],
            "spikes60": float(spikes), "spike_max_ms": float(q60.max())}


def backoff_table(ctx: Ctx) -> pl.DataFrame:
    """`backoff_stats` of CDG alone at 10 Mbit/s / 100 ms (`cdg`, CH-5/6) and 20 Mbit/s /
    100 ms (`cdg20`, CH-4) from E1, and of each rung of the H1/H3/H7 ladder."""
    rows = []
    for r, d in _runs(ctx, "e1"):
        if r["cc"] == "cdg" and r["rtt"] == 100 and r["rate"] in (10, 20):
            rows.append({"name": "cdg" if r["rate"] == 10 else "cdg20", "repeat": r["repeat"],
                         **backoff_stats(d)})
    for r, d in _runs(ctx, "ladder"):
        rows.append({"name": r["variant"], "repeat": r["repeat"], **backoff_stats(d)})
    return _df(rows)


def share_table(ctx: Ctx, key: str, kernel: bool = False) -> pl.DataFrame:
    """Share of flow 0 (the gradient or scavenger flow) from 10 s after the CUBIC flow's start
    to its stop; each flow's drop ratio there; for CDG, the time in its loss mode (more than
    `loss_compete_consec_cong` consecutive delay-congestion cycles: back-offs suspended) over
    the competition, and at its loss events (entries into recovery) how often the queue was
    inferred FULL with a shadow window above half of cwnd (the shadow window in use)."""
    rows = []
    for r, d in _runs(ctx, key, kernel):
        exp = experiment(d)
        cub = exp["flows"][1]
        c0 = cub["start_ns"] / 1e9
        t0 = c0 + 10
        t1 = (cub["stop_ns"] or exp["duration_ns"]) / 1e9
        tp = window_flow_tput(d, t0, t1)
        dr = _flow_drop_pct(d, t0, t1)
        row = {**{k: r[k] for k in r if k != "run_key"},
               "share": tp[0] / (tp[0] + tp[1]) if tp[0] + tp[1] > 0 else float("nan"),
               "drop0_pct": dr.get(0, float("nan")), "drop1_pct": dr.get(1, float("nan")),
               "lossmode_frac": float("nan"), "shadow_frac": float("nan"), "losses": 0.0}
        name = r.get("cc") or r.get("variant")
        if name == "cdg" and not kernel:
            f = (pl.read_parquet(d / "flows.parquet", columns=["time_ns", "flow", "cwnd", "ca_state", "cc_consec_cong",
                                                              "cc_queue_state", "cc_shadow_w"])
                 .filter(pl.col("flow") == 0).sort("time_ns")
                 .with_columns((pl.col("time_ns") / 1e9).alias("t")))
            comp = f.filter((pl.col("t") >= c0) & (pl.col("t") < t1))
            row["lossmode_frac"] = float((comp["cc_consec_cong"] > LOSS_MODE_CONSEC).mean())
            st, qs, sh, cw = (comp[c].to_list() for c in ("ca_state", "cc_queue_state", "cc_shadow_w", "cwnd"))
            rec = ("recovery", "loss", 3, 4)
            ev = [i for i in range(1, len(st)) if st[i] in rec and st[i - 1] not in rec]
            used = [i for i in ev if qs[i - 1] == Q_FULL and sh[i - 1] > cw[i - 1] / 2]
            row["losses"] = float(len(ev))
            row["shadow_frac"] = len(used) / len(ev) if ev else float("nan")
        rows.append(row)
    return _df(rows)


def ss_table(ctx: Ctx) -> pl.DataFrame:
    """E5/H13/H14: ssthresh at the first slow-start exit (the first finite ssthresh) over the
    path's BDP in 1500-byte packets."""
    rows = []
    for r, d in _runs(ctx, "e5"):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        bdp = rate * exp["flows"][0]["base_rtt_ns"] / 1e9 / 8 / 1500
        f = pl.read_parquet(d / "flows.parquet", columns=["time_ns", "flow", "ssthresh"])
        f = f.filter((pl.col("flow") == 0) & pl.col("ssthresh").is_not_null()).sort("time_ns")
        ss = float(f["ssthresh"][0]) if f.height else float("nan")
        rows.append({"variant": r["variant"], "rate": r["rate"], "rtt": r["rtt"], "bdp_pkts": bdp,
                     "ssthresh": ss, "ratio": ss / bdp})
    return _df(rows)


def lossy_table(ctx: Ctx) -> pl.DataFrame:
    """H15: utilisation of one flow alone on a lossy link over 10 s to the end."""
    rows = []
    for r, d in _runs(ctx, "h15"):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        tp = window_flow_tput(d, 10.0, exp["duration_ns"] / 1e9)
        rows.append({"cc": r["cc"], "rate": r["rate"], "rtt": r["rtt"], "loss": r["loss"],
                     "util": tp.get(0, 0.0) * 1e6 / rate})
    return _df(rows)


def f_table(ctx: Ctx, kernel: bool = False) -> pl.DataFrame:
    """F1/F3: over the window with all five flows active (50-300 s): Jain's index, max-min
    ratio, utilisation, drop ratio and mean queueing delay."""
    rows = []
    for r, d in _runs(ctx, "f", kernel):
        exp = experiment(d)
        starts = [f["start_ns"] / 1e9 for f in exp["flows"]]
        stops = [(f["stop_ns"] or exp["duration_ns"]) / 1e9 for f in exp["flows"]]
        t0, t1 = max(starts) + 10, min(stops)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        tp = window_flow_tput(d, t0, t1)
        q = queue_window(d, _bl(exp), t0, t1)
        v = list(tp.values())
        rows.append({"variant": r["variant"], "cc": r["cc"], "rtt": r["rtt"], "repeat": r["repeat"],
                     "jain": jain(v), "maxmin": min(v) / max(v) if max(v) > 0 else float("nan"),
                     "util": sum(v) * 1e6 / rate,
                     "drop_pct": q["loss_pct"], "qdelay_ms": q["backlog_bytes"] * 8 / rate * 1e3})
    return _df(rows)


def nflows_table(ctx: Ctx) -> pl.DataFrame:
    """CH-7: utilisation of N = 1..5 flows of one CC behind the FIFO of the F series, read
    from the staggered starts (flow k joins at 10k s): N < 5 over the last 5 s before the next
    flow joins, N = 5 over 50-300 s."""
    rows = []
    for r, d in _runs(ctx, "f"):
        if r["variant"] != "fifo":
            continue
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        for n, (a, b) in {1: (5, 10), 2: (15, 20), 3: (25, 30), 4: (35, 40), 5: (50, 300)}.items():
            rows.append({"cc": r["cc"], "rtt": r["rtt"], "repeat": r["repeat"], "n": n,
                         "util": sum(window_flow_tput(d, a, b).values()) * 1e6 / rate})
    return _df(rows)


def f2_table(ctx: Ctx) -> pl.DataFrame:
    """F2: five HLDG flows, the first two on a path 80 ms longer: Jain, max-min, queueing
    delay over 50-300 s, mean throughput of the longer- and of the shorter-RTT flows."""
    rows = []
    for r, d in _runs(ctx, "f2"):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        tp = window_flow_tput(d, 50.0, 300.0)
        v = [tp[k] for k in sorted(tp)]
        q = queue_window(d, _bl(exp), 50.0, 300.0)
        rows.append({"rtt": r["rtt"], "repeat": r["repeat"], "jain": jain(v),
                     "maxmin": min(v) / max(v) if max(v) > 0 else float("nan"),
                     "qdelay_ms": q["backlog_bytes"] * 8 / rate * 1e3,
                     "long_mbps": sum(v[:2]) / 2, "short_mbps": sum(v[2:]) / 3})
    return _df(rows)


def e2_table(ctx: Ctx) -> pl.DataFrame:
    """E2: the first flow alone (2-10 s) and against CUBIC (10 s to the end)."""
    rows = []
    for r, d in _runs(ctx, "e2"):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        t_c, t_end = exp["flows"][1]["start_ns"] / 1e9, exp["duration_ns"] / 1e9
        alone = window_flow_tput(d, 2.0, t_c)
        both = window_flow_tput(d, t_c, t_end)
        rows.append({"cc": r["cc"], "repeat": r["repeat"], "alone_util": alone[0] * 1e6 / rate,
                     "tput": both[0], "cubic_tput": both[1], "share": both[0] / (both[0] + both[1])})
    return _df(rows)


def e0_table(ctx: Ctx) -> pl.DataFrame:
    """E0: the game flow's RTT (its mean one-way delay plus the return link's delay) alone (5 s
    to the bulk flow's start) and with the bulk flow (5 s after its start to the end), the SD
    of its 1-s RTT with the bulk flow, and the bottleneck's drops while the bulk flow runs."""
    rows = []
    for r, d in _runs(ctx, "e0"):
        exp = experiment(d)
        back = next(l["delay_ns"] for l in exp["links"] if l["name"] == "r2->r1") / 1e6
        w = exp["sample_interval_ns"] / 1e9
        t_b, t_end = exp["flows"][1]["start_ns"] / 1e9, exp["duration_ns"] / 1e9
        iv = pl.read_parquet(d / "intervals.parquet", columns=["bin", "flow", "delivered_pkts",
                                                              "delay_sum_ns"]).filter(pl.col("flow") == 0)

        def rtt(t0: float, t1: float) -> float:
            s = iv.filter((pl.col("bin") >= round(t0 / w)) & (pl.col("bin") < round(t1 / w)))
            n = s["delivered_pkts"].sum()
            return s["delay_sum_ns"].sum() / n / 1e6 + back if n else float("nan")
        per_s = [rtt(t, t + 1) for t in range(int(t_b + 5), int(t_end))]
        per_s = [x for x in per_s if not math.isnan(x)]
        sd = float(pl.Series(per_s).std()) if len(per_s) > 1 else float("nan")
        tp = window_flow_tput(d, t_b + 5, t_end)
        q = pl.read_parquet(d / "queues.parquet", columns=["time_ns", "link", "drops"]).filter(
            pl.col("link") == _bl(exp))
        drops = float(q["drops"].max() - q.filter(pl.col("time_ns") <= int(t_b * 1e9))["drops"].max())
        rows.append({"bulk": r["variant"], "repeat": r["repeat"], "rtt_alone": rtt(5.0, t_b),
                     "rtt_bulk": rtt(t_b + 5, t_end), "rtt_bulk_sd": sd, "bulk_tput": tp[1],
                     "bulk_drops": drops})
    return _df(rows)


def h8_table(ctx: Ctx) -> pl.DataFrame:
    """H8: one flow alone, utilisation and mean queueing delay over 30 s to the end."""
    rows = []
    for r, d in _runs(ctx, "h8"):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        t1 = exp["duration_ns"] / 1e9
        q = queue_window(d, _bl(exp), 30.0, t1)
        rows.append({"variant": r["variant"], "rate": r["rate"], "rtt": r["rtt"], "repeat": r["repeat"],
                     "util": window_flow_tput(d, 30.0, t1)[0] * 1e6 / rate,
                     "qdelay_ms": q["backlog_bytes"] * 8 / rate * 1e3})
    return _df(rows)


def h5_table(ctx: Ctx) -> pl.DataFrame:
    """The Table 5.1 ladder (10 Mbit/s, 2 ms, 300 s): mean, median and SD of the queueing
    delay samples and utilisation over 20 s to the end."""
    rows = []
    for r, d in _runs(ctx, "h5"):
        exp = experiment(d)
        rate, end = exp["links"][_bl(exp)]["rate_bps"], exp["duration_ns"] / 1e9
        qd = _qdelay(d, exp, 20.0, end)
        rows.append({"variant": r["variant"], "repeat": r["repeat"], "mean_ms": float(qd.mean()),
                     "median_ms": float(qd.median()), "sd_ms": float(qd.std()),
                     "util": window_flow_tput(d, 20.0, end)[0] * 1e6 / rate})
    return _df(rows)


MODE_DELAY, MODE_LOSS, MODE_PROBE = 0, 1, 2  # HLDG's `mode` sample (crates/sim/src/cc/hldg.rs)


def h10_table(ctx: Ctx) -> pl.DataFrame:
    """H10: HLDG's mode, queueing delay and throughput before, during and after the CUBIC flow
    (phases from 5 s after each change; after CUBIC, from 5 s after HLDG's return to DELAY
    mode), the first LOSS entry, the first PROBE and the return to DELAY."""
    rows = []
    for r, d in _runs(ctx, "h10"):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        c0, c1 = exp["flows"][1]["start_ns"] / 1e9, exp["flows"][1]["stop_ns"] / 1e9
        end = exp["duration_ns"] / 1e9
        f = (pl.read_parquet(d / "flows.parquet", columns=["time_ns", "flow", "cc_mode"])
             .filter(pl.col("flow") == 0).sort("time_ns").with_columns(pl.col("time_ns") / 1e9))

        def first(mode: int, after: float) -> float:
            s = f.filter((pl.col("cc_mode") == mode) & (pl.col("time_ns") >= after))
            return float(s["time_ns"][0]) if s.height else float("nan")
        # The return to DELAY once CUBIC has left: the sample after the last one in LOSS or
        # PROBE mode (the thesis: CUBIC's growth soon causes a loss, PROBE sees a low queue).
        post = f.filter(pl.col("time_ns") >= c1)
        busy = post.filter(pl.col("cc_mode") != MODE_DELAY)
        back = c1
        if busy.height:
            later = post.filter(pl.col("time_ns") > busy["time_ns"][-1])
            back = float(later["time_ns"][0]) if later.height else float("nan")
        via_probe = bool((post.filter(pl.col("time_ns") < back)["cc_mode"] == MODE_PROBE).any()) \
            if busy.height else True
        for phase, (t0, t1) in {"alone": (5.0, c0), "with CUBIC": (c0 + 5, c1),
                                "after CUBIC": (back + 5, end)}.items():
            s = f.filter((pl.col("time_ns") >= t0) & (pl.col("time_ns") < t1))
            tp = window_flow_tput(d, t0, t1)
            rows.append({"repeat": r["repeat"], "phase": phase,
                         "delay_frac": float((s["cc_mode"] == MODE_DELAY).mean()),
                         "loss_probe_frac": float((s["cc_mode"] != MODE_DELAY).mean()),
                         "qdelay_ms": queue_window(d, _bl(exp), t0, t1)["backlog_bytes"] * 8 / rate * 1e3,
                         "tput": tp[0], "cubic_tput": tp[1],
                         "share": tp[0] / (tp[0] + tp[1]) if tp[0] + tp[1] > 0 else float("nan"),
                         "util": (tp[0] + tp[1]) * 1e6 / rate,
                         "loss_entry_after_s": first(MODE_LOSS, c0) - c0,
                         "probe_after_loss_s": first(MODE_PROBE, c0) - first(MODE_LOSS, c0),
                         "delay_after_stop_s": back - c1, "back_via_probe": float(via_probe)})
    return _df(rows)


def h6_table(ctx: Ctx) -> pl.DataFrame:
    """H6: utilisation on the old path (2-10 s), after the change (12-30 s) and once the 30-s
    RTT_base window has ended (32 s to the end); HLDG's RTT_ebase at the end."""
    rows = []
    for r, d in _runs(ctx, "h6"):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        end = exp["duration_ns"] / 1e9
        f = (pl.read_parquet(d / "flows.parquet", columns=["time_ns", "flow", "cc_rtt_ebase_ms"])
             .filter(pl.col("flow") == 0).sort("time_ns"))
        u = {k: window_flow_tput(d, a, b)[0] * 1e6 / rate
             for k, (a, b) in {"old": (2.0, 10.0), "changed": (12.0, 30.0), "late": (32.0, end)}.items()}
        e32 = f.filter(pl.col("time_ns") >= 32 * 10**9)["cc_rtt_ebase_ms"]
        rows.append({"variant": r["variant"], "repeat": r["repeat"], **{f"util_{k}": v for k, v in u.items()},
                     "rtt_ebase_end_ms": float(f["cc_rtt_ebase_ms"][-1]),
                     "rtt_ebase_32_ms": float(e32[0]) if e32.len() else float("nan")})
    return _df(rows)


def h9_table(ctx: Ctx) -> pl.DataFrame:
    """H9: HLDG's share against CUBIC (10 s after CUBIC's start to the end) and its queueing
    delay alone (2 s to CUBIC's start)."""
    rows = []
    for r, d in _runs(ctx, "h9"):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        c0 = exp["flows"][1]["start_ns"] / 1e9
        tp = window_flow_tput(d, c0 + 10, exp["duration_ns"] / 1e9)
        rows.append({"G": r["G"], "rtt": r["rtt"], "bdp": r["bdp"], "share": tp[0] / (tp[0] + tp[1]),
                     "qdelay_alone_ms": queue_window(d, _bl(exp), 2.0, c0)["backlog_bytes"] * 8 / rate * 1e3})
    return _df(rows)


def h4_table(ctx: Ctx) -> pl.DataFrame:
    """H4: one flow alone, median and mean queueing delay (queue samples) over 20 s to the end."""
    rows = []
    for r, d in _runs(ctx, "h4"):
        exp = experiment(d)
        rate, bl = exp["links"][_bl(exp)]["rate_bps"], _bl(exp)
        q = pl.read_parquet(d / "queues.parquet", columns=["time_ns", "link", "bytes"]).filter(
            (pl.col("link") == bl) & (pl.col("time_ns") >= 20 * 10**9))
        qd = q["bytes"].cast(pl.Float64) * 8 / rate * 1e3
        rows.append({"variant": r["variant"], "rate": r["rate"], "rtt": r["rtt"],
                     "median_ms": float(qd.median()), "mean_ms": float(qd.mean()),
                     "util": window_flow_tput(d, 20.0, exp["duration_ns"] / 1e9)[0] * 1e6 / rate})
    return _df(rows)


def h2_table(ctx: Ctx) -> pl.DataFrame:
    """H2: the two bandwidth estimates of a Reno flow per flow sample over 30 s to the end,
    over the bottleneck rate: Vegas-like cwnd (1500-byte packets) / minimum RTT, and the ACK
    rate (the delivery-rate sample, payload bytes)."""
    rows = []
    for r, d in _runs(ctx, "h2"):
        exp = experiment(d)
        rate = exp["links"][_bl(exp)]["rate_bps"]
        f = pl.read_parquet(d / "flows.parquet", columns=["time_ns", "flow", "cwnd", "min_rtt_us",
                                                          "delivery_rate_bps"])
        f = f.filter((pl.col("flow") == 0) & (pl.col("time_ns") >= 30 * 10**9) & (pl.col("min_rtt_us") > 0))
        vegas = f["cwnd"].cast(pl.Float64) * 1500 * 8 / (f["min_rtt_us"] / 1e6) / rate
        ack = f["delivery_rate_bps"].cast(pl.Float64) / rate
        for name, est in (("Vegas-like", vegas), ("ACK rate", ack)):
            rows.append({"rtt": r["rtt"], "estimate": name, **{f"p{int(q * 100)}": float(est.quantile(q))
                                                               for q in (0.05, 0.5, 0.95)}})
    return _df(rows)


# ---------------------------------------------------------------------------- claims

def measure(ctx: Ctx) -> Data:
    """The per-run tables every scorer reads (simulator and, where it ran, kernel); built once
    per analysis (``analyse`` builds them for its tables)."""
    if "_cdg_data" in ctx.__dict__:
        return ctx.__dict__["_cdg_data"]
    sim = {"e0": e0_table(ctx), "e1": e1_table(ctx), "bo": backoff_table(ctx),
           "e2": e2_table(ctx), "e3": share_table(ctx, "e3"), "e4": share_table(ctx, "e4"),
           "e5": ss_table(ctx), "h2": h2_table(ctx), "h4": h4_table(ctx), "h5": h5_table(ctx),
           "h6": h6_table(ctx), "h8": h8_table(ctx), "h9": h9_table(ctx), "h10": h10_table(ctx),
           "h15": lossy_table(ctx), "f": f_table(ctx), "n": nflows_table(ctx),
           "f2": f2_table(ctx), "f4": share_table(ctx, "f4")}
    kern = None
    if ctx.kernel_index:
        kern = {"e1": e1_table(ctx, True), "e3": share_table(ctx, "e3", True),
                "e4": share_table(ctx, "e4", True), "f": f_table(ctx, True)}
    ctx.__dict__["_cdg_data"] = Data(sim=sim, kernel=kern, pub=published(), scale=ctx.scale)
    return ctx.__dict__["_cdg_data"]


def select(df: pl.DataFrame, **eq) -> pl.DataFrame:
    if df is None or not df.height:
        return pl.DataFrame()
    f = df
    for k, v in eq.items():
        if k not in f.columns:
            return pl.DataFrame()
        f = f.filter(pl.col(k) == v)
    return f


def values_where(df, col, **eq) -> list[float]:
    f = select(df, **eq)
    return f[col].to_list() if f.height and col in f.columns else []


def mean_where(df, col, **eq) -> float:
    f = select(df, **eq)
    if not f.height or col not in f.columns:
        return float("nan")
    v = f[col].drop_nans().mean()
    return float(v) if v is not None else float("nan")


def axis_values(df, col, **eq) -> list:
    f = select(df, **eq)
    return sorted(set(f[col].to_list())) if f.height and col in f.columns else []


# ---------------------------------------------------------------------------- tables and figures

def _doc_order(ctx: Ctx, key: str, col: str, df: pl.DataFrame) -> list:
    """The values of a variant or axis column in the campaign file's order (not the run index's
    group order, which varies between analyses)."""
    sw = ctx.docs[key]["sweep"]
    if col == "variant":
        order = list(sw.get("variants", {}))
    else:
        ax = sw["axes"][col]
        order = ax["values"] if isinstance(ax, dict) else ax
    have = set(df[col].to_list()) if df.height else set()
    return [v for v in order if v in have]


def analyse(ctx: Ctx) -> Output:
    """The study's tables and figure (the claims are scored from ``measure``)."""
    out = Output()
    s = measure(ctx).sim
    out.tables += _paper_tables(s)
    out.tables += _ladder_and_many_flow_tables(ctx, s)
    out.tables += _scenario_tables(s)
    _figure(ctx, s["e1"], s["e4"], out)
    return out


def _paper_tables(s: dict) -> list[Table]:
    """E1/H5, the back-offs (CH-4/5/6, H1/H3/H7), E4/H11, E3/H12 and E5/H13/H14."""
    tables: list[Table] = []
    e1 = s["e1"]
    rates, rtts = axis_values(e1, "rate"), axis_values(e1, "rtt")
    tables.append(Table(
        "E1/H5: one flow alone, utilisation / mean queueing delay ms (90-290 s)",
        ["RTT ms"] + [f"{cc} {R:g} Mbit/s" for cc in ("cdg", "hldg") for R in rates],
        [[t] + [f"{mean_where(e1, 'util', cc=cc, rate=R, rtt=t):.3f} / {mean_where(e1, 'qdelay_ms', cc=cc, rate=R, rtt=t):.1f}"
                for cc in ("cdg", "hldg") for R in rates] for t in rtts]))
    bo = s["bo"]
    names = {"cdg": "CDG 10 Mbit/s (E1)", "cdg20": "CDG 20 Mbit/s (E1)", "cdg-w4": "CDG, W = 4 (H1)",
             "hldg-m1": "HLDG M1 only, W = 4 (H1)", "hldg-m1m2": "HLDG M1 + M2, W = 4 (H3)",
             "hldg-no-m7": "HLDG without M7 (H7)", "hldg": "HLDG (H7)"}
    cols = ("backoffs", "below_bdp", "double", "post_cwnd_kib", "recover_s", "util", "qdelay_ms", "q99_ms",
            "q60_ms", "tput60", "spikes60")
    tables.append(Table(
        "CH-4/5/6, H1/H3/H7: one flow alone at 100 ms (1000-packet FIFO): delay back-offs per 300 s after "
        "slow start, cwnd after a back-off and the time to regain it (medians), utilisation and queueing "
        "delay over 30 s to the end, and over the first 60 s",
        ["run", "back-offs", "below the BDP", "double", "cwnd after KiB", "recovery s", "utilisation",
         "mean qdelay ms", "p99 qdelay ms", "qdelay 0-60 s ms", "Mbit/s 0-60 s", "spikes ≥ 15 ms 0-60 s"],
        [[names[v]] + [mean_where(bo, c, name=v) for c in cols] for v in names if select(bo, name=v).height]))
    e4 = s["e4"]
    tables.append(Table(
        "E4/H11: share of the delay-gradient flow against CUBIC (20-110 s), per rate / RTT / buffer",
        ["rate Mbit/s", "RTT ms"] + [f"{cc} {b} BDP" for cc in ("cdg", "hldg") for b in axis_values(e4, "bdp")],
        [[R, t] + [mean_where(e4, "share", cc=cc, rate=R, rtt=t, bdp=b) for cc in ("cdg", "hldg") for b in axis_values(e4, "bdp")]
         for R in axis_values(e4, "rate") for t in axis_values(e4, "rtt")]))
    e3 = s["e3"]
    tables.append(Table(
        "E3/H12: share against CUBIC with a 340-ms buffer (20-110 s), CDG (loss-based slow start) / HLDG",
        ["rate Mbit/s"] + [f"{t} ms" for t in axis_values(e3, "rtt")],
        [[R] + [f"{mean_where(e3, 'share', variant='cdg', rate=R, rtt=t):.3f} / {mean_where(e3, 'share', variant='hldg', rate=R, rtt=t):.3f}"
                for t in axis_values(e3, "rtt")] for R in axis_values(e3, "rate")]))
    e5 = s["e5"]
    pts = e5.select(["rate", "rtt", "bdp_pkts"]).unique().sort("bdp_pkts") if e5.height else pl.DataFrame()
    tables.append(Table(
        "E5/H13/H14: ssthresh at the first slow-start exit / BDP (2000-packet FIFO)",
        ["rate Mbit/s", "RTT ms", "BDP pkts", "CDG (E5)", "CDG g_min only (H13)", "HLDG (H14)"],
        [[p["rate"], p["rtt"], round(p["bdp_pkts"], 1)] +
         [mean_where(e5, "ratio", variant=v, rate=p["rate"], rtt=p["rtt"]) for v in ("cdg", "cdg-gmin", "hldg")]
         for p in pts.iter_rows(named=True)]))
    return tables


def _ladder_and_many_flow_tables(ctx: Ctx, s: dict) -> list[Table]:
    """The Table 5.1 ladder, H15 (lossy links), F1/F3, CH-7, F2 and F4."""
    tables: list[Table] = []
    h5 = s["h5"]
    tables.append(Table(
        "Table 5.1 ladder: one flow, 10 Mbit/s, 2 ms, 1000-packet FIFO, queueing delay over 20 s to the end",
        ["variant", "mean ms", "median ms", "SD ms", "utilisation"],
        [[v] + [mean_where(h5, c, variant=v) for c in ("mean_ms", "median_ms", "sd_ms", "util")]
         for v in _doc_order(ctx, "h5", "variant", h5)]))
    h15 = s["h15"]
    tables.append(Table(
        "H15: one flow alone on a lossy link, utilisation over 10 s to the end (1-BDP FIFO)",
        ["loss", "rate Mbit/s", "RTT ms", "HLDG", "CDG", "CUBIC"],
        [[lo, R, t] + [mean_where(h15, "util", cc=cc, loss=lo, rate=R, rtt=t) for cc in ("hldg", "cdg", "cubic")]
         for lo in axis_values(h15, "loss") for R in axis_values(h15, "rate") for t in axis_values(h15, "rtt")]))
    f = s["f"]
    tables.append(Table(
        "F1/F3: five flows of one CC, 12 Mbit/s (window: all five active)",
        ["queue", "CC", "RTT ms", "Jain", "max-min", "utilisation", "drop %", "queueing delay ms"],
        [[v, cc, t] + [mean_where(f, c, variant=v, cc=cc, rtt=t) for c in ("jain", "maxmin", "util", "drop_pct", "qdelay_ms")]
         for v in _doc_order(ctx, "f", "variant", f) for cc in _doc_order(ctx, "f", "cc", f) for t in axis_values(f, "rtt")]))
    n = s["n"]
    tables.append(Table(
        "CH-7: utilisation of N flows of one CC behind the F-series FIFO (staggered starts)",
        ["CC", "RTT ms"] + [f"N = {k}" for k in range(1, 6)],
        [[cc, t] + [mean_where(n, "util", cc=cc, rtt=t, n=k) for k in range(1, 6)]
         for cc in axis_values(n, "cc") for t in axis_values(n, "rtt")]))
    f2 = s["f2"]
    tables.append(Table(
        "F2: five HLDG flows, flows 1-2 on a path 80 ms longer, 12 Mbit/s, 1000-packet FIFO (50-300 s)",
        ["RTT ms", "Jain", "max-min", "queueing delay ms", "longer-RTT flows Mbit/s", "other flows Mbit/s"],
        [[t] + [mean_where(f2, c, rtt=t) for c in ("jain", "maxmin", "qdelay_ms", "long_mbps", "short_mbps")]
         for t in axis_values(f2, "rtt")]))
    f4 = s["f4"]
    tables.append(Table("F4: scavenger share against CUBIC (2-BDP FIFO)", ["scavenger", "RTT ms", "share"],
                        [[v, t, mean_where(f4, "share", variant=v, rtt=t)]
                         for v in _doc_order(ctx, "f4", "variant", f4) for t in axis_values(f4, "rtt")]))
    return tables


def _scenario_tables(s: dict) -> list[Table]:
    """E2, E0, H8, H10, H6, H9, H4 and H2."""
    tables: list[Table] = []
    e2, e0 = s["e2"], s["e0"]
    tables.append(Table(
        "E2: a delay-based flow alone (2-10 s), then against CUBIC from 10 s (10 Mbit/s, 20 ms, 200-packet FIFO)",
        ["first flow", "utilisation alone", "throughput Mbit/s, 10-30 s", "CUBIC Mbit/s", "share"],
        [[cc] + [mean_where(e2, c, cc=cc) for c in ("alone_util", "tput", "cubic_tput", "share")] for cc in axis_values(e2, "cc")]))
    tables.append(Table(
        "E0: RTT of a 60-kbit/s game flow alone and with a bulk flow joining at 30 s (2 Mbit/s, 20 ms, 40-packet FIFO)",
        ["bulk flow", "game RTT alone ms", "game RTT with the bulk flow ms", "SD of its 1-s RTT ms",
         "bulk throughput Mbit/s", "drops"],
        [[b] + [mean_where(e0, c, bulk=b) for c in ("rtt_alone", "rtt_bulk", "rtt_bulk_sd", "bulk_tput", "bulk_drops")]
         for b in ("cubic", "cdg")]))
    h8 = s["h8"]
    r8 = axis_values(h8, "rate")
    tables.append(Table(
        "H8: one flow alone with loss-based slow start, FIFO of max(150 packets, 1 BDP), utilisation / mean "
        "queueing delay ms over 30-90 s", ["RTT ms"] + [f"{v} {R:g} Mbit/s" for v in ("cdg", "hldg") for R in r8],
        [[t] + [f"{mean_where(h8, 'util', variant=v, rate=R, rtt=t):.3f} / {mean_where(h8, 'qdelay_ms', variant=v, rate=R, rtt=t):.1f}"
                for v in ("cdg", "hldg") for R in r8] for t in axis_values(h8, "rtt")]))
    h10 = s["h10"]
    tables.append(Table(
        "H10: mode switching (HLDG alone, CUBIC from 30 to 120 s, 12 Mbit/s, 10 ms, 250-packet FIFO, Q_th = 50 ms, "
        "m = 4), each phase from 5 s after its change", ["phase", "time in DELAY", "time in LOSS or PROBE",
                                                         "queueing delay ms", "HLDG Mbit/s", "CUBIC Mbit/s", "share"],
        [[p] + [mean_where(h10, c, phase=p) for c in ("delay_frac", "loss_probe_frac", "qdelay_ms", "tput", "cubic_tput", "share")]
         for p in ("alone", "with CUBIC", "after CUBIC")]))
    h6 = s["h6"]
    tables.append(Table(
        "H6: route change, RTT 40 → 80 ms at 10 s (one HLDG flow, 10 Mbit/s, 1000-packet FIFO)",
        ["RTT_base", "utilisation 2-10 s", "12-30 s", "32-40 s", "RTT_ebase at 32 s ms", "at the end ms"],
        [[v] + [mean_where(h6, c, variant=v) for c in ("util_old", "util_changed", "util_late", "rtt_ebase_32_ms", "rtt_ebase_end_ms")]
         for v in ("w30", "lifetime")]))
    h9 = s["h9"]
    gs = axis_values(h9, "G")
    tables.append(Table(
        "H9: HLDG with a fixed G (no mode switching) against CUBIC, 12 Mbit/s: share over 20-60 s / queueing "
        "delay alone over 2-10 s (ms)", ["RTT ms", "buffer (BDP)"] + [f"G = {g} ms" for g in gs],
        [[t, b] + [f"{mean_where(h9, 'share', G=g, rtt=t, bdp=b):.3f} / {mean_where(h9, 'qdelay_alone_ms', G=g, rtt=t, bdp=b):.1f}"
                   for g in gs] for t in axis_values(h9, "rtt") for b in axis_values(h9, "bdp")]))
    h4 = s["h4"]
    vs = ("hldg-m1m2-linear", "hldg")
    r4 = axis_values(h4, "rate")
    tables.append(Table(
        "H4: the standing queue on small-BDP paths, one flow alone (1000-packet FIFO), median queueing delay ms "
        "over 20 s to the end (utilisation)",
        ["RTT ms"] + [f"{'M1+M2 linear' if v != 'hldg' else 'HLDG'} {R:g} Mbit/s" for v in vs for R in r4],
        [[t] + [f"{mean_where(h4, 'median_ms', variant=v, rate=R, rtt=t):.1f} ({mean_where(h4, 'util', variant=v, rate=R, rtt=t):.2f})"
                for v in vs for R in r4] for t in axis_values(h4, "rtt")]))
    h2 = s["h2"]
    tables.append(Table(
        "H2: bandwidth estimates of one Reno flow over the bottleneck rate (10 Mbit/s, 2-BDP FIFO), 5th / 50th / "
        "95th percentile of the flow samples over 30 s to the end", ["RTT ms", "Vegas-like cwnd / RTT_base", "ACK rate"],
        [[t] + [" / ".join(f"{mean_where(h2, c, rtt=t, estimate=e):.2f}" for c in ("p5", "p50", "p95"))
                for e in ("Vegas-like", "ACK rate")] for t in axis_values(h2, "rtt")]))
    return tables


def _figure(ctx: Ctx, e1: pl.DataFrame, e4: pl.DataFrame, out: Output) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for cc in ("cdg", "hldg"):
        g = e1.filter(pl.col("cc") == cc).group_by("rtt").agg(pl.col("util").mean()).sort("rtt")
        ax[0].plot(g["rtt"], g["util"], marker="o", label=cc)
        g = e4.filter(pl.col("cc") == cc).group_by("bdp").agg(pl.col("share").mean()).sort("bdp")
        ax[1].plot(g["bdp"], g["share"], marker="o", label=cc)
    ax[0].set(xlabel="RTT (ms)", ylabel="utilisation", title="E1: one flow alone")
    from ..plots.style import log_axis
    log_axis(ax[0], "x", e1["rtt"].to_list())
    ax[1].set(xlabel="buffer (BDP)", ylabel="share against CUBIC", title="E4/H11")
    ax[1].axhline(0.5, color="grey", lw=0.8)
    for a in ax:
        a.grid(alpha=0.3)
        a.legend()
    fig.tight_layout()
    fig.savefig(fig_path(ctx, "cdg-hldg.png"), dpi=90)
    plt.close(fig)
    out.figures.append(("cdg-hldg.png", "Single-flow utilisation against RTT (mean over rates) "
                        "and the share against CUBIC against the buffer (mean over rates and RTTs)"))
