//! ACK input (Linux `tcp_input.c`): `tcp_ack`, the handshake's SYN-ACK, SACK tagging
//! (`tcp_sacktag_write_queue`), `tcp_clean_rtx_queue`, the non-SACK dupACK count, the RTT estimator
//! (`tcp_rtt_estimator`, `tcp_set_rto`, min_rtt filter) and reordering detection.

use super::{
    ceil_ms_ns, AckState, ConnState, TcpSender, EVER_RETRANS, FLAG_ACKED, FLAG_ACK_MAYBE_DELAYED, FLAG_CA_ALERT,
    FLAG_DATA_ACKED, FLAG_DATA_SACKED, FLAG_DSACKING_ACK, FLAG_DSACK_TLP, FLAG_ECE, FLAG_NONHEAD_RETRANS_ACKED,
    FLAG_NOT_DUP, FLAG_ONLY_ORIG_SACKED, FLAG_ORIG_SACK_ACKED,
    FLAG_RETRANS_DATA_ACKED, FLAG_SET_XMIT_TIMER, FLAG_SND_UNA_ADVANCED, FLAG_WIN_UPDATE, LOST, MIN_RTT_WLEN_US,
    RETRANS_OUT, SACKED, TCP_MAX_REORDERING, TCP_RTO_MAX_NS,
};
use crate::cc::{AckSample, CaState, RateSample, CA_ACK_ECE, CA_ACK_SLOWPATH, CA_ACK_WIN_UPDATE, TCP_INFINITE_SSTHRESH};
use crate::tcp::AckSeg;

impl TcpSender {
    pub fn on_ack(&mut self, now: u64, ack: &AckSeg) {
        self.set_now(now);
        self.peer_tsval_ns = self.peer_tsval_ns.max(ack.tsval_ns);
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
        self.ack_tsecr_ms = ack.tsecr_ns / 1_000_000;
        self.rexmit_new = false;
        self.hold_rtx = false;
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
            self.max_window = self.max_window.max(ack.rwnd);
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
        // pre-3.10 F-RTO: `frto_cwnd`, no cwnd growth on this ACK
        let hold_cwnd = self.frto_counter > 0 && self.process_frto_old(flag);
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
        self.cong_control(delivered, flag, &rs, hold_cwnd);
        self.check_space();

        if let Some(total) = self.app_bytes {
            if self.completed_at.is_none() && self.sk.snd_una >= total {
                self.completed_at = Some(now);
                self.timer = None;
            }
        }
    }

    pub(super) fn establish(&mut self, ack: &AckSeg) {
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
        self.max_window = ack.rwnd;
        self.sndbuf_init();
    }

    /// RTT-measurement granularity (`rtt_granularity_ns`): floor the sample to a whole number of
    /// ticks, at least one. This is what tick-based stacks measure: FreeBSD times segments in
    /// `ticks` (1 ms at kern.hz = 1000; `tcp_xmit_timer` samples and h_ertt's are whole ticks,
    /// sys/netinet/tcp_input.c, sys/netinet/khelp/h_ertt.c) and pre-3.15 Linux in jiffies; a sub-tick RTT is reported as
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
    pub(super) fn count_delivered(&mut self, n: u32) {
        self.sk.delivered += n as u64;
        if self.ack_ece {
            self.sk.delivered_ce += n as u64;
        }
    }

    /// `tcp_limit_reno_sacked` + `tcp_check_reno_reordering`: dupACKs beyond the holes mean
    /// reordering (or duplicated ACKs); clamp `sacked_out` and raise `reordering`.
    pub(super) fn check_reno_reordering(&mut self, addend: u32) {
        let holes = self.sk.lost_out.max(1).min(self.sk.packets_out);
        if self.sk.sacked_out + holes > self.sk.packets_out {
            self.sk.sacked_out = self.sk.packets_out - holes;
            self.reordering = (self.sk.packets_out + addend).min(TCP_MAX_REORDERING);
            self.reord_seen += 1;
        }
    }

    /// `tcp_add_reno_sack`: a dupACK stands for one packet that left the network.
    pub(super) fn add_reno_sack(&mut self, num_dupack: u32) {
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
    pub(super) fn remove_reno_sacks(&mut self, acked: u32) {
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
    pub(super) fn newreno_mark_lost(&mut self, snd_una_advanced: bool) {
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
    pub(super) fn fack(&self) -> u64 {
        if self.sk.sacked_out == 0 {
            self.sk.snd_una
        } else {
            self.highest_sack_seq
        }
    }

    /// RTT from a timestamp echo, at the 1 ms granularity of Linux's TCP timestamps.
    pub(super) fn tsecr_rtt_us(&self, tsecr_ns: u64) -> u64 {
        let d = (self.sk.now_ns / 1_000_000).saturating_sub(tsecr_ns / 1_000_000);
        d.max(1) * 1000
    }

    /// `tcp_sacktag_write_queue` (blocks in ascending order, previous blocks skipped).
    pub(super) fn sacktag(&mut self, ack: &AckSeg, st: &mut AckState) -> u32 {
        let mut flag = 0;
        let n = (ack.n_sack as usize).min(3);
        let first = if ack.dsack && n > 0 {
            let (s, e) = ack.sack[0];
            if self.dsack_seen(s, e) > 0 {
                flag |= FLAG_DSACKING_ACK;
                if let (true, Some(h)) = (self.tlp_retrans, self.tlp_high_seq) {
                    if e == h && e - s <= self.cfg.mss as u64 {
                        flag |= FLAG_DSACK_TLP;
                    }
                }
                // tcp_dsack_seen: RACK widens its window only for D-SACKs after reordering
                // was seen, and not for a TLP's.
                if self.reord_seen > 0 && flag & FLAG_DSACK_TLP == 0 {
                    self.rack.dsack_seen = true;
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

    pub(super) fn sacktag_one(&mut self, i: usize, st: &mut AckState) -> u32 {
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
                if self.frto_counter > 0 && seg.end() <= self.frto_highmark {
                    flag |= FLAG_ONLY_ORIG_SACKED;
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
    pub(super) fn clean_rtx_queue(&mut self, ack: &AckSeg, prior_fack: u64, prior_snd_una: u64, st: &mut AckState) -> u32 {
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
            self.release_skb_head(&seg);
            let f = seg.flags;
            if f & EVER_RETRANS != 0 {
                if f & RETRANS_OUT != 0 {
                    self.sk.retrans_out -= 1;
                }
                flag |= FLAG_RETRANS_DATA_ACKED;
                if pkts_acked > 0 {
                    flag |= FLAG_NONHEAD_RETRANS_ACKED;
                }
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
    pub(super) fn update_rtt_min(&mut self, rtt_us: u64, flag: u32) {
        if flag & FLAG_ACK_MAYBE_DELAYED != 0 && rtt_us > self.sk.min_rtt_us as u64 {
            return;
        }
        let v = self.min_rtt.running_min(MIN_RTT_WLEN_US, self.sk.now_us, rtt_us.max(1));
        self.sk.min_rtt_us = v.min(u32::MAX as u64) as u32;
    }

    /// `tcp_rtt_estimator` (µs; srtt ×8, mdev ×4, rttvar floored at rto_min).
    pub(super) fn rtt_estimator(&mut self, m_us: u64) {
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
    pub(super) fn set_rto(&mut self) {
        let us = (self.srtt8 >> 3) + self.rttvar;
        self.sk.rto_ns = ceil_ms_ns(us * 1000).min(TCP_RTO_MAX_NS);
    }

    /// `tcp_check_sack_reordering`.
    pub(super) fn check_sack_reordering(&mut self, low_seq: u64) {
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
}
