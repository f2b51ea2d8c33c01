"""The native ccbench experiment file (see docs/experiment-file.md)."""

from __future__ import annotations

import glob
import os
from typing import Any

from ..cc import sources

from .commands import is_command_scheme, parse_command_scheme
from .conditions import find_file
from .errors import Collector, ConfigError, show
from .keys import MS, SEC, Key, canon, get, take
from .links import LINK_RESERVED, SIDE_CONDITION_KEYS, parse_central, parse_side
from .model import GroupSpec, RunSpec
from .tcpkeys import DEFAULT_TCP, parse_tcp
from .bpfschemes import is_bpf_scheme, parse_bpf_scheme
from .pyschemes import is_python_scheme, parse_python_scheme
from .host import default_noise, noise_model
from .schemes import SCHEMES_DIR, Registry
from .topology import check_dumbbell_groups, parse_group_endpoints, parse_topology
from .workloads import PROBE, UDP, parse_group_workload
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
              Key("rwnd"), Key("src"), Key("dst"), Key("route"), Key("interval"), Key("size")]
GROUP_RESERVED = {f"{side}-{k}": v for side in ("left", "right")
                  for k, v in LINK_RESERVED.items()}

DIRECTIONS = {"->": "->", "right": "->", "rightward": "->",
              "<-": "<-", "left": "<-", "leftward": "<-"}


def _parse_tcp(d, errs: Collector, mss: int, base: dict | None = None) -> dict:
    """The ``tcp`` mapping of ``d`` (top level or a flow group) over ``base`` (defaults)."""
    if "tcp" not in d:
        return dict(DEFAULT_TCP if base is None else base)
    return parse_tcp(*d["tcp"], errs, mss, base)


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
    _group_scheme(g, spec, path, registry, errs)
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
    _group_times(g, spec, duration_ns, errs)
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
    if spec.transport == "dgram":
        _check_dgram_group(g, spec, errs)
    parse_group_endpoints(g, spec, errs)
    return spec


#: Group keys a datagram scheme's flows do not take, and why.
_NOT_DGRAM = {
    "bytes": "a datagram flow sends until stop: (lost datagrams are not resent, so there is no "
             "completion)",
    "app-rate": "the scheme sets the rate (fixed takes rate-mbps)",
    "onoff": "a datagram flow is one bulk stream; use start:/stop: or several groups",
    "arrivals": "arrivals are TCP connections",
    "tcp": "tcp: settings apply to TCP flows only",
    "rwnd": "rwnd applies to TCP flows only",
    "ecn": "the datagram transport does not negotiate ECN",
}


def _check_dgram_group(g: dict, spec: GroupSpec, errs: Collector) -> None:
    """Errors for the keys a datagram scheme's group cannot have (docs/datagram.md)."""
    for key, why in _NOT_DGRAM.items():
        if key in g:
            errs.error(g[key][1], f"{key} does not apply to datagram scheme {spec.scheme}",
                       f"remove it: {why}", g[key][0])


def _group_scheme(g: dict, spec: GroupSpec, path: tuple, registry: Registry | None,
                  errs: Collector) -> None:
    """A group's ``scheme:`` (a command, a BPF or Python scheme, udp, or a registered CC with
    its parameters checked against the registry) into ``spec``."""
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
        if name is not None and name.lower() in (UDP, PROBE):
            # a non-TCP constant-bit-rate source or latency probes (workloads.py), not a CC
            spec.scheme = name.lower()
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
                spec.transport = registry.transport.get(name, "tcp")
                _shipped_files(name, params, ppaths, spath)
                _file_params(params, ppaths, registry.params.get(name, {}), spec, errs)
            spec.scheme = name
        spec.params = params


#: File parameters with a file shipped in the package (python/ccbench/schemes/<dir>/, each with
#: its licence and origin): used when the flow names none. Indigo's published checkpoint.
SHIPPED_FILES = {"indigo": {"model": ("indigo", "model")}}


def shipped_file(scheme: str, param: str) -> str | None:
    """The absolute path of the file shipped for ``scheme``'s ``param``, or None."""
    parts = SHIPPED_FILES.get(scheme, {}).get(param)
    if parts is None:
        return None
    return str(SCHEMES_DIR.joinpath(*parts))


def _shipped_files(name: str, params: dict, ppaths: dict, spath: tuple) -> None:
    """Fill in the shipped file of each file parameter the flow leaves out (found and keyed
    like a file the user names)."""
    for k in SHIPPED_FILES.get(name, {}):
        if k not in params:
            params[k] = shipped_file(name, k)
            ppaths[k] = spath + (k,)


def _file_params(params: dict, ppaths: dict, defaults: dict, spec: GroupSpec,
                 errs: Collector) -> None:
    """A text parameter the registry gives no default (a file the scheme reads, e.g. tao's
    rule table, indigo's checkpoint): the path found as trace files are (relative to the
    experiment file's directory too), made absolute, and the files' SHA-256 kept with the
    flow, so that a changed file re-runs the runs that read it."""
    files = []
    for k, v in params.items():
        if isinstance(v, str) and k in defaults and defaults[k] is None:
            try:
                found, read = _param_files(v, ppaths[k], k)
            except ConfigError as e:
                errs.add(e)
                continue
            params[k] = found
            files += read
    if files:
        spec.file_sha256 = sources.combined(files)


_CKPT_DATA = ".data-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]"


def _param_files(value: str, path: tuple, key: str) -> tuple[str, list[str]]:
    """(the absolute path to hand the scheme, the files it reads) for a file parameter: a file,
    or a TensorFlow checkpoint named by its prefix (``…/model``, no such file) or its
    ``.index`` file, which reads the data shards beside the index too."""
    what = f"the file of parameter {key}"
    try:
        found = os.path.abspath(find_file(value, path, what))
    except ConfigError:
        try:
            found = os.path.abspath(find_file(value + ".index", path, what))[:-len(".index")]
        except ConfigError:
            pass
        else:
            return found, _checkpoint_files(found, value, path)
        raise
    if found.endswith(".index"):
        return found, _checkpoint_files(found[:-len(".index")], value, path)
    return found, [found]


def _checkpoint_files(prefix: str, value: str, path: tuple) -> list[str]:
    data = sorted(glob.glob(glob.escape(prefix) + _CKPT_DATA))
    if not data:
        raise ConfigError(path, f"{show(value)} is a checkpoint index without its data file "
                          f"({os.path.basename(prefix)}.data-00000-of-00001)",
                          "keep the .data file beside the .index file", value)
    return [prefix + ".index"] + data


def _group_times(g: dict, spec: GroupSpec, duration_ns: int | None, errs: Collector) -> None:
    """A group's ``start:`` and ``stop:``, checked against each other and the duration."""
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
