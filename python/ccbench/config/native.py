"""The native ccbench experiment file (see docs/experiment-file.md)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .commands import is_command_scheme, parse_command_scheme
from .pyschemes import is_python_scheme, parse_python_scheme
from .conditions import (PRESETS, Conditions, parse_delay, parse_jitter, parse_loss,
                         parse_promotion, parse_trace)
from .errors import Collector, NotSupportedError, show
from .model import DEFAULT_QUEUE, DEFAULT_TCP, GroupSpec, LinkSpec, RunSpec
from .queues import parse_queue_mapping
from .schemes import Registry
from .topology import check_dumbbell_groups, parse_group_endpoints, parse_topology
from .workloads import UDP, parse_group_workload
from .units import (U64_MAX, QueueLimit, parse_bool, parse_int, parse_payload_size,
                    parse_queue, parse_rate, parse_time)

MS = 10**6
SEC = 10**9


@dataclass(frozen=True)
class Key:
    """A key of a mapping: canonical name, aliases, and whether it is required."""

    name: str
    aliases: tuple[str, ...] = ()
    required: bool = False


TOP_KEYS = [Key("duration", required=True), Key("seed"), Key("mss"),
            Key("sample-interval"), Key("packets", ("record-packets",)),
            Key("hist-bucket"), Key("bdp-rtt"), Key("tcp"), Key("central"),
            Key("topology"), Key("flows", required=True), Key("expect")]
TOP_RESERVED: dict[str, str] = {}  # `expect:` is parsed by ccbench.expect (api.load_experiment)
#: Keys of a campaign file (docs/campaigns.md): run such a file with `ccbench sweep`.
CAMPAIGN_KEYS = ("sweep", "repeats", "repeat", "base", "overrides")
TCP_KEYS = [Key("rwnd"), Key("init-cwnd"), Key("delayed-ack"), Key("sack"), Key("min-rto"),
            Key("initial-rto"), Key("rtt-granularity"), Key("delayed-ack-timeout"),
            Key("slow-start-after-idle"), Key("tlp"), Key("sack-compression"), Key("profile")]
CENTRAL_KEYS = [Key("rate"), Key("delay"), Key("queue", ("queues",)), Key("ecn"), Key("aqm"),
                Key("jitter"), Key("loss"), Key("trace"), Key("promotion"), Key("preset")]
LINK_RESERVED: dict[str, str] = {}
#: Network-condition keys of a side link (``left-<key>``/``right-<key>``), see conditions.py.
SIDE_CONDITION_KEYS = ("jitter", "loss", "trace", "promotion")
QUEUE_SIDE_KEYS = [Key("left"), Key("right")]
ECN_PLACE_HINT = ("ECN marking is set on a queue: queue: {limit: 100, ecn-threshold: 20}; "
                  "flows use ECN with ecn: true on their group")
GROUP_KEYS = [Key("scheme", ("cc",), required=True), Key("params"),
              Key("flows", ("count",)), Key("direction"), Key("start"),
              Key("stop", ("end",)), Key("bytes"), Key("name", ("label",)),
              Key("left-rate"), Key("left-delay"), Key("left-queue", ("left-queues",)),
              Key("right-rate"), Key("right-delay"), Key("right-queue", ("right-queues",)),
              Key("ecn"), Key("tcp"), Key("left-ecn"), Key("right-ecn"), Key("left-aqm"),
              Key("right-aqm")] + [
              Key(f"{side}-{k}") for side in ("left", "right") for k in SIDE_CONDITION_KEYS] + [
              # workloads.py and topology.py
              Key("app-rate", ("rate",)), Key("onoff", ("on-off",)), Key("arrivals"),
              Key("rwnd"), Key("src"), Key("dst"), Key("route")]
GROUP_RESERVED = {f"{side}-{k}": v for side in ("left", "right")
                  for k, v in LINK_RESERVED.items()}
NO_OP_AQM = {"droptail", "none", "fifo"}

DIRECTIONS = {"->": "->", "right": "->", "rightward": "->",
              "<-": "<-", "left": "<-", "leftward": "<-"}


def canon(key: Any) -> str:
    return str(key).replace("_", "-")


def take(mapping: Any, path: tuple, keys: Sequence[Key], errs: Collector,
         reserved: Mapping[str, str] = {}, what: str = "a mapping"
         ) -> dict[str, tuple[Any, tuple]] | None:
    """Check a mapping's keys: returns canonical name -> (value, path as written).

    Unknown keys get the closest valid one suggested; reserved keys fail as
    "not yet supported" unless their value is null; missing required keys are reported.
    ``None`` values count as absent (CoCo-Beholder: absent or null = default)."""
    if not isinstance(mapping, dict):
        errs.error(path, f"{show(mapping)} is not {what}",
                   "expected keys: " + ", ".join(k.name for k in keys), mapping)
        return None
    by_alias = {}
    for k in keys:
        by_alias[k.name] = k
        for a in k.aliases:
            by_alias[a] = k
    out: dict[str, tuple[Any, tuple]] = {}
    written: dict[str, str] = {}
    for raw_key, value in mapping.items():
        kpath = path + (raw_key,)
        c = canon(raw_key)
        if c in reserved:
            no_op = (c.endswith("aqm") or c == "kind") and isinstance(value, str) \
                and value.lower() in NO_OP_AQM
            if value is not None and not no_op:
                errs.add(NotSupportedError(kpath, reserved[c], value))
            continue
        if c not in by_alias:
            valid = sorted(by_alias)
            close = difflib.get_close_matches(c, valid, n=1, cutoff=0.6)
            hint = (f'did you mean "{close[0]}"? ' if close else "") + \
                "valid keys: " + ", ".join(k.name for k in keys)
            errs.error(kpath, f"unknown key {show(raw_key)}", hint, raw_key)
            continue
        k = by_alias[c]
        if k.name in written:
            errs.error(kpath, f"{show(raw_key)} repeats {show(written[k.name])}",
                       "they are the same setting; keep one", raw_key)
            continue
        written[k.name] = str(raw_key)
        if value is None:
            continue
        out[k.name] = (value, kpath)
    for k in keys:
        if k.required and k.name not in out and k.name not in written:
            errs.error(path + (k.name,), f"missing required key {show(k.name)}",
                       _required_hint(k.name), None)
        elif k.required and k.name not in out:
            errs.error(path + (written[k.name],), f"{show(k.name)} must not be null",
                       _required_hint(k.name), None)
    return out


def _required_hint(name: str) -> str:
    return {"duration": "e.g. duration: 30 (seconds)",
            "flows": "add a list of flow groups, e.g. flows: [{scheme: cubic}]",
            "scheme": "e.g. scheme: cubic"}.get(name, "")


def _get(d: dict, name: str, fn, errs: Collector, default=None, **kw):
    if name not in d:
        return default
    value, path = d[name]
    return errs.guard(fn, value, path, default=default, **kw)


# ------------------------------------------------------------------------------------ parse

def _parse_delay(value: Any, path: tuple, cond: Conditions | None = None) -> int:
    if cond is None:
        cond = Conditions()
    return parse_delay(value, path, cond)


def _parse_conditions(d: dict, prefix: str, spec: LinkSpec, errs: Collector) -> None:
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


def _parse_tcp(d, errs: Collector, mss: int, base: dict | None = None) -> dict:
    """The ``tcp`` mapping of ``d`` (top level or a flow group) over ``base`` (defaults)."""
    tcp = dict(DEFAULT_TCP if base is None else base)
    if "tcp" not in d:
        return tcp
    value, path = d["tcp"]
    t = take(value, path, TCP_KEYS, errs)
    if t is None:
        return tcp
    if "profile" in t:
        # a Linux stack generation (profiles.py): its values first, the keys beside it win
        from .profiles import PROFILES, profile_values
        pv, ppath = t["profile"]
        vals = profile_values(pv)
        if vals is None:
            errs.error(ppath, f"unknown TCP profile {show(pv)}",
                       "known profiles: " + ", ".join(PROFILES), pv)
        else:
            tcp.update(vals)
            tcp["profile"] = str(pv).strip().lower()
    tcp["rwnd_bytes"] = _get(t, "rwnd", parse_payload_size, errs, tcp["rwnd_bytes"], mss=mss,
                             what="a window size")
    tcp["init_cwnd"] = _get(t, "init-cwnd", parse_int, errs, tcp["init_cwnd"],
                            what="a number of packets", minimum=1, maximum=2**31)
    tcp["delayed_ack"] = _get(t, "delayed-ack", parse_bool, errs, tcp["delayed_ack"])
    tcp["sack"] = _get(t, "sack", parse_bool, errs, tcp["sack"])
    tcp["min_rto_ns"] = _get(t, "min-rto", parse_time, errs, tcp["min_rto_ns"], bare_ns=MS,
                             what="a timeout")
    tcp["initial_rto_ns"] = _get(t, "initial-rto", parse_time, errs, tcp["initial_rto_ns"],
                                 bare_ns=MS, what="a timeout")
    if "initial-rto" in t and tcp["initial_rto_ns"] == 0:
        errs.error(t["initial-rto"][1], "initial RTO must be > 0", "e.g. 1s",
                   t["initial-rto"][0])
    tcp["rtt_granularity_ns"] = _get(t, "rtt-granularity", parse_time, errs,
                                     tcp["rtt_granularity_ns"], bare_ns=MS,
                                     what="an RTT granularity")
    tcp["delayed_ack_timeout_ns"] = _get(t, "delayed-ack-timeout", parse_time, errs,
                                         tcp["delayed_ack_timeout_ns"], bare_ns=MS,
                                         what="a timeout")
    if "delayed-ack-timeout" in t and tcp["delayed_ack_timeout_ns"] == 0:
        errs.error(t["delayed-ack-timeout"][1], "delayed-ack-timeout must be > 0",
                   "e.g. 40ms (Linux) or 100ms (FreeBSD); to ACK every segment write "
                   "delayed-ack: false", t["delayed-ack-timeout"][0])
    if "slow-start-after-idle" in t:
        # written only when given: the simulator's default (on, as Linux) then applies, and
        # resolved experiments that do not use it stay byte-identical
        tcp["slow_start_after_idle"] = _get(t, "slow-start-after-idle", parse_bool, errs, True)
    # written only when given (or set by a profile), like slow-start-after-idle
    if "tlp" in t:
        tcp["tlp"] = _get(t, "tlp", parse_bool, errs, True)
    if "sack-compression" in t:
        tcp["sack_compression"] = _get(t, "sack-compression", parse_bool, errs, True)
    return tcp


def _parse_queue_spec(value: Any, path: tuple, errs: Collector):
    """A queue: a size, or a mapping ``{type: codel, limit: <size>, ...}`` (queues.py) ->
    (limit, ECN step threshold, Aqm or None)."""
    if not isinstance(value, dict):
        return errs.guard(parse_queue, value, path, default=DEFAULT_QUEUE), None, None
    return parse_queue_mapping(value, path, errs, DEFAULT_QUEUE)


def _reject_ecn_key(d: dict, key: str, errs: Collector) -> None:
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


def _parse_central(d, errs: Collector) -> LinkSpec:
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
        spec.rate_bps = errs.guard(parse_rate, *c["rate"])
    spec.delay_ns = _get(c, "delay", _parse_delay, errs, 0, cond=spec.cond)
    _parse_conditions(c, "", spec, errs)
    _reject_ecn_key(c, "ecn", errs)
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
                    spec.queue_a, spec.ecn_a, spec.aqm_a = _parse_queue_spec(*q["left"], errs)
                    spec.queue_a_path = q["left"][1]
                if "right" in q:
                    spec.queue_b, spec.ecn_b, spec.aqm_b = _parse_queue_spec(*q["right"], errs)
                    spec.queue_b_path = q["right"][1]
        else:
            ql, ecn, aqm = _parse_queue_spec(qv, qpath, errs)
            spec.queue_a = spec.queue_b = ql
            spec.ecn_a = spec.ecn_b = ecn
            spec.aqm_a = spec.aqm_b = aqm
            spec.queue_a_path = spec.queue_b_path = qpath
    return spec


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


def _parse_side(g: dict, side: str, errs: Collector) -> LinkSpec:
    spec = LinkSpec(cond=Conditions())
    if f"{side}-rate" in g:
        spec.rate_bps = errs.guard(parse_rate, *g[f"{side}-rate"])
    spec.delay_ns = _get(g, f"{side}-delay", _parse_delay, errs, 0, cond=spec.cond)
    _parse_conditions(g, f"{side}-", spec, errs)
    if f"{side}-queue" in g:
        qv, qpath = g[f"{side}-queue"]
        spec.queue_a, spec.ecn_a, spec.aqm_a = _parse_queue_spec(qv, qpath, errs)
        spec.queue_b, spec.ecn_b, spec.aqm_b = spec.queue_a, spec.ecn_a, spec.aqm_a
        spec.queue_a_path = spec.queue_b_path = qpath
    _reject_ecn_key(g, f"{side}-ecn", errs)
    return spec


def _parse_scheme(g: dict, path: tuple, errs: Collector
                  ) -> tuple[str | None, dict, tuple, dict[str, tuple]]:
    """-> (name, params, path of the name, path of each param)."""
    value, spath = g["scheme"]
    params: dict[str, Any] = {}
    ppaths: dict[str, tuple] = {}
    name = None
    if isinstance(value, str) and value.strip():
        name = value.strip()
    elif isinstance(value, dict):
        for k, v in value.items():
            if canon(k) == "name":
                if isinstance(v, str) and v.strip():
                    name = v.strip()
                else:
                    errs.error(spath + (k,), f"{show(v)} is not a scheme name",
                               "e.g. scheme: {name: cubic, beta: 717}", v)
                    name = ""
            else:
                params[str(k)] = v
                ppaths[str(k)] = spath + (k,)
        if name is None:
            errs.error(spath + ("name",), "missing required key \"name\"",
                       "e.g. scheme: {name: cubic, beta: 717}", None)
    else:
        errs.error(spath, f"{show(value)} is not a scheme name",
                   "write a name (scheme: cubic) or a mapping (scheme: {name: cubic, ...})",
                   value)
    if "params" in g:
        pv, ppath = g["params"]
        if not isinstance(pv, dict):
            errs.error(ppath, f"{show(pv)} is not a mapping", "e.g. params: {beta: 717}", pv)
        else:
            for k, v in pv.items():
                if str(k) in params:
                    errs.error(ppath + (k,), f"parameter {show(k)} is also set in scheme",
                               "set it in one place", v)
                    continue
                params[str(k)] = v
                ppaths[str(k)] = ppath + (k,)
    for k, v in params.items():
        if isinstance(v, (dict, list)) or v is None:
            errs.error(ppaths[k], f"{show(v)} is not a scheme parameter value",
                       "parameters are numbers, booleans or strings", v)
    return name or None, params, spath, ppaths


def _parse_group(item: Any, i: int, duration_ns: int | None, mss: int,
                 registry: Registry | None, errs: Collector,
                 run_tcp: dict | None = None) -> GroupSpec | None:
    path = ("flows", i)
    g = take(item, path, GROUP_KEYS, errs, reserved=GROUP_RESERVED,
             what="a flow group (a mapping)")
    if g is None:
        return None
    spec = GroupSpec(index=i, scheme="", path=path)
    if "scheme" in g and is_command_scheme(g["scheme"][0]):
        spec.scheme, spec.command = parse_command_scheme(*g["scheme"], errs)
        spec.scheme = spec.scheme or ""
    elif "scheme" in g and is_python_scheme(g["scheme"][0]):
        name, spec.params, spec.python = parse_python_scheme(*g["scheme"], errs, g.get("params"))
        spec.scheme = name or ""
    elif "scheme" in g:
        name, params, spath, ppaths = _parse_scheme(g, path, errs)
        if name is not None and name.lower() == UDP:
            spec.scheme = UDP  # a non-TCP constant-bit-rate source (workloads.py), not a CC
        elif name is not None:
            if registry is not None:
                # report parameter errors at the parameter's own path
                canonical, problems = registry.check(name, {}, spath, ())
                for e in problems:
                    errs.add(e)
                if not problems:
                    for k, v in params.items():
                        _, perrs = registry.check(canonical, {k: v}, spath, ppaths[k][:-1])
                        for e in perrs:
                            errs.add(e)
                name = canonical
            spec.scheme = name
        spec.params = params
    spec.count = _get(g, "flows", parse_int, errs, 1, what="a number of flows", minimum=1,
                      maximum=100_000)
    if "direction" in g:
        dv, dpath = g["direction"]
        key = dv.strip().lower() if isinstance(dv, str) else None
        if key in DIRECTIONS:
            spec.direction = DIRECTIONS[key]
        else:
            errs.error(dpath, f"{show(dv)} is not a direction",
                       'use "->" (or right: left hosts send) or "<-" (or left: right hosts '
                       'send)', dv)
    spec.start_ns = _get(g, "start", parse_time, errs, 0, bare_ns=SEC, what="a start time")
    spec.stop_ns = _get(g, "stop", parse_time, errs, None, bare_ns=SEC, what="a stop time")
    if duration_ns is not None and spec.start_ns is not None and "start" in g:
        if spec.start_ns >= duration_ns:
            errs.error(g["start"][1], f"start {show(g['start'][0])} is at or after the end of "
                       f"the experiment ({_secs(duration_ns)})",
                       f"start must be < duration ({_secs(duration_ns)})", g["start"][0])
    if spec.stop_ns is not None:
        sv, spath_ = g["stop"]
        if spec.start_ns is not None and spec.stop_ns <= spec.start_ns:
            errs.error(spath_, f"stop {show(sv)} is not after start ({_secs(spec.start_ns)})",
                       "stop must be > start", sv)
        elif duration_ns is not None and spec.stop_ns > duration_ns:
            errs.error(spath_, f"stop {show(sv)} is after the end of the experiment",
                       f"stop must be <= duration ({_secs(duration_ns)})", sv)
    spec.bytes = _get(g, "bytes", parse_payload_size, errs, None, mss=mss,
                      what="a flow size")
    if "name" in g:
        nv, npath = g["name"]
        if isinstance(nv, (str, int, float)) and not isinstance(nv, bool):
            spec.name = str(nv)
        else:
            errs.error(npath, f"{show(nv)} is not a name", "write a short text", nv)
    spec.left = _parse_side(g, "left", errs)
    spec.right = _parse_side(g, "right", errs)
    spec.ecn = _get(g, "ecn", parse_bool, errs, None)
    if "tcp" in g:
        spec.tcp = _parse_tcp(g, errs, mss, base=run_tcp)
    if "rwnd" in g:
        rv, rpath = g["rwnd"]
        if spec.tcp is not None and "tcp" in g and isinstance(g["tcp"][0], dict) and any(
                canon(k) == "rwnd" for k in g["tcp"][0]):
            errs.error(rpath, "rwnd is also set in tcp:", "set it in one place", rv)
        spec.tcp = dict(spec.tcp if spec.tcp is not None else (run_tcp or DEFAULT_TCP))
        spec.tcp["rwnd_bytes"] = errs.guard(parse_payload_size, rv, rpath, mss=mss,
                                            what="a receive window",
                                            default=spec.tcp["rwnd_bytes"])
    parse_group_workload(g, spec, mss, errs)
    parse_group_endpoints(g, spec, errs)
    return spec


def _secs(ns: int) -> str:
    return f"{ns / SEC:g}s"


def parse_native(doc: Any, *, seed: int | None = None, registry: Registry | None = None,
                 errs: Collector) -> tuple[RunSpec, list[GroupSpec]] | None:
    if isinstance(doc, dict):
        camp = [k for k in doc if canon(k) in CAMPAIGN_KEYS]
        if camp:
            errs.error((camp[0],), f"{show(camp[0])} makes this a campaign file (many runs), "
                       "not one experiment", "run it with `ccbench sweep FILE` "
                       "(ccbench.sweep), check it with `ccbench sweep FILE --dry-run`",
                       camp[0])
            doc = {k: v for k, v in doc.items() if canon(k) not in CAMPAIGN_KEYS}
    d = take(doc, (), TOP_KEYS, errs, reserved=TOP_RESERVED,
             what="an experiment (a mapping with duration, flows, ...)")
    if d is None:
        return None
    duration = _get(d, "duration", parse_time, errs, None, bare_ns=SEC, what="a duration")
    if duration is not None and duration <= 0:
        errs.error(d["duration"][1], f"duration {show(d['duration'][0])} must be > 0",
                   "e.g. duration: 30 (seconds)", d["duration"][0])
        duration = None
    run = RunSpec(duration_ns=duration or 0)
    if seed is not None:
        run.seed = errs.guard(parse_int, seed, ("seed",), default=1, what="a seed", minimum=0,
                              maximum=U64_MAX)
    else:
        run.seed = _get(d, "seed", parse_int, errs, 1, what="a seed", minimum=0,
                        maximum=U64_MAX)
    run.mss = _get(d, "mss", parse_int, errs, 1448, what="a segment size in bytes",
                   minimum=1, maximum=65535 - 52)
    run.sample_interval_ns = _get(d, "sample-interval", parse_time, errs, 10 * MS,
                                  bare_ns=MS, what="a time")
    if "sample-interval" in d and run.sample_interval_ns == 0:
        errs.error(d["sample-interval"][1], "sample-interval must be > 0", "e.g. 10ms",
                   d["sample-interval"][0])
    run.hist_bucket_ns = _get(d, "hist-bucket", parse_time, errs, 10_000, bare_ns=MS,
                              what="a time")
    if "hist-bucket" in d and run.hist_bucket_ns == 0:
        errs.error(d["hist-bucket"][1], "hist-bucket must be > 0", "e.g. 10us",
                   d["hist-bucket"][0])
    run.record_packets = _get(d, "packets", parse_bool, errs, True)
    run.bdp_rtt_ns = _get(d, "bdp-rtt", parse_time, errs, None, bare_ns=MS, what="an RTT")
    run.tcp = _parse_tcp(d, errs, run.mss)
    run.central = _parse_central(d, errs)
    if "topology" in d:
        if "central" in d:
            errs.error(d["central"][1], "central is the dumbbell's link; this experiment has "
                       "a topology", "declare the link in topology.links instead", None)
        run.topology = parse_topology(*d["topology"], errs)

    groups: list[GroupSpec] = []
    if "flows" in d:
        fv, fpath = d["flows"]
        if not isinstance(fv, list):
            errs.error(fpath, f"{show(fv)} is not a list of flow groups",
                       "write flows: [{scheme: cubic, flows: 2}, ...]", fv)
        elif not fv:
            errs.error(fpath, "the flows list is empty", "add at least one flow group, e.g. "
                       "flows: [{scheme: cubic}]", fv)
        else:
            for i, item in enumerate(fv):
                g = _parse_group(item, i, duration, run.mss, registry, errs, run.tcp)
                if g is not None:
                    groups.append(g)
    if run.topology is None:
        check_dumbbell_groups(groups, errs)
    if errs:
        return None
    return run, groups


__all__ = ["parse_native", "take", "Key"]
