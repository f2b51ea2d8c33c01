"""The mobile-broadband thesis's claims (MB-1 … MB-40, examples/studies/mobile-
broadband/claims.yaml), one scorer each (ccbench.studies.claims); the per-run tables come from
ccbench.studies.mobile.
"""
from __future__ import annotations

import math

import polars as pl

from .claims import Data, Score, Scorers, default_band, finite, mean_sd, order_holds
from .mobile import CCS, NETS, SHORT, STREAM_TABLES, TABLES, cell_mean, cell_values


# ---------------------------------------------------------------------------- the claims

SCORERS = Scorers()
UNL, LIM = "unlimited", "limited"
FMT = {"goodput": ".0f", "rtt": ".3f", "interarrival_ms": ".1f", "ssth": ".1f", "retrans": ".0f",
       "max_cwnd": ".0f", "max_inflight": ".0f", "rtt_max": ".2f"}
PUB_KEY = {"goodput": "goodput_KiBps", "rtt": "rtt_s", "interarrival_ms": "interarrival_ms",
           "ssth": "ssthresh_changes"}
COL_NAME = {"goodput": "goodput", "rtt": "RTT", "interarrival_ms": "'OWD'", "ssth": "ssthresh"}


def _s(df, load, buf, net, cc, col) -> float:
    return cell_mean(df, col, load=load, buffer=buf, net=net, cc=cc) if df is not None else math.nan


def _p(d: Data, load, buf, net, cc, col) -> float:
    """A published mean; "–" (no ssthresh change) is 0."""
    v = d.pub[load][buf][net][cc][PUB_KEY[col]]
    return 0.0 if v is None else float(v)


def _has(df, load, buf=None) -> bool:
    if df is None or not df.height:
        return False
    f = df.filter(pl.col("load") == load)
    if buf is not None:
        f = f.filter(pl.col("buffer") == buf)
    return f.height > 0


def _f(x: float, col: str = "") -> str:
    return "–" if not finite(x) else f"{x:{FMT.get(col, '.2f')}}"


def _runs(df, load, buf) -> int:
    """The fewest runs of any cell of a (load, buffer set)."""
    f = df.filter((pl.col("load") == load) & (pl.col("buffer") == buf))
    if not f.height:
        return 0
    return int(f.group_by(["net", "cc"]).len()["len"].min())


# -- MB-1 … MB-8: the tables, cell by cell in the default band

TABLE_OF = {"MB-1": ("bulk", UNL), "MB-2": ("bulk", LIM), "MB-3": ("onoff", UNL),
            "MB-4": ("onoff", LIM), "MB-5": ("stream50", UNL), "MB-6": ("stream25", UNL),
            "MB-7": ("stream50", LIM), "MB-8": ("stream25", LIM)}


def _cells(df, d: Data, load, buf) -> list[tuple[str, str, str, float, float, bool]]:
    """Every cell of a table: (column, network, CC, ours, the thesis's, in the default band)."""
    out = []
    for col in PUB_KEY:
        for net in NETS:
            for cc in CCS:
                ours, pub = _s(df, load, buf, net, cc, col), _p(d, load, buf, net, cc, col)
                out.append((col, net, cc, ours, pub, default_band(ours, pub)))
    return out


@SCORERS(*TABLE_OF)
def mb_table(d: Data) -> Score:
    load, buf = TABLE_OF[d.extra["id"]]
    stream = load.startswith("stream")
    counted = [c for c in PUB_KEY if not (stream and c == "goodput")]

    def text(df):
        cells = _cells(df, d, load, buf)
        per = {c: sum(ok for col, *_, ok in cells if col == c) for c in PUB_KEY}
        t = ", ".join(f"{COL_NAME[c]} {per[c]}/9" for c in counted)
        if stream:
            t += f"; goodput (set by the stream's rate, not counted) {per['goodput']}/9"
        # the failing cells themselves, ours against the thesis's
        fails = [f"{SHORT[net]} {cc} {COL_NAME[col]} {ours:.3g} vs {pub:.3g}"
                 for col, net, cc, ours, pub, ok in cells if col in counted and not ok]
        if fails:
            t += "; fail: " + ", ".join(fails)
        return per, t
    if not _has(d.sim, load, buf):
        return Score.cells(0, 0, f"Table {TABLES[(load, buf)]} not run at this scale")
    per, t = text(d.sim)
    ktext = ""
    if _has(d.kernel, load, buf):
        kper, kt = text(d.kernel)
        ktext = f"{sum(kper[c] for c in counted)} of {9 * len(counted)} cells: {kt}"
    return Score.cells(sum(per[c] for c in counted), 9 * len(counted),
                       f"Table {TABLES[(load, buf)]}: {t}", kernel=ktext)


# -- MB-9 … MB-17: the orderings of Equations 5.1-5.9, per network

def _order_text(df, load, buf, col, orders: dict[str, str]) -> tuple[int, int, str]:
    k, parts = 0, []
    for net, order in orders.items():
        vals = {cc: _s(df, load, buf, net, cc, col) for cc in CCS}
        runs = {cc: cell_values(df, col, load=load, buffer=buf, net=net, cc=cc) for cc in CCS}
        ok = order_holds(vals, order, runs)  # ">" resolved beyond the run-to-run spread
        k += ok
        parts.append(f"{SHORT[net]} ({order}): "
                     + ", ".join(f"{cc} {_f(vals[cc], col)}" for cc in CCS)
                     + (" ✓" if ok else " ✗"))
    return k, len(orders), "; ".join(parts)


ALL3 = lambda o: {n: o for n in NETS}  # noqa: E731
ORDERS = {
    "MB-9": [("bulk", UNL, "rtt", {"evdo": "cubic > reno > vegas",
                                   "hspa-capped": "reno > cubic > vegas",
                                   "hspa": "reno > cubic > vegas"})],
    "MB-10": [("bulk", UNL, "goodput", {"evdo": "cubic >= reno > vegas",
                                        "hspa-capped": "cubic > reno > vegas",
                                        "hspa": "cubic > reno > vegas"})],
    "MB-11": [("bulk", UNL, "interarrival_ms", {"evdo": "vegas > cubic > reno",
                                                "hspa-capped": "vegas > reno > cubic",
                                                "hspa": "vegas > reno > cubic"})],
    "MB-12": [("bulk", LIM, "rtt", {"evdo": "cubic > reno > vegas",
                                    "hspa-capped": "reno >= cubic > vegas",
                                    "hspa": "reno > cubic > vegas"})],
    "MB-13": [("bulk", LIM, "goodput", {"evdo": "cubic > reno > vegas",
                                        "hspa-capped": "cubic >= reno > vegas",
                                        "hspa": "cubic > reno > vegas"})],
    "MB-14": [("bulk", LIM, "interarrival_ms", {"evdo": "vegas > cubic = reno",
                                                "hspa-capped": "vegas > reno > cubic",
                                                "hspa": "vegas > reno = cubic"})],
    "MB-15": [("onoff", UNL, "rtt", ALL3("cubic > reno > vegas")),
              ("onoff", LIM, "rtt", ALL3("cubic > reno > vegas"))],
    "MB-16": [("onoff", UNL, "goodput", {"evdo": "vegas > reno > cubic",
                                         "hspa-capped": "reno > cubic > vegas",
                                         "hspa": "reno > cubic > vegas"})],
    # Table 5.3c prints eth1 Reno 11 > CUBIC 10 ms against Equation 5.9: the table's pair
    "MB-17": [("onoff", UNL, "interarrival_ms", {"evdo": "vegas > reno > cubic",
                                                 "hspa-capped": "vegas > cubic > reno",
                                                 "hspa": "vegas > cubic > reno"})],
}
# MB-16's limited set, reported beside it: Table 5.4a's own order
MB16_LIMITED = {"evdo": "reno > vegas > cubic", "hspa-capped": "reno > vegas > cubic",
                "hspa": "reno > cubic > vegas"}


def _orders(df, spec) -> tuple[int, int, str]:
    k = n = 0
    texts = []
    for load, buf, col, orders in spec:
        if not _has(df, load, buf):
            continue
        a, b, t = _order_text(df, load, buf, col, orders)
        k, n = k + a, n + b
        texts.append(f"{load} {buf} {COL_NAME[col]}: {t}")
    return k, n, " | ".join(texts)


@SCORERS(*ORDERS)
def mb_order(d: Data) -> Score:
    spec = ORDERS[d.extra["id"]]
    k, n, t = _orders(d.sim, spec)
    if not n:
        return Score.too_few("not run at this scale")
    kk, kn, kt = _orders(d.kernel, spec) if d.kernel is not None else (0, 0, "")
    if d.extra["id"] == "MB-16" and _has(d.sim, "onoff", LIM):
        t += (" | limited, reported (Table 5.4a's order): "
              + _order_text(d.sim, "onoff", LIM, "goodput", MB16_LIMITED)[2])
    return Score.test(k == n, f"{k} of {n} orderings hold: {t}",
                      kernel=f"{kk} of {kn} orderings hold: {kt}" if kn else "",
                      partly=2 * k >= n and k > 0)


# -- MB-18 … MB-28: bulk transfers, the traces and the buffer sets

def _tr(d: Data, key: str) -> float:
    return float(d.pub["traces"][key])


def _band(ours: float, paper: float) -> str:
    v = f"{ours:.3g}" if finite(ours) else "–"
    return f"{v} ({'in' if default_band(ours, paper) else 'outside'} the band of {paper:g})"


def _bulk_on_both(d: Data, judge) -> Score:
    """``judge(table) -> (passed, partly, text)`` on the unlimited bulk runs of the simulator,
    its text on the kernel's beside it."""
    if not _has(d.sim, "bulk", UNL):
        return Score.too_few("not run at this scale")
    ok, part, t = judge(d.sim)
    kt = judge(d.kernel)[2] if _has(d.kernel, "bulk", UNL) else ""
    return Score.test(ok, t, kernel=kt, partly=part)


@SCORERS("MB-18")
def mb18(d: Data) -> Score:
    def judge(df):
        e = dict(load="bulk", buffer=UNL, net="hspa", cc="reno")
        rtt, peak = cell_mean(df, "rtt", **e), cell_mean(df, "rtt_max", **e)
        ret, pk = cell_mean(df, "retrans", **e), cell_mean(df, "delivered_pkts", **e)
        ssth, cw = cell_mean(df, "ssth", **e), cell_mean(df, "max_cwnd", **e)
        no_loss = finite(ret, pk) and ret <= 0.001 * pk and ssth == 0
        bloat = default_band(rtt, d.pub["bulk"][UNL]["hspa"]["reno"]["rtt_s"]) and peak >= 3.0
        t = (f"ppp1 Reno, unlimited: {ret:.0f} retransmissions of {pk:.0f} packets, "
             f"{ssth:.1f} ssthresh changes; mean RTT {_band(rtt, 1.732)} s, peak {_f(peak)} s "
             f"(≥ 3 s: {'yes' if peak >= 3 else 'no'}); peak cwnd {cw:.0f} segments (thesis "
             f"≈{_tr(d, 'ppp1_reno_cwnd_segments'):g})")
        return no_loss and bloat, bloat, t
    return _bulk_on_both(d, judge)


@SCORERS("MB-19")
def mb19(d: Data) -> Score:
    def judge(df):
        e = dict(load="bulk", buffer=UNL, net="hspa")
        rr, rc = cell_mean(df, "rtt", cc="reno", **e), cell_mean(df, "rtt", cc="cubic", **e)
        gr, gc = cell_mean(df, "goodput", cc="reno", **e), cell_mean(df, "goodput", cc="cubic", **e)
        cw = cell_mean(df, "max_cwnd", cc="cubic", **e)
        shape = finite(rr, rc, gr, gc) and rc <= rr / 2 and gc > gr
        ok = shape and default_band(cw, _tr(d, "ppp1_cubic_cwnd_segments"))
        t = (f"ppp1, unlimited: CUBIC's RTT {_f(rc, 'rtt')} s vs Reno's {_f(rr, 'rtt')} s "
             f"(≤ half: {'yes' if finite(rr, rc) and rc <= rr / 2 else 'no'}); goodput CUBIC "
             f"{_f(gc, 'goodput')} vs Reno {_f(gr, 'goodput')} KiB/s (+{gc - gr:.0f}; thesis "
             f"+135); CUBIC's peak cwnd {_band(cw, _tr(d, 'ppp1_cubic_cwnd_segments'))} segments")
        return ok, shape, t
    return _bulk_on_both(d, judge)


@SCORERS("MB-20")
def mb20(d: Data) -> Score:
    def judge(df):
        e = dict(load="bulk", buffer=UNL, net="evdo")
        gr, gc = cell_mean(df, "goodput", cc="reno", **e), cell_mean(df, "goodput", cc="cubic", **e)
        sr, sc = cell_mean(df, "ssth", cc="reno", **e), cell_mean(df, "ssth", cc="cubic", **e)
        rate = mean_sd(cell_values(df, "rate_before_loss_mbit", load="bulk", buffer=UNL, net="evdo",
                             cc="reno") + cell_values(df, "rate_before_loss_mbit", load="bulk",
                                                buffer=UNL, net="evdo", cc="cubic"))[0]
        cw, pk = cell_mean(df, "max_cwnd", cc="cubic", **e), cell_mean(df, "rtt_max", cc="cubic", **e)
        close = finite(gr, gc) and abs(gr - gc) <= 0.05 * max(gr, gc)
        shape = close and sc > sr
        levels = (default_band(rate, _tr(d, "eth1_loss_rate_mbit"))
                  and default_band(cw, _tr(d, "eth1_cubic_cwnd_segments"))
                  and default_band(pk, _tr(d, "eth1_cubic_rtt_s")))
        t = (f"eth1, unlimited: goodput Reno {_f(gr, 'goodput')} vs CUBIC {_f(gc, 'goodput')} "
             f"KiB/s (within 5 %: {'yes' if close else 'no'}); ssthresh changes CUBIC "
             f"{_f(sc, 'ssth')} vs Reno {_f(sr, 'ssth')}; rate in the second before the first "
             f"loss {_band(rate, _tr(d, 'eth1_loss_rate_mbit'))} Mbit/s; CUBIC's peak cwnd "
             f"{_band(cw, _tr(d, 'eth1_cubic_cwnd_segments'))}, peak RTT "
             f"{_band(pk, _tr(d, 'eth1_cubic_rtt_s'))} s")
        return shape and levels, shape, t
    return _bulk_on_both(d, judge)


@SCORERS("MB-21")
def mb21(d: Data) -> Score:
    def judge(df):
        parts, k = [], 0
        for net in NETS:
            r, c = (_s(df, "bulk", UNL, net, cc, "ssth") for cc in ("reno", "cubic"))
            ok = finite(r, c) and c > r
            k += ok
            parts.append(f"{SHORT[net]} CUBIC {_f(c, 'ssth')} vs Reno {_f(r, 'ssth')}"
                         + (" ✓" if ok else " ✗"))
        return k, "ssthresh changes, bulk unlimited: " + "; ".join(parts)
    if not _has(d.sim, "bulk", UNL):
        return Score.too_few("not run at this scale")
    k, t = judge(d.sim)
    kt = judge(d.kernel)[1] if _has(d.kernel, "bulk", UNL) else ""
    return Score.test(k == 3, t, kernel=kt, partly=k >= 2)


@SCORERS("MB-22")
def mb22(d: Data) -> Score:
    df = d.sim
    if not _has(df, "bulk", UNL):
        return Score.too_few("not run at this scale")
    g = {(net, cc): _s(df, "bulk", UNL, net, cc, "goodput") for net in ("evdo", "hspa-capped")
         for cc in ("reno", "cubic")}
    faster = all(g[("hspa-capped", cc)] > g[("evdo", cc)] for cc in ("reno", "cubic"))
    runs = df.filter((pl.col("load") == "bulk") & (pl.col("buffer") == UNL)
                     & (pl.col("net") == "hspa-capped") & pl.col("cc").is_in(["reno", "cubic"]))
    burst = [(r["first_loss_s"], r["burst_retrans"]) for r in runs.iter_rows(named=True)]
    early = [finite(t0) and t0 <= 10 and n >= 3 for t0, n in burst]
    rs = {net: _s(df, "bulk", UNL, net, "reno", "ssth") for net in NETS}
    top = rs["hspa-capped"] > max(rs["evdo"], rs["hspa"])
    ok = faster and bool(early) and all(early) and top
    t = (f"bulk unlimited: ppp0 goodput above eth1's (Reno {_f(g[('hspa-capped', 'reno')], 'goodput')}"
         f" vs {_f(g[('evdo', 'reno')], 'goodput')}, CUBIC {_f(g[('hspa-capped', 'cubic')], 'goodput')}"
         f" vs {_f(g[('evdo', 'cubic')], 'goodput')} KiB/s): {'yes' if faster else 'no'}; an early "
         f"loss burst (first loss in the first 10 s, ≥ 3 retransmissions within 1 s of it) in "
         f"{sum(early)} of {len(early)} Reno/CUBIC runs on ppp0; Reno's ssthresh changes "
         + ", ".join(f"{SHORT[n]} {_f(v, 'ssth')}" for n, v in rs.items())
         + f" (highest on ppp0: {'yes' if top else 'no'})")
    return Score.test(ok, t, partly=faster and top)


@SCORERS("MB-23")
def mb23(d: Data) -> Score:
    df = d.sim
    if not _has(df, "bulk", UNL) or _runs(df, "bulk", UNL) < 10:
        return Score.too_few(f"variance orderings need ≥ 10 runs per cell; "
                             f"{_runs(df, 'bulk', UNL) if df is not None else 0} at this scale")
    k, parts = 0, []
    for cc in ("reno", "cubic"):
        sg = {net: mean_sd(cell_values(df, "goodput", load="bulk", buffer=UNL, net=net, cc=cc))[1]
              for net in NETS}
        sr = {net: mean_sd(cell_values(df, "rtt", load="bulk", buffer=UNL, net=net, cc=cc))[1]
              for net in NETS}
        a = sg["hspa"] > sg["hspa-capped"] > sg["evdo"]
        b = sr["hspa-capped"] > max(sr["evdo"], sr["hspa"])
        k += a + b
        parts.append(f"{cc}: goodput sd " + ", ".join(f"{SHORT[n]} {v:.1f}" for n, v in sg.items())
                     + f" (ppp1 > ppp0 > eth1: {'yes' if a else 'no'}); RTT sd "
                     + ", ".join(f"{SHORT[n]} {v:.3f}" for n, v in sr.items())
                     + f" (ppp0 largest: {'yes' if b else 'no'})")
    return Score.test(k == 4, "bulk unlimited, " + "; ".join(parts), partly=k >= 2)


@SCORERS("MB-24")
def mb24(d: Data) -> Score:
    df = d.sim
    k = n = 0
    parts = []
    for buf in (UNL, LIM):
        if not _has(df, "bulk", buf):
            continue
        rt = {net: _s(df, "bulk", buf, net, "vegas", "rtt") for net in NETS}
        g = {net: _s(df, "bulk", buf, net, "vegas", "goodput") for net in NETS}
        spread = (max(rt.values()) - min(rt.values())) * 1000
        a = spread <= 42 + 1e-6  # Table 5.1b's own span, 92 - 50 ms
        b = g["hspa"] > g["hspa-capped"] > g["evdo"]
        top = [_s(df, "bulk", buf, net, "vegas", "interarrival_ms")
               > max(_s(df, "bulk", buf, net, cc, "interarrival_ms") for cc in ("reno", "cubic"))
               for net in NETS]
        c = all(top)
        k, n = k + a + b + c, n + 3
        parts.append(f"{buf}: Vegas's RTTs span {spread:.0f} ms (≤ 42: {'yes' if a else 'no'}); "
                     "goodput " + ", ".join(f"{SHORT[x]} {v:.0f}" for x, v in g.items())
                     + f" (ppp1 > ppp0 > eth1: {'yes' if b else 'no'}); Vegas's 'OWD' above "
                     f"Reno's and CUBIC's on {sum(top)} of 3 networks")
    if not n:
        return Score.too_few("not run at this scale")
    return Score.test(k == n, "; ".join(parts), partly=2 * k >= n)


def _ratio(df, col, net, cc, inverse=False) -> float:
    u, lim = _s(df, "bulk", UNL, net, cc, col), _s(df, "bulk", LIM, net, cc, col)
    if not finite(u, lim) or (u if inverse else lim) == 0 or (lim if inverse else u) == 0:
        return math.nan
    return u / lim if inverse else lim / u


def _pratio(d: Data, col, net, cc) -> float:
    return _p(d, "bulk", LIM, net, cc, col) / _p(d, "bulk", UNL, net, cc, col)


def _lowered(df, load, net, cc, col, rise: bool = False) -> bool:
    """The limited buffers lower (``rise``: raise) ``col`` beyond the run-to-run spread."""
    runs = {b: cell_values(df, col, load=load, buffer=b, net=net, cc=cc) for b in (UNL, LIM)}
    vals = {b: _s(df, load, b, net, cc, col) for b in (UNL, LIM)}
    return order_holds(vals, f"{LIM} > {UNL}" if rise else f"{UNL} > {LIM}", runs)


@SCORERS("MB-25")
def mb25(d: Data) -> Score:
    df = d.sim
    if not (_has(df, "bulk", UNL) and _has(df, "bulk", LIM)):
        return Score.too_few("needs both buffer sets")
    signs, bands, parts = [], [], []
    for net in NETS:
        for cc in CCS:
            r, p = _ratio(df, "goodput", net, cc), _pratio(d, "goodput", net, cc)
            raise_ = net != "hspa" and cc != "vegas"
            if raise_:
                signs.append(finite(r) and _lowered(df, "bulk", net, cc, "goodput", rise=True))
            bands.append(default_band(r, p))
            parts.append(f"{SHORT[net]} {cc} ×{_f(r, '.2f')} (thesis ×{p:.2f}"
                         + (", a rise" if raise_ else "") + ")")
    ok_s, ok_b = all(signs), all(bands)
    return Score.test(ok_s and ok_b, f"goodput limited/unlimited: {'; '.join(parts)}; rises "
                      f"{sum(signs)} of {len(signs)}, ratios in the band {sum(bands)} of "
                      f"{len(bands)}", partly=ok_s)


@SCORERS("MB-26")
def mb26(d: Data) -> Score:
    df = d.sim
    if not (_has(df, "bulk", UNL) and _has(df, "bulk", LIM)):
        return Score.too_few("needs both buffer sets")
    signs, parts = [], []
    for net in NETS:
        for cc in CCS:
            u, lim = _s(df, "bulk", UNL, net, cc, "rtt"), _s(df, "bulk", LIM, net, cc, "rtt")
            ok = (_lowered(df, "bulk", net, cc, "rtt") if cc != "vegas"
                  else default_band(lim, u))
            signs.append(ok)
            parts.append(f"{SHORT[net]} {cc} {_f(u, 'rtt')} → {_f(lim, 'rtt')}"
                         + (" ✓" if ok else " ✗"))
    r = _ratio(df, "rtt", "hspa", "reno", inverse=True)
    p = 1 / _pratio(d, "rtt", "hspa", "reno")
    band = default_band(r, p)
    return Score.test(all(signs) and band,
                      f"RTT unlimited → limited (s; Reno and CUBIC lower, Vegas unchanged): "
                      f"{'; '.join(parts)}; ppp1 Reno ×{_f(r, '.2f')} lower (thesis ×{p:.2f}, in "
                      f"the band: {'yes' if band else 'no'})", partly=all(signs))


@SCORERS("MB-27")
def mb27(d: Data) -> Score:
    df = d.sim
    if not (_has(df, "bulk", UNL) and _has(df, "bulk", LIM)):
        return Score.too_few("needs both buffer sets")
    oks, parts = [], []
    for net in NETS:
        for cc in CCS:
            u = _s(df, "bulk", UNL, net, cc, "interarrival_ms")
            lim = _s(df, "bulk", LIM, net, cc, "interarrival_ms")
            lower = net == "evdo" and cc != "vegas"
            ok = (_lowered(df, "bulk", net, cc, "interarrival_ms") if lower
                  else default_band(lim, u))
            oks.append(ok)
            parts.append(f"{SHORT[net]} {cc} {_f(u, 'interarrival_ms')} → "
                         f"{_f(lim, 'interarrival_ms')}" + (" ✓" if ok else " ✗"))
    return Score.test(all(oks), f"'OWD' unlimited → limited (ms; lower on eth1 for Reno and "
                      f"CUBIC, unchanged elsewhere): {'; '.join(parts)}",
                      partly=sum(oks) * 2 >= len(oks))


@SCORERS("MB-28")
def mb28(d: Data) -> Score:
    df = d.sim
    if not _has(df, "bulk", LIM):
        return Score.too_few("not run at this scale")
    p = _tr(d, "ppp1_limited_cwnd_segments")
    fl = {cc: _s(df, "bulk", LIM, "hspa", cc, "max_inflight") for cc in ("reno", "cubic")}
    ok = all(default_band(v, p) for v in fl.values())
    return Score.test(ok, "ppp1, limited buffers: peak flight "
                      + ", ".join(f"{cc} {_band(v, p)}" for cc, v in fl.items())
                      + " segments; the advertised window behind it 610 304 B = "
                      f"{610304 / 1448:.0f} segments of 1448 B (half the 1 220 608-B rmem)")


# -- MB-29 … MB-40: the conclusions (on-off, streams, across tables)

@SCORERS("MB-29")
def mb29(d: Data) -> Score:
    df = d.sim
    if not _has(df, "bulk", UNL):
        return Score.too_few("not run at this scale")
    v = {col: {net: _s(df, "bulk", UNL, net, "reno", col) for net in NETS}
         for col in ("ssth", "rtt", "goodput", "interarrival_ms")}
    hi, lo = (("hspa-capped", "evdo") if v["ssth"]["hspa-capped"] > v["ssth"]["evdo"]
              else ("evdo", "hspa-capped"))  # hi: the lossier of the two lossy networks
    a = (v["ssth"][hi] > v["ssth"][lo] and v["rtt"][hi] < v["rtt"][lo]
         and v["goodput"][hi] > v["goodput"][lo])
    b = (v["ssth"]["hspa"] < min(v["ssth"][hi], v["ssth"][lo])
         and v["rtt"]["hspa"] > max(v["rtt"][hi], v["rtt"][lo])
         and v["goodput"]["hspa"] > max(v["goodput"][hi], v["goodput"][lo]))
    pairs = [(x, y) for x in NETS for y in NETS
             if v["rtt"][x] > v["rtt"][y] and v["goodput"][x] < v["goodput"][y]]
    c = bool(pairs) and all(v["interarrival_ms"][x] > v["interarrival_ms"][y] for x, y in pairs)
    t = ("bulk unlimited, Reno: " + "; ".join(
        f"{SHORT[n]} ssthresh {_f(v['ssth'][n], 'ssth')}, RTT {_f(v['rtt'][n], 'rtt')} s, "
        f"goodput {_f(v['goodput'][n], 'goodput')}, 'OWD' {_f(v['interarrival_ms'][n], 'interarrival_ms')}"
        for n in NETS)
        + f" — the lossier of eth1/ppp0 has less delay and more goodput: {'yes' if a else 'no'}; "
        f"ppp1 fewest losses, most delay, most goodput: {'yes' if b else 'no'}; more delay and "
        f"less goodput come with more 'OWD': {'yes' if c else 'no'}")
    return Score.test(a and b and c, t, partly=(a + b + c) >= 2)


@SCORERS("MB-30")
def mb30(d: Data) -> Score:
    df = d.sim
    if not _has(df, "onoff", UNL):
        return Score.too_few("not run at this scale")
    O = ("onoff", UNL)
    cw1 = _s(df, *O, "evdo", "reno", "cwnd_first_burst")
    p1 = _tr(d, "onoff_eth1_reno_cwnd_segments")
    lv1 = default_band(cw1, p1)
    lo, hi = d.pub["traces"]["onoff_umts_cwnd_segments"]
    peaks = {(n, cc): _s(df, *O, n, cc, "max_cwnd") for n in ("hspa-capped", "hspa")
             for cc in ("reno", "cubic")}
    lv2 = all(default_band(p, lo) and default_band(p, hi) for p in peaks.values())
    a0, a1 = d.pub["traces"]["onoff_burst_arrival_s"]
    arr = {(n, cc): _s(df, *O, n, cc, "burst_arrival_s") for n in NETS for cc in CCS}
    lv3 = all(finite(x) and a0 / 1.5 <= x <= a1 * 1.5 for x in arr.values())
    s = {cc: _s(df, *O, "evdo", cc, "ssth") for cc in CCS}
    g = {cc: _s(df, *O, "evdo", cc, "goodput") for cc in CCS}
    o1 = s["cubic"] > s["reno"] and g["cubic"] < g["reno"]
    o2 = g["vegas"] > max(g["reno"], g["cubic"])
    t = (f"on-off unlimited: eth1 Reno's cwnd in the first burst {_band(cw1, p1)}; peak cwnd "
         "on ppp0/ppp1 " + ", ".join(f"{SHORT[n]} {cc} {_f(p, 'max_cwnd')}" for (n, cc), p in peaks.items())
         + f" (in the band of both {lo} and {hi}: {'yes' if lv2 else 'no'}); a burst arrives in "
         f"{min(arr.values()):.1f}–{max(arr.values()):.1f} s (1–3 s, band 0.7–4.5: "
         f"{'yes' if lv3 else 'no'}); eth1: CUBIC more ssthresh changes ({_f(s['cubic'], 'ssth')} "
         f"vs {_f(s['reno'], 'ssth')}) and less goodput ({_f(g['cubic'], 'goodput')} vs "
         f"{_f(g['reno'], 'goodput')}) than Reno: {'yes' if o1 else 'no'}; Vegas the most "
         f"({_f(g['vegas'], 'goodput')}): {'yes' if o2 else 'no'}")
    return Score.test(lv1 and lv2 and lv3 and o1 and o2, t, partly=o1 and o2)


@SCORERS("MB-31")
def mb31(d: Data) -> Score:
    df = d.sim
    if not _has(df, "onoff", UNL):
        return Score.too_few("not run at this scale")
    O = ("onoff", UNL)
    ia = {(n, cc): _s(df, *O, n, cc, "interarrival_ms") for n in NETS for cc in CCS}
    a = all(ia[("evdo", cc)] > max(ia[("hspa-capped", cc)], ia[("hspa", cc)]) for cc in CCS)
    rs = {n: _s(df, *O, n, "reno", "ssth") for n in NETS}
    b = rs["evdo"] > 0 and rs["hspa-capped"] == 0 and rs["hspa"] == 0
    cs = {n: _s(df, *O, n, "cubic", "ssth") for n in NETS}
    c = cs["evdo"] > max(cs["hspa-capped"], cs["hspa"])
    t = ("on-off unlimited: 'OWD' ms " + "; ".join(
        f"{cc} " + "/".join(_f(ia[(n, cc)], "interarrival_ms") for n in NETS) for cc in CCS)
        + f" (eth1/ppp0/ppp1; eth1 highest for every CC: {'yes' if a else 'no'}); Reno's "
        "ssthresh changes " + "/".join(_f(rs[n], "ssth") for n in NETS)
        + f" (only eth1: {'yes' if b else 'no'}); CUBIC's " + "/".join(_f(cs[n], "ssth") for n in NETS)
        + f" (most on eth1: {'yes' if c else 'no'})")
    return Score.test(a and b and c, t, partly=(a + b + c) >= 2)


def _chain(vals: dict[str, float]) -> str:
    """The strict order of the values, e.g. "cubic > reno > vegas"."""
    return " > ".join(sorted(vals, key=lambda k: -vals[k]))


@SCORERS("MB-32")
def mb32(d: Data) -> Score:
    df = d.sim
    if not (_has(df, "onoff", UNL) and _has(df, "onoff", LIM)):
        return Score.too_few("needs both buffer sets")
    k = n = 0
    bad = []
    for col in ("goodput", "rtt", "interarrival_ms"):
        for net in NETS:
            u = {cc: _s(df, "onoff", UNL, net, cc, col) for cc in CCS}
            lim = {cc: _s(df, "onoff", LIM, net, cc, col) for cc in CCS}
            order = _chain(u).split(" > ")
            if col == "goodput" and net == "evdo":  # the exception: Reno above Vegas
                order = [("vegas" if x == "reno" else "reno" if x == "vegas" else x)
                         for x in order]
                want = " > ".join(order[:1]) + "".join(f" >= {x}" for x in order[1:])
                ok = order_holds(lim, want) and lim["reno"] > lim["vegas"]
            else:
                want = " >= ".join(order)
                ok = order_holds(lim, want)
            k, n = k + ok, n + 1
            if not ok:
                bad.append(f"{SHORT[net]} {COL_NAME[col]}: unlimited {_chain(u)}, limited "
                           f"{_chain(lim)}")
    gl = {cc: _s(df, "onoff", LIM, "evdo", cc, "goodput") for cc in ("reno", "vegas")}
    var = ""
    if _runs(df, "onoff", UNL) >= 3 and _runs(df, "onoff", LIM) >= 3:
        grow = sum(mean_sd(cell_values(df, "goodput", load="onoff", buffer=LIM, net=net, cc=cc))[1]
                   > mean_sd(cell_values(df, "goodput", load="onoff", buffer=UNL, net=net, cc=cc))[1]
                   for net in NETS for cc in CCS)
        var = f"; goodput sd larger with limited buffers in {grow} of 9 cells (qualitative)"
    t = (f"on-off: {k} of {n} (metric × network) orderings of the unlimited set hold with limited "
         f"buffers (eth1 goodput: Reno {_f(gl['reno'], 'goodput')} above Vegas "
         f"{_f(gl['vegas'], 'goodput')} expected)" + (": " + "; ".join(bad) if bad else "") + var)
    return Score.test(k == n, t, partly=2 * k >= n)


def _median(xs: list[float]) -> float:
    xs = sorted(x for x in xs if finite(x))
    if not xs:
        return math.nan
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


@SCORERS("MB-33")
def mb33(d: Data) -> Score:
    df = d.sim
    bufs = [b for b in (UNL, LIM) if _has(df, "onoff", b)]
    if not bufs:
        return Score.too_few("not run at this scale")
    med = {(b, n, cc, col): _median(cell_values(df, col, load="onoff", buffer=b, net=n, cc=cc))
           for b in bufs for n in NETS for cc in CCS for col in ("rtt", "interarrival_ms")}
    checks = []
    for b in bufs:
        for cc in ("reno", "cubic"):
            for col in ("rtt", "interarrival_ms"):
                v = {n: med[(b, n, cc, col)] for n in NETS}
                checks.append((f"{b} {cc} {COL_NAME[col]}: eth1 highest, ppp0 lowest",
                               v["evdo"] > max(v["hspa-capped"], v["hspa"])
                               and v["hspa-capped"] < min(v["evdo"], v["hspa"])))
        v = {(n, col): med[(b, n, "vegas", col)] for n in NETS for col in ("rtt", "interarrival_ms")}
        checks.append((f"{b} vegas: ppp1 lowest RTT and 'OWD'",
                       all(v[("hspa", c)] < min(v[("evdo", c)], v[("hspa-capped", c)])
                           for c in ("rtt", "interarrival_ms"))))
        checks.append((f"{b} vegas: eth1 ≈ ppp0 in RTT (default band), eth1 higher 'OWD'",
                       default_band(v[("evdo", "rtt")], v[("hspa-capped", "rtt")])
                       and v[("evdo", "interarrival_ms")] > v[("hspa-capped", "interarrival_ms")]))
    k = sum(ok for _, ok in checks)
    failed = [name for name, ok in checks if not ok]
    t = (f"on-off medians over runs: {k} of {len(checks)} orderings hold"
         + (" (fail: " + "; ".join(failed) + ")" if failed else ""))
    if len(bufs) < 2 or min(_runs(df, "onoff", b) for b in bufs) < 5:
        if k < len(checks):
            return Score.test(False, t + "; the spread parts need ≥ 5 runs per cell",
                              partly=2 * k >= len(checks))
        return Score.too_few(t + "; the spread parts need ≥ 5 runs per cell")
    sd = {(b, n, cc, col): mean_sd(cell_values(df, col, load="onoff", buffer=b, net=n, cc=cc))[1]
          for b in bufs for n in NETS for cc in CCS for col in ("rtt", "interarrival_ms")}
    s1 = (sd[(LIM, "evdo", "reno", "interarrival_ms")] > sd[(UNL, "evdo", "reno", "interarrival_ms")]
          and sd[(LIM, "evdo", "reno", "rtt")] < sd[(UNL, "evdo", "reno", "rtt")])
    s2 = all(sd[(b, n, "cubic", "interarrival_ms")] >= sd[(b, n, "reno", "interarrival_ms")]
             for b in bufs for n in ("hspa-capped", "hspa"))
    t += (f"; limited buffers raise eth1 Reno's 'OWD' spread and lower its RTT spread: "
          f"{'yes' if s1 else 'no'}; CUBIC's 'OWD' spread ≥ Reno's on ppp0/ppp1: "
          f"{'yes' if s2 else 'no'}")
    return Score.test(k == len(checks) and s1 and s2, t, partly=k == len(checks))


@SCORERS("MB-34")
def mb34(d: Data) -> Score:
    df = d.sim
    bufs = [b for b in (UNL, LIM) if _has(df, "onoff", b)]
    if not bufs:
        return Score.too_few("not run at this scale")
    k, parts = 0, []
    for b in bufs:
        for cc in ("reno", "cubic"):
            g = {n: _s(df, "onoff", b, n, cc, "goodput") for n in NETS}
            o = {n: _s(df, "onoff", b, n, cc, "interarrival_ms") for n in NETS}
            ok = (g["evdo"] < min(g["hspa-capped"], g["hspa"])
                  and o["evdo"] > max(o["hspa-capped"], o["hspa"]))
            k += ok
            parts.append(f"{b} {cc}: goodput " + "/".join(_f(g[n], "goodput") for n in NETS)
                         + ", 'OWD' " + "/".join(_f(o[n], "interarrival_ms") for n in NETS)
                         + (" ✓" if ok else " ✗"))
    n = 2 * len(bufs)
    return Score.test(k == n, "on-off, eth1/ppp0/ppp1 (eth1 lowest goodput and highest 'OWD'): "
                      + "; ".join(parts), partly=2 * k >= n)


@SCORERS("MB-35")
def mb35(d: Data) -> Score:
    df = d.sim
    tabs = [(ld, UNL) for ld in ("stream50", "stream25") if _has(df, ld, UNL)]
    if not tabs:
        return Score.too_few("no stream table run at this scale")
    k = n = 0
    parts = []
    for ld, b in tabs:
        for cc in CCS:
            o = {net: _s(df, ld, b, net, cc, "interarrival_ms") for net in NETS}
            ok = o["evdo"] > max(o["hspa-capped"], o["hspa"])
            k, n = k + ok, n + 1
            parts.append(f"Table {TABLES[(ld, b)]} {cc} " + "/".join(
                _f(o[x], "interarrival_ms") for x in NETS) + (" ✓" if ok else " ✗"))
    spikes = {net: mean_sd([r["rtt_max"] / r["rtt"] for r in df.filter(
        pl.col("load").is_in([t[0] for t in tabs]) & (pl.col("buffer") == UNL)
        & (pl.col("net") == net)).iter_rows(named=True) if finite(r["rtt"]) and r["rtt"] > 0])[0]
        for net in NETS}
    return Score.test(k == n, "streams unlimited, 'OWD' ms eth1/ppp0/ppp1 (eth1 highest): "
                      + "; ".join(parts) + "; RTT spikes (peak / mean RTT, qualitative) "
                      + ", ".join(f"{SHORT[x]} ×{v:.1f}" for x, v in spikes.items()),
                      partly=2 * k >= n)


@SCORERS("MB-36")
def mb36(d: Data) -> Score:
    df = d.sim
    tabs = [t for t in STREAM_TABLES if _has(df, *t)]
    if not tabs:
        return Score.too_few("no stream table run at this scale")
    k = n = 0
    bad, eq = [], []
    for ld, b in tabs:
        o = {(net, cc): _s(df, ld, b, net, cc, "interarrival_ms") for net in NETS for cc in CCS}
        for net in NETS:
            ok = o[(net, "vegas")] > max(o[(net, "reno")], o[(net, "cubic")])
            k, n = k + ok, n + 1
            if not ok:
                bad.append(f"Table {TABLES[(ld, b)]} {SHORT[net]}: Vegas not highest")
        for cc in CCS:
            ok = o[("hspa", cc)] < min(o[("evdo", cc)], o[("hspa-capped", cc)])
            k, n = k + ok, n + 1
            if not ok:
                bad.append(f"Table {TABLES[(ld, b)]} {cc}: ppp1 not lowest")
        r, c = o[("hspa", "reno")], o[("hspa", "cubic")]
        eq.append(f"{TABLES[(ld, b)]} {_f(r, 'interarrival_ms')}/{_f(c, 'interarrival_ms')}")
    return Score.cells(k, n, "streams 'OWD': Vegas highest per network and ppp1 lowest per CC"
                       + (" (fail: " + "; ".join(bad) + ")" if bad else "")
                       + "; ppp1 Reno/CUBIC ms (≈ in the thesis, reported): " + ", ".join(eq)
                       + " — the thesis's own exception: Table 5.7c, CUBIC on ppp1 59 ms")


def _reno_top(vals: dict[str, float]) -> bool:
    return order_holds({"reno": vals["reno"], "other": max(vals["cubic"], vals["vegas"])},
                       "reno >= other")


@SCORERS("MB-37")
def mb37(d: Data) -> Score:
    df = d.sim
    tabs = [t for t in STREAM_TABLES if _has(df, *t)]
    if not tabs:
        return Score.too_few("no stream table run at this scale")
    k = n = ours = theirs = 0
    for ld, b in tabs:
        for net in NETS:
            mine = _reno_top({cc: _s(df, ld, b, net, cc, "rtt") for cc in CCS})
            pub = _reno_top({cc: _p(d, ld, b, net, cc, "rtt") for cc in CCS})
            k, n = k + (mine == pub), n + 1
            ours, theirs = ours + mine, theirs + pub
    loss = []
    for ld, b in tabs:
        v = {net: (mean_sd([_s(df, ld, b, net, cc, "retrans") for cc in CCS])[0],
                   mean_sd([_s(df, ld, b, net, cc, "rtt") for cc in CCS])[0]) for net in NETS}
        loss.append(f"Table {TABLES[(ld, b)]} retransmissions/RTT s "
                    + ", ".join(f"{SHORT[x]} {a:.0f}/{r:.3f}" for x, (a, r) in v.items()))
    return Score.cells(k, n, f"Reno's RTT highest (ties within 5 %) in {ours} of {n} (table × "
                       f"network) cells, the thesis's tables {theirs} of {n}; the cell passes when "
                       f"ours agrees with the table. Loss and delay per network (reported): "
                       + "; ".join(loss))


@SCORERS("MB-38")
def mb38(d: Data) -> Score:
    df = d.sim
    cells = [(ld, b, net) for ld in ("bulk", "onoff") for b in (UNL, LIM) for net in NETS
             if not (ld == "onoff" and net == "evdo") and _has(df, ld, b)]
    if not cells:
        return Score.too_few("not run at this scale")
    last = [_s(df, ld, b, net, "vegas", "goodput")
            < min(_s(df, ld, b, net, cc, "goodput") for cc in ("reno", "cubic"))
            for ld, b, net in cells]
    g = {cc: _s(df, "onoff", UNL, "evdo", cc, "goodput") for cc in CCS}
    top = g["vegas"] > max(g["reno"], g["cubic"])
    need = len(cells) - 1 if len(cells) == 10 else len(cells)
    a = sum(last) >= need
    return Score.test(a and top, f"Vegas's goodput lowest in {sum(last)} of {len(cells)} bulk and "
                      f"on-off (table × network) cells outside eth1 on-off (≥ {need}; the thesis: "
                      f"9 of 10); highest on eth1 on-off with unlimited buffers: "
                      f"{'yes' if top else 'no'} (Vegas {_f(g['vegas'], 'goodput')}, Reno "
                      f"{_f(g['reno'], 'goodput')}, CUBIC {_f(g['cubic'], 'goodput')} KiB/s)",
                      partly=a or top)


@SCORERS("MB-39")
def mb39(d: Data) -> Score:
    df = d.sim
    k = n = 0
    bad = []
    for (ld, b), tab in TABLES.items():
        if not _has(df, ld, b):
            continue
        for net in NETS:
            o = {cc: _s(df, ld, b, net, cc, "interarrival_ms") for cc in CCS}
            ok = o["vegas"] > max(o["reno"], o["cubic"])
            k, n = k + ok, n + 1
            if not ok:
                bad.append(f"{tab} {SHORT[net]}")
    return Score.cells(k, n, "Vegas's 'OWD' (inter-arrival) highest per (table × network)"
                       + (f"; not in {', '.join(bad)}" if bad else "")
                       + " (the thesis: 23 of 24, not in 5.7 ppp1)")


@SCORERS("MB-40")
def mb40(d: Data) -> Score:
    df = d.sim
    sets = [(ld, b) for ld in ("bulk", "onoff") for b in (UNL, LIM) if _has(df, ld, b)]
    if not sets or min(_runs(df, ld, b) for ld, b in sets) < 3:
        return Score.too_few("the run-to-run spread needs ≥ 3 runs per cell")
    k = n = 0
    bad = []
    for ld, b in sets:
        for cc in CCS:
            ok = True
            for col in ("goodput", "rtt"):
                m0, s0, _ = mean_sd(cell_values(df, col, load=ld, buffer=b, net="hspa-capped", cc=cc))
                m1, s1, _ = mean_sd(cell_values(df, col, load=ld, buffer=b, net="hspa", cc=cc))
                ok &= finite(m0, m1, s0, s1) and abs(m0 - m1) > 2 * max(s0, s1)
            k, n = k + ok, n + 1
            if not ok:
                bad.append(f"{ld} {b} {cc}")
    return Score.test(k == n, f"ppp0 and ppp1 differ by more than twice the larger run-to-run sd "
                      f"in both goodput and RTT in {k} of {n} (traffic × buffers × CC) sets"
                      + (f"; not in {', '.join(bad)}" if bad else ""), partly=2 * k >= n)


