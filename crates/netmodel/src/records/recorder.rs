//! Recorders: append-only columns filled by a backend's event loop (the simulator's virtual
//! time or the emulator's engine and agents). Per-packet records are optional; per-interval
//! aggregates, delay histograms and per-flow totals are always kept, so every metric is
//! available from a run without per-packet records.

use super::columns::{Col, Table, NULL_I64};
use super::room;
use super::schema::{self, CA_STATES, DROP_REASONS};
use crate::link::{DropReason, Link};

/// Room for `cap` values in each of the columns named ([`room::reserve_to`]).
macro_rules! reserve {
    ($cap:expr; $($col:expr),+ $(,)?) => { $(room::reserve_to(&mut $col, $cap);)+ };
}

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

/// Whether two `cc_<name>` names are the same: one literal gives the same address, so compare
/// addresses before bytes (a thousand flows x seven values per sample).
#[inline]
fn same_name(a: &'static str, b: &'static str) -> bool {
    std::ptr::eq(a, b) || a == b
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
    /// Rows the run is expected to record in all, and handed over so far.
    ahead: room::Ahead,
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
        for (k, &(name, v)) in cc.iter().enumerate() {
            // Flows of one scheme give their values in one order, that of the columns: try
            // column k before searching by name.
            if let Some(c) = self.cc.get_mut(k).filter(|c| same_name(c.0, name)) {
                c.1[row] = v;
                continue;
            }
            match self.cc.iter_mut().find(|c| same_name(c.0, name)) {
                Some(c) => c.1[row] = v,
                None => {
                    let mut c = room::filled(row + 1, f64::NAN, self.time.capacity());
                    c[row] = v;
                    self.cc.push((name, c));
                }
            }
        }
    }

    /// Declare a `cc_<name>` column before any sample carries it (it stays NaN until then).
    pub fn declare_cc(&mut self, name: &'static str) {
        if !self.cc.iter().any(|c| c.0 == name) {
            self.cc.push((name, room::filled(self.time.len(), f64::NAN, self.time.capacity())));
        }
    }

    /// The run will record about `rows` rows in all (an upper bound: the simulator's flows
    /// times its sample instants): room for them is made now, up to [`room::AHEAD_ROWS`],
    /// and after each chunk handed over ([`FlowSamples::take`]) for as many as it held.
    pub fn expect(&mut self, rows: usize) {
        let room;
        (self.ahead, room) = room::Ahead::expecting(rows);
        self.reserve_rows(room);
    }

    /// Room for `cap` rows in every column.
    fn reserve_rows(&mut self, cap: usize) {
        reserve!(cap; self.time, self.flow, self.cwnd, self.ssthresh, self.srtt, self.rttvar, self.min_rtt,
                 self.inflight, self.delivered, self.bytes_acked, self.retrans, self.lost, self.state,
                 self.pacing, self.delivery);
        for c in &mut self.cc {
            room::reserve_to(&mut c.1, cap);
        }
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Hand over the rows recorded so far as a table (a chunk of `flows`): the `cc_<name>`
    /// columns known so far stay declared, so later rows keep their order.
    pub fn take(&mut self) -> Table {
        let cc = self.cc.iter().map(|c| (c.0, Vec::new())).collect();
        let (ahead, room) = self.ahead.after_chunk(self.len());
        let t = std::mem::replace(self, FlowSamples { cc, ahead, ..Default::default() }).table();
        self.reserve_rows(room);
        t
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

/// The values of one `queues` row but its time and link.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueRow {
    pub packets: u32,
    pub bytes: u64,
    pub drops: u64,
    pub dropped_bytes: u64,
    pub tx_bytes: u64,
    pub loss_drops: u64,
    pub marks: u64,
    pub sojourn_us: f64,
}

impl QueueRow {
    /// Link `l` as it is (call `Link::sync(now)` first).
    pub fn of(l: &Link) -> Self {
        QueueRow {
            packets: l.queue_packets() as u32,
            bytes: l.queue_bytes(),
            drops: l.stats.dropped_pkts,
            dropped_bytes: l.stats.dropped_bytes,
            tx_bytes: l.stats.tx_bytes,
            loss_drops: l.stats.lost_pkts,
            marks: l.queue_marks(),
            sojourn_us: l.queue_sojourn_ns().map_or(f64::NAN, |s| s as f64 / 1000.0),
        }
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
    /// As in [`FlowSamples`].
    ahead: room::Ahead,
}

impl QueueSamples {
    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Hand over the rows recorded so far as a table (a chunk of `queues`).
    pub fn take(&mut self) -> Table {
        let (ahead, room) = self.ahead.after_chunk(self.len());
        let t = std::mem::replace(self, QueueSamples { ahead, ..Default::default() }).table();
        self.reserve_rows(room);
        t
    }

    /// As [`FlowSamples::expect`]: the simulator's links times its sample instants.
    pub fn expect(&mut self, rows: usize) {
        let room;
        (self.ahead, room) = room::Ahead::expecting(rows);
        self.reserve_rows(room);
    }

    fn reserve_rows(&mut self, cap: usize) {
        reserve!(cap; self.time, self.link, self.packets, self.bytes, self.drops, self.dropped_bytes,
                 self.tx_bytes, self.loss_drops, self.marks, self.sojourn_us);
    }

    /// Sample link `id` at `now` (call `Link::sync(now)` first).
    pub fn push(&mut self, now: u64, id: u32, l: &Link) {
        self.push_row(now, id, &QueueRow::of(l));
    }

    /// A row of link `id` at `now` with the values of `r` (taken earlier from a link that has
    /// not changed since, see [`crate::Link::quiescent`]).
    pub fn push_row(&mut self, now: u64, id: u32, r: &QueueRow) {
        self.time.push(now as i64);
        self.link.push(id);
        self.packets.push(r.packets);
        self.bytes.push(r.bytes);
        self.drops.push(r.drops);
        self.dropped_bytes.push(r.dropped_bytes);
        self.tx_bytes.push(r.tx_bytes);
        self.loss_drops.push(r.loss_drops);
        self.marks.push(r.marks);
        self.sojourn_us.push(r.sojourn_us);
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

/// Fates of packets learnt after their row was handed over by [`Recorder::drain`] (the
/// packet was still in the network then): `row` is the packet's row in the whole `packets`
/// table. Applied in order, they give the row's final `arrival_ns` / drop columns.
#[derive(Default)]
struct LateFates {
    arr_row: Vec<u64>,
    arr_ns: Vec<i64>,
    drop_row: Vec<u64>,
    drop_link: Vec<i32>,
    drop_ns: Vec<i64>,
    drop_reason: Vec<u8>,
}

/// The front `k` values of `v` (the rest stays in `v`).
fn split_front<T>(v: &mut Vec<T>, k: usize) -> Vec<T> {
    let rest = v.split_off(k);
    std::mem::replace(v, rest)
}

/// Data packets (optional per-packet rows) and what is always aggregated from them:
/// `intervals` (sent binned by send time, delivered and delay by arrival time, dropped by
/// drop time), `delay_hist` and `flowstats`; plus the flow and queue samples.
///
/// The rows that grow with the run (`packets`, `flows`, `queues`) can be handed over in
/// chunks while it runs ([`Recorder::drain`]), so the core holds a bounded number of them;
/// the tables `finish` returns then hold the rows recorded since the last chunk.
pub struct Recorder {
    bin_ns: u64,
    hist_bucket_ns: u64,
    record_packets: bool,
    /// Packet rows handed over so far: `p_*[i]` is row `p_base + i` of the table.
    p_base: u64,
    /// `p_*[..p_fated]` are rows whose packet was delivered or dropped.
    p_fated: usize,
    late: LateFates,
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
            p_base: 0,
            p_fated: 0,
            late: LateFates::default(),
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

    /// Each flow's interval bins will reach bin `bins - 1` if it is active to the end (the
    /// simulator knows the run's length): reserve them once, up to [`room::AHEAD_BINS`],
    /// instead of growing them bin by bin.
    pub fn expect_bins(&mut self, bins: usize) {
        for v in &mut self.bins {
            room::reserve_to(v, bins.min(room::AHEAD_BINS));
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
        // Rows are numbered with 32 bits (NO_RECORD is u32::MAX): a wrapped number would send
        // a late fate to another row. budget.check refuses such runs; this catches `budget=False`.
        let idx = u32::try_from(self.p_base + self.p_flow.len() as u64)
            .ok()
            .filter(|&i| i != NO_RECORD)
            .expect("more than 2^32 - 2 per-packet records: turn per-packet records off or shorten the run");
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
            match (rec as u64).checked_sub(self.p_base) {
                Some(i) => self.p_arrival[i as usize] = now as i64,
                None => {
                    self.late.arr_row.push(rec as u64);
                    self.late.arr_ns.push(now as i64);
                }
            }
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
        if rec == NO_RECORD {
            return;
        }
        let reason = match why {
            DropReason::Queue => 1,
            DropReason::Loss => 2,
            DropReason::Channel => 4,
        };
        if let Some(i) = (rec as u64).checked_sub(self.p_base) {
            let i = i as usize;
            self.p_drop_link[i] = link as i32;
            self.p_drop[i] = now as i64;
            self.p_drop_reason[i] = reason;
        } else {
            let l = &mut self.late;
            l.drop_row.push(rec as u64);
            l.drop_link.push(link as i32);
            l.drop_ns.push(now as i64);
            l.drop_reason.push(reason);
        }
    }

    /// Rows held now: (table, rows) of `packets`, `flows` and `queues`.
    pub fn held_rows(&self) -> [(&'static str, usize); 3] {
        [("packets", self.p_flow.len()), ("flows", self.flows.len()), ("queues", self.queues.len())]
    }

    /// Hand over, as chunks of `packets`, `flows` and `queues` (in that order; a table only
    /// when it has at least `min_rows` rows to give), the rows recorded so far. Packet rows
    /// go in send order and only up to the first packet still in the network — unless more
    /// than `4 * min_rows` rows are held, when all but the newest `min_rows` go and the fates
    /// of packets among them still in the network are kept apart ([`Recorder::late_fates`]).
    pub fn drain(&mut self, min_rows: usize) -> Vec<Table> {
        let min_rows = min_rows.max(1);
        let mut out = Vec::new();
        if self.record_packets {
            let n = self.p_flow.len();
            while self.p_fated < n && (self.p_arrival[self.p_fated] != NULL_I64 || self.p_drop[self.p_fated] != NULL_I64) {
                self.p_fated += 1;
            }
            let mut k = self.p_fated;
            if n > 4 * min_rows {
                k = k.max(n - min_rows);
            }
            if k >= min_rows {
                out.push(self.packets_table(k));
                // the rows left start the next chunk: room for as many as this one held
                self.reserve_packets(n);
                self.p_base += k as u64;
                self.p_fated = self.p_fated.saturating_sub(k);
            }
        }
        if self.flows.len() >= min_rows {
            out.push(self.flows.take());
        }
        if self.queues.len() >= min_rows {
            out.push(self.queues.take());
        }
        out
    }

    /// Room for `cap` packet rows in every `packets` column.
    fn reserve_packets(&mut self, cap: usize) {
        reserve!(cap; self.p_flow, self.p_seq, self.p_size, self.p_retrans, self.p_sent, self.p_arrival,
                 self.p_drop_link, self.p_drop, self.p_drop_reason);
    }

    /// The first `k` packet rows held, as a `packets` table.
    fn packets_table(&mut self, k: usize) -> Table {
        schema::table("packets", schema::PACKETS, vec![
            Col::U32(split_front(&mut self.p_flow, k)),
            Col::U64(split_front(&mut self.p_seq, k)),
            Col::U32(split_front(&mut self.p_size, k)),
            Col::Bool(split_front(&mut self.p_retrans, k)),
            Col::I64(split_front(&mut self.p_sent, k)),
            Col::I64(split_front(&mut self.p_arrival, k)),
            Col::I32(split_front(&mut self.p_drop_link, k)),
            Col::I64(split_front(&mut self.p_drop, k)),
            Col::Cat(split_front(&mut self.p_drop_reason, k), DROP_REASONS),
        ])
    }

    /// The fates learnt after a packet's row was handed over by [`Recorder::drain`], as two
    /// tables to apply in order to the whole `packets` table: `late_arrivals` (row,
    /// arrival_ns) and `late_drops` (row, drop_link, drop_ns, drop_reason). Empty without
    /// such fates.
    pub fn late_fates(&mut self) -> Vec<Table> {
        let l = std::mem::take(&mut self.late);
        let mut out = Vec::new();
        if !l.arr_row.is_empty() {
            out.push(Table::new("late_arrivals").col("row", Col::U64(l.arr_row)).col("arrival_ns", Col::I64(l.arr_ns)));
        }
        if !l.drop_row.is_empty() {
            out.push(Table::new("late_drops")
                .col("row", Col::U64(l.drop_row))
                .col("drop_link", Col::I32(l.drop_link))
                .col("drop_ns", Col::I64(l.drop_ns))
                .col("drop_reason", Col::Cat(l.drop_reason, DROP_REASONS)));
        }
        out
    }

    /// The results tables: packets (if recorded), flows, queues, intervals, delay_hist,
    /// flowstats. Per flow: `start` time, `completed` time (finite flows: all bytes
    /// acknowledged) and `app_bytes` (payload bytes acknowledged) from the backend.
    /// After [`Recorder::drain`], `packets`, `flows` and `queues` hold the rows recorded since
    /// the last chunk.
    pub fn finish(mut self, start: &[u64], completed: &[Option<u64>], app_bytes: &[u64]) -> Vec<Table> {
        let mut tables = Vec::new();
        if self.record_packets {
            let n = self.p_flow.len();
            tables.push(self.packets_table(n));
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

    /// Concatenate chunks of one table (same columns; a `cc_*` column absent from a chunk is
    /// NaN there), as bytes per column.
    fn concat(chunks: &[Table], name: &str) -> Vec<(String, Vec<u8>)> {
        let last = chunks.iter().rev().find(|t| t.name == name).unwrap();
        last.cols
            .iter()
            .map(|(c, _)| {
                let mut out = Vec::new();
                for t in chunks.iter().filter(|t| t.name == name) {
                    match t.get(c) {
                        Some(col) => out.extend_from_slice(&col.le_bytes()),
                        None => (0..t.rows()).for_each(|_| out.extend_from_slice(&f64::NAN.to_le_bytes())),
                    }
                }
                (c.clone(), out)
            })
            .collect()
    }

    #[test]
    fn drained_chunks_and_late_fates_make_the_same_tables() {
        let run = |min_rows: Option<usize>| {
            let mut r = Recorder::new(2, 10 * MS, MS, true);
            let mut chunks = Vec::new();
            let mut held = 0;
            for k in 0..400u64 {
                let now = k * MS;
                let flow = (k % 2) as u32;
                r.sent(now, flow, k * 1448, 1500, k % 7 == 0);
                // every 5th packet stays in the network for 40 ms, then is dropped; the rest
                // arrive 3 ms after being sent (k ≥ 3 delivers packet k - 3)
                if k >= 3 && (k - 3) % 5 != 0 {
                    let j = (k - 3) as u32;
                    r.delivered(now, ((k - 3) % 2) as u32, 1500, now - 3 * MS, j);
                }
                if k >= 40 && (k - 40) % 5 == 0 {
                    r.dropped(now, ((k - 40) % 2) as u32, 1500, 1, (k - 40) as u32, DropReason::Queue);
                }
                r.flows.push(now, flow, &FlowRow::default(), if k > 200 { &[("late", 1.0)] } else { &[] });
                if let Some(m) = min_rows {
                    held = held.max(r.held_rows()[0].1);
                    chunks.extend(r.drain(m));
                }
            }
            let late = r.late_fates();
            chunks.extend(r.finish(&[0, 0], &[None, None], &[0, 0]));
            (chunks, late, held)
        };
        let (whole, none, _) = run(None);
        assert!(none.is_empty());
        let (chunks, late, held) = run(Some(3));
        let n_chunks = chunks.iter().filter(|t| t.name == "packets").count();
        assert!(n_chunks > 20, "{n_chunks} chunks");
        assert!(held <= 4 * 3 + 1, "held {held}");
        // Packets dropped after going out come back as late drops, applied in order.
        let drops = late.iter().find(|t| t.name == "late_drops").expect("late drops");
        let mut cols = concat(&chunks, "packets");
        let Col::U64(rows) = drops.get("row").unwrap() else { panic!() };
        let Col::I64(when) = drops.get("drop_ns").unwrap() else { panic!() };
        for (&row, &t) in rows.iter().zip(when) {
            let (_, c) = cols.iter_mut().find(|(n, _)| n == "drop_ns").unwrap();
            c[row as usize * 8..row as usize * 8 + 8].copy_from_slice(&t.to_le_bytes());
            let (_, l) = cols.iter_mut().find(|(n, _)| n == "drop_link").unwrap();
            l[row as usize * 4..row as usize * 4 + 4].copy_from_slice(&1i32.to_le_bytes());
            let (_, r) = cols.iter_mut().find(|(n, _)| n == "drop_reason").unwrap();
            r[row as usize] = 1;
        }
        if let Some(a) = late.iter().find(|t| t.name == "late_arrivals") {
            let (Col::U64(rows), Col::I64(when)) = (a.get("row").unwrap(), a.get("arrival_ns").unwrap()) else { panic!() };
            for (&row, &t) in rows.iter().zip(when) {
                let (_, c) = cols.iter_mut().find(|(n, _)| n == "arrival_ns").unwrap();
                c[row as usize * 8..row as usize * 8 + 8].copy_from_slice(&t.to_le_bytes());
            }
        }
        for name in ["packets", "flows"] {
            let want = concat(&whole, name);
            let got = if name == "packets" { cols.clone() } else { concat(&chunks, name) };
            assert_eq!(want.len(), got.len(), "{name}");
            for ((nw, cw), (ng, cg)) in want.iter().zip(&got) {
                assert_eq!(nw, ng);
                assert_eq!(cw, cg, "{name}.{nw}");
            }
        }
        for name in ["intervals", "delay_hist", "flowstats"] {
            assert_eq!(concat(&whole, name), concat(&chunks, name), "{name}");
        }
    }

    #[test]
    fn expected_rows_are_reserved_at_once_and_again_after_each_chunk() {
        let mut q = QueueSamples::default();
        q.expect(100);
        assert!(q.time.capacity() >= 100 && q.sojourn_us.capacity() >= 100);
        (0..60).for_each(|k| q.push_row(k, 0, &QueueRow::default()));
        q.take();
        assert!(q.marks.capacity() >= 40, "the 40 rows still to come");
        let mut f = FlowSamples::default();
        f.expect(10);
        f.push(0, 0, &FlowRow::default(), &[("x", 1.0)]);
        assert!(f.cc[0].1.capacity() >= 10, "a cc column appearing later gets its table's room");
    }

    #[test]
    #[should_panic(expected = "2^32 - 2 per-packet records")]
    fn a_packet_row_number_that_would_wrap_stops_the_run() {
        let mut r = Recorder::new(1, 10 * MS, MS, true);
        r.p_base = NO_RECORD as u64 - 1;
        assert_eq!(r.sent(0, 0, 0, 1500, false), NO_RECORD - 1);
        r.sent(MS, 0, 1448, 1500, false);
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
