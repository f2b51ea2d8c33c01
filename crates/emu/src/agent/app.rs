//! The sending application: what it writes into its socket, and when (the simulator's
//! application model, docs/emulation.md "Workloads").

use super::socket::wait_fd;
use crate::clock::{self, mono_ns};

/// What the sending application writes (see docs/emulation.md, "Workloads").
pub struct AppSpec {
    /// Application rate of payload bytes (None: as fast as the socket takes them).
    pub rate_bps: Option<u64>,
    /// (on, off) periods in ns.
    pub onoff: Option<(u64, u64)>,
    /// Bytes per application write of a rate-limited source (one MSS, as the simulator).
    pub chunk: u64,
    pub start: u64,
    pub stop: u64,
    /// Total bytes (0 = unlimited).
    pub bytes: u64,
    /// Keep at most this many bytes unsent in the socket (SIOCOUTQNSD) when set.
    pub max_unsent: Option<u64>,
}

/// Granularity of a rate-limited writer: it wakes at the simulator's write instants
/// (`period_start + k·chunk·8/rate`) when they are at least this far apart, else every TICK and
/// writes every chunk due by then (a burst of at most rate × TICK).
pub const APP_TICK_NS: u64 = 1_000_000;

/// Write into the non-blocking socket `fd` as `app` says until its stop (or its byte count).
/// Returns (bytes written, on periods begun, error).
pub fn app_write(fd: i32, app: &AppSpec) -> (u64, u64, Option<String>) {
    let buf = vec![0u8; 1 << 18];
    let mut written: u64 = 0;
    let mut periods: u64 = 0;
    let mut cur_period = u64::MAX;
    let mut period_written: u64 = 0;
    loop {
        let now = mono_ns();
        if now >= app.stop || (app.bytes > 0 && written >= app.bytes) {
            break;
        }
        // the current on period: [p_start, p_end); off until p_next
        let (p_start, p_end, p_idx) = match app.onoff {
            None => (app.start, app.stop, 0),
            Some((on, off)) => {
                let cyc = (on + off).max(1);
                let k = (now - app.start) / cyc;
                (app.start + k * cyc, app.start + k * cyc + on, k)
            }
        };
        if p_idx != cur_period {
            cur_period = p_idx;
            period_written = 0;
            periods += 1;
        }
        if now >= p_end {
            // off: write nothing until the next on period
            let (on, off) = app.onoff.unwrap();
            let _ = on;
            clock::sleep_until((p_end + off).min(app.stop));
            continue;
        }
        let p_end = p_end.min(app.stop);
        let mut want = buf.len() as u64;
        let mut next_wake = p_end;
        if let Some(rate) = app.rate_bps {
            // chunks due at `now`: the k-th (k = 0, 1, ...) is written at p_start + k·chunk·8/rate
            let per = |k: u64| p_start + (k as u128 * app.chunk as u128 * 8_000_000_000 / rate as u128) as u64;
            let k_due = ((now - p_start) as u128 * rate as u128 / (app.chunk as u128 * 8_000_000_000)) as u64 + 1;
            let due = k_due * app.chunk;
            next_wake = per(k_due).max(now + APP_TICK_NS.min(per(k_due + 1) - per(k_due))).min(p_end);
            want = due.saturating_sub(period_written);
            if want == 0 {
                clock::sleep_until(next_wake);
                continue;
            }
            want = want.min(buf.len() as u64);
        }
        if app.bytes > 0 {
            want = want.min(app.bytes - written);
        }
        if let Some(lim) = app.max_unsent {
            // TCP_NOTSENT_LOWAT alone lets the tail skb grow by up to 64 KB past it
            let mut nsd: i32 = 0;
            // SAFETY: ioctl into an int we own.
            unsafe { libc::ioctl(fd, libc::SIOCOUTQNSD, &mut nsd) };
            want = want.min(lim.saturating_sub(nsd.max(0) as u64));
            if want == 0 {
                wait_fd(fd, libc::POLLOUT, next_wake.max(now + 1));
                continue;
            }
        }
        // SAFETY: sending from our buffer on our socket.
        let r = unsafe { libc::send(fd, buf.as_ptr() as *const _, want as usize, libc::MSG_NOSIGNAL) };
        if r > 0 {
            written += r as u64;
            period_written += r as u64;
            if app.rate_bps.is_some() && r as u64 == want {
                continue; // caught up; the next pass sleeps until the next instant
            }
        } else if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EAGAIN) && e.raw_os_error() != Some(libc::EINTR) {
                return (written, periods, Some(format!("send: {e}")));
            }
        }
        // socket full: wait for room (or the end of the on period)
        wait_fd(fd, libc::POLLOUT, next_wake.max(now + 1));
    }
    (written, periods, None)
}
