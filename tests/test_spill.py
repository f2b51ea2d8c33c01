"""Records streamed to disk while a run goes on (ccbench.results.spill, docs/robustness.md):
the written tables do not depend on the chunk size, the core holds a bounded number of rows,
and nothing spilled outlives an error or an interrupt."""
from __future__ import annotations

import signal

import polars as pl
import pytest

import ccbench
from ccbench.backends.sim import simulate
from ccbench.results.spill import Spill, SpilledTable
from simhelp import experiment
from test_interrupt import hidden, start, wait_paused


# Two Reno flows from 0 s and a BBR flow from 1 s the other way: BBR's cc_* columns first
# appear after the first chunks of flows went out; a shallow queue drops packets.
GROUPS = [{"scheme": "reno", "flows": 2, "direction": "->"},
          {"scheme": "bbr", "flows": 1, "direction": "<-", "start": 1}]


def exp():
    return experiment(GROUPS, duration=3, queue=40)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("spill")
    return {rows: ccbench.run(exp(), d / f"r{rows}", spill_rows=rows, reload=False)
            for rows in (5, 2000, 10**9)}


def test_tables_are_byte_identical_whatever_the_chunk_size(runs):
    a = runs[10**9]   # nothing spilled: the tables were in memory
    names = sorted(p.name for p in a.path.glob("*.parquet"))
    assert {"packets.parquet", "flows.parquet", "queues.parquet"} <= set(names)
    for rows in (5, 2000):
        b = runs[rows]
        assert names == sorted(p.name for p in b.path.glob("*.parquet"))
        for n in names:
            assert (a.path / n).read_bytes() == (b.path / n).read_bytes(), (rows, n)
    assert any(c.startswith("cc_") for c in a.flows.columns)
    assert a.flowstats["dropped_pkts"].sum() > 0


def test_small_chunks_keep_few_rows_in_the_core(tmp_path):
    rows = 20
    sp = Spill(tmp_path, rows)
    tables, _, _ = simulate(exp(), spill=sp)
    for name, t_col in (("packets", "sent_ns"), ("flows", "time_ns"), ("queues", "time_ns")):
        t = tables[name]
        assert isinstance(t, SpilledTable) and len(t.files) >= 10, name
        whole = t.collect()
        # the core hands rows over every 100 ms of simulated time: it holds at most four
        # chunks behind a packet still in the network, plus the rows of one such step
        step = whole.group_by(pl.col(t_col) // 100_000_000).len()["len"].max()
        bound = 4 * rows + 2 * step
        assert 0 < sp.held_max[name] <= bound, (name, sp.held_max[name], bound)
        assert whole.height > 3 * bound, name
    whole = Spill(tmp_path / "none", 10**9)
    (tmp_path / "none").mkdir()
    t2, _, _ = simulate(exp(), spill=whole)
    assert isinstance(t2["packets"], pl.DataFrame)
    assert whole.held_max["packets"] == t2["packets"].height   # what no spilling holds
    for name in ("packets", "flows", "queues"):
        assert tables[name].collect().equals(t2[name]), name


def test_tiny_chunks_patch_late_fates_and_late_columns(tmp_path):
    sp = Spill(tmp_path, 5)
    tables, _, _ = simulate(exp(), spill=sp)
    pk = tables["packets"]
    # rows forced out while their packet was in the network, their fate applied later
    assert pk.late.get("late_arrivals") is not None and pk.late["late_arrivals"].height > 0
    assert pk.late.get("late_drops") is not None and pk.late["late_drops"].height > 0
    none = tmp_path / "none"
    none.mkdir()
    whole, _, _ = simulate(exp(), spill=Spill(none, 10**9))
    assert pk.collect().equals(whole["packets"])
    # BBR's columns are missing from the first flows chunks and null there in the table
    fl = tables["flows"]
    first = pl.read_ipc(fl.files[0][0])
    late_cols = [c for c in fl.columns if c not in first.columns]
    assert late_cols and all(c.startswith("cc_") for c in late_cols)
    whole = fl.collect()
    assert whole.columns == fl.columns
    assert whole.head(fl.files[0][1]).select(late_cols).null_count().row(0) == (fl.files[0][1],) * len(late_cols)


def test_an_error_during_the_run_leaves_no_spill(tmp_path):
    calls = []

    def progress(now, end):
        calls.append(now)
        if len(calls) == 5:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        ccbench.run(exp(), tmp_path / "out", spill_rows=30, progress=progress)
    assert not (tmp_path / "out").exists() and hidden(tmp_path) == []


def test_an_interrupt_after_the_run_before_the_write_leaves_no_spill(tmp_path, monkeypatch):
    # between the simulation and the writer the metadata is built (git rev-parse): the chunks
    # on disk go with an interrupt there too
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(ccbench.api, "_git_commit", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ccbench.run(exp(), tmp_path / "out", spill_rows=30)
    assert not (tmp_path / "out").exists() and hidden(tmp_path) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_while_chunks_are_on_disk_leaves_nothing(tmp_path, sig, monkeypatch):
    f = tmp_path / "exp.yaml"
    f.write_text("duration: 2\nflows:\n  - {scheme: cubic, flows: 2}\n")
    monkeypatch.setenv("CCBENCH_SPILL_ROWS", "100")
    out = tmp_path / "out"
    p = start("run", f, "-o", out, "--quiet", pause="spill")
    wait_paused(p, "spill")
    assert any(q.name.startswith(".out.tmp-") and "-spill-" in q.name for q in tmp_path.iterdir())
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    assert p.returncode == (130 if sig == signal.SIGINT else 143), err
    assert "nothing was written" in err and "Traceback" not in err
    assert not out.exists() and hidden(tmp_path) == []


@pytest.mark.parametrize("rows", [0, -5, 2.5, True, "5"])
def test_bad_chunk_size_argument_is_named(tmp_path, rows):
    # 0 used to fall back to the default silently, -5 to fail in the core's conversion
    with pytest.raises(ValueError, match="spill_rows must be a positive number of rows"):
        ccbench.run(exp(), tmp_path / "out", spill_rows=rows)
    assert not (tmp_path / "out").exists() and hidden(tmp_path) == []


def test_bad_chunk_size_in_the_environment_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("CCBENCH_SPILL_ROWS", "lots")
    with pytest.raises(ValueError, match="CCBENCH_SPILL_ROWS"):
        ccbench.run(exp(), tmp_path / "out")
    assert hidden(tmp_path) == []


def test_the_run_summary_reads_no_table_that_grows_with_the_run_whole(runs):
    path = runs[5].path
    from ccbench.analysis.pantheon import pantheon_summary
    from ccbench.analysis.queues import queue_timeseries
    res = ccbench.load(path)
    text = ccbench.api.summary_text(res, 0.5)
    pan = pantheon_summary(res)
    qs = queue_timeseries(res)
    assert pan["utilization_pct"].drop_nulls().len() and qs.height
    for name in ("packets", "flows", "queues"):
        assert res.has(name) and not res.in_memory(name), name
    # the same numbers as from the tables in memory
    whole = ccbench.load(path)
    for name in ("packets", "flows", "queues"):
        assert getattr(whole, name).height > 0 and whole.in_memory(name)
    assert ccbench.api.summary_text(whole, 0.5) == text
    assert pantheon_summary(whole).equals(pan) and queue_timeseries(whole).equals(qs)


@pytest.mark.parametrize("groups", [1 << 17, 64])   # 1024 sub-ranges a pass; 16
def test_rank_selection_in_passes_is_exact(groups, monkeypatch):
    import numpy as np
    from ccbench.analysis import gather
    from ccbench.analysis.gather import select_ranks
    monkeypatch.setattr(gather, "_GROUPS", groups)
    rng = np.random.default_rng(3)
    parts = {0: rng.integers(0, 10**9, 5000),            # wide range: several passes
             1: np.full(300, 7_000_123),                  # all equal
             2: np.array([42]),                           # one value
             3: rng.integers(10**6, 10**6 + 50, 20000)}   # many duplicates in a narrow range
    ci = np.concatenate([np.full(len(v), k) for k, v in parts.items()])
    d = np.concatenate(list(parts.values()))
    order = rng.permutation(len(d))
    lf = pl.DataFrame({"ci": ci[order], "d": d[order]}).lazy()
    want = [(k, r) for k, v in parts.items() for r in {0, len(v) // 2, len(v) - 1, len(v) * 95 // 100}]
    got = select_ranks(lf, want)
    for k, r in want:
        assert got[(k, r)] == np.sort(parts[k])[r], (k, r)


def test_the_report_delay_figure_reads_three_columns_a_part_at_a_time(runs):
    import numpy as np
    from ccbench.report.interactive import packet_delay_figure

    def points(res):
        f = packet_delay_figure(res, None)
        return [(r.name, np.asarray(r.data_source.data["t"]), np.asarray(r.data_source.data["y"]))
                for r in f.renderers]

    lazy = ccbench.load(runs[5].path)
    got = points(lazy)
    assert not lazy.in_memory("packets")
    whole = ccbench.load(runs[5].path)
    assert whole.packets.height
    want = points(whole)
    assert len(got) == len(want) == 3
    for (na, ta, ya), (nb, tb, yb) in zip(got, want):
        assert na == nb and np.array_equal(ta, tb) and np.array_equal(ya, yb)
    assert sum(len(t) for _, t, _ in got) > 1000
