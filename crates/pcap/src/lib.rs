//! Packet captures for ccbench: pcapng out, pcap/pcapng in.
//!
//! * [`writer`]: a pcapng writer (one section, any number of interfaces, Enhanced Packet
//!   Blocks with nanosecond timestamps: `if_tsresol` = 9).
//! * [`reader`]: a streaming reader of classic pcap (µs and ns magic, both byte orders) and
//!   pcapng (any section byte order, per-interface link type and timestamp resolution). It
//!   holds one block at a time in a reused buffer, so memory is bounded by the largest block
//!   it accepts ([`reader::MAX_BLOCK`]) whatever the capture's size; damaged input is an
//!   [`reader::Error`] naming the byte offset, never a panic.
//! * [`decode`]: link layer (Ethernet with VLAN tags, raw IP, Linux cooked v1/v2, BSD
//!   loopback) → IPv4 → TCP (with timestamps and SACK options) / UDP header fields.
//! * [`synth`]: IPv4/TCP/UDP headers built from a segment's fields with valid checksums (the
//!   simulator's capture: payload bytes are zeros, so the checksum covers them without
//!   writing them).
//! * [`scan`]: per-packet records from a capture, in chunks (the Python import's input).

pub mod decode;
pub mod reader;
pub mod scan;
pub mod synth;
pub mod writer;

/// `LINKTYPE_RAW`: the packet starts with its IPv4/IPv6 header (what a TUN without packet
/// information delivers, and what the simulator writes).
pub const LINKTYPE_RAW: u16 = 101;
/// `LINKTYPE_ETHERNET`.
pub const LINKTYPE_ETHERNET: u16 = 1;
