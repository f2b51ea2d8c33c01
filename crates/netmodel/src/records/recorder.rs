//! Recorders: append-only columns filled by a backend's event loop (the simulator's virtual
//! time or the emulator's engine and agents). Per-packet records are optional; per-interval
//! aggregates, delay histograms and per-flow totals are always kept, so every metric is
//! available from a run without per-packet records.

use super::columns::{Col, Table, NULL_I64};
use super::schema::{self, CA_STATES, DROP_REASONS};
use crate::link::{DropReason, Link};

/// Returned by [`Recorder::sent`] when per-packet records are off.
pub const NO_RECORD: u32 = u32::MAX;

/// Per-flow, per-bin aggregate (bin = floor(t / sample_interval)).
#[derive(Clone, Copy, Default)]
struct Bin {
    sent_bytes: u64,
    sent_pkts: u64,
    delivered_bytes: u64,
    delivered_pkts: u64,
    delay_sum_ns: u64,
    dropped_bytes: u64,
    dropped_pkts: u64,
}

#[derive(Clone, Default)]
struct FlowTotals {
    sent_bytes: u64,
    sent_pkts: u64,
    delivered_bytes: u64,
    delivered_pkts: u64,
    dropped_bytes: u64,
    dropped_pkts: u64,
    retrans_pkts: u64,
    delay_sum_ns: u64,
    first_sent: Option<u64>,
    last_sent: Option<u64>,
    first_arrival: Option<u64>,
    last_arrival: Option<u64>,
}

/// One sender-state sample (a `flows` row), in the table's units: what the simulator's TCP
/// endpoint reports and what the emulator reads from `TCP_INFO`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowRow {
    /// Congestion window, packets.
    pub cwnd: u32,
    /// Slow-start threshold, packets; None = infinite.
    pub ssthresh: Option<u32>,
    pub srtt_us: f64,
    pub rttvar_us: f64,
    /// Windowed minimum RTT (the simulator: 0 before a sample; `TCP_INFO`: NaN without one).
    pub min_rtt_us: f64,
    pub inflight: u32,
    /// Packets delivered (ACKed or SACKed).
    pub delivered: u64,
    pub bytes_acked: u64,
    pub retrans: u64,
    pub lost: u64,
    /// Index into [`CA_STATES`].
    pub ca_state: u8,
    /// NaN: not reported.
    pub pacing_rate_bps: f64,
    pub delivery_rate_bps: f64,
}

/// The `flows` table: sender samples plus `cc_<name>` columns of the algorithm's own values
/// (NaN in rows that lack one), in order of first appearance.
#[derive(Default)]
pub struct FlowSamples {
    time: Vec<i64>,
    flow: Vec<u32>,
    cwnd: Vec<u32>,
    ssthresh: Vec<i64>,
    srtt: Vec<f64>,
    rttvar: Vec<f64>,
    min_rtt: Vec<f64>,
    inflight: Vec<u32>,
    delivered: Vec<u64>,
    bytes_acked: Vec<u64>,
    retrans: Vec<u64>,
    lost: Vec<u64>,
    state: Vec<u8>,
    pacing: Vec<f64>,
    delivery: Vec<f64>,
    cc: Vec<(&'static str, Vec<f64>)>,
}

impl FlowSamples {
    pub fn push(&mut self, now: u64, flow: u32, s: &FlowRow, cc: &[(&'static str, f64)]) {
        let row = self.time.len();
        self.time.push(now as i64);
        self.flow.push(flow);
        self.cwnd.push(s.cwnd);
        self.ssthresh.push(s.ssthresh.map_or(NULL_I64, |x| x as i64));
        self.srtt.push(s.srtt_us);
        self.rttvar.push(s.rttvar_us);
        self.min_rtt.push(s.min_rtt_us);
        self.inflight.push(s.inflight);
        self.delivered.push(s.delivered);
        self.bytes_acked.push(s.bytes_acked);
        self.retrans.push(s.retrans);
        self.lost.push(s.lost);
        self.state.push(s.ca_state);
        self.pacing.push(s.pacing_rate_bps);
        self.delivery.push(s.delivery_rate_bps);
        for col in self.cc.iter_mut() {
            col.1.push(f64::NAN);
        }
        for &(name, v) in cc {
            match self.cc.iter_mut().find(|c| c.0 == name) {
                Some(c) => c.1[row] = v,
                None => {
                    let mut c = vec![f64::NAN; row + 1];
                    c[row] = v;
                    self.cc.push((name, c));
                }
            }
        }
    }

    /// Declare a `cc_<name>` column before any sample carries it (it stays NaN until then).
    pub fn declare_cc(&mut self, name: &'static str) {
        if !self.cc.iter().any(|c| c.0 == name) {
            self.cc.push((name, vec![f64::NAN; self.time.len()]));
        }
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    pub fn table(self) -> Table {
        let mut t = schema::table("flows", schema::FLOWS, vec![
            Col::I64(self.time),
            Col::U32(self.flow),
            Col::U32(self.cwnd),
            Col::I64(self.ssthresh),
            Col::F64(self.srtt),
            Col::F64(self.rttvar),
            Col::F64(self.min_rtt),
            Col::U32(self.inflight),
            Col::U64(self.delivered),
            Col::U64(self.bytes_acked),
            Col::U64(self.retrans),
            Col::U64(self.lost),
            Col::Cat(self.state, CA_STATES),
            Col::F64(self.pacing),
            Col::F64(self.delivery),
        ]);
        for (name, v) in self.cc {
            t = t.col(&format!("cc_{name}"), Col::F64(v));
        }
        t
    }
}

/// The `queues` table: one row per link per sample instant.
#[derive(Default)]
pub struct QueueSamples {
    time: Vec<i64>,
    link: Vec<u32>,
    packets: Vec<u32>,
    bytes: Vec<u64>,
    drops: Vec<u64>,
    dropped_bytes: Vec<u64>,
    tx_bytes: Vec<u64>,
    loss_drops: Vec<u64>,
    marks: Vec<u64>,
    sojourn_us: Vec<f64>,
}

impl QueueSamples {
    /// Sample link `id` at `now` (call `Link::sync(now)` first).
    pub fn push(&mut self, now: u64, id: u32, l: &Link) {
        self.time.push(now as i64);
        self.link.push(id);
        self.packets.push(l.queue_packets() as u32);
        self.bytes.push(l.queue_bytes());
        self.drops.push(l.stats.dropped_pkts);
        self.dropped_bytes.push(l.stats.dropped_bytes);
        self.tx_bytes.push(l.stats.tx_bytes);
        self.loss_drops.push(l.stats.lost_pkts);
        self.marks.push(l.queue_marks());
        self.sojourn_us.push(l.queue_sojourn_ns().map_or(f64::NAN, |s| s as f64 / 1000.0));
    }

    pub fn table(self) -> Table {
        schema::table("queues", schema::QUEUES, vec![
            Col::I64(self.time),
            Col::U32(self.link),
            Col::U32(self.packets),
            Col::U64(self.bytes),
            Col::U64(self.drops),
            Col::U64(self.dropped_bytes),
            Col::U64(self.tx_bytes),
            Col::U64(self.loss_drops),
            Col::U64(self.marks),
            Col::F64(self.sojourn_us),
        ])
    }
}

/// Data packets (optional per-packet rows) and what is always aggregated from them:
/// `intervals` (sent binned by send time, delivered and delay by arrival time, dropped by
/// drop time), `delay_hist` and `flowstats`; plus the flow and queue samples.
pub struct Recorder {
    bin_ns: u64,
    hist_bucket_ns: u64,
    record_packets: bool,
    p_flow: Vec<u32>,
    p_seq: Vec<u64>,
    p_size: Vec<u32>,
    p_retrans: Vec<bool>,
    p_sent: Vec<i64>,
    p_arrival: Vec<i64>,
    p_drop_link: Vec<i32>,
    p_drop: Vec<i64>,
    /// Index into [`DROP_REASONS`].
    p_drop_reason: Vec<u8>,
    bins: Vec<Vec<Bin>>,
    hist: Vec<Vec<u64>>,
    totals: Vec<FlowTotals>,
    pub flows: FlowSamples,
    pub queues: QueueSamples,
}

impl Recorder {
    pub fn new(n_flows: usize, bin_ns: u64, hist_bucket_ns: u64, record_packets: bool) -> Self {
        Recorder {
            bin_ns: bin_ns.max(1),
            hist_bucket_ns: hist_bucket_ns.max(1),
            record_packets,
            p_flow: vec![],
            p_seq: vec![],
            p_size: vec![],
            p_retrans: vec![],
            p_sent: vec![],
            p_arrival: vec![],
            p_drop_link: vec![],
            p_drop: vec![],
            p_drop_reason: vec![],
            bins: vec![Vec::new(); n_flows],
            hist: vec![Vec::new(); n_flows],
            totals: vec![FlowTotals::default(); n_flows],
            flows: FlowSamples::default(),
            queues: QueueSamples::default(),
        }
    }

    fn bin(&mut self, flow: u32, t: u64) -> &mut Bin {
        let b = (t / self.bin_ns) as usize;
        let v = &mut self.bins[flow as usize];
        if v.len() <= b {
            v.resize(b + 1, Bin::default());
        }
        &mut v[b]
    }

    /// A data packet left its sender. Returns its packet-record index ([`NO_RECORD`] if off).
    pub fn sent(&mut self, now: u64, flow: u32, seq: u64, size: u32, retrans: bool) -> u32 {
        let bin = self.bin(flow, now);
        bin.sent_bytes += size as u64;
        bin.sent_pkts += 1;
        let t = &mut self.totals[flow as usize];
        t.sent_bytes += size as u64;
        t.sent_pkts += 1;
        t.retrans_pkts += retrans as u64;
        t.first_sent.get_or_insert(now);
        t.last_sent = Some(now);
        if !self.record_packets {
            return NO_RECORD;
        }
        let idx = self.p_flow.len() as u32;
        self.p_flow.push(flow);
        self.p_seq.push(seq);
        self.p_size.push(size);
        self.p_retrans.push(retrans);
        self.p_sent.push(now as i64);
        self.p_arrival.push(NULL_I64);
        self.p_drop_link.push(-1);
        self.p_drop.push(NULL_I64);
        self.p_drop_reason.push(0);
        idx
    }

    /// A data packet sent at `sent` reached its receiver at `now`.
    pub fn delivered(&mut self, now: u64, flow: u32, size: u32, sent: u64, rec: u32) {
        let delay = now - sent;
        let bin = self.bin(flow, now);
        bin.delivered_bytes += size as u64;
        bin.delivered_pkts += 1;
        bin.delay_sum_ns += delay;
        let t = &mut self.totals[flow as usize];
        t.delivered_bytes += size as u64;
        t.delivered_pkts += 1;
        t.delay_sum_ns += delay;
        t.first_arrival.get_or_insert(now);
        t.last_arrival = Some(now);
        let b = (delay / self.hist_bucket_ns) as usize;
        let h = &mut self.hist[flow as usize];
        if h.len() <= b {
            h.resize(b + 1, 0);
        }
        h[b] += 1;
        if rec != NO_RECORD {
            self.p_arrival[rec as usize] = now as i64;
        }
    }

    /// A data packet was dropped by link `link` at `now`, by its queue, its loss model or its
    /// shared channel.
    pub fn dropped(&mut self, now: u64, flow: u32, size: u32, link: u32, rec: u32, why: DropReason) {
        let bin = self.bin(flow, now);
        bin.dropped_bytes += size as u64;
        bin.dropped_pkts += 1;
        let t = &mut self.totals[flow as usize];
        t.dropped_bytes += size as u64;
        t.dropped_pkts += 1;
        if rec != NO_RECORD {
            self.p_drop_link[rec as usize] = link as i32;
            self.p_drop[rec as usize] = now as i64;
            self.p_drop_reason[rec as usize] = match why {
                DropReason::Queue => 1,
                DropReason::Loss => 2,
                DropReason::Channel => 4,
            };
        }
    }

    /// The results tables: packets (if recorded), flows, queues, intervals, delay_hist,
    /// flowstats. Per flow: `start` time, `completed` time (finite flows: all bytes
    /// acknowledged) and `app_bytes` (payload bytes acknowledged) from the backend.
    pub fn finish(self, start: &[u64], completed: &[Option<u64>], app_bytes: &[u64]) -> Vec<Table> {
        let mut tables = Vec::new();
        if self.record_packets {
            tables.push(schema::table("packets", schema::PACKETS, vec![
                Col::U32(self.p_flow),
                Col::U64(self.p_seq),
                Col::U32(self.p_size),
                Col::Bool(self.p_retrans),
                Col::I64(self.p_sent),
                Col::I64(self.p_arrival),
                Col::I32(self.p_drop_link),
                Col::I64(self.p_drop),
                Col::Cat(self.p_drop_reason, DROP_REASONS),
            ]));
        }
        tables.push(self.flows.table());
        tables.push(self.queues.table());
        let (mut ib, mut iflow) = (vec![], vec![]);
        let (mut isb, mut isp, mut idb, mut idp, mut ids, mut irb, mut irp) =
            (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
        for (f, bins) in self.bins.iter().enumerate() {
            for (b, r) in bins.iter().enumerate() {
                if r.sent_pkts == 0 && r.delivered_pkts == 0 && r.dropped_pkts == 0 {
                    continue;
                }
                ib.push(b as i64);
                iflow.push(f as u32);
                isb.push(r.sent_bytes);
                isp.push(r.sent_pkts);
                idb.push(r.delivered_bytes);
                idp.push(r.delivered_pkts);
                ids.push(r.delay_sum_ns);
                irb.push(r.dropped_bytes);
                irp.push(r.dropped_pkts);
            }
        }
        tables.push(schema::table("intervals", schema::INTERVALS, vec![
            Col::I64(ib),
            Col::U32(iflow),
            Col::U64(isb),
            Col::U64(isp),
            Col::U64(idb),
            Col::U64(idp),
            Col::U64(ids),
            Col::U64(irb),
            Col::U64(irp),
        ]));
        let (mut hf, mut hb, mut hc) = (vec![], vec![], vec![]);
        for (f, h) in self.hist.iter().enumerate() {
            for (b, &c) in h.iter().enumerate() {
                if c > 0 {
                    hf.push(f as u32);
                    hb.push(b as u32);
                    hc.push(c);
                }
            }
        }
        tables.push(schema::table("delay_hist", schema::DELAY_HIST, vec![Col::U32(hf), Col::U32(hb), Col::U64(hc)]));
        let n = self.totals.len();
        let opt = |v: Option<u64>| v.map_or(NULL_I64, |x| x as i64);
        let t = &self.totals;
        let u = |f: fn(&FlowTotals) -> u64| Col::U64(t.iter().map(f).collect());
        let i = |f: fn(&FlowTotals) -> Option<u64>| Col::I64(t.iter().map(|x| opt(f(x))).collect());
        tables.push(schema::table("flowstats", schema::FLOWSTATS, vec![
            Col::U32((0..n as u32).collect()),
            u(|x| x.sent_bytes),
            u(|x| x.sent_pkts),
            u(|x| x.delivered_bytes),
            u(|x| x.delivered_pkts),
            u(|x| x.dropped_bytes),
            u(|x| x.dropped_pkts),
            u(|x| x.retrans_pkts),
            i(|x| x.first_sent),
            i(|x| x.last_sent),
            i(|x| x.first_arrival),
            i(|x| x.last_arrival),
            u(|x| x.delay_sum_ns),
            Col::U64(app_bytes.to_vec()),
            Col::I64(start.iter().map(|&s| s as i64).collect()),
            Col::I64(completed.iter().map(|&c| opt(c)).collect()),
        ]));
        tables
    }
}

/// One short-flow connection (a `conns` row).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnRow {
    /// Connection id (numbered after the resolved flows).
    pub conn: u32,
    /// Its template flow.
    pub flow: u32,
    pub size: u64,
    pub start_ns: u64,
    pub completed_ns: Option<u64>,
    pub acked: u64,
    pub retrans: u64,
}

/// The `conns` table.
pub fn conns_table(rows: &[ConnRow]) -> Table {
    schema::table("conns", schema::CONNS, vec![
        Col::U32(rows.iter().map(|l| l.conn).collect()),
        Col::U32(rows.iter().map(|l| l.flow).collect()),
        Col::U64(rows.iter().map(|l| l.size).collect()),
        Col::I64(rows.iter().map(|l| l.start_ns as i64).collect()),
        Col::I64(rows.iter().map(|l| l.completed_ns.map_or(NULL_I64, |t| t as i64)).collect()),
        Col::U64(rows.iter().map(|l| l.acked).collect()),
        Col::U64(rows.iter().map(|l| l.retrans).collect()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn col<'a>(t: &'a [Table], table: &str, c: &str) -> &'a Col {
        t.iter().find(|x| x.name == table).and_then(|x| x.get(c)).unwrap()
    }

    fn u64s(c: &Col) -> Vec<u64> {
        match c {
            Col::U64(v) => v.clone(),
            _ => panic!("not u64"),
        }
    }

    fn i64s(c: &Col) -> Vec<i64> {
        match c {
            Col::I64(v) => v.clone(),
            _ => panic!("not i64"),
        }
    }

    #[test]
    fn intervals_bin_sends_by_send_time_and_deliveries_by_arrival_time() {
        // 10 ms bins: sent at 5 ms (bin 0), delivered at 23 ms (bin 2) after 18 ms; another
        // sent at 12 ms (bin 1) and dropped at 31 ms (bin 3).
        let mut r = Recorder::new(1, 10 * MS, MS, true);
        let a = r.sent(5 * MS, 0, 0, 1500, false);
        let b = r.sent(12 * MS, 0, 1448, 1500, true);
        r.delivered(23 * MS, 0, 1500, 5 * MS, a);
        r.dropped(31 * MS, 0, 1500, 4, b, DropReason::Loss);
        let t = r.finish(&[0], &[None], &[1448]);
        assert_eq!(i64s(col(&t, "intervals", "bin")), vec![0, 1, 2, 3]);
        assert_eq!(u64s(col(&t, "intervals", "sent_pkts")), vec![1, 1, 0, 0]);
        assert_eq!(u64s(col(&t, "intervals", "delivered_bytes")), vec![0, 0, 1500, 0]);
        assert_eq!(u64s(col(&t, "intervals", "delay_sum_ns")), vec![0, 0, 18 * MS, 0]);
        assert_eq!(u64s(col(&t, "intervals", "dropped_pkts")), vec![0, 0, 0, 1]);
        // one-way delay 18 ms in 1 ms buckets
        assert!(matches!(col(&t, "delay_hist", "bucket"), Col::U32(v) if v == &vec![18]));
        assert_eq!(u64s(col(&t, "flowstats", "retrans_pkts")), vec![1]);
        assert_eq!(i64s(col(&t, "flowstats", "last_arrival_ns")), vec![23 * MS as i64]);
        assert_eq!(i64s(col(&t, "flowstats", "completed_ns")), vec![NULL_I64]);
        assert!(matches!(col(&t, "packets", "drop_reason"), Col::Cat(v, _) if v == &vec![0, 2]));
        assert!(matches!(col(&t, "packets", "drop_link"), Col::I32(v) if v == &vec![-1, 4]));
    }

    #[test]
    fn without_packet_records_the_summary_tables_are_the_same() {
        let run = |rec: bool| {
            let mut r = Recorder::new(2, 10 * MS, MS, rec);
            for k in 0..50u64 {
                let i = r.sent(k * 3 * MS, (k % 2) as u32, k * 1448, 1500, k % 7 == 0);
                if k % 5 == 0 {
                    r.dropped(k * 3 * MS + 4 * MS, (k % 2) as u32, 1500, 1, i, DropReason::Queue);
                } else {
                    r.delivered(k * 3 * MS + (10 + k) * MS, (k % 2) as u32, 1500, k * 3 * MS, i);
                }
            }
            r.finish(&[0, 0], &[None, None], &[0, 0])
        };
        let (on, off) = (run(true), run(false));
        assert_eq!(on.len(), off.len() + 1);
        for name in ["intervals", "delay_hist", "flowstats"] {
            let (a, b) = (on.iter().find(|t| t.name == name).unwrap(), off.iter().find(|t| t.name == name).unwrap());
            for ((na, ca), (nb, cb)) in a.cols.iter().zip(&b.cols) {
                assert_eq!(na, nb);
                assert_eq!(ca.le_bytes(), cb.le_bytes(), "{name}.{na}");
            }
        }
    }

    #[test]
    fn flow_samples_fill_missing_cc_values_with_nan() {
        let mut f = FlowSamples::default();
        f.push(0, 0, &FlowRow::default(), &[]);
        f.push(10, 0, &FlowRow { ssthresh: Some(7), ..Default::default() }, &[("x", 1.0)]);
        f.declare_cc("y");
        let t = f.table();
        assert!(matches!(t.get("cc_x"), Some(Col::F64(v)) if v[0].is_nan() && v[1] == 1.0));
        assert!(matches!(t.get("cc_y"), Some(Col::F64(v)) if v.len() == 2 && v.iter().all(|x| x.is_nan())));
        assert!(matches!(t.get("ssthresh"), Some(Col::I64(v)) if v == &vec![NULL_I64, 7]));
    }
}
