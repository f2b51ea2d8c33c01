"""The CoCo-Beholder thesis's claims (CB-1 … CB-50, examples/studies/coco-beholder/claims.yaml),
one scorer each (ccbench.studies.claims); the per-run tables come from ccbench.studies.coco.
"""
from __future__ import annotations

import polars as pl

from . import claims as cl
from .claims import Data, Score, Scorers
from .common import rel_diff
from .coco import BW_LAYOUTS, METRICS, RTT_LAYOUTS, flow_stats, fmt_msd, fs_rows, kernel_table, mean_of, msd, sq_row, val_cell_ok


# ---------------------------------------------------------------------------- scorers

SCORERS = Scorers()
VAL_X = {"CB-1": 3, "CB-2": 5, "CB-3": 10, "CB-4": 20}


def _val_cells(t, pub_x: dict, X: int):
    ok, bad = 0, []
    for s, p in pub_x.items():
        if t is None or not t.filter((pl.col("cc") == s) & (pl.col("X") == X)).height:
            continue
        for m in METRICS:
            ours = mean_of(t, m, cc=s, X=X)
            if val_cell_ok(m, ours, *p[m]):
                ok += 1
            else:
                bad.append(f"{s} {m} {ours:.2f} vs {p[m][0]} ({p[m][1]})")
    return ok, ok + len(bad), bad


@SCORERS("CB-1", "CB-2", "CB-3", "CB-4")
def cb_validation(d: Data) -> Score:
    X = VAL_X[d.extra["id"]]
    pub_x = d.pub["validation"][X]
    k, n, bad = _val_cells(d.sim["val"], pub_x, X)
    kt = ""
    if kernel_table(d, "val") is not None:
        kk, kn, kbad = _val_cells(kernel_table(d, "val"), pub_x, X)
        if kn:
            kt = f"{kk} of {kn} kernel cells pass" + (f"; misses: {'; '.join(kbad)}"
                                                      if kbad else "")
    text = "misses: " + "; ".join(bad) if bad else ""
    return Score.cells(k, n, text, kernel=kt)


def _endpoints(t, pub_val: dict, lo=3, hi=20):
    good, bad = 0, []
    if t is None:
        return 0, 0, []
    for s in pub_val[lo]:
        if not (t.filter((pl.col("cc") == s) & (pl.col("X") == lo)).height
                and t.filter((pl.col("cc") == s) & (pl.col("X") == hi)).height):
            continue
        for m, want in (("rate", -1), ("owd95", +1), ("loss", 0)):
            p0, p1 = pub_val[lo][s][m][0], pub_val[hi][s][m][0]
            # only where the thesis's own table shows the stated direction
            if (want == -1 and not p1 < p0) or (want == 1 and not p1 > p0) or \
               (want == 0 and p1 < p0):
                continue
            a, b = mean_of(t, m, cc=s, X=lo), mean_of(t, m, cc=s, X=hi)
            okv = b < a if want == -1 else b > a if want == 1 else b >= a
            if okv:
                good += 1
            else:
                bad.append(f"{s} {m} {a:.2f} → {b:.2f}")
    return good, good + len(bad), bad


@SCORERS("CB-5")
def cb5(d: Data) -> Score:
    g, n, bad = _endpoints(d.sim["val"], d.pub["validation"])
    if n == 0:
        return Score.too_few("X = 3 and 20 ms did not both run")
    kt = ""
    if kernel_table(d, "val") is not None:
        kg, kn, kbad = _endpoints(kernel_table(d, "val"), d.pub["validation"])
        kt = f"{kg} of {kn} hold" + (f"; fail: {'; '.join(kbad)}" if kbad else "") if kn else ""
    text = (f"{g} of {n} scheme-metric directions hold from X = 3 to 20 ms"
            + (f"; fail: {'; '.join(bad)}" if bad else ""))
    return Score.test(g == n, text, kernel=kt, partly=g >= 0.9 * n)


@SCORERS("CB-7")
def cb7(d: Data) -> Score:
    t = d.sim["val"]
    over, n, ratios = [], 0, []
    for X, schemes in d.pub["validation"].items():
        for s, p in schemes.items():
            for m in METRICS:
                psd = p[m][1]
                if psd < 0.01:       # below the printed resolution
                    continue
                _, sd, k = msd(t, m, cc=s, X=X)
                if k < 2:
                    continue
                n += 1
                ratios.append(sd / psd)
                if sd > 3 * psd:
                    over.append(f"{s} X={X} {m} σ {sd:.2f} vs {psd}")
    if n == 0:
        return Score.too_few("not enough repeats: ccbench's σ needs 2 or more runs per cell")
    med = sorted(ratios)[len(ratios) // 2]
    text = (f"ccbench's σ exceeds 3× the thesis's in {len(over)} of {n} cells (allowed "
            f"{n // 10}); median σ ratio {med:.2f}" + (f"; e.g. {'; '.join(over[:4])}"
                                                       if over else ""))
    return Score.test(len(over) <= n / 10, text)


def _util_cells(t, pub: dict):
    ok, bad = 0, []
    if t is None:
        return 0, 0, []
    for s, by in pub["utilisation"].items():
        for R, p in by.items():
            if not t.filter((pl.col("cc") == s) & (pl.col("link") == R)).height:
                continue
            mu, sd = p["coco"]
            ours = mean_of(t, "tput", cc=s, link=R)
            if abs(ours - mu) <= 2 * max(sd, 0.01 * R):
                ok += 1
            else:
                bad.append(f"{s} {R} Mbit/s {ours:.1f} vs {mu} ({sd})")
    return ok, ok + len(bad), bad


@SCORERS("CB-8")
def cb8(d: Data) -> Score:
    k, n, bad = _util_cells(d.sim["util"], d.pub)
    kt = ""
    if kernel_table(d, "util") is not None:
        kk, kn, kbad = _util_cells(kernel_table(d, "util"), d.pub)
        kt = (f"{kk} of {kn} kernel cells pass" + (f"; misses: {'; '.join(kbad)}" if kbad
                                                   else "")) if kn else ""
    return Score.cells(k, n, "misses: " + "; ".join(bad) if bad else "", kernel=kt)


# Fifty Shades ---------------------------------------------------------------


def _jain(t, variant) -> float:
    f = fs_rows(t, variant)
    if f is None:
        return float("nan")
    return msd(f.filter(pl.col("flow") == 0), "jain")[0]


def _repeats(f) -> int:
    return 0 if f is None else f["repeat"].n_unique()


def _cb31(t) -> tuple[bool | None, bool | None, str]:
    js = {(n, s): _jain(t, f"bw-{n}{s}") for n in (2, 4) for s in ("cubic", "vegas", "bbr")}
    if not all(cl.finite(v) for v in js.values()):
        return None, None, "the six intra-fairness layouts did not all run"
    order = (js[2, "bbr"] > max(js[2, "cubic"], js[2, "vegas"])
             and js[4, "bbr"] > max(js[4, "cubic"], js[4, "vegas"])
             and js[4, "vegas"] < min(js[4, "cubic"], js[4, "bbr"]))
    text = ("Jain 2 flows: " + ", ".join(f"{s} {js[2, s]:.3f}" for s in ("cubic", "vegas", "bbr"))
            + "; 4 flows: " + ", ".join(f"{s} {js[4, s]:.3f}" for s in ("cubic", "vegas", "bbr")))
    spread = {}
    for v in BW_LAYOUTS:
        f = fs_rows(t, v)
        if f is not None and _repeats(f) >= 2:
            spread[v] = sum(x[3] for x in flow_stats(f)) / len(flow_stats(f))
    var = None
    if "bw-4vegas" in spread and len(spread) >= 2:
        other = max(x for v, x in spread.items() if v != "bw-4vegas")
        var = spread["bw-4vegas"] > 0 and spread["bw-4vegas"] >= 2 * other
        text += (f"; run-to-run σ of the per-flow rates: 4 Vegas {spread['bw-4vegas']:.2f}, "
                 f"largest other BW layout {other:.2f} Mbit/s")
    else:
        text += "; not enough repeats for the run-to-run spread"
    return order, var, text


@SCORERS("CB-31")
def cb31(d: Data) -> Score:
    order, var, text = _cb31(d.sim["fs"])
    kt = _cb31(kernel_table(d, "fs"))[2] if kernel_table(d, "fs") is not None else ""
    if order is None:
        return Score.too_few(text)
    if var is None:
        return Score(cl.TOO_FEW if order else cl.NOT, text, kt)
    return Score.test(order and var, text, kernel=kt, partly=order or var)


def _cb32(t):
    cub = [v for v in BW_LAYOUTS if "cubic" in v]
    bv = ("bw-bbr+vegas", "bw-bbr+3vegas", "bw-vegas+3bbr")
    lo = [(v, x[2]) for v in cub if fs_rows(t, v) is not None for x in flow_stats(fs_rows(t, v), "owd")]
    hi = [(v, x[2]) for v in bv if fs_rows(t, v) is not None for x in flow_stats(fs_rows(t, v), "owd")]
    if not lo or not hi:
        return None, "no Cubic or no BBR+Vegas layout ran"
    a, b = min(lo, key=lambda x: x[1]), max(hi, key=lambda x: x[1])
    return a[1] >= 5 * b[1], (f"lowest flow OWD with Cubic {a[1]:.1f} ms ({a[0]}), highest in "
                              f"the BBR+Vegas layouts {b[1]:.1f} ms ({b[0]}): "
                              f"{a[1] / b[1]:.1f}×")


def _on_both(d: Data, judge) -> Score:
    """A Fifty Shades claim judged on the simulator's layouts, the kernel's beside it;
    ``judge(table) -> (passed or None when the layouts did not run, text)``."""
    ok, text = judge(d.sim["fs"])
    k = kernel_table(d, "fs")
    kt = judge(k)[1] if k is not None else ""
    return Score.too_few(text) if ok is None else Score.test(ok, text, kernel=kt)


@SCORERS("CB-32")
def cb32(d: Data) -> Score:
    return _on_both(d, _cb32)


def _cb33(t):
    f, g = fs_rows(t, "bw-bbr+3cubic"), fs_rows(t, "bw-vegas+3cubic")
    if f is None or g is None:
        return None, "BBR & 3 Cubic or Vegas & 3 Cubic did not run"
    b = f.filter(pl.col("scheme") == "bbr")
    act, rate = float(b["active"].mean()), float(b["rate"].mean())
    j1, j2 = _jain(t, "bw-bbr+3cubic"), _jain(t, "bw-vegas+3cubic")
    ok = act >= 0.9 and j1 > j2
    return ok, (f"BBR {rate:.1f} Mbit/s, above 1 Mbit/s in {act * 100:.0f} % of the slots; "
                f"Jain {j1:.3f} vs Vegas & 3 Cubic {j2:.3f}")


@SCORERS("CB-33")
def cb33(d: Data) -> Score:
    return _on_both(d, _cb33)


def _counted_on_both(d: Data, count):
    """``count(table) -> (layouts passing, layouts judged, text)`` on the simulator's layouts,
    and the kernel's text beside it."""
    k = kernel_table(d, "fs")
    return count(d.sim["fs"]), (count(k)[2] if k is not None else "")


def _cb34(t):
    ok, n, parts = 0, 0, []
    for v in BW_LAYOUTS:
        f = fs_rows(t, v)
        if f is None or "vegas" not in v or not ("bbr" in v or "cubic" in v):
            continue
        fl = flow_stats(f)
        veg = max(x[2] for x in fl if x[1] == "vegas")
        oth = min(x[2] for x in fl if x[1] != "vegas")
        n += 1
        ok += veg < oth
        parts.append(f"{v[3:]}: Vegas ≤ {veg:.1f} vs others ≥ {oth:.1f}")
    return ok, n, "; ".join(parts)


@SCORERS("CB-34")
def cb34(d: Data) -> Score:
    (ok, n, text), kt = _counted_on_both(d, _cb34)
    if n == 0:
        return Score.too_few("no layout mixing Vegas with BBR or Cubic ran")
    return Score.test(ok == n, f"{ok} of {n} layouts: " + text, kernel=kt,
                      partly=ok >= n / 2)


def _cb35(t):
    ok, n, parts = 0, 0, []
    for v in RTT_LAYOUTS:
        f = fs_rows(t, v)
        if f is None or _repeats(f) < 2:
            continue
        fl = flow_stats(f)
        a, b = max(fl, key=lambda x: x[2]), min(fl, key=lambda x: x[2])
        n += 1
        good = a[2] - b[2] > a[3] + b[3]
        ok += good
        parts.append(f"{v}: {a[2]:.1f}±{a[3]:.1f} vs {b[2]:.1f}±{b[3]:.1f}")
    return ok, n, "; ".join(parts)


@SCORERS("CB-35")
def cb35(d: Data) -> Score:
    (ok, n, text), kt = _counted_on_both(d, _cb35)
    if n == 0:
        return Score.too_few("not enough repeats: the run-to-run spread needs 2 or more runs")
    if n < len(RTT_LAYOUTS):
        return Score.too_few(f"only {n} of the six RTT layouts ran with repeats: {text}")
    return Score.test(ok == n, f"{ok} of {n} RTT layouts: fastest vs slowest flow " + text,
                      kernel=kt, partly=ok >= n / 2)


def _cb36(t):
    js = {(n, s): _jain(t, f"rtt{n}-{s}") for n in (2, 4) for s in ("cubic", "vegas", "bbr")}
    if not all(cl.finite(v) for v in js.values()):
        return None, "the six RTT layouts did not all run"
    ok = all(js[n, "vegas"] < max(js[n, "cubic"], js[n, "bbr"]) for n in (2, 4))
    return ok, "; ".join(f"{n} flows: " + ", ".join(f"{s} {js[n, s]:.3f}"
                                                   for s in ("cubic", "vegas", "bbr"))
                         for n in (2, 4))


@SCORERS("CB-36")
def cb36(d: Data) -> Score:
    ok, text = _cb36(d.sim["fs"])
    kt = _cb36(kernel_table(d, "fs"))[1] if kernel_table(d, "fs") is not None else ""
    return Score.too_few(text) if ok is None else Score.test(ok, "Jain " + text, kernel=kt)


def _cb37(t):
    f = fs_rows(t, "rtt4-bbr")
    if f is None:
        return None, "4 BBR with 100-400 ms RTT did not run"
    fl = flow_stats(f, "rate10")
    text = "rate after 10 s: " + " / ".join(fmt_msd(x[2], x[3], x[4]) for x in fl) + " Mbit/s"
    if _repeats(f) < 2:
        return None, text + "; not enough repeats for the run-to-run spread"
    ok = all(abs(a[2] - b[2]) <= a[3] + b[3] for i, a in enumerate(fl) for b in fl[i + 1:])
    return ok, text


@SCORERS("CB-37")
def cb37(d: Data) -> Score:
    return _on_both(d, _cb37)


@SCORERS("CB-38")
def cb38(d: Data) -> Score:
    """The layout with the largest per-flow rate difference, simulator against kernel, must be a
    BBR layout (the acceptance test). With two kernel runs a difference can be the kernel's own
    run-to-run spread, so the largest difference resolved beyond it (Welch's one-sided 95 %
    bound, claims.welch) is named too: partly when only that one is a BBR layout."""
    t, k = d.sim["fs"], kernel_table(d, "fs")
    if k is None:
        return Score.too_few("needs the kernel backend's Fifty Shades runs (--kernel)")
    diffs = []
    for v in dict.fromkeys(k["variant"].to_list()):
        a, b = fs_rows(t, v), fs_rows(k, v)
        if a is None or b is None:
            continue
        best = None
        for fl in sorted(set(a["flow"].to_list())):
            xa = a.filter(pl.col("flow") == fl)["rate"].to_list()
            xb = b.filter(pl.col("flow") == fl)["rate"].to_list()
            diff, hw = cl.welch(xa, xb)
            resolved = cl.finite(hw) and abs(diff) > hw
            if best is None or abs(diff) > abs(best[0]):
                best = (diff, resolved, abs(diff) - hw if cl.finite(hw) else float("nan"))
        diffs.append((abs(best[0]), v, best[1], best[2]))
    if not diffs:
        return Score.too_few("no layout ran on both backends")
    diffs.sort(reverse=True)
    res = sorted((x for x in diffs if x[2]), key=lambda x: x[3], reverse=True)
    text = ("largest per-flow rate differences, simulator vs kernel: "
            + ", ".join(f"{v} {x:.1f}" + ("" if r else " (within the spread)")
                        for x, v, r, _ in diffs[:4]) + " Mbit/s"
            + (f"; largest beyond the run-to-run spread: {res[0][1]} ({res[0][0]:.1f} Mbit/s, "
               f"{res[0][3]:.1f} above the 95 % bound)" if res else "; none beyond the spread")
            + f" ({len(diffs)} layouts on both)")
    return Score.test("bbr" in diffs[0][1], text,
                      partly=bool(res) and "bbr" in res[0][1])


# square wave ----------------------------------------------------------------


def valley(row: dict[int, float], delta: int) -> tuple[bool | None, str]:
    """The valley's shape: the minimum over step at delta - 10 or delta, and throughput at
    delta + 10 at least 3x that minimum. None when the row lacks delta and delta + 10."""
    if delta not in row or delta + 10 not in row:
        return None, ""
    smin = min(row, key=row.get)
    ratio = row[delta + 10] / row[smin] if row[smin] > 0 else float("inf")
    ok = smin in (delta - 10, delta) and ratio >= 3
    return ok, f"min {row[smin]:.1f} at step {smin}, {row[delta + 10]:.1f} at {delta + 10} ({ratio:.1f}×)"


@SCORERS("CB-39")
def cb39(d: Data) -> Score:
    t = d.sim["sq"]
    parts, ok, n = [], 0, 0
    for cc in sorted(set(t["cc"].to_list())) if t is not None else []:
        g = t.filter(pl.col("cc") == cc)
        if g["delta"].n_unique() < 4 or g["step"].n_unique() < 4:
            continue
        c = g.select(pl.corr("delta", "tput", method="spearman").alias("a"),
                     pl.corr("step", "tput", method="spearman").alias("b"))
        a, b = float(c["a"][0]), float(c["b"][0])
        n += 1
        ok += a > 0 and b < 0
        parts.append(f"{cc} ρ(delta) {a:+.2f}, ρ(step) {b:+.2f} ({g.height} points)")
    if n == 0:
        return Score.too_few("the grid at this scale has fewer than 4 deltas and 4 steps")
    return Score.test(ok == n, "; ".join(parts), partly=ok >= n / 2)


@SCORERS("CB-40")
def cb40(d: Data) -> Score:
    t = d.sim["sq"]
    ok, n, bad = 0, 0, []
    for cc in sorted(set(t["cc"].to_list())) if t is not None else []:
        for delta in sorted(set(t.filter(pl.col("cc") == cc)["delta"].to_list())):
            if not 50 <= delta <= 200:
                continue
            v, text = valley(sq_row(t, cc, delta), delta)
            if v is None:
                continue
            n += 1
            ok += v
            if not v:
                bad.append(f"{cc} delta {delta}: {text}")
    if n == 0:
        return Score.too_few("no delta from 50 to 200 ms with step = delta and delta + 10 ran")
    return Score.test(ok == n, f"{ok} of {n} (scheme, delta) rows show the valley"
                      + (f"; fail: {'; '.join(bad[:6])}" if bad else ""), partly=ok >= n / 2)


def _sq_printed(t, pub_sq, delta):
    rows_ok, rows, cells_ok, cells, parts = 0, 0, 0, 0, []
    for cc, by in pub_sq.items():
        row = sq_row(t, cc, delta)
        if not row:
            continue
        for st, p in by[delta].items():
            if st in row:
                cells += 1
                cells_ok += (rel_diff(row[st], p) or 0) <= 10
        v, text = valley(row, delta)
        if v is not None:
            rows += 1
            rows_ok += v
            parts.append(f"{cc} {text}")
    return rows_ok, rows, cells_ok, cells, parts


@SCORERS("CB-41", "CB-42")
def cb41(d: Data) -> Score:
    delta = 150 if d.extra["id"] == "CB-41" else 190
    ro, r, co, c, parts = _sq_printed(d.sim["sq"], d.pub["square_wave"], delta)
    if r == 0:
        return Score.too_few(f"the delta-{delta} row did not run at this scale")
    text = (f"valley shape in {ro} of {r} rows; {co} of {c} cells within d_r 10 %: "
            + "; ".join(parts))
    kt = ""
    if kernel_table(d, "sq") is not None:
        kro, kr, kco, kc, kparts = _sq_printed(kernel_table(d, "sq"), d.pub["square_wave"], delta)
        if kr or kc:
            kt = f"shape in {kro} of {kr} rows; {kco} of {kc} cells: " + "; ".join(kparts)
    shape = ro == r
    return Score.test(shape and co >= c / 2, text, kernel=kt, partly=shape)


@SCORERS("CB-43")
def cb43(d: Data) -> Score:
    b, t = d.sim["base"], d.sim["sq"]
    if b is None:
        return Score.too_few("the base-delay runs did not run")
    inband = cells = moved = rows = 0
    parts = []
    for (cc, base, side, delta), g in sorted(b.group_by(["cc", "base", "side", "delta"]),
                                             key=lambda x: x[0]):
        zero = sq_row(t, cc, delta)
        row = dict(zip(g["step"].to_list(), g["tput"].to_list()))
        common = [s for s in row if s in zero]
        if len(common) < 3:
            continue
        rows += 1
        for s in common:
            cells += 1
            inband += cl.default_band(row[s], zero[s])
        zmin = min(common, key=lambda s: zero[s])
        rmin = min(common, key=lambda s: row[s])
        if zmin != rmin:
            moved += 1
            parts.append(f"{cc} base {base} side {side} delta {delta}: valley {zmin} → {rmin}")
    if rows == 0:
        return Score.too_few("no base-delay row has a zero-base row to compare with")
    text = (f"{inband} of {cells} cells within the default band of the zero-base rows; the "
            f"valley moves in {moved} of {rows} rows" + (f": {'; '.join(parts[:4])}"
                                                          if parts else ""))
    return Score.test(inband == cells and moved == 0, text, partly=moved == 0)


def _cwnd(t, cc, step, col):
    return mean_of(t, col, cc=cc, delta=150, step=step)


@SCORERS("CB-44")
def cb44(d: Data) -> Score:
    t = d.sim["sq"]
    below = [s for s in (120, 130, 140, 150) if cl.finite(_cwnd(t, "cubic", s, "cwnd5"))]
    above = [s for s in (160, 170) if cl.finite(_cwnd(t, "cubic", s, "cwnd3"))]
    if len(below) < 3 or len(above) < 2:
        return Score.too_few("CUBIC at delta 150 ms, steps 120-170, did not all run")
    c5 = [_cwnd(t, "cubic", s, "cwnd5") for s in below]
    falls = all(b < a for a, b in zip(c5, c5[1:]))
    plat = {s: (_cwnd(t, "cubic", s, "cwnd3"), _cwnd(t, "cubic", s, "cwnd_late")) for s in above}
    at_plateau = all(a >= 0.9 * b for a, b in plat.values())
    text = ("cwnd at 5 s: " + ", ".join(f"step {s} {c:.0f}" for s, c in zip(below, c5))
            + "; cwnd at 3 s vs its 3-10-s median: "
            + ", ".join(f"step {s} {a:.0f} vs {b:.0f}" for s, (a, b) in plat.items()))
    return Score.test(falls and at_plateau, text, partly=falls or at_plateau)


def _rel_range(xs):
    return (max(xs) - min(xs)) / max(xs) if xs and max(xs) > 0 else float("nan")


@SCORERS("CB-45")
def cb45(d: Data) -> Score:
    t = d.sim["sq"]
    steps = [s for s in (120, 130, 140, 150) if cl.finite(_cwnd(t, "bbr", s, "cwnd_mean"))
             and cl.finite(_cwnd(t, "cubic", s, "cwnd_mean"))]
    if len(steps) < 3:
        return Score.too_few("BBR and CUBIC at delta 150 ms, steps 120-150, did not all run")
    b = [_cwnd(t, "bbr", s, "cwnd_mean") for s in steps]
    c = [_cwnd(t, "cubic", s, "cwnd_mean") for s in steps]
    rb, rc = _rel_range(b), _rel_range(c)
    text = (f"mean cwnd over 2-10 s, steps {steps[0]}-{steps[-1]}: BBR "
            + "/".join(f"{x:.0f}" for x in b) + f" (range {rb * 100:.0f} %), CUBIC "
            + "/".join(f"{x:.0f}" for x in c) + f" (range {rc * 100:.0f} %)")
    return Score.test(rb < 0.5 * rc, text)


def _tr(d: Data, cc, step, col, skew=4, kernel=False):
    t = kernel_table(d, "trace") if kernel else d.sim["trace"]
    return msd(t, col, cc=cc, delta=150, step=step, skew=skew)


def _periodic(d: Data, cc: str, kernel: bool = False) -> tuple[bool | None, str]:
    """CB-46's test: period 300 ms and the fraction of time data flow as CB-48's formulas
    (0.07 at step 140, 0.47 at 160), each within ±10 ms of 300 ms."""
    if (kernel_table(d, "trace") if kernel else d.sim["trace"]) is None:
        return None, "the per-packet square-wave traces did not run"
    want = {140: 2 * (150 - 140) / 300, 160: (300 - 160) / 300}
    ok, parts = True, []
    for st, f in want.items():
        per = _tr(d, cc, st, "period_ms", kernel=kernel)[0]
        fr = _tr(d, cc, st, "send_frac", kernel=kernel)[0]
        if not cl.finite(per, fr):
            return None, f"{cc} step {st} did not run"
        ok &= abs(per - 300) <= 10 and abs(fr - f) <= 10 / 300
        parts.append(f"step {st}: period {per:.0f} ms, data {fr * 100:.1f} % of the time "
                     f"(formula {f * 100:.1f} %)")
    return ok, f"{cc}: " + "; ".join(parts)


@SCORERS("CB-46")
def cb46(d: Data) -> Score:
    ok, text = _periodic(d, "bbr")
    return Score.too_few(text) if ok is None else Score.test(ok, text)


@SCORERS("CB-47")
def cb47(d: Data) -> Score:
    t = d.sim["sq"]
    pub = d.pub["square_wave_bbr_owd95"]
    res, parts = [], []
    for st, p in pub.items():
        o = mean_of(t, "owd95", cc="bbr", delta=150, step=st)
        if not cl.finite(o):
            return Score.too_few(f"BBR at delta 150, step {st} did not run")
        dr = rel_diff(o, p)
        res.append(dr <= 10)
        parts.append(f"step {st}: {o:.2f} ms vs {p} (d_r {dr:.1f} %)")
    kt = ""
    if kernel_table(d, "sq") is not None:
        kp = [f"step {st}: {mean_of(kernel_table(d, 'sq'), 'owd95', cc='bbr', delta=150, step=st):.2f} ms"
              for st in pub]
        kt = "; ".join(kp) + " (this machine's BBR)"
    return Score.test(all(res), "; ".join(parts), kernel=kt, partly=any(res))


def _groups(d: Data, cc: str, kernel: bool = False) -> tuple[bool | None, str]:
    """CB-48's data groups: (burst, gap) per step within ±10 ms of the thesis's intervals
    (means over the runs of each run's medians; stray sends set aside, trace_stats)."""
    if (kernel_table(d, "trace") if kernel else d.sim["trace"]) is None:
        return None, "the per-packet square-wave traces did not run"
    want = {120: (60, 240), 140: (20, 280), 160: (140, 160)}
    ok, parts = True, []
    for st, (b, g) in want.items():
        mb, mg = (_tr(d, cc, st, c, kernel=kernel)[0] for c in ("burst_ms", "gap_ms"))
        if not cl.finite(mb, mg):
            return None, f"{cc} step {st} did not run"
        ok &= abs(mb - b) <= 10 and abs(mg - g) <= 10
        parts.append(f"step {st}: data {mb:.0f} ms, silence {mg:.0f} ms (thesis {b} / {g})")
    return ok, f"{cc}: " + "; ".join(parts)


DELACK_NOTE = ("the delayed-ACK peaks are not observed: ccbench records data packets, not "
               "per-ACK RTT samples")


def _kernel_groups(d: Data, cc: str) -> str:
    """The kernel's data groups for the kernel column (or '' without kernel traces)."""
    ok, text = _groups(d, cc, kernel=True)
    if ok is None:
        return ""
    n = _tr(d, cc, 140, "burst_ms", kernel=True)[2]
    return f"{text} ({n} run(s) per step; Linux's {cc}{', intervals within ±10 ms' if ok else ''})"


@SCORERS("CB-48")
def cb48(d: Data) -> Score:
    ok, text = _groups(d, "bbr")
    if ok is None:
        return Score.too_few(text)
    return Score.test(False, text + "; " + DELACK_NOTE, partly=ok,
                      kernel=_kernel_groups(d, "bbr"))


@SCORERS("CB-49")
def cb49(d: Data) -> Score:
    t = d.sim["trace"]
    if t is None:
        return Score.too_few("the per-packet square-wave traces did not run")
    s150, s160 = _tr(d, "bbr", 150, "tput")[0], _tr(d, "bbr", 160, "tput")[0]
    e150, e160 = _tr(d, "bbr", 150, "tput", 0)[0], _tr(d, "bbr", 160, "tput", 0)[0]
    gap = _tr(d, "bbr", 150, "max_gap_ms")[0]
    if not cl.finite(s150, s160, e150, e160):
        return Score.too_few("BBR at steps 150/160 with both switchings did not all run")
    low = s150 < 0.5 * s160 and cl.finite(gap) and gap >= 500
    exact = cl.default_band(e150, e160)
    text = (f"4-ms skew: step 150 {s150:.1f} vs 160 {s160:.1f} Mbit/s, longest silence "
            f"{gap:.0f} ms; exact switching: step 150 {e150:.1f} vs 160 {e160:.1f} Mbit/s")
    return Score.test(low and exact, text, partly=low or exact)


@SCORERS("CB-50")
def cb50(d: Data) -> Score:
    p, pt = _periodic(d, "cubic")
    g, gt = _groups(d, "cubic")
    if p is None or g is None:
        return Score.too_few(pt if p is None else gt)
    kt = _kernel_groups(d, "cubic")
    kp = _periodic(d, "cubic", kernel=True)[1] if kt else ""
    return Score.test(False, f"{pt}; {gt.split(': ', 1)[1]}; {DELACK_NOTE}",
                      partly=p and g, kernel=f"{kp}; {kt.split(': ', 1)[1]}" if kt else "")


