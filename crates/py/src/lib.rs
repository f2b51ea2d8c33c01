//! Python bindings of the simulator: a resolved experiment (JSON text) in, columns out.
//! Columns cross as raw little-endian buffers; `ccbench.backends.sim` turns them into
//! polars DataFrames without copying through Python lists.

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use sim::{Col, Experiment, Sim};

fn raw<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain-old-data numeric slices reinterpreted as bytes (alignment of u8 is 1).
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn col_to_py<'py>(py: Python<'py>, c: &Col) -> PyResult<(&'static str, Bound<'py, PyBytes>, Option<Vec<&'static str>>)> {
    Ok(match c {
        Col::U8(v) => ("u8", PyBytes::new(py, v), None),
        Col::U32(v) => ("u32", PyBytes::new(py, raw(v)), None),
        Col::U64(v) => ("u64", PyBytes::new(py, raw(v)), None),
        Col::I32(v) => ("i32", PyBytes::new(py, raw(v)), None),
        Col::I64(v) => ("i64", PyBytes::new(py, raw(v)), None),
        Col::F64(v) => ("f64", PyBytes::new(py, raw(v)), None),
        Col::Bool(v) => {
            let b: Vec<u8> = v.iter().map(|&x| x as u8).collect();
            ("bool", PyBytes::new(py, &b), None)
        }
        Col::Cat(v, cats) => ("cat", PyBytes::new(py, v), Some(cats.clone())),
    })
}

/// Run a resolved experiment. `progress(now_ns, end_ns)` is called between chunks of
/// `chunk_ns` simulated time; Ctrl-C is honoured there. Returns
/// `{"tables": {name: [(col, dtype, bytes, categories|None), ...]}, "stats": json_text}`.
#[pyfunction]
#[pyo3(signature = (experiment_json, progress=None, chunk_ns=100_000_000))]
fn run_sim<'py>(
    py: Python<'py>,
    experiment_json: &str,
    progress: Option<PyObject>,
    chunk_ns: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let exp = Experiment::from_json(experiment_json).map_err(PyValueError::new_err)?;
    let mut sim = Sim::new(&exp).map_err(PyValueError::new_err)?;
    let chunk = chunk_ns.max(1);
    while !sim.finished() {
        let next = sim.now().saturating_add(chunk);
        sim.run_until(next);
        if py.check_signals().is_err() {
            return Err(PyKeyboardInterrupt::new_err("simulation interrupted"));
        }
        if let Some(cb) = &progress {
            cb.call1(py, (sim.now(), sim.end()))?;
        }
    }
    let out = sim.finish();
    let tables = PyDict::new(py);
    for t in &out.tables {
        let cols = PyList::empty(py);
        for (name, c) in &t.cols {
            let (dtype, bytes, cats) = col_to_py(py, c)?;
            cols.append((name.as_str(), dtype, bytes, cats))?;
        }
        tables.set_item(t.name, cols)?;
    }
    let result = PyDict::new(py);
    result.set_item("tables", tables)?;
    result.set_item(
        "stats",
        serde_json::to_string(&out.stats).map_err(|e| PyValueError::new_err(e.to_string()))?,
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
                "params": s.params.iter().map(|p| serde_json::json!({
                    "name": p.name, "default": p.default, "doc": p.doc,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let text = serde_json::Value::Array(list).to_string();
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_sim, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
