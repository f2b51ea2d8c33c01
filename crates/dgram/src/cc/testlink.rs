//! A small virtual-time bottleneck for the algorithms' behaviour tests (test builds only).
//!
//! One FIFO of a given (possibly time-varying) rate and packet limit, a fixed base RTT split
//! evenly between the data and the acknowledgement paths (acknowledgements are never queued
//! or lost), optional random loss before the queue from a seeded [`netmodel::Rng`], optional
//! constant-rate cross traffic that shares the FIFO, and any number of flows, each a
//! backlogged sender driven through the [`DgramCc`] trait exactly as the transport drives it:
//! `on_start`, `on_send`, `on_ack` per newly acknowledged packet, `on_loss` (three later
//! packets acknowledged, or no acknowledgement within max(2·srtt, 200 ms)), `on_feedback`
//! with the receiver half's values, `on_timer`; it sends while both the pacing rate and the
//! window of [`DgramCc::control`] allow (a window smaller than one packet still lets one
//! packet out when nothing is in flight). Acknowledgements follow the scheme's [`AckPolicy`];
//! `ack_jitter_ns` delays each by a seeded uniform draw up to that much (in order: none
//! overtakes another), the host timing noise that makes real RTT samples vary.
//! Everything is deterministic for a seed.

use super::{Acked, AckPolicy, Control, DgramCc, DgramReceiverCc, Lost};
use netmodel::Rng;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ev {
    Wake(usize),
    Timer(usize),
    Depart,
    Arrive(usize, u64, u64, u32), // flow, seq, sent_ns, bytes
    AckTimer(usize),
    Report(usize),
    AckArrive(usize, u64), // flow, ack id
    Cross(usize),
    Rto(usize),
    Trace,
}

struct Ack {
    items: Vec<(u64, u64)>, // seq, recv_ns
    sent_ns: u64,
    feedback: Vec<f64>,
}

struct Flow {
    cc: Box<dyn DgramCc>,
    rx: Option<Box<dyn DgramReceiverCc>>,
    policy: AckPolicy,
    start_ns: u64,
    stop_ns: u64,
    started: bool,
    next_seq: u64,
    inflight: u64,
    delivered: u64,
    out: BTreeMap<u64, (u64, u32)>,
    highest_acked: Option<u64>,
    next_tx_ok: u64,
    wake_at: Option<u64>,
    timer_at: Option<u64>,
    report_at: Option<u64>,
    srtt: f64,
    pending: Vec<(u64, u64)>,
    ack_timer_at: Option<u64>,
    acks: BTreeMap<u64, Ack>,
    ack_id: u64,
    last_ack_at: u64,
    /// (receive time, one-way delay, bytes) of every delivered packet.
    pub rx_log: Vec<(u64, u64, u32)>,
    pub losses: u64,
    pub sent: u64,
}

/// One flow's sample of the trace: time, control, and the algorithm's vars.
pub type TraceRow = (u64, Control, Vec<(&'static str, f64)>);

pub struct Link {
    /// Bottleneck rate at time t (bits per second).
    pub rate: Box<dyn Fn(u64) -> f64>,
    pub base_rtt_ns: u64,
    pub queue_pkts: usize,
    pub loss: f64,
    pub pkt_bytes: u32,
    /// (start, end, bits per second) of constant-rate cross traffic into the same FIFO.
    pub cross: Vec<(u64, u64, f64)>,
    pub trace_every_ns: u64,
    /// Largest extra delay of an acknowledgement (uniform, seeded; 0 = none).
    pub ack_jitter_ns: u64,
    rng: Rng,
    flows: Vec<Flow>,
    queue: VecDeque<(usize, u64, u64, u32)>, // flow (usize::MAX = cross), seq, sent, bytes
    busy: bool,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    evn: u64,
    pub now: u64,
    /// Per flow, the trace sampled every `trace_every_ns`.
    pub trace: Vec<Vec<TraceRow>>,
    pub drops: u64,
}

impl Link {
    pub fn new(rate_mbps: f64, base_rtt_ms: f64, queue_pkts: usize, seed: u64) -> Link {
        let r = rate_mbps * 1e6;
        Link {
            rate: Box::new(move |_| r),
            base_rtt_ns: (base_rtt_ms * 1e6) as u64,
            queue_pkts,
            loss: 0.0,
            pkt_bytes: 1500,
            cross: Vec::new(),
            trace_every_ns: 10 * MS,
            ack_jitter_ns: 0,
            rng: Rng::new(seed, 7),
            flows: Vec::new(),
            queue: VecDeque::new(),
            busy: false,
            heap: BinaryHeap::new(),
            evn: 0,
            now: 0,
            trace: Vec::new(),
            drops: 0,
        }
    }

    /// Add a backlogged flow active in [start, stop).
    pub fn add(&mut self, cc: Box<dyn DgramCc>, start_ns: u64, stop_ns: u64) -> usize {
        let rx = cc.receiver();
        let policy = cc.ack_policy();
        self.flows.push(Flow {
            cc,
            rx,
            policy,
            start_ns,
            stop_ns,
            started: false,
            next_seq: 0,
            inflight: 0,
            delivered: 0,
            out: BTreeMap::new(),
            highest_acked: None,
            next_tx_ok: 0,
            wake_at: None,
            timer_at: None,
            report_at: None,
            srtt: 0.0,
            pending: Vec::new(),
            ack_timer_at: None,
            acks: BTreeMap::new(),
            ack_id: 0,
            last_ack_at: 0,
            rx_log: Vec::new(),
            losses: 0,
            sent: 0,
        });
        self.trace.push(Vec::new());
        self.flows.len() - 1
    }

    fn push(&mut self, t: u64, e: Ev) {
        self.evn += 1;
        self.heap.push(Reverse((t, self.evn, e)));
    }

    /// Run until `until_ns` (virtual time).
    pub fn run(&mut self, until_ns: u64) {
        if self.now == 0 {
            for i in 0..self.flows.len() {
                let s = self.flows[i].start_ns;
                self.push(s, Ev::Wake(i));
                self.push(s + 50 * MS, Ev::Rto(i));
            }
            for (i, c) in self.cross.clone().iter().enumerate() {
                self.push(c.0, Ev::Cross(i));
            }
            self.push(0, Ev::Trace);
        }
        while let Some(Reverse((t, _, e))) = self.heap.peek().copied() {
            if t > until_ns {
                break;
            }
            self.heap.pop();
            self.now = t;
            self.event(t, e);
        }
        self.now = until_ns;
    }

    fn event(&mut self, t: u64, e: Ev) {
        match e {
            Ev::Wake(f) => {
                let fl = &mut self.flows[f];
                if !fl.started {
                    fl.started = true;
                    fl.cc.on_start(t);
                    self.after_cc(f, t);
                } else if fl.wake_at == Some(t) {
                    fl.wake_at = None;
                    self.try_send(f, t);
                }
            }
            Ev::Timer(f) => {
                if self.flows[f].timer_at == Some(t) {
                    self.flows[f].timer_at = None;
                    self.flows[f].cc.on_timer(t);
                    self.after_cc(f, t);
                }
            }
            Ev::Depart => {
                let (f, seq, sent, bytes) = self.queue.pop_front().unwrap();
                if f != usize::MAX {
                    self.push(t + self.base_rtt_ns / 2, Ev::Arrive(f, seq, sent, bytes));
                }
                self.busy = false;
                self.serve(t);
            }
            Ev::Arrive(f, seq, sent, bytes) => self.arrive(f, t, seq, sent, bytes),
            Ev::AckTimer(f) => {
                if self.flows[f].ack_timer_at == Some(t) {
                    self.flows[f].ack_timer_at = None;
                    self.send_ack(f, t);
                }
            }
            Ev::Report(f) => {
                if self.flows[f].report_at == Some(t) {
                    self.flows[f].report_at = None;
                    self.send_ack(f, t);
                }
            }
            Ev::AckArrive(f, id) => self.ack_arrive(f, t, id),
            Ev::Cross(i) => {
                let (_, end, bps) = self.cross[i];
                if t < end {
                    self.enqueue(t, usize::MAX, 0, self.pkt_bytes);
                    let gap = (self.pkt_bytes as f64 * 8.0 / bps * 1e9) as u64;
                    self.push(t + gap.max(1), Ev::Cross(i));
                }
            }
            Ev::Rto(f) => {
                let rto = ((2.0 * self.flows[f].srtt) as u64).max(200 * MS);
                let old: Vec<u64> =
                    self.flows[f].out.iter().filter(|(_, v)| v.0 + rto < t).map(|(k, _)| *k).collect();
                for s in old {
                    self.declare_lost(f, t, s);
                }
                self.after_cc(f, t);
                self.push(t + 50 * MS, Ev::Rto(f));
            }
            Ev::Trace => {
                for f in 0..self.flows.len() {
                    if self.flows[f].started {
                        let mut v = Vec::new();
                        self.flows[f].cc.vars(&mut v);
                        let c = self.flows[f].cc.control();
                        self.trace[f].push((t, c, v));
                    }
                }
                self.push(t + self.trace_every_ns, Ev::Trace);
            }
        }
    }

    fn enqueue(&mut self, t: u64, f: usize, seq: u64, bytes: u32) {
        if self.queue.len() >= self.queue_pkts {
            self.drops += 1;
            return;
        }
        self.queue.push_back((f, seq, t, bytes));
        self.serve(t);
    }

    fn serve(&mut self, t: u64) {
        if self.busy {
            return;
        }
        if let Some(&(_, _, _, bytes)) = self.queue.front() {
            self.busy = true;
            let r = (self.rate)(t).max(1e3);
            self.push(t + (bytes as f64 * 8.0 / r * 1e9) as u64, Ev::Depart);
        }
    }

    fn try_send(&mut self, f: usize, t: u64) {
        let pkt = self.pkt_bytes;
        loop {
            let fl = &mut self.flows[f];
            if t >= fl.stop_ns {
                return;
            }
            let c = fl.cc.control();
            let win_ok = match c.cwnd_bytes {
                Some(w) => fl.inflight == 0 || fl.inflight + pkt as u64 <= w,
                None => true,
            };
            if !win_ok {
                return;
            }
            if c.rate_bps.is_some() && t < fl.next_tx_ok {
                let w = fl.next_tx_ok;
                if fl.wake_at.map_or(true, |x| x > w) {
                    fl.wake_at = Some(w);
                    self.push(w, Ev::Wake(f));
                }
                return;
            }
            let seq = fl.next_seq;
            fl.next_seq += 1;
            fl.inflight += pkt as u64;
            fl.sent += 1;
            fl.out.insert(seq, (t, pkt));
            if let Some(r) = c.rate_bps {
                let gap = (pkt as f64 * 8.0 / r.max(1e3) * 1e9) as u64;
                fl.next_tx_ok = fl.next_tx_ok.max(t) + gap;
            }
            let infl = fl.inflight;
            fl.cc.on_send(t, seq, pkt, infl);
            self.arm_timer(f);
            if self.loss > 0.0 && self.rng.next_f64() < self.loss {
                continue;
            }
            self.enqueue(t, f, seq, pkt);
        }
    }

    fn arm_timer(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        if let Some(w) = fl.cc.next_timer_ns() {
            let w = w.max(self.now);
            if fl.timer_at != Some(w) {
                fl.timer_at = Some(w);
                self.push(w, Ev::Timer(f));
            }
        }
    }

    fn after_cc(&mut self, f: usize, t: u64) {
        self.arm_timer(f);
        self.try_send(f, t);
    }

    fn arrive(&mut self, f: usize, t: u64, seq: u64, sent: u64, bytes: u32) {
        let fl = &mut self.flows[f];
        fl.rx_log.push((t, t - sent, bytes));
        if let Some(rx) = fl.rx.as_mut() {
            rx.on_packet(t, seq, bytes, sent);
        }
        fl.pending.push((seq, t));
        if fl.pending.len() as u32 >= fl.policy.every_packets.max(1) {
            self.send_ack(f, t);
        } else if let (Some(d), None) = (fl.policy.every_ns, fl.ack_timer_at) {
            fl.ack_timer_at = Some(t + d);
            self.push(t + d, Ev::AckTimer(f));
        }
        self.arm_report(f);
    }

    fn arm_report(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        if let Some(w) = fl.rx.as_ref().and_then(|r| r.next_report_ns()) {
            if fl.report_at != Some(w) {
                fl.report_at = Some(w);
                self.push(w.max(self.now), Ev::Report(f));
            }
        }
    }

    fn send_ack(&mut self, f: usize, t: u64) {
        let fl = &mut self.flows[f];
        let items = std::mem::take(&mut fl.pending);
        fl.ack_timer_at = None;
        let feedback = fl.rx.as_mut().map(|r| r.feedback(t)).unwrap_or_default();
        if items.is_empty() && feedback.is_empty() {
            return;
        }
        fl.ack_id += 1;
        let id = fl.ack_id;
        fl.acks.insert(id, Ack { items, sent_ns: t, feedback });
        let j = if self.ack_jitter_ns > 0 { self.rng.below(self.ack_jitter_ns + 1) } else { 0 };
        let fl = &mut self.flows[f];
        let at = (t + self.base_rtt_ns - self.base_rtt_ns / 2 + j).max(fl.last_ack_at);
        fl.last_ack_at = at;
        self.push(at, Ev::AckArrive(f, id));
        self.arm_report(f);
    }

    fn ack_arrive(&mut self, f: usize, t: u64, id: u64) {
        let ack = self.flows[f].acks.remove(&id).unwrap();
        for &(seq, recv) in &ack.items {
            let fl = &mut self.flows[f];
            let Some((sent, bytes)) = fl.out.remove(&seq) else { continue };
            fl.inflight -= bytes as u64;
            fl.delivered += bytes as u64;
            fl.highest_acked = Some(fl.highest_acked.map_or(seq, |h| h.max(seq)));
            let rtt = (t - sent).saturating_sub(ack.sent_ns - recv);
            fl.srtt = if fl.srtt == 0.0 { rtt as f64 } else { 0.875 * fl.srtt + 0.125 * rtt as f64 };
            let a = Acked {
                now_ns: t,
                seq,
                bytes,
                sent_ns: sent,
                recv_ns: recv,
                rtt_ns: rtt,
                delivered_bytes: fl.delivered,
                inflight_bytes: fl.inflight,
            };
            fl.cc.on_ack(&a);
        }
        if let Some(h) = self.flows[f].highest_acked {
            let lost: Vec<u64> = self.flows[f].out.range(..h.saturating_sub(2)).map(|(k, _)| *k).collect();
            for s in lost {
                self.declare_lost(f, t, s);
            }
        }
        if !ack.feedback.is_empty() {
            self.flows[f].cc.on_feedback(t, &ack.feedback);
        }
        self.after_cc(f, t);
    }

    fn declare_lost(&mut self, f: usize, t: u64, seq: u64) {
        let fl = &mut self.flows[f];
        if let Some((sent, bytes)) = fl.out.remove(&seq) {
            fl.inflight -= bytes as u64;
            fl.losses += 1;
            let l = Lost { now_ns: t, seq, bytes, sent_ns: sent, inflight_bytes: fl.inflight };
            fl.cc.on_loss(&l);
        }
    }

    // ---- measurements ----

    /// Goodput of flow `f` in bits per second over packets received in [t0, t1).
    pub fn tput_bps(&self, f: usize, t0: u64, t1: u64) -> f64 {
        let b: u64 =
            self.flows[f].rx_log.iter().filter(|r| r.0 >= t0 && r.0 < t1).map(|r| r.2 as u64).sum();
        b as f64 * 8.0 / ((t1 - t0) as f64 / 1e9)
    }

    /// Quantile `q` of flow `f`'s one-way delays (ms) of packets received in [t0, t1).
    pub fn owd_ms(&self, f: usize, t0: u64, t1: u64, q: f64) -> f64 {
        let mut v: Vec<u64> =
            self.flows[f].rx_log.iter().filter(|r| r.0 >= t0 && r.0 < t1).map(|r| r.1).collect();
        assert!(!v.is_empty(), "flow {f} received nothing in the window");
        v.sort_unstable();
        let i = ((v.len() - 1) as f64 * q).round() as usize;
        v[i] as f64 / 1e6
    }

    pub fn losses(&self, f: usize) -> u64 {
        self.flows[f].losses
    }

    /// Mean of var `name` of flow `f` over trace rows in [t0, t1).
    pub fn var_mean(&self, f: usize, name: &str, t0: u64, t1: u64) -> f64 {
        let v: Vec<f64> = self.trace[f]
            .iter()
            .filter(|r| r.0 >= t0 && r.0 < t1)
            .filter_map(|r| r.2.iter().find(|x| x.0 == name).map(|x| x.1))
            .collect();
        assert!(!v.is_empty(), "no var {name} in the window");
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// A plain AIMD window (Reno-like: slow start, +1 packet per RTT, halve once per RTT on loss),
/// the competitor of the tests.
pub struct Aimd {
    pub cwnd: f64,
    ssthresh: f64,
    recover_until: u64,
    last_sent: u64,
}

impl Aimd {
    pub fn boxed() -> Box<dyn DgramCc> {
        Box::new(Aimd { cwnd: 2.0 * 1500.0, ssthresh: f64::INFINITY, recover_until: 0, last_sent: 0 })
    }
}

impl DgramCc for Aimd {
    fn name(&self) -> &'static str {
        "test-aimd"
    }
    fn on_send(&mut self, _now: u64, seq: u64, _b: u32, _i: u64) {
        self.last_sent = seq;
    }
    fn on_ack(&mut self, a: &Acked) {
        let mss = a.bytes as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd += mss;
        } else {
            self.cwnd += mss * mss / self.cwnd;
        }
    }
    fn on_loss(&mut self, l: &Lost) {
        if l.seq >= self.recover_until {
            self.cwnd = (self.cwnd / 2.0).max(2.0 * l.bytes as f64);
            self.ssthresh = self.cwnd;
            self.recover_until = self.last_sent + 1;
        }
    }
    fn control(&self) -> Control {
        Control { rate_bps: None, cwnd_bytes: Some(self.cwnd as u64) }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cwnd_pkts", self.cwnd / 1500.0));
    }
}
