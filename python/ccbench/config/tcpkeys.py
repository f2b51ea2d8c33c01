"""The endpoint settings of an experiment file (``tcp:``), declared once for both backends.

One :class:`TcpKey` per key of the ``tcp`` mapping (top level and flow groups): its YAML name and
aliases, its parser with its bounds, the resolved field it is written to (the field of the
simulator's ``TcpConfig``, crates/sim/src/tcp/mod.rs, whose ``Default`` is the authority for the
defaults: tests/test_tcpkeys.py compares them with ``ccbench._core.tcp_defaults()``), whether it
is written always or only when given, whether a Linux profile (profiles.py) may set it, and how
the kernel backend applies it (``kernel``: a per-namespace sysctl, a route option, an option of
the sender's socket, or not switchable on the running kernel, with that kernel's fixed value).

:func:`parse_tcp` is the parser (native.py calls it for the top level and for each group);
ccbench.backends.emu.tcpset interprets the ``kernel`` column per host; tcpdoc.py renders the
table of docs/experiment-file.md from :data:`TABLE`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .errors import Collector, ConfigError, show
from .keys import MS, Key, take
from .profiles import PROFILES, profile_values
from .units import parse_bool, parse_int, parse_payload_size, parse_time

MB = 1 << 20
#: F-RTO generations (`tcp: {frto: …}`; sim/src/tcp/sender/undo.rs)
FRTO_MODES = ("rfc5682", "pre-3.10", "off")
#: TCP Small Queues generations (`tcp: {tsq: …}`) and their `tcp_limit_output_bytes` default
TSQ_MODES = {"off": None, "3.6": 131072, "3.12": 131072, "current": 4 << 20}

#: A parser's answer meaning "absent": the field is removed and its default applies.
NONE = object()
_FAILED = object()

#: Which end of a flow a kernel setting acts on: the host that sends the data, the host that
#: receives it, or both (negotiated in the handshake).
SENDER, RECEIVER, BOTH = "sender", "receiver", "both"


# -- how the kernel backend applies a key ----------------------------------------------------

@dataclass(frozen=True)
class Sysctl:
    """A sysctl of the host's network namespace (every ``net.ipv4`` one is per namespace on
    the kernels ccbench runs): ``text(value, tcp)`` is what is written. ``uses`` names the
    other fields the text depends on."""

    name: str
    side: str
    text: Callable[[Any, dict], str]
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Route:
    """An option of the host's route to the peer (``ip route … initcwnd 10``); ``text``
    returns the option words or None for none."""

    option: str
    side: str
    text: Callable[[Any, dict], str | None]


@dataclass(frozen=True)
class Socket:
    """An option of the sender's socket, set by the flow agent: ``argv`` its arguments."""

    option: str
    argv: Callable[[Any], list[str]]


@dataclass(frozen=True)
class Fixed:
    """No switch on the running kernel: it always behaves as ``kernel`` (or
    ``kernel(value, tcp)``). Runs record {requested, kernel, applied} (``emu.<field>``)."""

    kernel: Any
    shown: str
    lead: str = "not switchable: the kernel's is "

    def value(self, requested: Any, tcp: dict) -> Any:
        return self.kernel(requested, tcp) if callable(self.kernel) else self.kernel


@dataclass(frozen=True)
class Via:
    """Applied through other keys (or nothing to apply): ``why`` says how."""

    why: str


Kernel = Sysctl | Route | Socket | Fixed | Via


@dataclass(frozen=True)
class TcpKey:
    """One key of ``tcp:``. ``parse(value, path, mss)`` raises ConfigError or returns the
    resolved value (or :data:`NONE`); ``implies(value)`` are values it sets in other fields
    (rows after it in :data:`TABLE` win over them)."""

    name: str
    field: str
    parse: Callable[[Any, tuple, int], Any]
    default: Any
    kind: str                      # the docs' "type" column
    meaning: str                   # the docs' "default" column
    kernel: tuple[Kernel, ...]
    aliases: tuple[str, ...] = ()
    always: bool = False           # written with its default when not given
    profile: bool = False          # a Linux profile may set it
    implies: Callable[[Any], dict] | None = None


# -- parsers -----------------------------------------------------------------------------------

def _bool(v: Any, p: tuple, mss: int) -> bool:
    return parse_bool(v, p)


def _int(lo: int, hi: int, what: str, none_words: tuple[str, ...] = ()):
    def parse(v: Any, p: tuple, mss: int):
        if isinstance(v, str) and v.strip().lower() in none_words:
            return NONE
        return parse_int(v, p, what=what, minimum=lo, maximum=hi)
    return parse


def is_bool(k: TcpKey) -> bool:
    """Whether ``k`` is a boolean key."""
    return k.parse is _bool


def _time(what: str, positive: str | None = None, max_ns: int | None = None,
          over: tuple[str, str] = ("", "")):
    """A time, bare = ms; ``positive``: the fix when 0 is refused; ``max_ns`` with ``over``
    (message, fix) when too long."""
    def parse(v: Any, p: tuple, mss: int) -> int:
        ns = parse_time(v, p, bare_ns=MS, what=what)
        if max_ns is not None and ns > max_ns:
            raise ConfigError(p, over[0], over[1], v)
        if positive is not None and ns == 0:
            raise ConfigError(p, positive.split("|")[0], positive.split("|")[1], v)
        return ns
    return parse


def _size(what: str):
    return lambda v, p, mss: parse_payload_size(v, p, mss=mss, what=what)


def _words(key: str, words: dict[str, Any], fix: str, accept: tuple[type, ...] = (str,)):
    """One of ``words`` (spellings -> resolved value), compared lower-case."""
    def parse(v: Any, p: tuple, mss: int):
        w = str(v).strip().lower() if isinstance(v, accept) else None
        if w in words:
            return words[w]
        raise ConfigError(p, f"{key} {show(v)} is not {fix.split('|')[0]}", fix.split("|")[1], v)
    return parse


def _mem(key: str, example: str, check: Callable[[list[int], int], tuple[str, str] | None]):
    """``[min, default, max]`` sizes (or the sysctl's text), min ≤ default ≤ max, then
    ``check(sizes, mss)`` -> (message, fix) when refused."""
    fix = f"write {key}: [min, default, max], e.g. {example} (Linux's tcp_{key})"

    def parse(v: Any, p: tuple, mss: int) -> list[int]:
        parts = v.split() if isinstance(v, str) else v
        if not isinstance(parts, (list, tuple)) or len(parts) != 3:
            raise ConfigError(p, f"{key} {show(parts)} is not three sizes", fix, parts)
        out = [parse_payload_size(x, p + (i,), mss=mss, what="a buffer size")
               for i, x in enumerate(parts)]
        if not out[0] <= out[1] <= out[2]:
            raise ConfigError(p, f"{key} {show(parts)} is not min ≤ default ≤ max", fix, parts)
        bad = check(out, mss)
        if bad is not None:
            raise ConfigError(p, bad[0], bad[1], v)
        return out
    return parse


def _rmem_check(out: list[int], mss: int) -> tuple[str, str] | None:
    """Its default must hold a segment's window (half the buffer is window)."""
    if out[1] < 2 * mss:
        return (f"rmem default {out[1]} bytes holds less than one segment's window (half the "
                f"buffer is window)", f"use at least {2 * mss * 2} bytes; Linux: 131072")
    return None


def _wmem_check(out: list[int], mss: int) -> tuple[str, str] | None:
    """Its max must hold two segments' skbs (Linux's SOCK_MIN_SNDBUF, about 2 × (MSS + 832
    bytes of skb head))."""
    if out[2] < 2 * (mss + 832):
        return (f"wmem max {out[2]} bytes holds less than two segments (each costs its payload "
                f"and an 832-byte skb head)", f"use at least {2 * (mss + 832)} bytes; Linux: 4194304")
    return None


def _generation(v: Any, p: tuple, mss: int):
    """A Linux release ("3.10", "2.6.36") as major·10000 + minor·100 + patch, or ``current``."""
    if isinstance(v, float):
        raise ConfigError(p, f"cc-generation {show(v)} is a number, not a release",
                          f'quote the release, e.g. "{v}0" or "2.6.36": YAML reads 3.10 as 3.1', v)
    if isinstance(v, int) and not isinstance(v, bool) and (v == 0 or 10000 <= v < 1000000):
        return v or NONE
    text = str(v).strip().lower()
    if text in ("current", "none"):
        return NONE
    parts = text.removeprefix("linux-").split(".")
    if not isinstance(v, bool) and 2 <= len(parts) <= 3 and all(x.isdigit() for x in parts) \
            and all(int(x) < 100 for x in parts):
        nums = [int(x) for x in parts] + [0]
        return nums[0] * 10000 + nums[1] * 100 + nums[2]
    raise ConfigError(p, f"cc-generation {show(v)} is not a Linux release",
                      'write a release such as "3.10" or "2.6.36" (quoted), or current', v)


def _profile(v: Any, p: tuple, mss: int) -> str:
    if profile_values(v) is None:
        raise ConfigError(p, f"unknown TCP profile {show(v)}", "known profiles: " + ", ".join(PROFILES), v)
    return str(v).strip().lower()


_FRTO_WORDS = {**{m: m for m in FRTO_MODES}, "0": "off", "false": "off", "none": "off",
               "2": "rfc5682", "rfc-5682": "rfc5682", "pre3.10": "pre-3.10", "legacy": "pre-3.10"}
_TSQ_WORDS = {**{m: m for m in TSQ_MODES}, "false": "off", "none": "off", "true": "current",
              "on": "current", "3.12.0": "3.12", "3.6.0": "3.6", "linux": "current"}


# -- kernel values -----------------------------------------------------------------------------

def _on(v: bool, on: str = "1", off: str = "0") -> str:
    return on if v else off


def _kernel_rmem(v: Any, tcp: dict) -> str:
    """``rmem`` when given; else a max of twice the fixed window (``rwnd``; 32 MiB without
    one), at least 8 MiB: the kernel autotunes up to it where the simulator offers ``rwnd``."""
    if tcp.get("rmem"):
        return " ".join(str(int(x)) for x in tcp["rmem"])
    return f"4096 131072 {max(int(tcp.get('rwnd_bytes') or 32 * MB) * 2, 8 * MB)}"


def _ms(ns: int) -> str:
    return f"{ns / MS:g} ms"


# -- the table -----------------------------------------------------------------------------------

_S = "simulator only"
TABLE: tuple[TcpKey, ...] = (
    TcpKey("profile", "profile", _profile, None,
           "`linux-2.6.36`, `linux-3.7`, `linux-3.10`, `linux-3.12`, `current`",
           "none: a Linux stack generation (below); the keys written beside it win",
           (Via("through the keys it sets"),), implies=profile_values),
    TcpKey("init-cwnd", "init_cwnd", _int(1, 2**31, "a number of packets"), 10,
           "integer packets ≥ 1", "`10`",
           (Route("initcwnd", SENDER, lambda v, t: f"initcwnd {int(v)}"),),
           always=True, profile=True),
    TcpKey("init-rwnd", "init_rwnd", _int(1, 65535, "a number of segments", ("none",)), None,
           "integer segments ≥ 1, or `none`",
           "`none`: the SYN-ACK offers the buffer's window; n: at most n segments (fewer above "
           "MSS 1460), as Linux before 4.20 (4 before 2.6.38, 10, 20 from 3.12)",
           (Route("initrwnd", RECEIVER, lambda v, t: f"initrwnd {int(v)}" if v else None),),
           profile=True),
    TcpKey("min-rto", "min_rto_ns", _time("a timeout"), 200 * MS, "time, bare = ms", "`200ms`",
           (Route("rto_min", SENDER,
                  lambda v, t: f"rto_min {max(1, round(v / 1e6))}ms" if v else None),),
           always=True),
    TcpKey("delayed-ack", "delayed_ack", _bool, True, "bool", "`true`",
           (Route("quickack", RECEIVER, lambda v, t: None if v else "quickack 1"),),
           always=True),
    TcpKey("initial-rto", "initial_rto_ns",
           _time("a timeout", positive="initial RTO must be > 0|e.g. 1s"), 1000 * MS,
           "time, bare = ms, > 0", "`1s`",
           (Fixed(1000 * MS, "1 s (`TCP_TIMEOUT_INIT`, a compile-time constant)"),),
           always=True, profile=True),
    TcpKey("delayed-ack-timeout", "delayed_ack_timeout_ns",
           _time("a timeout", positive="delayed-ack-timeout must be > 0|e.g. 40ms (Linux) or "
                 "100ms (FreeBSD); to ACK every segment write delayed-ack: false",
                 max_ns=10_000 * MS,
                 over=("delayed-ack-timeout above 10 s", "Linux delays an ACK by 40-200 ms "
                       "(TCP_DELACK_MIN/MAX), FreeBSD 100 ms; to ACK every segment write "
                       "delayed-ack: false")), 40 * MS,
           "time, bare = ms, > 0 and at most 10 s", "`40ms` (Linux `TCP_DELACK_MIN`)",
           (Fixed(40 * MS, "40 ms (`TCP_DELACK_MIN`)"),), always=True),
    TcpKey("sack", "sack", _bool, True, "bool", "`true`",
           (Sysctl("net.ipv4.tcp_sack", BOTH, lambda v, t: _on(v)),), always=True),
    TcpKey("rtt-granularity", "rtt_granularity_ns", _time("an RTT granularity"), 0,
           "time, bare = ms", "`0` (µs samples, as Linux ≥ 3.15)",
           (Fixed(0, "µs samples (0)"),), always=True, profile=True),
    TcpKey("rwnd", "rwnd_bytes", _size("a window size"), None,
           "size in bytes (bare = bytes; `Npkt` = N·mss)",
           "none: Linux's autotuned window (below); a value is a fixed window and turns "
           "autotuning off",
           (Via("`tcp_rmem`'s max is twice it (at least 8 MiB): the kernel autotunes up to it"),)),
    TcpKey("rmem", "rmem", _mem("rmem", "[4096, 131072, 32MiB]", _rmem_check),
           [4096, 131072, 32 * MB],
           "three sizes `[min, default, max]` (or the sysctl's text `\"4096 131072 32MiB\"`), "
           "min ≤ default ≤ max", "`[4096, 131072, 33554432]` (Linux `net.ipv4.tcp_rmem`)",
           (Sysctl("net.ipv4.tcp_rmem", RECEIVER, _kernel_rmem, uses=("rwnd_bytes",)),),
           profile=True),
    TcpKey("wmem", "wmem", _mem("wmem", "[4096, 16384, 4MiB]", _wmem_check),
           [4096, 16384, 4 * MB],
           "three sizes `[min, default, max]` (or the sysctl's text `\"4096 16384 4MiB\"`), "
           "min ≤ default ≤ max, max ≥ two segments",
           "`[4096, 16384, 4194304]` (Linux `net.ipv4.tcp_wmem`)",
           (Sysctl("net.ipv4.tcp_wmem", SENDER, lambda v, t: " ".join(str(int(x)) for x in v)),)),
    TcpKey("moderate-rcvbuf", "moderate_rcvbuf", _bool, True, "bool",
           "`true` (Linux `net.ipv4.tcp_moderate_rcvbuf`: receive-buffer autotuning)",
           (Sysctl("net.ipv4.tcp_moderate_rcvbuf", RECEIVER, lambda v, t: _on(v)),)),
    TcpKey("adv-win-scale", "adv_win_scale",
           _int(-31, 31, "tcp_adv_win_scale", ("none", "scaling-ratio")), None,
           "integer −31…31, or `none`",
           "`none`: today's `scaling_ratio` (half the buffer is window); n > 0: the window is "
           "buffer − buffer/2ⁿ, n ≤ 0: buffer/2⁻ⁿ (Linux `tcp_adv_win_scale` before 6.5: 2 "
           "before 3.4, then 1)",
           (Fixed(None, "`none`: `scaling_ratio` (the sysctl is unused since 6.5)"),), profile=True),
    TcpKey("drs", "legacy_drs",
           _words("drs", {"legacy": True, "current": False},
                  "legacy or current|write drs: legacy (receive-buffer autotuning before Linux "
                  "4.2) or drs: current"), False,
           "`current` or `legacy`",
           "`current`: today's receive-buffer autotuning; `legacy`: Linux's before 3.13 (below)",
           (Fixed(False, "`current`"),), profile=True),
    TcpKey("count-acks", "count_acks", _bool, False, "bool",
           "`false`; `true`: slow start adds one packet per ACK and additive increase takes one "
           "credit per ACK, whatever the ACK covers (Linux before 3.13 and 3.19: with delayed "
           "ACKs both grow about half as fast)", (Fixed(False, "`false`"),), profile=True),
    TcpKey("push-ack", "push_ack", _bool, True, "bool",
           "`true`: a full-sized segment carrying PSH (the last of an application write) is "
           "ACKed once the application has read it, not paired with the next (Linux since 6.6, "
           "4720852ed9af); `false`: as before 6.6",
           (Fixed(True, "`true` (Linux ≥ 6.6)"),), profile=True),
    TcpKey("cc-generation", "cc_generation", _generation, None,
           "a Linux release, quoted (`\"3.10\"`, `\"2.6.36\"`), or `current`",
           "`current`: CUBIC flows run today's `tcp_cubic.c`; a release: that kernel's "
           "(cubic's `generation` parameter, unless the flow's `scheme` sets it)",
           (Fixed(None, "`current`: the running kernel's `tcp_cubic`"),), profile=True),
    TcpKey("slow-start-after-idle", "slow_start_after_idle", _bool, True, "bool",
           "`true` (Linux `net.ipv4.tcp_slow_start_after_idle`)",
           (Sysctl("net.ipv4.tcp_slow_start_after_idle", SENDER, lambda v, t: _on(v)),)),
    TcpKey("tlp", "tlp", _bool, True, "bool", "`true` (tail loss probes, Linux ≥ 3.10)",
           (Sysctl("net.ipv4.tcp_early_retrans", SENDER, lambda v, t: _on(v, "3")),),
           profile=True),
    TcpKey("sack-compression", "sack_compression", _bool, True, "bool",
           "`true` (receiver SACK compression, Linux ≥ 4.18)",
           (Sysctl("net.ipv4.tcp_comp_sack_nr", RECEIVER, lambda v, t: _on(v, "44")),),
           profile=True),
    TcpKey("prr", "prr", _bool, True, "bool",
           "`true` (Proportional Rate Reduction in recovery, Linux ≥ 3.2); `false`: the "
           "rate-halving of earlier kernels (cwnd −1 every second ACK down to the algorithm's "
           "`min_cwnd`, never above in-flight + 1)",
           (Fixed(True, "`true` (rate-halving is gone since 3.2)"),), profile=True),
    TcpKey("early-retransmit", "early_retransmit", _bool, True, "bool",
           "`true` (RFC 5827 early retransmit, Linux ≥ 3.5, delayed by max(srtt/4, 2 ms)); "
           "matters only with `rack: false` (RACK subsumes it)",
           (Fixed(lambda v, t: v if t.get("rack", True) else False,
                  "RACK's (none with `rack: false`: removed in 4.11)"),), profile=True),
    TcpKey("rack", "rack", _bool, True, "bool",
           "`true` (RACK loss detection, Linux ≥ 4.4); `false`: the FACK/dupthresh scoreboard "
           "of earlier kernels — a hole is lost once more than 3 packets beyond it are SACKed, "
           "a retransmission once data sent after it is SACKed",
           (Sysctl("net.ipv4.tcp_recovery", SENDER, lambda v, t: _on(v)),), profile=True),
    TcpKey("undo", "undo", _bool, True, "bool",
           "`true`: a reduction found spurious is reverted (cwnd from the algorithm's "
           "`undo_cwnd`, ssthresh back): when D-SACKs report every retransmission of the "
           "episode needless, when an ACK echoes a timestamp older than the episode's first "
           "retransmission (Eifel detection, at the end of Recovery/Loss and on partial ACKs), "
           "or when F-RTO judges a timeout spurious — Linux's `tcp_try_undo_*` in every "
           "generation. `false` (for ablation): never",
           (Fixed(True, "`true`"),)),
    TcpKey("frto", "frto",
           _words("frto", _FRTO_WORDS, f"one of {', '.join(FRTO_MODES)}|write frto: rfc5682 "
                  "(Linux since 3.10, the default), frto: pre-3.10 (2.6.22-3.9: a spurious "
                  "timeout is halved, not undone) or frto: off", (str, int)), "rfc5682",
           "`rfc5682`, `pre-3.10`, `off`",
           "`rfc5682` (Linux ≥ 3.10): after a timeout the first ACK that advances sends new "
           "data, and an ACK of never-retransmitted data then undoes the timeout's reduction. "
           "`pre-3.10`: the F-RTO of 2.6.22-3.9 — the timeout halves ssthresh but keeps the "
           "window until two ACKs judge it, and a spurious timeout is answered by a "
           "rate-halving reduction to the halved ssthresh, not undone. `off`: no F-RTO",
           (Sysctl("net.ipv4.tcp_frto", SENDER, lambda v, t: "0" if v == "off" else "2"),
            Fixed(lambda v, t: "off" if v == "off" else "rfc5682", "`pre-3.10` is not "
                  "switchable: the kernel has RFC 5682's (2) or none (0)", lead="")),
           profile=True),
    TcpKey("tsq", "tsq",
           _words("tsq", _TSQ_WORDS, f"one of {', '.join(TSQ_MODES)}|write tsq: current "
                  "(today's TCP Small Queues), tsq: 3.12 (the dynamic limit of 3.12-4.x), "
                  "tsq: 3.6 (a fixed 128 KiB) or tsq: off (the default)",
                  (str, int, float, bool)), "off",
           "`off`, `3.6`, `3.12`, `current`",
           "`off`: TCP Small Queues on the sender's first link — a flow stops sending while it "
           "has more than its limit of skb truesize in that link's queue and serialiser, and "
           "resumes as a transmission completes. `3.6`: a fixed `limit-output-bytes` "
           "(3.6-3.11); `3.12`: two skbs or 1 ms at the pacing rate, at most "
           "`limit-output-bytes` (3.12-4.x); `current`: today's `tcp_small_queue_check` (the "
           "cap only for unpaced flows, twice the limit for retransmissions, never with one skb "
           "or less unacknowledged). Off by default and in every profile: the kernels ccbench "
           "compares with free each skb as their device takes it (the emulation backend's TUN, "
           "ns-3 DCE's NetDevice), so TSQ never binds there ([simulator.md](simulator.md)); "
           "turn it on to model a host whose own NIC queue is the bottleneck",
           (Fixed("off", "`off`: the TUN device frees each skb as it takes it"),),
           implies=lambda v: {"limit_output_bytes": TSQ_MODES[v]} if TSQ_MODES[v] else {}),
    TcpKey("limit-output-bytes", "limit_output_bytes", _size("a size"), 4 * MB, "size",
           "`net.ipv4.tcp_limit_output_bytes`, TSQ's cap: 128 KiB with `tsq: 3.6` or `3.12`, "
           "4 MiB with `current`", (Via("nothing to apply: TSQ does not bind there (`tsq`)"),)),
    TcpKey("pacing", "pacing_default",
           _words("pacing", {"fq": True, "none": False, "off": False},
                  "fq or none|write pacing: fq (pace every flow as the fq qdisc does) or "
                  "pacing: none (only CCs that ask for it are paced, the default)"), False,
           "`fq` or `none`", "`none`: only schemes that ask for pacing (BBR, Copa) are paced",
           (Socket("SO_MAX_PACING_RATE", lambda v: ["--pacing", "fq"] if v else []),)),
    TcpKey("min-tso-segs", "min_tso_segs", _int(1, 255, "a number of segments"), 2, "1–255",
           "2 (Linux `net.ipv4.tcp_min_tso_segs`): the fewest segments `tcp_tso_autosize` puts "
           "in one skb. On the kernel `1` makes it send single-segment skbs at low rates (below "
           "~2 segments per ms of pacing rate), as the simulator's sender does — the switch that "
           "takes the kernel's two-segment sends out of a comparison ([fidelity.md]"
           "(fidelity.md), point 0). The simulator uses it only in the send buffer's skb "
           "accounting; its sender does not form multi-segment sends",
           (Sysctl("net.ipv4.tcp_min_tso_segs", SENDER, lambda v, t: str(int(v))),)),
    TcpKey("tso-defer", "tso_defer", _bool, False, "bool",
           "`false`: every ACK that opens the window sends. `true` models Linux's "
           "`tcp_tso_should_defer` (TSO's Nagle test) for unpaced senders: a send the windows "
           "allow that is smaller than an autosized skb and a third of the window waits for "
           "the next ACK when that is due within min(srtt/2, 1 ms) and something left in the "
           "last millisecond, so an ACK-clocked sender releases bursts about 1 ms apart, as "
           "the kernel's does ([fidelity.md](fidelity.md), \"Burst release\"); opt-in until "
           "the agreement matrix says it helps everywhere",
           (Fixed(True, "`true` (no switch)"),)),
)
BY_FIELD = {k.field: k for k in TABLE}
BY_NAME = {k.name: k for k in TABLE}
#: The keys of the ``tcp`` mapping, for keys.take.
KEYS = [Key(k.name, k.aliases) for k in TABLE]
#: The resolved ``tcp`` of an experiment that sets nothing: the keys written always.
DEFAULT_TCP = {k.field: k.default for k in TABLE if k.always}
#: Fields of the simulator's TcpConfig that are not ``tcp:`` keys, and where they come from.
NOT_TCP_KEYS = {"mss": "the top-level `mss`", "ecn": "the group's `ecn`",
                "ecn_precise_ack": "the scheme (DCTCP's ACKs)",
                "comp_sack_delay_ns": "Linux's constant (1 ms)"}
#: Resolved fields that are not TcpConfig fields (the simulator ignores them).
NOT_RUST_FIELDS = ("profile",)


def check_profiles(profiles: dict[str, dict] = PROFILES) -> list[str]:
    """Problems of the profiles against the table: each key must be a field a profile may
    set."""
    out = []
    for name, values in profiles.items():
        for f in values:
            if f not in BY_FIELD:
                out.append(f"profile {name} sets {f!r}, which is no tcp key's field")
            elif not BY_FIELD[f].profile:
                out.append(f"profile {name} sets {f!r} ({BY_FIELD[f].name}), which profiles may "
                           "not set")
    return out


if check_profiles():  # a programming error: profiles.py and this table disagree
    raise RuntimeError("; ".join(check_profiles()))


def parse_tcp(value: Any, path: tuple, errs: Collector, mss: int, base: dict | None = None) -> dict:
    """A ``tcp`` mapping over ``base`` (the defaults, or the top-level ``tcp`` for a group):
    each key given is parsed and written to its field, in :data:`TABLE`'s order (a profile
    first, so the keys beside it win)."""
    tcp = dict(DEFAULT_TCP if base is None else base)
    t = take(value, path, KEYS, errs)
    if t is None:
        return tcp
    for k in TABLE:
        if k.name not in t:
            continue
        v = errs.guard(k.parse, *t[k.name], mss, default=_FAILED)
        if v is _FAILED:
            continue
        if v is NONE:
            tcp.pop(k.field, None)
        else:
            tcp[k.field] = v
        if k.implies is not None:
            tcp.update(k.implies(v))
    return tcp


def effective(exp: dict, flow: dict) -> dict:
    """The endpoint settings of a resolved flow as the simulator takes them: the flow's own
    ``tcp`` (its group's, merged over the top level when parsed), else the experiment's."""
    return flow.get("tcp") or exp.get("tcp") or {}


def value(tcp: dict, k: TcpKey) -> Any:
    """The value of key ``k`` in a resolved ``tcp`` (its default when not written)."""
    return tcp.get(k.field, k.default)


__all__ = ["BOTH", "BY_FIELD", "BY_NAME", "DEFAULT_TCP", "FRTO_MODES", "Fixed", "KEYS", "NONE",
           "NOT_RUST_FIELDS", "NOT_TCP_KEYS", "RECEIVER", "Route", "SENDER", "Socket", "Sysctl",
           "TABLE", "TSQ_MODES", "TcpKey", "Via", "check_profiles", "effective", "is_bool", "parse_tcp",
           "value"]
