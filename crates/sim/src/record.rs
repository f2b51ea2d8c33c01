//! Recorders: append-only columns filled by the event loop. Per-packet records are optional;
//! per-interval aggregates, delay histograms and per-flow totals are always kept, so every
//! metric is available from a run without per-packet records.

use crate::output::{Col, Table, NULL_I64};
use crate::tcp::FlowSample;

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

pub struct Recorder {
    bin_ns: u64,
    hist_bucket_ns: u64,
    record_packets: bool,
    // packets
    p_flow: Vec<u32>,
    p_seq: Vec<u64>,
    p_size: Vec<u32>,
    p_retrans: Vec<bool>,
    p_sent: Vec<i64>,
    p_arrival: Vec<i64>,
    p_drop_link: Vec<i32>,
    p_drop: Vec<i64>,
    /// 0 = not dropped, 1 = queue drop, 2 = random loss ([`DROP_REASONS`]).
    p_drop_reason: Vec<u8>,
    // aggregates
    bins: Vec<Vec<Bin>>,
    hist: Vec<Vec<u64>>,
    totals: Vec<FlowTotals>,
    // flow samples
    s_time: Vec<i64>,
    s_flow: Vec<u32>,
    s_cwnd: Vec<u32>,
    s_ssthresh: Vec<i64>,
    s_srtt: Vec<f64>,
    s_rttvar: Vec<f64>,
    s_min_rtt: Vec<f64>,
    s_inflight: Vec<u32>,
    s_delivered: Vec<u64>,
    s_bytes_acked: Vec<u64>,
    s_retrans: Vec<u64>,
    s_lost: Vec<u64>,
    s_state: Vec<u8>,
    s_pacing: Vec<f64>,
    s_delivery: Vec<f64>,
    s_cc: Vec<(&'static str, Vec<f64>)>,
    // queue samples
    q_time: Vec<i64>,
    q_link: Vec<u32>,
    q_packets: Vec<u32>,
    q_bytes: Vec<u64>,
    q_drops: Vec<u64>,
    q_dropped_bytes: Vec<u64>,
    q_loss_drops: Vec<u64>,
    q_marks: Vec<u64>,
    q_sojourn_us: Vec<f64>,
    q_tx_bytes: Vec<u64>,
}

/// CA state names in code order (the `ca_state` column's categories).
/// Categories of the packets table's `drop_reason` column.
pub const DROP_REASONS: [&str; 3] = ["none", "queue", "loss"];
pub const CA_STATES: [&str; 5] = ["open", "disorder", "cwr", "recovery", "loss"];

impl Recorder {
    pub fn new(n_flows: usize, bin_ns: u64, hist_bucket_ns: u64, record_packets: bool) -> Self {
        Recorder {
            bin_ns,
            hist_bucket_ns,
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
            s_time: vec![],
            s_flow: vec![],
            s_cwnd: vec![],
            s_ssthresh: vec![],
            s_srtt: vec![],
            s_rttvar: vec![],
            s_min_rtt: vec![],
            s_inflight: vec![],
            s_delivered: vec![],
            s_bytes_acked: vec![],
            s_retrans: vec![],
            s_lost: vec![],
            s_state: vec![],
            s_pacing: vec![],
            s_delivery: vec![],
            s_cc: vec![],
            q_time: vec![],
            q_link: vec![],
            q_packets: vec![],
            q_bytes: vec![],
            q_drops: vec![],
            q_dropped_bytes: vec![],
            q_loss_drops: vec![],
            q_marks: vec![],
            q_sojourn_us: vec![],
            q_tx_bytes: vec![],
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

    /// A data packet left its sender. Returns the packet-record index (u32::MAX if off).
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
            return u32::MAX;
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
        if rec != u32::MAX {
            self.p_arrival[rec as usize] = now as i64;
        }
    }

    /// A data packet was dropped by link `link` at `now`.
    /// `loss`: dropped by the link's random-loss model rather than its queue.
    pub fn dropped(&mut self, now: u64, flow: u32, size: u32, link: u32, rec: u32, loss: bool) {
        let bin = self.bin(flow, now);
        bin.dropped_bytes += size as u64;
        bin.dropped_pkts += 1;
        let t = &mut self.totals[flow as usize];
        t.dropped_bytes += size as u64;
        t.dropped_pkts += 1;
        if rec != u32::MAX {
            self.p_drop_link[rec as usize] = link as i32;
            self.p_drop[rec as usize] = now as i64;
            self.p_drop_reason[rec as usize] = if loss { 2 } else { 1 };
        }
    }

    pub fn flow_sample(&mut self, now: u64, flow: u32, s: &FlowSample, cc: &[(&'static str, f64)]) {
        let row = self.s_time.len();
        self.s_time.push(now as i64);
        self.s_flow.push(flow);
        self.s_cwnd.push(s.cwnd);
        self.s_ssthresh.push(if s.ssthresh == u32::MAX { NULL_I64 } else { s.ssthresh as i64 });
        self.s_srtt.push(s.srtt_us);
        self.s_rttvar.push(s.rttvar_us);
        self.s_min_rtt.push(s.min_rtt_us);
        self.s_inflight.push(s.inflight);
        self.s_delivered.push(s.delivered);
        self.s_bytes_acked.push(s.bytes_acked);
        self.s_retrans.push(s.retrans);
        self.s_lost.push(s.lost);
        self.s_state.push(s.ca_state as u8);
        self.s_pacing.push(s.pacing_rate_bps);
        self.s_delivery.push(s.delivery_rate_bps);
        for col in self.s_cc.iter_mut() {
            col.1.push(f64::NAN);
        }
        for &(name, v) in cc {
            match self.s_cc.iter_mut().find(|c| c.0 == name) {
                Some(c) => c.1[row] = v,
                None => {
                    let mut c = vec![f64::NAN; row + 1];
                    c[row] = v;
                    self.s_cc.push((name, c));
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn queue_sample(
        &mut self,
        now: u64,
        link: u32,
        packets: u32,
        bytes: u64,
        drops: u64,
        dropped_bytes: u64,
        tx_bytes: u64,
        loss_drops: u64,
        marks: u64,
        sojourn_ns: Option<u64>,
    ) {
        self.q_time.push(now as i64);
        self.q_link.push(link);
        self.q_packets.push(packets);
        self.q_bytes.push(bytes);
        self.q_drops.push(drops);
        self.q_dropped_bytes.push(dropped_bytes);
        self.q_tx_bytes.push(tx_bytes);
        self.q_loss_drops.push(loss_drops);
        self.q_marks.push(marks);
        self.q_sojourn_us.push(sojourn_ns.map_or(f64::NAN, |s| s as f64 / 1000.0));
    }

    /// Build the output tables. `start`/`completed` are per-flow times from the loop.
    pub fn finish(self, start: &[u64], completed: &[Option<u64>], app_bytes: &[u64]) -> Vec<Table> {
        let mut tables = Vec::new();
        if self.record_packets {
            tables.push(
                Table::new("packets")
                    .col("flow", Col::U32(self.p_flow))
                    .col("seq", Col::U64(self.p_seq))
                    .col("size", Col::U32(self.p_size))
                    .col("retrans", Col::Bool(self.p_retrans))
                    .col("sent_ns", Col::I64(self.p_sent))
                    .col("arrival_ns", Col::I64(self.p_arrival))
                    .col("drop_link", Col::I32(self.p_drop_link))
                    .col("drop_ns", Col::I64(self.p_drop))
                    .col("drop_reason", Col::Cat(self.p_drop_reason, DROP_REASONS.to_vec())),
            );
        }
        let mut flows = Table::new("flows")
            .col("time_ns", Col::I64(self.s_time))
            .col("flow", Col::U32(self.s_flow))
            .col("cwnd", Col::U32(self.s_cwnd))
            .col("ssthresh", Col::I64(self.s_ssthresh))
            .col("srtt_us", Col::F64(self.s_srtt))
            .col("rttvar_us", Col::F64(self.s_rttvar))
            .col("min_rtt_us", Col::F64(self.s_min_rtt))
            .col("inflight", Col::U32(self.s_inflight))
            .col("delivered", Col::U64(self.s_delivered))
            .col("bytes_acked", Col::U64(self.s_bytes_acked))
            .col("retrans", Col::U64(self.s_retrans))
            .col("lost", Col::U64(self.s_lost))
            .col("ca_state", Col::Cat(self.s_state, CA_STATES.to_vec()))
            .col("pacing_rate_bps", Col::F64(self.s_pacing))
            .col("delivery_rate_bps", Col::F64(self.s_delivery));
        for (name, v) in self.s_cc {
            flows = flows.col(&format!("cc_{name}"), Col::F64(v));
        }
        tables.push(flows);
        tables.push(
            Table::new("queues")
                .col("time_ns", Col::I64(self.q_time))
                .col("link", Col::U32(self.q_link))
                .col("packets", Col::U32(self.q_packets))
                .col("bytes", Col::U64(self.q_bytes))
                .col("drops", Col::U64(self.q_drops))
                .col("dropped_bytes", Col::U64(self.q_dropped_bytes))
                .col("tx_bytes", Col::U64(self.q_tx_bytes))
                .col("loss_drops", Col::U64(self.q_loss_drops))
                .col("marks", Col::U64(self.q_marks))
                .col("sojourn_us", Col::F64(self.q_sojourn_us)),
        );
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
        tables.push(
            Table::new("intervals")
                .col("bin", Col::I64(ib))
                .col("flow", Col::U32(iflow))
                .col("sent_bytes", Col::U64(isb))
                .col("sent_pkts", Col::U64(isp))
                .col("delivered_bytes", Col::U64(idb))
                .col("delivered_pkts", Col::U64(idp))
                .col("delay_sum_ns", Col::U64(ids))
                .col("dropped_bytes", Col::U64(irb))
                .col("dropped_pkts", Col::U64(irp)),
        );
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
        tables.push(
            Table::new("delay_hist")
                .col("flow", Col::U32(hf))
                .col("bucket", Col::U32(hb))
                .col("count", Col::U64(hc)),
        );
        let n = self.totals.len();
        let opt = |v: Option<u64>| v.map_or(NULL_I64, |x| x as i64);
        let t = &self.totals;
        tables.push(
            Table::new("flowstats")
                .col("flow", Col::U32((0..n as u32).collect()))
                .col("sent_bytes", Col::U64(t.iter().map(|x| x.sent_bytes).collect()))
                .col("sent_pkts", Col::U64(t.iter().map(|x| x.sent_pkts).collect()))
                .col("delivered_bytes", Col::U64(t.iter().map(|x| x.delivered_bytes).collect()))
                .col("delivered_pkts", Col::U64(t.iter().map(|x| x.delivered_pkts).collect()))
                .col("dropped_bytes", Col::U64(t.iter().map(|x| x.dropped_bytes).collect()))
                .col("dropped_pkts", Col::U64(t.iter().map(|x| x.dropped_pkts).collect()))
                .col("retrans_pkts", Col::U64(t.iter().map(|x| x.retrans_pkts).collect()))
                .col("first_sent_ns", Col::I64(t.iter().map(|x| opt(x.first_sent)).collect()))
                .col("last_sent_ns", Col::I64(t.iter().map(|x| opt(x.last_sent)).collect()))
                .col("first_arrival_ns", Col::I64(t.iter().map(|x| opt(x.first_arrival)).collect()))
                .col("last_arrival_ns", Col::I64(t.iter().map(|x| opt(x.last_arrival)).collect()))
                .col("delay_sum_ns", Col::U64(t.iter().map(|x| x.delay_sum_ns).collect()))
                .col("app_bytes", Col::U64(app_bytes.to_vec()))
                .col("start_ns", Col::I64(start.iter().map(|&s| s as i64).collect()))
                .col("completed_ns", Col::I64(completed.iter().map(|&c| opt(c)).collect())),
        );
        tables
    }
}
