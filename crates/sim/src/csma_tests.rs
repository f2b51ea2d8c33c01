//! Event-loop tests of a shared half-duplex channel (netmodel::csma, ns-3 CSMA semantics):
//! TCP's ACKs take airtime from its data, and two directions share one rate.

use super::workload_tests::u64s;
use super::*;

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;
const RATE: u64 = 10_000_000;
/// One-way delay of the r <-> b link.
const DELAY: u64 = MS;
/// Ethernet framing on the r <-> b link (14 header + 4 FCS, as ns-3's CSMA device adds).
const OVERHEAD: u64 = 18;

/// a -> r -> b with 1-Gbit/s, 0.1-ms access links and r <-> b at 10 Mbit/s, 1 ms (100-packet
/// queues), on one shared channel when `half`; `flows` as JSON objects.
fn exp(duration_s: u64, half: bool, flows: &str) -> Experiment {
    let ch = if half { r#""channel": "r-b", "# } else { "" };
    let json = format!(
        r#"{{"duration_ns": {d}, "seed": 1, "record_packets": false,
        "links": [
          {{"id": 0, "name": "a->r", "src": "a", "dst": "r", "rate_bps": 1000000000, "delay_ns": 100000,
            "queue": {{"kind": "droptail", "packets": 1000, "bytes": null}}}},
          {{"id": 1, "name": "r->b", "src": "r", "dst": "b", "rate_bps": {RATE}, "delay_ns": {DELAY}, {ch}
            "overhead_bytes": {OVERHEAD}, "queue": {{"kind": "droptail", "packets": 100, "bytes": null}}}},
          {{"id": 2, "name": "b->r", "src": "b", "dst": "r", "rate_bps": {RATE}, "delay_ns": {DELAY}, {ch}
            "overhead_bytes": {OVERHEAD}, "queue": {{"kind": "droptail", "packets": 100, "bytes": null}}}},
          {{"id": 3, "name": "r->a", "src": "r", "dst": "a", "rate_bps": 1000000000, "delay_ns": 100000,
            "queue": {{"kind": "droptail", "packets": 1000, "bytes": null}}}}],
        "bottleneck_links": [1],
        "flows": [{flows}]}}"#,
        d = duration_s * SEC
    );
    crate::experiment::from_json(&json).unwrap()
}

/// Payload bytes acknowledged per flow.
fn acked(e: &Experiment) -> Vec<u64> {
    let out = Sim::new(e).unwrap().finish();
    u64s(out.table("flowstats").unwrap(), "app_bytes").to_vec()
}

/// How long one frame of `ip_bytes` holds the channel: its transmission, then its
/// propagation (the channel is idle only when the last bit has arrived).
fn hold_ns(ip_bytes: u64) -> f64 {
    ((ip_bytes + OVERHEAD) * 8) as f64 / RATE as f64 * 1e9 + DELAY as f64
}

const A_TO_B: &str = r#"{"id": 0, "scheme": "cubic", "params": {}, "start_ns": 0, "path": [0, 1], "rev_path": [2, 3]}"#;
const B_TO_A: &str = r#"{"id": 1, "scheme": "cubic", "params": {}, "start_ns": 0, "path": [2, 3], "rev_path": [0, 1]}"#;

#[test]
fn acks_take_airtime_from_a_single_flow_on_a_half_duplex_link() {
    let secs = 20;
    let full = acked(&exp(secs, false, A_TO_B))[0] as f64 / secs as f64;
    let half = acked(&exp(secs, true, A_TO_B))[0] as f64 / secs as f64;
    let mss = 1448.0;
    // Full duplex: the data direction alone is the bottleneck, 1448 payload bytes per
    // 1518-byte frame: 10 Mbit/s × 1448 / 1518 = 1.192 MB/s, less slow start and CUBIC's
    // sawtooth over a 100-packet queue (≥ 1 BDP, so the link stays busy).
    let wire = RATE as f64 / 8.0 * mss / (1500.0 + OVERHEAD as f64);
    assert!(full > 0.95 * wire && full <= wire, "full duplex {full:.0} B/s of {wire:.0}");
    // Half duplex: every data frame (1500 B) holds the channel 1.2144 + 1 ms and every ACK
    // (52 B, more with SACK blocks) at least 0.056 + 1 ms, one at a time. Linux ACKs at least
    // every second full segment (delayed ACK; quick ACKs and SACKs only add ACKs), so two
    // segments cost at least 2 data holds + 1 ACK hold of channel time:
    let bound = 2.0 * mss / ((2.0 * hold_ns(1500) + hold_ns(52)) / 1e9);
    assert!(half < bound, "half duplex {half:.0} B/s above the channel's bound {bound:.0}");
    // That bound is 0.443 of the wire rate; ns-3's polling backoff leaves the channel idle
    // for part of a backoff window (≤ 1 ms, on average well under half of it) after each
    // frame, so the flow reaches a good share of the bound but not all of it.
    assert!((bound / wire - 0.443).abs() < 0.001, "{}", bound / wire);
    assert!(half > 0.75 * bound, "half duplex {half:.0} B/s, bound {bound:.0}");
    assert!(half < 0.5 * full, "half {half:.0} vs full {full:.0}");
}

#[test]
fn two_directions_share_one_rate_on_a_half_duplex_link() {
    let secs = 20;
    let both = format!("{A_TO_B}, {B_TO_A}");
    let full: u64 = acked(&exp(secs, false, &both)).iter().sum();
    let half = acked(&exp(secs, true, &both));
    let total: u64 = half.iter().sum();
    // Each data frame holds the shared channel for at least 2.2144 ms whichever way it goes,
    // so both directions together deliver at most secs / 2.2144 ms frames of 1448 B — and the
    // ACKs of each flow cost airtime on top. Full duplex carries both at the wire rate each.
    let frames = (secs * SEC) as f64 / hold_ns(1500);
    assert!((total as f64) < frames * 1448.0, "{total} B > {} B", frames * 1448.0);
    assert!((total as f64) < 0.5 * full as f64, "half {total} vs full {full}");
    // Neither direction starves: contention is symmetric.
    assert!(half.iter().all(|&b| b as f64 > 0.25 * total as f64), "{half:?}");
}
