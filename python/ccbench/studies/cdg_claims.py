"""The CDG/HLDG thesis's claims (CH-1 … CH-41, examples/studies/cdg-hldg/claims.yaml), one scorer
each (ccbench.studies.claims); the per-run tables come from ccbench.studies.cdg.
"""
from __future__ import annotations

import math

import polars as pl

from . import claims as cl
from .claims import Data, Score, Scorers, default_band, finite, pm
from .cdg import axis_values, kernel, mean_where, select, values_where


SCORERS = Scorers()


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
    rc, rd = mean_where(e0, "rtt_bulk", bulk="cubic"), mean_where(e0, "rtt_bulk", bulk="cdg")
    sd, drops = mean_where(e0, "rtt_bulk_sd", bulk="cubic"), mean_where(e0, "bulk_drops", bulk="cdg")
    full = p["path_rtt_ms"] + p["buffer_ms"]
    ok = (default_band(rc, full) and finite(sd) and sd >= p["oscillation_sd_ms"]
          and finite(rd) and rd <= rc / 3 and drops == 0)
    return Score.test(ok, f"game RTT with CUBIC {pm(values_where(e0, 'rtt_bulk', bulk='cubic'), '.0f', ' ms')} "
                      f"(SD of the 1-s RTT {_f(sd, '.1f')} ms), with CDG "
                      f"{pm(values_where(e0, 'rtt_bulk', bulk='cdg'), '.0f', ' ms')}, drops with CDG {_f(drops, '.0f')}",
                      partly=finite(rc, rd) and rd < rc)


def _e1_text(e1: pl.DataFrame, cc: str = "cdg") -> tuple[dict, str]:
    rates = axis_values(e1, "rate", cc=cc)
    u = {(R, t): mean_where(e1, "util", cc=cc, rate=R, rtt=t) for R in rates for t in axis_values(e1, "rtt", cc=cc)}
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
    rates = axis_values(e1, "rate", cc="cdg")
    if len(rates) < 2:
        return Score.too_few("one rate at this scale")
    tests, parts = [], []
    for t in [t for t in axis_values(e1, "rtt", cc="cdg") if t >= 10]:
        us = [mean_where(e1, "util", cc="cdg", rate=R, rtt=t) for R in rates]
        rng = max(us) - min(us)
        tests.append((f"{t} ms ({rng:.2f})", rng <= d.pub["ch3"]["max_range"]))
        parts.append(f"{t} ms {rng:.2f}")
    k = sum(ok for _, ok in tests)
    return Score.test(k == len(tests), f"rate-to-rate range of CDG's utilisation: {', '.join(parts)}",
                      partly=k >= len(tests) / 2)


def _bo(d: Data, name: str) -> pl.DataFrame:
    return select(d.sim["bo"], name=name)


@SCORERS("CH-4")
def ch4(d: Data) -> Score:
    b, p = _bo(d, "cdg20"), d.pub["ch4"]
    if not b.height:
        return Score.too_few("no CDG run at 20 Mbit/s / 100 ms at this scale")
    cw, dip, rec = (mean_where(b, c) for c in ("post_cwnd_kib", "dip_mbps", "recover_s"))
    bdp = mean_where(b, "bdp_kib")
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
    n, below, dbl, u = (mean_where(b, c) for c in ("backoffs", "below_bdp", "double", "util"))
    frac = below / n if n else float("nan")
    ok = (default_band(n, p["backoffs"]) and default_band(below, p["below_bdp"])
          and default_band(dbl, p["double"]) and default_band(u, p["util"], "share") and frac >= 0.5)
    return Score.test(ok, f"per 300 s after slow start: {pm(values_where(b, 'backoffs'), '.0f')} back-offs, "
                      f"{_f(below, '.0f')} ({_f(100 * frac, '.0f')} %) below the BDP, {_f(dbl, '.0f')} double; "
                      f"utilisation {pm(values_where(b, 'util'), '.3f')}", partly=finite(frac) and frac >= 0.5)


@SCORERS("CH-6")
def ch6(d: Data) -> Score:
    b, p = _bo(d, "cdg"), d.pub["ch6"]
    if not b.height:
        return Score.too_few("no CDG run at 10 Mbit/s / 100 ms at this scale")
    q, tp, sp, mx = (mean_where(b, c) for c in ("q60_ms", "tput60", "spikes60", "spike_max_ms"))
    ok = default_band(q, p["qdelay_ms"]) and default_band(tp, p["tput_mbps"]) and sp >= 1
    return Score.test(ok, f"first 60 s: mean queueing delay {_f(q)} ms, throughput {_f(tp)} Mbit/s, "
                      f"{_f(sp, '.1f')} spikes ≥ {p['spike_ms']} ms above the base RTT (highest {_f(mx, '.0f')} ms)",
                      partly=sp >= 1)


@SCORERS("CH-7")
def ch7(d: Data) -> Score:
    n = select(d.sim["n"], cc="cdg")
    if not n.height:
        return Score.too_few("no FIFO CDG run at this scale")
    tests, parts = [], []
    for t in axis_values(n, "rtt"):
        us = [mean_where(n, "util", rtt=t, n=k) for k in range(1, 6)]
        rising = all(b >= a - 0.02 for a, b in zip(us, us[1:]))
        tests.append((t, rising, us[-1] >= d.pub["ch7"]["util"]))
        parts.append(f"{t} ms {' → '.join(f'{x:.2f}' for x in us)}")
    ok = all(r and top for _, r, top in tests)
    return Score.test(ok, f"utilisation of N = 1…5 CDG flows (12 Mbit/s, FIFO): {'; '.join(parts)}",
                      partly=all(r for _, r, _ in tests))


@SCORERS("CH-8")
def ch8(d: Data) -> Score:
    e2 = d.sim["e2"]
    sh = mean_where(e2, "share", cc="vegas")
    return Score.test(finite(sh) and sh <= d.pub["ch8"]["share_max"],
                      f"Vegas {_f(mean_where(e2, 'tput', cc='vegas'))} vs CUBIC {_f(mean_where(e2, 'cubic_tput', cc='vegas'))} "
                      f"Mbit/s over 10-30 s, share {pm(values_where(e2, 'share', cc='vegas'), '.3f')}",
                      partly=finite(sh) and sh < 0.5)


def _grid(pub: dict, rate, rtt) -> float | None:
    row = pub["values"].get(rate if rate in pub["values"] else float(rate))
    if row is None or rtt not in pub["rtts"]:
        return None
    return row[pub["rtts"].index(rtt)]


def _share_cells(df, pub, scale_pct: bool, **eq) -> list[tuple[str, bool, float, float]]:
    out = []
    for R in axis_values(df, "rate", **eq):
        for t in axis_values(df, "rtt", **eq):
            v = _grid(pub, R, t)
            if v is None:
                continue
            ours = mean_where(df, "share", rate=R, rtt=t, **eq)
            v = v / 100 if scale_pct else v
            out.append((f"{R:g}/{t}", default_band(ours, v, "share"), ours, v))
    return out


@SCORERS("CH-9")
def ch9(d: Data) -> Score:
    p = d.pub["table_5_3"]

    def judge(df):
        cells = _share_cells(df, p, True, variant="cdg")
        ranges, ok = [], True
        for R in axis_values(df, "rate", variant="cdg"):
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
    s = Score.named([(f"{n} ({100 * o:.1f} vs {100 * v:.1f} %)", g) for n, g, o, v in cells], txt, kernel=kt)
    return _downgrade(s, ok, "a rate's range falls outside the printed one ± 2 points")


@SCORERS("CH-10")
def ch10(d: Data) -> Score:
    p = d.pub["table_4_3"]

    def judge(df):
        cells, big, small = [], [], []
        for R in axis_values(df, "rate", cc="cdg"):
            for t in axis_values(df, "rtt", cc="cdg"):
                for b in axis_values(df, "bdp", cc="cdg"):
                    row = p["values"].get(R if R in p["values"] else float(R), {}).get(t)
                    if row is None or b not in p["bdps"]:
                        continue
                    ours = mean_where(df, "share", cc="cdg", rate=R, rtt=t, bdp=b)
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
    return _downgrade(Score.named(cells, txt, kernel=kt), ok, "the large/small-buffer thresholds fail")


@SCORERS("CH-11")
def ch11(d: Data) -> Score:
    p = d.pub["ch11"]
    r = select(d.sim["e4"], cc="cdg", rate=p["rate"], rtt=p["rtt"], bdp=p["bdp"])
    if not r.height:
        return Score.too_few(f"no CDG run at {p['rate']} Mbit/s / {p['rtt']} ms / {p['bdp']} BDP at this scale")
    lm, sh = mean_where(r, "lossmode_frac"), mean_where(r, "shadow_frac")
    e4 = select(d.sim["e4"], cc="cdg")
    rt = axis_values(e4, "rtt")
    pat = mean_where(e4, "lossmode_frac", rtt=rt[0]) < mean_where(e4, "lossmode_frac", rtt=rt[-1]) if len(rt) > 1 else True
    ok = finite(lm, sh) and lm <= p["lossmode_max"] and sh <= p["shadow_max"] and pat
    return Score.test(ok, f"share {_f(mean_where(r, 'share'), '.3f')}; loss mode {_f(100 * lm, '.1f')} % of the "
                      f"competition; shadow window in use at {_f(100 * sh, '.0f')} % of "
                      f"{_f(mean_where(r, 'losses'), '.0f')} loss events; loss mode over the grid "
                      + ", ".join(f"{t} ms {100 * mean_where(e4, 'lossmode_frac', rtt=t):.1f} %" for t in rt),
                      partly=finite(lm) and lm <= p["lossmode_max"])


def _ss_cells(d: Data, variant: str, table: str) -> list[tuple[float, int, float, float]]:
    e5, p = d.sim["e5"], d.pub[table]
    out = []
    for R in axis_values(e5, "rate", variant=variant):
        for t in axis_values(e5, "rtt", variant=variant):
            v = _grid(p, R, t)
            if v is not None:
                out.append((R, t, mean_where(e5, "ratio", variant=variant, rate=R, rtt=t), v / 100))
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
    return mean_where(_bo(d, name), col)


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
    rtts = axis_values(h, "rtt")
    ack = {t: mean_where(h, "p50", rtt=t, estimate="ACK rate") for t in rtts}
    veg = {t: mean_where(h, "p50", rtt=t, estimate="Vegas-like") for t in rtts}
    ok = bool(rtts) and all(a <= 1.0 for a in ack.values()) and all(v > 1.0 for t, v in veg.items() if t < 40)
    return Score.test(ok, "median over the link rate, ACK rate " + ", ".join(f"{t} ms {a:.2f}" for t, a in ack.items())
                      + "; Vegas-like " + ", ".join(f"{t} ms {v:.2f}" for t, v in veg.items()))


@SCORERS("CH-16")
def ch16(d: Data) -> Score:
    h, p = d.sim["h4"], d.pub["ch16"]
    v = "hldg-m1m2-linear"
    tests, parts = [], []
    for R in axis_values(h, "rate", variant=v):
        rtts = axis_values(h, "rtt", variant=v)
        sq = [t for t in rtts if mean_where(h, "median_ms", variant=v, rate=R, rtt=t) >= p["standing_ms"]]
        last = max(sq) if sq else None
        want = p["last_rtt_with_queue"].get(R if R in p["last_rtt_with_queue"] else float(R))
        if want is None:
            continue
        i = rtts.index(want) if want in rtts else None
        ok = last is not None and i is not None and abs(rtts.index(last) - i) <= 1
        tests.append((f"{R:g} Mbit/s", ok))
        parts.append(f"{R:g} Mbit/s up to {last} ms (thesis {want})")
    h5 = d.sim["h5"]
    lin, cdg = mean_where(h5, "mean_ms", variant="linear"), mean_where(h5, "mean_ms", variant="cdg")
    rtt0 = p["rtt_ms"]
    if finite(lin, cdg):
        tests.append(("10/2 mean RTT", default_band(lin + rtt0, p["linear_rtt_ms"]) and default_band(cdg + rtt0, p["cdg_rtt_ms"])))
        parts.append(f"10 Mbit/s / 2 ms mean RTT {lin + rtt0:.1f} ms (CDG {cdg + rtt0:.1f} ms)")
    if not tests:
        return Score.too_few("no H4 rate of the thesis at this scale")
    return Score.named(tests, "standing queue (median ≥ " f"{p['standing_ms']} ms): " + "; ".join(parts))


@SCORERS("CH-17")
def ch17(d: Data) -> Score:
    h5, rows = d.sim["h5"], d.pub["table_5_1"]["rows"]
    if not h5.height:
        return Score.too_few("no Table 5.1 ladder run")
    tests, means = [], []
    for r in rows:
        m, u = mean_where(h5, "mean_ms", variant=r["variant"]), mean_where(h5, "util", variant=r["variant"])
        means.append(m)
        tests.append((f"{r['variant']} {_f(m, '.1f')} vs {r['mean']} ± {r['sd']} ms, util {_f(u, '.3f')}",
                      finite(m) and abs(m - r["mean"]) <= r["sd"] and u >= d.pub["table_5_1"]["util_min"]))
    ladder = means[1:]
    order = all(finite(a, b) and b < a for a, b in zip(ladder, ladder[1:]))
    s = Score.named(tests, "HLDG rungs' means " + " → ".join(_f(x, ".1f") for x in ladder) + " ms")
    return _downgrade(s, order, "the ladder's order is not preserved")


@SCORERS("CH-18")
def ch18(d: Data) -> Score:
    h, p = d.sim["h6"], d.pub["ch18"]
    ew, el = mean_where(h, "rtt_ebase_32_ms", variant="w30"), mean_where(h, "rtt_ebase_32_ms", variant="lifetime")
    uw, ul = mean_where(h, "util_late", variant="w30"), mean_where(h, "util_late", variant="lifetime")
    ok = default_band(ew, p["rtt_new_ms"]) and default_band(el, p["rtt_old_ms"]) and uw > ul
    return Score.test(ok, f"RTT_ebase at 32 s: with the window {_f(ew, '.0f')} ms, lifetime minimum {_f(el, '.0f')} ms; "
                      f"utilisation 32-40 s {_f(uw, '.3f')} vs {_f(ul, '.3f')}", partly=uw > ul)


@SCORERS("CH-19")
def ch19(d: Data) -> Score:
    p = d.pub["ch19"]
    h, c = _bo(d, "hldg"), _bo(d, "cdg")
    if not h.height or not c.height:
        return Score.too_few("the HLDG ladder run or the CDG run at 10 Mbit/s / 100 ms is missing at this scale")
    q, tp = mean_where(h, "q60_ms"), mean_where(h, "tput60")
    sh, sc, mh, mc = mean_where(h, "spikes60"), mean_where(c, "spikes60"), mean_where(h, "spike_max_ms"), mean_where(c, "spike_max_ms")
    ok = default_band(q, p["qdelay_ms"]) and default_band(tp, p["tput_mbps"]) and sh <= sc and mh <= mc
    return Score.test(ok, f"first 60 s: HLDG mean queueing delay {_f(q)} ms, {_f(tp)} Mbit/s, {_f(sh, '.1f')} "
                      f"spikes ≥ 15 ms (highest {_f(mh, '.0f')} ms); CDG {_f(sc, '.1f')} spikes (highest {_f(mc, '.0f')} ms)",
                      partly=sh <= sc and mh <= mc)


def _h8_cells(h8):
    out = []
    for R in axis_values(h8, "rate"):
        for t in axis_values(h8, "rtt"):
            uh, uc = mean_where(h8, "util", variant="hldg", rate=R, rtt=t), mean_where(h8, "util", variant="cdg", rate=R, rtt=t)
            out.append((R, t, uh, uc, mean_where(h8, "qdelay_ms", variant="hldg", rate=R, rtt=t)))
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
    u = lambda v, R, t: mean_where(h8, "util", variant=v, rate=R, rtt=t)  # noqa: E731
    tests = []
    rates, rtts = axis_values(h8, "rate"), axis_values(h8, "rtt")
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
    return Score.named(tests)


@SCORERS("CH-22")
def ch22(d: Data) -> Score:
    h, p = d.sim["h9"], d.pub["ch22"]
    gs, rtts, bdps = axis_values(h, "G"), axis_values(h, "rtt"), axis_values(h, "bdp")
    if len(gs) < 2:
        return Score.too_few("one G at this scale")
    s = lambda g, t, b: mean_where(h, "share", G=g, rtt=t, bdp=b)  # noqa: E731
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
    q = [mean_where(h, "qdelay_alone_ms", G=g) for g in gs]
    tests.append(("queueing alone rises with G " + " → ".join(f"{x:.1f}" for x in q), q[-1] > q[0]))
    return Score.named(tests)


@SCORERS("CH-23")
def ch23(d: Data) -> Score:
    h, p = d.sim["h10"], d.pub["ch23"]
    if not h.height:
        return Score.too_few("no H10 run")
    qa, ua = mean_where(h, "qdelay_ms", phase="alone"), mean_where(h, "util", phase="alone")
    da = mean_where(h, "delay_frac", phase="alone")
    le, pr, bk, vp = (mean_where(h, c) for c in ("loss_entry_after_s", "probe_after_loss_s", "delay_after_stop_s", "back_via_probe"))
    lw, qw, sh = mean_where(h, "loss_probe_frac", phase="with CUBIC"), mean_where(h, "qdelay_ms", phase="with CUBIC"), mean_where(h, "share", phase="with CUBIC")
    seq = da == 1.0 and qa < 5 and ua >= 0.95 and le <= p["entry_max_s"] and pr >= p["dwell_s"] and lw > 0.8 and vp == 1.0 and finite(bk)
    ok = seq and p["share"][0] <= sh <= p["share"][1] and qw <= p["queue_ms"]
    return Score.test(ok, f"alone: DELAY {_f(da)} of the time, queue {_f(qa, '.1f')} ms, utilisation {_f(ua, '.3f')}; "
                      f"LOSS {_f(le, '.1f')} s after CUBIC's start, first PROBE {_f(pr, '.1f')} s later, LOSS/PROBE "
                      f"{_f(lw)} of the competition; share {_f(sh, '.3f')}, queue {_f(qw, '.0f')} ms; DELAY again "
                      f"{_f(bk, '.1f')} s after CUBIC stops{' via PROBE' if vp == 1.0 else ''}", partly=seq)


@SCORERS("CH-24")
def ch24(d: Data) -> Score:
    e4 = d.sim["e4"]
    sh = lambda cc, R, t, b: mean_where(e4, "share", cc=cc, rate=R, rtt=t, bdp=b)  # noqa: E731
    fair = d.pub["ch24"]["fair"]
    tests = []
    rates, rtts, bdps = axis_values(e4, "rate", cc="hldg"), axis_values(e4, "rtt", cc="hldg"), axis_values(e4, "bdp", cc="hldg")
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
    return Score.named(tests)


@SCORERS("CH-25")
def ch25(d: Data) -> Score:
    e4, p = d.sim["e4"], d.pub["ch25"]
    g = lambda R, t, b: mean_where(e4, "share", cc="hldg", rate=R, rtt=t, bdp=b) / mean_where(e4, "share", cc="cdg", rate=R, rtt=t, bdp=b)  # noqa: E731
    rates, rtts, bdps = axis_values(e4, "rate", cc="hldg"), axis_values(e4, "rtt", cc="hldg"), axis_values(e4, "bdp", cc="hldg")
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
    return Score.named(tests)


def _ratio_cells(d: Data):
    e3 = d.sim["e3"]
    out = []
    for R in axis_values(e3, "rate", variant="hldg"):
        for t in axis_values(e3, "rtt", variant="hldg"):
            h, c = mean_where(e3, "share", variant="hldg", rate=R, rtt=t), mean_where(e3, "share", variant="cdg", rate=R, rtt=t)
            out.append((R, t, h, c, h / c if finite(h, c) and c > 0 else float("inf")))
    return out


@SCORERS("CH-26")
def ch26(d: Data) -> Score:
    p = d.pub["table_5_2"]
    cells = _share_cells(d.sim["e3"], p, True, variant="hldg")
    rc = _ratio_cells(d)
    inrange = all(p["range"][0] <= o <= p["range"][1] for _, _, o, _ in cells)
    ratio_ok = all(r >= p["min_ratio"] for *_, r in rc)
    s = Score.named([(f"{n} ({100 * o:.0f} vs {100 * v:.0f} %)", g) for n, g, o, v in cells],
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
    if R not in axis_values(h, "rate"):
        return Score.too_few(f"no {R:g}-Mbit/s H15 run at this scale")
    rtts = axis_values(h, "rtt")
    u = lambda cc, t, lo: mean_where(h, "util", cc=cc, rate=R, rtt=t, loss=lo)  # noqa: E731
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
                # ">" must be resolved beyond the run-to-run spread (claims.order_holds)
                runs = {cc: values_where(h, "util", cc=cc, rate=R, rtt=t, loss=lo)
                        for cc in vals}
                tests.append((f"{t} ms {lo * 100:g} % {st['order']} ("
                              + ", ".join(f"{k} {v:.2f}" for k, v in vals.items()) + ")",
                              cl.order_holds(vals, st["order"], runs)))
            if "below" in st:
                for cc in ("hldg", "cdg", "cubic"):
                    tests.append((f"{cc} {t} ms {lo * 100:g} % {u(cc, t, lo):.3f} < {st['below']}", u(cc, t, lo) < st["below"]))
    if not tests:
        return Score.too_few(f"no H15 cell of the claim at this scale")
    return Score.named(tests)


@SCORERS("CH-30", "CH-31", "CH-32", "CH-33")
def ch30_33(d: Data) -> Score:
    # published.yaml keys the statements by claim: CH-30 -> ch30
    return _lossy_tests(d, d.extra["id"].lower().replace("-", ""))


@SCORERS("CH-34")
def ch34(d: Data) -> Score:
    h = d.sim["h15"]
    cells = []
    for R in axis_values(h, "rate"):
        for t in axis_values(h, "rtt"):
            for lo in axis_values(h, "loss"):
                a, b = mean_where(h, "util", cc="hldg", rate=R, rtt=t, loss=lo), mean_where(h, "util", cc="cdg", rate=R, rtt=t, loss=lo)
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
    f, p = select(d.sim["f"], variant="fifo", cc="hldg"), d.pub["table_6_1"]
    rtts = axis_values(f, "rtt")
    if not rtts:
        return Score.too_few("no F1 run")
    j = [mean_where(f, "jain", rtt=t) for t in rtts]
    mm = [mean_where(f, "maxmin", rtt=t) for t in rtts]
    q = [mean_where(f, "qdelay_ms", rtt=t) for t in rtts]
    ok = (min(j) >= p["jain_min"] and _non_increasing(j, 0.005) and _non_increasing(mm, 0.02)
          and max(q) <= p["qdelay_max_ms"] and _non_increasing(q, 0.5))
    return Score.test(ok, "Jain " + ", ".join(f"{t} ms {pm(values_where(f, 'jain', rtt=t), '.3f')}" for t in rtts)
                      + "; max-min " + " → ".join(f"{x:.2f}" for x in mm) + "; queueing " + " → ".join(f"{x:.1f}" for x in q) + " ms",
                      partly=_non_increasing(j, 0.005) and max(q) <= p["qdelay_max_ms"])


@SCORERS("CH-36")
def ch36(d: Data) -> Score:
    f, p = d.sim["f2"], d.pub["table_6_2"]
    rtts = axis_values(f, "rtt")
    if not rtts:
        return Score.too_few("no F2 run")
    j = [mean_where(f, "jain", rtt=t) for t in rtts]
    q = [mean_where(f, "qdelay_ms", rtt=t) for t in rtts]
    lg = [(mean_where(f, "long_mbps", rtt=t), mean_where(f, "short_mbps", rtt=t)) for t in rtts]
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
                ours = mean_where(f, col, variant=a, cc=cc, rtt=t)
                if finite(ours):
                    yield a, t, cc, ours, p[a][i][k]


@SCORERS("CH-37")
def ch37(d: Data) -> Score:
    p = d.pub["table_6_3"]
    cells = [(f"{a} {cc} {t} ms ({o:.3f} vs {v})", o >= p["jain_min"] and abs(o - v) <= p["band"])
             for a, t, cc, o, v in _aqm_cells(d, "table_6_3", "jain")]
    if not cells:
        return Score.too_few("no AQM run at this scale")
    return Score.named(cells)


@SCORERS("CH-38")
def ch38(d: Data) -> Score:
    f, p = d.sim["f"], d.pub["table_6_4"]
    av = {(a, cc): mean_where(f, "util", variant=a, cc=cc) for a in AQMS for cc in CCS3}
    tests = []
    for a in AQMS:
        if not finite(av[(a, "hldg")], av[(a, "cdg")], av[(a, "cubic")]):
            continue
        tests.append((f"{a}: CUBIC highest ({av[(a, 'cubic')]:.3f})", _le(av[(a, "cubic")], max(av[(a, "hldg")], av[(a, "cdg")]))))
        tests.append((f"{a}: HLDG average {av[(a, 'hldg')]:.3f} ≈ {p['hldg_avg'][a] / 100}", default_band(av[(a, "hldg")], p["hldg_avg"][a] / 100, "share")))
        tests.append((f"{a}: CDG average {av[(a, 'cdg')]:.3f} ≈ {p['cdg_avg'] / 100}", default_band(av[(a, "cdg")], p["cdg_avg"] / 100, "share")))
    far = [t for t in axis_values(f, "rtt", variant="pie") if t >= 180]
    if far and all(finite(mean_where(f, "util", variant="pie", cc=cc)) for cc in CCS3):
        h = [mean_where(f, "util", variant="pie", cc="hldg", rtt=t) for t in far]
        c = [mean_where(f, "util", variant="pie", cc="cdg", rtt=t) for t in far]
        u = [mean_where(f, "util", variant="pie", cc="cubic", rtt=t) for t in far]
        tests.append(("PIE ≥ 180 ms HLDG > CDG", all(a > b for a, b in zip(h, c))))
        tests.append(("PIE ≥ 180 ms HLDG close to CUBIC", all(abs(a - b) <= 0.05 for a, b in zip(h, u))))
    if finite(av[("fq_pie", "hldg")], av[("fq_pie", "cubic")]):
        tests.append(("FQ-PIE HLDG ≈ CUBIC", abs(av[("fq_pie", "hldg")] - av[("fq_pie", "cubic")]) <= 0.05 * av[("fq_pie", "cubic")]))
        tests.append(("HLDG best under FQ-PIE", all(_le(av[("fq_pie", "hldg")], av[(a, "hldg")]) for a in AQMS if finite(av[(a, "hldg")]))))
    if not tests:
        return Score.too_few("no AQM run at this scale")
    return Score.named(tests)


@SCORERS("CH-39")
def ch39(d: Data) -> Score:
    p = d.pub["table_6_5"]

    def judge(f, kernel=False):
        dr = lambda a, cc, t=None: mean_where(f, "drop_pct", variant=a, cc=cc, **({"rtt": t} if t else {}))  # noqa: E731
        tests = []
        rt = [t for t in p["rtts"] if t in axis_values(f, "rtt", variant="pie")]
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
    if not select(f, variant="pie").height:
        return Score.too_few("no PIE run at this scale")
    kt = ""
    if d.kernel and "f" in d.kernel and select(d.kernel["f"], variant="pie", cc="cdg").height:
        kf = d.kernel["f"]
        kt = "Linux tcp_cdg (BPF) under PIE: " + ", ".join(
            f"{t} ms CDG {mean_where(kf, 'drop_pct', variant='pie', cc='cdg', rtt=t):.2f} % / CUBIC "
            f"{mean_where(kf, 'drop_pct', variant='pie', cc='cubic', rtt=t):.2f} %" for t in axis_values(kf, "rtt", variant="pie"))
    tests = judge(f)
    levels = [ok for n, ok in tests if n.startswith("PIE CDG ") and "%" in n]
    return _downgrade(Score.named(tests, kernel=kt), all(levels),
                      "CDG's PIE drops at 10/40 ms (printed " + " / ".join(
                          str(p['pie'][i][1]) for i, t in enumerate(p["rtts"]) if t <= 40) + " %) outside the default band")


@SCORERS("CH-40")
def ch40(d: Data) -> Score:
    f, p = d.sim["f4"], d.pub["ch40"]
    v = "hldg-lpcc"
    rtts = axis_values(f, "rtt", variant=v)
    s = {t: mean_where(f, "share", variant=v, rtt=t) for t in rtts}
    if not s:
        return Score.too_few("no F4 run")
    ok = all((x <= p["max_10ms"]) if t == 10 else (x < p["max_other"]) for t, x in s.items())
    return Score.test(ok, "HLDG-LPCC share " + ", ".join(f"{t} ms {pm(values_where(f, 'share', variant=v, rtt=t), '.3f')}" for t in rtts)
                      + f"; TCP-LP {_f(mean_where(f, 'share', variant='lp'), '.3f')}",
                      partly=all(x < 0.5 for x in s.values()))


@SCORERS("CH-41")
def ch41(d: Data) -> Score:
    p = d.pub["ch41"]
    tests = []
    for key, eq in (("e3", {"variant": "hldg"}), ("e4", {"cc": "hldg"})):
        t = select(d.sim[key], **eq)
        for r in t.iter_rows(named=True):
            tag = f"{key} {r['rate']:g}/{r['rtt']}" + (f"/{r['bdp']}" if "bdp" in r else "")
            tests.append((f"{tag} HLDG drops {r['drop0_pct']:.2f} ≤ CUBIC {r['drop1_pct']:.2f} %",
                          not finite(r["drop0_pct"]) or r["drop0_pct"] <= r["drop1_pct"] + 1e-9))
            tests.append((f"{tag} no one starves ({r['share']:.3f})", p["starve"] <= r["share"] <= 1 - p["starve"]))
    h10 = select(d.sim["h10"], phase="with CUBIC")
    for r in h10.iter_rows(named=True):
        tests.append((f"h10 no one starves ({r['share']:.3f})", p["starve"] <= r["share"] <= 1 - p["starve"]))
    f = d.sim["f"]
    for a in axis_values(f, "variant"):
        for t in axis_values(f, "rtt", variant=a):
            h, c = mean_where(f, "drop_pct", variant=a, cc="hldg", rtt=t), mean_where(f, "drop_pct", variant=a, cc="cubic", rtt=t)
            if finite(h, c):
                tests.append((f"{a} {t} ms HLDG drops {h:.2f} ≤ CUBIC {c:.2f} %", h <= c))
            mm = mean_where(f, "maxmin", variant=a, cc="hldg", rtt=t)
            if finite(mm):
                tests.append((f"{a} {t} ms no HLDG flow starves (max-min {mm:.2f})", mm >= p["maxmin"]))
    if not tests:
        return Score.too_few("no shared-bottleneck run")
    k = sum(ok for _, ok in tests)
    bad = [n for n, ok in tests if not ok]
    return Score.test(k == len(tests), f"{k} of {len(tests)} run checks hold" + ("; misses: " + ", ".join(bad[:8]) if bad else ""),
                      partly=k >= 0.9 * len(tests))


