//! The datagram congestion-control interface and the registry of datagram schemes.
//!
//! The transport calls an algorithm at four moments: a packet leaves ([`DgramCc::on_send`]),
//! a packet is acknowledged ([`DgramCc::on_ack`], once per newly acknowledged packet, in the
//! order the receiver got them), a packet is declared lost ([`DgramCc::on_loss`]) and a timer
//! the algorithm asked for fires ([`DgramCc::on_timer`]). After each call the transport reads
//! [`DgramCc::control`]: a pacing rate, a window, or both, and sends while both allow.
//!
//! Units: times are nanoseconds on the sender's clock unless named otherwise (`recv_ns` is the
//! receiver's clock; in the simulator both clocks are one, on the kernel backend both are
//! CLOCK_MONOTONIC of one host), sizes are bytes of datagram payload plus the transport's
//! header (what the network carries above IP+UDP), rates are bits per second of those bytes.

pub use netmodel::params::{ParamInfo, Params};

/// One acknowledged packet, as the sender learns it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Acked {
    /// Sender clock when the acknowledgement arrived.
    pub now_ns: u64,
    /// The packet's sequence number (0, 1, 2, … in send order; retransmissions are not made:
    /// a lost datagram stays lost, as in the schemes' reference implementations).
    pub seq: u64,
    /// Bytes the packet carried (header + payload).
    pub bytes: u32,
    /// Sender clock when the packet left.
    pub sent_ns: u64,
    /// Receiver clock when it arrived (one-way delay = `recv_ns - sent_ns` up to the clocks'
    /// offset, which is zero in the simulator and on one host).
    pub recv_ns: u64,
    /// Round-trip sample: `now_ns - sent_ns` minus the receiver's hold time for this packet
    /// (non-zero when the receiver acknowledges per interval).
    pub rtt_ns: u64,
    /// Bytes acknowledged so far on this flow, this packet included.
    pub delivered_bytes: u64,
    /// Bytes sent and neither acknowledged nor declared lost, after this acknowledgement.
    pub inflight_bytes: u64,
}

/// One packet the transport declares lost (a gap of `reorder` packets acknowledged after it,
/// or no acknowledgement within the loss timeout).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lost {
    pub now_ns: u64,
    pub seq: u64,
    pub bytes: u32,
    pub sent_ns: u64,
    /// Bytes in flight after removing this packet.
    pub inflight_bytes: u64,
}

/// What the algorithm lets the transport send. Either or both may be set; `None` means no
/// limit of that kind (an algorithm must set at least one).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Control {
    /// Pacing rate in bits per second: packets leave at most this fast, evenly spaced.
    pub rate_bps: Option<f64>,
    /// Window in bytes: at most this many bytes in flight.
    pub cwnd_bytes: Option<u64>,
}

/// How the receiver acknowledges, chosen by the algorithm (its reference implementation's
/// rule). An acknowledgement leaves when either count is reached.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckPolicy {
    /// Acknowledge after this many packets (1 = every packet).
    pub every_packets: u32,
    /// Or after this long since the first unacknowledged arrival (None = no timer).
    pub every_ns: Option<u64>,
}

impl Default for AckPolicy {
    fn default() -> Self {
        AckPolicy { every_packets: 1, every_ns: None }
    }
}

/// A datagram congestion-control algorithm (the sender's half).
pub trait DgramCc: Send {
    /// The registered name.
    fn name(&self) -> &'static str;
    /// The flow starts at `now_ns` (before its first packet).
    fn on_start(&mut self, _now_ns: u64) {}
    /// A packet leaves: `seq`, its size, and bytes in flight including it.
    fn on_send(&mut self, _now_ns: u64, _seq: u64, _bytes: u32, _inflight_bytes: u64) {}
    /// A packet was acknowledged.
    fn on_ack(&mut self, a: &Acked);
    /// A packet was declared lost.
    fn on_loss(&mut self, l: &Lost);
    /// Extra values the receiver's half attached to an acknowledgement (Sprout's forecast);
    /// called after the `on_ack`s of that acknowledgement.
    fn on_feedback(&mut self, _now_ns: u64, _values: &[f64]) {}
    /// When the algorithm next wants `on_timer` (absolute sender time), if at all.
    fn next_timer_ns(&self) -> Option<u64> {
        None
    }
    /// The timer asked for by `next_timer_ns` fired.
    fn on_timer(&mut self, _now_ns: u64) {}
    /// The current rate and/or window.
    fn control(&self) -> Control;
    /// The earliest sender time the next packet may leave, for a scheme that keeps its own
    /// send schedule (tao: genericCC spaces each packet by the intersend time in force when it
    /// leaves); `None`, the default, leaves the spacing to `control().rate_bps`.
    fn send_at_ns(&self) -> Option<u64> {
        None
    }
    /// How this scheme's receiver acknowledges.
    fn ack_policy(&self) -> AckPolicy {
        AckPolicy::default()
    }
    /// The receiver's half, for schemes whose receiver computes feedback (Sprout's forecast).
    fn receiver(&self) -> Option<Box<dyn DgramReceiverCc>> {
        None
    }
    /// The algorithm's own variables, recorded as `cc_<name>` columns of the flows table
    /// (e.g. `("rate_mbps", 12.5)`); the same names on every call.
    fn vars(&self, _out: &mut Vec<(&'static str, f64)>) {}
}

/// The receiver's half of a scheme whose receiver computes feedback.
pub trait DgramReceiverCc: Send {
    /// A packet arrived (receiver clock).
    fn on_packet(&mut self, now_ns: u64, seq: u64, bytes: u32, sent_ns: u64);
    /// Values to attach to the acknowledgement leaving now (at most 16).
    fn feedback(&mut self, now_ns: u64) -> Vec<f64>;
    /// When the receiver next wants to send an acknowledgement of its own (Sprout's receiver
    /// reports every tick even when nothing arrived), if at all.
    fn next_report_ns(&self) -> Option<u64> {
        None
    }
}

/// One registered datagram scheme.
pub struct SchemeInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// Where it comes from: paper, RFC, reference implementation (repository and file).
    pub source: &'static str,
    pub params: &'static [ParamInfo],
    /// Build it from its parameters; `seed` feeds any randomness (PCC's randomized trials).
    pub make: fn(&Params, u64) -> Result<Box<dyn DgramCc>, String>,
}

/// Declares the algorithm files and collects their `SCHEMES` tables.
macro_rules! registry {
    ($($m:ident),* $(,)?) => {
        $(mod $m;)*
        static MODULES: &[&[SchemeInfo]] = &[$($m::SCHEMES),*];
    };
}

registry!(fixed, aimd_dgram, ledbat, pcc_vivace, pcc_allegro, pcc_udt, quic_cubic, scream, verus, sprout, remy, indigo);

mod base_delay;
mod pcc_mi;
mod proto;
mod tf_checkpoint;

#[cfg(test)]
mod testlink;

/// All registered datagram schemes.
pub fn schemes() -> impl Iterator<Item = &'static SchemeInfo> {
    MODULES.iter().flat_map(|m| m.iter())
}

/// A required string parameter naming a file the scheme reads (tao's rule table, indigo's
/// checkpoint); `what` tells the user what to give when it is missing.
fn file_param(p: &Params, scheme: &str, name: &str, what: &str) -> Result<String, String> {
    match p.obj.and_then(|o| o.get(name)) {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(format!("parameter \"{name}\" of scheme \"{scheme}\" must be a string (a file path), got {v}")),
        None => Err(format!("scheme \"{scheme}\" needs parameter \"{name}\": {what}")),
    }
}

/// Build a datagram scheme by name from a JSON object (or null) of its parameters.
pub fn make(name: &str, params: &serde_json::Value, seed: u64) -> Result<Box<dyn DgramCc>, String> {
    let info = schemes().find(|s| s.name == name).ok_or_else(|| {
        let known: Vec<&str> = schemes().map(|s| s.name).collect();
        format!("unknown datagram scheme {:?}; known: {}", name, known.join(", "))
    })?;
    (info.make)(&netmodel::params::checked(info.name, info.params, params)?, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_checks_names_and_parameters() {
        assert!(make("fixed", &serde_json::Value::Null, 1).is_ok());
        let e = make("nope", &serde_json::Value::Null, 1).err().unwrap();
        assert!(e.contains("known: fixed"), "{e}");
        let e = make("fixed", &serde_json::json!({"bogus": 1}), 1).err().unwrap();
        assert!(e.contains("valid parameters: rate-mbps"), "{e}");
    }

    /// Every registered scheme builds from its defaults, and from each declared default given
    /// explicitly (the table and the range checks agree).
    #[test]
    fn every_scheme_builds_from_its_declared_defaults() {
        for s in schemes() {
            if s.params.iter().any(|p| p.default.is_nan()) {
                continue; // a required file parameter (tao's rule table, indigo's checkpoint): own tests
            }
            let c = make(s.name, &serde_json::Value::Null, 1).unwrap_or_else(|e| panic!("{}: {e}", s.name));
            assert_eq!(c.name(), s.name);
            let ctl = c.control();
            assert!(ctl.rate_bps.is_some() || ctl.cwnd_bytes.is_some(), "{}", s.name);
            for p in s.params {
                // integral defaults written as integers, as an experiment file would
                let v = if p.default.fract() == 0.0 {
                    serde_json::json!({ p.name: p.default as i64 })
                } else {
                    serde_json::json!({ p.name: p.default })
                };
                make(s.name, &v, 1).unwrap_or_else(|e| panic!("{} {}={}: {e}", s.name, p.name, p.default));
            }
        }
    }
}
