//! The application of a flow: what its sending host writes, and when — application-limited
//! streams (`app_rate_bps`: writes of one chunk at exact instants `start + k·chunk·8/rate`, no
//! drift) and on/off sources (`onoff`: alternately `on` for `on_ns` — writing at the app rate,
//! or an unlimited backlog — and `off` for `off_ns`, when nothing is written and, for a
//! backlogged source, unsent data is withdrawn). The simulator's senders and the emulator's
//! flow agent run the same model. Pure: callers pass `now`.

use serde::Deserialize;

/// `flows[].onoff` of the resolved experiment.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub struct OnOff {
    pub on_ns: u64,
    pub off_ns: u64,
}

/// What the application does at one of its instants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppAction {
    /// Write this many bytes (one chunk; `u64::MAX` = an unlimited backlog).
    Write(u64),
    /// End of an on period of a backlogged source: stop writing, withdraw unsent data.
    Pause,
    /// End of an on period of a rate-limited source: just stop writing.
    Idle,
}

/// The application of one flow: a rate (or an unlimited backlog), optionally on/off.
#[derive(Clone, Debug)]
pub struct AppModel {
    rate_bps: Option<u64>,
    onoff: Option<OnOff>,
    chunk: u64,
    /// Start of the current on period (of the flow, without on/off).
    period_start: u64,
    /// Writes done in the current on period.
    k: u64,
    on: bool,
}

impl AppModel {
    /// `chunk`: bytes per write of a rate-limited application.
    pub fn new(rate_bps: Option<u64>, onoff: Option<OnOff>, chunk: u64) -> Self {
        AppModel { rate_bps, onoff, chunk: chunk.max(1), period_start: 0, k: 0, on: false }
    }

    /// The application's action at `now` (its start time, then each instant this returned)
    /// and the next instant it wants to act at.
    pub fn step(&mut self, now: u64) -> (AppAction, Option<u64>) {
        if !self.on {
            self.on = true;
            self.period_start = now;
            self.k = 0;
        }
        let end = self.onoff.map(|o| self.period_start + o.on_ns);
        if let (Some(e), Some(o)) = (end, self.onoff) {
            if now >= e {
                self.on = false;
                let act = if self.rate_bps.is_none() { AppAction::Pause } else { AppAction::Idle };
                return (act, Some(e + o.off_ns));
            }
        }
        match self.rate_bps {
            None => (AppAction::Write(u64::MAX), end),
            Some(r) => {
                self.k += 1;
                let mut next = self.period_start
                    + (self.k as u128 * self.chunk as u128 * 8_000_000_000 / r as u128) as u64;
                if let Some(e) = end {
                    next = next.min(e);
                }
                (AppAction::Write(self.chunk), Some(next))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn rate_app_writes_at_exact_instants() {
        // 1448 B per write at 11.584 Mbit/s = one write per ms exactly.
        let mut a = AppModel::new(Some(11_584_000), None, 1448);
        let (act, next) = a.step(5 * MS);
        assert_eq!(act, AppAction::Write(1448));
        assert_eq!(next, Some(6 * MS));
        let mut t = next.unwrap();
        for _ in 0..999 {
            t = a.step(t).1.unwrap();
        }
        assert_eq!(t, 1005 * MS);
    }

    #[test]
    fn onoff_backlogged_alternates_write_and_pause() {
        let mut a = AppModel::new(None, Some(OnOff { on_ns: 1000 * MS, off_ns: 5000 * MS }), 1448);
        assert_eq!(a.step(0), (AppAction::Write(u64::MAX), Some(1000 * MS)));
        assert_eq!(a.step(1000 * MS), (AppAction::Pause, Some(6000 * MS)));
        assert_eq!(a.step(6000 * MS), (AppAction::Write(u64::MAX), Some(7000 * MS)));
    }

    #[test]
    fn onoff_with_rate_writes_only_in_on_periods() {
        // 1 write per ms, on 10 ms, off 20 ms: 10 writes per period, then idle until 30 ms.
        let mut a = AppModel::new(Some(11_584_000), Some(OnOff { on_ns: 10 * MS, off_ns: 20 * MS }), 1448);
        let (mut t, mut writes) = (0, 0);
        loop {
            let (act, next) = a.step(t);
            match act {
                AppAction::Write(_) => writes += 1,
                AppAction::Idle => {
                    assert_eq!((t, writes), (10 * MS, 10));
                    assert_eq!(next, Some(30 * MS));
                    break;
                }
                AppAction::Pause => panic!("a rate-limited source does not withdraw data"),
            }
            t = next.unwrap();
        }
        assert_eq!(a.step(30 * MS), (AppAction::Write(1448), Some(31 * MS)));
    }
}
