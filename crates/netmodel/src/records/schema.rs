//! The results tables' columns, declared once for every writer (docs/architecture.md,
//! "Results directory"). `flows` also has `cc_<name>` F64 columns after these, from the
//! algorithm's own samples. ccbench/results/schema.py holds the same tables as polars
//! schemas; a test compares the two.

use super::columns::Dtype::{self, *};

/// Categories of the packets table's `drop_reason` column ("unseen": a drop inferred from a
/// packet capture, written only by the capture importer; "channel": a shared half-duplex
/// channel gave up on the frame, netmodel::csma).
pub const DROP_REASONS: &[&str] = &["none", "queue", "loss", "unseen", "channel"];
/// CA state names in code order (`ca_state`; Linux `enum tcp_ca_state`).
pub const CA_STATES: &[&str] = &["open", "disorder", "cwr", "recovery", "loss"];

pub type Schema = &'static [(&'static str, Dtype)];

pub const PACKETS: Schema = &[
    ("flow", U32),
    ("seq", U64),
    ("size", U32),
    ("retrans", Bool),
    ("sent_ns", I64),
    ("arrival_ns", I64),
    ("drop_link", I32),
    ("drop_ns", I64),
    ("drop_reason", Cat(DROP_REASONS)),
];

pub const FLOWS: Schema = &[
    ("time_ns", I64),
    ("flow", U32),
    ("cwnd", U32),
    ("ssthresh", I64),
    ("srtt_us", F64),
    ("rttvar_us", F64),
    ("min_rtt_us", F64),
    ("inflight", U32),
    ("delivered", U64),
    ("bytes_acked", U64),
    ("retrans", U64),
    ("lost", U64),
    ("ca_state", Cat(CA_STATES)),
    ("pacing_rate_bps", F64),
    ("delivery_rate_bps", F64),
];

pub const QUEUES: Schema = &[
    ("time_ns", I64),
    ("link", U32),
    ("packets", U32),
    ("bytes", U64),
    ("drops", U64),
    ("dropped_bytes", U64),
    ("tx_bytes", U64),
    ("loss_drops", U64),
    ("marks", U64),
    ("sojourn_us", F64),
];

pub const INTERVALS: Schema = &[
    ("bin", I64),
    ("flow", U32),
    ("sent_bytes", U64),
    ("sent_pkts", U64),
    ("delivered_bytes", U64),
    ("delivered_pkts", U64),
    ("delay_sum_ns", U64),
    ("dropped_bytes", U64),
    ("dropped_pkts", U64),
];

pub const DELAY_HIST: Schema = &[("flow", U32), ("bucket", U32), ("count", U64)];

pub const FLOWSTATS: Schema = &[
    ("flow", U32),
    ("sent_bytes", U64),
    ("sent_pkts", U64),
    ("delivered_bytes", U64),
    ("delivered_pkts", U64),
    ("dropped_bytes", U64),
    ("dropped_pkts", U64),
    ("retrans_pkts", U64),
    ("first_sent_ns", I64),
    ("last_sent_ns", I64),
    ("first_arrival_ns", I64),
    ("last_arrival_ns", I64),
    ("delay_sum_ns", U64),
    ("app_bytes", U64),
    ("start_ns", I64),
    ("completed_ns", I64),
];

pub const CONNS: Schema = &[
    ("conn", U32),
    ("flow", U32),
    ("size_bytes", U64),
    ("start_ns", I64),
    ("completed_ns", I64),
    ("acked_bytes", U64),
    ("retrans_pkts", U64),
];

/// Latency probes (`scheme: probe`): one row per probe sent; `rtt_ns` null when no echo came
/// back before the run ended.
pub const PROBES: Schema = &[
    ("flow", U32),
    ("seq", U64),
    ("sent_ns", I64),
    ("rtt_ns", I64),
];

/// Every results table, in the order runs write them.
pub const TABLES: &[(&str, Schema)] = &[
    ("packets", PACKETS),
    ("flows", FLOWS),
    ("queues", QUEUES),
    ("intervals", INTERVALS),
    ("delay_hist", DELAY_HIST),
    ("flowstats", FLOWSTATS),
    ("conns", CONNS),
    ("probes", PROBES),
];

/// A table of `schema` from its columns in schema order (a panic names a mismatch: the
/// writers and this declaration must not drift apart).
pub fn table(name: &'static str, schema: Schema, cols: Vec<Col>) -> super::Table {
    assert_eq!(cols.len(), schema.len(), "table {name}: {} columns, schema has {}", cols.len(), schema.len());
    let mut t = super::Table::new(name);
    for (&(cname, dtype), c) in schema.iter().zip(cols) {
        assert_eq!(c.dtype(), dtype, "table {name}: column {cname} is {:?}, schema says {:?}", c.dtype(), dtype);
        t = t.col(cname, c);
    }
    t
}

use super::columns::Col;
