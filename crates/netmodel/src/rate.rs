//! The serialiser of a link: when does a packet that starts service at `t` leave the queue?
//!
//! Three kinds: a constant rate (or none), a mahimahi delivery-opportunity trace
//! (mahimahi's format, github.com/ravinet/mahimahi traces/README: one line per packet-sized
//! opportunity, ms timestamps, wrapping), and a piecewise-constant rate series.

use serde::Deserialize;

use crate::{tx_time_ns, Nanos};

const MS: u64 = 1_000_000;

/// A time-varying rate, as it appears in the resolved experiment (`rate_trace`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum RateTrace {
    /// mahimahi: each entry of `ms` is one delivery opportunity of `opportunity_bytes` at that
    /// millisecond (repeated entries = several opportunities in that ms); non-decreasing,
    /// last > 0. The trace wraps with period = last timestamp unless `once`.
    Mahimahi {
        ms: Vec<u64>,
        #[serde(default)]
        once: bool,
        #[serde(default = "default_opportunity")]
        opportunity_bytes: u32,
    },
    /// `(t, rate_bps)` points, first at 0, `t` increasing; each rate holds until the next
    /// point, the last one forever. A rate of 0 is an outage.
    Series { points: Vec<(u64, u64)> },
}

fn default_opportunity() -> u32 {
    1500
}

/// Service state of a mahimahi trace (byte-level accounting as mahimahi's `LinkQueue`).
#[derive(Clone, Debug)]
pub(crate) struct Opportunities {
    ms: Vec<u64>,
    period_ms: u64,
    once: bool,
    size: u64,
    /// Next opportunity (global index across wraps) nobody has used yet.
    next: u64,
    /// The opportunity the last packet finished in, and the bytes it left unused.
    cur: Option<(u64, u64)>,
}

impl Opportunities {
    fn time(&self, idx: u64) -> Option<Nanos> {
        let len = self.ms.len() as u64;
        let (n, i) = (idx / len, (idx % len) as usize);
        if self.once && n > 0 {
            return None;
        }
        Some((n * self.period_ms + self.ms[i]) * MS)
    }

    /// First opportunity at or after `t`.
    fn first_at_or_after(&self, t: Nanos) -> u64 {
        let len = self.ms.len() as u64;
        let period_ns = self.period_ms * MS;
        let n = t / period_ns;
        let r = t - n * period_ns;
        let i = self.ms.partition_point(|&m| m * MS < r) as u64;
        n * len + i // i == len rolls over into the next period (or past the end if once)
    }

    fn serve(&mut self, start: Nanos, bytes: u64, back_to_back: bool) -> Nanos {
        let mut need = bytes;
        match self.cur.take() {
            // Bytes left in the opportunity the previous packet finished in serve the next
            // queued packet at that same instant (several small packets share one).
            Some((idx, left)) if back_to_back && left > 0 => {
                let used = left.min(need);
                need -= used;
                if need == 0 {
                    self.cur = Some((idx, left - used));
                    return self.time(idx).unwrap_or(Nanos::MAX);
                }
            }
            _ => {} // the link went idle: the rest of that opportunity is lost
        }
        let mut idx = self.next.max(self.first_at_or_after(start));
        loop {
            let Some(t) = self.time(idx) else {
                self.next = idx;
                return Nanos::MAX; // `once` and the trace is used up: never
            };
            self.next = idx + 1;
            let used = self.size.min(need);
            need -= used;
            if need == 0 {
                self.cur = Some((idx, self.size - used));
                return t;
            }
            idx += 1;
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Server {
    /// A constant rate (`None`: unlimited), with the last `(bytes, ns)` transmission time
    /// computed, which spares a division for the usual runs of equal-sized packets.
    Constant(Option<u64>, (u64, Nanos)),
    Trace(Opportunities),
    Series(Vec<(u64, u64)>),
}

impl Server {
    pub(crate) fn new(rate_bps: Option<u64>, trace: Option<&RateTrace>) -> Self {
        match trace {
            None => Server::Constant(rate_bps, (0, 0)),
            Some(RateTrace::Mahimahi { ms, once, opportunity_bytes }) => {
                let mut ms = ms.clone();
                ms.sort_unstable();
                let period_ms = ms.last().copied().unwrap_or(0);
                if ms.is_empty() || period_ms == 0 {
                    // Validated by the config layer; an unusable trace carries nothing.
                    return Server::Series(vec![(0, 0)]);
                }
                Server::Trace(Opportunities {
                    ms,
                    period_ms,
                    once: *once,
                    size: *opportunity_bytes as u64,
                    next: 0,
                    cur: None,
                })
            }
            Some(RateTrace::Series { points }) => {
                let mut p = points.clone();
                if p.first().is_none_or(|&(t, _)| t != 0) {
                    p.insert(0, (0, p.first().map_or(0, |x| x.1)));
                }
                Server::Series(p)
            }
        }
    }

    /// Time the last bit of a `bytes`-byte packet leaves when its service starts at `start`;
    /// `back_to_back`: it follows a packet that finished at `start` (the queue was not empty).
    /// `Nanos::MAX` = never.
    pub(crate) fn finish(&mut self, start: Nanos, bytes: u64, back_to_back: bool) -> Nanos {
        match self {
            Server::Constant(None, _) => start,
            Server::Constant(Some(r), last) => {
                if last.0 != bytes {
                    *last = (bytes, tx_time_ns(bytes, *r));
                }
                start + last.1
            }
            Server::Trace(o) => o.serve(start, bytes, back_to_back),
            Server::Series(points) => series_finish(points, start, bytes),
        }
    }
}

/// Integrate a piecewise-constant rate from `start` until `bytes` have been sent.
fn series_finish(points: &[(u64, u64)], start: Nanos, bytes: u64) -> Nanos {
    // Work in bit·ns (rate in bit/s × ns = 10^9 bit·ns per bit).
    let mut need: u128 = bytes as u128 * 8 * 1_000_000_000;
    let mut i = points.partition_point(|&(t, _)| t <= start).saturating_sub(1);
    let mut t = start;
    loop {
        let rate = points[i].1 as u128;
        let seg_end = points.get(i + 1).map(|p| p.0);
        match seg_end {
            None => {
                if rate == 0 {
                    return Nanos::MAX;
                }
                return t + need.div_ceil(rate) as u64;
            }
            Some(e) => {
                let cap = rate * (e - t) as u128;
                if cap >= need && rate > 0 {
                    return t + need.div_ceil(rate) as u64;
                }
                need -= cap;
                t = e;
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mm(ms: &[u64], once: bool, size: u32) -> Server {
        Server::new(None, Some(&RateTrace::Mahimahi { ms: ms.to_vec(), once, opportunity_bytes: size }))
    }

    #[test]
    fn one_opportunity_per_packet_at_trace_times() {
        let mut s = mm(&[1, 2, 2, 5], false, 1500);
        assert_eq!(s.finish(0, 1500, false), MS);
        assert_eq!(s.finish(MS, 1500, true), 2 * MS);
        assert_eq!(s.finish(2 * MS, 1500, true), 2 * MS); // second opportunity in ms 2
        assert_eq!(s.finish(2 * MS, 1500, true), 5 * MS);
        // Wrap: period 5 ms, so the next ones are at 6, 7, 7, 10 ms.
        assert_eq!(s.finish(5 * MS, 1500, true), 6 * MS);
        assert_eq!(s.finish(6 * MS, 1500, true), 7 * MS);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_big_ones_span_two() {
        let mut s = mm(&[1, 2, 3, 4], false, 1500);
        // Three 500-byte packets fit one opportunity; the fourth takes the next.
        assert_eq!(s.finish(0, 500, false), MS);
        assert_eq!(s.finish(MS, 500, true), MS);
        assert_eq!(s.finish(MS, 500, true), MS);
        assert_eq!(s.finish(MS, 500, true), 2 * MS);
        // 1000 bytes left at ms 2; a 1500-byte packet uses them plus 500 of ms 3.
        assert_eq!(s.finish(2 * MS, 1500, true), 3 * MS);
        // The link goes idle: the 1000 bytes left at ms 3 are lost; a packet arriving at
        // 3.5 ms waits for ms 4.
        assert_eq!(s.finish(3 * MS + MS / 2, 100, false), 4 * MS);
    }

    #[test]
    fn idle_time_loses_opportunities_and_once_ends_the_trace() {
        let mut s = mm(&[1, 2, 3], true, 1504);
        assert_eq!(s.finish(0, 1504, false), MS);
        // Idle until 2.5 ms: the opportunity at 2 ms is gone.
        assert_eq!(s.finish(2 * MS + 1, 1504, false), 3 * MS);
        // `once`: nothing after the last timestamp.
        assert_eq!(s.finish(3 * MS, 100, true), Nanos::MAX);
        // A 1504-byte opportunity carries a 1504-byte packet whole (mahimahi's PACKET_SIZE).
        let mut s = mm(&[1, 2], false, 1504);
        assert_eq!(s.finish(0, 1504, false), MS);
        assert_eq!(s.finish(MS, 1505, true), 3 * MS); // needs two: ms 2 and ms 3 (= 2 + 1)
    }

    #[test]
    fn twelve_mbit_trace_delivers_twelve_mbit() {
        // One line per ms: 1500 B/ms = 12 Mbit/s. Back-to-back 1500-byte packets for 10 s.
        let ms: Vec<u64> = (1..=1000).collect();
        let mut s = mm(&ms, false, 1500);
        let mut t = s.finish(0, 1500, false);
        let mut n = 1;
        while t < 10_000 * MS {
            t = s.finish(t, 1500, true);
            n += 1;
        }
        assert_eq!(n, 10_000);
    }

    #[test]
    fn rate_series_integrates_piecewise() {
        // 8 Mbit/s for 1 ms (1000 bytes), outage for 1 ms, then 16 Mbit/s.
        let p = vec![(0, 8_000_000), (MS, 0), (2 * MS, 16_000_000)];
        let mut s = Server::new(Some(1), Some(&RateTrace::Series { points: p }));
        assert_eq!(s.finish(0, 500, false), MS / 2);
        // 1500 bytes from 0.5 ms: 500 by 1 ms, nothing until 2 ms, 1000 B at 2 B/µs = 0.5 ms.
        assert_eq!(s.finish(MS / 2, 1500, true), 2 * MS + MS / 2);
        assert_eq!(s.finish(10 * MS, 2000, false), 11 * MS);
    }
}
