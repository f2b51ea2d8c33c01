//! The receiving half of the transport, without I/O: it notes each data packet's arrival and
//! acknowledges as the scheme's [`AckPolicy`] says, with the feedback of the scheme's
//! receiver half ([`DgramReceiverCc`]) if it has one.
//!
//! An acknowledgement leaves when `every_packets` packets wait for one, when the first of
//! them has waited `every_ns`, or when the receiver half asks for a report of its own
//! (`next_report_ns`, e.g. Sprout's receiver reports every tick, data or not). It reports the
//! waiting packets in arrival order with their receive times (wire.rs); when they do not fit
//! one acknowledgement ([`crate::wire::MAX_ACK_BYTES`]) the rest leave in further ones at
//! once. The caller polls [`Receiver::poll_ack`] after each arrival and when
//! [`Receiver::next_wakeup_ns`] is reached.

use crate::cc::{AckPolicy, DgramCc, DgramReceiverCc};
use crate::wire::{Ack, DataHeader, ACK_HDR, MAX_ACK_BYTES, MAX_FEEDBACK};

pub struct Receiver {
    flow: u32,
    policy: AckPolicy,
    cc: Option<Box<dyn DgramReceiverCc>>,
    /// (seq, receive time) of packets not yet acknowledged, in arrival order.
    pending: Vec<(u64, u64)>,
    first_pending_ns: Option<u64>,
    /// Packets left over from an acknowledgement that was full: they leave at the next poll.
    overflow: bool,
    pub received_pkts: u64,
    pub received_bytes: u64,
    pub acks_sent: u64,
}

impl Receiver {
    pub fn new(flow: u32, policy: AckPolicy, cc: Option<Box<dyn DgramReceiverCc>>) -> Self {
        Receiver {
            flow,
            policy,
            cc,
            pending: Vec::new(),
            first_pending_ns: None,
            overflow: false,
            received_pkts: 0,
            received_bytes: 0,
            acks_sent: 0,
        }
    }

    /// The receiver of a scheme: its acknowledgement policy and receiver half.
    pub fn for_scheme(flow: u32, cc: &dyn DgramCc) -> Self {
        Self::new(flow, cc.ack_policy(), cc.receiver())
    }

    /// A data packet arrived at `now_ns` (receiver clock).
    pub fn on_data(&mut self, now_ns: u64, h: &DataHeader) {
        self.pending.push((h.seq, now_ns));
        self.first_pending_ns.get_or_insert(now_ns);
        self.received_pkts += 1;
        self.received_bytes += h.size as u64;
        if let Some(cc) = self.cc.as_mut() {
            cc.on_packet(now_ns, h.seq, h.size, h.sent_ns);
        }
    }

    fn due(&self, now_ns: u64) -> bool {
        let n = self.pending.len();
        (n > 0 && (self.overflow || n >= self.policy.every_packets.max(1) as usize))
            || self.policy.every_ns.zip(self.first_pending_ns).is_some_and(|(d, f)| now_ns >= f + d)
            || self.cc.as_ref().and_then(|c| c.next_report_ns()).is_some_and(|t| now_ns >= t)
    }

    /// The acknowledgement to send now, if one is due (call again until `None`).
    pub fn poll_ack(&mut self, now_ns: u64) -> Option<Ack> {
        if !self.due(now_ns) {
            return None;
        }
        let mut feedback = if self.overflow { Vec::new() } else { self.cc.as_mut().map(|c| c.feedback(now_ns)).unwrap_or_default() };
        feedback.truncate(MAX_FEEDBACK);
        // as many waiting packets as fit: a new run costs 14 bytes, a packet 4
        let mut bytes = ACK_HDR + 8 * feedback.len();
        let mut n = 0;
        for (i, &(seq, _)) in self.pending.iter().enumerate() {
            let cost = if i > 0 && self.pending[i - 1].0 + 1 == seq { 4 } else { 14 };
            if bytes + cost > MAX_ACK_BYTES {
                break;
            }
            bytes += cost;
            n += 1;
        }
        let packets: Vec<(u64, u64)> = self.pending.drain(..n).collect();
        self.overflow = !self.pending.is_empty();
        self.first_pending_ns = self.pending.first().map(|_| self.first_pending_ns.unwrap_or(now_ns));
        self.acks_sent += 1;
        Some(Ack { flow: self.flow, ack_ns: now_ns, packets, feedback })
    }

    /// When an acknowledgement falls due without another arrival, if ever.
    pub fn next_wakeup_ns(&self) -> Option<u64> {
        let timer = self.policy.every_ns.zip(self.first_pending_ns).map(|(d, f)| f + d);
        let report = self.cc.as_ref().and_then(|c| c.next_report_ns());
        match (timer, report) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64) -> DataHeader {
        DataHeader { flow: 0, seq, sent_ns: 0, size: 1000 }
    }

    #[test]
    fn every_packet_by_default() {
        let mut r = Receiver::new(0, AckPolicy::default(), None);
        r.on_data(5, &data(0));
        let a = r.poll_ack(5).unwrap();
        assert_eq!(a.packets, vec![(0, 5)]);
        assert!(r.poll_ack(5).is_none());
        assert_eq!(r.next_wakeup_ns(), None);
    }

    #[test]
    fn by_count() {
        let mut r = Receiver::new(0, AckPolicy { every_packets: 3, every_ns: None }, None);
        for s in 0..2 {
            r.on_data(s, &data(s));
            assert!(r.poll_ack(s).is_none());
        }
        r.on_data(2, &data(2));
        assert_eq!(r.poll_ack(2).unwrap().packets, vec![(0, 0), (1, 1), (2, 2)]);
    }

    #[test]
    fn by_timer_counting_from_the_first_waiting_packet() {
        let mut r = Receiver::new(0, AckPolicy { every_packets: 100, every_ns: Some(10_000) }, None);
        r.on_data(1_000, &data(7));
        r.on_data(4_000, &data(9)); // 8 lost
        assert_eq!(r.next_wakeup_ns(), Some(11_000));
        assert!(r.poll_ack(10_999).is_none());
        let a = r.poll_ack(11_000).unwrap();
        assert_eq!(a.packets, vec![(7, 1_000), (9, 4_000)]);
        assert_eq!(r.next_wakeup_ns(), None);
        assert!(r.poll_ack(50_000).is_none(), "nothing waits: no empty acknowledgement");
    }

    struct Reporter {
        next: u64,
        seen: u64,
    }

    impl DgramReceiverCc for Reporter {
        fn on_packet(&mut self, _now: u64, _seq: u64, _bytes: u32, _sent: u64) {
            self.seen += 1;
        }
        fn feedback(&mut self, now: u64) -> Vec<f64> {
            self.next = now + 20;
            vec![self.seen as f64; 20] // more than fit: truncated
        }
        fn next_report_ns(&self) -> Option<u64> {
            Some(self.next)
        }
    }

    #[test]
    fn receiver_half_reports_on_its_own_tick_with_feedback() {
        let mut r = Receiver::new(0, AckPolicy { every_packets: 10, every_ns: None }, Some(Box::new(Reporter { next: 20, seen: 0 })));
        r.on_data(3, &data(0));
        assert_eq!(r.next_wakeup_ns(), Some(20));
        let a = r.poll_ack(20).unwrap();
        assert_eq!(a.packets, vec![(0, 3)]);
        assert_eq!(a.feedback, vec![1.0; MAX_FEEDBACK]);
        // a report with nothing received
        let a = r.poll_ack(40).unwrap();
        assert!(a.packets.is_empty());
        assert_eq!(a.feedback.len(), MAX_FEEDBACK);
    }

    #[test]
    fn a_full_acknowledgement_spills_into_the_next() {
        let mut r = Receiver::new(0, AckPolicy { every_packets: 1000, every_ns: None }, None);
        // every other packet lost: one run per packet, 14 bytes each
        for s in 0..1000 {
            r.on_data(s, &data(2 * s));
        }
        let mut total = 0;
        let mut buf = Vec::new();
        while let Some(a) = r.poll_ack(1000) {
            a.encode(&mut buf);
            assert!(buf.len() <= MAX_ACK_BYTES);
            total += a.packets.len();
        }
        assert_eq!(total, 1000);
        assert!(r.acks_sent > 1);
    }
}
