//! The sending half of the transport, without I/O: sequencing, pacing, the window, loss
//! detection and the RTT estimate, around one [`DgramCc`] algorithm.
//!
//! The caller (the simulator's datagram endpoint, `crates/sim/src/dgram.rs`, or the
//! `ccbench-dgram` process) drives it:
//!
//! 1. [`Sender::start`] once, at the flow's start;
//! 2. [`Sender::poll_transmit`] until it returns `None`, sending each header it returns;
//! 3. [`Sender::on_ack`] for each acknowledgement that arrives, [`Sender::on_timer`] when
//!    [`Sender::next_wakeup_ns`] is reached, and step 2 again after either;
//! 4. [`Sender::stop`] at the flow's stop time (nothing more is sent).
//!
//! Hooks of the algorithm, in order: `on_start`; `on_send` per packet; per acknowledgement
//! `on_ack` for each newly acknowledged packet in the order the receiver got them, then
//! `on_loss` for each packet that acknowledgement shows lost (packet threshold), then
//! `on_feedback` with the receiver half's values (if it sent any); per timer `on_loss` for
//! each packet past the loss timeout, then `on_timer` if the algorithm's timer is due. The
//! transport reads `control()` before every send, and holds a packet until `send_at_ns()` if
//! the algorithm keeps its own send schedule (tao).
//!
//! Loss detection follows QUIC's (RFC 9002 §6.1): a packet is lost once a packet sent
//! [`SenderConfig::reorder`] (3, kPacketThreshold) or more later is acknowledged, or when it
//! has not been acknowledged [`Sender::loss_timeout_ns`] after it left: max(2·srtt,
//! srtt + 4·rttvar) plus the receiver's acknowledgement interval (RFC 6298's estimator,
//! floored at [`MIN_TIMEOUT_NS`]; 1 s before the first RTT sample, RFC 6298 §2.1). Lost
//! datagrams are not retransmitted (the schemes' reference implementations carry media or
//! bulk test data; none retransmits at this layer). An acknowledgement of a packet already
//! declared lost is counted ([`Sender::spurious_losses`]) and not reported again; a lost
//! acknowledgement therefore reads as loss to the algorithm (the records still count the data
//! packets delivered: they come from the network).
//!
//! Pacing: packet k+1 may leave `size·8/rate` after packet k; a sender behind its schedule may
//! catch up by at most [`PACING_CREDIT_NS`] of sending time. A real process falls behind when
//! its timer wakes late; in the simulator timers fire on time, but a scheme that both paces
//! and sets a window (SCReAM) falls behind while the window is full, and the packets an
//! acknowledgement then releases may leave up to that much sending time back to back. With a
//! window, at most `cwnd` bytes are in flight (one packet is always allowed when none is).

use std::collections::VecDeque;

use crate::cc::{Acked, DgramCc, Lost};
use crate::wire::{Ack, DataHeader, DATA_HDR};
use netmodel::records::FlowRow;

/// Lower bound of the loss timeout.
pub const MIN_TIMEOUT_NS: u64 = 5_000_000;
/// Loss timeout before the first RTT sample (RFC 6298 §2.1's initial RTO).
pub const INITIAL_TIMEOUT_NS: u64 = 1_000_000_000;
/// How far behind its schedule a late sender may catch up.
pub const PACING_CREDIT_NS: u64 = 1_000_000;

/// The transport's settings for one flow.
#[derive(Clone, Copy, Debug)]
pub struct SenderConfig {
    pub flow: u32,
    /// Datagram bytes per packet, header included (the IP packet is 28 bytes more).
    pub packet_bytes: u32,
    /// Packet-reordering threshold of loss detection.
    pub reorder: u64,
}

impl SenderConfig {
    pub fn new(flow: u32, packet_bytes: u32) -> Self {
        SenderConfig { flow, packet_bytes: packet_bytes.max(DATA_HDR as u32), reorder: 3 }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Out,
    Acked,
    Lost,
}

/// A packet sent and not yet known acknowledged or lost (or done, until it reaches the front).
#[derive(Clone, Copy)]
struct Sent {
    sent_ns: u64,
    bytes: u32,
    state: State,
    /// Bytes delivered, and when the last was, at the time it left (delivery-rate samples).
    delivered_at_send: u64,
    delivered_time_at_send: u64,
}

/// Counters of one flow's sender.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub lost_pkts: u64,
    pub spurious_losses: u64,
    pub inflight_pkts: u64,
    pub inflight_bytes: u64,
}

pub struct Sender {
    cfg: SenderConfig,
    cc: Box<dyn DgramCc>,
    active: bool,
    next_seq: u64,
    /// Sequence number of `sent[0]`.
    base: u64,
    sent: VecDeque<Sent>,
    stats: SenderStats,
    largest_acked: Option<u64>,
    delivered_time: u64,
    srtt: Option<u64>,
    rttvar: u64,
    min_rtt: Option<u64>,
    delivery_rate_bps: f64,
    next_send_ns: u64,
    /// The receiver's acknowledgement interval (the policy's timer), added to the timeout.
    ack_delay_ns: u64,
    /// The latest packets declared lost (at most [`RECENT_LOST`]), to count late
    /// acknowledgements of them once they left `sent`.
    recent_lost: VecDeque<u64>,
}

/// Lost packets remembered for spurious-loss counting.
const RECENT_LOST: usize = 4096;

impl Sender {
    pub fn new(cfg: SenderConfig, cc: Box<dyn DgramCc>) -> Self {
        let ack_delay_ns = cc.ack_policy().every_ns.unwrap_or(0);
        Sender {
            cfg,
            cc,
            active: false,
            next_seq: 0,
            base: 0,
            sent: VecDeque::new(),
            stats: SenderStats::default(),
            largest_acked: None,
            delivered_time: 0,
            srtt: None,
            rttvar: 0,
            min_rtt: None,
            delivery_rate_bps: 0.0,
            next_send_ns: 0,
            ack_delay_ns,
            recent_lost: VecDeque::new(),
        }
    }

    pub fn cc(&self) -> &dyn DgramCc {
        self.cc.as_ref()
    }

    pub fn stats(&self) -> SenderStats {
        self.stats
    }


    /// The flow starts: the algorithm's `on_start`, then packets may leave.
    pub fn start(&mut self, now_ns: u64) {
        self.active = true;
        self.next_send_ns = now_ns;
        self.delivered_time = now_ns;
        self.cc.on_start(now_ns);
    }

    /// The flow stops sending (acknowledgements are still taken).
    pub fn stop(&mut self) {
        self.active = false;
    }

    /// Loss timeout now (see the module docs).
    pub fn loss_timeout_ns(&self) -> u64 {
        match self.srtt {
            None => INITIAL_TIMEOUT_NS,
            Some(s) => ((2 * s).max(s + 4 * self.rttvar) + self.ack_delay_ns).max(MIN_TIMEOUT_NS),
        }
    }

    /// The control after a guard: an algorithm that sets neither limit gets one packet in flight.
    fn window_allows(&self, cwnd: Option<u64>, rate: Option<f64>) -> bool {
        let inflight = self.stats.inflight_bytes;
        match (cwnd, rate) {
            (Some(w), _) => inflight == 0 || inflight + self.cfg.packet_bytes as u64 <= w,
            (None, Some(_)) => true,
            (None, None) => inflight == 0,
        }
    }

    /// The next packet to send now, if the rate and window allow one; the caller sends it.
    pub fn poll_transmit(&mut self, now_ns: u64) -> Option<DataHeader> {
        if !self.active {
            return None;
        }
        let c = self.cc.control();
        let rate = c.rate_bps.filter(|r| *r > 0.0 && r.is_finite());
        let paced = |t: u64| now_ns < t;
        if !self.window_allows(c.cwnd_bytes, rate)
            || (rate.is_some() && paced(self.next_send_ns))
            || self.cc.send_at_ns().is_some_and(paced)
        {
            return None;
        }
        let bytes = self.cfg.packet_bytes;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.sent.push_back(Sent {
            sent_ns: now_ns,
            bytes,
            state: State::Out,
            delivered_at_send: self.stats.delivered_bytes,
            delivered_time_at_send: self.delivered_time,
        });
        self.stats.sent_pkts += 1;
        self.stats.sent_bytes += bytes as u64;
        self.stats.inflight_pkts += 1;
        self.stats.inflight_bytes += bytes as u64;
        self.next_send_ns = match rate {
            Some(r) => {
                let gap = ((bytes as f64 * 8e9 / r).round() as u64).max(1);
                self.next_send_ns.max(now_ns.saturating_sub(PACING_CREDIT_NS)) + gap
            }
            None => now_ns,
        };
        self.cc.on_send(now_ns, seq, bytes, self.stats.inflight_bytes);
        Some(DataHeader { flow: self.cfg.flow, seq, sent_ns: now_ns, size: bytes })
    }

    fn slot(&self, seq: u64) -> Option<usize> {
        let i = seq.checked_sub(self.base)? as usize;
        (i < self.sent.len()).then_some(i)
    }

    /// Drop finished packets from the front.
    fn trim(&mut self) {
        while self.sent.front().is_some_and(|s| s.state != State::Out) {
            self.sent.pop_front();
            self.base += 1;
        }
    }

    fn rtt_sample(&mut self, r: u64) {
        let r = r.max(1);
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                // RFC 6298 §2.3 (alpha = 1/8, beta = 1/4)
                self.rttvar = (3 * self.rttvar + s.abs_diff(r)) / 4;
                self.srtt = Some((7 * s + r) / 8);
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
    }

    fn declare_lost(&mut self, i: usize, now_ns: u64) {
        let s = &mut self.sent[i];
        s.state = State::Lost;
        let (bytes, sent_ns) = (s.bytes, s.sent_ns);
        self.stats.lost_pkts += 1;
        self.stats.inflight_pkts -= 1;
        self.stats.inflight_bytes -= bytes as u64;
        let seq = self.base + i as u64;
        if self.recent_lost.len() == RECENT_LOST {
            self.recent_lost.pop_front();
        }
        self.recent_lost.push_back(seq);
        self.cc.on_loss(&Lost { now_ns, seq, bytes, sent_ns, inflight_bytes: self.stats.inflight_bytes });
    }

    /// An acknowledgement arrived (its packets are in the receiver's arrival order).
    pub fn on_ack(&mut self, now_ns: u64, ack: &Ack) {
        for &(seq, recv_ns) in &ack.packets {
            let Some(i) = self.slot(seq).filter(|&i| self.sent[i].state == State::Out) else {
                if let Some(k) = self.recent_lost.iter().position(|&l| l == seq) {
                    self.recent_lost.remove(k);
                    self.stats.spurious_losses += 1;
                }
                continue;
            };
            let s = &mut self.sent[i];
            s.state = State::Acked;
            let s = *s;
            self.stats.inflight_pkts -= 1;
            self.stats.inflight_bytes -= s.bytes as u64;
            self.stats.delivered_pkts += 1;
            self.stats.delivered_bytes += s.bytes as u64;
            self.delivered_time = now_ns;
            let hold = ack.ack_ns.saturating_sub(recv_ns);
            let rtt = now_ns.saturating_sub(s.sent_ns).saturating_sub(hold).max(1);
            self.rtt_sample(rtt);
            let interval = now_ns.saturating_sub(s.delivered_time_at_send);
            if interval > 0 {
                self.delivery_rate_bps = (self.stats.delivered_bytes - s.delivered_at_send) as f64 * 8e9 / interval as f64;
            }
            self.largest_acked = Some(self.largest_acked.map_or(seq, |l| l.max(seq)));
            self.cc.on_ack(&Acked {
                now_ns,
                seq,
                bytes: s.bytes,
                sent_ns: s.sent_ns,
                recv_ns,
                rtt_ns: rtt,
                delivered_bytes: self.stats.delivered_bytes,
                inflight_bytes: self.stats.inflight_bytes,
            });
        }
        // packet threshold: everything `reorder` or more before the largest acknowledged
        if let Some(l) = self.largest_acked {
            if let Some(limit) = l.checked_sub(self.cfg.reorder) {
                let n = (limit + 1).saturating_sub(self.base).min(self.sent.len() as u64) as usize;
                for i in 0..n {
                    if self.sent[i].state == State::Out {
                        self.declare_lost(i, now_ns);
                    }
                }
            }
        }
        if !ack.feedback.is_empty() {
            self.cc.on_feedback(now_ns, &ack.feedback);
        }
        self.trim();
    }

    /// Time-outs and the algorithm's timer, when [`Sender::next_wakeup_ns`] is reached.
    pub fn on_timer(&mut self, now_ns: u64) {
        let to = self.loss_timeout_ns();
        for i in 0..self.sent.len() {
            let s = self.sent[i];
            if s.sent_ns + to > now_ns {
                break; // sent in order: the rest are younger
            }
            if s.state == State::Out {
                self.declare_lost(i, now_ns);
            }
        }
        self.trim();
        if self.cc.next_timer_ns().is_some_and(|t| t <= now_ns) {
            self.cc.on_timer(now_ns);
        }
    }

    /// When the sender next needs to act (a paced send, a loss timeout, the algorithm's
    /// timer), if before another acknowledgement arrives.
    pub fn next_wakeup_ns(&self) -> Option<u64> {
        let mut t = self.cc.next_timer_ns();
        let mut at = |x: u64| t = Some(t.map_or(x, |y: u64| y.min(x)));
        if let Some(s) = self.sent.iter().find(|s| s.state == State::Out) {
            at(s.sent_ns + self.loss_timeout_ns());
        }
        if self.active {
            let c = self.cc.control();
            let rate = c.rate_bps.filter(|r| *r > 0.0 && r.is_finite());
            if self.window_allows(c.cwnd_bytes, rate) {
                if rate.is_some() {
                    at(self.next_send_ns);
                }
                if let Some(s) = self.cc.send_at_ns() {
                    at(s);
                }
            }
        }
        t
    }

    /// The algorithm's variables (`cc_<name>` columns).
    pub fn cc_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        self.cc.vars(out);
    }

    /// A `flows` row: `cwnd` is the window in packets (0 for a rate-only scheme), `ssthresh`
    /// none, the RTT estimate, packets in flight and delivered, bytes acknowledged, packets
    /// declared lost, `ca_state` open, the pacing rate (NaN without one) and the latest
    /// delivery-rate sample.
    pub fn flow_row(&self) -> FlowRow {
        let c = self.cc.control();
        let us = |x: Option<u64>| x.map_or(f64::NAN, |v| v as f64 / 1e3);
        FlowRow {
            cwnd: c.cwnd_bytes.map_or(0, |w| (w / self.cfg.packet_bytes as u64).min(u32::MAX as u64) as u32),
            ssthresh: None,
            srtt_us: us(self.srtt),
            rttvar_us: if self.srtt.is_some() { self.rttvar as f64 / 1e3 } else { f64::NAN },
            min_rtt_us: us(self.min_rtt),
            inflight: self.stats.inflight_pkts.min(u32::MAX as u64) as u32,
            delivered: self.stats.delivered_pkts,
            bytes_acked: self.stats.delivered_bytes,
            retrans: 0,
            lost: self.stats.lost_pkts,
            ca_state: 0,
            pacing_rate_bps: c.rate_bps.unwrap_or(f64::NAN),
            delivery_rate_bps: self.delivery_rate_bps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{self, AckPolicy, Control};

    /// A test algorithm with a fixed control that records its hooks.
    struct Probe {
        control: Control,
        log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl DgramCc for Probe {
        fn name(&self) -> &'static str {
            "probe"
        }
        fn on_send(&mut self, _now: u64, seq: u64, _b: u32, _i: u64) {
            self.log.lock().unwrap().push(format!("send {seq}"));
        }
        fn on_ack(&mut self, a: &Acked) {
            self.log.lock().unwrap().push(format!("ack {} rtt {}", a.seq, a.rtt_ns));
        }
        fn on_loss(&mut self, l: &Lost) {
            self.log.lock().unwrap().push(format!("loss {} at {}", l.seq, l.now_ns));
        }
        fn on_feedback(&mut self, _now: u64, v: &[f64]) {
            self.log.lock().unwrap().push(format!("feedback {v:?}"));
        }
        fn control(&self) -> Control {
            self.control
        }
        fn ack_policy(&self) -> AckPolicy {
            AckPolicy::default()
        }
    }

    fn probe(control: Control) -> (Sender, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let s = Sender::new(SenderConfig::new(0, 1000), Box::new(Probe { control, log: log.clone() }));
        (s, log)
    }

    fn ack(ack_ns: u64, packets: &[(u64, u64)]) -> Ack {
        Ack { flow: 0, ack_ns, packets: packets.to_vec(), feedback: vec![] }
    }

    #[test]
    fn pacing_spaces_packets_by_size_over_rate() {
        // 1000 bytes at 8 Mbit/s: one packet per ms
        let mut s = Sender::new(SenderConfig::new(0, 1000), cc::make("fixed", &serde_json::json!({"rate-mbps": 8}), 1).unwrap());
        s.start(0);
        let mut times = Vec::new();
        let mut now = 0;
        while times.len() < 5 {
            while let Some(h) = s.poll_transmit(now) {
                times.push(h.sent_ns);
            }
            now = s.next_wakeup_ns().unwrap();
        }
        assert_eq!(times, vec![0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
        // a late wake-up catches up at most PACING_CREDIT_NS of sending time (one packet here)
        let late = 4_000_000 + 10_000_000;
        let n = std::iter::from_fn(|| s.poll_transmit(late)).count();
        assert_eq!(n, 2);
    }

    #[test]
    fn window_limits_bytes_in_flight() {
        let (mut s, _) = probe(Control { rate_bps: None, cwnd_bytes: Some(3000) });
        s.start(0);
        let sent: Vec<u64> = std::iter::from_fn(|| s.poll_transmit(0)).map(|h| h.seq).collect();
        assert_eq!(sent, vec![0, 1, 2]);
        assert_eq!(s.stats().inflight_bytes, 3000);
        s.on_ack(10, &ack(10, &[(0, 5)]));
        assert_eq!(std::iter::from_fn(|| s.poll_transmit(10)).count(), 1);
        assert_eq!(s.flow_row().cwnd, 3);
        assert_eq!(s.flow_row().inflight, 3);
    }

    #[test]
    fn reordering_below_the_threshold_is_not_loss() {
        let (mut s, log) = probe(Control { rate_bps: None, cwnd_bytes: Some(100_000) });
        s.start(0);
        while s.poll_transmit(0).is_some() {}
        // 1, 2, 3 arrive before 0 (reordered by less than 3 packets... 0 then arrives)
        s.on_ack(20_000, &ack(20_000, &[(1, 10_000), (2, 10_000), (0, 10_500)]));
        assert_eq!(s.stats().lost_pkts, 0);
        // now 0..2 acked; packet 3 missing while 4, 5 arrive: 3 + 3 > 5, not lost yet
        s.on_ack(21_000, &ack(21_000, &[(4, 11_000), (5, 11_000)]));
        assert_eq!(s.stats().lost_pkts, 0);
        // 6 acknowledged: 3 is three packets behind: lost
        s.on_ack(22_000, &ack(22_000, &[(6, 12_000)]));
        assert_eq!(s.stats().lost_pkts, 1);
        let log = log.lock().unwrap();
        let i = log.iter().position(|l| l.starts_with("loss 3")).unwrap();
        assert!(log[i - 1].starts_with("ack 6"), "loss after the acks of its acknowledgement: {log:?}");
        // the hold time is taken out of the RTT sample: 20 µs − (20 − 10) µs = 10 µs
        assert!(log.contains(&"ack 1 rtt 10000".to_string()), "{log:?}");
        // a late acknowledgement of the lost packet is spurious, not a second report
        drop(log);
        s.on_ack(23_000, &ack(23_000, &[(3, 13_000)]));
        assert_eq!(s.stats().spurious_losses, 1);
        assert_eq!(s.stats().delivered_pkts, 6);
    }

    #[test]
    fn timeout_declares_the_tail_lost() {
        let (mut s, log) = probe(Control { rate_bps: None, cwnd_bytes: Some(2000) });
        s.start(0);
        while s.poll_transmit(0).is_some() {}
        // before any RTT sample the timeout is 1 s
        assert_eq!(s.next_wakeup_ns(), Some(INITIAL_TIMEOUT_NS));
        s.on_ack(10_000_000, &ack(10_000_000, &[(0, 10_000_000)]));
        while s.poll_transmit(10_000_000).is_some() {}
        // srtt 10 ms, rttvar 5 ms: timeout max(20, 30) ms after packet 1 left (at 0)
        assert_eq!(s.loss_timeout_ns(), 30_000_000);
        assert_eq!(s.next_wakeup_ns(), Some(30_000_000));
        s.on_timer(30_000_000);
        assert_eq!(s.stats().lost_pkts, 1);
        assert!(log.lock().unwrap().contains(&"loss 1 at 30000000".to_string()));
        // packet 2 (sent at 10 ms) is next
        assert_eq!(s.next_wakeup_ns(), Some(40_000_000));
        assert_eq!(s.stats().inflight_pkts, 1);
    }

    #[test]
    fn feedback_reaches_the_algorithm_after_its_acks() {
        let (mut s, log) = probe(Control { rate_bps: Some(1e6), cwnd_bytes: None });
        s.start(0);
        s.poll_transmit(0).unwrap();
        let mut a = ack(5, &[(0, 4)]);
        a.feedback = vec![2.5];
        s.on_ack(10, &a);
        let log = log.lock().unwrap();
        assert_eq!(log[log.len() - 2..], ["ack 0 rtt 9".to_string(), "feedback [2.5]".to_string()]);
    }

    #[test]
    fn stopped_sender_sends_nothing() {
        let (mut s, _) = probe(Control { rate_bps: Some(1e9), cwnd_bytes: None });
        assert!(s.poll_transmit(0).is_none());
        s.start(0);
        assert!(s.poll_transmit(0).is_some());
        s.stop();
        assert!(s.poll_transmit(1_000_000).is_none());
    }
}
