"""Files from elsewhere are data (issue: no code runs and no file is written that the user did
not ask for): node names cannot steer a capture out of its folder, errors never quote a file
that is not an experiment, a CDF path naming something huge or special is refused unread."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ccbench import config

PARKING = """duration: 0.5
topology:
  links:
    - {{from: {a}, to: r2, rate: 10Mbit, delay: 5ms, queue: 1bdp}}
    - {{from: s0, to: {a}, rate: 1Gbit, delay: 1ms}}
    - {{from: r2, to: d0, rate: 1Gbit, delay: 1ms}}
flows:
  - {{scheme: cubic, src: s0, dst: d0}}
"""


@pytest.mark.parametrize("name", ["../evil", "/tmp/evil", "a/b", ".hidden", "x" * 64,
                                  "r\u00e9", "a b", "\"a\\u0000b\""])
def test_a_node_name_that_is_not_a_plain_file_name_is_refused_with_the_rule(name, tmp_path):
    f = tmp_path / "e.yaml"
    f.write_text(PARKING.format(a=name if name.startswith('"') else f"'{name}'"))
    with pytest.raises(config.ConfigErrors) as ei:
        config.load(f)
    assert "node names become file names" in str(ei.value), str(ei.value)


def test_run_pcap_writes_every_capture_inside_the_folder(tmp_path):
    f = tmp_path / "e.yaml"
    f.write_text(PARKING.format(a="r1.core-A_2"))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "ccbench", "run", str(f), "-o", str(out),
                        "--pcap"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    caps = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.pcapng"))
    assert caps == ["pcap/d0.pcapng", "pcap/r1.core-A_2-r2.pcapng", "pcap/r2-r1.core-A_2.pcapng",
                    "pcap/s0.pcapng"], caps


def test_errors_do_not_quote_a_file_that_is_not_an_experiment(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:TOPSECRET:/root:/bin/bash\nsecond line TOPSECRET\n")
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", str(secret)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "top level is a text" in r.stdout + r.stderr
    assert "TOPSECRET" not in r.stdout + r.stderr
    exp = tmp_path / "e.yaml"
    exp.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                   f"flows: [{{scheme: cubic, arrivals: {{rate: 10, size: {{cdf: {secret}}}}}}}]\n")
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", str(exp)],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "column 1 is not a number" in r.stdout + r.stderr
    assert "TOPSECRET" not in r.stdout + r.stderr


@pytest.mark.parametrize("target", ["/dev/zero", "/proc/self"])
def test_a_cdf_path_naming_no_regular_file_is_refused_unread(target, tmp_path):
    exp = tmp_path / "e.yaml"
    exp.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                   f"flows: [{{scheme: cubic, arrivals: {{rate: 10, size: {{cdf: {target}}}}}}}]\n")
    with pytest.raises(config.ConfigErrors, match="is not a regular file"):
        config.load(exp)


def test_a_cdf_file_larger_than_the_limit_is_refused(tmp_path, monkeypatch):
    from ccbench.config import workloads
    monkeypatch.setattr(workloads, "MAX_CDF_BYTES", 64)
    big = tmp_path / "big.cdf"
    big.write_text("1000 0.5\n" * 20 + "2000 1\n")
    exp = tmp_path / "e.yaml"
    exp.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                   f"flows: [{{scheme: cubic, arrivals: {{rate: 10, size: {{cdf: {big}}}}}}}]\n")
    with pytest.raises(config.ConfigErrors, match="larger than"):
        config.load(exp)


BASE = {"duration": 1, "central": {"rate": "10Mbit", "delay": "5ms"}, "flows": [{"scheme": "cubic"}]}


@pytest.mark.parametrize("sweep, fragment", [
    ({"axes": {"r": {"path": "central.rate", "from": 1, "to": 10, "num": 10**12, "unit": "Mbit"}}},
     "1,000,000,000,000 values"),
    ({"axes": {"r": {"path": "central.rate", "from": 1, "to": 10, "step": 1e-12, "unit": "Mbit"}}},
     "values, more than"),
    ({"axes": {"r": {"path": "central.rate", "from": 1, "to": 1e308, "step": 1e-308,
                     "unit": "Mbit"}}}, "inf values"),
])
def test_a_campaign_range_is_counted_before_any_value_is_built(sweep, fragment):
    import time

    from ccbench.campaign import parse_campaign
    t0 = time.process_time()
    with pytest.raises(config.ConfigErrors, match=fragment):
        parse_campaign({**BASE, "sweep": sweep})
    assert time.process_time() - t0 < 1.0


@pytest.mark.parametrize("repeats, fragment", [(10**30, "more runs than a campaign may have"),
                                               (600_000, "expands to 1,200,000 runs")])
def test_top_level_repeats_are_held_to_the_run_limit(repeats, fragment):
    from ccbench.campaign import parse_campaign
    with pytest.raises(config.ConfigErrors, match=fragment):
        parse_campaign({**BASE, "repeats": repeats,
                        "sweep": {"axes": {"x": {"path": "seed", "values": [1, 2]}}}})


@pytest.mark.parametrize("text, fragment", [
    ("+".join(["1"] * 200_000), "at most 2,000"), ("-" * 100_000 + "1", "at most 2,000"),
    ("-" * 70 + "1", "nests too deeply"), ("[1] * 10**9", "more than 10,000 items"),
    ("[0] * 10**9", "more than 10,000 items"), ("round(7, -10**9)", "within ±400"),
])
def test_derived_expressions_are_bounded_before_they_cost(text, fragment):
    import time

    from ccbench.campaign.expr import ExprError, evaluate
    t0 = time.process_time()
    with pytest.raises(ExprError, match=fragment):
        evaluate(text, {})
    assert time.process_time() - t0 < 1.0
    assert evaluate("round(3.14159, 2) + len_ok", {"len_ok": 1}) == pytest.approx(4.14)


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    from simhelp import pcap_folder
    return pcap_folder(tmp_path_factory.mktemp("cap"), 1)


@pytest.mark.parametrize("interval, fragment", [
    ("inf", "must be a number of seconds"), ("nan", "must be a number of seconds"),
    ("1e-9", "must be a number of seconds")])
def test_import_refuses_a_sample_interval_it_cannot_afford_before_allocating(
        capture, tmp_path, interval, fragment):
    r = subprocess.run([sys.executable, "-m", "ccbench", "import", "pcap", str(capture), "-o",
                        str(tmp_path / "imp"), "--sample-interval", interval],
                       capture_output=True, text=True)
    assert r.returncode != 0 and fragment in r.stdout + r.stderr, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "imp" / "metadata.json").exists()


def test_a_mappings_inline_experiment_is_checked_before_use(capture, tmp_path):
    from ccbench.capture.export import CaptureError
    from ccbench.capture.importer import import_pcap
    base = {"flows": [{"sender": "10.0.0.1", "receiver": "10.0.1.1"}]}
    for exp, fragment in (({"duration": 1}, "mapping: experiment"),
                          ({"links": [], "flows": [{"id": 3}]}, "flows[0].id must be 0"),
                          ({"links": [], "flows": [{"id": 0, "bytes": -1}]}, "bytes must be")):
        with pytest.raises(CaptureError) as ei:
            import_pcap(capture, tmp_path / "o", mapping={**base, "experiment": exp})
        assert fragment in str(ei.value)


def test_import_budgets_the_flows_table_over_the_captures_span(capture, tmp_path, monkeypatch):
    from ccbench.capture import importer
    monkeypatch.setattr(importer, "MAX_SAMPLE_ROWS", 50)
    with pytest.raises(importer.CaptureError, match="rows \\(at most 50\\)"):
        importer.import_pcap(capture, tmp_path / "o", sample_interval=0.01)
    assert not (tmp_path / "o" / "metadata.json").exists()


def test_a_coco_metadata_null_or_text_number_is_named(tmp_path):
    import json

    from ccbench.capture.export import CaptureError
    from ccbench.capture.importer import coco_experiment
    meta = {"sorted-layout": [{"scheme": "cubic", "flows": 1, "direction": "->",
                               "start": 0, "left-delay": 0, "right-delay": 0}], "_all-flows": 1,
            "_max-delay": None, "_runtime": 5}
    (tmp_path / "metadata.json").write_text(json.dumps(meta))
    assert len(coco_experiment(tmp_path)["flows"]) == 1      # null: the default
    (tmp_path / "metadata.json").write_text(json.dumps({**meta, "_rate": "fast"}))
    with pytest.raises(CaptureError, match="_rate is not a number"):
        coco_experiment(tmp_path)


@pytest.mark.parametrize("entry, fragment", [
    ({"metric": "convergence", "min": 0, "threshold": [0.9]}, "threshold: [0.9] is not a Jain"),
    ({"metric": "convergence", "min": 0, "threshold": 2}, "is not a Jain's index in (0, 1]"),
    ({"metric": "jain", "min": float("nan")}, "NaN is no bound"),
])
def test_run_expectations_refuse_what_cannot_be_a_bound(entry, fragment):
    from ccbench import expect
    with pytest.raises(expect.ExpectError) as ei:
        expect.parse([entry])
    assert fragment in str(ei.value)


def test_an_infinite_bound_bounds_nothing_in_run_and_campaign_expectations():
    from ccbench import expect
    from ccbench.campaign import parse_campaign
    (n,) = expect.parse([{"metric": "jain", "min": 0.5, "max": float("inf")}])
    assert n["min"] == 0.5 and "max" not in n
    camp = {**BASE, "sweep": {"axes": {"x": {"path": "seed", "values": [1, 2]}}},
            "expect": [{"metric": "throughput", "max": float("inf")}]}
    c = parse_campaign(camp)
    assert "max" not in c.expect[0]
    with pytest.raises(config.ConfigErrors, match="NaN is no bound"):
        parse_campaign({**camp, "expect": [{"metric": "throughput", "min": float("nan")}]})


@pytest.mark.parametrize("doc, where, fragment", [
    ({"flows": [{"scheme": "cubic", "bytes": 2**64 - 1}]}, "flows[0].bytes", "at most 1 PiB"),
    ({"mss": 1, "flows": [{"scheme": "cubic"}]}, "mss", "must be >= 88"),
    ({"tcp": {"delayed-ack-timeout": "1000000s"}, "flows": [{"scheme": "cubic"}]},
     "tcp.delayed-ack-timeout", "above 10 s"),
    ({"central": {"rate": "10Mbit", "delay": "5ms", "jitter": {"dist": "normal",
                                                               "sd": "1000000000s"}},
      "flows": [{"scheme": "cubic"}]}, "central.jitter.sd", "above 100 s"),
    ({"central": {"rate": "10Mbit", "delay": {"sine": {"mean": "5ms", "amplitude": "50ms",
                                                       "period": "1s"}}},
      "flows": [{"scheme": "cubic"}]}, "central.delay.sine.amplitude", "below 0"),
    ({"central": {"rate": "10Mbit", "delay": "5ms",
                  "queue": {"type": "fq_pie", "limit": 100, "memory-limit": 1}},
      "flows": [{"scheme": "cubic"}]}, "central.queue.memory-limit", "less than one full-sized packet"),
])
def test_absurd_values_are_errors_naming_the_field(doc, where, fragment):
    with pytest.raises(config.ConfigErrors) as ei:
        config.resolve({**BASE, **doc})
    assert where in str(ei.value) and fragment in str(ei.value), str(ei.value)


def test_an_expectation_window_past_the_runs_end_and_a_campaign_given_to_run(tmp_path):
    f = tmp_path / "e.yaml"
    f.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\nflows: [{scheme: cubic}]\n"
                 "expect: [{metric: jain, after: 100s, min: 0.9}]\n")
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", str(f)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "past the run's end (1 s)" in r.stdout + r.stderr
    (tmp_path / "c.yaml").write_text("base: e.yaml\nsweep: {axes: {x: {path: seed, values: "
                                     "[1, 2]}}}\n")
    r = subprocess.run([sys.executable, "-m", "ccbench", "run", str(tmp_path / "c.yaml"), "-o",
                        str(tmp_path / "o")], capture_output=True, text=True)
    err = r.stdout + r.stderr
    assert r.returncode != 0 and "ccbench sweep FILE" in err and "duration" not in err, err


def test_on_off_toggles_count_in_the_run_budget_and_a_sub_microsecond_cycle_is_refused():
    from ccbench import budget
    doc = {**BASE, "flows": [{"scheme": "cubic", "onoff": {"on": "1us", "off": "1us"}}]}
    est = budget.estimate(config.resolve(doc))
    assert est.toggles == pytest.approx(1e6, rel=0.01) and est.events >= est.toggles
    with pytest.raises(config.ConfigErrors, match="shorter than 1 us"):
        config.resolve({**BASE, "flows": [{"scheme": "cubic", "onoff": {"on": "1ns",
                                                                       "off": "1ns"}}]})


def test_ctrl_c_inside_a_python_hook_is_an_interrupted_run_not_a_scheme_error(tmp_path):
    (tmp_path / "stop.py").write_text(
        "from ccbench.cc import Scheme\n"
        "class Stop(Scheme):\n"
        "    def cong_avoid(self, sk, acked):\n"
        "        raise KeyboardInterrupt\n")
    f = tmp_path / "e.yaml"
    f.write_text("duration: 2\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                 "flows: [{scheme: {python: stop.py:Stop}}]\n")
    r = subprocess.run([sys.executable, "-m", "ccbench", "run", str(f), "-o",
                        str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert "SchemeError" not in r.stderr and "Traceback" not in r.stderr
