"""Aggregation across repeats: the t confidence interval against a hand computation, the
grouping, and the Student t quantile against tabulated values."""
from __future__ import annotations

import math

import polars as pl
import pytest

from ccbench.campaign import aggregate, t_quantile
from ccbench.campaign.metrics import SCHEMA


def index(rows):
    """A synthetic index: rows of (run, point, queue, repeat, flow, scheme, tput, jain)."""
    base = {c: None for c in SCHEMA}
    out = []
    for run, point, q, rep, flow, scheme, tput, jain in rows:
        out.append({**base, "run_key": run, "point": point, "label": f"q={q}", "repeat": rep,
                    "seed": rep, "central.queue": q, "flow": flow, "scheme": scheme,
                    "avg_tput_mbps": tput, "jain": jain, "backend": "sim",
                    "ccbench_version": "x"})
    schema = {"run_key": pl.String, "point": pl.Int64, "label": pl.String, "repeat": pl.Int64,
              "seed": pl.UInt64, "central.queue": pl.String, **SCHEMA, "backend": pl.String,
              "ccbench_version": pl.String}
    return pl.DataFrame(out, schema=schema)


@pytest.mark.parametrize("p, df, table", [
    (0.975, 1, 12.706), (0.975, 2, 4.303), (0.95, 2, 2.920), (0.95, 4, 2.132),
    (0.975, 4, 2.776), (0.95, 5, 2.015), (0.975, 9, 2.262), (0.995, 20, 2.845),
    (0.95, 30, 1.697), (0.975, 120, 1.980),
])
def test_t_quantile_matches_tables(p, df, table):
    assert round(t_quantile(p, df), 3) == table
    assert math.isclose(t_quantile(1 - p, df), -t_quantile(p, df))


def test_ci_against_a_hand_computation():
    # three repeats at one point: cubic flows 10, 12, 17 Mbit/s (one flow per run);
    # bbr: two flows per run, averaged within each run first: (4+6)/2, (8+8)/2, (1+2)/2
    rows = []
    for rep, (c, b1, b2) in enumerate([(10, 4, 6), (12, 8, 8), (17, 1, 2)]):
        run = f"r{rep}"
        rows += [(run, 0, "1bdp", rep, 0, "cubic", c, 0.9),
                 (run, 0, "1bdp", rep, 1, "bbr", b1, 0.9),
                 (run, 0, "1bdp", rep, 2, "bbr", b2, 0.9)]
    st = aggregate(index(rows), by="scheme", metrics=["avg_tput_mbps"], level=0.9)
    cubic = st.filter(pl.col("scheme") == "cubic").row(0, named=True)
    # hand computation: mean 13, s² = ((−3)² + (−1)² + 4²)/2 = 13, t_{0.95,2} = 2.919986
    assert cubic["n"] == 3 and cubic["mean"] == 13.0 and cubic["median"] == 12.0
    assert math.isclose(cubic["std"], math.sqrt(13))
    half = 2.919986 * math.sqrt(13) / math.sqrt(3)
    assert math.isclose(cubic["ci_half"], half, rel_tol=1e-6)
    assert math.isclose(cubic["ci_low"], 13 - half, rel_tol=1e-6)
    assert math.isclose(cubic["ci_high"], 13 + half, rel_tol=1e-6)
    assert (cubic["min"], cubic["max"], cubic["level"]) == (10.0, 17.0, 0.9)
    bbr = st.filter(pl.col("scheme") == "bbr").row(0, named=True)
    # per-run means 5, 8, 1.5 → mean 4.8333, s² = ((0.1667)² + (3.1667)² + (−3.3333)²)/2
    vals = [5.0, 8.0, 1.5]
    m = sum(vals) / 3
    s = math.sqrt(sum((v - m) ** 2 for v in vals) / 2)
    assert bbr["n"] == 3 and math.isclose(bbr["mean"], m) and math.isclose(bbr["std"], s)
    assert math.isclose(bbr["ci_half"], 2.919986 * s / math.sqrt(3), rel_tol=1e-6)
    # 95 % is wider; within="sum" adds the two bbr flows of a run
    st95 = aggregate(index(rows), by="scheme", metrics=["avg_tput_mbps"], level=0.95)
    assert st95.filter(pl.col("scheme") == "cubic")["ci_half"][0] > half
    ssum = aggregate(index(rows), by="scheme", metrics=["avg_tput_mbps"], within="sum")
    assert ssum.filter(pl.col("scheme") == "bbr")["mean"][0] == (10 + 16 + 3) / 3


def test_grouping_by_point_only_and_single_repeat():
    rows = [("a", 0, "1bdp", 0, 0, "cubic", 5, 0.5), ("a", 0, "1bdp", 0, 1, "bbr", 7, 0.5),
            ("b", 1, "2bdp", 0, 0, "cubic", 6, 0.8), ("b", 1, "2bdp", 0, 1, "bbr", 6, 0.8)]
    st = aggregate(index(rows), by=(), metrics=["jain", "avg_tput_mbps"])
    assert st.columns[:3] == ["point", "label", "central.queue"]
    j = st.filter(pl.col("metric") == "jain")
    assert j["mean"].to_list() == [0.5, 0.8] and j["n"].to_list() == [1, 1]
    assert j["ci_half"].to_list() == [None, None]  # no interval from one repeat
    with pytest.raises(ValueError, match="cannot group by"):
        aggregate(index(rows), by="colour")
    with pytest.raises(ValueError, match="unknown metric"):
        aggregate(index(rows), metrics=["speed"])
    with pytest.raises(ValueError, match="between 0 and 1"):
        aggregate(index(rows), level=90)
