"""Native experiment files -> resolved experiment dict, and every error message."""

import json
import pickle
import textwrap

import pytest
import yaml

import ccbench.config as cfg
from ccbench.config import ConfigError, ConfigErrors

SCHEMES = [
    {"name": "cubic", "description": "CUBIC", "source": "tcp_cubic.c",
     "params": [{"name": "beta", "default": 717, "doc": "beta x 1024"},
                {"name": "fast_convergence", "default": True, "doc": ""}]},
    {"name": "reno", "description": "Reno", "source": "tcp_cong.c", "params": []},
]

EXAMPLE = """\
duration: 30            # seconds (bare numbers); also "30s"
seed: 1
central: {rate: 100Mbit, delay: 10ms, queue: 1000}   # queue may be {left: 1000, right: 2000}
flows:
  - {scheme: cubic, flows: 2, direction: "->", start: 0,
     left-rate: 1Gbit, left-delay: 1ms, right-rate: 1Gbit, right-delay: 1ms}
  - {scheme: reno, flows: 1, direction: "<-", start: 5, stop: 25, right-queues: 500}
"""

TOP_KEYS = {"schema", "duration_ns", "seed", "mss", "sample_interval_ns", "record_packets",
            "hist_bucket_ns", "tcp", "nodes", "links", "bottleneck_links", "flows", "host_noise"}
FLOW_KEYS = {"id", "group", "label", "scheme", "params", "direction", "src", "dst", "start_ns",
             "stop_ns", "bytes", "path", "rev_path", "base_rtt_ns", "ecn", "tcp"}
LINK_KEYS = {"id", "name", "src", "dst", "role", "rate_bps", "delay_ns", "queue"}


def res(doc, **kw):
    kw.setdefault("schemes", SCHEMES)
    if isinstance(doc, str):
        doc = yaml.safe_load(textwrap.dedent(doc))
    return cfg.resolve(doc, **kw)


def errors_of(doc, **kw):
    with pytest.raises(ConfigErrors) as e:
        res(doc, **kw)
    return e.value.errors


def one_error(doc, **kw) -> ConfigError:
    errs = errors_of(doc, **kw)
    assert len(errs) == 1, [str(e) for e in errs]
    return errs[0]


def base(**flow):
    return {"duration": 10, "flows": [{"scheme": "cubic", **flow}]}


def link(r, name):
    return next(l for l in r["links"] if l["name"] == name)


# ------------------------------------------------------------------ the example resolves

def test_example_file_resolves(tmp_path):
    p = tmp_path / "exp.yaml"
    p.write_text(EXAMPLE)
    r = cfg.load(p, schemes=SCHEMES)
    assert set(r) == TOP_KEYS
    assert r["schema"] == 1 and r["duration_ns"] == 30 * 10**9 and r["seed"] == 1
    assert r["mss"] == 1448 and r["sample_interval_ns"] == 10_000_000
    assert r["record_packets"] is True and r["hist_bucket_ns"] == 10_000
    # no rwnd_bytes: the receive window is autotuned from Linux's tcp_rmem (the simulator's default)
    assert r["tcp"] == {"init_cwnd": 10, "delayed_ack": True,
                        "sack": True, "min_rto_ns": 200_000_000,
                        "initial_rto_ns": 1_000_000_000, "rtt_granularity_ns": 0,
                        "delayed_ack_timeout_ns": 40_000_000}
    names = [n["name"] for n in r["nodes"]]
    assert names == ["a1", "a2", "a3", "r1", "r2", "b1", "b2", "b3"]
    assert {n["name"]: n["kind"] for n in r["nodes"]}["r1"] == "router"
    assert {n["name"]: n["kind"] for n in r["nodes"]}["a1"] == "host"
    assert [l["name"] for l in r["links"]] == [
        "a1->r1", "r1->a1", "a2->r1", "r1->a2", "a3->r1", "r1->a3", "r1->r2", "r2->r1",
        "r2->b1", "b1->r2", "r2->b2", "b2->r2", "r2->b3", "b3->r2"]
    assert [l["id"] for l in r["links"]] == list(range(14))
    for l in r["links"]:
        assert set(l) == LINK_KEYS
        assert l["name"] == f"{l['src']}->{l['dst']}"
    assert r["bottleneck_links"] == [6, 7]
    c = link(r, "r1->r2")
    assert (c["role"], c["rate_bps"], c["delay_ns"]) == ("central", 100_000_000, 10_000_000)
    assert c["queue"] == {"kind": "droptail", "packets": 1000, "bytes": None}
    a1 = link(r, "a1->r1")
    assert (a1["role"], a1["rate_bps"], a1["delay_ns"]) == ("left", 10**9, 1_000_000)
    assert link(r, "b2->r2")["role"] == "right"
    # group 2 (reno): unlimited rate, 0 delay, right queue 500 on both ends, left default
    assert link(r, "a3->r1")["rate_bps"] is None and link(r, "a3->r1")["delay_ns"] == 0
    assert link(r, "r2->b3")["queue"]["packets"] == 500
    assert link(r, "b3->r2")["queue"]["packets"] == 500
    assert link(r, "r1->a3")["queue"]["packets"] == 1000

    f1, f2, f3 = r["flows"]
    for f in r["flows"]:
        assert set(f) == FLOW_KEYS
    assert f1 == {"id": 0, "group": 0, "label": "Flow 1: cubic ->", "scheme": "cubic",
                  "params": {}, "direction": "->", "src": "a1", "dst": "b1", "start_ns": 0,
                  "stop_ns": None, "bytes": None, "path": [0, 6, 8], "rev_path": [9, 7, 1],
                  "base_rtt_ns": 24_000_000, "ecn": None, "tcp": None}
    assert f2["src"] == "a2" and f2["path"] == [2, 6, 10] and f2["rev_path"] == [11, 7, 3]
    assert f3["label"] == "Flow 3: reno <-" and f3["group"] == 1
    assert (f3["src"], f3["dst"]) == ("b3", "a3")
    assert f3["path"] == [13, 7, 5] and f3["rev_path"] == [4, 6, 12]
    assert f3["start_ns"] == 5 * 10**9 and f3["stop_ns"] == 25 * 10**9
    assert f3["base_rtt_ns"] == 20_000_000
    json.dumps(r)  # plain JSON-able


def test_paths_follow_links():
    r = res(EXAMPLE)
    for f in r["flows"]:
        hops = [r["links"][j] for j in f["path"]]
        assert hops[0]["src"] == f["src"] and hops[-1]["dst"] == f["dst"]
        assert all(a["dst"] == b["src"] for a, b in zip(hops, hops[1:]))
        back = [r["links"][j] for j in f["rev_path"]]
        assert back[0]["src"] == f["dst"] and back[-1]["dst"] == f["src"]
        assert all(a["dst"] == b["src"] for a, b in zip(back, back[1:]))
        assert f["base_rtt_ns"] == sum(r["links"][j]["delay_ns"]
                                       for j in f["path"] + f["rev_path"])


def test_yaml_text_and_dict_give_the_same():
    assert cfg.resolve(EXAMPLE, schemes=SCHEMES) == res(EXAMPLE)


def test_seed_override_and_default():
    assert res(EXAMPLE, seed=7)["seed"] == 7
    assert res(base())["seed"] == 1


def test_direction_aliases_and_default():
    r = res({"duration": 10, "flows": [{"scheme": "cubic"}, {"scheme": "cubic",
            "direction": "left"}, {"scheme": "cubic", "direction": "right"},
            {"scheme": "reno", "direction": "<-"}]})
    assert [f["direction"] for f in r["flows"]] == ["->", "<-", "->", "<-"]
    assert [f["src"] for f in r["flows"]] == ["a1", "b2", "a3", "b4"]


def test_central_queue_left_right():
    r = res({"duration": 10, "central": {"queue": {"left": 1000, "right": 2000}},
             "flows": [{"scheme": "cubic"}]})
    assert link(r, "r1->r2")["queue"]["packets"] == 1000
    assert link(r, "r2->r1")["queue"]["packets"] == 2000


def test_central_queue_one_side_keeps_default():
    r = res({"duration": 10, "central": {"queue": {"right": "64KB"}},
             "flows": [{"scheme": "cubic"}]})
    assert link(r, "r1->r2")["queue"] == {"kind": "droptail", "packets": 1000, "bytes": None}
    assert link(r, "r2->r1")["queue"] == {"kind": "droptail", "packets": None, "bytes": 64000}


def test_central_defaults_are_coco_run_py_defaults():
    r = res(base())
    c = link(r, "r1->r2")
    assert (c["rate_bps"], c["delay_ns"], c["queue"]["packets"]) == (100_000_000, 0, 1000)


def test_unlimited_queue_and_rate():
    r = res({"duration": 10, "central": {"rate": "unlimited", "queue": "unlimited"},
             "flows": [{"scheme": "cubic", "left-rate": 0}]})
    c = link(r, "r1->r2")
    assert c["rate_bps"] is None and c["queue"] == {"kind": "droptail", "packets": None,
                                                    "bytes": None}
    assert link(r, "a1->r1")["rate_bps"] is None


def test_side_queue_aliases_both_ends():
    r = res(base(**{"left-queue": "10pkt", "right_queues": "3000B"}))
    assert link(r, "a1->r1")["queue"]["packets"] == 10
    assert link(r, "r1->a1")["queue"]["packets"] == 10
    assert link(r, "r2->b1")["queue"]["bytes"] == 3000
    assert link(r, "b1->r2")["queue"]["bytes"] == 3000


def test_underscores_for_dashes_everywhere():
    doc = {"duration": "2s", "sample_interval": "5ms", "hist_bucket": "1us",
           "tcp": {"init_cwnd": 4, "min_rto": "1s", "delayed_ack": False, "initial_rto": 3000},
           "flows": [{"scheme": "cubic", "left_rate": "10Mbit", "right_delay": 2}]}
    r = res(doc)
    assert r["sample_interval_ns"] == 5_000_000 and r["hist_bucket_ns"] == 1000
    assert r["tcp"]["init_cwnd"] == 4 and r["tcp"]["min_rto_ns"] == 10**9
    assert r["tcp"]["delayed_ack"] is False and r["tcp"]["initial_rto_ns"] == 3 * 10**9
    assert link(r, "a1->r1")["rate_bps"] == 10**7
    assert link(r, "b1->r2")["delay_ns"] == 2_000_000


def test_run_settings():
    r = res({"duration": "1500ms", "mss": 1000, "packets": False,
             "tcp": {"rwnd": "1MB", "sack": False}, "flows": [{"scheme": "reno"}]})
    assert r["duration_ns"] == 1_500_000_000 and r["mss"] == 1000
    assert r["record_packets"] is False
    assert r["tcp"]["rwnd_bytes"] == 1_000_000 and r["tcp"]["sack"] is False
    assert r["tcp"]["init_cwnd"] == 10


def test_sorting_by_start_is_stable_and_numbers_flows():
    doc = {"duration": 30, "flows": [
        {"scheme": "reno", "start": 10, "name": "late"},
        {"scheme": "cubic", "start": 0, "flows": 2},
        {"scheme": "reno", "start": 0},
        {"scheme": "cubic", "start": "10s"}]}
    r = res(doc)
    assert [(f["label"], f["group"]) for f in r["flows"]] == [
        ("Flow 1: cubic ->", 0), ("Flow 2: cubic ->", 0), ("Flow 3: reno ->", 1),
        ("Flow 4: late", 2), ("Flow 5: cubic ->", 3)]
    assert [f["id"] for f in r["flows"]] == [0, 1, 2, 3, 4]


def test_scheme_params_both_forms():
    r = res({"duration": 10, "flows": [
        {"scheme": {"name": "cubic", "beta": 819}},
        {"scheme": "cubic", "params": {"fast_convergence": False}},
        {"scheme": {"name": "CUBIC"}, "params": {"beta": 600}}]})
    assert [f["params"] for f in r["flows"]] == [{"beta": 819}, {"fast_convergence": False},
                                                  {"beta": 600}]
    assert r["flows"][2]["scheme"] == "cubic"


def test_start_stop_bytes():
    r = res(base(start=1.5, stop="2500ms", bytes="10MB"))
    f = r["flows"][0]
    assert (f["start_ns"], f["stop_ns"], f["bytes"]) == (1_500_000_000, 2_500_000_000, 10**7)
    assert res(base(bytes="100pkt"))["flows"][0]["bytes"] == 144_800
    assert res(base(stop=10))["flows"][0]["stop_ns"] == 10 * 10**9   # stop == duration ok
    assert res(base(end=4))["flows"][0]["stop_ns"] == 4 * 10**9      # CoCo fork's `end`


def test_null_means_default():
    r = res({"duration": 10, "seed": None, "flows": [{"scheme": "cubic", "left-rate": None,
                                                       "flows": None, "start": None}]})
    assert r["seed"] == 1 and r["flows"][0]["start_ns"] == 0
    assert link(r, "a1->r1")["rate_bps"] is None


def test_without_registry_schemes_are_not_checked():
    r = cfg.resolve({"duration": 5, "flows": [{"scheme": "whatever", "params": {"x": 1}}]})
    assert r["flows"][0]["scheme"] == "whatever" and r["flows"][0]["params"] == {"x": 1}


def test_load_experiment_passes_the_simulators_registry(tmp_path):
    from ccbench import api
    p = tmp_path / "e.yaml"
    p.write_text("duration: 5\nflows: [{scheme: vegass}]\n")
    with pytest.raises(ConfigErrors, match="unknown scheme.*did you mean \"vegas\""):
        api.load_experiment(p)
    p.write_text("duration: 5\nflows: [{scheme: CUBIC, params: {betta: 1}}]\n")
    with pytest.raises(ConfigErrors, match="unknown parameter \"betta\" of scheme cubic"):
        api.load_experiment(p)


# ------------------------------------------------------------------------------- BDP

def test_bdp_queue_central():
    # flow: 2*(1+10+1) ms = 24 ms; bottleneck 100 Mbit/s -> 300 000 B -> /1500 -> 200 pkts
    r = res({"duration": 10, "central": {"rate": "100Mbit", "delay": "10ms", "queue": "1.5bdp"},
             "flows": [{"scheme": "cubic", "left-delay": 1, "right-delay": 1,
                        "left-rate": "1Gbit"}]})
    assert link(r, "r1->r2")["queue"] == {"kind": "droptail", "packets": 300, "bytes": None}
    assert link(r, "r2->r1")["queue"]["packets"] == 300


def test_bdp_queue_is_max_over_crossing_flows():
    # rightward flow: RTT 24 ms; leftward flow crosses r1->r2 only with its ACKs: RTT 40 ms,
    # bottleneck 10 Mbit/s on its own side link -> 50 000 B -> 34 pkts; max -> 200 pkts
    r = res({"duration": 10, "central": {"rate": "100Mbit", "delay": "10ms", "queue": "1bdp"},
             "flows": [{"scheme": "cubic", "left-delay": 1, "right-delay": 1},
                       {"scheme": "reno", "direction": "<-", "left-delay": 10,
                        "right-rate": "10Mbit"}]})
    assert link(r, "r1->r2")["queue"]["packets"] == 200
    assert link(r, "r2->r1")["queue"]["packets"] == 200


def test_bdp_side_queue_uses_own_flow_and_mss():
    r = res({"duration": 10, "mss": 948, "central": {"rate": "10Mbit", "delay": 10},
             "flows": [{"scheme": "cubic", "left-queue": "2bdp", "left-rate": "1Mbit"}]})
    # bottleneck 1 Mbit/s x 20 ms = 2500 B; x2 = 5000 B; / (948+52) = 5 packets
    assert link(r, "a1->r1")["queue"]["packets"] == 5
    assert link(r, "r1->a1")["queue"]["packets"] == 5


def test_bdp_min_one_packet_and_rtt_override():
    r = res({"duration": 10, "central": {"rate": "10kbit", "queue": "1bdp"},
             "flows": [{"scheme": "cubic"}]})
    assert link(r, "r1->r2")["queue"]["packets"] == 1   # zero RTT
    r = res({"duration": 10, "bdp-rtt": "100ms", "central": {"rate": "12Mbit", "queue": "1bdp"},
             "flows": [{"scheme": "cubic"}]})
    assert link(r, "r1->r2")["queue"]["packets"] == 100   # 12e6*0.1/8 = 150 000 B


def test_bdp_with_unlimited_path_is_an_error():
    e = one_error({"duration": 10, "central": {"rate": 0, "queue": "1.5bdp"},
                   "flows": [{"scheme": "cubic"}]})
    assert e.path == "central.queue"
    assert "BDP of link r1->r2 is infinite" in e.message and "flow 1" in e.message
    assert "set a rate" in e.hint


# ------------------------------------------------------------------------ error messages

def test_unknown_key_suggests_closest():
    e = one_error(base(**{"left-rat": "1Gbit"}))
    assert e.path == "flows[0].left-rat"
    assert e.message == 'unknown key "left-rat"'
    assert e.hint.startswith('did you mean "left-rate"?')
    e = one_error({"duration": 10, "flow": [], "flows": [{"scheme": "cubic"}]})
    assert e.path == "flow" and 'did you mean "flows"' in e.hint
    e = one_error({"duration": 10, "centrl": {}, "flows": [{"scheme": "cubic"}]})
    assert 'did you mean "central"' in e.hint
    e = one_error({"duration": 10, "tcp": {"initcwnd": 3}, "flows": [{"scheme": "cubic"}]})
    assert e.path == "tcp.initcwnd" and 'did you mean "init-cwnd"' in e.hint


def test_wrong_unit():
    e = one_error(base(**{"left-rate": "100Mbt"}))
    assert str(e) == ('flows[0].left-rate: "100Mbt" is not a rate; use e.g. 100Mbit, 1Gbit, '
                      '12.5Mbps or a bare number of Mbit/s')
    e = one_error(base(**{"left-delay": "10mss"}))
    assert e.path == "flows[0].left-delay" and "is not a delay" in e.message
    assert "use e.g. 10ms" in e.hint
    e = one_error(base(**{"right-queue": "10Mbit"}))
    assert e.path == "flows[0].right-queue" and "1.5bdp" in e.hint


def test_negative_rate_and_delay():
    e = one_error({"duration": 10, "central": {"rate": -1}, "flows": [{"scheme": "cubic"}]})
    assert e.path == "central.rate" and "negative rate" in e.message
    e = one_error(base(**{"right-delay": "-1ms"}))
    assert e.path == "flows[0].right-delay" and e.message == 'negative delay "-1ms"'


def test_start_at_or_after_duration():
    e = one_error(base(start=10))
    assert e.path == "flows[0].start"
    assert "at or after the end" in e.message and e.hint == "start must be < duration (10s)"
    e = one_error(base(start="11s"))
    assert e.path == "flows[0].start"
    e = one_error(base(start=-1))
    assert e.path == "flows[0].start" and "negative" in e.message


def test_stop_not_after_start_or_after_duration():
    e = one_error(base(start=5, stop=5))
    assert e.path == "flows[0].stop" and e.hint == "stop must be > start"
    e = one_error(base(start=5, stop="4s"))
    assert e.path == "flows[0].stop"
    e = one_error(base(stop=11))
    assert e.path == "flows[0].stop" and e.hint == "stop must be <= duration (10s)"


def test_unknown_scheme_lists_known():
    e = one_error(base(scheme="cubci"))
    assert e.path == "flows[0].scheme" and e.message == 'unknown scheme "cubci"'
    assert e.hint == 'did you mean "cubic"? known schemes: cubic, reno'
    e = one_error({"duration": 10, "flows": [{"scheme": {"name": "bbr3"}}]})
    assert e.path == "flows[0].scheme" and "known schemes: cubic, reno" in e.hint


def test_unknown_scheme_parameter_lists_valid():
    e = one_error({"duration": 10, "flows": [{"scheme": {"name": "cubic", "bta": 1}}]})
    assert e.path == "flows[0].scheme.bta"
    assert e.message == 'unknown parameter "bta" of scheme cubic'
    assert e.hint == 'did you mean "beta"? valid parameters of cubic: beta, fast_convergence'
    e = one_error({"duration": 10, "flows": [{"scheme": "reno", "params": {"beta": 1}}]})
    assert e.path == "flows[0].params.beta" and e.hint == "reno has no parameters"
    e = one_error({"duration": 10, "flows": [{"scheme": "cubic", "params": {"beta": "x"}}]})
    assert e.path == "flows[0].params.beta" and "not a number" in e.message
    e = one_error({"duration": 10, "flows": [{"scheme": {"name": "cubic", "beta": 1},
                                              "params": {"beta": 2}}]})
    assert e.path == "flows[0].params.beta" and "also set" in e.message
    e = one_error({"duration": 10, "flows": [{"scheme": {"beta": 1}}]})
    assert e.path == "flows[0].scheme.name" and "missing" in e.message


def test_missing_required():
    errs = errors_of({"seed": 3})
    assert {e.path for e in errs} == {"duration", "flows"}
    e = next(e for e in errs if e.path == "duration")
    assert e.message == 'missing required key "duration"' and "duration: 30" in e.hint
    e = one_error({"duration": 10, "flows": [{"flows": 2}]})
    assert e.path == "flows[0].scheme" and e.message == 'missing required key "scheme"'
    e = one_error({"duration": None, "flows": [{"scheme": "cubic"}]})
    assert e.path == "duration" and "must not be null" in e.message


def test_wrong_types():
    e = one_error({"duration": 10, "flows": {"scheme": "cubic"}})
    assert e.path == "flows" and "is not a list of flow groups" in e.message
    e = one_error({"duration": 10, "flows": ["cubic"]})
    assert e.path == "flows[0]" and "is not a flow group" in e.message
    e = one_error(base(flows=1.5))
    assert e.path == "flows[0].flows" and e.message == "1.5 is not a number of flows"
    e = one_error(base(flows=True))
    assert e.path == "flows[0].flows"
    e = one_error({"duration": 10, "packets": "yes", "flows": [{"scheme": "cubic"}]})
    assert e.path == "packets" and e.hint == "write true or false"
    e = one_error({"duration": 10, "seed": 1.5, "flows": [{"scheme": "cubic"}]})
    assert e.path == "seed"
    e = one_error(base(scheme=3))
    assert e.path == "flows[0].scheme" and "is not a scheme name" in e.message
    with pytest.raises(ConfigErrors) as ei:
        cfg.resolve([1, 2], schemes=SCHEMES)   # not CoCo-shaped either way: list
    assert "CoCo-Beholder layout" in str(ei.value)
    e = one_error({"duration": 10, "central": "fast", "flows": [{"scheme": "cubic"}]})
    assert e.path == "central" and "is not a mapping" in e.message


def test_empty_flows_list():
    e = one_error({"duration": 10, "flows": []})
    assert e.path == "flows" and e.message == "the flows list is empty"
    assert "at least one flow group" in e.hint


def test_duration_must_be_positive():
    e = one_error({"duration": 0, "flows": [{"scheme": "cubic"}]})
    assert e.path == "duration" and "must be > 0" in e.message


def test_alias_repeated():
    e = one_error(base(**{"left-queue": 1, "left_queues": 2}))
    assert e.path == "flows[0].left_queues" and "same setting" in e.hint


@pytest.mark.parametrize("doc, path, hint", [
    ({"central": {"aqm": "codel"}}, "central.aqm", "queue: {type: codel"),
    ({"central": {"queue": {"left": 10, "kind": "codel"}}}, "central.queue.kind",
     "{left: {type: codel"),
])
def test_aqm_outside_a_queue_points_to_the_queue_type(doc, path, hint):
    e = one_error({"duration": 10, "flows": [{"scheme": "cubic"}], **doc})
    assert e.path == path and hint in e.hint


def test_expect_is_accepted_and_not_a_simulator_input():
    d = {"duration": 10, "flows": [{"scheme": "cubic"}]}
    assert cfg.resolve({**d, "expect": [{"metric": "jain", "min": 0.9}]}) == cfg.resolve(d)


@pytest.mark.parametrize("key", ["left-aqm", "right-aqm"])
def test_group_aqm_keys_point_to_the_side_queue_type(key):
    e = one_error(base(**{key: "1"}))
    assert e.path == f"flows[0].{key}" and f"{key[:-4]}-queue: {{type: codel" in e.hint


def test_droptail_aqm_is_accepted():
    r = res({"duration": 10, "central": {"aqm": "droptail"}, "flows": [{"scheme": "cubic"}]})
    assert link(r, "r1->r2")["queue"]["kind"] == "droptail"
    r = res({"duration": 10, "central": {"queue": {"kind": "droptail", "left": 5}},
             "flows": [{"scheme": "cubic", "left-aqm": "droptail"}]})
    assert link(r, "r1->r2")["queue"] == {"kind": "droptail", "packets": 5, "bytes": None}


def test_all_errors_are_collected():
    errs = errors_of({"duration": 10, "central": {"rate": "fast", "delay": "-1ms"},
                      "flows": [{"scheme": "cubci", "left-rate": "x"},
                                {"scheme": "reno", "start": 20, "bogus": 1}]})
    assert [e.path for e in errs] == ["central.rate", "central.delay", "flows[0].scheme",
                                      "flows[0].left-rate", "flows[1].bogus", "flows[1].start"]


def test_configerrors_is_a_configerror_and_valueerror():
    with pytest.raises(ValueError) as ei:
        res(base(scheme="nope"))
    e = ei.value
    assert isinstance(e, ConfigError) and isinstance(e, ConfigErrors)
    assert e.path == "flows[0].scheme" and "known schemes" in e.hint
    assert str(e) == str(e.errors[0])
    e2 = pickle.loads(pickle.dumps(e))
    assert str(e2) == str(e)


# --------------------------------------------------------------- files, lines, validate

def test_yaml_syntax_error_has_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("duration: 10\nflows:\n  - {scheme: cubic\n  - x: [\n")
    errs = cfg.validate(p)
    assert len(errs) == 1
    e = errs[0]
    assert "YAML syntax error at line 4" in e.message and e.line == 4
    assert e.located().startswith(f"{p}:4: ")
    with pytest.raises(ConfigErrors, match="YAML syntax error"):
        cfg.load(p)


def test_duplicate_yaml_keys(tmp_path):
    p = tmp_path / "dup.yaml"
    p.write_text("duration: 10\nduration: 20\nflows: [{scheme: cubic}]\n")
    (e,) = cfg.validate(p, schemes=SCHEMES)
    assert e.path == "duration" and e.line == 2 and "already set on line 1" in e.hint


def test_errors_carry_file_and_line(tmp_path):
    p = tmp_path / "exp.yaml"
    p.write_text("duration: 10\nflows:\n  - scheme: cubic\n    left-rate: 100Mbt\n"
                 "  - scheme: renoo\n")
    errs = cfg.validate(p, schemes=SCHEMES)
    assert [(e.path, e.line) for e in errs] == [("flows[0].left-rate", 4),
                                                 ("flows[1].scheme", 5)]
    assert errs[0].located() == f"{p}:4: {errs[0]}"
    assert cfg.validate(tmp_path / "missing.yaml")[0].message.startswith("cannot read")


def test_validate_ok_and_load_refuses_coco(tmp_path):
    p = tmp_path / "exp.yaml"
    p.write_text(EXAMPLE)
    assert cfg.validate(p, schemes=SCHEMES) == []
    lay = tmp_path / "layout.yml"
    lay.write_text("- {scheme: cubic, flows: 1, start: 0, direction: '->'}\n")
    with pytest.raises(ConfigErrors) as ei:
        cfg.load(lay, schemes=SCHEMES)
    assert "CoCo-Beholder layout" in ei.value.message and "load_coco" in ei.value.hint
    assert cfg.validate(lay, schemes=SCHEMES) == []   # auto-detected as a layout


# ------------------------------------------------------------------ ECN, per-group tcp, RTT tick

def test_queue_with_ecn_threshold_everywhere():
    r = res({"duration": 10, "central": {"rate": "100Mbit", "delay": "10ms",
                                         "queue": {"limit": 100, "ecn-threshold": 20}},
             "flows": [{"scheme": "cubic", "left-rate": "1Gbit", "left-delay": "1ms",
                        "left-queue": {"size": "64KB", "ecn_threshold": "30KB"}}]})
    assert link(r, "r1->r2")["queue"] == {"kind": "droptail", "packets": 100, "bytes": None,
                                          "ecn_threshold_packets": 20,
                                          "ecn_threshold_bytes": None}
    assert link(r, "r2->r1")["queue"]["ecn_threshold_packets"] == 20
    assert link(r, "a1->r1")["queue"] == {"kind": "droptail", "packets": None, "bytes": 64000,
                                          "ecn_threshold_packets": None,
                                          "ecn_threshold_bytes": 30000}
    # queues without a threshold keep the plain form
    assert link(r, "r2->b1")["queue"] == {"kind": "droptail", "packets": 1000, "bytes": None}
    # per side, with the limit left at its default, and BDP-relative thresholds
    r = res({"duration": 10, "central": {"rate": "100Mbit", "delay": "10ms", "queue": {
        "left": {"ecn-threshold": "0.1bdp"}, "right": 50}},
        "flows": [{"scheme": "cubic"}]})
    # BDP: 100 Mbit/s x 20 ms = 250 000 bytes = 167 packets of 1500 B -> 0.1 BDP = 17 packets
    assert link(r, "r1->r2")["queue"] == {"kind": "droptail", "packets": 1000, "bytes": None,
                                          "ecn_threshold_packets": 17,
                                          "ecn_threshold_bytes": None}
    assert link(r, "r2->r1")["queue"] == {"kind": "droptail", "packets": 50, "bytes": None}


@pytest.mark.parametrize("doc, path, words", [
    ({"central": {"ecn": {"threshold": 20}}}, "central.ecn", "ecn-threshold"),
    ({"central": {"queue": {"limit": 10, "ecn-threshold": "unlimited"}}},
     "central.queue.ecn-threshold", "not an ECN marking threshold"),
    ({"central": {"queue": {"limit": 10, "ecn-thresold": 5}}}, "central.queue.ecn-thresold",
     'did you mean "ecn-threshold"'),
    ({"central": {"queue": {"limit": 10, "ecn-threshold": "5 apples"}}},
     "central.queue.ecn-threshold", "queue size"),
    ({"tcp": {"rtt-granularity": "fast"}}, "tcp.rtt-granularity", "RTT granularity"),
    ({"tcp": {"delayed-ack-timeout": 0}}, "tcp.delayed-ack-timeout", "delayed-ack: false"),
    ({"tcp": {"min-tso-segs": 0}}, "tcp.min-tso-segs", "must be >= 1"),
    ({"flows": [{"scheme": "cubic", "ecn": "yes please"}]}, "flows[0].ecn", "boolean"),
    ({"flows": [{"scheme": "cubic", "left-ecn": 5}]}, "flows[0].left-ecn", "ecn-threshold"),
    ({"flows": [{"scheme": "cubic", "tcp": {"sakc": False}}]}, "flows[0].tcp.sakc",
     'did you mean "sack"'),
])
def test_ecn_and_tcp_errors_name_path_and_fix(doc, path, words):
    d = {"duration": 10, "flows": [{"scheme": "cubic"}], **doc}
    e = one_error(d)
    assert e.path == path, str(e)
    assert words in str(e), str(e)
    assert not isinstance(e, cfg.NotSupportedError)


def test_group_ecn_and_tcp_overrides():
    r = res({"duration": 10, "tcp": {"rtt-granularity": "1ms", "delayed-ack-timeout": 100,
                                     "init-cwnd": 4},
             "flows": [{"scheme": "cubic", "ecn": True, "flows": 2},
                       {"scheme": "reno", "tcp": {"sack": False, "delayed_ack_timeout": "200ms"}},
                       {"scheme": "cubic", "ecn": False}]})
    assert r["tcp"]["rtt_granularity_ns"] == 10**6
    assert r["tcp"]["delayed_ack_timeout_ns"] == 100 * 10**6
    f1, f2, f3, f4 = r["flows"]
    assert (f1["ecn"], f2["ecn"], f3["ecn"], f4["ecn"]) == (True, True, None, False)
    assert f1["tcp"] is None and f4["tcp"] is None
    # a group's tcp is the top-level tcp with the group's keys over it
    assert f3["tcp"] == {**r["tcp"], "sack": False, "delayed_ack_timeout_ns": 200 * 10**6}
    assert r["tcp"]["sack"] is True


def test_min_tso_segs_is_written_only_when_given():
    # net.ipv4.tcp_min_tso_segs: absent from the resolved experiment unless set (results of
    # experiments without it stay byte-identical), per group like every tcp key
    r = res({"duration": 5, "flows": [{"scheme": "reno"},
                                      {"scheme": "cubic", "tcp": {"min-tso-segs": 1}}]})
    assert "min_tso_segs" not in r["tcp"] and r["flows"][1]["tcp"]["min_tso_segs"] == 1


def test_ecn_keys_no_longer_reserved():
    r = res({"duration": 10, "flows": [{"scheme": "cubic", "ecn": None}]})
    assert r["flows"][0]["ecn"] is None


def test_send_buffer_key_per_group():
    r = res({"duration": 5, "tcp": {"wmem": [4096, "16KiB", "256KiB"]},
             "flows": [{"scheme": "reno"},
                       {"scheme": "cubic", "tcp": {"wmem": "4096 16384 4MiB"}}]})
    assert r["tcp"]["wmem"] == [4096, 16384, 256 << 10]
    assert r["flows"][1]["tcp"]["wmem"] == [4096, 16384, 4 << 20]
    # written only when given: the simulator's default is Linux's tcp_wmem
    assert "wmem" not in res({"duration": 5, "flows": [{"scheme": "reno"}]})["tcp"]
    e = one_error({"duration": 5, "tcp": {"wmem": [4096, 16384]}, "flows": [{"scheme": "reno"}]})
    assert "wmem" in str(e) and "three sizes" in str(e) and "tcp_wmem" in str(e)
    e = one_error({"duration": 5, "tcp": {"wmem": [4096, "1MiB", "64KiB"]}, "flows": [{"scheme": "reno"}]})
    assert "wmem" in str(e) and "min ≤ default ≤ max" in str(e)
    e = one_error({"duration": 5, "tcp": {"wmem": [1000, 2000, 3000]}, "flows": [{"scheme": "reno"}]})
    assert "wmem max 3000 bytes holds less than two segments" in str(e)


def test_receive_buffer_keys_per_group():
    r = res({"duration": 5, "tcp": {"rmem": [4096, "128KiB", "4MiB"], "moderate-rcvbuf": False},
             "flows": [{"scheme": "reno"},
                       {"scheme": "cubic", "tcp": {"rmem": "4096 131072 1MiB"}}]})
    assert r["tcp"]["rmem"] == [4096, 131072, 4 << 20] and r["tcp"]["moderate_rcvbuf"] is False
    assert "rwnd_bytes" not in r["tcp"]
    assert r["flows"][1]["tcp"]["rmem"] == [4096, 131072, 1 << 20]
    e = one_error({"duration": 5, "tcp": {"rmem": [4096, 131072]}, "flows": [{"scheme": "reno"}]})
    assert "rmem" in str(e) and "three sizes" in str(e)
    e = one_error({"duration": 5, "tcp": {"rmem": [4096, "1MiB", "64KiB"]}, "flows": [{"scheme": "reno"}]})
    assert "min ≤ default ≤ max" in str(e)
