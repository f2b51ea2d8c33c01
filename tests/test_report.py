"""The HTML report: self-contained, and workload sections only when the run has such workloads."""
from __future__ import annotations

from ccbench.report import write_report
from simhelp import experiment, run


def test_report_has_fct_and_goodput_sections_for_workloads(tmp_path):
    exp = experiment([
        {"scheme": "cubic", "direction": "->", "arrivals": {"rate": 5, "size": {"fixed": "30KB"}}},
        {"scheme": "reno", "direction": "->", "app-rate": "2Mbit"},
    ], duration=4, rate="10Mbit", delay="5ms", queue=100, packets=False)
    res = run(tmp_path, exp)
    html = write_report(res).read_text()
    assert "<h3>Flow completion times</h3>" in html
    assert "<h3>Application-limited flows</h3>" in html
    assert "flow completion time (CDF)" in html


def test_report_of_bulk_flows_has_no_workload_sections(tmp_path):
    res = run(tmp_path, experiment([{"scheme": "reno", "direction": "->"}], duration=2,
                                   packets=False))
    html = write_report(res).read_text()
    assert "Flow completion times" not in html and "Application-limited" not in html
    assert "Total: 1 flow" in html


def test_report_is_self_contained_and_thins_only_what_is_drawn(tmp_path):
    import numpy as np
    from ccbench.report.interactive import thin
    res = run(tmp_path, experiment([{"scheme": "cubic", "direction": "->"}] * 2, duration=2,
                                   packets=False))
    html = write_report(res).read_text()
    assert "<script src" not in html and "<link" not in html  # the browser test watches requests
    assert "Throughput and delay: per-flow" in html and "congestion window" in html
    t = np.arange(100_000, dtype=float)
    y = np.sin(t / 1000.0)
    y[54_321] = 7.0
    tt, yy = thin(t, y, 2000)
    assert len(tt) <= 2000 and yy.max() == 7.0 and yy.min() == y.min() and tt[0] == 0
