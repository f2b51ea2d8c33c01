"""The campaign directory: finished runs by key, failures, the event log and provenance.

    DIR/campaign.json       ccbench version, git commit and dirty flag, sessions, the plan
    DIR/runs/<key>/         each run's normal results directory (atomic: written to a
                            temporary sibling and renamed, ccbench.results.writer); with
                            ``keep="summary"`` its metadata and summary.json (the run's
                            index rows) without the tables, committed the same way
    DIR/failed/<key>.json   a failed run: error, traceback, point (removed once it succeeds)
    DIR/log.jsonl           one JSON line per event (session start, run start/done/failed)
    DIR/metrics.parquet     per-run metric rows of the finished runs (a cache: rebuilt from
                            runs/ when missing)
    DIR/index.parquet       the tidy index: a row per run × flow (index.py)
    DIR/.lock               held while a campaign writes to DIR

A run is finished iff ``runs/<key>/metadata.json`` exists; the rename that creates the
directory is the commit, so an interrupted run leaves only a temporary directory, removed by
the next session.
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

FORMAT = 1


class CampaignError(RuntimeError):
    """A campaign cannot go on as asked; the message says why and what to do."""


class CampaignDirError(CampaignError):
    """DIR cannot take this campaign (another version's runs, another writer, not a
    campaign directory)."""


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def provenance() -> dict:
    """ccbench and simulator versions, git commit and whether the work tree had changes."""
    from .. import _core
    from ..api import __version__
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"ccbench_version": __version__, "core_version": getattr(_core, "__version__", None),
            "git_commit": commit.strip() if commit else None,
            "git_dirty": None if status is None else bool(status.strip())}


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _empty_skeleton(root: Path) -> bool:
    """True for an empty directory, or one holding only what a sweep creates before its
    manifest (empty runs/ and failed/, .lock, log.jsonl): a sweep that stopped that early
    ran nothing, and a rerun may take the directory over."""
    for p in root.iterdir():
        if p.name in ("runs", "failed") and p.is_dir():
            if any(p.iterdir()):
                return False
        elif p.name not in (".lock", "log.jsonl") or not p.is_file():
            return False
    return True


class Store:
    """A campaign directory opened for writing (holds DIR/.lock until closed)."""

    def __init__(self, root: str | Path, *, allow_mixed_versions: bool = False):
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise CampaignDirError(f"{self.root} is a file; choose another -o DIR")
        if self.root.is_dir() and not (self.root / "campaign.json").is_file() \
                and not _empty_skeleton(self.root):
            raise CampaignDirError(f"{self.root} exists and is not a campaign directory (no "
                                   "campaign.json); choose another -o DIR")
        self.runs = self.root / "runs"
        self.failed = self.root / "failed"
        self.runs.mkdir(parents=True, exist_ok=True)
        self.failed.mkdir(exist_ok=True)
        self._lock = open(self.root / ".lock", "a+")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.seek(0)
            who = self._lock.read().strip()
            self._lock.close()
            raise CampaignDirError(f"another ccbench sweep is writing to {self.root}"
                                   + (f" ({who})" if who else "")
                                   + "; wait for it or choose another -o DIR") from None
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        self._lock.flush()
        self.prov = provenance()
        self.manifest = self._check_versions(allow_mixed_versions)
        self._clean_temporaries()
        self._log = open(self.root / "log.jsonl", "a", buffering=1)

    def _check_versions(self, allow: bool) -> dict:
        f = self.root / "campaign.json"
        if not f.is_file():
            return {"format": FORMAT, **self.prov, "created": utc_now(), "sessions": []}
        m = json.loads(f.read_text())
        p = self.prov
        diff = []
        for k in ("ccbench_version", "core_version", "git_commit"):
            if m.get(k) is not None and p.get(k) is not None and m[k] != p[k]:
                diff.append(f"{k} {m[k]} there, {p[k]} here")
        if diff and not allow:
            raise CampaignDirError(
                f"{self.root} holds runs of another ccbench version ({'; '.join(diff)}); "
                "mixing them would compare different code. Choose another -o DIR, or pass "
                "--allow-mixed-versions (allow_mixed_versions=True) to add to it anyway "
                "(finished runs of the same ccbench version are then reused)")
        if diff:
            m.setdefault("mixed_versions", []).append({**p, "at": utc_now()})
        return m

    def _clean_temporaries(self) -> None:
        for d in self.runs.iterdir():
            if d.name.startswith(".dask-probe-"):
                d.unlink(missing_ok=True)
            elif d.name.startswith(".") and (".tmp-" in d.name or ".old-" in d.name):
                shutil.rmtree(d, ignore_errors=True)

    # ------------------------------------------------------------------------- runs
    def run_dir(self, key: str) -> Path:
        return self.runs / key

    def is_done(self, key: str) -> bool:
        return (self.runs / key / "metadata.json").is_file()

    def has_tables(self, key: str) -> bool:
        """Whether a finished run kept its tables (not only its summary, ``--keep summary``)."""
        return not (self.runs / key / "summary.json").is_file()

    def commit_files(self, key: str, files: dict[str, bytes]) -> Path:
        """Write a run's files (from a remote worker) and rename them into place."""
        out = self.runs / key
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.tmp-", dir=self.runs))
        try:
            for name, data in files.items():
                (tmp / name).write_bytes(data)
            if out.exists():
                shutil.rmtree(out)
            os.rename(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return out

    def record_failure(self, key: str, info: dict) -> None:
        _atomic_write(self.failed / f"{key}.json",
                      (json.dumps({**info, "at": utc_now()}, indent=2, default=str) + "\n").encode())

    def clear_failure(self, key: str) -> None:
        try:
            (self.failed / f"{key}.json").unlink()
        except FileNotFoundError:
            pass

    def log(self, event: str, **fields) -> None:
        self._log.write(json.dumps({"event": event, "t": utc_now(), **fields}, default=str) + "\n")

    @property
    def log_path(self) -> str:
        return str(self.root / "log.jsonl")

    # --------------------------------------------------------------------- manifest
    def begin(self, plan, *, executor: str, backend: str, options: dict) -> None:
        m = self.manifest
        c = plan.campaign
        m.update({"name": c.name, "campaign_file": c.campaign_file, "base_source": c.source,
                  "updated": utc_now(),
                  "plan": {"points": plan.n_points, "repeats": c.repeats,
                           "runs": plan.n_runs, "columns": plan.columns,
                           "seeds": c.seeds, "backend": backend,
                           "seed_note": plan.seed_note()},
                  "expect": list(getattr(c, "expect", None) or [])})
        m["sessions"].append({**self.prov, "started": utc_now(), "executor": executor,
                              "pid": os.getpid(), "host": socket.gethostname(), **options})
        self.write_manifest()
        self.log("session", executor=executor, runs=plan.n_runs, **self.prov)

    def write_manifest(self) -> None:
        _atomic_write(self.root / "campaign.json",
                      (json.dumps(self.manifest, indent=2, default=str) + "\n").encode())

    def close(self) -> None:
        try:
            self._clean_temporaries()  # runs cut short in this session (workers are gone)
            self._log.close()
        finally:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
