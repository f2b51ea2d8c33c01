//! Columnar output of a run: named tables of typed columns, handed to the bindings as raw
//! little-endian buffers. Nulls: `i64::MIN` in `I64` columns, NaN in `F64` columns.

pub const NULL_I64: i64 = i64::MIN;

#[derive(Debug, Clone)]
pub enum Col {
    U8(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    /// Dictionary-encoded strings: codes index into the categories.
    Cat(Vec<u8>, Vec<&'static str>),
}

impl Col {
    pub fn len(&self) -> usize {
        match self {
            Col::U8(v) => v.len(),
            Col::U32(v) => v.len(),
            Col::U64(v) => v.len(),
            Col::I32(v) => v.len(),
            Col::I64(v) => v.len(),
            Col::F64(v) => v.len(),
            Col::Bool(v) => v.len(),
            Col::Cat(v, _) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Debug, Clone)]
pub struct Table {
    pub name: &'static str,
    pub cols: Vec<(String, Col)>,
}

impl Table {
    pub fn new(name: &'static str) -> Self {
        Table { name, cols: Vec::new() }
    }

    pub fn col(mut self, name: &str, c: Col) -> Self {
        self.cols.push((name.to_string(), c));
        self
    }

    pub fn rows(&self) -> usize {
        self.cols.first().map_or(0, |(_, c)| c.len())
    }

    pub fn get(&self, name: &str) -> Option<&Col> {
        self.cols.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
}

/// Everything a run produces: tables plus run-level counters.
#[derive(Debug, Clone)]
pub struct Output {
    pub tables: Vec<Table>,
    pub stats: RunStats,
}

impl Output {
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
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DelaySwitches {
    pub link: u32,
    pub steps: Vec<(u64, u64)>,
}
