"""Files from elsewhere are data (issue: no code runs and no file is written that the user did
not ask for): node names cannot steer a capture out of its folder, errors never quote a file
that is not an experiment, a CDF path naming something huge or special is refused unread."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ccbench import config

PARKING = """duration: 0.5
topology:
  links:
    - {{from: {a}, to: r2, rate: 10Mbit, delay: 5ms, queue: 1bdp}}
    - {{from: s0, to: {a}, rate: 1Gbit, delay: 1ms}}
    - {{from: r2, to: d0, rate: 1Gbit, delay: 1ms}}
flows:
  - {{scheme: cubic, src: s0, dst: d0}}
"""


@pytest.mark.parametrize("name", ["../evil", "/tmp/evil", "a/b", ".hidden", "x" * 64,
                                  "r\u00e9", "a b", "\"a\\u0000b\""])
def test_a_node_name_that_is_not_a_plain_file_name_is_refused_with_the_rule(name, tmp_path):
    f = tmp_path / "e.yaml"
    f.write_text(PARKING.format(a=name if name.startswith('"') else f"'{name}'"))
    with pytest.raises(config.ConfigErrors) as ei:
        config.load(f)
    assert "node names become file names" in str(ei.value), str(ei.value)


def test_run_pcap_writes_every_capture_inside_the_folder(tmp_path):
    f = tmp_path / "e.yaml"
    f.write_text(PARKING.format(a="r1.core-A_2"))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "ccbench", "run", str(f), "-o", str(out),
                        "--pcap"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    caps = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.pcapng"))
    assert caps == ["pcap/d0.pcapng", "pcap/r1.core-A_2-r2.pcapng", "pcap/r2-r1.core-A_2.pcapng",
                    "pcap/s0.pcapng"], caps


def test_errors_do_not_quote_a_file_that_is_not_an_experiment(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:TOPSECRET:/root:/bin/bash\nsecond line TOPSECRET\n")
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", str(secret)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "top level is a text" in r.stdout + r.stderr
    assert "TOPSECRET" not in r.stdout + r.stderr
    exp = tmp_path / "e.yaml"
    exp.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                   f"flows: [{{scheme: cubic, arrivals: {{rate: 10, size: {{cdf: {secret}}}}}}}]\n")
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", str(exp)],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "column 1 is not a number" in r.stdout + r.stderr
    assert "TOPSECRET" not in r.stdout + r.stderr


@pytest.mark.parametrize("target", ["/dev/zero", "/proc/self"])
def test_a_cdf_path_naming_no_regular_file_is_refused_unread(target, tmp_path):
    exp = tmp_path / "e.yaml"
    exp.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                   f"flows: [{{scheme: cubic, arrivals: {{rate: 10, size: {{cdf: {target}}}}}}}]\n")
    with pytest.raises(config.ConfigErrors, match="is not a regular file"):
        config.load(exp)


def test_a_cdf_file_larger_than_the_limit_is_refused(tmp_path, monkeypatch):
    from ccbench.config import workloads
    monkeypatch.setattr(workloads, "MAX_CDF_BYTES", 64)
    big = tmp_path / "big.cdf"
    big.write_text("1000 0.5\n" * 20 + "2000 1\n")
    exp = tmp_path / "e.yaml"
    exp.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                   f"flows: [{{scheme: cubic, arrivals: {{rate: 10, size: {{cdf: {big}}}}}}}]\n")
    with pytest.raises(config.ConfigErrors, match="larger than"):
        config.load(exp)
