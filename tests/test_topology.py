"""General topologies: resolution (routes, tie-breaks, errors) and the parking lot."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import ccbench
from ccbench import config
from ccbench.config import ConfigError
from ccbench.config.errors import format_path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "parking-lot.yaml"


def _diamond(**flow):
    # h1 - a - h2 and h1 - b - h2: two 2-hop routes; a is declared first.
    return {"duration": 1, "topology": {"nodes": ["h1", "h2", "a", "b"], "links": [
        {"from": "h1", "to": "b", "rate": "10Mbit", "delay": "1ms"},
        {"from": "b", "to": "h2", "rate": "10Mbit", "delay": "1ms"},
        {"from": "h1", "to": "a", "rate": "10Mbit", "delay": "2ms"},
        {"from": "a", "to": "h2", "rate": "5Mbit", "delay": "2ms"}]},
        "flows": [{"scheme": "cubic", "src": "h1", "dst": "h2", **flow}]}


def test_shortest_path_ties_go_to_the_first_declared_node_and_route_overrides():
    e = config.resolve(_diamond())
    f = e["flows"][0]
    assert f["route"] == ["h1", "a", "h2"]          # a before b in nodes:
    names = [e["links"][j]["name"] for j in f["path"]]
    assert names == ["h1->a", "a->h2"]
    assert [e["links"][j]["name"] for j in f["rev_path"]] == ["h2->a", "a->h1"]
    assert f["base_rtt_ns"] == 8_000_000
    assert e["bottleneck_links"] == [f["path"][1]]  # the 5 Mbit/s link
    e = config.resolve(_diamond(route=["h1", "b", "h2"]))
    assert [e["links"][j]["name"] for j in e["flows"][0]["path"]] == ["h1->b", "b->h2"]
    kinds = {n["name"]: n["kind"] for n in e["nodes"]}
    assert kinds == {"h1": "host", "h2": "host", "a": "router", "b": "router"}


@pytest.mark.parametrize("change,path,msg", [
    (lambda d: d["flows"][0].update(dst="h9"), ("flows", 0, "dst"), "unknown node"),
    (lambda d: d["topology"]["links"].append({"from": "h2", "to": "b"}), ("topology", "links", 4), "already declared"),
    (lambda d: d["topology"]["links"].append({"from": "h2", "to": "zz"}), ("topology", "links", 4, "to"), "unknown node"),
    (lambda d: d["flows"][0].update(route=["h1", "h2"]), ("flows", 0, "route", 1), "no link between h1 and h2"),
    (lambda d: d["flows"][0].update({"left-rate": "1Mbit"}), ("flows", 0, "left-rate"), "dumbbell setting"),
    (lambda d: (d["topology"]["nodes"].append("c"), d["flows"][0].update(dst="c")), ("flows", 0), "no route from h1 to c"),
])
def test_topology_errors_name_the_path_and_the_fix(change, path, msg):
    d = _diamond()
    change(d)
    with pytest.raises(ConfigError) as ei:
        config.resolve(d)
    errs = getattr(ei.value, "errors", [ei.value])
    assert any(e.path == format_path(path) and msg in str(e) for e in errs), [str(e) for e in errs]


def test_src_without_topology_is_an_error():
    with pytest.raises(ConfigError, match="no topology|has none"):
        config.resolve({"duration": 1, "flows": [{"scheme": "cubic", "src": "h1"}]})


def test_parking_lot_long_flow_gets_less_and_every_bottleneck_is_full(tmp_path):
    """examples/parking-lot.yaml: 3 × 10 Mbit/s bottlenecks in series, CUBIC everywhere,
    20 s. Over 5-20 s each short flow gets more than the long one (measured ≈ 3× as much),
    and each bottleneck carries ≥ 95 % of its rate (1-BDP queues)."""
    exp = config.load(EXAMPLE)
    exp["record_packets"] = False
    assert [f["route"] for f in exp["flows"]][0] == ["s0", "r1", "r2", "r3", "r4", "d0"]
    links = {l["name"]: l["id"] for l in exp["links"]}
    bns = [links[n] for n in ("r1->r2", "r2->r3", "r3->r4")]
    assert sorted(exp["bottleneck_links"]) == sorted(bns)
    for f in exp["flows"][1:]:
        assert len(set(f["path"]) & set(bns)) == 1
    res = ccbench.run(exp, tmp_path / "pl")
    iv = res.intervals.filter(pl.col("bin") >= 500)   # 10 ms bins: from 5 s
    tput = iv.group_by("flow").agg(pl.col("delivered_bytes").sum() * 8 / 15).sort("flow")
    t = tput["delivered_bytes"].to_list()
    assert all(t[0] < s for s in t[1:]), t
    q = res.queues.filter(pl.col("link").is_in(bns))
    for b in bns:
        qb = q.filter(pl.col("link") == b).sort("time_ns")
        tx = qb.filter(pl.col("time_ns") >= 5 * 10**9)
        util = (tx["tx_bytes"][-1] - tx["tx_bytes"][0]) * 8 / ((tx["time_ns"][-1] - tx["time_ns"][0]) / 1e9) / 10e6
        assert util > 0.95, (b, util)
