"""The run report in a real browser: loads offline with no console error and no network request,
draws every figure, a zoom on one time axis moves the linked ones; screenshot kept."""
from __future__ import annotations

from browser import probe
from ccbench.report import write_report
from ccbench.report.interactive import run_figures
from simhelp import experiment, run


def test_run_report_in_headless_chromium(tmp_path):
    exp = experiment([{"scheme": "cubic", "direction": "->", "flows": 2},
                      {"scheme": "reno", "direction": "<-", "start": 1}], duration=4,
                     rate="20Mbit", delay="10ms", queue=100)
    res = run(tmp_path, exp)
    report = write_report(res)
    n = sum(len(fs) for _, fs in run_figures(res, 0.5))
    got = probe(report, tmp_path, "per-flow: throughput", "queue occupancy")
    assert got["errors"] == []
    assert got["requests"] == []
    assert got["plots"] == n and n >= 15
    assert got["zoom"] == {"start": 1, "end": 2}
    assert got["screenshot"].stat().st_size > 20_000


def test_comparison_report_in_headless_chromium(tmp_path):
    from ccbench.analysis.compare import compare
    from ccbench.report.comparison import write_comparison_report
    a = run(tmp_path, experiment([{"scheme": "cubic", "direction": "->", "flows": 2}], duration=3,
                                 rate="20Mbit", queue=100), name="a")
    b = run(tmp_path, experiment([{"scheme": "cubic", "direction": "->", "flows": 2}], duration=3,
                                 rate="20Mbit", queue=20), name="b")
    c = compare(a, b)
    report = write_comparison_report(c, tmp_path / "cmp")
    html = report.read_text()
    assert "class='hi'" in html  # a 5x smaller queue changes the delay by far more than 10 %
    got = probe(report, tmp_path, "throughput per", "congestion window", "compare.png")
    assert got["errors"] == [] and got["requests"] == []
    assert got["plots"] == 4 and got["zoom"] == {"start": 1, "end": 2}
    assert got["screenshot"].stat().st_size > 20_000


def test_campaign_report_in_headless_chromium(tmp_path):
    import yaml
    from ccbench.campaign import load_index, run_campaign
    from ccbench.report.campaign import figures, write_campaign_report
    doc = {"duration": 1, "seed": 3, "central": {"rate": "10Mbit", "delay": "10ms", "queue": "1bdp"},
           "flows": [{"scheme": "bbr"}, {"scheme": "cubic"}],
           "sweep": {"axes": {"central.queue": ["0.5bdp", "2bdp", "8bdp"],
                              "central.loss": [0, 0.01]}, "repeats": 2},
           "expect": [{"metric": "throughput", "scheme": "cubic", "monotone": "increasing",
                       "in": "central.queue"}]}
    f = tmp_path / "camp.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / "camp"
    assert run_campaign(f, out, jobs=1, progress=False).ok
    report = write_campaign_report(out)
    html = report.read_text()
    assert "Campaign expectations: " in html
    _, sections = figures(load_index(out), out)
    n = sum(len(fs) for _, _, fs in sections)
    kinds = {k for k, _, _ in sections}
    assert kinds == {"metric", "box", "heat"} and n >= 14  # 2 facets per metric, heat maps
    got = probe(report, tmp_path, "throughput (Mbit/s) vs central.queue",
                "p95 one-way delay (ms) vs central.queue", "campaign.png")
    assert got["errors"] == [] and got["requests"] == []
    assert got["plots"] == n and got["zoom"] == {"start": 1, "end": 2}
    assert got["screenshot"].stat().st_size > 20_000
