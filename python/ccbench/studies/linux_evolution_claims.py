"""The Linux TCP evolution thesis's claims (LE-1 … LE-27, examples/studies/linux-
evolution/claims.yaml), one scorer each (ccbench.studies.claims); the per-run tables come from
ccbench.studies.linux_evolution.
"""
from __future__ import annotations

import math

import polars as pl

from .claims import Data, Score, Scorers, band_1_5, default_band, finite
from .linux_evolution import KERNELS, PROFS, SIM2_CCS, Z90


SCORERS = Scorers()


# ---------------------------------------------------------------------------- helpers

def _st(df: pl.DataFrame | None, col: str, **eq) -> tuple[float, float, int, float]:
    """mean, 90 % half-width (1.645 σ/√n, the thesis's), n, σ of ``col`` over the runs
    matching ``eq``; nan where fewer than two runs (no interval)."""
    nan = float("nan")
    if df is None or not df.height or col not in df.columns:
        return nan, nan, 0, nan
    f = df
    for k, v in eq.items():
        f = f.filter(pl.col(k) == v)
    xs = [x for x in f[col].to_list() if x is not None and not math.isnan(x)]
    n = len(xs)
    if not n:
        return nan, nan, 0, nan
    m = sum(xs) / n
    if n < 2:
        return m, nan, 1, nan
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, Z90 * sd / math.sqrt(n), n, sd


def _has(df: pl.DataFrame | None, **need) -> bool:
    """Every value of every listed column ran (``cc=[...]`` etc.)."""
    if df is None or not df.height:
        return False
    for col, vals in need.items():
        got = set(df[col].to_list())
        if not all(v in got for v in vals):
            return False
    return True


def _missing(what: str) -> Score:
    return Score.too_few(f"not run at this scale: needs {what}")


def _f(v: float) -> str:
    """Three significant digits: seconds and kB/s on the CSMA channel, milliseconds and MB/s
    on the full-duplex one."""
    if not finite(v):
        return "–"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _k(pr: str) -> str:
    return KERNELS.get(pr, pr)


def _best(df: pl.DataFrame, cc: str, x, col: str, profs=PROFS, low: bool = True):
    """The profile with the best mean of ``col`` (lowest time / highest goodput) and its
    statistics."""
    st = {pr: _st(df, col, cc=cc, x=x, profile=pr) for pr in profs}
    st = {pr: v for pr, v in st.items() if v[2]}
    if not st:
        return None, (float("nan"),) * 2 + (0, float("nan"))
    b = (min if low else max)(st, key=lambda pr: st[pr][0])
    return b, st[b]


def _overlap(m: float, h: float, pm_: float, ph: float) -> bool:
    """Our mean inside the printed interval, or the two intervals overlap."""
    if not finite(m, pm_, ph):
        return False
    if abs(m - pm_) <= ph:
        return True
    return finite(h) and m - h <= pm_ + ph and pm_ - ph <= m + h


def _beside(fd: tuple | None) -> str:
    """The full-duplex reading of the same test, printed beside the verdict."""
    if fd is None:
        return ""
    ok, _, txt = fd
    return f" — full duplex (beside, not scored): {'holds' if ok else 'fails'}: {txt}"


def _ordering(d: Data, judge, t1: str, *, need: dict) -> Score:
    """Score an ordering on the CSMA table ``t1`` with the full-duplex one beside it:
    ``judge(table, fd) -> (passed, partly, text)``; with ``fd`` it leaves out the absolute
    values (kB/s, s), which only the CSMA channel shares with the thesis."""
    csma = d.sim.get(t1)
    if not _has(csma, **need):
        return _missing("; ".join(f"{k} {', '.join(map(str, v))}" for k, v in need.items())
                        + " on the CSMA channel")
    ok, partly, txt = judge(csma)
    fd_t = d.sim.get("fd" + t1[-1])
    fd = judge(fd_t, True) if _has(fd_t, **need) else None
    return Score.test(ok, "CSMA: " + txt + _beside(fd), partly=partly)


# ---------------------------------------------------------------------------- simulation 1

ALL13 = ("reno", "bic", "cubic", "westwood", "highspeed", "hybla", "htcp", "vegas", "veno",
         "scalable", "lp", "yeah", "illinois")


@SCORERS("LE-1")
def le1(d: Data) -> Score:
    pub = d.pub["sim1"]

    def judge(t, fd=False):
        best = {cc: _best(t, cc, 0, "goodput_kBps", low=False) for cc in ALL13}
        g = {cc: v[1][0] for cc, v in best.items()}
        order = sorted(g, key=g.get)
        rest = [g[cc] for cc in ALL13 if cc not in ("hybla", "lp")]
        spread = max(rest) / min(rest)
        band = [] if fd else [cc for cc in ALL13
                              if not default_band(g[cc], pub[cc]["goodput_kBps"])]
        rank = order[:2] == ["hybla", "lp"]
        ok = rank and spread <= 1.04 and not band
        txt = (f"lowest {order[0]} {_f(g[order[0]])}, then {order[1]} {_f(g[order[1]])} kB/s "
               f"(hybla {_f(g['hybla'])}, lp {_f(g['lp'])}); the other 11 "
               f"{_f(min(rest))}-{_f(max(rest))}, max/min {spread:.3f} (paper 1.040)"
               + ("" if fd else "; " + (
                   f"outside the default band of the printed value: {', '.join(band)}" if band
                   else "every value in the default band of the printed one")))
        return ok, set(order[:2]) == {"hybla", "lp"}, txt
    s = _ordering(d, judge, "csma1", need={"cc": ALL13, "x": [0]})
    if d.kernel is not None and d.kernel.height:
        kg = {cc: _st(d.kernel, "goodput_kBps", cc=cc, x=0)[0] for cc in ALL13
              if _st(d.kernel, "goodput_kBps", cc=cc, x=0)[2]}
        if kg:
            ko = sorted(kg, key=kg.get)
            s.kernel = ("full duplex, this machine's Linux: lowest " + ", ".join(
                f"{cc} {kg[cc]:.0f}" for cc in ko[:3]) + " kB/s")
    return s


@SCORERS("LE-2")
def le2(d: Data) -> Score:
    t = d.sim["csma1"]
    if not _has(t, cc=ALL13, profile=["linux-2.6.36"], x=[0]):
        return _missing("all 13 algorithms on linux-2.6.36 (CSMA)")
    pt = d.pub["sim1_times"]
    tm = {cc: _st(t, "delay_s", cc=cc, x=0, profile="linux-2.6.36")[0] for cc in ALL13}
    others = sorted(v for cc, v in tm.items() if cc != "hybla")
    med = others[len(others) // 2]
    lo, hi = band_1_5(pt["others_s"][0])[0], band_1_5(pt["others_s"][1])[1]
    out = [cc for cc in ALL13 if cc != "hybla" and not lo <= tm[cc] <= hi]
    hlo, hhi = band_1_5(pt["hybla_s"])
    ratio = tm["hybla"] / med
    ok = ratio >= 2 and not out and hlo <= tm["hybla"] <= hhi
    slowest = max(tm, key=tm.get)
    return Score.test(ok, (
        f"CSMA, linux-2.6.36: hybla {tm['hybla']:.0f} s, the other 12 {others[0]:.0f}-"
        f"{others[-1]:.0f} s (median {med:.0f}): ratio {ratio:.2f} (claim ≥ 2); the slowest is "
        f"{slowest} ({tm[slowest]:.0f} s)"
        + (f"; outside {lo:.0f}-{hi:.0f} s: {', '.join(out)}" if out else "")),
        partly=slowest == "hybla")


@SCORERS("LE-3")
def le3(d: Data) -> Score:
    four = d.pub["sim1_slow_four"]

    def judge(t, fd=False):
        tm = {cc: sum(_st(t, "delay_s", cc=cc, x=0, profile=pr)[0] for pr in PROFS) / len(PROFS)
              for cc in ALL13}
        order = sorted(tm, key=tm.get, reverse=True)
        nine = [tm[cc] for cc in ALL13 if cc not in four]
        a = set(order[:4]) == set(four)
        b = max(nine) / min(nine) <= 1.10
        txt = (f"slowest four by mean time over the kernels: " + ", ".join(
            f"{cc} {_f(tm[cc])} s" for cc in order[:4]) + f" (claim {', '.join(four)}); the "
            f"other nine {_f(min(nine))}-{_f(max(nine))} s, max/min {max(nine) / min(nine):.3f} "
            "(claim ≤ 1.10)")
        return a and b, a != b, txt
    return _ordering(d, judge, "csma1", need={"cc": ALL13, "profile": PROFS, "x": [0]})


@SCORERS("LE-4")
def le4(d: Data) -> Score:
    three = ("yeah", "scalable", "hybla")

    def judge(t, fd=False):
        parts, slow, band = [], 0, True
        for cc in three:
            tm = {pr: _st(t, "delay_s", cc=cc, x=0, profile=pr)[0] for pr in PROFS}
            worst = max(tm, key=tm.get)
            slow += worst == "linux-3.10"
            b = default_band(tm["linux-3.12"], tm["linux-3.7"])
            band &= b
            parts.append(f"{cc} " + "/".join(f"{_f(tm[pr])}" for pr in PROFS)
                         + f" s (slowest {_k(worst)})")
        txt = ("time on 2.6.36/3.7/3.10/3.12: " + "; ".join(parts)
               + f"; 3.10 slowest for {slow} of 3, 3.12 within the band of 3.7: "
               + ("yes" if band else "no"))
        return slow == 3 and band, slow >= 2 and band, txt
    return _ordering(d, judge, "csma1", need={"cc": three, "profile": PROFS, "x": [0]})


@SCORERS("LE-5")
def le5(d: Data) -> Score:
    def judge(t, fd=False):
        g = lambda cc, pr: _st(t, "goodput_kBps", cc=cc, x=0, profile=pr)  # noqa: E731
        sc = {pr: g("scalable", pr) for pr in PROFS}
        on26 = {cc: g(cc, "linux-2.6.36") for cc in ALL13}
        on37 = {cc: g(cc, "linux-3.7") for cc in ALL13}
        o26 = sorted(on26, key=lambda cc: on26[cc][0])
        v37 = sorted(v[0] for v in on37.values())
        most37 = max(sum(1 for y in v37 if x <= y <= x * 7.4 / 7) for x in v37)
        sd37 = sorted(v[3] for v in on37.values())
        med_sd = sd37[len(sd37) // 2]
        parts = {
            "scalable 2.6.36 ≈ 3.7 > 3.10, 3.12": (
                abs(sc["linux-2.6.36"][0] - sc["linux-3.7"][0])
                <= 0.05 * max(sc["linux-2.6.36"][0], sc["linux-3.7"][0])
                and min(sc["linux-2.6.36"][0], sc["linux-3.7"][0])
                > max(sc["linux-3.10"][0], sc["linux-3.12"][0])),
            "scalable's σ lowest on 2.6.36": min(sc, key=lambda pr: sc[pr][3]) == "linux-2.6.36",
            "2.6.36: hybla, lp lowest two": set(o26[:2]) == {"hybla", "lp"},
            "2.6.36: scalable, htcp, cubic, veno top four":
                set(o26[-4:]) == {"scalable", "htcp", "cubic", "veno"},
            "2.6.36: hybla's σ largest": max(on26, key=lambda cc: on26[cc][3]) == "hybla",
            "3.7: hybla lowest, ≥ 7 of 13 within 7-7.4 kB/s's ratio":
                min(on37, key=lambda cc: on37[cc][0]) == "hybla" and most37 >= 7,
            "3.7: reno's and westwood's σ above the median":
                on37["reno"][3] > med_sd and on37["westwood"][3] > med_sd,
        }
        k = sum(parts.values())
        txt = (f"{k} of {len(parts)} hold (" + "; ".join(
            f"{name}: {'yes' if v else 'no'}" for name, v in parts.items())
            + f"); scalable " + "/".join(f"{sc[pr][0]:.2f}" for pr in PROFS)
            + f" kB/s; 2.6.36 lowest {o26[0]}, {o26[1]}, top four {', '.join(o26[-4:])}; "
            f"3.7: {most37} of 13 within a 7.4/7 ratio")
        return k == len(parts), k >= 4, txt
    return _ordering(d, judge, "csma1", need={"cc": ALL13, "profile": PROFS, "x": [0]})


@SCORERS("LE-6")
def le6(d: Data) -> Score:
    t = d.sim["csma1"]
    losses = sorted(x for x in set(t["x"].to_list()) if x > 0) if t.height else []
    if not losses or not _has(t, x=[0]):
        return _missing("random loss runs on the CSMA channel")
    k = n = 0
    worst = (0.0, "")
    for cc in dict.fromkeys(t["cc"].to_list()):
        for pr in dict.fromkeys(t["profile"].to_list()):
            base = {c: _st(t, c, cc=cc, x=0, profile=pr) for c in ("goodput_kBps", "delay_s")}
            for x in losses:
                ok = True
                for c, (m0, h0, _, _) in base.items():
                    m = _st(t, c, cc=cc, x=x, profile=pr)[0]
                    if not finite(m, m0):
                        continue
                    dev = abs(m - m0)
                    ok &= dev <= 0.10 * m0 or (finite(h0) and dev <= h0)
                    if c == "goodput_kBps" and dev / m0 > worst[0]:
                        worst = (dev / m0,
                                 f"{cc} {_k(pr)} {x * 100:g} %: {m0:.2f} → {m:.2f} kB/s")
                k += ok
                n += 1
    fd = d.sim.get("fd1")
    fdt = ""
    if _has(fd, cc=["reno"], profile=["linux-3.12"], x=[0, losses[0]]):
        a = _st(fd, "goodput_kBps", cc="reno", x=0, profile="linux-3.12")[0]
        b = _st(fd, "goodput_kBps", cc="reno", x=losses[0], profile="linux-3.12")[0]
        fdt = (f" — full duplex (beside, not scored): {losses[0] * 100:g} % loss takes Reno on "
               f"3.12 from {a:.0f} to {b:.0f} kB/s")
    return Score.test(k == n, f"CSMA: {k} of {n} (algorithm, kernel, loss) cells within the "
                      f"0 % runs' interval or ±10 % in goodput and time; largest goodput change "
                      f"{worst[0] * 100:.0f} % ({worst[1]})" + fdt, partly=2 * k >= n)


@SCORERS("LE-7")
def le7(d: Data) -> Score:
    t = d.sim["csma1"]
    if not _has(t, cc=["yeah", "reno"], profile=["linux-3.10"], x=[0]):
        return _missing("yeah and reno on linux-3.10 (CSMA)")
    pub = d.pub["sim1_retrans_310"]
    sh = {cc: _st(t, "retrans_share", cc=cc, x=0, profile="linux-3.10")[0] * 100
          for cc in ("yeah", "reno")}
    ok_each = {cc: default_band(sh[cc], pub[cc]["share_pct"], "loss") for cc in sh}
    diff, pdiff = sh["yeah"] - sh["reno"], pub["yeah"]["share_pct"] - pub["reno"]["share_pct"]
    ok = all(ok_each.values()) and default_band(diff, pdiff)
    tr = d.sim.get("traces")
    cw = ""
    if tr is not None and tr.height:
        cw = "; cwnd p10/p50/p90 " + ", ".join(
            f"{cc} " + "/".join(f"{_st(tr, c, cc=cc)[0]:.0f}" for c in
                                ("cwnd_p10", "cwnd_p50", "cwnd_p90"))
            for cc in ("yeah", "reno") if _st(tr, "cwnd_p50", cc=cc)[2])
    return Score.test(ok, (
        f"CSMA, linux-3.10: retransmitted yeah {sh['yeah']:.2f} % (paper 30.77), reno "
        f"{sh['reno']:.2f} % (paper 10.93), difference {diff:.2f} points (paper {pdiff:.2f})"
        + cw + " (paper: yeah bursts between 20 and 10, reno about 6)"),
        partly=sh["yeah"] > sh["reno"])


@SCORERS("LE-8")
def le8(d: Data) -> Score:
    def rng(tr, cc):
        if tr is None or not tr.height or cc not in set(tr["cc"].to_list()):
            return None
        f = tr.filter(pl.col("cc") == cc)
        return float((f["rtt_p95_ms"] - f["rtt_p5_ms"]).mean())
    h, v = rng(d.sim.get("traces"), "hybla"), rng(d.sim.get("traces"), "veno")
    if h is None or v is None:
        return _missing("hybla and veno on linux-3.10 (CSMA)")
    fh, fv = rng(d.sim.get("fd_traces"), "hybla"), rng(d.sim.get("fd_traces"), "veno")
    fd = (f" — full duplex (beside, not scored): hybla {fh:.1f} ms, veno {fv:.1f} ms"
          if fh is not None and fv is not None else "")
    ratio = h / v if v > 0 else float("inf")
    return Score.test(ratio >= 2, (
        f"CSMA, linux-3.10: smoothed-RTT range (p95 − p5) hybla {h:.0f} ms, veno {v:.0f} ms, "
        f"ratio {ratio:.2f} (claim ≥ 2)" + fd), partly=h > v)


# ---------------------------------------------------------------------------- simulation 2

def _delay_cells(d: Data, n: int) -> Score:
    t = d.sim["csma2"]
    pub = d.pub["sim2_delay"].get(n, {})
    garbled = d.pub.get("sim2_garbled", {}).get(n, {})
    k = tot = 0
    ratios, bad = [], []
    for cc, per in pub.items():
        for kv, (pm_, ph) in per.items():
            pr = next(p for p, v in KERNELS.items() if v == kv)
            m, h, cnt, _ = _st(t, "delay_s", cc=cc, x=n, profile=pr)
            if cnt < 2:
                continue
            tot += 1
            ok = (default_band(m, pm_) if kv in garbled.get(cc, []) else _overlap(m, h, pm_, ph))
            k += ok
            ratios.append(m / pm_)
            if not ok:
                bad.append(f"{cc} {kv} {m:.0f} ± {h:.0f} vs {pm_:g} ± {ph:g}")
    if not tot:
        return Score.cells(0, 0, f"no cell of N = {n} ran with two repeats or more (CSMA)")
    ratios.sort()
    return Score.cells(k, tot, (
        f"CSMA, ours ÷ paper {ratios[0]:.2f}-{ratios[-1]:.2f} (median "
        f"{ratios[len(ratios) // 2]:.2f})" + (f"; e.g. {'; '.join(bad[:3])} s" if bad else "")))


def _goodput_cells(d: Data, n: int) -> Score:
    t = d.sim["csma2"]
    pub = d.pub["sim2_goodput"].get(n, {})
    k = tot = same = 0
    parts = []
    for cc, p in pub.items():
        pm_, ph = p["goodput_kBps"]
        need = [pr for pr in PROFS if _st(t, "goodput_kBps", cc=cc, x=n, profile=pr)[2] >= 2]
        if not need:
            continue
        b, (m, h, _, _) = _best(t, cc, n, "goodput_kBps", profs=need, low=False)
        tot += 1
        ok = _overlap(m, h, pm_, ph)
        k += ok
        same += _k(b) == p["best_kernel"]
        parts.append(f"{cc} {m:.2f} ± {h:.2f} ({_k(b)}) vs {pm_:g} ± {ph:g} ({p['best_kernel']})"
                     + ("" if ok else " ✗"))
    if not tot:
        return Score.cells(0, 0, f"no algorithm at N = {n} ran with two repeats or more (CSMA)")
    return Score.cells(k, tot, f"CSMA, kB/s: {'; '.join(parts)}; the best profile is the "
                               f"thesis's best kernel for {same} of {tot}")


for _n, (_d, _g) in {2: ("LE-10", "LE-11"), 4: ("LE-12", "LE-13"), 6: ("LE-14", "LE-15"),
                     8: ("LE-16", "LE-17")}.items():
    SCORERS(_d)(lambda d, n=_n: _delay_cells(d, n))
    SCORERS(_g)(lambda d, n=_n: _goodput_cells(d, n))


def _bk_delay(t: pl.DataFrame, cc: str, n: int) -> float:
    return _best(t, cc, n, "delay_s")[1][0]


def _bk_goodput(t: pl.DataFrame, cc: str, n: int) -> float:
    return _best(t, cc, n, "goodput_kBps", low=False)[1][0]


def _ns(t: pl.DataFrame) -> list:
    return sorted(set(t["x"].to_list()))


@SCORERS("LE-18")
def le18(d: Data) -> Score:
    def judge(t, fd=False):
        ns = _ns(t)
        up, parts, ratio = True, [], {}
        for cc in SIM2_CCS:
            v = [_bk_delay(t, cc, n) for n in ns]
            for (a, x), (b, y) in zip(zip(ns, v), zip(ns[1:], v[1:])):
                if not y > x and not (cc == "htcp" and (a, b) == (6, 8)):
                    up = False
            ratio[cc] = v[-1] / v[0]
            parts.append(f"{cc} " + "/".join(f"{_f(x)}" for x in v))
        top = max(ratio, key=ratio.get)
        txt = (f"best-profile time at N = {'/'.join(map(str, ns))}: " + "; ".join(parts)
               + f" s; increasing for every algorithm: {'yes' if up else 'no'}; N{ns[-1]}/N{ns[0]} "
               "ratio largest for " + f"{top} ({ratio[top]:.1f}; lp {ratio['lp']:.1f})")
        return up and top == "lp", up, txt
    return _ordering(d, judge, "csma2", need={"cc": SIM2_CCS, "x": [2, 8]})


@SCORERS("LE-19")
def le19(d: Data) -> Score:
    pub = d.pub["sim2_goodput_t511"]

    def judge(t, fd=False):
        ns = _ns(t)
        fall, band, parts = True, True, []
        for cc in SIM2_CCS:
            g2, g8 = _bk_goodput(t, cc, 2), _bk_goodput(t, cc, 8)
            fall &= g8 < g2
            drops = [(m, g2 - _bk_goodput(t, cc, m), pub[cc][2] - pub[cc][m])
                     for m in (4, 8) if m in ns]
            band &= fd or all(default_band(a, b) for _, a, b in drops)
            parts.append(f"{cc} " + ", ".join(
                f"2→{m} −{_f(a)}" + ("" if fd else f" (paper −{b:.2f})") for m, a, b in drops))
        txt = ("best-profile goodput drops, kB/s: " + "; ".join(parts)
               + f"; lower at N = 8 for every algorithm: {'yes' if fall else 'no'}")
        return fall and band, fall, txt
    return _ordering(d, judge, "csma2", need={"cc": SIM2_CCS, "x": [2, 8]})


def _fastest(t, n, pr):
    tm = {cc: _st(t, "delay_s", cc=cc, x=n, profile=pr) for cc in SIM2_CCS}
    tm = {cc: v for cc, v in tm.items() if v[2]}
    return min(tm, key=lambda cc: tm[cc][0]), tm


@SCORERS("LE-20")
def le20(d: Data) -> Score:
    want = {"linux-2.6.36": "cubic", "linux-3.7": "cubic", "linux-3.10": "cubic",
            "linux-3.12": "illinois"}

    def judge(t, fd=False):
        hits, cub, parts = 0, 0, []
        for pr, w in want.items():
            f, tm = _fastest(t, 2, pr)
            hits += f == w
            cub += f == "cubic" and w == "cubic"
            m, h = tm[f][:2]
            parts.append(f"{_k(pr)} {f} {_f(m)} ± {_f(h)} s"
                         + ("" if f == w else f" (claim {w} {_f(tm[w][0])} ± {_f(tm[w][1])})"))
        return hits == 4, cub >= 2, "fastest at N = 2: " + "; ".join(parts)
    return _ordering(d, judge, "csma2", need={"cc": SIM2_CCS, "x": [2], "profile": PROFS})


@SCORERS("LE-21")
def le21(d: Data) -> Score:
    def judge(t, fd=False):
        ns = _ns(t)
        last = tot = 0
        miss = []
        for n in ns:
            dl = {cc: _bk_delay(t, cc, n) for cc in SIM2_CCS}
            gp = {cc: _bk_goodput(t, cc, n) for cc in SIM2_CCS}
            a, b = max(dl, key=dl.get) == "lp", min(gp, key=gp.get) == "lp"
            last += a + b
            tot += 2
            if not a:
                miss.append(f"N = {n} slowest {max(dl, key=dl.get)}")
            if not b:
                miss.append(f"N = {n} lowest goodput {min(gp, key=gp.get)}")
        return last == tot, 2 * last >= tot, (f"lp last in {last} of {tot} rankings (time and "
                                              f"goodput at N = {'/'.join(map(str, ns))})"
                                              + (": " + ", ".join(miss) if miss else ""))
    return _ordering(d, judge, "csma2", need={"cc": SIM2_CCS, "x": [2, 8]})


def _kernel_tally(t, n, ccs=SIM2_CCS):
    best, worst = {}, {}
    for cc in ccs:
        tm = {pr: _st(t, "delay_s", cc=cc, x=n, profile=pr)[0] for pr in PROFS}
        best[cc], worst[cc] = min(tm, key=tm.get), max(tm, key=tm.get)
    return best, worst


def _count(m: dict, pr: str) -> int:
    return sum(1 for v in m.values() if v == pr)


@SCORERS("LE-22")
def le22(d: Data) -> Score:
    def judge(t, fd=False):
        best, worst = _kernel_tally(t, 2)
        w, b = _count(worst, "linux-3.12"), _count(best, "linux-2.6.36")
        return (w >= 5 and b >= 3, (w >= 5) != (b >= 3),
                f"N = 2: 3.12 the slowest for {w} of 6 (claim ≥ 5), 2.6.36 the fastest for {b} "
                f"of 6 (claim ≥ 3); fastest "
                + ", ".join(f"{cc} {_k(v)}" for cc, v in best.items()))
    return _ordering(d, judge, "csma2", need={"cc": SIM2_CCS, "x": [2], "profile": PROFS})


@SCORERS("LE-23")
def le23(d: Data) -> Score:
    def judge(t, fd=False):
        bk = {cc: _bk_delay(t, cc, 4) for cc in SIM2_CCS}
        order = sorted(bk, key=bk.get)
        _, worst = _kernel_tally(t, 4)
        w = _count(worst, "linux-3.12")
        a = order[0] == "cubic" and order[4] == "veno"
        return (a and w >= 4, a != (w >= 4),
                "N = 4 best-profile ranking " + ", ".join(f"{cc} {_f(bk[cc])}" for cc in order)
                + f" s (claim cubic first, veno fifth); 3.12 the slowest for {w} of 6 "
                "(claim ≥ 4)")
    return _ordering(d, judge, "csma2", need={"cc": SIM2_CCS, "x": [4], "profile": PROFS})


@SCORERS("LE-24")
def le24(d: Data) -> Score:
    def judge(t, fd=False):
        bk = {cc: _bk_delay(t, cc, 6) for cc in SIM2_CCS}
        order = sorted(bk, key=bk.get)
        best, worst = _kernel_tally(t, 6)
        b, w = _count(best, "linux-2.6.36"), _count(worst, "linux-3.12")
        parts = [order[0] == "cubic", order[-1] == "lp", b >= 4, w >= 5]
        k = sum(parts)
        return (k == 4, k >= 2,
                "N = 6 best-profile ranking " + ", ".join(f"{cc} {_f(bk[cc])}" for cc in order)
                + f" s; 2.6.36 the fastest for {b} of 6 (claim ≥ 4), 3.12 the slowest for {w} "
                "(claim ≥ 5)")
    return _ordering(d, judge, "csma2", need={"cc": SIM2_CCS, "x": [6], "profile": PROFS})


@SCORERS("LE-25")
def le25(d: Data) -> Score:
    def judge(t, fd=False):
        _, c = _best(t, "cubic", 8, "delay_s")
        _, h = _best(t, "htcp", 8, "delay_s")
        ov = finite(c[1], h[1]) and c[0] - c[1] <= h[0] + h[1] and h[0] - h[1] <= c[0] + c[1]
        bk = {cc: _bk_delay(t, cc, 8) for cc in SIM2_CCS}
        lp_last = max(bk, key=bk.get) == "lp"
        best, _ = _kernel_tally(t, 8)
        top = max(_count(best, pr) for pr in PROFS)
        k = ov + lp_last + (top <= 3)
        return (k == 3, k >= 2,
                f"N = 8: cubic {_f(c[0])} ± {_f(c[1])} s, htcp {_f(h[0])} ± {_f(h[1])} s "
                f"(intervals overlap: {'yes' if ov else 'no'}); slowest {max(bk, key=bk.get)}; "
                f"fastest profile " + ", ".join(f"{cc} {_k(v)}" for cc, v in best.items())
                + f" (at most {top} of 6 for one profile; claim ≤ 3)")
    return _ordering(d, judge, "csma2", need={"cc": SIM2_CCS, "x": [8], "profile": PROFS})


def _pub_tally(pub: dict) -> tuple[dict, dict, int, int]:
    """The thesis's own tallies over Tables 5.2/5.4/5.6/5.8: fastest and slowest kernel per
    (N, algorithm), and in how many cells the fastest's interval clears the runner-up's."""
    best, worst, clear, cells = {}, {}, 0, 0
    for n, per in pub["sim2_delay"].items():
        for cc, kv in per.items():
            o = sorted(kv, key=lambda k: kv[k][0])
            best[o[0]] = best.get(o[0], 0) + 1
            worst[o[-1]] = worst.get(o[-1], 0) + 1
            clear += kv[o[0]][0] + kv[o[0]][1] < kv[o[1]][0] - kv[o[1]][1]
            cells += 1
    return best, worst, clear, cells


@SCORERS("LE-26")
def le26(d: Data) -> Score:
    pb, pw, pclear, pcells = _pub_tally(d.pub)

    def judge(t, fd=False):
        best, worst, clear, cells = {}, {}, 0, 0
        for n in _ns(t):
            for cc in SIM2_CCS:
                st = {pr: _st(t, "delay_s", cc=cc, x=n, profile=pr) for pr in PROFS}
                o = sorted(st, key=lambda pr: st[pr][0])
                best[o[0]] = best.get(o[0], 0) + 1
                worst[o[-1]] = worst.get(o[-1], 0) + 1
                (m0, h0), (m1, h1) = st[o[0]][:2], st[o[1]][:2]
                clear += finite(h0, h1) and m0 + h0 < m1 - h1
                cells += 1

        def plural(m, pr):
            return m.get(pr, 0) > max([v for k, v in m.items() if k != pr] or [0])
        a, b = plural(best, "linux-2.6.36"), plural(worst, "linux-3.12")
        fmt_ = lambda m: ", ".join(f"{_k(k)} {m.get(k, 0)}" for k in PROFS)  # noqa: E731
        return (a and b, a != b,
                f"of {cells} (N, algorithm) cells the fastest profile is {fmt_(best)}, the "
                f"slowest {fmt_(worst)}; the fastest's 90 % interval clears the runner-up's in "
                f"{clear} of {cells}")
    s = _ordering(d, judge, "csma2", need={"cc": SIM2_CCS, "profile": PROFS})
    s.sim += (f" — the thesis's tables: fastest " + ", ".join(f"{k} {pb.get(k, 0)}" for k in
                                                             KERNELS.values())
              + ", slowest " + ", ".join(f"{k} {pw.get(k, 0)}" for k in KERNELS.values())
              + f" of {pcells}; clear in {pclear} of {pcells}")
    return s


@SCORERS("LE-27")
def le27(d: Data) -> Score:
    t = d.sim["csma2"]
    k = tot = 0
    rs = []
    for n, per in d.pub["sim2_delay"].items():
        for cc, kv in per.items():
            for kver, (pm_, ph) in kv.items():
                pr = next(p for p, v in KERNELS.items() if v == kver)
                m, h, cnt, _ = _st(t, "delay_s", cc=cc, x=n, profile=pr)
                if cnt < 2 or not m:
                    continue
                r = (h / m) / (ph / pm_)
                rs.append(r)
                k += 1 / 3 <= r <= 3
                tot += 1
    for n, per in d.pub["sim2_goodput"].items():
        for cc, p in per.items():
            pm_, ph = p["goodput_kBps"]
            need = [pr for pr in PROFS if _st(t, "goodput_kBps", cc=cc, x=n, profile=pr)[2] >= 2]
            if not need:
                continue
            _, (m, h, _, _) = _best(t, cc, n, "goodput_kBps", profs=need, low=False)
            r = (h / m) / (ph / pm_)
            rs.append(r)
            k += 1 / 3 <= r <= 3
            tot += 1
    if not tot:
        return Score.too_few("not enough repeats: no cell of simulation 2 ran twice (CSMA)")
    rs.sort()
    return Score.test(k >= 0.9 * tot, (
        f"CSMA: relative 90 % half-width within a factor 3 of the printed one in {k} of {tot} "
        f"cells of Tables 5.2-5.9; ours ÷ printed {rs[0]:.2f}-{rs[-1]:.2f} (median "
        f"{rs[len(rs) // 2]:.2f})"), partly=2 * k >= tot)
