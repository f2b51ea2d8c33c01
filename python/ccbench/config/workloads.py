"""Workload keys of a flow group (docs/experiment-file.md, "Workloads"):

* ``app-rate: 5Mbit`` — an application-limited stream: the application writes payload at this
  rate (for ``scheme: udp``, ``rate:``/``app-rate:`` is the constant bit rate of the IP packets);
* ``onoff: {on: 1s, off: 5s}`` — the application alternately writes for ``on`` (at ``app-rate``,
  or as fast as TCP sends) and is idle for ``off``;
* ``arrivals: {rate: 20/s, size: ...}`` — short flows arriving as a Poisson process, each a
  new connection over the group's hosts and route; sizes ``100KB`` (fixed),
  ``{exponential: 100KB}``, ``{pareto: {mean: 100KB, shape: 1.2}}`` or ``{cdf: FILE}``;
* ``rwnd: 64KB`` — the group's receive-window limit (shorthand for ``tcp: {rwnd: ...}``);
* ``scheme: probe`` with ``interval: 200ms`` and ``size: 64`` — latency probes: one
  ``size``-byte IP packet every ``interval``, echoed by the receiving host; its round trips go
  to the ``probes`` table (crates/sim/src/probe.rs, the emulator's agent ``probe`` role).

Each parser returns the resolved flow keys (``app_rate_bps``, ``onoff``, ``arrivals``, ``probe``) that
``resolved.flow_entry`` copies into every flow of the group.
"""

from __future__ import annotations

import math
import os
from typing import Any

from .conditions import BASE_DIR
from .errors import ConfigError, Collector, show
from .units import is_number, parse_payload_size, parse_rate, parse_time

SEC = 10**9
UDP = "udp"
PROBE = "probe"
#: a probe's defaults: Flent's ping interval (its --step-size, 0.2 s) and a ping-sized packet
PROBE_INTERVAL_NS = 200_000_000
PROBE_SIZE = 64
PROBE_MIN_SIZE = 32  # IPv4 + UDP headers and the sequence number (netmodel::scenario)
PROBE_HINT = "e.g. {scheme: probe, interval: 200ms, size: 64}"
SIZE_FORMS = ("a size (100KB), {fixed: 100KB}, {exponential: 100KB}, "
              "{pareto: {mean: 100KB, shape: 1.2}} or {cdf: FILE}")
ARRIVALS_HINT = "e.g. arrivals: {rate: 20/s, size: {pareto: {mean: 100KB, shape: 1.2}}}"


def _mapping(value: Any, path: tuple, keys: tuple[str, ...], required: tuple[str, ...],
             hint: str) -> dict[str, tuple[Any, tuple]]:
    if not isinstance(value, dict):
        raise ConfigError(path, f"{show(value)} is not a mapping", hint, value)
    out = {}
    for k, v in value.items():
        c = str(k).replace("_", "-")
        if c not in keys:
            raise ConfigError(path + (k,), f"unknown key {show(k)}",
                              "valid keys: " + ", ".join(keys), k)
        out[c] = (v, path + (k,))
    for k in required:
        if k not in out or out[k][0] is None:
            raise ConfigError(path + (k,), f"missing required key {show(k)}", hint, None)
    return out


def parse_onoff(value: Any, path: tuple) -> dict:
    hint = "e.g. onoff: {on: 1s, off: 5s}"
    if isinstance(value, dict):
        # YAML 1.1 (PyYAML) reads the bare keys on/off as booleans.
        value = {({True: "on", False: "off"}[k] if isinstance(k, bool) else k): v
                 for k, v in value.items()}
    d = _mapping(value, path, ("on", "off"), ("on", "off"), hint)
    on = parse_time(*d["on"], bare_ns=SEC, what="an on period")
    off = parse_time(*d["off"], bare_ns=SEC, what="an off period")
    if on <= 0:
        raise ConfigError(d["on"][1], f"on period {show(d['on'][0])} must be > 0", hint,
                          d["on"][0])
    if on + off < 1_000:
        raise ConfigError(d["on"][1], "an on-off cycle shorter than 1 us (each period is an "
                          "event of its own; a packet takes longer than that to send)", hint,
                          d["on"][0])
    return {"on_ns": on, "off_ns": off}


def parse_arrival_rate(value: Any, path: tuple) -> float:
    """``20``, ``20/s``, ``1200/min``, ``0.5/ms`` -> arrivals per second."""
    hint = "arrivals per second: 20, 20/s, 1200/min"
    per = {"s": 1.0, "sec": 1.0, "second": 1.0, "min": 60.0, "minute": 60.0,
           "ms": 1e-3, "h": 3600.0, "hour": 3600.0}
    x = None
    if is_number(value) and not isinstance(value, bool):
        x = float(value)
    elif isinstance(value, str):
        num, _, unit = value.strip().partition("/")
        try:
            x = float(num)
        except ValueError:
            x = None
        if x is not None and unit:
            u = unit.strip().lower()
            if u not in per:
                raise ConfigError(path, f"{show(value)}: unknown time unit {show(unit)}", hint,
                                  value)
            x /= per[u]
    if x is None or not math.isfinite(x):
        raise ConfigError(path, f"{show(value)} is not an arrival rate", hint, value)
    if x <= 0:
        raise ConfigError(path, f"arrival rate {show(value)} must be > 0", hint, value)
    return x


def parse_size_dist(value: Any, path: tuple, mss: int) -> dict:
    """A flow-size distribution -> ``{"kind": fixed|exponential|pareto|cdf, ...}``."""
    if not isinstance(value, dict):
        return {"kind": "fixed", "bytes": parse_payload_size(value, path, mss, what="a flow size")}
    if len(value) != 1:
        raise ConfigError(path, f"{show(value)} is not a size distribution",
                          "one of " + SIZE_FORMS, value)
    (k, v), = value.items()
    kind = str(k).strip().lower()
    kpath = path + (k,)
    if kind == "fixed":
        return {"kind": "fixed", "bytes": parse_payload_size(v, kpath, mss, what="a flow size")}
    if kind in ("exponential", "exp"):
        if isinstance(v, dict):
            v = _mapping(v, kpath, ("mean",), ("mean",), "e.g. {exponential: {mean: 100KB}}")["mean"]
            mean = parse_payload_size(*v, mss, what="a mean flow size")
        else:
            mean = parse_payload_size(v, kpath, mss, what="a mean flow size")
        return {"kind": "exponential", "mean_bytes": float(mean)}
    if kind == "pareto":
        hint = "e.g. {pareto: {mean: 100KB, shape: 1.2}} (shape > 1)"
        d = _mapping(v, kpath, ("mean", "shape"), ("mean", "shape"), hint)
        mean = parse_payload_size(*d["mean"], mss, what="a mean flow size")
        sv, spath = d["shape"]
        if not (is_number(sv) and not isinstance(sv, bool)) or not float(sv) > 1:
            raise ConfigError(spath, f"Pareto shape {show(sv)} must be a number > 1",
                              "the mean is infinite at shape <= 1; web-like tails use 1.05-1.5",
                              sv)
        return {"kind": "pareto", "mean_bytes": float(mean), "shape": float(sv)}
    if kind in ("cdf", "empirical"):
        return {"kind": "cdf", "points": _parse_cdf(v, kpath)}
    raise ConfigError(kpath, f"unknown size distribution {show(k)}", "one of " + SIZE_FORMS, k)


#: A CDF file is read up to this size (a path naming something huge is refused, not read).
MAX_CDF_BYTES = 16 << 20


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parse_cdf(value: Any, path: tuple) -> list[list[float]]:
    """An empirical CDF: a file (lines ``bytes  cumulative-probability``; a 3-column pFabric /
    HPCC file ``bytes  index  probability`` also works; probabilities in [0, 1] or percent up
    to 100; ``#`` comments) or a list ``[[bytes, p], ...]``."""
    hint = "a file of 'bytes cumulative-probability' lines, or [[bytes, p], ...] ending at p = 1"
    rows: list[tuple[float, float]] = []
    if isinstance(value, str):
        base = BASE_DIR.get()
        fname = value if os.path.isabs(value) or base is None else os.path.join(base, value)
        try:
            if not os.path.isfile(fname):
                raise ConfigError(path, f"CDF file {show(value)} is not a regular file", hint,
                                  value)
            with open(fname, "rb") as fh:
                data = fh.read(MAX_CDF_BYTES + 1)
        except OSError as e:
            raise ConfigError(path, f"cannot read CDF file {show(value)}: {e.strerror}", hint,
                              value) from None
        if len(data) > MAX_CDF_BYTES:
            raise ConfigError(path, f"CDF file {show(value)} is larger than "
                              f"{MAX_CDF_BYTES >> 20} MiB", hint, value)
        lines = data.decode("utf-8", errors="replace").splitlines()
        for n, line in enumerate(lines, start=1):
            cols = line.split("#", 1)[0].replace(",", " ").split()
            if not cols:
                continue
            try:
                nums = [float(c) for c in cols]
            except ValueError:
                # the file's content is not quoted: it may be anything the path names
                bad = next(k for k, c in enumerate(cols, start=1) if not _is_float(c))
                raise ConfigError(path, f"{value}:{n}: column {bad} is not a number", hint,
                                  value) from None
            if len(nums) not in (2, 3):
                raise ConfigError(path, f"{value}:{n}: {len(nums)} columns", hint, value)
            rows.append((nums[0], nums[-1]))
    elif isinstance(value, list):
        for i, p in enumerate(value):
            if not (isinstance(p, list) and len(p) == 2 and all(
                    is_number(x) and not isinstance(x, bool) for x in p)):
                raise ConfigError(path + (i,), f"{show(p)} is not a [bytes, p] point", hint, p)
            rows.append((float(p[0]), float(p[1])))
    else:
        raise ConfigError(path, f"{show(value)} is not a CDF", hint, value)
    if not rows:
        raise ConfigError(path, "the CDF is empty", hint, value)
    if rows[-1][1] > 1.0 + 1e-9:
        if abs(rows[-1][1] - 100.0) > 1e-6:
            raise ConfigError(path, f"the CDF ends at {rows[-1][1]:g}, not 1 (or 100 %)", hint,
                              value)
        rows = [(x, p / 100.0) for x, p in rows]
    for (x0, p0), (x1, p1) in zip(rows, rows[1:]):
        if x1 < x0 or p1 < p0:
            raise ConfigError(path, f"the CDF decreases between ({x0:g}, {p0:g}) and "
                              f"({x1:g}, {p1:g})", hint, value)
    if any(x < 0 or p < 0 for x, p in rows) or abs(rows[-1][1] - 1.0) > 1e-9:
        raise ConfigError(path, f"the CDF must have sizes >= 0 and end at probability 1 "
                          f"(ends at {rows[-1][1]:g})", hint, value)
    return [[x, p] for x, p in rows]


def parse_arrivals(value: Any, path: tuple, mss: int) -> dict:
    d = _mapping(value, path, ("rate", "size"), ("rate", "size"), ARRIVALS_HINT)
    return {"rate_per_s": parse_arrival_rate(*d["rate"]),
            "size": parse_size_dist(*d["size"], mss)}


def parse_group_workload(g: dict, spec: Any, mss: int, errs: Collector) -> None:
    """Fill ``spec.workload`` (resolved flow keys) from a group's workload keys and check
    their combinations with ``scheme``, ``bytes`` and ``flows``."""
    w: dict[str, Any] = {}
    udp = spec.scheme == UDP
    if "app-rate" in g:
        w["app_rate_bps"] = errs.guard(parse_rate, *g["app-rate"])
    if "onoff" in g:
        w["onoff"] = errs.guard(parse_onoff, *g["onoff"])
    if "arrivals" in g:
        av, apath = g["arrivals"]
        w["arrivals"] = errs.guard(parse_arrivals, av, apath, mss)
        for other in ("bytes", "app-rate", "onoff"):
            if other in g:
                errs.error(g[other][1], f"{other} does not apply to an arrivals group",
                           "each arrival's size comes from arrivals.size; use another group "
                           "for a long-lived or rate-limited flow", g[other][0])
        if udp:
            errs.error(apath, "arrivals are TCP connections", "use a TCP scheme (e.g. "
                       "scheme: cubic) for short flows", av)
        if spec.count != 1 and "flows" in g:
            errs.error(g["flows"][1], "an arrivals group is one stream of arrivals",
                       "raise arrivals.rate instead of flows:, or add another group",
                       g["flows"][0])
    if spec.scheme == PROBE:
        w["probe"] = _parse_probe(g, spec, mss, errs)
    else:
        for k in ("interval", "size"):
            if k in g:
                errs.error(g[k][1], f"{k} applies to latency probes only",
                           f"use it with scheme: probe ({PROBE_HINT})", g[k][0])
    if udp:
        if "app-rate" not in g:
            errs.error(spec.path + ("rate",), "a udp flow needs its rate",
                       "e.g. {scheme: udp, rate: 10Mbit}", None)
        if "bytes" in g:
            errs.error(g["bytes"][1], "a udp flow has no byte count",
                       "use stop: to end it", g["bytes"][0])
        if spec.params:
            errs.error(spec.path + ("scheme",), "udp takes no parameters",
                       "remove params", spec.params)
    elif "app-rate" in g and "bytes" in g:
        errs.error(g["bytes"][1], "bytes and app-rate do not combine",
                   "an application-limited stream runs until stop:", g["bytes"][0])
    elif "onoff" in g and "bytes" in g:
        errs.error(g["bytes"][1], "bytes and onoff do not combine",
                   "an on/off source runs until stop:", g["bytes"][0])
    spec.workload = {k: v for k, v in w.items() if v is not None}


def _parse_probe(g: dict, spec: Any, mss: int, errs: Collector) -> dict | None:
    """A probe group's ``interval`` and ``size`` (IP bytes of a probe and of its echo)."""
    interval = (errs.guard(parse_time, *g["interval"], bare_ns=10**6, what="a probe interval")
                if "interval" in g else PROBE_INTERVAL_NS)
    size = (errs.guard(parse_payload_size, *g["size"], mss=mss, what="a probe size")
            if "size" in g else PROBE_SIZE)
    ok = True
    if interval is not None and interval <= 0:
        errs.error(g["interval"][1], f"probe interval {show(g['interval'][0])} must be > 0",
                   PROBE_HINT, g["interval"][0])
        ok = False
    if size is not None and not PROBE_MIN_SIZE <= size <= 65_535:
        errs.error(g["size"][1], f"probe size {show(g['size'][0])} is not between "
                   f"{PROBE_MIN_SIZE} and 65535 bytes (IP header, UDP header, sequence number)",
                   PROBE_HINT, g["size"][0])
        ok = False
    for other in ("bytes", "app-rate", "onoff", "arrivals", "rwnd"):
        if other in g:
            errs.error(g[other][1], f"{other} does not apply to latency probes",
                       "a probe flow sends one packet per interval; use another group for "
                       "load", g[other][0])
            ok = False
    if spec.params:
        errs.error(spec.path + ("scheme",), "probe takes no parameters",
                   f"set interval and size as keys of the group ({PROBE_HINT})", spec.params)
    if not ok or interval is None or size is None:
        return None
    return {"interval_ns": int(interval), "size": int(size)}


__all__ = ["parse_group_workload", "parse_size_dist", "parse_arrivals", "parse_onoff", "PROBE",
           "UDP"]
