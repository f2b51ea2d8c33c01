//! The results records shared by both backends: typed columns and their one byte encoding
//! ([`columns`]), the tables' declared columns ([`schema`]) and the recorders that fill them
//! ([`recorder`]) — the simulator's event loop, the emulator's engine (packets, queues and
//! the summary tables) and its flow agents (flows, conns) all record through these.

pub mod columns;
pub mod probes;
pub mod recorder;
mod room;
pub mod schema;

pub use columns::{Col, Dtype, Table, NULL_I64};
pub use probes::{probes_table, ProbeLog};
pub use recorder::{conns_table, ConnRow, FlowRow, FlowSamples, QueueRow, QueueSamples, Recorder, NO_RECORD};
pub use schema::{CA_STATES, DROP_REASONS};
