"""The native ccbench experiment file (see docs/experiment-file.md)."""

from __future__ import annotations

from typing import Any

from .commands import is_command_scheme, parse_command_scheme
from .errors import Collector, show
from .keys import MS, SEC, Key, canon, get, take
from .links import LINK_RESERVED, SIDE_CONDITION_KEYS, parse_central, parse_side
from .model import DEFAULT_TCP, GroupSpec, RunSpec
from .profiles import PROFILES, profile_values
from .bpfschemes import is_bpf_scheme, parse_bpf_scheme
from .pyschemes import is_python_scheme, parse_python_scheme
from .host import default_noise, noise_model
from .schemes import Registry
from .topology import check_dumbbell_groups, parse_group_endpoints, parse_topology
from .workloads import UDP, parse_group_workload
from .units import U64_MAX, parse_bool, parse_int, parse_payload_size, parse_time

#: The largest flow size a file may ask for (1 PiB): byte counters and their sums stay exact.
MAX_FLOW_BYTES = 1 << 50

TOP_KEYS = [Key("duration", required=True), Key("seed"), Key("mss"),
            Key("sample-interval"), Key("packets", ("record-packets",)),
            Key("hist-bucket"), Key("bdp-rtt"), Key("tcp"), Key("host"), Key("central"),
            Key("topology"), Key("flows", required=True), Key("expect")]
TOP_RESERVED: dict[str, str] = {}  # `expect:` is parsed by ccbench.expect (api.load_experiment)
#: Keys of a campaign file (docs/campaigns.md): run such a file with `ccbench sweep`.
CAMPAIGN_KEYS = ("sweep", "repeats", "repeat", "base", "overrides")
HOST_KEYS = [Key("noise")]
#: F-RTO generations (`tcp: {frto: …}`; sim/src/tcp/sender/undo.rs)
FRTO_MODES = ("rfc5682", "pre-3.10", "off")
#: TCP Small Queues generations (`tcp: {tsq: …}`) and their `tcp_limit_output_bytes` default
TSQ_MODES = {"off": None, "3.6": 131072, "3.12": 131072, "current": 4 << 20}
TCP_KEYS = [Key("rwnd"), Key("rmem"), Key("wmem"), Key("moderate-rcvbuf"), Key("adv-win-scale"), Key("init-rwnd"), Key("drs"), Key("cc-generation"), Key("count-acks"), Key("push-ack"), Key("init-cwnd"), Key("delayed-ack"), Key("sack"), Key("min-rto"),
            Key("initial-rto"), Key("rtt-granularity"), Key("delayed-ack-timeout"),
            Key("slow-start-after-idle"), Key("tlp"), Key("rack"), Key("prr"), Key("early-retransmit"), Key("sack-compression"), Key("profile"),
            Key("pacing"), Key("min-tso-segs"), Key("undo"), Key("frto"),
            Key("tsq"), Key("limit-output-bytes")]
GROUP_KEYS = [Key("scheme", ("cc",), required=True), Key("params"),
              Key("flows", ("count",)), Key("direction"), Key("start"),
              Key("stop", ("end",)), Key("bytes"), Key("name", ("label",)),
              Key("left-rate"), Key("left-delay"), Key("left-queue", ("left-queues",)),
              Key("right-rate"), Key("right-delay"), Key("right-queue", ("right-queues",)),
              Key("ecn"), Key("tcp"), Key("left-ecn"), Key("right-ecn"), Key("left-aqm"),
              Key("right-aqm"), Key("left-duplex"), Key("right-duplex")] + [
              Key(f"{side}-{k}") for side in ("left", "right") for k in SIDE_CONDITION_KEYS] + [
              # workloads.py and topology.py
              Key("app-rate", ("rate",)), Key("onoff", ("on-off",)), Key("arrivals"),
              Key("rwnd"), Key("src"), Key("dst"), Key("route")]
GROUP_RESERVED = {f"{side}-{k}": v for side in ("left", "right")
                  for k, v in LINK_RESERVED.items()}

DIRECTIONS = {"->": "->", "right": "->", "rightward": "->",
              "<-": "<-", "left": "<-", "leftward": "<-"}


def _parse_mem(entry, errs: Collector, mss: int, key: str, example: str) -> list[int] | None:
    """``rmem``/``wmem: [min, default, max]`` as Linux's tcp_rmem/tcp_wmem (sizes, or the
    sysctl's text), min ≤ default ≤ max."""
    value, path = entry
    fix = f"write {key}: [min, default, max], e.g. {example} (Linux's tcp_{key})"
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        errs.error(path, f"{key} {show(value)} is not three sizes", fix, value)
        return None
    out = []
    for i, v in enumerate(value):
        n = errs.guard(parse_payload_size, v, path + (i,), mss=mss, what="a buffer size",
                       default=None)
        if n is None:
            return None
        out.append(n)
    if not out[0] <= out[1] <= out[2]:
        errs.error(path, f"{key} {show(value)} is not min ≤ default ≤ max", fix, value)
        return None
    return out


def _parse_rmem(entry, errs: Collector, mss: int) -> list[int] | None:
    """``rmem``: its default must hold a segment's window (half the buffer is window)."""
    out = _parse_mem(entry, errs, mss, "rmem", "[4096, 131072, 32MiB]")
    if out is not None and out[1] < 2 * mss:
        errs.error(entry[1], f"rmem default {out[1]} bytes holds less than one segment's window "
                   f"(half the buffer is window)", f"use at least {2 * mss * 2} bytes; Linux: "
                   "131072", entry[0])
        return None
    return out


def _parse_wmem(entry, errs: Collector, mss: int) -> list[int] | None:
    """``wmem``: its max must hold two segments' skbs (Linux's SOCK_MIN_SNDBUF, about
    2 × (MSS + 832 bytes of skb head))."""
    out = _parse_mem(entry, errs, mss, "wmem", "[4096, 16384, 4MiB]")
    if out is not None and out[2] < 2 * (mss + 832):
        errs.error(entry[1], f"wmem max {out[2]} bytes holds less than two segments "
                   f"(each costs its payload and an 832-byte skb head)",
                   f"use at least {2 * (mss + 832)} bytes; Linux: 4194304", entry[0])
        return None
    return out


def _parse_generation(entry, errs: Collector) -> int | None:
    """``cc-generation``: a Linux release ("3.10", "2.6.36") as major·10000 + minor·100 +
    patch, or ``current`` (0)."""
    value, path = entry
    if isinstance(value, float):
        errs.error(path, f"cc-generation {show(value)} is a number, not a release",
                   f'quote the release, e.g. "{value}0" or "2.6.36": YAML reads 3.10 as 3.1', value)
        return None
    if isinstance(value, int) and not isinstance(value, bool) and (value == 0 or 10000 <= value < 1000000):
        return value
    text = str(value).strip().lower()
    if text in ("current", "none"):
        return 0
    parts = text.removeprefix("linux-").split(".")
    if not isinstance(value, bool) and 2 <= len(parts) <= 3 and all(p.isdigit() for p in parts) \
            and all(int(p) < 100 for p in parts):
        nums = [int(p) for p in parts] + [0]
        return nums[0] * 10000 + nums[1] * 100 + nums[2]
    errs.error(path, f"cc-generation {show(value)} is not a Linux release",
               'write a release such as "3.10" or "2.6.36" (quoted), or current', value)
    return None


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
        pv, ppath = t["profile"]
        vals = profile_values(pv)
        if vals is None:
            errs.error(ppath, f"unknown TCP profile {show(pv)}",
                       "known profiles: " + ", ".join(PROFILES), pv)
        else:
            tcp.update(vals)
            tcp["profile"] = str(pv).strip().lower()
    if "rwnd" in t:
        # a fixed window: no receive-buffer autotuning (written only when given)
        tcp["rwnd_bytes"] = get(t, "rwnd", parse_payload_size, errs, None, mss=mss,
                                what="a window size")
    if "rmem" in t:
        rmem = _parse_rmem(t["rmem"], errs, mss)
        if rmem is not None:
            tcp["rmem"] = rmem
    if "wmem" in t:
        wmem = _parse_wmem(t["wmem"], errs, mss)
        if wmem is not None:
            tcp["wmem"] = wmem
    if "moderate-rcvbuf" in t:
        tcp["moderate_rcvbuf"] = get(t, "moderate-rcvbuf", parse_bool, errs, True)
    # receive-buffer generations (set by the old profiles; written only when given)
    if "adv-win-scale" in t:
        av = t["adv-win-scale"][0]
        if isinstance(av, str) and av.strip().lower() in ("none", "scaling-ratio"):
            tcp.pop("adv_win_scale", None)
        else:
            aws = get(t, "adv-win-scale", parse_int, errs, None, what="tcp_adv_win_scale",
                      minimum=-31, maximum=31)
            if aws is not None:
                tcp["adv_win_scale"] = aws
    if "init-rwnd" in t:
        iv = t["init-rwnd"][0]
        if isinstance(iv, str) and iv.strip().lower() == "none":
            tcp.pop("init_rwnd", None)
        else:
            n = get(t, "init-rwnd", parse_int, errs, None, what="a number of segments",
                    minimum=1, maximum=65535)
            if n is not None:
                tcp["init_rwnd"] = n
    if "cc-generation" in t:
        g = _parse_generation(t["cc-generation"], errs)
        if g == 0:
            tcp.pop("cc_generation", None)
        elif g is not None:
            tcp["cc_generation"] = g
    if "count-acks" in t:
        tcp["count_acks"] = get(t, "count-acks", parse_bool, errs, False)
    if "push-ack" in t:
        tcp["push_ack"] = get(t, "push-ack", parse_bool, errs, True)
    if "drs" in t:
        dv, dpath = t["drs"]
        if isinstance(dv, str) and dv.strip().lower() in ("legacy", "current"):
            tcp["legacy_drs"] = dv.strip().lower() == "legacy"
        else:
            errs.error(dpath, f"drs {show(dv)} is not legacy or current",
                       "write drs: legacy (receive-buffer autotuning before Linux 4.2) or "
                       "drs: current", dv)
    tcp["init_cwnd"] = get(t, "init-cwnd", parse_int, errs, tcp["init_cwnd"],
                           what="a number of packets", minimum=1, maximum=2**31)
    tcp["delayed_ack"] = get(t, "delayed-ack", parse_bool, errs, tcp["delayed_ack"])
    tcp["sack"] = get(t, "sack", parse_bool, errs, tcp["sack"])
    tcp["min_rto_ns"] = get(t, "min-rto", parse_time, errs, tcp["min_rto_ns"], bare_ns=MS,
                            what="a timeout")
    tcp["initial_rto_ns"] = get(t, "initial-rto", parse_time, errs, tcp["initial_rto_ns"],
                                bare_ns=MS, what="a timeout")
    if "initial-rto" in t and tcp["initial_rto_ns"] == 0:
        errs.error(t["initial-rto"][1], "initial RTO must be > 0", "e.g. 1s",
                   t["initial-rto"][0])
    tcp["rtt_granularity_ns"] = get(t, "rtt-granularity", parse_time, errs,
                                    tcp["rtt_granularity_ns"], bare_ns=MS,
                                    what="an RTT granularity")
    tcp["delayed_ack_timeout_ns"] = get(t, "delayed-ack-timeout", parse_time, errs,
                                        tcp["delayed_ack_timeout_ns"], bare_ns=MS,
                                        what="a timeout")
    if "delayed-ack-timeout" in t and tcp["delayed_ack_timeout_ns"] > 10 * 1000 * MS:
        errs.error(t["delayed-ack-timeout"][1], "delayed-ack-timeout above 10 s",
                   "Linux delays an ACK by 40-200 ms (TCP_DELACK_MIN/MAX), FreeBSD 100 ms; "
                   "to ACK every segment write delayed-ack: false", t["delayed-ack-timeout"][0])
    if "delayed-ack-timeout" in t and tcp["delayed_ack_timeout_ns"] == 0:
        errs.error(t["delayed-ack-timeout"][1], "delayed-ack-timeout must be > 0",
                   "e.g. 40ms (Linux) or 100ms (FreeBSD); to ACK every segment write "
                   "delayed-ack: false", t["delayed-ack-timeout"][0])
    if "slow-start-after-idle" in t:
        # written only when given: the simulator's default (on, as Linux) then applies, and
        # resolved experiments that do not use it stay byte-identical
        tcp["slow_start_after_idle"] = get(t, "slow-start-after-idle", parse_bool, errs, True)
    # written only when given (or set by a profile), like slow-start-after-idle
    if "tlp" in t:
        tcp["tlp"] = get(t, "tlp", parse_bool, errs, True)
    if "rack" in t:
        tcp["rack"] = get(t, "rack", parse_bool, errs, True)
    if "prr" in t:
        tcp["prr"] = get(t, "prr", parse_bool, errs, True)
    if "early-retransmit" in t:
        tcp["early_retransmit"] = get(t, "early-retransmit", parse_bool, errs, True)
    if "sack-compression" in t:
        tcp["sack_compression"] = get(t, "sack-compression", parse_bool, errs, True)
    if "min-tso-segs" in t:
        # net.ipv4.tcp_min_tso_segs (default 2); written only when given
        tcp["min_tso_segs"] = get(t, "min-tso-segs", parse_int, errs, 2,
                                  what="a number of segments", minimum=1, maximum=255)
    if "undo" in t:
        # undo of spurious reductions (D-SACK, timestamps, F-RTO); written only when given
        tcp["undo"] = get(t, "undo", parse_bool, errs, True)
    if "frto" in t:
        fv, fpath = t["frto"]
        key = str(fv).strip().lower() if isinstance(fv, (str, int)) else None
        key = {"0": "off", "false": "off", "none": "off", "2": "rfc5682", "rfc-5682": "rfc5682",
               "pre3.10": "pre-3.10", "legacy": "pre-3.10"}.get(key, key)
        if key in FRTO_MODES:
            tcp["frto"] = key
        else:
            errs.error(fpath, f"frto {show(fv)} is not one of {', '.join(FRTO_MODES)}",
                       "write frto: rfc5682 (Linux since 3.10, the default), frto: pre-3.10 "
                       "(2.6.22-3.9: a spurious timeout is halved, not undone) or frto: off", fv)
    if "tsq" in t:
        # TCP Small Queues on the sender's first link; written only when given (off by default)
        qv, qpath = t["tsq"]
        key = str(qv).strip().lower() if isinstance(qv, (str, int, float, bool)) else None
        key = {"false": "off", "none": "off", "true": "current", "on": "current",
               "3.12.0": "3.12", "3.6.0": "3.6", "linux": "current"}.get(key, key)
        if key in TSQ_MODES:
            tcp["tsq"] = key
            if TSQ_MODES[key] is not None and "limit-output-bytes" not in t:
                tcp["limit_output_bytes"] = TSQ_MODES[key]
        else:
            errs.error(qpath, f"tsq {show(qv)} is not one of {', '.join(TSQ_MODES)}",
                       "write tsq: current (today's TCP Small Queues), tsq: 3.12 (the dynamic "
                       "limit of 3.12-4.x), tsq: 3.6 (a fixed 128 KiB) or tsq: off (the default)",
                       qv)
    if "limit-output-bytes" in t:
        # net.ipv4.tcp_limit_output_bytes, TSQ's cap
        tcp["limit_output_bytes"] = get(t, "limit-output-bytes", parse_payload_size, errs,
                                        4 << 20, mss=mss, what="a size")
    if "pacing" in t:
        # fq: the sender paces at Linux's default rate (tcp_update_pacing_rate: 200 % of
        # cwnd/srtt in slow start, 120 % after) whatever its CC, as with the fq qdisc;
        # written only when given, like slow-start-after-idle
        pv, ppath = t["pacing"]
        if isinstance(pv, str) and pv.strip().lower() in ("fq", "none", "off"):
            tcp["pacing_default"] = pv.strip().lower() == "fq"
        else:
            errs.error(ppath, f"pacing {show(pv)} is not fq or none",
                       "write pacing: fq (pace every flow as the fq qdisc does) or pacing: none "
                       "(only CCs that ask for it are paced, the default)", pv)
    return tcp


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
    elif "scheme" in g and is_bpf_scheme(g["scheme"][0]):
        name, spec.bpf = parse_bpf_scheme(*g["scheme"], errs)
        spec.scheme = name or ""
    elif "scheme" in g and is_python_scheme(g["scheme"][0]):
        name, spec.params, spec.python, spec.kernel_cc = parse_python_scheme(*g["scheme"], errs, g.get("params"))
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
    spec.count = get(g, "flows", parse_int, errs, 1, what="a number of flows", minimum=1,
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
    spec.start_ns = get(g, "start", parse_time, errs, 0, bare_ns=SEC, what="a start time")
    spec.stop_ns = get(g, "stop", parse_time, errs, None, bare_ns=SEC, what="a stop time")
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
    spec.bytes = get(g, "bytes", parse_payload_size, errs, None, mss=mss,
                     what="a flow size")
    if spec.bytes is not None and spec.bytes > MAX_FLOW_BYTES:
        errs.error(g["bytes"][1], f"a flow of {spec.bytes:,} bytes (at most 1 PiB, "
                   f"{MAX_FLOW_BYTES:,})", "leave bytes: out for a flow that sends until the "
                   "end", g["bytes"][0])
        spec.bytes = None
    if "name" in g:
        nv, npath = g["name"]
        if isinstance(nv, (str, int, float)) and not isinstance(nv, bool):
            spec.name = str(nv)
        else:
            errs.error(npath, f"{show(nv)} is not a name", "write a short text", nv)
    spec.left = parse_side(g, "left", errs)
    spec.right = parse_side(g, "right", errs)
    spec.ecn = get(g, "ecn", parse_bool, errs, None)
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
                                            default=spec.tcp.get("rwnd_bytes"))
    parse_group_workload(g, spec, mss, errs)
    parse_group_endpoints(g, spec, errs)
    return spec


def _secs(ns: int) -> str:
    return f"{ns / SEC:g}s"


def _parse_host(value: Any, path: tuple, errs: Collector) -> dict[str, Any] | None:
    """The top-level ``host:`` mapping -> the resolved ``host_noise`` (host.py)."""
    h = take(value, path, HOST_KEYS, errs, what="a mapping (host: {noise: exact})")
    if h is None or "noise" not in h:
        return default_noise()
    return noise_model(h["noise"][0], h["noise"][1], errs)


def parse_native(doc: Any, *, seed: int | None = None, registry: Registry | None = None,
                 errs: Collector) -> tuple[RunSpec, list[GroupSpec]] | None:
    if isinstance(doc, dict):
        camp = [k for k in doc if canon(k) in CAMPAIGN_KEYS]
        if camp:
            errs.error((camp[0],), f"{show(camp[0])} makes this a campaign file (many runs), "
                       "not one experiment", "run it with `ccbench sweep FILE` "
                       "(ccbench.sweep), check it with `ccbench sweep FILE --dry-run`",
                       camp[0])
            if any(canon(k) == "base" for k in camp):
                return None  # its experiment is the base file: nothing else here to check
            doc = {k: v for k, v in doc.items() if canon(k) not in CAMPAIGN_KEYS}
    d = take(doc, (), TOP_KEYS, errs, reserved=TOP_RESERVED,
             what="an experiment (a mapping with duration, flows, ...)")
    if d is None:
        return None
    duration = get(d, "duration", parse_time, errs, None, bare_ns=SEC, what="a duration")
    if duration is not None and duration <= 0:
        errs.error(d["duration"][1], f"duration {show(d['duration'][0])} must be > 0",
                   "e.g. duration: 30 (seconds)", d["duration"][0])
        duration = None
    run = RunSpec(duration_ns=duration or 0)
    if seed is not None:
        run.seed = errs.guard(parse_int, seed, ("seed",), default=1, what="a seed", minimum=0,
                              maximum=U64_MAX)
    else:
        run.seed = get(d, "seed", parse_int, errs, 1, what="a seed", minimum=0,
                       maximum=U64_MAX)
    # Linux's smallest MSS (TCP_MIN_MSS, include/net/tcp.h) up to an IPv4 datagram's room
    run.mss = get(d, "mss", parse_int, errs, 1448, what="a segment size in bytes",
                  minimum=88, maximum=65535 - 52)
    run.sample_interval_ns = get(d, "sample-interval", parse_time, errs, 10 * MS,
                                 bare_ns=MS, what="a time")
    if "sample-interval" in d and run.sample_interval_ns == 0:
        errs.error(d["sample-interval"][1], "sample-interval must be > 0", "e.g. 10ms",
                   d["sample-interval"][0])
    run.hist_bucket_ns = get(d, "hist-bucket", parse_time, errs, 10_000, bare_ns=MS,
                             what="a time")
    if "hist-bucket" in d and run.hist_bucket_ns == 0:
        errs.error(d["hist-bucket"][1], "hist-bucket must be > 0", "e.g. 10us",
                   d["hist-bucket"][0])
    run.record_packets = get(d, "packets", parse_bool, errs, True)
    run.bdp_rtt_ns = get(d, "bdp-rtt", parse_time, errs, None, bare_ns=MS, what="an RTT")
    run.tcp = _parse_tcp(d, errs, run.mss)
    if "host" in d:
        run.host_noise = _parse_host(*d["host"], errs)
    run.central = parse_central(d, errs)
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


__all__ = ["CAMPAIGN_KEYS", "GROUP_KEYS", "TOP_KEYS", "parse_native"]
