"""The Python ports of Reno and Vegas (ccbench.schemes) send exactly the packets of the Rust
versions on the same experiments: the proof that the Python interface (ccbench.cc) carries
every hook and socket field a Linux-style module needs. Losses, ECN (CWR), idle restarts
(on/off: cwnd_event), short-flow arrivals (one object per connection), both directions."""
from __future__ import annotations

import pytest

from ccbench.backends.sim import simulate
from simhelp import experiment

PY = {"reno": "ccbench.schemes.reno:Reno", "vegas": "ccbench.schemes.vegas:Vegas"}


def _pair(scheme: str, groups: list[dict], **kw):
    """The same experiment with `scheme` as the Rust built-in and as the Python port."""
    def with_scheme(s):
        return experiment([{**g, "scheme": s if g["scheme"] == "X" else g["scheme"]}
                           for g in groups], **kw)
    return with_scheme(scheme), with_scheme({"python": PY[scheme]})


CASES = {
    "loss-competing": dict(groups=[{"scheme": "X", "flows": 2},
                                   {"scheme": "cubic", "flows": 1, "start": 1, "direction": "<-"}],
                           duration=6, rate="20Mbit", queue=40),
    "random-loss": dict(groups=[{"scheme": "X", "flows": 1}], duration=6, rate="30Mbit",
                        central={"loss": 0.01}, seed=7),
    "ecn": dict(groups=[{"scheme": "X", "flows": 2, "ecn": True}], duration=5, rate="20Mbit",
                queue={"limit": 100, "ecn-threshold": 15}),
    "onoff": dict(groups=[{"scheme": "X", "flows": 1, "onoff": {"on": "300ms", "off": "700ms"}},
                          {"scheme": "reno", "flows": 1}], duration=5, rate="20Mbit", queue=50),
    "arrivals": dict(groups=[{"scheme": "X", "flows": 1,
                              "arrivals": {"rate": 20, "size": {"fixed": "60KB"}}},
                             {"scheme": "cubic", "flows": 1}], duration=4, rate="20Mbit", queue=50),
}


@pytest.mark.parametrize("scheme", ["reno", "vegas"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_port_is_packet_identical(scheme, case):
    spec = dict(CASES[case])
    rust, py = _pair(scheme, spec.pop("groups"), **spec)
    a, sa, _ = simulate(rust)
    b, sb, _ = simulate(py)
    assert a["packets"].height > 1000
    assert a["packets"].equals(b["packets"]), f"{scheme}/{case}: packets differ"
    # The flows table too, cc_* traces included (the Vegas port records the same variables).
    assert a["flows"].columns == b["flows"].columns
    assert a["flows"].equals(b["flows"])
    assert a["flowstats"].equals(b["flowstats"])
    if case == "arrivals":
        assert a["conns"].height > 20 and a["conns"].equals(b["conns"])
    # The Python flows did run Python: their scheme name is the port's.
    assert any(f["scheme"] == f"py-{scheme}" for f in py["flows"])


def test_vegas_port_params_and_traces():
    rust, py = _pair("vegas", [{"scheme": "X", "flows": 1}], duration=3, rate="20Mbit", queue=100)
    for e in (rust, py):
        e["flows"][0]["params"] = {"alpha": 4, "beta": 8}
    a, _, _ = simulate(rust)
    b, _, _ = simulate(py)
    assert a["packets"].equals(b["packets"])
    assert b["flows"]["cc_diff"].max() > 0
    # Different parameters, different packets (the parameters reach the Python object).
    c, _, _ = simulate(_pair("vegas", [{"scheme": "X", "flows": 1}], duration=3, rate="20Mbit",
                             queue=100)[1])
    assert not c["packets"].equals(b["packets"])
