"""Settings that parse but make a run meaningless (issue 11, "silent nonsense").

:func:`check` looks at a resolved experiment (docs/architecture.md) and returns
``(errors, warnings)``, each a list of :class:`ConfigError` naming the field as the user
wrote it (``central.queue``, ``flows[1].left-queue``, ``tcp.min-rto``). Errors are settings
that cannot give a result at all (a queue of 0 packets: the handshake never completes) or
that the simulator cannot take (an RTO above Linux's 120 s ceiling); warnings are results
that would be technically valid but are probably not what was meant (a flow that lives
for fewer than four RTTs). :func:`seed_note` says when the seed cannot change anything.

It runs after the structural checks (every value has its type and unit), so it may assume
a well-formed resolved experiment; it imports nothing from the rest of ccbench.config but
the error type.
"""
from __future__ import annotations

from .errors import ConfigError

#: Linux's TCP_RTO_MAX (include/net/tcp.h): the simulator clamps every RTO to it, so a
#: larger min-rto cannot be honoured (the clamp would have min > max).
TCP_RTO_MAX_NS = 120_000_000_000
#: IP + TCP + timestamp header bytes (config.model.HEADER_BYTES, repeated to stay a leaf).
HEADER = 52
#: Schemes whose congestion control draws random numbers (crates/sim/src/cc/*.rs using
#: cc::rng) and queue kinds that do (crates/netmodel/src/qdisc).
RANDOM_SCHEMES = {"bbr", "bbr3", "cdg", "hldg", "nv"}
RANDOM_QUEUES = {"red", "pie", "fq_pie", "fq_codel"}
#: Parameter pairs of a scheme where the first must not exceed the second, with their
#: defaults (Linux net/ipv4/tcp_vegas.c: alpha = 2, beta = 4 segments of queue).
ORDERED_PARAMS = {"vegas": [("alpha", "beta", 2.0, 4.0)]}


def _ms(ns: float) -> str:
    return f"{ns / 1e6:g} ms" if ns < 1e9 else f"{ns / 1e9:g} s"


def sim_refusal(exp: dict) -> ConfigError | None:
    """Why the simulator cannot run the resolved experiment ``exp``, or None: a command scheme
    (a real program: the kernel backend only) or a BPF scheme given as an object (.o) rather
    than the C source the simulator compiles. The one rule behind ``ccbench run`` (backends.sim)
    and campaign planning."""
    fl = [f for f in exp.get("flows", []) if f.get("command")]
    if fl:
        f = fl[0]
        return ConfigError(("flows", f["group"], "scheme"),
                           f"{f['label']} is a command scheme ({f['command']['kind']} "
                           f"{f['scheme']!r})", "command schemes run only on --backend emu")
    fl = [f for f in exp.get("flows", []) if (f.get("bpf") or {}).get("path", "").endswith(".o")]
    if fl:
        f = fl[0]
        return ConfigError(("flows", f["group"], "scheme", "bpf"),
                           f"{f['bpf']['path']} is a BPF object; the simulator "
                           "runs BPF schemes from their C source",
                           "Fix: give the .c file, or run with --backend emu")
    return None


class ConfigWarning(UserWarning):
    """A setting that gives a valid but probably meaningless result."""


class _Out:
    def __init__(self):
        self.errors: list[ConfigError] = []
        self.warnings: list[ConfigError] = []

    def error(self, path, message, hint="", value=None):
        self._add(self.errors, ConfigError(path, message, hint, value))

    def warn(self, path, message, hint="", value=None):
        self._add(self.warnings, ConfigError(path, message, hint, value))

    @staticmethod
    def _add(into: list, e: ConfigError) -> None:
        # both directions of a link come from one setting: say it once
        if not any(str(x) == str(e) for x in into):
            into.append(e)


def _link_path(exp: dict, link: dict, key: str) -> tuple:
    """The YAML path of ``key`` (queue, delay, loss, rate) of ``link``."""
    role = link.get("role")
    if role in ("left", "right"):
        owners = exp.get("_link_groups")
        if owners is None:   # link id -> the group of the first flow crossing it, once
            owners = {}
            for f in exp.get("flows", []):
                for i in list(f.get("path", [])) + list(f.get("rev_path", [])):
                    owners.setdefault(i, f.get("group", 0))
            exp["_link_groups"] = owners
        if link["id"] in owners:
            return ("flows", owners[link["id"]], f"{role}-{key}")
    if role == "central":
        return ("central", key)
    return ("links", link.get("name", link["id"]), key)


def _tcp(out: _Out, tcp: dict, path: tuple, mss: int) -> None:
    for key, field in (("min_rto_ns", "min-rto"), ("initial_rto_ns", "initial-rto")):
        v = tcp.get(key)
        if v is not None and v > TCP_RTO_MAX_NS:
            out.error(path + (field,), f"{_ms(v)} is above Linux's maximum RTO of 120 s "
                      "(TCP_RTO_MAX), which every RTO is clamped to",
                      "use at most 120s", v)
    if tcp.get("min_rto_ns") == 0:
        out.warn(path + ("min-rto",), "0 lets the RTO fall to the RTT itself: every "
                 "delay spike is a spurious timeout", "Linux's minimum is 200ms (1 jiffy "
                 "with rto_min route option)")
    rwnd = tcp.get("rwnd_bytes")
    if rwnd is not None and rwnd < mss:
        out.error(path + ("rwnd",), f"a receive window of {rwnd} bytes is smaller than one "
                  f"segment ({mss} bytes): the sender can never send a full packet",
                  f"use at least the mss ({mss}B); e.g. 64KB")
    if tcp.get("init_cwnd") == 0:
        out.error(path + ("init-cwnd",), "an initial window of 0 segments never sends",
                  "use at least 1 (Linux: 10)")


def _queue(out: _Out, exp: dict, link: dict, pkt: int) -> None:
    q = link.get("queue") or {}
    path = _link_path(exp, link, "queue")
    kind = q.get("kind")
    packets, nbytes = q.get("packets"), q.get("bytes")
    serialises = link.get("rate_bps") is not None or link.get("rate_trace") is not None
    # an unlimited link never makes a packet wait, so its limit does not matter
    if serialises and (packets == 0 or (nbytes is not None and nbytes < pkt)):
        lim = "0 packets" if packets == 0 else f"{nbytes} bytes"
        out.error(path, f"a queue limit of {lim} drops every packet that has to wait "
                  f"(even the handshake's), so the flows through it never start",
                  f"use at least 1 packet ({pkt} bytes); e.g. 1bdp or 100")
        return
    for unit, limit in (("packets", packets), ("bytes", nbytes)):
        k = q.get(f"ecn_threshold_{unit}")
        if k is not None and limit is not None and k >= limit:
            out.error(path + ("ecn-threshold",), f"the ECN threshold ({k} {unit}) is not "
                      f"below the queue limit ({limit} {unit}): the queue drops before "
                      "it would ever mark", "use a threshold below the limit, e.g. 20% of it")
    if kind in ("codel", "fq_codel"):
        for key, field in (("target_ns", "target"), ("interval_ns", "interval")):
            if q.get(key) == 0:
                out.error(path + (field,), f"a CoDel {field} of 0 makes every packet "
                          "late: the queue drops whatever waits", "Linux: target 5ms, "
                          "interval 100ms")
        t, i = q.get("target_ns"), q.get("interval_ns")
        if t and i and t >= i:
            out.warn(path + ("target",), f"target {_ms(t)} is not below interval {_ms(i)}: "
                     "CoDel needs the sojourn time above target for a whole interval, so "
                     "it will rarely act", "target is usually 5-10% of interval")
    if kind in ("pie", "fq_pie"):
        if q.get("tupdate_ns") == 0:
            out.error(path + ("tupdate",), "a PIE update period of 0 never updates the drop "
                      "probability (and would loop)", "Linux: 15ms, RFC 8033: 30ms")
        if q.get("target_ns") == 0:
            out.error(path + ("target",), "a PIE target delay of 0 drives the drop "
                      "probability to 1", "Linux: 15ms")


def _loss(out: _Out, exp: dict, link: dict) -> None:
    loss = link.get("loss")
    if not loss:
        return
    path = _link_path(exp, link, "loss")
    if loss.get("kind") == "bernoulli" and loss.get("p", 0) >= 1:
        out.error(path, f"a loss rate of {loss['p']:.0%} drops every packet: no flow "
                  "through the link can deliver anything",
                  "use a rate below 1, e.g. 1%")
    elif loss.get("kind") == "bernoulli" and loss.get("p", 0) > 0.5:
        out.warn(path, f"a loss rate of {loss['p']:.0%} leaves TCP almost nothing but "
                 "timeouts", "use at most a few %")
    elif loss.get("kind") == "gilbert":
        if loss.get("p", 0) > 0 and loss.get("r", 1) == 0 and loss.get("h", 0) == 0:
            out.error(path, "Gilbert-Elliott loss with r = 0 and h = 0: the link enters the "
                      "bad state and then loses every packet forever",
                      "give r > 0 (the chance to leave the bad state)")


def _slow_link(out: _Out, exp: dict, link: dict, pkt: int, duration: int) -> None:
    """A link rate, jitter or radio promotion that holds one packet for the whole run."""
    if not duration:
        return
    rate = link.get("rate_bps")
    # a trace's rate_bps is its mean: a mostly idle trace may still carry a burst
    if rate and link.get("rate_trace") is None and pkt * 8 * 1e9 / rate >= duration:
        out.error(_link_path(exp, link, "rate"), f"at {rate:g} bit/s one {pkt}-byte packet "
                  f"takes {_ms(pkt * 8 * 1e9 / rate)} to send, not shorter than the run "
                  f"({_ms(duration)}): nothing crosses the link before the end",
                  "rates are bit/s with a unit (100Mbit, 10kbit) or bare Mbit/s")
    tr = link.get("rate_trace") or {}
    if tr.get("kind") == "series":
        during = [v for t, v in tr.get("points", []) if t < duration]
        if during and not any(during):
            out.error(_link_path(exp, link, "trace"), f"the rate series is 0 for the whole run "
                      f"({_ms(duration)}): nothing crosses the link",
                      "give the series a rate above 0 somewhere in the run")
    j = link.get("jitter") or {}
    for d in ([j] if "dist" in j else [v for v in j.values() if isinstance(v, dict)]):
        amount = d.get("jitter_ns", d.get("max_ns", 0)) or 0
        if amount >= duration:
            out.error(_link_path(exp, link, "jitter"), f"a jitter of up to {_ms(amount)} is "
                      f"not shorter than the run ({_ms(duration)}): packets may be held past "
                      "the end", "jitter is usually a fraction of the delay (e.g. 2ms)")
            break
    promo = link.get("promotion") or {}
    if promo.get("delay_ns", 0) >= duration:
        out.error(_link_path(exp, link, "promotion") + ("delay",), f"a promotion delay of "
                  f"{_ms(promo['delay_ns'])} is not shorter than the run ({_ms(duration)}): "
                  "the first packet waits past the end", "radio promotion takes 0.1-2 s")


def _half_duplex(out: _Out, exp: dict, link: dict, pkt: int) -> None:
    """A shared half-duplex channel (``duplex: half``) whose delay dwarfs a frame's
    transmission: each frame holds it for the whole delay, so it carries a few frames per
    second where the rate suggests thousands (ns-3's CSMA bus; docs/simulator.md)."""
    rate = link.get("rate_bps")
    if not link.get("channel") or not rate:
        return
    tx = (pkt + link.get("overhead_bytes", 0)) * 8e9 / rate
    delay = link.get("delay_ns", 0)
    if delay > 10 * tx:
        fps = 1e9 / (tx + delay)
        bits = fps * pkt * 8
        carried = f"{bits / 1e6:.3g} Mbit/s" if bits >= 1e6 else f"{bits / 1e3:.3g} kbit/s"
        out.warn(_link_path(exp, link, "duplex"), f"every frame holds this half-duplex channel "
                 f"for its {_ms(delay)} propagation too: at most {fps:.3g} frames per second for "
                 f"both directions together ({carried} of {pkt}-byte packets on a "
                 f"{rate / 1e6:g} Mbit/s channel)",
                 "this is ns-3's CSMA bus; duplex: full models a point-to-point link")


def check(exp: dict) -> tuple[list[ConfigError], list[ConfigError]]:
    """``(errors, warnings)`` of the resolved experiment ``exp``."""
    exp = {**exp, "_link_groups": None}   # a private index, not added to the caller's dict
    out = _Out()
    duration = exp.get("duration_ns") or 0
    mss = int(exp.get("mss", 1448))
    pkt = mss + HEADER
    si = exp.get("sample_interval_ns")
    if si is not None and duration and si >= duration:
        out.error(("sample-interval",), f"a sample interval of {_ms(si)} is not shorter than "
                  f"the run ({_ms(duration)}): there would be no flow or queue samples and "
                  "a single throughput interval", f"use at most {_ms(duration / 10)}")
    _tcp(out, exp.get("tcp") or {}, ("tcp",), mss)
    hb = exp.get("hist_bucket_ns")
    if hb is not None and duration and hb >= duration:
        out.error(("hist-bucket",), f"a delay-histogram bucket of {_ms(hb)} is not shorter "
                  f"than the run ({_ms(duration)}): every one-way delay falls in the first "
                  "bucket", "the default is 10us; use at most a few ms")
    links = {ln["id"]: ln for ln in exp.get("links", [])}
    for ln in links.values():
        _queue(out, exp, ln, pkt)
        _loss(out, exp, ln)
        if ln.get("delay_ns", 0) >= duration > 0:
            out.error(_link_path(exp, ln, "delay"), f"a one-way delay of "
                      f"{_ms(ln['delay_ns'])} is not shorter than the run "
                      f"({_ms(duration)}): nothing crosses it before the end",
                      "shorten the delay or lengthen the run")
        _slow_link(out, exp, ln, pkt, duration)
        _half_duplex(out, exp, ln, pkt)
    seen_groups: set = set()
    for f in exp.get("flows", []):
        g = f.get("group", 0)
        gpath = ("flows", g)
        if f.get("tcp"):
            if g not in seen_groups:
                _tcp(out, f["tcp"], gpath + ("tcp",), mss)
        first = g not in seen_groups
        seen_groups.add(g)
        start = f.get("start_ns") or 0
        stop = f.get("stop_ns")
        end = duration if stop is None else min(stop, duration)
        active = end - start
        rtt = f.get("base_rtt_ns") or 0
        if not first:
            continue
        if f.get("scheme") not in ("udp", "probe") and rtt and active > 0:
            if rtt >= active and not any(links[i].get("delay_ns", 0) >= duration
                                         for i in f.get("path", []) if i in links):
                out.error(gpath, f"the base RTT ({_ms(rtt)}) is not shorter than the time "
                          f"the flow runs ({_ms(active)}): not one packet can be "
                          "acknowledged", "shorten the delays or run the flow longer")
            elif rtt * 4 > active:
                out.warn(gpath, f"the flow runs for {_ms(active)}, under four base RTTs "
                         f"({_ms(rtt)}): its metrics describe the handshake and slow start only",
                         "run it for at least a few dozen RTTs")
        given = f.get("params") or {}
        for a, b, da, db in ORDERED_PARAMS.get(f.get("scheme"), []):
            va, vb = given.get(a, da), given.get(b, db)
            if (a in given or b in given) and va > vb:
                out.error(gpath + ("params", a if a in given else b),
                          f"{f['scheme']} {a} ({va:g}{'' if a in given else ', the default'}) "
                          f"is above {b} ({vb:g}{'' if b in given else ', the default'}): "
                          "the window would be pushed up and down at once",
                          f"keep {a} <= {b}")
        if f.get("scheme") == "udp" and not f.get("app_rate_bps"):
            out.error(gpath + ("rate",), "a UDP rate of 0 (unlimited) gives the constant-bit-"
                      "rate source no rate to send at", "e.g. {scheme: udp, rate: 10Mbit}")
        if f.get("scheme") == "udp" and f.get("app_rate_bps"):
            rates = [links[i].get("rate_bps") for i in f.get("path", []) if i in links]
            cap = min([r for r in rates if r], default=None)
            if cap and f["app_rate_bps"] > 10 * cap:
                out.warn(gpath + ("rate",), f"UDP at {f['app_rate_bps'] / 1e6:g} Mbit/s into "
                         f"a path of {cap / 1e6:g} Mbit/s: over 90% of the datagrams are "
                         "dropped at the first queue", "send at most the path's rate")
    return out.errors, out.warnings


def has_randomness(exp: dict) -> bool:
    """Whether anything in ``exp`` draws from the run's seed."""
    if exp.get("host_noise"):
        return True  # the hosts' timing noise (config/host.py) is drawn from the seed
    for ln in exp.get("links", []):
        if ln.get("loss") or ln.get("jitter") or ln.get("channel"):
            return True  # a shared channel's backoffs are drawn from the seed
        if (ln.get("delay_schedule") or {}).get("kind") == "walk":
            return True
        if (ln.get("queue") or {}).get("kind") in RANDOM_QUEUES:
            return True
    for f in exp.get("flows", []):
        if f.get("arrivals") or f.get("scheme") in RANDOM_SCHEMES or f.get("command") or f.get("bpf"):
            return True
    return False


def seed_note(exp: dict) -> str | None:
    """A note when the seed cannot change a simulated run (nothing random in it)."""
    if has_randomness(exp):
        return None
    return ("seed: nothing in this experiment is random (exact host timing, no loss, jitter, "
            "random walk, arrivals, RED/PIE/FQ queue, half-duplex channel or randomised "
            "congestion control), so every seed gives the same simulated result; repeats with "
            "other seeds add no samples")
