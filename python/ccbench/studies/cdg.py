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


SCORERS = Scorers()


def _sel(df: pl.DataFrame, **eq) -> pl.DataFrame:
    if df is None or not df.height:
        return pl.DataFrame()
    f = df
    for k, v in eq.items():
        if k not in f.columns:
            return pl.DataFrame()
        f = f.filter(pl.col(k) == v)
    return f


def _m(df, col, **eq) -> float:
    f = _sel(df, **eq)
    if not f.height or col not in f.columns:
        return float("nan")
    v = f[col].drop_nans().mean()
    return float(v) if v is not None else float("nan")


def _vals(df, col, **eq) -> list[float]:
    f = _sel(df, **eq)
    return f[col].to_list() if f.height and col in f.columns else []


def _axis(df, col, **eq) -> list:
    f = _sel(df, **eq)
    return sorted(set(f[col].to_list())) if f.height and col in f.columns else []


def _cells(tests: list[tuple[str, bool]], text: str = "", *, kernel: str = "") -> Score:
    """Score.cells over named statements or cells; the failing ones are named."""
    k = sum(ok for _, ok in tests)
    bad = [n for n, ok in tests if not ok]
    t = text + ("; misses: " + ", ".join(bad[:12]) + (" …" if len(bad) > 12 else "") if bad else "")
    return Score.cells(k, len(tests), t.strip("; "), kernel=kernel)


def _downgrade(s: Score, ok: bool, why: str) -> Score:
    """A multi-cell score whose whole-table condition fails is at most partly."""
    if not ok and s.verdict == cl.REPRODUCED:
        s.verdict = cl.PARTLY
    if not ok:
        s.sim += f"; {why}"
    return s


def _le(a: float, b: float, tol: float = 0.05) -> bool:
    """a >= b in the list's sense: a no more than 5 % below b."""
    return finite(a, b) and a >= (1 - tol) * b


def _non_increasing(xs: list[float], tol: float) -> bool:
    return all(finite(a, b) and b <= a + tol for a, b in zip(xs, xs[1:]))


def _f(x: float, fmt: str = ".2f") -> str:
    return "–" if not finite(x) else f"{x:{fmt}}"


@SCORERS("CH-1")
def ch1(d: Data) -> Score:
    e0, p = d.sim["e0"], d.pub["ch1"]
    rc, rd = _m(e0, "rtt_bulk", bulk="cubic"), _m(e0, "rtt_bulk", bulk="cdg")
    sd, drops = _m(e0, "rtt_bulk_sd", bulk="cubic"), _m(e0, "bulk_drops", bulk="cdg")
    full = p["path_rtt_ms"] + p["buffer_ms"]
    ok = (default_band(rc, full) and finite(sd) and sd >= p["oscillation_sd_ms"]
          and finite(rd) and rd <= rc / 3 and drops == 0)
    return Score.test(ok, f"game RTT with CUBIC {pm(_vals(e0, 'rtt_bulk', bulk='cubic'), '.0f', ' ms')} "
                      f"(SD of the 1-s RTT {_f(sd, '.1f')} ms), with CDG "
                      f"{pm(_vals(e0, 'rtt_bulk', bulk='cdg'), '.0f', ' ms')}, drops with CDG {_f(drops, '.0f')}",
                      partly=finite(rc, rd) and rd < rc)


def _e1_text(e1: pl.DataFrame, cc: str = "cdg") -> tuple[dict, str]:
    rates = _axis(e1, "rate", cc=cc)
    u = {(R, t): _m(e1, "util", cc=cc, rate=R, rtt=t) for R in rates for t in _axis(e1, "rtt", cc=cc)}
    return u, ""


@SCORERS("CH-2")
def ch2(d: Data) -> Score:
    p = d.pub["ch2"]

    def judge(e1):
        u, _ = _e1_text(e1)
        if not u:
            return None
        short = [v for (R, t), v in u.items() if t < 20]
        long_ = {k: v for k, v in u.items() if k[1] > 200}
        long20 = {k: v for k, v in long_.items() if k[0] > 20 and k[1] > 250}
        at200 = [v for (R, t), v in u.items() if t >= 200]
        rtts = sorted({t for _, t in u if t >= 10})
        trend = [sum(u[(R, t)] for R in {R for R, _ in u}) / len({R for R, _ in u}) for t in rtts]
        falling = _non_increasing(trend, 0.02) and len(trend) > 1 and trend[-1] < trend[0]
        a = bool(short) and min(short) > p["util_short"]
        b = bool(long_) and max(long_.values()) < p["util_long"]
        c = bool(long20) and max(long20.values()) < p["util_long_fast"]
        txt = (f"RTT < 20 ms: {_f(min(short) if short else float('nan'), '.3f')}-"
               f"{_f(max(short) if short else float('nan'), '.3f')}; RTT ≥ 200 ms: "
               f"{_f(min(at200) if at200 else float('nan'), '.2f')}-{_f(max(at200) if at200 else float('nan'), '.2f')}"
               f" (> 200 ms: {', '.join(f'{R:g} Mbit/s {v:.2f}' for (R, t), v in sorted(long_.items()))}); "
               f"mean over rates by RTT {' → '.join(f'{x:.2f}' for x in trend)}")
        return a, b, c, falling, txt, bool(long_) and bool(long20)
    s = judge(d.sim["e1"])
    if s is None:
        return Score.too_few("no E1 run")
    a, b, c, falling, txt, have = s
    k = judge(d.kernel["e1"]) if d.kernel and "e1" in d.kernel and d.kernel["e1"].height else None
    kt = f"Linux tcp_cdg (BPF): {k[4]}" if k else ""
    if not have:
        return Score(cl.TOO_FEW, f"{txt}; no cell with RTT > 250 ms and B > 20 Mbit/s at this scale", kt)
    return Score.test(a and b and c and falling, txt + f"; > 90 % {'holds' if a else 'fails'}, "
                      f"< 50 % {'holds' if b else 'fails'}, < 40 % {'holds' if c else 'fails'}",
                      kernel=kt, partly=a and falling)


@SCORERS("CH-3")
def ch3(d: Data) -> Score:
    e1 = d.sim["e1"]
    rates = _axis(e1, "rate", cc="cdg")
    if len(rates) < 2:
        return Score.too_few("one rate at this scale")
    tests, parts = [], []
    for t in [t for t in _axis(e1, "rtt", cc="cdg") if t >= 10]:
        us = [_m(e1, "util", cc="cdg", rate=R, rtt=t) for R in rates]
        rng = max(us) - min(us)
        tests.append((f"{t} ms ({rng:.2f})", rng <= d.pub["ch3"]["max_range"]))
        parts.append(f"{t} ms {rng:.2f}")
    k = sum(ok for _, ok in tests)
    return Score.test(k == len(tests), f"rate-to-rate range of CDG's utilisation: {', '.join(parts)}",
                      partly=k >= len(tests) / 2)


def _bo(d: Data, name: str) -> pl.DataFrame:
    return _sel(d.sim["bo"], name=name)


@SCORERS("CH-4")
def ch4(d: Data) -> Score:
    b, p = _bo(d, "cdg20"), d.pub["ch4"]
    if not b.height:
        return Score.too_few("no CDG run at 20 Mbit/s / 100 ms at this scale")
    cw, dip, rec = (_m(b, c) for c in ("post_cwnd_kib", "dip_mbps", "recover_s"))
    bdp = _m(b, "bdp_kib")
    ok = default_band(cw, p["cwnd_kib"]) and default_band(dip, p["tput_mbps"]) and default_band(rec, p["recover_s"])
    return Score.test(ok, f"after a delay back-off: cwnd {_f(cw, '.0f')} KiB (BDP {bdp:.0f} KiB), lowest 1-s "
                      f"throughput {_f(dip, '.1f')} Mbit/s, {_f(rec, '.1f')} s to regain cwnd "
                      f"(medians over the back-offs, {b.height} run(s))",
                      partly=finite(cw) and cw < bdp)


@SCORERS("CH-5")
def ch5(d: Data) -> Score:
    b, p = _bo(d, "cdg"), d.pub["ch5"]
    if not b.height:
        return Score.too_few("no CDG run at 10 Mbit/s / 100 ms at this scale")
    n, below, dbl, u = (_m(b, c) for c in ("backoffs", "below_bdp", "double", "util"))
    frac = below / n if n else float("nan")
    ok = (default_band(n, p["backoffs"]) and default_band(below, p["below_bdp"])
          and default_band(dbl, p["double"]) and default_band(u, p["util"], "share") and frac >= 0.5)
    return Score.test(ok, f"per 300 s after slow start: {pm(_vals(b, 'backoffs'), '.0f')} back-offs, "
                      f"{_f(below, '.0f')} ({_f(100 * frac, '.0f')} %) below the BDP, {_f(dbl, '.0f')} double; "
                      f"utilisation {pm(_vals(b, 'util'), '.3f')}", partly=finite(frac) and frac >= 0.5)


@SCORERS("CH-6")
def ch6(d: Data) -> Score:
    b, p = _bo(d, "cdg"), d.pub["ch6"]
    if not b.height:
        return Score.too_few("no CDG run at 10 Mbit/s / 100 ms at this scale")
    q, tp, sp, mx = (_m(b, c) for c in ("q60_ms", "tput60", "spikes60", "spike_max_ms"))
    ok = default_band(q, p["qdelay_ms"]) and default_band(tp, p["tput_mbps"]) and sp >= 1
    return Score.test(ok, f"first 60 s: mean queueing delay {_f(q)} ms, throughput {_f(tp)} Mbit/s, "
                      f"{_f(sp, '.1f')} spikes ≥ {p['spike_ms']} ms above the base RTT (highest {_f(mx, '.0f')} ms)",
                      partly=sp >= 1)


@SCORERS("CH-7")
def ch7(d: Data) -> Score:
    n = _sel(d.sim["n"], cc="cdg")
    if not n.height:
        return Score.too_few("no FIFO CDG run at this scale")
    tests, parts = [], []
    for t in _axis(n, "rtt"):
        us = [_m(n, "util", rtt=t, n=k) for k in range(1, 6)]
        rising = all(b >= a - 0.02 for a, b in zip(us, us[1:]))
        tests.append((t, rising, us[-1] >= d.pub["ch7"]["util"]))
        parts.append(f"{t} ms {' → '.join(f'{x:.2f}' for x in us)}")
    ok = all(r and top for _, r, top in tests)
    return Score.test(ok, f"utilisation of N = 1…5 CDG flows (12 Mbit/s, FIFO): {'; '.join(parts)}",
                      partly=all(r for _, r, _ in tests))


@SCORERS("CH-8")
def ch8(d: Data) -> Score:
    e2 = d.sim["e2"]
    sh = _m(e2, "share", cc="vegas")
    return Score.test(finite(sh) and sh <= d.pub["ch8"]["share_max"],
                      f"Vegas {_f(_m(e2, 'tput', cc='vegas'))} vs CUBIC {_f(_m(e2, 'cubic_tput', cc='vegas'))} "
                      f"Mbit/s over 10-30 s, share {pm(_vals(e2, 'share', cc='vegas'), '.3f')}",
                      partly=finite(sh) and sh < 0.5)


def _grid(pub: dict, rate, rtt) -> float | None:
    row = pub["values"].get(rate if rate in pub["values"] else float(rate))
    if row is None or rtt not in pub["rtts"]:
        return None
    return row[pub["rtts"].index(rtt)]


def _share_cells(df, pub, scale_pct: bool, **eq) -> list[tuple[str, bool, float, float]]:
    out = []
    for R in _axis(df, "rate", **eq):
        for t in _axis(df, "rtt", **eq):
            v = _grid(pub, R, t)
            if v is None:
                continue
            ours = _m(df, "share", rate=R, rtt=t, **eq)
            v = v / 100 if scale_pct else v
            out.append((f"{R:g}/{t}", default_band(ours, v, "share"), ours, v))
    return out


@SCORERS("CH-9")
def ch9(d: Data) -> Score:
    p = d.pub["table_5_3"]

    def judge(df):
        cells = _share_cells(df, p, True, variant="cdg")
        ranges, ok = [], True
        for R in _axis(df, "rate", variant="cdg"):
            lo, hi = p["text_range_pct"][R if R in p["text_range_pct"] else float(R)]
            xs = [c[2] for c in cells if c[0].startswith(f"{R:g}/")]
            w = p["range_widen_pct"] / 100
            good = bool(xs) and min(xs) >= lo / 100 - w and max(xs) <= hi / 100 + w
            ok &= good
            ranges.append(f"{R:g} Mbit/s {100 * min(xs):.1f}-{100 * max(xs):.1f} % (thesis {lo}-{hi} %)")
        return cells, ok, "; ".join(ranges)
    cells, ok, txt = judge(d.sim["e3"])
    kt = ""
    if d.kernel and "e3" in d.kernel and d.kernel["e3"].height:
        kc, _, ktxt = judge(d.kernel["e3"])
        kt = f"Linux tcp_cdg (BPF): {ktxt}"
    s = _cells([(f"{n} ({100 * o:.1f} vs {100 * v:.1f} %)", g) for n, g, o, v in cells], txt, kernel=kt)
    return _downgrade(s, ok, "a rate's range falls outside the printed one ± 2 points")


@SCORERS("CH-10")
def ch10(d: Data) -> Score:
    p = d.pub["table_4_3"]

    def judge(df):
        cells, big, small = [], [], []
        for R in _axis(df, "rate", cc="cdg"):
            for t in _axis(df, "rtt", cc="cdg"):
                for b in _axis(df, "bdp", cc="cdg"):
                    row = p["values"].get(R if R in p["values"] else float(R), {}).get(t)
                    if row is None or b not in p["bdps"]:
                        continue
                    ours = _m(df, "share", cc="cdg", rate=R, rtt=t, bdp=b)
                    pk = max(2, round(b * R * 1e6 * t / 1000 / 8 / 1500))
                    v = row[p["bdps"].index(b)]
                    cells.append((f"{R:g}/{t}/{b} ({ours:.3f} vs {v:.3f})", default_band(ours, v, "share")))
                    if pk > p["large_pkts"]:
                        big.append(ours)
                    if p["small_pkts"][0] <= pk <= p["small_pkts"][1]:
                        small.append(ours)
        a = all(x <= p["large_max"] for x in big)
        b_ = bool(small) and sum(x >= p["small_min"] for x in small) >= 0.9 * len(small)
        txt = (f"> {p['large_pkts']} packets: max {_f(max(big) if big else float('nan'), '.3f')} ({len(big)} cells); "
               f"{p['small_pkts'][0]}-{p['small_pkts'][1]} packets: {sum(x >= p['small_min'] for x in small)} of "
               f"{len(small)} ≥ {p['small_min']}")
        return cells, a and b_, txt
    cells, ok, txt = judge(d.sim["e4"])
    kt = ""
    if d.kernel and "e4" in d.kernel and d.kernel["e4"].height:
        kc, _, ktxt = judge(d.kernel["e4"])
        kt = f"Linux tcp_cdg (BPF): {sum(g for _, g in kc)} of {len(kc)} cells in the band; {ktxt}"
    return _downgrade(_cells(cells, txt, kernel=kt), ok, "the large/small-buffer thresholds fail")


@SCORERS("CH-11")
def ch11(d: Data) -> Score:
    p = d.pub["ch11"]
    r = _sel(d.sim["e4"], cc="cdg", rate=p["rate"], rtt=p["rtt"], bdp=p["bdp"])
    if not r.height:
        return Score.too_few(f"no CDG run at {p['rate']} Mbit/s / {p['rtt']} ms / {p['bdp']} BDP at this scale")
    lm, sh = _m(r, "lossmode_frac"), _m(r, "shadow_frac")
    e4 = _sel(d.sim["e4"], cc="cdg")
    rt = _axis(e4, "rtt")
    pat = _m(e4, "lossmode_frac", rtt=rt[0]) < _m(e4, "lossmode_frac", rtt=rt[-1]) if len(rt) > 1 else True
    ok = finite(lm, sh) and lm <= p["lossmode_max"] and sh <= p["shadow_max"] and pat
    return Score.test(ok, f"share {_f(_m(r, 'share'), '.3f')}; loss mode {_f(100 * lm, '.1f')} % of the "
                      f"competition; shadow window in use at {_f(100 * sh, '.0f')} % of "
                      f"{_f(_m(r, 'losses'), '.0f')} loss events; loss mode over the grid "
                      + ", ".join(f"{t} ms {100 * _m(e4, 'lossmode_frac', rtt=t):.1f} %" for t in rt),
                      partly=finite(lm) and lm <= p["lossmode_max"])


def _ss_cells(d: Data, variant: str, table: str) -> list[tuple[float, int, float, float]]:
    e5, p = d.sim["e5"], d.pub[table]
    out = []
    for R in _axis(e5, "rate", variant=variant):
        for t in _axis(e5, "rtt", variant=variant):
            v = _grid(p, R, t)
            if v is not None:
                out.append((R, t, _m(e5, "ratio", variant=variant, rate=R, rtt=t), v / 100))
    return out


@SCORERS("CH-12")
def ch12(d: Data) -> Score:
    c = _ss_cells(d, "cdg", "table_4_4")
    if not c:
        return Score.too_few("no E5 run")
    ten = [o for R, t, o, v in c if t == 10]
    far = [o for R, t, o, v in c if t >= 180]
    a, b = all(o > 1 for o in ten), all(o < 0.5 for o in far)
    ext = [(R, t, o, v) for R, t, o, v in c if (R, t) in ((1.5, 10), (50, 340))]
    e = len(ext) == 2 and all(default_band(o, v) for *_, o, v in ext)
    return Score.test(a and b and e, f"ssthresh/BDP at 10 ms {min(ten):.2f}-{max(ten):.2f}; at ≥ 180 ms "
                      f"{min(far):.3f}-{max(far):.3f} ({sum(o >= 0.5 for o in far)} of {len(far)} ≥ 0.5); extremes "
                      + ", ".join(f"{R:g}/{t}: {o:.3f} (thesis {v:.2f})" for R, t, o, v in ext),
                      partly=finite(*ten, *far) and max(far) < min(ten))


def _lad(d: Data, name: str, col: str) -> float:
    return _m(_bo(d, name), col)


@SCORERS("CH-13")
def ch13(d: Data) -> Score:
    p = d.pub["ch13"]
    if not _bo(d, "cdg").height or not _bo(d, "hldg-m1").height:
        return Score.too_few("the CDG or M1 run is missing at this scale")
    g = {v: {c: _lad(d, v, c) for c in ("backoffs", "below_bdp", "double", "util")}
         for v in ("cdg", "hldg-m1", "cdg-w4")}
    order = (g["cdg"]["backoffs"] > g["hldg-m1"]["backoffs"] and g["cdg"]["below_bdp"] > g["hldg-m1"]["below_bdp"]
             and g["hldg-m1"]["util"] > g["cdg"]["util"] > g["cdg-w4"]["util"])
    vals = (default_band(g["hldg-m1"]["backoffs"], p["m1_backoffs"]) and default_band(g["hldg-m1"]["below_bdp"], p["m1_unnecessary"])
            and default_band(g["hldg-m1"]["util"], p["m1_util"], "share")
            and default_band(g["cdg-w4"]["backoffs"], p["w4_backoffs"]) and default_band(g["cdg-w4"]["util"], p["w4_util"], "share"))
    txt = "; ".join(f"{n}: {g[v]['backoffs']:.0f} back-offs, {g[v]['below_bdp']:.0f} below the BDP, "
                    f"{g[v]['double']:.0f} double, utilisation {g[v]['util']:.3f}"
                    for v, n in (("cdg", "CDG"), ("hldg-m1", "HLDG M1"), ("cdg-w4", "CDG W = 4")))
    return Score.test(order and vals, f"per 300 s: {txt}", partly=order)


@SCORERS("CH-14")
def ch14(d: Data) -> Score:
    p = d.pub["ch14"]
    if not _bo(d, "hldg-m1m2").height:
        return Score.too_few("no M1 + M2 run at this scale")
    n, u, un = _lad(d, "hldg-m1m2", "backoffs"), _lad(d, "hldg-m1m2", "util"), _lad(d, "hldg-m1m2", "below_bdp")
    u1 = _lad(d, "hldg-m1", "util")
    ok = (finite(n, un) and un <= 0.01 * n and u >= u1 and default_band(n, p["backoffs"])
          and default_band(u, p["util"], "share"))
    return Score.test(ok, f"M1 + M2, per 300 s: {_f(n, '.0f')} back-offs, {_f(un, '.1f')} below the BDP, "
                      f"utilisation {_f(u, '.3f')} (M1 {_f(u1, '.3f')})", partly=finite(n, un) and un <= 0.01 * n)


@SCORERS("CH-15")
def ch15(d: Data) -> Score:
    h = d.sim["h2"]
    rtts = _axis(h, "rtt")
    ack = {t: _m(h, "p50", rtt=t, estimate="ACK rate") for t in rtts}
    veg = {t: _m(h, "p50", rtt=t, estimate="Vegas-like") for t in rtts}
    ok = bool(rtts) and all(a <= 1.0 for a in ack.values()) and all(v > 1.0 for t, v in veg.items() if t < 40)
    return Score.test(ok, "median over the link rate, ACK rate " + ", ".join(f"{t} ms {a:.2f}" for t, a in ack.items())
                      + "; Vegas-like " + ", ".join(f"{t} ms {v:.2f}" for t, v in veg.items()))


@SCORERS("CH-16")
def ch16(d: Data) -> Score:
    h, p = d.sim["h4"], d.pub["ch16"]
    v = "hldg-m1m2-linear"
    tests, parts = [], []
    for R in _axis(h, "rate", variant=v):
        rtts = _axis(h, "rtt", variant=v)
        sq = [t for t in rtts if _m(h, "median_ms", variant=v, rate=R, rtt=t) >= p["standing_ms"]]
        last = max(sq) if sq else None
        want = p["last_rtt_with_queue"].get(R if R in p["last_rtt_with_queue"] else float(R))
        if want is None:
            continue
        i = rtts.index(want) if want in rtts else None
        ok = last is not None and i is not None and abs(rtts.index(last) - i) <= 1
        tests.append((f"{R:g} Mbit/s", ok))
        parts.append(f"{R:g} Mbit/s up to {last} ms (thesis {want})")
    h5 = d.sim["h5"]
    lin, cdg = _m(h5, "mean_ms", variant="linear"), _m(h5, "mean_ms", variant="cdg")
    rtt0 = p["rtt_ms"]
    if finite(lin, cdg):
        tests.append(("10/2 mean RTT", default_band(lin + rtt0, p["linear_rtt_ms"]) and default_band(cdg + rtt0, p["cdg_rtt_ms"])))
        parts.append(f"10 Mbit/s / 2 ms mean RTT {lin + rtt0:.1f} ms (CDG {cdg + rtt0:.1f} ms)")
    if not tests:
        return Score.too_few("no H4 rate of the thesis at this scale")
    return _cells(tests, "standing queue (median ≥ " f"{p['standing_ms']} ms): " + "; ".join(parts))


@SCORERS("CH-17")
def ch17(d: Data) -> Score:
    h5, rows = d.sim["h5"], d.pub["table_5_1"]["rows"]
    if not h5.height:
        return Score.too_few("no Table 5.1 ladder run")
    tests, means = [], []
    for r in rows:
        m, u = _m(h5, "mean_ms", variant=r["variant"]), _m(h5, "util", variant=r["variant"])
        means.append(m)
        tests.append((f"{r['variant']} {_f(m, '.1f')} vs {r['mean']} ± {r['sd']} ms, util {_f(u, '.3f')}",
                      finite(m) and abs(m - r["mean"]) <= r["sd"] and u >= d.pub["table_5_1"]["util_min"]))
    ladder = means[1:]
    order = all(finite(a, b) and b < a for a, b in zip(ladder, ladder[1:]))
    s = _cells(tests, "HLDG rungs' means " + " → ".join(_f(x, ".1f") for x in ladder) + " ms")
    return _downgrade(s, order, "the ladder's order is not preserved")


@SCORERS("CH-18")
def ch18(d: Data) -> Score:
    h, p = d.sim["h6"], d.pub["ch18"]
    ew, el = _m(h, "rtt_ebase_32_ms", variant="w30"), _m(h, "rtt_ebase_32_ms", variant="lifetime")
    uw, ul = _m(h, "util_late", variant="w30"), _m(h, "util_late", variant="lifetime")
    ok = default_band(ew, p["rtt_new_ms"]) and default_band(el, p["rtt_old_ms"]) and uw > ul
    return Score.test(ok, f"RTT_ebase at 32 s: with the window {_f(ew, '.0f')} ms, lifetime minimum {_f(el, '.0f')} ms; "
                      f"utilisation 32-40 s {_f(uw, '.3f')} vs {_f(ul, '.3f')}", partly=uw > ul)


@SCORERS("CH-19")
def ch19(d: Data) -> Score:
    p = d.pub["ch19"]
    h, c = _bo(d, "hldg"), _bo(d, "cdg")
    if not h.height or not c.height:
        return Score.too_few("the HLDG ladder run or the CDG run at 10 Mbit/s / 100 ms is missing at this scale")
    q, tp = _m(h, "q60_ms"), _m(h, "tput60")
    sh, sc, mh, mc = _m(h, "spikes60"), _m(c, "spikes60"), _m(h, "spike_max_ms"), _m(c, "spike_max_ms")
    ok = default_band(q, p["qdelay_ms"]) and default_band(tp, p["tput_mbps"]) and sh <= sc and mh <= mc
    return Score.test(ok, f"first 60 s: HLDG mean queueing delay {_f(q)} ms, {_f(tp)} Mbit/s, {_f(sh, '.1f')} "
                      f"spikes ≥ 15 ms (highest {_f(mh, '.0f')} ms); CDG {_f(sc, '.1f')} spikes (highest {_f(mc, '.0f')} ms)",
                      partly=sh <= sc and mh <= mc)


def _h8_cells(h8):
    out = []
    for R in _axis(h8, "rate"):
        for t in _axis(h8, "rtt"):
            uh, uc = _m(h8, "util", variant="hldg", rate=R, rtt=t), _m(h8, "util", variant="cdg", rate=R, rtt=t)
            out.append((R, t, uh, uc, _m(h8, "qdelay_ms", variant="hldg", rate=R, rtt=t)))
    return out


@SCORERS("CH-20")
def ch20(d: Data) -> Score:
    p = d.pub["ch20"]
    c = _h8_cells(d.sim["h8"])
    if not c:
        return Score.too_few("no H8 run")
    gains = [(R, t, (uh / uc - 1) * 100) for R, t, uh, uc, _ in c if finite(uh, uc) and uc > 0]
    mean_g = sum(g for *_, g in gains) / len(gains)
    worst = max(c, key=lambda x: x[4])
    far = [g for R, t, g in gains if t >= 180]
    near = [g for R, t, g in gains if t < 180]
    conc = bool(far and near) and sum(far) / len(far) > sum(near) / len(near)
    best = max(gains, key=lambda x: x[2])
    ok = worst[4] <= p["worst_qdelay_ms"] and default_band(mean_g, p["mean_gain_pct"]) and conc
    return Score.test(ok, f"grid-average gain {mean_g:+.0f} % (largest {best[2]:+.0f} % at {best[0]:g} Mbit/s / "
                      f"{best[1]} ms; mean at ≥ 180 ms {sum(far) / max(len(far), 1):+.0f} %, below "
                      f"{sum(near) / max(len(near), 1):+.0f} %); HLDG's worst mean queueing delay "
                      f"{worst[4]:.1f} ms at {worst[0]:g} Mbit/s / {worst[1]} ms", partly=conc and mean_g > 0)


@SCORERS("CH-21")
def ch21(d: Data) -> Score:
    h8, p = d.sim["h8"], d.pub["ch21"]
    u = lambda v, R, t: _m(h8, "util", variant=v, rate=R, rtt=t)  # noqa: E731
    tests = []
    rates, rtts = _axis(h8, "rate"), _axis(h8, "rtt")
    if 1.5 in rates:
        for t in (10, 40):
            if t in rtts:
                tests.append((f"1.5/{t} HLDG {u('hldg', 1.5, t):.2f} ≈ {p['hldg_1_5']}", default_band(u("hldg", 1.5, t), p["hldg_1_5"], "share")))
                tests.append((f"1.5/{t} CDG {u('cdg', 1.5, t):.2f} in {p['cdg_1_5']}", p["cdg_1_5"][0] - 0.05 <= u("cdg", 1.5, t) <= p["cdg_1_5"][1] + 0.05))
    if 4 in rates and 10 in rtts:
        tests.append((f"4/10 HLDG {u('hldg', 4, 10):.2f} vs CDG {u('cdg', 4, 10):.2f}",
                      default_band(u("hldg", 4, 10), p["hldg_4_10"], "share") and default_band(u("cdg", 4, 10), p["cdg_4_10"], "share")))
    for R, key in ((4, "ahead_4_mbps"), (12, "ahead_12_mbps")):
        if R in rates:
            hi = [t for t in rtts if t > (10 if R == 4 else 40)]
            if hi:
                ah = max((u("hldg", R, t) - u("cdg", R, t)) * R for t in hi)
                tests.append((f"{R:g} Mbit/s ahead by up to {ah:.1f} Mbit/s (thesis {p[key]})", default_band(ah, p[key])))
    if 25 in rates:
        diff = [abs(u("hldg", 25, t) - u("cdg", 25, t)) for t in rtts if t >= 10]
        tests.append((f"25 Mbit/s similar (mean |Δ| {sum(diff) / len(diff):.2f})", sum(diff) / len(diff) <= 0.05))
    if 50 in rates:
        hi = [t for t in rtts if t > 10]
        tests.append(("50 Mbit/s HLDG ahead at > 10 ms", bool(hi) and all(u("hldg", 50, t) > u("cdg", 50, t) for t in hi)))
    if not tests:
        return Score.too_few("no H8 rate of the claim at this scale")
    return _cells(tests)


@SCORERS("CH-22")
def ch22(d: Data) -> Score:
    h, p = d.sim["h9"], d.pub["ch22"]
    gs, rtts, bdps = _axis(h, "G"), _axis(h, "rtt"), _axis(h, "bdp")
    if len(gs) < 2:
        return Score.too_few("one G at this scale")
    s = lambda g, t, b: _m(h, "share", G=g, rtt=t, bdp=b)  # noqa: E731
    tol = p["monotone_tol"]
    mono_g = all(all(s(b_, t, b) >= s(a, t, b) - tol for a, b_ in zip(gs, gs[1:])) for t in rtts for b in bdps)
    mono_b = all(all(s(g, t, b2) <= s(g, t, b1) + tol for b1, b2 in zip(bdps, bdps[1:])) for g in gs for t in rtts)
    tests = [("share non-decreasing in G", mono_g), ("share non-increasing in the buffer", mono_b)]
    if 10 in rtts:
        c = [(g, b, s(g, 10, b)) for g in gs if g > 12 for b in bdps if b < 8]
        tests.append(("G > 12 at 10 ms below 8 BDP ≥ " f"{p['fair']}: " + ", ".join(f"G{g}/{b}BDP {x:.2f}" for g, b, x in c),
                      bool(c) and all(x >= p["fair"] for *_, x in c)))
    if 8 in bdps:
        c = [s(g, t, 8) for g in gs if g < 192 for t in rtts]
        tests.append((f"G < 192 at 8 BDP < {p['low']} (max {max(c):.2f})", all(x < p["low"] for x in c)))
    if 240 in rtts:
        c = [s(g, 240, b) for g in gs for b in bdps]
        tests.append((f"240 ms < {p['low']} (max {max(c):.2f})", all(x < p["low"] for x in c)))
    q = [_m(h, "qdelay_alone_ms", G=g) for g in gs]
    tests.append(("queueing alone rises with G " + " → ".join(f"{x:.1f}" for x in q), q[-1] > q[0]))
    return _cells(tests)


@SCORERS("CH-23")
def ch23(d: Data) -> Score:
    h, p = d.sim["h10"], d.pub["ch23"]
    if not h.height:
        return Score.too_few("no H10 run")
    qa, ua = _m(h, "qdelay_ms", phase="alone"), _m(h, "util", phase="alone")
    da = _m(h, "delay_frac", phase="alone")
    le, pr, bk, vp = (_m(h, c) for c in ("loss_entry_after_s", "probe_after_loss_s", "delay_after_stop_s", "back_via_probe"))
    lw, qw, sh = _m(h, "loss_probe_frac", phase="with CUBIC"), _m(h, "qdelay_ms", phase="with CUBIC"), _m(h, "share", phase="with CUBIC")
    seq = da == 1.0 and qa < 5 and ua >= 0.95 and le <= p["entry_max_s"] and pr >= p["dwell_s"] and lw > 0.8 and vp == 1.0 and finite(bk)
    ok = seq and p["share"][0] <= sh <= p["share"][1] and qw <= p["queue_ms"]
    return Score.test(ok, f"alone: DELAY {_f(da)} of the time, queue {_f(qa, '.1f')} ms, utilisation {_f(ua, '.3f')}; "
                      f"LOSS {_f(le, '.1f')} s after CUBIC's start, first PROBE {_f(pr, '.1f')} s later, LOSS/PROBE "
                      f"{_f(lw)} of the competition; share {_f(sh, '.3f')}, queue {_f(qw, '.0f')} ms; DELAY again "
                      f"{_f(bk, '.1f')} s after CUBIC stops{' via PROBE' if vp == 1.0 else ''}", partly=seq)


@SCORERS("CH-24")
def ch24(d: Data) -> Score:
    e4 = d.sim["e4"]
    sh = lambda cc, R, t, b: _m(e4, "share", cc=cc, rate=R, rtt=t, bdp=b)  # noqa: E731
    fair = d.pub["ch24"]["fair"]
    tests = []
    rates, rtts, bdps = _axis(e4, "rate", cc="hldg"), _axis(e4, "rtt", cc="hldg"), _axis(e4, "bdp", cc="hldg")
    for R in rates:
        for t in rtts:
            for b in bdps:
                h, c = sh("hldg", R, t, b), sh("cdg", R, t, b)
                tests.append((f"{R:g}/{t}/{b} HLDG > 0.02 ({h:.3f})", h > 0.02))
                if R == 1.5:
                    tests.append((f"1.5/{t}/{b} HLDG {h:.2f} ≥ CDG {c:.2f}", _le(h, c)))
                elif R == 4:
                    weak = (t == 10 and b < 6) or (t == 40 and b < 4) or (t == 240 and b == 8)
                    tests.append((f"4/{t}/{b} {'weak' if weak else 'fair'} ({h:.2f})", h < fair if weak else h >= fair))
                elif not (t == 10 and b <= 2):
                    tests.append((f"{R:g}/{t}/{b} HLDG {h:.2f} ≥ CDG {c:.2f}", _le(h, c)))
    big = [b for b in bdps if b >= 6]
    if big:
        hb = sum(sh("hldg", R, t, b) for R in rates for t in rtts for b in big) / (len(rates) * len(rtts) * len(big))
        cb = sum(sh("cdg", R, t, b) for R in rates for t in rtts for b in big) / (len(rates) * len(rtts) * len(big))
        tests.append((f"≥ 6 BDP HLDG {hb:.2f} much better than CDG {cb:.2f}", hb > cb + 0.1))
    if not tests:
        return Score.too_few("no E4 run")
    return _cells(tests)


@SCORERS("CH-25")
def ch25(d: Data) -> Score:
    e4, p = d.sim["e4"], d.pub["ch25"]
    g = lambda R, t, b: _m(e4, "share", cc="hldg", rate=R, rtt=t, bdp=b) / _m(e4, "share", cc="cdg", rate=R, rtt=t, bdp=b)  # noqa: E731
    rates, rtts, bdps = _axis(e4, "rate", cc="hldg"), _axis(e4, "rtt", cc="hldg"), _axis(e4, "bdp", cc="hldg")
    tests = []
    for R in rates:
        for t in rtts:
            for b in bdps:
                r = g(R, t, b)
                if t == 10 and R == 1.5:
                    tests.append((f"1.5/10/{b} gain > 0 ({r:.2f}×)", r > 1))
                elif t == 10 and b <= 4:
                    tests.append((f"{R:g}/10/{b} worse than CDG ({r:.2f}×)", r < 1))
                elif t == 40 and b > 2:
                    tests.append((f"{R:g}/40/{b} better ({r:.2f}×)", r > 1))
                elif t == 240:
                    tests.append((f"{R:g}/240/{b} better ({r:.2f}×)", r > 1))
    for t, key, kind in ((10, "max_gain_10ms_pct", "pct"), (40, "max_ratio_40ms", "x"), (240, "max_gain_240ms_pct", "pct")):
        if t in rtts:
            rs = [g(R, t, b) for R in rates for b in bdps if finite(g(R, t, b))]
            if rs:
                m = max(rs)
                ours, want = ((m - 1) * 100, p[key]) if kind == "pct" else (m, p[key])
                tests.append((f"max at {t} ms {ours:.1f}{'%' if kind == 'pct' else '×'} (thesis {want})", default_band(ours, want)))
    if not tests:
        return Score.too_few("no E4 run")
    return _cells(tests)


def _ratio_cells(d: Data):
    e3 = d.sim["e3"]
    out = []
    for R in _axis(e3, "rate", variant="hldg"):
        for t in _axis(e3, "rtt", variant="hldg"):
            h, c = _m(e3, "share", variant="hldg", rate=R, rtt=t), _m(e3, "share", variant="cdg", rate=R, rtt=t)
            out.append((R, t, h, c, h / c if finite(h, c) and c > 0 else float("inf")))
    return out


@SCORERS("CH-26")
def ch26(d: Data) -> Score:
    p = d.pub["table_5_2"]
    cells = _share_cells(d.sim["e3"], p, True, variant="hldg")
    rc = _ratio_cells(d)
    inrange = all(p["range"][0] <= o <= p["range"][1] for _, _, o, _ in cells)
    ratio_ok = all(r >= p["min_ratio"] for *_, r in rc)
    s = _cells([(f"{n} ({100 * o:.0f} vs {100 * v:.0f} %)", g) for n, g, o, v in cells],
               f"HLDG {min(o for *_, o, _ in cells):.2f}-{max(o for *_, o, _ in cells):.2f}; HLDG/CDG "
               f"{min(r for *_, r in rc):.1f}-{max(r for *_, r in rc):.1f}×" if cells else "")
    s = _downgrade(s, inrange, f"a cell outside [{p['range'][0]}, {p['range'][1]}]")
    return _downgrade(s, ratio_ok, f"HLDG/CDG < {p['min_ratio']} in {sum(r < p['min_ratio'] for *_, r in rc)} of {len(rc)} cells")


@SCORERS("CH-27")
def ch27(d: Data) -> Score:
    p = d.pub["ch27"]
    rc = [r for *_, r in _ratio_cells(d)]
    if not rc:
        return Score.too_few("no E3 run")
    mx, mean = max(rc), sum(rc) / len(rc)
    ok = default_band(mx, p["max_ratio"]) and default_band(mean, p["mean_ratio"])
    return Score.test(ok, f"HLDG/CDG share over the 340-ms grid ({len(rc)} cells): max {mx:.1f}×, mean {mean:.1f}× "
                      "(\"ten orders of magnitude\": no number to test)", partly=mean > 1)


@SCORERS("CH-28")
def ch28(d: Data) -> Score:
    c = _ss_cells(d, "cdg-gmin", "table_5_4")
    if not c:
        return Score.too_few("no E5 run")
    ge1 = sum(o >= 1 for *_, o, v in c)
    f2 = sum(0.5 <= o / v <= 2 for *_, o, v in c if v > 0)
    top = max(c, key=lambda x: x[2])
    need = math.ceil(len(c) * 23 / 25)
    ok = ge1 >= need and (top[0], top[1]) == (1.5, 10)
    return Score.test(ok, f"ssthresh/BDP ≥ 1 in {ge1} of {len(c)} cells; largest {top[2]:.2f} at {top[0]:g} Mbit/s / "
                      f"{top[1]} ms; within a factor 2 of Table 5.4 in {f2} of {len(c)}",
                      partly=(top[0], top[1]) == (1.5, 10) or ge1 >= len(c) / 2)


@SCORERS("CH-29")
def ch29(d: Data) -> Score:
    c = _ss_cells(d, "hldg", "table_5_5")
    if not c:
        return Score.too_few("no E5 run")
    p = d.pub["ch29"]
    mad = sum(abs(o - 1) for *_, o, _ in c) / len(c)
    lo, hi = min(o for *_, o, _ in c), max(o for *_, o, _ in c)
    ok = mad <= p["mad_max"] and p["range"][0] <= lo and hi <= p["range"][1]
    return Score.test(ok, f"ssthresh/BDP {lo:.2f}-{hi:.2f} over {len(c)} cells, mean |ratio − 1| {mad:.3f}",
                      partly=mad <= 2 * p["mad_max"])


def _lossy_tests(d: Data, key: str) -> Score:
    h = d.sim["h15"]
    spec = d.pub[key]
    R = spec["rate"]
    if R not in _axis(h, "rate"):
        return Score.too_few(f"no {R:g}-Mbit/s H15 run at this scale")
    rtts = _axis(h, "rtt")
    u = lambda cc, t, lo: _m(h, "util", cc=cc, rate=R, rtt=t, loss=lo)  # noqa: E731
    tests = []
    for st in spec["statements"]:
        ts = [t for t in rtts if st["rtt"][0] <= t <= st["rtt"][1]]
        for t in ts:
            lo = st["loss"]
            if "level" in st:
                for cc in st["ccs"]:
                    v = u(cc, t, lo)
                    lev = st["level"]
                    ok = (lev[0] - 0.05 <= v <= lev[1] + 0.05) if isinstance(lev, list) else default_band(v, lev, "share")
                    tests.append((f"{cc} {t} ms {lo * 100:g} % {v:.2f} ≈ {lev}", ok))
            if "order" in st:
                vals = {cc: u(cc, t, lo) for cc in ("hldg", "cdg", "cubic")}
                tests.append((f"{t} ms {lo * 100:g} % {st['order']} ("
                              + ", ".join(f"{k} {v:.2f}" for k, v in vals.items()) + ")", cl.order_holds(vals, st["order"])))
            if "below" in st:
                for cc in ("hldg", "cdg", "cubic"):
                    tests.append((f"{cc} {t} ms {lo * 100:g} % {u(cc, t, lo):.3f} < {st['below']}", u(cc, t, lo) < st["below"]))
    if not tests:
        return Score.too_few(f"no H15 cell of the claim at this scale")
    return _cells(tests)


@SCORERS("CH-30")
def ch30(d: Data) -> Score:
    return _lossy_tests(d, "ch30")


@SCORERS("CH-31")
def ch31(d: Data) -> Score:
    return _lossy_tests(d, "ch31")


@SCORERS("CH-32")
def ch32(d: Data) -> Score:
    return _lossy_tests(d, "ch32")


@SCORERS("CH-33")
def ch33(d: Data) -> Score:
    return _lossy_tests(d, "ch33")


@SCORERS("CH-34")
def ch34(d: Data) -> Score:
    h = d.sim["h15"]
    cells = []
    for R in _axis(h, "rate"):
        for t in _axis(h, "rtt"):
            for lo in _axis(h, "loss"):
                a, b = _m(h, "util", cc="hldg", rate=R, rtt=t, loss=lo), _m(h, "util", cc="cdg", rate=R, rtt=t, loss=lo)
                cells.append((R, a >= b - 0.03))
    if not cells:
        return Score.too_few("no H15 run")
    k = sum(ok for _, ok in cells)
    hi = [ok for R, ok in cells if R >= 12]
    ok = k >= len(cells) / 2 and bool(hi) and sum(hi) > len(hi) / 2
    return Score.test(ok, f"HLDG ≥ CDG − 3 points in {k} of {len(cells)} cells, {sum(hi)} of {len(hi)} at ≥ 12 Mbit/s",
                      partly=k >= len(cells) / 2 or (bool(hi) and sum(hi) > len(hi) / 2))


@SCORERS("CH-35")
def ch35(d: Data) -> Score:
    f, p = _sel(d.sim["f"], variant="fifo", cc="hldg"), d.pub["table_6_1"]
    rtts = _axis(f, "rtt")
    if not rtts:
        return Score.too_few("no F1 run")
    j = [_m(f, "jain", rtt=t) for t in rtts]
    mm = [_m(f, "maxmin", rtt=t) for t in rtts]
    q = [_m(f, "qdelay_ms", rtt=t) for t in rtts]
    ok = (min(j) >= p["jain_min"] and _non_increasing(j, 0.005) and _non_increasing(mm, 0.02)
          and max(q) <= p["qdelay_max_ms"] and _non_increasing(q, 0.5))
    return Score.test(ok, "Jain " + ", ".join(f"{t} ms {pm(_vals(f, 'jain', rtt=t), '.3f')}" for t in rtts)
                      + "; max-min " + " → ".join(f"{x:.2f}" for x in mm) + "; queueing " + " → ".join(f"{x:.1f}" for x in q) + " ms",
                      partly=_non_increasing(j, 0.005) and max(q) <= p["qdelay_max_ms"])


@SCORERS("CH-36")
def ch36(d: Data) -> Score:
    f, p = d.sim["f2"], d.pub["table_6_2"]
    rtts = _axis(f, "rtt")
    if not rtts:
        return Score.too_few("no F2 run")
    j = [_m(f, "jain", rtt=t) for t in rtts]
    q = [_m(f, "qdelay_ms", rtt=t) for t in rtts]
    lg = [(_m(f, "long_mbps", rtt=t), _m(f, "short_mbps", rtt=t)) for t in rtts]
    ok = min(j) >= p["jain_min"] and max(q) <= p["qdelay_max_ms"] and all(a >= b for a, b in lg)
    return Score.test(ok, "Jain " + ", ".join(f"{t} ms {x:.3f}" for t, x in zip(rtts, j)) + "; queueing "
                      + ", ".join(f"{x:.1f}" for x in q) + " ms; longer-RTT vs other flows Mbit/s "
                      + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in lg),
                      partly=min(j) >= p["jain_min"] and max(q) <= p["qdelay_max_ms"])


AQMS = ("pie", "fq_codel", "fq_pie")
CCS3 = ("hldg", "cdg", "cubic")


def _aqm_cells(d: Data, table: str, col: str):
    f, p = d.sim["f"], d.pub[table]
    for a in AQMS:
        for i, t in enumerate(p["rtts"]):
            for k, cc in enumerate(CCS3):
                ours = _m(f, col, variant=a, cc=cc, rtt=t)
                if finite(ours):
                    yield a, t, cc, ours, p[a][i][k]


@SCORERS("CH-37")
def ch37(d: Data) -> Score:
    p = d.pub["table_6_3"]
    cells = [(f"{a} {cc} {t} ms ({o:.3f} vs {v})", o >= p["jain_min"] and abs(o - v) <= p["band"])
             for a, t, cc, o, v in _aqm_cells(d, "table_6_3", "jain")]
    if not cells:
        return Score.too_few("no AQM run at this scale")
    return _cells(cells)


@SCORERS("CH-38")
def ch38(d: Data) -> Score:
    f, p = d.sim["f"], d.pub["table_6_4"]
    av = {(a, cc): _m(f, "util", variant=a, cc=cc) for a in AQMS for cc in CCS3}
    tests = []
    for a in AQMS:
        if not finite(av[(a, "hldg")], av[(a, "cdg")], av[(a, "cubic")]):
            continue
        tests.append((f"{a}: CUBIC highest ({av[(a, 'cubic')]:.3f})", _le(av[(a, "cubic")], max(av[(a, "hldg")], av[(a, "cdg")]))))
        tests.append((f"{a}: HLDG average {av[(a, 'hldg')]:.3f} ≈ {p['hldg_avg'][a] / 100}", default_band(av[(a, "hldg")], p["hldg_avg"][a] / 100, "share")))
        tests.append((f"{a}: CDG average {av[(a, 'cdg')]:.3f} ≈ {p['cdg_avg'] / 100}", default_band(av[(a, "cdg")], p["cdg_avg"] / 100, "share")))
    far = [t for t in _axis(f, "rtt", variant="pie") if t >= 180]
    if far and all(finite(_m(f, "util", variant="pie", cc=cc)) for cc in CCS3):
        h = [_m(f, "util", variant="pie", cc="hldg", rtt=t) for t in far]
        c = [_m(f, "util", variant="pie", cc="cdg", rtt=t) for t in far]
        u = [_m(f, "util", variant="pie", cc="cubic", rtt=t) for t in far]
        tests.append(("PIE ≥ 180 ms HLDG > CDG", all(a > b for a, b in zip(h, c))))
        tests.append(("PIE ≥ 180 ms HLDG close to CUBIC", all(abs(a - b) <= 0.05 for a, b in zip(h, u))))
    if finite(av[("fq_pie", "hldg")], av[("fq_pie", "cubic")]):
        tests.append(("FQ-PIE HLDG ≈ CUBIC", abs(av[("fq_pie", "hldg")] - av[("fq_pie", "cubic")]) <= 0.05 * av[("fq_pie", "cubic")]))
        tests.append(("HLDG best under FQ-PIE", all(_le(av[("fq_pie", "hldg")], av[(a, "hldg")]) for a in AQMS if finite(av[(a, "hldg")]))))
    if not tests:
        return Score.too_few("no AQM run at this scale")
    return _cells(tests)


@SCORERS("CH-39")
def ch39(d: Data) -> Score:
    p = d.pub["table_6_5"]

    def judge(f, kernel=False):
        dr = lambda a, cc, t=None: _m(f, "drop_pct", variant=a, cc=cc, **({"rtt": t} if t else {}))  # noqa: E731
        tests = []
        rt = [t for t in p["rtts"] if t in _axis(f, "rtt", variant="pie")]
        for i, t in enumerate(p["rtts"]):
            if t not in rt:
                continue
            if t <= 40:
                cp = dr("pie", "cdg", t)
                tests.append((f"PIE CDG {t} ms {cp:.2f} % vs {p['pie'][i][1]} %", default_band(cp, p["pie"][i][1], "loss")))
                if finite(dr("pie", "cubic", t)):
                    tests.append((f"PIE CDG > CUBIC at {t} ms", cp > dr("pie", "cubic", t)))
                if not kernel:
                    tests.append((f"PIE HLDG {t} ms ≈ 0 ({dr('pie', 'hldg', t):.3f} %)", dr("pie", "hldg", t) <= 0.01))
            elif not kernel and finite(dr("pie", "cubic", t)):
                tests.append((f"PIE HLDG < CUBIC at {t} ms", dr("pie", "hldg", t) < dr("pie", "cubic", t)))
        if kernel:
            return tests
        for a in ("fq_codel", "fq_pie"):
            for t in rt:
                h, c, u = dr(a, "hldg", t), dr(a, "cdg", t), dr(a, "cubic", t)
                if not finite(h, c, u):
                    continue
                if a == "fq_codel":
                    tests.append((f"FQ-CoDel HLDG {'<' if t <= 40 else '>'} CDG at {t} ms", h < c if t <= 40 else h > c))
                else:
                    tests.append((f"FQ-PIE HLDG < CUBIC at {t} ms", h < u))
        for a in AQMS:
            h, c = dr(a, "hldg"), dr(a, "cdg")
            if finite(h, c):
                r = h / c if c > 0 else float("inf")
                tests.append((f"{a} HLDG/CDG {r:.2f} ≤ {p['ratio_max'][a]}", r <= p["ratio_max"][a]))
        return tests
    f = d.sim["f"]
    if not _sel(f, variant="pie").height:
        return Score.too_few("no PIE run at this scale")
    kt = ""
    if d.kernel and "f" in d.kernel and _sel(d.kernel["f"], variant="pie", cc="cdg").height:
        kf = d.kernel["f"]
        kt = "Linux tcp_cdg (BPF) under PIE: " + ", ".join(
            f"{t} ms CDG {_m(kf, 'drop_pct', variant='pie', cc='cdg', rtt=t):.2f} % / CUBIC "
            f"{_m(kf, 'drop_pct', variant='pie', cc='cubic', rtt=t):.2f} %" for t in _axis(kf, "rtt", variant="pie"))
    tests = judge(f)
    levels = [ok for n, ok in tests if n.startswith("PIE CDG ") and "%" in n]
    return _downgrade(_cells(tests, kernel=kt), all(levels),
                      "CDG's PIE drops at 10/40 ms (printed 2.98 / 1.32 %) outside the default band")


@SCORERS("CH-40")
def ch40(d: Data) -> Score:
    f, p = d.sim["f4"], d.pub["ch40"]
    v = "hldg-lpcc"
    rtts = _axis(f, "rtt", variant=v)
    s = {t: _m(f, "share", variant=v, rtt=t) for t in rtts}
    if not s:
        return Score.too_few("no F4 run")
    ok = all((x <= p["max_10ms"]) if t == 10 else (x < p["max_other"]) for t, x in s.items())
    return Score.test(ok, "HLDG-LPCC share " + ", ".join(f"{t} ms {pm(_vals(f, 'share', variant=v, rtt=t), '.3f')}" for t in rtts)
                      + f"; TCP-LP {_f(_m(f, 'share', variant='lp'), '.3f')}",
                      partly=all(x < 0.5 for x in s.values()))


@SCORERS("CH-41")
def ch41(d: Data) -> Score:
    p = d.pub["ch41"]
    tests = []
    for key, eq in (("e3", {"variant": "hldg"}), ("e4", {"cc": "hldg"})):
        t = _sel(d.sim[key], **eq)
        for r in t.iter_rows(named=True):
            tag = f"{key} {r['rate']:g}/{r['rtt']}" + (f"/{r['bdp']}" if "bdp" in r else "")
            tests.append((f"{tag} HLDG drops {r['drop0_pct']:.2f} ≤ CUBIC {r['drop1_pct']:.2f} %",
                          not finite(r["drop0_pct"]) or r["drop0_pct"] <= r["drop1_pct"] + 1e-9))
            tests.append((f"{tag} no one starves ({r['share']:.3f})", p["starve"] <= r["share"] <= 1 - p["starve"]))
    h10 = _sel(d.sim["h10"], phase="with CUBIC")
    for r in h10.iter_rows(named=True):
        tests.append((f"h10 no one starves ({r['share']:.3f})", p["starve"] <= r["share"] <= 1 - p["starve"]))
    f = d.sim["f"]
    for a in _axis(f, "variant"):
        for t in _axis(f, "rtt", variant=a):
            h, c = _m(f, "drop_pct", variant=a, cc="hldg", rtt=t), _m(f, "drop_pct", variant=a, cc="cubic", rtt=t)
            if finite(h, c):
                tests.append((f"{a} {t} ms HLDG drops {h:.2f} ≤ CUBIC {c:.2f} %", h <= c))
            mm = _m(f, "maxmin", variant=a, cc="hldg", rtt=t)
            if finite(mm):
                tests.append((f"{a} {t} ms no HLDG flow starves (max-min {mm:.2f})", mm >= p["maxmin"]))
    if not tests:
        return Score.too_few("no shared-bottleneck run")
    k = sum(ok for _, ok in tests)
    bad = [n for n, ok in tests if not ok]
    return Score.test(k == len(tests), f"{k} of {len(tests)} run checks hold" + ("; misses: " + ", ".join(bad[:8]) if bad else ""),
                      partly=k >= 0.9 * len(tests))


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
    d = measure(ctx)
    s = d.sim
    e1 = s["e1"]
    rates, rtts = _axis(e1, "rate"), _axis(e1, "rtt")
    out.tables.append(Table(
        "E1/H5: one flow alone, utilisation / mean queueing delay ms (90-290 s)",
        ["RTT ms"] + [f"{cc} {R:g} Mbit/s" for cc in ("cdg", "hldg") for R in rates],
        [[t] + [f"{_m(e1, 'util', cc=cc, rate=R, rtt=t):.3f} / {_m(e1, 'qdelay_ms', cc=cc, rate=R, rtt=t):.1f}"
                for cc in ("cdg", "hldg") for R in rates] for t in rtts]))
    bo = s["bo"]
    names = {"cdg": "CDG 10 Mbit/s (E1)", "cdg20": "CDG 20 Mbit/s (E1)", "cdg-w4": "CDG, W = 4 (H1)",
             "hldg-m1": "HLDG M1 only, W = 4 (H1)", "hldg-m1m2": "HLDG M1 + M2, W = 4 (H3)",
             "hldg-no-m7": "HLDG without M7 (H7)", "hldg": "HLDG (H7)"}
    cols = ("backoffs", "below_bdp", "double", "post_cwnd_kib", "recover_s", "util", "qdelay_ms", "q99_ms",
            "q60_ms", "tput60", "spikes60")
    out.tables.append(Table(
        "CH-4/5/6, H1/H3/H7: one flow alone at 100 ms (1000-packet FIFO): delay back-offs per 300 s after "
        "slow start, cwnd after a back-off and the time to regain it (medians), utilisation and queueing "
        "delay over 30 s to the end, and over the first 60 s",
        ["run", "back-offs", "below the BDP", "double", "cwnd after KiB", "recovery s", "utilisation",
         "mean qdelay ms", "p99 qdelay ms", "qdelay 0-60 s ms", "Mbit/s 0-60 s", "spikes ≥ 15 ms 0-60 s"],
        [[names[v]] + [_m(bo, c, name=v) for c in cols] for v in names if _sel(bo, name=v).height]))
    e4 = s["e4"]
    out.tables.append(Table(
        "E4/H11: share of the delay-gradient flow against CUBIC (20-110 s), per rate / RTT / buffer",
        ["rate Mbit/s", "RTT ms"] + [f"{cc} {b} BDP" for cc in ("cdg", "hldg") for b in _axis(e4, "bdp")],
        [[R, t] + [_m(e4, "share", cc=cc, rate=R, rtt=t, bdp=b) for cc in ("cdg", "hldg") for b in _axis(e4, "bdp")]
         for R in _axis(e4, "rate") for t in _axis(e4, "rtt")]))
    e3 = s["e3"]
    out.tables.append(Table(
        "E3/H12: share against CUBIC with a 340-ms buffer (20-110 s), CDG (loss-based slow start) / HLDG",
        ["rate Mbit/s"] + [f"{t} ms" for t in _axis(e3, "rtt")],
        [[R] + [f"{_m(e3, 'share', variant='cdg', rate=R, rtt=t):.3f} / {_m(e3, 'share', variant='hldg', rate=R, rtt=t):.3f}"
                for t in _axis(e3, "rtt")] for R in _axis(e3, "rate")]))
    e5 = s["e5"]
    pts = e5.select(["rate", "rtt", "bdp_pkts"]).unique().sort("bdp_pkts") if e5.height else pl.DataFrame()
    out.tables.append(Table(
        "E5/H13/H14: ssthresh at the first slow-start exit / BDP (2000-packet FIFO)",
        ["rate Mbit/s", "RTT ms", "BDP pkts", "CDG (E5)", "CDG g_min only (H13)", "HLDG (H14)"],
        [[p["rate"], p["rtt"], round(p["bdp_pkts"], 1)] +
         [_m(e5, "ratio", variant=v, rate=p["rate"], rtt=p["rtt"]) for v in ("cdg", "cdg-gmin", "hldg")]
         for p in pts.iter_rows(named=True)]))
    h5 = s["h5"]
    out.tables.append(Table(
        "Table 5.1 ladder: one flow, 10 Mbit/s, 2 ms, 1000-packet FIFO, queueing delay over 20 s to the end",
        ["variant", "mean ms", "median ms", "SD ms", "utilisation"],
        [[v] + [_m(h5, c, variant=v) for c in ("mean_ms", "median_ms", "sd_ms", "util")]
         for v in _doc_order(ctx, "h5", "variant", h5)]))
    h15 = s["h15"]
    out.tables.append(Table(
        "H15: one flow alone on a lossy link, utilisation over 10 s to the end (1-BDP FIFO)",
        ["loss", "rate Mbit/s", "RTT ms", "HLDG", "CDG", "CUBIC"],
        [[lo, R, t] + [_m(h15, "util", cc=cc, loss=lo, rate=R, rtt=t) for cc in ("hldg", "cdg", "cubic")]
         for lo in _axis(h15, "loss") for R in _axis(h15, "rate") for t in _axis(h15, "rtt")]))
    f = s["f"]
    out.tables.append(Table(
        "F1/F3: five flows of one CC, 12 Mbit/s (window: all five active)",
        ["queue", "CC", "RTT ms", "Jain", "max-min", "utilisation", "drop %", "queueing delay ms"],
        [[v, cc, t] + [_m(f, c, variant=v, cc=cc, rtt=t) for c in ("jain", "maxmin", "util", "drop_pct", "qdelay_ms")]
         for v in _doc_order(ctx, "f", "variant", f) for cc in _doc_order(ctx, "f", "cc", f) for t in _axis(f, "rtt")]))
    n = s["n"]
    out.tables.append(Table(
        "CH-7: utilisation of N flows of one CC behind the F-series FIFO (staggered starts)",
        ["CC", "RTT ms"] + [f"N = {k}" for k in range(1, 6)],
        [[cc, t] + [_m(n, "util", cc=cc, rtt=t, n=k) for k in range(1, 6)]
         for cc in _axis(n, "cc") for t in _axis(n, "rtt")]))
    f2 = s["f2"]
    out.tables.append(Table(
        "F2: five HLDG flows, flows 1-2 on a path 80 ms longer, 12 Mbit/s, 1000-packet FIFO (50-300 s)",
        ["RTT ms", "Jain", "max-min", "queueing delay ms", "longer-RTT flows Mbit/s", "other flows Mbit/s"],
        [[t] + [_m(f2, c, rtt=t) for c in ("jain", "maxmin", "qdelay_ms", "long_mbps", "short_mbps")]
         for t in _axis(f2, "rtt")]))
    f4 = s["f4"]
    out.tables.append(Table("F4: scavenger share against CUBIC (2-BDP FIFO)", ["scavenger", "RTT ms", "share"],
                            [[v, t, _m(f4, "share", variant=v, rtt=t)]
                             for v in _doc_order(ctx, "f4", "variant", f4) for t in _axis(f4, "rtt")]))
    e2, e0 = s["e2"], s["e0"]
    out.tables.append(Table(
        "E2: a delay-based flow alone (2-10 s), then against CUBIC from 10 s (10 Mbit/s, 20 ms, 200-packet FIFO)",
        ["first flow", "utilisation alone", "throughput Mbit/s, 10-30 s", "CUBIC Mbit/s", "share"],
        [[cc] + [_m(e2, c, cc=cc) for c in ("alone_util", "tput", "cubic_tput", "share")] for cc in _axis(e2, "cc")]))
    out.tables.append(Table(
        "E0: RTT of a 60-kbit/s game flow alone and with a bulk flow joining at 30 s (2 Mbit/s, 20 ms, 40-packet FIFO)",
        ["bulk flow", "game RTT alone ms", "game RTT with the bulk flow ms", "SD of its 1-s RTT ms",
         "bulk throughput Mbit/s", "drops"],
        [[b] + [_m(e0, c, bulk=b) for c in ("rtt_alone", "rtt_bulk", "rtt_bulk_sd", "bulk_tput", "bulk_drops")]
         for b in ("cubic", "cdg")]))
    h8 = s["h8"]
    r8 = _axis(h8, "rate")
    out.tables.append(Table(
        "H8: one flow alone with loss-based slow start, FIFO of max(150 packets, 1 BDP), utilisation / mean "
        "queueing delay ms over 30-90 s", ["RTT ms"] + [f"{v} {R:g} Mbit/s" for v in ("cdg", "hldg") for R in r8],
        [[t] + [f"{_m(h8, 'util', variant=v, rate=R, rtt=t):.3f} / {_m(h8, 'qdelay_ms', variant=v, rate=R, rtt=t):.1f}"
                for v in ("cdg", "hldg") for R in r8] for t in _axis(h8, "rtt")]))
    h10 = s["h10"]
    out.tables.append(Table(
        "H10: mode switching (HLDG alone, CUBIC from 30 to 120 s, 12 Mbit/s, 10 ms, 250-packet FIFO, Q_th = 50 ms, "
        "m = 4), each phase from 5 s after its change", ["phase", "time in DELAY", "time in LOSS or PROBE",
                                                         "queueing delay ms", "HLDG Mbit/s", "CUBIC Mbit/s", "share"],
        [[p] + [_m(h10, c, phase=p) for c in ("delay_frac", "loss_probe_frac", "qdelay_ms", "tput", "cubic_tput", "share")]
         for p in ("alone", "with CUBIC", "after CUBIC")]))
    h6 = s["h6"]
    out.tables.append(Table(
        "H6: route change, RTT 40 → 80 ms at 10 s (one HLDG flow, 10 Mbit/s, 1000-packet FIFO)",
        ["RTT_base", "utilisation 2-10 s", "12-30 s", "32-40 s", "RTT_ebase at 32 s ms", "at the end ms"],
        [[v] + [_m(h6, c, variant=v) for c in ("util_old", "util_changed", "util_late", "rtt_ebase_32_ms", "rtt_ebase_end_ms")]
         for v in ("w30", "lifetime")]))
    h9 = s["h9"]
    gs = _axis(h9, "G")
    out.tables.append(Table(
        "H9: HLDG with a fixed G (no mode switching) against CUBIC, 12 Mbit/s: share over 20-60 s / queueing "
        "delay alone over 2-10 s (ms)", ["RTT ms", "buffer (BDP)"] + [f"G = {g} ms" for g in gs],
        [[t, b] + [f"{_m(h9, 'share', G=g, rtt=t, bdp=b):.3f} / {_m(h9, 'qdelay_alone_ms', G=g, rtt=t, bdp=b):.1f}"
                   for g in gs] for t in _axis(h9, "rtt") for b in _axis(h9, "bdp")]))
    h4 = s["h4"]
    vs = ("hldg-m1m2-linear", "hldg")
    r4 = _axis(h4, "rate")
    out.tables.append(Table(
        "H4: the standing queue on small-BDP paths, one flow alone (1000-packet FIFO), median queueing delay ms "
        "over 20 s to the end (utilisation)",
        ["RTT ms"] + [f"{'M1+M2 linear' if v != 'hldg' else 'HLDG'} {R:g} Mbit/s" for v in vs for R in r4],
        [[t] + [f"{_m(h4, 'median_ms', variant=v, rate=R, rtt=t):.1f} ({_m(h4, 'util', variant=v, rate=R, rtt=t):.2f})"
                for v in vs for R in r4] for t in _axis(h4, "rtt")]))
    h2 = s["h2"]
    out.tables.append(Table(
        "H2: bandwidth estimates of one Reno flow over the bottleneck rate (10 Mbit/s, 2-BDP FIFO), 5th / 50th / "
        "95th percentile of the flow samples over 30 s to the end", ["RTT ms", "Vegas-like cwnd / RTT_base", "ACK rate"],
        [[t] + [" / ".join(f"{_m(h2, c, rtt=t, estimate=e):.2f}" for c in ("p5", "p50", "p95"))
                for e in ("Vegas-like", "ACK rate")] for t in _axis(h2, "rtt")]))
    _figure(ctx, e1, e4, out)
    return out


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
    ax[0].set(xscale="log", xlabel="RTT (ms)", ylabel="utilisation", title="E1: one flow alone")
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
