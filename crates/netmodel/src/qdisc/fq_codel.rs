//! FQ-CoDel (RFC 8290), as Linux `sch_fq_codel.c`.
//!
//! Packets are queued per flow; flows are served by deficit round robin with a byte quantum,
//! newly active flows (the "new" list) before the backlogged ones (the "old" list); each flow
//! queue runs its own CoDel (see [`super::codel`]), whose `mtu` test looks at the backlog of
//! the whole qdisc, as in Linux. When the total packet limit (or the optional memory limit) is
//! exceeded, the flow with the largest byte backlog loses packets from its head: at least one,
//! up to half its backlog, at most `drop_batch_size` — and its CoDel `count` grows by as many.
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

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;

use super::codel::{codel_dequeue, CodelParams, CodelSource, CodelVars};
use super::defaults;
use crate::{Nanos, PktMeta};
use crate::queue::Qdisc;

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

struct Flow {
    id: u32,
    q: VecDeque<(PktMeta, Nanos)>,
    backlog: u64,
    deficit: i64,
    cvars: CodelVars,
    /// On the new or the old list (Linux: `!list_empty(&flow->flowchain)`).
    listed: bool,
}

/// CoDel's view of one flow: pops from the flow, backlog of the whole qdisc.
struct FlowSource<'a> {
    q: &'a mut VecDeque<(PktMeta, Nanos)>,
    flow_backlog: &'a mut u64,
    len: &'a mut usize,
    bytes: &'a mut u64,
}

impl CodelSource for FlowSource<'_> {
    fn pop(&mut self) -> Option<(PktMeta, Nanos)> {
        let e = self.q.pop_front()?;
        *self.flow_backlog -= e.0.size as u64;
        *self.len -= 1;
        *self.bytes -= e.0.size as u64;
        Some(e)
    }
    fn backlog(&self) -> u64 {
        *self.bytes
    }
}

pub struct FqCodel {
    flows: Vec<Flow>,
    index: HashMap<u32, usize>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    len: usize,
    bytes: u64,
    limit_packets: Option<u32>,
    limit_bytes: Option<u64>,
    memory_limit: Option<u64>,
    quantum: i64,
    drop_batch: u32,
    params: CodelParams,
    marks: u64,
    sojourn: Option<Nanos>,
}

impl FqCodel {
    pub fn new(c: &FqCodelConfig) -> Self {
        FqCodel {
            flows: Vec::new(),
            index: HashMap::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            len: 0,
            bytes: 0,
            limit_packets: c.packets,
            limit_bytes: c.bytes,
            memory_limit: c.memory_limit,
            quantum: c.quantum as i64,
            drop_batch: c.drop_batch_size.max(1),
            params: CodelParams::new(c.target_ns, c.interval_ns, c.mtu, c.ecn, c.ce_threshold_ns),
            marks: 0,
            sojourn: None,
        }
    }

    fn flow_index(&mut self, id: u32) -> usize {
        if let Some(&i) = self.index.get(&id) {
            return i;
        }
        let i = self.flows.len();
        self.flows.push(Flow { id, q: VecDeque::new(), backlog: 0, deficit: 0, cvars: CodelVars::default(), listed: false });
        self.index.insert(id, i);
        i
    }

    /// `fq_codel_drop`: drop from the head of the fattest flow until half its backlog is
    /// gone (at least one packet, at most `drop_batch`); returns that flow's index.
    fn drop_fat(&mut self, drops: &mut Vec<PktMeta>) -> usize {
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > max || (f.backlog == max && max > 0 && f.id < self.flows[idx].id) {
                max = f.backlog;
                idx = i;
            }
        }
        let threshold = max >> 1;
        let f = &mut self.flows[idx];
        let mut len = 0u64;
        let mut n = 0u32;
        while let Some((p, _)) = f.q.pop_front() {
            len += p.size as u64;
            drops.push(p);
            n += 1;
            if n >= self.drop_batch || len >= threshold {
                break;
            }
        }
        f.cvars.count = f.cvars.count.wrapping_add(n);
        f.backlog -= len;
        self.bytes -= len;
        self.len -= n as usize;
        idx
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, now: Nanos, pkt: PktMeta, drops: &mut Vec<PktMeta>) {
        let i = self.flow_index(pkt.flow);
        let f = &mut self.flows[i];
        f.q.push_back((pkt, now));
        f.backlog += pkt.size as u64;
        if !f.listed {
            f.listed = true;
            f.deficit = self.quantum;
            self.new_flows.push_back(i);
        }
        self.len += 1;
        self.bytes += pkt.size as u64;
        let over = self.limit_packets.is_some_and(|l| self.len as u64 > l as u64)
            || self.limit_bytes.is_some_and(|l| self.bytes > l)
            || self.memory_limit.is_some_and(|l| self.bytes > l);
        if over {
            self.drop_fat(drops);
        }
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<PktMeta>) -> Option<PktMeta> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let i = *(if from_new { &self.new_flows } else { &self.old_flows }).front()?;
            if self.flows[i].deficit <= 0 {
                self.flows[i].deficit += self.quantum;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i);
                continue;
            }
            let Flow { q, backlog, cvars, .. } = &mut self.flows[i];
            let mut src = FlowSource { q, flow_backlog: backlog, len: &mut self.len, bytes: &mut self.bytes };
            match codel_dequeue(&mut src, now, &self.params, cvars, drops, &mut self.marks) {
                None => {
                    // Empty: a new flow takes one pass through the old list (so that it cannot
                    // starve the old ones by going idle and coming back new); otherwise it
                    // leaves the lists.
                    if from_new {
                        self.new_flows.pop_front();
                        if !self.old_flows.is_empty() {
                            self.old_flows.push_back(i);
                        } else {
                            self.flows[i].listed = false;
                        }
                    } else {
                        self.old_flows.pop_front();
                        self.flows[i].listed = false;
                    }
                }
                Some((p, t)) => {
                    self.flows[i].deficit -= p.size as i64;
                    self.sojourn = Some(now - t);
                    return Some(p);
                }
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.len
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
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
