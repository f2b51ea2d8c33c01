//! Host and router timing noise: the small, random processing delays of real network stacks.
//!
//! A simulated network with every rate, delay and start time exact is *phase-locked*: when a
//! backlogged side link feeds a bottleneck of the same rate, its packets reach the bottleneck
//! queue at exactly the instants the queue frees a slot, and a competing flow's packets can
//! find it full every time (the deterministic phase effect of Floyd & Jacobson, "On Traffic
//! Phase Effects in Packet-Switched Gateways", 1992). Real stacks never line up like that: a
//! packet that reaches a host waits for the interrupt, the softirq and the TCP code before
//! anything answers it; an emulator releases it into the host a timer's error late; a timer fires after its
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
//! * `router_ns`: the emulator's release error, drawn **once per path**: a packet that leaves
//!   its last link into its host waits `router_ns + host_ns`; a packet that leaves a link into
//!   a router enters its next link at once. The kernel backend's engine computes every hop in
//!   model time and only the release into the destination host's TUN happens at the wall
//!   clock, so its release error reaches a packet once per direction whatever the number of
//!   routers (docs/fidelity.md, "Datagram endpoints: the router element, not the hosts");
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
    value_at(table, rng.next_f64())
}

/// The table's value at probability `u` in [0, 1).
fn value_at(table: &[(f64, u64)], u: f64) -> u64 {
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

/// [`sample`] with the binary search replaced by a lookup and the division by a multiplication,
/// bit-for-bit the values of [`sample`].
///
/// The lookup: `start[b]` is the segment holding probability `b / BUCKETS`, so the one for `u`
/// is found by stepping forward from `start[floor(u · BUCKETS)]` (at most a step or two for
/// the measured tables).
///
/// The arithmetic: [`interpolate`] computes `trunc(((u - p0) / (p1 - p0)) · w)` with
/// `w = v1 - v0`, three IEEE roundings; here `z' = (u - p0) · s` with `s = w / (p1 - p0)`
/// rounded once per segment. Each rounding is off by at most 2⁻⁵³ relative, so `z'` and the
/// exact path's product differ by less than `4.01 · 2⁻⁵³ · z'` (both are within two roundings of
/// the real `(u - p0) · w / (p1 - p0)`). Their integer parts can differ only when an integer
/// lies that close to `z'`; `z' ≤ w`, so whenever `z'` is farther than `w · 2⁻⁴⁵` from every
/// integer the truncation is the same, and otherwise (about one draw in 2²⁷ for the measured
/// tables) the draw takes [`interpolate`] itself.
struct Sampler {
    table: Vec<(f64, u64)>,
    segs: Vec<Segment>,
    start: Box<[u8; Sampler::BUCKETS]>,
}

/// `[p0, p1)` of the table (the last one `[p, ∞)`, a constant), with its slope and margin.
#[derive(Clone, Copy)]
struct Segment {
    /// The segment's upper end (the next point's probability; ∞ for the last).
    p1: f64,
    p0: f64,
    v0: u64,
    /// `(v1 - v0) / (p1 - p0)`, rounded once (0 for the last).
    slope: f64,
    /// `z'`'s fraction must lie within `(margin, 1 - margin)` for the fast truncation.
    margin: f64,
}

impl Sampler {
    const BUCKETS: usize = 256; // = 2^8: the top 8 bits of the draw

    fn new(table: &[(f64, u64)]) -> Self {
        assert!(!table.is_empty() && table.len() < 256, "noise tables have 1..255 points");
        let segs = (0..table.len())
            .map(|j| {
                let (p0, v0) = table[j];
                match table.get(j + 1) {
                    Some(&(p1, v1)) => {
                        let w = (v1 - v0) as f64;
                        Segment { p1, p0, v0, slope: w / (p1 - p0), margin: w * (1.0 / (1u64 << 45) as f64) }
                    }
                    None => Segment { p1: f64::INFINITY, p0, v0, slope: 0.0, margin: -1.0 },
                }
            })
            .collect();
        let mut start = Box::new([0u8; Self::BUCKETS]);
        for (b, s) in start.iter_mut().enumerate() {
            // b / BUCKETS is exact in f64, as is u · BUCKETS below (a power of two)
            let lo = b as f64 / Self::BUCKETS as f64;
            *s = (table.partition_point(|&(p, _)| p <= lo) - 1) as u8;
        }
        Sampler { table: table.to_vec(), segs, start }
    }

    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        self.at(rng.next_u64())
    }

    /// The value for the raw draw `x` (`u` = its top 53 bits as [`Rng::next_f64`] makes it).
    #[inline(always)]
    fn at(&self, x: u64) -> u64 {
        // floor(u · 256) = the top 8 bits of x, without float conversions
        let u = (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let mut j = self.start[(x >> 56) as usize] as usize;
        while u >= self.segs[j].p1 {
            j += 1;
        }
        let s = &self.segs[j];
        let z = (u - s.p0) * s.slope; // ≥ 0: u ≥ p0
        let y = z as i64;
        let f = z - y as f64; // exact: y ≤ z < y + 1
        if f > s.margin && 1.0 - f > s.margin {
            s.v0 + y as u64
        } else {
            interpolate(&self.table, j + 1, u)
        }
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

/// One link's exit: packets waiting for the next node's processing, in order. 96 bytes,
/// smaller than an `Option` of the drawn-ahead tuple would make it: with many links most
/// exits are cold when a packet reaches them, and each line read is a miss.
pub struct ExitFifo {
    /// The exit's stream, after the two draws whose sum is `next`.
    rng: Rng,
    /// The next host-bound packet's delay (`router_ns` then `host_ns`, two draws from the
    /// exit's stream), computed ahead so that a hand-over time waits only for an addition.
    /// The draws stay two per host-bound packet in exit order.
    next: u64,
    /// Hand-over time of the last packet whose delay was drawn here.
    last: u64,
    queue: std::collections::VecDeque<Waiting>,
    /// On a link whose packets leave in order ([`netmodel::Link::fifo_exit`]): the hand-over
    /// time already drawn for the packet that will leave next (its handle id; `ahead`: 0 =
    /// none drawn, else 1 + whether it goes to a host), so that the link's one wake-up can be
    /// at that time instead of one at the arrival and another at the hand-over. The draws
    /// stay in exit order, as without it.
    ahead_at: u64,
    ahead_id: u32,
    ahead: u8,
    /// Whether the link's exit uses `ahead` (set by the loop).
    pub in_order: bool,
    /// Whether any packet leaves this exit into a host (set by the loop from the routes); an
    /// exit that only feeds routers has no noise, and the loop forwards its packets as with
    /// noise off.
    pub hosts: bool,
}

/// A packet waiting at a link's exit: its hand-over time and the packet.
pub type Waiting = (u64, netmodel::PktMeta);

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
        let (host, router, timer) = (Sampler::new(&cfg.host_ns), Sampler::new(&cfg.router_ns), Sampler::new(&cfg.timer_ns));
        let exits = (0..n_links)
            .map(|l| {
                let mut rng = Rng::new(seed, NOISE_STREAM ^ l as u64);
                let next = router.at(rng.next_u64()) + host.at(rng.next_u64());
                let queue = Default::default();
                ExitFifo { rng, next, last: 0, queue, ahead_at: 0, ahead_id: 0, ahead: 0, in_order: false, hosts: true }
            })
            .collect();
        let timer_rng = Rng::new(seed, TIMER_STREAM);
        Noise { cfg: cfg.clone(), exits, host, router, timer, timer_rng, memo: Vec::new() }
    }

    /// Queue `m` at link `l`'s exit at `now` for a host (`to_host`) or a router; returns
    /// `true` if the FIFO was empty (the caller schedules its wake-up at [`Noise::front`]).
    pub fn push_exit(&mut self, l: u32, now: u64, m: netmodel::PktMeta, to_host: bool) -> bool {
        let t = self.draw(l, now, to_host);
        let q = &mut self.exits[l as usize].queue;
        q.push_back((t, m));
        q.len() == 1
    }

    /// The hand-over time at link `l`'s exit of the next packet to leave it, which leaves at
    /// `now` for a host (`to_host`: after the release error and the host's processing) or a
    /// router (no delay): `max(now + delay, previous hand-over)`.
    #[inline]
    pub fn draw(&mut self, l: u32, now: u64, to_host: bool) -> u64 {
        let e = &mut self.exits[l as usize];
        let t = if to_host {
            let d = e.next;
            e.next = self.router.at(e.rng.next_u64()) + self.host.at(e.rng.next_u64());
            (now + d).max(e.last)
        } else {
            now.max(e.last)
        };
        e.last = t;
        t
    }

    /// The hand-over time of the packet first in link `l`'s exit FIFO.
    #[inline]
    pub fn front(&self, l: u32) -> Option<u64> {
        self.queue_front(l).map(|(t, _)| t)
    }

    /// The packet first in link `l`'s exit FIFO, with its hand-over time.
    #[inline]
    pub fn queue_front(&self, l: u32) -> Option<Waiting> {
        self.exits[l as usize].queue.front().copied()
    }

    /// Take the packet first in link `l`'s exit FIFO.
    #[inline]
    pub fn queue_pop(&mut self, l: u32) -> Option<Waiting> {
        self.exits[l as usize].queue.pop_front()
    }

    /// Put a packet at the end of link `l`'s exit FIFO.
    #[inline]
    pub fn queue_push(&mut self, l: u32, w: Waiting) {
        self.exits[l as usize].queue.push_back(w);
    }

    /// The packets in link `l`'s exit FIFO, in order.
    pub fn queued(&self, l: u32) -> impl Iterator<Item = &Waiting> {
        self.exits[l as usize].queue.iter()
    }

    /// The hand-over already drawn for the packet that will leave in-order link `l` next.
    #[inline]
    pub fn ahead(&self, l: u32) -> Option<u64> {
        let e = &self.exits[l as usize];
        (e.ahead != 0).then_some(e.ahead_at)
    }

    /// Take link `l`'s drawn-ahead hand-over: (packet handle id, time, whether to a host).
    #[inline]
    pub fn take_ahead(&mut self, l: u32) -> Option<(u32, u64, bool)> {
        let e = &mut self.exits[l as usize];
        let a = (e.ahead != 0).then_some((e.ahead_id, e.ahead_at, e.ahead == 2));
        e.ahead = 0;
        a
    }

    /// Record the hand-over `h` drawn for packet `id`, next to leave link `l`.
    #[inline]
    pub fn set_ahead(&mut self, l: u32, id: u32, h: u64, to_host: bool) {
        let e = &mut self.exits[l as usize];
        (e.ahead_id, e.ahead_at, e.ahead) = (id, h, 1 + to_host as u8);
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

    /// Draws whose interpolated value lies within a few units in the last place of an integer,
    /// where a product rounded differently could truncate to another value: the fast path
    /// must hand them to the exact arithmetic (and some of them do need it).
    #[test]
    fn the_lookup_sampler_is_exact_next_to_integers() {
        let tables: [&[(f64, u64)]; 3] = [
            &[(0.0, 1000), (0.1, 16200), (0.2, 18700), (0.5, 22200), (0.9, 38000), (0.95, 56000), (0.99, 101700)],
            &[(0.0, 1600), (0.1, 3900), (0.8, 6300), (0.9, 10700), (0.95, 38000), (0.99, 175700)],
            &[(0.0, 0), (0.3, 7), (0.7, 1_000_003)],
        ];
        let (mut probes, mut naive_wrong) = (0u64, 0u64);
        for t in tables {
            let s = Sampler::new(t);
            for w in t.windows(2) {
                let ((p0, v0), (p1, v1)) = (w[0], w[1]);
                let n_values = v1 - v0;
                let step = (n_values / 4000).max(1);
                for n in (1..n_values).step_by(step as usize) {
                    let u_star = p0 + (p1 - p0) * n as f64 / n_values as f64;
                    let k = (u_star * (1u64 << 53) as f64) as i64;
                    for d in -4i64..=4 {
                        let x = ((k + d) as u64) << 11 | 0x7ff;
                        let u = (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                        let want = value_at(t, u);
                        assert_eq!(s.at(x), want, "table {t:?} at u = {u:e}");
                        let j = t.partition_point(|&(p, _)| p <= u) - 1;
                        let g = &s.segs[j];
                        naive_wrong += (g.v0 + ((u - g.p0) * g.slope) as u64 != want) as u64;
                        probes += 1;
                    }
                }
            }
        }
        assert!(probes > 100_000, "{probes}");
        assert!(naive_wrong > 0, "the probes never reach a value the multiplication alone gets wrong");
    }

    /// The delays drawn ahead are, packet by packet, those of two draws per host-bound packet
    /// from the exit's stream (`router_ns`, then `host_ns`), and router-bound packets take no
    /// draw and no delay beyond the exit's order, whatever the mix of hosts and routers.
    #[test]
    fn delays_drawn_ahead_are_the_packets_own() {
        let cfg = NoiseConfig {
            model: String::new(),
            host_ns: vec![(0.0, 1000), (0.5, 20_000), (0.9, 40_000), (0.99, 100_000)],
            router_ns: vec![(0.0, 1600), (0.3, 4000), (0.95, 38_000), (0.99, 175_700)],
            timer_ns: vec![(0.0, 0), (0.5, 3000), (1.0, 9000)],
            clock_ppm: 0.0,
        };
        let mut n = Noise::new(&cfg, 11, 3);
        let mut streams: Vec<Rng> = (0..3).map(|l| Rng::new(11, NOISE_STREAM ^ l)).collect();
        let mut last = [0u64; 3];
        let mut pick = Rng::new(5, 5);
        for i in 0..30_000u64 {
            let l = pick.below(3) as usize;
            // exit 0 serves hosts only, exit 1 routers only, exit 2 both at random
            let to_host = match l {
                0 => true,
                1 => false,
                _ => pick.below(2) == 0,
            };
            let now = i * 700;
            let d = if to_host {
                let r = sample(&cfg.router_ns, &mut streams[l]);
                r + sample(&cfg.host_ns, &mut streams[l])
            } else {
                0
            };
            last[l] = (now + d).max(last[l]);
            assert_eq!(n.draw(l as u32, now, to_host), last[l], "packet {i} at exit {l}");
        }
        let mut timers = Rng::new(11, TIMER_STREAM);
        for tg in 0..1000usize {
            assert_eq!(n.slacken(tg, 5_000 * tg as u64), 5_000 * tg as u64 + sample(&cfg.timer_ns, &mut timers));
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
        let q: Vec<Waiting> = n.queued(0).copied().collect();
        assert!(q.iter().zip(q.iter().skip(1)).all(|(a, b)| a.0 <= b.0 && a.1.id < b.1.id));
        assert!(q.iter().enumerate().all(|(i, &(t, _))| t >= i as u64 * 1000));
        assert!(std::mem::size_of::<ExitFifo>() <= 96);
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
