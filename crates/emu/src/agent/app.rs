//! The sending application: what it writes into its socket, and when — the simulator's
//! application model (`netmodel::app`) on a real socket (docs/emulation.md, "Workloads").

use netmodel::app::{AppAction, AppModel, OnOff};

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

/// Granularity of a rate-limited writer: it wakes at the model's write instants when they
/// are at least this far apart, else every TICK, writing every chunk due by then (a burst of
/// at most rate × TICK).
pub const APP_TICK_NS: u64 = 1_000_000;

/// Bytes one `send()` may hand over: more than any send buffer, so that a backlogged writer
/// gives the socket everything it would take in one call, as one blocking `write()` of a large
/// buffer does. The size of the calls matters on Linux: `tcp_sendmsg_locked` checks the buffer
/// (`sk_stream_memory_free`) only when it starts a new skb, and while the windows let the
/// write queue's tail go out (`tcp_push_one`) a call keeps appending to it past the buffer.
/// With 256-KiB calls a call that ended with its tail sent stopped at the next call's check:
/// CUBIC with `tcp_wmem[2]` 256 KiB at 100 Mbit/s × 100 ms alternated 181-segment writes and
/// full-window bursts (41.0 Mbit/s) where the simulator's one-write-per-wake-up application
/// gives 53.7 (docs/fidelity.md, "Send buffers"). Untouched pages of the zeroed buffer map the
/// kernel's zero page, so it costs no memory.
pub const WRITE_CALL_BYTES: usize = 64 << 20;

/// Write into the non-blocking socket `fd` as `app` says until its stop (or its byte count),
/// driving the simulator's application model (`netmodel::app::AppModel`) by its own instants:
/// at each one the application hands over what the model says (a chunk, or an unlimited
/// backlog), which is written as the socket takes it; a late wake-up catches up on every
/// instant due, and the end of an on period drops what was not written by then.
/// Returns (bytes written, on periods begun, error).
pub fn app_write(fd: i32, app: &AppSpec) -> (u64, u64, Option<String>) {
    let buf = vec![0u8; WRITE_CALL_BYTES];
    let mut model = AppModel::new(app.rate_bps, app.onoff.map(|(on_ns, off_ns)| OnOff { on_ns, off_ns }), app.chunk);
    let mut next = Some(app.start);
    // bytes handed over by the application and not yet written (u64::MAX: a backlog)
    let mut due: u64 = 0;
    let (mut on, mut written, mut periods) = (false, 0u64, 0u64);
    // The socket took everything last time (or has signalled POLLOUT since): a send may go.
    // This is a blocking write()'s behaviour (tcp_sendmsg_locked / sk_stream_wait_memory):
    // write until the socket is full (a short send or EAGAIN), then wait until poll reports
    // it writable (a third of its buffer free, sk_stream_is_writeable) and fill it again.
    // (Writing one 256-KiB send() per wake-up instead kept the socket near two thirds of its
    // buffer: BBR at 100 Mbit/s, 100 ms then carried 66 Mbit/s where a blocking writer
    // carries 90; docs/fidelity.md, "Send buffers".)
    let mut writable = true;
    loop {
        let now = mono_ns();
        if now >= app.stop || (app.bytes > 0 && written >= app.bytes) {
            break;
        }
        while let Some(t) = next.filter(|&t| t <= now && t < app.stop) {
            let (act, n) = model.step(t);
            match act {
                AppAction::Write(b) => {
                    if !on {
                        on = true;
                        periods += 1;
                    }
                    due = due.saturating_add(b);
                }
                AppAction::Pause | AppAction::Idle => {
                    on = false;
                    due = 0;
                }
            }
            next = n;
        }
        let mut wake = next.unwrap_or(app.stop).min(app.stop);
        if app.rate_bps.is_some_and(|r| (app.chunk as u128 * 8_000_000_000 / r as u128) < APP_TICK_NS as u128) {
            wake = wake.max(now + APP_TICK_NS).min(app.stop);
        }
        if due == 0 {
            clock::sleep_until(wake);
            continue;
        }
        let mut want = due.min(buf.len() as u64);
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
                wait_fd(fd, libc::POLLOUT, wake.max(now + 1));
                continue;
            }
        }
        if !writable {
            // socket full: wait for room (or the end of the on period, or the stop), then
            // look at the model's instants again before sending
            writable = wait_fd(fd, libc::POLLOUT, wake.max(now + 1));
            continue;
        }
        // SAFETY: sending from our buffer on our socket.
        let r = unsafe { libc::send(fd, buf.as_ptr() as *const _, want as usize, libc::MSG_NOSIGNAL) };
        if r > 0 {
            written += r as u64;
            due = due.saturating_sub(r as u64);
            // a short send means the socket is full: wait for POLLOUT before the next
            writable = r as u64 == want;
        } else if r < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) => writable = false,
                Some(libc::EINTR) => {}
                _ => return (written, periods, Some(format!("send: {e}"))),
            }
        }
        // a rate-limited writer that caught up sleeps until its next instant (due is 0); a
        // backlogged one writes again at once until the socket is full
    }
    (written, periods, None)
}
