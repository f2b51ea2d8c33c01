"""Queue disciplines in the experiment file (docs/experiment-file.md, "Queues and AQMs").

A queue is a size (``queue: 1000``) or a mapping naming its discipline and parameters::

    queue: {type: codel, limit: 1000, target: 5ms, interval: 100ms, ecn: true}

``type`` (aliases ``kind``, ``aqm``, ``qdisc``) is one of droptail, drophead, red, codel,
fq_codel, pie, fq_pie (mahimahi's ``infinite`` is an unlimited droptail). The limit is ``limit``
(packets, bytes or BDP multiples), or mahimahi's ``packets`` / ``bytes`` (both may be given);
mahimahi's argument string is accepted too: ``args: "packets=100,target=5,interval=100"``.
Every parameter has Linux's default; the resolved queue lists them all, in the names of the
Rust ``QueueConfig`` (crates/netmodel/src/queue.rs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import ConfigError, Collector, show
from .keys import MS, Key, canon, take
from .units import QueueLimit, parse_bool, parse_int, parse_queue, parse_rate, parse_time


#: The type names accepted, with their canonical kind.
TYPE_NAMES = {
    "droptail": "droptail", "fifo": "droptail", "pfifo": "droptail", "bfifo": "droptail",
    "none": "droptail", "infinite": "droptail",
    "drophead": "drophead", "pfifo_head_drop": "drophead",
    "red": "red", "codel": "codel",
    "fq_codel": "fq_codel", "fqcodel": "fq_codel",
    "pie": "pie", "fq_pie": "fq_pie", "fqpie": "fq_pie",
}
KINDS = ["droptail", "drophead", "red", "codel", "fq_codel", "pie", "fq_pie"]
TYPE_KEYS = ("type", "kind", "aqm", "qdisc")

#: Linux's default limit of each discipline, in packets (droptail/drophead/red: ccbench's 1000).
DEFAULT_LIMIT = {"droptail": 1000, "drophead": 1000, "red": 1000, "codel": 1000,
                 "fq_codel": 10240, "pie": 1000, "fq_pie": 10240}


def _time(what: str):
    return lambda v, p: parse_time(v, p, bare_ns=MS, what=what)


def _bytes(v: Any, p: tuple) -> int:
    """A size in bytes: a bare integer is bytes; ``1514B``, ``32MB``, ``32MiB``."""
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 1:
            raise ConfigError(p, f"{v} is too small", "it must be >= 1 byte", v)
        return v
    q = parse_queue(v, p)
    if q.bytes is None:
        raise ConfigError(p, f"{show(v)} is not a size in bytes",
                          "write bytes: 1514, 1514B, 32MB or 32MiB", v)
    return q.bytes


def _number(lo: float, hi: float | None, what: str, percent: bool = False):
    def parse(v: Any, p: tuple) -> float:
        x = v
        if percent and isinstance(v, str) and v.strip().endswith("%"):
            try:
                x = float(v.strip()[:-1]) / 100
            except ValueError:
                x = None
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise ConfigError(p, f"{show(v)} is not {what}",
                              "write a number" + (" or a percentage (2%)" if percent else ""), v)
        if x < lo or (hi is not None and x > hi):
            raise ConfigError(p, f"{show(v)} is out of range",
                              f"it must be in [{lo}, {hi}]" if hi is not None
                              else f"it must be >= {lo}", v)
        return float(x)
    return parse


def _count(lo: int, hi: int, what: str):
    return lambda v, p: parse_int(v, p, what=what, minimum=lo, maximum=hi)


def _rate(v: Any, p: tuple) -> int:
    r = parse_rate(v, p)
    if r is None:
        raise ConfigError(p, f"{show(v)} is not a finite rate", "e.g. bandwidth: 100Mbit", v)
    return r


def _size(v: Any, p: tuple) -> QueueLimit:
    q = parse_queue(v, p)
    if q.unlimited:
        raise ConfigError(p, f"{show(v)} is not a threshold",
                          "give packets (20), bytes (30KB) or a BDP multiple (0.2bdp)", v)
    return q


@dataclass(frozen=True)
class Param:
    """A parameter: YAML name (+ aliases), parser, Rust field, Linux default (None = none)."""

    name: str
    parse: Callable[[Any, tuple], Any]
    field: str
    default: Any = None
    aliases: tuple[str, ...] = ()


_CODEL = [
    Param("target", _time("a target delay"), "target_ns", 5 * MS),
    Param("interval", _time("an interval"), "interval_ns", 100 * MS),
    Param("ce-threshold", _time("a sojourn time"), "ce_threshold_ns", None),
    Param("mtu", _bytes, "mtu", 1500),
]
_PIE = [
    Param("target", _time("a target delay"), "target_ns", 15 * MS, ("qdelay-ref",)),
    Param("tupdate", _time("an update period"), "tupdate_ns", 15 * MS),
    Param("alpha", _number(0.0, 32.0, "a gain"), "alpha", 0.125),
    Param("beta", _number(0.0, 32.0, "a gain"), "beta", 1.25),
    Param("max-burst", _time("a burst allowance"), "max_burst_ns", 150 * MS),
    Param("ecn", parse_bool, "ecn", False),
    Param("bytemode", parse_bool, "bytemode", False),
    Param("dq-rate-estimator", parse_bool, "dq_rate_estimator", False),
    Param("mtu", _bytes, "mtu", 1500),
]
_FQ = [
    Param("quantum", _bytes, "quantum", 1514),
    Param("memory-limit", _bytes, "memory_limit", 32 << 20),
]

#: Parameters of each discipline besides the limit. RED's ``min``/``max`` are sizes resolved
#: like limits (packets, bytes or BDP multiples) into ``min_packets``/``min_bytes``, ...
PARAMS: dict[str, list[Param]] = {
    "droptail": [],
    "drophead": [],
    "red": [
        Param("min", _size, "min"), Param("max", _size, "max"),
        Param("probability", _number(0.0, 1.0, "a probability", percent=True), "probability",
              0.02, ("max-p",)),
        Param("avpkt", _bytes, "avpkt", 1000),
        Param("burst", _count(1, 2**31, "a number of packets"), "burst", None),
        Param("wlog", _count(1, 31, "an EWMA weight exponent (W = 2^-wlog)"), "wlog", None),
        Param("bandwidth", _rate, "bandwidth_bps", None),
        Param("ecn", parse_bool, "ecn", False),
        Param("harddrop", parse_bool, "harddrop", False),
        Param("nodrop", parse_bool, "nodrop", False),
        Param("gentle", parse_bool, "gentle", False),
    ],
    "codel": _CODEL + [Param("ecn", parse_bool, "ecn", False)],
    "fq_codel": _CODEL + [Param("ecn", parse_bool, "ecn", True)] + _FQ + [
        Param("drop-batch-size", _count(1, 2**31, "a number of packets"), "drop_batch_size",
              64)],
    "pie": _PIE,
    "fq_pie": _PIE + _FQ + [Param("ecn-prob", _count(0, 100, "a percentage"), "ecn_prob", 10)],
}


@dataclass
class Aqm:
    """A queue mapping after parsing: the kind, resolved parameters (Rust names), RED's
    threshold sizes (resolved against the BDP later) and an extra byte limit."""

    kind: str
    params: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)      # "min"/"max" -> QueueLimit
    extra_bytes: int | None = None                 # mahimahi bytes= next to packets=


def _mahimahi_args(text: Any, path: tuple, errs: Collector) -> dict:
    """``"packets=100,target=5"`` -> {"packets": 100, "target": 5} (numbers as numbers)."""
    if not isinstance(text, str):
        errs.error(path, f"{show(text)} is not a mahimahi argument string",
                   'e.g. args: "packets=100,target=5,interval=100"', text)
        return {}
    out: dict = {}
    for part in filter(None, (s.strip() for s in text.split(","))):
        k, sep, v = part.partition("=")
        if not sep or not k.strip():
            errs.error(path, f"{show(part)} is not key=value",
                       'e.g. args: "packets=100,target=5,interval=100"', text)
            continue
        v = v.strip()
        for conv in (int, float):
            try:
                v = conv(v)
                break
            except ValueError:
                pass
        out[k.strip()] = v
    return out


def parse_queue_mapping(value: dict, path: tuple, errs: Collector, default_limit: QueueLimit
                        ) -> tuple[QueueLimit, QueueLimit | None, Aqm]:
    """A queue mapping -> (limit, ECN step threshold or None, Aqm)."""
    kind = "droptail"
    unlimited_type = False
    for k, v in value.items():
        if canon(k) in TYPE_KEYS:
            name = v.strip().lower().replace("-", "_") if isinstance(v, str) else None
            if name not in TYPE_NAMES:
                errs.error(path + (k,), f"unknown queue type {show(v)}",
                           "valid types: " + ", ".join(KINDS), v)
            else:
                kind = TYPE_NAMES[name]
                unlimited_type = name == "infinite"
    entries = {k: (v, path + (k,)) for k, v in value.items()}
    for k, v in value.items():
        if canon(k) == "args":
            for ak, av in _mahimahi_args(v, path + (k,), errs).items():
                entries[ak] = (av, path + (k,))
            del entries[k]
    params = PARAMS[kind]
    keys = [Key("type", TYPE_KEYS[1:]), Key("limit", ("size",)), Key("packets"), Key("bytes")]
    if kind in ("droptail", "drophead"):
        keys.append(Key("ecn-threshold"))
    keys += [Key(p.name, p.aliases) for p in params]
    # take() reports unknown keys with the valid ones of *this* type; paths as written.
    raw = {k: v for k, (v, _) in entries.items()}
    q = take(raw, path, keys, errs, what=f"a {kind} queue")
    aqm = Aqm(kind)
    if q is None:
        return default_limit, None, aqm
    q = {name: (v, entries[p[-1]][1]) for name, (v, p) in q.items()}

    limit = _queue_limit(q, kind, unlimited_type, aqm, errs)
    threshold = None
    if "ecn-threshold" in q:
        tv, tpath = q["ecn-threshold"]
        threshold = errs.guard(parse_queue, tv, tpath)
        if threshold is not None and threshold.unlimited:
            errs.error(tpath, f"{show(tv)} is not an ECN marking threshold",
                       "give the queue length at which ECT packets are CE-marked: packets "
                       "(20), bytes (30KB) or a BDP multiple (0.2bdp)", tv)
            threshold = None
    _aqm_params(q, params, kind, aqm, errs)
    return limit, threshold, aqm


def _queue_limit(q: dict, kind: str, unlimited_type: bool, aqm: Aqm, errs: Collector
                 ) -> QueueLimit:
    """The queue's limit from `limit:` or mahimahi's packets:/bytes: (the default of its type
    otherwise); a packet limit with bytes also keeps the bytes in `aqm.extra_bytes`."""
    limit = QueueLimit(packets=DEFAULT_LIMIT[kind], text=DEFAULT_LIMIT[kind])
    if unlimited_type:
        limit = QueueLimit(text="infinite")
    if "limit" in q:
        if "packets" in q or "bytes" in q:
            errs.error(q["limit"][1], "limit is given twice",
                       "write either limit: <size> or mahimahi's packets: N / bytes: N",
                       q["limit"][0])
        limit = errs.guard(parse_queue, *q["limit"], default=limit)
    elif "packets" in q or "bytes" in q:
        pk = bt = None
        if "packets" in q:
            pk = errs.guard(parse_int, *q["packets"], what="a number of packets", minimum=0,
                            maximum=2**32 - 1)
        if "bytes" in q:
            bt = errs.guard(_bytes, *q["bytes"])
        if pk is not None:
            limit = QueueLimit(packets=pk, text=q["packets"][0])
            aqm.extra_bytes = bt
        elif bt is not None:
            limit = QueueLimit(bytes=bt, text=q["bytes"][0])
    return limit


def _aqm_params(q: dict, params, kind: str, aqm: Aqm, errs: Collector) -> None:
    """The discipline's own parameters into `aqm` (defaults for those not given), and the
    checks between them."""
    for p in params:
        if p.name in q:
            v = errs.guard(p.parse, *q[p.name])
            if p.parse is _size:
                if v is not None:
                    aqm.sizes[p.field] = (v, q[p.name][1])
            elif v is not None:
                aqm.params[p.field] = v
        elif p.parse is not _size:
            aqm.params[p.field] = p.default
    if kind == "red" and aqm.params.get("wlog") is not None and "burst" in q:
        errs.error(q["burst"][1], "burst and wlog both set the EWMA weight", "keep one",
                   q["burst"][0])
    mem = aqm.params.get("memory_limit")
    if "memory-limit" in q and mem is not None and mem < 1514:
        # a limit on the bytes of all flow queues below one full-sized packet is no queue at
        # all (fq_codel enforces it; fq_pie, as Linux, only counts it: a typo either way)
        errs.error(q["memory-limit"][1], f"memory-limit {show(q['memory-limit'][0])} is less "
                   "than one full-sized packet (1514 bytes)",
                   "give at least 1514B; Linux's default is 32MB", q["memory-limit"][0])


def apply_aqm(out: dict, aqm: Aqm, rate_bps: int | None, resolve: Callable[[QueueLimit], dict],
              errors: list, path: tuple) -> None:
    """Complete a resolved ``{"kind", "packets", "bytes"}`` with the discipline's parameters.

    ``resolve`` turns a QueueLimit (RED thresholds) into ``{"packets", "bytes"}``."""
    out["kind"] = aqm.kind
    if aqm.extra_bytes is not None:
        out["bytes"] = aqm.extra_bytes
    out.update(aqm.params)
    if aqm.kind != "red":
        return
    if out.get("bandwidth_bps") is None:
        out["bandwidth_bps"] = rate_bps if rate_bps is not None else 10_000_000
    units = set()
    for name in ("min", "max"):
        out[f"{name}_packets"] = out[f"{name}_bytes"] = None
        if name in aqm.sizes:
            ql, _ = aqm.sizes[name]
            r = resolve(ql)
            out[f"{name}_packets"], out[f"{name}_bytes"] = r["packets"], r["bytes"]
            units.add("packets" if r["packets"] is not None else "bytes")
    def error(e: ConfigError) -> None:
        if not any(str(x) == str(e) for x in errors):  # both directions share one mapping
            errors.append(e)

    if len(units) > 1:
        error(ConfigError(aqm.sizes["max"][1], "RED min and max are in different units",
                          "give both in packets (or BDP multiples) or both in bytes",
                          aqm.sizes["max"][0].text))
        return
    lo = out["min_packets"] if out["min_packets"] is not None else out["min_bytes"]
    hi = out["max_packets"] if out["max_packets"] is not None else out["max_bytes"]
    if lo is not None and hi is not None and lo >= hi:
        error(ConfigError(aqm.sizes["max"][1], f"RED max ({hi}) must be above min ({lo})",
                          "e.g. {type: red, min: 30KB, max: 90KB}", aqm.sizes["max"][0].text))


__all__ = ["Aqm", "KINDS", "PARAMS", "DEFAULT_LIMIT", "parse_queue_mapping", "apply_aqm"]
