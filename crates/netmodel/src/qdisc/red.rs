//! RED, Random Early Detection (Floyd & Jacobson 1993; RFC 2309), as Linux `sch_red.c` over
//! `include/net/red.h`, with the parameter defaults of iproute2's `tc qdisc ... red`.
//!
//! At each arrival the average queue is updated, `avg += W·(backlog − avg)` with W = 2^−wlog,
//! kept in fixed point as `avg << wlog` (Linux `red_calc_qavg_no_idle_time`). Below `min`
//! nothing happens; at or above `max` every packet is dropped (or, with `ecn` and not
//! `harddrop`, ECT packets are CE-marked); in between packets are dropped/marked with
//! p_b = max_p·(avg − min)/(max − min), spread uniformly by the "count" method: a fresh
//! uniform `qR` in [0, (max − min)/max_p) is drawn after each mark and the next mark comes at
//! the first arrival with (avg − min)·count >= qR (`red_action`, `red_mark_probability`).
//! After an idle period the average decays as if `idle / (avpkt at bandwidth)` empty-queue
//! arrivals had been seen: avg·(1 − W)^m (the Floyd–Jacobson rule Linux approximates).
//!
//! Thresholds are in bytes (Linux) or, when given in packets, the backlog is counted in
//! packets (ns-2's queue-in-packets mode).
//!
//! Differences from Linux: the idle decay is computed exactly instead of through tc's 256-entry
//! `Stab` table; `gentle` (Floyd 2000: p rises from max_p at `max` to 1 at 2·`max`, hard
//! marks only from 2·`max`) is an extension from ns-2/FreeBSD — Linux RED has no gentle mode;
//! adaptive RED is not implemented; the limit may be in packets or bytes.

use serde::Deserialize;

use super::{over_limit, set_ce, Fifo, Qdisc};
use crate::{Nanos, PktMeta, Rng};

fn default_probability() -> f64 {
    0.02
}
fn default_avpkt() -> u32 {
    1000
}

/// `queue: {kind: red, ...}`. Defaults are tc's: `max` = limit/4, `min` = max/3, `probability`
/// 0.02, `avpkt` 1000 bytes, `burst` = (2·min + max)/(3·avpkt), `bandwidth` 10 Mbit/s.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Hard limit in packets / bytes (null = none).
    #[serde(default)]
    pub packets: Option<u32>,
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Thresholds in bytes (Linux) ...
    #[serde(default)]
    pub min_bytes: Option<u64>,
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// ... or in packets (then the average counts packets).
    #[serde(default)]
    pub min_packets: Option<u32>,
    #[serde(default)]
    pub max_packets: Option<u32>,
    /// max_p: the drop probability reached at `max` (default 0.02).
    #[serde(default = "default_probability")]
    pub probability: f64,
    /// Average packet size in bytes, for `burst` and the idle decay (default 1000).
    #[serde(default = "default_avpkt")]
    pub avpkt: u32,
    /// Burst in packets the average should absorb; sets W (default (2·min + max)/(3·avpkt)).
    #[serde(default)]
    pub burst: Option<u32>,
    /// W = 2^−wlog directly (overrides `burst`).
    #[serde(default)]
    pub wlog: Option<u8>,
    /// Link rate for the idle decay (default 10 Mbit/s, tc's; the config layer passes the
    /// link's rate).
    #[serde(default)]
    pub bandwidth_bps: Option<u64>,
    /// CE-mark ECT packets instead of dropping them.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`: drop (not mark) above `max`.
    #[serde(default)]
    pub harddrop: bool,
    /// With `ecn`: enqueue Not-ECT packets RED would have dropped (Linux `nodrop`).
    #[serde(default)]
    pub nodrop: bool,
    /// Gentle RED (not in Linux): p from max_p to 1 between `max` and 2·`max`.
    #[serde(default)]
    pub gentle: bool,
}

/// tc's `tc_red_eval_ewma`: the smallest wlog such that a burst of `burst` packets arriving at
/// an empty queue does not push the average over `qmin` (`qmin_pkts` = min / avpkt).
pub fn eval_ewma(qmin_pkts: f64, burst: u32) -> u8 {
    let a = (burst as f64 + 1.0 - qmin_pkts).max(1.0);
    let mut w = 0.5f64;
    for wlog in 1..32u8 {
        if a <= (1.0 - (1.0 - w).powi(burst as i32)) / w {
            return wlog;
        }
        w /= 2.0;
    }
    31
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    DontMark,
    ProbMark,
    HardMark,
}

pub struct Red {
    fifo: Fifo,
    limit_packets: Option<u32>,
    limit_bytes: Option<u64>,
    packet_mode: bool,
    /// Thresholds in backlog units, and shifted by wlog.
    min: u64,
    max: u64,
    qth_min: u64,
    qth_max: u64,
    wlog: u32,
    max_p: u32,
    max_p_delta: u32,
    /// Average backlog << wlog.
    qavg: u64,
    qcount: i64,
    qr: u32,
    idle_start: Option<Nanos>,
    xmit_ns: f64,
    ecn: bool,
    harddrop: bool,
    nodrop: bool,
    gentle: bool,
    rng: Rng,
    marks: u64,
    sojourn: Option<Nanos>,
}

impl Red {
    pub fn new(c: &RedConfig, rng: Rng) -> Self {
        let packet_mode = if c.min_packets.is_some() || c.max_packets.is_some() {
            true
        } else if c.min_bytes.is_some() || c.max_bytes.is_some() {
            false
        } else {
            c.bytes.is_none()
        };
        let avpkt = c.avpkt.max(1) as u64;
        let (min, max) = if packet_mode {
            let limit = c.packets.map(|l| l as u64);
            let max = c.max_packets.map(|m| m as u64).or(limit.map(|l| l / 4)).unwrap_or(15);
            let min = c.min_packets.map(|m| m as u64).unwrap_or(if limit.is_some() || c.max_packets.is_some() { max / 3 } else { 5 });
            (min, max)
        } else {
            let limit = c.bytes.or(c.packets.map(|p| p as u64 * avpkt));
            let max = c.max_bytes.or(limit.map(|l| l / 4)).unwrap_or(15 * avpkt);
            let min = c.min_bytes.unwrap_or(max / 3);
            (min, max)
        };
        let unit = if packet_mode { 1 } else { avpkt };
        let burst = c.burst.unwrap_or(((2 * min + max) / (3 * unit)) as u32);
        let wlog = c.wlog.unwrap_or_else(|| eval_ewma(min as f64 / unit as f64, burst)) as u32;
        let delta = max.saturating_sub(min).max(1);
        let max_p = (c.probability.clamp(0.0, 1.0) * 4_294_967_296.0).min(u32::MAX as f64) as u32;
        let max_p_delta = ((max_p as u64 / delta) as u32).max(1);
        let bw = c.bandwidth_bps.unwrap_or(10_000_000).max(1) as f64;
        Red {
            fifo: Fifo::default(),
            limit_packets: c.packets,
            limit_bytes: c.bytes,
            packet_mode,
            min,
            max,
            qth_min: min << wlog,
            qth_max: max << wlog,
            wlog,
            max_p,
            max_p_delta,
            qavg: 0,
            qcount: -1,
            qr: 0,
            idle_start: None,
            xmit_ns: avpkt as f64 * 8.0 * 1e9 / bw,
            ecn: c.ecn,
            harddrop: c.harddrop,
            nodrop: c.nodrop,
            gentle: c.gentle,
            rng,
            marks: 0,
            sojourn: None,
        }
    }

    /// The average queue (in packets or bytes, the thresholds' unit).
    pub fn average(&self) -> f64 {
        self.qavg as f64 / (1u64 << self.wlog) as f64
    }

    pub fn wlog(&self) -> u32 {
        self.wlog
    }

    fn backlog(&self) -> u64 {
        if self.packet_mode {
            self.fifo.len() as u64
        } else {
            self.fifo.bytes()
        }
    }

    /// `red_random`: uniform in [0, 2^32 / max_p_delta) = [0, (max − min)/max_p).
    fn random(&mut self) -> u32 {
        ((self.rng.next_u64() >> 32) as u32) / self.max_p_delta
    }

    /// `red_calc_qavg` (+ end of the idle period).
    fn update_average(&mut self, now: Nanos) {
        if let Some(start) = self.idle_start.take() {
            let m = (now - start) as f64 / self.xmit_ns;
            let w = 1.0 / (1u64 << self.wlog) as f64;
            self.qavg = (self.qavg as f64 * (1.0 - w).powf(m)) as u64;
        } else {
            self.qavg = self.qavg - (self.qavg >> self.wlog) + self.backlog();
        }
    }

    /// `red_action` (with the gentle extension).
    fn action(&mut self) -> Action {
        let qavg = self.qavg;
        if qavg < self.qth_min {
            self.qcount = -1;
            return Action::DontMark;
        }
        let hard = if self.gentle { 2 * self.qth_max } else { self.qth_max };
        if qavg >= hard {
            self.qcount = -1;
            return Action::HardMark;
        }
        self.qcount += 1;
        if self.qcount == 0 {
            self.qr = self.random();
            return Action::DontMark;
        }
        // max_p·excess/(max − min) is p_b; gentle: p_b = max_p + (1 − max_p)(avg − max)/max.
        let excess = if qavg < self.qth_max {
            (qavg - self.qth_min) >> self.wlog
        } else {
            let maxp = self.max_p.max(1) as f64 / 4_294_967_296.0;
            let avg = qavg as f64 / (1u64 << self.wlog) as f64;
            let pb = maxp + (1.0 - maxp) * (avg - self.max as f64) / self.max.max(1) as f64;
            (pb * (self.max - self.min).max(1) as f64 / maxp) as u64
        };
        if excess.saturating_mul(self.qcount as u64) >= self.qr as u64 {
            self.qcount = 0;
            self.qr = self.random();
            return Action::ProbMark;
        }
        Action::DontMark
    }
}

impl Qdisc for Red {
    fn drops_at_dequeue(&self) -> bool {
        false
    }

    fn enqueue(&mut self, now: Nanos, mut pkt: PktMeta, drops: &mut Vec<PktMeta>) {
        self.update_average(now);
        let congestion_drop = match self.action() {
            Action::DontMark => false,
            Action::ProbMark => !self.ecn || (!set_ce(&mut pkt, &mut self.marks) && !self.nodrop),
            Action::HardMark => {
                self.harddrop || !self.ecn || (!set_ce(&mut pkt, &mut self.marks) && !self.nodrop)
            }
        };
        if congestion_drop || over_limit(self.limit_packets, self.limit_bytes, self.fifo.len(), self.fifo.bytes(), pkt.size) {
            drops.push(pkt);
        } else {
            self.fifo.push(pkt, now);
        }
    }

    fn dequeue(&mut self, now: Nanos, _drops: &mut Vec<PktMeta>) -> Option<PktMeta> {
        match self.fifo.pop() {
            Some((p, t)) => {
                self.sojourn = Some(now - t);
                Some(p)
            }
            None => {
                if self.idle_start.is_none() {
                    self.idle_start = Some(now);
                }
                None
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn marks(&self) -> u64 {
        self.marks
    }
    fn sojourn_ns(&self) -> Option<Nanos> {
        self.sojourn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ECN_CE, ECN_ECT0, ECN_NOT_ECT};

    fn bytes_cfg() -> RedConfig {
        // tc qdisc add ... red limit 400000 min 30000 max 90000 avpkt 1000 probability 0.02
        RedConfig {
            bytes: Some(400_000),
            min_bytes: Some(30_000),
            max_bytes: Some(90_000),
            probability: 0.02,
            avpkt: 1000,
            ..Default::default()
        }
    }

    #[test]
    fn wlog_from_burst_as_tc() {
        // Default burst (2·30000 + 90000)/(3·1000) = 50; a = 50 + 1 − 30 = 21;
        // W = 1/16: (1 − (15/16)^50)·16 = 15.37 < 21; W = 1/32: (1 − (31/32)^50)·32 = 25.47.
        assert_eq!(eval_ewma(30.0, 50), 5);
        assert_eq!(Red::new(&bytes_cfg(), Rng::new(0, 0)).wlog(), 5);
        // tc's defaults from the limit alone: max = 100000, min = 33333.
        let r = Red::new(&RedConfig { bytes: Some(400_000), ..Default::default() }, Rng::new(0, 0));
        assert_eq!((r.min, r.max), (33_333, 100_000));
    }

    #[test]
    fn average_follows_the_ewma_at_each_arrival() {
        let mut q = Red::new(&RedConfig { wlog: Some(3), min_bytes: Some(1_000_000), max_bytes: Some(2_000_000), ..bytes_cfg() }, Rng::new(0, 0));
        let mut drops = vec![];
        let mut avg = 0.0f64;
        for i in 0..40u32 {
            let backlog = i as f64 * 1000.0; // bytes waiting when packet i arrives
            avg += (backlog - avg) / 8.0;
            q.enqueue(0, PktMeta { id: i, size: 1000, flow: 0, ecn: ECN_NOT_ECT }, &mut drops);
            // Linux's fixed point (avg << 3) truncates by < 1 byte per step, and loses less
            // than 8 bytes overall (the truncations decay with the average).
            assert!((q.average() - avg).abs() < 8.0, "{i}: {} vs {avg}", q.average());
        }
        assert!(drops.is_empty());
    }

    /// Pin the average at `avg` (backlog units) and return the gaps between marks.
    fn gaps_at(cfg: &RedConfig, avg: f64, n: usize) -> Vec<u64> {
        let mut r = Red::new(cfg, Rng::new(11, 12));
        r.qavg = (avg * (1u64 << r.wlog) as f64) as u64;
        let mut gaps = vec![];
        let mut last = 0u64;
        for i in 1..=n as u64 {
            if r.action() == Action::ProbMark {
                gaps.push(i - last);
                last = i;
            }
        }
        gaps
    }

    #[test]
    fn marking_probability_between_thresholds() {
        // avg = 60000: p_b = 0.02·(60000 − 30000)/60000 = 0.01. The count method spreads marks
        // uniformly over 1..1/p_b = 100 arrivals: mean gap (1 + 100)/2 = 50.5, never above 100.
        let gaps = gaps_at(&bytes_cfg(), 60_000.0, 400_000);
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        // sd of a gap ≈ 100/√12 = 28.9, of the mean over ~7900 gaps ≈ 0.33: 5 sigma = 1.6.
        assert!((mean - 50.5).abs() < 1.6, "mean gap {mean}");
        assert!(*gaps.iter().max().unwrap() <= 101 && *gaps.iter().min().unwrap() >= 1);
        // avg = 80000: p_b = 0.02·50000/60000 = 1/60: mean gap 30.5.
        let gaps = gaps_at(&bytes_cfg(), 80_000.0, 200_000);
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean - 30.5).abs() < 1.0, "mean gap {mean}");
        // Gentle, avg = 135000 = 1.5·max: p_b = 0.02 + 0.98·0.5 = 0.51: gaps 1 or 2 (1/p_b = 1.96).
        let gentle = RedConfig { gentle: true, ..bytes_cfg() };
        let gaps = gaps_at(&gentle, 135_000.0, 10_000);
        // (The first gap also holds the arrival that drew the first qR.)
        assert!(gaps.iter().skip(1).all(|&g| g <= 2), "{:?}", &gaps[..20]);
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean - 1.5).abs() < 0.05, "{mean}");
        // Non-gentle at the same average: every arrival is a hard mark.
        let mut r = Red::new(&bytes_cfg(), Rng::new(0, 0));
        r.qavg = 135_000 << r.wlog;
        assert_eq!(r.action(), Action::HardMark);
    }

    #[test]
    fn ecn_marks_ect_and_drops_not_ect_above_max() {
        let mut cfg = bytes_cfg();
        cfg.ecn = true;
        let mut q = Red::new(&cfg, Rng::new(0, 0));
        q.qavg = 200_000 << q.wlog; // far above max, and stays there for a few arrivals
        q.fifo.push(PktMeta { id: 99, size: 200_000, flow: 0, ecn: ECN_NOT_ECT }, 0);
        let mut drops = vec![];
        q.enqueue(0, PktMeta { id: 1, size: 1000, flow: 0, ecn: ECN_ECT0 }, &mut drops);
        q.enqueue(0, PktMeta { id: 2, size: 1000, flow: 0, ecn: ECN_NOT_ECT }, &mut drops);
        assert_eq!(drops.iter().map(|d| d.id).collect::<Vec<_>>(), vec![2]);
        assert_eq!(q.marks(), 1);
        let mut d = vec![];
        q.dequeue(0, &mut d);
        assert_eq!(q.dequeue(0, &mut d).unwrap().ecn, ECN_CE);
        // harddrop: ECT dropped too above max.
        let mut q = Red::new(&RedConfig { harddrop: true, ..cfg.clone() }, Rng::new(0, 0));
        q.qavg = 200_000 << q.wlog;
        q.fifo.push(PktMeta { id: 99, size: 200_000, flow: 0, ecn: ECN_NOT_ECT }, 0);
        q.enqueue(0, PktMeta { id: 3, size: 1000, flow: 0, ecn: ECN_ECT0 }, &mut drops);
        assert_eq!(drops.last().unwrap().id, 3);
    }

    #[test]
    fn idle_time_decays_the_average() {
        // 10 Mbit/s, avpkt 1000 B: 800 µs per packet time. W = 1/32.
        let mut q = Red::new(&bytes_cfg(), Rng::new(0, 0));
        q.qavg = 64_000 << q.wlog;
        let mut d = vec![];
        assert!(q.dequeue(1_000_000, &mut d).is_none()); // idle from 1 ms
        // An arrival at 1 ms + 32 packet times: avg·(31/32)^32 = 64000·0.3621 = 23 174.
        q.enqueue(1_000_000 + 32 * 800_000, PktMeta { id: 0, size: 1000, flow: 0, ecn: ECN_NOT_ECT }, &mut d);
        assert!((q.average() - 64_000.0 * (31.0f64 / 32.0).powi(32)).abs() < 1.0, "{}", q.average());
        // Not idle any more: the next arrival uses the EWMA with the backlog (1000 bytes).
        let a = q.average();
        q.enqueue(30_000_000, PktMeta { id: 1, size: 1000, flow: 0, ecn: ECN_NOT_ECT }, &mut d);
        assert!((q.average() - (a + (1000.0 - a) / 32.0)).abs() < 1.0);
    }

    #[test]
    fn packet_mode_counts_packets() {
        let cfg = RedConfig { packets: Some(100), min_packets: Some(5), max_packets: Some(15), wlog: Some(1), ..Default::default() };
        let mut q = Red::new(&cfg, Rng::new(0, 0));
        let mut d = vec![];
        for i in 0..40 {
            q.enqueue(0, PktMeta { id: i, size: 1500, flow: 0, ecn: ECN_NOT_ECT }, &mut d);
        }
        // With W = 1/2 the average tracks the backlog closely: above 15 → hard drops.
        assert!(!d.is_empty());
        assert!(q.len_packets() < 40 && q.average() < 40.0);
    }
}
