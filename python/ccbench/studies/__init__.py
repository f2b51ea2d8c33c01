"""The source studies as one-command reproductions (examples/studies/, docs/studies.md).

    ccbench study bbr-vs-cubic -o results/study-bbr-vs-cubic            # full scale
    ccbench study bbr-vs-cubic --scale medium -o results/s               # one rate, 1 trial
    ccbench study bbr-vs-cubic --reduced -o /tmp/s                        # CI scale
    ccbench study coco-beholder --kernel -o results/study-coco            # + kernel runs (root)

Each study runs its checked-in campaign file(s) (``examples/studies/<name>/*.yaml``) through
the campaign layer, reads the runs back and scores every claim of the paper
(``examples/studies/<name>/claims.yaml``, ccbench.studies.claims) against the numbers it
published (``published.yaml``), writing RESULTS.md and figures. The CLI exits 1 when a claim's
verdict is not the one ``known-differences.yaml`` records.
"""
from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .common import (STUDIES_DIR, Check, Ctx, Output, load_doc, run_campaign_doc,
                     write_results_md)

# CLI name -> module, in the order of docs/studies.md
STUDIES = {
    "bbr-vs-cubic": "bbr_cubic",
    "coco-beholder": "coco",
    "mobile-broadband": "mobile",
    "cdg-hldg": "cdg",
    "linux-evolution": "linux_evolution",
}


@dataclass
class StudyResult:
    name: str
    out: Path
    output: Output
    results_md: Path

    @property
    def ok(self) -> bool:
        return self.output.ok


def module(name: str):
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; known studies: {', '.join(STUDIES)}")
    return importlib.import_module(f".{STUDIES[name]}", __name__)


def scorers(name: str):
    """The study's claim scorers (``SCORERS``), kept in ``<module>_claims`` apart from its runs
    and tables."""
    module(name)  # the name check
    return importlib.import_module(f".{STUDIES[name]}_claims", __name__).SCORERS


SCALES = ("reduced", "medium", "full")


def _campaign_docs(mod, name: str, scale: str, kernel: bool):
    """(key, path, document at ``scale``, kernel subset's document or None) per campaign of a
    study: what study_plan estimates and run_study runs."""
    for key, fname in mod.CAMPAIGNS.items():
        doc, path = load_doc(name, fname)
        if scale != "full":
            doc = mod.reduce(key, doc, scale)
        kdoc = mod.kernel(key, doc, scale) if kernel else None
        if kdoc is not None:
            kdoc = dict(kdoc)
            kdoc.pop("expect", None)  # the file's expectations name points the subset lacks
        yield key, path, doc, kdoc


def study_plan(name: str, scale: str = "full", kernel: bool = False) -> list[dict]:
    """What ``run_study`` would run, before running it: per campaign (and kernel subset) its
    backend, runs, simulated seconds and an estimate of the wall time (simulator: the run
    budget's event estimate at its events/s, one core; kernel: real time plus ~2 s set-up per
    run)."""
    import copy
    import warnings

    from .. import budget
    from ..campaign import parse_campaign, plan as make_plan
    mod = module(name)
    rows = []
    for key, path, doc, kdoc in _campaign_docs(mod, name, scale, kernel):
        subsets = [(key, "sim", doc)] + ([(f"{key}-kernel", "emu", kdoc)] if kdoc else [])
        for label, backend, d in subsets:
            with warnings.catch_warnings():  # the run prints them; the estimate need not
                warnings.simplefilter("ignore")
                p = make_plan(parse_campaign(copy.deepcopy(d), source=str(path)), backend=backend)
            runs = list(p.iter_runs()) if not p.lazy else list(p.sample)
            scale_up = p.n_runs / max(len(runs), 1)
            secs = sum(r.experiment["duration_ns"] for r in runs if r.experiment) / 1e9 * scale_up
            if backend == "sim":
                est = sum(budget.estimate(r.experiment).wall_s for r in runs if r.experiment)
                est *= scale_up
            else:
                est = secs + 2.0 * p.n_runs
            rows.append({"campaign": label, "backend": backend, "runs": p.n_runs,
                         "seconds": secs, "estimate_s": est})
    return rows


def plan_text(name: str, scale: str, rows: list[dict], jobs: int | None = None) -> str:
    """One line per campaign of :func:`study_plan`, and the total."""
    import os
    cores = jobs or os.cpu_count() or 1

    def t(s: float) -> str:
        return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"
    lines = [f"study {name} at {scale} scale:"]
    total = 0.0
    for r in rows:
        wall = r["estimate_s"] / (cores if r["backend"] == "sim" else 1)
        total += wall
        what = "simulator" if r["backend"] == "sim" else "kernel, real time, one at a time"
        lines.append(f"  {r['campaign']}: {r['runs']:,} runs ({what}), {r['seconds']:,.0f} s "
                     f"of experiment, ~{t(wall)}")
    lines.append(f"  in all ~{t(total)} (rough: the simulator's from the run budget's event "
                 f"estimate on {cores} worker{'s' if cores > 1 else ''}; finished runs in DIR "
                 "are skipped)")
    return "\n".join(lines)


def run_study(name: str, out: str | Path, *, scale: str = "full", reduced: bool = False,
              kernel: bool = False,
              jobs: int | None = None, publish: bool = False, progress=False,
              analyse_only: bool = False) -> StudyResult:
    """Run (or resume) every campaign of a study into ``out/<campaign>/``, the kernel subset
    into ``out/<campaign>-kernel/`` when ``kernel``, then analyse and write
    ``out/RESULTS.md`` and ``out/figures/``. ``publish`` also copies them into the study's
    directory under examples/studies/. ``analyse_only`` reuses finished runs without running.
    ``scale``: full (the campaign files as checked in), medium (what fits in minutes on two
    cores) or reduced (CI: seconds); ``reduced=True`` is ``scale="reduced"``."""
    mod = module(name)
    scale = "reduced" if reduced else scale
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; use one of {', '.join(SCALES)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    index, kindex, docs, kfail = {}, {}, {}, []
    for key, path, doc, kdoc in _campaign_docs(mod, name, scale, kernel):
        docs[key] = doc
        if analyse_only:
            index[key] = pl.read_parquet(out / key / "index.parquet")
        else:
            index[key] = run_campaign_doc(doc, path, out / key, jobs=jobs, progress=progress)
        if kdoc is not None:
            if analyse_only:
                kindex[key] = pl.read_parquet(out / f"{key}-kernel" / "index.parquet")
            else:
                kindex[key] = run_campaign_doc(kdoc, path, out / f"{key}-kernel",
                                               backend="emu", progress=progress,
                                               failures=kfail)
                if not kindex[key].height:
                    del kindex[key]
    ctx = Ctx(out=out, scale=scale, index=index, kernel_index=kindex, docs=docs,
              figdir=out / "figures")
    output = mod.analyse(ctx)
    from . import claims as cl
    sdir = STUDIES_DIR / name
    claim_list = cl.load_claims(sdir)
    output.claims = cl.score_all(claim_list, scorers(name), mod.measure(ctx),
                                 cl.load_known(sdir, [c.id for c in claim_list]))
    if kfail:
        output.notes.append(f"{len(kfail)} kernel run(s) failed and are missing from the kernel "
                            "columns (rerun the same command to retry them): "
                            + "; ".join(kfail[:5]))
    # the campaign files' own expect: lists (docs/expectations.md, "Campaigns"), evaluated on
    # the campaigns as they ran at this scale
    from ..campaign import check as campaign_check
    for key in mod.CAMPAIGNS:
        if not docs[key].get("expect"):
            continue
        path = STUDIES_DIR / name / mod.CAMPAIGNS[key]
        for v in campaign_check(out / key, path, index=index[key]):
            measured = v.line().split(f"{v.name}: ", 1)[-1]
            output.checks.append(Check(f"`{mod.CAMPAIGNS[key]}` expect: {v.name}", v.passed,
                                       measured))
    cmd = (f"ccbench study {name}" + (f" --scale {scale}" if scale != "full" else "")
           + (" --kernel" if kernel else "") + " -o DIR")
    md = write_results_md(out, title=mod.TITLE, study=name, scale=scale, kernel=bool(kindex),
                       ctx=ctx, output=output, command=cmd, intro=mod.INTRO)
    if publish:
        dest = STUDIES_DIR / name
        shutil.copy(md, dest / "RESULTS.md")
        if (out / "figures").is_dir():
            shutil.rmtree(dest / "figures", ignore_errors=True)
            shutil.copytree(out / "figures", dest / "figures")
    return StudyResult(name=name, out=out, output=output, results_md=md)


__all__ = ["SCALES", "STUDIES", "StudyResult", "module", "run_study", "scorers"]
