"""The typed intermediate form between the parsers and the builders.

Both front ends (native.py, coco.py) produce a :class:`RunSpec` and a list of
:class:`GroupSpec`; build.py turns them into the resolved-experiment dict
(docs/architecture.md). Only data here: no parsing, no layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .units import QueueLimit
from .host import default_noise
from .tcpkeys import DEFAULT_TCP

SCHEMA_VERSION = 1
#: IP packet = mss + 52 bytes (20 IP + 20 TCP + 12 timestamp option).
HEADER_BYTES = 52

DEFAULT_QUEUE = QueueLimit(packets=1000, text=1000)
#: ``LinkSpec.rate_b_bps`` when both directions run at ``rate_bps``.
SAME_RATE = "same"


@dataclass
class LinkSpec:
    """One bidirectional link: the same rate and delay both ways, one queue per end.

    ``queue_a`` is the end nearer the left of the dumbbell (host ``a{k}``'s end of a left side
    link, ``r1``'s end of the central link, ``r2``'s end of a right side link); ``queue_b`` the
    other end. ``*_path`` are the YAML paths, for error messages."""

    rate_bps: int | None = None
    delay_ns: int = 0
    queue_a: QueueLimit = DEFAULT_QUEUE
    queue_b: QueueLimit = DEFAULT_QUEUE
    queue_a_path: tuple = ()
    queue_b_path: tuple = ()
    #: ECN step-marking threshold of each end (``ecn-threshold``), None = no marking.
    ecn_a: QueueLimit | None = None
    ecn_b: QueueLimit | None = None
    #: Queue discipline and parameters of each end (queues.Aqm), None = droptail.
    aqm_a: Any = None
    aqm_b: Any = None
    #: Variable delay, jitter, loss, trace, promotion (conditions.py); None = none.
    cond: Any = None
    #: Rate of the direction leaving the b end when it differs from ``rate_bps`` (central
    #: link: ``rate: {left: .., right: ..}``); ``SAME_RATE`` = ``rate_bps`` both ways.
    rate_b_bps: Any = SAME_RATE
    #: Framing bytes added to every packet on the wire (netmodel ``overhead_bytes``).
    overhead_bytes: int = 0
    #: ``duplex: half``: both directions share one half-duplex channel (netmodel ``channel``,
    #: ns-3 CSMA semantics); ``duplex_path`` is the key's YAML path, for error messages.
    half_duplex: bool = False
    duplex_path: tuple = ()


@dataclass
class GroupSpec:
    index: int                      # position in the file (error paths use it)
    scheme: str
    params: dict[str, Any] = field(default_factory=dict)
    count: int = 1
    direction: str = "->"
    start_ns: int = 0
    stop_ns: int | None = None
    bytes: int | None = None
    left: LinkSpec = field(default_factory=LinkSpec)
    right: LinkSpec = field(default_factory=LinkSpec)
    name: str | None = None
    path: tuple = ()
    ecn: bool | None = None          # None: negotiated iff the scheme needs it (dctcp)
    tcp: dict[str, Any] | None = None  # the group's full endpoint settings, if it has `tcp:`
    command: dict[str, Any] | None = None  # command scheme (config/commands.py), emu only
    python: str | None = None        # Python scheme target (config/pyschemes.py)
    kernel_cc: str | None = None     # the kernel CC under a Python controller (--backend emu)
    bpf: dict[str, Any] | None = None  # BPF scheme {path, cc} (config/bpfschemes.py), emu only
    transport: str = "tcp"           # "dgram": a datagram scheme (docs/datagram.md)
    file_sha256: str | None = None   # files named by the scheme's parameters (tao's rule table, indigo's checkpoint)
    #: Resolved workload keys copied into each flow: app_rate_bps, onoff, arrivals (workloads.py).
    workload: dict[str, Any] = field(default_factory=dict)
    #: General topology only: src/dst hosts and optional route (topology.Endpoints).
    endpoints: Any = None


@dataclass
class RunSpec:
    duration_ns: int
    seed: int = 1
    mss: int = 1448
    sample_interval_ns: int = 10_000_000
    record_packets: bool = True
    hist_bucket_ns: int = 10_000
    tcp: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_TCP))
    central: LinkSpec = field(default_factory=LinkSpec)
    bdp_rtt_ns: int | None = None   # overrides each flow's base RTT in BDP computations
    topology: Any = None            # topology.Topology: a general graph instead of the dumbbell
    #: Resolved timing noise of hosts and routers (host.py); None = exact timing.
    host_noise: dict[str, Any] | None = field(default_factory=default_noise)


def bdp_packets(bdp_bytes: Fraction, mss: int) -> int:
    """BDP in packets of ``mss + 52`` bytes, rounded up, at least 1."""
    return max(1, math.ceil(bdp_bytes / (mss + HEADER_BYTES)))


__all__ = ["DEFAULT_QUEUE", "DEFAULT_TCP", "GroupSpec", "HEADER_BYTES", "LinkSpec", "RunSpec",
           "SAME_RATE", "SCHEMA_VERSION", "bdp_packets"]
