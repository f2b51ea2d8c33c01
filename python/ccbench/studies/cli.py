"""`ccbench study NAME`: the CLI of the study reproductions (kept here so that cli.py only
registers it)."""
from __future__ import annotations

import sys


def add_parser(sub) -> None:
    from . import STUDIES
    st = sub.add_parser(
        "study", help="reproduce one of the source studies: run its campaigns, compare with "
        "the published numbers, score every claim of the paper, write RESULTS.md",
        description="Run a study of examples/studies/ (docs/studies.md) end to end: its "
        "campaign file(s) through the campaign layer (resumable: finished runs in DIR are "
        "kept), then DIR/RESULTS.md with published | simulator | kernel tables, the study's "
        "claims scored one by one, and figures in DIR/figures. Exit code 1 when a claim's verdict "
        "is not the one its known-differences.yaml records (docs/studies.md).")
    st.add_argument("name", choices=list(STUDIES) + ["all"], help="the study (or all)")
    st.add_argument("-o", "--output", help="output directory (default results/study-<name>; "
                    "with 'all': one subdirectory per study)")
    st.add_argument("--scale", choices=("full", "medium", "reduced"), default="full",
                    help="full: the campaign files as checked in (default); medium: what fits "
                         "in minutes on two cores; reduced: the CI scale (seconds per study)")
    st.add_argument("--reduced", action="store_true", help="the same as --scale reduced")
    st.add_argument("--kernel", action="store_true",
                    help="also run the study's kernel subset on the emulation backend "
                         "(root; real time, the schemes this kernel has)")
    st.add_argument("-j", "--jobs", type=int,
                    help="local worker processes for the simulator runs (default every core)")
    st.add_argument("--publish", action="store_true",
                    help="copy RESULTS.md and figures/ into examples/studies/<name>/")
    st.add_argument("--analyse-only", action="store_true",
                    help="do not run anything: analyse the finished campaigns in DIR")
    st.add_argument("--quiet", action="store_true", help="no progress output")
    st.add_argument("--dry-run", action="store_true",
                    help="print the campaigns, their run counts and the estimated time at this "
                         "scale, and stop (the full scale takes long: see it first)")
    st.set_defaults(fn=cmd_study)


def cmd_study(a) -> int:
    from pathlib import Path

    from . import STUDIES, plan_text, run_study, study_plan
    names = list(STUDIES) if a.name == "all" else [a.name]
    scale = "reduced" if a.reduced else a.scale
    if not a.analyse_only:
        for name in names:  # the scale and its cost before anything runs
            print(plan_text(name, scale, study_plan(name, scale, a.kernel), a.jobs),
                  file=sys.stdout if a.dry_run else sys.stderr)
    if a.dry_run:
        return 0
    ok = True
    for name in names:
        if a.name == "all":
            out = Path(a.output or "results") / f"study-{name}"
        else:
            out = Path(a.output or f"results/study-{name}")
        res = run_study(name, out, scale=scale, kernel=a.kernel, jobs=a.jobs,
                        publish=a.publish, progress="off" if a.quiet else "auto",
                        analyse_only=a.analyse_only)
        from .claims import summary
        print(f"{name}: {summary(res.output.claims)}; wrote {res.results_md}")
        for s in res.output.claims:
            print(f"  [{s.score.verdict}] {s.claim.id}: {s.score.sim}"
                  + ("" if s.as_recorded else f"  <- {s.problem()}"))
        for c in res.output.checks:
            print("  " + c.line())
        ok &= res.ok
    if not ok:
        print("some claims' verdicts are not as recorded in known-differences.yaml "
              "(see RESULTS.md)", file=sys.stderr)
    return 0 if ok else 1
