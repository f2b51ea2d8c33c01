#!/usr/bin/env python3
"""Planted-mutant run: does the test suite notice realistic bugs? (docs/testing.md)

Each mutant is one small edit of the kind a real change could introduce — a halved constant,
an inverted condition, a wrong field, a rounding lost — together with the tests that should
catch it. The run makes one scratch git worktree of HEAD, and for each mutant applies the edit
(refusing if its text is not found exactly once), runs the tests (Rust: `cargo test -p CRATE`
with the worktree's own incremental target directory; Python: pytest against the worktree's
python/ with this venv and a copy of the built extension), records killed / survived /
timeout, and restores the file.

    .venv/bin/python benches/mutants.py [--only ID,ID] [--list] [--json out.json]
        [--timeout 900] [--keep]

Not a test (it takes ~20-30 min on two cores): the score and every survivor are in
docs/testing.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = Path(sys.executable)


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str
    old: str
    new: str
    tests: tuple  # ("cargo", crate, filter) or ("pytest", path, ..., maybe "-k", expr)
    bug: str


def cargo(crate: str, filt: str = "") -> tuple:
    return ("cargo", crate, filt)


def pytest(*args: str) -> tuple:
    return ("pytest", *args)


#: the test files of the campaign statistics and verdicts mutants (P14-P22)
CAMPAIGN_TESTS = pytest("tests/test_campaign_aggregate.py", "tests/test_expect.py",
                        "tests/test_campaign_report.py", "tests/test_campaign_run.py")

MUTANTS = [
    # --- simulator: congestion-control helpers and algorithms ------------------------------
    Mutant("R01", "crates/sim/src/cc/mod.rs", "sk.snd_cwnd_cnt -= delta * w;", "sk.snd_cwnd_cnt = 0;",
           cargo("ccbench-sim"), "tcp_cong_avoid_ai drops the ACK credit left over after an increase"),
    Mutant("R02", "crates/sim/src/cc/mod.rs", "(sk.cwnd >> 1).max(2)", "(sk.cwnd >> 2).max(2)",
           cargo("ccbench-sim"), "Reno's ssthresh is a quarter of cwnd instead of half"),
    Mutant("R03", "crates/sim/src/cc/cubic.rs", "let thresh = (self.delay_min >> 3).clamp(",
           "let thresh = (self.delay_min >> 2).clamp(", cargo("ccbench-sim"),
           "HyStart's delay threshold RTT/4 instead of RTT/8"),
    Mutant("R04", "crates/sim/src/cc/cubic.rs", "                    threshold >>= 1;",
           "                    threshold >>= 2;", cargo("ccbench-sim"),
           "HyStart's ACK-train threshold a quarter of delay_min when unpaced (kernel: half)"),
    Mutant("R05", "crates/sim/src/cc/cubic.rs", "self.cnt = self.cnt.max(2);",
           "self.cnt = self.cnt.max(1);", cargo("ccbench-sim"),
           "CUBIC may double cwnd per RTT in congestion avoidance (cap of 1.5x lost)"),
    Mutant("R06", "crates/sim/src/cc/bbr.rs", "pacing_gain: [u * 5 / 4, u * 3 / 4, u, u, u, u, u, u],",
           "pacing_gain: [u * 5 / 4, u, u, u, u, u, u, u],", cargo("ccbench-sim"),
           "BBR's PROBE_BW cycle without its drain phase (gain 3/4)"),
    Mutant("R07", "crates/sim/src/cc/vegas.rs", 'p.int("alpha", 2, 0, 1 << 20)',
           'p.int("alpha", 1, 0, 1 << 20)', cargo("ccbench-sim"),
           "Vegas's default alpha 1 packet instead of Linux's 2"),
    Mutant("R08", "crates/sim/src/cc/dctcp.rs", 'p.int("shift_g", DCTCP_SHIFT_G as i64, 0, 10)',
           'p.int("shift_g", DCTCP_SHIFT_G as i64 - 1, 0, 10)', cargo("ccbench-sim"),
           "DCTCP's EWMA gain 1/8 instead of 1/16"),
    # --- simulator: TCP endpoint ------------------------------------------------------------
    Mutant("R09", "crates/sim/src/tcp/receiver.rs", "const TCP_MAX_QUICKACKS: u32 = 16;",
           "const TCP_MAX_QUICKACKS: u32 = 8;", cargo("ccbench-sim"),
           "the receiver's initial quick-ACK budget halved"),
    Mutant("R10", "crates/sim/src/tcp/sender/timer.rs",
           "        self.backoff += 1;\n        self.sk.rto_ns = (self.sk.rto_ns * 2).min(TCP_RTO_MAX_NS);\n"
           "        self.timer = Some((self.sk.now_ns + self.sk.rto_ns, TimerKind::Retrans));",
           "        self.backoff += 1;\n        self.sk.rto_ns = (self.sk.rto_ns * 3 / 2).min(TCP_RTO_MAX_NS);\n"
           "        self.timer = Some((self.sk.now_ns + self.sk.rto_ns, TimerKind::Retrans));",
           cargo("ccbench-sim"), "RTO backoff by 1.5x instead of doubling"),
    Mutant("R11", "crates/sim/src/tcp/sender/recovery.rs",
           "self.sk.ssthresh as u64 * self.prr_delivered as u64 + self.sk.prior_cwnd as u64 - 1;",
           "self.sk.ssthresh as u64 * self.prr_delivered as u64;", cargo("ccbench-sim"),
           "PRR's proportional send quota rounded down instead of up (DIV_ROUND_UP lost)"),
    # --- link model -------------------------------------------------------------------------
    Mutant("R12", "crates/netmodel/src/qdisc/codel.rs", "(3u64 << 32).wrapping_sub(",
           "(2u64 << 32).wrapping_sub(", cargo("ccbench-netmodel"),
           "CoDel's Newton step for 1/sqrt(count) wrong: the control law drifts"),
    # --- analysis ---------------------------------------------------------------------------
    Mutant("P01", "python/ccbench/analysis/metrics.py",
           "loss = (st.bytes_dropped / st.bytes_sent * 100.0)",
           "loss = (st.bytes_lost / st.bytes_sent * 100.0)",
           pytest("tests/test_analysis.py", "tests/test_sim_e2e.py"),
           "loss counts packets still in flight at the end (CoCo-Beholder's definition)"),
    Mutant("P02", "python/ccbench/analysis/gather.py",
           'slots = (arr.with_columns((pl.col("a") // interval_ns).alias("slot"))',
           'slots = (arr.with_columns(((pl.col("a") - pl.col("d")) // interval_ns).alias("slot"))',
           pytest("tests/test_analysis.py"), "intervals binned by send time instead of arrival time"),
    Mutant("P03", "python/ccbench/analysis/estimators.py",
           "    return round(exact)  # Fraction.__round__ rounds half to even",
           "    return int(exact)", pytest("tests/test_analysis.py"),
           "nearest-rank percentile rounds down instead of half to even"),
    Mutant("P04", "python/ccbench/analysis/metrics.py",
           '"jain": s1[ok] ** 2 / (n_act[ok].astype(np.float64) * s2[ok])},',
           '"jain": s1[ok] ** 2 / (n_act[ok].astype(np.float64) * s2[ok] + 1e-9)},',
           pytest("tests/test_analysis.py"), "Jain's index with a 'safety' epsilon in the denominator"),
    # --- configuration ------------------------------------------------------------------------
    Mutant("P05", "python/ccbench/config/units.py", '"m": 10**6,', '"m": 2**20,',
           pytest("tests/test_config.py", "tests/test_config_units.py"),
           "Mbit read as 2^20 bit/s (binary prefix) instead of 10^6"),
    Mutant("P06", "python/ccbench/config/semantic.py",
           "if serialises and (packets == 0 or (nbytes is not None and nbytes < pkt)):",
           "if serialises and (nbytes is not None and nbytes < pkt):",
           pytest("tests/test_semantic.py"), "a queue of 0 packets is accepted silently"),
    # --- campaigns and expectations -------------------------------------------------------------
    Mutant("P07", "python/ccbench/campaign/plan.py",
           'text = json.dumps({"base": base_seed, "point": point, "repeat": repeat}, sort_keys=True,',
           'text = json.dumps({"base": base_seed, "point": point, "repeat": 0}, sort_keys=True,',
           pytest("tests/test_campaign_plan.py"), "every repeat gets the same seed"),
    Mutant("P08", "python/ccbench/campaign/aggregate.py",
           "tq = {n: t_quantile((1 + level) / 2, n - 1)",
           "tq = {n: t_quantile(level, n - 1)", pytest("tests/test_campaign_aggregate.py", "tests/test_campaign_run.py"),
           "confidence interval from the one-sided quantile (too narrow)"),
    Mutant("P09", "python/ccbench/expect/__init__.py",
           "ok = value is not None and (lo is None or value >= lo) and (hi is None or value <= hi)",
           "ok = value is None or ((lo is None or value >= lo) and (hi is None or value <= hi))",
           pytest("tests/test_expect.py"), "an expectation whose metric is undefined passes"),
    Mutant("P10", "python/ccbench/agree.py", 'TOL = {"tput": 0.05,', 'TOL = {"tput": 0.5,',
           pytest("tests/test_agree.py"), "agreement matrix tolerates 50 % throughput differences"),
    # --- emulator logic (runs without root) ------------------------------------------------------
    Mutant("P11", "python/ccbench/backends/emu/netns.py",
           '    if not tcp.get("delayed_ack", True):\n        opts.append("quickack 1")',
           '    if tcp.get("delayed_ack", True):\n        opts.append("quickack 1")',
           pytest("tests/test_emu_logic.py"), "route option quickack inverted"),
    Mutant("P12", "python/ccbench/backends/emu/accuracy.py",
           "p99_lim = min(p99_lim, int(MAX_RELEASE_P99_RTT_FRAC * min_rtt))",
           "p99_lim = max(p99_lim, int(MAX_RELEASE_P99_RTT_FRAC * min_rtt))",
           pytest("tests/test_emu_logic.py"), "accuracy verdict's p99 limit taken with max instead of min"),
    Mutant("P13", "python/ccbench/budget.py", "BYTES_PER_PACKET = 160", "BYTES_PER_PACKET = 16",
           pytest("tests/test_budget.py"),
           "the memory budget underestimates per-packet records tenfold"),
    # --- campaign statistics and expectations (issue 27) ----------------------------------------
    Mutant("P14", "python/ccbench/campaign/aggregate.py", 'pl.col("value").std(ddof=1).alias("std")',
           'pl.col("value").std(ddof=0).alias("std")', CAMPAIGN_TESTS,
           "the spread across repeats is the population sd (too small for 3-5 repeats)"),
    Mutant("P15", "python/ccbench/campaign/aggregate.py", "tq[n] * s / math.sqrt(n)",
           "tq[n] * s / math.sqrt(n - 1)", CAMPAIGN_TESTS,
           "confidence half-width divides by sqrt(n - 1)"),
    Mutant("P16", "python/ccbench/campaign/aggregate.py",
           "pl.when(pl.col(m).is_not_null().any()).then(pl.col(m).sum()).alias(m)",
           "pl.when(pl.col(m).is_not_null().any()).then(pl.col(m).mean()).alias(m)",
           CAMPAIGN_TESTS, "within: sum averages the flows of a run instead"),
    Mutant("P17", "python/ccbench/campaign/verdicts.py",
           "ok = not missing and worst is not None and worst_gap <= 0",
           "ok = not missing and worst is not None and worst_gap < 0", CAMPAIGN_TESTS,
           "a campaign bound fails when a point sits exactly on it"),
    Mutant("P18", "python/ccbench/campaign/verdicts.py",
           "if worst is None or gap > worst_gap:  # an infinite bound leaves gap at -inf",
           "if worst is None or gap < worst_gap:  # an infinite bound leaves gap at -inf",
           CAMPAIGN_TESTS, "a campaign bound is judged at its best point, not its worst"),
    Mutant("P19", "python/ccbench/campaign/verdicts.py",
           "ok = worst >= -tol if up else worst <= tol",
           "ok = worst >= -2 * tol if up else worst <= 2 * tol", CAMPAIGN_TESTS,
           "a monotonicity check allows twice its tolerance"),
    Mutant("P20", "python/ccbench/campaign/verdicts.py", "                f = d0 / (d0 - d1)",
           "                f = 0.5", CAMPAIGN_TESTS,
           "a crossing is put half-way between the two axis values instead of interpolated"),
    Mutant("P21", "python/ccbench/campaign/verdicts.py",
           "max(nums.values()) / min(nums.values()) > 20",
           "max(nums.values()) / min(nums.values()) > 2e9", CAMPAIGN_TESTS,
           "a crossing on a wide (log-spaced) axis is interpolated linearly"),
    Mutant("P22", "python/ccbench/campaign/verdicts.py",
           "        sel = sel.filter(pl.col(k).cast(pl.String) == str(v))",
           "        sel = sel", CAMPAIGN_TESTS,
           "a campaign expectation's selection (scheme, group, ...) is ignored"),
    Mutant("P23", "python/ccbench/expect/__init__.py",
           'return n.get("after_ns", 0), n.get("before_ns", exp["duration_ns"])',
           'return 0, n.get("before_ns", exp["duration_ns"])',
           pytest("tests/test_expect.py"), "an expectation's window start (after:) is ignored"),
    Mutant("P24", "python/ccbench/expect/__init__.py",
           "return _flow_bytes(results, ids, a, b).sum() * 8 / secs / 1e6",
           "return _flow_bytes(results, ids, a, b).sum() / secs / 1e6",
           pytest("tests/test_expect.py"), "expected throughput in MB/s instead of Mbit/s"),
    Mutant("P25", "python/ccbench/expect/__init__.py",
           'last = bad["t_s"].max() + 0.5', 'last = bad["t_s"].max()',
           pytest("tests/test_expect.py"),
           "convergence time ends at the start of the last unfair interval, not its end"),
    Mutant("P26", "python/ccbench/expect/__init__.py",
           'return (100.0 * p["drop_ns"].is_not_null().sum() / p.height if p.height else None), ""',
           'return (100.0 * p["arrival_ns"].is_null().sum() / p.height if p.height else None), ""',
           pytest("tests/test_expect.py"), "expected loss counts packets in flight at the end as lost"),
]


def _sh(cmd, cwd, env=None, timeout=None):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def setup(wt: Path) -> None:
    if wt.exists():
        _sh(["git", "worktree", "remove", "--force", str(wt)], ROOT)
        shutil.rmtree(wt, ignore_errors=True)
    r = _sh(["git", "worktree", "add", "--detach", str(wt), "HEAD"], ROOT)
    if r.returncode:
        sys.exit(f"git worktree add failed: {r.stderr}")
    if (ROOT / "target").is_dir():
        shutil.copytree(ROOT / "target", wt / "target", symlinks=True)
    so = ROOT / "python" / "ccbench" / "_core.abi3.so"
    if so.is_file():
        shutil.copy2(so, wt / "python" / "ccbench" / so.name)


def run_tests(m: Mutant, wt: Path, timeout: float) -> tuple[str, float, str]:
    env = dict(os.environ, PYTHONPATH=str(wt / "python"), CARGO_TARGET_DIR=str(wt / "target"))
    if m.tests[0] == "cargo":
        _, crate, filt = m.tests
        cmd = ["nice", "cargo", "test", "--release", "-q", "-p", crate] + ([filt] if filt else [])
    else:
        files = [a for a in m.tests[1:] if (wt / a).exists() or a.startswith("-")]
        cmd = ["nice", str(PY), "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *files]
    t0 = time.monotonic()
    try:
        r = _sh(cmd, wt, env, timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - t0, ""
    tail = (r.stdout + r.stderr).strip().splitlines()[-1:] or [""]
    if r.returncode == 0:
        return "survived", time.monotonic() - t0, tail[0]
    if m.tests[0] == "cargo" and "error[E" in r.stderr:
        return "compile-error", time.monotonic() - t0, tail[0]
    return "killed", time.monotonic() - t0, tail[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant's tests")
    ap.add_argument("--keep", action="store_true", help="keep the scratch worktree")
    ap.add_argument("--worktree", default="/tmp/ccbench-mutants")
    a = ap.parse_args()
    ms = [m for m in MUTANTS if not a.only or m.id in a.only.split(",")]
    if a.list:
        for m in ms:
            print(f"{m.id}  {m.file}: {m.bug}")
        return 0
    for m in ms:  # every edit must apply to today's sources
        n = (ROOT / m.file).read_text().count(m.old)
        if n != 1:
            sys.exit(f"{m.id}: its text occurs {n} times in {m.file} (must be exactly once); update the mutant")
    wt = Path(a.worktree)
    setup(wt)
    rows = []
    try:
        for m in ms:
            f = wt / m.file
            orig = f.read_text()
            f.write_text(orig.replace(m.old, m.new, 1))
            try:
                verdict, secs, tail = run_tests(m, wt, a.timeout)
            finally:
                f.write_text(orig)
            rows.append({"id": m.id, "file": m.file, "bug": m.bug, "verdict": verdict,
                         "seconds": round(secs, 1), "tests": " ".join(m.tests), "last_line": tail})
            print(f"{m.id}  {verdict:<13} {secs:6.1f} s  {m.bug}", flush=True)
    finally:
        if not a.keep:
            _sh(["git", "worktree", "remove", "--force", str(wt)], ROOT)
    killed = sum(r["verdict"] == "killed" for r in rows)
    valid = sum(r["verdict"] in ("killed", "survived", "timeout") for r in rows)
    print(f"score: {killed} of {valid} mutants killed"
          + "".join(f"\nsurvived: {r['id']} {r['bug']}" for r in rows if r["verdict"] == "survived"))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
