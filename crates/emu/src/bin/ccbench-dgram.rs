//! ccbench-dgram: one end of one datagram-transport flow over real UDP, run inside a host's
//! network namespace (`emu::dgram_io` has the command lines).

use emu::agent::{die, Args};
use emu::{clock, dgram_io};

fn main() {
    clock::die_with_parent(libc::SIGTERM);
    let v: Vec<String> = std::env::args().skip(1).collect();
    let a = Args::parse(v.get(1..).unwrap_or(&[]));
    if let Some(n) = a.0.get("nice") {
        clock::prioritise(n.parse().unwrap_or_else(|_| die(2, "--nice: not an integer")));
    }
    match v.first().map(String::as_str) {
        Some("sender") => dgram_io::sender(&a),
        Some("receiver") => dgram_io::receiver(&a),
        _ => die(2, "usage: ccbench-dgram sender|receiver --key value ... (see crates/emu/src/dgram_io.rs)"),
    }
}
