"""`ccbench run FILE --backend both`: both backends' summaries and expectation verdicts and the
comparison are printed even when an expectation fails on one side; the exit status says that it
did; JUnit goes to one file per backend. Needs root, /dev/net/tun and `make build`, like
tests/test_emu.py."""
from __future__ import annotations

from test_emu import pytestmark  # noqa: F401  (the same skip: root, /dev/net/tun, the binaries)

from ccbench import cli

DOC = """duration: 2
seed: 1
central: {rate: 20Mbit, delay: 10ms, queue: 1bdp}
flows:
  - {scheme: cubic}
expect:
  - {metric: throughput, min: 1000}
"""


def test_both_backends_and_the_comparison_come_out_when_an_expectation_fails(tmp_path, capsys):
    f = tmp_path / "exp.yaml"
    f.write_text(DOC)
    rc = cli.main(["run", str(f), "-o", str(tmp_path / "out"), "--backend", "both", "--quiet",
                   "--no-plots", "--junit", str(tmp_path / "j.xml")])
    out, err = capsys.readouterr()
    assert rc == 1
    assert "on the simulator" in out and "on the emulator" in out
    assert out.count("expectations: 0 passed, 1 failed") == 2
    assert "comparison (A = simulator, B = kernel)" in out and "differences:" in out
    assert "expectations failed on the simulator and the kernel" in err
    assert (tmp_path / "j.sim.xml").is_file() and (tmp_path / "j.emu.xml").is_file()
