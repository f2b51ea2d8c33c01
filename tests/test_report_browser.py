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
