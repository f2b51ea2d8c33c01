"""CoCo-Beholder layout files and run.py arguments -> resolved experiment."""

import pathlib
import textwrap

import pytest
import yaml

import ccbench.config as cfg
from ccbench.config import ConfigErrors

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCHEMES = [{"name": n, "params": []} for n in ("cubic", "reno", "vegas", "bbr")]

# the layout.yml CoCo-Beholder's layout.py writes when none exists, verbatim (unquoted arrows)
DEFAULT_LAYOUT = """\
- direction: <-
  flows: 1
  scheme: cubic
  start: 0
- direction: ->
  flows: 2
  left-delay: 0us
  left-queues: 2000
  left-rate: 100.0
  right-delay: 5ms
  right-queues: 3000
  right-rate: 100
  scheme: vegas
  start: 5
- direction: ->
  flows: 1
  scheme: cubic
  start: 0
"""


def coco(layout, **kw):
    kw.setdefault("schemes", SCHEMES)
    if isinstance(layout, str):
        layout = yaml.safe_load(textwrap.dedent(layout))
    return cfg.resolve_coco(layout, **kw)


def coco_errors(layout, **kw):
    with pytest.raises(ConfigErrors) as e:
        coco(layout, **kw)
    return e.value.errors


def one(layout, **kw):
    errs = coco_errors(layout, **kw)
    assert len(errs) == 1, [str(e) for e in errs]
    return errs[0]


def link(r, name):
    return next(l for l in r["links"] if l["name"] == name)


G = {"scheme": "cubic", "flows": 1, "start": 0, "direction": "->"}


def test_default_layout_parses_and_sorts(tmp_path):
    p = tmp_path / "layout.yml"
    p.write_text(DEFAULT_LAYOUT)
    assert cfg.is_coco_layout(yaml.safe_load(DEFAULT_LAYOUT))
    r = cfg.load_coco(p, base="10ms", delta="100s", step="0ms", schemes=SCHEMES)
    assert r["duration_ns"] == 30 * 10**9 and r["seed"] == 1
    # sorted by start, stable: cubic <- (file 0), cubic -> (file 2), vegas x2 (file 1)
    assert [(f["label"], f["group"], f["start_ns"]) for f in r["flows"]] == [
        ("Flow 1: cubic <-", 0, 0), ("Flow 2: cubic ->", 1, 0),
        ("Flow 3: vegas ->", 2, 5 * 10**9), ("Flow 4: vegas ->", 2, 5 * 10**9)]
    f1 = r["flows"][0]
    assert (f1["src"], f1["dst"]) == ("b1", "a1")
    # defaults: unlimited rate, zero delay, 1000-packet queues
    for name in ("a1->r1", "r1->a1", "r2->b1", "b1->r2"):
        l = link(r, name)
        assert (l["rate_bps"], l["delay_ns"], l["queue"]["packets"]) == (None, 0, 1000)
    # vegas side links
    for k in (3, 4):
        assert link(r, f"a{k}->r1")["rate_bps"] == 100_000_000
        assert link(r, f"r1->a{k}")["queue"]["packets"] == 2000
        assert link(r, f"r2->b{k}")["delay_ns"] == 5_000_000
        assert link(r, f"b{k}->r2")["queue"]["packets"] == 3000
        assert link(r, f"r2->b{k}")["rate_bps"] == 100_000_000
    c = link(r, "r1->r2")
    assert (c["rate_bps"], c["delay_ns"], c["queue"]["packets"]) == (100_000_000, 10**7, 1000)
    assert r["flows"][2]["base_rtt_ns"] == 2 * (0 + 10 + 5) * 10**6
    assert r["flows"][0]["base_rtt_ns"] == 20_000_000


@pytest.mark.parametrize("name", ["layout.yml", "rtt-fairness.yml", "cross-traffic.yml"])
def test_shipped_examples_load_unchanged(name):
    r = cfg.load_coco(ROOT / "examples" / "coco" / name, base="10ms", runtime=60,
                      schemes=SCHEMES)
    assert r["flows"]


def test_shipped_default_is_the_spec_example():
    text = (ROOT / "examples" / "coco" / "layout.yml").read_text()
    assert yaml.safe_load(text) == yaml.safe_load(DEFAULT_LAYOUT)


def test_run_py_arguments():
    r = coco([G], base="25ms", runtime=20, rate=12.5, seed=42, first_queue=50,
             second_queue=60)
    assert r["duration_ns"] == 20 * 10**9 and r["seed"] == 42
    assert link(r, "r1->r2")["rate_bps"] == 12_500_000
    assert link(r, "r1->r2")["delay_ns"] == link(r, "r2->r1")["delay_ns"] == 25_000_000
    assert link(r, "r1->r2")["queue"]["packets"] == 50    # -q1: r1's end
    assert link(r, "r2->r1")["queue"]["packets"] == 60    # -q2: r2's end
    r = coco([G], queue=7)
    assert link(r, "r1->r2")["queue"]["packets"] == link(r, "r2->r1")["queue"]["packets"] == 7
    r = coco([G], rate=0)
    assert link(r, "r1->r2")["rate_bps"] is None


def test_queue_exclusive_with_q1_q2():
    e = one([G], queue=10, first_queue=20)
    assert e.path == "--queues" and "exclusive" in e.message


def test_constant_delay_cases_accepted():
    coco([G], base="50ms", delta="100s", step="10ms")     # delta >= runtime
    coco([G], base="50ms", delta="30s", step="10ms")      # delta == runtime
    coco([G], base="50ms", delta="1s", step="0ms")        # walk of +-0
    coco([G], base="50ms", jitter="0ms")


def test_variable_delay_is_cocos_walk_and_jitter_is_netems():
    e = coco([G], base="50ms", delta="1s", step="10ms", seed=7, max_delay_us=60_000)
    lr, rl = (l for l in e["links"] if l["role"] == "central")
    walk = {"kind": "walk", "base_ns": 50_000_000, "delta_ns": 1_000_000_000,
            "step_ns": 10_000_000, "max_ns": 60_000_000, "seed": 7, "key": "r1-r2"}
    assert lr["delay_schedule"] == walk and rl["delay_schedule"] == walk
    assert "delay_skew_ns" not in rl          # atomic switching of both directions
    e = coco([G], base="50ms", jitter="1ms")
    lr, rl = (l for l in e["links"] if l["role"] == "central")
    assert lr["jitter"] == rl["jitter"] == {"dist": "netem", "jitter_ns": 1_000_000}
    assert "reorder" not in lr


def test_delta_below_10ms():
    e = one([G], delta="5ms")
    assert e.path == "delta" and "below 10ms" in e.message


def test_step_too_big():
    e = one([G], base="10ms", step="20ms", max_delay_us=25_000, delta="100s")
    assert e.path == "step" and "too big" in e.message


def test_max_delay_bounds_layout_and_base():
    e = one([{**G, "left-delay": "200ms"}], max_delay_us=100_000)
    assert e.path == "[0].left-delay" and "exceeds the maximum delay 100000us" in e.message
    e = one([G], base="1s", max_delay_us=100_000)
    assert e.path == "base"


def test_time_strings_truncate_to_us_and_no_ns():
    r = coco([{**G, "left-delay": "1.0009us", "right-delay": 2.5}])
    assert link(r, "a1->r1")["delay_ns"] == 1000          # truncated to 1 us
    assert link(r, "r2->b1")["delay_ns"] == 2_500_000     # bare number = ms
    r = coco([{**G, "left-delay": "0.5s", "right-delay": "7"}])
    assert link(r, "a1->r1")["delay_ns"] == 500_000_000
    assert link(r, "r2->b1")["delay_ns"] == 7_000_000
    e = one([{**G, "left-delay": "5ns"}])
    assert e.path == "[0].left-delay" and "not a time string" in e.message
    assert "Nus" in e.hint


def test_int_vs_float_queue_rules():
    r = coco([{**G, "left-queues": 0, "right-queues": 5}])
    assert link(r, "a1->r1")["queue"]["packets"] == 0     # accepted as in CoCo-Beholder
    e = one([{**G, "left-queues": 1000.0}])
    assert e.path == "[0].left-queues"
    assert e.message == "queue size 1000.0 is a float, not an integer"
    e = one([{**G, "right-queues": "1000"}])
    assert e.path == "[0].right-queues" and "not an integer" in e.message
    e = one([{**G, "right-queues": -1}])
    assert "negative" in e.message
    e = one([G], first_queue=1.5)
    assert e.path == "--first-queue"


def test_rates_are_float_mbit():
    r = coco([{**G, "left-rate": 12.5, "right-rate": 0}])
    assert link(r, "a1->r1")["rate_bps"] == 12_500_000
    assert link(r, "r2->b1")["rate_bps"] is None
    e = one([{**G, "left-rate": "100Mbit"}])
    assert e.path == "[0].left-rate" and "Mbit/s" in e.hint
    e = one([{**G, "left-rate": -1}])
    assert "negative rate" in e.message


def test_null_means_default():
    r = coco([{**G, "left-rate": None, "left-delay": None, "left-queues": None}])
    l = link(r, "a1->r1")
    assert (l["rate_bps"], l["delay_ns"], l["queue"]["packets"]) == (None, 0, 1000)


def test_unknown_keys_and_lenient():
    e = one([{**G, "left-queue": 10}])
    assert e.path == "[0].left-queue" and 'did you mean "left-queues"' in e.hint
    assert "lenient" in e.hint
    r = coco([{**G, "left-queue": 10, "comment": "x"}], lenient=True)
    assert link(r, "a1->r1")["queue"]["packets"] == 1000   # ignored, as CoCo-Beholder does


def test_required_and_field_rules():
    errs = coco_errors([{"flows": 1}])
    assert {e.path for e in errs} == {"[0].scheme", "[0].start", "[0].direction"}
    e = one([{**G, "direction": "right"}])             # no aliases in the CoCo path
    assert e.path == "[0].direction" and 'exactly "->" or "<-"' in e.hint
    e = one([{**G, "start": 30}])                      # > runtime - 1
    assert e.path == "[0].start" and "0 .. runtime - 1 = 29" in e.hint
    e = one([{**G, "start": 1.5}])
    assert e.path == "[0].start" and "whole seconds" in e.hint
    e = one([{**G, "flows": 0}])
    assert e.path == "[0].flows"
    e = one([{**G, "scheme": "cubik"}])
    assert e.path == "[0].scheme" and 'did you mean "cubic"' in e.hint
    e = one(["cubic"])
    assert e.path == "[0]" and "not a flow group" in e.message


def test_layout_shape_errors():
    e = one([])
    assert e.message == "the layout is empty"
    e = one({"scheme": "cubic"})
    assert "not a CoCo-Beholder layout" in e.message
    assert not cfg.is_coco_layout({"duration": 1})


def test_validate_coco_file_reports_all_with_lines(tmp_path):
    p = tmp_path / "layout.yml"
    p.write_text("- scheme: cubic\n  flows: 1\n  start: 0\n  direction: ->\n"
                 "  left-queues: 1.5\n- scheme: nope\n  flows: 1\n  start: 0\n"
                 "  direction: <-\n")
    errs = cfg.validate(p, schemes=SCHEMES)
    assert [(e.path, e.line) for e in errs] == [("[0].left-queues", 5), ("[1].scheme", 6)]
    assert cfg.validate(p, schemes=SCHEMES, lenient=True, runtime=10)  # kwargs pass through
