"""A study scored claim by claim against its paper: the fixed list, the verdicts, the known
differences.

Three data files beside each study (``examples/studies/<study>/``) and one function per claim:

    claims.yaml               the paper's claims, one entry per id (BC-7, MB-12, ...): the claim,
                              where the paper makes it, the number it prints, the acceptance test
                              derived from the paper's own spread, and ``testable: false`` with
                              the reason where the project cannot test it. It is the fixed
                              denominator: the M of "N of M" is its length, nothing else.
    published.yaml            the paper's numbers the scorers compare with
    known-differences.yaml    every claim that is not reproduced: the verdict it gets, at which
                              scales, and the measured explanation (the simulator differs from
                              today's Linux / today's Linux differs from the paper's testbed / the
                              paper's setup is ambiguous), with the kernel measurement behind it

    scorers = Scorers()

    @scorers("BC-7")
    def bc7(d: Data) -> Score:          # d.sim, d.kernel: the study's per-run tables; d.pub
        ...                             # the published numbers; d.scale
        return Score.test(loss_ok and persistent, f"mean loss {x:.1f} %", kernel=...)

A scorer only measures and judges; it never reads known-differences.yaml. So a test can plant
a wrong simulator number (a changed row of ``d.sim``) or a wrong published one (a changed
``d.pub``) and see the verdict change (tests/test_study_claims.py).

A study run is *as recorded* when every claim's verdict equals the one the known-differences
file records for this scale (reproduced when it records nothing; below full scale a claim may
also lack the runs it needs, "too few runs at this scale"); ``ccbench study`` exits 1
otherwise, so a claim that starts or stops being reproduced is noticed and the file updated.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

REPRODUCED, PARTLY, NOT, NOT_TESTABLE, TOO_FEW = (
    "reproduced", "partly", "not reproduced", "not testable", "too few runs at this scale")
VERDICTS = (REPRODUCED, PARTLY, NOT, NOT_TESTABLE, TOO_FEW)
OUTCOMES = {
    "model": "the simulator differs from today's Linux",
    "testbed": "today's Linux differs from the paper's testbed",
    "setup": "the paper's setup is ambiguous",
    "paper": "the paper's text and its own numbers disagree",
    "noise": "inside the run-to-run spread on the simulator and on Linux alike",
    "open": "cause not yet established",
}
SCALES = ("reduced", "medium", "full")


# ---------------------------------------------------------------------------- the fixed list

@dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    where: str
    paper: str
    acceptance: str
    testable: bool = True
    why: str = ""          # why not testable
    qualitative: bool = False


def load_claims(study_dir: Path) -> list[Claim]:
    """The study's claims.yaml, checked: unique ids, every field present, a reason for every
    claim that is not testable."""
    path = study_dir / "claims.yaml"
    doc = yaml.safe_load(path.read_text())
    out, seen = [], set()
    for i, c in enumerate(doc.get("claims") or []):
        where = f"{path.name}: claims[{i}]"
        for k in ("id", "claim", "where", "paper", "acceptance"):
            if not isinstance(c.get(k), str) or not c[k].strip():
                raise ValueError(f"{where}.{k}: missing (every claim states it)")
        if c["id"] in seen:
            raise ValueError(f"{where}.id: {c['id']} appears twice")
        seen.add(c["id"])
        testable = c.get("testable", True)
        if not testable and not c.get("why"):
            raise ValueError(f"{where}.why: a claim that is not testable says why")
        out.append(Claim(id=c["id"], claim=c["claim"].strip(), where=c["where"],
                         paper=str(c["paper"]).strip(), acceptance=c["acceptance"].strip(),
                         testable=bool(testable), why=c.get("why", "").strip(),
                         qualitative=bool(c.get("qualitative", False))))
    if not out:
        raise ValueError(f"{path}: no claims")
    return out


@dataclass(frozen=True)
class Known:
    id: str
    verdict: str
    scales: tuple[str, ...]
    outcome: str
    explanation: str
    #: the entry holds only for runs with (True) or without (False) the kernel subset;
    #: None: either way
    kernel: bool | None = None


def load_known(study_dir: Path, ids: Iterable[str]) -> dict[str, list[Known]]:
    path = study_dir / "known-differences.yaml"
    if not path.is_file():
        return {}
    doc = yaml.safe_load(path.read_text()) or {}
    ids = set(ids)
    causes = doc.get("causes") or {}
    if not isinstance(causes, dict) or not all(str(v).strip() for v in causes.values()):
        raise ValueError(f"{path.name}: causes: a map of name: explanation, each non-empty")
    out: dict[str, list[Known]] = {}
    for i, k in enumerate(doc.get("differences") or []):
        where = f"{path.name}: differences[{i}]"
        named = k.get("cause") or []
        named = [named] if isinstance(named, str) else list(named)
        unknown = [c for c in named if c not in causes]
        if unknown:
            raise ValueError(f"{where}.cause: {unknown} not in causes: (it has "
                             f"{', '.join(causes) or 'none'})")
        own = str(k.get("explanation") or "").strip()
        k = {**k, "explanation": " ".join(([own] if own else [])
                                          + [str(causes[c]).strip() for c in named])}
        if k.get("id") not in ids:
            raise ValueError(f"{where}.id: {k.get('id')!r} is not a claim of claims.yaml")
        if k.get("verdict") not in (PARTLY, NOT, TOO_FEW):
            raise ValueError(f"{where}.verdict: {k.get('verdict')!r}; write one of "
                             f"{PARTLY!r}, {NOT!r}, {TOO_FEW!r}")
        scales = tuple(k.get("scales") or SCALES)
        bad = [s for s in scales if s not in SCALES]
        if bad:
            raise ValueError(f"{where}.scales: {bad}; write some of {', '.join(SCALES)}")
        if k.get("outcome") not in OUTCOMES:
            raise ValueError(f"{where}.outcome: {k.get('outcome')!r}; write one of "
                             f"{', '.join(OUTCOMES)}")
        if not str(k.get("explanation", "")).strip():
            raise ValueError(f"{where}.explanation: missing (the measurement behind it, "
                             "or cause: naming an entry of causes:)")
        kern = k.get("kernel")
        if kern not in (None, True, False):
            raise ValueError(f"{where}.kernel: {kern!r}; write true (only with --kernel) or "
                             "false (only without), or leave it out")
        out.setdefault(k["id"], []).append(Known(
            id=k["id"], verdict=k["verdict"], scales=scales, outcome=k["outcome"],
            explanation=" ".join(str(k["explanation"]).split()), kernel=kern))
    return out


# ---------------------------------------------------------------------------- scoring

@dataclass
class Score:
    verdict: str
    sim: str
    kernel: str = ""

    @staticmethod
    def test(passed: bool, sim: str, *, kernel: str = "", partly: bool = False) -> "Score":
        """Reproduced when the acceptance test passes; partly when only the claim's direction
        or shape holds (``partly``); not reproduced otherwise."""
        return Score(REPRODUCED if passed else (PARTLY if partly else NOT), sim, kernel)

    @staticmethod
    def cells(k: int, n: int, sim: str, *, kernel: str = "") -> "Score":
        """A multi-cell table: reproduced with >= 90 % of the cells passing, partly >= 50 %."""
        if n == 0:
            return Score(TOO_FEW, sim or "no cell of the table ran at this scale", kernel)
        f = k / n
        v = REPRODUCED if f >= 0.9 else PARTLY if f >= 0.5 else NOT
        return Score(v, f"{k} of {n} cells pass; " + sim if sim else f"{k} of {n} cells pass",
                     kernel)

    @staticmethod
    def named(tests: list[tuple[str, bool]], text: str = "", *, kernel: str = "") -> "Score":
        """Score.cells over named statements or cells; the failing ones are named."""
        bad = [n for n, ok in tests if not ok]
        t = text + ("; misses: " + ", ".join(bad[:12]) + (" …" if len(bad) > 12 else "")
                    if bad else "")
        return Score.cells(len(tests) - len(bad), len(tests), t.strip("; "), kernel=kernel)

    @staticmethod
    def too_few(sim: str) -> "Score":
        return Score(TOO_FEW, sim)


@dataclass
class Data:
    """What a scorer sees: the study's measured tables (simulator and kernel; any shape the
    study module chooses), the published numbers, the scale."""

    sim: Any
    kernel: Any
    pub: dict
    scale: str
    extra: dict = field(default_factory=dict)


Scorer = Callable[[Data], Score]


class Scorers(dict):
    """id -> scorer; ``@scorers("BC-7", "BC-11")`` registers one function for several ids
    (it is then called once per id with ``d.extra["id"]`` set)."""

    def __call__(self, *ids: str):
        def deco(fn: Scorer) -> Scorer:
            for i in ids:
                if i in self:
                    raise ValueError(f"two scorers for {i}")
                self[i] = fn
            return fn
        return deco


@dataclass
class Scored:
    claim: Claim
    score: Score
    known: Known | None = None
    scale: str = "full"

    @property
    def as_recorded(self) -> bool:
        """The verdict is the one recorded: reproduced (or not testable, as the list says)
        with no entry, or the entry's verdict at this scale. Below full scale a claim may
        lack the runs it needs (too few runs at this scale); at full scale it may not."""
        if not self.claim.testable:
            return self.score.verdict == NOT_TESTABLE
        if self.score.verdict == TOO_FEW and self.scale != "full" and not self.known:
            return True
        want = self.known.verdict if self.known else REPRODUCED
        return self.score.verdict == want

    def problem(self) -> str:
        if self.as_recorded:
            return ""
        if self.known:
            return (f"{self.claim.id}: {self.score.verdict} but known-differences.yaml records "
                    f"{self.known.verdict!r}: update the file ({self.score.sim})")
        return (f"{self.claim.id}: {self.score.verdict} and no entry in "
                f"known-differences.yaml explains it ({self.score.sim})")


def score_all(claims: list[Claim], scorers: Scorers, data: Data,
              known: dict[str, list[Known]]) -> list[Scored]:
    extra = [i for i in scorers if i not in {c.id for c in claims}]
    if extra:
        raise ValueError(f"scorers for ids that are not claims: {extra}")
    # whether the kernel subset ran: a study's kernel tables (a dict of them or one table)
    has_kernel = data.kernel is not None and (
        not isinstance(data.kernel, dict) or any(v is not None for v in data.kernel.values()))
    out = []
    for c in claims:
        if not c.testable:
            s = Score(NOT_TESTABLE, c.why)
        elif c.id not in scorers:
            s = Score(NOT, "no scorer yet: the claim is not measured (counted as not reproduced)")
        else:
            data.extra["id"] = c.id
            s = scorers[c.id](data)
        k = next((k for k in known.get(c.id, []) if data.scale in k.scales
                  and k.kernel in (None, has_kernel)), None)
        out.append(Scored(c, s, k, data.scale))
    return out


def tally(scored: list[Scored]) -> dict[str, int]:
    t = {v: 0 for v in VERDICTS}
    for s in scored:
        t[s.score.verdict] += 1
    return t


def summary(scored: list[Scored]) -> str:
    t = tally(scored)
    m = len(scored)
    explained = sum(1 for s in scored if s.score.verdict in (PARTLY, NOT) and s.known
                    and s.known.outcome != "open")
    parts = [f"{t[REPRODUCED]} of {m} claims reproduced", f"{t[PARTLY]} partly",
             f"{t[NOT]} not reproduced", f"{t[NOT_TESTABLE]} not testable"]
    if t[TOO_FEW]:
        parts.append(f"{t[TOO_FEW]} with too few runs at this scale")
    return ", ".join(parts) + f"; {explained} of the {t[PARTLY] + t[NOT]} misses explained"


def markdown(scored: list[Scored], kernel: bool) -> list[str]:
    head = ["| id | claim (where) | paper | acceptance | ccbench simulator"
            + (" | kernel" if kernel else "") + " | verdict |",
            "|---|---|---|---|---" + ("|---" if kernel else "") + "|---|"]
    rows = []
    for s in scored:
        c = s.claim
        v = s.score.verdict
        if s.known and v == s.known.verdict:
            v += f" — {OUTCOMES[s.known.outcome]}: {s.known.explanation}"
        elif not s.as_recorded:
            v += " (**not as recorded**: " + ("known-differences.yaml records "
                                              f"{s.known.verdict})" if s.known else "unexplained)")
        cells = [c.id, f"{_esc(c.claim)} ({c.where})", _esc(c.paper), _esc(c.acceptance),
                 _esc(s.score.sim)]
        if kernel:
            cells.append(_esc(s.score.kernel) or "–")
        cells.append(_esc(v))
        rows.append("| " + " | ".join(cells) + " |")
    return head + rows


def _esc(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------------------- judging helpers

def finite(*xs: float | None) -> bool:
    return all(x is not None and not math.isnan(x) for x in xs)


def default_band(ours: float, paper: float, kind: str = "other") -> bool:
    """The band used where the paper prints no spread (a project choice, marked *default band*
    in claims.yaml): shares and utilisations +-0.05; loss rates (in %) within a factor 1.5 or
    +-0.1 points; anything else within a factor 1.5 (d_r = |a-b|/((a+b)/2) <= 0.4)."""
    if not finite(ours, paper):
        return False
    eps = 1e-9  # printed values: 0.55 against 0.5 is inside +-0.05
    if kind == "share":
        return abs(ours - paper) <= 0.05 + eps
    if kind == "loss":
        return abs(ours - paper) <= 0.1 + eps or (min(ours, paper) > 0
                                                  and max(ours, paper) / min(ours, paper) <= 1.5 + eps)
    if ours == paper:
        return True
    return abs(ours - paper) / ((abs(ours) + abs(paper)) / 2) <= 0.4 + eps


def band_1_5(paper: float) -> tuple[float, float]:
    """The default band's bounds around a printed value (factor 1.5 as d_r <= 0.4)."""
    return paper * (1 - 0.2) / (1 + 0.2), paper * (1 + 0.2) / (1 - 0.2)


def order_holds(values: dict[str, float], order: str,
                runs: dict[str, list[float]] | None = None) -> bool:
    """``order`` as the paper writes it, e.g. "cubic >= reno > vegas" or "vegas > cubic = reno":
    ">" strict, ">=" the first no more than 5 % below the second, "=" within 5 % of each
    other (the list's conventions). With ``runs`` (each name's per-run values), ">" must also
    be resolved by them: the difference of the means above its one-sided 95 % bound under
    equal means (Welch's t), so that two values equal within the run-to-run spread are not
    read as an ordering; with fewer than two runs on a side there is no spread to judge and
    the plain comparison stands."""
    toks = order.split()
    names, ops = toks[0::2], toks[1::2]
    for a, op, b in zip(names, ops, names[1:]):
        x, y = values.get(a), values.get(b)
        if not finite(x, y):
            return False
        if op == ">" and not (x > y and _resolved(runs, a, b)):
            return False
        if op == ">=" and not x >= 0.95 * y:
            return False
        if op == "=" and not abs(x - y) <= 0.05 * max(abs(x), abs(y)):
            return False
        if op not in (">", ">=", "="):
            raise ValueError(f"unknown relation {op!r} in {order!r}")
    return True


def _resolved(runs: dict[str, list[float]] | None, a: str, b: str) -> bool:
    """mean(a) - mean(b) exceeds Welch's one-sided 95 % bound of the difference."""
    if not runs or a not in runs or b not in runs:
        return True
    diff, hw = welch(runs[a], runs[b])
    return diff > 0 if not finite(hw) else diff > hw


def welch(xa: list[float], xb: list[float]) -> tuple[float, float]:
    """mean(xa) - mean(xb) and the half-width of its two-sided 90 % interval (equally, its
    one-sided 95 % bound): Student's t with the Welch-Satterthwaite degrees of freedom, the
    campaign layer's ``t_quantile``. The half-width is NaN with fewer than two runs a side."""
    ma, sa, na = mean_sd(xa)
    mb, sb, nb = mean_sd(xb)
    if na < 2 or nb < 2:
        return ma - mb, float("nan")
    va, vb = sa * sa / na, sb * sb / nb
    if va + vb == 0:
        return ma - mb, 0.0
    from ..campaign.aggregate import t_quantile
    df = (va + vb) ** 2 / (va * va / (na - 1) + vb * vb / (nb - 1))
    return ma - mb, t_quantile(0.95, df) * math.sqrt(va + vb)


def mean_sd(xs: list[float]) -> tuple[float, float, int]:
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    n = len(xs)
    if not n:
        return float("nan"), float("nan"), 0
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else float("nan")
    return m, sd, n


def pm_text(m, h, fmt: str = ".2f") -> str:
    """``m ± h`` for a value and its half-width; "N/A" without a value and the value alone
    without a half-width (one run), never "nan ± nan"."""
    if m is None or not math.isfinite(m):
        return "N/A"
    if h is None or not math.isfinite(h):
        return f"{m:{fmt}}"
    return f"{m:{fmt}} ± {h:{fmt.lstrip('+')}}"


def pm(xs: list[float], fmt: str = ".2f", unit: str = "") -> str:
    """"mean ± sd (n runs)", or the single value at one run."""
    m, sd, n = mean_sd(xs)
    if n == 0:
        return "–"
    if n == 1:
        return f"{m:{fmt}}{unit} (1 run)"
    return f"{m:{fmt}} ± {sd:{fmt}}{unit} ({n} runs)"
