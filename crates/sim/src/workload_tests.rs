//! Event-loop tests of the workloads: short-flow lifecycle (lazy creation, completion,
//! freeing, the `conns` table), application-limited and on/off TCP flows, UDP CBR.

use super::*;
use crate::output::{Col, Table, NULL_I64};
use super::events::{Events, RADIX_FROM, SEQ_MAX};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

/// a -> r -> b at `rate` on r->b (10 ms each way there, 1 ms on the access links), queue
/// 100 packets; one flow a -> b given as JSON fields.
fn exp(duration_s: u64, rate_bps: u64, flow: &str) -> Experiment {
    let json = format!(
        r#"{{"duration_ns": {d}, "seed": 1, "record_packets": false,
        "links": [
          {{"id": 0, "name": "a->r", "src": "a", "dst": "r", "rate_bps": 1000000000, "delay_ns": 1000000,
            "queue": {{"kind": "droptail", "packets": 1000, "bytes": null}}}},
          {{"id": 1, "name": "r->b", "src": "r", "dst": "b", "rate_bps": {rate_bps}, "delay_ns": 10000000,
            "queue": {{"kind": "droptail", "packets": 100, "bytes": null}}}},
          {{"id": 2, "name": "b->r", "src": "b", "dst": "r", "rate_bps": {rate_bps}, "delay_ns": 10000000,
            "queue": {{"kind": "droptail", "packets": 100, "bytes": null}}}},
          {{"id": 3, "name": "r->a", "src": "r", "dst": "a", "rate_bps": 1000000000, "delay_ns": 1000000,
            "queue": {{"kind": "droptail", "packets": 1000, "bytes": null}}}}],
        "bottleneck_links": [1],
        "flows": [{{"id": 0, "params": {{}}, "start_ns": 0, "path": [0, 1], "rev_path": [2, 3], {flow}}}]}}"#,
        d = duration_s * SEC
    );
    crate::experiment::from_json(&json).unwrap()
}

pub(super) fn u64s<'a>(t: &'a Table, c: &str) -> &'a [u64] {
    match t.get(c) {
        Some(Col::U64(v)) => v,
        _ => panic!("{c}"),
    }
}

fn i64s<'a>(t: &'a Table, c: &str) -> &'a [i64] {
    match t.get(c) {
        Some(Col::I64(v)) => v,
        _ => panic!("{c}"),
    }
}

#[test]
fn short_flows_are_created_on_arrival_and_freed_on_completion() {
    // 20 flows/s of 20 kB at 10 Mbit/s (load 0.32) for 10 s.
    let e = exp(10, 10_000_000, r#""scheme": "cubic", "arrivals": {"rate_per_s": 20.0, "size": {"kind": "fixed", "bytes": 20000}}"#);
    let mut sim = Sim::new(&e).unwrap();
    sim.run_until(5 * SEC);
    let open = sim.conns.iter().skip(1).filter(|c| c.is_some()).count();
    let arrived = sim.conn_log.len();
    assert!((60..=140).contains(&arrived), "{arrived} arrivals in 5 s at 20/s");
    // Each flow lasts ~ 3 RTTs (44 ms): only a handful are open at any instant.
    assert!(open <= 10, "{open} connections still allocated of {arrived}");
    let out = sim.finish();
    let conns = out.table("conns").unwrap();
    let n = conns.rows();
    assert!((150..=250).contains(&n), "{n} arrivals in 10 s at 20/s");
    let start = i64s(conns, "start_ns");
    let done = i64s(conns, "completed_ns");
    let sizes = u64s(conns, "size_bytes");
    let acked = u64s(conns, "acked_bytes");
    assert!(start.windows(2).all(|w| w[0] <= w[1]));
    let mut fcts = vec![];
    for i in 0..n {
        if done[i] == NULL_I64 {
            assert!(start[i] as u64 > 9 * SEC, "flow {i} started at {} and never completed", start[i]);
            continue;
        }
        assert_eq!(acked[i], sizes[i]);
        fcts.push((done[i] - start[i]) as u64);
    }
    // Base RTT 22 ms. Handshake + 14 packets in slow start from IW 10 (two data rounds):
    // 3 RTT plus at most the 14 packets' serialisation at 10 Mbit/s (16.8 ms).
    let min = *fcts.iter().min().unwrap();
    assert!(min >= 66 * MS && min < 66 * MS + 17 * MS, "min FCT {min}");
    // The template's flowstats: app bytes = all bytes acknowledged by its connections.
    let fs = out.table("flowstats").unwrap();
    assert_eq!(u64s(fs, "app_bytes")[0], acked.iter().sum::<u64>());
    // Conservation over all connections of the group.
    let st = &out.stats;
    let (sent, deliv, drop) = (u64s(fs, "sent_pkts")[0], u64s(fs, "delivered_pkts")[0], u64s(fs, "dropped_pkts")[0]);
    assert_eq!(sent, deliv + drop + st.data_in_flight_at_end);
}

#[test]
fn arrivals_are_deterministic_per_seed() {
    let f = r#""scheme": "reno", "arrivals": {"rate_per_s": 50.0, "size": {"kind": "pareto", "mean_bytes": 30000.0, "shape": 1.5}}"#;
    let a = Sim::new(&exp(2, 10_000_000, f)).unwrap().finish();
    let b = Sim::new(&exp(2, 10_000_000, f)).unwrap().finish();
    let (ta, tb) = (a.table("conns").unwrap(), b.table("conns").unwrap());
    assert_eq!(u64s(ta, "size_bytes"), u64s(tb, "size_bytes"));
    assert_eq!(i64s(ta, "completed_ns"), i64s(tb, "completed_ns"));
}

#[test]
fn app_limited_tcp_flow_delivers_its_rate() {
    // 2 Mbit/s of payload on a 10 Mbit/s path for 10 s.
    let e = exp(10, 10_000_000, r#""scheme": "cubic", "app_rate_bps": 2000000"#);
    let out = Sim::new(&e).unwrap().finish();
    let acked = u64s(out.table("flowstats").unwrap(), "app_bytes")[0];
    let expect = 2_000_000 / 8 * 10;
    // The last ~RTT of writes is still in flight at the end.
    assert!(acked <= expect && acked as f64 > expect as f64 * 0.995, "{acked} vs {expect}");
}

#[test]
fn onoff_tcp_flow_is_silent_while_off() {
    let e = exp(10, 10_000_000, r#""scheme": "cubic", "onoff": {"on_ns": 1000000000, "off_ns": 2000000000}"#);
    let out = Sim::new(&e).unwrap().finish();
    let iv = out.table("intervals").unwrap();
    let bins = i64s(iv, "bin");
    let sent = u64s(iv, "sent_bytes");
    // 10 ms bins; on in [0,1), [3,4), [6,7), [9,10) s. After an on period only retransmissions
    // of the data in flight at its end go out (loss recovery, an RTO): a few packets, and
    // nothing from 500 ms after the end.
    let total: u64 = sent.iter().sum();
    let delivered: u64 = u64s(iv, "delivered_bytes").iter().sum();
    let mut off = 0;
    for (b, s) in bins.iter().zip(sent) {
        let t_in_period = (*b as u64 * 10) % 3000; // ms
        if *s > 0 && t_in_period >= 1000 {
            assert!(t_in_period < 1500, "bytes sent at {} ms (off period)", *b * 10);
            off += s;
        }
    }
    assert!(off * 100 < total, "{off} of {total} bytes sent while off");
    // 4 on periods at ≤ 10 Mbit/s deliver at most 5 MB (plus what is in flight at an on
    // period's end: ≤ 101 queued + 2 BDP); slow start from IW after each idle period keeps
    // it well above half of that.
    assert!(delivered > 2_500_000 && delivered < 5_000_000 + 4 * 200_000, "{delivered}");
}

#[test]
fn udp_cbr_sends_at_its_rate_and_loses_the_excess() {
    for (rate, lossless) in [(5_000_000u64, true), (15_000_000, false)] {
        let e = exp(5, 10_000_000, &format!(r#""scheme": "udp", "app_rate_bps": {rate}"#));
        let out = Sim::new(&e).unwrap().finish();
        let fs = out.table("flowstats").unwrap();
        let (sent, deliv, dropped) = (u64s(fs, "sent_bytes")[0], u64s(fs, "delivered_bytes")[0], u64s(fs, "dropped_bytes")[0]);
        // Exact: one 1500-byte datagram every 1500·8/rate.
        assert_eq!(sent, (rate / 8 * 5).div_ceil(1500) * 1500);
        if lossless {
            assert_eq!(dropped, 0);
        } else {
            // Delivered ≈ capacity over 5 s (less the first 10 ms propagation); the rest dropped.
            let cap = 10_000_000 / 8 * 5;
            assert!((deliv as f64 / cap as f64 - 1.0).abs() < 0.01, "{deliv} vs {cap}");
            // Sent = delivered + dropped + what is queued or propagating at the end.
            let in_net = sent - deliv - dropped;
            // Queue 100 + 1 serialising + 10 ms propagating at 10 Mbit/s (8.3) + 1 ms on the
            // access link at 15 Mbit/s (1.25): at most 111 datagrams.
            assert!(in_net <= 111 * 1500, "{sent} {deliv} {dropped}");
            // Loss = the excess (rate − capacity)·T less the queue it filled first.
            let excess = sent - cap - 101 * 1500;
            assert!((dropped as f64 / excess as f64 - 1.0).abs() < 0.01, "{dropped} vs {excess}");
        }
    }
}

#[test]
fn event_sequence_renumbering_keeps_the_run_unchanged() {
    // Start the sequence numbers just below their 32-bit limit so the run renumbers the
    // pending events: it must produce the same tables as a plain run.
    let e = exp(3, 10_000_000, r#""scheme": "cubic", "arrivals": {"rate_per_s": 20.0, "size": {"kind": "fixed", "bytes": 20000}}"#);
    let plain = Sim::new(&e).unwrap().finish();
    let mut sim = Sim::new(&e).unwrap();
    // Renumber the initial entries right away, then leave 1000 numbers before the next.
    sim.events.seq = SEQ_MAX;
    sim.events.renumber();
    sim.events.seq = SEQ_MAX - 1000;
    sim.run_until(SEC);
    assert!(sim.events.seq < SEQ_MAX - 1000, "renumbered during the run");
    let wrapped = sim.finish();
    assert_eq!(plain.stats.events, wrapped.stats.events);
    for t in &plain.tables {
        let w = wrapped.table(t.name).unwrap();
        assert_eq!(format!("{:?}", t), format!("{:?}", w), "table {}", t.name);
    }
}

#[test]
fn the_radix_heap_gives_the_same_run() {
    // Runs with many targets use the radix heap (events.rs): moved to one mid-setup, a run
    // with short-flow arrivals must give the same tables as with the binary heap.
    let e = exp(3, 10_000_000, r#""scheme": "cubic", "arrivals": {"rate_per_s": 40.0, "size": {"kind": "fixed", "bytes": 30000}}"#);
    let plain = Sim::new(&e).unwrap().finish();
    let mut sim = Sim::new(&e).unwrap();
    let mut radix = Events::for_targets(RADIX_FROM);
    while let Some((t, k, i)) = sim.events.peek() {
        sim.events.pop();
        radix.push(t, k, i);
    }
    sim.events = radix;
    // In steps, as the Python side drains records: each step ends on a peeked event.
    let mut t = 0;
    while !sim.finished() {
        t += 77_777_777;
        sim.run_until(t);
    }
    let other = sim.finish();
    assert_eq!(plain.stats.events, other.stats.events);
    for t in &plain.tables {
        let w = other.table(t.name).unwrap();
        assert_eq!(format!("{:?}", t), format!("{:?}", w), "table {}", t.name);
    }
}
