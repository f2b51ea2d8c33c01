"""The congestion-controlled datagram transport in the simulator (docs/datagram.md): YAML with a
datagram scheme → resolved flow with ``transport: dgram`` → the simulator's datagram endpoint →
the same tables and metrics as a TCP flow; validation names the datagram schemes; `ccbench
schemes` lists them with their transport."""
from __future__ import annotations

import json

import polars as pl
import pytest

import ccbench
from ccbench import api, cli, config
from ccbench.config import ConfigError

from simhelp import run


def _exp(scheme, *, duration=3, queue="1bdp", **group):
    doc = {"duration": duration, "seed": 1,
           "central": {"rate": "50Mbit", "delay": "10ms", "queue": queue},
           "flows": [{"scheme": scheme, **group}]}
    return config.resolve(doc, schemes=api.registry())


def test_dgram_schemes_come_from_the_core():
    names = {s["name"]: s for s in api.dgram_schemes()}
    assert {"fixed", "aimd-dgram"} <= set(names)
    assert all(s["transport"] == "dgram" for s in names.values())
    assert [p["name"] for p in names["fixed"]["params"]] == ["rate-mbps"]
    # the registry the config layer checks against holds both transports
    assert {"cubic", "fixed"} <= {s["name"] for s in api.registry()}


def test_a_datagram_scheme_resolves_to_the_dgram_transport():
    exp = _exp({"name": "fixed", "rate-mbps": 20})
    f = exp["flows"][0]
    assert (f["scheme"], f["transport"], f["params"]) == ("fixed", "dgram", {"rate-mbps": 20})
    # TCP flows' resolved form is unchanged (no transport key: run keys stay the same)
    assert "transport" not in _exp("cubic")["flows"][0]


def test_validation_lists_datagram_schemes_and_refuses_tcp_only_keys():
    with pytest.raises(ConfigError) as e:
        _exp("fixd")
    assert "fixed" in str(e.value) and "aimd-dgram" in str(e.value)
    with pytest.raises(ConfigError) as e:
        _exp({"name": "fixed", "rate": 3})
    assert "rate-mbps" in str(e.value)
    with pytest.raises(ConfigError) as e:
        _exp("fixed", bytes="1MB")
    assert "bytes does not apply to datagram scheme fixed" in str(e.value)
    with pytest.raises(ConfigError) as e:
        _exp("aimd-dgram", tcp={"init-cwnd": 4})
    assert "tcp does not apply" in str(e.value)


@pytest.fixture(scope="module")
def fixed20(tmp_path_factory):
    return run(tmp_path_factory.mktemp("fixed"), _exp({"name": "fixed", "rate-mbps": 20}))


def test_fixed_rate_records_and_metrics(fixed20):
    r = fixed20
    fs = r.flowstats.row(0, named=True)
    # 20 Mbit/s of datagram bytes = 20.38 Mbit/s of 1500-byte IP packets, nothing lost
    assert fs["dropped_pkts"] == 0
    assert fs["sent_pkts"] == pytest.approx(3 * 20e6 / (1472 * 8), abs=2)
    assert fs["app_bytes"] == fs["delivered_pkts"] * 1472
    assert r.packets.height == fs["sent_pkts"]
    assert (r.packets["size"] == 1500).all() and not r.packets["retrans"].any()
    # seq: datagram bytes sent before the packet
    assert r.packets["seq"].head(3).to_list() == [0, 1472, 2944]
    # flows rows: the sender's state and the scheme's variables
    fl = r.flows
    assert "cc_rate_mbps" in fl.columns and fl["cc_rate_mbps"].unique().to_list() == [20.0]
    base_rtt_us = r.experiment["flows"][0]["base_rtt_ns"] / 1e3
    assert fl["srtt_us"].drop_nulls().median() == pytest.approx(base_rtt_us, rel=0.03)
    assert (fl["pacing_rate_bps"] == 20e6).all()
    an = ccbench.analyze(r)
    row = an.summary.row(0, named=True)
    assert row["avg_tput_mbps"] == pytest.approx(20 * 1500 / 1472, rel=0.02)
    assert row["loss_pct"] == 0
    # one-way delay: the path's propagation and serialisation, no queue at 41 % load
    assert row["mean_delay_ms"] == pytest.approx(base_rtt_us / 2e3, abs=0.4)


def test_loss_shows_for_a_rate_above_the_link_and_aimd_reacts(tmp_path):
    over = run(tmp_path, _exp({"name": "fixed", "rate-mbps": 80}, duration=2), "over")
    fs = over.flowstats.row(0, named=True)
    assert fs["dropped_pkts"] / fs["sent_pkts"] == pytest.approx(3 / 8, abs=0.03)
    aimd = run(tmp_path, _exp({"name": "aimd-dgram", "init-cwnd": 80}, duration=4, queue=20), "aimd")
    fs = aimd.flowstats.row(0, named=True)
    assert 0 < fs["dropped_pkts"] / fs["sent_pkts"] < 0.02
    fl = aimd.flows
    assert fl["cc_losses"].max() > 0 and fl["lost"].max() > 0
    # the window saws: it is cut after losses
    w = fl["cc_cwnd_pkts"].to_list()
    assert any(b < 0.7 * a for a, b in zip(w, w[1:]))


def test_same_seed_byte_identical_tables(tmp_path):
    exp = _exp({"name": "aimd-dgram", "init-cwnd": 80}, duration=2, queue=20)
    a = run(tmp_path, exp, "a")
    b = run(tmp_path, exp, "b")
    names = sorted(p.name for p in a.path.glob("*.parquet"))
    assert "packets.parquet" in names and "flows.parquet" in names
    for n in names:
        assert (a.path / n).read_bytes() == (b.path / n).read_bytes(), n
    assert a.flowstats["dropped_pkts"].sum() > 0


def test_schemes_command_lists_datagram_schemes(capsys):
    assert cli.main(["schemes"]) == 0
    out = capsys.readouterr().out
    assert "fixed" in out and "aimd-dgram" in out and "transport: datagram" in out
    assert cli.main(["schemes", "fixed", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["transport"] == "dgram" and s["backends"] == ["sim", "emu"]
    assert cli.main(["schemes", "cubic", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["transport"] == "tcp" and s["backends"] == ["sim", "emu"]


def test_coco_layouts_name_datagram_schemes_too(tmp_path):
    layout = tmp_path / "layout.yml"
    layout.write_text("- {scheme: cubic, flows: 1, start: 0, direction: '->'}\n"
                      "- {scheme: aimd-dgram, flows: 1, start: 0, direction: '<-'}\n")
    exp = api.load_experiment(layout, coco={"runtime": 2, "rate": 20})
    assert ["transport" in f for f in exp["flows"]] == [False, True]
    r = run(tmp_path, exp)
    assert r.flowstats["delivered_pkts"].min() > 100
    assert "cc_cwnd_pkts" in r.flows.columns


def test_a_file_parameter_is_found_next_to_the_experiment_and_keys_the_run(tmp_path, monkeypatch):
    """tao reads a rule table named by a parameter: the path is resolved as trace files are
    (relative to the experiment file too) and the file's content is part of the run key."""
    import ccbench.api as api
    from ccbench import config
    from ccbench.campaign.plan import run_key
    (tmp_path / "t.dna").write_bytes(b"one")
    exp = tmp_path / "e.yaml"
    exp.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                   "flows:\n  - {scheme: tao, params: {dna: t.dna}}\n")
    monkeypatch.chdir("/")
    a = config.load(exp, schemes=api.registry())
    assert a["flows"][0]["params"]["dna"] == str(tmp_path / "t.dna")
    (tmp_path / "t.dna").write_bytes(b"two")
    b = config.load(exp, schemes=api.registry())
    assert run_key(a, "sim", 1, "v") != run_key(b, "sim", 1, "v")
    exp.write_text(exp.read_text().replace("t.dna", "missing.dna"))
    with pytest.raises(config.ConfigErrors) as e:
        config.load(exp, schemes=api.registry())
    assert "flows[0].params.dna" in str(e.value) and "not found" in str(e.value)
