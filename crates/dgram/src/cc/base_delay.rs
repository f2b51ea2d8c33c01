//! The *base delay* of the delay-based datagram schemes: the smallest one-way delay seen, kept
//! as one minimum per interval over the last few intervals, so that a lasting change of the
//! path's delay is learnt once the intervals before it age out.
//!
//! Used by LEDBAT (`ledbat.rs`; RFC 6817 §2.4, the sender's `update_base_delay`: BASE_HISTORY
//! one-minute minima) and SCReAM (`scream.rs`; RFC 8298 §4.1.2's base one-way delay, with the
//! interval and length of EricssonResearch/scream `code/ScreamTx.cpp`: `kBaseOwdHistSize`
//! minima of `kBaseDelayUpdateInterval` each).
//!
//! A history holds the minimum of the interval under way and the minima of at most `keep`
//! finished intervals; the base delay is the smallest of them. An interval ends at the first
//! sample taken at least `interval` after it began. The two schemes differ in which interval
//! that sample belongs to, so the history offers the steps separately and each scheme orders
//! them as its source does:
//! - LEDBAT [`MinHistory::roll`]s, then [`MinHistory::note`]s: the sample that crosses the
//!   minute opens the new minute (RFC 6817 appends it as the new tail), and the first minute
//!   begins at the first sample. BASE_HISTORY counts the minute under way: `keep` is one less.
//! - SCReAM notes, then rolls: the sample is folded into the interval it ends, which joins the
//!   history, and the next interval begins empty (ScreamTx folds it into `baseOwd`, stores that
//!   in `baseOwdHist` and resets it); the first interval begins at the flow's start.

use std::collections::VecDeque;

pub struct MinHistory {
    interval_ns: u64,
    keep: usize,
    /// Minima of finished intervals, oldest first.
    done: VecDeque<u64>,
    /// Minimum of the interval under way, if it has a sample.
    current: Option<u64>,
    began_ns: u64,
}

impl MinHistory {
    /// A history of `keep` finished intervals of `interval_ns` each; the first interval begins
    /// at time 0 until [`MinHistory::begin`] says otherwise.
    pub fn new(interval_ns: u64, keep: usize) -> Self {
        MinHistory { interval_ns, keep, done: VecDeque::new(), current: None, began_ns: 0 }
    }

    /// The interval under way began at `now_ns`.
    pub fn begin(&mut self, now_ns: u64) {
        self.began_ns = now_ns;
    }

    /// No sample yet.
    pub fn is_empty(&self) -> bool {
        self.current.is_none() && self.done.is_empty()
    }

    /// If the interval under way began at least `interval` before `now_ns`, it ends: its
    /// minimum joins the finished ones (the oldest leaving beyond `keep`) and a new interval,
    /// without samples, begins at `now_ns`.
    pub fn roll(&mut self, now_ns: u64) {
        if now_ns.saturating_sub(self.began_ns) < self.interval_ns {
            return;
        }
        if let Some(m) = self.current.take() {
            self.done.push_back(m);
            while self.done.len() > self.keep {
                self.done.pop_front();
            }
        }
        self.began_ns = now_ns;
    }

    /// A sample of the interval under way.
    pub fn note(&mut self, v: u64) {
        self.current = Some(self.current.map_or(v, |c| c.min(v)));
    }

    /// The smallest minimum kept, if any sample was taken.
    pub fn min(&self) -> Option<u64> {
        self.done.iter().copied().chain(self.current).min()
    }
}

#[cfg(test)]
mod tests {
    use super::MinHistory;

    /// LEDBAT's order (roll, then note): a sample crossing the interval opens the new one, and
    /// `keep` finished minima plus the current one are kept.
    #[test]
    fn roll_then_note_opens_the_new_interval_with_the_sample() {
        let mut h = MinHistory::new(10, 1);
        assert_eq!(h.min(), None);
        h.begin(5);
        for (t, v) in [(5, 30), (9, 20), (15, 50)] {
            h.roll(t);
            h.note(v);
        }
        // [5, 15) has minimum 20; the interval from 15 holds 50
        assert_eq!(h.min(), Some(20));
        h.roll(25);
        h.note(40);
        // 20 aged out (one finished minimum kept: 50); the interval from 25 holds 40
        assert_eq!(h.min(), Some(40));
    }

    /// SCReAM's order (note, then roll): the crossing sample closes its interval and the next
    /// begins empty, so the base delay is the history's until a new sample arrives.
    #[test]
    fn note_then_roll_folds_the_sample_into_the_ending_interval() {
        let mut h = MinHistory::new(10, 2);
        for (t, v) in [(3, 30), (10, 25)] {
            h.note(v);
            h.roll(t);
        }
        assert_eq!(h.min(), Some(25));
        for (t, v) in [(12, 60), (20, 70), (30, 80)] {
            h.note(v);
            h.roll(t);
        }
        // finished minima 25 (to 10), 60 (to 20), 80 (to 30): the oldest aged out; none under way
        assert_eq!(h.min(), Some(60));
        assert!(!h.is_empty());
    }
}
