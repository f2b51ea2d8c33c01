"""`ccbench` command line: a thin layer over ccbench.api (one experiment or run),
ccbench.campaign (sweeps), ccbench.catalogue and ccbench.studies (`ccbench study`, whose
arguments ccbench.studies.cli registers); it imports nothing else of ccbench."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

GROUPINGS = ("per-flow", "total", "per-scheme", "per-direction", "per-scheme-direction")


def _coco_opts(a) -> dict:
    opts = {}
    for key in ("base", "delta", "step", "jitter"):
        v = getattr(a, key)
        if v is not None:
            opts[key] = v
    if a.runtime is not None:
        opts["runtime"] = a.runtime
    if a.rate is not None:
        opts["rate"] = a.rate
    if a.max_delay is not None:
        opts["max_delay_us"] = a.max_delay
    if a.queues is not None:
        opts["queue"] = a.queues
    if a.first_queue is not None:
        opts["first_queue"] = a.first_queue
    if a.second_queue is not None:
        opts["second_queue"] = a.second_queue
    return opts


def _add_coco_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("CoCo-Beholder layout files (central link, as its run.py)")
    g.add_argument("--base", help="initial central one-way delay (time string, default 0ms)")
    g.add_argument("--delta", help="period between central delay changes (time string, >= "
                   "10ms): with --step, CoCo-Beholder's variable delay (a random walk of ±step "
                   "every delta from --base, bounded by -m)")
    g.add_argument("--step", help="central delay change per period (time string, default 0ms)")
    g.add_argument("--jitter", help="central jitter: netem's uniform ±J on both central ends "
                   "(time string)")
    g.add_argument("-t", "--runtime", type=int, help="runtime in seconds (default 30)")
    g.add_argument("-r", "--rate", type=float, help="central rate in Mbit/s (default 100; 0 = unlimited)")
    g.add_argument("-m", "--max-delay", type=int, help="maximum delay in µs")
    g.add_argument("-q", "--queues", type=int, help="both central queues, packets")
    g.add_argument("-q1", "--first-queue", type=int, help="r1's central queue (left→right), packets")
    g.add_argument("-q2", "--second-queue", type=int, help="r2's central queue (right→left), packets")
    g.add_argument("--lenient", action="store_true", help="ignore unknown keys in a CoCo layout")


def _coco(a) -> dict | None:
    from . import api
    if a.queues is not None and (a.first_queue is not None or a.second_queue is not None):
        raise api.ConfigError("--queues", "-q/--queues sets both central queues",
                              "use either -q, or -q1/-q2")
    return _coco_opts(a) or None


def _load(a):
    from . import api
    return api.load_experiment(a.file, seed=a.seed, coco=_coco(a), lenient=a.lenient)


def _budget_opts(a) -> dict:
    return {"budget": not getattr(a, "no_budget", False),
            "memory_budget": getattr(a, "memory_budget", None)}


def _add_budget_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory-budget", metavar="SIZE",
                   help="refuse a run estimated to need more memory than SIZE (e.g. 16G; "
                        "default 80%% of the available memory)")
    p.add_argument("--no-budget", action="store_true",
                   help="run even when the memory or time estimate exceeds the budget")


def cmd_run(a) -> int:
    from . import api
    interrupt = api.interrupt
    interrupt.stage("load")
    exp = _load(a)
    out = Path(a.output) if a.output else Path("results") / Path(a.file).stem
    interrupt.stage("simulate", out)
    interrupt.checkpoint("simulate")
    backend = getattr(a, "backend", "sim")
    if a.seed is not None and backend == "sim" and (note := api.seed_note(exp)):
        print(f"note: {note}", file=sys.stderr)
    if backend == "both":
        if getattr(a, "pcap", False):
            print("error: --pcap with --backend both: run --backend sim and --backend emu "
                  "separately, each with --pcap", file=sys.stderr)
            return 2
        return _run_both(a, exp, out)
    try:
        res = api.run(exp, out, packets=False if a.no_packets else None, progress=not a.quiet,
                      source=str(a.file), backend=backend, pcap=_pcap_snaplen(a),
                      **_budget_opts(a))
    except RuntimeError as e:  # doctor.EmuUnavailable, emu.EmuError, sim.NotOnSimulator
        print(f"error: {e}", file=sys.stderr)
        return 2
    return _after_run(a, res, backend)


def _run_both(a, exp, out: Path) -> int:
    """--backend both: OUT/sim, OUT/emu, OUT/compare and the comparison table."""
    from . import api
    try:
        c = api.run_both(exp, out, packets=False if a.no_packets else None,
                         progress=not a.quiet, source=str(a.file), interval=a.interval,
                         plots=not a.no_plots, **_budget_opts(a))
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    # both backends' summaries and verdicts, then the comparison, whatever the verdicts: a
    # failed expectation on one side is itself a finding the comparison explains
    rcs, junit = [], getattr(a, "junit", None)
    for res, backend in ((c.a, "sim"), (c.b, "emu")):
        if junit:  # one JUnit file per backend: NAME.sim.xml, NAME.emu.xml
            j = Path(junit)
            a.junit = str(j.with_name(f"{j.stem}.{backend}{j.suffix or '.xml'}"))
        rcs.append(_after_run(a, res, backend))
        print()
    a.junit = junit
    print(f"comparison (A = simulator, B = kernel) → {out / 'compare'}")
    print(api.comparison_text(c))
    for w in c.warnings:
        print(f"warning: {w}", file=sys.stderr)
    failed = [b for b, rc in zip(("simulator", "kernel"), rcs) if rc]
    if failed:
        print(f"expectations failed on the {' and the '.join(failed)} (above)", file=sys.stderr)
    return max(rcs)


def _after_run(a, res, backend: str) -> int:
    from . import api
    wall = res.meta["wall_time_s"]
    dur = res.experiment["duration_ns"] / 1e9
    if backend == "emu":
        em = res.meta["emu"]
        re_ = em["release_error_ns"]
        print(f"ran {a.file} on the emulator (kernel {em['kernel']}): {dur:g} s in {wall:.2f} s; "
              f"release error p50 {re_['p50'] / 1e3:.0f} µs, p99 {re_['p99'] / 1e3:.0f} µs, "
              f"max {re_['max'] / 1e3:.0f} µs; engine CPU {em['engine_cpu_frac'] * 100:.0f} % → {res.path}")
        if not em["accurate"]:
            print("warning: inaccurate run: " + "; ".join(em["inaccurate_reasons"]), file=sys.stderr)
    else:
        print(f"ran {a.file} on the simulator: {dur:g} s simulated in {wall:.2f} s "
              f"({res.meta['sim']['events']:,} events) → {res.path}")
    interrupt = api.interrupt
    verdicts = _check(res, getattr(a, "junit", None))
    if not a.no_plots:
        interrupt.stage("report", res.path)
        print(f"report: {api.report(res, interval=a.interval, verdicts=verdicts)}")
        if getattr(a, "png", False):
            interrupt.stage("plots", res.path)
            files = api.plot(res, interval=a.interval, jobs=None)
            print(f"wrote {len(files)} plot and statistics files to {res.path / 'plots'}")
    interrupt.stage("done", res.path)
    print()
    print(api.summary_text(res, a.interval))
    return 1 if any(not v.passed for v in verdicts) else 0


def _check(res, junit_path=None, expect_file=None):
    """Evaluate the run's expectations; print a verdict per line; write JUnit XML if asked."""
    from . import api
    verdicts = api.check(res, expect_file)
    if verdicts:
        fails = sum(not v.passed for v in verdicts)
        print(f"expectations: {len(verdicts) - fails} passed, {fails} failed")
        for v in verdicts:
            print("  " + v.line())
    if junit_path:
        Path(junit_path).write_text(api.junit(verdicts, str(res.meta.get("source") or res.path)))
    return verdicts


def _print_verdicts(verdicts, junit_path, suite: str, what: str = "expectations") -> None:
    from . import api
    if verdicts:
        fails = sum(not v.passed for v in verdicts)
        print(f"{what}: {len(verdicts) - fails} passed, {fails} failed")
        for v in verdicts:
            print("  " + v.line())
    if junit_path:
        Path(junit_path).write_text(api.junit(verdicts, suite))


def cmd_check(a) -> int:
    from . import campaign
    if campaign.is_campaign_dir(a.dir):
        verdicts = campaign.check(a.dir, a.expect)
        _print_verdicts(verdicts, a.junit, str(a.dir), "campaign expectations")
        if not verdicts:
            print(f"{a.dir}: no campaign expectations (add an expect: list to the campaign "
                  "file and rerun ccbench sweep, or --expect FILE)")
        return 1 if any(not v.passed for v in verdicts) else 0
    from . import api
    res = api.load(a.dir)
    verdicts = _check(res, a.junit, a.expect)
    if not verdicts:
        print(f"{a.dir}: no expectations (add an expect: list to the experiment, or --expect FILE)")
    return 1 if any(not v.passed for v in verdicts) else 0


def cmd_doctor(a) -> int:
    from . import api
    text, ok = api.doctor(a.scheme, a.file)
    print(text)
    print("the emulation backend can run here" if ok else "the emulation backend cannot run here")
    return 0 if ok else 1


def cmd_clean(a) -> int:
    import os
    from . import api
    if os.geteuid() != 0:
        print("error: ccbench clean needs root (it deletes network namespaces)", file=sys.stderr)
        return 2
    if a.force and not a.run:
        print("error: --force needs --run ID (a running emulation is stopped only by its id)",
              file=sys.stderr)
        return 2
    api.clean(a.run, verbose=True, force=a.force)
    return 0


def cmd_plot(a) -> int:
    from . import api
    interrupt = api.interrupt
    interrupt.stage("plots", a.dir)
    types = GROUPINGS if a.type == "all" else (a.type,)
    files = api.plot(a.dir, a.output, groupings=types, interval=a.interval, fmt=a.format,
                     jobs=a.jobs)
    for f in files:
        print(f)
    return 0


def cmd_report(a) -> int:
    from . import api, campaign
    interrupt = api.interrupt
    if campaign.is_campaign_dir(a.dir):
        print(campaign.report(a.dir, level=a.level, x=a.x))
        return 0
    interrupt.stage("report", a.dir)
    print(api.report(a.dir, interval=a.interval))
    return 0


def cmd_stats(a) -> int:
    from . import api
    types = GROUPINGS if a.type == "all" else (a.type,)
    print(api.stats_text(a.dir, types, interval=a.interval))
    return 0


def cmd_compare(a) -> int:
    from . import api
    if len(a.dirs) < 2:
        print("error: compare needs two or more results directories", file=sys.stderr)
        return 2
    # CompareError (a ValueError) ends as main()'s "error: …", exit 2
    if len(a.dirs) == 2:
        c = api.compare(a.dirs[0], a.dirs[1], interval=a.interval,
                        allow_different=a.allow_different)
    else:
        c = api.compare_runs(a.dirs, interval=a.interval, allow_different=a.allow_different)
    print(api.comparison_text(c))
    for w in c.warnings:
        print(f"warning: {w}", file=sys.stderr)
    names = [d.rstrip("/").split("/")[-1] for d in a.dirs[1:]]
    out = a.output or (a.dirs[0].rstrip("/") + "-vs-"
                       + ("-".join(names) if len(names) <= 3 else f"{len(names)}-runs"))
    files = api.write_comparison(c, out, interval=a.interval, fmt=a.format)
    print(f"wrote {len(files) - 1} files to {out}; report: {files[-1]}")
    return 0


def _wrap(text: str, width: int, indent: int) -> list[str]:
    import textwrap
    return textwrap.wrap(text, max(width - indent, 30), break_on_hyphens=False) or [""]


def _one_line(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 10)].rstrip() + "…"


def _scheme_text(s: dict, width: int, full: bool) -> list[str]:
    """One registry entry: name and description, source, flags, parameters (name, default,
    doc). `full`: wrapped in full; otherwise each item cut to one line."""
    from .catalogue import fmt_default
    ind = " " * 4
    lines = []
    if full:
        lines.append(s["name"])
        lines += [ind + t for t in _wrap(s["description"], width, 4)]
        lines += [ind + ("source: " if i == 0 else "        ") + t
                  for i, t in enumerate(_wrap(s["source"], width, 12))]
    else:
        lines.append(_one_line(f"{s['name']:<12} {s['description']}", width))
        lines.append(_one_line(f"{ind}source: {s['source']}", width))
    flags = (["needs ECN (negotiated unless the flow group says ecn: false)"] if s.get("needs_ecn")
             else []) + (["non-SACK (RFC 6582 NewReno) recovery"] if s.get("non_sack_recovery")
                         else [])
    if flags:
        lines.append(f"{ind}flags: {'; '.join(flags)}")
    if "transport" in s:
        where = {"sim": "simulator", "emu": "kernel"}
        lines.append(f"{ind}transport: {'datagram' if s['transport'] == 'dgram' else 'TCP'}; "
                     f"backends: {', '.join(where[b] for b in s['backends'])}")
    if not s["params"]:
        lines.append(f"{ind}parameters: none")
        return lines
    lines.append(f"{ind}parameters ({len(s['params'])}):")
    nw = max(len(p["name"]) for p in s["params"])
    dw = max(len(fmt_default(p["default"], p.get("shipped"))) for p in s["params"])
    for p in s["params"]:
        head = f"{ind}  {p['name']:<{nw}} = {fmt_default(p['default'], p.get('shipped')):<{dw}}  "
        if full:
            doc = _wrap(p["doc"], width, len(head))
            lines.append(head + doc[0])
            lines += [" " * len(head) + t for t in doc[1:]]
        else:
            lines.append(_one_line(head + p["doc"], width))
    return lines


def cmd_schemes(a) -> int:
    import shutil
    from . import api
    schemes = api.scheme_catalogue()
    if a.name:
        by_name = {s["name"].lower(): s for s in schemes}
        s = by_name.get(a.name.lower())
        if s is None:
            import difflib
            near = difflib.get_close_matches(a.name.lower(), list(by_name), n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            print(f"error: unknown congestion control scheme {a.name!r}; {hint}known schemes: "
                  + ", ".join(x["name"] for x in schemes), file=sys.stderr)
            return 2
        schemes = [s]
    if a.json:
        print(json.dumps(schemes[0] if a.name else schemes, indent=2, ensure_ascii=False))
        return 0
    width = max(shutil.get_terminal_size((100, 24)).columns, 60)
    if not a.name:
        n_dg = sum(s["transport"] == "dgram" for s in schemes)
        print(f"{len(schemes) - n_dg} TCP congestion-control schemes and {n_dg} datagram schemes "
              "(`ccbench schemes NAME` shows one in full, --json all of it; docs/cc-catalogue.md "
              "plots the TCP ones, docs/datagram.md describes the datagram transport)")
        print(f"Also: BPF schemes `scheme: {{bpf: NAME}}` (shipped: {', '.join(api.bpf_schemes())}; "
              "the same C file on both backends, docs/bpf-schemes.md) and Python controllers "
              "(docs/python-schemes.md).")
    for i, s in enumerate(schemes):
        if i or not a.name:
            print()
        print("\n".join(_scheme_text(s, width, full=bool(a.name) or a.full)))
    return 0


def cmd_catalogue(a) -> int:
    from . import catalogue
    names = [n for x in a.scheme for n in x.split(",") if n] or None

    def progress(r):
        m = r["metrics"]
        print(f"{r['name']:<12} {m['tput_mbps']:6.2f} Mbit/s  queueing {m['mean_qdelay_ms']:6.2f} ms  "
              f"loss {m['loss_pct']:.3f} %  ({r['wall_s']:.1f} s)", flush=True)

    md = catalogue.generate(a.output, names, jobs=a.jobs, keep=a.keep_results,
                            progress=None if a.quiet else progress)
    print(f"wrote {md} and its plots in {md.parent / 'cc-catalogue'}")
    return 0


def cmd_sweep(a) -> int:
    from . import api, campaign
    jobs = a.jobs
    try:
        plan = campaign.plan(a.file, backend=a.backend, packets=a.packets)
    except campaign.PlanErrors as e:
        print(f"error: {a.file}: {e}", file=sys.stderr)
        return 2
    except api.ConfigErrors as errs:
        for e in errs.errors:
            print(f"error: {e.located()}", file=sys.stderr)
        return 2
    if a.dry_run:
        print(plan.describe(max_points=a.max_points))
        out = Path(a.output) if a.output else None
        if out is not None and (out / "runs").is_dir() and not plan.lazy:
            done = sum((out / "runs" / r.key / "metadata.json").is_file()
                       for r in {r.key: r for r in plan.runs}.values())
            print(f"{out}: {done} of {len({r.key for r in plan.runs})} runs already finished")
        print(("the sampled points are valid" if plan.lazy else "every point is valid")
              + "; nothing was run (drop --dry-run to run)")
        return 0
    if (note := plan.seed_note()) is not None:
        print(f"note: {note}", file=sys.stderr)
    try:
        res = campaign.run_campaign(plan.campaign, a.output, jobs=jobs, dask=a.dask,
                                    backend=a.backend, packets=a.packets, plots=a.plots,
                                    plan=plan, keep=a.keep,
                                    allow_mixed_versions=a.allow_mixed_versions,
                                    progress="off" if a.quiet else "auto")
    except KeyboardInterrupt:
        print("\ninterrupted: finished runs are kept; rerun the same command to continue",
              file=sys.stderr)
        return 130
    print(res.summary())
    verdicts = []
    if res.index.height:
        verdicts = campaign.check(res.out_dir, index=res.index)
        _print_verdicts(verdicts, a.junit, str(a.file), "campaign expectations")
        if not a.no_report:
            print(f"report: {campaign.report(res.out_dir, verdicts=verdicts)}")
    elif a.junit:
        _print_verdicts([], a.junit, str(a.file))
    return 0 if res.ok and all(v.passed for v in verdicts) else 1


def cmd_aggregate(a) -> int:
    from . import campaign
    by = [] if a.by in ("none", "") else a.by.split(",")
    metrics = [m for x in a.metric for m in x.split(",") if m] or None
    stats = campaign.aggregate(a.dir, by=by, metrics=metrics, level=a.level, within=a.within)
    print(campaign.stats_text(stats))
    if a.csv:
        stats.write_csv(a.csv)
        print(f"wrote {a.csv}")
    if a.plot:
        files = campaign.plot(a.dir, a.output, x=a.x, by=by, level=a.level, fmt=a.format,
                              metrics=metrics)
        print(f"wrote {len(files)} plots to {files[0].parent if files else a.output}")
    return 0


def cmd_validate(a) -> int:
    from . import api, campaign
    if campaign.is_campaign_file(a.file):
        try:
            plan = campaign.plan(a.file)
        except api.ConfigError as e:
            print(f"{a.file}: {e}", file=sys.stderr)
            return 1
        checked = (f"; planned lazily: {len({r.point.index for r in plan.sample})} points "
                   "covering every axis value checked, the others as they run") \
            if plan.lazy else ""
        print(f"{a.file}: OK (a campaign: {plan.n_points} points, {plan.n_runs} runs{checked}; "
              "`ccbench sweep FILE --dry-run` lists them)")
        return 0
    try:
        errors = api.validate(a.file, seed=a.seed, coco=_coco(a), lenient=a.lenient)
    except api.ConfigError as e:
        errors = [e]
    for e in errors:
        loc = e.located() if isinstance(e, api.ConfigError) else str(e)
        print(loc if loc.startswith(str(a.file)) else f"{a.file}: {loc}", file=sys.stderr)
    if errors:
        return 1
    print(f"{a.file}: OK")
    return 0


def cmd_resolve(a) -> int:
    from . import api
    print(json.dumps(api.resolve(a.file, seed=a.seed, coco=_coco(a), lenient=a.lenient),
                     indent=2, sort_keys=True))
    return 0


# --- packet captures (docs/captures.md) ---


def _add_pcap_run_args(r: argparse.ArgumentParser) -> None:
    from . import api
    r.add_argument("--pcap", action="store_true",
                   help="also write pcapng captures to DIR/pcap/: every host's interface and "
                        "both sides of each bottleneck (docs/captures.md)")
    r.add_argument("--pcap-snaplen", type=int, default=api.PCAP_SNAPLEN, metavar="BYTES",
                   help=f"bytes kept per captured packet (default {api.PCAP_SNAPLEN}: all "
                        "headers; 0 = whole packets)")


def _pcap_snaplen(a) -> int | None:
    """api.run's `pcap` argument from the run command's flags."""
    return a.pcap_snaplen if getattr(a, "pcap", False) else None


def cmd_export(a) -> int:
    from . import api
    s = api.export_pcap(a.dir, a.output, snaplen=a.snaplen, progress=not a.quiet,
                        run_scheme_code=a.run_scheme_code)
    out = Path(a.output) if a.output else Path(a.dir) / "pcap"
    for p in s.get("points", []):
        print(f"{out / p['file']}: {p['packets']:,} packets ({p['description']})")
    return 0


def cmd_export_tables(a) -> int:
    from . import api
    files = api.export_tables(a.dir, a.fmt, a.output, a.table)   # ExportError: see main()
    for f in files:
        print(f"wrote {f}")
    return 0


def cmd_new(a) -> int:
    from . import api
    files = api.new_scheme(a.name, a.output)   # ScaffoldError (a ValueError): see main()
    for f in files:
        print(f"wrote {f}")
    yaml_file = files[-1]
    print(f"next: ccbench run {yaml_file}   (sudo ... --backend both: simulator and kernel, "
          "compared)")
    return 0


def cmd_import(a) -> int:
    from . import api
    res = api.import_pcap(a.inputs, a.output, mapping=a.mapping, coco=a.coco,
                      sample_interval=a.sample_interval)
    imp = res.meta["import"]
    print(f"imported {imp['packets']:,} data packets of {len(res.experiment['flows'])} flows "
          f"({imp['mode']} mode) → {res.path}")
    for w in imp.get("warnings", []):
        print(f"warning: {w}", file=sys.stderr)
    return 0


def _add_pcap_parsers(sub) -> None:
    from . import api
    ex = sub.add_parser("export", help="export a run: `ccbench export pcap|csv|parquet DIR`")
    exs = ex.add_subparsers(dest="what", required=True)
    e = exs.add_parser("pcap", help="pcapng per capture point (hosts, both sides of each "
                       "bottleneck) of a simulated run (simulated again with the capture on)")
    e.add_argument("dir", help="results directory")
    e.add_argument("-o", "--output", help="output directory (default DIR/pcap)")
    e.add_argument("--snaplen", type=int, default=api.PCAP_SNAPLEN,
                   help=f"bytes kept per packet (default {api.PCAP_SNAPLEN}; 0 = whole packets)")
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.add_argument("--run-scheme-code", action="store_true",
                   help="simulate again a run whose schemes are code (Python schemes, BPF "
                        "programs): refused by default, a results folder being data")
    e.set_defaults(fn=cmd_export)
    for fmt in ("csv", "parquet"):
        t = exs.add_parser(fmt, help=f"a run's tables (or a campaign's index) as {fmt.upper()} "
                           "files", description=f"Write the tables of a results directory "
                           "(packets, flows, queues, intervals, delay_hist, flowstats, conns) or "
                           f"a campaign directory's index as {fmt.upper()} files, streaming "
                           "from their Parquet files.")
        t.add_argument("dir", help="results or campaign directory")
        t.add_argument("-o", "--output", help=f"output directory (default DIR/export-{fmt})")
        t.add_argument("--table", action="append", metavar="NAME",
                       help="only this table (repeatable; default: every table)")
        t.set_defaults(fn=cmd_export_tables, fmt=fmt)

    nw = sub.add_parser("new", help="start something of your own: `ccbench new scheme NAME`")
    nws = nw.add_subparsers(dest="what", required=True)
    n = nws.add_parser("scheme", help="a congestion control in C for both backends (NAME.c) and "
                       "an experiment that runs it next to CUBIC with expectations (NAME.yaml)",
                       description="Write NAME.c, a commented AIMD congestion control in the form "
                       "of the shipped BPF schemes: the kernel backend runs it as a struct_ops "
                       "program and the simulator compiles the same file natively "
                       "(docs/bpf-schemes.md); and NAME.yaml, an experiment running it next to "
                       "CUBIC with an expect: block. Existing files are never overwritten.")
    n.add_argument("name", help="lower-case letters, digits and _ (at most 11 characters)")
    n.add_argument("-o", "--output", default=".", help="directory to write into (default .)")
    n.set_defaults(fn=cmd_new)

    im = sub.add_parser("import", help="import testbed captures: `ccbench import pcap DIR|FILES`")
    ims = im.add_subparsers(dest="what", required=True)
    i = ims.add_parser("pcap", help="pcap/pcapng captures → a standard results directory "
                       "(metrics, report, compare and check work on it)",
                       description="CoCo-Beholder mode: a dumps folder (metadata.json and "
                       "<k>-<scheme>-sender/receiver.pcap) as it is. Generic mode: capture "
                       "files plus --mapping YAML naming the flows and capture points "
                       "(docs/captures.md).")
    i.add_argument("inputs", nargs="+", help="a CoCo-Beholder dumps folder, or capture files")
    i.add_argument("-o", "--output", required=True, help="results directory to write")
    i.add_argument("--mapping", metavar="YAML",
                   help="generic mode: flows (sender/receiver address and port, scheme) and "
                        "which file is whose capture")
    i.add_argument("--coco", action="store_true", default=None,
                   help="force CoCo-Beholder mode (default: when the folder has metadata.json)")
    i.add_argument("--sample-interval", type=float, default=0.01, metavar="S",
                   help="bin width of the derived per-interval tables, s (default 0.01)")
    i.set_defaults(fn=cmd_import)


class _Version(argparse.Action):
    """``--version``: ccbench's version, the compiled core's, and the git commit of a checkout
    (with "modified" when its tracked files have changes); computed only when asked."""

    def __call__(self, parser, namespace, values, option_string=None):
        from . import api
        print(api.version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ccbench", description="Congestion-control experiments: "
                                "simulate, measure, plot.")
    p.add_argument("--version", action=_Version, nargs=0,
                   help="print the package, simulator core and git commit, and exit")
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="run an experiment file; write results and report.html, check its expectations")
    r.add_argument("file")
    r.add_argument("-o", "--output", help="results directory (default results/<file stem>)")
    r.add_argument("--seed", type=int, help="override the experiment's seed")
    r.add_argument("--no-packets", action="store_true",
                   help="no per-packet records (metrics come from per-interval aggregates)")
    r.add_argument("--no-plots", action="store_true", help="skip the report and plots")
    r.add_argument("--junit", metavar="FILE", help="write the expectations' verdicts as JUnit XML "
                   "(--backend both: FILE.sim.xml and FILE.emu.xml, one per backend)")
    r.add_argument("--png", action="store_true",
                   help="also write static PNG plots and statistics files to DIR/plots, "
                        "drawn on every core "
                        "(the self-contained DIR/report.html is always written)")
    r.add_argument("-i", "--interval", type=float, default=0.5, help="aggregation interval, s")
    r.add_argument("--quiet", action="store_true", help="no progress output (the bar; on --backend emu also the live per-flow rates)")
    r.add_argument("--backend", choices=("sim", "emu", "both"), default="sim",
                   help="sim: the simulator (default); emu: real kernel TCP in network "
                        "namespaces (root; see `ccbench doctor`); both: sim and emu into "
                        "OUT/sim and OUT/emu, their comparison into OUT/compare")
    _add_pcap_run_args(r)
    _add_budget_args(r)
    _add_coco_args(r)
    r.set_defaults(fn=cmd_run)

    d = sub.add_parser("doctor", help="can this machine run the emulation backend (--backend emu)?")
    d.add_argument("file", nargs="?", help="also check the congestion controls this experiment needs")
    d.add_argument("--scheme", action="append", default=[], help="check a kernel congestion control")
    d.set_defaults(fn=cmd_doctor)

    c = sub.add_parser("clean", help="remove namespaces and processes left by killed emulation "
                       "runs (never a running one unless --run ID --force)")
    c.add_argument("--run", help="only this run id (ccb-xxxxxx)")
    c.add_argument("--force", action="store_true",
                   help="with --run: remove that run even though its process is still running")
    c.set_defaults(fn=cmd_clean)

    pl_ = sub.add_parser("plot", help="plots and statistics files of a results directory")
    pl_.add_argument("dir")
    pl_.add_argument("--type", default="all", choices=GROUPINGS + ("all",))
    pl_.add_argument("-i", "--interval", type=float, default=0.5)
    pl_.add_argument("-o", "--output", help="output directory (default DIR/plots)")
    pl_.add_argument("--format", default="png", choices=("png", "svg", "pdf"))
    pl_.add_argument("-j", "--jobs", type=int, help="processes drawing in parallel, one "
                     "grouping each (default: every core; 1 = in this process)")
    pl_.set_defaults(fn=cmd_plot)

    ck = sub.add_parser("check", help="evaluate the expectations (expect:) of a run or a "
                        "campaign; exit code 1 when any fails")
    ck.add_argument("dir", help="results directory, or campaign directory (over aggregates)")
    ck.add_argument("--expect", metavar="FILE", help="take the expect: list from this YAML file "
                    "(an experiment or campaign file, or a bare list) instead of the recorded one")
    ck.add_argument("--junit", metavar="FILE", help="also write the verdicts as JUnit XML")
    ck.set_defaults(fn=cmd_check)

    rp = sub.add_parser("report", help="write DIR/report.html for a run or a campaign "
                        "directory: self-contained, interactive, works offline")
    rp.add_argument("dir", help="a results directory (ccbench run) or a campaign directory "
                    "(ccbench sweep)")
    rp.add_argument("-i", "--interval", type=float, default=0.5, help="run: aggregation interval, s")
    rp.add_argument("--level", type=float, default=0.95,
                    help="campaign: confidence level of the bands (default 0.95)")
    rp.add_argument("--x", metavar="AXIS", help="campaign: the axis on the x axis (default: "
                    "the first numeric axis)")
    rp.set_defaults(fn=cmd_report)

    s = sub.add_parser("stats", help="print the statistics of a results directory")
    s.add_argument("dir")
    s.add_argument("--type", default="per-flow", choices=GROUPINGS + ("all",))
    s.add_argument("-i", "--interval", type=float, default=0.5)
    s.set_defaults(fn=cmd_stats)

    cp = sub.add_parser("compare", help="two or more runs side by side: metrics, differences, "
                        "overlay plots")
    cp.add_argument("dirs", nargs="+", metavar="DIR",
                    help="results directories (two: A and B in adjacent columns; three or more: "
                         "one row per run × flow, Δ %% against the first)")
    cp.add_argument("-i", "--interval", type=float, default=0.5)
    cp.add_argument("-o", "--output", help="output directory (default DIR_A-vs-<the other "
                    "names>, or DIR_A-vs-N-runs beyond four runs)")
    cp.add_argument("--format", default="png", choices=("png", "svg", "pdf"))
    cp.add_argument("--allow-different", action="store_true",
                    help="compare runs of different durations or topologies anyway (the "
                         "differences are printed above the table); refused by default")
    cp.set_defaults(fn=cmd_compare)

    sc = sub.add_parser("schemes", help="list the congestion-control algorithms (TCP and "
                        "datagram), their sources, parameters, transport and backends")
    sc.add_argument("name", nargs="?", help="show this scheme in full")
    sc.add_argument("--json", action="store_true", help="the registry entries as JSON")
    sc.add_argument("--full", action="store_true",
                    help="every scheme in full (default: one line per item)")
    sc.set_defaults(fn=cmd_schemes)

    ca = sub.add_parser("catalogue", help="run every scheme in the standard scenario; write "
                        "DIR/cc-catalogue.md and DIR/cc-catalogue/<name>.png")
    ca.add_argument("-o", "--output", default="docs", help="output directory (default docs)")
    ca.add_argument("--scheme", action="append", default=[],
                    help="only these schemes (repeat or comma-separate; default every one)")
    ca.add_argument("-j", "--jobs", type=int, default=2, help="parallel runs (default 2)")
    ca.add_argument("--keep-results", metavar="DIR", help="keep each run's results in DIR/<name>")
    ca.add_argument("--quiet", action="store_true", help="no per-scheme lines")
    ca.set_defaults(fn=cmd_catalogue)

    sw = sub.add_parser("sweep", help="run a campaign: every point and repeat of a sweep, "
                        "resumable; writes DIR/runs/<key>/ and the index DIR/index.parquet",
                        description="Run a campaign file (docs/campaigns.md). Finished runs "
                        "in DIR are skipped, so rerunning the same command after Ctrl-C, a "
                        "kill or failures continues where it stopped.")
    sw.add_argument("file", help="an experiment with a sweep: block, or a campaign file "
                    "with base: and sweep:")
    sw.add_argument("-o", "--output", help="campaign directory (default results/<file stem>)")
    sw.add_argument("-j", "--jobs", type=int,
                    help="local worker processes (default: every core; 1 = in this process)")
    sw.add_argument("--dask", metavar="local|ADDRESS",
                    help="run on Dask: 'local' starts a LocalCluster of -j workers, an "
                         "address (tcp://host:8786) joins a running scheduler")
    sw.add_argument("--backend", choices=("sim", "emu"), default="sim",
                    help="sim (default) or emu (real kernel TCP, root; runs one at a time "
                         "per machine)")
    sw.add_argument("--dry-run", action="store_true",
                    help="print the expanded plan and validate every point; run nothing")
    sw.add_argument("--max-points", type=int, default=50,
                    help="points listed by --dry-run (default 50)")
    sw.add_argument("--packets", action="store_true",
                    help="keep per-packet records (off by default in campaigns)")
    sw.add_argument("--plots", action="store_true",
                    help="plot every run: its report.html and static PNGs (off by default)")
    sw.add_argument("--keep", choices=("tables", "summary"), default="tables",
                    help="what each run keeps in DIR/runs/<key>/: 'tables' (default) its "
                         "Parquet tables, to re-plot or re-analyse it; 'summary' only its "
                         "metadata and index rows (the index and report are the same; "
                         "several times faster for short runs)")
    sw.add_argument("--allow-mixed-versions", action="store_true",
                    help="add to a DIR that holds runs of another ccbench version or commit")
    sw.add_argument("--quiet", action="store_true", help="no progress output")
    sw.add_argument("--no-report", action="store_true",
                    help="do not write DIR/report.html (the interactive campaign report)")
    sw.add_argument("--junit", metavar="FILE",
                    help="write the campaign expectations' verdicts as JUnit XML")
    sw.set_defaults(fn=cmd_sweep)

    ag = sub.add_parser("aggregate", help="statistics across repeats of a campaign: n, mean, "
                        "median, std, min/max, t confidence interval; campaign plots")
    ag.add_argument("dir", help="campaign directory (written by ccbench sweep)")
    ag.add_argument("--by", default="scheme",
                    help="group each point further by these columns, comma-separated "
                         "(scheme, direction, group, flow, flow_label; 'none'); default scheme")
    ag.add_argument("--metric", action="append", default=[],
                    help="metrics to aggregate and plot (repeat or comma-separate; default: "
                         "all in the table, throughput, p95 delay, loss, Jain, utilisation "
                         "in the plots)")
    ag.add_argument("--level", type=float, default=0.95,
                    help="confidence level of the interval (default 0.95; e.g. 0.9)")
    ag.add_argument("--within", choices=("mean", "sum"), default="mean",
                    help="how the flows of a group within one run are combined (default mean)")
    ag.add_argument("--csv", metavar="FILE", help="also write the full statistics as CSV")
    ag.add_argument("--plot", action="store_true",
                    help="write campaign plots (metric vs axis with CI bars, box plots across "
                         "repeats, heat maps) to DIR/plots or -o")
    ag.add_argument("--x", metavar="AXIS", help="the axis on the x axis of the plots "
                    "(default: the first numeric axis)")
    ag.add_argument("-o", "--output", help="plot directory (default DIR/plots)")
    ag.add_argument("--format", default="png", choices=("png", "svg", "pdf"))
    ag.set_defaults(fn=cmd_aggregate)

    _add_pcap_parsers(sub)

    for name, fn, hlp in (("validate", cmd_validate, "check an experiment file"),
                          ("resolve", cmd_resolve, "print the resolved experiment as JSON")):
        v = sub.add_parser(name, help=hlp)
        v.add_argument("file")
        v.add_argument("--seed", type=int)
        _add_coco_args(v)
        v.set_defaults(fn=fn)
    from .studies.cli import add_parser as add_study_parser
    add_study_parser(sub)
    from .agree import add_parser as add_agree_parser
    add_agree_parser(sub)
    return p


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    import warnings
    from . import api
    interrupt = api.interrupt
    a = build_parser().parse_args(argv)
    warnings.showwarning = _show_warning
    interrupt.install()
    interrupt.reset()
    try:
        return a.fn(a)
    except api.ConfigErrors as errs:  # each with its file and line when it came from one
        for e in errs.errors:
            print(f"error: {e.located()}", file=sys.stderr)
        return 2
    except api.ConfigError as e:
        print(f"error: {e.located()}", file=sys.stderr)
        return 2
    except (FileNotFoundError, FileExistsError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        from .campaign import CampaignError
        if not isinstance(e, CampaignError):
            raise
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        interrupt.ignore()
        print("\n" + interrupt.finish(), file=sys.stderr)
        return 143 if getattr(e, "signum", None) == 15 else 130
    except BrokenPipeError:
        # `ccbench schemes | head`: the reader left; say nothing more and exit quietly.
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
