//! TCP sender: a pure state machine following Linux `tcp_ack()` / `tcp_write_xmit()` / timers,
//! in packet units like Linux. This file holds the state, the constructor, the application
//! interface (`tcp_sendmsg`, net/ipv4/tcp.c) and the samples; the behaviour is split as the
//! kernel splits it, one `impl TcpSender` block per file:
//!
//! | file          | mirrors (Linux `net/ipv4/`)                                                      |
//! |---------------|----------------------------------------------------------------------------------|
//! | `output.rs`   | `tcp_output.c`: `tcp_write_xmit`, `tcp_xmit_retransmit_queue`, EDT pacing, `tcp_cwnd_validate` |
//! | `rate.rs`     | `tcp_rate.c`: delivery-rate sampling, app-limited marking                        |
//! | `ack.rs`      | `tcp_input.c`: `tcp_ack`, `tcp_sacktag_write_queue`, `tcp_clean_rtx_queue`, RTT estimator |
//! | `rack.rs`     | `tcp_recovery.c`: RACK loss detection, reordering window                         |
//! | `recovery.rs` | `tcp_input.c`: `tcp_fastretrans_alert`, PRR `tcp_cwnd_reduction`, `tcp_cong_control` |
//! | `sndbuf.rs`   | `tcp.c`/`tcp_input.c`: send buffer (`tcp_wmem`, `tcp_sendmsg` limit, `tcp_sndbuf_expand`) |
//! | `undo.rs`     | `tcp_input.c`: undo (`tcp_try_undo_*`, `tcp_undo_cwnd_reduction`), F-RTO (`tcp_process_loss`; 2.6-3.9 `tcp_enter_frto`, `tcp_process_frto`) |
//! | `timer.rs`    | `tcp_timer.c` (+ `tcp_schedule_loss_probe` of `tcp_output.c`): RTO, TLP, reorder timer |
//!
//! Implemented:
//! * handshake (SYN, SYN retransmission with backoff, SYN-ACK gives the first RTT sample);
//! * SACK scoreboard over a `VecDeque` of `Copy` segment records (one per MSS packet; segments are
//!   never split or collapsed), with a cache of the previous ACK's blocks (`recv_sack_cache`);
//! * RTT: Karn-safe samples from the oldest/newest newly ACKed never-retransmitted packet, SACK
//!   RTT, TSecr fallback at 1 ms timestamp granularity; `tcp_rtt_estimator`; RTO = srtt + rttvar
//!   rounded up to a jiffy (1 ms), floor via rttvar ≥ rto_min, exponential backoff, 120 s cap;
//!   min_rtt windowed filter (300 s);
//! * loss detection: **RACK** (RFC 8985 as in Linux tcp_recovery.c, `tcp_recovery = 1`): a packet is
//!   lost once a packet sent after it is (S)ACKed and `rack.rtt + reo_wnd` has elapsed since it was
//!   sent; reo_wnd = 0 without observed reordering once ≥ `reordering` (3) packets are SACKed or in
//!   recovery, else min_rtt/4·steps (≤ srtt), D-SACK-driven steps; reorder timer. There is no
//!   separate dupthresh/FACK rule (Linux with RACK enabled does not use it either);
//! * TLP (RFC 8985, `tcp_early_retrans = 3`): PTO = 2·srtt + (rto_min if 1 packet out else 2 ms),
//!   probe with new data or the last segment, loss-probe recovery (CWR) on the probe's ACK;
//! * recovery state machine of `tcp_fastretrans_alert` (Open/Disorder/CWR/Recovery/Loss), PRR
//!   (RFC 6937, Linux 6.x `tcp_cwnd_reduction`), RTO recovery (`tcp_enter_loss`: ssthresh from CC,
//!   cwnd = in_flight + 1, un-SACKed packets marked lost except ones sent within rack.rtt);
//! * reordering detection (`tcp_check_sack_reordering`) and adaptive `reordering`;
//! * cwnd-limited tracking (`tcp_cwnd_validate`, 6.x), cwnd validation for application-limited
//!   senders and restart after idle (RFC 2861 as Linux) when `slow_start_after_idle`;
//! * delivery-rate sampling (tcp_rate.c; draft-cheng-iccrg-delivery-rate-estimation), app-limited marking;
//! * pacing, EDT style (`tcp_wstamp_ns`, the first 10 segments not delayed, idle credit), when the
//!   CC requested it (`PacingStatus::Needed`, automatic for `cong_control` CCs) or `pacing_default`
//!   (fq) is set; `sk_pacing_rate` itself is always maintained as Linux does.
//!
//! * non-SACK (NewReno, RFC 6582) recovery when SACK is off, as Linux's `tcp_is_reno()` path:
//!   dupACKs counted in `sacked_out` (`tcp_add_reno_sack`, limited transmit falls out of
//!   in_flight), head marked lost after `reordering` (3) dupACKs and on each partial ACK in
//!   Recovery (`tcp_newreno_mark_lost`), Recovery held until an ACK above `high_seq`, PRR;
//! * ECN (RFC 3168 as Linux): ECT(0) on new data (on everything for `needs_ecn` CCs), ECE →
//!   `in_ack_event(CA_ACK_ECE)`, `delivered_ce`, CWR state via the CC's ssthresh at most once per
//!   window (`tcp_enter_cwr` from `tcp_try_to_open`), CWR flag on the next new segment after any
//!   reduction (`tcp_ecn_queue_cwr`);
//! * RTT-measurement granularity (`rtt_granularity_ns`, `quantise_rtt_us`) for every RTT sample
//!   the estimator, min_rtt and the CC see (RACK keeps µs).
//!
//! * undo of spurious reductions (`undo.rs`): D-SACK undo, timestamp (Eifel) undo at the end of
//!   Recovery/Loss and on partial ACKs, and F-RTO — RFC 5682 as since 3.10, or the pre-3.10
//!   algorithm with its rate-halving response (`TcpConfig::frto`).
//!
//! Not implemented (known simplifications): ECN nonce / AccECN,
//! TSO/GSO (TSQ is opt-in: `TcpConfig::tsq`, output.rs), Nagle, SACK reneging handling beyond resetting marks on RTO, partial ACKs of
//! a segment, window scaling granularity, the 3 s `TCP_TIMEOUT_FALLBACK` and give-up limits.

use std::collections::VecDeque;

use super::{FlowSample, TcpConfig};
use crate::cc::{CongestionControl, Minmax, PacingStatus, RateSample, Sock, TCP_INFINITE_SSTHRESH};

mod ack;
mod defer;
mod output;
mod rack;
mod rate;
mod recovery;
mod sndbuf;
mod timer;
mod undo;

// Segment flags (Linux TCPCB_*).
/// SACKed (`TCPCB_SACKED_ACKED`).
const SACKED: u8 = 1;
/// Marked lost (`TCPCB_LOST`).
const LOST: u8 = 2;
/// A retransmission is in flight (`TCPCB_SACKED_RETRANS`).
const RETRANS_OUT: u8 = 4;
/// Ever retransmitted (`TCPCB_EVER_RETRANS`).
const EVER_RETRANS: u8 = 8;
/// The first segment still unACKed of a sent skb (sndbuf.rs: each sent skb costs one head of
/// truesize until its last segment is ACKed).
const SKB_HEAD: u8 = 16;
/// Carries PSH (`TCPHDR_PSH` in the skb's `tcp_flags`; kept on retransmission).
const PSH: u8 = 32;

// tcp_ack flags (Linux FLAG_*).
const FLAG_WIN_UPDATE: u32 = 0x02;
const FLAG_DATA_ACKED: u32 = 0x04;
const FLAG_RETRANS_DATA_ACKED: u32 = 0x08;
const FLAG_SYN_ACKED: u32 = 0x10;
const FLAG_DATA_SACKED: u32 = 0x20;
const FLAG_ECE: u32 = 0x40;
const FLAG_LOST_RETRANS: u32 = 0x80;
const FLAG_ORIG_SACK_ACKED: u32 = 0x200;
const FLAG_SND_UNA_ADVANCED: u32 = 0x400;
const FLAG_DSACKING_ACK: u32 = 0x800;
const FLAG_SET_XMIT_TIMER: u32 = 0x1000;
const FLAG_ACK_MAYBE_DELAYED: u32 = 0x10000;
const FLAG_DSACK_TLP: u32 = 0x20000;
/// A retransmitted segment other than the first one this ACK covers was ACKed (2.6-3.9
/// `FLAG_NONHEAD_RETRANS_ACKED`, used by the pre-3.10 F-RTO).
const FLAG_NONHEAD_RETRANS_ACKED: u32 = 0x40000;
/// A never-retransmitted segment below `frto_highmark` was SACKed (pre-3.10
/// `FLAG_ONLY_ORIG_SACKED`).
const FLAG_ONLY_ORIG_SACKED: u32 = 0x80000;
const FLAG_ACKED: u32 = FLAG_DATA_ACKED | FLAG_SYN_ACKED;
const FLAG_NOT_DUP: u32 = FLAG_WIN_UPDATE | FLAG_ACKED;
const FLAG_CA_ALERT: u32 = FLAG_DATA_SACKED | FLAG_ECE | FLAG_DSACKING_ACK;
const FLAG_FORWARD_PROGRESS: u32 = FLAG_ACKED | FLAG_DATA_SACKED;

/// `TCP_RTO_MAX` (120 s).
const TCP_RTO_MAX_NS: u64 = 120_000_000_000;
/// `TCP_TIMEOUT_MIN` = 2 jiffies (HZ = 1000).
const TCP_TIMEOUT_MIN_NS: u64 = 2_000_000;
/// `tcp_reordering` / `tcp_max_reordering` sysctls.
const TCP_REORDERING: u32 = 3;
const TCP_MAX_REORDERING: u32 = 300;
/// `TCP_RACK_RECOVERY_THRESH`: recoveries a raised reo_wnd persists.
const TCP_RACK_RECOVERY_THRESH: u32 = 16;
/// `tcp_min_rtt_wlen` = 300 s, in µs.
const MIN_RTT_WLEN_US: u64 = 300_000_000;
/// `tcp_pacing_ss_ratio` / `tcp_pacing_ca_ratio` (%).
const PACING_SS_RATIO: f64 = 200.0;
const PACING_CA_RATIO: f64 = 120.0;
/// Data segments sent before EDT pacing starts delaying (mimics fq's initial quantum).
const PACING_FREE_SEGS: u64 = 10;

#[inline]
fn ceil_ms_ns(ns: u64) -> u64 {
    (ns + 999_999) / 1_000_000 * 1_000_000
}

/// One transmitted, not yet cumulatively ACKed segment (≈ a one-packet skb with its tcp_skb_cb).
#[derive(Clone, Copy, Debug)]
struct TxSeg {
    seq: u64,
    len: u32,
    flags: u8,
    /// `tx.delivered_mstamp` still valid (cleared once the packet is SACKed and sampled).
    rate_valid: bool,
    tx_app_limited: bool,
    /// Time of the latest (re)transmission.
    sent_ns: u64,
    tx_delivered: u64,
    tx_delivered_us: u64,
    tx_first_tx_us: u64,
    /// Packets in flight when sent (incl. this one).
    tx_in_flight: u32,
    /// `tp->lost` when sent (`tx.lost`, BBRv3).
    tx_lost: u64,
}

impl TxSeg {
    #[inline]
    fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    #[inline]
    fn sent_us(&self) -> u64 {
        self.sent_ns / 1000
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimerKind {
    Retrans,
    LossProbe,
    ReoTimeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConnState {
    Closed,
    SynSent,
    Established,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    NewData,
    Retrans,
}

/// RACK state (`tp->rack`).
#[derive(Clone, Copy, Debug, Default)]
struct Rack {
    mstamp_ns: u64,
    rtt_us: u32,
    end_seq: u64,
    advanced: bool,
    reo_wnd_steps: u32,
    reo_wnd_persist: u32,
    dsack_seen: bool,
    last_delivered: u64,
}

/// Per-ACK scratch state (`tcp_sacktag_state` + what `tcp_ack` keeps on the stack).
struct AckState {
    first_sackt_us: Option<u64>,
    last_sackt_us: u64,
    reord: u64,
    rs: RateSample,
    last_end_seq: u64,
    sack_delivered: u32,
}

pub struct TcpSender {
    cfg: TcpConfig,
    cc: Box<dyn CongestionControl>,
    sk: Sock,
    state: ConnState,
    /// TSval of the latest ACK received, echoed as TSecr on data (RFC 7323 `ts_recent`).
    peer_tsval_ns: u64,
    /// Finite flow: total bytes, `completed_at` is set once they are all ACKed.
    app_bytes: Option<u64>,
    /// Bytes the application has handed over so far (u64::MAX = an unlimited backlog). Fixed
    /// for bulk and finite flows; grows with [`Self::app_write`]. The socket takes them as its
    /// send buffer allows (`write_seq`, sndbuf.rs).
    written: u64,
    /// `write_seq`: bytes copied into the socket (≤ `written`).
    write_seq: u64,
    /// `sk_sndbuf` (bytes of skb truesize); set at establishment.
    sndbuf: u64,
    /// `SOCK_NOSPACE`: the application found the send buffer full and waits to be woken.
    nospace: bool,
    /// Unsent PSH marks: the `write_seq` of each `tcp_mark_push` (sndbuf.rs), oldest first; the
    /// segment whose end reaches a mark carries PSH.
    psh_marks: VecDeque<u64>,
    /// `pushed_seq`: `write_seq` at the last `tcp_mark_push` (`forced_push`).
    pushed_seq: u64,
    /// The write queue's tail skb has room below the size goal (a next write appends to it).
    tail_room: bool,
    /// Sent skbs with a segment not yet cumulatively ACKed (segments flagged `SKB_HEAD`).
    sent_skbs: u64,
    /// Segments in the last sent skb (u64::MAX: none; the next segment starts one).
    skb_segs: u64,
    /// Where the write queue's head skb began (its size goal bounds it; defer.rs).
    wq_head_start: u64,
    /// `max_window`: the largest window the peer has offered (bounds the skb size goal).
    max_window: u64,

    syn_pending: bool,
    syn_sent_ns: u64,
    syn_retrans: u32,

    rtx: VecDeque<TxSeg>,
    high_seq: u64,
    prior_ssthresh: u32,
    prr_delivered: u32,
    prr_out: u32,

    // RTT estimator (µs; srtt ×8, mdev ×4 as Linux).
    srtt8: u64,
    mdev4: u64,
    mdev_max: u64,
    rttvar: u64,
    rtt_seq: u64,
    min_rtt: Minmax,
    backoff: u32,
    retransmits: u32,

    reordering: u32,
    reord_seen: u32,
    /// Start seq of the highest SACKed segment (`tcp_highest_sack_seq` while sacked_out > 0).
    highest_sack_seq: u64,
    rack: Rack,
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    probe: Option<Probe>,
    force_head_rtx: bool,
    /// Lowest seq that may hold a lost, not yet retransmitted segment.
    retransmit_hint: u64,
    /// Highest seq of any segment retransmitted (bounds the RACK scan).
    max_retrans_seq: u64,
    sack_cache: [(u64, u64); 3],
    n_sack_cache: usize,

    // Delivery rate (tcp_rate.c), µs.
    delivered_mstamp_us: u64,
    first_tx_mstamp_us: u64,
    rate_delivered: u64,
    rate_interval_us: i64,
    rate_app_limited: bool,

    timer: Option<(u64, TimerKind)>,

    // Pacing (EDT).
    wstamp_ns: u64,
    data_segs_out: u64,
    pacing_blocked: bool,

    // Burst / cwnd validation.
    burst_sent: u32,
    burst_new: u32,
    cwnd_usage_seq: u64,
    snd_cwnd_used: u32,
    snd_cwnd_stamp_ns: u64,

    completed_at: Option<u64>,
    total_bytes_sent: u64,

    /// SACK not negotiated: Linux's non-SACK ("reno", `tcp_is_reno`) scoreboard and NewReno
    /// recovery (dupACKs counted in `sacked_out`, `tcp_newreno_mark_lost`).
    reno: bool,
    /// `TCP_ECN_QUEUE_CWR`: put CWR on the next new data segment.
    ecn_queue_cwr: bool,
    /// The ACK being processed carries ECE (ECN negotiated): `tcp_count_delivered` adds to
    /// `delivered_ce`.
    ack_ece: bool,
    /// Duplicate ACKs carried by the ACK being processed (0 or 1; `num_dupack`).
    num_dupack: u32,

    // Undo and F-RTO (undo.rs).
    /// `undo_marker`: snd_una when the reduction began; None = nothing to undo.
    undo_marker: Option<u64>,
    /// `undo_retrans`: retransmissions of the episode not yet D-SACKed (−1: none sent).
    undo_retrans: i32,
    /// `retrans_stamp`: TSval (ms) of the episode's first retransmission.
    retrans_stamp_ms: Option<u64>,
    /// TSecr (ms) of the ACK being processed (0: none), for `tcp_tsopt_ecr_before`.
    ack_tsecr_ms: u64,
    /// `dsack_dups`: segments D-SACKed so far (`tcp_dsack_seen` ignores D-SACKs beyond
    /// `total_retrans`).
    dsack_dups: u64,
    /// `tp->frto` (RFC 5682): F-RTO is judging the current timeout.
    frto: bool,
    /// `REXMIT_NEW`: this ACK's transmissions are new data (F-RTO step 2b), not retransmissions.
    rexmit_new: bool,
    /// F-RTO sent new data for this ACK: no retransmission until the next ACK or timer.
    hold_rtx: bool,
    /// Pre-3.10 F-RTO: `frto_counter` (0 = idle, 1 = waiting for the first ACK, 2 = second).
    frto_counter: u8,
    /// Pre-3.10 F-RTO: `frto_highmark`.
    frto_highmark: u64,

    /// (IP bytes, packets) of this connection in its host's first link, as the engine last
    /// told (TSQ).
    host_q: (u64, u64),
    /// The last poll stopped at TSQ's limit (`TSQ_THROTTLED`): poll again once a transmission
    /// from the host's link completes.
    tsq_throttled: bool,
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig, cc: Box<dyn CongestionControl>, app_bytes: Option<u64>) -> Self {
        let mut sk = Sock::new(cfg.mss, cfg.init_cwnd);
        sk.rto_ns = cfg.initial_rto_ns;
        sk.rtt_tick_us = (cfg.rtt_granularity_ns / 1000).min(u32::MAX as u64) as u32;
        sk.count_acks = cfg.count_acks;
        if cc.has_cong_control() {
            sk.pacing_status = PacingStatus::Needed;
        } else if cfg.pacing_default {
            sk.pacing_status = PacingStatus::Fq;
        }
        TcpSender {
            cfg: cfg.clone(),
            cc,
            sk,
            state: ConnState::Closed,
            peer_tsval_ns: 0,
            app_bytes,
            written: app_bytes.unwrap_or(u64::MAX),
            write_seq: 0,
            sndbuf: cfg.wmem[1],
            nospace: false,
            psh_marks: VecDeque::new(),
            pushed_seq: 0,
            tail_room: false,
            sent_skbs: 0,
            skb_segs: u64::MAX,
            wq_head_start: 0,
            max_window: 0,
            syn_pending: false,
            syn_sent_ns: 0,
            syn_retrans: 0,
            rtx: VecDeque::with_capacity(64),
            high_seq: 0,
            prior_ssthresh: 0,
            prr_delivered: 0,
            prr_out: 0,
            srtt8: 0,
            mdev4: 0,
            mdev_max: 0,
            rttvar: 0,
            rtt_seq: 0,
            min_rtt: Minmax::new(0, u32::MAX as u64),
            backoff: 0,
            retransmits: 0,
            reordering: TCP_REORDERING,
            reord_seen: 0,
            highest_sack_seq: 0,
            rack: Rack { reo_wnd_steps: 1, ..Default::default() },
            tlp_high_seq: None,
            tlp_retrans: false,
            probe: None,
            force_head_rtx: false,
            retransmit_hint: 0,
            max_retrans_seq: 0,
            sack_cache: [(0, 0); 3],
            n_sack_cache: 0,
            delivered_mstamp_us: 0,
            first_tx_mstamp_us: 0,
            rate_delivered: 0,
            rate_interval_us: 0,
            rate_app_limited: false,
            timer: None,
            wstamp_ns: 0,
            data_segs_out: 0,
            pacing_blocked: false,
            burst_sent: 0,
            burst_new: 0,
            cwnd_usage_seq: 0,
            snd_cwnd_used: 0,
            snd_cwnd_stamp_ns: 0,
            completed_at: None,
            total_bytes_sent: 0,
            reno: !cfg.sack,
            ecn_queue_cwr: false,
            ack_ece: false,
            num_dupack: 0,
            undo_marker: None,
            undo_retrans: -1,
            retrans_stamp_ms: None,
            ack_tsecr_ms: 0,
            dsack_dups: 0,
            frto: false,
            rexmit_new: false,
            hold_rtx: false,
            frto_counter: 0,
            frto_highmark: 0,
            host_q: (0, 0),
            tsq_throttled: false,
        }
    }

    /// The socket view (read-only), e.g. for tests and traces.
    /// The endpoint configuration (capture: SYN options, window, ECN setup).
    pub fn tcp_config(&self) -> &TcpConfig {
        &self.cfg
    }

    pub fn sock(&self) -> &Sock {
        &self.sk
    }

    /// Name of the congestion control in use.
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    /// Current RTO (ns), including backoff.
    pub fn rto_ns(&self) -> u64 {
        self.sk.rto_ns
    }

    /// Payload bytes transmitted (incl. retransmissions).
    pub fn bytes_sent(&self) -> u64 {
        self.total_bytes_sent
    }

    #[inline]
    fn set_now(&mut self, now: u64) {
        self.sk.now_ns = now;
        self.sk.now_us = now / 1000;
    }

    pub fn open(&mut self, now: u64) {
        self.set_now(now);
        if self.state == ConnState::Closed {
            self.state = ConnState::SynSent;
            self.syn_pending = true;
        }
    }

    pub fn completed_at(&self) -> Option<u64> {
        self.completed_at
    }

    // ------------------------------------------------------------------------------------------
    // Application model: writes over time instead of a byte count fixed at the start
    // ------------------------------------------------------------------------------------------

    /// A sender whose application writes over time ([`Self::app_write`]); the write queue
    /// starts empty and the flow never completes.
    pub fn new_app_driven(cfg: &TcpConfig, cc: Box<dyn CongestionControl>) -> Self {
        let mut s = Self::new(cfg, cc, None);
        s.written = 0;
        s
    }

    /// The application writes `bytes` (`tcp_sendmsg`); `u64::MAX` = an unlimited backlog from
    /// now on. As Linux `tcp_sendmsg_locked`, `tcp_rate_check_app_limited` runs first: a write
    /// that finds the write queue empty with cwnd room marks the connection application-limited,
    /// so rate samples taken until that data is delivered carry `is_app_limited`. After an idle
    /// period (nothing in flight for > RTO) the next transmission restarts the window
    /// (`slow_start_after_idle`). The caller then drains the sender with `poll_transmit`.
    pub fn app_write(&mut self, now: u64, bytes: u64) {
        self.set_now(now);
        if self.state == ConnState::Established {
            self.rate_check_app_limited();
        }
        self.written = self.written.saturating_add(bytes);
        if self.state == ConnState::Established && !self.nospace {
            self.sndbuf_fill();
        }
    }

    /// The application stops writing and withdraws what it wrote but the socket has not sent
    /// yet (the write queue ends at `snd_nxt`): an on/off source's off period. Data in flight
    /// is still retransmitted as needed.
    pub fn app_pause(&mut self, now: u64) {
        self.set_now(now);
        self.written = self.written.min(self.sk.snd_nxt);
        self.write_seq = self.write_seq.min(self.written);
        while self.psh_marks.back().is_some_and(|&m| m > self.write_seq) {
            self.psh_marks.pop_back();
        }
    }

    /// Bytes written by the application and not yet sent.
    pub fn app_unsent(&self) -> u64 {
        self.written - self.sk.snd_nxt
    }

    // ------------------------------------------------------------------------------------------
    // Samples
    // ------------------------------------------------------------------------------------------

    pub fn sample(&self, _now: u64) -> FlowSample {
        let dr = if self.rate_interval_us > 0 {
            self.rate_delivered as f64 * self.cfg.mss as f64 * 8.0 * 1e6 / self.rate_interval_us as f64
        } else {
            0.0
        };
        FlowSample {
            cwnd: self.sk.cwnd,
            ssthresh: if self.sk.ssthresh >= TCP_INFINITE_SSTHRESH { u32::MAX } else { self.sk.ssthresh },
            // no RTT sample yet: null in the table, as the kernel backend's (not 0.0)
            srtt_us: if self.srtt8 == 0 { f64::NAN } else { self.srtt8 as f64 / 8.0 },
            rttvar_us: if self.srtt8 == 0 { f64::NAN } else { self.mdev4 as f64 / 4.0 },
            min_rtt_us: if self.sk.min_rtt_us == u32::MAX { f64::NAN } else { self.sk.min_rtt_us as f64 },
            inflight: self.sk.packets_in_flight(),
            delivered: self.sk.delivered,
            bytes_acked: self.sk.snd_una,
            retrans: self.sk.total_retrans,
            lost: self.sk.lost,
            ca_state: self.sk.ca_state,
            pacing_rate_bps: self.sk.pacing_rate_bps,
            delivery_rate_bps: dr,
        }
    }

    /// Prefetch hints for [`Self::sample`] and [`Self::cc_sample`] (a scan over many flows):
    /// the socket's counters and the congestion control's state.
    #[inline(always)]
    pub fn prefetch_sample(&self) {
        netmodel::prefetch(&self.sk, std::mem::size_of::<Sock>().min(256));
        netmodel::prefetch(&self.srtt8, 16);
        netmodel::prefetch(&self.rate_delivered, 16);
        netmodel::prefetch(&*self.cc, std::mem::size_of_val(&*self.cc).min(384));
    }

    pub fn cc_sample(&self, out: &mut Vec<(&'static str, f64)>) {
        self.cc.sample(out);
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod app_tests;
#[cfg(test)]
mod undo_tests;

