//! Host and router timing noise: the small, random processing delays of real network stacks.
//!
//! A simulated network with every rate, delay and start time exact is *phase-locked*: when a
//! backlogged side link feeds a bottleneck of the same rate, its packets reach the bottleneck
//! queue at exactly the instants the queue frees a slot, and a competing flow's packets can
//! find it full every time (the deterministic phase effect of Floyd & Jacobson, "On Traffic
//! Phase Effects in Packet-Switched Gateways", 1992). Real stacks never line up like that: a
//! packet that reaches a host waits for the interrupt, the softirq and the TCP code before
//! anything answers it; a router forwards after its own processing; a timer fires after its
//! slack. This module draws those delays from distributions measured on the kernel backend
//! (`benches/host_noise.py`, docs/fidelity.md), one independent stream per element.
//!
//! Every link runs on its own clock: its rate is off by a constant drawn uniformly from
//! `±clock_ppm` parts per million (IEEE 802.3 allows ±100 ppm per transmitter; PC and NIC
//! oscillators are typically within tens of ppm), so two links of the same nominal rate drift
//! against each other and no phase relation between them lasts.
//!
//! Three tables, each a piecewise-linear inverse CDF given as `(probability, ns)` points:
//! * `host_ns`: a packet that leaves a link into a host is handed to its TCP endpoint after
//!   this delay (receive processing plus the transmit path of what it triggers);
//! * `router_ns`: a packet that leaves a link into a router enters its next link after this;
//! * `timer_ns`: a host timer (pacing, RTO, TLP, delayed ACK) fires this late.
//!
//! Packets never overtake each other inside one element: the hand-over time is
//! `max(arrival + delay, previous hand-over)` per link exit (a FIFO, as a NIC ring and a
//! softirq backlog are).

use netmodel::rng::Rng;
use serde::Deserialize;

/// The resolved noise model (`host_noise` of the resolved experiment; absent = exact).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct NoiseConfig {
    /// A name for provenance (e.g. the measured kernel).
    #[serde(default)]
    pub model: String,
    pub host_ns: Vec<(f64, u64)>,
    pub router_ns: Vec<(f64, u64)>,
    pub timer_ns: Vec<(f64, u64)>,
    /// Largest clock offset of a link's rate, parts per million.
    #[serde(default)]
    pub clock_ppm: f64,
}

impl NoiseConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1000.0).contains(&self.clock_ppm) {
            return Err(format!("host_noise.clock_ppm = {} must be within [0, 1000]", self.clock_ppm));
        }
        for (name, t) in [("host_ns", &self.host_ns), ("router_ns", &self.router_ns), ("timer_ns", &self.timer_ns)] {
            if t.is_empty() || t[0].0 != 0.0 {
                return Err(format!("host_noise.{name} must start at probability 0"));
            }
            if t.windows(2).any(|w| !(w[1].0 > w[0].0) || w[1].1 < w[0].1) || t.last().unwrap().0 > 1.0 {
                return Err(format!(
                    "host_noise.{name}: probabilities must increase within [0, 1] and delays must not decrease"
                ));
            }
        }
        Ok(())
    }
}

/// Inverse-CDF sampling from a `(p, ns)` table; beyond the last point, its value.
pub fn sample(table: &[(f64, u64)], rng: &mut Rng) -> u64 {
    let u = rng.next_f64();
    let i = table.partition_point(|&(p, _)| p <= u);
    interpolate(table, i, u)
}

/// The table's value at `u`, given `i` = the first point with probability above `u`.
#[inline(always)]
fn interpolate(table: &[(f64, u64)], i: usize, u: f64) -> u64 {
    if i >= table.len() {
        return table[table.len() - 1].1;
    }
    let (p0, v0) = table[i - 1];
    let (p1, v1) = table[i];
    // the product is in [0, v1 - v0], so the (cheaper) i64 conversion is exact
    v0 + ((u - p0) / (p1 - p0) * (v1 - v0) as f64) as i64 as u64
}

/// [`sample`] with the binary search replaced by a lookup: `start[b]` is the first point with
/// probability above `b / BUCKETS`, so the point for `u` is found by stepping forward from
/// `start[floor(u · BUCKETS)]` (at most a step or two for the measured tables). The same `i`,
/// the same arithmetic: the values are bit-for-bit those of [`sample`].
struct Sampler {
    table: Vec<(f64, u64)>,
    start: Box<[u8; Sampler::BUCKETS]>,
}

impl Sampler {
    const BUCKETS: usize = 256; // = 2^8: the top 8 bits of the draw

    fn new(table: &[(f64, u64)]) -> Self {
        assert!(!table.is_empty() && table.len() < 256, "noise tables have 1..255 points");
        let mut start = Box::new([0u8; Self::BUCKETS]);
        for (b, s) in start.iter_mut().enumerate() {
            // b / BUCKETS is exact in f64, as is u · BUCKETS below (a power of two)
            let lo = b as f64 / Self::BUCKETS as f64;
            *s = table.partition_point(|&(p, _)| p <= lo) as u8;
        }
        Sampler { table: table.to_vec(), start }
    }

    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        // u = Rng::next_f64(), and floor(u · 256) = its top 8 bits, without float conversions
        let x = rng.next_u64();
        let u = (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let t = &self.table;
        let mut i = self.start[(x >> 56) as usize] as usize;
        while i < t.len() && t[i].0 <= u {
            i += 1;
        }
        interpolate(t, i, u)
    }
}

/// Stream ids: `NOISE_STREAM ^ (link id)` for link exits, `TIMER_STREAM` for timers.
const NOISE_STREAM: u64 = 0x686f_7374_0000_0000; // "host"
const TIMER_STREAM: u64 = 0x7469_6d72_0000_0000; // "timr"
const CLOCK_STREAM: u64 = 0x636c_6f63_0000_0000; // "cloc"

/// Link `id`'s rate under its own clock: `rate · (1 + x)`, x uniform in ±`clock_ppm`·10⁻⁶.
pub fn clocked_rate(cfg: &NoiseConfig, seed: u64, id: u32, rate_bps: u64) -> u64 {
    let x = (Rng::new(seed, CLOCK_STREAM ^ id as u64).next_f64() * 2.0 - 1.0) * cfg.clock_ppm * 1e-6;
    ((rate_bps as f64) * (1.0 + x)).round().max(1.0) as u64
}

/// One link's exit: packets waiting for the next node's processing, in order.
pub struct ExitFifo {
    rng: Rng,
    /// Hand-over time of the last packet whose delay was drawn here.
    last: u64,
    pub queue: std::collections::VecDeque<(u64, netmodel::PktMeta)>,
    /// On a link whose packets leave in order ([`netmodel::Link::fifo_exit`]): the hand-over
    /// time already drawn for the packet that will leave next (its handle id; whether it goes
    /// to a host), so that the
    /// link's one wake-up can be at that time instead of one at the arrival and another at
    /// the hand-over. The draws stay one per packet in exit order, as without it.
    pub ahead: Option<(u32, u64, bool)>,
    /// Whether the link's exit uses `ahead` (set by the loop).
    pub in_order: bool,
}

/// The noise state of one run.
pub struct Noise {
    pub cfg: NoiseConfig,
    pub exits: Vec<ExitFifo>,
    host: Sampler,
    router: Sampler,
    timer: Sampler,
    timer_rng: Rng,
    /// Per event target: (requested time, slackened time) of its last timer.
    memo: Vec<(u64, u64)>,
}

impl Noise {
    pub fn new(cfg: &NoiseConfig, seed: u64, n_links: usize) -> Self {
        Noise {
            cfg: cfg.clone(),
            exits: (0..n_links)
                .map(|l| ExitFifo { rng: Rng::new(seed, NOISE_STREAM ^ l as u64), last: 0, queue: Default::default(), ahead: None, in_order: false })
                .collect(),
            host: Sampler::new(&cfg.host_ns),
            router: Sampler::new(&cfg.router_ns),
            timer: Sampler::new(&cfg.timer_ns),
            timer_rng: Rng::new(seed, TIMER_STREAM),
            memo: Vec::new(),
        }
    }

    /// Queue `m` at link `l`'s exit at `now` for a host (`to_host`) or a router; returns
    /// `true` if the FIFO was empty (the caller schedules its wake-up at [`Noise::front`]).
    pub fn push_exit(&mut self, l: u32, now: u64, m: netmodel::PktMeta, to_host: bool) -> bool {
        let t = self.draw(l, now, to_host);
        let e = &mut self.exits[l as usize];
        e.queue.push_back((t, m));
        e.queue.len() == 1
    }

    /// The hand-over time at link `l`'s exit of the next packet to leave it, which leaves at
    /// `now` for a host (`to_host`) or a router: `max(now + delay, previous hand-over)`.
    #[inline]
    pub fn draw(&mut self, l: u32, now: u64, to_host: bool) -> u64 {
        let s = if to_host { &self.host } else { &self.router };
        let e = &mut self.exits[l as usize];
        let t = (now + s.sample(&mut e.rng)).max(e.last);
        e.last = t;
        t
    }

    pub fn front(&self, l: u32) -> Option<u64> {
        self.exits[l as usize].queue.front().map(|&(t, _)| t)
    }

    /// The time timer target `tg` really fires for a requested time `t` (one draw per
    /// distinct request, so re-arming the same timer does not redraw).
    pub fn slacken(&mut self, tg: usize, t: u64) -> u64 {
        if self.memo.len() <= tg {
            self.memo.resize(tg + 1, (u64::MAX, u64::MAX));
        }
        let (req, got) = self.memo[tg];
        if req == t {
            return got;
        }
        let s = t.saturating_add(self.timer.sample(&mut self.timer_rng));
        self.memo[tg] = (t, s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_cdf_follows_the_table() {
        let t = [(0.0, 0), (0.5, 1000), (0.9, 2000), (0.99, 10_000)];
        let mut rng = Rng::new(1, 2);
        let mut xs: Vec<u64> = (0..100_000).map(|_| sample(&t, &mut rng)).collect();
        xs.sort_unstable();
        let q = |p: f64| xs[(p * xs.len() as f64) as usize];
        assert!((q(0.25) as i64 - 500).abs() < 20, "{}", q(0.25));
        assert!((q(0.5) as i64 - 1000).abs() < 20, "{}", q(0.5));
        assert!((q(0.7) as i64 - 1500).abs() < 30, "{}", q(0.7));
        assert_eq!(*xs.last().unwrap(), 10_000);
        assert!(xs[(0.995 * xs.len() as f64) as usize] == 10_000);
    }

    #[test]
    fn the_lookup_sampler_draws_what_the_search_draws() {
        let tables: [&[(f64, u64)]; 3] = [
            &[(0.0, 1000), (0.1, 16200), (0.2, 18700), (0.5, 22200), (0.9, 38000), (0.95, 56000), (0.99, 101700)],
            &[(0.0, 5)],
            &[(0.0, 0), (0.001, 7), (0.00390625, 9), (0.5, 10), (0.50001, 400), (1.0, 1000)],
        ];
        for t in tables {
            let s = Sampler::new(t);
            let (mut a, mut b) = (Rng::new(9, 1), Rng::new(9, 1));
            for _ in 0..200_000 {
                assert_eq!(s.sample(&mut a), sample(t, &mut b));
            }
        }
    }

    #[test]
    fn exits_keep_packet_order() {
        let cfg = NoiseConfig {
            model: String::new(),
            host_ns: vec![(0.0, 0), (1.0, 100_000)],
            router_ns: vec![(0.0, 0), (1.0, 100_000)],
            timer_ns: vec![(0.0, 0), (1.0, 1)],
            clock_ppm: 50.0,
        };
        cfg.validate().unwrap();
        let r: Vec<u64> = (0..100).map(|l| clocked_rate(&cfg, 1, l, 100_000_000)).collect();
        assert!(r.iter().all(|&x| (99_995_000..=100_005_000).contains(&x)));
        assert!(r.iter().any(|&x| x < 99_998_000) && r.iter().any(|&x| x > 100_002_000));
        assert_eq!(r[7], clocked_rate(&cfg, 1, 7, 100_000_000));
        let mut n = Noise::new(&cfg, 3, 1);
        for i in 0..1000u32 {
            n.push_exit(0, i as u64 * 1000, netmodel::PktMeta { id: i, size: 1500, flow: 0, ecn: 0 }, i % 2 == 0);
        }
        let q = &n.exits[0].queue;
        assert!(q.iter().zip(q.iter().skip(1)).all(|(a, b)| a.0 <= b.0 && a.1.id < b.1.id));
        assert!(q.iter().enumerate().all(|(i, &(t, _))| t >= i as u64 * 1000));
    }

    #[test]
    fn bad_tables_are_refused() {
        let mut cfg = NoiseConfig {
            model: String::new(),
            host_ns: vec![(0.1, 0)],
            router_ns: vec![(0.0, 0)],
            timer_ns: vec![(0.0, 0)],
            clock_ppm: 0.0,
        };
        assert!(cfg.validate().unwrap_err().contains("host_ns"));
        cfg.host_ns = vec![(0.0, 5), (0.5, 4)];
        assert!(cfg.validate().unwrap_err().contains("must not decrease"));
    }
}
