"""Network conditions of a link: variable delay, jitter, random loss, trace-driven rate,
radio promotion and the cellular presets (docs/experiment-file.md, docs/network-conditions.md).

Parsers turn the YAML values into the resolved-link keys the Rust ``LinkConfig`` reads
(``delay_schedule``, ``delay_skew_ns``, ``delay_at``, ``jitter``, ``reorder``, ``loss``,
``rate_trace``, ``promotion``; docs/architecture.md). Per-direction values use the dumbbell's
end names: ``left`` is the direction leaving the link's left end (``r1->r2`` on the central
link, ``a<k>->r1`` on a left side link, ``r2->b<k>`` on a right side link), ``right`` the other.
"""

from __future__ import annotations

import contextvars
import os
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError, show
from .traces import cellular_series, read_mahimahi, read_series
from .units import is_number, parse_bool, parse_int, parse_rate, parse_time

MS = 10**6
SEC = 10**9

#: Directory of the experiment file being resolved (relative trace paths are tried there
#: after the current directory).
BASE_DIR: contextvars.ContextVar[str | None] = contextvars.ContextVar("ccbench_base_dir",
                                                                      default=None)


@dataclass
class Conditions:
    """Everything beyond rate/delay/queue on one bidirectional link."""

    delay_schedule: dict | None = None   # both directions; walk key/seed filled by build
    delay_skew_ns: int = 0               # the right direction switches this much later
    delay_at: str = "propagation"
    jitter: dict = field(default_factory=dict)    # end ("left"/"right") -> jitter dict
    reorder: dict = field(default_factory=dict)   # end -> bool
    loss: dict = field(default_factory=dict)      # end -> loss dict
    rate_trace: dict | None = None
    rate_trace_source: str | None = None
    promotion: dict | None = None
    preset_series: tuple | None = None   # (mean, lo, hi, step_ms, stream) to generate at build

    def link_keys(self, end: str, key: str, seed: int, duration_ns: int) -> dict:
        """Resolved-link keys for the direction leaving ``end`` of the physical link ``key``."""
        out: dict[str, Any] = {}
        if self.delay_schedule is not None:
            sched = dict(self.delay_schedule)
            if sched["kind"] == "walk":
                sched.setdefault("seed", seed)
                sched["key"] = key
            out["delay_schedule"] = sched
            out["delay_at"] = self.delay_at
            if end == "right" and self.delay_skew_ns:
                out["delay_skew_ns"] = self.delay_skew_ns
        if end in self.jitter:
            out["jitter"] = self.jitter[end]
        if self.reorder.get(end):
            out["reorder"] = True
        if end in self.loss:
            out["loss"] = self.loss[end]
        if self.rate_trace is not None:
            out["rate_trace"] = self.rate_trace
            if self.rate_trace_source:
                out["rate_trace_source"] = self.rate_trace_source
        elif self.preset_series is not None:
            mean, lo, hi, step_ms, stream = self.preset_series
            pts = cellular_series(mean, lo, hi, duration_ns / SEC, seed * 1000 + stream,
                                  step_ms=step_ms)
            out["rate_trace"] = {"kind": "series", "points": [list(p) for p in pts]}
        if self.promotion is not None:
            out["promotion"] = self.promotion
        return out


def find_file(value: Any, path: tuple, what: str) -> str:
    """The file ``value`` names, relative to the current directory or the experiment file's;
    a ConfigError naming ``path`` otherwise."""
    return _find_file(value, path, what)


def _find_file(value: Any, path: tuple, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(path, f"{show(value)} is not a file name",
                          f"give the path of {what}", value)
    p = os.path.expanduser(value.strip())
    if os.path.isfile(p):
        return p
    base = BASE_DIR.get()
    if base and not os.path.isabs(p) and os.path.isfile(os.path.join(base, p)):
        return os.path.join(base, p)
    for q in ([p] + ([os.path.join(base, p)] if base and not os.path.isabs(p) else [])):
        if os.path.isdir(q):
            raise ConfigError(path, f"{show(value)} is a directory, not {what}",
                              "give the file inside it", value)
        if os.path.exists(q):
            raise ConfigError(path, f"{show(value)} is not a regular file (a device, FIFO "
                              "or socket)", f"give {what} on disk", value)
    raise ConfigError(path, f"file {show(value)} not found",
                      f"paths are relative to the current directory or the experiment file's "
                      f"directory; examples/traces/ has generated traces ({what})", value)


def _mapping_one(value: Any, path: tuple, kinds: dict[str, str], extra: tuple = ()
                 ) -> tuple[str, Any, dict]:
    """``{kind: params, [extra keys]}`` with exactly one kind -> (kind, params, extras)."""
    if not isinstance(value, dict):
        raise ConfigError(path, f"{show(value)} is not a mapping",
                          "e.g. " + "; ".join(kinds.values()), value)
    found = [k for k in value if str(k).replace("_", "-") in kinds]
    unknown = [k for k in value if str(k).replace("_", "-") not in kinds
               and str(k).replace("_", "-") not in extra]
    if unknown:
        k = unknown[0]
        raise ConfigError(path + (k,), f"unknown key {show(k)}",
                          "valid keys: " + ", ".join(list(kinds) + list(extra)), k)
    if len(found) != 1:
        raise ConfigError(path, f"{show(value)} must name exactly one of "
                          + ", ".join(kinds), "e.g. " + "; ".join(kinds.values()), value)
    extras = {str(k).replace("_", "-"): v for k, v in value.items() if k not in found}
    return str(found[0]).replace("_", "-"), value[found[0]], extras


def _params(value: Any, path: tuple, allowed: list[str], required: list[str], example: str
            ) -> dict[str, tuple[Any, tuple]]:
    if not isinstance(value, dict):
        raise ConfigError(path, f"{show(value)} is not a mapping", f"e.g. {example}", value)
    out = {}
    for k, v in value.items():
        c = str(k).replace("_", "-")
        if c not in allowed:
            raise ConfigError(path + (k,), f"unknown key {show(k)}",
                              "valid keys: " + ", ".join(allowed), k)
        if v is not None:
            out[c] = (v, path + (k,))
    for r in required:
        if r not in out:
            raise ConfigError(path + (r,), f"missing required key {show(r)}",
                              f"e.g. {example}", None)
    return out


def _time(p: dict, k: str, default=None, what="a time") -> int:
    if k not in p:
        return default
    return parse_time(*p[k], bare_ns=MS, what=what)


def _prob(value: Any, path: tuple, what="a probability") -> float:
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            x = float(value.strip()[:-1]) / 100
        except ValueError:
            x = None
    else:
        x = float(value) if is_number(value) else None
    if x is None or not 0.0 <= x <= 1.0 or x != x:
        raise ConfigError(path, f"{show(value)} is not {what}",
                          "give a number in [0, 1] or a percentage such as 1%", value)
    return x


# ------------------------------------------------------------------------------- delay

DELAY_KINDS = {"walk": "delay: {walk: {base: 30ms, delta: 500ms, step: 10ms, max: 60ms}}",
               "square": "delay: {square: {low: 10ms, high: 60ms, period: 1s}}",
               "sine": "delay: {sine: {mean: 40ms, amplitude: 10ms, period: 2s}}",
               "series": "delay: {series: delays.txt}  (lines 't_seconds delay_ms')"}
DELAY_EXTRA = ("skew", "apply-to", "interpolate")
COCO_WALK_KEYS = {"base", "delta", "step"}


def parse_delay(value: Any, path: tuple, cond: Conditions) -> int:
    """A constant delay (returned) or a schedule (stored in ``cond``; returns its value at 0)."""
    if not isinstance(value, dict):
        if isinstance(value, list):
            raise ConfigError(path, "a list is not a delay",
                              "write a schedule as " + "; or ".join(DELAY_KINDS.values()), value)
        return parse_time(value, path, bare_ns=MS, what="a delay")
    if COCO_WALK_KEYS & {str(k).replace("_", "-") for k in value}:
        # CoCo-Beholder's shape written inline: {base, delta, step, max, seed}
        extras = {k: v for k, v in value.items() if str(k).replace("_", "-") in DELAY_EXTRA}
        value = {"walk": {k: v for k, v in value.items() if k not in extras}, **extras}
    kind, params, extras = _mapping_one(value, path, DELAY_KINDS, DELAY_EXTRA)
    ppath = path + (kind,)
    if kind == "walk":
        sched, initial = _walk_schedule(params, ppath)
    elif kind == "square":
        sched, initial = _square_schedule(params, ppath)
    elif kind == "sine":
        sched, initial = _sine_schedule(params, ppath)
    else:
        sched, initial = _series_schedule(params, ppath, path, extras)
    _delay_extras(extras, kind, path, cond)
    cond.delay_schedule = sched
    return initial


def _walk_schedule(params: Any, ppath: tuple) -> tuple[dict, int]:
    """CoCo-Beholder's random walk: (schedule, delay at 0)."""
    p = _params(params, ppath, ["base", "delta", "step", "max", "seed"],
                ["base", "delta", "step"], DELAY_KINDS["walk"])
    base, delta, step = _time(p, "base"), _time(p, "delta"), _time(p, "step")
    mx = _time(p, "max", 100 * SEC)
    if delta == 0:
        raise ConfigError(p["delta"][1], "delta must be > 0",
                          "delta is the time between delay changes, e.g. 500ms",
                          p["delta"][0])
    if base > mx:
        raise ConfigError(p["base"][1], f"base {show(p['base'][0])} is above max",
                          "base must be <= max", p["base"][0])
    if base + step > mx and base - step < 0:
        raise ConfigError(p["step"][1], f"step {show(p['step'][0])} is too big",
                          "base + step must be <= max or base - step >= 0 (CoCo-Beholder's "
                          "rule)", p["step"][0])
    sched = {"kind": "walk", "base_ns": base, "delta_ns": delta, "step_ns": step,
             "max_ns": mx}
    if "seed" in p:
        sched["seed"] = parse_int(*p["seed"], what="a seed", minimum=0,
                                  maximum=2**64 - 1)
    return sched, base


def _square_schedule(params: Any, ppath: tuple) -> tuple[dict, int]:
    """A square wave between two delays: (schedule, delay at 0)."""
    p = _params(params, ppath, ["low", "high", "period", "start"],
                ["low", "high", "period"], DELAY_KINDS["square"])
    period = _time(p, "period")
    if period < 2:
        raise ConfigError(p["period"][1], "period must be > 0", "e.g. period: 1s",
                          p["period"][0])
    start_high = False
    if "start" in p:
        sv, spath = p["start"]
        if sv not in ("low", "high"):
            raise ConfigError(spath, f"{show(sv)} is not low or high",
                              "start: low (default) or start: high", sv)
        start_high = sv == "high"
    sched = {"kind": "square", "low_ns": _time(p, "low"), "high_ns": _time(p, "high"),
             "period_ns": period, "start_high": start_high}
    return sched, sched["high_ns"] if start_high else sched["low_ns"]


def _sine_schedule(params: Any, ppath: tuple) -> tuple[dict, int]:
    """A sine around a mean delay: (schedule, delay at 0)."""
    p = _params(params, ppath, ["mean", "amplitude", "period"],
                ["mean", "amplitude", "period"], DELAY_KINDS["sine"])
    sched = {"kind": "sine", "mean_ns": _time(p, "mean"),
             "amplitude_ns": _time(p, "amplitude"), "period_ns": _time(p, "period")}
    if sched["period_ns"] == 0:
        raise ConfigError(p["period"][1], "period must be > 0", "e.g. 2s", p["period"][0])
    if sched["amplitude_ns"] > sched["mean_ns"]:
        raise ConfigError(p["amplitude"][1], "the amplitude is larger than the mean: the "
                          "delay would go below 0", "amplitude <= mean",
                          p["amplitude"][0])
    return sched, sched["mean_ns"]


def _series_schedule(params: Any, ppath: tuple, path: tuple, extras: dict) -> tuple[dict, int]:
    """A delay series read from a file, step or linear between its points: (schedule, delay
    at 0)."""
    fname = _find_file(params, ppath, "a delay series: lines 't_seconds delay_ms'")
    try:
        rows = read_series(fname)
    except (OSError, ValueError) as e:
        raise ConfigError(ppath, f"bad delay series {show(params)}: {e}",
                          "lines 't_seconds delay_ms', times increasing", params) from None
    pts = []
    for i, (t, v) in enumerate(rows):
        try:
            d = parse_time(v, ppath, bare_ns=MS, what="a delay")
        except ConfigError:
            raise ConfigError(ppath, f"bad delay series {show(params)}: entry {i + 1}: "
                              "the second field is not a delay",
                              "lines 't_seconds delay_ms', times increasing",
                              params) from None
        pts.append([round(t * SEC), d])
    if pts[0][0] != 0:
        pts.insert(0, [0, pts[0][1]])
    linear = False
    if "interpolate" in extras:
        iv = extras["interpolate"]
        if iv not in ("linear", "step", "steps"):
            raise ConfigError(path + ("interpolate",), f"{show(iv)} is not linear or step",
                              "interpolate: step (default, piecewise constant) or linear",
                              iv)
        linear = iv == "linear"
    sched = {"kind": "series", "points": pts, "linear": linear}
    return sched, pts[0][1]


def _delay_extras(extras: dict, kind: str, path: tuple, cond: Conditions) -> None:
    """``interpolate``, ``skew`` and ``apply-to`` beside a delay schedule."""
    if "interpolate" in extras and kind != "series":
        raise ConfigError(path + ("interpolate",), "interpolate applies to a delay series only",
                          "remove it", extras["interpolate"])
    if "skew" in extras:
        cond.delay_skew_ns = parse_time(extras["skew"], path + ("skew",), bare_ns=MS,
                                        what="a skew")
    if "apply-to" in extras:
        av = extras["apply-to"]
        if av not in ("queued", "new"):
            raise ConfigError(path + ("apply-to",), f"{show(av)} is not queued or new",
                              "apply-to: queued (default: the delay is read when a packet "
                              "starts propagating) or new (netem: read at enqueue)", av)
        cond.delay_at = "propagation" if av == "queued" else "enqueue"


# ------------------------------------------------------------------------------- jitter

JITTER_EXAMPLE = ("jitter: {dist: normal, sd: 2ms} (or uniform with max, netem with jitter, "
                  "ou with sd and tau)")


def _sided(value: Any) -> bool:
    return isinstance(value, dict) and any(str(k) in ("left", "right") for k in value)


def parse_jitter(value: Any, path: tuple, cond: Conditions) -> None:
    if _sided(value):
        for end, v in value.items():
            if end not in ("left", "right"):
                raise ConfigError(path + (end,), f"unknown key {show(end)}",
                                  "per direction: {left: ..., right: ...}", end)
            if v is not None:
                _jitter_one(v, path + (end,), cond, [end])
    else:
        _jitter_one(value, path, cond, ["left", "right"])


def _jitter_one(value: Any, path: tuple, cond: Conditions, ends: list[str]) -> None:
    if not isinstance(value, dict):
        # a bare time: netem's default (uniform ±J)
        j = {"dist": "netem", "jitter_ns": parse_time(value, path, bare_ns=MS, what="a jitter")}
        reorder = False
    else:
        p = _params(value, path, ["dist", "max", "sd", "mean", "jitter", "tau", "reorder"],
                    ["dist"], JITTER_EXAMPLE)
        dist, dpath = p["dist"]
        need = {"uniform": ("max",), "normal": ("sd",), "netem": ("jitter",), "ou": ("sd", "tau")}
        if dist not in need:
            raise ConfigError(dpath, f"{show(dist)} is not a jitter distribution",
                              "dist: uniform (extra delay in [0, max]), normal (sd, mean), "
                              "netem (uniform in [-jitter, +jitter]) or ou (sd, tau, mean: a "
                              "delay that wanders with correlation time tau)", dist)
        for k in ("max", "sd", "mean", "jitter", "tau"):
            if k in p and k not in need[dist] and not (dist in ("normal", "ou") and k == "mean"):
                raise ConfigError(p[k][1], f"{k} does not apply to dist {dist}",
                                  f"dist {dist} takes {', '.join(need[dist])}", p[k][0])
        for k in need[dist]:
            if k not in p:
                raise ConfigError(path + (k,), f"missing required key {show(k)}",
                                  JITTER_EXAMPLE, None)
        for k in ("max", "sd", "jitter", "tau", "mean"):
            if k in p and abs(parse_time(str(p[k][0]).strip().lstrip("-") if isinstance(
                    p[k][0], str) else p[k][0], p[k][1], bare_ns=MS)) > MAX_JITTER_NS:
                raise ConfigError(p[k][1], f"jitter {k} above {MAX_JITTER_NS // 10**9} s",
                                  "a jitter's parameters are delays: milliseconds to seconds",
                                  p[k][0])
        amount = _time(p, need[dist][0])
        if dist == "uniform":
            j = {"dist": "uniform", "max_ns": amount}
        elif dist == "netem":
            j = {"dist": "netem", "jitter_ns": amount}
        else:
            mean = 0
            if "mean" in p:
                mv, mpath = p["mean"]
                neg = isinstance(mv, str) and mv.strip().startswith("-")
                mean = parse_time(mv.strip()[1:] if neg else mv, mpath, bare_ns=MS,
                                  what="a mean")
                mean = -mean if neg else mean
            j = {"dist": dist, "sd_ns": amount, "mean_ns": mean}
            if dist == "ou":
                j["tau_ns"] = _time(p, "tau")
                if j["tau_ns"] <= 0:
                    raise ConfigError(p["tau"][1], "tau must be above 0",
                                      "tau: the correlation time, e.g. tau: 500ms", p["tau"][0])
        reorder = parse_bool(*p["reorder"]) if "reorder" in p else False
    for e in ends:
        cond.jitter[e] = j
        cond.reorder[e] = reorder


# ------------------------------------------------------------------------------- loss

LOSS_EXAMPLE = "loss: {bernoulli: 0.01} or loss: {gilbert: {p: 0.01, r: 0.3, h: 0.5}}"


def parse_loss(value: Any, path: tuple, cond: Conditions) -> None:
    if _sided(value):
        for end, v in value.items():
            if end not in ("left", "right"):
                raise ConfigError(path + (end,), f"unknown key {show(end)}",
                                  "per direction: {left: ..., right: ...}", end)
            if v is not None:
                cond.loss[end] = _loss_one(v, path + (end,))
    else:
        l = _loss_one(value, path)
        cond.loss["left"] = cond.loss["right"] = l


def _loss_one(value: Any, path: tuple) -> dict:
    if not isinstance(value, dict):
        return {"kind": "bernoulli", "p": _prob(value, path)}
    kind, params, _ = _mapping_one(value, path, {"bernoulli": "loss: {bernoulli: 0.01}",
                                                 "gilbert": LOSS_EXAMPLE.split(" or ")[1]})
    if kind == "bernoulli":
        return {"kind": "bernoulli", "p": _prob(params, path + ("bernoulli",))}
    gp = path + ("gilbert",)
    p = _params(params, gp, ["p", "r", "h", "k"], ["p", "r"], LOSS_EXAMPLE.split(" or ")[1])
    g = {"kind": "gilbert", "p": _prob(*p["p"]), "r": _prob(*p["r"]),
         "h": _prob(*p["h"]) if "h" in p else 0.0, "k": _prob(*p["k"]) if "k" in p else 1.0}
    if g["p"] > 0 and g["r"] == 0:
        raise ConfigError(p["r"][1], "r = 0 with p > 0 never leaves the bad state",
                          "r is P(bad -> good) per packet; e.g. r: 0.3 (mean burst 1/r)", p["r"][0])
    return g


# ------------------------------------------------------------------------------- trace

TRACE_EXAMPLE = ("trace: examples/traces/12mbps.trace, trace: {file: x.trace, once: true, "
                 "opportunity: 1504B}, or trace: {series: rates.txt} (lines 't_seconds rate')")


def parse_trace(value: Any, path: tuple, cond: Conditions) -> int:
    """Store the trace in ``cond``; return its mean rate (bit/s) for ``rate_bps``."""
    if isinstance(value, dict) and "series" in value:
        p = _params(value, path, ["series"], ["series"], TRACE_EXAMPLE)
        fname = _find_file(p["series"][0], p["series"][1], "a rate series")
        try:
            rows = read_series(fname)
        except (OSError, ValueError) as e:
            raise ConfigError(p["series"][1], f"bad rate series {show(p['series'][0])}: {e}",
                              "lines 't_seconds rate' (bare rate = Mbit/s)",
                              p["series"][0]) from None
        pts = []
        for i, (t, v) in enumerate(rows):
            try:
                r = parse_rate(v, p["series"][1])
            except ConfigError:
                raise ConfigError(p["series"][1], f"bad rate series {show(p['series'][0])}: "
                                  f"entry {i + 1}: the second field is not a rate",
                                  "lines 't_seconds rate' (bare rate = Mbit/s)",
                                  p["series"][0]) from None
            pts.append([round(t * SEC), 0 if r is None else r])
        if pts[0][0] != 0:
            pts.insert(0, [0, pts[0][1]])
        cond.rate_trace = {"kind": "series", "points": pts}
        cond.rate_trace_source = fname
        if len(pts) == 1:
            return pts[0][1] or 1
        span = pts[-1][0]
        mean = sum(r * (pts[i + 1][0] - t) for i, (t, r) in enumerate(pts[:-1])) / span
        return max(1, round(mean))
    once = False
    opp = 1500
    if isinstance(value, dict):
        p = _params(value, path, ["file", "once", "opportunity"], ["file"], TRACE_EXAMPLE)
        fv, fpath = p["file"]
        if "once" in p:
            once = parse_bool(*p["once"])
        if "opportunity" in p:
            ov, opath = p["opportunity"]
            txt = str(ov).strip().rstrip("Bb").strip() if isinstance(ov, str) else ov
            if isinstance(txt, str) and txt.isdigit():
                txt = int(txt)
            if isinstance(txt, bool) or not isinstance(txt, int) or not 1 <= txt <= 65535:
                raise ConfigError(opath, f"{show(ov)} is not an opportunity size",
                                  "bytes per delivery opportunity: 1500 (default) or 1504 "
                                  "(mahimahi's PACKET_SIZE)", ov)
            opp = txt
    else:
        fv, fpath = value, path
    fname = _find_file(fv, fpath, "a mahimahi trace")
    try:
        ms = read_mahimahi(fname)
    except (OSError, ValueError) as e:
        raise ConfigError(fpath, f"bad mahimahi trace {show(fv)}: {e}",
                          "one millisecond timestamp per line, non-decreasing, last > 0",
                          fv) from None
    cond.rate_trace = {"kind": "mahimahi", "ms": ms, "once": once, "opportunity_bytes": opp}
    cond.rate_trace_source = fname
    return max(1, round(len(ms) * opp * 8 * 1000 / ms[-1]))


def parse_promotion(value: Any, path: tuple, cond: Conditions) -> None:
    p = _params(value, path, ["idle", "delay"], ["delay"],
                "promotion: {idle: 10s, delay: 200ms}")
    cond.promotion = {"idle_ns": _time(p, "idle", 10 * SEC), "delay_ns": _time(p, "delay")}


# ------------------------------------------------------------------------------- presets

#: The radio links' delay noise, on both directions of each cellular preset: a wandering
#: extra delay (ou: s.d. 10 ms, correlation time 200 ms). docs/network-conditions.md,
#: "Cellular presets", says where the two numbers come from.
#: The largest jitter parameter (sd, max, mean, tau) a file may give.
MAX_JITTER_NS = 100 * 10**9

RADIO_NOISE = {"dist": "ou", "sd": "10ms", "tau": "200ms"}

#: Cellular link profiles after the mobile-broadband measurements of M. Pakmehr's thesis
#: (University of Oslo, 2014); the parameters and their sources are in
#: docs/network-conditions.md, "Cellular presets". Values: central keys as
#: a user would write them, plus a generated rate process (mean, lo, hi bit/s, step ms).
PRESETS: dict[str, dict] = {
    "evdo": {"delay": "42ms", "queue": 150, "jitter": dict(RADIO_NOISE),
             "promotion": {"idle": "10s", "delay": "200ms"},
             "_series": (2.5e6, 2.0e6, 3.0e6, 100, 1)},
    "hspa-capped": {"rate": "3Mbit", "delay": "37ms", "queue": 40, "jitter": dict(RADIO_NOISE),
                    "loss": {"gilbert": {"p": 0.0005, "r": 0.3}},
                    "promotion": {"idle": "10s", "delay": "200ms"}},
    "hspa": {"delay": "22ms", "queue": 2800, "jitter": dict(RADIO_NOISE),
             "promotion": {"idle": "10s", "delay": "200ms"},
             "_series": (10.5e6, 9.5e6, 11.5e6, 100, 3)},
}


__all__ = ["Conditions", "parse_delay", "parse_jitter", "parse_loss", "parse_trace",
           "parse_promotion", "PRESETS", "BASE_DIR", "find_file"]
