//! Unit tests of the endpoint's ECN (RFC 3168 / DCTCP receiver), non-SACK NewReno recovery
//! (RFC 6582 as Linux's `tcp_is_reno` path), RTT granularity and the delayed-ACK timeout.

use super::*;
use crate::cc;
use std::collections::VecDeque;

const MSS: u64 = 1448;
const MS: u64 = 1_000_000;

fn b(i: u64) -> u64 {
    i * MSS
}

fn established(cfg: &TcpConfig, scheme: &str, rtt: u64, ece: bool) -> TcpSender {
    let mut s = TcpSender::new(cfg, cc::make(scheme, &serde_json::Value::Null).unwrap(), None);
    s.open(0);
    let syn = s.poll_transmit(0).unwrap();
    assert!(syn.syn && !syn.ect);
    s.on_ack(rtt, &AckSeg { syn: true, rwnd: 1 << 30, ece, ..Default::default() });
    s
}

fn send_all(s: &mut TcpSender, now: u64) -> Vec<DataSeg> {
    std::iter::from_fn(|| s.poll_transmit(now)).collect()
}

fn ack(a: u64, ece: bool) -> AckSeg {
    AckSeg { ack: a, rwnd: 1 << 30, ece, ..Default::default() }
}

fn data(i: u64, ect: bool, ce: bool, cwr: bool) -> DataSeg {
    DataSeg { seq: b(i), len: MSS as u32, ect, ce, cwr, ..Default::default() }
}

// ---------------------------------------------------------------------------------- sender ECN

#[test]
fn ecn_negotiation_ect_on_new_data_only() {
    let cfg = TcpConfig { ecn: true, tlp: false, ..Default::default() };
    // Peer without ECN (no ECE on the SYN-ACK): nothing is ECT.
    let mut s = established(&cfg, "reno", 10 * MS, false);
    assert!(!s.sock().ecn_ok);
    assert!(send_all(&mut s, 10 * MS).iter().all(|d| !d.ect));
    // Negotiated: new data is ECT(0).
    let mut s = established(&cfg, "reno", 10 * MS, true);
    assert!(s.sock().ecn_ok);
    let segs = send_all(&mut s, 10 * MS);
    assert_eq!(segs.len(), 10);
    assert!(segs.iter().all(|d| d.ect && !d.cwr));
    // Not requested by this end: the SYN-ACK's ECE alone does not enable it.
    let s = established(&TcpConfig::default(), "reno", 10 * MS, true);
    assert!(!s.sock().ecn_ok);
}

#[test]
fn ece_enters_cwr_once_per_window_and_sets_cwr_flag() {
    let cfg = TcpConfig { ecn: true, tlp: false, delayed_ack: false, ..Default::default() };
    let mut s = established(&cfg, "reno", 10 * MS, true);
    let t0 = 10 * MS;
    send_all(&mut s, t0); // segments 0..9, snd_nxt = b(10)
    // ACK of segment 0 with ECE: CWR, ssthresh = cwnd/2 (Reno) taken when the ACK arrives.
    s.on_ack(t0 + 10 * MS, &ack(b(1), true));
    let sk = s.sock();
    assert_eq!(sk.ca_state, CaState::Cwr);
    assert_eq!(sk.ssthresh, 5);
    assert_eq!(sk.delivered_ce, 1);
    // The next new segment carries CWR, later ones do not.
    let out = send_all(&mut s, t0 + 10 * MS);
    assert!(!out.is_empty() && out[0].cwr && out[0].ect);
    assert!(out[1..].iter().all(|d| !d.cwr));
    // More ECE ACKs inside the same window: no second reduction.
    for i in 2..=9 {
        s.on_ack(t0 + 10 * MS + i, &ack(b(i), true));
        assert_eq!(s.sock().ssthresh, 5, "ACK {i}");
        assert_eq!(s.sock().ca_state, CaState::Cwr);
        send_all(&mut s, t0 + 10 * MS + i);
    }
    assert_eq!(s.sock().delivered_ce, 9);
    // The window sent before the reduction (high_seq = b(10)) is acked, plus one more
    // segment: CWR ends (Linux holds CWR until something above high_seq is acked), cwnd = ssthresh.
    s.on_ack(t0 + 20 * MS, &ack(b(10), false));
    assert_eq!(s.sock().ca_state, CaState::Cwr);
    s.on_ack(t0 + 20 * MS + 1, &ack(b(11), false));
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert_eq!(s.sock().cwnd, 5);
    assert_eq!(s.sock().delivered_ce, 9);
    // A new window: the next ECE reduces again (5 → 2).
    send_all(&mut s, t0 + 20 * MS + 1);
    s.on_ack(t0 + 30 * MS, &ack(b(12), true));
    assert_eq!(s.sock().ca_state, CaState::Cwr);
    assert_eq!(s.sock().ssthresh, 2);
}

#[test]
fn ece_ignored_without_negotiation_and_in_ack_event_gets_ca_ack_ece() {
    // Not negotiated: ECE on ACKs is ignored (tcp_ecn_rcv_ecn_echo requires TCP_ECN_OK).
    let cfg = TcpConfig { tlp: false, ..Default::default() };
    let mut s = established(&cfg, "reno", 10 * MS, false);
    send_all(&mut s, 10 * MS);
    s.on_ack(20 * MS, &ack(b(1), true));
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert_eq!(s.sock().delivered_ce, 0);
    // DCTCP: in_ack_event runs before clean_rtx_queue counts the cumulatively ACKed packets
    // (Linux order), so the first window (next_seq = 0 at init) closes on this ACK with 0
    // delivered: alpha = 1024 − 64 = 960; the ECE then gives ssthresh = 10 − (10·960 >> 11) = 6.
    let cfg = TcpConfig { ecn: true, tlp: false, ..Default::default() };
    let mut s = established(&cfg, "dctcp", 10 * MS, true);
    assert_eq!(s.cc_name(), "dctcp");
    let segs = send_all(&mut s, 10 * MS);
    assert!(segs.iter().all(|d| d.ect));
    s.on_ack(20 * MS, &ack(b(10), true));
    let mut v = vec![];
    s.cc_sample(&mut v);
    assert_eq!(v, vec![("alpha", 960.0 / 1024.0)]);
    assert_eq!(s.sock().ssthresh, 6);
    assert_eq!(s.sock().delivered_ce, 10);
    // Without ECN the same scheme is dctcp-reno.
    let s = established(&TcpConfig { tlp: false, ..Default::default() }, "dctcp", 10 * MS, false);
    assert_eq!(s.cc_name(), "dctcp-reno");
}

// ---------------------------------------------------------------------------------- receiver ECN

fn acks(r: &mut TcpReceiver, now: u64) -> Vec<AckSeg> {
    std::iter::from_fn(|| r.poll_ack(now)).collect()
}

#[test]
fn receiver_echoes_ece_until_cwr() {
    let cfg = TcpConfig { ecn: true, ..Default::default() };
    let mut r = TcpReceiver::new(&cfg);
    // Quick-ACK phase over: 20 unmarked segments in pairs.
    for i in 0..20 {
        r.on_data(i * MS, &data(i, true, false, false));
        acks(&mut r, i * MS);
    }
    // A CE segment arriving alone: ACKed at once (quick-ACK) with ECE.
    r.on_data(30 * MS, &data(20, true, true, false));
    let a = acks(&mut r, 30 * MS);
    assert_eq!(a.len(), 1);
    assert!(a[0].ece && a[0].ack == b(21));
    // Unmarked segments keep ECE set until the sender's CWR arrives.
    for i in 21..25 {
        r.on_data(31 * MS + i, &data(i, true, false, false));
        for x in acks(&mut r, 31 * MS + i) {
            assert!(x.ece);
        }
    }
    r.on_data(40 * MS, &data(25, true, false, true)); // CWR: ACKed at once, no ECE any more
    let a = acks(&mut r, 40 * MS);
    assert_eq!(a.len(), 1);
    assert!(!a[0].ece && a[0].ack == b(26));
    // Without ECN the receiver never sets ECE.
    let mut r = TcpReceiver::new(&TcpConfig::default());
    r.on_data(0, &data(0, true, true, false));
    assert!(acks(&mut r, 0).iter().all(|a| !a.ece));
}

#[test]
fn dctcp_receiver_acks_every_ce_change_with_the_prior_state() {
    let cfg = TcpConfig { ecn: true, ecn_precise_ack: true, ..Default::default() };
    let mut r = TcpReceiver::new(&cfg);
    for i in 0..20 {
        r.on_data(i * MS, &data(i, true, false, false));
        acks(&mut r, i * MS);
    }
    // One unmarked segment: ACK delayed (timer armed).
    r.on_data(30 * MS, &data(20, true, false, false));
    assert!(acks(&mut r, 30 * MS).is_empty());
    assert!(r.next_timer().is_some());
    // Then a CE segment: the delayed ACK goes out first for b(21) with ECE=0, then b(22) with ECE=1.
    r.on_data(30 * MS + 10, &data(21, true, true, false));
    let a = acks(&mut r, 30 * MS + 10);
    assert_eq!(a.iter().map(|x| (x.ack, x.ece)).collect::<Vec<_>>(), vec![(b(21), false), (b(22), true)]);
    // Still CE: normal delayed-ACK rules (one ACK per two segments), all with ECE; CWR from
    // the sender does not clear ECE while packets are still CE (the state follows the marks).
    r.on_data(31 * MS, &data(22, true, true, true));
    r.on_data(31 * MS + 1, &data(23, true, true, false));
    let a = acks(&mut r, 31 * MS + 1);
    assert!(!a.is_empty() && a.iter().all(|x| x.ece));
    // Back to unmarked: immediate ACK with ECE=0.
    r.on_data(32 * MS, &data(24, true, false, false));
    let a = acks(&mut r, 32 * MS);
    assert_eq!(a.last().map(|x| (x.ack, x.ece)), Some((b(25), false)));
}

// ---------------------------------------------------------------------------------- NewReno

/// A lossless-except-`lose` pipe with a fixed one-way delay between a sender and a receiver
/// (both non-SACK). Returns the sender, every (time, data segment) sent and whether an RTO fired.
fn pipe_run(scheme: &str, lose: &[u64], until: u64) -> (TcpSender, Vec<(u64, DataSeg)>, bool, TcpReceiver) {
    let owd = 10 * MS;
    let cfg = TcpConfig { sack: false, init_cwnd: 10, ..Default::default() };
    let cfg = super::flow_tcp_config(&cfg, None, None, MSS as u32, cc::make(scheme, &serde_json::Value::Null).unwrap().as_ref());
    let mut s = TcpSender::new(&cfg, cc::make(scheme, &serde_json::Value::Null).unwrap(), Some(b(200)));
    let mut r = TcpReceiver::new(&cfg);
    let mut to_r: VecDeque<(u64, DataSeg)> = VecDeque::new();
    let mut to_s: VecDeque<(u64, AckSeg)> = VecDeque::new();
    let mut sent = vec![];
    let mut lost_once: Vec<u64> = lose.iter().map(|&i| b(i)).collect();
    let mut rto = false;
    let mut now = 0;
    s.open(0);
    loop {
        while let Some(d) = s.poll_transmit(now) {
            sent.push((now, d));
            if let Some(k) = lost_once.iter().position(|&q| q == d.seq && !d.syn) {
                lost_once.remove(k);
                continue;
            }
            to_r.push_back((now + owd, d));
        }
        while let Some(a) = r.poll_ack(now) {
            to_s.push_back((now + owd, a));
        }
        let cands = [to_r.front().map(|x| x.0), to_s.front().map(|x| x.0), s.next_timer(), r.next_timer()];
        let Some(t) = cands.iter().flatten().copied().min() else { break };
        if t > until {
            break;
        }
        now = t;
        if to_r.front().is_some_and(|x| x.0 == t) {
            let (_, d) = to_r.pop_front().unwrap();
            r.on_data(t, &d);
        } else if to_s.front().is_some_and(|x| x.0 == t) {
            let (_, a) = to_s.pop_front().unwrap();
            s.on_ack(t, &a);
        } else if s.next_timer() == Some(t) {
            if s.sample(t).ca_state != CaState::Loss {
                let before = s.rto_ns();
                s.on_timer(t);
                rto |= s.sample(t).ca_state == CaState::Loss && s.rto_ns() > before;
            } else {
                s.on_timer(t);
            }
        } else {
            r.on_timer(t);
        }
    }
    (s, sent, rto, r)
}

#[test]
fn newreno_is_reno_without_sack() {
    let cfg = super::flow_tcp_config(&TcpConfig::default(), None, None, 1448, cc::make("newreno", &serde_json::Value::Null).unwrap().as_ref());
    assert!(!cfg.sack);
    let cfg = super::flow_tcp_config(&TcpConfig::default(), None, None, 1448, cc::make("reno", &serde_json::Value::Null).unwrap().as_ref());
    assert!(cfg.sack);
}

#[test]
fn newreno_single_loss_fast_retransmit_after_three_dupacks() {
    let (s, sent, rto, r) = pipe_run("newreno", &[30], 5_000 * MS);
    assert!(!rto, "recovered by RTO");
    assert_eq!(r.rcv_nxt(), b(200));
    assert_eq!(s.sample(0).bytes_acked, b(200));
    let rtx: Vec<_> = sent.iter().filter(|(_, d)| d.retrans).collect();
    assert_eq!(rtx.len(), 1);
    assert_eq!(rtx[0].1.seq, b(30));
    // Fast retransmit one RTT (+ a few segments' worth of dupACKs) after the loss, not an RTO later.
    let t_loss = sent.iter().find(|(_, d)| d.seq == b(30)).unwrap().0;
    assert!(rtx[0].0 - t_loss < 25 * MS, "retransmitted {} ms after the loss", (rtx[0].0 - t_loss) / MS);
    assert_eq!(s.sample(0).ca_state, CaState::Open);
    assert_eq!(s.sample(0).lost, 1);
}

#[test]
fn newreno_multiple_losses_one_retransmission_per_partial_ack() {
    // Three holes in one window: 30, 33, 37.
    let (s, sent, rto, r) = pipe_run("newreno", &[30, 33, 37], 5_000 * MS);
    assert!(!rto, "recovered by RTO");
    assert_eq!(r.rcv_nxt(), b(200));
    let rtx: Vec<_> = sent.iter().filter(|(_, d)| d.retrans).map(|(t, d)| (*t, d.seq / MSS)).collect();
    assert_eq!(rtx.iter().map(|x| x.1).collect::<Vec<_>>(), vec![30, 33, 37]);
    // RFC 6582: each later hole is retransmitted on the partial ACK of the previous
    // retransmission, one RTT (20 ms) apart.
    for w in rtx.windows(2) {
        let dt = w[1].0 - w[0].0;
        assert!((19 * MS..=22 * MS).contains(&dt), "partial-ACK retransmission after {dt} ns");
    }
    assert_eq!(s.sample(0).lost, 3);
}

#[test]
fn newreno_holds_recovery_until_ack_above_high_seq() {
    // Unit check of the non-SACK path on hand-built dupACKs (1 ns apart: TSO deferral, which
    // would hold the second limited-transmit segment for the next ACK, is off).
    let cfg = TcpConfig { sack: false, tlp: false, delayed_ack: false, tso_defer: false, ..Default::default() };
    let mut s = established(&cfg, "reno", 100 * MS, false);
    let t = 100 * MS;
    assert_eq!(send_all(&mut s, t).len(), 10); // 0..9
    // Segment 0 lost: dupACKs for 0.
    s.on_ack(t + 100 * MS, &ack(0, false));
    assert_eq!(s.sock().ca_state, CaState::Disorder);
    assert_eq!(s.sock().sacked_out, 1);
    // Limited transmit: one new segment per dupACK.
    let o = send_all(&mut s, t + 100 * MS);
    assert_eq!(o.iter().map(|d| (d.seq / MSS, d.retrans)).collect::<Vec<_>>(), vec![(10, false)]);
    s.on_ack(t + 100 * MS + 1, &ack(0, false));
    assert_eq!(send_all(&mut s, t + 100 * MS + 1).len(), 1);
    // Third dupACK: head marked lost, Recovery, fast retransmit of segment 0 first.
    s.on_ack(t + 100 * MS + 2, &ack(0, false));
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    assert_eq!(s.sock().ssthresh, 5);
    let o = send_all(&mut s, t + 100 * MS + 2);
    assert_eq!((o[0].seq, o[0].retrans), (0, true));
    let high_seq = b(12);
    // Partial ACK up to segment 5 (segment 5 also lost): segment 5 marked lost and resent at once.
    s.on_ack(t + 200 * MS, &ack(b(5), false));
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    let o = send_all(&mut s, t + 200 * MS);
    assert_eq!((o[0].seq, o[0].retrans), (b(5), true));
    // ACK exactly at high_seq: Recovery is held (RFC 6582 / Linux tcp_try_undo_recovery for Reno).
    s.on_ack(t + 300 * MS, &ack(high_seq, false));
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    send_all(&mut s, t + 300 * MS);
    // Above high_seq: Open, cwnd = ssthresh.
    s.on_ack(t + 301 * MS, &ack(high_seq + MSS, false));
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert_eq!(s.sock().cwnd, 5);
}

// ---------------------------------------------------------------------------------- RTT granularity

#[test]
fn rtt_granularity_floors_samples_to_ticks() {
    let cfg = TcpConfig { rtt_granularity_ns: MS, tlp: false, ..Default::default() };
    let s = TcpSender::new(&cfg, cc::make("reno", &serde_json::Value::Null).unwrap(), None);
    assert_eq!(s.quantise_rtt_us(10_700), 10_000);
    assert_eq!(s.quantise_rtt_us(10_000), 10_000);
    assert_eq!(s.quantise_rtt_us(999), 1_000); // at least one tick
    assert_eq!(s.quantise_rtt_us(-1), -1); // "no sample" stays
    let s4 = TcpSender::new(&TcpConfig { rtt_granularity_ns: 4 * MS, ..cfg.clone() }, cc::make("reno", &serde_json::Value::Null).unwrap(), None);
    assert_eq!(s4.quantise_rtt_us(10_700), 8_000);
    // End to end: handshake RTT 10.7 ms → srtt 10 ms and min_rtt 10 ms; data RTT 12.9 ms → 12 ms.
    let mut s = established(&cfg, "reno", 10_700_000, false);
    assert_eq!(s.sock().srtt_us, 10_000);
    assert_eq!(s.sock().min_rtt_us, 10_000);
    send_all(&mut s, 10_700_000);
    s.on_ack(10_700_000 + 12_900_000, &ack(b(1), false));
    assert_eq!(s.sample(0).srtt_us, 10_250.0); // 7/8·10 + 1/8·12 ms
    // Default 0: µs samples.
    let s = established(&TcpConfig::default(), "reno", 10_700_000, false);
    assert_eq!(s.sock().srtt_us, 10_700);
}

#[test]
fn delayed_ack_timeout_is_configurable() {
    for (timeout, expect) in [(40 * MS, 40 * MS), (100 * MS, 100 * MS)] {
        let cfg = TcpConfig { delayed_ack_timeout_ns: timeout, ..Default::default() };
        let mut r = TcpReceiver::new(&cfg);
        // Back-to-back pairs exhaust the quick-ACK credit; ato settles at the minimum.
        for i in 0..40 {
            r.on_data(i * MS, &data(i, false, false, false));
            acks(&mut r, i * MS);
        }
        let t = 41 * MS;
        r.on_data(t, &data(40, false, false, false)); // isolated segment: delayed
        assert!(acks(&mut r, t).is_empty());
        assert_eq!(r.next_timer(), Some(t + expect), "timeout {timeout}");
    }
}
