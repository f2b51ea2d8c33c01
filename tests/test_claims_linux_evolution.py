"""The linux-evolution study's claim scorers (LE-1 … LE-27) on hand-made tables: tables built
from the thesis's own numbers are scored reproduced; a planted wrong simulator number (or a
wrong published one) turns the verdict. No simulator runs."""
from __future__ import annotations

import copy
import math

import polars as pl
import pytest

from ccbench.studies import claims as cl
from ccbench.studies import linux_evolution as le
from ccbench.studies import linux_evolution_claims as lec
from ccbench.studies.common import STUDIES_DIR

PUB = le.published()
P26, P37, P310, P312 = le.PROFS
NOISE = (-1.0, 0.0, 1.0)  # three repeats: mean m, sample σ s


def _sim1() -> list[dict]:
    """Simulation 1 as the thesis describes it: Table 5.1's goodputs, the slow four's times
    (§5.1.4.1), YeAH's and Reno's retransmissions on 3.10 (§5.1.6)."""
    top26 = {"scalable", "htcp", "cubic", "veno", "hybla", "lp"}
    rows = []
    for cc in lec.ALL13:
        g0 = PUB["sim1"][cc]["goodput_kBps"]
        for pr in le.PROFS:
            f = {P26: 1.0 if cc in top26 else 0.97, P37: 0.9 if cc == "hybla" else 1.0,
                 P310: 0.95 if cc == "scalable" else 0.97,
                 P312: 0.95 if cc == "scalable" else 0.97}[pr]
            sd = {(P26, "hybla"): 0.2, (P26, "scalable"): 0.005, (P37, "reno"): 0.05,
                  (P37, "westwood"): 0.05}.get((pr, cc), 0.02)
            t = {"hybla": {P26: 1700, P37: 1300, P310: 2000, P312: 1400}.get(pr),
                 "lp": 1000,
                 "yeah": 1200 if pr == P310 else 800,
                 "scalable": 1200 if pr == P310 else 800}.get(cc, 700)
            rs = {"yeah": 0.30, "reno": 0.11}.get(cc, 0.01) if pr == P310 else 0.01
            for x in (0, 0.02):
                for rep, e in enumerate(NOISE):
                    rows.append({"cc": cc, "x": x, "profile": pr, "repeat": rep,
                                 "delay_s": t * (1 + 0.005 * e), "goodput_kBps": g0 * f + e * sd,
                                 "retrans_share": rs})
    return rows


def _sim2() -> list[dict]:
    """Simulation 2 = Tables 5.2-5.9: each cell's mean, and three repeats whose 90 % interval
    (1.645 σ/√3) is the printed one; the best kernel's goodput as printed, the others 10 %
    lower."""
    rows = []
    for n, per in PUB["sim2_delay"].items():
        for cc, kv in per.items():
            gp = PUB["sim2_goodput"][n][cc]
            gm, gh = gp["goodput_kBps"]
            for kver, (m, h) in kv.items():
                pr = next(p for p, v in le.KERNELS.items() if v == kver)
                s = h * math.sqrt(3) / le.Z90
                gs = gh * math.sqrt(3) / le.Z90
                g = gm if kver == gp["best_kernel"] else 0.9 * gm
                for rep, e in enumerate(NOISE):
                    rows.append({"cc": cc, "x": n, "profile": pr, "repeat": rep,
                                 "delay_s": m + e * s, "goodput_kBps": g + e * gs * g / gm,
                                 "retrans_share": 0.0})
    return rows


def _traces() -> pl.DataFrame:
    return pl.DataFrame([{"cc": cc, "profile": P310, "repeat": r, "rtt_p5_ms": 200.0,
                          "rtt_p95_ms": 200.0 + span, "cwnd_p10": 10.0, "cwnd_p50": 15.0,
                          "cwnd_p90": 20.0}
                         for cc, span in (("hybla", 400.0), ("veno", 100.0), ("yeah", 150.0),
                                          ("reno", 100.0)) for r in range(3)])


def data(**changes) -> cl.Data:
    s1, s2 = pl.DataFrame(_sim1()), pl.DataFrame(_sim2())
    sim = {"csma1": s1, "csma2": s2, "fd1": s1.clone(), "fd2": s2.clone(),
           "traces": _traces(), "fd_traces": _traces()}
    sim.update(changes)
    return cl.Data(sim=sim, kernel=None, pub=copy.deepcopy(PUB), scale="full")


def score(d: cl.Data, cid: str) -> cl.Score:
    d.extra["id"] = cid
    return lec.SCORERS[cid](d)


def scored(d: cl.Data) -> dict[str, str]:
    claims = cl.load_claims(STUDIES_DIR / le.NAME)
    return {s.claim.id: s.score.verdict for s in cl.score_all(claims, lec.SCORERS, d, {})}


def test_every_claim_has_a_scorer_or_is_not_testable():
    claims = cl.load_claims(STUDIES_DIR / le.NAME)
    assert [c.id for c in claims] == [f"LE-{i}" for i in range(1, 28)]
    for c in claims:
        assert (c.id in lec.SCORERS) == c.testable, c.id
    assert [c.id for c in claims if not c.testable] == ["LE-9"]


def test_the_thesis_own_numbers_are_reproduced():
    v = scored(data())
    assert v.pop("LE-9") == cl.NOT_TESTABLE
    assert set(v.values()) == {cl.REPRODUCED}, {k: x for k, x in v.items() if x != cl.REPRODUCED}


def _set(df: pl.DataFrame, col: str, value, **eq) -> pl.DataFrame:
    cond = pl.lit(True)
    for k, x in eq.items():
        cond = cond & (pl.col(k) == x)
    return df.with_columns(pl.when(cond).then(value).otherwise(pl.col(col)).alias(col))


def _scale(df: pl.DataFrame, col: str, f: float, **eq) -> pl.DataFrame:
    return _set(df, col, pl.col(col) * f, **eq)


@pytest.mark.parametrize("cid, plant", [
    # simulation 1: Hybla as fast as the rest; YeAH retransmits like Reno; Veno's RTT as wild
    ("LE-1", lambda d: d.sim.update(csma1=_set(d.sim["csma1"], "goodput_kBps", 7.2, cc="hybla"))),
    ("LE-4", lambda d: d.sim.update(csma1=_set(d.sim["csma1"], "delay_s", 700.0, profile=P310))),
    ("LE-6", lambda d: d.sim.update(csma1=_scale(d.sim["csma1"], "goodput_kBps", 0.5, x=0.02))),
    ("LE-7", lambda d: d.sim.update(csma1=_set(d.sim["csma1"], "retrans_share", 0.01, cc="yeah"))),
    ("LE-8", lambda d: d.sim.update(traces=_set(d.sim["traces"], "rtt_p95_ms", 700.0, cc="veno"))),
    # simulation 2: every N = 4 time 2.5 times the thesis's; N = 8 goodput halved; 2.6.36
    # the slowest at N = 2; intervals ten times too wide
    ("LE-12", lambda d: d.sim.update(csma2=_scale(d.sim["csma2"], "delay_s", 2.5, x=4))),
    ("LE-17", lambda d: d.sim.update(csma2=_scale(d.sim["csma2"], "goodput_kBps", 0.4, x=8))),
    ("LE-18", lambda d: d.sim.update(csma2=_scale(d.sim["csma2"], "delay_s", 0.3, x=8, cc="lp"))),
    ("LE-22", lambda d: d.sim.update(csma2=_scale(d.sim["csma2"], "delay_s", 3.0, x=2,
                                                  profile=P26))),
    ("LE-26", lambda d: d.sim.update(csma2=_scale(d.sim["csma2"], "delay_s", 0.5, profile=P312))),
    # wrong published numbers
    ("LE-2", lambda d: d.pub["sim1_times"].update(hybla_s=5000)),
    ("LE-11", lambda d: d.pub["sim2_goodput"][2]["cubic"].update(goodput_kBps=[9.0, 0.1])),
    ("LE-19", lambda d: d.pub["sim2_goodput_t511"]["veno"].update({8: 3.5})),
    ("LE-16", lambda d: [kv.update({k: [3 * m, h]}) for kv in d.pub["sim2_delay"][8].values()
                         for k, (m, h) in list(kv.items())]),
    ("LE-25", lambda d: d.sim.update(csma2=_scale(d.sim["csma2"], "delay_s", 3.0, x=8, cc="htcp"))),
])
def test_a_planted_wrong_number_turns_the_verdict(cid, plant):
    d = data()
    assert score(d, cid).verdict == cl.REPRODUCED
    plant(d)
    s = score(d, cid)
    assert s.verdict in (cl.PARTLY, cl.NOT), (cid, s)


def test_intervals_ten_times_wider_fail_the_consistency_claim():
    s2 = pl.DataFrame(_sim2())
    mean = s2.group_by(["cc", "x", "profile"]).agg(pl.col("delay_s").mean().alias("m"),
                                                   pl.col("goodput_kBps").mean().alias("g"))
    s2 = s2.join(mean, on=["cc", "x", "profile"]).with_columns(
        (pl.col("m") + (pl.col("delay_s") - pl.col("m")) * 10).alias("delay_s"),
        (pl.col("g") + (pl.col("goodput_kBps") - pl.col("g")) * 10).alias("goodput_kBps"),
    ).drop("m", "g")
    assert score(data(csma2=s2), "LE-27").verdict in (cl.PARTLY, cl.NOT)


def test_a_scale_without_the_cells_says_too_few_not_nan():
    s2 = pl.DataFrame(_sim2()).filter((pl.col("repeat") == 0) & pl.col("x").is_in([2, 8])
                                      & pl.col("cc").is_in(["cubic", "lp"]))
    d = data(csma2=s2)
    for cid in ("LE-10", "LE-12", "LE-18", "LE-26", "LE-27"):
        s = score(d, cid)
        assert s.verdict == cl.TOO_FEW, (cid, s)
        assert "nan" not in s.sim


def test_the_full_duplex_reading_is_printed_beside_not_scored():
    fd2 = _scale(pl.DataFrame(_sim2()), "delay_s", 3.0, x=2, profile=P26)
    s = score(data(fd2=fd2), "LE-22")
    assert s.verdict == cl.REPRODUCED
    assert "full duplex (beside, not scored): fails" in s.sim
