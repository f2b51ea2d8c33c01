//! Unit tests of the sender on hand-built ACK sequences.

use super::*;
use crate::tcp::{AckSeg, CaState, DataSeg};
use crate::cc::{self, reno::Reno, LostSkb};
use std::sync::{Arc, Mutex};

pub(super) const MSS: u64 = 1448;
pub(super) const MS: u64 = 1_000_000;

pub(super) fn b(i: u64) -> u64 {
    i * MSS
}

fn cfg_iw(iw: u32) -> TcpConfig {
    TcpConfig { init_cwnd: iw, tlp: false, ..Default::default() }
}

/// Sender after a handshake with the given RTT (SYN at 0, SYN-ACK at `rtt`).
pub(super) fn established(cfg: &TcpConfig, cc: Box<dyn CongestionControl>, rtt: u64) -> TcpSender {
    let mut s = TcpSender::new(cfg, cc, None);
    s.open(0);
    let syn = s.poll_transmit(0).unwrap();
    assert!(syn.syn && syn.len == 0 && syn.ip_bytes() == 60);
    assert!(s.poll_transmit(0).is_none());
    s.on_ack(rtt, &AckSeg { syn: true, tsecr_ns: 0, rwnd: 1 << 30, ..Default::default() });
    s
}

pub(super) fn send_all(s: &mut TcpSender, now: u64) -> Vec<DataSeg> {
    let mut v = Vec::new();
    while let Some(d) = s.poll_transmit(now) {
        v.push(d);
    }
    v
}

pub(super) fn ack(a: u64, sacks: &[(u64, u64)], tsecr: u64) -> AckSeg {
    let mut x = AckSeg { ack: a, tsecr_ns: tsecr, rwnd: 1 << 30, ..Default::default() };
    for (k, s) in sacks.iter().enumerate() {
        x.sack[k] = *s;
    }
    x.n_sack = sacks.len() as u8;
    x
}

/// A CC that behaves like Reno but records every rate sample (cong_control returns false so
/// the core keeps PRR / cong_avoid).
struct Recorder {
    inner: Reno,
    log: Arc<Mutex<Vec<RateSample>>>,
}
impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        self.inner.ssthresh(sk)
    }
    fn cong_avoid(&mut self, sk: &mut Sock, acked: u32) {
        self.inner.cong_avoid(sk, acked)
    }
    fn has_cong_control(&self) -> bool {
        true
    }
    fn cong_control(&mut self, _sk: &mut Sock, rs: &RateSample) -> bool {
        self.log.lock().unwrap().push(*rs);
        false
    }
}

#[test]
fn handshake_gives_first_rtt_sample_and_rto() {
    let s = established(&TcpConfig::default(), Box::new(Reno::new()), 10 * MS);
    // tcp_rtt_estimator first sample: srtt = 10 ms, mdev = 2·m = 20 ms, rttvar = max(20, 200) ms.
    assert_eq!(s.srtt8, 8 * 10_000);
    assert_eq!(s.rttvar, 200_000);
    assert_eq!(s.rto_ns(), 210 * MS); // RTO = srtt + rttvar ≥ srtt + rto_min
    assert_eq!(s.sock().min_rtt_us, 10_000);
    assert_eq!(s.sock().cwnd, 10);
    let f = s.sample(10 * MS);
    assert_eq!(f.ssthresh, u32::MAX);
    assert_eq!(f.srtt_us, 10_000.0);
}

#[test]
fn rtt_fields_are_unset_until_the_handshake_gives_a_sample() {
    let mut s = TcpSender::new(&TcpConfig::default(), Box::new(Reno::new()), None);
    s.open(0);
    let _syn = s.poll_transmit(0).unwrap();
    let f = s.sample(5 * MS);
    // null in the flows table (NaN is the records layer's null), as tcp_info's before a sample
    assert!(f.srtt_us.is_nan() && f.rttvar_us.is_nan() && f.min_rtt_us.is_nan());
    s.on_ack(10 * MS, &AckSeg { syn: true, tsecr_ns: 0, rwnd: 1 << 30, ..Default::default() });
    let f = s.sample(10 * MS);
    assert_eq!((f.srtt_us, f.rttvar_us, f.min_rtt_us), (10_000.0, 5_000.0, 10_000.0));
}

#[test]
fn rtt_estimator_follows_linux() {
    let mut s = established(&TcpConfig::default(), Box::new(Reno::new()), 100 * MS);
    // First sample 100 ms: srtt 100, mdev 200 (×4 scale: 200 ms), rttvar 200 ms ⇒ RTO 300 ms.
    assert_eq!(s.rto_ns(), 300 * MS);
    // Rising sample 140 ms: err = 40 ms ⇒ srtt = 105 ms; mdev4 += 40 − 50 = −10 ⇒ 190 ms.
    s.rtt_estimator(140_000);
    assert_eq!(s.srtt8 >> 3, 105_000);
    assert_eq!(s.mdev4, 190_000);
    // Falling sample 25 ms: err = −80 ms ⇒ srtt = 95 ms; |err| − mdev/4 = 80 − 47.5 = 32.5 > 0 ⇒ /8
    // = 4.0625 ms ⇒ mdev4 = 194.0625 ms (damped).
    s.rtt_estimator(25_000);
    assert_eq!(s.srtt8 >> 3, 95_000);
    assert_eq!(s.mdev4, 194_062);
    // rttvar stays floored at rto_min-based mdev_max (200 ms) within the RTT.
    s.set_rto();
    assert_eq!(s.rttvar, 200_000);
    assert_eq!(s.rto_ns(), 295 * MS);
}

#[test]
fn rto_fires_at_rto_and_backs_off_exponentially() {
    let mut s = established(&cfg_iw(10), Box::new(Reno::new()), 10 * MS);
    let t0 = 10 * MS;
    let segs = send_all(&mut s, t0);
    assert_eq!(segs.len(), 10);
    assert_eq!(s.next_timer(), Some(t0 + 210 * MS));
    // Nothing comes back: RTO at 210 ms retransmits the head, cwnd 1, Loss.
    let t1 = t0 + 210 * MS;
    s.on_timer(t1);
    assert_eq!(s.sock().ca_state, CaState::Loss);
    assert_eq!(s.sock().cwnd, 1);
    assert_eq!(s.sock().ssthresh, 5);
    assert_eq!(s.sock().lost_out, 10);
    let r = send_all(&mut s, t1);
    assert_eq!(r.len(), 1);
    assert!(r[0].retrans && r[0].seq == 0);
    assert_eq!(s.rto_ns(), 420 * MS);
    assert_eq!(s.next_timer(), Some(t1 + 420 * MS));
    // Second expiry: backoff doubles again, ssthresh not reduced again in the same episode.
    let t2 = t1 + 420 * MS;
    s.on_timer(t2);
    let r = send_all(&mut s, t2);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].seq, 0);
    assert_eq!(s.rto_ns(), 840 * MS);
    assert_eq!(s.sock().ssthresh, 5);
    assert_eq!(s.sample(t2).retrans, 2);
    // The ACK of the retransmission gives an RTT sample from TSecr and resets the backoff.
    s.on_ack(t2 + 10 * MS, &ack(b(1), &[], t2));
    assert_eq!(s.backoff, 0);
    assert!(s.rto_ns() < 420 * MS);
}

#[test]
fn sack_scoreboard_rack_marks_loss_after_three_sacks() {
    let mut s = established(&cfg_iw(10), Box::new(Reno::new()), 10 * MS);
    let t0 = 10 * MS;
    send_all(&mut s, t0);
    // ACK of segment 0, SACK of segments 2..5 (3 packets): hole at 1.
    s.on_ack(t0 + 10 * MS, &ack(b(1), &[(b(2), b(5))], t0));
    let sk = s.sock();
    assert_eq!((sk.packets_out, sk.sacked_out, sk.lost_out, sk.retrans_out), (9, 3, 1, 0));
    assert_eq!(sk.ca_state, CaState::Recovery);
    assert_eq!(sk.ssthresh, 5);
    assert_eq!(sk.delivered, 4);
    assert_eq!(s.rtx[0].flags & LOST, LOST);
    assert_eq!(sk.packets_in_flight(), 5);
    // Fast retransmit of segment 1 first.
    let r = send_all(&mut s, t0 + 10 * MS);
    assert!(r[0].retrans && r[0].seq == b(1));
    assert_eq!(s.sock().retrans_out, 1);
}

#[test]
fn rack_reorder_window_defers_marking_with_one_sack() {
    let mut s = established(&cfg_iw(10), Box::new(Reno::new()), 10 * MS);
    let t0 = 10 * MS;
    send_all(&mut s, t0);
    let t1 = t0 + 10 * MS;
    s.on_ack(t1, &ack(b(1), &[(b(2), b(3))], t0));
    // One SACK (< reordering 3): reo_wnd = min_rtt/4 = 2.5 ms; Disorder, not lost yet.
    assert_eq!(s.sock().ca_state, CaState::Disorder);
    assert_eq!(s.sock().lost_out, 0);
    // Reorder timer: remaining = rack.rtt + reo_wnd − elapsed = 2.5 ms ⇒ ceil 3 ms + 2 ms.
    assert_eq!(s.next_timer(), Some(t1 + 5 * MS));
    // New data may still go out in Disorder: slow start grew cwnd to 12 (2 delivered) and
    // in_flight is 8 (a SACKed packet left the network) ⇒ 4 new segments.
    let r = send_all(&mut s, t1);
    assert_eq!(r.len(), 4);
    assert!(r.iter().all(|d| !d.retrans));
    s.on_timer(t1 + 5 * MS);
    assert_eq!(s.sock().lost_out, 1);
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    let r = send_all(&mut s, t1 + 5 * MS);
    assert!(r[0].retrans && r[0].seq == b(1));
}

#[test]
fn prr_proportional_reduction_amounts() {
    // Undo off: the delayed original below would otherwise revert the reduction (undo_tests.rs).
    let mut s = established(&TcpConfig { undo: false, ..cfg_iw(20) }, Box::new(Reno::new()), 10 * MS);
    let t0 = 10 * MS;
    assert_eq!(send_all(&mut s, t0).len(), 20);
    // ACK seg 0, SACK 2..5: seg 1 lost. ssthresh = 10, prior_cwnd = 20, in_flight = 19−3−1 = 15.
    // delta = 10 − 15 < 0 ⇒ sndcnt = ceil(10·4/20) − 0 = 2 ⇒ cwnd = 15 + 2 = 17.
    s.on_ack(t0 + 10 * MS, &ack(b(1), &[(b(2), b(5))], t0));
    assert_eq!(s.sock().ssthresh, 10);
    assert_eq!(s.sock().prior_cwnd, 20);
    assert_eq!(s.sock().cwnd, 17);
    let r = send_all(&mut s, t0 + 10 * MS);
    assert_eq!(r.len(), 2); // the fast retransmit and one new segment
    assert!(r[0].retrans && !r[1].retrans && r[1].seq == b(20));
    assert_eq!(s.prr_out, 2);
    // Another SACK: prr_delivered = 5; in_flight = 20 − 4 − 1 + 1 = 16; delta < 0 ⇒
    // sndcnt = ceil(10·5/20) − 2 = 1 ⇒ cwnd = 17.
    s.on_ack(t0 + 11 * MS, &ack(b(1), &[(b(2), b(6))], t0));
    assert_eq!(s.prr_delivered, 5);
    assert_eq!(s.sock().cwnd, 17);
    assert_eq!(send_all(&mut s, t0 + 11 * MS).len(), 1);
    // The original seg 1 was merely delayed: it arrives 2 ms after the retransmission left
    // (RACK ignores this ambiguous sample, < min_rtt), ACK up to seg 6 ⇒ in_flight falls to
    // 16 (segments 6..21): delta = 10 − 16 still < 0: prr_delivered = 6 ⇒ ceil(60/20) − 3 = 0.
    s.on_ack(t0 + 12 * MS, &ack(b(6), &[], t0));
    assert_eq!(s.sock().ca_state, CaState::Recovery); // high_seq = b(20) not yet reached
    assert_eq!(s.prr_delivered, 6);
    assert_eq!(s.sock().packets_in_flight(), 16);
    assert_eq!(s.sock().cwnd, 16);
    // Packet-conservation part once in_flight ≤ ssthresh: ACK up to seg 12 (6 newly acked),
    // in_flight = 8 + ... ⇒ delta ≥ 0: sndcnt = min(delta, max(prr_delivered − prr_out, 6) + 1).
    s.on_ack(t0 + 21 * MS, &ack(b(12), &[], t0));
    let inflight = s.sock().packets_in_flight() as i64;
    let delta = 10 - inflight;
    assert!(delta >= 0);
    let expect = (12i64 - 3).max(6) + 1;
    assert_eq!(s.sock().cwnd as i64, inflight + expect.min(delta));
    // Recovery ends when high_seq is ACKed: cwnd = ssthresh.
    let all = s.sock().snd_nxt;
    s.on_ack(t0 + 30 * MS, &ack(all, &[], t0 + 11 * MS));
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert!(s.sock().cwnd >= 10 && s.sock().cwnd <= 11, "cwnd {}", s.sock().cwnd);
}

#[test]
fn rate_sample_on_hand_built_acks() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let cc = Box::new(Recorder { inner: Reno::new(), log: log.clone() });
    let mut s = established(&cfg_iw(10), cc, 10 * MS);
    let t0 = 10 * MS;
    send_all(&mut s, t0);
    // ACK of 2 packets 10 ms later: delivered 2 over max(send 0, ack 10 ms) = 10 ms.
    s.on_ack(t0 + 10 * MS, &ack(b(2), &[], t0));
    let rs = log.lock().unwrap()[0];
    assert_eq!(rs.delivered, 2);
    assert_eq!(rs.prior_delivered, 0);
    assert_eq!(rs.interval_us, 10_000);
    assert_eq!(rs.snd_interval_us, 0);
    assert_eq!(rs.rcv_interval_us, 10_000);
    assert_eq!(rs.rtt_us, 10_000);
    assert_eq!(rs.acked_sacked, 2);
    assert_eq!(rs.prior_in_flight, 10);
    assert_eq!(rs.losses, 0);
    // the first flight: the application's first write found the write queue empty
    // (tcp_rate_check_app_limited in tcp_sendmsg_locked)
    assert!(rs.is_app_limited);
    let f = s.sample(t0 + 10 * MS);
    assert!((f.delivery_rate_bps - 2.0 * 1448.0 * 8.0 / 0.010).abs() < 1e-6);
    // New data sent now carries delivered = 2 and delivered_mstamp = 20 ms.
    let newsegs = send_all(&mut s, t0 + 10 * MS);
    assert!(!newsegs.is_empty());
    // ACK of 2 more at 21 ms plus a SACK of 2: delivered = 6 − 0 over 11 ms.
    s.on_ack(t0 + 11 * MS, &ack(b(4), &[(b(5), b(7))], t0));
    let rs = log.lock().unwrap()[1];
    assert_eq!(rs.acked_sacked, 4);
    assert_eq!(rs.delivered, 6);
    assert_eq!(rs.interval_us, 11_000);
    // ACK of a packet sent at 20 ms, at 30 ms: prior_delivered = 2, prior_mstamp = 20 ms;
    // send phase = 20 − 10 (first_tx of that window) = 10 ms, ack phase = 10 ms.
    let last_new = newsegs.last().unwrap().end();
    s.on_ack(t0 + 20 * MS, &ack(last_new, &[], t0 + 10 * MS));
    let rs = *log.lock().unwrap().last().unwrap();
    assert_eq!(rs.prior_delivered, 2);
    assert_eq!(rs.snd_interval_us, 10_000);
    assert_eq!(rs.rcv_interval_us, 10_000);
    assert_eq!(rs.delivered as u64, s.sock().delivered - 2);
    // An implausibly short interval (< min_rtt) is invalid.
    assert!(log.lock().unwrap().iter().all(|r| r.interval_us == -1 || r.interval_us >= 10_000));
}

#[test]
fn pacing_releases_no_faster_than_rate() {
    let log = Arc::new(Mutex::new(Vec::new()));
    // Recorder has cong_control ⇒ internal pacing (Needed). Set 11.584 Mbit/s = 1 ms per packet.
    let cc = Box::new(Recorder { inner: Reno::new(), log });
    let mut s = established(&cfg_iw(30), cc, 10 * MS);
    s.sk.pacing_rate_bps = 1448.0 * 8.0 * 1000.0;
    let t0 = 10 * MS;
    // The first 10 segments are not delayed; then one per ms.
    let burst = send_all(&mut s, t0);
    assert_eq!(burst.len(), 10);
    assert_eq!(s.next_timer(), Some(t0 + MS));
    let mut now = t0;
    for k in 1..=5u64 {
        now = s.next_timer().unwrap();
        assert_eq!(now, t0 + k * MS);
        s.on_timer(now);
        let r = send_all(&mut s, now);
        assert_eq!(r.len(), 1, "one packet per release at {}", now);
    }
    assert_eq!(now, t0 + 5 * MS);
}

#[test]
fn tlp_probes_tail_loss_before_rto() {
    let cfg = TcpConfig { init_cwnd: 10, ..Default::default() };
    let mut s = TcpSender::new(&cfg, Box::new(Reno::new()), Some(b(4)));
    s.open(0);
    s.poll_transmit(0);
    s.on_ack(10 * MS, &AckSeg { syn: true, rwnd: 1 << 30, ..Default::default() });
    let t0 = 10 * MS;
    assert_eq!(send_all(&mut s, t0).len(), 4);
    // ACK of the first 3; the last one is lost.
    s.on_ack(t0 + 10 * MS, &ack(b(3), &[], t0));
    // PTO = 2·srtt + 200 ms (one packet out) = 220 ms, capped by the RTO (210 ms).
    let pto = s.next_timer().unwrap();
    assert!(matches!(s.timer, Some((_, TimerKind::LossProbe))));
    assert_eq!(pto, t0 + 10 * MS + 210 * MS);
    s.on_timer(pto);
    let r = send_all(&mut s, pto);
    assert_eq!(r.len(), 1);
    assert!(r[0].retrans && r[0].seq == b(3));
    // Its ACK completes the flow without an RTO.
    s.on_ack(pto + 10 * MS, &ack(b(4), &[], pto));
    assert_eq!(s.completed_at(), Some(pto + 10 * MS));
    assert_eq!(s.sample(0).retrans, 1);
}

#[test]
fn registry_builds_senders() {
    for name in ["reno", "cubic"] {
        let cc = cc::make(name, &serde_json::Value::Null).unwrap();
        let s = established(&TcpConfig::default(), cc, MS);
        assert_eq!(s.cc_name(), name);
    }
}

/// A cong_control CC that sets its own pacing rate in init (as BBR does).
struct InitPacer;
impl CongestionControl for InitPacer {
    fn name(&self) -> &'static str {
        "init-pacer"
    }
    fn init(&mut self, sk: &mut Sock) {
        sk.pacing_rate_bps = 1234.0;
    }
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        sk.ssthresh
    }
    fn has_cong_control(&self) -> bool {
        true
    }
}

#[test]
fn cong_control_cc_keeps_its_init_pacing_rate_and_sees_delivered_mstamp_and_edt() {
    // The core must not overwrite the pacing rate a cong_control CC set in init.
    let mut s = established(&cfg_iw(10), Box::new(InitPacer), 10 * MS);
    assert_eq!(s.sock().pacing_rate_bps, 1234.0);
    // A non-cong_control CC gets Linux's default rate (200 % · cwnd·mss/srtt in slow start).
    let r = established(&cfg_iw(10), Box::new(Reno::new()), 10 * MS);
    assert!((r.sock().pacing_rate_bps - 2.0 * 10.0 * 1448.0 * 8.0 / 0.010).abs() < 1e-3);
    // tp->delivered_mstamp: the send time when starting with nothing in flight, then each
    // delivering ACK's time; tcp_wstamp_ns mirrors the sender's EDT.
    s.sk.pacing_rate_bps = 1448.0 * 8.0 * 1000.0; // 1 ms per packet
    let t0 = 10 * MS;
    let sent = send_all(&mut s, t0);
    assert_eq!(sent.len(), 10);
    assert_eq!(s.sock().delivered_mstamp_us, t0 / 1000);
    assert_eq!(s.sock().wstamp_ns, s.wstamp_ns);
    assert!(s.sock().wstamp_ns >= t0);
    s.on_ack(t0 + 10 * MS, &ack(b(2), &[], t0));
    assert_eq!(s.sock().delivered_mstamp_us, (t0 + 10 * MS) / 1000);
    // A pure window update (nothing delivered) leaves it unchanged.
    s.on_ack(t0 + 11 * MS, &AckSeg { ack: b(2), tsecr_ns: t0, rwnd: 1 << 29, ..Default::default() });
    assert_eq!(s.sock().delivered_mstamp_us, (t0 + 10 * MS) / 1000);
}

/// Records `skb_marked_lost` snapshots and rate samples; Reno otherwise.
struct LossRecorder {
    inner: Reno,
    lost: Arc<Mutex<Vec<(LostSkb, u64)>>>,
    rs: Arc<Mutex<Vec<RateSample>>>,
}
impl CongestionControl for LossRecorder {
    fn name(&self) -> &'static str {
        "loss-recorder"
    }
    fn ssthresh(&mut self, sk: &mut Sock) -> u32 {
        self.inner.ssthresh(sk)
    }
    fn has_cong_control(&self) -> bool {
        true
    }
    fn cong_control(&mut self, _sk: &mut Sock, rs: &RateSample) -> bool {
        self.rs.lock().unwrap().push(*rs);
        false
    }
    fn skb_marked_lost(&mut self, sk: &mut Sock, skb: &LostSkb) {
        self.lost.lock().unwrap().push((*skb, sk.lost));
    }
}

#[test]
fn skb_marked_lost_hook_and_per_flight_loss_fields() {
    let lost = Arc::new(Mutex::new(Vec::new()));
    let rsl = Arc::new(Mutex::new(Vec::new()));
    let cc = Box::new(LossRecorder { inner: Reno::new(), lost: lost.clone(), rs: rsl.clone() });
    let mut s = established(&cfg_iw(10), cc, 10 * MS);
    s.sk.pacing_rate_bps = 1e12; // effectively unpaced
    let t0 = 10 * MS;
    let sent = send_all(&mut s, t0);
    assert_eq!(sent.len(), 10);
    // tx.in_flight counts the packet itself: the k-th packet saw k in flight.
    assert_eq!(s.rtx[1].tx_in_flight, 2);
    // ACK of 0, SACK of 2..5: RACK marks 1 lost; the hook sees tp->lost already counting it.
    s.on_ack(t0 + 10 * MS, &ack(b(1), &[(b(2), b(5))], t0));
    let l = lost.lock().unwrap().clone();
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].0.tx_in_flight, 2);
    assert_eq!(l[0].0.tx_lost, 0);
    assert!(l[0].0.tx_valid && l[0].0.is_app_limited); // the first flight (see above)
    assert_eq!(l[0].1, 1);
    // The rate sample (anchored on packet 4, sent with 5 in flight and tp->lost = 0) carries
    // tx_in_flight = 5 and lost = tp->lost − tx.lost = 1.
    let r = *rsl.lock().unwrap().last().unwrap();
    assert_eq!((r.tx_in_flight, r.prior_lost, r.lost), (5, 0, 1));
}

fn cfg_fack() -> TcpConfig {
    TcpConfig { init_cwnd: 10, tlp: false, rack: false, ..Default::default() }
}

#[test]
fn fack_waits_for_more_than_reordering_sacked_packets_beyond_the_hole() {
    // Two SACKed packets beyond the hole at 1: fackets_out = 3 = reordering ⇒ nothing lost,
    // no recovery, and (unlike RACK) no reorder timer.
    let mut s = established(&cfg_fack(), Box::new(Reno::new()), 10 * MS);
    let t0 = 10 * MS;
    send_all(&mut s, t0);
    let t1 = t0 + 10 * MS;
    s.on_ack(t1, &ack(b(1), &[(b(2), b(4))], t0));
    assert_eq!((s.sock().lost_out, s.sock().ca_state), (0, CaState::Disorder));
    assert_eq!(s.next_timer(), Some(t1 + s.rto_ns()), "only the RTO is armed");
    // A third SACKed packet: fackets_out 4 > 3 ⇒ the head is lost, fast retransmit.
    s.on_ack(t1 + MS, &ack(b(1), &[(b(2), b(5))], t0));
    assert_eq!((s.sock().lost_out, s.sock().ca_state), (1, CaState::Recovery));
    assert_eq!(s.rtx[0].flags & LOST, LOST);
    let r = send_all(&mut s, t1 + MS);
    assert!(r[0].retrans && r[0].seq == b(1));
}

#[test]
fn fack_counts_distance_not_sacked_packets() {
    // One SACKed packet three beyond the head (segment 4; holes 1–3): FACK marks the head at
    // once (fackets_out 4 − reordering 3 = 1); RACK marks nothing until its reorder timer.
    let t0 = 10 * MS;
    let t1 = t0 + 10 * MS;
    let mut f = established(&cfg_fack(), Box::new(Reno::new()), 10 * MS);
    send_all(&mut f, t0);
    f.on_ack(t1, &ack(b(1), &[(b(4), b(5))], t0));
    assert_eq!(f.sock().lost_out, 1);
    assert_eq!([f.rtx[0].flags & LOST, f.rtx[1].flags & LOST, f.rtx[2].flags & LOST], [LOST, 0, 0]);
    let mut r = established(&cfg_iw(10), Box::new(Reno::new()), 10 * MS);
    send_all(&mut r, t0);
    r.on_ack(t1, &ack(b(1), &[(b(4), b(5))], t0));
    assert_eq!(r.sock().lost_out, 0);
}

#[test]
fn fack_marks_a_retransmission_lost_when_later_data_is_sacked() {
    let mut s = established(&cfg_fack(), Box::new(Reno::new()), 10 * MS);
    let t0 = 10 * MS;
    send_all(&mut s, t0);
    let t1 = t0 + 10 * MS;
    s.on_ack(t1, &ack(b(1), &[(b(2), b(5))], t0));
    let r = send_all(&mut s, t1);
    assert!(r[0].retrans && r[0].seq == b(1));
    assert_eq!(s.sock().retrans_out, 1);
    // More SACKs of the first flight: PRR releases new data after the retransmission.
    s.on_ack(t1 + MS, &ack(b(1), &[(b(2), b(10))], t0));
    assert_eq!(s.sock().retrans_out, 1, "the originals' SACKs do not condemn the retransmission");
    let r = send_all(&mut s, t1 + MS);
    let new_after: Vec<_> = r.iter().filter(|d| !d.retrans).map(|d| d.seq).collect();
    assert!(!new_after.is_empty(), "PRR lets new data follow the retransmission");
    // SACK of new data sent after the retransmission: the retransmission is lost again.
    let first_new = new_after[0];
    s.on_ack(t1 + 10 * MS, &ack(b(1), &[(b(2), first_new + MSS)], t1));
    assert_eq!(s.sock().retrans_out, 0);
    assert_eq!(s.rtx[0].flags & LOST, LOST);
    let again = send_all(&mut s, t1 + 10 * MS);
    assert!(again[0].retrans && again[0].seq == b(1), "retransmitted a second time");
}

#[test]
fn rate_halving_steps_cwnd_down_every_second_ack_and_caps_it_at_in_flight_plus_one() {
    let cfg = TcpConfig { init_cwnd: 10, tlp: false, prr: false, ..Default::default() };
    let mut s = established(&cfg, Box::new(Reno::new()), 10 * MS);
    let t0 = 10 * MS;
    send_all(&mut s, t0);
    let t1 = t0 + 10 * MS;
    // Hole at 1, three SACKed: Recovery, ssthresh 5. In flight 9 − 3 − 1 = 5. First ACK of the
    // episode: snd_cwnd_cnt 0 → 1, no step yet; cwnd = min(10, in_flight + 1) = 6.
    s.on_ack(t1, &ack(b(1), &[(b(2), b(5))], t0));
    assert_eq!((s.sock().ca_state, s.sock().ssthresh, s.sock().cwnd), (CaState::Recovery, 5, 6));
    let r = send_all(&mut s, t1);
    assert_eq!(r.len(), 1, "only the fast retransmission fits");
    assert!(r[0].retrans && r[0].seq == b(1));
    // Second ACK (one more SACKed): the step, cwnd 6 → 5 (> min_cwnd = ssthresh/2 = 2);
    // in flight 9 − 4 − 1 + 1 = 5 caps it at 6 anyway.
    s.on_ack(t1 + MS, &ack(b(1), &[(b(2), b(6))], t0));
    assert_eq!(s.sock().cwnd, 5);
    // Third: no step (odd ACK), in flight 4 ⇒ cwnd = min(5, 5) = 5; one new segment goes.
    s.on_ack(t1 + 2 * MS, &ack(b(1), &[(b(2), b(7))], t0));
    assert_eq!(s.sock().cwnd, 5);
    assert_eq!(send_all(&mut s, t1 + 2 * MS).len(), 1);
}

#[test]
fn after_a_burst_of_losses_rate_halving_sends_one_packet_where_prr_rebuilds_to_ssthresh() {
    // 20 sent, 1–10 lost, 11–19 SACKed: nothing left in flight. Rate-halving caps cwnd at
    // in_flight + 1 = 1 (the weakness RFC 6937 names); PRR's slow-start reduction bound sends
    // as many as were delivered (1 ACKed + 9 SACKed), up to ssthresh (10): 10.
    let t0 = 10 * MS;
    let t1 = t0 + 10 * MS;
    let mut out = Vec::new();
    for prr in [false, true] {
        let cfg = TcpConfig { init_cwnd: 20, tlp: false, prr, ..Default::default() };
        let mut s = established(&cfg, Box::new(Reno::new()), 10 * MS);
        assert_eq!(send_all(&mut s, t0).len(), 20);
        s.on_ack(t1, &ack(b(1), &[(b(11), b(20))], t0));
        assert_eq!((s.sock().lost_out, s.sock().packets_in_flight(), s.sock().ssthresh), (10, 0, 10));
        let r = send_all(&mut s, t1);
        assert!(r.iter().all(|d| d.retrans));
        out.push((s.sock().cwnd, r.len()));
    }
    assert_eq!(out, vec![(1, 1), (10, 10)]);
}

#[test]
fn rate_halving_stops_at_the_ccs_min_cwnd() {
    // CUBIC had no min_cwnd hook in 2.6.36: the floor is ssthresh; Reno's is ssthresh/2.
    let mut sk = Sock::new(1448, 10);
    sk.ssthresh = 40;
    assert_eq!(cc::make("cubic", &serde_json::json!({})).unwrap().min_cwnd(&sk), 40);
    assert_eq!(cc::make("reno", &serde_json::json!({})).unwrap().min_cwnd(&sk), 20);
    assert_eq!(cc::make("vegas", &serde_json::json!({})).unwrap().min_cwnd(&sk), 20);
    assert_eq!(cc::make("htcp", &serde_json::json!({})).unwrap().min_cwnd(&sk), 40);
}

#[test]
fn early_retransmit_recovers_a_three_packet_window_after_a_delay() {
    // Three packets out, the first lost, two SACKed, and the receiver's window allows nothing
    // new: FACK alone waits for the RTO; early retransmit (3.5+) marks the head lost after
    // max(srtt/4, 2 ms) = 2.5 ms.
    let t0 = 10 * MS;
    let t1 = t0 + 10 * MS;
    let mut dupack = ack(0, &[(b(1), b(3))], t0);
    dupack.rwnd = (3 * MSS) as _;
    let mut at = Vec::new();
    for er in [true, false] {
        let cfg = TcpConfig { init_cwnd: 3, tlp: false, rack: false, early_retransmit: er, ..Default::default() };
        let mut s = established(&cfg, Box::new(Reno::new()), 10 * MS);
        assert_eq!(send_all(&mut s, t0).len(), 3);
        s.on_ack(t1, &dupack);
        assert_eq!((s.sock().lost_out, s.sock().sacked_out), (0, 2));
        let when = s.next_timer().unwrap();
        s.on_timer(when);
        let r = send_all(&mut s, when);
        assert!(r[0].retrans && r[0].seq == b(0));
        at.push((when - t1, s.sock().ca_state));
    }
    assert_eq!(at[0], (2_500_000, CaState::Recovery));
    assert_eq!(at[1].1, CaState::Loss, "without early retransmit the RTO fires");
    assert!(at[1].0 >= 200 * MS);
}

/// `tcp: {min-tso-segs}` (`net.ipv4.tcp_min_tso_segs`): at a low pacing rate `tcp_tso_autosize`
/// gives this many segments per skb, so the send buffer's accounting pays one skb head per
/// that many segments — the initial window of 10 leaves as 5 skbs by default, 10 with 1, 4
/// with 3.
#[test]
fn min_tso_segs_sets_the_segments_per_accounted_skb() {
    let skbs = |min_tso_segs: u32| {
        let cfg = TcpConfig { min_tso_segs, ..cfg_iw(10) };
        let mut s = established(&cfg, Box::new(Reno::default()), 100 * MS);
        let sent = send_all(&mut s, 100 * MS);
        assert_eq!(sent.len(), 10);
        s.sent_skbs
    };
    assert_eq!((skbs(1), skbs(2), skbs(3)), (10, 5, 4));
}
