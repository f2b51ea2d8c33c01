"""The ``host:`` mapping: timing noise of the hosts' and routers' network stacks.

Resolved as ``host_noise`` (the simulator's ``crates/sim/src/noise.rs``): ``None`` = exact
timing; otherwise three inverse-CDF tables of ``(probability, ns)`` points. The default model
``kernel`` was measured on the emulation backend (Linux 6.18 hosts in namespaces on this
project's 2-vCPU VM) with ``benches/host_noise.py``: one CUBIC flow, 100 Mbit/s, 20 ms RTT,
10 s; method and numbers in docs/fidelity.md.
"""

from __future__ import annotations

from typing import Any

from .errors import Collector, show

_P = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)


def _table(us: tuple[float, ...]) -> list[tuple[float, int]]:
    return [(p, round(x * 1000)) for p, x in zip(_P, us)]


#: Named noise models. ``host_ns``: data written into the receiver's TUN -> the ACK it
#: causes read back (receive + transmit path); ``router_ns``: the emulator's release error
#: (a timer-driven wake-up), added once per path at the exit into the destination host, as
#: the emulator computes the hops in model time and releases a packet into a TUN once;
#: ``timer_ns``: the release error held at its p90. Values in µs at the probabilities ``_P``.
#: ``clock_ppm``: each link's rate is off by a constant uniform in ±50 ppm (its own clock;
#: IEEE 802.3 allows ±100 ppm).
MODELS: dict[str, dict[str, Any]] = {
    "kernel": {
        "model": "kernel: Linux 6.18 stack via ccbench-emu, benches/host_noise.py; release error once per path",
        "host_ns": _table((1.0, 16.2, 18.7, 20.6, 22.2, 23.8, 25.5, 27.5, 30.4, 38.0, 56.0, 101.7)),
        # Timer slack: how late a timer-driven wake-up runs, the engine's release error up to
        # its p90 (above it are the engine's preemptions on a loaded VM, not timer slack).
        "timer_ns": _table((1.6, 3.9, 4.1, 4.3, 4.4, 4.6, 5.0, 5.5, 6.3, 10.7, 10.7, 10.7)),
        "router_ns": _table((1.6, 3.9, 4.1, 4.3, 4.4, 4.6, 5.0, 5.5, 6.3, 10.7, 38.0, 175.7)),
        "clock_ppm": 50.0,
    },
}
DEFAULT_MODEL = "kernel"
EXACT = ("exact", "off", "none")


def default_noise() -> dict[str, Any]:
    return _copy(MODELS[DEFAULT_MODEL])


def _copy(m: dict[str, Any]) -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, list) else v) for k, v in m.items()}


def noise_model(name: Any, path: tuple, errs: Collector) -> dict[str, Any] | None:
    """``host: {noise: NAME}`` -> the resolved ``host_noise`` (``None`` = exact)."""
    if name is False:
        return None
    if name is True:
        return default_noise()
    if isinstance(name, str) and name.lower() in EXACT:
        return None
    if isinstance(name, str) and name.lower() in MODELS:
        return _copy(MODELS[name.lower()])
    errs.error(path, f"unknown noise model {show(name)}",
               "use noise: exact (analytic timing, no noise) or noise: "
               + " / ".join(sorted(MODELS)) + f" (the default, {DEFAULT_MODEL})", name)
    return default_noise()

