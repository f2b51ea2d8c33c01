"""One link of the experiment file: rate, delay, network conditions and queues.

The central link (``central:``), a flow group's side links (``left-*``/``right-*``) and the links
of a general topology share these parsers; each fills a :class:`model.LinkSpec`.
"""

from __future__ import annotations

from typing import Any

from .conditions import (PRESETS, Conditions, parse_delay, parse_jitter, parse_loss,
                         parse_promotion, parse_trace)
from .errors import Collector, show
from .keys import NO_OP_AQM, Key, canon, get, take
from .model import DEFAULT_QUEUE, SAME_RATE, LinkSpec
from .queues import parse_queue_mapping
from .units import parse_int, parse_queue, parse_rate

CENTRAL_KEYS = [Key("rate"), Key("overhead"), Key("duplex"), Key("delay"), Key("queue", ("queues",)), Key("ecn"), Key("aqm"),
                Key("jitter"), Key("loss"), Key("trace"), Key("promotion"), Key("preset")]
LINK_RESERVED: dict[str, str] = {}
#: Network-condition keys of a side link (``left-<key>``/``right-<key>``), see conditions.py.
SIDE_CONDITION_KEYS = ("jitter", "loss", "trace", "promotion")
QUEUE_SIDE_KEYS = [Key("left"), Key("right")]
ECN_PLACE_HINT = ("ECN marking is set on a queue: queue: {limit: 100, ecn-threshold: 20}; "
                  "flows use ECN with ecn: true on their group")


def parse_link_delay(value: Any, path: tuple, cond: Conditions | None = None) -> int:
    """A link's ``delay``: a time, or a variable-delay mapping recorded in ``cond``."""
    if cond is None:
        cond = Conditions()
    return parse_delay(value, path, cond)


def parse_conditions(d: dict, prefix: str, spec: LinkSpec, errs: Collector) -> None:
    """jitter/loss/trace/promotion of a link (``prefix`` "" on the central link, "left-" or
    "right-" in a flow group) into ``spec.cond``; a trace also sets ``spec.rate_bps`` to its
    mean rate (a trace and a rate together are an error)."""
    cond = spec.cond
    for key, fn in (("jitter", parse_jitter), ("loss", parse_loss),
                    ("promotion", parse_promotion)):
        if prefix + key in d:
            errs.guard(fn, *d[prefix + key], cond)
    if prefix + "trace" in d:
        tv, tpath = d[prefix + "trace"]
        if prefix + "rate" in d:
            errs.error(tpath, "a link has either a rate or a trace",
                       f"remove {prefix}rate (the trace sets the rate)", tv)
        mean = errs.guard(parse_trace, tv, tpath, cond)
        if mean is not None:
            spec.rate_bps = mean


DUPLEX = {"full": False, "half": True}


def parse_duplex(d: dict, key: str, spec: LinkSpec, errs: Collector) -> None:
    """``duplex: full | half`` of a link (``key`` "duplex", "left-duplex", ...): ``half`` puts
    both directions on one shared half-duplex channel (ns-3's CSMA bus, docs/simulator.md).
    Call after the link's rate, delay and conditions are parsed: a shared channel has one
    constant rate and delay, and no per-direction jitter, trace, promotion or variable delay."""
    if key not in d:
        return
    value, path = d[key]
    mode = value.strip().lower() if isinstance(value, str) else None
    if mode not in DUPLEX:
        errs.error(path, f"duplex {show(value)} is not full or half",
                   f"{key}: half (one shared channel, ns-3 CSMA) or {key}: full (the default)",
                   value)
        return
    spec.half_duplex, spec.duplex_path = DUPLEX[mode], path
    if not spec.half_duplex:
        return
    prefix = key[:-len("duplex")]
    if spec.rate_bps is None:
        errs.error(path, "a half-duplex link needs a rate",
                   f"add {prefix}rate (the channel's one data rate)", value)
    if spec.rate_b_bps != SAME_RATE:
        errs.error(path, "a half-duplex link has one rate for both directions",
                   f"write {prefix}rate: <rate>, not {{left: .., right: ..}}", value)
    cond = spec.cond
    if cond is None:
        return
    for what, on in ((f"{prefix}delay (a variable delay)", cond.delay_schedule is not None),
                     (f"{prefix}jitter", bool(cond.jitter)),
                     (f"{prefix}trace", cond.rate_trace is not None or cond.preset_series is not None),
                     (f"{prefix}promotion", cond.promotion is not None)):
        if on:
            errs.error(path, f"{what} cannot be combined with duplex: half",
                       f"remove {what.split()[0]} or use duplex: full (a shared channel has one "
                       "constant rate and delay)", value)


def parse_queue_spec(value: Any, path: tuple, errs: Collector):
    """A queue: a size, or a mapping ``{type: codel, limit: <size>, ...}`` (queues.py) ->
    (limit, ECN step threshold, Aqm or None)."""
    if not isinstance(value, dict):
        return errs.guard(parse_queue, value, path, default=DEFAULT_QUEUE), None, None
    return parse_queue_mapping(value, path, errs, DEFAULT_QUEUE)


def reject_ecn_key(d: dict, key: str, errs: Collector) -> None:
    if key in d:
        value, path = d[key]
        errs.error(path, f"{show(path[-1])} is not a link setting", ECN_PLACE_HINT, value)
    aqm_key = key[:-3] + "aqm"  # ecn -> aqm, left-ecn -> left-aqm
    if aqm_key in d and not (isinstance(d[aqm_key][0], str)
                             and d[aqm_key][0].strip().lower() in NO_OP_AQM):
        value, path = d[aqm_key]
        where = "left-queue" if aqm_key.startswith("left") else \
            "right-queue" if aqm_key.startswith("right") else "queue"
        errs.error(path, f"{show(path[-1])} is not a link setting",
                   f"a queue discipline is the queue's type: {where}: {{type: codel, "
                   "limit: 1000, target: 5ms} (docs/experiment-file.md, Queues and AQMs)",
                   value)


def parse_central(d, errs: Collector) -> LinkSpec:
    spec = LinkSpec(rate_bps=100_000_000, delay_ns=0,
                    queue_a_path=("central", "queue"), queue_b_path=("central", "queue"))
    if "central" not in d:
        return spec
    value, path = d["central"]
    c = take(value, path, CENTRAL_KEYS, errs, reserved=LINK_RESERVED)
    if c is None:
        return spec
    spec.cond = Conditions()
    if "preset" in c:
        c = _apply_preset(c, spec, errs)
    if "rate" in c:
        _parse_central_rate(*c["rate"], spec, errs)
    if "overhead" in c:
        spec.overhead_bytes = get(c, "overhead", parse_int, errs, 0,
                                  what="framing bytes per packet", minimum=0, maximum=65535)
    spec.delay_ns = get(c, "delay", parse_link_delay, errs, 0, cond=spec.cond)
    parse_conditions(c, "", spec, errs)
    parse_duplex(c, "duplex", spec, errs)
    reject_ecn_key(c, "ecn", errs)
    if "queue" in c:
        qv, qpath = c["queue"]
        sided = isinstance(qv, dict) and any(canon(k) in ("left", "right") for k in qv)
        if sided:
            qv = dict(qv)
            for k in list(qv):
                if canon(k) in ("kind", "type", "aqm"):
                    tv = qv.pop(k)
                    if not (isinstance(tv, str) and tv.strip().lower() in NO_OP_AQM):
                        errs.error(qpath + (k,), "a queue type is given per side",
                                   "write queue: {left: {type: codel, ...}, right: {type: "
                                   "codel, ...}}", tv)
            q = take(qv, qpath, QUEUE_SIDE_KEYS, errs,
                     what="a queue or {left: <queue>, right: <queue>}")
            if q is not None:
                if "left" in q:
                    spec.queue_a, spec.ecn_a, spec.aqm_a = parse_queue_spec(*q["left"], errs)
                    spec.queue_a_path = q["left"][1]
                if "right" in q:
                    spec.queue_b, spec.ecn_b, spec.aqm_b = parse_queue_spec(*q["right"], errs)
                    spec.queue_b_path = q["right"][1]
        else:
            ql, ecn, aqm = parse_queue_spec(qv, qpath, errs)
            spec.queue_a = spec.queue_b = ql
            spec.ecn_a = spec.ecn_b = ecn
            spec.aqm_a = spec.aqm_b = aqm
            spec.queue_a_path = spec.queue_b_path = qpath
    return spec


def _parse_central_rate(rv: Any, rpath: tuple, spec: LinkSpec, errs: Collector) -> None:
    """``rate``: one rate both ways, or ``{left: r1->r2's rate, right: r2->r1's rate}`` (the
    end each direction leaves, as for queues); a side left out keeps 100Mbit."""
    if not isinstance(rv, dict):
        spec.rate_bps = errs.guard(parse_rate, rv, rpath)
        return
    r = take(rv, rpath, QUEUE_SIDE_KEYS, errs, what="a rate or {left: <rate>, right: <rate>}")
    if r is None:
        return
    if "left" in r:
        spec.rate_bps = errs.guard(parse_rate, *r["left"], default=spec.rate_bps)
    if "right" in r:
        spec.rate_b_bps = errs.guard(parse_rate, *r["right"], default=SAME_RATE)
    if spec.rate_b_bps == spec.rate_bps:
        spec.rate_b_bps = SAME_RATE


def _apply_preset(c: dict, spec: LinkSpec, errs: Collector) -> dict:
    """Fill the central keys the user left out from a cellular preset (conditions.PRESETS)."""
    pv, ppath = c["preset"]
    name = pv.strip().lower() if isinstance(pv, str) else None
    if name not in PRESETS:
        errs.error(ppath, f"{show(pv)} is not a link preset",
                   "presets: " + ", ".join(PRESETS) + " (docs/network-conditions.md)", pv)
        return c
    out = dict(c)
    preset = PRESETS[name]
    for k, v in preset.items():
        if k == "_series":
            if "rate" not in c and "trace" not in c:
                spec.cond.preset_series = v
                spec.rate_bps = round(v[0])
            continue
        if k not in out:
            out[k] = (v, ppath)
    return out


def parse_side(g: dict, side: str, errs: Collector) -> LinkSpec:
    spec = LinkSpec(cond=Conditions())
    if f"{side}-rate" in g:
        spec.rate_bps = errs.guard(parse_rate, *g[f"{side}-rate"])
    spec.delay_ns = get(g, f"{side}-delay", parse_link_delay, errs, 0, cond=spec.cond)
    parse_conditions(g, f"{side}-", spec, errs)
    parse_duplex(g, f"{side}-duplex", spec, errs)
    if f"{side}-queue" in g:
        qv, qpath = g[f"{side}-queue"]
        spec.queue_a, spec.ecn_a, spec.aqm_a = parse_queue_spec(qv, qpath, errs)
        spec.queue_b, spec.ecn_b, spec.aqm_b = spec.queue_a, spec.ecn_a, spec.aqm_a
        spec.queue_a_path = spec.queue_b_path = qpath
    reject_ecn_key(g, f"{side}-ecn", errs)
    return spec


__all__ = ["CENTRAL_KEYS", "SIDE_CONDITION_KEYS", "channel_keys", "parse_central",
           "parse_conditions", "parse_duplex", "parse_link_delay", "parse_queue_spec",
           "parse_side"]


def channel_keys(spec: LinkSpec, a: str, b: str) -> dict:
    """The resolved keys that put both directions of the link a-b on one channel."""
    return {"channel": "-".join(sorted((a, b)))} if spec.half_duplex else {}
