"""Fuzzing in the suite (issue 11, class 5): structure-aware generation of experiment files
(valid and invalid), of rate/delay series and mahimahi traces, with Hypothesis.

The only allowed outcomes are a result or a one-line error (a ConfigError naming a field, a
BudgetError with the estimate): never another exception, a Rust panic, a hang (each case
has an alarm) or a run over the memory budget. The CI run is bounded and deterministic
(``derandomize``); ``CCBENCH_FUZZ_SCALE=10`` runs ten times as many cases.

tests/data/fuzz-corpus/ holds inputs that once failed (alias bomb, deep nesting, an RTO above
120 s that panicked in Rust, a trace time of 1e20 s, non-UTF-8 bytes, ...); each is replayed.
"""
from __future__ import annotations

import math
import os
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccbench
from ccbench import budget, config
from ccbench.config.yamlsrc import parse_yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "fuzz-corpus"
SCALE = float(os.environ.get("CCBENCH_FUZZ_SCALE", "1"))
SCHEMES = [s["name"] for s in ccbench.schemes()]

COMMON = dict(deadline=None, derandomize=True, database=None, print_blob=True,
              suppress_health_check=list(HealthCheck))


@contextmanager
def alarm(seconds: int):
    """A hang is a failure: SIGALRM after `seconds`."""
    def boom(signum, frame):
        raise TimeoutError(f"no outcome within {seconds} s")
    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def one_line(e: BaseException) -> None:
    text = str(e)
    assert text and "\n" not in text, repr(text)
    assert "Traceback" not in text


def outcome(text: str, *, run_dir: Path | None = None):
    """Resolve YAML text; the result, or a one-line error. With `run_dir`, also run it when
    the budget allows a tiny run."""
    with alarm(20):
        try:
            exp = config.resolve(text)
        except config.ConfigErrors as errs:
            assert errs.errors
            for e in errs.errors:
                one_line(e)
            return None
        except config.ConfigError as e:
            one_line(e)
            return None
        est = budget.estimate(exp)
        assert math.isfinite(est.memory_bytes) and est.memory_bytes > 0
        if run_dir is not None and est.events < 300_000 and not any(
                f.get("command") for f in exp["flows"]):
            try:
                res = ccbench.run(exp, run_dir, memory_budget=512 * 2**20, reload=False)
            except budget.BudgetError as e:
                one_line(e)
                return exp
            assert res.meta["tables"]["flowstats"]["rows"] == len(exp["flows"])
        return exp


# -- values: valid-looking, boundary and hostile, as YAML would carry them ------------------

NASTY = st.sampled_from([0, -1, 1e300, -1e300, float("inf"), float("nan"), True, None, "",
                         "x" * 200, "0", "1e20", "-0ms", "NaN", "inf", [], {}, [1, 2],
                         {"a": 1}, "\u202e", "10 ms", "1e-30s", 2**64, -(2**63)])
RATES = st.sampled_from(["100Mbit", "1Gbit", "10Mbit", "1Mbit", 50, 0, "1Tbit", "0.001Mbit",
                         "12.5Mbps", "100 Mbit", "fast"])
TIMES = st.sampled_from(["10ms", "1ms", "0ms", "100us", "2s", 5, 0, "1ns", "1h", "-5ms",
                         "10 lightyears"])
QUEUES = st.one_of(
    st.sampled_from([100, 1000, 0, 1, "1bdp", "0.5bdp", "100KB", "10B", "unlimited", -5]),
    st.fixed_dictionaries({"type": st.sampled_from(
        ["droptail", "codel", "fq_codel", "pie", "fq_pie", "red", "drophead", "bogus"])},
        optional={"limit": st.sampled_from([100, 0, "1bdp", 10**9]),
                  "target": TIMES, "interval": TIMES, "tupdate": TIMES,
                  "ecn-threshold": st.sampled_from([10, 100, 5000, 0]),
                  "ecn": st.booleans(), "min": st.sampled_from([10, 50, 200]),
                  "max": st.sampled_from([20, 100, 300])}))


def val(good):
    return st.one_of(good, good, good, NASTY)


LINK = st.fixed_dictionaries({}, optional={
    "rate": val(RATES), "delay": val(TIMES), "queue": val(QUEUES),
    "loss": val(st.sampled_from([0.0, 0.01, 0.5, 1.0, "1%", "100%", 2.0,
                                 {"gilbert": {"p": 0.01, "r": 0.0}}])),
    "jitter": val(TIMES)})
GROUP = st.fixed_dictionaries(
    {"scheme": st.one_of(st.sampled_from(SCHEMES), st.sampled_from(["udp", "cubicc", "", 5]))},
    optional={"flows": val(st.integers(1, 3)), "direction": val(st.sampled_from(["->", "<-"])),
              "start": val(st.sampled_from([0, 0.1, 0.5, 0.9, 2])),
              "stop": val(st.sampled_from([0.2, 0.5, 1, 3])),
              "left-rate": val(RATES), "right-rate": val(RATES), "left-delay": val(TIMES),
              "right-queue": val(QUEUES), "rate": val(RATES),
              "rwnd": val(st.sampled_from(["64KB", "1B", 1448, "1MB"])),
              "bytes": val(st.sampled_from(["100KB", 0, "1GB"])),
              "params": val(st.sampled_from([{}, {"alpha": 10, "beta": 2}, {"beta": 0.1},
                                             {"nope": 1}])),
              "tcp": val(st.fixed_dictionaries({}, optional={
                  "min-rto": val(TIMES), "init-cwnd": val(st.sampled_from([0, 1, 10, 10**6])),
                  "initial-rto": val(TIMES)})),
              "arrivals": val(st.fixed_dictionaries({
                  "rate": st.sampled_from(["5/s", "1000000000/s", 0, "x"]),
                  "size": st.sampled_from([{"fixed": "10KB"}, {"pareto": {"mean": "50KB",
                                                                          "shape": 1.2}}])}))})
EXPERIMENT = st.fixed_dictionaries(
    {"duration": val(st.sampled_from([0.3, 0.5, 1, 0.05]))},
    optional={"seed": val(st.integers(0, 2**32)), "flows": val(st.lists(GROUP, max_size=3)),
              "central": val(LINK),
              "sample-interval": val(st.sampled_from(["10ms", "1ns", "1s", "100ms"])),
              "mss": val(st.sampled_from([1448, 536, 1, 9000, 100000])),
              "tcp": val(st.fixed_dictionaries({}, optional={"min-rto": val(TIMES),
                                                            "rwnd": val(st.sampled_from(
                                                                ["1MB", "1B", 0]))})),
              "packets": val(st.booleans()),
              "unknown-key": st.just(1)})


def as_yaml(doc, data) -> str:
    """The document as YAML text, sometimes damaged the way files get damaged."""
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    how = data.draw(st.sampled_from(["as is"] * 6 + ["truncate", "tab", "dup key", "flip"]))
    if how == "truncate":
        return text[: data.draw(st.integers(0, len(text)))]
    if how == "tab":
        return text.replace("  ", "\t", 1)
    if how == "dup key":
        return text + "duration: 1\n"
    if how == "flip":
        i = data.draw(st.integers(0, max(len(text) - 1, 0)))
        return text[:i] + data.draw(st.sampled_from(["{", "]", ":", "&a", "*a", "!!python/object:os.system", "'"])) + text[i + 1:]
    return text


@settings(max_examples=int(9100 * SCALE), **COMMON)
@given(EXPERIMENT, st.data())
def test_fuzz_experiment_files_validate(doc, data):
    outcome(as_yaml(doc, data))


@settings(max_examples=int(150 * SCALE), **COMMON)
@given(EXPERIMENT, st.data())
def test_fuzz_experiment_files_run_tiny(tmp_path_factory, doc, data):
    outcome(as_yaml(doc, data), run_dir=tmp_path_factory.mktemp("fz") / "r")


LINE = st.one_of(
    st.tuples(st.sampled_from(["0", "0.5", "1", "1e20", "nan", "-1", "inf", "x", "1e-9"]),
              st.sampled_from(["10", "100Mbit", "5ms", "0", "-3", "nan", "abc", ""])).map(
        lambda t: " ".join(t).strip()),
    st.sampled_from(["", "# comment", "1 2 3", "root:x:0:0:root:/root:/bin/bash", "\t"]),
    st.text(max_size=20))
MAHI = st.one_of(st.integers(0, 5000).map(str), st.sampled_from(["-1", "x", "1.5", "",
                                                                 "99999999999999999999"]))


@settings(max_examples=int(800 * SCALE), **COMMON)
@given(st.sampled_from(["rate-series", "delay-series", "mahimahi"]),
       st.lists(LINE, max_size=8), st.lists(MAHI, max_size=8), st.binary(max_size=8))
def test_fuzz_trace_and_series_files(tmp_path_factory, kind, lines, mahi, junk):
    d = tmp_path_factory.mktemp("tr")
    f = d / "t.trace"
    body = ("\n".join(mahi if kind == "mahimahi" else lines)).encode("utf-8", "replace")
    f.write_bytes(body + junk)
    if kind == "rate-series":
        central = {"trace": {"series": str(f)}, "delay": "10ms"}
    elif kind == "delay-series":
        central = {"rate": "100Mbit", "delay": {"series": str(f)}}
    else:
        central = {"trace": str(f), "delay": "10ms"}
    text = yaml.safe_dump({"duration": 0.5, "central": central, "flows": [{"scheme": "cubic"}]})
    outcome(text)
    # file content never appears in an error (a trace path may name any file)
    try:
        config.resolve(text)
    except config.ConfigErrors as errs:
        for e in errs.errors:
            for ln in lines:
                if len(ln.strip()) >= 6 and not ln.strip().replace(".", "").isdigit():
                    assert ln.strip() not in str(e), (ln, str(e))


@pytest.mark.parametrize("case", sorted(p.name for p in CORPUS.glob("*.yaml")),
                         ids=lambda n: n)
def test_fuzz_corpus_replays(tmp_path, case):
    """Inputs that once failed: each must now give a result or one-line errors (and a
    result must fit the budget or be refused with the estimate)."""
    with alarm(20):
        try:
            exp = config.load(CORPUS / case)
        except config.ConfigErrors as errs:
            for e in errs.errors:
                one_line(e)
            return
        try:
            ccbench.run(exp, tmp_path / "r", memory_budget=512 * 2**20, reload=False)
        except budget.BudgetError as e:
            one_line(e)


def test_parse_yaml_guard_is_total():
    """The YAML guard itself on a few pathological texts."""
    for text in ["[" * 100 + "]" * 100, "a: !!binary x", "? [a]\n: 1", "%YAML 9.9\n---\n",
                 "a: &x 1\nb: *y", "\ufeffduration: 1", "---\n...\n---\n"]:
        with alarm(10):
            try:
                parse_yaml(text)
            except config.ConfigErrors as errs:
                for e in errs.errors:
                    one_line(e)
