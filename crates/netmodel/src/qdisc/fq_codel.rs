//! FQ-CoDel (RFC 8290), as Linux `sch_fq_codel.c`.
//!
//! Packets are queued per flow; flows are served by deficit round robin with a byte quantum,
//! newly active flows (the "new" list) before the backlogged ones (the "old" list), by the
//! scheduler shared with FQ-PIE ([`super::drr`]); each flow queue runs its own CoDel (see
//! [`super::codel`]), whose `mtu` test looks at the backlog of the whole qdisc, as in Linux.
//! When the total packet limit (or the optional memory limit) is exceeded, the flow with the
//! largest byte backlog loses packets from its head: at least one, up to half its backlog, at
//! most `drop_batch_size` — and its CoDel `count` grows by as many.
//!
//! Differences from Linux:
//! * Flows are `PktMeta::flow` exactly: one queue per flow, no hash and so no collisions
//!   (Linux hashes the 5-tuple into `flows` = 1024 buckets). Among equally fat flows the
//!   lowest flow id loses (Linux: the lowest bucket index).
//! * Quantum, backlogs and the memory limit count IP bytes (Linux: `qdisc_pkt_len`, with the
//!   Ethernet header, and `skb->truesize` for memory). The quantum default 1514 is Linux's
//!   `psched_mtu` number, so a 1500-byte IP packet uses 1500 of it.
//! * The limit may also be in bytes (mahimahi style): exceeding it triggers the same
//!   fat-flow drop as the packet limit.

use serde::Deserialize;

use super::codel::{codel_dequeue, CodelParams, CodelSource, CodelVars};
use super::defaults;
use super::drr::{Drr, FlowAqm, FlowQueue, Overflow};
use crate::{Nanos, PktMeta};
#[cfg(test)]
use super::Qdisc; // the tests' `use super::*`

fn default_limit() -> Option<u32> {
    Some(10_240)
}
fn default_batch() -> u32 {
    64
}

/// `queue: {kind: fq_codel, ...}`. Defaults are Linux `sch_fq_codel`'s.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    /// Total limit in packets (default 10240; null = none).
    #[serde(default = "default_limit")]
    pub packets: Option<u32>,
    /// Total limit in bytes (null = none).
    #[serde(default)]
    pub bytes: Option<u64>,
    #[serde(default = "defaults::ms5")]
    pub target_ns: u64,
    #[serde(default = "defaults::ms100")]
    pub interval_ns: u64,
    /// CE-mark ECT packets instead of dropping (default on in `fq_codel`).
    #[serde(default = "defaults::t")]
    pub ecn: bool,
    #[serde(default)]
    pub ce_threshold_ns: Option<u64>,
    /// DRR quantum in bytes (default 1514).
    #[serde(default = "defaults::quantum")]
    pub quantum: u32,
    /// Memory limit in bytes of queued packets (default 32 MiB; null = none).
    #[serde(default = "default_memory")]
    pub memory_limit: Option<u64>,
    /// Most packets dropped from the fat flow per overflow (default 64).
    #[serde(default = "default_batch")]
    pub drop_batch_size: u32,
    #[serde(default = "defaults::mtu")]
    pub mtu: u32,
}

fn default_memory() -> Option<u64> {
    Some(defaults::memory_limit())
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            packets: default_limit(),
            bytes: None,
            target_ns: defaults::ms5(),
            interval_ns: defaults::ms100(),
            ecn: true,
            ce_threshold_ns: None,
            quantum: defaults::quantum(),
            memory_limit: default_memory(),
            drop_batch_size: default_batch(),
            mtu: defaults::mtu(),
        }
    }
}

/// CoDel on each flow of the [`Drr`] scheduler; its `mtu` test sees the whole qdisc's
/// backlog, and a fat-flow head drop of `n` packets adds `n` to the flow's `count` (Linux).
pub struct FqCodelAqm {
    params: CodelParams,
    marks: u64,
}

/// One flow's CoDel variables.
pub struct CodelFlow {
    cvars: CodelVars,
}

impl FlowAqm for FqCodelAqm {
    type State = CodelFlow;

    fn new_state(&self) -> CodelFlow {
        CodelFlow { cvars: CodelVars::default() }
    }

    fn head_dropped(&mut self, flow: &mut CodelFlow, n: u32) {
        flow.cvars.count = flow.cvars.count.wrapping_add(n);
    }

    fn dequeue(
        &mut self,
        now: Nanos,
        flow: &mut CodelFlow,
        queue: &mut FlowQueue<'_>,
        drops: &mut Vec<PktMeta>,
    ) -> Option<(PktMeta, Nanos)> {
        codel_dequeue(queue, now, &self.params, &mut flow.cvars, drops, &mut self.marks)
    }

    fn marks(&self) -> u64 {
        self.marks
    }
}

/// CoDel's view of one flow: pops from the flow, backlog of the whole qdisc.
impl CodelSource for FlowQueue<'_> {
    fn pop(&mut self) -> Option<(PktMeta, Nanos)> {
        FlowQueue::pop(self)
    }
    fn backlog(&self) -> u64 {
        self.qdisc_backlog()
    }
}

pub type FqCodel = Drr<FqCodelAqm>;

impl FqCodel {
    pub fn new(c: &FqCodelConfig) -> Self {
        let aqm = FqCodelAqm {
            params: CodelParams::new(c.target_ns, c.interval_ns, c.mtu, c.ecn, c.ce_threshold_ns),
            marks: 0,
        };
        Drr::with_aqm(aqm, c.quantum, c.packets, c.bytes, c.memory_limit, Overflow::DropFattest { batch: c.drop_batch_size })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ECN_NOT_ECT;

    fn p(id: u32, flow: u32, size: u32) -> PktMeta {
        PktMeta { id, size, flow, ecn: ECN_NOT_ECT }
    }

    fn order(q: &mut FqCodel, n: usize) -> Vec<u32> {
        let mut d = vec![];
        (0..n).filter_map(|_| q.dequeue(0, &mut d)).map(|m| m.id).collect()
    }

    #[test]
    fn drr_serves_quantum_bytes_per_flow_per_round() {
        // Flow 1: six 1000-byte packets; flow 2: six 500-byte packets. Quantum 1514:
        // flow 1 sends 2 packets per round (2000 > 1514 after the second), flow 2 sends 4
        // (2000 > 1514 after the fourth) — deficits carry over between rounds.
        let mut q = FqCodel::new(&FqCodelConfig::default());
        let mut d = vec![];
        for i in 0..6 {
            q.enqueue(0, p(100 + i, 1, 1000), &mut d);
        }
        for i in 0..6 {
            q.enqueue(0, p(200 + i, 2, 500), &mut d);
        }
        // Round 1 (both new): f1 gets 1514 → 2 pkts (deficit −486), f2 → 4 pkts (−486).
        // Round 2 (old): f1 +1514 = 1028 → 2 pkts (−972); f2 1028 → 2 pkts + empty.
        // Round 3: f1 −972 + 1514 = 542 → 1 pkt (−458); round 4: 1056 → last pkt.
        assert_eq!(order(&mut q, 12), vec![100, 101, 200, 201, 202, 203, 102, 103, 204, 205, 104, 105]);
        assert!(d.is_empty());
        assert_eq!(q.len_packets(), 0);
    }

    #[test]
    fn a_new_flow_is_served_before_backlogged_ones() {
        let mut q = FqCodel::new(&FqCodelConfig::default());
        let mut d = vec![];
        for i in 0..10 {
            q.enqueue(0, p(i, 1, 1500), &mut d);
        }
        assert_eq!(order(&mut q, 2), vec![0, 1]); // flow 1 used its quantum: now on old list
        q.enqueue(0, p(100, 2, 100), &mut d); // sparse flow arrives
        assert_eq!(order(&mut q, 1), vec![100]); // served next, ahead of flow 1's backlog
        assert_eq!(order(&mut q, 1), vec![2]);
        // Having emptied, flow 2 went to the old list behind flow 1 instead of leaving; a
        // packet arriving now finds it still listed, so it is not new again: flow 1 (deficit
        // spent) is topped up and moved behind it, then flow 2 is served from the old list.
        q.enqueue(0, p(101, 2, 100), &mut d);
        assert_eq!(order(&mut q, 2), vec![101, 3]);
    }

    #[test]
    fn overflow_drops_half_the_fattest_flows_backlog_from_its_head() {
        let cfg = FqCodelConfig { packets: Some(10), ..Default::default() };
        let mut q = FqCodel::new(&cfg);
        let mut d = vec![];
        for i in 0..6 {
            q.enqueue(0, p(i, 1, 1500), &mut d); // flow 1: 9000 bytes
        }
        for i in 0..4 {
            q.enqueue(0, p(10 + i, 2, 1000), &mut d); // flow 2: 4000 bytes
        }
        assert!(d.is_empty());
        q.enqueue(0, p(20, 2, 1000), &mut d); // 11 > 10: flow 1 is fattest (9000 bytes)
        // Drop from flow 1's head until >= 4500 bytes gone: 3 packets.
        assert_eq!(d.iter().map(|x| x.id).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(q.len_packets(), 8);
        assert_eq!(q.flows[0].cvars.count, 3);
        // A drop batch of 1 drops one packet per overflow.
        let mut q = FqCodel::new(&FqCodelConfig { packets: Some(3), drop_batch_size: 1, ..Default::default() });
        let mut d = vec![];
        for i in 0..4 {
            q.enqueue(0, p(i, 7, 1500), &mut d);
        }
        assert_eq!(d.iter().map(|x| x.id).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn each_flow_runs_its_own_codel() {
        // Flow 1 has a standing 200 ms queue; flow 2 sends one packet per ms. Only flow 1's
        // packets are dropped.
        let mut q = FqCodel::new(&FqCodelConfig { ecn: false, ..Default::default() });
        let mut d = vec![];
        let mut id = 0;
        for _ in 0..200 {
            q.enqueue(0, p(id, 1, 1500), &mut d);
            id += 1;
        }
        let mut t = 0;
        let mut sojourn2 = vec![];
        for _ in 0..2000 {
            t += 1_000_000;
            q.enqueue(t, p(id, 1, 1500), &mut d);
            id += 1;
            q.enqueue(t, p(id, 2, 100), &mut d);
            id += 1;
            for _ in 0..2 {
                if let Some(m) = q.dequeue(t, &mut d) {
                    if m.flow == 2 {
                        sojourn2.push(q.sojourn_ns().unwrap());
                    }
                }
            }
        }
        assert!(!d.is_empty());
        assert!(d.iter().all(|m| m.flow == 1));
        assert!(sojourn2.iter().all(|&s| s <= 1_000_000), "{:?}", &sojourn2[..10]);
    }
}
