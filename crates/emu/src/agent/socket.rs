//! Socket helpers of the agent's roles.

use super::{die, errno_msg};
use crate::clock::mono_ns;

pub fn sockaddr(addr: u32, port: u16) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sa.sin_family = libc::AF_INET as _;
    sa.sin_port = port.to_be();
    sa.sin_addr = libc::in_addr { s_addr: addr.to_be() };
    sa
}

/// The error of a failed `send` that must stop a UDP sender, or None for a transient one
/// (a full queue, an interrupted call, an ICMP port-unreachable of an earlier datagram).
pub fn udp_send_failure() -> Option<String> {
    let e = std::io::Error::last_os_error();
    (!matches!(e.raw_os_error(), Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ECONNREFUSED)))
        .then(|| format!("send: {e}"))
}

pub fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on our own fd.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

/// poll one fd for `events` until the absolute time `deadline` (ns); true if ready.
pub fn wait_fd(fd: i32, events: i16, deadline: u64) -> bool {
    let now = mono_ns();
    if now >= deadline {
        return false;
    }
    let ms = ((deadline - now) / 1_000_000).clamp(1, 100) as i32;
    let mut p = libc::pollfd { fd, events, revents: 0 };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    n > 0
}

/// A non-blocking TCP listening socket on `port` (any address, SO_REUSEADDR), or exit.
pub fn listen_on(port: u16, backlog: i32) -> i32 {
    // SAFETY: plain socket calls on an fd we own, with valid pointers.
    let lfd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    if lfd < 0 {
        die(1, &errno_msg("socket"));
    }
    let one: i32 = 1;
    unsafe { libc::setsockopt(lfd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &one as *const i32 as *const _, 4) };
    let sa = sockaddr(0, port);
    if unsafe { libc::bind(lfd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } != 0 {
        die(1, &errno_msg("bind"));
    }
    if unsafe { libc::listen(lfd, backlog) } != 0 {
        die(1, &errno_msg("listen"));
    }
    set_nonblocking(lfd);
    lfd
}

/// A UDP socket, or exit.
pub fn udp_socket() -> i32 {
    // SAFETY: plain socket call.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if fd < 0 {
        die(1, &errno_msg("socket"));
    }
    fd
}

/// A non-blocking UDP socket bound to `port` on any address (receive buffer `rcvbuf` bytes
/// when given), ready: "listening" is printed for the driver; or exit.
pub fn udp_listen(port: u16, rcvbuf: Option<i32>) -> i32 {
    let fd = udp_socket();
    if let Some(sz) = rcvbuf {
        // SAFETY: setting an int option on our own fd.
        unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &sz as *const i32 as *const _, 4) };
    }
    let sa = sockaddr(0, port);
    // SAFETY: binding our socket to a valid address.
    if unsafe { libc::bind(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) } != 0 {
        die(1, &errno_msg("bind"));
    }
    set_nonblocking(fd);
    println!("listening");
    std::io::Write::flush(&mut std::io::stdout()).ok();
    fd
}
