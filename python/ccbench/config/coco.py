"""CoCo-Beholder import: ``layout.yml`` files unchanged plus the ``run.py`` command line.

Mirrors CoCo-Beholder's ``variable_delay/src/layout/layout.py`` and ``run.py`` arguments
(docs/experiment-file.md, "CoCo-Beholder layouts"),
with ccbench's stricter decisions: unknown keys are errors unless ``lenient=True``, negative
rates are errors. Variable central delay is CoCo's random walk (netmodel's ``walk``
schedule, same sign rule; the random sequence is ccbench's, see docs/experiment-file.md) and
jitter is netem's uniform ±J on both central ends.
"""

from __future__ import annotations

import difflib
from typing import Any

from .conditions import Conditions
from .errors import Collector, ConfigError, show
from .model import GroupSpec, LinkSpec, RunSpec
from .schemes import Registry
from .units import QueueLimit, U32_MAX, U64_MAX, coco_time_us, is_number

COCO_KEYS = ["scheme", "flows", "start", "direction", "left-rate", "right-rate",
             "left-delay", "right-delay", "left-queues", "right-queues"]
COCO_REQUIRED = ["scheme", "flows", "start", "direction"]
DEFAULT_QUEUE_PKTS = 1000
MIN_DELTA_US = 10_000   # run.py: "tc qdisc change takes ~4ms"


def is_coco_layout(doc: Any) -> bool:
    """A CoCo-Beholder layout is a top-level YAML list (native files are mappings)."""
    return isinstance(doc, list)


def _coco_queue(value: Any, path: tuple) -> int:
    """Integer packets; a float is an error (CoCo-Beholder's rule), so is a negative size."""
    hint = "CoCo-Beholder queue sizes are integer packets, e.g. 1000"
    if isinstance(value, float):
        raise ConfigError(path, f"queue size {show(value)} is a float, not an integer", hint,
                          value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(path, f"{show(value)} is not an integer", hint, value)
    if value < 0:
        raise ConfigError(path, f"negative queue size {value}", "it must be >= 0", value)
    if value > U32_MAX:
        raise ConfigError(path, f"queue size {value} is too large",
                          f"at most {U32_MAX} packets", value)
    return value


def _coco_rate(value: Any, path: tuple) -> int | None:
    """float Mbit/s -> bit/s; 0 = unlimited."""
    if not is_number(value) or value != value or value in (float("inf"), float("-inf")):
        raise ConfigError(path, f"{show(value)} is not a rate",
                          "CoCo-Beholder rates are numbers of Mbit/s, e.g. 100 or 12.5", value)
    if value < 0:
        raise ConfigError(path, f"negative rate {show(value)}",
                          "a rate must be >= 0 (0 = unlimited)", value)
    # float Mbit/s, as CoCo stores it; round to whole bit/s
    bps = round(float(value) * 10**6)
    if value == 0:
        return None
    if bps < 1:
        raise ConfigError(path, f"rate {show(value)} Mbit/s is below 1 bit/s", "", value)
    return bps


def _coco_group(item: Any, i: int, runtime_s: float, max_delay_us: int, lenient: bool,
                registry: Registry | None, errs: Collector) -> GroupSpec | None:
    path = (i,)
    if not isinstance(item, dict):
        errs.error(path, f"{show(item)} is not a flow group",
                   "each list item is a mapping with scheme, flows, start, direction", item)
        return None
    g = GroupSpec(index=i, scheme="", path=path)
    for key in item:
        if key not in COCO_KEYS and not lenient:
            close = difflib.get_close_matches(str(key), COCO_KEYS, n=1, cutoff=0.6)
            errs.error(path + (key,), f"unknown key {show(key)}",
                       (f'did you mean "{close[0]}"? ' if close else "")
                       + "valid keys: " + ", ".join(COCO_KEYS)
                       + " (CoCo-Beholder ignores unknown keys; ccbench refuses them unless "
                       "lenient)", key)
    get = {k: item.get(k) for k in COCO_KEYS}
    for k in COCO_REQUIRED:
        if get[k] is None:
            errs.error(path + (k,), f"missing required key {show(k)}",
                       {"scheme": "e.g. scheme: cubic", "flows": "e.g. flows: 1",
                        "start": "e.g. start: 0 (seconds)",
                        "direction": 'use "->" or "<-"'}[k], None)

    v = get["scheme"]
    if v is not None:
        if not isinstance(v, str) or not v:
            errs.error(path + ("scheme",), f"{show(v)} is not a scheme name",
                       "e.g. scheme: cubic", v)
        else:
            if registry is not None:
                v, problems = registry.check(v, {}, path + ("scheme",), ())
                for e in problems:
                    errs.add(e)
                g.transport = registry.transport.get(v, "tcp")
            g.scheme = v
    v = get["flows"]
    if v is not None:
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            errs.error(path + ("flows",), f"{show(v)} is not a positive integer",
                       "flows is the number of flows in the group, e.g. 1", v)
        else:
            g.count = v
    v = get["start"]
    if v is not None:
        if isinstance(v, bool) or not isinstance(v, int):
            errs.error(path + ("start",), f"{show(v)} is not an integer",
                       "CoCo-Beholder start times are whole seconds", v)
        elif v < 0 or v > runtime_s - 1:
            errs.error(path + ("start",), f"start {v} is outside the run",
                       f"it must be in 0 .. runtime - 1 = {runtime_s - 1:g}", v)
        else:
            g.start_ns = v * 10**9
    v = get["direction"]
    if v is not None:
        if v not in ("->", "<-"):
            errs.error(path + ("direction",), f"{show(v)} is not a direction",
                       'use exactly "->" or "<-"', v)
        else:
            g.direction = v
    for side in ("left", "right"):
        spec = LinkSpec()
        rv = get[f"{side}-rate"]
        if rv is not None:
            spec.rate_bps = errs.guard(_coco_rate, rv, path + (f"{side}-rate",))
        dv = get[f"{side}-delay"]
        if dv is not None:
            us = errs.guard(coco_time_us, dv, path + (f"{side}-delay",), max_delay_us,
                            default=0)
            spec.delay_ns = us * 1000
        qv = get[f"{side}-queues"]
        qpath = path + (f"{side}-queues",)
        q = DEFAULT_QUEUE_PKTS if qv is None else errs.guard(_coco_queue, qv, qpath,
                                                             default=DEFAULT_QUEUE_PKTS)
        spec.queue_a = spec.queue_b = QueueLimit(packets=q, text=q)
        spec.queue_a_path = spec.queue_b_path = qpath
        setattr(g, side, spec)
    return g


def parse_coco(layout: Any, *, base="0ms", delta=None, step="0ms", jitter=None,
               runtime=30, rate=100.0, max_delay_us=100_000_000, seed=None, queue=None,
               first_queue=1000, second_queue=1000, lenient=False,
               registry: Registry | None = None, errs: Collector
               ) -> tuple[RunSpec, list[GroupSpec]] | None:
    # --- run.py arguments ---------------------------------------------------------------
    if isinstance(max_delay_us, bool) or not isinstance(max_delay_us, int) or max_delay_us < 0:
        errs.error(("--max-delay",), f"{show(max_delay_us)} is not a whole number of µs >= 0",
                   "e.g. 100000000", max_delay_us)
        max_delay_us = 100_000_000
    runtime_ok = is_number(runtime) and runtime > 0
    if not runtime_ok:
        errs.error(("--runtime",), f"{show(runtime)} is not a positive number of seconds",
                   "e.g. 30", runtime)
        runtime = 30
    runtime_us = round(runtime * 10**6)
    central = _coco_central_delay(base, delta, step, jitter, seed, runtime_us, max_delay_us,
                                  errs)
    central.rate_bps = errs.guard(_coco_rate, rate, ("--rate",))
    _coco_queues(central, queue, first_queue, second_queue, errs)
    seed = _coco_seed(seed, errs)

    # --- layout --------------------------------------------------------------------------
    groups = _coco_layout(layout, runtime, max_delay_us, lenient, registry, errs)
    if errs:
        return None
    run = RunSpec(duration_ns=runtime_us * 1000, seed=seed, central=central)
    return run, groups


def _coco_central_delay(base, delta, step, jitter, seed, runtime_us: int, max_delay_us: int,
                        errs: Collector) -> LinkSpec:
    """The central link with run.py's delay options: base, the random walk (delta, step;
    ``seed`` as given seeds it) and jitter."""
    base_us = errs.guard(coco_time_us, base, ("base",), max_delay_us, default=0)
    step_us = errs.guard(coco_time_us, step, ("step",), max_delay_us, default=0)
    delta_us = None
    if delta is not None:
        delta_us = errs.guard(coco_time_us, delta, ("delta",), None)
        if delta_us is not None and delta_us < MIN_DELTA_US:
            errs.error(("delta",), f"{show(delta)} is below 10ms",
                       "CoCo-Beholder requires delta >= 10ms; use delta >= runtime (e.g. "
                       "100s) for a constant delay", delta)
            delta_us = None
    if base_us + step_us > max_delay_us and base_us - step_us < 0:
        errs.error(("step",), f"step {show(step)} is too big",
                   "base + step must be <= max-delay or base - step >= 0", step)
    # Variable delay: a random walk happens only if the run has more than one interval and
    # the walk can move. (run.py: delta >= runtime -> one interval = constant delay;
    # step 0 -> every move is +-0.)
    central = LinkSpec(delay_ns=base_us * 1000, cond=Conditions())
    walk_seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
    if delta_us is not None and delta_us < runtime_us and step_us != 0:
        # CoCo's random walk (test.py compute_delay_steps), both directions switching at
        # the same instant (ccbench's atomic switching; CoCo's r1-then-r2 skew is the
        # native `skew:` option). The walk draws from ccbench's Rng, not CPython's Mersenne
        # Twister: same sign rule and bounds, not the same sequence for a given seed.
        central.cond.delay_schedule = {
            "kind": "walk", "base_ns": base_us * 1000, "delta_ns": delta_us * 1000,
            "step_ns": step_us * 1000, "max_ns": max_delay_us * 1000}
        if walk_seed is not None:
            central.cond.delay_schedule["seed"] = walk_seed
    if jitter is not None:
        jitter_us = errs.guard(coco_time_us, jitter, ("jitter",), max_delay_us, default=0)
        if jitter_us:
            # netem "delay D J" without a distribution table: uniform in [D - J, D + J],
            # on both central ends; netem's rate serialises releases, so order-preserving.
            j = {"dist": "netem", "jitter_ns": jitter_us * 1000}
            central.cond.jitter = {"left": j, "right": j}
    return central


def _coco_queues(central: LinkSpec, queue, first_queue, second_queue, errs: Collector) -> None:
    """run.py's -q or -q1/-q2: the central link's two queues, in packets."""
    if queue is not None:
        if first_queue != 1000 or second_queue != 1000:
            errs.error(("--queues",), "-q/--queues is exclusive with -q1/-q2",
                       "give either -q or -q1/-q2", queue)
        q1 = q2 = errs.guard(_coco_queue, queue, ("--queues",), default=1000)
        p1 = p2 = ("--queues",)
    else:
        q1 = errs.guard(_coco_queue, first_queue, ("--first-queue",), default=1000)
        q2 = errs.guard(_coco_queue, second_queue, ("--second-queue",), default=1000)
        p1, p2 = ("--first-queue",), ("--second-queue",)
    central.queue_a, central.queue_b = QueueLimit(packets=q1, text=q1), QueueLimit(packets=q2,
                                                                                   text=q2)
    central.queue_a_path, central.queue_b_path = p1, p2


def _coco_seed(seed, errs: Collector) -> int:
    """run.py's --seed as ccbench's integer seed (default 1)."""
    if seed is None:
        seed = 1
    if isinstance(seed, float) and seed.is_integer():
        seed = int(seed)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= U64_MAX:
        errs.error(("--seed",), f"{show(seed)} is not a seed",
                   "use a whole number >= 0 (ccbench seeds are integers)", seed)
        seed = 1
    return seed


def _coco_layout(layout: Any, runtime, max_delay_us: int, lenient: bool,
                 registry: Registry | None, errs: Collector) -> list[GroupSpec]:
    """The layout file's flow groups."""
    groups: list[GroupSpec] = []
    if not isinstance(layout, list):
        errs.error((), f"{show(layout)} is not a CoCo-Beholder layout",
                   "a layout is a non-empty YAML list of flow groups", layout)
    elif not layout:
        errs.error((), "the layout is empty", "add at least one flow group, e.g. "
                   "- {scheme: cubic, flows: 1, start: 0, direction: ->}", layout)
    else:
        for i, item in enumerate(layout):
            g = _coco_group(item, i, runtime, max_delay_us, lenient, registry, errs)
            if g is not None:
                groups.append(g)
    return groups
