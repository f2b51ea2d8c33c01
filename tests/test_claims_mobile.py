"""The mobile-broadband study's claim scorers (MB-1 … MB-40) on hand-built per-run tables: the
thesis's own numbers pass, and a planted wrong simulator or published number fails the claim.
No simulator runs."""
from __future__ import annotations

import copy
import math

import polars as pl
import pytest

from ccbench.studies import claims as cl
from ccbench.studies import mobile, mobile_claims
from ccbench.studies.claims import Data

LOADS = ("bulk", "onoff", "stream50", "stream25")
BUFS = ("unlimited", "limited")


def _eps(load, buf, net, cc, col) -> float:
    """Relative run-to-run spread of a synthetic cell: the variance orderings the thesis states
    (MB-23, MB-33) hold."""
    if load == "bulk" and buf == "unlimited":
        if col == "goodput":
            return {"evdo": 0.01, "hspa-capped": 0.02, "hspa": 0.03}[net]
        if col == "rtt" and net == "hspa-capped":
            return 0.05
    if load == "onoff" and net == "evdo" and cc == "reno":
        if col == "interarrival_ms" and buf == "limited":
            return 0.05
        if col == "rtt" and buf == "unlimited":
            return 0.05
    return 0.01


def _trace(load, buf, net, cc, pub) -> dict:
    """Trace levels that pass the trace claims (MB-18 … MB-30)."""
    rtt = pub["rtt_s"]
    t = {"retrans": 0 if (net == "hspa" or cc == "vegas") else 20, "delivered_pkts": 11587,
         "rtt_max": 2 * rtt, "max_cwnd": 100, "max_inflight": 100, "first_loss_s": 2.0,
         "rate_before_loss_mbit": 3.0, "burst_retrans": 5, "cwnd_first_burst": 140.0,
         "burst_arrival_s": 2.0, "owd_ms": 50.0, "completed": True}
    if load == "bulk" and buf == "unlimited":
        if net == "hspa" and cc == "reno":
            t.update(rtt_max=4.5, max_cwnd=2700, first_loss_s=math.nan, burst_retrans=0)
        if net == "hspa" and cc == "cubic":
            t["max_cwnd"] = 600
        if net == "evdo" and cc == "cubic":
            t.update(max_cwnd=140, rtt_max=2.0)
    if load == "bulk" and buf == "limited" and net == "hspa":
        t["max_inflight"] = 400
    if load == "onoff" and net != "evdo":
        t["max_cwnd"] = 175
    return t


def synthetic(pub: dict, repeats: int = 10, bagplot: bool = False) -> pl.DataFrame:
    """Runs with the thesis's means; ``bagplot``: on-off ppp0 below ppp1 in RTT and 'OWD' with
    Reno and CUBIC, as the bag plots' medians (MB-33) have it and the tables' means do not."""
    rows = []
    for load in LOADS:
        for buf in BUFS:
            for net in mobile.NETS:
                for cc in mobile.CCS:
                    p = pub[load][buf][net][cc]
                    base = {"goodput": p["goodput_KiBps"], "rtt": p["rtt_s"],
                            "interarrival_ms": p["interarrival_ms"],
                            "ssth": p["ssthresh_changes"] or 0.0}
                    if bagplot and load == "onoff" and cc != "vegas" and net == "hspa-capped":
                        q = pub[load][buf]["hspa"][cc]
                        base["rtt"] = q["rtt_s"] * 0.9
                        base["interarrival_ms"] = q["interarrival_ms"] * 0.9
                    for r in range(repeats):
                        sign = 1 if r % 2 else -1
                        row = {"load": load, "buffer": buf, "net": net, "cc": cc, "repeat": r}
                        for col, v in base.items():
                            e = _eps(load, buf, net, cc, col) if col != "ssth" else 0.0
                            row[col] = v * (1 + sign * e)
                        row.update(_trace(load, buf, net, cc, p))
                        rows.append(row)
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def pub():
    return mobile.published()


@pytest.fixture(scope="module")
def base(pub):
    return synthetic(pub)


@pytest.fixture(scope="module")
def claim_list():
    from ccbench.studies.common import STUDIES_DIR
    return cl.load_claims(STUDIES_DIR / mobile.NAME)


def score(claim_list, df, pub, scale="full", kernel=None) -> dict[str, cl.Score]:
    d = Data(sim=df, kernel=kernel, pub=pub, scale=scale)
    return {s.claim.id: s.score for s in cl.score_all(claim_list, mobile_claims.SCORERS, d, {})}


def test_every_claim_has_a_scorer_and_the_list_has_forty(claim_list):
    assert [c.id for c in claim_list] == [f"MB-{i}" for i in range(1, 41)]
    assert set(mobile_claims.SCORERS) == {c.id for c in claim_list}
    assert sum(c.qualitative for c in claim_list) == 5


def test_the_theses_own_numbers_reproduce_every_claim(claim_list, pub, base):
    """Every claim but MB-33 holds on the thesis's own tables; MB-33 reads the bag plots'
    medians, which put ppp0 lowest where Table 5.3's means put ppp1."""
    scores = score(claim_list, base, pub)
    bad = {k: (s.verdict, s.sim) for k, s in scores.items()
           if s.verdict != cl.REPRODUCED and k != "MB-33"}
    assert not bad, bad
    assert scores["MB-33"].verdict in (cl.PARTLY, cl.NOT)
    assert score(claim_list, synthetic(pub, bagplot=True), pub)["MB-33"].verdict == cl.REPRODUCED


def test_one_repeat_is_too_few_for_the_spread_claims(claim_list, pub):
    df = synthetic(pub, repeats=1, bagplot=True)
    scores = score(claim_list, df, pub, scale="reduced")
    for i in ("MB-23", "MB-33", "MB-40"):
        assert scores[i].verdict == cl.TOO_FEW, (i, scores[i].sim)
        assert "nan" not in scores[i].sim
    assert scores["MB-9"].verdict == cl.REPRODUCED


def _set(df, col, value, **eq):
    cond = pl.lit(True)
    for k, v in eq.items():
        cond = cond & (pl.col(k) == v)
    return df.with_columns(pl.when(cond).then(pl.lit(value)).otherwise(pl.col(col)).alias(col))


PLANTS = [
    # (claim, column, value, cell): a wrong simulator number
    ("MB-1", "goodput", 20.0, dict(load="bulk", buffer="unlimited")),
    ("MB-6", "interarrival_ms", 500.0, dict(load="stream25", buffer="unlimited")),
    ("MB-9", "rtt", 0.01, dict(load="bulk", buffer="unlimited", net="evdo", cc="cubic")),
    ("MB-13", "goodput", 50.0, dict(load="bulk", buffer="limited", net="hspa", cc="cubic")),
    ("MB-16", "goodput", 10.0, dict(load="onoff", buffer="unlimited", net="evdo", cc="vegas")),
    ("MB-18", "retrans", 2069, dict(load="bulk", buffer="unlimited", net="hspa", cc="reno")),
    ("MB-20", "max_cwnd", 400, dict(load="bulk", buffer="unlimited", net="evdo", cc="cubic")),
    ("MB-23", "goodput", 1.0, dict(load="bulk", buffer="unlimited", net="evdo", cc="reno",
                                   repeat=3)),
    ("MB-25", "goodput", 150.0, dict(load="bulk", buffer="limited", net="evdo", cc="reno")),
    ("MB-28", "max_inflight", 5000, dict(load="bulk", buffer="limited", net="hspa")),
    ("MB-30", "burst_arrival_s", 9.0, dict(load="onoff", buffer="unlimited", net="hspa")),
    ("MB-31", "ssth", 4.0, dict(load="onoff", buffer="unlimited", net="hspa", cc="reno")),
    ("MB-36", "interarrival_ms", 0.5, dict(load="stream50", net="evdo", cc="vegas")),
    ("MB-38", "goodput", 1000.0, dict(load="bulk", net="hspa-capped", cc="vegas")),
    ("MB-39", "interarrival_ms", 0.1, dict(cc="vegas", net="hspa")),
    ("MB-40", "rtt", 0.33, dict(load="bulk", net="hspa-capped", cc="cubic")),
]


@pytest.mark.parametrize("cid,col,value,eq", PLANTS, ids=[p[0] for p in PLANTS])
def test_a_wrong_simulator_number_fails_the_claim(claim_list, pub, base, cid, col, value, eq):
    df = _set(base, col, value, **eq)
    s = score(claim_list, df, pub)[cid]
    assert s.verdict in (cl.PARTLY, cl.NOT), (cid, s.verdict, s.sim)


def test_a_wrong_published_number_fails_the_claim(claim_list, pub, base):
    df = base
    bad = copy.deepcopy(pub)
    bad["bulk"]["unlimited"]["hspa"]["reno"]["rtt_s"] = 0.2      # MB-1's cells and MB-18
    bad["traces"]["ppp1_cubic_cwnd_segments"] = 2000              # MB-19
    for net in mobile.NETS:                                        # MB-37: Reno on top
        bad["stream50"]["unlimited"][net]["reno"]["rtt_s"] = 1.0   # in all of Table 5.5b
    s = score(claim_list, df, bad)
    assert s["MB-1"].verdict == cl.REPRODUCED and "35 of 36" in s["MB-1"].sim
    assert s["MB-18"].verdict == cl.NOT
    assert s["MB-19"].verdict == cl.PARTLY
    assert s["MB-37"].verdict == cl.PARTLY and "10 of 12 cells pass" in s["MB-37"].sim


def test_kernel_columns_are_scored_where_the_kernel_ran(claim_list, pub, base):
    df = base
    k = df.filter(pl.col("load").is_in(["bulk", "onoff"]) & (pl.col("buffer") == "unlimited")
                  & (pl.col("repeat") == 0))
    s = score(claim_list, df, pub, kernel=k)
    assert s["MB-9"].kernel.startswith("3 of 3 orderings hold")
    assert s["MB-1"].kernel.startswith("36 of 36 cells")
    assert s["MB-2"].kernel == ""
