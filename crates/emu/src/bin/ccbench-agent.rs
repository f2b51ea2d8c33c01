//! ccbench-agent: one end of one flow, run inside a host's network namespace (`emu::agent`
//! has the command lines and the roles).

use emu::agent::{self, arrivals, die, probe, sock_diag, tcp, udp, Args};
use emu::clock;

fn main() {
    clock::die_with_parent(libc::SIGTERM);
    let v: Vec<String> = std::env::args().skip(1).collect();
    if v.first().map(String::as_str) == Some("launch") {
        agent::launch(&v[1..]);
    }
    let a = Args::parse(v.get(1..).unwrap_or(&[]));
    if let Some(n) = a.0.get("nice") {
        clock::prioritise(n.parse().unwrap_or_else(|_| die(2, "--nice: not an integer")));
    }
    match v.first().map(String::as_str) {
        Some("server") if a.0.get("multi").map(String::as_str) == Some("1") => tcp::multi_server(&a),
        Some("server") => tcp::server(&a),
        Some("client") => tcp::client(&a),
        Some("monitor") => sock_diag::monitor(&a),
        Some("udp-server") => udp::udp_server(&a),
        Some("arrivals-client") => arrivals::arrivals_client(&a),
        Some("udp-client") => udp::udp_client(&a),
        Some("probe-server") => probe::probe_server(&a),
        Some("probe-client") => probe::probe_client(&a),
        _ => die(2, "usage: ccbench-agent server|client|monitor --key value ... | launch --at T [--nice N] -- PROGRAM ..."),
    }
}
