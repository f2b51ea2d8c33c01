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


def test_thin_keeps_each_buckets_first_min_and_max():
    """thin (vectorised) against the per-bucket loop it replaced: the first sample and the
    first minimum and maximum of each bucket; NaN never an extreme unless all of a bucket is."""
    import numpy as np
    from ccbench.report.interactive import thin
    rng = np.random.default_rng(5)
    for n, mp in ((10_000, 2000), (7_001, 300), (50, 7), (4_000, 3)):
        for y in (rng.normal(size=n), rng.integers(0, 3, n).astype(float)):
            y[rng.integers(0, n, n // 4)] = np.nan
            y[: n // 10] = np.nan
            t = np.arange(n) / 10
            edges = np.linspace(0, n, max(1, mp // 3) + 1).astype(np.int64)
            keep = []
            for a, b in zip(edges[:-1], edges[1:]):
                lo, hi = np.where(np.isnan(y[a:b]), np.inf, y[a:b]), np.where(np.isnan(y[a:b]), -np.inf, y[a:b])
                keep += [a, a + int(np.argmin(lo)), a + int(np.argmax(hi))]
            idx = np.unique(keep)
            tt, yy = thin(t, y, mp)
            assert np.array_equal(tt, t[idx]) and np.array_equal(yy, y[idx], equal_nan=True)


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
