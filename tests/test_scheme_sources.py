"""A run's key covers the content of the files its schemes load (ccbench.cc.sources): editing
a Python scheme, a module it imports, or a BPF program re-runs exactly the runs that use it."""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from ccbench import config
from ccbench.campaign import load_campaign, parse_campaign, plan as make_plan, run_campaign
from ccbench.config.bpfschemes import SHIPPED_DIR

SCHEME = """\
from ccbench.cc import Scheme
import neighbour


class Grow(Scheme):
    def cong_avoid(self, sk, acked):
        sk.cwnd = max(2, sk.cwnd + neighbour.STEP)
"""


def _campaign(tmp: Path) -> Path:
    (tmp / "grow.py").write_text(SCHEME)
    (tmp / "neighbour.py").write_text("STEP = 1\n")
    doc = {"duration": 2, "central": {"rate": "10Mbit", "delay": "10ms", "queue": "1bdp"},
           "flows": [{"scheme": "cubic"}],
           "sweep": {"variants": {"mine": {"flows": [{"scheme": {"python": "grow.py:Grow"}}]},
                                  "cubic": {"flows": [{"scheme": "cubic"}]}},
                     "axes": {"central.queue": ["1bdp", "2bdp"]}}}
    f = tmp / "camp.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    return f


def _sweep(f: Path, out: Path):
    return run_campaign(load_campaign(f), out, jobs=1, progress=False)


def test_editing_a_scheme_or_a_module_it_imports_reruns_exactly_its_runs(tmp_path):
    f = _campaign(tmp_path)
    out = tmp_path / "out"
    first = _sweep(f, out)
    assert first.executed == 4 and first.ok
    assert _sweep(f, out).executed == 0
    # the imported neighbour changes: the two runs of the Python scheme run again, not CUBIC's
    (tmp_path / "neighbour.py").write_text("STEP = 2\n")
    again = _sweep(f, out)
    assert (again.executed, again.skipped) == (2, 2)
    mine = {r.key for r in make_plan(load_campaign(f)).runs if r.point.values["variant"] == "mine"}
    assert mine and mine <= set(again.index["run_key"].to_list())
    # a comment in the scheme file itself is an edit too
    (tmp_path / "grow.py").write_text(SCHEME + "# tuned\n")
    assert _sweep(f, out).executed == 2
    # the recorded identity: the resolved flow in each run's metadata
    doc = {k: v for k, v in yaml.safe_load(f.read_text()).items() if k != "sweep"}
    exp = config.resolve(doc | {"flows": [
        {"scheme": {"python": str(tmp_path / "grow.py") + ":Grow"}}]}, source=str(f))
    assert len(exp["flows"][0]["source_sha256"]) == 64


def test_stdlib_and_ccbench_modules_are_not_part_of_the_identity(tmp_path):
    from ccbench.cc import runtime, sources
    (tmp_path / "a.py").write_text("import os, json\nimport ccbench.cc\nimport b\n")
    (tmp_path / "b.py").write_text("X = 1\n")
    files = sources.python_files(str(tmp_path / "a.py"))
    assert [Path(p).name for p in files] == ["a.py", "b.py"]
    assert runtime.source_file("ccbench.schemes.reno:Reno").endswith("reno.py")
    assert runtime.source_file("object:Foo#1") is None


def test_editing_a_bpf_program_or_its_header_changes_the_key(tmp_path):
    src = tmp_path / "my_cc.c"
    shutil.copy(SHIPPED_DIR / "scalable.c", src)
    doc = {"duration": 2, "flows": [{"scheme": {"bpf": str(src)}}],
           "sweep": {"axes": {"central.queue": ["1bdp"]}}}
    key = lambda: make_plan(parse_campaign(doc), backend="emu").runs[0].key  # noqa: E731
    k0 = key()
    assert key() == k0
    src.write_text(src.read_text() + "\n/* retuned */\n")
    k1 = key()
    assert k1 != k0
    # a local header it includes (shadowing the shipped one) is part of it
    shutil.copy(SHIPPED_DIR / "ccbench_tcp_ca.h", tmp_path / "ccbench_tcp_ca.h")
    k2 = key()
    (tmp_path / "ccbench_tcp_ca.h").write_text(
        (tmp_path / "ccbench_tcp_ca.h").read_text() + "\n/* x */\n")
    assert key() != k2


def test_many_flows_of_one_python_scheme_parse_its_import_tree_once(tmp_path, monkeypatch):
    """The digest is taken per flow; the import walk behind it is cached per file version,
    so 50 flows of one scheme parse each of its two modules once, and an edit is still seen."""
    from ccbench.cc import sources
    (tmp_path / "grow.py").write_text(SCHEME)
    (tmp_path / "neighbour.py").write_text("STEP = 1\n")
    parsed = []
    real = sources._parse_imports
    monkeypatch.setattr(sources, "_parse_imports", lambda p: parsed.append(p) or real(p))
    monkeypatch.setattr(sources, "_IMPORTS", {})
    doc = {"duration": 1, "central": {"rate": "10Mbit", "delay": "10ms"},
           "flows": [{"scheme": {"python": "grow.py:Grow"}, "count": 50}]}
    f = tmp_path / "many.yaml"
    f.write_text(yaml.safe_dump(doc))
    exp = config.load(f)
    digests = {f["source_sha256"] for f in exp["flows"]}
    assert len(exp["flows"]) == 50 and len(digests) == 1
    assert sorted(Path(p).name for p in parsed) == ["grow.py", "neighbour.py"]
    (tmp_path / "neighbour.py").write_text("STEP = 22\n")  # another size: a new file version
    assert {x["source_sha256"] for x in config.load(f)["flows"]} != digests
