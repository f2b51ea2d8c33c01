//! Recovery (Linux `tcp_input.c`): the `tcp_fastretrans_alert` state machine (Open, Disorder,
//! CWR, Recovery, Loss), PRR (`tcp_cwnd_reduction`, RFC 6937), `tcp_cong_control`,
//! `tcp_update_pacing_rate` and `tcp_process_tlp_ack`.

use super::{
    TcpSender, EVER_RETRANS, FLAG_DATA_ACKED, FLAG_DATA_SACKED, FLAG_DSACK_TLP, FLAG_ECE, FLAG_FORWARD_PROGRESS,
    FLAG_LOST_RETRANS, FLAG_NOT_DUP, FLAG_SND_UNA_ADVANCED, PACING_CA_RATIO, PACING_SS_RATIO, TCP_REORDERING,
};
use crate::cc::{CaEvent, CaState, RateSample, TCP_INFINITE_SSTHRESH};
use crate::tcp::AckSeg;

impl TcpSender {
    pub(super) fn set_ca_state(&mut self, s: CaState) {
        self.cc.set_state(&mut self.sk, s);
        self.sk.ca_state = s;
    }

    pub(super) fn any_retrans_done(&self) -> bool {
        self.sk.retrans_out > 0 || self.rtx.front().map_or(false, |s| s.flags & EVER_RETRANS != 0)
    }

    pub(super) fn try_keep_open(&mut self) {
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
    pub(super) fn try_to_open(&mut self, flag: u32) {
        self.clear_retrans_stamp_if_done();
        if flag & FLAG_ECE != 0 {
            self.enter_cwr();
        }
        if self.sk.ca_state != CaState::Cwr {
            self.try_keep_open();
        }
    }

    /// `tcp_enter_cwr`: ECN-triggered reduction, ssthresh from the CC, PRR down to it.
    pub(super) fn enter_cwr(&mut self) {
        self.prior_ssthresh = 0;
        if self.sk.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.init_cwnd_reduction();
            if !self.cfg.prr {
                // 2.6.x tcp_enter_cwr: cwnd = min(cwnd, in_flight + 1) at once
                self.sk.cwnd = self.sk.cwnd.min(self.sk.packets_in_flight() + 1);
                self.snd_cwnd_stamp_ns = self.sk.now_ns;
            }
            self.set_ca_state(CaState::Cwr);
        }
    }

    /// `tcp_init_cwnd_reduction`.
    pub(super) fn init_cwnd_reduction(&mut self) {
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

    /// `tcp_end_cwnd_reduction`: cwnd to ssthresh in CWR, or in Recovery unless undone.
    pub(super) fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        if self.sk.ssthresh < TCP_INFINITE_SSTHRESH && (self.sk.ca_state == CaState::Cwr || self.undo_marker.is_some()) {
            // PRR ends at ssthresh; rate-halving (before 3.2, tcp_complete_cwr) at most there
            self.sk.cwnd = if self.cfg.prr { self.sk.ssthresh } else { self.sk.cwnd.min(self.sk.ssthresh) };
            self.snd_cwnd_stamp_ns = self.sk.now_ns;
        }
        self.cc.cwnd_event(&mut self.sk, CaEvent::CompleteCwr);
    }

    pub(super) fn enter_recovery(&mut self) {
        self.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            self.prior_ssthresh = self.sk.current_ssthresh();
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
    }

    /// A timer found losses outside Recovery (RACK's reorder timer, the early-retransmit
    /// delay): enter Recovery and take PRR's first step for the packets it marked, as
    /// `tcp_rack_reo_timeout` / `tcp_resume_early_retransmit` do.
    pub(super) fn recover_after_timer_marks(&mut self, lost_before: u64) {
        if self.sk.ca_state == CaState::Recovery {
            return;
        }
        self.enter_recovery();
        if !self.cc.has_cong_control() {
            let nl = (self.sk.lost - lost_before) as u32;
            self.cwnd_reduction(1, nl, 0);
        }
    }

    pub(super) fn fastretrans_alert(&mut self, prior_snd_una: u64, flag: &mut u32, _ack: &AckSeg) {
        if self.sk.packets_out == 0 && self.sk.sacked_out > 0 {
            self.sk.sacked_out = 0;
        }
        if *flag & FLAG_ECE != 0 {
            self.prior_ssthresh = 0;
        }
        // D. State exit once high_seq is ACKed.
        if self.sk.ca_state == CaState::Open {
            self.retrans_stamp_ms = None;
        } else if self.sk.snd_una >= self.high_seq {
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
                    }
                    if self.try_undo_recovery() {
                        return;
                    }
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        // E. Process the state.
        let num_dupack = self.num_dupack;
        match self.sk.ca_state {
            CaState::Recovery => {
                if *flag & FLAG_SND_UNA_ADVANCED == 0 {
                    if self.reno {
                        self.add_reno_sack(num_dupack);
                    }
                } else if self.try_undo_partial(prior_snd_una) {
                    return;
                }
                if self.try_undo_dsack() {
                    self.try_to_open(*flag);
                }
                self.identify_packet_loss(flag);
                if self.sk.ca_state != CaState::Recovery {
                    // Undo reverted the recovery: a loss still evident starts a new one.
                    if self.sk.lost_out == 0 {
                        return;
                    }
                    self.enter_recovery();
                }
                return;
            }
            CaState::Loss => {
                self.process_loss(*flag, num_dupack);
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
        if self.sk.ca_state <= CaState::Disorder {
            self.try_undo_dsack();
        }
        if self.frto_counter > 0 {
            // 2.6-3.9 tcp_time_to_recover: "Do not perform any recovery during F-RTO algorithm"
            self.try_to_open(*flag);
            return;
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

    /// Rate-halving (`tcp_cwnd_down`, kernels before 3.2): on each ACK that makes progress,
    /// cwnd falls by one every second ACK while above the CC's `min_cwnd`, and never exceeds
    /// in-flight + 1 (so a burst cannot follow an ACK that frees many packets).
    fn rate_halving(&mut self, newly_acked_sacked: u32, flag: u32) {
        if newly_acked_sacked == 0 && flag & FLAG_SND_UNA_ADVANCED == 0 {
            return;
        }
        let decr = self.sk.snd_cwnd_cnt + 1;
        self.sk.snd_cwnd_cnt = decr & 1;
        let decr = decr >> 1;
        if decr > 0 && self.sk.cwnd > self.cc.min_cwnd(&self.sk) {
            self.sk.cwnd -= decr;
        }
        self.sk.cwnd = self.sk.cwnd.min(self.sk.packets_in_flight() + 1);
        self.snd_cwnd_stamp_ns = self.sk.now_ns;
    }

    /// `tcp_cwnd_reduction`: PRR (or rate-halving with `prr: false`).
    pub(super) fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, flag: u32) {
        if !self.cfg.prr {
            self.rate_halving(newly_acked_sacked, flag);
            return;
        }
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

    /// `tcp_cong_control` + `tcp_update_pacing_rate`; `hold_cwnd`: the pre-3.10 F-RTO keeps
    /// cwnd as it set it (`frto_cwnd` in `tcp_ack`).
    pub(super) fn cong_control(&mut self, acked_sacked: u32, flag: u32, rs: &RateSample, hold_cwnd: bool) {
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
            if may_raise && !hold_cwnd {
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
    pub(super) fn update_pacing_rate(&mut self) {
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
    pub(super) fn process_tlp_ack(&mut self, ack: u64, flag: u32) {
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
}
