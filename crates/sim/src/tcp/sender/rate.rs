//! Delivery-rate sampling (Linux `tcp_rate.c`): per-packet send state, the rate sample of an ACK
//! (`tcp_rate_gen`) and application-limited marking (`tcp_rate_check_app_limited`).

use super::{AckState, TcpSender, TxSeg, EVER_RETRANS, SACKED};
use crate::cc::RateSample;

impl TcpSender {
    pub(super) fn rate_skb_sent(&mut self, seg: &mut TxSeg) {
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

    pub(super) fn rate_skb_delivered(&mut self, seg: &mut TxSeg, st: &mut AckState) {
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

    pub(super) fn rate_gen(&mut self, delivered: u32, lost: u32, rs: &mut RateSample) {
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
    pub(super) fn rate_check_app_limited(&mut self) {
        if self.write_seq() - self.sk.snd_nxt < self.cfg.mss as u64
            && self.sk.packets_in_flight() < self.sk.cwnd
            && self.sk.lost_out <= self.sk.retrans_out
        {
            let v = self.sk.delivered + self.sk.packets_in_flight() as u64;
            self.sk.app_limited = if v > 0 { v } else { 1 };
        }
    }
}
