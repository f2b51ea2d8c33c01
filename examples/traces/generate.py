#!/usr/bin/env python3
"""Generate the traces in this directory (nothing here is downloaded).

    python examples/traces/generate.py            # rewrite every trace

* ``12mbps.trace``   mahimahi, one opportunity per ms = 12 Mbit/s with 1500-byte opportunities,
                     period 1 s.
* ``step.trace``     mahimahi, 24 Mbit/s for 5 s then 6 Mbit/s for 5 s (period 10 s).
* ``step-rate.txt``  the same step as a rate series (``t_seconds rate`` lines).
* ``cellular-evdo.trace``, ``cellular-hspa.trace``  60 s cellular-like mahimahi traces from
  ``ccbench.config.traces.cellular_series`` (a mean-reverting random walk of the log rate in
  100 ms steps, clamped to a band, with rare 100-ms fades for EV-DO), converted to
  opportunities with fractional carry as ``mm-rate-to-events`` does. Parameters and their
  sources: docs/network-conditions.md.
* ``square-delay.txt`` a delay series (``t_seconds delay_ms``): 10 ms / 60 ms, period 2 s.
"""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
# Load ccbench/config/traces.py by path: it is pure Python, so no install is needed.
_spec = importlib.util.spec_from_file_location(
    "ccbench_traces", os.path.join(HERE, "..", "..", "python", "ccbench", "config", "traces.py"))
_traces = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_traces)
cellular_series, constant_trace = _traces.cellular_series, _traces.constant_trace
mahimahi_from_rates = _traces.mahimahi_from_rates


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(str(x) for x in lines) + "\n")


def main():
    write("12mbps.trace", constant_trace(12e6, 1.0))
    write("step.trace", mahimahi_from_rates([24e6] * 5000 + [6e6] * 5000))
    write("step-rate.txt", ["0 24Mbit", "5 6Mbit"])
    for name, (mean, lo, hi, outage, seed) in {
            "cellular-evdo.trace": (2.5e6, 2.0e6, 3.0e6, 0.01, 1),
            "cellular-hspa.trace": (10.5e6, 9.5e6, 11.5e6, 0.0, 3)}.items():
        steps = cellular_series(mean, lo, hi, 60.0, seed, step_ms=100, outage_p=outage)
        rates = []
        for _, r in steps:
            rates.append(r)
        write(name, mahimahi_from_rates(rates, step_ms=100))
    write("square-delay.txt", [f"{t} {10 if t % 2 == 0 else 60}" for t in range(0, 60)])


if __name__ == "__main__":
    main()
