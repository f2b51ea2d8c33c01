//! Windowed min/max filters shared by the algorithms and the endpoint.

use std::collections::VecDeque;

/// Kathleen Nichols' windowed min/max estimator (Linux lib/win_minmax.c): the best, 2nd-best and
/// 3rd-best values over the last `win` time units, updated in O(1). Used for min_rtt
/// (window 300 s) and by BBR (max bandwidth over 10 rounds).
#[derive(Clone, Copy, Debug)]
pub struct Minmax {
    s: [(u64, u64); 3], // (time, value)
}

impl Minmax {
    #[inline]
    pub fn new(t: u64, v: u64) -> Self {
        Minmax { s: [(t, v); 3] }
    }
    #[inline]
    pub fn get(&self) -> u64 {
        self.s[0].1
    }
    #[inline]
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }
    #[inline]
    fn subwin_update(&mut self, win: u64, val: (u64, u64)) -> u64 {
        let dt = val.0.wrapping_sub(self.s[0].0);
        if dt > win {
            // The best value is older than the window: promote the 2nd and 3rd choices, maybe twice.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window passed without a new 2nd choice: take one from the 2nd quarter.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Half the window passed without a new 3rd choice.
            self.s[2] = val;
        }
        self.s[0].1
    }
    /// Running minimum over `win`.
    #[inline]
    pub fn running_min(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = (t, v);
        if v <= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v <= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if v <= self.s[2].1 {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
    /// Running maximum over `win`.
    #[inline]
    pub fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = (t, v);
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

/// Sliding-window minimum over time (monotonic deque): RTTstanding over srtt/2.
#[derive(Clone, Debug, Default)]
pub struct WindowMin {
    q: VecDeque<(u64, u64)>,
}

impl WindowMin {
    pub fn update(&mut self, t: u64, v: u64, win: u64) -> u64 {
        while let Some(&(_, back)) = self.q.back() {
            if back >= v {
                self.q.pop_back();
            } else {
                break;
            }
        }
        self.q.push_back((t, v));
        while let Some(&(t0, _)) = self.q.front() {
            if t.saturating_sub(t0) > win && self.q.len() > 1 {
                self.q.pop_front();
            } else {
                break;
            }
        }
        self.q.front().map(|x| x.1).unwrap_or(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minmax_windowed_min_expires() {
        let mut m = Minmax::new(0, u64::MAX);
        assert_eq!(m.running_min(100, 0, 50), 50);
        assert_eq!(m.running_min(100, 10, 60), 50);
        assert_eq!(m.running_min(100, 30, 70), 50);
        // 50 (t=0) leaves the window at t=101; the best remaining choice is taken.
        let v = m.running_min(100, 101, 80);
        assert!(v > 50 && v <= 80, "got {}", v);
        assert_eq!(m.running_min(100, 102, 40), 40);
        let mut mx = Minmax::new(0, 0);
        mx.running_max(10, 0, 5);
        mx.running_max(10, 5, 3);
        assert_eq!(mx.get(), 5);
        assert_eq!(mx.running_max(10, 11, 2), 3);
    }

    #[test]
    fn window_min_slides() {
        let mut w = WindowMin::default();
        assert_eq!(w.update(0, 50, 10), 50);
        assert_eq!(w.update(5, 60, 10), 50);
        assert_eq!(w.update(11, 70, 10), 60);
        assert_eq!(w.update(12, 40, 10), 40);
        assert_eq!(w.update(30, 90, 10), 90);
    }
}
