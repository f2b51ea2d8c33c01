"""Cost of the simulator's host timing noise: the same run with `host: {noise: exact}` and
with the default model, side by side in one process (docs/benchmarks.md).

    .venv/bin/python benches/noise_cost.py [--repeats 3]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))


def main(argv=None) -> int:
    import ccbench
    from ccbench import config
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    best = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.repeats):
            for mode in ("exact", "kernel"):
                exp = config.resolve({
                    "duration": 20, "seed": 1, "host": {"noise": mode}, "packets": False,
                    "central": {"rate": "100Mbit", "delay": "10ms", "queue": "1bdp"},
                    "flows": [{"scheme": "cubic", "flows": 4}]})
                t = time.perf_counter()
                ccbench.run(exp, Path(tmp) / mode, packets=False, reload=False)
                best[mode] = min(best.get(mode, 1e9), time.perf_counter() - t)
    print(f"4 cubic flows, 100 Mbit/s, 20 s: exact {best['exact']:.2f} s, "
          f"noise {best['kernel']:.2f} s (best of {a.repeats}); ratio "
          f"{best['kernel'] / best['exact']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
