//! `sprout`: Sprout, stochastic forecasts for interactive traffic over varying cellular links.
//!
//! Sources: K. Winstein, A. Sivaraman, H. Balakrishnan, "Stochastic Forecasts Achieve High
//! Throughput and Low Delay over Cellular Networks", NSDI 2013, §3 (the receiver models the
//! link's delivery rate λ as a random walk — Brownian motion of 200 packets/s per √s, with an
//! outage state at λ = 0 left at rate 1/s — kept as a probability distribution over 256 rate
//! bins up to 1000 packets/s; every 20 ms tick it evolves the distribution, multiplies it by the
//! Poisson likelihood of the packets that arrived, and forecasts the cumulative deliveries over
//! the next 8 ticks as their 5th percentile; the sender sends only what the forecast says will
//! drain within 100 ms — 5 ticks — given its estimate of what is already queued). Reference
//! implementation, which Pantheon's `sprout` runs (`sproutbt2`): github.com/keithw/alfalfa,
//! `src/sprout/receiver.{hh,cc}` (`MAX_ARRIVAL_RATE` 1000, `BROWNIAN_MOTION_RATE` 200,
//! `OUTAGE_ESCAPE_RATE` 1, `NUM_BINS` 256, `TICK_LENGTH` 20 ms, `MAX_ARRIVALS_PER_TICK` 30,
//! `NUM_TICKS` 8, arrivals counted in 1400-byte units, empty ticks not scored while the sender
//! announced it would be silent), `process.cc` (evolve / observe), `processforecaster.cc` (the
//! per-rate-bin forecast tables, precomputed once), `src/network/sproutconn.cc`
//! (`TARGET_DELAY_TICKS` 5; queue estimate = the next sequence number − the receiver's count of
//! bytes received or lost, plus the payload of each packet sent since, reduced each elapsed tick
//! by the unit × the forecast count of that tick — the cumulative count, as the code does),
//! `src/network/network.cc` (sequence numbers advance by payload + 50 bytes; `SendQueue::add`:
//! each packet lets the receiver write off what was sent over `REORDER_LIMIT` = 10 ms before it,
//! at most 65535 bytes back) and `src/examples/sproutbt2.cc` (a heartbeat every 50 ms when the
//! window is closed, the last packet of a burst announcing 50 ms of silence). Pantheon builds it
//! with its `src/wrappers/patches/sprout.patch`: 1400-byte data and a 1400-byte forecast unit in
//! the sender (alfalfa: 1440), so a full packet carries 1402 bytes of payload (the data behind a
//! 2-byte forecast length); that is the version CoCo-Beholder's thesis measured, and this one.
//!
//! Here the receiver's half (`DgramReceiverCc`) runs the model and reports every tick:
//! `[packets received or lost (highest sequence + 1), forecast counts for 1..8 ticks]`; the
//! sender's half turns the latest report into a byte budget exposed as a window (in flight +
//! budget). Each datagram stands for one full reference packet: it counts 1402 bytes in the
//! sender's budget and 1402/1400 units at the receiver, whatever the transport's datagram size,
//! and the report's "received or lost" count is turned into the reference's queue estimate
//! (`ref_queue_estimate`: sequence bytes, throwaway point, lengths) by the sender, which knows
//! each packet's send time. Differences: the forecast reaches the sender in the transport's
//! feedback on a fixed 20 ms grid, where the reference's receiver is itself a `sproutbt2` sending
//! data back and attaches its forecast to the first packet of its own next burst once its tick
//! has changed (so when forecasts arrive, and how much of the sender's last burst they count,
//! depends on the phase of the two ends' bursts); the forecast's own bytes are not in the data
//! packets. Every packet is taken to announce 50 ms of silence (the transport does
//! not carry the reference's per-packet `time_to_next`), so empty ticks within 50 ms of an
//! arrival are not scored; packets are whole datagrams (the reference sends a partial last packet
//! to use the budget exactly, and 0-byte heartbeats — here a positive budget lets one whole packet
//! out and a heartbeat is one full packet); the
//! Gaussian CDF uses an erf approximation (|error| < 1.5·10⁻⁷) instead of boost's.

use super::{Acked, AckPolicy, Control, DgramCc, DgramReceiverCc, Lost, ParamInfo, Params, SchemeInfo};
use std::sync::OnceLock;

const BINS: usize = 257; // 256 intervals plus the top edge, as the reference's SampledFunction
const MAX_RATE: f64 = 1000.0;
const SIGMA_RATE: f64 = 200.0;
const OUTAGE_ESCAPE: f64 = 1.0;
const TICK_S: f64 = 0.020;
const TICK_NS: u64 = 20_000_000;
const MAX_PER_TICK: usize = 30;
const NUM_TICKS: usize = 8;
const UNIT_BYTES: f64 = 1400.0; // receiver's counting unit
/// Sender's bytes per forecast unit: alfalfa has 1440; Pantheon's `sprout.patch` makes it 1400
/// (with 1400-byte data) and that is what Pantheon and CoCo-Beholder ran.
const SENDER_UNIT: f64 = 1400.0;
/// What one full packet of the reference counts, in `SproutConnection`'s bytes: 1400 bytes of
/// data behind the 2-byte forecast length. Each datagram here stands for one such packet, in the
/// sender's budget and in the receiver's count, whatever the transport's datagram size.
const REF_PAYLOAD: f64 = 1402.0;
/// The reference's sequence numbers advance by the payload plus 50 per packet (`network.cc`).
const REF_SEQ_STEP: u64 = 1452;
/// A packet tells the receiver to count everything sent more than 10 ms before it
/// (`REORDER_LIMIT`) as received or lost, at most 65535 sequence bytes back.
const REORDER_LIMIT_MS: u64 = 10;
const THROWAWAY_CAP: u64 = 65535;
const FALLBACK_NS: u64 = 50_000_000;

fn bin_width() -> f64 {
    MAX_RATE / 256.0
}
fn mid(i: usize) -> f64 {
    if i == 0 {
        0.0
    } else {
        (i as f64 + 0.5) * bin_width()
    }
}
fn floor_edge(i: usize) -> f64 {
    if i == 0 {
        f64::NEG_INFINITY
    } else {
        i as f64 * bin_width()
    }
}
fn ceil_edge(i: usize) -> f64 {
    if i >= BINS - 1 {
        f64::INFINITY
    } else {
        (i + 1) as f64 * bin_width()
    }
}

/// Standard normal CDF (Abramowitz & Stegun 7.1.26 erf).
fn phi(x: f64) -> f64 {
    if x == f64::INFINITY {
        return 1.0;
    }
    if x == f64::NEG_INFINITY {
        return 0.0;
    }
    let z = x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.3275911 * z.abs());
    let y = 1.0
        - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592)
            * t
            * (-z * z).exp();
    let erf = if z >= 0.0 { y } else { -y };
    0.5 * (1.0 + erf)
}

fn poisson(lambda: f64, k: usize) -> f64 {
    if lambda == 0.0 {
        return if k == 0 { 1.0 } else { 0.0 };
    }
    let mut lg = 0.0;
    for j in 2..=k {
        lg += (j as f64).ln();
    }
    (k as f64 * lambda.ln() - lambda - lg).exp()
}

/// One tick of Brownian motion with the outage state (the reference's `Process::evolve`).
fn evolve(pmf: &[f64]) -> Vec<f64> {
    let sd = SIGMA_RATE * TICK_S.sqrt();
    let escape = 1.0 - poisson(TICK_S * OUTAGE_ESCAPE, 0);
    let mut out = vec![0.0; BINS];
    let w = bin_width();
    for (oi, &p) in pmf.iter().enumerate() {
        if p == 0.0 {
            continue;
        }
        let old = mid(oi);
        let lo = (((old - 5.0 * sd) / w).floor().max(0.0)) as usize;
        let hi = ((((old + 5.0 * sd) / w).floor()) as usize).min(BINS - 1);
        for (ni, o) in out.iter_mut().enumerate().take(hi + 1).skip(lo) {
            let z = if oi == 0 { if ni != 0 { escape } else { 1.0 - escape } } else { 1.0 };
            let c = phi((ceil_edge(ni) - old) / sd) - phi((floor_edge(ni) - old) / sd);
            *o += z * p * c;
        }
    }
    out
}

fn normalize(pmf: &mut [f64]) {
    let s: f64 = pmf.iter().sum();
    if s > 0.0 && s.is_finite() {
        pmf.iter_mut().for_each(|v| *v /= s);
    } else {
        pmf.iter_mut().for_each(|v| *v = 1.0 / BINS as f64);
    }
}

/// `table[t][c][n]`: probability that a link known to be in rate bin c delivers n units over
/// the next t + 1 ticks (the reference's `ProcessForecastInterval`, all horizons at once).
struct Model {
    table: Vec<Vec<Vec<f64>>>,
}

fn model() -> &'static Model {
    static M: OnceLock<Model> = OnceLock::new();
    M.get_or_init(|| {
        // per-bin, per-count probabilities of one tick (ProcessForecastTick)
        let tick: Vec<Vec<f64>> =
            (0..BINS).map(|b| (0..MAX_PER_TICK).map(|n| poisson(mid(b) * TICK_S, n)).collect()).collect();
        let mut table = vec![Vec::with_capacity(BINS); NUM_TICKS];
        for c in 0..BINS {
            let mut pmf = vec![0.0; BINS];
            pmf[c] = 1.0;
            let mut cp = vec![1.0];
            for row in table.iter_mut() {
                normalize(&mut pmf);
                let this: Vec<f64> =
                    (0..MAX_PER_TICK).map(|n| pmf.iter().zip(&tick).map(|(p, t)| p * t[n]).sum::<f64>().min(1.0)).collect();
                let mut next = vec![0.0; cp.len() + this.len() - 1];
                for (i, a) in cp.iter().enumerate() {
                    for (j, b) in this.iter().enumerate() {
                        next[i + j] += a * b;
                    }
                }
                cp = next;
                row.push(cp.clone());
                pmf = evolve(&pmf);
            }
        }
        Model { table }
    })
}

/// 5th-percentile cumulative deliveries over 1..=8 ticks for a rate distribution.
fn forecast(pmf: &[f64]) -> Vec<f64> {
    let m = model();
    m.table
        .iter()
        .map(|comp| {
            let len = comp[0].len();
            let mut sum = 0.0;
            for n in 0..len {
                sum += pmf.iter().zip(comp).map(|(p, c)| p * c[n]).sum::<f64>().min(1.0);
                if sum >= 0.05 {
                    return n as f64;
                }
            }
            (len + 1) as f64
        })
        .collect()
}

pub struct SproutRx {
    pmf: Vec<f64>,
    time: Option<u64>,
    score_time: u64,
    count: f64,
    highest: Option<u64>,
    cached: Option<(u64, Vec<f64>)>,
    last_report: u64,
}

impl SproutRx {
    fn new() -> SproutRx {
        SproutRx { pmf: vec![1.0 / BINS as f64; BINS], time: None, score_time: 0, count: 0.0, highest: None, cached: None, last_report: 0 }
    }
    fn advance_to(&mut self, now: u64) {
        let Some(mut t) = self.time else { return };
        while t + TICK_NS < now {
            self.pmf = evolve(&self.pmf);
            if t >= self.score_time || self.count > 0.0 {
                let mut k = (self.count + 0.5) as usize;
                if self.count > 0.0 && self.count < 1.0 {
                    k = 1;
                }
                for (i, v) in self.pmf.iter_mut().enumerate() {
                    *v *= poisson(mid(i) * TICK_S, k);
                }
                normalize(&mut self.pmf);
                self.count = 0.0;
            }
            t += TICK_NS;
        }
        self.time = Some(t);
    }
}

impl DgramReceiverCc for SproutRx {
    fn on_packet(&mut self, now: u64, seq: u64, _bytes: u32, _sent_ns: u64) {
        if self.time.is_none() {
            self.time = Some(now);
            self.last_report = now;
        }
        self.advance_to(now);
        self.count += REF_PAYLOAD / UNIT_BYTES;
        self.score_time = self.score_time.max(self.time.unwrap() + FALLBACK_NS);
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
    }
    fn feedback(&mut self, now: u64) -> Vec<f64> {
        self.advance_to(now);
        self.last_report = now;
        let t = self.time.unwrap_or(0);
        if self.cached.as_ref().map_or(true, |c| c.0 != t) {
            normalize(&mut self.pmf);
            self.cached = Some((t, forecast(&self.pmf)));
        }
        let mut v = vec![self.highest.map_or(0.0, |h| (h + 1) as f64)];
        v.extend_from_slice(&self.cached.as_ref().unwrap().1);
        v
    }
    fn next_report_ns(&self) -> Option<u64> {
        self.time.map(|_| self.last_report + TICK_NS)
    }
}

pub struct Sprout {
    target_ticks: usize,
    counts: Vec<f64>,
    remote_time: u64,
    cur_tick: usize,
    queue_est: f64,
    /// Packets sent (the next sequence number).
    next_seq: u64,
    /// (seq, send time in whole ms) of recent packets, trimmed as reports arrive.
    sends: std::collections::VecDeque<(u64, u64)>,
    inflight: u64,
    last_send: u64,
    heartbeat: bool,
    pkt: u64,
}

impl Sprout {
    fn new(target_ticks: usize) -> Sprout {
        Sprout {
            target_ticks,
            counts: forecast(&vec![1.0 / BINS as f64; BINS]),
            remote_time: 0,
            cur_tick: 0,
            queue_est: 0.0,
            next_seq: 0,
            sends: Default::default(),
            inflight: 0,
            last_send: 0,
            heartbeat: true,
            pkt: 1440,
        }
    }
    fn budget(&self) -> f64 {
        let last = self.counts.len() - 1;
        let hi = (self.cur_tick + self.target_ticks).min(last);
        let fc = SENDER_UNIT * (self.counts[hi] - self.counts[self.cur_tick]);
        (fc - self.queue_est).max(0.0)
    }
    /// The reference's queue estimate when a report says packets below `got` arrived: its
    /// next sequence number minus the receiver's `received_or_lost_count`, i.e. the throwaway
    /// point of the highest packet (what was sent over 10 ms before it, at most 65535 bytes back)
    /// plus the lengths of the packets from there on. Sequence bytes run 50 ahead of lengths per
    /// packet, so even a fully received burst leaves up to 2495 bytes in the estimate.
    fn ref_queue_estimate(&mut self, got: u64) -> f64 {
        let sent = (self.next_seq * REF_SEQ_STEP) as f64;
        let Some(h) = got.checked_sub(1) else { return sent };
        while self.sends.front().is_some_and(|c| c.0 + 64 < h) {
            self.sends.pop_front();
        }
        let h_ms = self.sends.iter().find(|c| c.0 == h).map(|c| c.1);
        let oldest = match h_ms {
            Some(t) => self.sends.iter().find(|c| c.0 <= h && c.1 + REORDER_LIMIT_MS >= t).map_or(h, |c| c.0),
            None => 0,
        };
        let tw = ((h - oldest) * REF_SEQ_STEP).min(THROWAWAY_CAP);
        let tb = h * REF_SEQ_STEP - tw.min(h * REF_SEQ_STEP);
        let counted = h + 1 - tb.div_ceil(REF_SEQ_STEP);
        (sent - tb as f64 - REF_PAYLOAD * counted as f64).max(0.0)
    }
    fn advance(&mut self, now: u64) {
        let t = (((now - self.remote_time) / TICK_NS) as usize).min(self.counts.len() - 1);
        while self.cur_tick < t {
            self.queue_est = (self.queue_est - SENDER_UNIT * self.counts[self.cur_tick]).max(0.0);
            self.cur_tick += 1;
        }
        if now >= self.last_send + FALLBACK_NS {
            self.heartbeat = true;
        }
    }
}

impl DgramCc for Sprout {
    fn name(&self) -> &'static str {
        "sprout"
    }
    fn on_start(&mut self, now: u64) {
        self.remote_time = now;
        self.last_send = now;
        self.heartbeat = true;
    }
    fn on_send(&mut self, now: u64, seq: u64, bytes: u32, inflight: u64) {
        self.pkt = bytes as u64;
        self.next_seq = self.next_seq.max(seq + 1);
        self.sends.push_back((seq, now / 1_000_000));
        self.queue_est += REF_PAYLOAD;
        self.inflight = inflight;
        self.last_send = now;
        self.heartbeat = false;
    }
    fn on_ack(&mut self, a: &Acked) {
        self.inflight = a.inflight_bytes;
        self.advance(a.now_ns);
    }
    fn on_loss(&mut self, l: &Lost) {
        self.inflight = l.inflight_bytes;
    }
    fn on_feedback(&mut self, now: u64, values: &[f64]) {
        if values.len() < 1 + NUM_TICKS {
            return;
        }
        let got = values[0] as u64; // packets received or lost: seq < got
        self.counts = values[1..=NUM_TICKS].to_vec();
        self.remote_time = now;
        self.cur_tick = 0;
        self.queue_est = self.ref_queue_estimate(got);
        self.advance(now);
    }
    fn next_timer_ns(&self) -> Option<u64> {
        let next_tick = self.remote_time + (self.cur_tick as u64 + 1) * TICK_NS;
        Some(next_tick.min(self.last_send + FALLBACK_NS))
    }
    fn on_timer(&mut self, now: u64) {
        self.advance(now);
    }
    fn control(&self) -> Control {
        // the reference sends min(1440, budget)-byte packets while the budget is positive; the
        // transport's datagrams are whole, so a positive budget lets one whole packet out
        let b = self.budget();
        let mut allow = if b > 0.0 { b.max(self.pkt as f64) } else { 0.0 };
        if self.heartbeat {
            allow = allow.max(self.pkt as f64);
        }
        Control { rate_bps: None, cwnd_bytes: Some(self.inflight + allow as u64) }
    }
    fn ack_policy(&self) -> AckPolicy {
        AckPolicy { every_packets: u32::MAX, every_ns: Some(TICK_NS) }
    }
    fn receiver(&self) -> Option<Box<dyn DgramReceiverCc>> {
        Some(Box::new(SproutRx::new()))
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("budget_bytes", self.budget()));
        out.push(("queue_est_bytes", self.queue_est));
        out.push(("forecast_100ms_pkts", self.counts.get(self.target_ticks.min(NUM_TICKS) - 1).copied().unwrap_or(0.0)));
    }
}

static PARAMS: &[ParamInfo] = &[ParamInfo {
    name: "target-ticks",
    default: 5.0,
    doc: "delay target in 20 ms ticks (5 = 100 ms); the forecast covers at most 8",
}];

fn make(p: &Params, _seed: u64) -> Result<Box<dyn DgramCc>, String> {
    let target_ticks = p.int("target-ticks", 5, 1, NUM_TICKS as i64 - 1)? as usize;
    Ok(Box::new(Sprout::new(target_ticks)))
}

pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "sprout",
    description: "Sprout: receiver forecasts the varying link's deliveries (Bayesian, Poisson) every 20 ms; sender sends what drains within 100 ms at 95 % confidence",
    source: "Winstein et al., NSDI 2013 §3; github.com/keithw/alfalfa src/sprout/*, src/network/sproutconn.cc, src/network/network.cc, src/examples/sproutbt2.cc, with Pantheon's src/wrappers/patches/sprout.patch",
    params: PARAMS,
    make,
}];

#[cfg(test)]
mod tests {
    use super::super::make as mk;
    use super::super::testlink::{Aimd, Link, SEC};
    use super::*;

    /// The model forecasts little for a link it believes slow and much for a fast one, and a
    /// longer horizon never forecasts less.
    #[test]
    fn forecast_tracks_observed_rate() {
        let run = |pkts_per_tick: usize| {
            let mut rx = SproutRx::new();
            let mut seq = 0;
            for tick in 0..100u64 {
                for j in 0..pkts_per_tick as u64 {
                    rx.on_packet(tick * TICK_NS + j * 10_000 + 1, seq, 1400, 0);
                    seq += 1;
                }
            }
            rx.feedback(100 * TICK_NS + 1)
        };
        let slow = run(2); // 100 packets/s
        let fast = run(12); // 600 packets/s
        eprintln!("slow {:?}\nfast {:?}", &slow[1..], &fast[1..]);
        assert!(fast[5] > 3.0 * slow[5], "{} vs {}", fast[5], slow[5]);
        // 5th percentile over 5 ticks of a 600/s link: below the mean of 60
        assert!(fast[5] > 35.0 && fast[5] < 60.0, "{}", fast[5]);
        for w in fast[1..].windows(2) {
            assert!(w[1] >= w[0]);
        }
    }

    /// The sender keeps the books of Pantheon's build: a 1400-byte forecast unit, 1402 bytes per
    /// packet sent, and the reference's queue estimate after a report — sequence bytes (payload
    /// + 50) minus the receiver's count (throwaway point + lengths after it), so a fully received
    /// 80-packet burst still leaves 2495 bytes and a third-received one 80 × 1452 − 30 × 1402.
    #[test]
    fn keeps_the_references_books() {
        let counts = [13.0, 30.0, 47.0, 64.0, 82.0, 100.0, 118.0, 135.0];
        let report = |got: f64| [&[got][..], &counts[..]].concat();
        let t0 = 1_000 * 1_000_000;
        let burst = || {
            let mut s = Sprout::new(5);
            s.on_start(t0);
            for seq in 0..80 {
                s.on_send(t0 + seq * 20_000, seq, 1472, (seq + 1) * 1472);
            }
            s
        };
        let mut s = burst();
        assert_eq!(s.queue_est, 80.0 * 1402.0);
        s.on_feedback(t0 + 15_000_000, &report(80.0));
        assert_eq!(s.queue_est, 2495.0);
        assert_eq!(s.budget(), 1400.0 * (100.0 - 13.0) - 2495.0);
        let mut s = burst();
        s.on_feedback(t0 + 15_000_000, &report(30.0));
        assert_eq!(s.queue_est, 80.0 * 1452.0 - 30.0 * 1402.0);
        // a packet written off after 10 ms: the burst's second half, 12 ms later
        let mut s = burst();
        for seq in 80..100 {
            s.on_send(t0 + 12_000_000 + seq * 20_000, seq, 1472, 0);
        }
        s.on_feedback(t0 + 20_000_000, &report(90.0));
        // throwaway point = packet 80 (the oldest sent within 10 ms of packet 89)
        assert_eq!(s.queue_est, 100.0 * 1452.0 - 80.0 * 1452.0 - 10.0 * 1402.0);
        // a full budget lets out one datagram per 1402 bytes, whatever their size
        let mut s = burst();
        s.on_feedback(t0 + 15_000_000, &report(80.0));
        let mut n = 0;
        while s.control().cwnd_bytes.unwrap() >= s.inflight + 1472 {
            s.on_send(t0 + 16_000_000, 80 + n, 1472, s.inflight + 1472);
            n += 1;
        }
        assert_eq!(n, ((1400.0 * 87.0 - 2495.0) / 1402.0f64).ceil() as u64);
    }

    /// On a 20 ms link whose rate jumps every half second between 2 and 10 Mbit/s, Sprout keeps
    /// the 95th-percentile queuing delay near its 100 ms target with most of the mean capacity,
    /// while a loss-based AIMD fills the 1000-packet buffer.
    #[test]
    fn bounds_delay_on_a_varying_link() {
        let rates: Vec<f64> = {
            let mut r = netmodel::Rng::new(9, 3);
            (0..200).map(|_| 2e6 + 8e6 * r.next_f64()).collect()
        };
        let mk_link = |seed| {
            let rs = rates.clone();
            let mut l = Link::new(5.0, 20.0, 1000, seed);
            l.rate = Box::new(move |t| rs[((t / 500_000_000) as usize).min(rs.len() - 1)]);
            l
        };
        let mut l = mk_link(1);
        let f = l.add(mk("sprout", &serde_json::Value::Null, 1).unwrap(), 0, 60 * SEC);
        l.run(60 * SEC);
        let q95 = l.owd_ms(f, 10 * SEC, 60 * SEC, 0.95) - 10.0;
        let q50 = l.owd_ms(f, 10 * SEC, 60 * SEC, 0.5) - 10.0;
        let mean_rate: f64 = rates[20..120].iter().sum::<f64>() / 100.0;
        let t = l.tput_bps(f, 10 * SEC, 60 * SEC) / mean_rate;
        let mut a = mk_link(1);
        let g = a.add(Aimd::boxed(), 0, 60 * SEC);
        a.run(60 * SEC);
        let qa = a.owd_ms(g, 10 * SEC, 60 * SEC, 0.95) - 10.0;
        eprintln!("sprout: throughput {t:.3} of the mean capacity, queuing delay p50 {q50:.0} ms p95 {q95:.0} ms; aimd p95 {qa:.0} ms");
        assert!(q95 > 50.0 && q95 < 125.0, "{q95}");
        assert!(t > 0.7, "{t}");
        assert!(qa > 3.0 * q95, "{qa}");
    }
}
