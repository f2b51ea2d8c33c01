"""Headless Chromium from the system's packages (no browser download): load a report with a
probe script injected, return what the probe saw (console errors, network requests, Bokeh plots,
a zoom's effect on a linked plot), and save a screenshot."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

PROBE = (Path(__file__).parent / "browser_probe.html").read_text()
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
        "--virtual-time-budget=15000"]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    pytest.skip("no Chromium installed (apt-get install chromium; `make test` tries it)")


def probe(report: Path, out_dir: Path, zoom_title: str, linked_title: str,
          screenshot: str = "report.png") -> dict:
    exe = chromium()
    page = out_dir / f"probed-{report.name}"
    script = PROBE.replace("__ZOOM__", zoom_title).replace("__LINKED__", linked_title)
    page.write_text(report.read_text().replace("<head>", "<head>" + script, 1))
    dom = subprocess.run([exe, *ARGS, "--dump-dom", page.as_uri()], capture_output=True,
                         text=True, timeout=120)
    m = re.search(r'<pre id="ccb-probe">([^<]*)</pre>', dom.stdout)
    assert m, f"the probe did not report; chromium stderr: {dom.stderr[-2000:]}"
    shot = out_dir / screenshot
    subprocess.run([exe, *ARGS, f"--screenshot={shot}", "--window-size=1300,2400",
                    report.as_uri()], capture_output=True, timeout=120, cwd=out_dir)
    res = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    res["screenshot"] = shot
    return res
