"""Fuzzing the surfaces added after the experiment-file fuzzer (tests/test_fuzz.py): derived
expressions, campaign files (axes, ranges, repeats, derive, where), expectation blocks (run
and campaign), capture-import mappings and gym actions. As there, the only allowed outcomes
are a result or a one-line error naming what is wrong — never another exception, a hang or a
blow-up (each case runs under an alarm and a CPU-time bound); deterministic in CI,
``CCBENCH_FUZZ_SCALE=10`` runs ten times as many cases."""
from __future__ import annotations

import math
import os
import resource

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccbench import config
from ccbench.campaign.expr import Expr, ExprError
from test_fuzz import alarm, one_line

SCALE = float(os.environ.get("CCBENCH_FUZZ_SCALE", "1"))
COMMON = dict(deadline=None, derandomize=True, database=None, print_blob=True,
              suppress_health_check=list(HealthCheck))
BASE = {"duration": 1, "central": {"rate": "10Mbit", "delay": "5ms"},
        "flows": [{"scheme": "cubic"}]}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


nums = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=True, allow_infinity=True),
                 st.sampled_from([0, 1, -1, 2**63, 10**9, 1e-300, 1e300]))
atoms = st.one_of(nums.map(repr), st.sampled_from(["x", "y", "rate", "central.rate",
                                                   "flows[0].scheme", "true", "null", "'10ms'",
                                                   "'cubic'", "[1, 2]", "[0]"]))
ops = st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "==", "<", " and ", " or ",
                       " in ", " if x else "])
funcs = st.sampled_from(["min", "max", "abs", "round", "floor", "ceil", "sqrt", "log", "exp",
                         "int", "float", "str", "rate", "time", "size", "bdp", "unit", "open",
                         "__import__", "eval"])


@st.composite
def expressions(draw, depth=0):
    if depth > 4 or draw(st.booleans()):
        return draw(atoms)
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return f"({draw(expressions(depth + 1))}{draw(ops)}{draw(expressions(depth + 1))})"
    if kind == 1:
        args = ", ".join(draw(st.lists(expressions(depth + 1), max_size=3)))
        return f"{draw(funcs)}({args})"
    if kind == 2:
        return "-" * draw(st.integers(1, 200)) + draw(atoms)
    if kind == 3:
        return f"[{draw(expressions(depth + 1))}] * {draw(nums)!r}"
    return draw(st.text(max_size=40))


@settings(max_examples=int(300 * SCALE), **COMMON)
@given(text=expressions())
def test_fuzz_derived_expressions(text):
    values = {"x": 3, "y": 0.5, "rate": "10Mbit", "central.rate": "10Mbit",
              "flows[0].scheme": "cubic"}
    t0 = _cpu()
    with alarm(10):
        try:
            e = Expr(text)
            e.eval(lambda p: values[p] if p in values else (_ for _ in ()).throw(
                ExprError(f"unknown name {p!r}")))
        except ExprError as err:
            one_line(err)
    assert _cpu() - t0 < 2.0, text[:80]


range_specs = st.fixed_dictionaries(
    {"path": st.just("central.rate"), "from": nums, "to": nums},
    optional={"num": nums, "step": nums, "scale": st.sampled_from(["linear", "log", "cubic"]),
              "unit": st.sampled_from(["Mbit", "ms", 3, None])})
axis = st.one_of(
    st.fixed_dictionaries({"path": st.sampled_from(["central.rate", "flows[0].scheme", "seed",
                                                     "nope..x", "flows[9].scheme"]),
                           "values": st.lists(st.one_of(nums, st.sampled_from(
                               ["10Mbit", "cubic", "bbr", None, [], {}])), max_size=4)}),
    range_specs)
sweeps = st.fixed_dictionaries(
    {"axes": st.dictionaries(st.sampled_from(["a", "b", "c"]), axis, min_size=1, max_size=3)},
    optional={"repeats": st.one_of(nums, st.just("3")),
              "derive": st.dictionaries(st.sampled_from(["central.delay", "seed", "d"]),
                                        expressions(), max_size=2),
              "where": expressions(), "label": st.text(max_size=20)})


@settings(max_examples=int(200 * SCALE), **COMMON)
@given(sweep=sweeps, top_repeats=st.one_of(st.none(), nums))
def test_fuzz_campaign_files(sweep, top_repeats):
    from ccbench.campaign import parse_campaign, plan
    doc = {**BASE, "sweep": sweep}
    if top_repeats is not None:
        doc["repeats"] = top_repeats
    t0 = _cpu()
    with alarm(20):
        try:
            c = parse_campaign(doc)
            n = c.repeats
            for d in c.dims:
                n *= d.n
            if n <= 200:
                plan(c)
        except config.ConfigErrors as err:
            assert str(err)
    assert _cpu() - t0 < 5.0


expect_entries = st.fixed_dictionaries(
    {"metric": st.sampled_from(["jain", "throughput", "share", "delay-p95", "utilisation",
                                "convergence", "rto", "loss", "bogus"])},
    optional={"min": st.one_of(nums, st.just("2x base-rtt"), st.just([0.9])),
              "max": st.one_of(nums, st.just("4x base-rtt")),
              "flow": st.one_of(st.integers(-2, 5), st.text(max_size=5)),
              "scheme": st.sampled_from(["cubic", "bbr", 3]),
              "link": st.sampled_from(["r1->r2", "x", None]),
              "after": st.one_of(nums, st.just("500ms"), st.just("100s")),
              "before": st.one_of(nums, st.just("2s")),
              "over": st.sampled_from(["flows", "schemes", "links", None]),
              "threshold": st.one_of(nums, st.just([0.9]), st.just("0.9"))})


@settings(max_examples=int(300 * SCALE), **COMMON)
@given(entries=st.one_of(st.lists(expect_entries, max_size=3), nums, st.text(max_size=10)))
def test_fuzz_run_expectation_blocks(entries):
    from ccbench import expect
    exp = config.resolve(BASE)
    with alarm(10):
        try:
            expect.parse(entries, exp["flows"], exp["links"], duration_ns=exp["duration_ns"])
        except expect.ExpectError as err:
            one_line(err)


campaign_expect = st.fixed_dictionaries(
    {"metric": st.sampled_from(["throughput", "jain", "delay-p95", "bogus"])},
    optional={"min": nums, "max": nums, "stat": st.sampled_from(["mean", "ci_low", "n", "x"]),
              "monotone": st.sampled_from(["increasing", "sideways"]),
              "in": st.sampled_from(["a", "zz"]), "tolerance": nums,
              "scheme": st.sampled_from(["cubic", 1])})


@settings(max_examples=int(200 * SCALE), **COMMON)
@given(entries=st.lists(campaign_expect, max_size=3))
def test_fuzz_campaign_expectation_blocks(entries):
    from ccbench.campaign import parse_campaign
    doc = {**BASE, "sweep": {"axes": {"a": {"path": "seed", "values": [1, 2]}}},
           "expect": entries}
    with alarm(10):
        try:
            parse_campaign(doc)
        except config.ConfigErrors as err:
            assert str(err)


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    from simhelp import pcap_folder
    return pcap_folder(tmp_path_factory.mktemp("fcap"), 0.5)


endpoints = st.one_of(st.sampled_from(["10.0.0.1", "10.0.1.1", "10.0.0.1:5000", "999.1.1.1",
                                       "::1", "", "x:y"]), nums, st.none())
mappings = st.fixed_dictionaries(
    {"flows": st.one_of(st.lists(st.fixed_dictionaries(
        {"sender": endpoints, "receiver": endpoints},
        optional={"sender_capture": st.sampled_from(["h1.pcapng", "nope.pcap", "/etc/passwd",
                                                     None]),
                  "receiver_capture": st.sampled_from(["h2.pcapng", "../x", None]),
                  "scheme": st.sampled_from(["cubic", 3, None]),
                  "start": nums}), max_size=3), nums, st.none())},
    optional={"experiment": st.one_of(st.none(), st.sampled_from(["/etc/passwd", "missing.yaml"]),
                                      st.fixed_dictionaries({}, optional={
                                          "links": st.one_of(st.just([]), nums),
                                          "flows": st.lists(st.fixed_dictionaries(
                                              {"id": st.one_of(st.integers(-1, 3), nums)},
                                              optional={"bytes": nums, "start_ns": nums}),
                                              max_size=2),
                                          "duration": nums, "mss": nums})),
              "duration": nums, "central": st.one_of(st.none(), nums, st.just({"rate": "x"}))})


@settings(max_examples=int(60 * SCALE), **COMMON)
@given(mapping=mappings, interval=st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                            st.just(0.01)))
def test_fuzz_capture_import_mappings(capture, tmp_path_factory, mapping, interval):
    from ccbench.capture.export import CaptureError
    from ccbench.capture.importer import import_pcap
    out = tmp_path_factory.mktemp("fimp")
    t0 = _cpu()
    with alarm(30):
        try:
            import_pcap(capture, out / "o", mapping=mapping, sample_interval=interval)
        except (CaptureError, config.ConfigErrors, config.ConfigError) as err:
            assert str(err)
            assert "root:x:" not in str(err)  # a foreign file is never quoted
    assert _cpu() - t0 < 10.0


@settings(max_examples=int(40 * SCALE), **COMMON)
@given(actions=st.lists(st.one_of(nums, st.lists(nums, max_size=3), st.none(),
                                  st.text(max_size=4)), min_size=1, max_size=5))
def test_fuzz_gym_actions(actions):
    gymnasium = pytest.importorskip("gymnasium")
    import numpy as np

    import ccbench.gym  # noqa: F401
    env = gymnasium.make("ccbench/Aurora-v0", experiment={
        "duration": 0.5, "seed": 1, "central": {"rate": "10Mbit", "delay": "5ms", "queue": 50},
        "flows": [{"scheme": "cubic", "flows": 1}]}, controlled=0)
    env.reset(seed=1)
    with alarm(20):
        for a in actions:
            try:
                obs, reward, done, trunc, _ = env.step(np.asarray(a, dtype=object)
                                                       if isinstance(a, (list, str)) or a is None
                                                       else a)
            except (ValueError, TypeError) as err:
                one_line(err)
                continue
            assert np.all(np.isfinite(np.asarray(obs, dtype=float))) and math.isfinite(reward)
            if done:
                break
    env.close()
