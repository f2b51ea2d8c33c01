"""A policy trained in the environment, run as a periodic controller — in the simulator or
on real kernel TCP (docs/gym.md, "Deploying a policy").

``PolicyController`` wraps ``policy(observation) -> action`` with the same preset the
environment used: each monitor interval its ``on_interval`` builds the preset's observation
from the interval statistics, asks the policy, and turns the action into the preset's
command. On ``--backend emu`` the statistics come from ``TCP_INFO`` and the command becomes
socket options (docs/python-schemes.md, "On the kernel"), so the same policy object drives a
simulated or a kernel flow.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable

from ..cc import Controller
from ..cc.runtime import load_function
from .presets import make_preset


def _command(cmd) -> dict | None:
    cwnd, rate = cmd
    out = {}
    if cwnd is not None:
        out["cwnd"] = max(1, int(cwnd))
    if rate is not None:
        out["pacing_rate"] = float(rate)
    return out or None


class PolicyController(Controller):
    """``policy``: a callable observation → action, or a ``"module:function"`` /
    ``"file.py:function"`` reference (needed from YAML and in campaign workers).
    ``preset``/``preset_args``: as the environment's. ``path_rate``: the bottleneck rate the
    preset scales by (bit/s or "100Mbit"; the environment took it from the experiment).
    ``interval``: the environment's monitor interval."""

    record = ("pacing_rate_cmd", "cwnd_cmd")

    def __init__(self, policy: Callable | str, preset: str = "aurora",
                 preset_args: dict | None = None, path_rate: Any = "100Mbit",
                 interval: Any = "10ms") -> None:
        from ..config.units import parse_rate
        self.policy = load_function(policy) if isinstance(policy, str) else policy
        if not callable(self.policy):
            raise TypeError(f"policy {policy!r} is not callable")
        self.interval = interval
        rate = parse_rate(path_rate, ("path_rate",)) if isinstance(path_rate, str) else float(path_rate)
        self.preset = make_preset(preset, **(preset_args or {}))
        # the preset reads only these of the environment
        self._env = SimpleNamespace(n_controlled=1, path_rates=[float(rate)])
        self.preset.setup(self._env)
        self.pacing_rate_cmd = None
        self.cwnd_cmd = None

    def _issue(self, cmds) -> dict | None:
        self.cwnd_cmd, self.pacing_rate_cmd = cmds[0]
        return _command(cmds[0])

    def init(self, sk):
        return self._issue(self.preset.reset(self._env))

    def on_interval(self, sk, st):
        obs = self.preset.observe(self._env, [st])
        return self._issue(self.preset.act(self._env, self.policy(obs)))


__all__ = ["PolicyController"]
