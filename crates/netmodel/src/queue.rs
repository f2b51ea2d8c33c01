//! Queue disciplines. A queue holds packets *waiting for service*; the packet on the wire
//! (being serialised) and packets propagating are not in it, so a buffer limit never mixes
//! with the propagation delay (unlike netem's `limit`).
//!
//! This file has the configuration (`QueueConfig`, as it appears in the resolved experiment)
//! that builds every discipline, and the two plain FIFOs (droptail, drophead). The [`Qdisc`]
//! trait, the timestamped FIFO the disciplines share and the AQMs (RED, CoDel, FQ-CoDel, PIE,
//! FQ-PIE) live in [`crate::qdisc`], which does not use this file.
//!
//! Sizes are IP bytes (`PktMeta::size`) everywhere, where Linux counts `qdisc_pkt_len` (IP +
//! 14-byte Ethernet header): byte limits, backlogs, DRR quanta and the AQMs' `mtu` tests.

use serde::Deserialize;

use crate::qdisc::{codel, fq_codel, fq_pie, pie, red};
use crate::qdisc::{over_limit, set_ce, Fifo};
use crate::{Nanos, PktMeta, Rng};

/// The interface of every discipline, defined in [`crate::qdisc`].
pub use crate::qdisc::Qdisc;

/// Stream tag of the queue RNGs: a link's queue draws from `Rng::new(seed, QDISC_STREAM ^ id)`.
pub const QDISC_STREAM: u64 = 0x51D1_5C00_0000_0000;

/// Resolved queue configuration, as it appears in the resolved experiment. Every limit is
/// optional (none = unlimited); every AQM parameter defaults to Linux's default (the config
/// layer writes them all out explicitly).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
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
    /// FIFO that, when an arrival would exceed a limit, drops packets from the *head* until it
    /// fits (mahimahi `drophead`, Linux `pfifo_head_drop`). Same optional ECN step marking.
    Drophead {
        #[serde(default)]
        packets: Option<u32>,
        #[serde(default)]
        bytes: Option<u64>,
        #[serde(default)]
        ecn_threshold_packets: Option<u32>,
        #[serde(default)]
        ecn_threshold_bytes: Option<u64>,
    },
    /// Random Early Detection (Linux `sch_red`); see [`red::RedConfig`].
    Red(red::RedConfig),
    /// CoDel (RFC 8289, Linux `sch_codel`); see [`codel::CodelConfig`].
    Codel(codel::CodelConfig),
    /// FQ-CoDel (RFC 8290, Linux `sch_fq_codel`); see [`fq_codel::FqCodelConfig`].
    FqCodel(fq_codel::FqCodelConfig),
    /// PIE (RFC 8033, Linux `sch_pie`); see [`pie::PieConfig`].
    Pie(pie::PieConfig),
    /// FQ-PIE (Linux `sch_fq_pie`); see [`fq_pie::FqPieConfig`].
    FqPie(fq_pie::FqPieConfig),
}

impl QueueConfig {
    /// A plain tail-drop queue (no ECN marking).
    pub fn droptail(packets: Option<u32>, bytes: Option<u64>) -> Self {
        QueueConfig::Droptail { packets, bytes, ecn_threshold_packets: None, ecn_threshold_bytes: None }
    }

    /// Build the discipline with its random numbers from `Rng::new(0, QDISC_STREAM)`; prefer
    /// [`QueueConfig::build_seeded`] wherever an experiment seed is known.
    pub fn build(&self) -> Box<dyn Qdisc> {
        self.build_seeded(0, 0)
    }

    /// Build the discipline; randomised ones (RED, PIE, FQ-PIE) draw from
    /// `Rng::new(seed, QDISC_STREAM ^ stream)`, `stream` being the link id.
    pub fn build_seeded(&self, seed: u64, stream: u64) -> Box<dyn Qdisc> {
        let rng = Rng::new(seed, QDISC_STREAM ^ stream);
        match self {
            &QueueConfig::Droptail { packets, bytes, ecn_threshold_packets, ecn_threshold_bytes } => Box::new(
                DropTail::new(packets, bytes).with_ecn(ecn_threshold_packets, ecn_threshold_bytes),
            ),
            &QueueConfig::Drophead { packets, bytes, ecn_threshold_packets, ecn_threshold_bytes } => Box::new(
                DropTail::drophead(packets, bytes).with_ecn(ecn_threshold_packets, ecn_threshold_bytes),
            ),
            QueueConfig::Red(c) => Box::new(red::Red::new(c, rng)),
            QueueConfig::Codel(c) => Box::new(codel::Codel::new(c)),
            QueueConfig::FqCodel(c) => Box::new(fq_codel::FqCodel::new(c)),
            QueueConfig::Pie(c) => Box::new(pie::Pie::new(c, rng)),
            QueueConfig::FqPie(c) => Box::new(fq_pie::FqPie::new(c, rng)),
        }
    }
}

/// FIFO limited in packets and/or bytes that drops the arrival (tail drop) or, in drop-head
/// mode, the oldest packets; optionally an ECN step marker.
pub struct DropTail {
    fifo: Fifo,
    limit_packets: Option<u32>,
    limit_bytes: Option<u64>,
    head_drop: bool,
    mark_packets: Option<u32>,
    mark_bytes: Option<u64>,
    marks: u64,
    sojourn: Option<Nanos>,
}

/// The drop-head FIFO is a [`DropTail`] built with [`DropTail::drophead`].
pub type DropHead = DropTail;

impl DropTail {
    pub fn new(limit_packets: Option<u32>, limit_bytes: Option<u64>) -> Self {
        DropTail {
            fifo: Fifo::default(),
            limit_packets,
            limit_bytes,
            head_drop: false,
            mark_packets: None,
            mark_bytes: None,
            marks: 0,
            sojourn: None,
        }
    }

    /// Drop-head FIFO: an arrival that would exceed a limit is admitted and the packets at
    /// the head are dropped until the queue is within its limits again (mahimahi drops one
    /// head packet per arrival; with a byte limit one may not be enough). A packet larger
    /// than the byte limit by itself is dropped on arrival.
    pub fn drophead(limit_packets: Option<u32>, limit_bytes: Option<u64>) -> Self {
        DropTail { head_drop: true, ..DropTail::new(limit_packets, limit_bytes) }
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
    fn drops_at_dequeue(&self) -> bool {
        false
    }

    fn enqueue(&mut self, now: Nanos, mut pkt: PktMeta, drops: &mut Vec<PktMeta>) {
        if over_limit(self.limit_packets, self.limit_bytes, self.fifo.len(), self.fifo.bytes(), pkt.size) {
            if !self.head_drop || self.limit_bytes.is_some_and(|l| pkt.size as u64 > l) || self.limit_packets == Some(0) {
                drops.push(pkt);
                return;
            }
            while over_limit(self.limit_packets, self.limit_bytes, self.fifo.len(), self.fifo.bytes(), pkt.size) {
                match self.fifo.pop() {
                    Some((d, _)) => drops.push(d),
                    None => break,
                }
            }
        }
        if pkt.is_ect() {
            let mark = self.mark_packets.is_some_and(|k| self.fifo.len() as u64 >= k as u64)
                || self.mark_bytes.is_some_and(|k| self.fifo.bytes() >= k);
            if mark {
                set_ce(&mut pkt, &mut self.marks);
            }
        }
        self.fifo.push(pkt, now);
    }

    fn dequeue(&mut self, now: Nanos, _drops: &mut Vec<PktMeta>) -> Option<PktMeta> {
        let (p, t) = self.fifo.pop()?;
        self.sojourn = Some(now - t);
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    fn marks(&self) -> u64 {
        self.marks
    }

    fn sojourn_ns(&self) -> Option<Nanos> {
        self.sojourn
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
    fn drophead_drops_the_oldest_packets_and_keeps_the_arrival() {
        let mut q = QueueConfig::Drophead { packets: Some(3), bytes: None, ecn_threshold_packets: None, ecn_threshold_bytes: None }
            .build();
        let mut drops = vec![];
        for i in 0..5 {
            q.enqueue(i as u64, p(i, 100), &mut drops);
        }
        assert_eq!(drops.iter().map(|d| d.id).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(q.dequeue(10, &mut drops).unwrap().id, 2);
        assert_eq!(q.sojourn_ns(), Some(8)); // enqueued at 2, dequeued at 10
        // Byte limit: a 1500-byte arrival into 2000 bytes of 1000-byte packets pushes out
        // both (one would leave 2500 > 2000); a packet larger than the limit is dropped itself.
        let mut q = DropTail::drophead(None, Some(2000));
        let mut drops = vec![];
        q.enqueue(0, p(0, 1000), &mut drops);
        q.enqueue(0, p(1, 1000), &mut drops);
        q.enqueue(0, p(2, 1500), &mut drops);
        assert_eq!(drops.iter().map(|d| d.id).collect::<Vec<_>>(), vec![0, 1]);
        q.enqueue(0, p(3, 2001), &mut drops);
        assert_eq!(drops.last().unwrap().id, 3);
        assert_eq!((q.len_packets(), q.len_bytes()), (1, 1500));
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
