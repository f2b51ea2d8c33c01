//! Transmit path (Linux `tcp_output.c`): `tcp_write_xmit` and `tcp_xmit_retransmit_queue` in one
//! `poll_transmit`, (re)transmission bookkeeping, EDT pacing (`tcp_wstamp_ns`), restart after idle
//! (`tcp_cwnd_restart`) and `tcp_cwnd_validate`.

use super::{ConnState, Probe, TcpSender, TimerKind, TxSeg, EVER_RETRANS, LOST, PACING_FREE_SEGS, PSH, RETRANS_OUT, SACKED};
use super::sndbuf::SKB_HEAD_TRUESIZE;
use crate::cc::{CaEvent, CaState};
use crate::tcp::{DataSeg, Tsq};

impl TcpSender {
    #[inline]
    pub(super) fn has_new_data(&self) -> bool {
        self.sk.snd_nxt < self.write_seq()
    }

    #[inline]
    pub(super) fn next_len(&self) -> u32 {
        (self.write_seq() - self.sk.snd_nxt).min(self.cfg.mss as u64) as u32
    }

    #[inline]
    pub(super) fn snd_wnd_ok(&self, end: u64) -> bool {
        end <= self.sk.snd_una + self.sk.snd_wnd
    }

    #[inline]
    pub(super) fn in_cwnd_reduction(&self) -> bool {
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
                    return Some(DataSeg { seq: 0, len: 0, syn: true, retrans: self.syn_retrans > 0, tsval_ns: now, tsecr_ns: 0, ect: false, ce: false, cwr: false, psh: false });
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
        self.tsq_throttled = false;
        // F-RTO step 2b (REXMIT_NEW): this ACK sends new data instead of retransmissions; once
        // none can go, F-RTO holds the retransmissions or gives up (tcp_xmit_recovery).
        let new_data = self.may_send_new_data();
        if self.rexmit_new && !new_data {
            self.frto_new_data_done();
        }
        // tcp_xmit_retransmit_queue: lost segments first, within cwnd.
        if !self.rexmit_new
            && !self.hold_rtx
            && self.sk.lost_out > self.sk.retrans_out
            && self.sk.packets_in_flight() < self.sk.cwnd
        {
            if let Some(i) = self.next_lost() {
                if self.tsq_check(true) {
                    return self.tsq_stop();
                }
                return Some(self.retransmit(i, true));
            }
        }
        // tcp_write_xmit: new data within cwnd and the receive window, unless TSO's Nagle
        // test holds it for the next ACK (asked as each write-queue skb comes up).
        if new_data {
            if self.cfg.tso_defer && (self.burst_new == 0 || self.at_wq_skb_start()) {
                if let Some(d) = self.tso_should_defer() {
                    self.end_burst_deferred(d.cwnd_limited);
                    return None;
                }
            }
            if self.tsq_check(false) {
                return self.tsq_stop();
            }
            return Some(self.send_new());
        }
        self.end_burst();
        None
    }

    /// The engine's count of what this connection has in its host's first link, queued or
    /// being serialised (IP bytes, packets); read by TSQ before each transmission.
    pub fn set_host_queue(&mut self, bytes: u64, pkts: u64) {
        self.host_q = (bytes, pkts);
    }

    /// TSQ is on for this connection (the engine then tracks its host link).
    pub fn uses_tsq(&self) -> bool {
        self.cfg.tsq != Tsq::Off
    }

    /// The last poll stopped at TSQ's limit: poll again after a transmission completes.
    pub fn tsq_throttled(&self) -> bool {
        self.tsq_throttled
    }

    /// `tcp_small_queue_check` (and 3.6's test in `tcp_write_xmit`): the flow has too much in
    /// its host's link to send another skb. `sk_wmem_alloc` counts skb truesize: each packet's
    /// payload plus one skb head ([`sndbuf::SKB_HEAD_TRUESIZE`]).
    fn tsq_check(&self, retrans: bool) -> bool {
        let (bytes, pkts) = self.host_q;
        let alloc = (bytes + pkts * SKB_HEAD_TRUESIZE).saturating_sub(pkts * crate::tcp::HDR_BYTES as u64);
        let skb = self.cfg.mss as u64 + SKB_HEAD_TRUESIZE;
        let per_ms = (self.sk.pacing_rate_bps / 8.0) as u64 >> 10;
        let cap = self.cfg.limit_output_bytes;
        match self.cfg.tsq {
            Tsq::Off => false,
            // 3.x: retransmissions were not held back (tcp_xmit_retransmit_queue had no check)
            Tsq::V3_6 => !retrans && alloc >= cap,
            Tsq::V3_12 => !retrans && alloc > (2 * skb).max(per_ms).min(cap),
            Tsq::Current => {
                let mut limit = (2 * skb).max(per_ms);
                if !self.sk.is_paced() {
                    limit = limit.min(cap);
                }
                if retrans {
                    limit <<= 1;
                }
                // tcp_rtx_queue_empty_or_single_skb: no TX completion to wait for
                alloc > limit && self.sent_skbs > 1
            }
        }
    }

    fn tsq_stop(&mut self) -> Option<DataSeg> {
        self.tsq_throttled = true;
        self.end_burst();
        None
    }

    /// Something would be sent now if pacing allowed it.
    pub(super) fn pending_work(&self) -> bool {
        let room = self.sk.packets_in_flight() < self.sk.cwnd;
        room && ((self.sk.lost_out > self.sk.retrans_out)
            || (self.has_new_data() && self.snd_wnd_ok(self.sk.snd_nxt + self.next_len() as u64)))
    }

    pub(super) fn after_probe(&mut self) {
        self.tlp_high_seq = Some(self.sk.snd_nxt);
        // Restart the RTO from now.
        self.timer = None;
        self.rearm_rto();
    }

    /// First lost, un-SACKed, not-yet-retransmitted segment at or after the hint.
    pub(super) fn next_lost(&mut self) -> Option<usize> {
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

    pub(super) fn send_new(&mut self) -> DataSeg {
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
        self.mark_skb_boundary(&mut seg);
        // PSH if a write (or a forced push) ended within this segment.
        let end = seq + len as u64;
        while let Some(&m) = self.psh_marks.front() {
            if m > end {
                break;
            }
            self.psh_marks.pop_front();
            if m > seq {
                seg.flags |= PSH;
            }
        }
        let psh = seg.flags & PSH != 0;
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
        DataSeg { seq, len, syn: false, retrans: false, tsval_ns: now, tsecr_ns: self.peer_tsval_ns, ect: self.sk.ecn_ok, ce: false, cwr, psh }
    }

    /// (Re)transmit the segment at index `i`. `account`: tcp_retransmit_skb (marks the
    /// retransmission in flight) rather than the TLP's bare __tcp_retransmit_skb.
    pub(super) fn retransmit(&mut self, i: usize, account: bool) -> DataSeg {
        let now = self.sk.now_ns;
        let mut seg = self.rtx[i];
        if account {
            // tcp_retransmit_skb: in flight again (the pre-3.10 F-RTO's RTO retransmission
            // is of a head not marked lost), the episode's stamp and count for undo
            if seg.flags & RETRANS_OUT == 0 {
                seg.flags |= RETRANS_OUT;
                self.sk.retrans_out += 1;
            }
            self.undo_note_retransmit();
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
        DataSeg { seq: seg.seq, len: seg.len, syn: false, retrans: true, tsval_ns: now, tsecr_ns: self.peer_tsval_ns, ect, ce: false, cwr: false, psh: seg.flags & PSH != 0 }
    }

    /// Common per-transmission bookkeeping (`tcp_event_data_sent`, EDT, PRR accounting).
    pub(super) fn event_data_sent(&mut self, len: u32) {
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
    pub(super) fn restart_after_idle(&mut self) {
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

    /// End of a `tcp_write_xmit` round: cwnd validation, TLP scheduling. (Application-limited
    /// marking is not done here: Linux checks only when the application writes,
    /// `tcp_sendmsg_locked` — see `app_write` and sndbuf.rs.)
    pub(super) fn end_burst(&mut self) {
        self.end_burst_deferred(false);
    }

    /// `end_burst` of a round that stopped at a deferral: `cwnd_limited` is the deferral's
    /// `is_cwnd_limited` (the window, not the sender, held the data back).
    pub(super) fn end_burst_deferred(&mut self, cwnd_limited: bool) {
        let is_cwnd_limited = cwnd_limited || self.sk.packets_in_flight() >= self.sk.cwnd;
        if self.burst_sent > 0 || is_cwnd_limited {
            self.cwnd_validate(is_cwnd_limited);
        }
        if self.burst_new > 0 {
            self.schedule_loss_probe(false);
        }
        self.burst_sent = 0;
        self.burst_new = 0;
    }

    /// `tcp_cwnd_validate` (6.x).
    pub(super) fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
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
}
