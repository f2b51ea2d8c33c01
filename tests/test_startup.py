"""What the command line imports (docs/benchmarks.md, "Quickstart"): `import ccbench.cli` loads
no library, and `ccbench run` with its report loads only what the run needs — not the campaign
package, Bokeh's Python side, or xml.sax (urllib, ssl) that only JUnit output needs."""
from __future__ import annotations

import json
import subprocess
import sys

import yaml


def _modules(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_importing_the_cli_loads_no_library():
    mods = _modules("import ccbench.cli")
    assert not {"polars", "numpy", "ccbench.api", "ccbench.campaign"} & mods


def test_the_package_names_load_on_first_use():
    import ccbench
    from ccbench import api, campaign, results
    assert ccbench.run is api.run and ccbench.sweep is campaign.sweep
    assert ccbench.Results is results.Results and ccbench.__version__ == api.__version__
    assert set(ccbench.__all__) <= set(dir(ccbench))
    try:
        ccbench.no_such_name
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_a_run_with_its_report_skips_what_it_does_not_need(tmp_path):
    exp = {"duration": 1, "seed": 1, "central": {"rate": "10Mbit", "delay": "10ms", "queue": 100},
           "flows": [{"scheme": "cubic"}],
           "expect": [{"metric": "throughput", "min": 1}]}
    f = tmp_path / "e.yaml"
    f.write_text(yaml.safe_dump(exp))
    mods = _modules(f"from ccbench.cli import main\n"
                    f"assert main(['run', {str(f)!r}, '-o', {str(tmp_path / 'r')!r}, '--quiet']) == 0")
    assert (tmp_path / "r" / "report.html").is_file()
    assert not {"ccbench.campaign", "bokeh", "xml.sax", "ssl"} & mods
