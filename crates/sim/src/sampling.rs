//! What the event loop records besides the packets' own fates (a child module of `engine.rs`):
//! the periodic `flows` and `queues` samples, the chunks a long run hands over, and the
//! run's output tables at the end.

use netmodel::records::{conns_table, QueueRow};

use super::{Endpoint, Kind, Sim};
use crate::output::Output;

impl Sim {
    /// Tell the recorder how many `flows` and `queues` rows the run will make, so their
    /// columns are reserved once instead of grown (`netmodel::records::FlowSamples::expect`):
    /// a row per link and one per sampled flow (TCP or datagram; an upper bound, as a flow
    /// may start late or stop) at every instant `0, s, 2s, … ≤ end`.
    pub(super) fn expect_samples(&mut self) {
        let instants = (self.end / self.sample_ns.max(1)).saturating_add(1) as usize;
        let sampled = self
            .conns
            .iter()
            .filter(|c| matches!(c.as_deref().map(|c| &c.ep), Some(Endpoint::Tcp { .. } | Endpoint::Dgram(_))))
            .count();
        self.rec.flows.expect(sampled.saturating_mul(instants));
        self.rec.queues.expect(self.links.len().saturating_mul(instants));
        // interval bins have the sample interval's width (Recorder::new)
        self.rec.expect_bins(instants);
    }

    pub(super) fn on_sample(&mut self) {
        let now = self.now;
        // Both scans read one cold structure per flow or link: prefetch a few ahead, in two
        // stages (the structure, then what it points to).
        const AHEAD: usize = 4;
        let n = self.cfgs.len();
        for f in 0..n {
            if let Some(c) = self.conns.get(f + 2 * AHEAD).and_then(|c| c.as_deref()) {
                netmodel::prefetch(c, 128);
                netmodel::prefetch(std::ptr::addr_of!(c.active), 8);
            }
            if let Some(Endpoint::Tcp { sender, .. }) = self.conns.get(f + AHEAD).and_then(|c| c.as_deref()).map(|c| &c.ep) {
                sender.prefetch_sample();
            }
            let Some(conn) = self.conns[f].as_deref() else { continue };
            if let Endpoint::Dgram(_) = conn.ep {
                self.dgram_sample(f as u32);
                continue;
            }
            let (true, Endpoint::Tcp { sender, .. }) = (conn.active, &conn.ep) else { continue };
            let s = sender.sample(now);
            self.cc_scratch.clear();
            sender.cc_sample(&mut self.cc_scratch);
            self.rec.flows.push(now, f as u32, &s.row(), &self.cc_scratch);
        }
        let nl = self.links.len();
        for l in 0..nl {
            if l + 2 * AHEAD < nl && !self.quiet[l + 2 * AHEAD] {
                self.links[l + 2 * AHEAD].prefetch();
            }
            if l + AHEAD < nl && !self.quiet[l + AHEAD] {
                self.links[l + AHEAD].prefetch_parts();
            }
            // A link quiescent at its last sample and not offered a packet since has the same
            // row: no need to bring it up to now (thousands of idle access links).
            if self.quiet[l] {
                self.rec.queues.push_row(now, l as u32, &self.quiet_rows[l]);
                continue;
            }
            // Serialisations that ended by now may have dequeued (and, for AQMs, dropped).
            self.links[l].sync(now);
            self.collect_drops(l as u32);
            let r = QueueRow::of(&self.links[l]);
            self.rec.queues.push_row(now, l as u32, &r);
            if self.links[l].quiescent() {
                self.quiet[l] = true;
                self.quiet_rows[l] = r;
            }
        }
        let next = now + self.sample_ns;
        if next <= self.end {
            self.push(next, Kind::Sample, 0);
        }
    }

    /// Run to the end (if not done yet) and build the output tables.
    pub fn finish(mut self) -> Output {
        self.run_until(self.end);
        let mut stats = std::mem::take(&mut self.stats);
        stats.sim_time_ns = self.end;
        stats.bottleneck_packets =
            self.bottlenecks.iter().map(|&b| self.links[b as usize].stats.tx_pkts).sum();
        stats.data_in_flight_at_end = self.data_in_net;
        let end = self.end;
        stats.delay_switches = self
            .links
            .iter_mut()
            .enumerate()
            .filter_map(|(i, l)| {
                let steps = l.delay_steps(end);
                (!steps.is_empty()).then_some(crate::output::DelaySwitches { link: i as u32, steps })
            })
            .collect();
        stats.random_losses = self.links.iter().map(|l| l.stats.lost_pkts).collect();
        debug_assert!(self.pkts.live() as u64 >= self.data_in_net);
        let n = self.cfgs.len();
        // Short flows still open at the end.
        for i in 0..self.conn_log.len() {
            if let Some(Endpoint::Tcp { sender, .. }) = self.conns[n + i].as_deref().map(|c| &c.ep) {
                let s = sender.sample(end);
                self.conn_log[i].acked = s.bytes_acked;
                self.conn_log[i].retrans = s.retrans;
            }
        }
        let start: Vec<u64> = self.cfgs.iter().map(|f| f.start_ns).collect();
        let mut completed = vec![None; n];
        let mut app = vec![0u64; n];
        for f in 0..n {
            match self.conns[f].as_deref().map(|c| &c.ep) {
                Some(Endpoint::Tcp { sender, .. }) => {
                    completed[f] = sender.completed_at();
                    app[f] = sender.sample(end).bytes_acked;
                }
                Some(Endpoint::Udp { delivered_payload, .. }) => app[f] = *delivered_payload,
                Some(Endpoint::Dgram(d)) => app[f] = d.delivered_bytes(),
                Some(Endpoint::Probe(_)) | None => {}
            }
        }
        for l in &self.conn_log {
            app[l.flow as usize] += l.acked;
        }
        if let Some(cap) = self.capture.take() {
            stats.capture = Some(cap.finish());
        }
        let late = self.rec.late_fates();
        let probes = self.probes_table();
        let mut tables = self.rec.finish(&start, &completed, &app);
        if self.cfgs.iter().any(|f| f.arrivals.is_some()) {
            tables.push(conns_table(&self.conn_log));
        }
        tables.extend(probes);
        Output { tables, stats, late }
    }

    /// Hand over the `packets`, `flows` and `queues` rows recorded so far, in chunks of at
    /// least `min_rows` rows (`netmodel::records::Recorder::drain`), so that a long run holds
    /// a bounded number of them; `finish` then returns the rest.
    pub fn drain_records(&mut self, min_rows: usize) -> Vec<crate::output::Table> {
        self.rec.drain(min_rows)
    }

    /// Rows of `packets`, `flows` and `queues` held now.
    pub fn held_rows(&self) -> [(&'static str, usize); 3] {
        self.rec.held_rows()
    }
}
