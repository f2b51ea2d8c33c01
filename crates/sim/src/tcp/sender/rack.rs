//! Loss detection: RACK (Linux `tcp_recovery.c`, RFC 8985) — advance on (S)ACKed packets, the
//! reordering window, lost marking and the reorder timer's deadline — and its callers from
//! `tcp_input.c`, `tcp_mark_skb_lost` and `tcp_identify_packet_loss` (NewReno marking without SACK).

use super::{
    ceil_ms_ns, TcpSender, TimerKind, EVER_RETRANS, FLAG_LOST_RETRANS, FLAG_SET_XMIT_TIMER, FLAG_SND_UNA_ADVANCED,
    LOST, RETRANS_OUT, SACKED, TCP_RACK_RECOVERY_THRESH, TCP_TIMEOUT_MIN_NS,
};
use crate::cc::{CaState, LostSkb, RateSample};

impl TcpSender {
    pub(super) fn rack_advance(&mut self, flags: u8, end_seq: u64, xmit_ns: u64) {
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
    pub(super) fn rack_reo_wnd(&self) -> u64 {
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
    pub(super) fn rack_detect_loss(&mut self) -> u64 {
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
    pub(super) fn rack_mark_lost(&mut self) -> bool {
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

    pub(super) fn rack_update_reo_wnd(&mut self, rs: &RateSample) {
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
    pub(super) fn mark_lost(&mut self, i: usize) {
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

    /// The loss detection of kernels before RACK (2.6.x–4.3 with `tcp_fack` = 1, the default):
    /// * `tcp_update_scoreboard` / `tcp_mark_head_lost`: with `fackets_out` the packets from
    ///   `snd_una` through the highest SACKed one, the un-SACKed packets among the first
    ///   `fackets_out − reordering` are lost (at least the head once in Recovery). Outside
    ///   Recovery this is also `tcp_time_to_recover`'s FACK test: nothing is marked, and no
    ///   recovery starts, until more than `reordering` (3) packets beyond a hole are SACKed;
    /// * `tcp_mark_lost_retrans`: a retransmission is lost once a packet sent after it is
    ///   SACKed (the kernel compares the highest SACKed sequence with `snd_nxt` at the
    ///   retransmission; with no reordering that is the same test as the send times used here).
    /// * early retransmit (3.5+, `tcp_time_to_recover` "Trick#6", RFC 5827 with mitigation
    ///   A.3): nothing lost yet, fewer than 4 packets out, one or more SACKed, none
    ///   retransmitted and no new data may go ⇒ arm the early-retransmit delay (returns true);
    ///   when it fires the head is lost ([`Self::early_retransmit_timeout`]).
    /// Not modelled: `tcp_head_timedout` (the RTO covers it) and the small-window rule of
    /// `tcp_time_to_recover` (packets_out ≤ reordering) that early retransmit replaced.
    fn fack_mark_lost(&mut self) -> bool {
        if self.sk.sacked_out == 0 {
            return false;
        }
        let fackets = self.rtx.iter().rposition(|s| s.flags & SACKED != 0).map_or(0, |i| i + 1);
        let reordering = self.reordering as usize;
        let mut lost = fackets.saturating_sub(reordering);
        if self.sk.ca_state == CaState::Recovery {
            lost = lost.max(1);
        }
        for i in 0..lost.min(self.rtx.len()) {
            let f = self.rtx[i].flags;
            if f & (SACKED | LOST) == 0 {
                self.mark_lost(i);
            }
        }
        if self.sk.retrans_out > 0 {
            let newest_sacked = self.rack.mstamp_ns;
            for i in 0..self.rtx.len() {
                let seg = self.rtx[i];
                if seg.flags & RETRANS_OUT != 0 && seg.flags & SACKED == 0 && seg.sent_ns < newest_sacked {
                    self.mark_lost(i);
                }
            }
        }
        let sk = &self.sk;
        if self.cfg.early_retransmit
            && sk.lost_out == 0
            && sk.ca_state < CaState::Recovery
            && sk.retrans_out == 0
            && sk.packets_out >= sk.sacked_out + 1
            && sk.packets_out < 4
            && !self.may_send_new_data()
        {
            if !matches!(self.timer, Some((_, TimerKind::ReoTimeout))) {
                // tcp_pause_early_retransmit: max(srtt/4, 2 ms)
                let delay = ((self.srtt8 >> 5) * 1000).max(2_000_000);
                self.timer = Some((self.sk.now_ns + delay, TimerKind::ReoTimeout));
            }
            return true;
        }
        false
    }

    /// `tcp_may_send_now`: new data is waiting and both windows let it go.
    pub(super) fn may_send_new_data(&self) -> bool {
        self.has_new_data()
            && self.sk.packets_in_flight() < self.sk.cwnd
            && self.snd_wnd_ok(self.sk.snd_nxt + self.next_len() as u64)
    }

    /// `tcp_resume_early_retransmit`: the delay passed with the conditions still holding ⇒
    /// the head is lost and recovery starts (`tcp_update_scoreboard(sk, 1)` marks at least it).
    pub(super) fn early_retransmit_timeout(&mut self) {
        let sk = &self.sk;
        let still = sk.lost_out == 0 && sk.ca_state < CaState::Recovery && sk.retrans_out == 0
            && sk.sacked_out > 0 && sk.packets_out < 4;
        if still {
            if let Some(i) = self.rtx.iter().position(|s| s.flags & (SACKED | LOST) == 0) {
                let lost_before = self.sk.lost;
                self.mark_lost(i);
                self.recover_after_timer_marks(lost_before);
            }
        }
        self.timer = Some((0, TimerKind::ReoTimeout));
        self.rearm_rto();
    }

    pub(super) fn identify_packet_loss(&mut self, flag: &mut u32) {
        if self.rtx.is_empty() {
            return;
        }
        if self.reno {
            self.newreno_mark_lost(*flag & FLAG_SND_UNA_ADVANCED != 0);
            return;
        }
        let prior_retrans = self.sk.retrans_out;
        if !self.cfg.rack {
            if self.fack_mark_lost() {
                *flag &= !FLAG_SET_XMIT_TIMER;
            }
        } else if self.rack_mark_lost() {
            *flag &= !FLAG_SET_XMIT_TIMER;
        }
        if prior_retrans > self.sk.retrans_out {
            *flag |= FLAG_LOST_RETRANS;
        }
    }
}
