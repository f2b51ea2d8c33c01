"""`ccbench catalogue` (the CC catalogue generator) and `ccbench schemes` against the registry."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ccbench
from ccbench.catalogue import fmt_default

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = {s["name"]: s for s in ccbench.schemes()}
#: What `ccbench schemes` lists: the TCP registry and the datagram schemes, each with its
#: transport and backends (api.scheme_catalogue).
CATALOGUE = {s["name"]: s for s in ccbench.api.scheme_catalogue()}


def ccbench_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), COLUMNS="120")
    return subprocess.run([sys.executable, "-m", "ccbench", *map(str, args)], cwd=cwd or ROOT,
                          env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory):
    out = tmp_path_factory.mktemp("cat")
    names = ["cubic", "dctcp", "reno"]
    r = ccbench_cli("catalogue", "-o", out, "--scheme", "cubic,dctcp", "--scheme", "reno")
    assert r.returncode == 0, r.stderr
    return out, names, (out / "cc-catalogue.md").read_text(), r.stdout


def _section(md: str, name: str) -> str:
    parts = re.split(r"^## ", md, flags=re.M)
    return next(p for p in parts if p.startswith(name + "\n"))


def test_catalogue_lists_each_scheme_with_parameters_and_an_existing_plot(catalogue):
    out, names, md, _ = catalogue
    for name in names:
        s = REGISTRY[name]
        sec = _section(md, name)
        assert s["description"].replace("|", "\\|") in sec
        assert s["source"] in sec
        for p in s["params"]:
            assert f"| `{p['name']}` | {fmt_default(p['default'])} |" in sec, (name, p["name"])
        if not s["params"]:
            assert "Parameters: none." in sec
        png = re.search(r"!\[[^\]]*\]\(([^)]+\.png)\)", sec).group(1)
        f = out / png
        assert f.is_file() and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert 5_000 < f.stat().st_size < 150_000
        assert "Measured: throughput" in sec
    # no section and no plot for a scheme that was not asked for
    assert "## bbr\n" not in md
    assert sorted(p.stem for p in (out / "cc-catalogue").glob("*.png")) == sorted(names)


def test_catalogue_comparison_table_has_one_row_per_scheme_with_numbers_from_the_runs(catalogue):
    _, names, md, stdout = catalogue
    rows = [l for l in md.splitlines() if l.startswith("| [")]
    assert [re.match(r"\| \[([^\]]+)\]", r).group(1) for r in rows] == names
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        tput, util = float(cells[1]), float(cells[2])
        # one long flow alone with a 1-BDP queue fills the 20 Mbit/s link; slow start and the
        # recoveries keep both a little under the rate
        assert 18.0 < tput <= 20.0, r
        assert 90.0 < util <= 100.0, r
        # the table's figures are the runs' figures as printed by the command
        name = re.match(r"\| \[([^\]]+)\]", r).group(1)
        line = next(l for l in stdout.splitlines() if l.startswith(name + " "))
        assert f"{tput:.2f} Mbit/s" in line


def test_catalogue_ecn_scheme_gets_a_marking_queue_and_says_so(catalogue):
    _, _, md, _ = catalogue
    assert REGISTRY["dctcp"]["needs_ecn"] and not REGISTRY["cubic"]["needs_ecn"]
    assert "Needs ECN" in _section(md, "dctcp") and "ECN CE-marking" in _section(md, "dctcp")
    assert "Needs ECN" not in _section(md, "cubic")
    assert "| [dctcp](#scheme-dctcp) (ECN) |" in md
    # and the marks act: DCTCP keeps the queue near the 0.17-BDP threshold, far below CUBIC's
    q_dctcp = float(md.split("| [dctcp](#scheme-dctcp) (ECN) |")[1].split("|")[3])
    q_cubic = float(md.split("| [cubic](#scheme-cubic) |")[1].split("|")[3])
    assert q_dctcp < q_cubic / 2, (q_dctcp, q_cubic)


def test_schemes_lists_every_registered_scheme_with_its_parameters():
    r = ccbench_cli("schemes")
    assert r.returncode == 0, r.stderr
    blocks = re.split(r"\n\n", r.stdout.strip())[1:]  # the first block is the header line
    assert [b.split()[0] for b in blocks] == list(CATALOGUE)
    assert set(REGISTRY) < set(CATALOGUE)
    for b, (name, s) in zip(blocks, CATALOGUE.items()):
        assert "source: " in b
        shown = re.findall(r"^ {6}(\S+) += (\S+) ", b, flags=re.M)
        # a shipped file's default reads "shipped schemes/…": its first word is compared
        assert shown == [(p["name"], fmt_default(p["default"], p.get("shipped")).split()[0])
                         for p in s["params"]], name
        if not s["params"]:
            assert "parameters: none" in b


def test_schemes_name_shows_one_scheme_in_full_and_json_matches_the_registry():
    r = ccbench_cli("schemes", "CUBIC")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    cubic = REGISTRY["cubic"]
    assert r.stdout.startswith("cubic\n")
    assert " ".join(cubic["description"].split()) in text
    for p in cubic["params"]:
        assert " ".join(p["doc"].split()) in text
    assert "bbr" not in r.stdout.split("\n")[0]
    j = ccbench_cli("schemes", "dctcp", "--json")
    assert json.loads(j.stdout) == {**REGISTRY["dctcp"], "transport": "tcp",
                                    "backends": CATALOGUE["dctcp"]["backends"]}
    assert json.loads(ccbench_cli("schemes", "--json").stdout) == list(CATALOGUE.values())


def test_schemes_unknown_name_fails_naming_the_known_ones():
    r = ccbench_cli("schemes", "nosuch")
    assert r.returncode == 2
    assert "unknown congestion control scheme 'nosuch'" in r.stderr
    for name in REGISTRY:
        assert name in r.stderr
    assert r.stdout == ""
    never = Path("/tmp/ccbench-catalogue-never-written")
    r = ccbench_cli("catalogue", "-o", never, "--scheme", "nosuch")
    assert r.returncode == 2 and "known schemes: " in r.stderr and "cubic" in r.stderr
    assert not never.exists()


def test_catalogue_draws_datagram_schemes_and_leaves_out_tao(tmp_path):
    """Datagram schemes (docs/datagram.md) get a section and a plot of packets in flight and
    their key variable; tao, which needs the user's rule table, is not run; indigo runs its
    shipped checkpoint, shown as the parameter's default."""
    r = ccbench_cli("catalogue", "-o", tmp_path, "--scheme", "ledbat-utp,pcc-vivace")
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "cc-catalogue.md").read_text()
    assert "(0 TCP schemes and 2 datagram schemes" in md
    for name in ("ledbat-utp", "pcc-vivace"):
        sec = _section(md, name)
        assert "A datagram scheme" in sec and "packets in flight" in sec
        assert (tmp_path / "cc-catalogue" / f"{name}.png").stat().st_size > 5_000
    assert "queuing delay estimate" in _section(md, "ledbat-utp")      # its key variable
    assert "sending rate (Mbit/s)" in _section(md, "pcc-vivace")       # the PCC default
    row = next(l for l in md.splitlines() if l.startswith("| [pcc-vivace]"))
    assert row.rstrip().endswith("| n/a |")                             # a rate: no window
    t = ccbench_cli("catalogue", "-o", tmp_path / "t", "--scheme", "tao")
    assert t.returncode != 0 and "unknown scheme" in t.stderr
    i = ccbench_cli("catalogue", "-o", tmp_path / "i", "--scheme", "indigo")
    assert i.returncode == 0, i.stderr
    sec = _section((tmp_path / "i" / "cc-catalogue.md").read_text(), "indigo")
    assert "| `model` | shipped schemes/indigo/model |" in sec and "queuing delay input" in sec
