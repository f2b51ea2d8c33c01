"""examples/notebooks/quickstart.ipynb runs from top to bottom. Jupyter's own runner
(nbclient) is not a dependency: the test executes the notebook's code cells in order in one
namespace, as a kernel would, and checks what each step produced."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "notebooks" / "quickstart.ipynb"


def test_the_example_notebook_runs_and_produces_each_step(tmp_path, monkeypatch):
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(cells) >= 8 and all(not c["outputs"] for c in cells)  # stored without outputs
    monkeypatch.setenv("CCBENCH_NOTEBOOK_OUT", str(tmp_path / "nb"))
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__main__"}
    for i, c in enumerate(cells):
        src = "".join(c["source"])
        assert not src.lstrip().startswith(("%", "!")), f"cell {i}: no IPython magics"
        exec(compile(src, f"{NOTEBOOK.name}[code cell {i}]", "exec"), ns)
    out = tmp_path / "nb"
    assert ns["summary"].shape[0] == 2 and ns["fs"]["flow"].tolist() == [0, 1]
    assert ns["fs"]["label"].tolist()[0].startswith("Flow 1:")
    assert ns["cmp"].table.height == 9                   # 3 runs × (2 flows + total)
    assert any("queue" in d for d in ns["cmp"].differences)
    assert (out / "compare" / "report.html").is_file()
    assert {"repeat", "flow"} <= set(ns["ds"].dims) and ns["ds"].sizes["repeat"] == 2
    assert "flowstats.csv" in {p.name for p in ns["written"]}
    assert (out / "throughput.png").stat().st_size > 5_000
