"""Evaluate a hand-written policy in the ccbench Gymnasium environment (docs/gym.md).

The policy reads the Aurora-like observation of the newest monitor interval — latency
gradient and latency ratio (RTT / minimum RTT) — and raises the pacing rate while the path
shows no queueing, lowers it while a queue builds. No learning library needed:

    .venv/bin/python examples/gym/heuristic.py [--episodes 3] [--experiment FILE]

With a campaign file as --experiment each episode draws one of its points.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import gymnasium  # noqa: E402

import ccbench.gym  # noqa: E402,F401  (registers the ids)


def policy(obs: np.ndarray, n_flows: int, history: int = 10) -> np.ndarray:
    """Per flow, from its newest interval: +1 (rate × 1.025) while the RTT is within 10 % of
    the minimum; −2 (rate ÷ 1.05) while it is more than 25 % above and still growing (the
    latency gradient is positive); hold otherwise, so the queue can drain without the rate
    collapsing."""
    o = obs.reshape(n_flows, history, 3)[:, -1, :]  # newest interval of each flow
    grad, lat_ratio = o[:, 0], o[:, 1]
    a = np.zeros(n_flows, np.float32)
    a[lat_ratio < 1.1] = 1.0
    a[(lat_ratio > 1.25) & (grad > 0)] = -2.0
    return a


def deployed(obs: np.ndarray) -> np.ndarray:
    """The policy for one flow, as ccbench.gym.PolicyController calls it (docs/gym.md,
    "Deploying a policy"): the same decisions in the simulator or on kernel TCP."""
    return policy(obs, 1)


def evaluate(env, episodes: int, seed: int = 0) -> list[dict]:
    out = []
    n = env.unwrapped.n_controlled
    for ep in range(episodes):
        obs, info = env.reset(seed=seed + ep)
        total, steps, tput, lat = 0.0, 0, 0.0, 0.0
        while True:
            obs, r, term, trunc, info = env.step(policy(obs, n))
            total += r
            steps += 1
            st = info["stats"][0]
            if st is not None:
                tput += st.throughput_bps
                lat += st.rtt_mean_us if st.rtt_samples else 0.0
            if term or trunc:
                break
        out.append({"episode": ep, "steps": steps, "return": total,
                    "mean_tput_mbps": tput / steps * 1e-6, "mean_rtt_ms": lat / steps * 1e-3,
                    "bottleneck_mbps": env.unwrapped.path_rates[0] * 1e-6})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=3)
    ap.add_argument("--experiment", help="experiment or campaign file (default: the env's own)")
    a = ap.parse_args(argv)
    kw = {"experiment": a.experiment} if a.experiment else {}
    env = gymnasium.make("ccbench/Aurora-v0", **kw)
    for row in evaluate(env, a.episodes):
        print(f"episode {row['episode']}: {row['steps']} steps, return {row['return']:.0f}, "
              f"throughput {row['mean_tput_mbps']:.1f} of {row['bottleneck_mbps']:.0f} Mbit/s, "
              f"RTT {row['mean_rtt_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
