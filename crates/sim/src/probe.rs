//! Latency probes (`scheme: probe`, docs/experiment-file.md "Latency probes"): a flow that
//! sends one small datagram every `interval` from its sending host; the receiving host sends
//! each straight back on the flow's ACK route, and the sender records the round trip in the
//! `probes` table (`netmodel::records::probes`). This is the ping of Flent's RRUL test
//! (Høiland-Jørgensen et al., "Flent: The FLExible Network Tester", VALUETOOLS 2017, §3):
//! the latency a small, unresponsive flow sees beside the load.
//!
//! Probes and echoes cross the same links and queues as every packet (they take their place
//! in a FIFO, their flow's queue in FQ-CoDel), but they are measurement traffic: they are not
//! in the `packets`, `intervals` or `flowstats` rows of any flow, so the load's metrics are
//! those of the load alone. Probes stop at the flow's `stop`; echoes of probes already sent
//! still come back.

use netmodel::records::{probes_table, ProbeLog};
use netmodel::scenario::ProbeConfig;
use netmodel::{PktMeta, ECN_NOT_ECT};

use super::{Endpoint, Kind, Packet, Seg, Sim, ACK_BIT};
use crate::output::Table;
use netmodel::records::NO_RECORD;

/// A probe flow's sending side: its settings and what came back.
pub(super) struct ProbeEndpoint {
    pub cfg: ProbeConfig,
    pub log: ProbeLog,
}

impl ProbeEndpoint {
    pub fn new(cfg: ProbeConfig) -> Self {
        ProbeEndpoint { cfg, log: ProbeLog::default() }
    }
}

impl Sim {
    /// Probe flow `c`'s clock: send one probe now, and come back after the interval (before
    /// the run's end and the flow's stop).
    pub(super) fn probe_tick(&mut self, c: u32) {
        let now = self.now;
        let f = self.conn_flow[c as usize];
        let Some(Endpoint::Probe(p)) = self.conns[c as usize].as_deref_mut().map(|c| &mut c.ep) else { return };
        let seq = p.log.sent(now);
        let (size, interval) = (p.cfg.size, p.cfg.interval_ns);
        self.send_probe(c, f, seq, size, false);
        let stop = self.cfgs[f as usize].stop_ns.unwrap_or(u64::MAX);
        let next = now.saturating_add(interval);
        if next < self.end.min(stop) {
            self.push(next, Kind::App, c);
        }
    }

    /// A probe reached its receiving host: echo it back now. An echo reached the sender:
    /// record the round trip.
    pub(super) fn probe_arrived(&mut self, c: u32, seq: u64, echo: bool, size: u32) {
        let now = self.now;
        let Some(Endpoint::Probe(p)) = self.conns[c as usize].as_deref_mut().map(|c| &mut c.ep) else { return };
        if echo {
            p.log.echoed(seq, now);
        } else {
            let f = self.conn_flow[c as usize];
            self.send_probe(c, f, seq, size, true);
        }
    }

    fn send_probe(&mut self, c: u32, f: u32, seq: u64, size: u32, echo: bool) {
        let route = &self.routes[f as usize];
        let first = if echo { route.1[0] } else { route.0[0] };
        let pkt = Packet { flow: f, sent_ns: self.now, rec: NO_RECORD, size, seg: Seg::Probe { seq, echo } };
        let id = self.pkts.insert(pkt) | if echo { ACK_BIT } else { 0 };
        self.stats.packets += 1;
        self.enqueue(first, PktMeta { id, size, flow: c, ecn: ECN_NOT_ECT });
    }

    /// The `probes` table of this run's probe flows (None without any).
    pub(super) fn probes_table(&self) -> Option<Table> {
        let logs: Vec<(u32, &ProbeLog)> = (0..self.cfgs.len())
            .filter_map(|f| match self.conns[f].as_deref().map(|c| &c.ep) {
                Some(Endpoint::Probe(p)) => Some((f as u32, &p.log)),
                _ => None,
            })
            .collect();
        (!logs.is_empty()).then(|| probes_table(&logs))
    }
}
