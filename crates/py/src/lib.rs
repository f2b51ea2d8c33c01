//! Python bindings of the simulator: a resolved experiment (JSON text) in, columns out.
//! Columns cross as raw little-endian buffers; `ccbench.backends.sim` turns them into
//! polars DataFrames without copying through Python lists.

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use std::collections::HashMap;
use std::sync::Arc;

use sim::{Col, Experiment, Sim};

mod pycc;
mod scan;
mod stepper;

use pycc::{PyExternal, SchemeError};

/// One column as (dtype, little-endian bytes, categories): the encoding of `netmodel::records`.
fn col_to_py<'py>(py: Python<'py>, c: &Col) -> (&'static str, Bound<'py, PyBytes>, Option<Vec<&'static str>>) {
    let d = c.dtype();
    (d.name(), PyBytes::new(py, &c.le_bytes()), d.categories().map(|c| c.to_vec()))
}

/// The Python-scheme factory of a run: `externals` maps flow ids to `make(conn) -> (obj,
/// kind, value)` callables (ccbench.cc.runtime).
pub(crate) fn externals_of(externals: Option<&Bound<'_, PyDict>>) -> PyResult<Option<Arc<PyExternal>>> {
    let Some(d) = externals else { return Ok(None) };
    if d.is_empty() {
        return Ok(None);
    }
    let mut makers = HashMap::new();
    for (k, v) in d.iter() {
        makers.insert(k.extract::<u32>()?, v.unbind());
    }
    Ok(Some(Arc::new(PyExternal::new(makers))))
}

/// Build the simulator; a Python scheme failing in its constructor raises SchemeError.
pub(crate) fn new_sim(exp: &Experiment, ext: &Option<Arc<PyExternal>>) -> PyResult<Sim> {
    let dynext = ext.clone().map(|e| e as Arc<dyn sim::cc::external::ExternalCc>);
    Sim::with_external(exp, dynext).map_err(|e| match ext.as_ref().and_then(|x| x.take_error()) {
        Some(msg) => scheme_err(msg),
        None => PyValueError::new_err(e),
    })
}

/// A Python scheme's recorded error as the exception to raise: Ctrl-C inside a hook is a
/// KeyboardInterrupt (exit 130), anything else SchemeError.
fn scheme_err(msg: String) -> PyErr {
    if msg == pycc::INTERRUPTED {
        PyKeyboardInterrupt::new_err("simulation interrupted (in a Python scheme)")
    } else {
        SchemeError::new_err(msg)
    }
}

/// Raise the first error of a Python scheme, if any.
pub(crate) fn check_scheme_error(ext: &Option<Arc<PyExternal>>) -> PyResult<()> {
    match ext.as_ref().and_then(|x| x.take_error()) {
        Some(msg) => Err(scheme_err(msg)),
        None => Ok(()),
    }
}

/// Run a resolved experiment. `progress(now_ns, end_ns)` is called between chunks of
/// `chunk_ns` simulated time; Ctrl-C is honoured there. `externals`: Python schemes by flow
/// id (ccbench.cc.runtime); an exception in one stops the run within 1 ms of simulated time
/// with SchemeError (flow, time, traceback). `capture_json`: a
/// `sim::capture::CaptureConfig` as JSON to write pcapng captures (None: no capture).
/// `sink(table, columns)`: the rows of `packets`, `flows` and `queues` are handed to it in
/// chunks of at least `spill_rows` rows between chunks of simulated time (`Sim::drain_records`),
/// so the core holds a bounded number of them; None: all rows come at the end. Returns
/// `{"tables": {name: [(col, dtype, bytes, categories|None), ...]}, "stats": json_text,
/// "late": {name: columns}, "held_max": {table: rows}}` — with a sink, `tables` holds the rows
/// after the last chunk, `late` the fates of packets whose row went out while they were in
/// the network, and `held_max` the most rows of each table the core held before handing over.
#[pyfunction]
#[pyo3(signature = (experiment_json, progress=None, chunk_ns=100_000_000, externals=None, capture_json=None, sink=None, spill_rows=1 << 19))]
#[allow(clippy::too_many_arguments)]
fn run_sim<'py>(
    py: Python<'py>,
    experiment_json: &str,
    progress: Option<PyObject>,
    chunk_ns: u64,
    externals: Option<Bound<'py, PyDict>>,
    capture_json: Option<&str>,
    sink: Option<PyObject>,
    spill_rows: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let exp = sim::experiment::from_json(experiment_json).map_err(PyValueError::new_err)?;
    let ext = externals_of(externals.as_ref())?;
    let mut sim = new_sim(&exp, &ext)?;
    if let Some(c) = capture_json {
        let cfg: sim::capture::CaptureConfig =
            serde_json::from_str(c).map_err(|e| PyValueError::new_err(format!("capture config: {e}")))?;
        sim.set_capture(&cfg, &exp).map_err(PyValueError::new_err)?;
    }
    let chunk = chunk_ns.max(1);
    // With Python schemes the run is checked for their errors every millisecond.
    let step = if ext.is_some() { chunk.min(1_000_000) } else { chunk };
    let mut next_progress = sim.now().saturating_add(chunk);
    let mut held_max = [0usize; 3];
    while !sim.finished() {
        let next = sim.now().saturating_add(step);
        sim.run_until(next);
        check_scheme_error(&ext)?;
        if sim.now() < next_progress && !sim.finished() {
            continue;
        }
        next_progress = sim.now().saturating_add(chunk);
        if py.check_signals().is_err() {
            return Err(PyKeyboardInterrupt::new_err("simulation interrupted"));
        }
        if let Some(sink) = &sink {
            for (m, (_, n)) in held_max.iter_mut().zip(sim.held_rows()) {
                *m = (*m).max(n);
            }
            for t in sim.drain_records(spill_rows) {
                let name = t.name;
                sink.call1(py, (name, table_to_py(py, t)?))?;
            }
        }
        if let Some(cb) = &progress {
            cb.call1(py, (sim.now(), sim.end()))?;
        }
    }
    let out = sim.finish();
    let result = output_to_py(py, out)?;
    let held = PyDict::new(py);
    for (t, m) in ["packets", "flows", "queues"].iter().zip(held_max) {
        held.set_item(t, m)?;
    }
    result.set_item("held_max", held)?;
    Ok(result)
}

/// A table's columns as `[(col, dtype, bytes, categories|None), ...]`, each Rust column freed
/// once its bytes exist on the Python side (the records are held about once, not twice).
fn table_to_py<'py>(py: Python<'py>, t: sim::Table) -> PyResult<Bound<'py, PyList>> {
    let cols = PyList::empty(py);
    for (cname, c) in t.cols {
        let (dtype, bytes, cats) = col_to_py(py, &c);
        drop(c);
        cols.append((cname.as_str(), dtype, bytes, cats))?;
    }
    Ok(cols)
}

/// `{"tables": ..., "stats": json, "late": ...}` of a finished run. Consumes the output
/// column by column (`table_to_py`).
pub(crate) fn output_to_py<'py>(py: Python<'py>, out: sim::Output) -> PyResult<Bound<'py, PyDict>> {
    let sim::Output { tables: recs, stats, late } = out;
    let (tables, late_py) = (PyDict::new(py), PyDict::new(py));
    for (dict, list) in [(&tables, recs), (&late_py, late)] {
        for t in list {
            let name = t.name;
            dict.set_item(name, table_to_py(py, t)?)?;
        }
    }
    let result = PyDict::new(py);
    result.set_item("tables", tables)?;
    result.set_item("late", late_py)?;
    result.set_item(
        "stats",
        serde_json::to_string(&stats).map_err(|e| PyValueError::new_err(e.to_string()))?,
    )?;
    Ok(result)
}

/// The congestion-control registry: [{name, description, source, params: [{name, default, doc}]}].
#[pyfunction]
fn schemes(py: Python<'_>) -> PyResult<PyObject> {
    let list: Vec<serde_json::Value> = sim::cc::schemes()
        .map(|s| {
            // Flags a scheme's constructor sets (Linux TCP_CONG_NEEDS_ECN; ccbench's non-SACK
            // NewReno), read from a default instance so the registry stays their only source.
            let inst = sim::cc::make(s.name, &serde_json::Value::Null).ok();
            serde_json::json!({
                "name": s.name,
                "description": s.description,
                "source": s.source,
                "needs_ecn": inst.as_ref().is_some_and(|c| c.needs_ecn()),
                "non_sack_recovery": inst.as_ref().is_some_and(|c| c.needs_non_sack_recovery()),
                "params": params_json(s.params),
            })
        })
        .collect();
    json_to_py(py, list)
}

/// A parameter table as [{name, default, doc}].
fn params_json(params: &[netmodel::params::ParamInfo]) -> Vec<serde_json::Value> {
    params.iter().map(|p| serde_json::json!({"name": p.name, "default": p.default, "doc": p.doc})).collect()
}

/// A JSON list as Python objects (through `json.loads`).
fn json_to_py(py: Python<'_>, list: Vec<serde_json::Value>) -> PyResult<PyObject> {
    let text = serde_json::Value::Array(list).to_string();
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// The datagram schemes' registry (crates/dgram): [{name, description, source, transport:
/// "dgram", params: [{name, default, doc}]}].
#[pyfunction]
fn dgram_schemes(py: Python<'_>) -> PyResult<PyObject> {
    let list: Vec<serde_json::Value> = dgram::cc::schemes()
        .map(|s| {
            serde_json::json!({
                "name": s.name,
                "description": s.description,
                "source": s.source,
                "transport": "dgram",
                "params": params_json(s.params),
            })
        })
        .collect();
    json_to_py(py, list)
}

/// The results tables' declared columns (netmodel::records::schema), in order:
/// [[table, [[column, dtype, categories|None], ...]], ...].
#[pyfunction]
fn table_schemas(py: Python<'_>) -> PyResult<PyObject> {
    let list: Vec<serde_json::Value> = netmodel::records::schema::TABLES
        .iter()
        .map(|(name, schema)| {
            let cols: Vec<_> = schema.iter().map(|(c, d)| serde_json::json!([c, d.name(), d.categories()])).collect();
            serde_json::json!([name, cols])
        })
        .collect();
    let text = serde_json::Value::Array(list).to_string();
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// `TcpConfig::default()` as a dict of its fields (the Rust names, which are the resolved
/// experiment's `tcp` keys): the defaults the table of endpoint settings
/// (ccbench.config.tcpkeys) is checked against.
#[pyfunction]
fn tcp_defaults(py: Python<'_>) -> PyResult<PyObject> {
    let text = serde_json::to_string(&sim::tcp::TcpConfig::default())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_sim, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(dgram_schemes, m)?)?;
    m.add_function(wrap_pyfunction!(table_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_defaults, m)?)?;
    pycc::register(m)?;
    stepper::register(m)?;
    m.add_class::<scan::PcapScanner>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
