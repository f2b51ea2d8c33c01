"""Observation / action / reward presets of ccbench.gym (docs/gym.md).

A preset turns the monitor-interval statistics of the controlled flows
(``ccbench._core.IntervalStats``, or None for a flow without ACKs yet) into an observation and
a reward, and an action into commands ``(cwnd packets | None, pacing rate bit/s | None)`` per
controlled flow.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
from gymnasium import spaces

Command = tuple  # (cwnd | None, pacing_rate | None)


def _f(x: float, default: float) -> float:
    return default if x is None or not math.isfinite(x) else float(x)


class Preset:
    """Base: subclasses define the spaces and the three conversions."""
    name = "custom"

    def setup(self, env) -> None:
        """Called once the controlled flows are known (spaces depend on their number)."""

    def reset(self, env) -> list[Command]:
        """Episode start: the first command of each controlled flow."""
        return [(None, None)] * env.n_controlled

    def observe(self, env, stats: Sequence[Any]) -> np.ndarray:
        raise NotImplementedError

    def act(self, env, action) -> list[Command]:
        raise NotImplementedError

    def reward(self, env, stats: Sequence[Any]) -> float:
        raise NotImplementedError


class Aurora(Preset):
    """After Aurora (Jay et al., "A Deep Reinforcement Learning Perspective on Internet
    Congestion Control", ICML 2019): per monitor interval the latency gradient (d RTT / d t),
    the latency ratio (mean RTT / minimum RTT seen) and the send ratio (send rate / delivery
    rate), over the last ``history`` intervals; the action a scales the pacing rate by
    (1 + alpha·a) for a ≥ 0 and 1 / (1 − alpha·a) below; reward
    10·throughput (Mbit/s) − 1000·latency (s) − 2000·loss fraction, summed over the flows."""
    name = "aurora"

    #: the largest |a| (a = 1000 multiplies the rate by 26 at alpha 0.025)
    ACTION_BOUND = 1e3

    def __init__(self, history: int = 10, alpha: float = 0.025, initial_rate: float | None = None,
                 min_rate: float = 1e5, weights: tuple = (10.0, 1000.0, 2000.0),
                 normalized: bool = False) -> None:
        self.history, self.alpha, self.initial_rate = int(history), float(alpha), initial_rate
        self.min_rate, self.weights = float(min_rate), weights
        #: actions in [-1, 1] (as RL libraries recommend), a = action * ACTION_BOUND
        self.normalized = bool(normalized)

    def setup(self, env) -> None:
        n, h = env.n_controlled, self.history
        low = np.tile(np.array([-10.0, 1.0, 0.0], np.float32), n * h)
        high = np.tile(np.array([10.0, 1000.0, 1000.0], np.float32), n * h)
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        bound = 1.0 if self.normalized else self.ACTION_BOUND
        self.action_space = spaces.Box(-bound, bound, (n,), dtype=np.float32)

    def reset(self, env) -> list[Command]:
        n = env.n_controlled
        self.buf = np.tile(np.array([0.0, 1.0, 1.0], np.float32), (n, self.history))
        self.min_rtt = [math.inf] * n
        self.rates = [float(self.initial_rate or 0.3 * r) for r in env.path_rates]
        self.max_rates = [2.0 * r for r in env.path_rates]
        return [(None, r) for r in self.rates]

    def observe(self, env, stats) -> np.ndarray:
        buf = self.buf
        buf[:, :-3] = buf[:, 3:]  # shift one interval
        for i, st in enumerate(stats):
            if st is None or st.rtt_samples == 0:
                buf[i, -3:] = (0.0, 1.0, 1.0)
                continue
            if st.rtt_min_us < self.min_rtt[i]:
                self.min_rtt[i] = st.rtt_min_us
            grad = min(max(_f(st.rtt_gradient, 0.0), -10.0), 10.0)
            ratio = min(max(st.rtt_mean_us / self.min_rtt[i], 1.0), 1000.0)
            send = min(st.send_rate_bps / max(st.throughput_bps, 1.0), 1000.0)
            buf[i, -3:] = (grad, ratio, send)
        return buf.reshape(-1).copy()

    def act(self, env, action) -> list[Command]:
        a = np.asarray(action, dtype=np.float64).reshape(-1)
        out = []
        if self.normalized:
            a = np.clip(a, -1.0, 1.0) * self.ACTION_BOUND
        for i, x in enumerate(a):
            x = float(np.clip(x, -self.ACTION_BOUND, self.ACTION_BOUND))
            r = self.rates[i]
            r = r * (1 + self.alpha * x) if x >= 0 else r / (1 - self.alpha * x)
            r = min(max(r, self.min_rate), self.max_rates[i])
            self.rates[i] = r
            out.append((None, r))
        return out

    def reward(self, env, stats) -> float:
        wt, wl, wp = self.weights
        total = 0.0
        for st in stats:
            if st is None:
                continue
            lat = _f(st.rtt_mean_us, 0.0) * 1e-6
            sent = st.delivered + st.lost
            loss = st.lost / sent if sent else 0.0
            total += wt * st.throughput_bps * 1e-6 - wl * lat - wp * loss
        return total


class Ns3Tcp(Preset):
    """After ns3-gym's TCP environment (Gawłowski et al., ns3-gym, 2019): the socket's
    cwnd, bytes in flight, segments delivered and lost in the interval, mean/minimum/smoothed
    RTT (µs) and throughput/send rate (Mbit/s); the action is the new cwnd (packets);
    reward throughput (Mbit/s) − ``delay_weight`` × queueing delay (ms: mean RTT − minimum RTT)."""
    name = "ns3"
    FIELDS = ("cwnd", "inflight", "delivered", "lost", "rtt_mean_us", "min_rtt_us", "srtt_us",
              "throughput_mbps", "send_rate_mbps")

    def __init__(self, delay_weight: float = 0.1, max_cwnd: int = 100_000,
                 initial_cwnd: int = 10) -> None:
        self.delay_weight, self.max_cwnd, self.initial_cwnd = delay_weight, max_cwnd, initial_cwnd

    def setup(self, env) -> None:
        n, k = env.n_controlled, len(self.FIELDS)
        self.observation_space = spaces.Box(0.0, np.inf, (n * k,), dtype=np.float32)
        self.action_space = spaces.Box(1.0, float(self.max_cwnd), (n,), dtype=np.float32)

    def reset(self, env) -> list[Command]:
        self.obs = np.zeros((env.n_controlled, len(self.FIELDS)), np.float32)
        return [(self.initial_cwnd, None)] * env.n_controlled

    def observe(self, env, stats) -> np.ndarray:
        o = self.obs
        for i, st in enumerate(stats):
            if st is None:
                o[i] = 0.0
                continue
            o[i] = (st.cwnd, st.inflight, st.delivered, st.lost, _f(st.rtt_mean_us, st.srtt_us),
                    st.min_rtt_us, st.srtt_us, st.throughput_bps * 1e-6, st.send_rate_bps * 1e-6)
        return o.reshape(-1).copy()

    def act(self, env, action) -> list[Command]:
        a = np.asarray(action, dtype=np.float64).reshape(-1)
        return [(float(np.clip(x, 1.0, self.max_cwnd)), None) for x in a]

    def reward(self, env, stats) -> float:
        total = 0.0
        for st in stats:
            if st is None:
                continue
            qd = max(_f(st.rtt_mean_us, 0.0) - st.min_rtt_us, 0.0) * 1e-3
            total += st.throughput_bps * 1e-6 - self.delay_weight * qd
        return total


class Custom(Preset):
    """User-supplied functions: ``observation_fn(env, stats) -> array`` with
    ``observation_space``, ``action_fn(env, action) -> [(cwnd, rate), ...]`` with
    ``action_space``, ``reward_fn(env, stats) -> float``; each missing one falls back to
    ``base`` (a preset)."""
    name = "custom"

    def __init__(self, base: Preset, observation_fn: Callable | None = None,
                 observation_space=None, action_fn: Callable | None = None, action_space=None,
                 reward_fn: Callable | None = None, reset_fn: Callable | None = None) -> None:
        if (observation_fn is None) != (observation_space is None):
            raise ValueError("observation_fn and observation_space go together")
        if (action_fn is None) != (action_space is None):
            raise ValueError("action_fn and action_space go together")
        self.base = base
        self.fns = (observation_fn, action_fn, reward_fn, reset_fn)
        self._spaces = (observation_space, action_space)

    def setup(self, env) -> None:
        self.base.setup(env)
        self.observation_space = self._spaces[0] or self.base.observation_space
        self.action_space = self._spaces[1] or self.base.action_space

    def reset(self, env):
        cmds = self.base.reset(env)
        return self.fns[3](env) if self.fns[3] else cmds

    def observe(self, env, stats):
        return self.fns[0](env, stats) if self.fns[0] else self.base.observe(env, stats)

    def act(self, env, action):
        return self.fns[1](env, action) if self.fns[1] else self.base.act(env, action)

    def reward(self, env, stats):
        return self.fns[2](env, stats) if self.fns[2] else self.base.reward(env, stats)


PRESETS = {"aurora": Aurora, "ns3": Ns3Tcp}


def make_preset(preset: str | Preset, **kw) -> Preset:
    if isinstance(preset, Preset):
        return preset
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: use one of {', '.join(PRESETS)} or a "
                         f"ccbench.gym.Preset")
    return PRESETS[preset](**kw)
