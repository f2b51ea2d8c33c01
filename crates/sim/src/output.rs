//! The output of a run: results tables (columns and their encoding: `netmodel::records`)
//! plus run-level counters.

pub use netmodel::records::{Col, Table, NULL_I64};

/// Everything a run produces: tables plus run-level counters. A run whose records were
/// handed over in chunks (`Sim::drain_records`) holds here the rows recorded after the last
/// chunk, and in `late` the fates of packets whose row went out while they were still in the
/// network (`netmodel::records::Recorder::late_fates`).
#[derive(Debug, Clone)]
pub struct Output {
    pub tables: Vec<Table>,
    pub stats: RunStats,
    pub late: Vec<Table>,
}

impl Output {
    /// Every column's encoded bytes, named `table.column`, in order (tests compare runs byte
    /// for byte with it).
    #[cfg(test)]
    pub(crate) fn column_bytes(&self) -> Vec<(String, Vec<u8>)> {
        self.tables
            .iter()
            .flat_map(|t| t.cols.iter().map(move |(c, col)| (format!("{}.{c}", t.name), col.le_bytes().into_owned())))
            .collect()
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RunStats {
    /// Events taken from the event queue and acted upon (stale entries excluded).
    pub events: u64,
    /// Packets (data and ACK) created by hosts.
    pub packets: u64,
    /// Packets serialised onto the bottleneck links.
    pub bottleneck_packets: u64,
    /// Data packets still in the network at the end of the run.
    pub data_in_flight_at_end: u64,
    pub sim_time_ns: u64,
    /// Largest number of entries the event queue held (live and superseded).
    pub max_pending_events: u64,
    /// Per link with a variable delay: the `(instant, delay)` switches as that direction
    /// applied them (skew included), exact in the simulator.
    pub delay_switches: Vec<DelaySwitches>,
    /// Per link: packets (data and ACK) dropped by the random-loss model.
    pub random_losses: Vec<u64>,
    /// The pcapng capture's files and packet counts (runs with a capture only), or its
    /// write error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<Result<crate::capture::CaptureSummary, String>>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DelaySwitches {
    pub link: u32,
    pub steps: Vec<(u64, u64)>,
}
