//! Poisson short-flow arrivals: one connection per arrival, the simulator's generator
//! (`netmodel::arrivals`), so a group draws the simulator's arrival times and sizes.

use super::socket::sockaddr;
use super::tcp_info;
use super::{die, errno_msg, stop_time, write_out, Args, FOREVER};
use netmodel::records::{conns_table, ConnRow};
use crate::clock::{self, mono_ns};

pub struct ShortConn {
    fd: i32,
    size: u64,
    written: u64,
    connected: bool,
}

/// `arrivals-client --dst ADDR --port P --cc NAME --arrivals JSON --seed S --flow F --t0 T0
/// [--start S] [--stop S2] --end E --out DIR`: Poisson short flows, one new connection per
/// arrival (the simulator's arrival times and sizes: netmodel::arrivals itself), each writing its size and
/// closing once every byte is acknowledged (SIOCOUTQ = 0, checked every 100 µs: the
/// completion-time granularity). DIR gets the group's `conns` table, one row per connection
/// in arrival order (`conn` = index in the group; completed null = not completed by the end).
pub fn arrivals_client(a: &Args) {
    let dst: std::net::Ipv4Addr = a.str("dst").parse().unwrap_or_else(|_| die(2, "--dst: not an IPv4 address"));
    let port = a.u64("port", None) as u16;
    let cc = a.str("cc");
    let cfg: netmodel::arrivals::ArrivalsConfig =
        serde_json::from_str(&a.str("arrivals")).unwrap_or_else(|e| die(2, &format!("--arrivals: {e}")));
    let seed = a.u64("seed", Some(0));
    let flow = a.u64("flow", None) as u32;
    let t0 = a.u64("t0", Some(mono_ns()));
    let start = t0 + a.u64("start", Some(0));
    let end = t0 + a.u64("end", Some(FOREVER));
    let stop = stop_time(a, t0, end);
    let out_path = a.str("out");
    clock::set_timer_slack(1);
    let mut gen = netmodel::arrivals::Arrivals::new(&cfg, seed, flow);
    let mut next = Some(start + gen.next_gap()).filter(|&t| t < end);
    let sa = sockaddr(u32::from(dst), port);
    let buf = vec![0u8; 1 << 18];
    let mut open: Vec<(usize, ShortConn)> = Vec::new();
    // one conns row per arrival; `conn` is the arrival's index in this group (the driver
    // numbers connections over all groups)
    let mut log: Vec<ConnRow> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut pfds: Vec<libc::pollfd> = Vec::new();
    let finish = |c: &ShortConn, done: Option<u64>, log: &mut Vec<ConnRow>, i: usize| {
        let mut info = [0u8; 512];
        let mut len: libc::socklen_t = info.len() as _;
        // SAFETY: getsockopt into our buffer.
        let ok = unsafe { libc::getsockopt(c.fd, libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr() as *mut _, &mut len) } == 0;
        let info = if ok { &info[..len as usize] } else { &info[..0] };
        // tcpi_bytes_acked counts the SYN too
        log[i].acked = tcp_info::bytes_acked(info).map_or(0, |a| a.saturating_sub(1).min(c.size));
        log[i].retrans = tcp_info::total_retrans(info).unwrap_or(0);
        log[i].completed_ns = done;
        unsafe { libc::close(c.fd) };
    };
    loop {
        let now = mono_ns();
        if now >= end {
            break;
        }
        while let Some(t) = next.filter(|&t| t <= now) {
            let size = gen.next_size();
            let n = t + gen.next_gap();
            next = Some(n).filter(|&n| n < stop);
            // SAFETY: plain socket calls on an fd we own.
            let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK, 0) };
            if fd < 0 {
                errors.push(errno_msg("socket"));
                continue;
            }
            let r = unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, cc.as_ptr() as *const _, cc.len() as u32) };
            if r != 0 {
                die(3, &format!("TCP_CONGESTION {cc}: {}", std::io::Error::last_os_error()));
            }
            unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) };
            log.push(ConnRow { conn: log.len() as u32, flow, size, start_ns: t - t0, ..Default::default() });
            open.push((log.len() - 1, ShortConn { fd, size, written: 0, connected: false }));
        }
        // progress every open connection
        let mut j = 0;
        while j < open.len() {
            let (i, c) = &mut open[j];
            let mut remove = false;
            if c.written < c.size {
                let want = (c.size - c.written).min(buf.len() as u64) as usize;
                let r = unsafe { libc::send(c.fd, buf.as_ptr() as *const _, want, libc::MSG_NOSIGNAL) };
                if r > 0 {
                    c.written += r as u64;
                    c.connected = true;
                } else if r < 0 {
                    let e = std::io::Error::last_os_error();
                    if !matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ENOTCONN)) {
                        errors.push(format!("connection {i}: send: {e}"));
                        remove = true;
                    }
                }
            } else {
                let mut outq: i32 = 0;
                unsafe { libc::ioctl(c.fd, libc::TIOCOUTQ, &mut outq) };
                if outq == 0 {
                    let done = mono_ns() - t0;
                    finish(c, Some(done), &mut log, *i);
                    open.swap_remove(j);
                    continue;
                }
            }
            if remove {
                finish(c, None, &mut log, *i);
                open.swap_remove(j);
                continue;
            }
            j += 1;
        }
        // wait: for socket room, the next arrival, or (with connections awaiting their last
        // ACK) 100 µs
        pfds.clear();
        pfds.extend(open.iter().filter(|(_, c)| c.written < c.size).map(|(_, c)| libc::pollfd { fd: c.fd, events: libc::POLLOUT, revents: 0 }));
        let mut until = next.unwrap_or(end).min(end);
        if open.iter().any(|(_, c)| c.written >= c.size) {
            until = until.min(mono_ns() + 100_000);
        }
        let now = mono_ns();
        if until > now {
            let d = until - now;
            let ts = libc::timespec { tv_sec: (d / 1_000_000_000) as _, tv_nsec: (d % 1_000_000_000) as _ };
            // SAFETY: our pollfd array with its length and a valid timespec.
            unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as _, &ts, std::ptr::null()) };
        }
    }
    for (i, c) in open.drain(..) {
        finish(&c, None, &mut log, i);
    }
    write_out(&out_path, &conns_table(&log));
    let completed = log.iter().filter(|l| l.completed_ns.is_some()).count();
    errors.truncate(5);
    println!(
        "{}",
        serde_json::json!({"cc": cc, "connected": log.is_empty() || completed > 0, "arrivals": log.len(),
                           "completed": completed, "error": if errors.is_empty() { None } else { Some(errors.join("; ")) }})
    );
}
