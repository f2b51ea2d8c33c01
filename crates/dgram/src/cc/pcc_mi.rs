//! Monitor intervals, the measurement unit of the PCC family (`pcc-allegro`, `pcc-vivace`,
//! `pcc-udt`): a stretch of sending at one rate whose outcome (rate actually sent, loss rate,
//! RTT trend) is known once every packet sent in it is acknowledged or declared lost.
//! As in PCC-Uspace (`src/pcc/pcc_monitor_interval_queue.cpp`, `pcc_utility_manager.cpp`),
//! intervals are pipelined: the sender opens the next while earlier ones still await their
//! acknowledgements, and an interval is *useful* when the algorithm will look at its result.

use std::collections::VecDeque;

/// Bits in PCC's "Mbit" (PCC-Uspace and the original PCC use 2^20).
pub const MBIT: f64 = 1_048_576.0;

/// The rate order of `pairs` probing pairs, drawn at random per pair: for each pair `[true,
/// false]` (higher rate first) or `[false, true]`.
pub fn pair_order(rng: &mut netmodel::Rng, pairs: usize) -> Vec<bool> {
    let mut v = Vec::with_capacity(2 * pairs);
    for _ in 0..pairs {
        let hi_first = rng.next_u64() & 1 == 0;
        v.push(hi_first);
        v.push(!hi_first);
    }
    v
}

/// The RTT-gradient (or inflation) penalty of PCC's gradient senders (the NSDI-2018 Vivace
/// branch, `pcc-gradient/sender/app/pcc.h` `utility`, and the 2018 UDT release,
/// `pcc_monitor_interval_queue.cpp`): truncated towards zero to hundredths, then to an even
/// number of hundredths, so |v| < 0.02 counts as 0 and a larger v in steps of 0.02.
pub fn floor_even_hundredths(v: f64) -> f64 {
    let hundredths = (v * 100.0).trunc() as i64;
    ((hundredths / 2) * 2) as f64 / 100.0
}

/// The gradient senders' piecewise confidence amplifier (the NSDI-2018 branch's
/// `pcc-gradient/sender/app/pcc.h` `decide`, the 2018 UDT release's `ComputeRateChange`): the
/// rate change is multiplied by a+1, 2a−2, 4a−14 for a < 3, < 6, < 9, and by `top`·a − 50
/// beyond (8 in the NSDI-2018 branch, 9 in the UDT release).
pub fn amplifier_factor(a: f64, top: f64) -> f64 {
    if a < 3.0 {
        a + 1.0
    } else if a < 6.0 {
        2.0 * a - 2.0
    } else if a < 9.0 {
        4.0 * a - 14.0
    } else {
        top * a - 50.0
    }
}

/// One measured (rate, utility) point of a gradient sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub rate: f64,
    pub utility: f64,
}

#[derive(Clone, Debug)]
pub struct Mi {
    /// The interval's number: 0, 1, 2, … in the order they were opened.
    pub id: u64,
    pub rate_bps: f64,
    pub useful: bool,
    /// A label of the algorithm's (e.g. which probe of a trial this is).
    pub label: u32,
    pub start_ns: u64,
    pub first_seq: Option<u64>,
    pub last_seq: u64,
    pub first_sent_ns: u64,
    pub last_sent_ns: u64,
    pub pkts: u64,
    pub done: u64,
    pub bytes_sent: u64,
    pub bytes_lost: u64,
    /// (send time, RTT) of each acknowledged packet, ns.
    pub rtts: Vec<(u64, u64)>,
    pub closed: bool,
}

/// What an interval measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MiStats {
    /// Rate actually sent, bits per second.
    pub x_bps: f64,
    pub loss: f64,
    /// Slope of RTT over send time (seconds per second), least squares.
    pub rtt_gradient: f64,
    pub avg_rtt_ns: f64,
    pub duration_s: f64,
}

impl Mi {
    pub fn stats(&self) -> MiStats {
        let pkt = if self.pkts > 0 { self.bytes_sent as f64 / self.pkts as f64 } else { 1500.0 };
        let dur_ns = (self.last_sent_ns - self.first_sent_ns) as f64 + pkt * 8.0 / self.rate_bps * 1e9;
        let dur = (dur_ns / 1e9).max(1e-6);
        let n = self.rtts.len() as f64;
        let (mut grad, mut avg) = (0.0, 0.0);
        if n >= 1.0 {
            let mx = self.rtts.iter().map(|r| r.0 as f64).sum::<f64>() / n;
            avg = self.rtts.iter().map(|r| r.1 as f64).sum::<f64>() / n;
            let (mut sxx, mut sxy) = (0.0, 0.0);
            for &(t, r) in &self.rtts {
                let dx = t as f64 - mx;
                sxx += dx * dx;
                sxy += dx * (r as f64 - avg);
            }
            if n >= 2.0 && sxx > 0.0 {
                grad = sxy / sxx;
            }
        }
        MiStats {
            x_bps: self.bytes_sent as f64 * 8.0 / dur,
            loss: if self.bytes_sent > 0 { self.bytes_lost as f64 / self.bytes_sent as f64 } else { 0.0 },
            rtt_gradient: grad,
            avg_rtt_ns: avg,
            duration_s: dur,
        }
    }
    fn finished(&self) -> bool {
        self.closed && self.done >= self.pkts
    }
    /// Packets declared lost (every packet is acknowledged or lost once the interval is done).
    pub fn lost_pkts(&self) -> u64 {
        self.done - self.rtts.len() as u64
    }
}

#[derive(Default)]
pub struct MiQueue {
    mis: VecDeque<Mi>,
    next_id: u64,
}

impl MiQueue {
    /// The number the next interval opened will get.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }
    /// Close the current interval (if any) and open a new one; returns its number.
    pub fn open(&mut self, now: u64, rate_bps: f64, useful: bool, label: u32) -> u64 {
        if let Some(m) = self.mis.back_mut() {
            m.closed = true;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.mis.push_back(Mi {
            id,
            rate_bps,
            useful,
            label,
            start_ns: now,
            first_seq: None,
            last_seq: 0,
            first_sent_ns: now,
            last_sent_ns: now,
            pkts: 0,
            done: 0,
            bytes_sent: 0,
            bytes_lost: 0,
            rtts: Vec::new(),
            closed: false,
        });
        id
    }
    pub fn current(&self) -> Option<&Mi> {
        self.mis.back()
    }
    /// The rate of the interval being sent, or `default` before the first.
    pub fn current_rate(&self, default: f64) -> f64 {
        self.current().map_or(default, |m| m.rate_bps)
    }
    pub fn on_send(&mut self, now: u64, seq: u64, bytes: u32) {
        if let Some(m) = self.mis.back_mut() {
            if m.first_seq.is_none() {
                m.first_seq = Some(seq);
                m.first_sent_ns = now;
            }
            m.last_seq = seq;
            m.last_sent_ns = now;
            m.pkts += 1;
            m.bytes_sent += bytes as u64;
        }
    }
    fn find(&mut self, seq: u64) -> Option<&mut Mi> {
        self.mis.iter_mut().find(|m| m.first_seq.is_some_and(|f| f <= seq) && seq <= m.last_seq)
    }
    pub fn on_ack(&mut self, seq: u64, sent_ns: u64, rtt_ns: u64) {
        if let Some(m) = self.find(seq) {
            m.done += 1;
            m.rtts.push((sent_ns, rtt_ns));
        }
    }
    pub fn on_loss(&mut self, seq: u64, bytes: u32) {
        if let Some(m) = self.find(seq) {
            m.done += 1;
            m.bytes_lost += bytes as u64;
        }
    }
    /// The oldest interval, once everything sent in it is accounted for.
    pub fn pop_finished(&mut self) -> Option<Mi> {
        if self.mis.front().is_some_and(|m| m.finished()) {
            self.mis.pop_front()
        } else {
            None
        }
    }
    /// The number of the interval packet `seq` was sent in, while that interval is held.
    pub fn id_of(&self, seq: u64) -> Option<u64> {
        self.mis.iter().find(|m| m.first_seq.is_some_and(|f| f <= seq) && seq <= m.last_seq).map(|m| m.id)
    }
    /// The oldest interval if it has stopped sending and is older than interval `id`, whether
    /// or not all its packets are accounted for (for a sender that ends its intervals on the
    /// receiver's reports, as PCC's UDT sender does, rather than on each packet's fate).
    pub fn pop_closed_before(&mut self, id: u64) -> Option<Mi> {
        if self.mis.front().is_some_and(|m| m.closed && m.id < id) {
            self.mis.pop_front()
        } else {
            None
        }
    }
    /// The oldest finished interval that is useful; finished intervals that are not are
    /// dropped on the way.
    pub fn pop_useful(&mut self) -> Option<Mi> {
        while let Some(m) = self.pop_finished() {
            if m.useful {
                return Some(m);
            }
        }
        None
    }
    /// Useful intervals opened and not yet popped.
    pub fn useful_pending(&self) -> usize {
        self.mis.iter().filter(|m| m.useful).count()
    }
    /// Forget which intervals are useful (a decision made their results moot).
    pub fn mark_all_useless(&mut self) {
        for m in self.mis.iter_mut() {
            m.useful = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_stats_rate_loss_and_rtt_slope() {
        let mut q = MiQueue::default();
        q.open(0, 12e6, true, 0);
        // 10 packets of 1500 B, 1 ms apart; RTT grows 0.1 ms per ms sent (gradient 0.1).
        for i in 0..10u64 {
            q.on_send(i * 1_000_000, i, 1500);
        }
        q.open(10_000_000, 12e6, false, 0);
        for i in 0..9u64 {
            q.on_ack(i, i * 1_000_000, 20_000_000 + i * 100_000);
        }
        assert!(q.pop_finished().is_none());
        q.on_loss(9, 1500);
        let m = q.pop_finished().unwrap();
        let s = m.stats();
        assert!((s.x_bps - 12e6).abs() < 1e3, "{}", s.x_bps);
        assert!((s.loss - 0.1).abs() < 1e-12);
        assert!((s.rtt_gradient - 0.1).abs() < 1e-9, "{}", s.rtt_gradient);
        assert!(q.pop_finished().is_none());
    }
}
