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

/// The file a capture point named `name` is written to, `<name>.pcapng`, inside the capture
/// folder and nowhere else: `name` must be a plain file-name part (letters, digits, `_`, `-`,
/// `.`, at most 127 bytes, not starting with `.`). Node names from an experiment pass the
/// config layer's stricter rule; this check stops a path from any other caller.
pub fn capture_file_name(name: &str) -> Result<String, String> {
    let ok = !name.is_empty()
        && name.len() <= 127
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(format!("{name}.pcapng"))
    } else {
        Err(format!(
            "capture: {name:?} is not a capture name (letters, digits, '_', '-', '.', not starting \
             with '.'): captures are written only inside the capture folder"
        ))
    }
}

#[cfg(test)]
mod name_tests {
    use super::capture_file_name;

    #[test]
    fn capture_names_stay_inside_the_folder() {
        assert_eq!(capture_file_name("r1-r2").unwrap(), "r1-r2.pcapng");
        for bad in ["", "..", "../x", "/etc/x", "a/b", ".hidden", "a\0b", "é", "a b"] {
            assert!(capture_file_name(bad).is_err(), "{bad:?}");
        }
        assert!(capture_file_name(&"a".repeat(128)).is_err());
    }
}
