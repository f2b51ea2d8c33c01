"""A gym policy deployed as a periodic controller (ccbench.gym.PolicyController): the same
object drives a simulated flow and a kernel flow (docs/gym.md, "Deploying a policy")."""
from __future__ import annotations

from pathlib import Path

import pytest

import ccbench
from ccbench.gym import PolicyController

from test_emu import _ours, _why_not

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "pycc"


def _doc(policy: str, rate: str = "50Mbit", duration: float = 3) -> dict:
    return {"duration": duration, "central": {"rate": rate, "delay": "10ms", "queue": "1bdp"},
            "flows": [{"scheme": {"python": "ccbench.gym.deploy:PolicyController",
                                  "params": {"policy": policy, "path_rate": rate}}}]}


def _goodput(res, a: float, b: float) -> float:
    import polars as pl
    s = res.flows.filter((pl.col("flow") == 0) & (pl.col("time_ns") >= a * 1e9) & (pl.col("time_ns") <= b * 1e9))
    return (s["bytes_acked"][-1] - s["bytes_acked"][0]) * 8 / ((s["time_ns"][-1] - s["time_ns"][0]) / 1e9)


def test_a_holding_policy_keeps_the_presets_initial_rate_in_the_simulator(tmp_path):
    res = ccbench.run(_doc(f"{DATA / 'policies.py'}:hold"), tmp_path / "sim")
    # Aurora starts at 0.3 × the path rate and action 0 keeps it: 15 Mbit/s of pacing, and
    # the paced sender's goodput is that rate (pacing counts payload, as Linux's does)
    assert _goodput(res, 1.0, 3.0) == pytest.approx(15e6, rel=0.02)
    assert res.flows["cc_pacing_rate_cmd"].drop_nulls().unique().to_list() == [15e6]


def test_the_heuristic_example_policy_fills_the_link_without_a_standing_queue(tmp_path):
    res = ccbench.run(_doc(f"{REPO / 'examples' / 'gym' / 'heuristic.py'}:deployed", duration=6),
                      tmp_path / "h")
    assert _goodput(res, 3.0, 6.0) >= 0.8 * 50e6
    assert res.flows.filter(res.flows["time_ns"] >= 3e9)["srtt_us"].median() < 1.25 * 20_000


def test_a_policy_must_be_callable():
    with pytest.raises(TypeError, match="not callable"):
        PolicyController(policy=3)


@pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")
def test_the_same_controller_drives_a_kernel_flow(tmp_path):
    sim = ccbench.run(_doc(f"{DATA / 'policies.py'}:hold"), tmp_path / "sim")
    kern = ccbench.run(_doc(f"{DATA / 'policies.py'}:hold"), tmp_path / "emu", backend="emu")
    # both pace payload at the commanded rate: 15 Mbit/s of goodput in each
    assert _goodput(kern, 1.0, 3.0) == pytest.approx(15e6, rel=0.02)
    assert _goodput(sim, 1.0, 3.0) == pytest.approx(15e6, rel=0.02)
    assert kern.meta["emu"]["controllers"]["0"]["commands"] >= 1
    assert _ours(kern.meta["emu"]["run_id"]) == ([], [])


@pytest.mark.parametrize("policy, fragment", [
    ("subprocess:getoutput", "standard library"), ("os:system", "standard library"),
    ("ccbench.gym.deploy:PolicyController.init", "defines no function"),
])
def test_a_policy_reference_is_a_function_of_the_users_own_code(policy, fragment):
    from ccbench.cc.runtime import TargetError
    from ccbench.gym.deploy import PolicyController
    with pytest.raises(TargetError, match=fragment):
        PolicyController(policy=policy)
