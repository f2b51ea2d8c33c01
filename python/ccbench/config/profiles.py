"""Linux stack generations as endpoint profiles: `tcp: {profile: linux-3.10}`.

A profile sets the endpoint behaviours that changed between Linux 2.6.36 and today *and that
the simulator models* to the values of that kernel; keys written beside `profile` win. Each
value is cited to the release and the commit (by subject) that changed it:

| behaviour (resolved key) | before | from | change |
|---|---|---|---|
| initial window (`init_cwnd`) | 3 segments for MSS 1460 (RFC 3390: min(4·MSS, max(2·MSS, 4380 B))) | 10 in 2.6.39 | "tcp: Increase the initial congestion window to 10" (include/net/tcp.h TCP_INIT_CWND) |
| initial RTO (`initial_rto_ns`) | 3 s | 1 s in 3.1 | "tcp: RFC2988bis + taking RTT sample from 3WHS for the passive open side" (TCP_TIMEOUT_INIT) |
| tail loss probe (`tlp`) | none | 3.10 | "tcp: Tail loss probe (TLP)" (tcp_schedule_loss_probe, tcp_early_retrans = 3) |
| recovery window (`prr`) | rate-halving (`tcp_cwnd_down`: −1 per 2 ACKs down to the CC's `min_cwnd`, ≤ in-flight + 1) | PRR in 3.2 | "tcp: Proportional Rate Reduction for TCP" (tcp_cwnd_reduction, RFC 6937) |
| early retransmit (`early_retransmit`, with `rack` off) | none: a window under 4 packets waits for the RTO unless 3 SACKs come | 3.5 | "tcp: early retransmit" and "tcp: early retransmit: delayed fast retransmit" (tcp_early_retrans = 2, then 3 with TLP in 3.10) |
| loss detection (`rack`) | FACK/dupthresh scoreboard (`tcp_update_scoreboard`, `tcp_mark_lost_retrans`; `tcp_fack` = 1) | RACK in 4.4 | "tcp: rack: add RACK loss detection" series (net/ipv4/tcp_recovery.c); FACK removed in 4.15 ("tcp: remove FACK") |
| RTT sample resolution (`rtt_granularity_ns`) | jiffies (1 ms at HZ = 1000) | µs in 3.15 | "tcp: switch rtt estimations to usec resolution" |
| receiver SACK compression (`sack_compression`) | one ACK per out-of-order segment | 4.18 | "tcp: add SACK compression" (tcp_comp_sack_delay_ns) |

Behaviours of those kernels that the simulator does **not** model, so every profile keeps
today's: `tcp_time_to_recover`'s small-window rule before early retransmit, the F-RTO rewrite (3.10, "tcp: new F-RTO implementation"), TSQ (3.6, "tcp: TCP Small Queues"), HyStart and CUBIC fixes of 3.x, and receive-buffer
autotuning defaults. docs/experiment-file.md lists the profiles; HZ = 1000 is assumed for the
jiffy-resolution kernels (write `rtt-granularity: 4ms` for HZ = 250).
"""
from __future__ import annotations

MS = 1_000_000

#: profile name -> resolved tcp keys it sets (see the table above)
PROFILES: dict[str, dict] = {
    "linux-2.6.36": {"init_cwnd": 3, "initial_rto_ns": 3000 * MS, "tlp": False,
                     "rtt_granularity_ns": 1 * MS, "sack_compression": False, "rack": False,
                     "prr": False, "early_retransmit": False},
    "linux-3.7": {"init_cwnd": 10, "initial_rto_ns": 1000 * MS, "tlp": False,
                  "rtt_granularity_ns": 1 * MS, "sack_compression": False, "rack": False, "prr": True},
    "linux-3.10": {"init_cwnd": 10, "initial_rto_ns": 1000 * MS, "tlp": True,
                   "rtt_granularity_ns": 1 * MS, "sack_compression": False, "rack": False, "prr": True},
    "linux-3.12": {"init_cwnd": 10, "initial_rto_ns": 1000 * MS, "tlp": True,
                   "rtt_granularity_ns": 1 * MS, "sack_compression": False, "rack": False, "prr": True},
    "current": {"init_cwnd": 10, "initial_rto_ns": 1000 * MS, "tlp": True,
                "rtt_granularity_ns": 0, "sack_compression": True, "rack": True, "prr": True},
}
#: accepted spellings -> canonical name
ALIASES = {"linux-2.6": "linux-2.6.36", "linux-3.7.0": "linux-3.7", "linux-3.10.0": "linux-3.10",
           "linux-3.12.0": "linux-3.12", "linux": "current", "linux-current": "current"}


def profile_values(name: str) -> dict | None:
    """The resolved tcp keys of a profile, or None for an unknown name."""
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    v = PROFILES.get(key)
    return dict(v) if v is not None else None


__all__ = ["PROFILES", "profile_values"]
