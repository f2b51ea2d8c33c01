"""Studies scored claim by claim (ccbench.studies.claims): the fixed lists are complete and
well-formed, the known differences name real claims, verdicts are judged as recorded, and the
checks have teeth: a planted wrong number (simulator or published) changes the verdict."""
from __future__ import annotations

import copy

import polars as pl
import pytest
import yaml

from ccbench.studies import STUDIES, module, scorers
from ccbench.studies import claims as cl
from ccbench.studies.common import STUDIES_DIR

# Each paper's fixed list: the id prefix and the number of claims it holds (every quantitative
# table and stated conclusion of the paper, docs/studies.md).
FIXED = {"coco-beholder": ("CB", 50), "cdg-hldg": ("CH", 41), "bbr-vs-cubic": ("BC", 21),
         "linux-evolution": ("LE", 27), "mobile-broadband": ("MB", 40)}


@pytest.mark.parametrize("name", list(STUDIES))
def test_every_study_scores_its_whole_fixed_list(name):
    prefix, m = FIXED[name]
    claims = cl.load_claims(STUDIES_DIR / name)
    assert [c.id for c in claims] == [f"{prefix}-{i}" for i in range(1, m + 1)]
    assert hasattr(module(name), "measure")
    testable = {c.id for c in claims if c.testable}
    missing = sorted(testable - set(scorers(name)), key=lambda i: int(i.split("-")[1]))
    assert not missing, f"testable claims without a scorer: {missing}"
    known = cl.load_known(STUDIES_DIR / name, [c.id for c in claims])
    for i, ks in known.items():
        assert i in testable, f"{i}: a known difference for a claim that is not testable"


def test_claims_file_errors_name_the_field(tmp_path):
    good = {"id": "X-1", "claim": "c", "where": "§1", "paper": "1", "acceptance": "a"}
    for bad, msg in (({**good, "where": ""}, r"claims\[0\]\.where: missing"),
                     ({**good, "testable": False}, r"claims\[0\]\.why"),):
        (tmp_path / "claims.yaml").write_text(yaml.safe_dump({"claims": [bad]}))
        with pytest.raises(ValueError, match=msg):
            cl.load_claims(tmp_path)
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump({"claims": [good, good]}))
    with pytest.raises(ValueError, match="X-1 appears twice"):
        cl.load_claims(tmp_path)
    for entry, msg in (({"id": "X-2"}, r"differences\[0\]\.id: 'X-2' is not a claim"),
                       ({"id": "X-1", "verdict": "fine"}, r"\.verdict: 'fine'; write one of"),
                       ({"id": "X-1", "verdict": "partly", "outcome": "luck"}, r"\.outcome"),
                       ({"id": "X-1", "verdict": "partly", "outcome": "model"}, r"\.explanation"),
                       ({"id": "X-1", "verdict": "partly", "outcome": "model", "explanation": "e",
                         "scales": ["huge"]}, r"\.scales")):
        (tmp_path / "known-differences.yaml").write_text(yaml.safe_dump({"differences": [entry]}))
        with pytest.raises(ValueError, match=msg):
            cl.load_known(tmp_path, ["X-1"])
    # a cause shared by several entries is written once and named
    base = {"id": "X-1", "verdict": "partly", "outcome": "model"}
    (tmp_path / "known-differences.yaml").write_text(yaml.safe_dump(
        {"causes": {"noise": "the link has no noise."},
         "differences": [{**base, "cause": "noise"}, {**base, "explanation": "At full scale 3 of 4;",
                                                       "cause": ["noise"], "scales": ["full"]}]}))
    got = cl.load_known(tmp_path, ["X-1"])["X-1"]
    assert [k.explanation for k in got] == ["the link has no noise.",
                                            "At full scale 3 of 4; the link has no noise."]
    # an entry may hold only with (kernel: true) or without (false) the kernel subset
    (tmp_path / "known-differences.yaml").write_text(yaml.safe_dump({"differences": [
        {**base, "explanation": "no kernel", "verdict": cl.TOO_FEW, "kernel": False},
        {**base, "explanation": "kernel"}]}))
    known = cl.load_known(tmp_path, ["X-1"])
    c = cl.Claim("X-1", "c", "§1", "1", "a")
    for kern, verdict in ((None, cl.TOO_FEW), ({"t": 1}, cl.PARTLY)):
        d = cl.Data(sim=None, kernel=kern, pub={}, scale="full")
        (got,) = cl.score_all([c], {"X-1": lambda d, v=verdict: cl.Score(v, "")}, d, known)
        assert got.as_recorded and got.known.explanation == ("kernel" if kern else "no kernel")
    (tmp_path / "known-differences.yaml").write_text(yaml.safe_dump(
        {"differences": [{**base, "explanation": "e", "kernel": "yes"}]}))
    with pytest.raises(ValueError, match=r"\.kernel: 'yes'"):
        cl.load_known(tmp_path, ["X-1"])
    (tmp_path / "known-differences.yaml").write_text(yaml.safe_dump(
        {"causes": {"noise": "n"}, "differences": [{**base, "cause": "nois"}]}))
    with pytest.raises(ValueError, match=r"differences\[0\]\.cause: \['nois'\] not in causes"):
        cl.load_known(tmp_path, ["X-1"])


def test_verdicts_are_judged_as_recorded():
    c = cl.Claim("X-1", "c", "§1", "1", "a")
    k = cl.Known("X-1", cl.NOT, ("full",), "model", "measured")
    assert cl.Scored(c, cl.Score(cl.REPRODUCED, "")).as_recorded
    assert not cl.Scored(c, cl.Score(cl.NOT, "")).as_recorded
    assert cl.Scored(c, cl.Score(cl.NOT, ""), k).as_recorded
    assert not cl.Scored(c, cl.Score(cl.REPRODUCED, ""), k).as_recorded   # stale entry
    assert cl.Scored(c, cl.Score(cl.TOO_FEW, ""), None, "reduced").as_recorded
    assert not cl.Scored(c, cl.Score(cl.TOO_FEW, ""), None, "full").as_recorded
    assert cl.Score.cells(9, 10, "").verdict == cl.REPRODUCED
    assert cl.Score.cells(5, 10, "").verdict == cl.PARTLY
    assert cl.Score.cells(4, 10, "").verdict == cl.NOT


def test_orderings_and_bands_follow_the_conventions():
    v = {"cubic": 100.0, "reno": 96.0, "vegas": 50.0}
    assert cl.order_holds(v, "cubic >= reno > vegas")
    assert not cl.order_holds(v, "reno > cubic > vegas")
    assert cl.order_holds(v, "cubic = reno > vegas")          # within 5 %
    assert not cl.order_holds({**v, "reno": 90.0}, "cubic = reno > vegas")
    assert not cl.order_holds({**v, "reno": 94.0}, "reno >= cubic")
    assert cl.default_band(0.55, 0.5, "share") and not cl.default_band(0.56, 0.5, "share")
    assert cl.default_band(14.9, 10, "loss") and not cl.default_band(15.1, 10, "loss")
    assert cl.default_band(0.15, 0.06, "loss")                 # +-0.1 points
    # with the runs, ">" must be resolved beyond their spread: 290 vs 287 over noisy runs is a tie
    runs = {"reno": [285.0, 290.0, 295.0], "vegas": [282.0, 287.0, 292.0]}
    assert cl.order_holds({"reno": 290.0, "vegas": 287.0}, "reno > vegas")
    assert not cl.order_holds({"reno": 290.0, "vegas": 287.0}, "reno > vegas", runs)
    runs["vegas"] = [96.0, 97.0, 98.0]
    assert cl.order_holds({"reno": 290.0, "vegas": 97.0}, "reno > vegas", runs)
    lo, hi = cl.band_1_5(10)
    assert lo == pytest.approx(6.667, abs=1e-3) and hi == pytest.approx(15.0)
    assert cl.default_band(hi, 10) and not cl.default_band(hi * 1.01, 10)


# ---------------------------------------------------------------------------- BBR vs CUBIC

BDPS = (0.25, 0.5, 0.75, 1.25, 1.5, 1.75, 2, 4, 8)
VARIANTS = ("bbr-2", "bbr-4", "bbr-8", "mix-1+1", "mix-2+2", "mix-4+4", "shallow-4",
            "shallow-2+2", "cubic-4")
MIX_SHARE = {0.25: 0.95, 0.5: 0.95, 0.75: 0.93, 1.25: 0.9, 1.5: 0.75, 1.75: 0.72, 2: 0.7,
             4: 0.6, 8: 0.3}
SHALLOW_SHARE = {0.25: 0.9, 0.5: 0.9, 0.75: 0.88, 1.25: 0.8, 1.5: 0.62, 1.75: 0.6, 2: 0.55,
                 4: 0.3, 8: 0.2}


def _bc_row(v, r, b, k):
    bbr_alone = v.startswith(("bbr", "shallow-4"))
    shallow = b <= 0.75
    if v == "cubic-4":
        loss = 0.03
    elif v == "shallow-4":
        loss = (5.0 + 0.1 * k) if b <= 0.75 else (0.4 + 0.05 * k) if b == 1.25 else 0.0
    else:
        loss = (10.0 + 0.2 * k) if shallow else 1.0 if b == 1.25 else 0.05 if b < 2 else 0.0
    nflows = {"bbr-2": 2, "bbr-8": 8}.get(v, 4)
    share = (MIX_SHARE if v.startswith("mix") else SHALLOW_SHARE if v == "shallow-2+2"
             else {})
    return {"variant": v, "rate_mbps": float(r), "bdp": float(b), "repeat": k,
            "bbr_mbps": 0.98 * r, "cubic_mbps": 0.0, "util": 0.98,
            "share": share.get(b, float("nan")), "loss_pct": loss,
            "queue_bdp": 6.0 if v == "cubic-4" else 1.1, "bbr_iqr": 0.02 if b <= 1.25 else 0.3,
            "flow_mbps": [r / nflows] * nflows, "loss_frac": 1.0 if shallow else 0.8 if b == 1.25 else 0.3,
            "queue_p99_bdp": 1.4, "queue_max_bdp": 8 * 1500 / 1514 if v == "cubic-4" else 1.6,
            "limit_bdp": b * 1500 / 1514, "rtt_bbr_ms": 55.0, "rtt_cubic_ms": 210.0,
            "period_s": 20.0 if b == 1.75 else float("nan"),
            "probe_alt": 0.7 if (v == "mix-2+2" and b == 1.75) else float("nan"),
            "probe_drop_ratio": 2.0 if (v == "mix-2+2" and b == 1.75) else float("nan"),
            "probe_n": 20 if (v == "mix-2+2" and b == 1.75) else 0,
            "probe_min_ms": 25.5 if (v == "mix-2+2" and b == 1.75) else float("nan"),
            "probe_max_ms": 61.0 if (v == "mix-2+2" and b == 1.75) else float("nan"),
            "probe_sync": 1.0 if (v == "bbr-4" and b == 8) else float("nan")} | (
        {} if bbr_alone or v.startswith(("mix", "shallow-2")) else {})


def _bc_data(pub=None) -> cl.Data:
    from ccbench.studies import bbr_cubic
    rows = [_bc_row(v, r, b, k) for v in VARIANTS for r in (40, 80, 120) for b in BDPS
            for k in range(3)]
    step = pl.DataFrame([{"run": str(i), "after_drop_mbps": 10.0, "reach18_s": 0.5,
                          "plateau_bins": 1} for i in range(3)])
    return cl.Data(sim={"main": pl.DataFrame(rows), "step": step},
                   kernel={"main": None, "step": None},
                   pub=pub or bbr_cubic.published(), scale="full")


def _bc_verdicts(d: cl.Data) -> dict[str, str]:
    from ccbench.studies import bbr_cubic_claims
    claims = cl.load_claims(STUDIES_DIR / "bbr-vs-cubic")
    return {s.claim.id: s.score.verdict for s in cl.score_all(claims, bbr_cubic_claims.SCORERS, d, {})}


def _plant(d: cl.Data, where: dict, **values) -> cl.Data:
    d = copy.copy(d)
    m = d.sim["main"]
    cond = pl.lit(True)
    for k, v in where.items():
        cond = cond & (pl.col(k) == v)
    d.sim = {**d.sim, "main": m.with_columns(
        [pl.when(cond).then(pl.lit(v)).otherwise(pl.col(k)).alias(k) for k, v in values.items()])}
    return d


def test_bbr_cubic_scorers_pass_on_the_papers_picture():
    v = _bc_verdicts(_bc_data())
    assert v.pop("BC-21") == cl.NOT_TESTABLE
    assert set(v.values()) == {cl.REPRODUCED}, v


@pytest.mark.parametrize("claim, where, values", [
    ("BC-7", {"variant": "bbr-4", "rate_mbps": 80.0, "bdp": 0.5}, {"loss_pct": 3.0}),
    ("BC-7", {"variant": "bbr-4", "rate_mbps": 80.0, "bdp": 0.5}, {"loss_frac": 0.5}),
    ("BC-3", {"variant": "bbr-8", "bdp": 8.0}, {"queue_bdp": 2.0}),
    ("BC-4", {"variant": "bbr-4", "bdp": 8.0}, {"queue_p99_bdp": 2.5}),
    ("BC-11", {"variant": "mix-2+2", "rate_mbps": 80.0, "bdp": 0.5}, {"loss_pct": 4.0}),
    ("BC-12", {"variant": "mix-2+2", "rate_mbps": 80.0, "bdp": 0.5}, {"share": 0.7}),
    ("BC-14", {"variant": "mix-2+2", "rate_mbps": 80.0, "bdp": 1.75}, {"period_s": 10.0}),
    ("BC-15", {"variant": "mix-2+2", "bdp": 1.75}, {"probe_alt": 0.1}),
    ("BC-17", {"variant": "mix-2+2", "rate_mbps": 80.0, "bdp": 1.75}, {"share": 0.8}),
    ("BC-18", {"variant": "mix-2+2", "bdp": 8.0}, {"share": 0.55}),
    ("BC-19", {"variant": "shallow-4"}, {"loss_pct": 10.1}),
    ("BC-20", {"variant": "shallow-2+2", "bdp": 2.0}, {"share": 0.45}),
    ("BC-6", {"variant": "bbr-4"}, {"rtt_bbr_ms": 100.0}),
])
def test_bbr_cubic_a_planted_wrong_simulator_number_fails_its_claim(claim, where, values):
    v = _bc_verdicts(_plant(_bc_data(), where, **values))
    assert v[claim] in (cl.PARTLY, cl.NOT), (claim, v[claim])


def test_bbr_cubic_a_planted_wrong_published_number_fails_its_claim():
    from ccbench.studies import bbr_cubic
    pub = copy.deepcopy(bbr_cubic.published())
    pub["BC-11"]["loss_pct"] = 25        # the paper's "about 10 %" misread
    pub["BC-7"]["loss_pct"] = 3
    v = _bc_verdicts(_bc_data(pub))
    assert v["BC-11"] in (cl.PARTLY, cl.NOT) and v["BC-7"] in (cl.PARTLY, cl.NOT)


def test_bc17_forgives_one_rise_inside_the_trials_noise_only():
    """BC-17: a rise of the mean share from 1.5 to 1.75 BDP that the three trials' spread covers
    is not an inversion; the same rise with one trial per buffer cannot be judged."""
    d = _plant(_bc_data(), {"variant": "mix-2+2", "rate_mbps": 80.0, "bdp": 1.75, "repeat": 0},
               share=0.86)                      # 1.75 BDP: 0.86 / 0.72 / 0.72, mean 0.767 > 0.75
    assert _bc_verdicts(d)["BC-17"] == cl.REPRODUCED
    one = copy.copy(d)
    one.sim = {**d.sim, "main": d.sim["main"].filter(pl.col("repeat") == 0)}
    assert _bc_verdicts(one)["BC-17"] == cl.TOO_FEW


def test_a_value_with_no_spread_is_never_printed_as_nan():
    from ccbench.studies.claims import pm_text
    assert pm_text(float("nan"), float("nan"), "+.2f") == "N/A"
    assert pm_text(1.5, float("nan"), "+.2f") == "+1.50"
    assert pm_text(-1.234, 0.5, "+.2f") == "-1.23 ± 0.50"
    assert pm_text(None, 1.0) == "N/A"
