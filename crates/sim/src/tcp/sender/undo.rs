//! Undo of spurious reductions and F-RTO (Linux `net/ipv4/tcp_input.c`).
//!
//! A reduction is *spurious* when the data it blamed on the network had not been lost. Linux
//! reverts it (`tcp_undo_cwnd_reduction`: cwnd from the CC's `undo_cwnd`, ssthresh back to
//! `prior_ssthresh`) when
//! * every retransmission of the episode came back D-SACKed (`undo_retrans` reaches 0:
//!   `tcp_try_undo_dsack`, `tcp_try_undo_recovery`), or
//! * an ACK echoes a timestamp older than the episode's first retransmission, so it was sent for
//!   the original (`tcp_packet_delayed`, Eifel detection, RFC 3522): at the end of Recovery or
//!   Loss (`tcp_try_undo_recovery`, `tcp_try_undo_loss`) and on a partial ACK
//!   (`tcp_try_undo_partial`), or
//! * F-RTO judges a timeout spurious.
//!
//! F-RTO has two generations (`TcpConfig::frto`):
//! * **RFC 5682** (3.10, "tcp: new F-RTO implementation", in `tcp_enter_loss` and
//!   `tcp_process_loss`): the timeout reduces and marks as usual; when the RTO
//!   retransmission's ACK advances snd_una the sender sends *new* data instead of more
//!   retransmissions (`REXMIT_NEW`); an ACK that then covers never-retransmitted data below
//!   `high_seq` (`FLAG_ORIG_SACK_ACKED`) shows the timeout spurious and the reduction is undone
//!   (`tcp_try_undo_loss(sk, true)`); a SACK or dupACK instead proves the loss real.
//! * **pre-3.10** (2.6.22-3.9, `tcp_enter_frto`, `tcp_process_frto`, `tcp_enter_frto_loss`,
//!   `tcp_frto` = 2, SACK-enhanced per RFC 4138 appendix B): the timeout halves ssthresh but
//!   marks nothing lost and keeps cwnd at in-flight + 1 (Disorder); the first ACK that
//!   advances opens two new segments, the second decides: real loss → Loss with cwnd =
//!   in-flight + 2 or 3; spurious → `tcp_frto_response` 0, a rate-halving CWR down to the
//!   halved ssthresh (no undo).
//!
//! The D-SACK accounting (`tcp_check_dsack`, `tcp_dsack_seen`, the `dup_sack` branch of
//! `tcp_sacktag_one`) is here too. Not modelled: 6.16's undo when nothing was retransmitted
//! ("tcp: fix to allow timestamp undo if no retransmits were sent"), `tcp_moderate_cwnd` after
//! an undo in kernels before 4.x, and the non-SACK variant of the pre-3.10 F-RTO's ACK rules
//! beyond `tcp_use_frto`'s checks.

use super::{
    TcpSender, EVER_RETRANS, FLAG_DATA_ACKED, FLAG_DATA_SACKED, FLAG_FORWARD_PROGRESS, FLAG_NONHEAD_RETRANS_ACKED,
    FLAG_NOT_DUP, FLAG_ONLY_ORIG_SACKED, FLAG_ORIG_SACK_ACKED, FLAG_RETRANS_DATA_ACKED, FLAG_SND_UNA_ADVANCED, LOST,
    RETRANS_OUT, SACKED, TCP_RACK_RECOVERY_THRESH, TCP_REORDERING,
};
use crate::cc::{CaEvent, CaState};
use crate::tcp::Frto;

impl TcpSender {
    /// `tcp_init_undo`.
    pub(super) fn init_undo(&mut self) {
        self.undo_marker = Some(self.sk.snd_una);
        self.undo_retrans = if self.sk.retrans_out > 0 { self.sk.retrans_out as i32 } else { -1 };
    }

    /// A retransmission was sent (`tcp_retransmit_skb`): stamp the episode's first and count it.
    pub(super) fn undo_note_retransmit(&mut self) {
        if self.retrans_stamp_ms.is_none() {
            self.retrans_stamp_ms = Some(self.sk.now_ns / 1_000_000);
        }
        if self.undo_retrans < 0 {
            self.undo_retrans = 0;
        }
        self.undo_retrans += 1;
    }

    /// `tcp_packet_delayed`: the ACK echoes a TSval older than the first retransmission.
    fn packet_delayed(&self) -> bool {
        self.retrans_stamp_ms.is_some_and(|t| self.ack_tsecr_ms != 0 && self.ack_tsecr_ms < t)
    }

    /// `tcp_may_undo`.
    fn may_undo(&self) -> bool {
        self.cfg.undo && self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed())
    }

    /// `retrans_stamp = 0` unless a retransmission is still out (`tcp_any_retrans_done`).
    pub(super) fn clear_retrans_stamp_if_done(&mut self) {
        if !self.any_retrans_done() {
            self.retrans_stamp_ms = None;
        }
    }

    /// `tcp_undo_cwnd_reduction`.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for s in self.rtx.iter_mut() {
                s.flags &= !LOST;
            }
            self.sk.lost_out = 0;
            self.retransmit_hint = self.sk.snd_una;
        }
        if self.prior_ssthresh != 0 {
            self.sk.cwnd = self.cc.undo_cwnd(&mut self.sk);
            if self.prior_ssthresh > self.sk.ssthresh {
                self.sk.ssthresh = self.prior_ssthresh;
                self.ecn_queue_cwr = false; // tcp_ecn_withdraw_cwr
            }
        }
        self.snd_cwnd_stamp_ns = self.sk.now_ns;
        self.undo_marker = None;
        self.rack.advanced = true;
    }

    /// `tcp_try_undo_recovery` at the end of Recovery or Loss: undo if possible, then open.
    /// Returns true when a non-SACK sender holds the state (ACK exactly at `high_seq`).
    pub(super) fn try_undo_recovery(&mut self) -> bool {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        } else if self.rack.reo_wnd_persist > 0 {
            self.rack.reo_wnd_persist -= 1;
        }
        if self.sk.snd_una == self.high_seq && self.reno {
            // "Hold old state until something *above* high_seq is ACKed. For Reno it is MUST
            // to prevent false fast retransmits (RFC2582)."
            self.clear_retrans_stamp_if_done();
            return true;
        }
        self.set_ca_state(CaState::Open);
        false
    }

    /// `tcp_try_undo_partial` (a partial ACK in Recovery). Returns true when the caller
    /// stops processing this ACK (the original arrived but retransmissions are still out).
    pub(super) fn try_undo_partial(&mut self, prior_snd_una: u64) -> bool {
        if self.cfg.undo && self.undo_marker.is_some() && self.packet_delayed() {
            // The hole was filled by the delayed original: reordering.
            self.check_sack_reordering(prior_snd_una);
            if self.sk.retrans_out > 0 {
                return true;
            }
            self.clear_retrans_stamp_if_done();
            self.undo_cwnd_reduction(true);
            self.try_keep_open();
        }
        false
    }

    /// `tcp_try_undo_dsack`: every retransmission of the episode was D-SACKed.
    pub(super) fn try_undo_dsack(&mut self) -> bool {
        if self.cfg.undo && self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.rack.reo_wnd_persist = (self.rack.reo_wnd_persist + 1).min(TCP_RACK_RECOVERY_THRESH);
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// `tcp_try_undo_loss`: in Loss, after a partial ACK (timestamps) or by F-RTO.
    fn try_undo_loss(&mut self, frto_undo: bool) -> bool {
        if !(self.cfg.undo && (frto_undo || self.may_undo())) {
            return false;
        }
        self.undo_cwnd_reduction(true);
        self.retransmits = 0;
        // tcp_is_non_sack_preventing_reopen
        if self.reno && self.sk.snd_una == self.high_seq {
            self.clear_retrans_stamp_if_done();
            return true;
        }
        if frto_undo || !self.reno {
            self.set_ca_state(CaState::Open);
        }
        true
    }

    /// `tcp_process_loss` (with RFC 5682 F-RTO when `self.frto`).
    pub(super) fn process_loss(&mut self, flag: u32, num_dupack: u32) {
        let recovered = self.sk.snd_una >= self.high_seq;
        if flag & FLAG_SND_UNA_ADVANCED != 0 && self.try_undo_loss(false) {
            return;
        }
        if self.frto {
            // Step 3.b: never-retransmitted data (S)ACKed ⇒ the timeout was spurious.
            if flag & FLAG_ORIG_SACK_ACKED != 0 && self.try_undo_loss(true) {
                return;
            }
            if self.sk.snd_nxt > self.high_seq {
                if flag & FLAG_DATA_SACKED != 0 || num_dupack > 0 {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if flag & FLAG_SND_UNA_ADVANCED != 0 && !recovered {
                self.high_seq = self.sk.snd_nxt;
                // Step 2.b: send new data (once cwnd is updated), else conventional recovery.
                if self.has_new_data() && self.sk.snd_una + self.sk.snd_wnd > self.sk.snd_nxt {
                    self.rexmit_new = true;
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            // Step 2.a and the first part of 3.a.
            self.try_undo_recovery();
            return;
        }
        if self.reno {
            if self.sk.snd_nxt > self.high_seq && num_dupack > 0 {
                self.add_reno_sack(num_dupack);
            } else if flag & FLAG_SND_UNA_ADVANCED != 0 {
                self.sk.sacked_out = 0;
            }
        }
    }

    /// `tcp_xmit_recovery` with `REXMIT_NEW`, in the transmit loop: new data within cwnd and
    /// the window, and no retransmission for this ACK once some went out; if none could be
    /// sent F-RTO gives up and the lost segments go (`tp->frto = 0`).
    pub(super) fn frto_new_data_done(&mut self) {
        self.rexmit_new = false;
        if self.sk.snd_nxt > self.high_seq {
            self.hold_rtx = true;
        } else {
            self.frto = false;
        }
    }

    /// D-SACK block `(s, e)` of the ACK being processed (`tcp_check_dsack` /
    /// `tcp_dsack_seen` / the `dup_sack` branch of `tcp_sacktag_one`). Returns the number of
    /// duplicate segments it reports, 0 for a dubious D-SACK (ignored).
    pub(super) fn dsack_seen(&mut self, s: u64, e: u64) -> u32 {
        if s >= e {
            return 0;
        }
        let len = e - s;
        if len > self.max_window.max(1) {
            return 0;
        }
        let mss = self.cfg.mss as u64;
        let dup_segs = len.div_ceil(mss).max(1) as u32;
        self.dsack_dups += dup_segs as u64;
        if self.dsack_dups > self.sk.total_retrans {
            return 0;
        }
        let Some(marker) = self.undo_marker else { return dup_segs };
        if self.undo_retrans <= 0 || e <= marker {
            return dup_segs;
        }
        if e <= self.sk.snd_una {
            // Already cumulatively ACKed: "dumb counting".
            self.undo_retrans = (self.undo_retrans - dup_segs as i32).max(0);
        } else {
            // Retransmitted segments still in the queue that the block covers.
            let mut i = self.rtx.partition_point(|x| x.end() <= s);
            while i < self.rtx.len() && self.rtx[i].seq < e && self.undo_retrans > 0 {
                let seg = &mut self.rtx[i];
                if seg.flags & EVER_RETRANS != 0 && seg.end() > marker {
                    self.undo_retrans -= 1;
                    if seg.flags & RETRANS_OUT != 0 && seg.flags & SACKED != 0 {
                        seg.flags &= !RETRANS_OUT;
                        self.sk.retrans_out -= 1;
                    }
                }
                i += 1;
            }
        }
        dup_segs
    }

    // ------------------------------------------------------------------------------------------
    // F-RTO before 3.10 (tcp_frto = 2, tcp_frto_response = 0)
    // ------------------------------------------------------------------------------------------

    /// `tcp_use_frto` (2.6.36): always with SACK (`tcp_is_sackfrto`); without SACK only if no
    /// segment after the head, up to the first un-SACKed one, was retransmitted.
    pub(super) fn use_frto_old(&self) -> bool {
        if self.cfg.frto != Frto::Pre310 {
            return false;
        }
        if !self.reno {
            return true;
        }
        if self.sk.retrans_out > 1 {
            return false;
        }
        for s in self.rtx.iter().skip(1) {
            if s.flags & EVER_RETRANS != 0 {
                return false;
            }
            if s.flags & SACKED == 0 {
                break;
            }
        }
        true
    }

    /// `tcp_enter_frto` (2.6.36): reduce ssthresh, keep the window, enter Disorder.
    pub(super) fn enter_frto_old(&mut self) {
        let st = self.sk.ca_state;
        if (self.frto_counter == 0 && st <= CaState::Disorder)
            || self.sk.snd_una == self.high_seq
            || ((st == CaState::Loss || self.frto_counter > 0) && self.retransmits == 0)
        {
            self.prior_ssthresh = self.sk.current_ssthresh();
            self.sk.prior_cwnd = self.sk.cwnd;
            if self.frto_counter > 0 {
                // "Our state is too optimistic in ssthresh() call because cwnd is not reduced
                // until tcp_enter_frto_loss() when previous F-RTO recovery has not yet completed."
                let cwnd = self.sk.cwnd;
                self.sk.cwnd = 2;
                self.sk.ssthresh = self.cc.ssthresh(&mut self.sk);
                self.sk.cwnd = cwnd;
            } else {
                self.sk.ssthresh = self.cc.ssthresh(&mut self.sk);
            }
            // CA_EVENT_FRTO: the event Westwood+ answers as today's CA_EVENT_LOSS.
            self.cc.cwnd_event(&mut self.sk, CaEvent::Loss);
        }
        self.undo_marker = Some(self.sk.snd_una);
        self.undo_retrans = 0;
        if let Some(h) = self.rtx.front_mut() {
            if h.flags & EVER_RETRANS != 0 {
                self.undo_marker = None;
            }
            if h.flags & RETRANS_OUT != 0 {
                h.flags &= !RETRANS_OUT;
                self.sk.retrans_out -= 1;
            }
        }
        self.sk.cwnd = self.sk.cwnd.min(self.sk.packets_in_flight() + 1);
        let earlier = self.frto_counter > 0 || matches!(st, CaState::Recovery | CaState::Loss);
        self.frto_highmark = if !self.reno && earlier && self.high_seq > self.sk.snd_una {
            self.high_seq
        } else {
            self.sk.snd_nxt
        };
        self.set_ca_state(CaState::Disorder);
        self.high_seq = self.sk.snd_nxt;
        self.tlp_high_seq = None;
        self.frto_counter = 1;
    }

    /// `tcp_enter_frto_loss` (2.6.36): the timeout was real; mark everything un-SACKed lost
    /// and open `allowed` segments beyond what is in flight.
    fn enter_frto_loss_old(&mut self, allowed: u32, flag: u32) {
        self.sk.lost_out = 0;
        self.sk.retrans_out = 0;
        if self.reno {
            self.sk.sacked_out = 0;
        }
        let mut acked = flag & FLAG_DATA_ACKED != 0;
        for i in 0..self.rtx.len() {
            let mut s = self.rtx[i];
            let was_lost = s.flags & LOST != 0;
            s.flags &= !LOST;
            if self.frto_counter == 1 && !acked {
                // The RTO retransmission still counts ("enter this branch just for the first
                // segment").
                if s.flags & RETRANS_OUT != 0 {
                    self.sk.retrans_out += 1;
                }
                acked = true;
            } else {
                if s.flags & EVER_RETRANS != 0 {
                    self.undo_marker = None;
                }
                s.flags &= !RETRANS_OUT;
            }
            if s.flags & SACKED == 0 {
                s.flags |= LOST;
                self.sk.lost_out += 1;
                if !was_lost {
                    self.sk.lost += 1;
                }
            }
            self.rtx[i] = s;
        }
        self.sk.cwnd = self.sk.packets_in_flight() + allowed;
        self.sk.snd_cwnd_cnt = 0;
        self.snd_cwnd_stamp_ns = self.sk.now_ns;
        self.frto_counter = 0;
        self.reordering = self.reordering.min(TCP_REORDERING);
        self.set_ca_state(CaState::Loss);
        self.high_seq = self.sk.snd_nxt;
        if self.sk.ecn_ok {
            self.ecn_queue_cwr = true;
        }
        self.retransmit_hint = self.sk.snd_una;
        self.n_sack_cache = 0;
    }

    /// `tcp_process_frto` (2.6.36, `tcp_frto_response` = 0). Returns true when this ACK must
    /// not grow cwnd (`frto_cwnd`).
    pub(super) fn process_frto_old(&mut self, flag: u32) -> bool {
        if flag & FLAG_DATA_ACKED != 0 {
            self.retransmits = 0;
        }
        if flag & FLAG_NONHEAD_RETRANS_ACKED != 0 || (self.frto_counter >= 2 && flag & FLAG_RETRANS_DATA_ACKED != 0) {
            self.undo_marker = None;
        }
        if self.sk.snd_una >= self.frto_highmark {
            let allowed = if self.frto_counter == 1 { 2 } else { 3 };
            self.enter_frto_loss_old(allowed, flag);
            return true;
        }
        let any_progress = flag & (FLAG_FORWARD_PROGRESS | FLAG_SND_UNA_ADVANCED) != 0;
        if self.reno {
            if !any_progress && flag & FLAG_NOT_DUP != 0 {
                return true;
            }
            if flag & FLAG_DATA_ACKED == 0 {
                let allowed = if self.frto_counter == 1 { 0 } else { 3 };
                self.enter_frto_loss_old(allowed, flag);
                return true;
            }
        } else {
            if flag & FLAG_DATA_ACKED == 0 && self.frto_counter == 1 {
                // Prevent sending of new data.
                self.sk.cwnd = self.sk.cwnd.min(self.sk.packets_in_flight());
                return true;
            }
            if self.frto_counter >= 2
                && (flag & FLAG_FORWARD_PROGRESS == 0
                    || (flag & FLAG_DATA_SACKED != 0 && flag & FLAG_ONLY_ORIG_SACKED == 0))
            {
                if flag & FLAG_FORWARD_PROGRESS == 0 && flag & FLAG_NOT_DUP != 0 {
                    return true;
                }
                self.enter_frto_loss_old(3, flag);
                return true;
            }
        }
        if self.frto_counter == 1 {
            self.sk.cwnd = self.sk.packets_in_flight() + 2;
            self.frto_counter = 2;
            let may_send = self.has_new_data() && self.snd_wnd_ok(self.sk.snd_nxt + self.next_len() as u64);
            if !may_send {
                self.enter_frto_loss_old(2, flag);
            }
            return true;
        }
        // Spurious timeout: tcp_ratehalving_spur_to_response = tcp_enter_cwr(sk, 0), a
        // reduction to the ssthresh the timeout already halved.
        self.prior_ssthresh = 0;
        if self.sk.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.sk.cwnd = self.sk.cwnd.min(self.sk.packets_in_flight() + 1);
            self.sk.snd_cwnd_cnt = 0;
            self.sk.prior_cwnd = self.sk.cwnd;
            self.prr_delivered = 0;
            self.prr_out = 0;
            self.high_seq = self.sk.snd_nxt;
            self.snd_cwnd_stamp_ns = self.sk.now_ns;
            if self.sk.ecn_ok {
                self.ecn_queue_cwr = true;
            }
            self.set_ca_state(CaState::Cwr);
        }
        self.frto_counter = 0;
        self.undo_marker = None;
        false
    }
}
