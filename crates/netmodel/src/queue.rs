//! Queue disciplines. A queue holds packets *waiting for service*; the packet on the wire
//! (being serialised) and packets propagating are not in it, so a buffer limit never mixes
//! with the propagation delay (unlike netem's `limit`).

use std::collections::VecDeque;

use serde::Deserialize;

use crate::{Nanos, PktMeta};

/// Resolved queue configuration, as it appears in the resolved experiment.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum QueueConfig {
    /// FIFO that drops an arriving packet that would exceed either limit (none = unlimited).
    Droptail {
        #[serde(default)]
        packets: Option<u32>,
        #[serde(default)]
        bytes: Option<u64>,
    },
}

impl QueueConfig {
    pub fn build(&self) -> Box<dyn Qdisc> {
        match *self {
            QueueConfig::Droptail { packets, bytes } => Box::new(DropTail::new(packets, bytes)),
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
}

/// Tail-drop FIFO limited in packets and/or bytes.
pub struct DropTail {
    buf: VecDeque<PktMeta>,
    bytes: u64,
    limit_packets: Option<u32>,
    limit_bytes: Option<u64>,
}

impl DropTail {
    pub fn new(limit_packets: Option<u32>, limit_bytes: Option<u64>) -> Self {
        DropTail { buf: VecDeque::new(), bytes: 0, limit_packets, limit_bytes }
    }
}

impl Qdisc for DropTail {
    fn enqueue(&mut self, _now: Nanos, pkt: PktMeta, drops: &mut Vec<PktMeta>) {
        let over_packets = self.limit_packets.is_some_and(|l| self.buf.len() as u64 >= l as u64);
        let over_bytes = self.limit_bytes.is_some_and(|l| self.bytes + pkt.size as u64 > l);
        if over_packets || over_bytes {
            drops.push(pkt);
        } else {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: u32, size: u32) -> PktMeta {
        PktMeta { id, size, flow: 0 }
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
