"""Helpers for tests that run the simulator: build experiments from small dicts."""
from __future__ import annotations

import ccbench
from ccbench import config


def experiment(flows, *, duration=10, rate="100Mbit", delay="10ms", queue=1000, side_rate="1Gbit",
               side_delay="1ms", seed=1, packets=True, central=None, **top):
    """A dumbbell experiment: `flows` is a list of group dicts (scheme, flows, direction, ...);
    side links default to `side_rate`/`side_delay` unless a group sets them. `central` adds
    keys to the central link (jitter, loss, trace, ...; `rate: None` drops the rate)."""
    groups = []
    for g in flows:
        g = dict(g)
        g.setdefault("left-rate", side_rate)
        g.setdefault("right-rate", side_rate)
        g.setdefault("left-delay", side_delay)
        g.setdefault("right-delay", side_delay)
        groups.append(g)
    c = {"rate": rate, "delay": delay, "queue": queue, **(central or {})}
    doc = {"duration": duration, "seed": seed, "packets": packets,
           "central": {k: v for k, v in c.items() if v is not None}, "flows": groups, **top}
    return config.resolve(doc)


def run(tmp_path, exp, name="run", **kw):
    return ccbench.run(exp, tmp_path / name, **kw)
