"""What a person reads: one loss figure with its definition, the other loss-like numbers named
for what they are, readable column headers, and 1-based flow numbers beside 0-based ids
(docs/metrics.md, "Loss" and "Conventions")."""
from __future__ import annotations

import html
import re

import pytest

from ccbench import api
from ccbench.analysis.metrics import DEFINITIONS, LABELS, LOSS_DEFINITION, LOSS_LABEL, LOSS_NOTE
from simhelp import experiment, run


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    d = tmp_path_factory.mktemp("labels")
    # a shallow queue: drops, and a window in flight at the end (not loss)
    return run(d, experiment([{"scheme": "cubic", "flows": 2, "direction": "->"}], duration=3,
                             rate="20Mbit", queue=20), "r")


def _headers(page: str) -> list[tuple[str, str]]:
    """(header text, hover text) of every table header of a page."""
    out = []
    for m in re.finditer(r"<th[^>]*?(?: title='([^']*)')?>([^<]*)</th>", page):
        out.append((html.unescape(m.group(2)), html.unescape(m.group(1) or "")))
    return out


def test_the_run_summary_shows_one_loss_with_its_definition(res):
    text = api.summary_text(res)
    assert f"{LOSS_LABEL:>7}" in text.splitlines()[0]
    assert text.splitlines()[-1] == LOSS_NOTE
    assert "not delivered" not in text  # the other figures are not in the summary


def test_the_report_names_every_loss_figure_and_explains_loss_on_hover(res):
    page = (api.report(res)).read_text()
    heads = _headers(page)
    loss = [h for h in heads if h[0] == LOSS_LABEL]
    assert loss and all(t == LOSS_DEFINITION for _, t in loss)  # every "loss %" has its hover
    # Pantheon's loss rate is there, named for what it is, with its own definition
    assert (LABELS["pantheon_loss_pct"], DEFINITIONS["pantheon_loss_pct"]) in heads
    names = {h for h, _ in heads}
    # no header is a bare "loss" and none is a raw column name
    assert not {"loss", "Loss"} & names
    assert not {"avg_tput_mbps", "loss_pct", "utilization_pct", "capacity_mbps", "tx_mbps",
                "t_start_s", "rate_mbps"} & names
    assert {"utilisation %", "utilisation % (Pantheon)", "throughput Mbit/s (Pantheon)"} <= names


def test_flow_numbers_shown_to_a_person_are_one_based_and_the_column_stays_an_id(res):
    assert sorted(res.flowstats["flow"].to_list()) == [0, 1]          # data: the id
    assert [f["label"] for f in res.experiment["flows"]][0].startswith("Flow 1:")
    page = (api.report(res)).read_text()
    # the link-utilisation row of the bottleneck lists flows 1, 2 (the labels' numbers)
    assert re.search(r"<td class=\"\">1, 2</td>", page)
    from ccbench import expect
    exp = res.experiment
    entries = expect.parse([{"metric": "throughput", "flow": 0, "min": 1}], exp["flows"],
                           exp["links"], exp["duration_ns"])
    (v,) = expect.evaluate(res, entries)
    assert "throughput (flow id 0)" in v.line()  # an id is called an id


def test_comparison_and_campaign_pages_use_the_same_loss_label(res, tmp_path):
    from ccbench.plots.campaign import LABELS as PLOT_LABELS
    from ccbench.report.campaign import LABELS as PAGE_LABELS
    assert PLOT_LABELS is PAGE_LABELS  # one table of campaign metric titles
    assert PLOT_LABELS["loss_pct"] == LOSS_LABEL
    assert PAGE_LABELS["coco_loss_pct"] == LABELS["coco_loss_pct"]
    c = api.compare(res, res)
    assert f"{LOSS_LABEL} A" in api.comparison_text(c)
    files = api.write_comparison(c, tmp_path / "cmp", plots=True)
    heads = _headers(files[-1].read_text())
    assert (f"{LOSS_LABEL} A", LOSS_DEFINITION) in heads


def test_the_pantheon_plot_draws_no_ellipse_for_two_flows():
    """A 1-σ ellipse of two points has no minor axis: it was drawn as a stray line through
    them. Two points (or points on a line) get none; three spread points get one."""
    import numpy as np
    from ccbench.report.interactive import sigma_ellipse
    assert sigma_ellipse(np.array([10.0, 20.0]), np.array([5.0, 7.0])) is None
    assert sigma_ellipse(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0])) is None
    e = sigma_ellipse(np.array([10.0, 20.0, 14.0]), np.array([5.0, 7.0, 9.0]))
    assert e is not None and e[2] > 0 and e[3] > 0


def test_log_axis_tick_labels_never_overprint(tmp_path):
    """The bbr-vs-cubic study's buffer axis (0.25 … 8 BDP, dense around 1): matplotlib's own
    log formatting labelled minor ticks (3×10⁻¹, 4×10⁻¹, …) into each other."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ccbench.campaign.axes import log_ticks
    from ccbench.plots.style import log_axis
    bdp = [0.25, 0.3, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 3, 4, 6, 8]
    ticks = log_ticks(bdp)
    assert ticks[0] == 0.25 and ticks[-1] == 8 and len(ticks) <= 8
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for a in axes:
        a.plot(bdp, [1 + v for v in bdp], marker="o")
        log_axis(a, "x", bdp)
    log_axis(axes[2], "y")
    fig.tight_layout()
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    for a in axes:
        for axis in (a.xaxis, a.yaxis):
            boxes = [t.get_window_extent(r) for t in axis.get_ticklabels(which="both")
                     if t.get_visible() and t.get_text()]
            for i, b1 in enumerate(boxes):
                assert not any(b1.overlaps(b2) for b2 in boxes[i + 1:]), \
                    [t.get_text() for t in axis.get_ticklabels()]
    plt.close(fig)
