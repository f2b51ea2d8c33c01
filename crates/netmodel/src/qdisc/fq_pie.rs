//! FQ-PIE, as Linux `sch_fq_pie.c`: per-flow queues served by deficit round robin (new flows
//! first; the scheduler shared with FQ-CoDel, [`super::drr`]), each with its own PIE state
//! updated every `tupdate` from the flow's own backlog; early drops and ECN marks at enqueue by
//! the arriving packet's flow.
//!
//! As in Linux: an arrival at the total packet limit is dropped (no fat-flow search, unlike
//! FQ-CoDel), ECT packets are marked instead of dropped while their flow's probability is at
//! most `ecn_prob` percent (default 10), ECN is off by default, and exceeding
//! `memory_limit` is only counted, never a reason to drop.
//!
//! Differences from Linux: flows are `PktMeta::flow` exactly (no hash buckets, no
//! collisions; Linux has 1024 buckets); the PIE differences listed in [`super::pie`]; the
//! limit may also be in bytes; quantum and memory in IP bytes.

use serde::Deserialize;

use super::defaults;
use super::drr::{Drr, DrrFlow, FlowAqm, FlowQueue, Overflow};
use super::pie::{calculate_probability, drop_early, process_dequeue, PieParams, PieVars, FIRST_UPDATE_NS, MAX_PROB};
use super::set_ce;
#[cfg(test)]
use super::Qdisc; // the tests' `use super::*`
use crate::{Nanos, PktMeta, Rng};

fn default_limit() -> Option<u32> {
    Some(10_240)
}
fn default_alpha() -> f64 {
    0.125
}
fn default_beta() -> f64 {
    1.25
}
fn default_ecn_prob() -> u32 {
    10
}
fn default_memory() -> Option<u64> {
    Some(defaults::memory_limit())
}

/// `queue: {kind: fq_pie, ...}`. Defaults are Linux `sch_fq_pie`'s.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqPieConfig {
    #[serde(default = "default_limit")]
    pub packets: Option<u32>,
    #[serde(default)]
    pub bytes: Option<u64>,
    #[serde(default = "defaults::ms15")]
    pub target_ns: u64,
    #[serde(default = "defaults::ms15")]
    pub tupdate_ns: u64,
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    #[serde(default = "default_beta")]
    pub beta: f64,
    #[serde(default = "defaults::ms150")]
    pub max_burst_ns: u64,
    #[serde(default)]
    pub ecn: bool,
    /// Mark instead of drop while the flow's probability is at most this many percent.
    #[serde(default = "default_ecn_prob")]
    pub ecn_prob: u32,
    #[serde(default)]
    pub bytemode: bool,
    #[serde(default)]
    pub dq_rate_estimator: bool,
    #[serde(default = "defaults::quantum")]
    pub quantum: u32,
    #[serde(default = "default_memory")]
    pub memory_limit: Option<u64>,
    #[serde(default = "defaults::mtu")]
    pub mtu: u32,
}

impl Default for FqPieConfig {
    fn default() -> Self {
        FqPieConfig {
            packets: default_limit(),
            bytes: None,
            target_ns: defaults::ms15(),
            tupdate_ns: defaults::ms15(),
            alpha: default_alpha(),
            beta: default_beta(),
            max_burst_ns: defaults::ms150(),
            ecn: false,
            ecn_prob: default_ecn_prob(),
            bytemode: false,
            dq_rate_estimator: false,
            quantum: defaults::quantum(),
            memory_limit: default_memory(),
            mtu: defaults::mtu(),
        }
    }
}

/// PIE on each flow of the [`Drr`] scheduler: early drops and marks at enqueue by the flow's
/// own probability, updated every `tupdate` from the flow's own backlog.
pub struct FqPieAqm {
    ecn_prob: u64,
    params: PieParams,
    next_update: Nanos,
    rng: Rng,
    marks: u64,
}

/// One flow's PIE variables.
pub struct PieFlow {
    vars: PieVars,
}

impl FlowAqm for FqPieAqm {
    type State = PieFlow;

    fn new_state(&self) -> PieFlow {
        PieFlow { vars: PieVars::new(&self.params) }
    }

    /// Run the per-flow probability updates due by `now` (every flow every `tupdate`).
    fn catch_up(&mut self, now: Nanos, flows: &mut [DrrFlow<PieFlow>]) {
        while self.next_update <= now {
            for f in flows.iter_mut() {
                calculate_probability(&self.params, &mut f.state.vars, f.backlog);
            }
            self.next_update += self.params.tupdate_ns;
        }
    }

    fn admit(&mut self, f: &mut DrrFlow<PieFlow>, pkt: &mut PktMeta) -> bool {
        let vars = &mut f.state.vars;
        !drop_early(&self.params, vars, f.backlog, pkt.size, &mut self.rng)
            || (self.params.ecn && vars.prob <= self.ecn_prob && set_ce(pkt, &mut self.marks))
    }

    fn rejected(&mut self, f: &mut PieFlow) {
        f.vars.accu_prob = 0;
    }

    fn dequeue(
        &mut self,
        now: Nanos,
        f: &mut PieFlow,
        queue: &mut FlowQueue<'_>,
        _drops: &mut Vec<PktMeta>,
    ) -> Option<(PktMeta, Nanos)> {
        let (p, t) = queue.pop()?;
        process_dequeue(&self.params, &mut f.vars, now, t, p.size, queue.flow_backlog());
        Some((p, t))
    }

    fn marks(&self) -> u64 {
        self.marks
    }
}

/// `overmemory` counts arrivals while over the memory limit (as Linux's).
pub type FqPie = Drr<FqPieAqm>;

impl FqPie {
    pub fn new(c: &FqPieConfig, rng: Rng) -> Self {
        let params = PieParams::new(c.target_ns, c.tupdate_ns, c.alpha, c.beta, c.max_burst_ns, c.ecn, c.bytemode, c.dq_rate_estimator, c.mtu);
        let aqm = FqPieAqm {
            ecn_prob: (MAX_PROB / 100) * c.ecn_prob as u64,
            next_update: if c.tupdate_ns == 0 { Nanos::MAX } else { FIRST_UPDATE_NS },
            params,
            rng,
            marks: 0,
        };
        Drr::with_aqm(aqm, c.quantum, c.packets, c.bytes, c.memory_limit, Overflow::DropArrival)
    }

    /// Probability of flow `id` in [0, 1] (0 for an unknown flow).
    pub fn probability(&self, id: u32) -> f64 {
        self.flow(id).map_or(0.0, |f| f.vars.probability())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ECN_NOT_ECT;

    const MS: u64 = 1_000_000;

    #[test]
    fn only_the_flow_over_target_gets_a_probability_and_drops() {
        // Flow 1 sends twice the 1-packet-per-12-ms service rate; flow 2 one packet per 48 ms.
        let mut q = FqPie::new(&FqPieConfig::default(), Rng::new(3, 4));
        let mut drops = vec![];
        let mut id = 0;
        let mut t = 0;
        let mut max_sojourn2 = 0;
        while t < 10_000 * MS {
            for _ in 0..2 {
                q.enqueue(t, PktMeta { id, size: 1500, flow: 1, ecn: ECN_NOT_ECT }, &mut drops);
                id += 1;
            }
            if t % (48 * MS) == 0 {
                q.enqueue(t, PktMeta { id, size: 1500, flow: 2, ecn: ECN_NOT_ECT }, &mut drops);
                id += 1;
            }
            if let Some(p) = q.dequeue(t, &mut drops) {
                if p.flow == 2 {
                    max_sojourn2 = max_sojourn2.max(q.sojourn_ns().unwrap());
                }
            }
            t += 12 * MS;
        }
        assert!(!drops.is_empty() && drops.iter().all(|d| d.flow == 1));
        assert!(q.probability(1) > 0.2, "{}", q.probability(1));
        assert_eq!(q.probability(2), 0.0);
        // Flow 2 waits at most for two of flow 1's packets (a quantum of 1514 bytes lets a
        // flow send two 1500-byte packets in a round), while flow 1 queues ~target.
        assert!(max_sojourn2 <= 24 * MS, "{max_sojourn2}");
    }

    #[test]
    fn arrivals_at_the_total_limit_are_dropped() {
        let mut q = FqPie::new(&FqPieConfig { packets: Some(2), ..Default::default() }, Rng::new(0, 0));
        let mut drops = vec![];
        for (id, flow) in [(0, 1), (1, 1), (2, 2)] {
            q.enqueue(0, PktMeta { id, size: 100, flow, ecn: ECN_NOT_ECT }, &mut drops);
        }
        assert_eq!(drops.iter().map(|d| d.id).collect::<Vec<_>>(), vec![2]);
        // DRR: new flow 1 first.
        let mut d = vec![];
        assert_eq!(q.dequeue(0, &mut d).unwrap().id, 0);
    }
}
