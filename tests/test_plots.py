"""Plot files: created, non-empty, right format, for every grouping and both input modes."""
from __future__ import annotations

import matplotlib
import polars as pl
import pytest

from ccbench.analysis import analyze
from ccbench.plots import plot_all, plot_grouping, plot_ppt_delay
from fixtures_results import make_results

PNG = b"\x89PNG\r\n\x1a\n"
GROUPINGS = ["per-flow", "total", "per-scheme", "per-direction", "per-scheme-direction"]
SUFFIXES = ["avg-rate", "avg-delay", "avg-jain", "ppt-delay"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("plots")
    kw = dict(flows=[("cubic", "->"), ("bbr", "<-"), ("cubic", "<-")], duration_ns=1_000_000_000,
              seed=5)
    return make_results(d / "pk", **kw), make_results(d / "agg", record_packets=False, **kw)


def test_plot_all_every_grouping(runs, tmp_path):
    out = tmp_path / "out"
    with matplotlib.rc_context({"savefig.dpi": 30}):  # small images keep the test fast
        paths = plot_all(runs[0], out, groupings=GROUPINGS + [["group"]], interval=0.5)
    names = {p.name for p in paths}
    expected = {f"{g}-{s}.png" for g in GROUPINGS + ["per-group"] for s in SUFFIXES}
    expected |= {f"{g}-stats.log" for g in GROUPINGS + ["per-group"]}
    expected |= {"cwnd.png", "rtt.png", "queue.png"}
    assert names == expected
    for p in paths:
        assert p.parent == out and p.stat().st_size > 0
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == PNG
    assert (out / "per-scheme-direction-stats.log").read_text().startswith(
        "== Average and loss statistics ==\n\nAverage Jain's index  : ")


def test_plot_aggregate_mode_svg_pdf(runs, tmp_path):
    a = analyze(runs[1], "per-flow", 0.5)
    assert a.mode == "aggregate"
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # keep text searchable
        paths = plot_grouping(a, tmp_path, fmt="svg")
    ppt = tmp_path / "per-flow-ppt-delay.svg"
    assert ppt in paths and all(p.stat().st_size > 0 for p in paths)
    text = ppt.read_text()
    assert "aggregate mode: per-bin mean delays" in text
    assert "Flow 1: cubic -&gt;" in text  # labels carry the statistic: (x.xx ms)
    rate = (tmp_path / "per-flow-avg-rate.svg").read_text()
    assert "Mbps)" in rate
    jain = (tmp_path / "per-flow-avg-jain.svg").read_text()
    assert "All 3 curves (" in jain
    pdfs = plot_grouping(analyze(runs[1], "total"), tmp_path / "pdf", fmt="pdf")
    assert all(p.stat().st_size > 0 for p in pdfs)
    assert pdfs[0].read_bytes()[:5] == b"%PDF-"


def test_scatter_downsampling_is_announced(runs, tmp_path):
    a = analyze(runs[0], "total", 0.5)
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        p = plot_ppt_delay(a, tmp_path / "ppt.svg", max_points=1000)
    text = p.read_text()
    n = a.summary["packets"][0]
    k = -(-n // 1000)
    assert f"1 packet in {k} shown: {-(-n // k)} of {n}" in text


def test_bad_format(runs, tmp_path):
    with pytest.raises(ValueError, match="unknown plot format 'jpg'"):
        plot_all(runs[0], tmp_path, groupings=["total"], fmt="jpg")


def test_plots_survive_empty_curves(tmp_path):
    from ccbench.results import load
    from fixtures_results import make_experiment, packets_table, write_results

    exp = make_experiment([("a", "->"), ("b", "<-")], duration_ns=1_000_000_000)
    pk = packets_table([(0, 100, 0, None, 1000)])  # nothing ever arrives; flow 1 sends nothing
    for rec in (True, False):
        res = load(write_results(tmp_path / f"r{rec}", exp, pk, record_packets=rec))
        with matplotlib.rc_context({"savefig.dpi": 20}):
            paths = plot_all(res, tmp_path / f"out{rec}", groupings=["per-flow"])
        assert all(p.stat().st_size > 0 for p in paths)
        assert "N/A as the curve has no packets" in (tmp_path / f"out{rec}" / "per-flow-stats.log").read_text()


def test_parallel_drawing_gives_the_same_files_in_the_same_order(runs, tmp_path):
    serial = plot_all(runs[0], tmp_path / "s", groupings=["per-flow", "total"], jobs=1)
    par = plot_all(runs[0], tmp_path / "p", groupings=["per-flow", "total"], jobs=2)
    assert [p.name for p in par] == [p.name for p in serial] and len(serial) == 13
    for a, b in zip(serial, par):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_rtt_plot_leaves_out_the_samples_before_the_first_rtt_sample(runs, tmp_path,
                                                                    monkeypatch):
    import numpy as np
    from matplotlib.axes import Axes
    from ccbench.plots import plot_rtt
    from simhelp import experiment, run
    res = run(tmp_path, experiment([{"scheme": "cubic"}, {"scheme": "reno", "start": 0.5}],
                                   duration=1, rate="20Mbit", packets=False))
    # the samples before a flow's handshake are there, with no RTT (null, not 0.0)
    first = res.flows.filter(pl.col("flow") == 1).sort("time_ns").head(1)
    assert first["time_ns"][0] < 600_000_000 and first["srtt_us"].is_null().all()
    assert (res.flows["srtt_us"] == 0).sum() == 0
    drawn = []
    orig = Axes.plot

    def spy(self, *a, **kw):
        drawn.append(np.asarray(a[1]))
        return orig(self, *a, **kw)
    monkeypatch.setattr(Axes, "plot", spy)
    plot_rtt(res, tmp_path / "rtt.png")
    assert drawn and all(len(y) and y.min() > 0 for y in drawn)


def test_legend_sits_below_the_x_label_of_a_half_height_axis(tmp_path):
    import matplotlib.pyplot as plt
    from ccbench.plots.style import FIGSIZE, save
    fig, (top, bottom) = plt.subplots(2, 1, figsize=FIGSIZE, sharex=True)
    for i in range(6):
        bottom.plot([0, 1], [0, i], label=f"curve {i}")
    bottom.set_xlabel("Time (s)")
    save(fig, bottom, tmp_path / "q.png")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    r = FigureCanvasAgg(fig).get_renderer()  # save() closed the figure
    legend = bottom.get_legend().get_window_extent(r)
    label = bottom.xaxis.label.get_window_extent(r)
    assert legend.y1 <= label.y0  # display coordinates: y grows upwards


def test_parallel_plot_workers_do_not_call_the_run_cut_short(tmp_path, capfd):
    import ccbench
    from ccbench import api
    res = ccbench.run({"duration": 2, "central": {"rate": "10Mbit", "delay": "10ms"},
                       "flows": [{"scheme": "cubic"}]}, tmp_path / "r")
    files = api.plot(res, jobs=2, groupings=("per-flow", "total"))  # into the run: marked
    assert files
    assert "cut short" not in capfd.readouterr().err
    text = api.stats_text(res)
    assert "Average throughput:" in text and "┆" not in text
