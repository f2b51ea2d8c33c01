//! TCP receiver: in-order/out-of-order bookkeeping, SACK/D-SACK generation (RFC 2018/2883,
//! Linux `tcp_sack_new_ofo_skb` block ordering), timestamp echo (RFC 7323 `ts_recent` rule),
//! and Linux's ACK scheduling (`__tcp_ack_snd_check`, `tcp_event_data_recv`, `tcp_send_delayed_ack`
//! in net/ipv4/tcp_input.c / tcp_output.c): delayed ACK with `ato` adaptation, quick-ACK
//! mode, immediate ACK when more than one full segment is unacknowledged, on duplicates, when the
//! out-of-order queue drains, and for the first 3 dupACKs per `rcv_nxt` while data is out of
//! order; after that, SACK compression (≥ 4.18).
//!
//! The receiver's own RTT estimate is Linux's: one sample from the handshake (SYN-ACK sent →
//! first segment of the peer received, `tcp_synack_rtt_meas` → `tcp_ack_update_rtt`), never
//! updated afterwards since the receiver sends no data. It sets `srtt` and `icsk_rto`
//! (`tcp_rtt_estimator` first sample + `tcp_set_rto`: srtt + max(2·srtt, rto_min)); `srtt`
//! bounds the delayed-ACK timeout in `tcp_send_delayed_ack` (≤ max(srtt, TCP_DELACK_MIN)) and
//! `icsk_rto` bounds `ato` inflation (`tcp_delack_timer_handler`) and is the "long gap" of
//! `tcp_event_data_recv`. Without a sample (retransmitted SYN-ACK) both stay unset/initial.
//!
//! Receive window (Linux 6.x): `tcp_select_initial_window` offers rmem[1]'s window rounded to
//! whole MSS (≤ 65535 in the SYN-ACK) with window scale ilog2(rmem[2]) − 15; `tcp_init_buffer_space`
//! sets `window_clamp` and `rcv_ssthresh`; `tcp_grow_window` raises `rcv_ssthresh` by 2·advmss
//! per received segment ≥ 128 bytes while below min(window_clamp, tcp_space) and forces an
//! immediate ACK each time (`icsk_ack.quick |= 1`); `tcp_rcv_space_adjust` (DRS) grows
//! `sk_rcvbuf` and `window_clamp` once per receiver RTT from the bytes the application read
//! (bounded by rmem[2]) when `moderate_rcvbuf`; `__tcp_select_window`/`tcp_select_window`
//! advertise min(rcv_ssthresh, free space) rounded up to the scale unit, never shrinking the
//! right edge. A fixed `rwnd_bytes` replaces all of this with a constant window.
//!
//! Older kernels (the TCP profiles of 2.6.36-3.12): `adv_win_scale` replaces `scaling_ratio`
//! in `tcp_win_from_space` (3/4 of the buffer before 3.4, half after); `init_rwnd` caps the
//! SYN-ACK's window at that many segments (`tcp_select_initial_window` before 4.20);
//! `legacy_drs` runs `tcp_rcv_space_adjust` as before 3.13 (space = max(space, 2 × bytes read
//! in the RTT), buffer = space/advmss segments of `rcvmem`, `window_clamp` = space), starts
//! `rcvq_space` at the SYN-ACK's window and applies `tcp_fixup_rcvbuf` at establishment.
//!
//! Simplifications: the application reads instantly (`tcp_space` = the window of rcvbuf less
//! the out-of-order bytes); `scaling_ratio` stays at Linux's initial 50 % (the kernel re-measures
//! it from each skb's truesize, driver-dependent). The receiver RTT for DRS is Linux's: TSecr
//! samples of full segments (`tcp_rcv_rtt_measure_ts`, ms ticks, gain 1/8, following queueing
//! delay) and the time to receive one advertised window (`tcp_rcv_rtt_measure`, which only
//! lowers the estimate). No SWS logic beyond `__tcp_select_window`'s; no pingpong
//! (interactive) mode since the receiver never sends data; SACK-compression delay is `comp_sack_delay_ns` (Linux: min(1 ms, RTT/20),
//! identical for RTT ≥ 20 ms).

use super::{AckSeg, DataSeg, TcpConfig};
use crate::cc::dctcp::CeAckState;

// `TCP_DELACK_MIN` = `TCP_ATO_MIN` = HZ/25 (40 ms) are `TcpConfig::delayed_ack_timeout_ns`
// (`delack_min_ns` here), so that a FreeBSD-like 100 ms timer can be configured.
/// `TCP_DELACK_MAX` = HZ/5 (200 ms), also the default `icsk_delack_max`.
const TCP_DELACK_MAX_NS: u64 = 200_000_000;
/// Upper bound of `ato` when not in pingpong mode (HZ/2).
const MAX_ATO_NS: u64 = 500_000_000;
/// `TCP_MAX_QUICKACKS`.
const TCP_MAX_QUICKACKS: u32 = 16;
/// `TCP_MSS_DEFAULT`: initial receiver estimate of the peer's MSS.
const TCP_MSS_DEFAULT: u32 = 536;
/// `TCP_NUM_SACKS`: SACK blocks remembered by the receiver.
const TCP_NUM_SACKS: usize = 4;
/// `TCP_FASTRETRANS_THRESH`: dupACKs sent immediately before SACK compression starts.
const TCP_FASTRETRANS_THRESH: u32 = 3;
/// `tcp_comp_sack_nr`: at most this many ACKs compressed into one.
const TCP_COMP_SACK_NR: u32 = 44;
/// SACK blocks that fit in the option space alongside timestamps.
const MAX_SACK_BLOCKS_ON_WIRE: usize = 3;

/// `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is a fraction of 2^8.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO`: half of the buffer is window.
const SCALING_RATIO: u64 = 1 << (RMEM_TO_WIN_SCALE - 1);
/// `TCP_MAX_WSCALE`.
const TCP_MAX_WSCALE: u32 = 14;
/// `TCP_INIT_CWND`, for the initial `rcvq_space`.
const TCP_INIT_CWND: u64 = 10;
/// Timestamp option bytes: advmss = mss + 12.
const TCPOLEN_TSTAMP_ALIGNED: u32 = 12;
/// `MAX_TCP_HEADER`, `SKB_DATA_ALIGN(sizeof(struct sk_buff))` and
/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` on x86-64 (sender/sndbuf.rs uses the same).
const MAX_TCP_HEADER: u64 = 256;
const SK_BUFF_SIZE: u64 = 256;
const SHINFO_SIZE: u64 = 320;

/// `tcp_win_from_space`: today's `scaling_ratio` (None) or an older kernel's
/// `tcp_adv_win_scale` (n > 0: space − space/2^n; n ≤ 0: space/2^−n).
fn win_from_space(space: u64, adv_win_scale: Option<i32>) -> u64 {
    match adv_win_scale {
        None => (space * SCALING_RATIO) >> RMEM_TO_WIN_SCALE,
        Some(n) if n <= 0 => space >> (-n).min(63),
        Some(n) => space - (space >> n.min(63)),
    }
}

/// `tcp_space_from_win` (its inverse; the kernels with `tcp_adv_win_scale` had none and
/// counted out-of-order skbs at their truesize, which this approximates).
fn space_from_win(win: u64, adv_win_scale: Option<i32>) -> u64 {
    match adv_win_scale {
        None => (win << RMEM_TO_WIN_SCALE) / SCALING_RATIO,
        Some(n) if n <= 0 => win << (-n).min(32),
        Some(n) => {
            let d = 1u64 << n.min(32);
            (win * d).div_ceil(d - 1)
        }
    }
}

/// `SKB_TRUESIZE(advmss + MAX_TCP_HEADER)`: payload and headers 64-byte aligned, plus `sk_buff`
/// 256 and `skb_shared_info` 320 (2304 bytes for advmss 1460).
fn skb_truesize(advmss: u64) -> u64 {
    (advmss + MAX_TCP_HEADER).div_ceil(64) * 64 + SK_BUFF_SIZE + SHINFO_SIZE
}

/// The per-segment buffer cost of DRS before 3.13: [`skb_truesize`] grown by 128 bytes until
/// its window holds an advmss (the loop of `tcp_rcv_space_adjust`; 2944 bytes at
/// `tcp_adv_win_scale` 1, 2304 at 2).
fn legacy_rcvmem(advmss: u64, adv_win_scale: Option<i32>) -> u64 {
    let mut m = skb_truesize(advmss);
    while win_from_space(m, adv_win_scale) < advmss {
        m += 128;
    }
    m
}

/// Receive-window state (Linux `rcv_ssthresh`, `window_clamp`, `sk_rcvbuf`, `rcvq_space`,
/// `rcv_rtt_est`, `rcv_wnd`); `fixed` = a configured constant window instead.
struct RcvWindow {
    fixed: Option<u64>,
    moderate: bool,
    /// `tcp_adv_win_scale` (None = `scaling_ratio`).
    aws: Option<i32>,
    /// DRS before 3.13, with its per-segment buffer cost `rcvmem`.
    legacy_drs: bool,
    rcvmem: u64,
    rmem_max: u64,
    advmss: u64,
    wscale: u32,
    rcvbuf: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// Last advertised window (bytes beyond `rcv_wup`).
    rcv_wnd: u64,
    /// DRS (`rcvq_space`): bytes read in the last measured RTT, its start seq and time.
    space: u64,
    space_seq: u64,
    space_time: u64,
    /// `rcv_rtt_est`: ns (0 = none), the sequence that ends the current sample and its start.
    rtt_ns: u64,
    rtt_seq: u64,
    rtt_time: u64,
    /// `rcv_rtt_last_tsecr`.
    last_tsecr: u64,
}

impl RcvWindow {
    fn new(cfg: &TcpConfig) -> Self {
        let advmss = (cfg.mss + TCPOLEN_TSTAMP_ALIGNED) as u64;
        let aws = cfg.adv_win_scale;
        let [_, rmem_def, rmem_max] = cfg.rmem;
        let mut rcvbuf = rmem_def;
        // tcp_select_initial_window: the offer rounded down to whole MSS, at most 65535 unscaled;
        // scale from the largest buffer the socket may grow to.
        let mut space = win_from_space(rcvbuf, aws);
        if space > cfg.mss as u64 {
            space -= space % cfg.mss as u64;
        }
        let mut rcv_wnd = space.min(u16::MAX as u64);
        let big = space.max(rmem_max).max(1);
        let wscale = (63 - big.leading_zeros()).saturating_sub(15).min(TCP_MAX_WSCALE);
        if let Some(n) = cfg.init_rwnd {
            // before 4.20 the offer is at most init_rwnd segments (fewer above MSS 1460)
            if cfg.mss as u64 > 1 << wscale {
                let n = if cfg.mss > 1460 { (1460 * n as u64 / cfg.mss as u64).max(2) } else { n as u64 };
                rcv_wnd = rcv_wnd.min(n * cfg.mss as u64);
            }
        }
        let mut window_clamp = (u16::MAX as u64) << wscale;
        let rcvmem = legacy_rcvmem(advmss, aws);
        if cfg.legacy_drs {
            // tcp_fixup_rcvbuf in 3.12's form: room for the skbs of twice the initial receive
            // window (the forms before it, 4 segments in 2.6.36 and 10 in 3.10, stay under
            // rmem[1] = 87380 at MSS ≤ 1460 as this one does with 4 and 10 segments)
            let segs = cfg.init_rwnd.unwrap_or(TCP_INIT_CWND as u32) as u64;
            rcvbuf = rcvbuf.max((2 * segs * skb_truesize(advmss)).min(rmem_max));
        }
        // tcp_init_buffer_space (tcp_app_win = 31: keep one advmss of the buffer back).
        let full = win_from_space(rcvbuf, aws);
        if window_clamp >= full {
            window_clamp = full;
        }
        if window_clamp > 2 * advmss && window_clamp + advmss > full {
            window_clamp = (2 * advmss).max(full.saturating_sub(advmss));
        }
        let rcv_ssthresh = rcv_wnd.min(window_clamp);
        // rcvq_space.space: the SYN-ACK's window before 3.13, at most TCP_INIT_CWND segments now
        let space = if cfg.legacy_drs { rcv_wnd } else { rcv_ssthresh.min(rcv_wnd).min(TCP_INIT_CWND * advmss) };
        RcvWindow {
            fixed: cfg.rwnd_bytes,
            moderate: cfg.moderate_rcvbuf,
            aws,
            legacy_drs: cfg.legacy_drs,
            rcvmem,
            rmem_max,
            advmss,
            wscale,
            rcvbuf,
            window_clamp,
            rcv_ssthresh,
            rcv_wnd,
            space,
            space_seq: 0,
            space_time: 0,
            rtt_ns: 0,
            rtt_seq: 0,
            rtt_time: 0,
            last_tsecr: 0,
        }
    }

    /// `tcp_space` with instant reads: the window of rcvbuf less the out-of-order bytes held.
    fn free_space(&self, ofo_bytes: u64) -> u64 {
        win_from_space(self.rcvbuf.saturating_sub(space_from_win(ofo_bytes, self.aws)), self.aws)
    }

    /// `tcp_grow_window`: true when rcv_ssthresh grew (the caller forces a quick ACK).
    fn grow(&mut self, len: u32, ofo_bytes: u64) -> bool {
        if self.fixed.is_some() || len < 128 {
            return false;
        }
        let room = self.window_clamp.min(self.free_space(ofo_bytes)).saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        // Check #2 passes (truesize measured at the scaling ratio): incr = 2·advmss.
        let incr = (2 * self.advmss).max(2 * len as u64);
        self.rcv_ssthresh += room.min(incr);
        true
    }

    /// `tcp_rcv_rtt_measure` (window-based sample, the minimum kept).
    fn rtt_measure(&mut self, now: u64, rcv_nxt: u64) {
        if self.rtt_time != 0 {
            if rcv_nxt < self.rtt_seq {
                return;
            }
            let d = now.saturating_sub(self.rtt_time).max(1);
            if self.rtt_ns == 0 || d < self.rtt_ns {
                self.rtt_ns = d;
            }
        }
        self.rtt_seq = rcv_nxt + self.rcv_wnd;
        self.rtt_time = now.max(1);
    }

    /// `tcp_rcv_rtt_measure_ts`: a new TSecr on a full segment is an RTT sample (the TS clock
    /// ticks in ms, at least 1 ms), smoothed with gain 1/8.
    fn rtt_measure_ts(&mut self, now: u64, tsecr_ns: u64, full: bool) {
        if tsecr_ns == 0 || tsecr_ns == self.last_tsecr {
            return;
        }
        self.last_tsecr = tsecr_ns;
        if !full {
            return;
        }
        let m = ((now / 1_000_000).saturating_sub(tsecr_ns / 1_000_000)).max(1) * 1_000_000;
        self.rtt_ns = if self.rtt_ns == 0 { m } else { self.rtt_ns - self.rtt_ns / 8 + m / 8 };
    }

    /// `tcp_rcv_space_adjust` after the application read up to `copied_seq`.
    fn space_adjust(&mut self, now: u64, copied_seq: u64) {
        if self.fixed.is_some() || self.rtt_ns == 0 || now.saturating_sub(self.space_time) < self.rtt_ns {
            return;
        }
        let copied = copied_seq - self.space_seq;
        if self.legacy_drs {
            self.space_adjust_legacy(now, copied_seq, copied);
            return;
        }
        if copied > self.space {
            if self.moderate {
                // Twice the bytes read in the last RTT plus a cushion, more while the sender
                // is still growing (slow start).
                let mut rcvwin = 2 * copied + 16 * self.advmss;
                let grow = rcvwin * (copied - self.space) / self.space.max(1);
                rcvwin += 2 * grow;
                let rcvbuf = space_from_win(rcvwin, self.aws).min(self.rmem_max);
                if rcvbuf > self.rcvbuf {
                    self.rcvbuf = rcvbuf;
                    self.window_clamp = win_from_space(rcvbuf, self.aws);
                }
            }
            self.space = copied;
        }
        self.space_seq = copied_seq;
        self.space_time = now;
    }

    /// `tcp_rcv_space_adjust` before 3.13 ("tcp: fix dynamic right sizing" replaced it): the
    /// space is twice the bytes read in the last RTT (never less than before); when it grew,
    /// the buffer becomes that many segments of `rcvmem` (≤ rmem[2]) and, if that raised the
    /// buffer, `window_clamp` becomes the space itself.
    fn space_adjust_legacy(&mut self, now: u64, copied_seq: u64, copied: u64) {
        let space = self.space.max(2 * copied);
        if space != self.space {
            self.space = space;
            if self.moderate {
                let rcvbuf = ((space / self.advmss).max(1) * self.rcvmem).min(self.rmem_max);
                if rcvbuf > self.rcvbuf {
                    self.rcvbuf = rcvbuf;
                    self.window_clamp = space;
                }
            }
        }
        self.space_seq = copied_seq;
        self.space_time = now;
    }

    /// `tcp_select_window`: the window to advertise at `rcv_nxt` (never shrinking the right
    /// edge `rcv_wup + rcv_wnd`); records it as the new `rcv_wnd` from `rcv_nxt`.
    fn select(&mut self, rcv_nxt: u64, rcv_wup: u64, ofo_bytes: u64, rcv_mss: u32) -> u64 {
        if let Some(w) = self.fixed {
            return w;
        }
        let cur = (rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt);
        let unit = 1u64 << self.wscale;
        let allowed = win_from_space(self.rcvbuf, self.aws);
        let full = self.window_clamp.min(allowed);
        let mss = (rcv_mss as u64).min(full);
        let mut free = self.free_space(ofo_bytes);
        let mut new = 'w: {
            if free < full / 2 {
                free -= free % unit;
                if free < allowed / 16 || free < mss {
                    break 'w 0;
                }
            }
            let w = free.min(self.rcv_ssthresh);
            w.div_ceil(unit) * unit
        };
        if new < cur {
            new = cur.div_ceil(unit) * unit;
        }
        new = new.min((u16::MAX as u64) << self.wscale);
        self.rcv_wnd = new;
        new
    }
}

pub struct TcpReceiver {
    mss: u32,
    win: RcvWindow,
    /// Window of the last ACK sent (also `tcp_incr_quickack`'s `rcv_wnd`).
    rwnd: u64,
    delayed_ack: bool,
    sack: bool,
    sack_compression: bool,
    comp_sack_delay_ns: u64,
    /// Receiver's `icsk_rto`: the initial RTO until the handshake RTT sample, then
    /// srtt + max(2·srtt, rto_min) (it never sends data, so it never changes again).
    rto_ns: u64,
    min_rto_ns: u64,
    /// Receiver's `srtt` (ns) from the handshake; 0 = no sample.
    srtt_ns: u64,
    /// Send time of the SYN-ACK and the number sent (an RTT sample only if exactly one).
    synack_sent_ns: u64,
    synacks_sent: u32,
    handshake_done: bool,
    /// `TCP_ATO_MIN` = `TCP_DELACK_MIN` (40 ms in Linux; configurable).
    delack_min_ns: u64,

    // ECN (RFC 3168 receiver, Linux tcp_ecn_check_ce / tcp_ecn_accept_cwr / tcp_ecn_send).
    ecn: bool,
    /// DCTCP ACK state machine instead of "ECE until CWR" (flow CC needs ECN).
    ecn_precise: bool,
    /// `TCP_ECN_DEMAND_CWR`: set ECE on outgoing ACKs.
    demand_cwr: bool,
    /// `TCP_ECN_SEEN`: an ECT or CE packet was received.
    ecn_seen: bool,
    ce_ack: CeAckState,
    /// DCTCP: an ACK (ack, ece) to emit before the regular one (sent without touching the
    /// delayed-ACK state, as Linux's `__tcp_send_ack(sk, prior_rcv_nxt)`).
    special_ack: Option<(u64, bool)>,

    synack_pending: bool,
    rcv_nxt: u64,
    /// `rcv_nxt` when the last ACK was sent.
    rcv_wup: u64,
    /// Out-of-order data as sorted, disjoint, non-adjacent [start, end) ranges.
    ofo: Vec<(u64, u64)>,
    /// SACK blocks, most recently changed first.
    sacks: [(u64, u64); TCP_NUM_SACKS],
    num_sacks: usize,
    dsack: Option<(u64, u64)>,
    ts_recent: u64,

    // ACK scheduling (`icsk_ack`).
    rcv_mss: u32,
    quick: u32,
    ato: u64,
    lrcvtime: u64,
    ack_scheduled: bool,
    ack_now: bool,
    /// `ICSK_ACK_PUSHED`: a full-sized segment carried PSH since the last ACK.
    pushed: bool,
    /// `TcpConfig::push_ack`.
    push_ack: bool,
    /// An ACK must be emitted by the next `poll_ack`.
    send_pending: bool,
    delack_timer: Option<u64>,
    // SACK compression.
    compressed_ack_rcv_nxt: u64,
    dup_ack_counter: u32,
    compressed_ack: u32,
    comp_timer: Option<u64>,

    /// ACKs emitted (including the SYN-ACK).
    pub acks_sent: u64,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig) -> Self {
        let win = RcvWindow::new(cfg);
        TcpReceiver {
            mss: cfg.mss,
            rwnd: cfg.rwnd_bytes.unwrap_or(win.rcv_wnd),
            win,
            delayed_ack: cfg.delayed_ack,
            sack: cfg.sack,
            sack_compression: cfg.sack_compression,
            comp_sack_delay_ns: cfg.comp_sack_delay_ns,
            rto_ns: cfg.initial_rto_ns,
            min_rto_ns: cfg.min_rto_ns,
            srtt_ns: 0,
            synack_sent_ns: 0,
            synacks_sent: 0,
            handshake_done: false,
            delack_min_ns: cfg.delayed_ack_timeout_ns.max(1),
            ecn: cfg.ecn,
            ecn_precise: cfg.ecn && cfg.ecn_precise_ack,
            demand_cwr: false,
            ecn_seen: false,
            ce_ack: CeAckState::default(),
            special_ack: None,
            synack_pending: false,
            rcv_nxt: 0,
            rcv_wup: 0,
            ofo: Vec::with_capacity(16),
            sacks: [(0, 0); TCP_NUM_SACKS],
            num_sacks: 0,
            dsack: None,
            ts_recent: 0,
            rcv_mss: TCP_MSS_DEFAULT.min(cfg.mss),
            quick: 0,
            ato: 0,
            lrcvtime: 0,
            ack_scheduled: false,
            ack_now: false,
            pushed: false,
            push_ack: cfg.push_ack,
            send_pending: false,
            delack_timer: None,
            compressed_ack_rcv_nxt: 0,
            dup_ack_counter: 0,
            compressed_ack: 0,
            comp_timer: None,
            acks_sent: 0,
        }
    }

    /// Next byte expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn on_data(&mut self, now: u64, seg: &DataSeg) {
        if seg.syn {
            // (Re)transmitted SYN: answer with a SYN-ACK at once.
            self.synack_pending = true;
            self.ts_recent = seg.tsval_ns;
            return;
        }
        if !self.handshake_done {
            self.handshake_done = true;
            self.synack_rtt_meas(now);
        }
        if seg.len == 0 {
            return;
        }
        // RFC 7323: remember TSval of the segment at the left edge of the window.
        if seg.seq <= self.rcv_wup && seg.tsval_ns >= self.ts_recent {
            self.ts_recent = seg.tsval_ns;
        }
        // tcp_ecn_accept_cwr: the sender reduced; stop echoing, and ACK at once (its cwnd may
        // be tiny).
        if self.ecn && seg.cwr {
            self.demand_cwr = false;
            self.ack_now = true;
        }
        let (seq, end) = (seg.seq, seg.end());
        if end <= self.rcv_nxt {
            // Entirely duplicate: D-SACK it and ACK at once (Linux enters quick-ACK mode).
            self.set_dsack(seq, end);
            self.enter_quickack_mode();
            self.ack_scheduled = true;
        } else if seq <= self.rcv_nxt {
            if seq < self.rcv_nxt {
                self.set_dsack(seq, self.rcv_nxt);
            }
            self.rcv_nxt = end;
            // tcp_measure_rcv_mss (Linux 6.6+, 4720852ed9af "tcp: fix delayed ACKs for MSS
            // boundary condition"): a full-sized segment with PSH is likely the end of a write.
            if self.push_ack && seg.psh && seg.len >= self.rcv_mss {
                self.pushed = true;
            }
            self.event_data_recv(now, seg.len, seg.tsecr_ns);
            self.ecn_check_ce(seg);
            if !self.ofo.is_empty() {
                self.drain_ofo();
                // RFC 5681 §4.2: ACK immediately when a gap is filled.
                if self.ofo.is_empty() {
                    self.ack_now = true;
                }
            }
            self.sack_remove();
            // The application reads at once (tcp_recvmsg → tcp_rcv_space_adjust).
            self.win.space_adjust(now, self.rcv_nxt);
        } else {
            self.ecn_check_ce(seg);
            self.queue_ofo(seq, end);
            // tcp_data_queue_ofo ends with tcp_grow_window too, for SACK flows only: a window
            // change would stop a non-SACK sender counting the ACK as a duplicate ("tcp: grow
            // window for OOO packets only for SACK flows", 662051215c75, 5.8 and 5.4.50).
            if self.sack && self.win.grow(seg.len, self.ofo_bytes()) {
                self.quick |= 1;
            }
            self.ack_scheduled = true;
        }
        self.ack_snd_check(now);
        // tcp_cleanup_rbuf after the application's read: a pending delayed ACK goes at once when
        // the read emptied the receive queue (no out-of-order data held) and a pushed segment is
        // among the data (not in pingpong mode: this receiver sends no data). `pushed` is only
        // set by in-order data, and cleared by every ACK sent.
        if self.pushed && self.ack_scheduled && self.ofo.is_empty() {
            self.send_pending = true;
        }
    }

    /// Next ACK to send, if any (call until None).
    pub fn poll_ack(&mut self, now: u64) -> Option<AckSeg> {
        if self.synack_pending {
            self.synack_pending = false;
            self.acks_sent += 1;
            self.synack_sent_ns = now;
            self.synacks_sent += 1;
            // SYN-ACK with ECE when ECN is negotiated (RFC 3168 §6.1.1).
            return Some(AckSeg { ack: 0, syn: true, tsecr_ns: self.ts_recent, tsval_ns: now, rwnd: self.rwnd, ece: self.ecn, ..Default::default() });
        }
        if let Some((ack, ece)) = self.special_ack.take() {
            self.acks_sent += 1;
            return Some(AckSeg { ack, tsecr_ns: self.ts_recent, tsval_ns: now, rwnd: self.rwnd, ece, ..Default::default() });
        }
        if !self.send_pending {
            return None;
        }
        self.send_pending = false;
        let ece = self.ecn && self.demand_cwr;
        self.rwnd = self.win.select(self.rcv_nxt, self.rcv_wup, self.ofo_bytes(), self.rcv_mss);
        let mut a = AckSeg { ack: self.rcv_nxt, tsecr_ns: self.ts_recent, tsval_ns: now, rwnd: self.rwnd, ece, ..Default::default() };
        let mut n = 0;
        if let Some(d) = self.dsack {
            a.sack[0] = d;
            a.dsack = true;
            n = 1;
        }
        for i in 0..self.num_sacks {
            if n == MAX_SACK_BLOCKS_ON_WIRE {
                break;
            }
            a.sack[n] = self.sacks[i];
            n += 1;
        }
        a.n_sack = n as u8;
        self.event_ack_sent();
        Some(a)
    }

    /// Earliest pending timer (delayed ACK or SACK compression).
    pub fn next_timer(&self) -> Option<u64> {
        match (self.delack_timer, self.comp_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn on_timer(&mut self, now: u64) {
        if let Some(t) = self.comp_timer {
            if now >= t {
                self.comp_timer = None;
                if self.compressed_ack > 0 {
                    self.compressed_ack -= 1;
                    self.send_pending = true;
                }
            }
        }
        if let Some(t) = self.delack_timer {
            if now >= t {
                self.delack_timer = None;
                if self.ack_scheduled {
                    // Delayed ACK missed: inflate ATO (not in pingpong mode).
                    self.ato = (self.ato << 1).min(self.rto_ns);
                    self.send_pending = true;
                }
            }
        }
    }

    /// Receiver's smoothed RTT (ns) from the handshake, 0 if none.
    pub fn srtt_ns(&self) -> u64 {
        self.srtt_ns
    }

    /// Receiver's `icsk_rto` (ns).
    pub fn rto_ns(&self) -> u64 {
        self.rto_ns
    }

    // ---- internals ----

    /// `tcp_synack_rtt_meas`: the first segment after a single SYN-ACK completes the handshake;
    /// first `tcp_rtt_estimator` sample (srtt = m, rttvar = max(2m, rto_min)) and `tcp_set_rto`.
    fn synack_rtt_meas(&mut self, now: u64) {
        if self.synacks_sent != 1 || now <= self.synack_sent_ns {
            return;
        }
        let m = now - self.synack_sent_ns;
        self.srtt_ns = m;
        // The first data segment echoes the SYN-ACK's TSval: the receiver's first RTT sample
        // (tcp_rcv_rtt_measure_ts); DRS measures from here (tcp_init_buffer_space).
        self.win.rtt_ns = m;
        self.win.space_time = now;
        self.rto_ns = (m + (2 * m).max(self.min_rto_ns)).clamp(self.min_rto_ns, 120_000_000_000);
    }

    fn set_dsack(&mut self, seq: u64, end: u64) {
        if !self.sack {
            return;
        }
        self.dsack = Some(match self.dsack {
            // Extend an unsent D-SACK (tcp_dsack_extend).
            Some((s, e)) if seq <= e && s <= end => (s.min(seq), e.max(end)),
            _ => (seq, end),
        });
    }

    fn incr_quickack(&mut self) {
        self.incr_quickack_max(TCP_MAX_QUICKACKS);
    }

    /// `tcp_incr_quickack(sk, max_quickacks)`.
    fn incr_quickack_max(&mut self, max_quickacks: u32) {
        let mut q = (self.rwnd / (2 * self.rcv_mss as u64)).min(u32::MAX as u64) as u32;
        if q == 0 {
            q = 2;
        }
        q = q.min(max_quickacks);
        if q > self.quick {
            self.quick = q;
        }
    }

    fn enter_quickack_mode(&mut self) {
        self.incr_quickack();
        self.ato = self.delack_min_ns;
    }

    /// `tcp_ecn_check_ce` for a received data segment (Linux tcp_input.c, with the CA events of
    /// a `TCP_CONG_NEEDS_ECN` receiver handled by DCTCP's `dctcp_ece_ack_update`).
    fn ecn_check_ce(&mut self, seg: &DataSeg) {
        if !self.ecn {
            return;
        }
        if !seg.ect && !seg.ce {
            // "If ECT is not set on a segment, and we already seen ECT on a previous segment,
            // it is probably a retransmit": ACK quickly (tcp_enter_quickack_mode(sk, 2)).
            if self.ecn_seen {
                self.incr_quickack_max(2);
                self.ato = self.delack_min_ns;
            }
            return;
        }
        if self.ecn_precise {
            let pending = self.delack_timer.is_some();
            let act = self.ce_ack.update(seg.ce, self.rcv_nxt, pending);
            if act.flush.is_some() {
                self.special_ack = act.flush;
            }
            if act.ack_now {
                self.ack_now = true;
            }
            self.demand_cwr = act.ece;
        }
        if seg.ce && !self.demand_cwr {
            // First CE of an episode: do not delay ACKs, the sender may have a tiny cwnd.
            self.incr_quickack_max(2);
            self.ato = self.delack_min_ns;
            self.demand_cwr = true;
        }
        self.ecn_seen = true;
    }

    /// `tcp_event_data_recv`: rcv_mss estimate and `ato` adaptation for in-order data.
    fn event_data_recv(&mut self, now: u64, len: u32, tsecr_ns: u64) {
        self.ack_scheduled = true;
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(self.mss);
        }
        if self.ato == 0 {
            // First data segment.
            self.incr_quickack();
            self.ato = self.delack_min_ns;
        } else {
            let m = now.saturating_sub(self.lrcvtime);
            if m <= self.delack_min_ns / 2 {
                self.ato = (self.ato >> 1) + self.delack_min_ns / 2;
            } else if m < self.ato {
                self.ato = ((self.ato >> 1) + m).min(self.rto_ns);
            } else if m > self.rto_ns {
                // Long gap: the sender probably restarted from a small window.
                self.incr_quickack();
            }
        }
        self.lrcvtime = now;
        self.win.rtt_measure(now, self.rcv_nxt);
        self.win.rtt_measure_ts(now, tsecr_ns, len >= self.rcv_mss);
        // tcp_grow_window: each raise of rcv_ssthresh forces the next ACK out at once.
        if self.win.grow(len, self.ofo_bytes()) {
            self.quick |= 1;
        }
    }

    /// Payload bytes held in the out-of-order queue.
    fn ofo_bytes(&self) -> u64 {
        self.ofo.iter().map(|r| r.1 - r.0).sum()
    }

    fn drain_ofo(&mut self) {
        let mut k = 0;
        while k < self.ofo.len() && self.ofo[k].0 <= self.rcv_nxt {
            let (s, e) = self.ofo[k];
            if e <= self.rcv_nxt {
                // Already received in order: report as duplicate.
                self.set_dsack(s, e);
            } else {
                self.rcv_nxt = e;
            }
            k += 1;
        }
        self.ofo.drain(..k);
    }

    fn queue_ofo(&mut self, seq: u64, end: u64) {
        // Position of the first range ending at or after `seq`.
        let i = self.ofo.partition_point(|r| r.1 < seq);
        if i < self.ofo.len() && self.ofo[i].0 <= seq && end <= self.ofo[i].1 {
            self.set_dsack(seq, end);
        } else {
            // Merge with every range that overlaps or touches [seq, end).
            let mut j = i;
            let (mut s, mut e) = (seq, end);
            while j < self.ofo.len() && self.ofo[j].0 <= end {
                s = s.min(self.ofo[j].0);
                e = e.max(self.ofo[j].1);
                j += 1;
            }
            if j == i {
                self.ofo.insert(i, (s, e));
            } else {
                self.ofo[i] = (s, e);
                self.ofo.drain(i + 1..j);
            }
        }
        if self.sack {
            self.sack_new_ofo(seq, end);
        }
    }

    /// Linux `tcp_sack_new_ofo_skb`: extend a block that touches [seq, end) and move it to the
    /// front, else push a new block at the front (dropping the oldest if all 4 are in use).
    fn sack_new_ofo(&mut self, seq: u64, end: u64) {
        for i in 0..self.num_sacks {
            let (s, e) = self.sacks[i];
            if seq <= e && s <= end {
                self.sacks[i] = (s.min(seq), e.max(end));
                self.sacks[..=i].rotate_right(1);
                // Coalesce the front block with any other it now touches.
                let mut k = 1;
                while k < self.num_sacks {
                    let (s0, e0) = self.sacks[0];
                    let (sk, ek) = self.sacks[k];
                    if sk <= e0 && s0 <= ek {
                        self.sacks[0] = (s0.min(sk), e0.max(ek));
                        self.sacks.copy_within(k + 1..self.num_sacks, k);
                        self.num_sacks -= 1;
                    } else {
                        k += 1;
                    }
                }
                return;
            }
        }
        if self.num_sacks == TCP_NUM_SACKS {
            self.num_sacks -= 1;
        }
        self.sacks.copy_within(0..self.num_sacks, 1);
        self.sacks[0] = (seq, end);
        self.num_sacks += 1;
    }

    /// Linux `tcp_sack_remove`: drop blocks now covered by rcv_nxt.
    fn sack_remove(&mut self) {
        if self.ofo.is_empty() {
            self.num_sacks = 0;
            return;
        }
        let mut k = 0;
        while k < self.num_sacks {
            if self.rcv_nxt >= self.sacks[k].0 {
                self.sacks.copy_within(k + 1..self.num_sacks, k);
                self.num_sacks -= 1;
            } else {
                k += 1;
            }
        }
    }

    /// `__tcp_ack_snd_check`.
    fn ack_snd_check(&mut self, now: u64) {
        if !self.ack_scheduled {
            return;
        }
        if !self.delayed_ack
            || self.rcv_nxt - self.rcv_wup > self.rcv_mss as u64
            || self.quick > 0
            || self.ack_now
        {
            self.send_pending = true;
            return;
        }
        if self.ofo.is_empty() {
            self.send_delayed_ack(now);
            return;
        }
        if !self.sack || !self.sack_compression || self.compressed_ack >= TCP_COMP_SACK_NR {
            self.send_pending = true;
            return;
        }
        if self.compressed_ack_rcv_nxt != self.rcv_nxt {
            self.compressed_ack_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < TCP_FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            self.send_pending = true;
            return;
        }
        self.compressed_ack += 1;
        if self.comp_timer.is_none() {
            self.comp_timer = Some(now + self.comp_sack_delay_ns);
        }
    }

    /// `tcp_send_delayed_ack`.
    fn send_delayed_ack(&mut self, now: u64) {
        let mut ato = self.ato;
        if ato > self.delack_min_ns {
            // No pingpong / ACK_PUSHED here (max_ato = HZ/2). "If some rtt estimate is known,
            // use it to bound delayed ack": max_ato ≤ max(srtt, TCP_DELACK_MIN).
            let mut max_ato = MAX_ATO_NS;
            if self.srtt_ns > 0 {
                max_ato = max_ato.min(self.srtt_ns.max(self.delack_min_ns));
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(TCP_DELACK_MAX_NS);
        let mut timeout = now + ato;
        if let Some(t) = self.delack_timer {
            // If the pending timer is about to expire, send now.
            if t <= now + (ato >> 2) {
                self.send_pending = true;
                return;
            }
            if timeout >= t {
                timeout = t;
            }
        }
        self.delack_timer = Some(timeout);
    }

    /// `tcp_event_ack_sent`.
    fn event_ack_sent(&mut self) {
        self.acks_sent += 1;
        self.rcv_wup = self.rcv_nxt;
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = self.delack_min_ns;
            }
        }
        self.ack_scheduled = false;
        self.ack_now = false;
        self.pushed = false;
        self.delack_timer = None;
        self.dsack = None;
        self.compressed_ack = 0;
        self.comp_timer = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn seg(i: u64) -> DataSeg {
        DataSeg { seq: i * MSS as u64, len: MSS, tsval_ns: i * 1000, ..Default::default() }
    }

    fn drain(r: &mut TcpReceiver, now: u64) -> Vec<AckSeg> {
        let mut v = Vec::new();
        while let Some(a) = r.poll_ack(now) {
            v.push(a);
        }
        v
    }

    #[test]
    fn syn_gets_immediate_synack() {
        let mut r = TcpReceiver::new(&TcpConfig::default());
        r.on_data(5, &DataSeg { syn: true, tsval_ns: 5, ..Default::default() });
        let a = drain(&mut r, 5);
        assert_eq!(a.len(), 1);
        // tcp_select_initial_window: rmem[1] = 128 KiB → 64 KiB of window, 45 whole MSS.
        assert!(a[0].syn && a[0].ack == 0 && a[0].tsecr_ns == 5 && a[0].rwnd == 45 * 1448);
        assert_eq!(a[0].ip_bytes(), 60);
        let cfg = TcpConfig { rwnd_bytes: Some(32 << 20), ..TcpConfig::default() };
        let mut r = TcpReceiver::new(&cfg);
        r.on_data(5, &DataSeg { syn: true, tsval_ns: 5, ..Default::default() });
        assert_eq!(drain(&mut r, 5)[0].rwnd, 32 << 20);
    }

    #[test]
    fn out_of_order_data_grows_the_window_only_with_sack() {
        // 662051215c75: a non-SACK receiver keeps its window on out-of-order data so that the
        // sender counts the ACKs as duplicates; a SACK receiver grows it (tcp_grow_window).
        for sack in [false, true] {
            // A buffer (1 MiB) larger than the window the SYN-ACK offered, so that
            // rcv_ssthresh, not the free space, bounds the window.
            let cfg = TcpConfig { sack, rmem: [4096, 1 << 20, 32 << 20], ..TcpConfig::default() };
            let mut r = TcpReceiver::new(&cfg);
            r.on_data(0, &DataSeg { syn: true, ..Default::default() });
            drain(&mut r, 0);
            r.on_data(1_000, &seg(0));
            drain(&mut r, 1_000);
            let mut wins = Vec::new();
            for i in 2..8u64 {
                let now = i * 1_000;
                r.on_data(now, &seg(i)); // segment 1 is missing
                for a in drain(&mut r, now) {
                    assert_eq!(a.ack, MSS as u64);
                    wins.push(a.rwnd);
                }
            }
            assert_eq!(wins.len(), 6, "sack {sack}: one ACK per out-of-order segment");
            let changed = wins.windows(2).filter(|w| w[0] != w[1]).count();
            if sack {
                assert!(changed > 0, "sack: the window grows {wins:?}");
            } else {
                assert_eq!(changed, 0, "non-SACK: every duplicate ACK carries the same window {wins:?}");
            }
        }
    }

    #[test]
    fn quickack_first_16_then_every_second_segment() {
        let mut r = TcpReceiver::new(&TcpConfig::default());
        let mut acks_per_seg = Vec::new();
        for i in 0..30u64 {
            let now = i * 10_000; // 10 µs apart
            r.on_data(now, &seg(i));
            acks_per_seg.push(drain(&mut r, now));
        }
        // First 16 segments: one ACK each, acking exactly that segment.
        for i in 0..16 {
            assert_eq!(acks_per_seg[i].len(), 1, "seg {}", i);
            assert_eq!(acks_per_seg[i][0].ack, (i as u64 + 1) * MSS as u64);
        }
        // Then every second segment (> 1 full segment unacknowledged).
        for i in 16..30 {
            let expect = if (i - 16) % 2 == 1 { 1 } else { 0 };
            assert_eq!(acks_per_seg[i].len(), expect, "seg {}", i);
        }
        assert_eq!(acks_per_seg[29][0].ack, 30 * MSS as u64);
        assert_eq!(acks_per_seg[29][0].ip_bytes(), 52);
    }

    #[test]
    fn full_sized_psh_segment_is_acked_alone_once_read() {
        // Linux 6.6+ (4720852ed9af): a full-sized segment with PSH sets ICSK_ACK_PUSHED and
        // tcp_cleanup_rbuf ACKs it as soon as the application's read empties the queue; without
        // PSH the segment waits for its pair (or the delayed-ACK timer).
        for psh in [false, true] {
            let mut r = TcpReceiver::new(&TcpConfig::default());
            for i in 0..16u64 {
                r.on_data(i * 10_000, &seg(i));
                assert_eq!(drain(&mut r, i * 10_000).len(), 1, "quick ACK {i}");
            }
            let now = 16 * 10_000;
            r.on_data(now, &DataSeg { psh, ..seg(16) });
            let a = drain(&mut r, now);
            if psh {
                assert_eq!(a.len(), 1);
                assert_eq!(a[0].ack, 17 * MSS as u64);
                assert_eq!(r.next_timer(), None, "no delayed ACK left pending");
            } else {
                assert!(a.is_empty());
                assert!(r.next_timer().is_some());
            }
            // The next segment without PSH: with PSH the pairing restarted (one segment
            // unACKed, delayed); without, it completes the pair.
            r.on_data(now + 10_000, &seg(17));
            assert_eq!(drain(&mut r, now + 10_000).len(), if psh { 0 } else { 1 });
        }
    }

    #[test]
    fn lone_segment_waits_for_40ms_delack_timer() {
        let mut r = TcpReceiver::new(&TcpConfig::default());
        // Use up the quick ACKs.
        let mut now = 0;
        for i in 0..16u64 {
            now = i * 1_000_000;
            r.on_data(now, &seg(i));
            assert_eq!(drain(&mut r, now).len(), 1);
        }
        // Segment 16 arrives 1 ms later: no ACK yet; timer at now + ato.
        now += 1_000_000;
        r.on_data(now, &seg(16));
        assert!(drain(&mut r, now).is_empty());
        let t = r.next_timer().expect("delayed-ACK timer armed");
        assert_eq!(t - now, 40_000_000);
        r.on_timer(t - 1);
        assert!(drain(&mut r, t - 1).is_empty());
        r.on_timer(t);
        let a = drain(&mut r, t);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].ack, 17 * MSS as u64);
        assert_eq!(r.next_timer(), None);
        // The missed timer inflated ato to 80 ms (capped by DELACK_MAX 200 ms later on); a lone
        // segment after a long gap now waits 80 ms.
        let now2 = t + 100_000_000;
        r.on_data(now2, &seg(17));
        assert!(drain(&mut r, now2).is_empty());
        assert_eq!(r.next_timer().unwrap() - now2, 80_000_000);
    }

    /// SYN at t0, SYN-ACK polled at t0, first data segment `rtt_ns` later.
    /// The SYN-ACK's window of each generation at MSS 1448 (rmem[1] 87380 before 4.20).
    #[test]
    fn synack_window_per_kernel_generation() {
        let synack = |cfg: &TcpConfig| {
            let mut r = TcpReceiver::new(cfg);
            r.on_data(5, &DataSeg { syn: true, tsval_ns: 5, ..Default::default() });
            drain(&mut r, 5)[0].rwnd
        };
        let old = |aws, n, max| TcpConfig {
            adv_win_scale: Some(aws), init_rwnd: Some(n), legacy_drs: true,
            rmem: [4096, 87380, max], ..TcpConfig::default()
        };
        // 2.6.36: 3/4 of 87380 is 65535, capped at 4 segments (RFC 2414's initial window)
        assert_eq!(synack(&old(2, 4, 4 << 20)), 4 * 1448);
        // 2.6.38-3.11: 10 segments; 3.12-4.18: 20 (half of 87380 is 43690, 30 whole segments)
        assert_eq!(synack(&old(1, 10, 6 << 20)), 10 * 1448);
        assert_eq!(synack(&old(1, 20, 6 << 20)), 20 * 1448);
        assert_eq!(synack(&old(1, 40, 6 << 20)), 30 * 1448);
        assert_eq!(synack(&old(2, 60, 6 << 20)), 45 * 1448);
        // today: no cap, half of rmem[1] = 131072
        assert_eq!(synack(&TcpConfig::default()), 45 * 1448);
    }

    /// tcp_adv_win_scale: 2 gives 3/4 of the buffer as window, 1 half, −2 a quarter.
    #[test]
    fn adv_win_scale_sets_the_window_share_of_the_buffer() {
        assert_eq!(win_from_space(87380, Some(2)), 65535);
        assert_eq!(win_from_space(87380, Some(1)), 43690);
        assert_eq!(win_from_space(87380, Some(-2)), 21845);
        assert_eq!(win_from_space(87380, None), 43690);
        assert_eq!(space_from_win(65535, Some(2)), 87380);
        assert_eq!(space_from_win(43690, Some(1)), 87380);
        assert_eq!(legacy_rcvmem(1460, Some(1)), 2944);
        assert_eq!(legacy_rcvmem(1460, Some(2)), 2304);
        // the window cap of a buffer that stops growing: 3/4 of 4 MB before 3.6, half of 6 MB
        // after (the two are the same 3 MB, as "tcp: change tcp_adv_win_scale and tcp_rmem[2]"
        // intended)
        assert_eq!(win_from_space(4 << 20, Some(2)), win_from_space(6 << 20, Some(1)));
    }

    /// DRS before 3.13 follows twice the bytes read per RTT; today's opens far wider while the
    /// bytes read grow (slow start).
    #[test]
    fn legacy_drs_clamps_the_window_to_twice_the_bytes_read_per_rtt() {
        let old = TcpConfig {
            adv_win_scale: Some(1), init_rwnd: Some(10), legacy_drs: true,
            rmem: [4096, 87380, 6 << 20], ..TcpConfig::default()
        };
        let now = TcpConfig { rmem: [4096, 87380, 6 << 20], ..TcpConfig::default() };
        let clamp = |cfg: &TcpConfig| {
            let mut w = RcvWindow::new(cfg);
            w.rtt_ns = 100_000_000;
            w.space_adjust(100_000_000, 0); // first measurement: nothing read yet
            w.space_adjust(200_000_000, 100 * 1448); // 100 segments in one RTT
            (w.window_clamp, w.rcvbuf)
        };
        let (c_old, b_old) = clamp(&old);
        assert_eq!(c_old, 2 * 100 * 1448);
        assert_eq!(b_old, (2 * 100 * 1448 / 1460) * 2944);
        let (c_now, _) = clamp(&now);
        assert!(c_now > 4 * c_old, "{c_now} vs {c_old}");
        // and it never shrinks: a slower RTT keeps the space
        let mut w = RcvWindow::new(&old);
        w.rtt_ns = 100_000_000;
        w.space_adjust(100_000_000, 0);
        w.space_adjust(200_000_000, 100 * 1448);
        w.space_adjust(300_000_000, 110 * 1448);
        assert_eq!(w.window_clamp, 2 * 100 * 1448);
    }

    fn handshaken(rtt_ns: u64) -> (TcpReceiver, u64) {
        handshaken_cfg(rtt_ns, &TcpConfig::default())
    }

    fn handshaken_cfg(rtt_ns: u64, cfg: &TcpConfig) -> (TcpReceiver, u64) {
        let mut r = TcpReceiver::new(cfg);
        r.on_data(0, &DataSeg { syn: true, ..Default::default() });
        assert_eq!(drain(&mut r, 0).len(), 1);
        (r, rtt_ns)
    }

    #[test]
    fn handshake_rtt_sets_receiver_srtt_and_rto() {
        let (mut r, t) = handshaken(40_600_000);
        r.on_data(t, &seg(0));
        assert_eq!(r.srtt_ns(), 40_600_000);
        // tcp_set_rto after the first sample: srtt + max(2·srtt, rto_min) = 40.6 + 200 ms.
        assert_eq!(r.rto_ns(), 240_600_000);
        // A long RTT: rttvar = 2·srtt > rto_min.
        let (mut r, t) = handshaken(150_000_000);
        r.on_data(t, &seg(0));
        assert_eq!(r.rto_ns(), 450_000_000);
        // Retransmitted SYN (two SYN-ACKs): no sample, as Linux (ambiguous).
        let mut r = TcpReceiver::new(&TcpConfig::default());
        r.on_data(0, &DataSeg { syn: true, ..Default::default() });
        drain(&mut r, 0);
        r.on_data(1_000_000_000, &DataSeg { syn: true, ..Default::default() });
        drain(&mut r, 1_000_000_000);
        r.on_data(1_040_000_000, &seg(0));
        assert_eq!((r.srtt_ns(), r.rto_ns()), (0, 1_000_000_000));
    }

    /// Linux `tcp_send_delayed_ack`: once `ato` has been inflated by missed delayed-ACK timers,
    /// the timeout is still bounded by max(srtt, TCP_DELACK_MIN) — a one-segment-per-RTT sender
    /// gets its ACKs after ≈ 40 ms (here srtt = 40.6 ms), never after 200 ms.
    #[test]
    fn delayed_ack_bounded_by_handshake_srtt() {
        // A fixed window: no tcp_grow_window quick ACKs (the 16 back-to-back segments would
        // make DRS open the window).
        let fixed = TcpConfig { rwnd_bytes: Some(1 << 20), ..TcpConfig::default() };
        let (mut r, mut now) = handshaken_cfg(40_600_000, &fixed);
        for i in 0..16u64 {
            r.on_data(now, &seg(i));
            assert_eq!(drain(&mut r, now).len(), 1);
            now += 1_000_000;
        }
        // cwnd-1 sender: one segment per (RTT + ACK delay); each waits for the timer.
        let mut waits = Vec::new();
        for i in 16..30u64 {
            r.on_data(now, &seg(i));
            assert!(drain(&mut r, now).is_empty(), "seg {i} ACKed at once");
            let t = r.next_timer().expect("delayed-ACK timer armed");
            waits.push(t - now);
            r.on_timer(t);
            assert_eq!(drain(&mut r, t).len(), 1);
            now = t + 40_600_000;
        }
        // The first wait is ato = TCP_ATO_MIN = 40 ms; later ones ato (inflated ≥ 80 ms,
        // ≤ icsk_rto 240.6 ms) capped at srtt = 40.6 ms.
        assert_eq!(waits[0], 40_000_000);
        assert!(waits[1..].iter().all(|&w| w == 40_600_000), "{waits:?}");
        // Without a handshake sample the old bound applies (ato doubles up to 200 ms).
        let mut r = TcpReceiver::new(&TcpConfig::default());
        let mut now = 0;
        for i in 0..16u64 {
            r.on_data(now, &seg(i));
            drain(&mut r, now);
            now += 1_000_000;
        }
        let mut last = 0;
        for i in 16..30u64 {
            r.on_data(now, &seg(i));
            let t = r.next_timer().unwrap();
            last = t - now;
            r.on_timer(t);
            drain(&mut r, t);
            now = t + 40_600_000;
        }
        assert_eq!(last, TCP_DELACK_MAX_NS);
    }

    #[test]
    fn out_of_order_acks_immediately_with_sack_then_compresses() {
        let mut r = TcpReceiver::new(&TcpConfig::default());
        for i in 0..20u64 {
            r.on_data(0, &seg(i));
            drain(&mut r, 0);
        }
        // Segment 20 lost; 21.. arrive: first 3 dupACKs immediately, with SACK blocks.
        let mut immediate = Vec::new();
        for i in 21..26u64 {
            r.on_data(1000 * i, &seg(i));
            immediate.push(drain(&mut r, 1000 * i));
        }
        for k in 0..3 {
            assert_eq!(immediate[k].len(), 1);
            let a = immediate[k][0];
            assert_eq!(a.ack, 20 * MSS as u64);
            assert_eq!(a.n_sack, 1);
            assert!(!a.dsack);
            assert_eq!(a.sack[0], (21 * MSS as u64, (22 + k as u64) * MSS as u64));
            assert_eq!(a.ip_bytes(), 52 + 12);
        }
        // 4th and 5th out-of-order segments: compressed (SACK compression, 1 ms).
        assert!(immediate[3].is_empty() && immediate[4].is_empty());
        let t = r.next_timer().unwrap();
        assert_eq!(t, 24_000 + 1_000_000);
        r.on_timer(t);
        let a = drain(&mut r, t);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].sack[0], (21 * MSS as u64, 26 * MSS as u64));
        // Retransmission fills the hole: immediate ACK covering everything, no SACK blocks.
        r.on_data(t + 1, &seg(20));
        let a = drain(&mut r, t + 1);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].ack, a[0].n_sack), (26 * MSS as u64, 0));
    }

    #[test]
    fn sack_blocks_most_recent_first_and_dsack() {
        let mut cfg = TcpConfig::default();
        cfg.sack_compression = false;
        let mut r = TcpReceiver::new(&cfg);
        r.on_data(0, &seg(0));
        drain(&mut r, 0);
        // Holes at 1, 3, 5: blocks [2], [4], [6] – most recent first.
        for &i in &[2u64, 4, 6] {
            r.on_data(0, &seg(i));
        }
        let a = drain(&mut r, 0);
        let last = a.last().unwrap();
        let b = |i: u64| (i * MSS as u64, (i + 1) * MSS as u64);
        assert_eq!(last.n_sack, 3);
        assert_eq!(&last.sack[..3], &[b(6), b(4), b(2)]);
        // A duplicate of segment 4: D-SACK first, then the blocks (block [4] moves to the front).
        r.on_data(0, &seg(4));
        let a = drain(&mut r, 0);
        assert_eq!(a.len(), 1);
        assert!(a[0].dsack);
        assert_eq!(a[0].n_sack, 3);
        assert_eq!(&a[0].sack[..3], &[b(4), b(4), b(6)]);
        assert_eq!(a[0].ip_bytes(), 52 + 4 + 24);
        // Duplicate below rcv_nxt: D-SACK + immediate ACK.
        r.on_data(0, &seg(0));
        let a = drain(&mut r, 0);
        assert_eq!(a.len(), 1);
        assert!(a[0].dsack);
        assert_eq!(a[0].sack[0], b(0));
        assert_eq!(a[0].ack, MSS as u64);
    }

    #[test]
    fn no_delayed_ack_acks_every_segment() {
        let mut cfg = TcpConfig::default();
        cfg.delayed_ack = false;
        let mut r = TcpReceiver::new(&cfg);
        for i in 0..40u64 {
            r.on_data(i, &seg(i));
            assert_eq!(drain(&mut r, i).len(), 1);
        }
    }

    #[test]
    fn tsecr_echoes_left_edge_segment() {
        let mut r = TcpReceiver::new(&TcpConfig::default());
        for i in 0..16u64 {
            r.on_data(0, &seg(i));
            drain(&mut r, 0);
        }
        // Two segments per ACK now: the echo is the TSval of the first (at rcv_wup).
        r.on_data(0, &seg(16));
        r.on_data(0, &seg(17));
        let a = drain(&mut r, 0);
        assert_eq!(a[0].tsecr_ns, 16_000);
    }
}
