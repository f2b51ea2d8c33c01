//! Congestion-control interface, modelled on Linux `struct tcp_congestion_ops`
//! (include/net/tcp.h), the shared window helpers of net/ipv4/tcp_cong.c, the
//! windowed min/max filter of lib/minmax.c, and the scheme registry.
//!
//! Units follow Linux (cc-algorithms.md §0.2): `cwnd`, `ssthresh` and `acked` are
//! packet (segment) counts; times handed to a CC are µs (`now_us`) or ns (`now_ns`).
//!
//! A CC never sees the sender itself: every hook gets a `&mut Sock`, the slice of
//! `struct tcp_sock` that congestion control reads or writes. The sender keeps its
//! live state in this struct (no copying per ACK).

pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod cdg;
pub mod copa;
pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod hldg;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod lp;
pub mod newreno;
pub mod nv;
pub mod reno;
pub mod scalable;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod yeah;

use crate::tcp::CaState;

/// `TCP_INFINITE_SSTHRESH` (include/net/tcp.h): ssthresh before the first reduction.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux `sk_pacing_status`: who asked for pacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacingStatus {
    /// Not paced (no fq, CC did not request pacing): `sk_pacing_rate` is computed but not enforced.
    None,
    /// The CC requested TCP-internal pacing (BBR sets this in `init`; Linux ≥ 4.13).
    Needed,
    /// Paced by the `fq` qdisc (the endpoint's `pacing_default` flag models its presence).
    Fq,
}

/// The part of `struct tcp_sock` a congestion-control module may read or write.
#[derive(Clone, Debug)]
pub struct Sock {
    /// Current time (ns) and the same in µs (`tp->tcp_mstamp`).
    pub now_ns: u64,
    pub now_us: u64,
    /// Payload bytes per segment (`mss_cache`).
    pub mss: u32,
    /// Congestion window (packets), `snd_cwnd`.
    pub cwnd: u32,
    /// Slow-start threshold (packets); `TCP_INFINITE_SSTHRESH` until the first reduction.
    pub ssthresh: u32,
    /// AI credit counter (`snd_cwnd_cnt`), used by `tcp_cong_avoid_ai`.
    pub snd_cwnd_cnt: u32,
    /// Upper bound of cwnd (`snd_cwnd_clamp`).
    pub cwnd_clamp: u32,
    /// cwnd before the last reduction (`prior_cwnd`), used by undo.
    pub prior_cwnd: u32,
    /// Initial window (packets), `tcp_init_cwnd`.
    pub init_cwnd: u32,
    /// Smoothed RTT in µs (Linux keeps it ×8 in `srtt_us`; this is `srtt_us >> 3`); 0 = no sample yet.
    pub srtt_us: u32,
    /// Windowed minimum RTT in µs (`tcp_min_rtt`), `u32::MAX` before the first sample.
    pub min_rtt_us: u32,
    /// Packets delivered (cumulatively ACKed or SACKed), `tp->delivered`.
    pub delivered: u64,
    /// Time (µs) of the last delivery, `tp->delivered_mstamp` (reset to the send time when a
    /// transmission starts with nothing in flight). Maintained by the sender's rate sampler.
    pub delivered_mstamp_us: u64,
    /// Earliest departure time (ns) of the next transmission, `tp->tcp_wstamp_ns` (EDT pacing).
    /// BBR uses it to estimate the packets still "in the network" at that time.
    pub wstamp_ns: u64,
    /// Packets delivered by ACKs that carried ECE (`tp->delivered_ce`, `tcp_count_delivered`).
    pub delivered_ce: u64,
    /// ECN negotiated on this connection (`tp->ecn_flags & TCP_ECN_OK`).
    pub ecn_ok: bool,
    /// Total packets marked lost (`tp->lost`).
    pub lost: u64,
    /// `tp->app_limited`: 0, or the `delivered` count at which the app-limited bubble ends.
    pub app_limited: u64,
    /// Byte sequence numbers: oldest unacknowledged and next new byte.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Scoreboard counters (packets).
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Total retransmitted segments (`total_retrans`).
    pub total_retrans: u64,
    /// `tp->is_cwnd_limited` and `max_packets_out` as maintained by `tcp_cwnd_validate`.
    pub is_cwnd_limited_flag: bool,
    pub max_packets_out: u32,
    /// `sk_pacing_rate` in bit/s. For CCs without `cong_control` the core rewrites it after each ACK
    /// (Linux `tcp_update_pacing_rate`); BBR-like CCs set it themselves. Enforced only when
    /// `pacing_status != None` and the rate is > 0.
    pub pacing_rate_bps: f64,
    pub pacing_status: PacingStatus,
    /// `sk_pacing_shift` (TSQ/TSO sizing; 10 ⇒ ~1 ms of data), kept for BBR.
    pub pacing_shift: u32,
    /// Congestion-avoidance state (`icsk_ca_state`).
    pub ca_state: CaState,
    /// Current retransmission timeout (ns), `icsk_rto`.
    pub rto_ns: u64,
    /// Time of the last data transmission (ns), `lsndtime`.
    pub lsndtime_ns: u64,
    /// Peer's advertised receive window (bytes).
    pub snd_wnd: u64,
}

impl Sock {
    pub fn new(mss: u32, init_cwnd: u32) -> Self {
        Sock {
            now_ns: 0,
            now_us: 0,
            mss,
            cwnd: init_cwnd,
            ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            cwnd_clamp: u32::MAX / 2,
            prior_cwnd: 0,
            init_cwnd,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            delivered: 0,
            delivered_mstamp_us: 0,
            wstamp_ns: 0,
            delivered_ce: 0,
            ecn_ok: false,
            lost: 0,
            app_limited: 0,
            snd_una: 0,
            snd_nxt: 0,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            total_retrans: 0,
            is_cwnd_limited_flag: false,
            max_packets_out: 0,
            pacing_rate_bps: 0.0,
            pacing_status: PacingStatus::None,
            pacing_shift: 10,
            ca_state: CaState::Open,
            rto_ns: 0,
            lsndtime_ns: 0,
            snd_wnd: 0,
        }
    }

    /// `tcp_in_slow_start`: cwnd < ssthresh.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_packets_in_flight` = packets_out − (sacked_out + lost_out) + retrans_out.
    #[inline]
    pub fn packets_in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_is_cwnd_limited` (include/net/tcp.h, 6.x): limited in the current window, or in slow
    /// start while at least half of the window was used.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited_flag {
            return true;
        }
        if self.in_slow_start() {
            return self.cwnd < 2 * self.max_packets_out;
        }
        false
    }

    /// Whether the transmit path currently enforces `pacing_rate_bps`.
    #[inline]
    pub fn is_paced(&self) -> bool {
        self.pacing_status != PacingStatus::None && self.pacing_rate_bps > 0.0
    }

    /// `tcp_current_ssthresh`: ssthresh, or ¾·cwnd if larger, outside CWR/Recovery.
    pub fn current_ssthresh(&self) -> u32 {
        if matches!(self.ca_state, CaState::Cwr | CaState::Recovery) {
            self.ssthresh
        } else {
            self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
        }
    }
}

/// Linux `enum tcp_ca_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (after idle).
    TxStart,
    /// Congestion window restart after idle (RFC 2861).
    CwndRestart,
    /// End of a cwnd reduction (CWR or Recovery completed).
    CompleteCwr,
    /// RTO fired (entering Loss).
    Loss,
    /// ECN: a received data packet was not CE-marked / was CE-marked. In Linux these reach the
    /// *receiving* socket's CC; ccbench's receiver has no CC instance and runs the DCTCP ACK state
    /// machine itself (`cc::dctcp::CeAckState`), so a data sender never sees them, as in Linux.
    EcnNoCe,
    EcnIsCe,
}

/// `in_ack_event` flags (Linux `CA_ACK_*`).
pub const CA_ACK_SLOWPATH: u32 = 1 << 0;
pub const CA_ACK_WIN_UPDATE: u32 = 1 << 1;
pub const CA_ACK_ECE: u32 = 1 << 2;

/// Linux `struct ack_sample`, given to `pkts_acked`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    /// Packets newly cumulatively ACKed (including ones SACKed earlier).
    pub pkts_acked: u32,
    /// RTT of the newest (S)ACKed never-retransmitted packet in µs, −1 if none.
    pub rtt_us: i64,
    /// Packets in flight when the newest ACKed packet was sent.
    pub in_flight: u32,
}

/// Linux `struct rate_sample` (net/ipv4/tcp_rate.c), given to `cong_control`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    /// `tx.delivered_mstamp` of the packet the sample is anchored on (µs); valid when `prior_valid`.
    pub prior_mstamp_us: u64,
    pub prior_valid: bool,
    /// `tp->delivered` when that packet was sent.
    pub prior_delivered: u64,
    /// Packets delivered over the interval; −1 = invalid sample.
    pub delivered: i64,
    pub delivered_ce: i64,
    /// max(send phase, ACK phase) in µs; −1 = invalid (e.g. shorter than min_rtt).
    pub interval_us: i64,
    pub snd_interval_us: i64,
    pub rcv_interval_us: i64,
    /// RTT of the last (S)ACKed packet in µs, −1 if none.
    pub rtt_us: i64,
    /// Packets newly marked lost by this ACK.
    pub losses: u32,
    /// Packets newly ACKed or SACKed by this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// The sample's packet was sent while the sender was application-limited.
    pub is_app_limited: bool,
    /// The sample's packet was a retransmission.
    pub is_retrans: bool,
    /// The ACK was probably delayed by the receiver.
    pub is_ack_delayed: bool,
    /// Packets in flight when the sample's packet was (re)sent, itself included
    /// (`rs->tx_in_flight`, BBRv3 tcp_rate.c).
    pub tx_in_flight: u32,
    /// `tp->lost` when that packet was sent (`scb->tx.lost`).
    pub prior_lost: u64,
    /// Packets marked lost since that packet was sent, this ACK's marks included
    /// (`rs->lost` = tp->lost − tx.lost, BBRv3).
    pub lost: u64,
}

/// Transmit-time snapshot of a packet just marked lost, for `skb_marked_lost` (BBRv3).
#[derive(Clone, Copy, Debug, Default)]
pub struct LostSkb {
    /// Packets in flight when it was sent, itself included (`tx.in_flight`).
    pub tx_in_flight: u32,
    /// `tp->lost` when it was sent (`tx.lost`).
    pub tx_lost: u64,
    /// Sent while application-limited (`tx.is_app_limited`).
    pub is_app_limited: bool,
    /// Its rate-sampling snapshot is still valid (`tx.delivered_mstamp != 0`).
    pub tx_valid: bool,
}

/// A congestion-control algorithm: Linux `struct tcp_congestion_ops`.
///
/// Call order per ACK is that of `tcp_ack()` (linux-tcp.md §1.2): `pkts_acked` from the
/// scoreboard update, `in_ack_event`, state changes via `set_state`/`ssthresh` from the
/// recovery state machine, then either `cong_control` (if `has_cong_control`) or the core's
/// PRR / `cong_avoid`.
pub trait CongestionControl: Send {
    /// Scheme name (as in the registry).
    fn name(&self) -> &'static str;
    /// Connection established (`init`); may set ssthresh, pacing status, etc.
    fn init(&mut self, _sk: &mut Sock) {}
    /// New ssthresh on entering CWR/Recovery/Loss (`ssthresh`, mandatory).
    fn ssthresh(&mut self, sk: &mut Sock) -> u32;
    /// Window growth on an ACK in Open/Disorder/Loss when the core allows growth.
    fn cong_avoid(&mut self, _sk: &mut Sock, _acked: u32) {}
    /// Whether this CC implements `cong_control` (BBR-like). If true the core skips PRR,
    /// `cong_avoid`, the end-of-reduction cwnd reset, restart-after-idle and its own pacing rate.
    fn has_cong_control(&self) -> bool {
        false
    }
    /// Called on every ACK instead of the core's cwnd logic when `has_cong_control()`.
    /// Returns whether it handled cwnd (if false the core falls back to PRR / `cong_avoid`).
    fn cong_control(&mut self, _sk: &mut Sock, _rs: &RateSample) -> bool {
        false
    }
    /// CA state change (called before the state is written to `sk.ca_state`).
    fn set_state(&mut self, _sk: &mut Sock, _new_state: CaState) {}
    /// CA events (`cwnd_event`).
    fn cwnd_event(&mut self, _sk: &mut Sock, _ev: CaEvent) {}
    /// ACK that (S)ACKed data: RTT sample (`pkts_acked`).
    fn pkts_acked(&mut self, _sk: &mut Sock, _sample: &AckSample) {}
    /// Every ACK (`in_ack_event`), flags `CA_ACK_*`.
    fn in_ack_event(&mut self, _sk: &mut Sock, _flags: u32) {}
    /// A packet was just marked lost, after `tp->lost` counted it (`skb_marked_lost`, BBRv3).
    fn skb_marked_lost(&mut self, _sk: &mut Sock, _skb: &LostSkb) {}
    /// cwnd to restore after a spurious reduction (`undo_cwnd`).
    fn undo_cwnd(&mut self, sk: &mut Sock) -> u32 {
        tcp_reno_undo_cwnd(sk)
    }
    /// The CC's own trace variables, appended as (name, value).
    fn sample(&self, _out: &mut Vec<(&'static str, f64)>) {}
    /// Linux `TCP_CONG_NEEDS_ECN`: the connection requests ECN even when the flow's group does
    /// not ask for it (DCTCP). The engine negotiates ECN for such flows unless the group says
    /// `ecn: false`; the receiver then runs the DCTCP ACK state machine.
    fn needs_ecn(&self) -> bool {
        false
    }
    /// ccbench: the endpoint must use non-SACK (NewReno, RFC 6582) recovery for this flow, as if
    /// SACK were not negotiated (the `newreno` scheme). The engine turns SACK off at both ends.
    fn needs_non_sack_recovery(&self) -> bool {
        false
    }
}

/// `tcp_slow_start` (tcp_cong.c, packet-counting form ≥ 4.0): cwnd = min(cwnd + acked, ssthresh),
/// clamped; returns the `acked` left over for congestion avoidance.
pub fn tcp_slow_start(sk: &mut Sock, acked: u32) -> u32 {
    let cwnd = sk.cwnd.saturating_add(acked).min(sk.ssthresh);
    let left = acked - (cwnd - sk.cwnd);
    sk.cwnd = cwnd.min(sk.cwnd_clamp);
    left
}

/// `tcp_cong_avoid_ai` (tcp_cong.c): cwnd += 1 per `w` packets acked, credit carried in
/// `snd_cwnd_cnt`.
pub fn tcp_cong_avoid_ai(sk: &mut Sock, w: u32, acked: u32) {
    let w = w.max(1);
    // If credits accumulated at a higher w, apply them gently now.
    if sk.snd_cwnd_cnt >= w {
        sk.snd_cwnd_cnt = 0;
        sk.cwnd += 1;
    }
    sk.snd_cwnd_cnt += acked;
    if sk.snd_cwnd_cnt >= w {
        let delta = sk.snd_cwnd_cnt / w;
        sk.snd_cwnd_cnt -= delta * w;
        sk.cwnd += delta;
    }
    sk.cwnd = sk.cwnd.min(sk.cwnd_clamp);
}

/// `tcp_reno_undo_cwnd`: max(cwnd, prior_cwnd).
pub fn tcp_reno_undo_cwnd(sk: &Sock) -> u32 {
    sk.cwnd.max(sk.prior_cwnd)
}

/// `tcp_reno_ssthresh`: max(cwnd/2, 2).
pub fn tcp_reno_ssthresh(sk: &Sock) -> u32 {
    (sk.cwnd >> 1).max(2)
}

/// Kathleen Nichols' windowed min/max estimator (Linux lib/minmax.c): the best, 2nd-best and
/// 3rd-best values over the last `win` time units, updated in O(1). Used for min_rtt
/// (window 300 s) and by BBR (max bandwidth over 10 rounds).
#[derive(Clone, Copy, Debug)]
pub struct Minmax {
    s: [(u64, u64); 3], // (time, value)
}

impl Minmax {
    pub fn new(t: u64, v: u64) -> Self {
        Minmax { s: [(t, v); 3] }
    }
    pub fn get(&self) -> u64 {
        self.s[0].1
    }
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }
    fn subwin_update(&mut self, win: u64, val: (u64, u64)) -> u64 {
        let dt = val.0.wrapping_sub(self.s[0].0);
        if dt > win {
            // The best value is older than the window: promote the 2nd and 3rd choices, maybe twice.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window passed without a new 2nd choice: take one from the 2nd quarter.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Half the window passed without a new 3rd choice.
            self.s[2] = val;
        }
        self.s[0].1
    }
    /// Running minimum over `win`.
    pub fn running_min(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = (t, v);
        if v <= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v <= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if v <= self.s[2].1 {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
    /// Running maximum over `win`.
    pub fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = (t, v);
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------------

/// One tunable of a scheme.
pub struct ParamInfo {
    pub name: &'static str,
    pub default: f64,
    pub doc: &'static str,
}

/// A registered scheme.
pub struct SchemeInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub source: &'static str,
    pub params: &'static [ParamInfo],
}

static SCHEMES: &[SchemeInfo] = &[
    SchemeInfo {
        name: "bbr",
        description: "BBR v1: model-based (windowed max bandwidth × min RTT), STARTUP/DRAIN/PROBE_BW/PROBE_RTT, gain-cycled pacing, cwnd = 2·BDP + TSO/even/probe extras + ACK-aggregation allowance, policer (long-term bw) detection",
        source: "Linux net/ipv4/tcp_bbr.c (5.4–6.x; 4.19/4.9 via parameters); cc-algorithms.md §3",
        params: bbr::PARAMS,
    },
    SchemeInfo {
        name: "bbr-shallow",
        description: "BBR v1 with PROBE_BW cwnd_gain 1.5 (BBR_Shallow, study 002): everything else as bbr",
        source: "Claypool et al. tcp_bbrshallow.c (4.19 tcp_bbr.c with one constant changed); cc-algorithms.md §3.8",
        params: bbr::SHALLOW_PARAMS,
    },
    SchemeInfo {
        name: "bbr3",
        description: "BBRv3: BBR with loss/ECN-bounded probing (inflight_hi/inflight_lo, bw_lo), PROBE_BW DOWN/CRUISE/REFILL/UP, 2 % loss threshold, ECN alpha, PROBE_RTT every 5 s at 0.5·BDP",
        source: "Linux v3 tree github.com/google/bbr (branch v3) net/ipv4/tcp_bbr.c; draft-ietf-ccwg-bbr",
        params: bbr3::PARAMS,
    },
    SchemeInfo {
        name: "reno",
        description: "Reno/NewReno AIMD as in Linux tcp_cong.c: packet-counting slow start, +1 MSS per cwnd in CA, halve on loss",
        source: "Linux net/ipv4/tcp_cong.c; RFC 5681, 6582; cc-algorithms.md §5",
        params: &[],
    },
    SchemeInfo {
        name: "newreno",
        description: "Classic NewReno: Reno's AIMD with the endpoint forced to non-SACK recovery (3 dupACKs, one retransmission per partial ACK, RFC 6582) for this flow",
        source: "Linux net/ipv4/tcp_cong.c + tcp_input.c non-SACK path (tcp_add_reno_sack, tcp_newreno_mark_lost); RFC 6582; cc-algorithms.md §5",
        params: &[],
    },
    SchemeInfo {
        name: "dctcp",
        description: "DCTCP: ECN-based; once per RTT alpha = (1-g)·alpha + g·F (g = 1/16), on ECE cwnd·(1 − alpha/2) once per window, halve on loss; Reno growth. Needs ECN (falls back to dctcp-reno without)",
        source: "Linux net/ipv4/tcp_dctcp.c (5.x/6.x), include/net/tcp_dctcp.h; RFC 8257; cc-algorithms.md §7.12",
        params: dctcp::PARAMS,
    },
    SchemeInfo {
        name: "cubic",
        description: "CUBIC with HyStart (ACK train + delay), fast convergence and the TCP-friendly region, integer arithmetic as Linux",
        source: "Linux net/ipv4/tcp_cubic.c (5.7+/6.x); RFC 8312/9438; cc-algorithms.md §4",
        params: cubic::PARAMS,
    },
    SchemeInfo {
        name: "bic",
        description: "BIC-TCP: binary search towards the last maximum, then max probing; beta 0.8, Reno below 14 packets",
        source: "Linux net/ipv4/tcp_bic.c (2.6.32–3.x); cc-algorithms.md §7.1",
        params: bic::PARAMS,
    },
    SchemeInfo {
        name: "westwood",
        description: "Westwood+: Reno growth; after loss ssthresh (and cwnd after recovery) = filtered bandwidth × min RTT",
        source: "Linux net/ipv4/tcp_westwood.c (2.6.32–3.x rules, 4.x+ hooks); cc-algorithms.md §7.2",
        params: westwood::PARAMS,
    },
    SchemeInfo {
        name: "htcp",
        description: "H-TCP: increase grows with time since the last loss (RTT-scaled), backoff minRTT/maxRTT in [0.5, 0.8]",
        source: "Linux net/ipv4/tcp_htcp.c (5.x/6.x); cc-algorithms.md §7.3",
        params: htcp::PARAMS,
    },
    SchemeInfo {
        name: "highspeed",
        description: "HighSpeed TCP: window-dependent AIMD a(w), b(w) from the RFC 3649 table",
        source: "Linux net/ipv4/tcp_highspeed.c (5.x/6.x); RFC 3649 App. B; cc-algorithms.md §7.4",
        params: highspeed::PARAMS,
    },
    SchemeInfo {
        name: "hybla",
        description: "Hybla: growth scaled by rho = SRTT/25 ms (slow start 2^rho − 1, CA rho²/cwnd per ACK) for long-RTT paths",
        source: "Linux net/ipv4/tcp_hybla.c (3.x); cc-algorithms.md §7.5",
        params: hybla::PARAMS,
    },
    SchemeInfo {
        name: "scalable",
        description: "Scalable TCP: +1 segment per 100 acked above 100 packets (1 %/RTT), decrease by 1/8 on loss",
        source: "Linux net/ipv4/tcp_scalable.c (5.x/6.x); cc-algorithms.md §7.7",
        params: scalable::PARAMS,
    },
    SchemeInfo {
        name: "vegas",
        description: "Vegas: once per RTT diff = cwnd·(minRTT − baseRTT)/baseRTT packets queued; +1 below alpha, −1 above beta, leave slow start above gamma",
        source: "Linux net/ipv4/tcp_vegas.c (2.6.2x–6.x); Brakmo & Peterson 1995; cc-algorithms.md §6",
        params: vegas::PARAMS,
    },
    SchemeInfo {
        name: "veno",
        description: "Veno: Vegas backlog N picks the loss response (N < 3: ×4/5, else ×1/2) and the CA growth (every RTT or every other RTT)",
        source: "Linux net/ipv4/tcp_veno.c (3.x); Fu & Liew 2003; cc-algorithms.md §7.9",
        params: veno::PARAMS,
    },
    SchemeInfo {
        name: "yeah",
        description: "YeAH: Scalable growth while the Vegas queue estimate is small, Reno otherwise; precautionary decongestion above 80 packets; loss reduction = queue",
        source: "Linux net/ipv4/tcp_yeah.c (3.x); Baiocchi et al. PFLDnet 2007; cc-algorithms.md §7.8",
        params: yeah::PARAMS,
    },
    SchemeInfo {
        name: "lp",
        description: "TCP-LP: Reno that yields early: smoothed one-way delay above min + 15 % of the range halves cwnd (to 1 within 3 RTTs of the last time)",
        source: "Linux net/ipv4/tcp_lp.c (3.x; RTT as the relative OWD); Kuzmanovic & Knightly 2006; cc-algorithms.md §7.10",
        params: lp::PARAMS,
    },
    SchemeInfo {
        name: "nv",
        description: "TCP-NV: per RTT compares cwnd with the window the measured rate needs at min RTT plus nv_pad; decreases by 30 % of the excess",
        source: "Linux net/ipv4/tcp_nv.c (4.8+/5.x/6.x); cc-algorithms.md §7.11",
        params: nv::PARAMS,
    },
    SchemeInfo {
        name: "illinois",
        description: "Illinois: loss-based AIMD with alpha in [0.3, 10] and beta in [1/8, 1/2] set per RTT from the average queueing delay",
        source: "Linux net/ipv4/tcp_illinois.c (4.x–6.x); Liu, Başar & Srikant 2008; cc-algorithms.md §7.6",
        params: illinois::PARAMS,
    },
    SchemeInfo {
        name: "hldg",
        description: "HLDG: CDG-based hybrid: gradients vs cycle n-2 after a back-off, gamma-packet filter, weighted moving average, ZSGW, back-off to 0.95·BDP, accumulated probability, DELAY/LOSS(CUBIC)/PROBE modes, ACK-train slow start",
        source: "Al-Saadi, PhD thesis, Swinburne 2019 (Ch. 5-6); cc-algorithms.md §2 with decisions D1-D30",
        params: hldg::PARAMS,
    },
    SchemeInfo {
        name: "copa",
        description: "Copa: target rate 1/(delta·d_q) from the standing RTT (min over srtt/2) minus min RTT (10 s); cwnd ±v/(delta·cwnd) per ACK with velocity doubling; paced at 2·cwnd/RTT; competitive mode (AIMD on 1/delta) when the queue never empties in 5 RTTs",
        source: "Arun & Balakrishnan, NSDI 2018 (revised version), genericCC for unstated details",
        params: copa::PARAMS,
    },
    SchemeInfo {
        name: "cdg",
        description: "CDG: per-RTT gradients of min/max RTT, moving average over 8 RTTs, back-off to 0.7·cwnd with P = 1 − exp(−g/3 ms), shadow window, queue-state loss tolerance, ineffectual-back-off detection",
        source: "FreeBSD sys/netinet/cc/cc_cdg.c v0.1; Hayes & Armitage IFIP Networking 2011; cc-algorithms.md §1",
        params: cdg::PARAMS,
    },
];

/// All registered schemes.
pub fn schemes() -> &'static [SchemeInfo] {
    SCHEMES
}

/// Construct a scheme by name. `params` is a JSON object (or null) of the scheme's parameters.
pub fn make(name: &str, params: &serde_json::Value) -> Result<Box<dyn CongestionControl>, String> {
    let info = SCHEMES.iter().find(|s| s.name == name).ok_or_else(|| {
        let known: Vec<&str> = SCHEMES.iter().map(|s| s.name).collect();
        format!("unknown congestion control scheme {:?}; known schemes: {}", name, known.join(", "))
    })?;
    let obj = match params {
        serde_json::Value::Null => None,
        serde_json::Value::Object(m) => Some(m),
        other => {
            return Err(format!(
                "parameters of scheme {:?} must be an object or null, got {}",
                name, other
            ))
        }
    };
    if let Some(m) = obj {
        for k in m.keys() {
            if !info.params.iter().any(|p| p.name == k) {
                let valid: Vec<&str> = info.params.iter().map(|p| p.name).collect();
                return Err(format!(
                    "unknown parameter {:?} for scheme {:?}; valid parameters: {}",
                    k,
                    name,
                    if valid.is_empty() { "(none)".to_string() } else { valid.join(", ") }
                ));
            }
        }
    }
    let p = Params { scheme: name, obj };
    match name {
        "reno" => Ok(Box::new(reno::Reno::new())),
        "bbr" => Ok(Box::new(bbr::Bbr::from_params(&p)?)),
        "bbr-shallow" => Ok(Box::new(bbr::Bbr::shallow_from_params(&p)?)),
        "bbr3" => Ok(Box::new(bbr3::Bbr3::from_params(&p)?)),
        "newreno" => Ok(Box::new(newreno::NewReno::new())),
        "dctcp" => Ok(Box::new(dctcp::Dctcp::from_params(&p)?)),
        "cubic" => Ok(Box::new(cubic::Cubic::from_params(&p)?)),
        "bic" => Ok(Box::new(bic::Bic::from_params(&p)?)),
        "westwood" => Ok(Box::new(westwood::Westwood::new())),
        "htcp" => Ok(Box::new(htcp::Htcp::from_params(&p)?)),
        "highspeed" => Ok(Box::new(highspeed::HighSpeed::new())),
        "hybla" => Ok(Box::new(hybla::Hybla::from_params(&p)?)),
        "scalable" => Ok(Box::new(scalable::Scalable::from_params(&p)?)),
        "vegas" => Ok(Box::new(vegas::Vegas::from_params(&p)?)),
        "veno" => Ok(Box::new(veno::Veno::from_params(&p)?)),
        "yeah" => Ok(Box::new(yeah::Yeah::from_params(&p)?)),
        "lp" => Ok(Box::new(lp::Lp::from_params(&p)?)),
        "nv" => Ok(Box::new(nv::Nv::from_params(&p)?)),
        "illinois" => Ok(Box::new(illinois::Illinois::from_params(&p)?)),
        "hldg" => Ok(Box::new(hldg::Hldg::from_params(&p)?)),
        "copa" => Ok(Box::new(copa::Copa::from_params(&p)?)),
        "cdg" => Ok(Box::new(cdg::Cdg::from_params(&p)?)),
        _ => unreachable!(),
    }
}

/// The parameters the engine hands to `make` for a flow: schemes that take `seed`/`stream`
/// parameters (randomised CCs) get the experiment seed and the flow id unless the experiment
/// sets them, so their random draws are a pure function of (experiment seed, flow).
pub fn engine_params(name: &str, params: &serde_json::Value, seed: u64, stream: u64) -> serde_json::Value {
    let takes_seed = SCHEMES.iter().any(|s| s.name == name && s.params.iter().any(|p| p.name == "seed"));
    let mut obj = match params {
        serde_json::Value::Null if takes_seed => serde_json::Map::new(),
        serde_json::Value::Object(m) if takes_seed => m.clone(),
        _ => return params.clone(),
    };
    obj.entry("seed").or_insert(serde_json::Value::from(seed));
    obj.entry("stream").or_insert(serde_json::Value::from(stream));
    serde_json::Value::Object(obj)
}

/// Typed access to a scheme's JSON parameters (already checked for unknown names).
pub struct Params<'a> {
    scheme: &'a str,
    obj: Option<&'a serde_json::Map<String, serde_json::Value>>,
}

impl<'a> Params<'a> {
    fn get(&self, key: &str) -> Option<&'a serde_json::Value> {
        self.obj.and_then(|m| m.get(key))
    }
    fn type_err(&self, key: &str, want: &str, v: &serde_json::Value) -> String {
        format!("parameter {:?} of scheme {:?} must be {}, got {}", key, self.scheme, want, v)
    }
    /// Integer parameter within [lo, hi].
    pub fn int(&self, key: &str, default: i64, lo: i64, hi: i64) -> Result<i64, String> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => {
                let x = if let Some(i) = v.as_i64() {
                    i
                } else if let Some(f) = v.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9e15) {
                    f as i64
                } else {
                    return Err(self.type_err(key, "an integer", v));
                };
                if x < lo || x > hi {
                    return Err(format!(
                        "parameter {:?} of scheme {:?} must be in [{}, {}], got {}",
                        key, self.scheme, lo, hi, x
                    ));
                }
                Ok(x)
            }
        }
    }
    /// Boolean parameter (true/false or 0/1).
    pub fn bool(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(default),
            Some(serde_json::Value::Bool(b)) => Ok(*b),
            Some(v) => match v.as_i64() {
                Some(0) => Ok(false),
                Some(1) => Ok(true),
                _ => Err(self.type_err(key, "a boolean (or 0/1)", v)),
            },
        }
    }
    /// Real parameter within [lo, hi].
    pub fn float(&self, key: &str, default: f64, lo: f64, hi: f64) -> Result<f64, String> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => {
                let x = v.as_f64().ok_or_else(|| self.type_err(key, "a number", v))?;
                if !(x >= lo && x <= hi) {
                    return Err(format!(
                        "parameter {:?} of scheme {:?} must be in [{}, {}], got {}",
                        key, self.scheme, lo, hi, x
                    ));
                }
                Ok(x)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(cwnd: u32, ssthresh: u32) -> Sock {
        let mut s = Sock::new(1448, 10);
        s.cwnd = cwnd;
        s.ssthresh = ssthresh;
        s
    }

    #[test]
    fn slow_start_caps_at_ssthresh_and_returns_leftover() {
        let mut s = sk(10, 14);
        assert_eq!(tcp_slow_start(&mut s, 2), 0);
        assert_eq!(s.cwnd, 12);
        // 12 + 5 would be 17 > 14: cwnd = 14, 3 left for CA.
        assert_eq!(tcp_slow_start(&mut s, 5), 3);
        assert_eq!(s.cwnd, 14);
    }

    #[test]
    fn cong_avoid_ai_adds_one_per_window_with_credit() {
        let mut s = sk(10, 5);
        // 9 acked: no increase yet, credit 9.
        tcp_cong_avoid_ai(&mut s, 10, 9);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (10, 9));
        // 1 more: cwnd 11, credit 0.
        tcp_cong_avoid_ai(&mut s, 10, 1);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (11, 0));
        // A stretch ACK of 25 at w = 11: +2, credit 3.
        tcp_cong_avoid_ai(&mut s, 11, 25);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (13, 3));
        // Credit accumulated at a higher w (cnt >= new w): +1 and reset first.
        s.snd_cwnd_cnt = 7;
        tcp_cong_avoid_ai(&mut s, 5, 1);
        assert_eq!((s.cwnd, s.snd_cwnd_cnt), (14, 1));
        // Clamp.
        s.cwnd_clamp = 14;
        tcp_cong_avoid_ai(&mut s, 1, 10);
        assert_eq!(s.cwnd, 14);
    }

    #[test]
    fn reno_undo_and_ssthresh() {
        let mut s = sk(20, 100);
        s.prior_cwnd = 30;
        assert_eq!(tcp_reno_undo_cwnd(&s), 30);
        assert_eq!(tcp_reno_ssthresh(&s), 10);
        s.cwnd = 3;
        assert_eq!(tcp_reno_ssthresh(&s), 2);
    }

    #[test]
    fn is_cwnd_limited_rules() {
        let mut s = sk(10, 100);
        s.max_packets_out = 4;
        assert!(!s.is_cwnd_limited()); // 10 >= 2*4
        s.max_packets_out = 6;
        assert!(s.is_cwnd_limited()); // slow start, more than half used
        s.ssthresh = 5; // CA: only the flag counts
        assert!(!s.is_cwnd_limited());
        s.is_cwnd_limited_flag = true;
        assert!(s.is_cwnd_limited());
    }

    #[test]
    fn minmax_windowed_min_expires() {
        let mut m = Minmax::new(0, u64::MAX);
        assert_eq!(m.running_min(100, 0, 50), 50);
        assert_eq!(m.running_min(100, 10, 60), 50);
        assert_eq!(m.running_min(100, 30, 70), 50);
        // 50 (t=0) leaves the window at t=101; the best remaining choice is taken.
        let v = m.running_min(100, 101, 80);
        assert!(v > 50 && v <= 80, "got {}", v);
        assert_eq!(m.running_min(100, 102, 40), 40);
        let mut mx = Minmax::new(0, 0);
        mx.running_max(10, 0, 5);
        mx.running_max(10, 5, 3);
        assert_eq!(mx.get(), 5);
        assert_eq!(mx.running_max(10, 11, 2), 3);
    }

    #[test]
    fn registry_errors() {
        let e = make("nosuch", &serde_json::Value::Null).err().unwrap();
        assert!(e.contains("nosuch") && e.contains("reno") && e.contains("cubic"), "{}", e);
        let e = make("cubic", &serde_json::json!({"betta": 700})).err().unwrap();
        assert!(e.contains("betta") && e.contains("beta") && e.contains("hystart_detect"), "{}", e);
        let e = make("reno", &serde_json::json!({"x": 1})).err().unwrap();
        assert!(e.contains("\"x\"") && e.contains("(none)"), "{}", e);
        let e = make("cubic", &serde_json::json!({"beta": "high"})).err().unwrap();
        assert!(e.contains("beta") && e.contains("integer"), "{}", e);
        let e = make("cubic", &serde_json::json!({"hystart": "yes"})).err().unwrap();
        assert!(e.contains("hystart") && e.contains("boolean"), "{}", e);
        let e = make("cubic", &serde_json::json!([1, 2])).err().unwrap();
        assert!(e.contains("object"), "{}", e);
        let e = make("cubic", &serde_json::json!({"beta": 2000})).err().unwrap();
        assert!(e.contains("[1, 1023]"), "{}", e);
        assert_eq!(make("cubic", &serde_json::json!({"beta": 819, "hystart": false})).unwrap().name(), "cubic");
        assert_eq!(make("reno", &serde_json::json!({})).unwrap().name(), "reno");
        // Names are unique (the count grows as schemes are added).
        let mut names: Vec<&str> = schemes().iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), schemes().len());
        for s in schemes() {
            assert!(make(s.name, &serde_json::Value::Null).is_ok());
            // Every scheme constructs under its own name.
            assert_eq!(make(s.name, &serde_json::Value::Null).unwrap().name(), s.name);
        }
    }
}
