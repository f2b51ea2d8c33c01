//! dgram: a congestion-controlled datagram transport beside the TCP endpoint.
//!
//! Pantheon's user-space schemes (PCC, LEDBAT, Sprout, Verus, SCReAM, Indigo, RemyCC, QUIC
//! Cubic) are not TCP window algorithms: they send sequenced datagrams at a rate and/or under
//! a window their algorithm sets, and their receivers acknowledge each packet or report per
//! interval. This crate holds that transport **without I/O**: callers pass the time in
//! (`u64` nanoseconds) and hand packets in and out, so the same code is the simulator's
//! datagram endpoint (virtual time) and the `ccbench-dgram` process that sends real UDP on
//! the kernel backend (wall-clock time).
//!
//! - [`cc`]: the interface every algorithm implements ([`cc::DgramCc`]), its feedback types,
//!   and the registry (`cc::make`, `cc::schemes`): one file per algorithm under `src/cc/`,
//!   each ending with its registration as the TCP algorithms of the simulator do.

pub mod cc;
