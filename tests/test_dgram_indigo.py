"""`indigo` end to end (docs/datagram-schemes.md): the checkpoint parameter is resolved like
tao's rule table (relative to the experiment file, its files' content in the run key), the
simulator runs a checkpoint written here, and the published checkpoint
(github.com/StanfordSNR/indigo ``dagger/model/model``, shipped in python/ccbench/schemes/indigo/
and used when a flow names none) runs the trained policy on CoCo-Beholder's 100 Mbit/s
dumbbell."""
from __future__ import annotations

import json
import os
import struct

import pytest

from ccbench import api, config
from ccbench.campaign.metrics import run_rows
from ccbench.campaign.plan import run_key

from simhelp import run


def _crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _masked(data: bytes) -> int:
    c = _crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


def _block(out: bytearray, kv: list[tuple[bytes, bytes]]) -> bytes:
    """Append a table block (every key whole: one restart point each) and return its handle."""
    start = len(out)
    restarts = []
    for k, v in kv:
        restarts.append(len(out) - start)
        out += _varint(0) + _varint(len(k)) + _varint(len(v)) + k + v
    out += b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))
    size = len(out) - start
    out += b"\0"
    out += struct.pack("<I", _masked(bytes(out[start:])))
    return _varint(start) + _varint(size)


def write_checkpoint(prefix: str, tensors: dict[str, tuple[list[int], list[float]]]) -> None:
    """A TensorFlow V2 checkpoint (one shard, float32 tensors) as TensorFlow lays it out."""
    data, kv = bytearray(), [(b"", b"\x08\x01")]
    for name in sorted(tensors):
        shape, vals = tensors[name]
        raw = struct.pack(f"<{len(vals)}f", *vals)
        dims = b"".join(b"\x12" + _varint(len(_varint(d)) + 1) + b"\x08" + _varint(d) for d in shape)
        entry = (b"\x08\x01\x12" + _varint(len(dims)) + dims + b"\x20" + _varint(len(data))
                 + b"\x28" + _varint(len(raw)) + b"\x35" + struct.pack("<I", _masked(raw)))
        data += raw
        kv.append((name.encode(), entry))
    index = bytearray()
    data_handle = _block(index, kv)
    meta = _block(index, [])
    ix = _block(index, [(kv[-1][0], data_handle)])
    index += (meta + ix).ljust(40, b"\0") + struct.pack("<Q", 0xDB4775248B80FB57)
    with open(prefix + ".index", "wb") as fh:
        fh.write(index)
    with open(prefix + ".data-00000-of-00001", "wb") as fh:
        fh.write(data)


def constant_policy(prefix: str, action: int) -> None:
    """Indigo's network shape (9 inputs, here 2 units, 5 actions) with zero weights: the output
    biases choose `action` at every step (2 = "+0": the window stays at its start, 10)."""
    u, inputs = 2, 9
    biases = [0.0] * 5
    biases[action] = 1.0
    cell = "global/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/"
    write_checkpoint(prefix, {
        cell + "kernel": ([inputs + u, 4 * u], [0.0] * ((inputs + u) * 4 * u)),
        cell + "bias": ([4 * u], [0.0] * (4 * u)),
        "global/fully_connected/weights": ([u, 5], [0.0] * (u * 5)),
        "global/fully_connected/biases": ([5], biases),
    })


def test_the_checkpoint_is_found_next_to_the_experiment_and_keys_the_run(tmp_path, monkeypatch):
    (tmp_path / "m").mkdir()
    constant_policy(str(tmp_path / "m" / "model"), 2)
    exp = tmp_path / "e.yaml"
    exp.write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                   "flows:\n  - {scheme: indigo, params: {model: m/model}}\n")
    monkeypatch.chdir("/")
    a = config.load(exp, schemes=api.registry())
    f = a["flows"][0]
    assert f["params"]["model"] == str(tmp_path / "m" / "model") and f["transport"] == "dgram"
    # the .index file names the same checkpoint
    exp2 = tmp_path / "e2.yaml"
    exp2.write_text(exp.read_text().replace("m/model", "m/model.index"))
    assert config.load(exp2, schemes=api.registry())["flows"][0]["source_sha256"] == f["source_sha256"]
    # a changed weight (the data file) changes the run key
    constant_policy(str(tmp_path / "m" / "model"), 3)
    b = config.load(exp, schemes=api.registry())
    assert run_key(a, "sim", 1, "v") != run_key(b, "sim", 1, "v")
    os.remove(tmp_path / "m" / "model.data-00000-of-00001")
    with pytest.raises(config.ConfigErrors) as e:
        config.load(exp, schemes=api.registry())
    assert "flows[0].params.model" in str(e.value) and "without its data file" in str(e.value)
    exp.write_text(exp.read_text().replace("m/model", "m/other"))
    with pytest.raises(config.ConfigErrors) as e:
        config.load(exp, schemes=api.registry())
    assert "flows[0].params.model" in str(e.value) and "not found" in str(e.value)


def test_a_checkpoint_runs_in_the_simulator(tmp_path):
    """A policy that always keeps the window ("+0") holds 10 packets per round trip: 10 × 1472
    datagram bytes per 20 ms ≈ 6.1 Mbit/s of IP packets on a 50 Mbit/s link; its state is
    recorded as cc_* columns."""
    constant_policy(str(tmp_path / "model"), 2)
    doc = {"duration": 3, "seed": 1, "central": {"rate": "50Mbit", "delay": "10ms", "queue": "1bdp"},
           "flows": [{"scheme": "indigo", "params": {"model": str(tmp_path / "model")}}]}
    r = run(tmp_path, config.resolve(doc, schemes=api.registry()))
    late = r.flows.filter(r.flows["time_ns"] > 1_000_000_000)
    assert set(late["cc_cwnd_pkts"].to_list()) == {10.0}
    assert set(late["cc_action"].to_list()) == {2.0}
    assert late["cc_steps"].max() > 100        # a step every ~11 ms
    tput = run_rows(r)["avg_tput_mbps"][0]
    assert 5.5 < tput < 6.2, tput


@pytest.mark.parametrize("rtt_ms", [10, 20])
def test_published_indigo_on_a_100mbit_dumbbell(tmp_path, rtt_ms):
    """The published policy on CoCo-Beholder's single-flow dumbbell (100 Mbit/s everywhere,
    1000-packet queues, 10 s): measured with the checkpoint at 463d89b, RTT 10 ms: 99.65 Mbit/s,
    OWD p95 11.68 ms; RTT 20 ms: 99.04 Mbit/s, 12.75 ms (docs/datagram-schemes.md)."""
    x = rtt_ms // 2
    doc = {"duration": 10, "seed": 1, "central": {"rate": "100Mbit", "delay": f"{x - 2}ms", "queue": 1000},
           "flows": [{"scheme": "indigo",
                      "direction": "<-", "left-rate": "100Mbit", "right-rate": "100Mbit",
                      "left-delay": "1ms", "right-delay": "1ms", "left-queue": 1000, "right-queue": 1000}]}
    r = run(tmp_path, config.resolve(doc, schemes=api.registry()))
    fs = run_rows(r).row(0, named=True)   # the metrics the study's index holds
    print(f"indigo RTT {rtt_ms} ms: {fs['avg_tput_mbps']:.2f} Mbit/s, OWD p95 {fs['p95_delay_ms']:.2f} ms, "
          f"loss {fs['coco_loss_pct']:.3f} %")
    assert fs["avg_tput_mbps"] > 95
    assert fs["p95_delay_ms"] < x + 8       # base one-way delay x plus a short queue


def test_the_shipped_checkpoint_is_the_default_and_keyed_by_content(tmp_path):
    """A flow naming no ``model`` gets the shipped checkpoint's absolute path, the files' hash
    in the run key as for a file the user names; ``ccbench schemes`` shows it as the default."""
    from ccbench.config.native import shipped_file
    shipped = shipped_file("indigo", "model")
    assert os.path.isfile(shipped + ".index") and os.path.isfile(shipped + ".data-00000-of-00001")
    assert os.path.isfile(os.path.join(os.path.dirname(shipped), "LICENSE"))
    exp = config.resolve({"duration": 1, "flows": [{"scheme": "indigo"}]}, schemes=api.registry())
    named = config.resolve({"duration": 1, "flows": [{"scheme": "indigo", "params": {"model": shipped}}]},
                           schemes=api.registry())
    assert exp["flows"][0]["params"] == {"model": shipped}
    assert run_key(exp, "sim", 1, "v") == run_key(named, "sim", 1, "v")
    (p,) = next(s for s in api.dgram_schemes() if s["name"] == "indigo")["params"]
    assert p["shipped"] == shipped


def test_the_kernel_backend_hands_the_checkpoint_to_ccbench_dgram(tmp_path):
    """The kernel backend starts `ccbench-dgram` with the flow's resolved parameters: the
    checkpoint's absolute path; the binary builds the scheme from them with the same crate (a
    missing checkpoint: exit 3 and an error naming `model`, before any socket is opened)."""
    import subprocess
    from ccbench.backends import emu
    from ccbench.backends.emu.agents import receiver_argv
    if emu.binary("dgram") is None:
        pytest.skip("ccbench-dgram not built (run `make build`)")
    constant_policy(str(tmp_path / "model"), 2)
    (tmp_path / "e.yaml").write_text("duration: 1\ncentral: {rate: 10Mbit, delay: 5ms}\n"
                                     "flows:\n  - {scheme: indigo, params: {model: model.index}}\n")
    exp = config.load(tmp_path / "e.yaml", schemes=api.registry())
    argv = receiver_argv(emu.binary("dgram"), exp, exp["flows"][0], 0, "r")
    params = json.loads(argv[argv.index("--params") + 1])
    assert argv[argv.index("--scheme") + 1] == "indigo"
    assert params == {"model": str(tmp_path / "model.index")}
    bad = argv.copy()
    bad[bad.index("--params") + 1] = json.dumps({"model": str(tmp_path / "nothing")})
    p = subprocess.run(bad, capture_output=True, text=True, timeout=20)
    assert p.returncode == 3 and '"model"' in p.stderr and "not a TensorFlow checkpoint" in p.stderr, p.stderr


def test_the_coco_study_prints_indigo_when_the_user_adds_it():
    """CoCo-Beholder's datagram validation maps the thesis's `indigo` to this scheme, has its
    published cells at every X, and reads a cc-axis entry with the checkpoint as `indigo`."""
    from ccbench.studies import coco
    from ccbench.studies.common import cc_of
    assert coco.DGRAM_SCHEMES["indigo"] == "indigo"
    pub = coco.published()["validation_datagram"]
    assert all(set(pub[X]["indigo"]) >= set(coco.METRICS) for X in (3, 5, 10, 20))
    assert cc_of(json.dumps({"name": "indigo", "model": "/m/model"})) == "indigo"
