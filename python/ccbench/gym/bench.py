"""Steps per second of the Gymnasium environment (benches/pycc.py --gym, docs/benchmarks.md):
one controlled flow alone on a 100 Mbit/s, 10 ms bottleneck, 10 ms monitor intervals, the
Aurora preset with a constant action (the rate stays at 95 Mbit/s, so every interval carries
~82 packets and their ACKs)."""
from __future__ import annotations

import time

import numpy as np

EXPERIMENT = {"duration": 60, "seed": 1,
              "central": {"rate": "100Mbit", "delay": "10ms", "queue": 1000},
              "flows": [{"scheme": "reno", "flows": 1, "left-rate": "1Gbit", "left-delay": "1ms",
                         "right-rate": "1Gbit", "right-delay": "1ms"}]}


def steps_per_second(steps: int = 5000, repeat: int = 3) -> dict:
    from .env import CcEnv
    env = CcEnv(EXPERIMENT, preset_args={"initial_rate": 95e6}, monitor_interval="10ms")
    a = np.zeros(1, np.float32)
    best_wall = best_cpu = float("inf")
    tput = 0.0
    for r in range(repeat):
        env.reset(seed=r)
        for _ in range(100):  # past the start-up
            env.step(a)
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            _, _, _, _, info = env.step(a)
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
        tput = info["stats"][0].throughput_bps
    return {"steps": steps, "interval_ms": 10, "rate": "100 Mbit/s", "wall_s": best_wall,
            "cpu_s": best_cpu, "steps_per_s": steps / best_wall,
            "steps_per_cpu_s": steps / best_cpu, "last_throughput_bps": tput}


if __name__ == "__main__":  # pragma: no cover
    print(steps_per_second())
