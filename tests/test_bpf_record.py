"""`scheme: {bpf: FILE, record: [...]}`: a BPF program's own global variables as cc_* columns
of the flows table, read from the simulator's build of the file and, on the kernel, from the
registered program's global-data maps (docs/bpf-schemes.md, "Recording a program's
variables")."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import ccbench
from ccbench.backends import bpfsim
from ccbench.campaign.plan import run_key
from ccbench.config import ConfigErrors, resolve

DATA = Path(__file__).resolve().parent / "data"
PROG = str(DATA / "bpf_counting_aimd.c")
RECORD = ["total_losses", "stats.last_ssthresh", "stats.calls", "scale"]
COLS = ["cc_total_losses", "cc_stats_last_ssthresh", "cc_stats_calls", "cc_scale"]

needs_cc = pytest.mark.skipif(bpfsim.compiler() is None, reason="no C compiler")


def _doc(record=RECORD, dur: float = 6):
    return {"duration": dur, "seed": 1,
            "central": {"rate": "20Mbit", "delay": "20ms", "queue": "0.5bdp"},
            "flows": [{"scheme": {"bpf": PROG, "record": record}}]}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def check_counters(flows: pl.DataFrame) -> None:
    """The recorded counters say what the program did: one count per loss response, the last
    ssthresh it returned, the .data initialiser."""
    assert [c for c in COLS if c not in flows.columns] == []
    f = flows.sort("time_ns").drop_nulls("cc_total_losses")   # kernel: before the first reading
    assert f.height > 0.9 * flows.height
    losses = f["cc_total_losses"].to_list()
    assert losses == sorted(losses) and losses[-1] >= 2, losses[-1]
    # both count the ssthresh calls; on the kernel a reading of the maps may fall between the
    # hook's two increments (user space reads while the program runs), so one sample may lag
    calls = f["cc_stats_calls"].to_list()
    assert calls[-1] == losses[-1]
    assert sum(a != b for a, b in zip(calls, losses)) <= 1, list(zip(calls, losses))
    assert set(f["cc_scale"].to_list()) == {7.0}
    after = f.filter(pl.col("cc_total_losses") > 0)
    same = (after["cc_stats_last_ssthresh"] == after["ssthresh"].cast(pl.Float64)).mean()
    assert same > 0.95, same                                 # the ssthresh the kernel/simulator took


@needs_cc
def test_recorded_globals_are_cc_columns_on_the_simulator(tmp_path):
    res = ccbench.run(_doc(), tmp_path / "out", budget=False)
    check_counters(res.flows)
    assert res.meta["experiment"]["flows"][0]["bpf"]["record"] == RECORD


@needs_cc
def test_a_variable_the_program_lacks_fails_its_build_naming_it(tmp_path):
    with pytest.raises(bpfsim.BpfSimError) as e:
        ccbench.run(_doc(record=["total_losses", "no_such_counter"], dur=1), tmp_path / "out",
                    budget=False)
    assert "no_such_counter" in str(e.value) and "record" in str(e.value)


def test_record_names_are_checked_as_c_names():
    for bad in (["a-b"], ["x); system(\"id\"); ("], [1], [], ["a", "a"], ["v%d" % i for i in range(17)]):
        with pytest.raises(ConfigErrors) as e:
            resolve(_doc(record=bad))
        assert "flows[0].scheme.record" in str(e.value), (bad, str(e.value))


def test_record_is_part_of_the_run_key():
    a = resolve(_doc(record=["total_losses"]))
    b = resolve(_doc(record=["stats.calls"]))
    assert a["flows"][0]["bpf"]["record"] == ["total_losses"]
    assert run_key(a, "sim", 1, "v") != run_key(b, "sim", 1, "v")


def test_the_generated_unit_includes_the_program_unchanged(tmp_path):
    text = bpfsim.record_unit(Path(PROG), ["total_losses", "stats.calls"])
    assert f'#include "{Path(PROG).resolve()}"' in text
    assert "case 1: return (double)(stats.calls);" in text
    with pytest.raises(bpfsim.BpfSimError):
        bpfsim.record_unit(Path(PROG), ["a;b"])


def _kernel_marks():
    from test_emu_bpf import needs_bpf, rerun_when_flagged
    return needs_bpf, rerun_when_flagged


needs_bpf, rerun_when_flagged = _kernel_marks()


@needs_bpf
@needs_cc
@rerun_when_flagged
def test_recorded_globals_on_the_kernel_match_the_simulators(tmp_path):
    k = ccbench.run(_doc(), tmp_path / "kernel", backend="emu", budget=False)
    check_counters(k.flows)
    s = ccbench.run(_doc(), tmp_path / "sim", budget=False)
    first = lambda r: r.flows.filter(pl.col("cc_total_losses") > 0)["cc_stats_last_ssthresh"][0]  # noqa: E731
    # the same program, the same path: its first loss response lands on the same window
    assert abs(first(k) - first(s)) <= 0.1 * first(s), (first(k), first(s))


@needs_bpf
@needs_cc
def test_a_variable_the_kernel_does_not_hold_is_refused_before_the_run(tmp_path):
    import time
    t0 = time.monotonic()
    with pytest.raises(Exception, match=r"record: \['no_such_counter'\]") as e:
        ccbench.run(_doc(record=["total_losses", "no_such_counter"], dur=30), tmp_path / "k",
                    backend="emu", budget=False)
    assert "numeric globals" in str(e.value)
    assert time.monotonic() - t0 < 20     # refused at registration, not after a 30-s run
