"""`ccbench compare`: two runs side by side."""
from __future__ import annotations

import pytest

from ccbench import api
from ccbench.analysis.compare import compare
from simhelp import experiment, run


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    d = tmp_path_factory.mktemp("cmp")
    deep = run(d, experiment([{"scheme": "cubic", "flows": 2, "direction": "->"}], duration=4,
                             queue=1000, packets=False), "deep")
    shallow = run(d, experiment([{"scheme": "cubic", "flows": 2, "direction": "->"}], duration=4,
                                queue=20, packets=False), "shallow")
    return deep, shallow


def test_table_reports_both_runs_and_relative_differences(two, tmp_path):
    deep, shallow = two
    c = compare(deep, shallow)
    t = c.table
    assert t["curve"].to_list() == ["Flow 1: cubic ->", "Flow 2: cubic ->", "Total: 2 flows"]
    row = t.row(2, named=True)
    # A 20-packet queue holds far less delay than a 1000-packet one.
    assert row["mean_delay_ms_b"] < row["mean_delay_ms_a"]
    expected = (row["mean_delay_ms_b"] - row["mean_delay_ms_a"]) / row["mean_delay_ms_a"] * 100
    assert row["mean_delay_ms_diff_pct"] == pytest.approx(expected)
    files = api.write_comparison(c, tmp_path / "out")
    assert [f.name for f in files] == ["compare.txt", "compare.csv", "compare-rate.png",
                                       "compare-delay.png", "compare-cwnd.png", "report.html"]
    assert all(f.stat().st_size > 0 for f in files)
    assert "Δ%" in (tmp_path / "out" / "compare.txt").read_text()


def test_runs_of_different_experiments_are_refused(two, tmp_path):
    deep, _ = two
    other = run(tmp_path, experiment([{"scheme": "reno", "flows": 1, "direction": "->"}],
                                     duration=1, packets=False))
    with pytest.raises(ValueError, match="different flows"):
        compare(deep, other)
