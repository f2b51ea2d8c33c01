"""ccbench agree: covering-array design, marking rule, and a reduced run on both backends."""
from __future__ import annotations

import os
import shutil

import polars as pl
import pytest

from ccbench import agree


def test_covering_array_covers_every_pair_with_far_fewer_points():
    levels = [3, 3, 3, 3, 3, 3]
    rows = agree.covering_array(levels)
    assert agree.uncovered_pairs(rows, levels) == 0
    assert len(rows) <= 16 < 729
    # A design that misses a pair is caught.
    assert agree.uncovered_pairs(rows[:-1], levels) > 0
    # Mixed levels and a factor with one level work too.
    rows = agree.covering_array([2, 1, 3])
    assert agree.uncovered_pairs(rows, [2, 1, 3]) == 0 and len(rows) == 6


def test_default_matrix_is_the_issue_matrix_and_its_campaign_resolves():
    from ccbench import campaign
    m = agree.Matrix(agree.parse_levels(None), repeats=2, duration=5)
    pts = m.points()
    for name, (_, levels) in agree.FACTORS.items():
        assert {p[name] for p in pts} == set(levels)
    plan = campaign.plan(campaign.parse_campaign(m.campaign()))
    assert len(plan.runs) == 2 * len(pts)
    run = next(r for r in plan.runs if r.point.swept["aqm"] == "fq_codel")
    central = next(l for l in run.experiment["links"] if l["role"] == "central")
    assert central["queue"]["kind"] == "fq_codel"
    rtt = run.point.swept["rtt_ms"]
    assert run.experiment["flows"][0]["base_rtt_ns"] == rtt * 1_000_000
    full = agree.Matrix(agree.parse_levels("scheme=reno;rate=10Mbit;bdp=1;rtt=10,40"),
                        design="full")
    assert len(full.points()) == 2 * 3 * 3  # rtt 2 x flows 3 x aqm 3
    with pytest.raises(ValueError, match="FACTOR"):
        agree.parse_levels("speed=1")


def test_marking_rule():
    # Out of the 5 % tolerance and outside the kernel's range -> marked.
    assert agree.marked("tput", 9.0, 10.0, 9.8, 10.2)
    # Inside the kernel's own range: never marked, however far from its mean.
    assert not agree.marked("tput", 9.0, 10.0, 8.5, 11.0)
    # Within tolerance.
    assert not agree.marked("tput", 9.7, 10.0, 9.9, 10.1)
    assert not agree.marked("median", 10.9, 10.0, 10.0, 10.0)
    assert agree.marked("p95", 11.2, 10.0, 10.0, 10.0)
    # Jain is absolute.
    assert agree.marked("jain", 0.90, 0.96, 0.955, 0.97)
    assert not agree.marked("jain", 0.92, 0.96, 0.955, 0.97)
    # Loss below 0.1 percentage points apart is not marked even if relatively far.
    assert not agree.marked("loss", 0.05, 0.1, 0.1, 0.1)
    assert agree.marked("loss", 0.5, 0.1, 0.1, 0.1)


def _index(values, backend):
    rows = []
    for point, reps in values.items():
        for rep, (tput, jain) in enumerate(reps):
            for flow in range(2):
                rows.append({"point": point, "repeat": rep, "flow": flow, "scheme": "reno",
                             "avg_tput_mbps": tput, "median_delay_ms": 10.0,
                             "p95_delay_ms": 12.0, "loss_pct": 0.5, "jain": jain})
    return pl.DataFrame(rows)


def test_compare_and_table_mark_the_right_cells():
    sim = _index({0: [(10.0, 0.99), (10.2, 0.98)], 1: [(5.0, 0.99), (5.0, 0.99)]}, "sim")
    ker = _index({0: [(10.1, 0.99), (10.3, 0.97)], 1: [(6.0, 0.90), (6.2, 0.91)]}, "kernel")
    cmp = agree.compare(sim, ker, ["scheme"])
    assert cmp["tput_marked"].to_list() == [False, True]
    assert cmp["jain_marked"].to_list() == [False, True]
    assert not cmp["median_marked"].any()
    md = agree.table_md(cmp, ["scheme"])
    assert "**5.00 ± 0.00**" in md and "6.10 ± 0.14" in md
    assert "2 points, 10 compared cells, 2 marked" in md


def _emu_ok() -> bool:
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun") or shutil.which("ip") is None:
        return False
    from ccbench.backends import emu
    return emu.binary("engine") is not None and emu.binary("agent") is not None


@pytest.mark.skipif(not _emu_ok(), reason="the emulation backend needs root and its binaries")
def test_reduced_matrix_on_both_backends(tmp_path):
    """The CI version: 2 points x 2 repeats x 2 s on each backend (~30 s)."""
    m = agree.Matrix(agree.parse_levels(
        "scheme=reno,cubic;rate=20Mbit;bdp=1;rtt=20;flows=1;aqm=droptail"),
        repeats=2, duration=2)
    res = agree.run_agree(tmp_path / "agree", m, jobs=1)
    cmp = res["table"]
    assert cmp is not None and len(cmp) == 2
    assert cmp["n"].to_list() == [2, 2] and cmp["n_k"].to_list() == [2, 2]
    # Both backends carry one flow at close to the 20 Mbit/s link (>= 80 % over 2 s).
    assert (cmp["tput_mean"] > 16).all() and (cmp["tput_mean_k"] > 16).all()
    text = (tmp_path / "agree" / "agree.md").read_text()
    assert "| point |" in text and "compared cells" in text
    assert (tmp_path / "agree" / "sim" / "index.parquet").exists()
    assert (tmp_path / "agree" / "kernel" / "index.parquet").exists()
    import json
    doc = json.loads((tmp_path / "agree" / "agreement.json").read_text())
    assert len(doc["cells"]) == 2 * len(agree.METRICS) == doc["summary"]["cells"]
    assert {c["factors"]["scheme"] for c in doc["cells"]} == {"reno", "cubic"}
    assert all(c["sim"]["n"] == 2 and c["kernel"]["n"] == 2 for c in doc["cells"])
    (sess,) = doc["kernel_sessions"]
    assert len(sess["load_before"]) == len(sess["load_after"]) == 3 and sess["kernel"]
    assert doc["kernel_runs_flagged"] == sess["still_flagged"]


def test_kernel_side_runs_bpf_ports_and_compares_them_as_the_simulators_levels():
    from ccbench import campaign
    m = agree.Matrix(agree.parse_levels("scheme=reno,vegas;rate=10Mbit;bdp=1;rtt=10;flows=1;"
                                        "aqm=droptail"), repeats=1, duration=2)
    sim, ker = m.campaign(), m.campaign(kernel=True)
    key = agree.FACTORS["scheme"][0]
    assert sim["sweep"]["zip"][0][key] == ["reno", "vegas"]
    assert ker["sweep"]["zip"][0][key] == ["reno", {"bpf": "vegas"}]
    plan = campaign.plan(campaign.parse_campaign(ker), backend="emu")
    assert len(plan.runs) == 2
    s = _index({0: [(10.0, 0.99)], 1: [(5.0, 0.99)]}, "sim").rename({"scheme": key})
    s = s.with_columns(pl.Series(key, ["reno"] * 2 + ["vegas"] * 2))
    k = s.with_columns(pl.Series(key, ["reno"] * 2 + ['{"bpf": "vegas"}'] * 2))
    cmp = agree.compare(s, k, [key])
    assert cmp[key].to_list() == ["reno", "vegas"] and not cmp["tput_marked"].any()
    cells = agree.cell_records(cmp, [key], ["scheme"])
    assert len(cells) == 2 * len(agree.METRICS)
    c = next(c for c in cells if c["point"] == 1 and c["metric"] == "tput")
    assert c["factors"] == {"scheme": "vegas"} and c["sim"]["mean"] == 5.0
    assert c["kernel"]["n"] == 1 and c["kernel"]["sd"] is None and c["marked"] is False


def test_flagged_runs_are_found_from_each_runs_metadata(tmp_path):
    import json
    for key, emu in (("a", {"accurate": True}), ("b", {"accurate": False}), ("c", None)):
        (tmp_path / "runs" / key).mkdir(parents=True)
        (tmp_path / "runs" / key / "metadata.json").write_text(json.dumps({"emu": emu}))
    (tmp_path / "runs" / "d").mkdir()  # unfinished: no metadata
    assert agree.flagged_runs(tmp_path) == ["b"]


def _published(tmp_path):
    """A run directory with a two-point agreement.json, and a docs dir with a page."""
    import json
    sim = _index({0: [(10.0, 0.99), (10.2, 0.98)], 1: [(5.0, 0.99), (5.0, 0.99)]}, "sim")
    ker = _index({0: [(10.1, 0.99), (10.3, 0.97)], 1: [(6.0, 0.90), (6.2, 0.91)]}, "kernel")
    cmp = agree.compare(sim, ker, ["scheme"])
    cells = agree.cell_records(cmp, ["scheme"], ["scheme"])
    doc = {"format": 1, "ccbench": "0", "commit": "abcdef0123", "design": "pairs", "repeats": 2,
           "duration_s": 30.0, "factors": {"scheme": ["reno"]}, "points": 2,
           "kernel_sessions": [{"started": "t0", "ended": "t1", "kernel": "6.x",
                                "load_before": [0.4, 0.5, 0.6], "load_after": [0.7, 0.6, 0.5],
                                "set_aside": ["k1"], "still_flagged": []}],
           "summary": {}, "cells": cells}
    run = tmp_path / "run"
    run.mkdir()
    (run / "agreement.json").write_text(json.dumps(doc))
    docs = tmp_path / "docs" / "fidelity"
    docs.mkdir(parents=True)
    (docs.parent / "fidelity.md").write_text(
        f"# Fidelity\n\nbefore\n\n{agree_page.BEGIN}\nSTALE\n{agree_page.END}\n\nafter\n")
    (docs / "explanations.yaml").write_text(
        "explanations:\n- id: kernel-jain\n  text: the kernel's flows take turns.\n"
        "  cells:\n  - {factors: {scheme: reno}, metric: jain}\n")
    return run, docs


from ccbench import agree_page  # noqa: E402


def test_publish_writes_the_data_and_the_page_section_and_check_holds_them_together(tmp_path):
    import json
    run, docs = _published(tmp_path)
    page = agree_page.publish(run, docs)
    text = page.read_text()
    assert text.startswith("# Fidelity\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert "STALE" not in text and "**8 of 10 cells (80.0 %) agree**" in text
    assert "**5.00 ± 0.00**" in text and "load average 0.4 before and 0.7 after" in text
    assert "1 run(s) the emulator flagged inaccurate set aside" in text
    assert "`kernel-jain`: the kernel's flows take turns." in text
    assert "point 1 (scheme reno), tput" in text and "not explained yet" in text
    pub = json.loads((docs / "agreement.json").read_text())
    assert [c["explanation"] for c in pub["cells"] if c["marked"]] == [None, "kernel-jain"]
    assert agree_page.check(docs) == []
    # a hand edit of the page, a stale explanation id and an unused explanation are caught
    page.write_text(text.replace("**5.00 ± 0.00**", "5.00 ± 0.00"))
    assert any("is not what agreement.json renders" in p for p in agree_page.check(docs))
    page.write_text(text)
    (docs / "explanations.yaml").write_text(
        "explanations:\n- id: other\n  text: t\n  cells:\n  - {factors: {scheme: cubic}}\n")
    probs = agree_page.check(docs)
    assert any("'kernel-jain' is not in explanations.yaml" in p for p in probs)
    assert any("'other' explains no marked cell" in p for p in probs)
    with pytest.raises(ValueError, match="marker"):
        agree_page.splice("no markers", "x")


def test_the_published_matrix_page_is_what_its_data_renders():
    """docs/fidelity.md's generated section is agree_page.render of docs/fidelity/agreement.json
    with docs/fidelity/explanations.yaml; every explanation id names an entry that explains a
    marked cell."""
    from pathlib import Path
    docs = Path(__file__).resolve().parents[1] / "docs" / "fidelity"
    assert agree_page.check(docs) == []
    import json
    doc = json.loads((docs / "agreement.json").read_text())
    assert doc["repeats"] >= 5 and doc["duration_s"] >= 30 and doc["design"] == "pairs"
    assert {"vegas", "cdg"} <= set(doc["factors"]["scheme"]) and "1Gbit" in doc["factors"]["rate"]
    assert all(not s["still_flagged"] for s in doc["kernel_sessions"])


def test_sim_tcp_settings_reach_the_simulator_side_only():
    from ccbench.agree import Matrix, parse_sim_tcp
    assert parse_sim_tcp("tso-defer=true, init-cwnd=3") == {"tso-defer": True, "init-cwnd": 3}
    assert parse_sim_tcp(None) == {}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_sim_tcp("tso-defer")
    m = Matrix({"scheme": ["reno"], "rate": ["10Mbit"]}, sim_tcp={"tso-defer": True})
    assert m.campaign()["tcp"] == {"tso-defer": True}
    assert "tcp" not in m.campaign(kernel=True)
    assert "tcp" not in Matrix({"scheme": ["reno"]}).campaign()


def test_levels_written_as_whole_numbers_keep_the_default_designs_seeds():
    from ccbench.agree import FACTORS, parse_levels
    lv = parse_levels("bdp=0.5,1,4")
    assert lv["bdp"] == FACTORS["bdp"][1] and [type(x) for x in lv["bdp"]] == [float, int, int]


def test_sim_bpf_runs_the_kernel_sides_programs_on_the_simulator_side():
    from ccbench.agree import Matrix
    m = Matrix({"scheme": ["reno", "vegas"], "rate": ["10Mbit"]}, sim_bpf=True)
    zip_ = m.campaign()["sweep"]["zip"][0]
    assert zip_["flows[0].scheme"] == ["reno", {"bpf": "vegas"}]
    plain = Matrix({"scheme": ["reno", "vegas"], "rate": ["10Mbit"]})
    assert plain.campaign()["sweep"]["zip"][0]["flows[0].scheme"] == ["reno", "vegas"]
