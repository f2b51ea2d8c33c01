//! One direction of a link: queue → serialiser (rate) → propagation delay line.

use std::collections::VecDeque;

use serde::Deserialize;

use crate::queue::{Qdisc, QueueConfig};
use crate::{tx_time_ns, Nanos, PktMeta};

/// A directed link as it appears in the resolved experiment.
#[derive(Clone, Debug, Deserialize)]
pub struct LinkConfig {
    pub id: u32,
    pub name: String,
    pub src: String,
    pub dst: String,
    /// Free-form role used by analysis ("left", "central", "right").
    #[serde(default)]
    pub role: String,
    /// Line rate in bit/s; `None` means unlimited (no serialisation delay).
    pub rate_bps: Option<u64>,
    /// One-way propagation delay.
    pub delay_ns: u64,
    pub queue: QueueConfig,
    /// Bytes added to every packet when serialising (e.g. 14 for Ethernet framing); not
    /// counted by the queue limit. Default 0: the wire carries IP packets.
    #[serde(default)]
    pub overhead_bytes: u32,
}

/// Counters of a link since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub enqueued_pkts: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    /// Packets and bytes that finished serialisation (left the queue onto the wire).
    pub tx_pkts: u64,
    pub tx_bytes: u64,
}

pub struct Link {
    rate_bps: Option<u64>,
    delay_ns: Nanos,
    overhead_bytes: u32,
    queue: Box<dyn Qdisc>,
    /// The packet being serialised and the time its last bit leaves.
    tx: Option<(PktMeta, Nanos)>,
    /// Packets propagating, with their arrival time at the far end (non-decreasing).
    pipe: VecDeque<(PktMeta, Nanos)>,
    drops: Vec<PktMeta>,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(cfg: &LinkConfig) -> Self {
        Link {
            rate_bps: cfg.rate_bps,
            delay_ns: cfg.delay_ns,
            overhead_bytes: cfg.overhead_bytes,
            queue: cfg.queue.build(),
            tx: None,
            pipe: VecDeque::new(),
            drops: Vec::new(),
            stats: LinkStats::default(),
        }
    }

    /// Offer a packet to the link's queue at `now`. Dropped packets are collected and must
    /// be taken with [`Link::take_drops`].
    pub fn enqueue(&mut self, now: Nanos, pkt: PktMeta) {
        self.advance(now);
        let before = self.drops.len();
        self.queue.enqueue(now, pkt, &mut self.drops);
        if !self.drops[before..].iter().any(|d| d.id == pkt.id) {
            self.stats.enqueued_pkts += 1;
        }
        self.count_drops(before);
        if self.tx.is_none() {
            self.start_next(now);
        }
    }

    /// Earliest time at which a packet reaches the far end. Serialisation ends need no
    /// wake-up of their own: `advance` replays them with their exact times whenever the link
    /// is next touched, so an owner only has to wake the link for arrivals (one event per
    /// packet per link instead of two).
    pub fn next_event_time(&self) -> Option<Nanos> {
        let a = self.tx.map(|(_, end)| end + self.delay_ns);
        let b = self.pipe.front().map(|&(_, t)| t);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next packet that has reached the far end by `now`, if any.
    pub fn pop_arrival(&mut self, now: Nanos) -> Option<(PktMeta, Nanos)> {
        self.advance(now);
        match self.pipe.front() {
            Some(&(_, t)) if t <= now => self.pipe.pop_front(),
            _ => None,
        }
    }

    /// Packets dropped since the last call (by this link's queue), in drop order.
    pub fn take_drops(&mut self) -> std::vec::Drain<'_, PktMeta> {
        self.drops.drain(..)
    }

    /// Bring the link's state up to `now` (serialisations that ended by then) without
    /// taking arrivals; call before reading occupancy or counters at `now`.
    pub fn sync(&mut self, now: Nanos) {
        self.advance(now);
    }

    pub fn queue_packets(&self) -> usize {
        self.queue.len_packets()
    }

    pub fn queue_bytes(&self) -> u64 {
        self.queue.len_bytes()
    }

    /// Packets CE-marked by this link's queue so far.
    pub fn queue_marks(&self) -> u64 {
        self.queue.marks()
    }

    pub fn rate_bps(&self) -> Option<u64> {
        self.rate_bps
    }

    pub fn delay_ns(&self) -> Nanos {
        self.delay_ns
    }

    /// Move every serialisation that ends by `now` onto the delay line, starting the next
    /// packet at the exact instant the previous one ended.
    fn advance(&mut self, now: Nanos) {
        while let Some((p, end)) = self.tx {
            if end > now {
                break;
            }
            self.tx = None;
            self.stats.tx_pkts += 1;
            self.stats.tx_bytes += p.size as u64;
            self.pipe.push_back((p, end + self.delay_ns));
            self.start_next(end);
        }
    }

    fn start_next(&mut self, t: Nanos) {
        let before = self.drops.len();
        let next = self.queue.dequeue(t, &mut self.drops);
        self.count_drops(before);
        if let Some(p) = next {
            let dt = match self.rate_bps {
                Some(r) => tx_time_ns((p.size + self.overhead_bytes) as u64, r),
                None => 0,
            };
            self.tx = Some((p, t + dt));
        }
    }

    fn count_drops(&mut self, from: usize) {
        for d in &self.drops[from..] {
            self.stats.dropped_pkts += 1;
            self.stats.dropped_bytes += d.size as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(rate: Option<u64>, delay: u64, packets: Option<u32>) -> LinkConfig {
        LinkConfig {
            id: 0,
            name: "l".into(),
            src: "a".into(),
            dst: "b".into(),
            role: String::new(),
            rate_bps: rate,
            delay_ns: delay,
            queue: QueueConfig::droptail(packets, None),
            overhead_bytes: 0,
        }
    }

    fn p(id: u32) -> PktMeta {
        PktMeta { id, size: 1500, flow: 0, ecn: crate::ECN_NOT_ECT }
    }

    /// Drive the link as an event loop would and return (id, arrival time) pairs.
    fn run(link: &mut Link) -> Vec<(u32, Nanos)> {
        let mut out = vec![];
        while let Some(t) = link.next_event_time() {
            while let Some((pkt, at)) = link.pop_arrival(t) {
                assert!(at <= t, "arrival reported after the wake time");
                out.push((pkt.id, at));
            }
        }
        out
    }

    #[test]
    fn back_to_back_packets_are_serialised_then_delayed() {
        // 100 Mbit/s: 1500 B take 120 µs; 10 ms propagation.
        let mut l = Link::new(&cfg(Some(100_000_000), 10_000_000, Some(1000)));
        for i in 0..3 {
            l.enqueue(0, p(i));
        }
        let arr = run(&mut l);
        assert_eq!(arr, vec![(0, 10_120_000), (1, 10_240_000), (2, 10_360_000)]);
        assert_eq!(l.stats.tx_pkts, 3);
        assert_eq!(l.stats.tx_bytes, 4500);
    }

    #[test]
    fn full_queue_delay_is_limit_times_tx_time() {
        // A full 1000-packet queue at 100 Mbit/s: the 1000th queued packet waits for 1000
        // serialisations (the one on the wire plus 999 ahead of it) before its own.
        let mut l = Link::new(&cfg(Some(100_000_000), 0, Some(1000)));
        for i in 0..1002 {
            l.enqueue(0, p(i)); // first goes on the wire, 1000 queue, the last is dropped
        }
        assert_eq!(l.queue_packets(), 1000);
        assert_eq!(l.take_drops().map(|d| d.id).collect::<Vec<_>>(), vec![1001]);
        let arr = run(&mut l);
        assert_eq!(arr.len(), 1001);
        assert_eq!(arr.last().unwrap(), &(1000, 1001 * 120_000));
        assert_eq!(l.stats.dropped_pkts, 1);
    }

    #[test]
    fn unlimited_rate_only_delays() {
        let mut l = Link::new(&cfg(None, 5_000, None));
        l.enqueue(100, p(0));
        l.enqueue(100, p(1));
        assert_eq!(run(&mut l), vec![(0, 5_100), (1, 5_100)]);
    }

    #[test]
    fn idle_link_starts_serialising_at_arrival_time() {
        let mut l = Link::new(&cfg(Some(1_000_000_000), 0, Some(10)));
        l.enqueue(1_000, p(0));
        assert_eq!(l.next_event_time(), Some(13_000));
        // A later arrival while idle again starts at its own time, not earlier.
        assert_eq!(run(&mut l), vec![(0, 13_000)]);
        l.enqueue(50_000, p(1));
        assert_eq!(run(&mut l), vec![(1, 62_000)]);
    }
}
