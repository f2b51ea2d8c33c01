"""Silent nonsense (issue 11, class 4): settings that used to run with exit 0 and give a
meaningless result are errors (or warnings) naming the field and why; no Rust panic is
reachable from YAML; trace files never have their content quoted in errors."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from ccbench import config
from ccbench.config.semantic import ConfigWarning, seed_note

ROOT = Path(__file__).resolve().parents[1]
C = {"rate": "100Mbit", "delay": "10ms"}


def doc(flows=None, central=None, **top):
    return {"duration": 5, "central": {**C, **(central or {})},
            "flows": flows or [{"scheme": "cubic"}], **top}


# (name, document, the field the error names, a phrase of the reason)
ERRORS = [
    ("queue 0", doc(central={"queue": 0}), "central.queue", "drops every packet"),
    ("byte queue below a packet", doc(central={"queue": "100B"}), "central.queue",
     "drops every packet"),
    ("side queue 0", doc(flows=[{"scheme": "cubic", "left-queue": 0, "left-rate": "1Gbit"}]),
     "flows[0].left-queue",
     "drops every packet"),
    ("rwnd 1 byte", doc(flows=[{"scheme": "cubic", "rwnd": "1B"}]), "flows[0].tcp.rwnd",
     "smaller than one segment"),
    ("top-level rwnd", doc(tcp={"rwnd": "100B"}), "tcp.rwnd", "smaller than one segment"),
    ("delay longer than the run", doc(central={"delay": "10s"}), "central.delay",
     "not shorter than the run"),
    ("RTT longer than the flow", doc(flows=[{"scheme": "cubic", "start": 4.9}],
                                    central={"delay": "100ms"}), "flows[0]",
     "not one packet can be acknowledged"),
    ("100 % loss", doc(central={"loss": 1.0}), "central.loss", "drops every packet"),
    ("100 % side loss", doc(flows=[{"scheme": "cubic", "right-loss": "100%"}]),
     "flows[0].right-loss", "drops every packet"),
    ("Vegas alpha > beta", doc(flows=[{"scheme": "vegas", "params": {"alpha": 10, "beta": 2}}]),
     "flows[0].params.alpha", "above beta"),
    ("Vegas alpha > default beta", doc(flows=[{"scheme": "vegas", "params": {"alpha": 6}}]),
     "flows[0].params.alpha", "beta (4, the default)"),
    ("ECN threshold above the limit",
     doc(central={"queue": {"limit": 100, "ecn-threshold": 500}}, flows=[{"scheme": "dctcp"}]),
     "central.queue.ecn-threshold", "drops before it would ever mark"),
    ("ECN threshold at the limit",
     doc(central={"queue": {"limit": 100, "ecn-threshold": 100}}, flows=[{"scheme": "dctcp"}]),
     "central.queue.ecn-threshold", "drops before it would ever mark"),
    ("CoDel target 0", doc(central={"queue": {"type": "codel", "target": 0}}),
     "central.queue.target", "every packet late"),
    ("CoDel interval 0", doc(central={"queue": {"type": "codel", "interval": 0}}),
     "central.queue.interval", "every packet late"),
    ("FQ-CoDel target 0", doc(central={"queue": {"type": "fq_codel", "target": 0}}),
     "central.queue.target", "every packet late"),
    ("PIE tupdate 0", doc(central={"queue": {"type": "pie", "tupdate": 0}}),
     "central.queue.tupdate", "never updates"),
    ("FQ-PIE tupdate 0", doc(central={"queue": {"type": "fq_pie", "tupdate": 0}}),
     "central.queue.tupdate", "never updates"),
    ("PIE target 0", doc(central={"queue": {"type": "pie", "target": 0}}),
     "central.queue.target", "drop probability to 1"),
    ("sample interval longer than the run", doc(**{"sample-interval": "10s"}),
     "sample-interval", "not shorter than the run"),
    ("sample interval equal to the run", doc(**{"sample-interval": "5s"}),
     "sample-interval", "not shorter than the run"),
    ("Gilbert stuck in the bad state", doc(central={"loss": {"gilbert": {"p": 0.1, "r": 0}}}),
     "central.loss.gilbert.r", "never leaves the bad state"),
    ("a packet takes longer than the run to send", doc(central={"rate": "1kbit"}),
     "central.rate", "nothing crosses the link"),
    ("slow side link", doc(flows=[{"scheme": "cubic", "right-rate": "2kbit"}]),
     "flows[0].right-rate", "nothing crosses the link"),
    ("rate series 0 for the whole run",
     {"duration": 5, "central": {"delay": "10ms", "trace": {"series": str(
         ROOT / "tests" / "data" / "zero-rate.series")}}, "flows": [{"scheme": "cubic"}]},
     "central.trace", "0 for the whole run"),
    ("jitter longer than the run", doc(central={"jitter": "5s"}), "central.jitter",
     "held past the end"),
    ("uniform jitter longer than the run",
     doc(central={"jitter": {"dist": "uniform", "max": "6s"}}), "central.jitter",
     "held past the end"),
    ("promotion longer than the run",
     doc(central={"promotion": {"delay": "8s", "idle": "1s"}}), "central.promotion.delay",
     "waits past the end"),
    ("histogram bucket longer than the run", doc(**{"hist-bucket": "5s"}), "hist-bucket",
     "first bucket"),
    ("UDP rate 0", doc(flows=[{"scheme": "udp", "rate": 0}]), "flows[0].rate",
     "no rate to send at"),
    ("min-rto above 120 s", doc(tcp={"min-rto": "200s"}), "tcp.min-rto", "TCP_RTO_MAX"),
    ("initial-rto above 120 s", doc(tcp={"initial-rto": "121s"}), "tcp.initial-rto",
     "TCP_RTO_MAX"),
    ("group min-rto above 120 s", doc(flows=[{"scheme": "cubic", "tcp": {"min-rto": "1000s"}}]),
     "flows[0].tcp.min-rto", "TCP_RTO_MAX"),
]


@pytest.mark.parametrize("name,d,field,why", ERRORS, ids=[e[0] for e in ERRORS])
def test_meaningless_settings_are_errors_naming_the_field(name, d, field, why):
    with pytest.raises(config.ConfigErrors) as ei:
        config.resolve(d)
    errs = ei.value.errors
    assert any(e.path == field and why in e.message for e in errs), [str(e) for e in errs]


WARNINGS = [
    ("flow shorter than four RTTs", doc(flows=[{"scheme": "cubic", "start": 4.95}]),
     "flows[0]", "under four base RTTs"),
    ("loss above 50 %", doc(central={"loss": 0.6}), "central.loss", "almost nothing"),
    ("CoDel target >= interval",
     doc(central={"queue": {"type": "codel", "target": "100ms", "interval": "50ms"}}),
     "central.queue.target", "rarely act"),
    ("UDP far above the path", doc(flows=[{"scheme": "udp", "rate": "10Gbit"}]),
     "flows[0].rate", "dropped at the first queue"),
    # 1500-byte packets + 18 framing: 60.7 us on the wire, 98.06 ms of channel each
    ("half-duplex channel with a long delay",
     doc(central={"rate": "200Mbit", "delay": "98ms", "duplex": "half", "overhead": 18}),
     "central.duplex", "at most 10.2 frames per second"),
]


@pytest.mark.parametrize("name,d,field,why", WARNINGS, ids=[w[0] for w in WARNINGS])
def test_doubtful_settings_warn_naming_the_field(name, d, field, why):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        config.resolve(d)
    msgs = [str(w.message) for w in got if issubclass(w.category, ConfigWarning)]
    assert any(f"{field}: " in m and why in m for m in msgs), msgs


def test_sensible_settings_give_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)
        config.load(ROOT / "examples" / "quickstart.yaml")
        config.resolve(doc(central={"queue": {"type": "codel"}}))
        config.resolve(doc(central={"queue": {"limit": 100, "ecn-threshold": 20}},
                           flows=[{"scheme": "dctcp"}]))
        # a trace's mean rate may be tiny while a burst still carries packets
        config.resolve({"duration": 5, "central": {"delay": "10ms", "trace": {"series": str(
            ROOT / "tests" / "data" / "burst-rate.series")}}, "flows": [{"scheme": "cubic"}]})
        # just below each new bound: 1500-byte packet in 4.8 s, jitter/promotion under the run
        config.resolve(doc(central={"rate": "2.5kbit", "jitter": "4s",
                                    "promotion": {"delay": "2s", "idle": "1s"}},
                           **{"hist-bucket": "1s"}))


def test_min_rto_120s_is_accepted_and_runs_without_panic(tmp_path):
    """120 s is the ceiling itself (allowed); above it used to be a Rust panic."""
    import ccbench
    exp = config.resolve(doc(tcp={"min-rto": "120s"}, duration=1))
    ccbench.run(exp, tmp_path / "r")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    f = tmp_path / "bad.yaml"
    f.write_text("duration: 1\ntcp: {min-rto: 200s}\nflows: [{scheme: cubic}]\n")
    r = subprocess.run([sys.executable, "-m", "ccbench", "run", f, "-o", tmp_path / "o"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "panicked" not in r.stderr and "tcp.min-rto" in r.stderr


def test_cli_prints_warnings_as_one_line(tmp_path):
    f = tmp_path / "w.yaml"
    f.write_text("duration: 5\ncentral: {rate: 100Mbit, delay: 10ms, loss: 0.6}\n"
                 "flows: [{scheme: cubic}]\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", f], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0
    assert r.stderr.startswith(f"warning: {f}:2: central.loss: a loss rate of 60%"), r.stderr


@pytest.mark.parametrize("content,phrase", [
    (b"0 10\n1e20 20\n", "line 2: the time must be a finite number"),
    (b"0 10\nnan 20\n", "line 2: the time must be a finite number"),
    (b"root:x:0:0:root:/root:/bin/bash\n", "line 1: expected 't_seconds value', found 1 fields"),
    (b"secret password\n", "line 1: the first field is not a time"),
    (b"0 hunter2\n", "entry 1: the second field is not a rate"),
    (b"0 10\n\xff\xfe\n", "line 2: not UTF-8 text"),
])
def test_trace_errors_never_quote_the_file(tmp_path, content, phrase):
    t = tmp_path / "t.series"
    t.write_bytes(content)
    with pytest.raises(config.ConfigErrors) as ei:
        config.resolve(doc(central={"rate": None, "trace": {"series": str(t)}}))
    msg = str(ei.value.errors[0])
    assert phrase in msg, msg
    for secret in ("root:x", "secret", "password", "hunter2", "codec"):
        assert secret not in msg


def test_trace_path_that_is_a_directory(tmp_path):
    with pytest.raises(config.ConfigErrors, match="is a directory, not a rate series"):
        config.resolve(doc(central={"rate": None, "trace": {"series": str(tmp_path)}}))


def test_seed_note_only_without_randomness():
    exact = {"host": {"noise": "exact"}}
    det = config.resolve(doc(**exact))
    assert "nothing in this experiment is random" in seed_note(det)
    # the default host timing noise is drawn from the seed: no note
    assert seed_note(config.resolve(doc())) is None
    for d in (doc(central={"loss": 0.01}, **exact), doc(flows=[{"scheme": "bbr"}], **exact),
              doc(central={"queue": {"type": "red"}}, **exact),
              doc(central={"jitter": "1ms"}, **exact),
              doc(central={"duplex": "half"}, **exact)):
        assert seed_note(config.resolve(d)) is None


def test_campaign_repeats_without_randomness_are_noted(tmp_path):
    from ccbench import campaign
    base = ("duration: 0.5\ncentral: {rate: 10Mbit, delay: 5ms, queue: 50}\n"
            "flows: [{scheme: cubic}]\nsweep:\n  axes:\n"
            "    r: {path: central.rate, values: [10Mbit, 20Mbit]}\n")
    cases = {"exact": ("host: {noise: exact}\n", "  repeats: 3\n", True),
             "noise": ("", "  repeats: 3\n", False),
             "one repeat": ("host: {noise: exact}\n", "  repeats: 1\n", False)}
    for name, (host, reps, noted) in cases.items():
        f = tmp_path / f"{name.replace(' ', '_')}.yaml"
        f.write_text(host + base + reps)
        note = campaign.plan(f).seed_note()
        assert (note is not None) == noted, name
        if noted:
            assert "every point" in note and "identical results" in note
    # printed by `ccbench sweep` and kept in campaign.json for the report
    f = tmp_path / "exact.yaml"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([sys.executable, "-m", "ccbench", "sweep", f, "-o", tmp_path / "c",
                        "-j", "1", "--quiet", "--no-report"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert "note: repeats: every point" in r.stderr
    import json
    assert "identical results" in json.loads((tmp_path / "c" / "campaign.json").read_text()
                                              )["plan"]["seed_note"]


def test_run_with_a_seed_notes_when_the_seed_does_nothing(tmp_path):
    f = tmp_path / "det.yaml"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    for host, noted in (("host: {noise: exact}\n", True), ("", False)):
        f.write_text(host + "duration: 0.5\nflows: [{scheme: cubic}]\n")
        r = subprocess.run([sys.executable, "-m", "ccbench", "run", f, "--seed", "7", "-o",
                            tmp_path / "o", "--no-plots", "--quiet"], capture_output=True,
                           text=True, env=env)
        assert r.returncode == 0, r.stderr
        assert ("note: seed: nothing in this experiment is random" in r.stderr) == noted


@pytest.mark.parametrize("params,msg", [
    ("{beta: 2000}", "flows[1].params.beta: must be in [1, 1023], got 2000"),
    ("{beta: 1.5}", "flows[1].params.beta: must be an integer, got 1.5"),
])
def test_validate_refuses_core_parameter_ranges_as_run_does(tmp_path, params, msg):
    # the ranges live in the simulator's registry (crates/sim/src/cc/cubic.rs); `validate`
    # used to say OK to a file that `run` then refused
    pytest.importorskip("ccbench._core")
    f = tmp_path / "p.yaml"
    f.write_text("duration: 2\ncentral: {rate: 10Mbit, delay: 10ms}\n"
                 f"flows: [{{scheme: reno}}, {{scheme: cubic, params: {params}}}]\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", f], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 1 and msg in r.stderr, r.stderr
    f.write_text(f.read_text().replace(params, "{beta: 700}"))
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", f], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
