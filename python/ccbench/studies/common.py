"""What every study shares: running its campaigns at a scale, reading runs back, windowed
metrics the studies define differently from CoCo-Beholder's whole-run ones, the checks that
encode a study's conclusions, and the generated RESULTS.md.

A study module (``ccbench.studies.<name>``) provides:

    NAME, TITLE                 the CLI name and the page title
    CAMPAIGNS                   {key: file name in examples/studies/<NAME>/}
    reduce(key, doc, scale) -> doc   the "medium" or "reduced" (CI) scale of a campaign document
    kernel(key, doc, scale) -> doc | None   the subset run on the kernel backend, if any
    analyse(ctx) -> Output      tables, checks and figures from the finished campaigns
"""
from __future__ import annotations

import copy
import datetime as _dt
import math
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import polars as pl

REPO = Path(__file__).resolve().parents[3]
STUDIES_DIR = REPO / "examples" / "studies"


# ---------------------------------------------------------------------------- outputs

@dataclass
class Check:
    """A check that is not a claim of the paper (a project check, or a campaign file's
    `expect:` row): printed beside the claims, not counted; a failing one fails the run."""

    claim: str
    passed: bool
    measured: str

    @property
    def verdict(self) -> str:
        return "holds" if self.passed else "FAILS"

    def line(self) -> str:
        return f"[{'ok' if self.passed else 'FAIL'}] {self.claim}: {self.measured}"


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[Any]]
    note: str = ""

    def markdown(self) -> str:
        out = [f"### {self.title}", ""]
        if self.note:
            out += [self.note, ""]
        out.append("| " + " | ".join(self.header) + " |")
        out.append("|" + "---|" * len(self.header))
        for r in self.rows:
            out.append("| " + " | ".join(fmt(v) for v in r) + " |")
        return "\n".join(out) + "\n"


@dataclass
class Output:
    checks: list[Check] = field(default_factory=list)   # project checks: not counted
    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)  # (file name, caption)
    notes: list[str] = field(default_factory=list)
    claims: list = field(default_factory=list)  # claims.Scored, one per id of claims.yaml

    @property
    def ok(self) -> bool:
        """Every claim has the verdict known-differences.yaml records for this scale, and
        every project check its expected verdict."""
        return (all(s.as_recorded for s in self.claims)
                and all(c.passed for c in self.checks))


def fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        a = abs(v)
        if a >= 100:
            return f"{v:.1f}"
        if a >= 1:
            return f"{v:.2f}"
        return f"{v:.3f}"
    return str(v)


def rel_diff(a: float | None, b: float | None) -> float | None:
    """CoCo-Beholder's d_r = |a - b| / ((a + b) / 2), in percent."""
    if a is None or b is None or (a + b) == 0 or any(math.isnan(x) for x in (a, b)):
        return None
    return abs(a - b) / ((a + b) / 2) * 100


# ---------------------------------------------------------------------------- running

@dataclass
class Ctx:
    """The finished campaigns of one study run, as the analysis sees them."""

    out: Path
    scale: str                                # full | medium | reduced
    index: dict[str, pl.DataFrame]            # campaign key -> simulator index
    kernel_index: dict[str, pl.DataFrame]     # campaign key -> kernel (emu) index
    docs: dict[str, dict]                     # campaign key -> the document that ran
    figdir: Path = None  # type: ignore[assignment]

    @property
    def reduced(self) -> bool:
        return self.scale == "reduced"

    def run_dir(self, key: str, run_key: str, kernel: bool = False) -> Path:
        return self.out / (key + ("-kernel" if kernel else "")) / "runs" / run_key

    def duration(self, key: str) -> float:
        from ..config.units import parse_time
        d = self.docs[key]["duration"]
        return (float(d) if isinstance(d, (int, float))
                else parse_time(d, ("duration",), bare_ns=10**9) / 1e9)


def load_doc(study: str, fname: str) -> tuple[dict, Path]:
    from ..config.yamlsrc import read_yaml
    path = STUDIES_DIR / study / fname
    return read_yaml(path).data, path


def run_campaign_doc(doc: dict, path: Path, out: Path, *, backend: str = "sim",
                     jobs: int | None = None, progress: Any = False,
                     failures: list | None = None) -> pl.DataFrame:
    """Run one campaign document (read from ``path``, maybe reduced) into ``out``. A failed
    run raises, unless ``failures`` is given: then they are appended to it and the index of
    the finished runs is returned (kernel runs can fail for the machine's sake)."""
    from ..campaign import parse_campaign, run_campaign
    camp = parse_campaign(copy.deepcopy(doc), source=str(path))
    res = run_campaign(camp, out, jobs=jobs, backend=backend, progress=progress,
                       allow_mixed_versions=True)
    if res.failures and failures is not None:
        failures += [f"{out.name}: {f['label']}: {f['error']}" for f in res.failures]
    elif res.failures:
        raise RuntimeError(f"{len(res.failures)} runs of {out} failed: "
                           f"{res.failures[0]['label']}: {res.failures[0]['error']}")
    return res.index


def git_commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=5).stdout.strip()
    except Exception:  # noqa: BLE001 - provenance only
        return "unknown"


# ---------------------------------------------------------------------------- metrics

def window_flow_tput(run_dir: Path, t0: float, t1: float) -> dict[int, float]:
    """Per-flow receiver throughput in Mbit/s over [t0, t1) s: IP bytes delivered (headers and
    retransmissions included, as the BBR/CUBIC study counts), from the intervals table."""
    iv = pl.read_parquet(run_dir / "intervals.parquet",
                         columns=["bin", "flow", "delivered_bytes"])
    meta = _meta(run_dir)
    w = meta["experiment"]["sample_interval_ns"] / 1e9
    b0, b1 = int(round(t0 / w)), int(round(t1 / w))
    sel = iv.filter((pl.col("bin") >= b0) & (pl.col("bin") < b1))
    agg = sel.group_by("flow").agg(pl.col("delivered_bytes").sum())
    flows = [f["id"] for f in meta["experiment"]["flows"]]
    got = dict(zip(agg["flow"].to_list(), agg["delivered_bytes"].to_list()))
    return {f: got.get(f, 0) * 8 / (t1 - t0) / 1e6 for f in flows}


def slot_series(run_dir: Path, slot: float, t_end: float | None = None) -> pl.DataFrame:
    """Per-flow rate (Mbit/s) and mean one-way delay (ms) per slot of ``slot`` seconds, the
    CoCo-Beholder aggregation interval: columns slot, flow, mbps, owd_ms (null when no packet
    arrived in the slot)."""
    iv = pl.read_parquet(run_dir / "intervals.parquet",
                         columns=["bin", "flow", "delivered_bytes", "delivered_pkts",
                                  "delay_sum_ns"])
    meta = _meta(run_dir)
    w = meta["experiment"]["sample_interval_ns"] / 1e9
    k = max(1, int(round(slot / w)))
    if t_end is not None:
        iv = iv.filter(pl.col("bin") < int(round(t_end / w)))
    s = (iv.with_columns((pl.col("bin") // k).alias("slot"))
         .group_by(["slot", "flow"]).agg(pl.col("delivered_bytes").sum(),
                                         pl.col("delivered_pkts").sum(),
                                         pl.col("delay_sum_ns").sum()))
    return s.with_columns(
        (pl.col("delivered_bytes") * 8 / (k * w) / 1e6).alias("mbps"),
        pl.when(pl.col("delivered_pkts") > 0)
        .then(pl.col("delay_sum_ns") / pl.col("delivered_pkts") / 1e6).alias("owd_ms"),
    ).select(["slot", "flow", "mbps", "owd_ms"]).sort(["slot", "flow"])


def jain(xs: list[float]) -> float:
    s, s2 = sum(xs), sum(x * x for x in xs)
    return (s * s) / (len(xs) * s2) if s2 > 0 else float("nan")


def queue_window(run_dir: Path, link: int, t0: float, t1: float) -> dict[str, float]:
    """Bottleneck statistics over [t0, t1): mean backlog bytes, loss % = drops / packets sent
    by the link (the study's router-side definition), from the queues table."""
    q = pl.read_parquet(run_dir / "queues.parquet",
                        columns=["time_ns", "link", "bytes", "drops", "tx_bytes"])
    q = q.filter(pl.col("link") == link)
    a = q.filter(pl.col("time_ns") >= int(t0 * 1e9)).head(1)
    b = q.filter(pl.col("time_ns") <= int(t1 * 1e9)).tail(1)
    win = q.filter((pl.col("time_ns") >= int(t0 * 1e9)) & (pl.col("time_ns") < int(t1 * 1e9)))
    drops = b["drops"][0] - a["drops"][0]
    sent = (b["tx_bytes"][0] - a["tx_bytes"][0]) / 1500.0
    return {"backlog_bytes": float(win["bytes"].mean() or 0.0),
            "loss_pct": 100.0 * drops / sent if sent > 0 else float("nan")}


def flow_samples(run_dir: Path, cols: list[str]) -> pl.DataFrame:
    return pl.read_parquet(run_dir / "flows.parquet", columns=["time_ns", "flow"] + cols)


_META: dict[str, dict] = {}


def _meta(run_dir: Path) -> dict:
    import json
    k = str(run_dir)
    if k not in _META:
        _META[k] = json.loads((run_dir / "metadata.json").read_text())
    return _META[k]


def experiment(run_dir: Path) -> dict:
    return _meta(run_dir)["experiment"]


# ---------------------------------------------------------------------------- RESULTS.md

SCALE_TEXT = {
    "reduced": "REDUCED (CI scale: shorter runs, fewer points and repeats; see README.md)",
    "medium": "MEDIUM (fewer points and repeats and shorter runs than the study; see README.md)",
    "full": "FULL (the campaign files as checked in)",
}


def write_results_md(out: Path, *, title: str, study: str, scale: str, kernel: bool,
                     ctx: Ctx, output: Output, command: str, intro: str) -> Path:
    """Write the study's DIR/RESULTS.md (the results tables; not a run's results folder,
    which is results.writer.write_results)."""
    runs = sum(df["run_key"].n_unique() for df in ctx.index.values() if df.height)
    kruns = sum(df["run_key"].n_unique() for df in ctx.kernel_index.values() if df.height)
    from ..api import __version__
    scale = SCALE_TEXT[scale]
    lines = [f"# {title}: results", "",
             "<!-- generated by ccbench.studies; do not edit by hand -->", "",
             f"Generated by `{command}` on {_dt.date.today().isoformat()} (ccbench "
             f"{__version__}, commit {git_commit()}).", "",
             f"**Scale: {scale}.** {runs} simulator runs"
             + (f", {kruns} kernel runs (Linux {_kernel_release()})" if kernel else
                ", no kernel runs (add `--kernel`, root)") + ".", "", intro, ""]
    from . import claims as cl
    lines += ["## The paper's claims, scored", "",
              "One row per claim of the fixed list (`claims.yaml`: every quantitative "
              "table and stated conclusion of the paper, with the acceptance test taken "
              "from the paper's own spread). A miss carries its explanation from "
              "`known-differences.yaml`.", "",
              f"**{cl.summary(output.claims)}.**", ""]
    lines += cl.markdown(output.claims, kernel) + [""]
    if output.checks:
        lines += ["## Checks of the project and the campaign files' `expect:` rows (not "
                  "counted)", "", "| check | ccbench measured | verdict |", "|---|---|---|"]
        for c in output.checks:
            lines.append(f"| {c.claim} | {c.measured} | {c.verdict} |")
        lines.append("")
    if output.tables:
        lines += ["## Tables", ""]
        for t in output.tables:
            lines.append(t.markdown())
    if output.figures:
        lines += ["## Figures", ""]
        for name, cap in output.figures:
            lines += [f"![{cap}](figures/{name})", "", f"*{cap}*", ""]
    if output.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in output.notes] + [""]
    path = out / "RESULTS.md"
    path.write_text("\n".join(lines))
    return path


def _kernel_release() -> str:
    import platform
    return platform.release()


def kernel_schemes(wanted: list[str]) -> list:
    """The kernel-backend scheme values for the study's algorithms `wanted`: this kernel's own
    (reno, cubic, bbr) by name, the others as the shipped BPF program (``{"bpf": name}``,
    docs/bpf-schemes.md) where one exists and this machine can build it."""
    import shutil
    from ..config.bpfschemes import KERNEL_CCS, shipped
    own = set(KERNEL_CCS)
    bpf_ok = bool(shutil.which("clang") and shutil.which("bpftool")
                  and Path("/usr/include/bpf/bpf_helpers.h").is_file()
                  and Path("/sys/kernel/btf/vmlinux").is_file())
    have = set(shipped()) if bpf_ok else set()
    return [w if w in own else {"bpf": w} for w in wanted if w in own or w in have]


def cc_of(value: Any) -> Any:
    """The study's algorithm name of an index's `cc` value: a BPF scheme (``{"bpf": "vegas"}``,
    stored in the index as its JSON, or the name it registers, ``bpf_vegas``) is the algorithm
    it implements."""
    if isinstance(value, str) and value.startswith("{"):
        import json
        try:
            value = json.loads(value)
        except ValueError:
            return value
    if isinstance(value, dict):  # a BPF scheme, or a scheme with parameters ({name: cdg, ...})
        return str(value.get("bpf", value.get("name", value)))
    if isinstance(value, str) and value.startswith("bpf_"):
        # a shipped BPF program registers itself as bpf_<algorithm> (docs/bpf-schemes.md),
        # the name the kernel backend's per-flow tables carry
        from ..config.bpfschemes import shipped
        if value[4:] in shipped():
            return value[4:]
    return value


def patch(doc: dict, changes: dict[Any, Any]) -> dict:
    """A copy of ``doc`` with keys set: a dotted string (``sweep.repeats``) or a tuple of keys
    (``("sweep", "axes", "central.rate")``, for keys that contain dots); a value of
    ``Ellipsis`` deletes the key."""
    d = copy.deepcopy(doc)
    for key, val in changes.items():
        node = d
        parts = list(key) if isinstance(key, tuple) else key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        if val is Ellipsis:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = val
    return d


def fig_path(ctx: Ctx, name: str) -> Path:
    ctx.figdir.mkdir(parents=True, exist_ok=True)
    return ctx.figdir / name


Analyse = Callable[[Ctx], Output]
