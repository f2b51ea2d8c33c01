"""The HTML report shows workload sections only when the run has such workloads."""
from __future__ import annotations

from ccbench import plot
from ccbench.report import write_report
from simhelp import experiment, run


def test_report_has_fct_and_goodput_sections_for_workloads(tmp_path):
    exp = experiment([
        {"scheme": "cubic", "direction": "->", "arrivals": {"rate": 5, "size": {"fixed": "30KB"}}},
        {"scheme": "reno", "direction": "->", "app-rate": "2Mbit"},
    ], duration=4, rate="10Mbit", delay="5ms", queue=100, packets=False)
    res = run(tmp_path, exp)
    plot(res, groupings=("per-flow",))
    html = write_report(res).read_text()
    assert "<h3>Flow completion times</h3>" in html
    assert "<h3>Application-limited flows</h3>" in html
    assert "plots/fct-cdf.png" in html


def test_report_of_bulk_flows_has_no_workload_sections(tmp_path):
    res = run(tmp_path, experiment([{"scheme": "reno", "direction": "->"}], duration=2,
                                   packets=False))
    plot(res, groupings=("total",))
    html = write_report(res).read_text()
    assert "Flow completion times" not in html and "Application-limited" not in html
    assert "Total: 1 flow" in html
