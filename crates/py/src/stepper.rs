//! A resumable simulator run for the Gymnasium environment (ccbench.gym): run until a time,
//! read the monitor-interval statistics of controlled flows, command them, go on.
//! Controlled flows are "gym" Python schemes (ccbench.cc.runtime): [`sim::cc::external::Periodic`]
//! controllers without a driver, reached through their handles.

use std::sync::Arc;

use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use sim::cc::external::Command;
use sim::Sim;

use crate::pycc::{PyExternal, PyStats};

#[pyclass(unsendable, module = "ccbench._core")]
pub struct Stepper {
    sim: Option<Sim>,
    ext: Option<Arc<PyExternal>>,
    end: u64,
}

impl Stepper {
    fn sim(&mut self) -> PyResult<&mut Sim> {
        self.sim.as_mut().ok_or_else(|| PyRuntimeError::new_err("the run is finished (finish() was called)"))
    }
    fn handle(&self, conn: u32) -> PyResult<sim::cc::external::PeriodicHandle> {
        let ext = self.ext.as_ref().ok_or_else(|| PyKeyError::new_err("no controlled flows"))?;
        let h = ext.handles.lock().unwrap().get(&conn).cloned();
        h.ok_or_else(|| PyKeyError::new_err(format!("connection {conn} is not a controlled flow (or has not started)")))
    }
}

#[pymethods]
impl Stepper {
    #[new]
    #[pyo3(signature = (experiment_json, externals=None))]
    fn new(experiment_json: &str, externals: Option<Bound<'_, PyDict>>) -> PyResult<Self> {
        let exp = sim::experiment::from_json(experiment_json).map_err(PyValueError::new_err)?;
        let ext = crate::externals_of(externals.as_ref())?;
        let sim = crate::new_sim(&exp, &ext)?;
        let end = sim.end();
        Ok(Stepper { sim: Some(sim), ext, end })
    }

    /// Run every event up to `t_ns` (clamped to the end); returns whether the run has ended.
    fn run_until(&mut self, t_ns: u64) -> PyResult<bool> {
        let sim = self.sim()?;
        sim.run_until(t_ns);
        let done = sim.finished();
        crate::check_scheme_error(&self.ext)?;
        Ok(done)
    }

    #[getter]
    fn now(&self) -> u64 {
        self.sim.as_ref().map_or(self.end, |s| s.now())
    }

    #[getter]
    fn end(&self) -> u64 {
        self.end
    }

    /// Statistics of controlled connection `conn` since the previous call (None before its
    /// first ACK); starts the next interval.
    fn take(&mut self, conn: u32) -> PyResult<Option<PyStats>> {
        let now = self.now();
        let h = match self.handle(conn) {
            Ok(h) => h,
            Err(_) if self.ext.is_some() => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(h.take(now).map(|st| PyStats::from_stats(&st)))
    }

    /// Command controlled connection `conn` from its next ACK on: cwnd (packets) and/or
    /// pacing rate (bit/s); None = automatic (see ccbench.cc.Controller).
    #[pyo3(signature = (conn, cwnd=None, pacing_rate=None))]
    fn command(&mut self, conn: u32, cwnd: Option<f64>, pacing_rate: Option<f64>) -> PyResult<()> {
        if let Some(r) = pacing_rate {
            if !(r >= 0.0 && r.is_finite()) {
                return Err(PyValueError::new_err(format!("pacing_rate must be a finite rate >= 0 bit/s, got {r}")));
            }
        }
        let c = Command { cwnd: cwnd.map(|w| w.round().clamp(1.0, u32::MAX as f64) as u32), pacing_rate_bps: pacing_rate };
        self.handle(conn)?.command(c);
        Ok(())
    }

    /// Run to the end and return the tables as `run_sim` does.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut sim = self.sim.take().ok_or_else(|| PyRuntimeError::new_err("finish() was already called"))?;
        let end = sim.end();
        sim.run_until(end);
        crate::check_scheme_error(&self.ext)?;
        crate::output_to_py(py, sim.finish())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Stepper>()
}
