"""The BBR-vs-CUBIC report's claims (claims.yaml, BC-1 … BC-21), one scorer each, judged on the
per-run tables that ``bbr_cubic.measure`` builds (simulator and kernel)."""
from __future__ import annotations

import math

import polars as pl

from .bbr_cubic import RTPROP, crossing, diff90, share_curve
from .claims import NOT, PARTLY, REPRODUCED, Data, Score, Scorers, band_1_5, finite, pm, pm_text, welch

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


def _shallow_loss(d: Data, variant: str, claim: str):
    """The runs of ``variant`` at 80 Mbit/s and 0.5 BDP (or the "too few runs" score) and the
    default band of the claim's published loss rate."""
    c, few = _at80(d, variant, 0.5)
    return c, few, band_1_5(d.pub[claim]["loss_pct"])


def _loss_cell(d, variant, r, b) -> tuple[float, float]:
    c = _cell(d.sim["main"], variant, rate=r, bdp=b)
    return _avg(c, "loss_pct"), _avg(c, "loss_frac")


@SCORERS("BC-7")
def _bc7(d: Data) -> Score:
    c, few, (lo, hi) = _shallow_loss(d, "bbr-4", "BC-7")
    if few:
        return few
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
    c, few, (lo, hi) = _shallow_loss(d, "mix-2+2", "BC-11")
    if few:
        return few
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
    trial-to-trial noise: a rise that Welch's test resolves (``welch``, as the orderings of the
    other studies) is an inversion beyond the noise; one trial per buffer cannot tell."""
    ok, txt, unjudged = [], [], False
    for r in _rates(d):
        m = d.sim["main"].filter((pl.col("variant") == "mix-2+2") & (pl.col("rate_mbps") == r)
                                 & (pl.col("bdp") >= 1.5))
        g = m.group_by("bdp").agg(pl.col("share")).sort("bdp")
        if g.height < 3:
            continue
        pts = [(b, sum(v) / len(v), v) for b, v in g.iter_rows()]
        rises, big = 0, 0
        for (_, ma, va), (_, mb, vb) in zip(pts, pts[1:]):
            if mb <= ma:
                continue
            rises += 1
            diff, hw = welch(vb, va)
            unjudged |= not finite(hw)
            big += finite(hw) and diff > hw
        ok.append(pts[-1][1] < pts[0][1] and rises <= 1 and big == 0)
        txt.append(f"{r:g} Mbit/s: " + " → ".join(f"{x:.2f}" for _, x, _ in pts)
                   + f" ({rises} rise{'' if rises == 1 else 's'}, {big} beyond the trials' noise)")
    if not ok:
        return Score.too_few("2+2 ran at fewer than three buffers ≥ 1.5 BDP")
    if unjudged and all(ok):
        return Score.too_few("one trial per buffer: a rise cannot be told from the noise")
    kt = ""
    if d.kernel and d.kernel.get("main") is not None:
        kp = [(b, x) for b, x in share_curve(d.kernel["main"], "mix-2+2") if b >= 1.5]
        if kp:
            kr = sum(b > a for (_, a), (_, b) in zip(kp, kp[1:]))
            kt = ("2+2 at 80 Mbit/s, BBR share over " + ", ".join(f"{b:g}" for b, _ in kp)
                  + " BDP: " + " → ".join(f"{x:.2f}" for _, x in kp)
                  + f" ({kr} rise{'' if kr == 1 else 's'}, one run per buffer; today's BBR)")
    return Score.test(all(ok), "BBR share over " + ", ".join(
        f"{b:g}" for b, _, _ in pts) + " BDP: " + "; ".join(txt), kernel=kt)


def _crossing_claim(d: Data, variant: str, lo_b: float, hi_b: float, paper: float) -> tuple[bool, str, float | None]:
    r = _rate80(d)
    m = d.sim["main"]
    s_lo = _avg(_cell(m, variant, rate=r, bdp=lo_b), "share")
    s_hi = _avg(_cell(m, variant, rate=r, bdp=hi_b), "share")
    cross = crossing(share_curve(m, variant, r)) if r is not None else None
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
        kc = crossing(share_curve(k, "mix-2+2"))
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
        diff, hw = diff90(d.sim["main"], "shallow-4", "bbr-4", "loss_pct", bdp=b)
        if not (finite(hw) and finite(diff)):
            return Score.too_few(f"one trial per buffer: no interval of the loss difference at {b} BDP")
        res.append((diff + hw < 0, f"{b} BDP: {pm_text(diff, hw, '+.2f')}"))
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
    cb = crossing(share_curve(d.sim["main"], "mix-2+2", 80.0))
    below = cs is not None and cb is not None and cs < cb
    return Score.test(ok and below, txt + (f"; BBR's {cb:.2f} BDP" if cb else ""), partly=below)
