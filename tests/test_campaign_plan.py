"""Campaign files: plan expansion (cross, zip, ranges, derived values, filters, variants,
repeats, seeds), the safe expression language and the errors of bad campaign files."""
from __future__ import annotations

import math

import pytest
import yaml

from ccbench import config
from ccbench.campaign import expand, parse_campaign, derive_seed, run_key
from ccbench.campaign.expr import Expr, ExprError, evaluate
from ccbench.campaign.paths import PathError, parse_path, set_path
from ccbench.campaign.plan import PlanErrors

BASE = {"duration": 1, "seed": 7, "central": {"rate": "10Mbit", "delay": "10ms", "queue": 100},
        "flows": [{"scheme": "cubic"}, {"scheme": "reno"}]}


def camp(sweep=None, **top):
    doc = {**BASE, **top}
    if sweep is not None:
        doc["sweep"] = sweep
    return parse_campaign(doc)


def plan(sweep=None, **top):
    return expand(camp(sweep, **top))


def test_cross_product_order_and_values():
    p = plan({"axes": {"central.queue": [50, 100, 200], "flows[0].scheme": ["bbr", "cubic"]}})
    assert len(p.points) == 6 and len(p.runs) == 6
    assert [(x.values["central.queue"], x.values["flows[0].scheme"]) for x in p.points] == [
        (50, "bbr"), (50, "cubic"), (100, "bbr"), (100, "cubic"), (200, "bbr"), (200, "cubic")]
    exp = p.runs[1].experiment
    central = [l for l in exp["links"] if l["role"] == "central"][0]
    assert central["queue"]["packets"] == 50
    assert exp["flows"][0]["scheme"] == "cubic" and exp["flows"][1]["scheme"] == "reno"
    assert exp["record_packets"] is False  # campaigns keep no per-packet records by default


def test_zip_pairs_axes_and_crosses_with_the_rest():
    p = plan({"axes": {"flows[0].scheme": ["bbr", "cubic"]},
              "zip": [{"central.rate": ["10Mbit", "100Mbit"], "central.delay": ["50ms", "5ms"]}]})
    got = [(x.values["flows[0].scheme"], x.values["central.rate"], x.values["central.delay"])
           for x in p.points]
    assert got == [("bbr", "10Mbit", "50ms"), ("bbr", "100Mbit", "5ms"),
                   ("cubic", "10Mbit", "50ms"), ("cubic", "100Mbit", "5ms")]
    rates = {x.experiment["flows"][0]["base_rtt_ns"] for x in p.runs}
    assert len(rates) == 2


@pytest.mark.parametrize("spec, want", [
    ({"from": 0.25, "to": 8, "num": 6, "scale": "log", "unit": "bdp"},
     ["0.25bdp", "0.5bdp", "1bdp", "2bdp", "4bdp", "8bdp"]),
    ({"from": 10, "to": 100, "num": 4}, [10, 40, 70, 100]),
    ({"from": 0, "to": 0.01, "step": 0.005}, [0, 0.005, 0.01]),
])
def test_ranges(spec, want):
    c = camp({"axes": {"central.queue" if "unit" in spec or spec["to"] == 100
                       else "central.loss": spec}})
    assert c.axes[0].values == want


def test_derived_queue_in_bdp_of_swept_rate_and_delay():
    p = plan({"zip": [{"central.rate": ["10Mbit", "40Mbit"], "central.delay": ["20ms", "5ms"]}],
              "axes": {"q": [0.5, 2]},
              "derive": {"central.queue": "unit(round(q * bdp(central.rate, "
                                          "2 * time(central.delay))), 'B')"}})
    # axes: before zip groups in the product; both zipped pairs have a 50 kB BDP
    assert [x.values["central.queue"] for x in p.points] == ["25000B"] * 2 + ["100000B"] * 2
    central = [l for l in p.runs[3].experiment["links"] if l["role"] == "central"][0]
    assert central["queue"]["bytes"] == 100000  # 2 × 10 Mbit/s × 40 ms / 8


def test_where_exclude_and_labels():
    p = plan({"axes": {"flows[0].scheme": ["bbr", "cubic", "reno"],
                       "central.loss": [0, 0.01]},
              "where": "central.loss == 0 or flows[0].scheme != 'reno'",
              "exclude": [{"flows[0].scheme": "bbr", "central.loss": 0.01}],
              "label": "{flows[0].scheme}@{central.loss}"})
    assert [x.label for x in p.points] == ["bbr@0", "cubic@0", "cubic@0.01", "reno@0"]
    assert p.excluded == 2


def test_named_variants_are_an_axis():
    p = plan({"variants": {"bbr-vs-cubic": {"flows[0].scheme": "bbr"},
                           "two-cubic": {"flows[1].scheme": "cubic"}},
              "axes": {"central.queue": [50, 100]}})
    assert [(x.values["variant"], x.values["central.queue"]) for x in p.points] == [
        ("bbr-vs-cubic", 50), ("bbr-vs-cubic", 100), ("two-cubic", 50), ("two-cubic", 100)]
    assert [f["scheme"] for f in p.runs[0].experiment["flows"]] == ["bbr", "reno"]
    assert [f["scheme"] for f in p.runs[2].experiment["flows"]] == ["cubic", "cubic"]
    assert p.columns[0] == "variant"


def test_repeats_and_seed_derivation():
    p = plan({"axes": {"central.queue": [50, 100]}, "repeats": 3})
    assert len(p.runs) == 6
    seeds = [r.seed for r in p.runs]
    assert len(set(seeds)) == 6
    # deterministic: the base seed, the point's swept values and the repeat index
    assert seeds[0] == derive_seed(7, {"central.queue": 50}, 0)
    assert seeds[4] == derive_seed(7, {"central.queue": 100}, 1)
    assert all(r.experiment["seed"] == r.seed for r in p.runs)
    assert 0 <= max(seeds) < 2**63
    # the same file expands to the same runs; another base seed to other seeds
    assert [r.key for r in plan({"axes": {"central.queue": [50, 100]}, "repeats": 3}).runs] \
        == [r.key for r in p.runs]
    other = expand(parse_campaign({**BASE, "seed": 8, "sweep": {
        "axes": {"central.queue": [50, 100]}, "repeats": 3}}))
    assert not {r.seed for r in other.runs} & set(seeds)
    # shared seeds: the same seed for repeat r at every point
    sh = plan({"axes": {"central.queue": [50, 100]}, "repeats": 2, "seeds": "shared"})
    assert [r.seed for r in sh.runs[:2]] == [r.seed for r in sh.runs[2:]]


def test_top_level_repeats_without_axes():
    p = expand(parse_campaign({**BASE, "repeats": 4}))
    assert len(p.points) == 1 and len(p.runs) == 4


def test_run_key_covers_experiment_backend_seed_version():
    p = plan({"axes": {"central.queue": [50]}})
    r = p.runs[0]
    k = run_key(r.experiment, "sim", r.seed, "0.1.0")
    assert k == run_key(dict(r.experiment), "sim", r.seed, "0.1.0")
    assert k != run_key(r.experiment, "emu", r.seed, "0.1.0")
    assert k != run_key(r.experiment, "sim", r.seed + 1, "0.1.0")
    assert k != run_key(r.experiment, "sim", r.seed, "0.2.0")
    assert k != run_key({**r.experiment, "duration_ns": 2}, "sim", r.seed, "0.1.0")


def test_base_file_with_overrides(tmp_path):
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(BASE))
    f = tmp_path / "camp.yaml"
    f.write_text(yaml.safe_dump({"base": "base.yaml", "overrides": {"duration": 2,
                                                                    "central.loss.bernoulli": 0.01},
                                 "sweep": {"axes": {"flows[*].scheme": ["bbr", "vegas"]}},
                                 "repeats": 2}))
    from ccbench.campaign import load_campaign
    p = expand(load_campaign(f))
    assert len(p.runs) == 4
    e = p.runs[2].experiment
    assert e["duration_ns"] == 2 * 10**9
    assert [fl["scheme"] for fl in e["flows"]] == ["vegas", "vegas"]
    central = [l for l in e["links"] if l["role"] == "central"][0]
    assert central["loss"] == {"kind": "bernoulli", "p": 0.01}


def test_invalid_points_reported_at_once_with_axis_values():
    with pytest.raises(PlanErrors) as ei:
        plan({"axes": {"central.queue": [100, "lots", -3], "flows[0].scheme": ["cubic", "nope"]}})
    e = ei.value
    text = str(e)
    assert e.n_invalid == 5 and e.n_points == 6
    paths = [x.path for x in e.errors]
    assert "central.queue" in paths and "flows[0].scheme" in paths
    assert 'central.queue="lots"' not in text  # values are shown as written:
    assert "central.queue=lots" in text and "central.queue=-3" in text
    assert "flows[0].scheme=nope" in text
    assert len(e.errors) == 3  # one per distinct problem, not one per point


@pytest.mark.parametrize("sweep, path, words", [
    ({"axes": {"centrl.queue": [1, 2]}}, "sweep.axes.centrl.queue", 'did you mean "central"'),
    ({"axes": {"central.queue": 5}}, "sweep.axes.central.queue", "not a list of values"),
    ({"axes": {"central.queue": {"from": 1, "to": 8, "num": 4, "step": 1}}},
     "sweep.axes.central.queue", "exactly one of num"),
    ({"axes": {"central.queue": {"from": 0, "to": 8, "num": 4, "scale": "log"}}},
     "sweep.axes.central.queue", "log range"),
    ({"zip": [{"central.rate": ["1Mbit", "2Mbit"], "central.delay": ["1ms"]}]},
     "sweep.zip[0]", "same number of values"),
    ({"axes": {"q": [1, 2]}}, "sweep.axes.q", "nothing uses it"),
    ({"axes": {"q": [1]}, "derive": {"central.queue": "__import__('os').system('true')"}},
     "sweep.derive.central.queue", "unknown function"),
    ({"axes": {"q": [1]}, "derive": {"central.queue": "q.__class__"}},
     "sweep.derive.central.queue", "neither an axis"),
    ({"axes": {"central.queue": [1]}, "repeats": 0}, "sweep.repeats", ">= 1"),
    ({"axes": {"central.queue": [1]}, "seeds": "random"}, "sweep.seeds", "per-point"),
    ({"axes": {"central.queue": [1]}, "zipp": []}, "sweep.zipp", 'did you mean "zip"'),
    # an axis called n (or mean, ci_low, ...) would collide with the aggregate's columns
    ({"axes": {"n": {"path": "flows[0].scheme", "values": ["bbr"]}}}, "sweep.axes.n",
     "column of the aggregate table"),
])
def test_bad_campaign_files_name_the_axis_path(sweep, path, words):
    with pytest.raises(config.ConfigErrors) as ei:
        camp(sweep)
    errs = ei.value.errors
    assert len(errs) == 1, [str(e) for e in errs]
    assert errs[0].path == path
    assert words in str(errs[0])


def test_axis_mixing_numbers_and_mappings_gives_a_text_column():
    p = plan({"axes": {"q": {"path": "central.queue", "values": [100, {"type": "codel"}]}}})
    assert p.table()["q"].to_list() == ["100", '{"type": "codel"}']
    assert p.table()["label"].to_list() == ["q=100", "q={type: codel}"]
    assert p.run_table()["q"].to_list() == ["100", '{"type": "codel"}']
    assert "q={type: codel}" in p.describe()


def test_axis_path_that_does_not_fit_the_experiment():
    with pytest.raises(PlanErrors) as ei:
        plan({"axes": {"flows[3].scheme": ["bbr"], "central.rate.x": [1]}})
    text = str(ei.value)
    assert "flows has 2 items" in text and "central.rate is \"10Mbit\", not a mapping" in text


def test_load_campaign_errors_carry_file_and_line(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("duration: 1\nflows: [{scheme: cubic}]\nsweep:\n  axes:\n"
                 "    central.queue: {from: 1}\n")
    from ccbench.campaign import load_campaign
    with pytest.raises(config.ConfigErrors) as ei:
        load_campaign(f)
    e = ei.value.errors[0]
    assert e.line == 5 and e.source == str(f)


def test_run_refuses_a_campaign_file():
    with pytest.raises(config.ConfigErrors) as ei:
        config.resolve({**BASE, "sweep": {"axes": {"central.queue": [1]}}})
    assert ei.value.errors[0].path == "sweep" and "ccbench sweep" in ei.value.errors[0].hint


# ----------------------------------------------------------------------- expressions

@pytest.mark.parametrize("text, values, want", [
    ("bdp('100Mbit', '20ms')", {}, 250000.0),
    ("bdp(rate, 2 * time(d))", {"rate": "10Mbit", "d": "10ms"}, 25000.0),
    ("unit(q * 2, 'bdp')", {"q": 0.25}, "0.5bdp"),
    ("unit(round(size('64KiB') / 1500), 'pkt')", {}, "44pkt"),
    ("a if a > b else b", {"a": 3, "b": 5}, 5),
    ("s in ['bbr', 'cubic'] and not x", {"s": "bbr", "x": False}, True),
    ("1 < x <= 3", {"x": 3}, True),
    ("ceil(log2(x)) + floor(1.5) + min(1, 2) + sqrt(4)", {"x": 5}, 3 + 1 + 1 + 2.0),
    ("'q' + str(2.50)", {}, "q2.5"),
    ("flows[0].left_delay", {"flows[0].left_delay": "1ms"}, "1ms"),
])
def test_expressions(text, values, want):
    got = evaluate(text, values)
    assert got == want if not isinstance(want, float) else math.isclose(got, want)


@pytest.mark.parametrize("text, words", [
    ("open('/etc/passwd')", "unknown function"),
    ("(lambda: 1)()", "unknown function"),
    ("[x for x in y]", "not allowed"),
    ("x.__class__.__bases__", "unknown name"),  # only ever a path lookup
    ("'a' * 10", "cannot multiply"),
    ("2 ** 100000", "too large"),
    ("1 +", "syntax error"),
    ("rate('12MB/s')", "bytes per second"),
    ("time + 1", "unknown name"),  # helpers are called, a bare name is a value
])
def test_unsafe_or_wrong_expressions_are_refused(text, words):
    with pytest.raises(ExprError) as ei:
        evaluate(text, {"x": 1, "y": [1]})
    assert words in str(ei.value)


def test_paths():
    assert parse_path("flows[0].scheme") == ("flows", 0, "scheme")
    assert parse_path("flows[*].start") == ("flows", "*", "start")
    d = {"central": {"loss": None}, "flows": [{"left-delay": "1ms"}]}
    set_path(d, parse_path("central.loss.bernoulli"), 0.01)
    set_path(d, parse_path("flows[0].left_delay"), "2ms")  # _ and - are the same key
    set_path(d, parse_path("tcp.init-cwnd"), 4)
    assert d == {"central": {"loss": {"bernoulli": 0.01}}, "flows": [{"left-delay": "2ms"}],
                 "tcp": {"init-cwnd": 4}}
    with pytest.raises(PathError):
        parse_path("flows[x]")
    with pytest.raises(PathError):
        set_path(d, parse_path("flows[1].scheme"), "bbr")
    assert Expr("flows[0].scheme == 'bbr'").names == ["flows[0].scheme"]


def test_a_simulated_campaign_refuses_a_command_scheme_by_the_run_rule():
    """Planning for the simulator applies the rule `ccbench run` applies
    (config.semantic.sim_refusal): the point is invalid, naming the flow's scheme field."""
    cmd = {"command": {"receiver": "ccbench-agent server --port {port}",
                       "sender": "ccbench-agent client --dst {dst} --port {port} --cc bbr"},
           "name": "agent-bbr"}
    with pytest.raises(PlanErrors) as ei:
        plan({"axes": {"flows[1].scheme": ["reno", cmd]}})
    (err,) = ei.value.errors
    assert err.path == "flows[1].scheme" and "command schemes run only on --backend emu" in str(err)
    assert ei.value.n_invalid == 1 and ei.value.n_points == 2
    assert len(expand(camp({"axes": {"flows[1].scheme": ["reno", cmd]}}), backend="emu").runs) == 2
