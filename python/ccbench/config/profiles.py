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
| window share of the receive buffer (`adv_win_scale`) | `tcp_adv_win_scale` 2: 3/4 of the buffer | 1 (half) in 3.4; `scaling_ratio` (starts at half, then follows each skb's truesize) in 6.5 | "tcp: change tcp_adv_win_scale and tcp_rmem[2]"; "tcp: get rid of sysctl_tcp_adv_win_scale" |
| receive buffer (`rmem`, tcp_rmem) | 4096 87380 4 MB (`tcp_init`: max_share = min(4 MB, memory/128)) | rmem[2] 6 MB in 3.4 (the same 3 MB of window); rmem[1] 131072 in 4.20; the simulator's default is 4096 131072 32 MiB | "tcp: change tcp_adv_win_scale and tcp_rmem[2]"; "tcp: up initial rmem to 128KB and SYN rwin to around 64KB" |
| SYN-ACK window cap (`init_rwnd`) | 4 segments (`tcp_select_initial_window`, after RFC 2414) | 10 in 2.6.38; 20 in 3.12; none in 4.20 | "TCP: increase default initial receive window." (356f039822b8, TCP_DEFAULT_INIT_RCVWND); "tcp: properly send new data in fast recovery in first RTT" (tcp_default_init_rwnd = 2 × TCP_INIT_CWND); "tcp: up initial rmem to 128KB and SYN rwin to around 64KB" |
| receive-buffer autotuning (`legacy_drs`) | `tcp_rcv_space_adjust`: buffer and `window_clamp` follow 2 × the bytes read per RTT; `rcvq_space` starts at the SYN-ACK's window; `tcp_fixup_rcvbuf` at establishment | 3.13 | "tcp: fix dynamic right sizing" (2 × bytes read + 16 segments, up to twice that while the bytes read grow) |
| cwnd growth per ACK (`count_acks`) | slow start +1 per ACK, additive increase one credit per ACK (`tcp_slow_start(tp)`, `tcp_cong_avoid_ai(tp, w)`): with delayed ACKs about half the growth | packets ACKed: slow start in 3.13, additive increase in 3.19 | "tcp: properly handle stretch acks in slow start"; "tcp: fix the timid additive increase on stretch ACKs" (read in tcp_cong.c: 3.12.0 vs 3.13.10, 3.18.30 vs 3.19.0) |
| ACK of a full-sized PSH segment (`push_ack`; the simulated sender marks PSH at each write's end in every profile: without `push_ack` only captures show it) | it waits for its pair or the delayed-ACK timer (only a segment shorter than the MSS sets `ICSK_ACK_PUSHED`) | 6.6 | "tcp: fix delayed ACKs for MSS boundary condition" (4720852ed9af: `tcp_measure_rcv_mss` sets `ICSK_ACK_PUSHED` for a full-sized segment with PSH; `tcp_cleanup_rbuf` ACKs it once read) |
| F-RTO (`frto`; undo of spurious reductions — D-SACK, timestamps — is the same in every generation, `undo`) | `tcp_frto` = 2 of 2.6.22-3.9 (`tcp_enter_frto`, `tcp_process_frto`: the timeout keeps the window until two ACKs judge it; a spurious one is answered by `tcp_frto_response` 0, a rate-halving CWR to the halved ssthresh) | RFC 5682 in 3.10: the timeout reduces and marks as usual, new data after the first ACK, a spurious timeout is *undone* | "tcp: new F-RTO implementation" (e33099f96d99; tcp_process_loss, tcp_try_undo_loss(sk, true)) |
| CUBIC (`cc_generation`: cubic's `generation` for CUBIC flows) | HyStart on jiffies with a 2 ms delay floor; no growth floor before the first loss | HyStart: 4 ms floor in 2.6.39, delay_min/8 in 3.19, µs clock, ACK-train cushion and pacing awareness in 5.6; growth ≥ 5 %/RTT before the first loss in 3.3; TCP-friendly estimate in packets (not ACKs) in 3.19; ≤ 1.5× per RTT in 4.0; epoch shift after idle in 4.3 | "tcp_cubic: make the delay threshold of HyStart less sensitive"; "tcp_cubic: refine Hystart delay threshold"; "tcp_cubic: better follow cubic curve after idle period" (30927520dbae); the others by release only (crates/sim/src/cc/cubic.rs `Era`) |

The send buffer (`tcp_wmem` 4096 16384 4 MB) has the same defaults in every generation (`tcp_init`:
max_wshare = min(4 MB, memory/128)). Its autotuning before 3.13 ("tcp: sndbuf autotuning
improvements", `tcp_sndbuf_expand`) grew it to 2 × max(cwnd, reordering + 1) skbs of
SKB_TRUESIZE(MSS + headers), about 2304 B in 2.6.36-3.12 as today's per-MSS size, against today's
2 × max(10, cwnd, reordering + 1); only the buffer at establishment differs (10 skbs, today 20),
below the 16 KB `tcp_wmem` default either way, so the profiles keep today's.

The receive-buffer values were read in the releases' own net/ipv4/tcp.c, tcp_input.c and
tcp_output.c, for a machine with memory enough that the memory/128 bound does not bite:
2.6.36.2 (2, 4 MB, 4 segments, old DRS), 3.3.8 and 3.4.2 (1, 6 MB: the change reached the 3.3
stable tree too), 3.10.4 (10 segments), 3.12.0 (20 segments, old DRS), 3.13.10 (new DRS),
4.19.0 (87380, 20 segments) and 4.20.0 (131072, no cap). The CUBIC releases were bracketed the
same way in net/ipv4/tcp_cubic.c (2.6.38.3/2.6.39.4, 3.2.0/3.3.8, 3.18.30/3.19.0, 3.19.0/4.0.5,
4.1.15/4.2.8, 5.6.4; where the later tree is a stable release, the change may have reached it
as a backport); the engine hands `cc_generation` to every scheme with a `generation`
parameter that the flow does not set (cubic today).

Behaviours of those kernels that the simulator does **not** model, so every profile keeps
today's: `tcp_time_to_recover`'s small-window rule before early retransmit, TSQ (3.6, "tcp: TCP
Small Queues"), the send-buffer
autotuning of 3.13, and the older forms of the congestion controls other than CUBIC (beyond
the ACK counting of `tcp_slow_start` and `tcp_cong_avoid_ai` they share).
docs/simulator.md measures what TSQ would change on the linux-evolution study's path. docs/experiment-file.md lists the profiles; HZ = 1000 is assumed for the
jiffy-resolution kernels (write `rtt-granularity: 4ms` for HZ = 250).

A profile may set only the resolved keys that the table of `tcp:` keys (tcpkeys.py) marks
`profile=True`; tcpkeys checks these profiles against it when it is imported.
"""
from __future__ import annotations

MS = 1_000_000
MB = 1 << 20
#: the receive side of a kernel before 4.20: tcp_rmem, tcp_adv_win_scale, the SYN-ACK's window
#: cap and DRS before 3.13 (see the table above)
_RCV_2636 = {"rmem": [4096, 87380, 4 * MB], "adv_win_scale": 2, "init_rwnd": 4,
             "legacy_drs": True}
_RCV_37 = {"rmem": [4096, 87380, 6 * MB], "adv_win_scale": 1, "init_rwnd": 10, "legacy_drs": True}
_RCV_312 = {**_RCV_37, "init_rwnd": 20}

#: profile name -> resolved tcp keys it sets (see the table above)
PROFILES: dict[str, dict] = {
    "linux-2.6.36": {"init_cwnd": 3, "initial_rto_ns": 3000 * MS, "tlp": False,
                     "rtt_granularity_ns": 1 * MS, "sack_compression": False, "rack": False,
                     "prr": False, "early_retransmit": False, **_RCV_2636,
                     "cc_generation": 2_06_36, "count_acks": True, "push_ack": False,
                     "frto": "pre-3.10"},
    "linux-3.7": {"init_cwnd": 10, "initial_rto_ns": 1000 * MS, "tlp": False,
                  "rtt_granularity_ns": 1 * MS, "sack_compression": False, "rack": False, "prr": True,
                  **_RCV_37, "cc_generation": 3_07_00, "count_acks": True, "push_ack": False,
                  "frto": "pre-3.10"},
    "linux-3.10": {"init_cwnd": 10, "initial_rto_ns": 1000 * MS, "tlp": True,
                   "rtt_granularity_ns": 1 * MS, "sack_compression": False, "rack": False, "prr": True,
                   **_RCV_37, "cc_generation": 3_10_00, "count_acks": True, "push_ack": False},
    "linux-3.12": {"init_cwnd": 10, "initial_rto_ns": 1000 * MS, "tlp": True,
                   "rtt_granularity_ns": 1 * MS, "sack_compression": False, "rack": False, "prr": True,
                   **_RCV_312, "cc_generation": 3_12_00, "count_acks": True, "push_ack": False},
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
