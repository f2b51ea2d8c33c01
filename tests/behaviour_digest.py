"""A digest of every results table over a fixed matrix of simulator scenarios.

The matrix covers every scheme, every queue discipline, the network conditions, every workload,
both directions, a general topology and a CoCo-Beholder layout. Each scenario is short (a few
simulated seconds). The digest of a table is the SHA-256 of its CSV text (polars writes floats
in shortest round-trip form, so equal digests mean equal values, column names and order).

    python tests/behaviour_digest.py            # compare with tests/data/behaviour-digest.json
    python tests/behaviour_digest.py --write    # record a new baseline (a deliberate change)

`tests/test_behaviour_digest.py` runs the comparison in the suite: a change of simulator
behaviour must come with a new baseline in the same commit, and its message says why.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tests" / "data" / "behaviour-digest.json"

SCHEMES = ["bbr", "bbr-shallow", "bbr3", "reno", "newreno", "dctcp", "cubic", "bic", "westwood",
           "htcp", "highspeed", "hybla", "scalable", "vegas", "veno", "yeah", "lp", "nv",
           "illinois", "hldg", "copa", "cdg"]

# Every scenario of the original matrix sets exact timing (no host noise) explicitly, so its
# digest does not move with the noise model; the noise-* scenarios run the default model.
_BASE = """duration: 12
seed: 7
host: {noise: exact}
sample-interval: 20ms
central: {rate: %(rate)s, delay: %(delay)s, queue: %(queue)s %(central_extra)s}
flows:
%(flows)s
"""


def _dumbbell(flows: list[str], queue: str = "1bdp", central_extra: str = "",
              delay: str = "10ms", rate: str = "20Mbit") -> str:
    return _BASE % {"queue": queue, "central_extra": central_extra, "delay": delay, "rate": rate,
                    "flows": "\n".join(f"  - {f}" for f in flows)}


def scenarios() -> dict[str, str]:
    """name → experiment YAML text."""
    s: dict[str, str] = {}
    for name in SCHEMES:
        queue = "{limit: 1bdp, ecn-threshold: 20}" if name == "dctcp" else "1bdp"
        s[f"scheme-{name}"] = _dumbbell(
            [f"{{scheme: {name}, flows: 2, left-rate: 1Gbit, left-delay: 1ms}}",
             "{scheme: cubic, direction: '<-', start: 1}"], queue=queue)
    aqms = {
        "droptail-bytes": "{type: droptail, limit: 60000B}",
        "drophead": "{type: drophead, limit: 40}",
        "red": "{type: red, limit: 200}",
        "red-ecn": "{type: red, limit: 200, ecn: true}",
        "codel": "{type: codel, limit: 1000}",
        "fq_codel": "{type: fq_codel}",
        "pie": "{type: pie, limit: 1000}",
        "fq_pie": "{type: fq_pie, ecn: true}",
    }
    for name, q in aqms.items():
        s[f"aqm-{name}"] = _dumbbell(
            ["{scheme: cubic, flows: 3}", "{scheme: bbr, flows: 1, start: 0.5}",
             "{scheme: cubic, ecn: true, direction: '<-'}"], queue=q)
    conds = {
        "jitter": ", jitter: {dist: normal, sd: 1ms}",
        "bernoulli": ", loss: 1%",
        "gilbert": ", loss: {gilbert: {p: 1%, r: 30%}}",
        "promotion": ", promotion: {delay: 200ms, idle: 500ms}",
    }
    delays = {"walk": "{walk: {base: 10ms, delta: 200ms, step: 5ms, max: 30ms}}",
              "square": "{square: {low: 5ms, high: 25ms, period: 500ms}, skew: 1ms}"}
    for name, d in delays.items():
        s[f"cond-{name}"] = _dumbbell(["{scheme: cubic, flows: 2}", "{scheme: reno, direction: '<-'}"],
                                      queue="100", delay=d)
    for name, extra in conds.items():
        s[f"cond-{name}"] = _dumbbell(["{scheme: cubic, flows: 2}", "{scheme: reno, direction: '<-'}"],
                                      queue="100", central_extra=extra)
    s["cond-trace"] = _dumbbell(["{scheme: cubic, flows: 2}"], queue="100", rate="null",
                                central_extra=", trace: %s" % (ROOT / "examples/traces/12mbps.trace"))
    s["cond-preset-hspa"] = _dumbbell(["{scheme: cubic}", "{scheme: bbr, direction: '<-'}"],
                                      queue="100", rate="null", central_extra=", preset: hspa")
    workloads = {
        "finite": "{scheme: cubic, flows: 2, bytes: 500KB, start: 0.2}",
        "app-rate": "{scheme: bbr, app-rate: 5Mbit}",
        "onoff": "{scheme: cubic, onoff: {on: 0.5, off: 0.5}}",
        "udp": "{scheme: udp, rate: 8Mbit, start: 1, stop: 6}",
        "arrivals": "{scheme: cubic, arrivals: {rate: 30/s, size: {pareto: {mean: 50KB, shape: 1.2}}}}",
        "rwnd": "{scheme: cubic, rwnd: 64KB}",
        "nosack": "{scheme: reno, tcp: {sack: false, rtt-granularity: 1ms}}",
        "reverse": "{scheme: vegas, direction: '<-', flows: 2, right-rate: 50Mbit}",
    }
    for name, f in workloads.items():
        s[f"work-{name}"] = _dumbbell([f, "{scheme: cubic, start: 0.5}"], queue="1bdp")
    s["topo-parking-lot"] = (ROOT / "examples/parking-lot.yaml").read_text().replace(
        "duration: 20", "duration: 8\nhost: {noise: exact}")
    noisy = {"cubic-vegas": ["{scheme: cubic, flows: 2}", "{scheme: vegas, start: 1}"],
             "bbr-reverse": ["{scheme: bbr, flows: 2}", "{scheme: reno, direction: '<-'}"],
             "arrivals": ["{scheme: cubic, arrivals: {rate: 30/s, size: 50KB}}",
                          "{scheme: cubic, start: 0.5}"]}
    for name, flows in noisy.items():
        s[f"noise-{name}"] = _dumbbell(flows, queue="1bdp").replace(
            "host: {noise: exact}", "host: {noise: kernel}")
    # The phase-locked layout (every link at the bottleneck rate, zero delay): with noise both
    # flows get a share; with exact timing CUBIC's side link starves BBR.
    s["noise-phase-layout"] = """duration: 8
seed: 7
central: {rate: 100Mbit, delay: 0ms, queue: 1000}
flows:
  - {scheme: cubic, left-rate: 100Mbit, right-rate: 100Mbit, left-queue: 1000, right-queue: 1000}
  - {scheme: bbr, left-rate: 100Mbit, right-rate: 100Mbit, left-queue: 1000, right-queue: 1000}
"""
    return s


def _coco_layout() -> dict:
    import ccbench
    exp = ccbench.load_experiment(ROOT / "examples/coco/layout.yml", seed=3,
                                  coco={"base": "10ms", "runtime": 8})
    exp["host_noise"] = None  # exact timing, as the native scenarios of the original matrix
    return exp


def digest_of(results) -> dict[str, str]:
    out = {}
    for name in ("packets", "flows", "queues", "intervals", "delay_hist", "flowstats", "conns"):
        df = getattr(results, name)
        if df is None:
            continue
        out[name] = hashlib.sha256(df.write_csv().encode()).hexdigest()[:16]
    return out


def compute(only: list[str] | None = None) -> dict[str, dict[str, str]]:
    sys.path.insert(0, str(ROOT / "python"))
    import ccbench
    result: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        items = list(scenarios().items()) + [("coco-layout", None)]
        for name, text in items:
            if only and name not in only:
                continue
            if text is None:
                exp = _coco_layout()
            else:
                f = tmp / f"{name}.yaml"
                f.write_text(text)
                exp = ccbench.load_experiment(f)
            res = ccbench.run(exp, tmp / "out" / name)
            result[name] = digest_of(res)
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="record a new baseline")
    ap.add_argument("--only", nargs="*", help="scenario names")
    args = ap.parse_args(argv)
    got = compute(args.only)
    if args.write:
        BASELINE.parent.mkdir(parents=True, exist_ok=True)
        BASELINE.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(got)} scenarios to {BASELINE}")
        return 0
    want = json.loads(BASELINE.read_text())
    bad = [(n, t) for n, tables in got.items() for t in sorted(set(tables) | set(want.get(n, {})))
           if tables.get(t) != want.get(n, {}).get(t)]
    for n, t in bad:
        print(f"DIFFERENT: {n} {t}")
    print(f"{len(got)} scenarios, {len(bad)} tables differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
