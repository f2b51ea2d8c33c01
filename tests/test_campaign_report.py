"""Campaign report (DIR/report.html) and campaign expectations (expect: over aggregates):
written by `ccbench sweep`, rewritten by `ccbench report DIR`, checked by `ccbench check DIR`."""
from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
import yaml

from simhelp import write_campaign
from ccbench import cli
from ccbench.campaign import aggregate, load_index
from ccbench.campaign import expect as cexp
from ccbench.campaign import verdicts
from ccbench.campaign.aggregate import BASE_COLUMNS
from ccbench.config.errors import Collector

CAMP = {"duration": 1, "seed": 3,
        "central": {"rate": "10Mbit", "delay": "10ms", "queue": "1bdp"},
        "flows": [{"scheme": "bbr"}, {"scheme": "cubic"}],
        "sweep": {"axes": {"central.queue": ["0.5bdp", "2bdp", "8bdp"]}, "repeats": 2}}
GOOD = [{"metric": "throughput", "scheme": "bbr", "at": {"central.queue": "0.5bdp"},
         "stat": "mean", "min": 1},
        {"metric": "delay-p95", "monotone": "increasing", "in": "central.queue"},
        {"metric": "utilisation", "stat": "n", "min": 2, "max": 2}]


write = write_campaign  # tests/simhelp.py


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A 6-run campaign with passing expectations, run once through the CLI."""
    tmp = tmp_path_factory.mktemp("camp")
    f = write(tmp, dict(CAMP, expect=GOOD))
    out = tmp / "out"
    rc = cli.main(["sweep", str(f), "-o", str(out), "-j", "1", "--quiet",
                   "--junit", str(tmp / "junit.xml")])
    return tmp, f, out, rc


def test_sweep_writes_a_self_contained_report_with_verdicts(swept, capsys):
    tmp, f, out, rc = swept
    assert rc == 0
    html = (out / "report.html").read_text()
    assert "Campaign expectations: 3 passed, 0 failed" in html
    assert "Bokeh.set_log_level" in html  # the library is inlined (no requests: browser test)
    idx = load_index(out)
    for key in idx["run_key"].unique():  # every run: a relative link and its flows embedded
        assert f"href='runs/{key}/'" in html
    assert html.count("<details><summary>repeat ") == 6
    assert "No failed runs." in html
    assert "metric vs" not in html and "throughput (Mbit/s) vs central.queue" in html
    x = (tmp / "junit.xml").read_text()
    assert 'tests="3" failures="0"' in x
    m = json.loads((out / "campaign.json").read_text())
    assert [e["metric"] for e in m["expect"]] == ["avg_tput_mbps", "p95_delay_ms",
                                                   "utilization_pct"]
    # a run's own report.html, when written, is linked instead of its directory
    key = idx["run_key"][0]
    assert cli.main(["report", str(out / "runs" / key)]) == 0
    assert cli.main(["report", str(out)]) == 0
    html = (out / "report.html").read_text()
    assert f"href='runs/{key}/report.html'" in html


def test_verdict_values_are_the_aggregates(swept):
    _, _, out, _ = swept
    idx = load_index(out)
    v = verdicts.evaluate_dir(out)
    st = aggregate(idx.filter(pl.col("scheme") == "bbr"), by=[], metrics=["avg_tput_mbps"])
    row = st.filter(pl.col("central.queue") == "0.5bdp")
    assert v[0].value == pytest.approx(row["mean"][0], rel=1e-12) and v[0].passed
    p95 = aggregate(idx, by=[], metrics=["p95_delay_ms"])
    means = dict(zip(p95["central.queue"], p95["mean"]))
    steps = [means["2bdp"] - means["0.5bdp"], means["8bdp"] - means["2bdp"]]
    assert v[1].value == pytest.approx(min(steps), rel=1e-12) and v[1].passed
    assert v[2].value == 2.0 and v[2].unit == ""


def test_a_wrong_expectation_fails_with_exit_code_1(swept, capsys):
    tmp, _, out, _ = swept
    wrong = write(tmp, [{"metric": "throughput", "scheme": "cubic", "stat": "ci_low",
                         "min": 1000}], "wrong.yaml")
    capsys.readouterr()
    assert cli.main(["check", str(out), "--expect", str(wrong),
                     "--junit", str(tmp / "j2.xml")]) == 1
    text = capsys.readouterr().out
    assert "campaign expectations: 0 passed, 1 failed" in text
    assert "FAIL  throughput ci_low (scheme cubic)" in text and "expected >= 1000" in text
    assert 'failures="1"' in (tmp / "j2.xml").read_text()
    # the recorded (passing) expectations still pass
    assert cli.main(["check", str(out)]) == 0
    # and a sweep whose file has the wrong one exits 1 (runs reused, nothing rerun)
    f2 = write(tmp, dict(CAMP, expect=GOOD + [{"metric": "delay-p95", "monotone": "decreasing",
                                                "in": "central.queue"}]), "camp2.yaml")
    assert cli.main(["sweep", str(f2), "-o", str(out), "-j", "1", "--quiet"]) == 1
    text = capsys.readouterr().out
    assert "3 passed, 1 failed" in text and "FAIL  delay-p95 mean decreasing" in text
    assert "Campaign expectations: 3 passed, 1 failed" in (out / "report.html").read_text()


def test_bad_expectations_name_the_field_and_the_choices(tmp_path, capsys):
    for bad, words in (
            ({"metric": "goodput", "min": 1}, ["expect[0].metric", "valid:", "throughput"]),
            ({"metric": "throughput", "monotone": "up", "in": "central.queue"},
             ["expect[0].monotone", "increasing or decreasing"]),
            ({"metric": "throughput", "monotone": "increasing", "in": "queue"},
             ["expect[0].in", "swept: central.queue"]),
            ({"metric": "throughput", "at": {"central.queue": "3bdp"}, "min": 1},
             ["expect[0].at", "values: 0.5bdp, 2bdp, 8bdp"]),
            ({"metric": "throughput", "min": 1, "monotone": "increasing", "in": "central.queue"},
             ["exactly one of"]),
            ({"metric": "throughput", "scheme": "cubik", "min": 1},
             ["expect[0].scheme", "no flow has scheme 'cubik'", "valid: bbr, cubic"])):
        f = write(tmp_path, dict(CAMP, expect=[bad]))
        assert cli.main(["sweep", str(f), "--dry-run"]) == 2, bad
        err = capsys.readouterr().err
        for w in words:
            assert w in err, (bad, err)


def _index(rows):
    """A synthetic campaign index: rows of (point, q, scheme, repeat, value)."""
    data = [{"run_key": f"{p}-{r}", "point": p, "label": f"q={q}", "repeat": r, "seed": r,
             "q": q, "flow": 0 if s == "a" else 1, "scheme": s, "direction": "->",
             "group": 0, "flow_label": s, "avg_tput_mbps": v, "backend": "sim",
             "ccbench_version": "x"} for p, q, s, r, v in rows]
    return pl.DataFrame(data)


def test_monotone_and_crossing_on_known_numbers():
    qs = ["1bdp", "2bdp", "4bdp", "8bdp"]
    a = [10, 8, 5, 2]
    b = [1, 3, 6, 9]
    rows = [(i, q, s, r, (a if s == "a" else b)[i] + (0.1 if r else -0.1))
            for i, q in enumerate(qs) for s in "ab" for r in (0, 1)]
    idx = _index(rows)
    cols = {"q": qs}
    errs = Collector()
    entries = cexp.parse([
        {"metric": "throughput", "scheme": "a", "monotone": "decreasing", "in": "q"},
        {"metric": "throughput", "scheme": "b", "monotone": "decreasing", "in": "q"},
        {"metric": "throughput", "crossing": ["a", "b"], "in": "q", "between": ["2bdp", "4bdp"]},
        {"metric": "throughput", "crossing": ["a", "b"], "in": "q", "between": ["4bdp", "8bdp"]},
        {"metric": "throughput", "scheme": "b", "stat": "ci_low", "min": 0.5},
        {"metric": "throughput", "scheme": "a", "crossing": 100, "in": "q", "between": ["1bdp", "8bdp"]},
    ], cols, errs)
    assert not errs, errs.errors
    v = verdicts.evaluate(idx, entries, ["q"])
    assert v[0].passed and v[0].value == pytest.approx(-2.0)  # the largest (least negative) step
    assert not v[1].passed and v[1].value == pytest.approx(3.0)
    # a − b: 5 at 2bdp, −1 at 4bdp; log axis (8x span < 20: linear) → 2 + 2·5/6
    assert v[2].passed and v[2].value == pytest.approx(2 + 2 * 5 / 6)
    assert not v[3].passed and "changes sign at 3.67bdp" in v[3].detail
    # CI of two values 0.2 apart: mean ± t(0.975, 1)·s/√2 with s = 0.1414…
    half = 12.706204736 * math.sqrt(0.02) / math.sqrt(2)
    assert v[4].value == pytest.approx(1 - half, rel=1e-6) and not v[4].passed
    assert not v[5].passed and v[5].value is None and "never changes sign" in v[5].detail
    assert set(BASE_COLUMNS) >= {"scheme", "avg_tput_mbps"}


def test_monotone_tolerance_is_the_largest_step_against_the_trend_allowed():
    qs = ["1bdp", "2bdp", "4bdp"]
    # a rises 10 -> 9.4 -> 12: one step of -0.6 against an increasing trend
    rows = [(i, q, "a", 0, v) for i, (q, v) in enumerate(zip(qs, [10, 9.4, 12]))]
    idx = _index(rows)
    errs = Collector()
    entries = cexp.parse([
        {"metric": "throughput", "monotone": "increasing", "in": "q", "tolerance": 0.5},
        {"metric": "throughput", "monotone": "increasing", "in": "q", "tolerance": 0.7},
        {"metric": "throughput", "monotone": "decreasing", "in": "q", "tolerance": 2.5},
        {"metric": "throughput", "monotone": "decreasing", "in": "q", "tolerance": 1.5}],
        {"q": qs}, errs)
    assert not errs, errs.errors
    v = verdicts.evaluate(idx, entries, ["q"])
    assert v[0].value == pytest.approx(-0.6) and not v[0].passed  # 0.6 > 0.5
    assert v[1].passed
    assert v[2].value == pytest.approx(2.6) and not v[2].passed  # a rise of 2.6 > 2.5
    assert not v[3].passed and "every step <= 1.5" in v[3].bound


def test_crossing_on_a_wide_axis_is_interpolated_on_a_log_scale():
    qs = ["1bdp", "100bdp"]  # a 100x span (> 20x): geometric interpolation
    rows = [(i, q, s, 0, v) for i, q in enumerate(qs)
            for s, v in (("a", [10, 0][i]), ("b", [0, 10][i]))]
    idx = _index(rows)
    errs = Collector()
    entries = cexp.parse([{"metric": "throughput", "crossing": ["a", "b"], "in": "q",
                           "between": ["5bdp", "20bdp"]}], {"q": qs}, errs)
    assert not errs, errs.errors
    (v,) = verdicts.evaluate(idx, entries, ["q"])
    # a − b goes 10 -> −10: half-way in log(q) is √(1·100) = 10 (linearly it would be 50.5)
    assert v.value == pytest.approx(10.0) and v.passed, v.detail


def test_crossing_ignores_a_value_derived_from_the_axis_and_another_axis():
    # bbr-vs-cubic's full scale: the queue in bytes is derived from the buffer in BDP *and* the
    # rate, so at one BDP it takes one value per rate. It must not split the series (each
    # would be one point long and "never change sign"); the rate does.
    qs, rates = ["1bdp", "2bdp", "4bdp", "8bdp"], ["40Mbit", "80Mbit"]
    a, b = [10, 8, 5, 2], [1, 3, 6, 9]
    rows = []
    for i, q in enumerate(qs):
        for j, rate in enumerate(rates):
            for s in "ab":
                rows.append({"run_key": f"{i}-{j}", "point": 2 * i + j, "label": "", "repeat": 0,
                             "seed": 0, "q": q, "rate": rate, "qbytes": f"{(i + 1) * (j + 1)}000B",
                             "flow": 0 if s == "a" else 1, "scheme": s, "direction": "->",
                             "group": 0, "flow_label": s,
                             "avg_tput_mbps": (a if s == "a" else b)[i] * (j + 1),
                             "backend": "sim", "ccbench_version": "x"})
    idx = pl.DataFrame(rows)
    errs = Collector()
    entries = cexp.parse([{"metric": "throughput", "crossing": ["a", "b"], "in": "q",
                           "between": ["2bdp", "4bdp"]}], {"q": qs, "rate": rates}, errs)
    assert not errs, errs.errors
    (v,) = verdicts.evaluate(idx, entries, ["rate", "q", "qbytes"])
    assert v.passed, v.detail
    assert "rate=40Mbit" in v.detail and "rate=80Mbit" in v.detail and "qbytes" not in v.detail


def test_sweep_plots_writes_each_runs_report_and_links_it(tmp_path):
    doc = dict(CAMP, sweep={"repeats": 2})  # repeats only: no axis, the report has no figure
    out = tmp_path / "out"
    assert cli.main(["sweep", str(write(tmp_path, doc)), "-o", str(out), "-j", "1", "--quiet",
                     "--plots"]) == 0
    html = (out / "report.html").read_text()
    assert "No swept value varies" in html
    for key in load_index(out)["run_key"].unique():
        assert (out / "runs" / key / "report.html").is_file()
        assert (out / "runs" / key / "plots" / "cwnd.png").is_file()
        assert f"href='runs/{key}/report.html'" in html


def test_report_lists_failures_and_points_without_runs(swept, tmp_path):
    import shutil
    _, _, out, _ = swept
    d = tmp_path / "copy"
    shutil.copytree(out, d)
    (d / "failed").mkdir(exist_ok=True)
    (d / "failed" / "abc.json").write_text(json.dumps(
        {"key": "abc", "label": "central.queue=9bdp", "point": 7, "repeat": 1, "seed": 5,
         "error": "RuntimeError: boom <b>", "traceback": "Traceback …"}))
    from ccbench.report.campaign import write_campaign_report
    html = write_campaign_report(d).read_text()
    assert "RuntimeError: boom &lt;b&gt;" in html and "central.queue=9bdp" in html
    assert "no finished run" in html and "1 failed" in html


def test_run_level_metrics_are_drawn_once_per_run_not_once_per_scheme(swept):
    """Jain's index is one number per run: grouping it by scheme drew the same line twice
    (bbr's under cubic's); per-flow metrics keep one line per scheme."""
    from ccbench.campaign.layout import metric_by
    from ccbench.report.campaign import figures
    _, _, out, _ = swept
    idx = load_index(out)
    assert metric_by(idx, "jain", ["scheme"]) == []
    assert metric_by(idx, "avg_tput_mbps", ["scheme"]) == ["scheme"]
    lay, sections = figures(idx, out)
    by_title = {title: figs for kind, title, figs in sections if kind == "metric"}

    def lines(fig):
        return [r for r in fig.renderers if type(r.glyph).__name__ == "Line"]
    assert len(lines(by_title["Jain's index over the run's flows"][0])) == 1
    assert len(lines(by_title["throughput (Mbit/s)"][0])) == 2


def test_a_value_derived_from_x_is_not_made_a_facet():
    """CoCo's validation sweeps X and derives central.delay = X - 2 ms: a panel per delay
    would hold one point each. A second independent axis still gets its panels."""
    from ccbench.campaign.layout import choose
    rows = [{"scheme": s, "X": x, "central.delay": f"{x - 2}ms", "queue": q, "avg_tput_mbps": 1.0}
            for s in ("a", "b") for x in (3, 5, 10, 20) for q in (100, 1000)]
    idx = pl.DataFrame(rows)
    lay = choose(idx.drop("queue").unique(maintain_order=True))
    assert lay.x == "X" and lay.by == ["scheme"] and lay.facet is None
    lay = choose(idx)
    assert lay.x == "X" and lay.facet == "queue"
