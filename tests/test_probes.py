"""Latency probes (`scheme: probe`): ping-like packets at a fixed interval, echoed by the
receiver, their round trips in the `probes` table, the run summary and the report
(docs/experiment-file.md "Latency probes", docs/metrics.md)."""
from __future__ import annotations

import polars as pl
import pytest

from ccbench import api, config
from ccbench.analysis.probes import probe_series, probe_summary
from ccbench.config.errors import ConfigError
from simhelp import experiment, run

BASE_RTT_MS = 2 * (1 + 10 + 1)  # side, central, side links both ways


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """Probes every 50 ms for 4 s beside one CUBIC flow from 1 s to 3 s on a 4-BDP queue."""
    d = tmp_path_factory.mktemp("probes")
    exp = experiment([{"scheme": "probe", "interval": "50ms", "size": 64},
                      {"scheme": "cubic", "start": 1, "stop": 3}],
                     duration=4, rate="20Mbit", queue="4bdp")
    return run(d, exp)


def test_probes_alone_see_the_base_rtt_and_none_is_lost(tmp_path):
    res = run(tmp_path, experiment([{"scheme": "probe", "interval": "100ms", "size": 100}],
                                   duration=2, rate="20Mbit", host={"noise": "exact"}))
    p = res.probes
    assert p.columns == ["flow", "seq", "sent_ns", "rtt_ns"]
    assert p["seq"].to_list() == list(range(20))
    assert p["sent_ns"].to_list() == [i * 100_000_000 for i in range(20)]
    s = probe_summary(res).row(0, named=True)
    assert s["sent"] == 20 and s["answered"] == 20 and s["lost_pct"] == 0.0
    # propagation both ways plus serialising 100 B on each link (1 Gbit/s sides, 20 Mbit/s)
    ser_ms = 2 * (100 * 8 / 20e6 + 2 * 100 * 8 / 1e9) * 1e3
    assert s["min_rtt_ms"] == pytest.approx(BASE_RTT_MS + ser_ms, abs=1e-6)
    assert s["max_rtt_ms"] == s["min_rtt_ms"]
    # measurement traffic: no packets rows, no curve of its own
    assert res.packets.height == 0 and res.flowstats["sent_pkts"].sum() == 0
    assert api.analyze(res, "per-flow").summary.height == 0


def test_rtt_rises_under_load_and_falls_back_after_it(loaded):
    s = probe_series(loaded)
    before = s.filter(pl.col("t_s") < 1.0)["rtt_ms"]
    load = s.filter((pl.col("t_s") >= 2.0) & (pl.col("t_s") < 3.0))["rtt_ms"]
    after = s.filter(pl.col("t_s") >= 3.6)["rtt_ms"]
    assert before.max() < BASE_RTT_MS + 1
    # CUBIC fills the 4-BDP queue: up to ≈ 4 × 24 ms of queueing on top of the base RTT
    assert load.median() > 2 * BASE_RTT_MS
    assert after.max() < BASE_RTT_MS + 5
    summ = probe_summary(loaded, 2.0, 3.0).row(0, named=True)
    assert summ["p99_rtt_ms"] >= summ["p90_rtt_ms"] >= summ["median_rtt_ms"] > 2 * BASE_RTT_MS


def test_probes_leave_the_load_metrics_alone(loaded, tmp_path):
    alone = run(tmp_path, experiment([{"scheme": "cubic", "start": 1, "stop": 3}],
                                     duration=4, rate="20Mbit", queue="4bdp"))
    a, b = api.analyze(loaded, "per-flow").summary, api.analyze(alone, "per-flow").summary
    assert a["curve"].to_list() == ["Flow 2: cubic ->"] and b.height == 1
    # 64-B probes every 50 ms take 0.05 % of the link: the flow's numbers barely move
    assert a["avg_tput_mbps"][0] == pytest.approx(b["avg_tput_mbps"][0], rel=0.01)
    assert set(loaded.packets["flow"].unique().to_list()) == {1}


def test_summary_and_report_show_the_rtt_under_load(loaded):
    text = api.summary_text(loaded)
    line = next(x for x in text.splitlines() if x.startswith("Flow 1: probe ->"))
    assert "RTT median" in line and "p99" in line and "probes answered" in line
    page = api.report(loaded).read_text()
    assert "RTT under load" in page and "p99 RTT ms" in page


def test_the_same_seed_gives_the_same_probes(loaded, tmp_path):
    again = run(tmp_path, loaded.experiment)
    assert again.probes.equals(loaded.probes)


@pytest.mark.parametrize("group, words", [
    ({"scheme": "probe", "size": 10}, "between 32 and 65535"),
    ({"scheme": "probe", "interval": 0}, "must be > 0"),
    ({"scheme": "probe", "bytes": "1MB"}, "bytes does not apply to latency probes"),
    ({"scheme": "cubic", "interval": "100ms"}, "interval applies to latency probes only"),
])
def test_bad_probe_groups_name_the_field(group, words):
    with pytest.raises(ConfigError, match=words):
        config.resolve({"duration": 2, "central": {"rate": "10Mbit", "delay": "10ms"},
                        "flows": [group]})


def test_the_kernel_backend_runs_probes_as_an_echo_pair_of_the_agent(tmp_path):
    """Command lines only (the kernel run itself: tests/test_emu_probes.py, root)."""
    from pathlib import Path
    from ccbench.backends.emu import agents
    from ccbench.backends.emu.doctor import experiment_schemes
    exp = experiment([{"scheme": "probe", "interval": "20ms", "size": 100, "stop": 1.5},
                      {"scheme": "cubic"}], duration=2)
    f = exp["flows"][0]
    assert agents.receiver_argv(Path("agent"), exp, f, 0, "r")[1] == "probe-server"
    argv = agents.sender_argv(Path("agent"), exp, f, "10.0.0.2", 0, "r", tmp_path)
    assert argv[1] == "probe-client"
    got = dict(zip(argv[2::2], argv[3::2]))
    assert (got["--interval"], got["--size"], got["--stop"]) == ("20000000", "100", "1500000000")
    assert got["--out"].endswith("probes0")
    assert experiment_schemes(exp) == ["cubic"]  # a probe needs no kernel congestion control


def test_a_many_run_comparison_overlays_and_lists_the_probes(tmp_path):
    """Flent's question across runs: the RTT under load of each queue size."""
    runs = [run(tmp_path, experiment([{"scheme": "probe", "interval": "50ms"},
                                      {"scheme": "cubic", "start": 0.5}],
                                     duration=4, rate="20Mbit", queue=q, packets=False), q)
            for q in ("0.5bdp", "2bdp", "4bdp")]
    c = api.compare_runs(runs)
    lines = [x for x in api.comparison_text(c).splitlines() if "RTT median" in x]
    assert [x[0] for x in lines] == ["A", "B", "C"]
    medians = [float(x.split("RTT median ")[1].split(" ms")[0]) for x in lines]
    assert medians == sorted(medians) and medians[-1] > 2 * medians[0]  # deeper queue, more RTT
    page = api.write_comparison(c, tmp_path / "cmp")[-1].read_text()
    assert "RTT under load: latency probes" in page and '"C: Flow 1: probe ->"' in page


@pytest.mark.skipif(__import__("shutil").which("tshark") is None, reason="needs tshark")
def test_a_capture_shows_each_echo_going_back(tmp_path):
    import subprocess
    res = run(tmp_path, experiment([{"scheme": "probe", "interval": "100ms"}], duration=1),
              pcap=0)
    out = subprocess.run(["tshark", "-r", str(res.path / "pcap" / "a1.pcapng"), "-T", "fields",
                          "-e", "ip.src", "-e", "udp.srcport"], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    rows = [x.split("\t") for x in out if x]
    assert len(rows) == 20  # 10 probes out, 10 echoes back, at the sending host
    assert rows[0] == [rows[2][0], rows[2][1]] and rows[1][0] != rows[0][0]
    assert rows[1][1] == "10000"  # the echo comes from the probe's destination port


def test_a_campaign_indexes_the_rtt_under_load_and_checks_it(tmp_path):
    from simhelp import write_campaign
    from ccbench import cli
    from ccbench.campaign import load_index
    doc = {"duration": 3, "seed": 1, "central": {"rate": "20Mbit", "delay": "10ms"},
           "flows": [{"scheme": "probe", "interval": "50ms"}, {"scheme": "cubic"}],
           "sweep": {"axes": {"central.queue": ["0.5bdp", "4bdp"]}},
           "expect": [{"metric": "rtt-under-load", "monotone": "increasing",
                       "in": "central.queue"}]}
    f = write_campaign(tmp_path, doc)
    assert cli.main(["sweep", str(f), "-o", str(tmp_path / "c"), "-j", "1", "--quiet"]) == 0
    idx = load_index(tmp_path / "c").sort("point")
    assert idx["flow_label"].to_list() == ["Flow 2: cubic ->"] * 2  # no row for the probes
    med = idx["probe_median_rtt_ms"].to_list()
    assert med[1] > 2 * med[0] and (idx["probe_p99_rtt_ms"] >= idx["probe_median_rtt_ms"]).all()
    assert "RTT under load, median of the probes" in (tmp_path / "c" / "report.html").read_text()
