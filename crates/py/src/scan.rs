//! Python access to the streaming capture reader: `_core.PcapScanner(path)` yields chunks of
//! per-packet columns (`next_chunk(max)` → {column: (dtype, bytes)} or None at the end), so
//! `ccbench.capture` reads captures of any size with bounded memory.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use pcap::scan::{Chunk, Scanner};

fn raw<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain-old-data numeric slices reinterpreted as bytes (alignment of u8 is 1).
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

#[pyclass(module = "ccbench._core")]
pub struct PcapScanner {
    sc: Scanner,
    path: String,
}

#[pymethods]
impl PcapScanner {
    #[new]
    fn new(path: &str) -> PyResult<Self> {
        let sc = Scanner::open(std::path::Path::new(path)).map_err(PyValueError::new_err)?;
        Ok(PcapScanner { sc, path: path.to_string() })
    }

    /// Up to `max` IPv4 packets as columns, or None when the capture is exhausted. A damaged
    /// capture raises ValueError naming the file and byte offset.
    fn next_chunk<'py>(&mut self, py: Python<'py>, max: usize) -> PyResult<Option<Bound<'py, PyDict>>> {
        let mut c = Chunk::default();
        let sc = &mut self.sc;
        let more = py
            .allow_threads(|| sc.fill(&mut c, max.max(1)))
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", self.path)))?;
        if !more && c.is_empty() {
            return Ok(None);
        }
        let d = PyDict::new(py);
        let b = |v: &[u8]| PyBytes::new(py, v);
        d.set_item("ts_ns", ("i64", b(raw(&c.ts_ns))))?;
        d.set_item("iface", ("u32", b(raw(&c.iface))))?;
        d.set_item("src", ("u32", b(raw(&c.src))))?;
        d.set_item("dst", ("u32", b(raw(&c.dst))))?;
        d.set_item("proto", ("u8", b(&c.proto)))?;
        d.set_item("ecn", ("u8", b(&c.ecn)))?;
        d.set_item("ip_id", ("u32", b(raw(&c.ip_id))))?;
        d.set_item("ip_len", ("u32", b(raw(&c.ip_len))))?;
        d.set_item("sport", ("u32", b(raw(&c.sport))))?;
        d.set_item("dport", ("u32", b(raw(&c.dport))))?;
        d.set_item("seq", ("u32", b(raw(&c.seq))))?;
        d.set_item("ack", ("u32", b(raw(&c.ack))))?;
        d.set_item("flags", ("u8", b(&c.flags)))?;
        d.set_item("window", ("u32", b(raw(&c.window))))?;
        d.set_item("payload", ("u32", b(raw(&c.payload))))?;
        let has_ts: Vec<u8> = c.has_ts.iter().map(|&x| x as u8).collect();
        d.set_item("has_ts", ("bool", b(&has_ts)))?;
        d.set_item("tsval", ("u32", b(raw(&c.tsval))))?;
        d.set_item("tsecr", ("u32", b(raw(&c.tsecr))))?;
        d.set_item("n_sack", ("u8", b(&c.n_sack)))?;
        d.set_item("key", ("u64", b(raw(&c.key))))?;
        Ok(Some(d))
    }

    /// {frames, frame_bytes, ipv4, skipped, position}: totals so far.
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let c = self.sc.counts;
        d.set_item("frames", c.frames)?;
        d.set_item("frame_bytes", c.frame_bytes)?;
        d.set_item("ipv4", c.ipv4)?;
        d.set_item("skipped", c.skipped)?;
        d.set_item("position", self.sc.position())?;
        Ok(d)
    }
}
