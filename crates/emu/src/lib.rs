//! ccbench's emulation backend: the engine (`ccbench-emu`) and the flow agent
//! (`ccbench-agent`); the binaries are small mains over this library.
//!
//! * [`engine`]: the real-time engine carrying TUN packets through netmodel links.
//! * [`agent`]: the flow agent's roles (TCP/UDP senders and receivers, arrivals, the
//!   sock_diag monitor, launch) over socket, `TCP_INFO` and application modules.
//! * [`dgram_io`]: `ccbench-dgram`, the datagram transport (crates/dgram) over a real UDP
//!   socket, for flows of datagram schemes (docs/datagram.md).
//! * [`capture`]: pcapng captures of the packets' real bytes at hosts and bottleneck sides.
//! * [`clock`]: CLOCK_MONOTONIC in nanoseconds, absolute sleeps, CPU pinning, timer slack.
//! * [`packet`]: the IPv4/TCP/UDP header fields the engine needs (no allocation).
//! * [`columns`]: append-only columns written as raw little-endian files that the Python side
//!   turns into polars Series (the same approach as the simulator's bindings).
//! * [`runtime`]: the runtime configuration the Python backend hands to the engine.
//! * [`vnet`]: the TUNs' offloads: `virtio_net_hdr`, cutting TCP GSO packets into segments.
//!
//! See docs/emulation.md for the design, the timing strategy and what is recorded.

pub mod agent;
pub mod capture;
pub mod clock;
pub mod columns;
pub mod dgram_io;
pub mod engine;
pub mod packet;
pub mod runtime;
pub mod vnet;
