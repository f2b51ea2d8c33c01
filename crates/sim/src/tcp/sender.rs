//! TCP sender: a pure state machine following Linux `tcp_ack()` / `tcp_write_xmit()` /
//! timers (linux-tcp.md §1.2, §5–§8), in packet units like Linux.
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
//! * delivery-rate sampling (tcp_rate.c, cc-algorithms.md §0.4), app-limited marking;
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
//! Not implemented (known simplifications): undo (D-SACK, timestamp/Eifel and F-RTO undo are all
//! omitted: spurious reductions are never reverted), F-RTO, ECN nonce / AccECN,
//! TSO/GSO and TSQ, Nagle, SACK reneging handling beyond resetting marks on RTO, partial ACKs of
//! a segment, window scaling granularity, the 3 s `TCP_TIMEOUT_FALLBACK` and give-up limits.

use std::collections::VecDeque;

use super::{AckSeg, CaState, DataSeg, FlowSample, TcpConfig};
use crate::cc::{
    AckSample, CaEvent, CongestionControl, LostSkb, Minmax, PacingStatus, RateSample, Sock, CA_ACK_ECE,
    CA_ACK_SLOWPATH, CA_ACK_WIN_UPDATE, TCP_INFINITE_SSTHRESH,
};

// Segment flags (Linux TCPCB_*).
/// SACKed (`TCPCB_SACKED_ACKED`).
const SACKED: u8 = 1;
/// Marked lost (`TCPCB_LOST`).
const LOST: u8 = 2;
/// A retransmission is in flight (`TCPCB_SACKED_RETRANS`).
const RETRANS_OUT: u8 = 4;
/// Ever retransmitted (`TCPCB_EVER_RETRANS`).
const EVER_RETRANS: u8 = 8;

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
    /// Finite flow: total bytes, `completed_at` is set once they are all ACKed.
    app_bytes: Option<u64>,
    /// `write_seq`: bytes the application has handed to the socket so far (u64::MAX = an
    /// unlimited backlog). Fixed for bulk and finite flows; grows with [`Self::app_write`].
    written: u64,

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
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig, cc: Box<dyn CongestionControl>, app_bytes: Option<u64>) -> Self {
        let mut sk = Sock::new(cfg.mss, cfg.init_cwnd);
        sk.rto_ns = cfg.initial_rto_ns;
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
            app_bytes,
            written: app_bytes.unwrap_or(u64::MAX),
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
        }
    }

    /// The socket view (read-only), e.g. for tests and traces.
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
    }

    /// The application stops writing and withdraws what it wrote but the socket has not sent
    /// yet (the write queue ends at `snd_nxt`): an on/off source's off period. Data in flight
    /// is still retransmitted as needed.
    pub fn app_pause(&mut self, now: u64) {
        self.set_now(now);
        self.written = self.written.min(self.sk.snd_nxt);
    }

    /// Bytes written by the application and not yet sent.
    pub fn app_unsent(&self) -> u64 {
        self.written - self.sk.snd_nxt
    }

    // ------------------------------------------------------------------------------------------
    // Transmit path
    // ------------------------------------------------------------------------------------------

    #[inline]
    fn write_seq(&self) -> u64 {
        self.written
    }

    #[inline]
    fn has_new_data(&self) -> bool {
        self.sk.snd_nxt < self.write_seq()
    }

    #[inline]
    fn next_len(&self) -> u32 {
        (self.write_seq() - self.sk.snd_nxt).min(self.cfg.mss as u64) as u32
    }

    #[inline]
    fn snd_wnd_ok(&self, end: u64) -> bool {
        end <= self.sk.snd_una + self.sk.snd_wnd
    }

    #[inline]
    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.sk.ca_state, CaState::Cwr | CaState::Recovery)
    }

    pub fn poll_transmit(&mut self, now: u64) -> Option<DataSeg> {
        self.set_now(now);
        match self.state {
            ConnState::Closed => return None,
            ConnState::SynSent => {
                if self.syn_pending {
                    self.syn_pending = false;
                    self.syn_sent_ns = now;
                    if self.timer.is_none() {
                        self.timer = Some((now + self.sk.rto_ns, TimerKind::Retrans));
                    }
                    return Some(DataSeg { seq: 0, len: 0, syn: true, retrans: self.syn_retrans > 0, tsval_ns: now, ect: false, ce: false, cwr: false });
                }
                return None;
            }
            ConnState::Established => {}
        }
        // RTO retransmission of the head: not gated by cwnd or pacing (tcp_retransmit_timer).
        if self.force_head_rtx {
            self.force_head_rtx = false;
            if !self.rtx.is_empty() && self.rtx[0].flags & SACKED == 0 {
                return Some(self.retransmit(0, true));
            }
        }
        // Loss probe (ignores cwnd, as tcp_write_xmit with push_one = 2).
        if let Some(p) = self.probe.take() {
            match p {
                Probe::NewData => {
                    if self.has_new_data() && self.snd_wnd_ok(self.sk.snd_nxt + self.next_len() as u64) {
                        let s = self.send_new();
                        self.after_probe();
                        return Some(s);
                    }
                    self.rearm_rto();
                }
                Probe::Retrans => {
                    if let Some(last) = self.rtx.len().checked_sub(1) {
                        let s = self.retransmit(last, false);
                        self.tlp_retrans = true;
                        self.after_probe();
                        return Some(s);
                    }
                    self.rearm_rto();
                }
            }
        }
        if self.sk.is_paced() && self.wstamp_ns > now {
            self.pacing_blocked = self.pending_work();
            self.end_burst();
            return None;
        }
        self.pacing_blocked = false;
        // tcp_xmit_retransmit_queue: lost segments first, within cwnd.
        if self.sk.lost_out > self.sk.retrans_out && self.sk.packets_in_flight() < self.sk.cwnd {
            if let Some(i) = self.next_lost() {
                return Some(self.retransmit(i, true));
            }
        }
        // tcp_write_xmit: new data within cwnd and the receive window.
        if self.has_new_data()
            && self.sk.packets_in_flight() < self.sk.cwnd
            && self.snd_wnd_ok(self.sk.snd_nxt + self.next_len() as u64)
        {
            return Some(self.send_new());
        }
        self.end_burst();
        None
    }

    /// Something would be sent now if pacing allowed it.
    fn pending_work(&self) -> bool {
        let room = self.sk.packets_in_flight() < self.sk.cwnd;
        room && ((self.sk.lost_out > self.sk.retrans_out)
            || (self.has_new_data() && self.snd_wnd_ok(self.sk.snd_nxt + self.next_len() as u64)))
    }

    fn after_probe(&mut self) {
        self.tlp_high_seq = Some(self.sk.snd_nxt);
        // Restart the RTO from now.
        self.timer = None;
        self.rearm_rto();
    }

    /// First lost, un-SACKed, not-yet-retransmitted segment at or after the hint.
    fn next_lost(&mut self) -> Option<usize> {
        let start = self.rtx.partition_point(|s| s.seq < self.retransmit_hint);
        for i in start..self.rtx.len() {
            let f = self.rtx[i].flags;
            if f & LOST != 0 && f & (SACKED | RETRANS_OUT) == 0 {
                self.retransmit_hint = self.rtx[i].seq;
                return Some(i);
            }
        }
        self.retransmit_hint = self.sk.snd_nxt;
        None
    }

    fn send_new(&mut self) -> DataSeg {
        let now = self.sk.now_ns;
        let len = self.next_len();
        if self.sk.packets_out == 0 {
            self.restart_after_idle();
        }
        let seq = self.sk.snd_nxt;
        let mut seg = TxSeg {
            seq,
            len,
            flags: 0,
            rate_valid: true,
            tx_app_limited: false,
            sent_ns: now,
            tx_delivered: 0,
            tx_delivered_us: 0,
            tx_first_tx_us: 0,
            tx_in_flight: 0,
            tx_lost: 0,
        };
        self.rate_skb_sent(&mut seg);
        let prior_packets = self.sk.packets_out;
        self.sk.snd_nxt += len as u64;
        self.sk.packets_out += 1;
        seg.tx_in_flight = self.sk.packets_in_flight();
        self.rtx.push_back(seg);
        self.event_data_sent(len);
        self.burst_new += 1;
        // tcp_event_new_data_sent: arm the RTO if nothing was out or a probe timer is pending.
        if prior_packets == 0 || matches!(self.timer, Some((_, TimerKind::LossProbe)) | None) {
            self.rearm_rto();
        }
        // tcp_ecn_send: new data is ECT(0) and carries a queued CWR.
        let cwr = self.sk.ecn_ok && std::mem::take(&mut self.ecn_queue_cwr);
        DataSeg { seq, len, syn: false, retrans: false, tsval_ns: now, ect: self.sk.ecn_ok, ce: false, cwr }
    }

    /// (Re)transmit the segment at index `i`. `account`: tcp_retransmit_skb (marks the
    /// retransmission in flight) rather than the TLP's bare __tcp_retransmit_skb.
    fn retransmit(&mut self, i: usize, account: bool) -> DataSeg {
        let now = self.sk.now_ns;
        let mut seg = self.rtx[i];
        if account && seg.flags & LOST != 0 && seg.flags & RETRANS_OUT == 0 {
            seg.flags |= RETRANS_OUT;
            self.sk.retrans_out += 1;
        }
        seg.flags |= EVER_RETRANS;
        seg.sent_ns = now;
        self.rate_skb_sent(&mut seg);
        seg.tx_in_flight = self.sk.packets_in_flight();
        self.rtx[i] = seg;
        self.max_retrans_seq = self.max_retrans_seq.max(seg.seq);
        self.sk.total_retrans += 1;
        self.event_data_sent(seg.len);
        // The head's retransmission restarts the RTO (unless the reorder timer is pending).
        if i == 0 && account && !matches!(self.timer, Some((_, TimerKind::ReoTimeout))) {
            self.timer = Some((now + self.sk.rto_ns, TimerKind::Retrans));
        }
        // RFC 3168 §6.1.5: retransmissions are Not-ECT, except for TCP_CONG_NEEDS_ECN CCs whose
        // socket sets ECT on everything (INET_ECN_xmit at the handshake, DCTCP).
        let ect = self.sk.ecn_ok && self.cc.needs_ecn();
        DataSeg { seq: seg.seq, len: seg.len, syn: false, retrans: true, tsval_ns: now, ect, ce: false, cwr: false }
    }

    /// Common per-transmission bookkeeping (`tcp_event_data_sent`, EDT, PRR accounting).
    fn event_data_sent(&mut self, len: u32) {
        let now = self.sk.now_ns;
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        self.sk.lsndtime_ns = now;
        self.data_segs_out += 1;
        self.total_bytes_sent += len as u64;
        self.burst_sent += 1;
        // EDT: tcp_wstamp_ns = max(wstamp, now) then + len/rate, less idle credit (≤ half).
        let prior = self.wstamp_ns;
        self.wstamp_ns = self.wstamp_ns.max(now);
        if self.sk.is_paced() && self.data_segs_out >= PACING_FREE_SEGS {
            let mut len_ns = (len as f64 * 8e9 / self.sk.pacing_rate_bps) as u64;
            let credit = self.wstamp_ns - prior;
            len_ns -= (len_ns / 2).min(credit);
            self.wstamp_ns += len_ns;
        }
        self.sk.wstamp_ns = self.wstamp_ns;
    }

    /// Restart window after idle (RFC 2861 as Linux `tcp_cwnd_restart`) and CA_EVENT_TX_START.
    fn restart_after_idle(&mut self) {
        let now = self.sk.now_ns;
        let idle = now.saturating_sub(self.sk.lsndtime_ns);
        if self.cfg.slow_start_after_idle && !self.cc.has_cong_control() && idle > self.sk.rto_ns {
            self.cc.cwnd_event(&mut self.sk, CaEvent::CwndRestart);
            self.sk.ssthresh = self.sk.current_ssthresh();
            let restart = self.sk.init_cwnd.min(self.sk.cwnd);
            let mut cwnd = self.sk.cwnd;
            let mut delta = idle as i64;
            loop {
                delta -= self.sk.rto_ns as i64;
                if delta <= 0 || cwnd <= restart {
                    break;
                }
                cwnd >>= 1;
            }
            self.sk.cwnd = cwnd.max(restart);
            self.snd_cwnd_stamp_ns = now;
            self.snd_cwnd_used = 0;
        }
        if self.sk.packets_in_flight() == 0 {
            self.cc.cwnd_event(&mut self.sk, CaEvent::TxStart);
        }
    }

    /// End of a `tcp_write_xmit` round: cwnd validation, TLP scheduling, app-limited marking.
    fn end_burst(&mut self) {
        let is_cwnd_limited = self.sk.packets_in_flight() >= self.sk.cwnd;
        if self.burst_sent > 0 || is_cwnd_limited {
            self.cwnd_validate(is_cwnd_limited);
        }
        if self.burst_new > 0 {
            self.schedule_loss_probe(false);
        }
        self.rate_check_app_limited();
        self.burst_sent = 0;
        self.burst_new = 0;
    }

    /// `tcp_cwnd_validate` (6.x).
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let now = self.sk.now_ns;
        if self.sk.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.sk.is_cwnd_limited_flag && self.sk.packets_out > self.sk.max_packets_out)
        {
            self.sk.is_cwnd_limited_flag = is_cwnd_limited;
            self.sk.max_packets_out = self.sk.packets_out;
            self.cwnd_usage_seq = self.sk.snd_nxt;
        }
        if self.sk.is_cwnd_limited() {
            self.snd_cwnd_used = 0;
            self.snd_cwnd_stamp_ns = now;
        } else {
            self.snd_cwnd_used = self.snd_cwnd_used.max(self.sk.packets_out);
            if self.cfg.slow_start_after_idle
                && now.saturating_sub(self.snd_cwnd_stamp_ns) >= self.sk.rto_ns
                && !self.cc.has_cong_control()
            {
                // tcp_cwnd_application_limited
                if self.sk.ca_state == CaState::Open {
                    let win_used = self.snd_cwnd_used.max(self.sk.init_cwnd);
                    if win_used < self.sk.cwnd {
                        self.sk.ssthresh = self.sk.current_ssthresh();
                        self.sk.cwnd = (self.sk.cwnd + win_used) >> 1;
                    }
                    self.snd_cwnd_used = 0;
                }
                self.snd_cwnd_stamp_ns = now;
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Delivery-rate sampling (tcp_rate.c)
    // ------------------------------------------------------------------------------------------

    fn rate_skb_sent(&mut self, seg: &mut TxSeg) {
        let now_us = self.sk.now_us;
        if self.sk.packets_out == 0 {
            self.first_tx_mstamp_us = now_us;
            self.delivered_mstamp_us = now_us;
            self.sk.delivered_mstamp_us = now_us;
        }
        seg.tx_first_tx_us = self.first_tx_mstamp_us;
        seg.tx_delivered_us = self.delivered_mstamp_us;
        seg.tx_delivered = self.sk.delivered;
        seg.tx_lost = self.sk.lost;
        seg.tx_app_limited = self.sk.app_limited != 0;
        seg.rate_valid = true;
    }

    fn rate_skb_delivered(&mut self, seg: &mut TxSeg, st: &mut AckState) {
        if !seg.rate_valid {
            return;
        }
        let tx_us = seg.sent_us();
        let rs = &mut st.rs;
        if !rs.prior_valid
            || tx_us > self.first_tx_mstamp_us
            || (tx_us == self.first_tx_mstamp_us && seg.end() > st.last_end_seq)
        {
            rs.prior_valid = true;
            rs.prior_delivered = seg.tx_delivered;
            rs.prior_mstamp_us = seg.tx_delivered_us;
            rs.is_app_limited = seg.tx_app_limited;
            rs.is_retrans = seg.flags & EVER_RETRANS != 0;
            rs.tx_in_flight = seg.tx_in_flight;
            rs.prior_lost = seg.tx_lost;
            st.last_end_seq = seg.end();
            self.first_tx_mstamp_us = tx_us;
            rs.interval_us = tx_us as i64 - seg.tx_first_tx_us as i64;
        }
        if seg.flags & SACKED != 0 {
            seg.rate_valid = false;
        }
    }

    fn rate_gen(&mut self, delivered: u32, lost: u32, rs: &mut RateSample) {
        if self.sk.app_limited != 0 && self.sk.delivered > self.sk.app_limited {
            self.sk.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_mstamp_us = self.sk.now_us;
            self.sk.delivered_mstamp_us = self.sk.now_us;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        if !rs.prior_valid {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        }
        rs.delivered = (self.sk.delivered - rs.prior_delivered) as i64;
        rs.lost = self.sk.lost - rs.prior_lost;
        let snd_us = rs.interval_us;
        let ack_us = self.sk.now_us as i64 - rs.prior_mstamp_us as i64;
        rs.interval_us = snd_us.max(ack_us);
        rs.snd_interval_us = snd_us;
        rs.rcv_interval_us = ack_us;
        if rs.interval_us < self.sk.min_rtt_us as i64 {
            rs.interval_us = -1;
            return;
        }
        if !rs.is_app_limited
            || (rs.delivered as i128 * self.rate_interval_us as i128
                >= self.rate_delivered as i128 * rs.interval_us as i128)
        {
            self.rate_delivered = rs.delivered as u64;
            self.rate_interval_us = rs.interval_us;
            self.rate_app_limited = rs.is_app_limited;
        }
    }

    /// `tcp_rate_check_app_limited`.
    fn rate_check_app_limited(&mut self) {
        if self.write_seq() - self.sk.snd_nxt < self.cfg.mss as u64
            && self.sk.packets_in_flight() < self.sk.cwnd
            && self.sk.lost_out <= self.sk.retrans_out
        {
            let v = self.sk.delivered + self.sk.packets_in_flight() as u64;
            self.sk.app_limited = if v > 0 { v } else { 1 };
        }
    }

    // ------------------------------------------------------------------------------------------
    // ACK processing (tcp_ack)
    // ------------------------------------------------------------------------------------------

    pub fn on_ack(&mut self, now: u64, ack: &AckSeg) {
        self.set_now(now);
        match self.state {
            ConnState::Closed => return,
            ConnState::SynSent => {
                if ack.syn {
                    self.establish(ack);
                }
                return;
            }
            ConnState::Established => {}
        }
        if ack.syn || ack.ack > self.sk.snd_nxt {
            return;
        }
        let prior_snd_una = self.sk.snd_una;
        let prior_in_flight = self.sk.packets_in_flight();
        let prior_delivered = self.sk.delivered;
        let prior_lost = self.sk.lost;
        let prior_fack = self.fack();
        let mut st = AckState {
            first_sackt_us: None,
            last_sackt_us: 0,
            reord: u64::MAX,
            rs: RateSample { rtt_us: -1, prior_in_flight, ..Default::default() },
            last_end_seq: 0,
            sack_delivered: 0,
        };
        let mut flag = 0u32;

        if ack.ack < prior_snd_una {
            // Old (reordered) ACK: only its SACK information is used.
            if ack.n_sack > 0 {
                flag |= self.sacktag(ack, &mut st);
                if flag & (FLAG_DATA_SACKED | FLAG_DSACKING_ACK) != 0 {
                    self.fastretrans_alert(prior_snd_una, &mut flag, ack);
                }
            }
            return;
        }

        if ack.rwnd != self.sk.snd_wnd {
            flag |= FLAG_WIN_UPDATE;
            self.sk.snd_wnd = ack.rwnd;
        }
        if ack.ack > prior_snd_una {
            flag |= FLAG_SND_UNA_ADVANCED;
            self.retransmits = 0;
        }
        // tcp_ecn_rcv_ecn_echo
        self.ack_ece = ack.ece && self.sk.ecn_ok;
        if self.ack_ece {
            flag |= FLAG_ECE;
        }
        if ack.n_sack > 0 && !self.reno {
            flag |= self.sacktag(ack, &mut st);
        }
        let dubious_pre = flag & FLAG_SND_UNA_ADVANCED == 0 || flag & FLAG_CA_ALERT != 0;
        let mut ev = if dubious_pre { CA_ACK_SLOWPATH } else { 0 };
        if flag & FLAG_WIN_UPDATE != 0 {
            ev |= CA_ACK_WIN_UPDATE;
        }
        if flag & FLAG_ECE != 0 {
            ev |= CA_ACK_ECE;
        }
        // tcp_ack_update_window has already advanced snd_una when in_ack_event runs (DCTCP's
        // once-per-window test reads it).
        self.sk.snd_una = ack.ack;
        self.cc.in_ack_event(&mut self.sk, ev);

        flag |= self.clean_rtx_queue(ack, prior_fack, prior_snd_una, &mut st);
        self.rack_update_reo_wnd(&st.rs);
        if self.tlp_high_seq.is_some() {
            self.process_tlp_ack(ack.ack, flag);
        }
        let dubious = flag & FLAG_NOT_DUP == 0 || flag & FLAG_CA_ALERT != 0 || self.sk.ca_state != CaState::Open;
        if dubious {
            // A duplicate ACK (tcp_ack): no progress, no window update, no D-SACK.
            self.num_dupack = u32::from(flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DSACKING_ACK) == 0);
            self.fastretrans_alert(prior_snd_una, &mut flag, ack);
            self.num_dupack = 0;
        }
        if flag & FLAG_SET_XMIT_TIMER != 0 {
            if !self.schedule_loss_probe(true) {
                self.rearm_rto();
            }
        }
        let delivered = (self.sk.delivered - prior_delivered) as u32;
        let lost = (self.sk.lost - prior_lost) as u32;
        st.rs.is_ack_delayed = flag & FLAG_ACK_MAYBE_DELAYED != 0;
        let mut rs = st.rs;
        self.rate_gen(delivered, lost, &mut rs);
        self.cong_control(delivered, flag, &rs);

        if let Some(total) = self.app_bytes {
            if self.completed_at.is_none() && self.sk.snd_una >= total {
                self.completed_at = Some(now);
                self.timer = None;
            }
        }
    }

    fn establish(&mut self, ack: &AckSeg) {
        let now = self.sk.now_ns;
        self.state = ConnState::Established;
        self.timer = None;
        self.sk.snd_wnd = ack.rwnd;
        // RTT of the SYN: from its send time unless retransmitted, else from TSecr (ms).
        let rtt_us = if self.syn_retrans == 0 {
            ((now - self.syn_sent_ns) / 1000).max(1)
        } else {
            self.tsecr_rtt_us(ack.tsecr_ns)
        };
        let rtt_us = self.quantise_rtt_us(rtt_us as i64) as u64;
        // ECN negotiated: we asked (ECE|CWR on the SYN) and the SYN-ACK carries ECE.
        self.sk.ecn_ok = self.cfg.ecn && ack.ece;
        self.update_rtt_min(rtt_us, 0);
        self.rtt_estimator(rtt_us);
        self.set_rto();
        self.backoff = 0;
        // tcp_init_transfer: IW, or 1 after more than one SYN retransmission.
        self.sk.cwnd = if self.syn_retrans > 1 { 1 } else { self.cfg.init_cwnd };
        self.sk.ssthresh = TCP_INFINITE_SSTHRESH;
        self.sk.lsndtime_ns = now;
        self.snd_cwnd_stamp_ns = now;
        self.cc.init(&mut self.sk);
        // A cong_control CC (BBR) sets its own initial pacing rate in init.
        if !self.cc.has_cong_control() {
            self.update_pacing_rate();
        }
    }

    /// RTT-measurement granularity (`rtt_granularity_ns`): floor the sample to a whole number of
    /// ticks, at least one. This is what tick-based stacks measure: FreeBSD times segments in
    /// `ticks` (1 ms at kern.hz = 1000; `tcp_xmit_timer` samples and h_ertt's are whole ticks,
    /// cc-algorithms.md §0.2, §1.2) and pre-3.15 Linux in jiffies; a sub-tick RTT is reported as
    /// one tick (Linux-jiffies `tcp_rtt_estimator`: `if (m == 0) m = 1`; FreeBSD adds one tick).
    /// Flooring the duration, not differencing two tick counters, keeps the result independent of
    /// the phase of a virtual clock (a counter difference is floor or floor + 1).
    pub(crate) fn quantise_rtt_us(&self, rtt_us: i64) -> i64 {
        let g = self.cfg.rtt_granularity_ns;
        if g == 0 || rtt_us < 0 {
            return rtt_us;
        }
        let ticks = ((rtt_us as u64 * 1000) / g).max(1);
        (ticks * g / 1000) as i64
    }

    /// `tcp_count_delivered`: packets newly delivered, and CE-delivered if this ACK has ECE.
    #[inline]
    fn count_delivered(&mut self, n: u32) {
        self.sk.delivered += n as u64;
        if self.ack_ece {
            self.sk.delivered_ce += n as u64;
        }
    }

    /// `tcp_limit_reno_sacked` + `tcp_check_reno_reordering`: dupACKs beyond the holes mean
    /// reordering (or duplicated ACKs); clamp `sacked_out` and raise `reordering`.
    fn check_reno_reordering(&mut self, addend: u32) {
        let holes = self.sk.lost_out.max(1).min(self.sk.packets_out);
        if self.sk.sacked_out + holes > self.sk.packets_out {
            self.sk.sacked_out = self.sk.packets_out - holes;
            self.reordering = (self.sk.packets_out + addend).min(TCP_MAX_REORDERING);
            self.reord_seen += 1;
        }
    }

    /// `tcp_add_reno_sack`: a dupACK stands for one packet that left the network.
    fn add_reno_sack(&mut self, num_dupack: u32) {
        if num_dupack == 0 {
            return;
        }
        let prior = self.sk.sacked_out;
        self.sk.sacked_out += num_dupack;
        self.check_reno_reordering(0);
        let delivered = self.sk.sacked_out.saturating_sub(prior);
        if delivered > 0 {
            self.count_delivered(delivered);
        }
    }

    /// `tcp_remove_reno_sacks`: a cumulative ACK of `acked` packets fills one hole; the rest
    /// were already counted by dupACKs.
    fn remove_reno_sacks(&mut self, acked: u32) {
        if acked > 0 {
            self.count_delivered(acked.saturating_sub(self.sk.sacked_out).max(1));
            if acked - 1 >= self.sk.sacked_out {
                self.sk.sacked_out = 0;
            } else {
                self.sk.sacked_out -= acked - 1;
            }
        }
        self.check_reno_reordering(acked);
    }

    /// `tcp_newreno_mark_lost` (tcp_recovery.c): mark the head lost after `reordering` dupACKs,
    /// and, in Recovery, on every partial ACK (RFC 6582: one retransmission per partial ACK).
    fn newreno_mark_lost(&mut self, snd_una_advanced: bool) {
        let st = self.sk.ca_state;
        if (st < CaState::Recovery && self.sk.sacked_out >= self.reordering)
            || (st == CaState::Recovery && snd_una_advanced)
        {
            if self.rtx.front().is_some_and(|h| h.flags & LOST == 0) {
                self.mark_lost(0);
            }
        }
    }

    #[inline]
    fn fack(&self) -> u64 {
        if self.sk.sacked_out == 0 {
            self.sk.snd_una
        } else {
            self.highest_sack_seq
        }
    }

    /// RTT from a timestamp echo, at the 1 ms granularity of Linux's TCP timestamps.
    fn tsecr_rtt_us(&self, tsecr_ns: u64) -> u64 {
        let d = (self.sk.now_ns / 1_000_000).saturating_sub(tsecr_ns / 1_000_000);
        d.max(1) * 1000
    }

    /// `tcp_sacktag_write_queue` (blocks in ascending order, previous blocks skipped).
    fn sacktag(&mut self, ack: &AckSeg, st: &mut AckState) -> u32 {
        let mut flag = 0;
        let n = (ack.n_sack as usize).min(3);
        let first = if ack.dsack && n > 0 {
            flag |= FLAG_DSACKING_ACK;
            self.rack.dsack_seen = true;
            if let (true, Some(h)) = (self.tlp_retrans, self.tlp_high_seq) {
                if ack.sack[0].1 == h {
                    flag |= FLAG_DSACK_TLP;
                }
            }
            1
        } else {
            0
        };
        // Pieces of the new blocks not covered by the previous ACK's blocks.
        let mut pieces = [(0u64, 0u64); 12];
        let mut np = 0;
        for b in &ack.sack[first..n] {
            let mut work = [(0u64, 0u64); 4];
            let mut nw = 1;
            work[0] = (b.0.max(self.sk.snd_una.max(ack.ack)), b.1);
            for c in &self.sack_cache[..self.n_sack_cache] {
                let mut out = [(0u64, 0u64); 4];
                let mut no = 0;
                for &(s, e) in &work[..nw] {
                    if e <= c.0 || s >= c.1 {
                        if no < 4 {
                            out[no] = (s, e);
                            no += 1;
                        }
                    } else {
                        if s < c.0 && no < 4 {
                            out[no] = (s, c.0);
                            no += 1;
                        }
                        if e > c.1 && no < 4 {
                            out[no] = (c.1, e);
                            no += 1;
                        }
                    }
                }
                work = out;
                nw = no;
            }
            for &(s, e) in &work[..nw] {
                if s < e && np < pieces.len() {
                    pieces[np] = (s, e);
                    np += 1;
                }
            }
        }
        pieces[..np].sort_unstable();
        for &(s, e) in &pieces[..np] {
            let mut i = self.rtx.partition_point(|x| x.seq < s);
            while i < self.rtx.len() && self.rtx[i].end() <= e {
                if self.rtx[i].flags & SACKED == 0 {
                    flag |= self.sacktag_one(i, st);
                }
                i += 1;
            }
        }
        self.n_sack_cache = n - first;
        self.sack_cache[..n - first].copy_from_slice(&ack.sack[first..n]);
        if st.reord != u64::MAX {
            self.check_sack_reordering(st.reord);
        }
        flag
    }

    fn sacktag_one(&mut self, i: usize, st: &mut AckState) -> u32 {
        let mut flag = FLAG_DATA_SACKED;
        let mut seg = self.rtx[i];
        self.rack_advance(seg.flags, seg.end(), seg.sent_ns);
        if seg.flags & RETRANS_OUT != 0 {
            self.sk.retrans_out -= 1;
            if seg.flags & LOST != 0 {
                self.sk.lost_out -= 1;
            }
            seg.flags &= !(RETRANS_OUT | LOST);
        } else {
            if seg.flags & EVER_RETRANS == 0 {
                // A never-retransmitted packet SACKed below the highest SACK: reordering.
                if self.sk.sacked_out > 0 && seg.seq < self.highest_sack_seq && seg.seq < st.reord {
                    st.reord = seg.seq;
                }
                if seg.end() <= self.high_seq {
                    flag |= FLAG_ORIG_SACK_ACKED;
                }
                if st.first_sackt_us.is_none() {
                    st.first_sackt_us = Some(seg.sent_us());
                }
                st.last_sackt_us = seg.sent_us();
            }
            if seg.flags & LOST != 0 {
                seg.flags &= !LOST;
                self.sk.lost_out -= 1;
            }
        }
        seg.flags |= SACKED;
        self.sk.sacked_out += 1;
        self.count_delivered(1);
        st.sack_delivered += 1;
        self.highest_sack_seq = self.highest_sack_seq.max(seg.seq);
        self.rate_skb_delivered(&mut seg, st);
        self.rtx[i] = seg;
        flag
    }

    /// `tcp_clean_rtx_queue`.
    fn clean_rtx_queue(&mut self, ack: &AckSeg, prior_fack: u64, prior_snd_una: u64, st: &mut AckState) -> u32 {
        let mut flag = 0;
        let mut pkts_acked = 0u32;
        let mut first_ackt: Option<u64> = None;
        let mut last_ackt = 0u64;
        let mut last_in_flight = 0u32;
        let mut reord = u64::MAX;
        let prior_sacked = self.sk.sacked_out;
        let prior_delivered_cnt = self.sk.delivered;
        while let Some(front) = self.rtx.front() {
            if front.end() > ack.ack {
                break;
            }
            let mut seg = self.rtx.pop_front().unwrap();
            let f = seg.flags;
            if f & EVER_RETRANS != 0 {
                if f & RETRANS_OUT != 0 {
                    self.sk.retrans_out -= 1;
                }
                flag |= FLAG_RETRANS_DATA_ACKED;
            } else if f & SACKED == 0 {
                last_ackt = seg.sent_us();
                if first_ackt.is_none() {
                    first_ackt = Some(last_ackt);
                }
                last_in_flight = seg.tx_in_flight;
                reord = reord.min(seg.seq);
                if seg.end() <= self.high_seq {
                    flag |= FLAG_ORIG_SACK_ACKED;
                }
            }
            if f & SACKED != 0 {
                self.sk.sacked_out -= 1;
            } else if !self.reno {
                self.count_delivered(1);
                let spurious = f & EVER_RETRANS != 0 && ack.tsecr_ns / 1_000_000 < seg.sent_ns / 1_000_000;
                if !spurious {
                    self.rack_advance(f, seg.end(), seg.sent_ns);
                }
            }
            if f & LOST != 0 {
                self.sk.lost_out -= 1;
            }
            self.sk.packets_out -= 1;
            pkts_acked += 1;
            self.rate_skb_delivered(&mut seg, st);
            flag |= FLAG_DATA_ACKED;
        }
        if self.reno && pkts_acked > 0 {
            self.remove_reno_sacks(pkts_acked);
        }
        self.sk.snd_una = ack.ack;
        if self.sk.sacked_out == 0 || self.reno {
            self.highest_sack_seq = self.sk.snd_una;
        }
        if self.retransmit_hint < self.sk.snd_una {
            self.retransmit_hint = self.sk.snd_una;
        }

        let now_us = self.sk.now_us;
        let mut seq_rtt: i64 = -1;
        let mut ca_rtt: i64 = -1;
        let mut sack_rtt: i64 = -1;
        if let Some(fa) = first_ackt {
            if flag & FLAG_RETRANS_DATA_ACKED == 0 {
                seq_rtt = now_us as i64 - fa as i64;
                ca_rtt = now_us as i64 - last_ackt as i64;
                if pkts_acked == 1
                    && prior_sacked == 0
                    && ack.ack - prior_snd_una < self.cfg.mss as u64
                    && st.rs.prior_delivered + 1 == self.sk.delivered
                {
                    flag |= FLAG_ACK_MAYBE_DELAYED;
                }
            }
        }
        if let Some(fs) = st.first_sackt_us {
            sack_rtt = now_us as i64 - fs as i64;
            ca_rtt = now_us as i64 - st.last_sackt_us as i64;
        }
        let _ = prior_delivered_cnt;
        // tcp_ack_update_rtt
        if seq_rtt < 0 {
            seq_rtt = sack_rtt;
        }
        if seq_rtt < 0 && flag & FLAG_ACKED != 0 {
            seq_rtt = self.tsecr_rtt_us(ack.tsecr_ns) as i64;
            ca_rtt = seq_rtt;
        }
        let seq_rtt = self.quantise_rtt_us(seq_rtt);
        let ca_rtt = self.quantise_rtt_us(ca_rtt);
        st.rs.rtt_us = ca_rtt;
        if seq_rtt >= 0 {
            self.update_rtt_min(ca_rtt.max(0) as u64, flag);
            self.rtt_estimator(seq_rtt.max(1) as u64);
            self.set_rto();
            self.backoff = 0;
        }
        if flag & FLAG_ACKED != 0 {
            flag |= FLAG_SET_XMIT_TIMER;
            if reord < prior_fack && !self.reno {
                self.check_sack_reordering(reord);
            }
        }
        let sample = AckSample { pkts_acked, rtt_us: st.rs.rtt_us, in_flight: last_in_flight };
        if pkts_acked > 0 || sample.rtt_us >= 0 {
            self.cc.pkts_acked(&mut self.sk, &sample);
        }
        flag
    }

    /// `tcp_update_rtt_min`.
    fn update_rtt_min(&mut self, rtt_us: u64, flag: u32) {
        if flag & FLAG_ACK_MAYBE_DELAYED != 0 && rtt_us > self.sk.min_rtt_us as u64 {
            return;
        }
        let v = self.min_rtt.running_min(MIN_RTT_WLEN_US, self.sk.now_us, rtt_us.max(1));
        self.sk.min_rtt_us = v.min(u32::MAX as u64) as u32;
    }

    /// `tcp_rtt_estimator` (µs; srtt ×8, mdev ×4, rttvar floored at rto_min).
    fn rtt_estimator(&mut self, m_us: u64) {
        let rto_min_us = self.cfg.min_rto_ns / 1000;
        let m = m_us as i64;
        if self.srtt8 != 0 {
            let mut srtt = self.srtt8 as i64;
            let mut err = m - (srtt >> 3);
            srtt += err;
            if err < 0 {
                err = -err;
                err -= (self.mdev4 >> 2) as i64;
                if err > 0 {
                    err >>= 3; // RTT decreasing: damped gain (Eifel-like)
                }
            } else {
                err -= (self.mdev4 >> 2) as i64;
            }
            self.mdev4 = (self.mdev4 as i64 + err).max(0) as u64;
            if self.mdev4 > self.mdev_max {
                self.mdev_max = self.mdev4;
                if self.mdev_max > self.rttvar {
                    self.rttvar = self.mdev_max;
                }
            }
            if self.sk.snd_una > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = self.sk.snd_nxt;
                self.mdev_max = rto_min_us;
            }
            self.srtt8 = srtt.max(1) as u64;
        } else {
            self.srtt8 = (m << 3).max(1) as u64;
            self.mdev4 = (m << 1) as u64;
            self.rttvar = self.mdev4.max(rto_min_us);
            self.mdev_max = self.rttvar;
            self.rtt_seq = self.sk.snd_nxt;
        }
        self.sk.srtt_us = (self.srtt8 >> 3).min(u32::MAX as u64) as u32;
    }

    /// `tcp_set_rto`: srtt + rttvar, rounded up to a jiffy, ≤ 120 s.
    fn set_rto(&mut self) {
        let us = (self.srtt8 >> 3) + self.rttvar;
        self.sk.rto_ns = ceil_ms_ns(us * 1000).min(TCP_RTO_MAX_NS);
    }

    /// `tcp_check_sack_reordering`.
    fn check_sack_reordering(&mut self, low_seq: u64) {
        let fack = self.fack();
        if low_seq >= fack {
            return;
        }
        let metric = fack - low_seq;
        let mss = self.cfg.mss as u64;
        if metric > self.reordering as u64 * mss {
            self.reordering = (((metric + mss - 1) / mss) as u32).min(TCP_MAX_REORDERING);
        }
        self.reord_seen += 1;
    }

    // ------------------------------------------------------------------------------------------
    // RACK (tcp_recovery.c)
    // ------------------------------------------------------------------------------------------

    fn rack_advance(&mut self, flags: u8, end_seq: u64, xmit_ns: u64) {
        let rtt_us = (self.sk.now_ns.saturating_sub(xmit_ns) / 1000) as u32;
        if flags & EVER_RETRANS != 0 && rtt_us < self.sk.min_rtt_us {
            // Ambiguous: probably the original was (S)ACKed, not this retransmission.
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt_us = rtt_us;
        if xmit_ns > self.rack.mstamp_ns || (xmit_ns == self.rack.mstamp_ns && end_seq > self.rack.end_seq) {
            self.rack.mstamp_ns = xmit_ns;
            self.rack.end_seq = end_seq;
        }
    }

    /// `tcp_rack_reo_wnd` (µs).
    fn rack_reo_wnd(&self) -> u64 {
        if self.reord_seen == 0 {
            if self.sk.ca_state >= CaState::Recovery {
                return 0;
            }
            if self.sk.sacked_out >= self.reordering {
                return 0;
            }
        }
        let min_rtt = self.sk.min_rtt_us as u64;
        ((min_rtt >> 2) * self.rack.reo_wnd_steps as u64).min(self.srtt8 >> 3)
    }

    /// `tcp_rack_detect_loss`: mark lost packets, return the longest remaining wait (µs).
    fn rack_detect_loss(&mut self) -> u64 {
        let reo_wnd = self.rack_reo_wnd() as i64;
        let now_us = self.sk.now_us as i64;
        let mut timeout: i64 = 0;
        let (r_ns, r_end) = (self.rack.mstamp_ns, self.rack.end_seq);
        let mut i = 0;
        while i < self.rtx.len() {
            let seg = self.rtx[i];
            i += 1;
            if seg.flags & SACKED != 0 || (seg.flags & LOST != 0 && seg.flags & RETRANS_OUT == 0) {
                continue;
            }
            let sent_before_rack = seg.sent_ns < r_ns || (seg.sent_ns == r_ns && seg.end() < r_end);
            if !sent_before_rack {
                if seg.flags & EVER_RETRANS == 0 && seg.seq > self.max_retrans_seq {
                    break; // all later originals were sent later still
                }
                continue;
            }
            let remaining = self.rack.rtt_us as i64 + reo_wnd - (now_us - seg.sent_us() as i64);
            if remaining <= 0 {
                self.mark_lost(i - 1);
            } else {
                timeout = timeout.max(remaining);
            }
        }
        timeout as u64
    }

    /// `tcp_rack_mark_lost`: returns whether the reorder timer was armed.
    fn rack_mark_lost(&mut self) -> bool {
        if !self.rack.advanced {
            return false;
        }
        self.rack.advanced = false;
        let t = self.rack_detect_loss();
        if t > 0 {
            let at = self.sk.now_ns + ceil_ms_ns(t * 1000) + TCP_TIMEOUT_MIN_NS;
            self.timer = Some((at, TimerKind::ReoTimeout));
            return true;
        }
        false
    }

    fn rack_update_reo_wnd(&mut self, rs: &RateSample) {
        if !rs.prior_valid {
            return;
        }
        if rs.prior_delivered < self.rack.last_delivered {
            self.rack.dsack_seen = false;
        }
        if self.rack.dsack_seen {
            self.rack.reo_wnd_steps = (self.rack.reo_wnd_steps + 1).min(0xff);
            self.rack.dsack_seen = false;
            self.rack.last_delivered = self.sk.delivered;
            self.rack.reo_wnd_persist = TCP_RACK_RECOVERY_THRESH;
        } else if self.rack.reo_wnd_persist == 0 {
            self.rack.reo_wnd_steps = 1;
        }
    }

    /// `tcp_mark_skb_lost`.
    fn mark_lost(&mut self, i: usize) {
        let seg = &mut self.rtx[i];
        if seg.flags & SACKED != 0 {
            return;
        }
        let lost_before = self.sk.lost;
        if seg.flags & LOST != 0 {
            if seg.flags & RETRANS_OUT != 0 {
                // A retransmission lost again.
                seg.flags &= !RETRANS_OUT;
                self.sk.retrans_out -= 1;
                self.sk.lost += 1;
            }
        } else {
            seg.flags |= LOST;
            self.sk.lost_out += 1;
            self.sk.lost += 1;
        }
        let seq = seg.seq;
        if self.sk.lost != lost_before {
            // tcp_notify_skb_loss_event (BBRv3 tree): the CA sees the loss after tp->lost counts it.
            let skb = LostSkb {
                tx_in_flight: seg.tx_in_flight,
                tx_lost: seg.tx_lost,
                is_app_limited: seg.tx_app_limited,
                tx_valid: seg.rate_valid,
            };
            self.cc.skb_marked_lost(&mut self.sk, &skb);
        }
        if seq < self.retransmit_hint {
            self.retransmit_hint = seq;
        }
    }

    fn identify_packet_loss(&mut self, flag: &mut u32) {
        if self.rtx.is_empty() {
            return;
        }
        if self.reno {
            self.newreno_mark_lost(*flag & FLAG_SND_UNA_ADVANCED != 0);
            return;
        }
        let prior_retrans = self.sk.retrans_out;
        if self.rack_mark_lost() {
            *flag &= !FLAG_SET_XMIT_TIMER;
        }
        if prior_retrans > self.sk.retrans_out {
            *flag |= FLAG_LOST_RETRANS;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Recovery state machine (tcp_fastretrans_alert and friends)
    // ------------------------------------------------------------------------------------------

    fn set_ca_state(&mut self, s: CaState) {
        self.cc.set_state(&mut self.sk, s);
        self.sk.ca_state = s;
    }

    fn any_retrans_done(&self) -> bool {
        self.sk.retrans_out > 0 || self.rtx.front().map_or(false, |s| s.flags & EVER_RETRANS != 0)
    }

    fn try_keep_open(&mut self) {
        let state = if self.sk.sacked_out + self.sk.lost_out > 0 || self.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.sk.ca_state != state {
            self.set_ca_state(state);
            self.high_seq = self.sk.snd_nxt;
        }
    }

    /// `tcp_try_to_open`: an ECE enters CWR (once per window: not while already reducing).
    fn try_to_open(&mut self, flag: u32) {
        if flag & FLAG_ECE != 0 {
            self.enter_cwr();
        }
        if self.sk.ca_state != CaState::Cwr {
            self.try_keep_open();
        }
    }

    /// `tcp_enter_cwr`: ECN-triggered reduction, ssthresh from the CC, PRR down to it.
    fn enter_cwr(&mut self) {
        self.prior_ssthresh = 0;
        if self.sk.ca_state < CaState::Cwr {
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
        }
    }

    /// `tcp_init_cwnd_reduction`.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.sk.snd_nxt;
        self.tlp_high_seq = None;
        self.sk.snd_cwnd_cnt = 0;
        self.sk.prior_cwnd = self.sk.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.sk.ssthresh = self.cc.ssthresh(&mut self.sk);
        // tcp_ecn_queue_cwr: tell the receiver with CWR on the next new segment.
        if self.sk.ecn_ok {
            self.ecn_queue_cwr = true;
        }
    }

    /// `tcp_end_cwnd_reduction` (undo is not modelled, so the reduction always completes).
    fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        if self.sk.ssthresh < TCP_INFINITE_SSTHRESH {
            self.sk.cwnd = self.sk.ssthresh;
            self.snd_cwnd_stamp_ns = self.sk.now_ns;
        }
        self.cc.cwnd_event(&mut self.sk, CaEvent::CompleteCwr);
    }

    fn enter_recovery(&mut self) {
        self.prior_ssthresh = 0;
        if !self.in_cwnd_reduction() {
            self.prior_ssthresh = self.sk.current_ssthresh();
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
    }

    /// Leaving Recovery/Loss without undo (`tcp_try_undo_recovery` when undo is impossible).
    fn finish_recovery(&mut self) {
        if self.rack.reo_wnd_persist > 0 {
            self.rack.reo_wnd_persist -= 1;
        }
        self.set_ca_state(CaState::Open);
    }

    fn fastretrans_alert(&mut self, _prior_snd_una: u64, flag: &mut u32, _ack: &AckSeg) {
        if self.sk.packets_out == 0 && self.sk.sacked_out > 0 {
            self.sk.sacked_out = 0;
        }
        if *flag & FLAG_ECE != 0 {
            self.prior_ssthresh = 0;
        }
        // State exit once high_seq is ACKed.
        if self.sk.ca_state != CaState::Open && self.sk.snd_una >= self.high_seq {
            match self.sk.ca_state {
                CaState::Cwr => {
                    if self.sk.snd_una != self.high_seq {
                        self.end_cwnd_reduction();
                        self.set_ca_state(CaState::Open);
                    }
                }
                CaState::Recovery => {
                    if self.reno {
                        self.sk.sacked_out = 0; // tcp_reset_reno_sack
                        // tcp_try_undo_recovery: "Hold old state until something *above*
                        // high_seq is ACKed. For Reno it is MUST to prevent false fast
                        // retransmits (RFC2582)."
                        if self.sk.snd_una == self.high_seq {
                            return;
                        }
                    }
                    self.finish_recovery();
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        let num_dupack = self.num_dupack;
        match self.sk.ca_state {
            CaState::Recovery => {
                if *flag & FLAG_SND_UNA_ADVANCED == 0 && self.reno {
                    self.add_reno_sack(num_dupack);
                }
                self.identify_packet_loss(flag);
                return;
            }
            CaState::Loss => {
                // tcp_process_loss (no F-RTO, no undo)
                if self.sk.snd_una >= self.high_seq {
                    if !(self.reno && self.sk.snd_una == self.high_seq) {
                        self.finish_recovery();
                    }
                } else if self.reno {
                    if self.sk.snd_nxt > self.high_seq && num_dupack > 0 {
                        self.add_reno_sack(num_dupack);
                    } else if *flag & FLAG_SND_UNA_ADVANCED != 0 {
                        self.sk.sacked_out = 0;
                    }
                }
                self.identify_packet_loss(flag);
                if !(self.sk.ca_state == CaState::Open || *flag & FLAG_LOST_RETRANS != 0) {
                    return;
                }
            }
            _ => {}
        }
        if self.reno {
            if *flag & FLAG_SND_UNA_ADVANCED != 0 {
                self.sk.sacked_out = 0;
            }
            self.add_reno_sack(num_dupack);
        }
        self.identify_packet_loss(flag);
        if self.sk.lost_out == 0 {
            // tcp_time_to_recover: RACK (SACK) or tcp_newreno_mark_lost (non-SACK) marks the
            // proven losses; none yet.
            self.try_to_open(*flag);
            return;
        }
        self.enter_recovery();
    }

    /// `tcp_cwnd_reduction`: PRR.
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, flag: u32) {
        if newly_acked_sacked == 0 || self.sk.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.sk.packets_in_flight() as i64;
        let delta = self.sk.ssthresh as i64 - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64;
        if delta < 0 {
            let dividend = self.sk.ssthresh as u64 * self.prr_delivered as u64 + self.sk.prior_cwnd as u64 - 1;
            sndcnt = (dividend / self.sk.prior_cwnd as u64) as i64 - self.prr_out as i64;
        } else {
            sndcnt = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if flag & FLAG_SND_UNA_ADVANCED != 0 && newly_lost == 0 {
                sndcnt += 1;
            }
            sndcnt = sndcnt.min(delta);
        }
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.sk.cwnd = (in_flight + sndcnt).max(0) as u32;
    }

    /// `tcp_cong_control` + `tcp_update_pacing_rate`.
    fn cong_control(&mut self, acked_sacked: u32, flag: u32, rs: &RateSample) {
        if self.cc.has_cong_control() {
            if self.cc.cong_control(&mut self.sk, rs) {
                return;
            }
        }
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(acked_sacked, rs.losses, flag);
        } else {
            let may_raise = if self.reordering > TCP_REORDERING {
                flag & FLAG_FORWARD_PROGRESS != 0
            } else {
                flag & FLAG_DATA_ACKED != 0
            };
            if may_raise {
                self.cc.cong_avoid(&mut self.sk, acked_sacked);
                self.snd_cwnd_stamp_ns = self.sk.now_ns;
            }
        }
        if !self.cc.has_cong_control() {
            self.update_pacing_rate();
        }
    }

    /// Linux `tcp_update_pacing_rate`: mss·max(cwnd, packets_out)/srtt × 200 % (cwnd < ssthresh/2)
    /// or 120 %.
    fn update_pacing_rate(&mut self) {
        let ratio = if self.sk.cwnd < self.sk.ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
        let pkts = self.sk.cwnd.max(self.sk.packets_out) as f64;
        let srtt_s = (self.srtt8 as f64 / 8.0) * 1e-6;
        self.sk.pacing_rate_bps = if srtt_s > 0.0 {
            self.cfg.mss as f64 * 8.0 * pkts / srtt_s * ratio / 100.0
        } else {
            0.0
        };
    }

    /// `tcp_process_tlp_ack`.
    fn process_tlp_ack(&mut self, ack: u64, flag: u32) {
        let h = match self.tlp_high_seq {
            Some(h) => h,
            None => return,
        };
        if ack < h {
            return;
        }
        if !self.tlp_retrans || flag & FLAG_DSACK_TLP != 0 {
            self.tlp_high_seq = None;
        } else if ack > h {
            // The probe repaired a loss: reduce cwnd once (CWR, completed at once).
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open();
        } else if flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DATA_SACKED) == 0 {
            self.tlp_high_seq = None;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Timers
    // ------------------------------------------------------------------------------------------

    /// Earliest of RTO / TLP / RACK reorder / pacing release.
    pub fn next_timer(&self) -> Option<u64> {
        let t = self.timer.map(|(t, _)| t);
        if self.pacing_blocked {
            Some(t.map_or(self.wstamp_ns, |t| t.min(self.wstamp_ns)))
        } else {
            t
        }
    }

    pub fn on_timer(&mut self, now: u64) {
        self.set_now(now);
        if self.pacing_blocked && now >= self.wstamp_ns {
            self.pacing_blocked = false;
        }
        let (t, kind) = match self.timer {
            Some(x) => x,
            None => return,
        };
        if now < t {
            return;
        }
        self.timer = None;
        if self.state == ConnState::SynSent {
            // SYN retransmission with exponential backoff.
            self.syn_pending = true;
            self.syn_retrans += 1;
            self.sk.total_retrans += 1;
            self.backoff += 1;
            self.sk.rto_ns = (self.sk.rto_ns * 2).min(TCP_RTO_MAX_NS);
            self.timer = Some((now + self.sk.rto_ns, TimerKind::Retrans));
            return;
        }
        if self.state != ConnState::Established || self.completed_at.is_some() {
            return;
        }
        match kind {
            TimerKind::Retrans => self.retransmit_timer(),
            TimerKind::LossProbe => self.send_loss_probe(),
            TimerKind::ReoTimeout => self.rack_reo_timeout(),
        }
    }

    /// `tcp_retransmit_timer`.
    fn retransmit_timer(&mut self) {
        if self.sk.packets_out == 0 {
            return;
        }
        self.enter_loss();
        self.retransmits += 1;
        self.force_head_rtx = true;
        self.backoff += 1;
        self.sk.rto_ns = (self.sk.rto_ns * 2).min(TCP_RTO_MAX_NS);
        self.timer = Some((self.sk.now_ns + self.sk.rto_ns, TimerKind::Retrans));
    }

    /// `tcp_enter_loss` (no F-RTO).
    fn enter_loss(&mut self) {
        let now_us = self.sk.now_us as i64;
        // tcp_timeout_mark_lost
        let is_reneg = self.rtx.front().map_or(false, |s| s.flags & SACKED != 0);
        if is_reneg {
            self.sk.sacked_out = 0;
            self.highest_sack_seq = self.sk.snd_una;
            for s in self.rtx.iter_mut() {
                s.flags &= !SACKED;
            }
        } else if self.reno {
            self.sk.sacked_out = 0; // tcp_reset_reno_sack
        }
        let rack_rtt = self.rack.rtt_us as i64;
        for i in 0..self.rtx.len() {
            let s = self.rtx[i];
            if s.flags & SACKED != 0 {
                continue;
            }
            if i > 0 && rack_rtt - (now_us - s.sent_us() as i64) > 0 {
                continue; // recently sent: not marked lost yet
            }
            self.mark_lost(i);
        }
        self.n_sack_cache = 0;
        self.retransmit_hint = self.sk.snd_una;

        let st = self.sk.ca_state;
        if st <= CaState::Disorder || self.high_seq <= self.sk.snd_una || (st == CaState::Loss && self.retransmits == 0) {
            self.prior_ssthresh = self.sk.current_ssthresh();
            self.sk.prior_cwnd = self.sk.cwnd;
            self.sk.ssthresh = self.cc.ssthresh(&mut self.sk);
            self.cc.cwnd_event(&mut self.sk, CaEvent::Loss);
        }
        self.sk.cwnd = self.sk.packets_in_flight() + 1;
        self.sk.snd_cwnd_cnt = 0;
        self.snd_cwnd_stamp_ns = self.sk.now_ns;
        if st <= CaState::Disorder && self.sk.sacked_out >= TCP_REORDERING {
            self.reordering = self.reordering.min(TCP_REORDERING);
        }
        self.set_ca_state(CaState::Loss);
        self.high_seq = self.sk.snd_nxt;
        self.tlp_high_seq = None;
        if self.sk.ecn_ok {
            self.ecn_queue_cwr = true; // tcp_ecn_queue_cwr
        }
    }

    /// `tcp_schedule_loss_probe`.
    fn schedule_loss_probe(&mut self, advancing_rto: bool) -> bool {
        if !self.cfg.tlp
            || !self.cfg.sack
            || self.sk.packets_out == 0
            || !matches!(self.sk.ca_state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let now = self.sk.now_ns;
        let mut timeout = if self.srtt8 != 0 {
            let two_srtt = ceil_ms_ns((self.srtt8 >> 2) * 1000);
            two_srtt + if self.sk.packets_out == 1 { self.cfg.min_rto_ns } else { TCP_TIMEOUT_MIN_NS }
        } else {
            self.cfg.initial_rto_ns
        };
        let rto_delta = if advancing_rto {
            self.sk.rto_ns as i64
        } else {
            self.rto_delta_ns()
        };
        if rto_delta > 0 {
            timeout = timeout.min(rto_delta as u64);
        }
        self.timer = Some((now + timeout, TimerKind::LossProbe));
        true
    }

    /// Time until the RTO would fire for the head (`tcp_rto_delta_us`), ns.
    fn rto_delta_ns(&self) -> i64 {
        match self.rtx.front() {
            Some(h) => (h.sent_ns + self.sk.rto_ns) as i64 - self.sk.now_ns as i64,
            None => self.sk.rto_ns as i64,
        }
    }

    /// `tcp_rearm_rto`.
    fn rearm_rto(&mut self) {
        if self.sk.packets_out == 0 {
            self.timer = None;
            return;
        }
        let mut rto = self.sk.rto_ns;
        if matches!(self.timer, Some((_, TimerKind::ReoTimeout)) | Some((_, TimerKind::LossProbe))) {
            rto = self.rto_delta_ns().max(1000) as u64;
        }
        self.timer = Some((self.sk.now_ns + rto, TimerKind::Retrans));
    }

    /// `tcp_send_loss_probe` (timer part; the probe itself goes out on the next poll).
    fn send_loss_probe(&mut self) {
        if self.tlp_high_seq.is_some() {
            self.rearm_rto();
            return;
        }
        self.tlp_retrans = false;
        if self.has_new_data() && self.snd_wnd_ok(self.sk.snd_nxt + self.next_len() as u64) {
            self.probe = Some(Probe::NewData);
        } else if !self.rtx.is_empty() {
            self.probe = Some(Probe::Retrans);
        } else {
            return;
        }
        // Keep an RTO armed in case the loop does not poll immediately.
        self.rearm_rto();
    }

    /// `tcp_rack_reo_timeout`.
    fn rack_reo_timeout(&mut self) {
        let prior_inflight = self.sk.packets_in_flight();
        let lost_before = self.sk.lost;
        self.rack_detect_loss();
        if prior_inflight != self.sk.packets_in_flight() {
            if self.sk.ca_state != CaState::Recovery {
                self.enter_recovery();
                if !self.cc.has_cong_control() {
                    let nl = (self.sk.lost - lost_before) as u32;
                    self.cwnd_reduction(1, nl, 0);
                }
            }
        }
        // The fired timer was the reorder timer: re-arm the RTO relative to the head.
        self.timer = Some((0, TimerKind::ReoTimeout));
        self.rearm_rto();
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
            srtt_us: self.srtt8 as f64 / 8.0,
            rttvar_us: self.mdev4 as f64 / 4.0,
            min_rtt_us: if self.sk.min_rtt_us == u32::MAX { 0.0 } else { self.sk.min_rtt_us as f64 },
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

    pub fn cc_sample(&self, out: &mut Vec<(&'static str, f64)>) {
        self.cc.sample(out);
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "app_tests.rs"]
mod app_tests;
