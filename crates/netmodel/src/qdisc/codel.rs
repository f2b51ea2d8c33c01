//! CoDel, "Controlled Delay" (RFC 8289), as Linux `sch_codel.c` over `include/net/codel_impl.h`.
//!
//! Drop decisions are taken at dequeue from the sojourn time of the head packet. Once the
//! sojourn time has stayed at or above `target` for `interval` (and more than one `mtu` is
//! still queued behind it), CoDel enters the dropping state and drops (or, with `ecn`, CE-marks)
//! one packet, then the next ones at `drop_next += interval / √count` (the control law), until
//! the sojourn time falls below `target`. Re-entering soon after leaving resumes near the last
//! drop rate (`count = count − lastcount`).
//!
//! Arithmetic as in Linux: times in `codel_time_t` units of 1024 ns (u32, wrapping),
//! `1/√count` kept as a Q0.16 value updated by one Newton step per drop
//! (`codel_Newton_step`), the control law as `reciprocal_scale(interval, rec_inv_sqrt << 16)`.
//!
//! Differences from Linux: the `mtu` test compares IP bytes with `mtu` (default 1500 IP bytes,
//! i.e. Linux's 1514-byte `psched_mtu` without the Ethernet header); the limit may also be in
//! bytes (mahimahi); `ce_threshold` has no DSCP selector.

use serde::Deserialize;

use super::defaults;
use super::{over_limit, set_ce, Fifo, Qdisc};
use crate::{Nanos, PktMeta};

fn default_limit() -> Option<u32> {
    Some(1000)
}

/// `queue: {kind: codel, ...}`. Defaults are Linux `sch_codel`'s.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    /// Limit in packets (Linux `limit`, default 1000; null = none).
    #[serde(default = "default_limit")]
    pub packets: Option<u32>,
    /// Limit in bytes (null = none).
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Acceptable standing sojourn time (default 5 ms).
    #[serde(default = "defaults::ms5")]
    pub target_ns: u64,
    /// Sliding-minimum window and control-law base interval (default 100 ms).
    #[serde(default = "defaults::ms100")]
    pub interval_ns: u64,
    /// CE-mark ECT packets instead of dropping them (default off in `codel`).
    #[serde(default)]
    pub ecn: bool,
    /// CE-mark ECT packets whose sojourn time exceeds this, independently of the control law
    /// (Linux `ce_threshold`, default off).
    #[serde(default)]
    pub ce_threshold_ns: Option<u64>,
    /// Never drop while at most this many bytes remain queued (default 1500 IP bytes).
    #[serde(default = "defaults::mtu")]
    pub mtu: u32,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            packets: default_limit(),
            bytes: None,
            target_ns: defaults::ms5(),
            interval_ns: defaults::ms100(),
            ecn: false,
            ce_threshold_ns: None,
            mtu: defaults::mtu(),
        }
    }
}

/// `CODEL_SHIFT`: codel time is nanoseconds >> 10.
pub const CODEL_SHIFT: u32 = 10;
/// Bits of `rec_inv_sqrt` (a u16), and the shift to a Q0.32 number.
const REC_INV_SQRT_SHIFT: u32 = 32 - 16;

/// Nanoseconds to `codel_time_t`.
#[inline]
pub fn codel_time(ns: Nanos) -> u32 {
    (ns >> CODEL_SHIFT) as u32
}
#[inline]
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
#[inline]
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}
#[inline]
fn after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// CoDel parameters in codel time units.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodelParams {
    pub target: u32,
    pub interval: u32,
    pub mtu: u32,
    pub ecn: bool,
    pub ce_threshold: Option<u32>,
}

impl CodelParams {
    pub fn new(target_ns: u64, interval_ns: u64, mtu: u32, ecn: bool, ce_threshold_ns: Option<u64>) -> Self {
        CodelParams {
            target: codel_time(target_ns),
            interval: codel_time(interval_ns),
            mtu,
            ecn,
            ce_threshold: ce_threshold_ns.map(codel_time),
        }
    }
}

/// Per-queue CoDel state (Linux `struct codel_vars`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CodelVars {
    pub count: u32,
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/√count, Q0.16.
    pub rec_inv_sqrt: u16,
    pub first_above_time: u32,
    pub drop_next: u32,
    /// Sojourn time of the last packet examined (codel units).
    pub ldelay: u32,
}

impl CodelVars {
    /// One Newton iteration of 1/√count: `x' = x (3 − count·x²) / 2` (`codel_Newton_step`).
    pub fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
        let mut val: u64 = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2 as u64);
        val >>= 2; // avoid overflow in the multiply
        val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }
}

/// `t + interval / √count` (`codel_control_law`).
#[inline]
pub(crate) fn control_law(t: u32, interval: u32, rec_inv_sqrt: u16) -> u32 {
    let scale = ((rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT) as u64;
    t.wrapping_add(((interval as u64 * scale) >> 32) as u32)
}

/// What CoDel dequeues from: a FIFO (`codel`) or one flow's queue (`fq_codel`).
pub(crate) trait CodelSource {
    /// Remove the head packet (with its enqueue time), updating every backlog counter.
    fn pop(&mut self) -> Option<(PktMeta, Nanos)>;
    /// Bytes still queued for the `mtu` test, *after* the packet just popped (Linux passes
    /// the qdisc backlog: the whole qdisc's, also in `fq_codel`).
    fn backlog(&self) -> u64;
}

impl CodelSource for Fifo {
    fn pop(&mut self) -> Option<(PktMeta, Nanos)> {
        Fifo::pop(self)
    }
    fn backlog(&self) -> u64 {
        self.bytes()
    }
}

/// `codel_should_drop`.
fn should_drop<S: CodelSource>(skb: Option<&(PktMeta, Nanos)>, src: &S, v: &mut CodelVars, p: &CodelParams, now: u32) -> bool {
    let Some(&(_, enq)) = skb else {
        v.first_above_time = 0;
        return false;
    };
    v.ldelay = now.wrapping_sub(codel_time(enq));
    if before(v.ldelay, p.target) || src.backlog() <= p.mtu as u64 {
        // went below: stay below for at least interval
        v.first_above_time = 0;
        return false;
    }
    if v.first_above_time == 0 {
        // just went above: if we stay above for interval, it is ok to drop
        v.first_above_time = now.wrapping_add(p.interval);
        false
    } else {
        after(now, v.first_above_time)
    }
}

/// `codel_dequeue`: the packet to send (with its enqueue time), dropping packets into `drops`
/// and counting CE marks in `marks`.
pub(crate) fn codel_dequeue<S: CodelSource>(
    src: &mut S,
    now_ns: Nanos,
    p: &CodelParams,
    v: &mut CodelVars,
    drops: &mut Vec<PktMeta>,
    marks: &mut u64,
) -> Option<(PktMeta, Nanos)> {
    let mut skb = src.pop();
    if skb.is_none() {
        v.dropping = false;
        return None;
    }
    let now = codel_time(now_ns);
    let drop = should_drop(skb.as_ref(), src, v, p, now);
    if v.dropping {
        if !drop {
            // sojourn time below target: leave the dropping state
            v.dropping = false;
        } else if after_eq(now, v.drop_next) {
            // Time for the next drop(s); a large backlog may make several due now.
            while v.dropping && after_eq(now, v.drop_next) {
                v.count = v.count.wrapping_add(1);
                v.newton_step();
                let (pkt, _) = skb.as_mut().expect("dropping implies a packet");
                if p.ecn && set_ce(pkt, marks) {
                    v.drop_next = control_law(v.drop_next, p.interval, v.rec_inv_sqrt);
                    break;
                }
                drops.push(*pkt);
                skb = src.pop();
                if !should_drop(skb.as_ref(), src, v, p, now) {
                    v.dropping = false;
                } else {
                    v.drop_next = control_law(v.drop_next, p.interval, v.rec_inv_sqrt);
                }
            }
        }
    } else if drop {
        let (pkt, _) = skb.as_mut().expect("drop implies a packet");
        if !(p.ecn && set_ce(pkt, marks)) {
            drops.push(*pkt);
            skb = src.pop();
            should_drop(skb.as_ref(), src, v, p, now);
        }
        v.dropping = true;
        // If we were dropping recently, start from the drop rate that controlled the queue
        // last time rather than from 1.
        let delta = v.count.wrapping_sub(v.lastcount);
        if delta > 1 && before(now.wrapping_sub(v.drop_next), 16u32.wrapping_mul(p.interval)) {
            v.count = delta;
            v.newton_step();
        } else {
            v.count = 1;
            v.rec_inv_sqrt = (!0u32 >> REC_INV_SQRT_SHIFT) as u16;
        }
        v.lastcount = v.count;
        v.drop_next = control_law(now, p.interval, v.rec_inv_sqrt);
    }
    if let (Some((pkt, _)), Some(ce)) = (skb.as_mut(), p.ce_threshold) {
        if after(v.ldelay, ce) {
            set_ce(pkt, marks);
        }
    }
    skb
}

/// The `codel` qdisc: one FIFO under CoDel.
pub struct Codel {
    fifo: Fifo,
    limit_packets: Option<u32>,
    limit_bytes: Option<u64>,
    params: CodelParams,
    vars: CodelVars,
    marks: u64,
    sojourn: Option<Nanos>,
}

impl Codel {
    pub fn new(c: &CodelConfig) -> Self {
        Codel {
            fifo: Fifo::default(),
            limit_packets: c.packets,
            limit_bytes: c.bytes,
            params: CodelParams::new(c.target_ns, c.interval_ns, c.mtu, c.ecn, c.ce_threshold_ns),
            vars: CodelVars::default(),
            marks: 0,
            sojourn: None,
        }
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, now: Nanos, pkt: PktMeta, drops: &mut Vec<PktMeta>) {
        if over_limit(self.limit_packets, self.limit_bytes, self.fifo.len(), self.fifo.bytes(), pkt.size) {
            drops.push(pkt);
        } else {
            self.fifo.push(pkt, now);
        }
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<PktMeta>) -> Option<PktMeta> {
        let (p, t) = codel_dequeue(&mut self.fifo, now, &self.params, &mut self.vars, drops, &mut self.marks)?;
        self.sojourn = Some(now - t);
        Some(p)
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

    fn pkt(id: u32, ecn: u8) -> PktMeta {
        PktMeta { id, size: 1500, flow: 0, ecn }
    }

    #[test]
    fn newton_steps_from_one_match_hand_computation() {
        // x1 = 1 (0xFFFF); x2 = x1(3 − 2·x1²)/2 = 0.5; x3 = 0.5(3 − 3/4)/2 = 0.5625;
        // x4 = 0.5625(3 − 4·0.31640625)/2 = 0.48779296875 (Q0.16, truncated at each step).
        let mut v = CodelVars { count: 1, rec_inv_sqrt: 0xFFFF, ..Default::default() };
        let mut got = vec![];
        for c in 2..=4 {
            v.count = c;
            v.newton_step();
            got.push(v.rec_inv_sqrt as f64 / 65536.0);
        }
        let want = [0.5, 0.5625, 0.48779296875];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1.0 / 4096.0, "{got:?} vs {want:?}");
        }
        // Iterating at a fixed count converges to 1/√count.
        v.count = 25;
        for _ in 0..8 {
            v.newton_step();
        }
        assert!((v.rec_inv_sqrt as f64 / 65536.0 - 0.2).abs() < 1e-3, "{}", v.rec_inv_sqrt);
        // Control law: 100 ms interval (97656 units) scaled by 0xFFFF/65536.
        assert_eq!(control_law(1000, 97_656, 0xFFFF), 1000 + 97_654);
        assert_eq!(control_law(0, 97_656, 0x8000), 48_828);
    }

    /// A standing queue of 200 packets (20 ms at one packet per 100 µs), refilled as it drains:
    /// CoDel's first drop comes one interval after the sojourn time first exceeded the target,
    /// then the gaps follow interval·rec_inv_sqrt (Linux's Newton approximation of 1/√count),
    /// converging to interval/√count.
    #[test]
    fn drop_schedule_follows_the_control_law() {
        let mut q = Codel::new(&CodelConfig { packets: None, ..Default::default() });
        let mut drops = vec![];
        let step = 100_000; // ns between dequeues and between arrivals
        let mut id = 0;
        for _ in 0..200 {
            q.enqueue(0, pkt(id, ECN_NOT_ECT), &mut drops);
            id += 1;
        }
        let mut drop_times = vec![]; // (time, count after the drop, drop_next)
        // Service starts at 20 ms: the first dequeue already sees a 20 ms sojourn.
        let mut t = 20_000_000 - step;
        while t < 2_000_000_000 {
            t += step;
            q.enqueue(t, pkt(id, ECN_NOT_ECT), &mut drops);
            id += 1;
            let before = drops.len();
            q.dequeue(t, &mut drops).unwrap();
            if drops.len() > before {
                assert_eq!(drops.len(), before + 1, "one drop per dequeue at this rate");
                drop_times.push((t, q.vars.count, q.vars.drop_next));
            }
        }
        // The first dequeue (t = 20 ms) sees 20 ms > 5 ms: first_above = now + interval.
        // The first drop is at the first dequeue strictly after that (codel units, 1024 ns).
        let first_above = codel_time(20_000_000) + 97_656;
        let first = drop_times[0].0;
        assert!(codel_time(first) > first_above && codel_time(first - step) <= first_above, "{first}");
        assert_eq!(drop_times[0].1, 1);
        // Gaps between scheduled drops: interval × Linux's Q0.16 1/√count.
        let interval_ns = 97_656.0 * 1024.0;
        let gaps: Vec<f64> = drop_times.windows(2).map(|w| (w[1].2.wrapping_sub(w[0].2)) as f64 * 1024.0).collect();
        // count 2, 3, 4 use x = 0.5, 0.5625, 0.4878 (see the Newton test): 50, 56.25, 48.8 ms
        // (the ideal 1/√count would give 70.7, 57.7, 50 ms).
        for (g, x) in gaps.iter().zip([0.5, 0.5625, 0.48779296875]) {
            assert!((g / interval_ns - x).abs() < 0.002, "gaps {gaps:?}");
        }
        // After ~20 drops the gaps are within 2 % of interval/√count.
        assert!(drop_times.len() > 25, "{} drops", drop_times.len());
        for (i, g) in gaps.iter().enumerate().skip(20) {
            let count = drop_times[i + 1].1 as f64;
            let ideal = interval_ns / count.sqrt();
            assert!((g - ideal).abs() / ideal < 0.02, "drop {i}: gap {g} vs {ideal}");
        }
        // The actual drop instants are the first dequeue at or after drop_next.
        for w in drop_times.windows(2) {
            assert!(codel_time(w[1].0) >= w[0].2 && codel_time(w[1].0 - step) < w[0].2);
        }
    }

    /// Two dropping episodes with the queue drained in between. The first runs until
    /// `stop(vars)`; after `gap_ns` of idle the queue is refilled to the same 20-ms standing
    /// queue until CoDel drops again. Returns (count, lastcount) when the first episode ended
    /// and the state right after the re-entry.
    fn two_episodes(stop: impl Fn(&CodelVars) -> bool, gap_ns: u64) -> (u32, u32, CodelVars) {
        let mut q = Codel::new(&CodelConfig { packets: None, ..Default::default() });
        let mut drops = vec![];
        let step = 100_000;
        let fill = |q: &mut Codel, t: u64, drops: &mut Vec<PktMeta>| {
            for id in 0..200 {
                q.enqueue(t, pkt(id, ECN_NOT_ECT), drops);
            }
        };
        fill(&mut q, 0, &mut drops);
        let mut t = 20_000_000 - step;
        while !(q.vars.dropping && stop(&q.vars)) {
            t += step;
            q.enqueue(t, pkt(1000, ECN_NOT_ECT), &mut drops); // one in, one out: 20 ms
            q.dequeue(t, &mut drops);
        }
        while q.dequeue(t, &mut drops).is_some() {
            t += 1_000; // drain in microseconds: no further drop is due
        }
        assert!(!q.vars.dropping);
        let (count, lastcount) = (q.vars.count, q.vars.lastcount);
        t += gap_ns;
        fill(&mut q, t, &mut drops);
        let first = t;
        while !q.vars.dropping {
            t += step;
            q.enqueue(t, pkt(1000, ECN_NOT_ECT), &mut drops);
            q.dequeue(t, &mut drops);
            assert!(t - first < 1_000_000_000, "CoDel never dropped again");
        }
        (count, lastcount, q.vars)
    }

    /// Linux's codel_dequeue: re-entering the dropping state within 16 intervals of the last
    /// scheduled drop starts from the drop rate that controlled the queue last time,
    /// count − lastcount, when that is above 1; otherwise from count 1 with 1/√count reset to
    /// 1.0 (0xFFFF in Q0.16).
    #[test]
    fn reentering_the_dropping_state_reuses_the_last_drop_rate() {
        // first episode long enough for several drops, re-entry ~120 ms later
        let (count, lastcount, v) = two_episodes(|v| v.count >= 6, 0);
        assert_eq!(lastcount, 1, "the first entry starts from 1");
        assert!(count >= 6);
        assert_eq!(v.count, count - lastcount, "reused: count - lastcount");
        assert_eq!(v.lastcount, v.count);
        // the reused count's 1/√count is one Newton step from the last one, not 1.0
        assert_ne!(v.rec_inv_sqrt, 0xFFFF);
        // count − lastcount = 1 is not reused: back to 1 and 1/√1
        let (count, lastcount, v) = two_episodes(|v| v.count == 2, 0);
        assert_eq!((count, lastcount), (2, 1));
        assert_eq!((v.count, v.lastcount, v.rec_inv_sqrt), (1, 1, 0xFFFF));
        // more than 16 intervals (1.6 s) after the last scheduled drop: from 1 again
        let (count, _, v) = two_episodes(|v| v.count >= 6, 2_000_000_000);
        assert!(count >= 6);
        assert_eq!((v.count, v.lastcount, v.rec_inv_sqrt), (1, 1, 0xFFFF));
    }

    #[test]
    fn defaults_and_wrapping_order() {
        // Linux sch_codel: limit 1000 packets when the config leaves it out.
        assert_eq!(CodelConfig::default().packets, Some(1000));
        let c: CodelConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c.packets, Some(1000));
        // codel_time_before is strict and survives the u32 wrap.
        assert!(!before(7, 7) && before(6, 7) && before(u32::MAX, 0) && !after(7, 7));
    }

    #[test]
    fn without_ecn_ect_packets_are_dropped_never_marked() {
        // The same standing queue as with ecn: true, but ECN off: the control law must drop
        // ECT packets (Linux codel_dequeue marks only when params->ecn is set).
        let mut q = Codel::new(&CodelConfig { ecn: false, packets: None, ..Default::default() });
        let mut drops = vec![];
        for i in 0..300 {
            q.enqueue(0, pkt(i, ECN_ECT0), &mut drops);
        }
        assert_eq!(q.len_packets(), 300);
        let mut t = 0;
        let mut ce = 0;
        while let Some(p) = q.dequeue(t, &mut drops) {
            ce += (p.ecn == ECN_CE) as u64;
            t += 1_000_000;
        }
        assert!(drops.len() > 1, "{} drops", drops.len());
        assert_eq!((ce, q.marks()), (0, 0));
    }

    #[test]
    fn no_drop_below_target_or_with_one_mtu_left() {
        // Two packets, old: the second dequeue leaves 0 bytes <= mtu, never dropped.
        let mut q = Codel::new(&CodelConfig::default());
        let mut drops = vec![];
        for t in 0..50u64 {
            // one packet every 10 ms, dequeued 1 s later: sojourn 1 s but at most 1 queued
            q.enqueue(t * 10_000_000, pkt(t as u32, ECN_NOT_ECT), &mut drops);
            q.dequeue(t * 10_000_000 + 5_000_000, &mut drops).unwrap();
        }
        assert!(drops.is_empty());
        assert_eq!(q.sojourn_ns(), Some(5_000_000));
    }

    #[test]
    fn ecn_marks_instead_of_dropping_and_ce_threshold_marks() {
        let mut q = Codel::new(&CodelConfig { ecn: true, packets: None, ..Default::default() });
        let mut drops = vec![];
        for i in 0..300 {
            q.enqueue(0, pkt(i, ECN_ECT0), &mut drops);
        }
        let mut ce = 0;
        let mut t = 0;
        while let Some(p) = q.dequeue(t, &mut drops) {
            ce += (p.ecn == ECN_CE) as u64;
            t += 1_000_000;
        }
        assert!(drops.is_empty());
        assert!(ce > 0 && ce == q.marks(), "{ce} {}", q.marks());
        // Not-ECT packets are dropped by the same queue.
        let mut q = Codel::new(&CodelConfig { ecn: true, packets: None, ..Default::default() });
        for i in 0..300 {
            q.enqueue(0, pkt(i, ECN_NOT_ECT), &mut drops);
        }
        let mut t = 0;
        while q.dequeue(t, &mut drops).is_some() {
            t += 1_000_000;
        }
        assert!(!drops.is_empty());
        assert_eq!(q.marks(), 0);
        // ce_threshold 1 ms: every ECT packet with a sojourn above 1 ms is marked, no control law.
        let mut q = Codel::new(&CodelConfig { ce_threshold_ns: Some(1_000_000), ..Default::default() });
        let mut drops = vec![];
        q.enqueue(0, pkt(0, ECN_ECT0), &mut drops);
        q.enqueue(0, pkt(1, ECN_ECT0), &mut drops);
        q.enqueue(0, pkt(2, ECN_ECT0), &mut drops);
        assert_eq!(q.dequeue(500_000, &mut drops).unwrap().ecn, ECN_ECT0);
        assert_eq!(q.dequeue(2_000_000, &mut drops).unwrap().ecn, ECN_CE);
        assert_eq!(q.marks(), 1);
    }

    #[test]
    fn packet_and_byte_limits_drop_arrivals() {
        let mut q = Codel::new(&CodelConfig { packets: Some(2), ..Default::default() });
        let mut drops = vec![];
        for i in 0..3 {
            q.enqueue(0, pkt(i, ECN_NOT_ECT), &mut drops);
        }
        assert_eq!(drops.iter().map(|d| d.id).collect::<Vec<_>>(), vec![2]);
        let mut q = Codel::new(&CodelConfig { packets: None, bytes: Some(3000), ..Default::default() });
        for i in 0..3 {
            q.enqueue(0, pkt(10 + i, ECN_NOT_ECT), &mut drops);
        }
        assert_eq!(drops.last().unwrap().id, 12);
        assert_eq!(q.len_bytes(), 3000);
    }
}
