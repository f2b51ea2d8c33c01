//! A small virtual-time bottleneck for the algorithms' behaviour tests (test builds only).
//!
//! One FIFO of a given (possibly time-varying) rate and packet limit, a fixed base RTT split
//! evenly between the data and the acknowledgement paths (acknowledgements are never queued
//! or lost), optional random loss before the queue from a seeded [`netmodel::Rng`], optional
//! constant-rate cross traffic that shares the FIFO, and any number of backlogged flows.
//!
//! Each flow is the transport itself: a [`Sender`] and a [`Receiver`] driven as the
//! simulator's datagram endpoint (`crates/sim/src/dgram.rs`) and the `ccbench-dgram` process
//! drive them — `start` at the flow's start, `poll_transmit` until it returns nothing after
//! every event that may let a packet out, `on_ack` when an acknowledgement arrives, `on_timer`
//! at `next_wakeup_ns`, `stop` at the flow's stop; the receiver's `on_data` per arrival and
//! `poll_ack` after it and at its `next_wakeup_ns`. Loss detection, pacing, the window,
//! acknowledgement policies and the receiver half's feedback are therefore the transport's
//! own rules (sender.rs, receiver.rs), not a copy: this file is only the link and the event
//! loop. `ack_jitter_ns` delays each acknowledgement by a seeded uniform draw up to that much
//! (in order: none overtakes another), the host timing noise that makes real RTT samples vary.
//! Packets carry [`Link::pkt_bytes`] datagram bytes and take that many on the link (no IP or
//! UDP header is added). Everything is deterministic for a seed.

use super::{Acked, Control, DgramCc, Lost};
use crate::wire::{Ack, DataHeader};
use crate::{Receiver, Sender, SenderConfig};
use netmodel::Rng;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;

/// No wake-up scheduled.
const NEVER: u64 = u64::MAX;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ev {
    Start(usize),
    Stop(usize),
    SenderWake(usize),
    Depart,
    Arrive(usize, u64, u64, u32), // flow, seq, sent_ns, bytes
    ReceiverWake(usize),
    AckArrive(usize, u64), // flow, ack id
    Cross(usize),
    Trace,
}

struct Flow {
    tx: Sender,
    rx: Receiver,
    start_ns: u64,
    stop_ns: u64,
    started: bool,
    /// The pending wake-ups of the sender and the receiver ([`NEVER`] = none).
    tx_wake: u64,
    rx_wake: u64,
    /// Acknowledgements on their way to the sender, by id.
    acks: BTreeMap<u64, Ack>,
    ack_id: u64,
    last_ack_at: u64,
    /// (receive time, one-way delay, bytes) of every delivered packet.
    rx_log: Vec<(u64, u64, u32)>,
}

/// One flow's sample of the trace: time, control, and the algorithm's vars.
pub type TraceRow = (u64, Control, Vec<(&'static str, f64)>);

pub struct Link {
    /// Bottleneck rate at time t (bits per second).
    pub rate: Box<dyn Fn(u64) -> f64>,
    pub base_rtt_ns: u64,
    pub queue_pkts: usize,
    pub loss: f64,
    /// Datagram bytes of every packet (the flows' and the cross traffic's).
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
        let id = self.flows.len();
        let rx = Receiver::for_scheme(id as u32, cc.as_ref());
        let tx = Sender::new(SenderConfig::new(id as u32, self.pkt_bytes), cc);
        self.flows.push(Flow {
            tx,
            rx,
            start_ns,
            stop_ns,
            started: false,
            tx_wake: NEVER,
            rx_wake: NEVER,
            acks: BTreeMap::new(),
            ack_id: 0,
            last_ack_at: 0,
            rx_log: Vec::new(),
        });
        self.trace.push(Vec::new());
        id
    }

    fn push(&mut self, t: u64, e: Ev) {
        self.evn += 1;
        self.heap.push(Reverse((t, self.evn, e)));
    }

    /// Run until `until_ns` (virtual time).
    pub fn run(&mut self, until_ns: u64) {
        if self.now == 0 {
            for i in 0..self.flows.len() {
                let (s, e) = (self.flows[i].start_ns, self.flows[i].stop_ns);
                self.push(s, Ev::Start(i));
                self.push(e, Ev::Stop(i));
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
            Ev::Start(f) => {
                self.flows[f].started = true;
                self.flows[f].tx.start(t);
                self.flush_sender(f, t);
            }
            Ev::Stop(f) => self.flows[f].tx.stop(),
            Ev::SenderWake(f) => {
                if self.flows[f].tx_wake == t {
                    self.flows[f].tx_wake = NEVER;
                    self.flows[f].tx.on_timer(t);
                    self.flush_sender(f, t);
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
            Ev::Arrive(f, seq, sent_ns, size) => {
                let fl = &mut self.flows[f];
                fl.rx_log.push((t, t - sent_ns, size));
                fl.rx.on_data(t, &DataHeader { flow: f as u32, seq, sent_ns, size });
                self.flush_receiver(f, t);
            }
            Ev::ReceiverWake(f) => {
                if self.flows[f].rx_wake == t {
                    self.flows[f].rx_wake = NEVER;
                    self.flush_receiver(f, t);
                }
            }
            Ev::AckArrive(f, id) => {
                let ack = self.flows[f].acks.remove(&id).unwrap();
                self.flows[f].tx.on_ack(t, &ack);
                self.flush_sender(f, t);
            }
            Ev::Cross(i) => {
                let (_, end, bps) = self.cross[i];
                if t < end {
                    self.enqueue(t, usize::MAX, 0, self.pkt_bytes);
                    let gap = (self.pkt_bytes as f64 * 8.0 / bps * 1e9) as u64;
                    self.push(t + gap.max(1), Ev::Cross(i));
                }
            }
            Ev::Trace => {
                for f in 0..self.flows.len() {
                    if self.flows[f].started {
                        let mut v = Vec::new();
                        let tx = &self.flows[f].tx;
                        tx.cc_vars(&mut v);
                        self.trace[f].push((t, tx.cc().control(), v));
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

    /// A wake-up at `want` unless an earlier one is pending (as the simulator schedules its
    /// endpoints' timers); returns the wake-up now pending.
    fn schedule(&mut self, pending: u64, want: Option<u64>, ev: Ev) -> u64 {
        let Some(t) = want.map(|w| w.max(self.now)) else { return pending };
        if t < pending || pending < self.now {
            self.push(t, ev);
            return t;
        }
        pending
    }

    /// Send what the transport allows now (random loss before the queue), then schedule the
    /// sender's next wake-up.
    fn flush_sender(&mut self, f: usize, t: u64) {
        while let Some(h) = self.flows[f].tx.poll_transmit(t) {
            if self.loss > 0.0 && self.rng.next_f64() < self.loss {
                continue;
            }
            self.enqueue(t, f, h.seq, h.size);
        }
        let (pending, want) = (self.flows[f].tx_wake, self.flows[f].tx.next_wakeup_ns());
        self.flows[f].tx_wake = self.schedule(pending, want, Ev::SenderWake(f));
    }

    /// Send the acknowledgements due now over the (jittered, in-order) return path, then
    /// schedule the receiver's next wake-up.
    fn flush_receiver(&mut self, f: usize, t: u64) {
        while let Some(a) = self.flows[f].rx.poll_ack(t) {
            let j = if self.ack_jitter_ns > 0 { self.rng.below(self.ack_jitter_ns + 1) } else { 0 };
            let fl = &mut self.flows[f];
            fl.ack_id += 1;
            let id = fl.ack_id;
            fl.acks.insert(id, a);
            let at = (t + self.base_rtt_ns - self.base_rtt_ns / 2 + j).max(fl.last_ack_at);
            fl.last_ack_at = at;
            self.push(at, Ev::AckArrive(f, id));
        }
        let (pending, want) = (self.flows[f].rx_wake, self.flows[f].rx.next_wakeup_ns());
        self.flows[f].rx_wake = self.schedule(pending, want, Ev::ReceiverWake(f));
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

    /// Packets the transport declared lost on flow `f`.
    pub fn losses(&self, f: usize) -> u64 {
        self.flows[f].tx.stats().lost_pkts
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The link and the transport agree: a fixed 15 Mbit/s flow into a 10 Mbit/s bottleneck
    /// loses a third of its packets at the queue, and the sender's loss detection finds exactly
    /// the packets the queue dropped (no spurious losses, none missed) once the tail has had
    /// time to time out.
    #[test]
    fn the_transport_detects_exactly_the_queues_drops() {
        let mut l = Link::new(10.0, 40.0, 50, 1);
        let f = l.add(super::super::make("fixed", &serde_json::json!({"rate-mbps": 15}), 1).unwrap(), 0, 5 * SEC);
        l.run(7 * SEC);
        let s = l.flows[f].tx.stats();
        let drop_share = l.drops as f64 / s.sent_pkts as f64;
        assert!((drop_share - 1.0 / 3.0).abs() < 0.01, "{drop_share}");
        assert_eq!(s.lost_pkts, l.drops);
        assert_eq!(s.spurious_losses, 0);
        assert_eq!(s.delivered_pkts + s.lost_pkts, s.sent_pkts);
        assert_eq!(l.flows[f].rx_log.len() as u64, s.delivered_pkts);
    }
}
