//! Queue disciplines. A queue holds packets *waiting for service*; the packet on the wire
//! (being serialised) and packets propagating are not in it, so a buffer limit never mixes
//! with the propagation delay (unlike netem's `limit`).

use std::collections::VecDeque;

use serde::Deserialize;

use crate::{Nanos, PktMeta, ECN_CE};

/// Resolved queue configuration, as it appears in the resolved experiment.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum QueueConfig {
    /// FIFO that drops an arriving packet that would exceed either limit (none = unlimited).
    /// With an ECN threshold it is also a step marker (DCTCP's "K", RFC 8257 §3.1): see
    /// [`DropTail::with_ecn`].
    Droptail {
        #[serde(default)]
        packets: Option<u32>,
        #[serde(default)]
        bytes: Option<u64>,
        /// CE-mark ECT arrivals when the queue holds at least this many packets.
        #[serde(default)]
        ecn_threshold_packets: Option<u32>,
        /// CE-mark ECT arrivals when the queue holds at least this many bytes.
        #[serde(default)]
        ecn_threshold_bytes: Option<u64>,
    },
}

impl QueueConfig {
    /// A plain tail-drop queue (no ECN marking).
    pub fn droptail(packets: Option<u32>, bytes: Option<u64>) -> Self {
        QueueConfig::Droptail { packets, bytes, ecn_threshold_packets: None, ecn_threshold_bytes: None }
    }

    pub fn build(&self) -> Box<dyn Qdisc> {
        match *self {
            QueueConfig::Droptail { packets, bytes, ecn_threshold_packets, ecn_threshold_bytes } => Box::new(
                DropTail::new(packets, bytes).with_ecn(ecn_threshold_packets, ecn_threshold_bytes),
            ),
        }
    }
}

/// The interface every queue discipline implements. Drops are reported through `drops`
/// so that disciplines that drop other packets than the arriving one (drop-head, AQMs at
/// dequeue) fit the same interface.
pub trait Qdisc: Send {
    /// Offer a packet at time `now`; dropped packets (possibly this one) are pushed to `drops`.
    fn enqueue(&mut self, now: Nanos, pkt: PktMeta, drops: &mut Vec<PktMeta>);
    /// Take the next packet to serialise, if any; packets dropped at dequeue go to `drops`.
    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<PktMeta>) -> Option<PktMeta>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    /// Packets CE-marked by this queue since it was built.
    fn marks(&self) -> u64 {
        0
    }
}

/// Tail-drop FIFO limited in packets and/or bytes, optionally an ECN step marker.
pub struct DropTail {
    buf: VecDeque<PktMeta>,
    bytes: u64,
    limit_packets: Option<u32>,
    limit_bytes: Option<u64>,
    mark_packets: Option<u32>,
    mark_bytes: Option<u64>,
    marks: u64,
}

impl DropTail {
    pub fn new(limit_packets: Option<u32>, limit_bytes: Option<u64>) -> Self {
        DropTail {
            buf: VecDeque::new(),
            bytes: 0,
            limit_packets,
            limit_bytes,
            mark_packets: None,
            mark_bytes: None,
            marks: 0,
        }
    }

    /// Step marking on arrival (the DCTCP switch rule, RFC 8257 §3.1, and Linux `red` with
    /// `min = max = K, probability 1`): an ECT packet that arrives while the queue already holds
    /// at least `packets` packets or at least `bytes` bytes (the packets waiting, as the drop
    /// limits count them) is CE-marked and enqueued. Not-ECT packets are never marked, and
    /// packets over the drop limit are dropped whatever their codepoint.
    pub fn with_ecn(mut self, packets: Option<u32>, bytes: Option<u64>) -> Self {
        self.mark_packets = packets;
        self.mark_bytes = bytes;
        self
    }
}

impl Qdisc for DropTail {
    fn enqueue(&mut self, _now: Nanos, mut pkt: PktMeta, drops: &mut Vec<PktMeta>) {
        let over_packets = self.limit_packets.is_some_and(|l| self.buf.len() as u64 >= l as u64);
        let over_bytes = self.limit_bytes.is_some_and(|l| self.bytes + pkt.size as u64 > l);
        if over_packets || over_bytes {
            drops.push(pkt);
        } else {
            if pkt.is_ect() {
                let mark = self.mark_packets.is_some_and(|k| self.buf.len() as u64 >= k as u64)
                    || self.mark_bytes.is_some_and(|k| self.bytes >= k);
                if mark {
                    if pkt.ecn != ECN_CE {
                        self.marks += 1;
                    }
                    pkt.ecn = ECN_CE;
                }
            }
            self.bytes += pkt.size as u64;
            self.buf.push_back(pkt);
        }
    }

    fn dequeue(&mut self, _now: Nanos, _drops: &mut Vec<PktMeta>) -> Option<PktMeta> {
        let p = self.buf.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.buf.len()
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn marks(&self) -> u64 {
        self.marks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: u32, size: u32) -> PktMeta {
        PktMeta { id, size, flow: 0, ecn: crate::ECN_NOT_ECT }
    }

    fn ect(id: u32, size: u32) -> PktMeta {
        PktMeta { id, size, flow: 0, ecn: crate::ECN_ECT0 }
    }

    fn drain(q: &mut DropTail) -> Vec<(u32, u8)> {
        let mut d = vec![];
        std::iter::from_fn(|| q.dequeue(0, &mut d)).map(|m| (m.id, m.ecn)).collect()
    }

    #[test]
    fn ecn_threshold_in_packets_marks_ect_arrivals_at_or_above_k() {
        // K = 2: the 3rd arrival finds 2 waiting and is marked; Not-ECT packets never are.
        let mut q = DropTail::new(Some(5), None).with_ecn(Some(2), None);
        let mut drops = vec![];
        for i in 0..4 {
            q.enqueue(0, ect(i, 100), &mut drops);
        }
        q.enqueue(0, p(4, 100), &mut drops); // Not-ECT, queue at 4 >= K: unmarked
        q.enqueue(0, ect(5, 100), &mut drops); // queue full (5): dropped, not marked
        assert_eq!(drops.iter().map(|d| d.id).collect::<Vec<_>>(), vec![5]);
        assert_eq!(q.marks(), 2);
        use crate::{ECN_CE as CE, ECN_ECT0 as E, ECN_NOT_ECT as N};
        assert_eq!(drain(&mut q), vec![(0, E), (1, E), (2, CE), (3, CE), (4, N)]);
        // Below K again after draining: no mark.
        q.enqueue(0, ect(6, 100), &mut drops);
        assert_eq!(drain(&mut q), vec![(6, E)]);
    }

    #[test]
    fn ecn_threshold_in_bytes_counts_waiting_bytes() {
        // K = 3000 bytes: marked once 3000 bytes are waiting (not when 2999 are).
        let mut q = DropTail::new(None, None).with_ecn(None, Some(3000));
        let mut drops = vec![];
        q.enqueue(0, ect(0, 1500), &mut drops);
        q.enqueue(0, ect(1, 1499), &mut drops); // 1500 waiting
        q.enqueue(0, ect(2, 1), &mut drops); // 2999 waiting: below K
        q.enqueue(0, ect(3, 1500), &mut drops); // 3000 waiting: marked
        let mut already = ect(4, 100);
        already.ecn = crate::ECN_CE; // CE from an earlier hop stays CE, not counted again
        q.enqueue(0, already, &mut drops);
        assert_eq!(q.marks(), 1);
        let ecn: Vec<u8> = drain(&mut q).into_iter().map(|x| x.1).collect();
        assert_eq!(ecn, vec![crate::ECN_ECT0, crate::ECN_ECT0, crate::ECN_ECT0, crate::ECN_CE, crate::ECN_CE]);
    }

    #[test]
    fn either_threshold_marks_and_config_builds_marker() {
        let cfg = QueueConfig::Droptail {
            packets: Some(100),
            bytes: None,
            ecn_threshold_packets: Some(3),
            ecn_threshold_bytes: Some(250),
        };
        let mut q = cfg.build();
        let mut drops = vec![];
        for i in 0..3 {
            q.enqueue(0, ect(i, 100), &mut drops); // waiting bytes 0, 100, 200
        }
        q.enqueue(0, ect(3, 100), &mut drops); // 300 bytes >= 250 (3 pkts >= 3 too)
        assert_eq!(q.marks(), 1);
        let mut q = QueueConfig::droptail(Some(100), None).build();
        for i in 0..50 {
            q.enqueue(0, ect(i, 100), &mut drops);
        }
        assert_eq!(q.marks(), 0);
    }

    #[test]
    fn droptail_packet_limit_drops_the_arrival() {
        let mut q = DropTail::new(Some(2), None);
        let mut drops = vec![];
        for i in 0..4 {
            q.enqueue(0, p(i, 100), &mut drops);
        }
        assert_eq!(q.len_packets(), 2);
        assert_eq!(drops.iter().map(|d| d.id).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(q.dequeue(0, &mut drops).unwrap().id, 0);
        assert_eq!(q.dequeue(0, &mut drops).unwrap().id, 1);
        assert!(q.dequeue(0, &mut drops).is_none());
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn droptail_byte_limit_admits_small_packets_after_a_big_drop() {
        let mut q = DropTail::new(None, Some(2000));
        let mut drops = vec![];
        q.enqueue(0, p(0, 1500), &mut drops);
        q.enqueue(0, p(1, 1500), &mut drops); // would make 3000 > 2000
        q.enqueue(0, p(2, 500), &mut drops); // exactly 2000: admitted
        assert_eq!(drops.len(), 1);
        assert_eq!(drops[0].id, 1);
        assert_eq!(q.len_bytes(), 2000);
        assert_eq!(q.len_packets(), 2);
    }
}
