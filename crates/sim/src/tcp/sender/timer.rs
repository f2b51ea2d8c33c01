//! Timers (Linux `tcp_timer.c`): one timer slot for RTO, TLP and the RACK reorder timer
//! (`tcp_retransmit_timer`, `tcp_enter_loss`, `tcp_send_loss_probe`, `tcp_rack_reo_timeout`), with
//! `tcp_schedule_loss_probe` and `tcp_rearm_rto` (`tcp_output.c` / `tcp_input.c`).

use super::{
    ceil_ms_ns, ConnState, Probe, TcpSender, TimerKind, SACKED, TCP_REORDERING, TCP_RTO_MAX_NS, TCP_TIMEOUT_MIN_NS,
};
use crate::cc::{CaEvent, CaState};
use crate::tcp::Frto;

impl TcpSender {
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
        self.hold_rtx = false;
        self.rexmit_new = false;
        match kind {
            TimerKind::Retrans => self.retransmit_timer(),
            TimerKind::LossProbe => self.send_loss_probe(),
            TimerKind::ReoTimeout if !self.cfg.rack => self.early_retransmit_timeout(),
            TimerKind::ReoTimeout => self.rack_reo_timeout(),
        }
    }

    /// `tcp_retransmit_timer`.
    pub(super) fn retransmit_timer(&mut self) {
        if self.sk.packets_out == 0 {
            return;
        }
        if self.use_frto_old() {
            self.enter_frto_old();
        } else {
            self.enter_loss();
        }
        self.retransmits += 1;
        self.force_head_rtx = true;
        self.backoff += 1;
        self.sk.rto_ns = (self.sk.rto_ns * 2).min(TCP_RTO_MAX_NS);
        self.timer = Some((self.sk.now_ns + self.sk.rto_ns, TimerKind::Retrans));
    }

    /// `tcp_enter_loss` (with RFC 5682 F-RTO's `tp->frto`).
    pub(super) fn enter_loss(&mut self) {
        let new_recovery = self.sk.ca_state < CaState::Recovery;
        self.frto_counter = 0;
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
            // With RACK (4.4+, `tcp_is_rack`) a packet sent within rack.rtt is not marked lost
            // yet; before RACK tcp_enter_loss marked every un-SACKed packet.
            if self.cfg.rack && i > 0 && rack_rtt - (now_us - s.sent_us() as i64) > 0 {
                continue;
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
            self.init_undo();
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
        // F-RTO (RFC 5682 §3.1 step 1): unless a recovery is under way, except for a repeated
        // timeout on the same snd_una (§3.2).
        self.frto = self.cfg.frto == Frto::Rfc5682 && (new_recovery || self.retransmits > 0);
    }

    /// `tcp_schedule_loss_probe`.
    pub(super) fn schedule_loss_probe(&mut self, advancing_rto: bool) -> bool {
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
    pub(super) fn rto_delta_ns(&self) -> i64 {
        match self.rtx.front() {
            Some(h) => (h.sent_ns + self.sk.rto_ns) as i64 - self.sk.now_ns as i64,
            None => self.sk.rto_ns as i64,
        }
    }

    /// `tcp_rearm_rto`.
    pub(super) fn rearm_rto(&mut self) {
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
    pub(super) fn send_loss_probe(&mut self) {
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
    pub(super) fn rack_reo_timeout(&mut self) {
        let prior_inflight = self.sk.packets_in_flight();
        let lost_before = self.sk.lost;
        self.rack_detect_loss();
        if prior_inflight != self.sk.packets_in_flight() {
            self.recover_after_timer_marks(lost_before);
        }
        // The fired timer was the reorder timer: re-arm the RTO relative to the head.
        self.timer = Some((0, TimerKind::ReoTimeout));
        self.rearm_rto();
    }
}
