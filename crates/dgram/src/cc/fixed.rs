//! `fixed`: a constant pacing rate with no reaction to feedback — the datagram transport's
//! reference point (a paced UDP source that is still acknowledged and recorded), used by the
//! transport's own tests.

use super::{Acked, Control, DgramCc, Lost, ParamInfo, SchemeInfo};

pub struct Fixed {
    rate_bps: f64,
}

impl DgramCc for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn on_ack(&mut self, _a: &Acked) {}
    fn on_loss(&mut self, _l: &Lost) {}
    fn control(&self) -> Control {
        Control { rate_bps: Some(self.rate_bps), cwnd_bytes: None }
    }
    fn vars(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("rate_mbps", self.rate_bps / 1e6));
    }
}

pub static SCHEMES: &[SchemeInfo] = &[SchemeInfo {
    name: "fixed",
    description: "constant pacing rate, no reaction to feedback (the transport's reference point)",
    source: "ccbench",
    params: &[ParamInfo { name: "rate-mbps", default: 10.0, doc: "sending rate in Mbit/s" }],
    make: |p, _seed| Ok(Box::new(Fixed { rate_bps: p.float("rate-mbps", 10.0, 0.001, 1e6)? * 1e6 })),
}];
