"""`ccbench compare`: two runs side by side."""
from __future__ import annotations

import pytest

from ccbench import api, cli
from ccbench.analysis.compare import CompareError, compare
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
                                     duration=4, packets=False))
    # two flows against one: the dumbbell itself differs (side links)
    with pytest.raises(CompareError, match="topology: links a1->r1"):
        compare(deep, other)
    with pytest.raises(ValueError, match="different flows"):
        compare(deep, other, allow_different=True)


def test_a_different_duration_is_refused_unless_allowed_and_every_difference_is_named(two, tmp_path):
    deep, shallow = two
    c = compare(deep, shallow)
    assert any("queue 1000 (A)" in d and "queue 20 (B)" in d for d in c.differences)
    assert "differences:" in api.comparison_text(c) and not c.warnings
    short = run(tmp_path, experiment([{"scheme": "cubic", "flows": 2, "direction": "->"}],
                                     duration=2, queue=1000, packets=False), "short")
    with pytest.raises(CompareError, match=r"duration: 4 s \(A\) vs 2 s \(B\)"):
        compare(deep, short)
    c = compare(deep, short, allow_different=True)
    assert "duration: 4 s (A) vs 2 s (B)" in c.differences
    assert cli.main(["compare", str(deep.path), str(short.path), "-o", str(tmp_path / "x")]) == 2
    assert cli.main(["compare", str(deep.path), str(short.path), "-o", str(tmp_path / "x"),
                     "--allow-different"]) == 0
    assert "duration: 4 s (A) vs 2 s (B)" in (tmp_path / "x" / "report.html").read_text()


def test_an_inaccurate_emulated_run_is_flagged_in_the_comparison(two, tmp_path):
    import json
    import shutil
    deep, shallow = two
    fake = tmp_path / "kern"
    shutil.copytree(shallow.path, fake)
    meta = json.loads((fake / "metadata.json").read_text())
    meta["emu"] = {"accurate": False, "inaccurate_reasons": ["release error p99.9 3.4 ms"]}
    (fake / "metadata.json").write_text(json.dumps(meta))
    c = compare(deep, fake)
    assert len(c.warnings) == 1 and "INACCURATE" in c.warnings[0] and "3.4 ms" in c.warnings[0]
    assert "WARNING: B (kern) is an emulated run" in api.comparison_text(c)
    assert api.summary_text(fake).startswith("INACCURATE emulated run (release error p99.9")


def test_flows_with_different_labels_pair_by_position_and_route(tmp_path):
    # as a simulator scheme and its BPF program: "Flow 1: vegas ->" / "Flow 1: bpf_vegas ->"
    a = run(tmp_path, experiment([{"scheme": "vegas"}], duration=2, packets=False), "a")
    b = run(tmp_path, experiment([{"scheme": "vegas", "name": "mine"}], duration=2,
                                 packets=False), "b")
    c = compare(a, b)
    assert c.table["curve"].to_list()[0] == a.experiment["flows"][0]["label"]
    assert c.table["avg_tput_mbps_diff_pct"][0] == pytest.approx(0.0)
    assert any("matched by position and route" in d for d in c.differences)
    assert set(c.b_intervals["curve"].to_list()) <= set(c.a_intervals["curve"].to_list())
    back = run(tmp_path, experiment([{"scheme": "vegas", "direction": "<-"}], duration=2,
                                    packets=False), "back")
    with pytest.raises(ValueError, match="different flows"):
        compare(a, back)


def test_four_runs_compare_in_one_report(two, tmp_path):
    deep, shallow = two
    mid = [run(tmp_path, experiment([{"scheme": "cubic", "flows": 2, "direction": "->"}],
                                    duration=4, queue=q, packets=False), f"q{q}")
           for q in (200, 50)]
    runs = [deep, mid[0], mid[1], shallow]
    c = api.compare_runs(runs)
    assert c.tags == ["A", "B", "C", "D"]
    # one row per run × curve: two flows and the run's total
    assert c.table.height == 12
    assert c.table["run"].to_list() == [t for t in "ABCD" for _ in range(3)]
    totals = c.table.filter(c.table["curve"].str.starts_with("Total"))
    delays = totals["mean_delay_ms"].to_list()
    assert delays == sorted(delays, reverse=True)  # shallower queues, less delay
    assert totals["mean_delay_ms_vs_a_pct"][0] == pytest.approx(0.0)
    # the differences name every run's value of what differs
    assert any("queue 1000 (A)" in d and "queue 200 (B)" in d and "queue 50 (C)" in d
               and "queue 20 (D)" in d for d in c.differences)
    out = tmp_path / "four"
    assert cli.main(["compare", *(str(r.path) for r in runs), "-o", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "comparison of 4 runs" in page and "D: sim:run" not in page
    for tag in "ABCD":  # every run drawn in every overlay
        assert f'"{tag}: Flow 1: cubic ->"' in page
    assert "Δ% vs A" in (out / "compare.txt").read_text()
    assert {p.name for p in out.iterdir()} >= {"compare-rate.png", "compare-delay.png",
                                               "compare-cwnd.png", "compare.csv"}
    # the same refusal rule: a run of another duration is refused unless allowed
    short = run(tmp_path, experiment([{"scheme": "cubic", "flows": 2, "direction": "->"}],
                                     duration=2, queue=1000, packets=False), "short")
    with pytest.raises(CompareError, match=r"duration: 4 s \(A\) vs 4 s \(B\) vs 2 s \(C\)"):
        api.compare_runs([deep, shallow, short])
    assert cli.main(["compare", str(deep.path), str(shallow.path), str(short.path), "-o",
                     str(tmp_path / "x")]) == 2
    c = api.compare_runs([deep, shallow, short], allow_different=True)
    assert c.table.height == 9 and c.differences[0].startswith("duration:")
