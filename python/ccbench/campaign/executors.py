"""Executors: where the runs of a campaign execute.

* ``InProcess``: one after another in this interpreter.
* ``LocalPool(jobs)``: a pool of ``jobs`` worker processes started once (each imports
  ccbench once and then runs task after task, in batches of about ``target_s`` = 0.2 s);
  workers die with the campaign process.
* ``DaskExecutor(address)``: tasks on a ``dask.distributed`` cluster — ``"local"`` starts a
  LocalCluster, an address (``tcp://host:8786``) joins a running scheduler, a cluster or
  Client object is used as it is. Runs are sent in batches sized so that each task lasts
  about ``target_s`` seconds. A worker that sees the campaign directory (shared file system)
  writes its runs there; one that does not returns the run's files and the campaign process
  commits them, so workers need no shared file system.

Every executor yields one outcome dict per task (``execute``): ``key, ok, rows`` (metric
rows), ``wall_s`` (whole run incl. writing), ``loop_s`` (the backend's own time), ``error``
and ``traceback`` on failure, ``files`` from remote workers.

Emulation runs are real time: ``execute`` holds an exclusive lock file per machine around an
emulation run, so two never overlap on one machine whatever the executor.
"""
from __future__ import annotations

import concurrent.futures as cf
import fcntl
import itertools
import json
import math
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

EMU_LOCK = os.path.join(tempfile.gettempdir(), "ccbench-emu.lock")


@contextmanager
def machine_lock(path: str = EMU_LOCK):
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _append_log(path: str | None, event: dict, logs: dict | None = None) -> None:
    """One line of the campaign's log: one short O_APPEND write. ``logs``: files kept open
    for a batch of runs (path → file; opening it for every run cost ~0.1 ms)."""
    if not path:
        return
    line = json.dumps(event) + "\n"
    if logs is None:
        with open(path, "a") as f:
            f.write(line)
        return
    f = logs.get(path)
    if f is None:
        f = logs[path] = open(path, "a")
    f.write(line)
    f.flush()


@contextmanager
def _open_logs():
    """The ``logs`` of `execute` for a batch of runs, closed after it."""
    logs: dict = {}
    try:
        yield logs
    finally:
        for f in logs.values():
            f.close()


def execute(task: dict, logs: dict | None = None) -> dict:
    """Run one task: the backend, the results directory (``task["out"]``, or a temporary
    directory whose files are returned when it is None), the metric rows. ``task["keep"]``:
    ``tables`` (default) writes the run's tables and computes the rows from them as
    computed; ``summary`` computes the rows before anything is written and commits them
    (``summary.json``) with the metadata instead of the tables."""
    from .. import api
    from .metrics import row_columns, summary_doc

    key = task["key"]
    t0 = time.perf_counter()
    host = socket.gethostname()
    if not task.get("probe") or os.path.exists(task["probe"]):
        _append_log(task.get("log"), {"event": "start", "key": key, "pid": os.getpid(),
                                      "host": host}, logs)
    tmp = None
    try:
        out = task.get("out")
        if task.get("probe") and not os.path.exists(task["probe"]):
            out = None  # the campaign directory is not visible here: return the files
        if out is None:
            tmp = tempfile.mkdtemp(prefix="ccbench-run-")
            out = os.path.join(tmp, key)
        # the campaign's Store removes killed writers' temporaries in runs/ once per session;
        # a run's metadata.json is compact JSON (read by programs; indenting cost ~0.3 ms)
        kw = dict(backend=task["backend"], progress=False, source=task.get("source"),
                  overwrite=True, reload=False, recover=False, compact=True)
        got = {}
        if task.get("keep") == "summary":
            def summarize(computed):
                got["rows"] = row_columns(computed)
                return summary_doc(got["rows"])
            kw.update(keep="summary", summarize=summarize)
        if task["backend"] == "emu":
            with machine_lock():
                res = api.run(task["experiment"], out, **kw)
        else:
            res = api.run(task["experiment"], out, **kw)
        try:
            if task.get("plots"):  # the run's report.html (linked from the campaign's) and PNGs
                api.report(res)
                api.plot(res)
            rows = got["rows"] if "rows" in got else row_columns(res)
        except Exception:
            # the results directory is committed: take it back, or the run would count as
            # finished without its metrics
            shutil.rmtree(out, ignore_errors=True)
            raise
        outcome = {"key": key, "ok": True, "rows": rows, "loop_s": res.meta["wall_time_s"]}
        if tmp is not None:
            outcome["files"] = {p.relative_to(out).as_posix(): p.read_bytes()
                                for p in Path(out).rglob("*") if p.is_file()}
    except BaseException as e:  # a failed run is a result, not the end of the campaign
        if isinstance(e, (KeyboardInterrupt, SystemExit)):  # (a Rust panic is neither)
            raise
        outcome = {"key": key, "ok": False, "error": f"{type(e).__name__}: {e}",
                   "traceback": traceback.format_exc()}
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    outcome["wall_s"] = time.perf_counter() - t0
    outcome["host"] = host
    return outcome


def execute_batch(tasks: list[dict]) -> list[dict]:
    with _open_logs() as logs:
        return [execute(t, logs) for t in tasks]


def batch_name(tasks: list[dict]) -> str:
    """What a batch runs, for the Dask dashboard: ``ccbench <point label> r<repeat>`` for one
    run, ``ccbench <first> … <last> (N runs)`` for more (a task's ``name``; its key without)."""
    names = [str(t.get("name") or t["key"]) for t in tasks]
    text = names[0] if len(names) == 1 else f"{names[0]} … {names[-1]} ({len(names)} runs)"
    return "ccbench " + text


def dask_key(tasks: list[dict]) -> str:
    """A unique Dask key whose prefix (``dask.utils.key_split``: up to the first "-" followed
    by a non-word) is :func:`batch_name` — the dashboard's task stream and progress bars name
    tasks by that prefix (``execute_batch`` said nothing about which runs)."""
    import uuid
    # "-" ends the prefix Dask shows; a label's own hyphens become U+2010 (looks the same)
    return batch_name(tasks).replace("-", "\u2010") + "-" + uuid.uuid4().hex


class Batcher:
    """Cuts the task queue into batches that last about ``target_s`` (learnt from the runs
    finished so far; single runs until the first finishes), leaving at least two batches
    per worker so the end of a campaign stays balanced."""

    #: tasks read ahead of the workers: a lazily planned campaign resolves its runs as they
    #: are read, so only this many experiments wait in memory
    LOOKAHEAD = 512

    def __init__(self, tasks: Iterable[dict], workers: int, target_s: float):
        self.tasks = iter(tasks)
        self.queue: deque = deque()  # read ahead, or put back after a broken pool
        self.ended = False
        self.workers, self.target_s = workers, target_s
        self.n = 0
        self.t = 0.0

    def _read(self, n: int) -> None:
        while not self.ended and len(self.queue) < n:
            t = next(self.tasks, None)
            if t is None:
                self.ended = True
            else:
                self.queue.append(t)

    def waiting(self) -> bool:
        """Whether any task is left to hand out."""
        self._read(1)
        return bool(self.queue)

    def learn(self, outcomes: list[dict]) -> None:
        for o in outcomes:
            self.n += 1
            self.t += o["wall_s"]

    def next(self) -> list[dict]:
        self._read(self.LOOKAHEAD)
        if not self.queue:
            return []
        size = 1
        if self.n:
            size = max(1, math.ceil(self.target_s / max(self.t / self.n, 1e-6)))
            size = min(size, self.LOOKAHEAD)
            if self.ended:  # the end is in sight: leave two batches per worker
                size = min(size, max(1, math.ceil(len(self.queue) / (2 * self.workers))))
        return [self.queue.popleft() for _ in range(min(size, len(self.queue)))]


class InProcess:
    name = "in-process"
    workers = 1

    def map(self, tasks: Iterable[dict]) -> Iterator[dict]:
        with _open_logs() as logs:
            for t in tasks:
                yield execute(t, logs)

    def close(self) -> None:
        pass


@contextmanager
def _main_not_reimported():
    """While worker processes start: spawned children re-import the parent's ``__main__``
    (a user's script, ``<stdin>``, a notebook) unless it has no file or spec. Workers need
    none of it (their functions live here), so hide both, which also spares a script without
    an ``if __name__ == "__main__"`` guard from running again in every worker."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def worker_versions() -> dict:
    from .. import _core
    from ..api import __version__
    return {"ccbench": __version__, "core": getattr(_core, "__version__", None)}


def _installed_versions() -> dict:
    """worker_versions() of the ccbench installed where this runs (by import, not by value)."""
    import importlib
    return importlib.import_module(__name__).worker_versions()


def _ready(_: int) -> int:
    return os.getpid()


def _worker_init() -> None:
    """Pool worker: die with the campaign process (Linux PR_SET_PDEATHSIG), ignore Ctrl-C
    (the campaign process handles it), import the heavy modules once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            os._exit(1)
    except (OSError, AttributeError):
        pass
    from .. import analysis, api  # noqa: F401


#: Workers run polars single-threaded: the parallelism is across runs, and a thread pool
#: per worker on top of one process per core only adds contention for small tables.
WORKER_ENV = {"POLARS_MAX_THREADS": "1"}


class LocalPool:
    """``jobs`` persistent worker processes on this machine.

    A worker that dies (a crash in native code, the kernel's OOM killer) breaks the pool: it
    is restarted, runs committed meanwhile are taken from disk, and the other runs of the
    interrupted batches are retried one at a time, so only the run that kills its worker
    again is recorded as failed."""

    name = "local pool"

    def __init__(self, jobs: int | None = None, *, target_s: float = 0.2, fn=None):
        self.workers = max(1, jobs or os.cpu_count() or 1)
        self.target_s = target_s
        self.fn = fn or execute_batch
        self._start()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx,
                                           initializer=_worker_init)
        # spawned workers inherit the environment at start: set it while they start
        saved = {k: os.environ.get(k) for k in WORKER_ENV}
        os.environ.update(WORKER_ENV)
        try:
            with _main_not_reimported():
                list(self.pool.map(_ready, range(self.workers)))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def map(self, tasks: Iterable[dict]) -> Iterator[dict]:
        b = Batcher(tasks, self.workers, self.target_s)
        pending: dict = {}
        suspects: deque = deque()  # runs of batches a dying worker took down
        lost: list = []  # batches in flight when the pool broke

        def fill():
            while len(pending) < (1 if suspects else 2 * self.workers):
                source = suspects if suspects else b.queue
                batch = [suspects.popleft()] if suspects else b.next()
                if not batch:
                    return
                try:
                    pending[self.pool.submit(self.fn, batch)] = batch
                except BrokenProcessPool:  # broke since the last wait: never sent
                    source.extendleft(reversed(batch))
                    return

        while True:
            if not lost:
                fill()
            if not pending:
                if not (b.waiting() or suspects):
                    return
                self._restart()  # broke with nothing in flight: the queue is intact
                continue
            done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for f in done:
                batch = pending.pop(f)
                try:
                    outs = f.result()
                except BrokenProcessPool:
                    lost.append(batch)
                    continue
                b.learn(outs)
                yield from outs
            if lost and not pending:  # every in-flight batch has died with the pool
                self._restart()
                lone = len(lost) == 1 and len(lost[0]) == 1
                for batch in lost:
                    for t in batch:
                        if t.get("out") and os.path.isfile(os.path.join(t["out"],
                                                                        "metadata.json")):
                            yield _from_disk(t)
                        elif lone:
                            yield {"key": t["key"], "ok": False, "wall_s": 0.0,
                                   "host": socket.gethostname(),
                                   "error": "the worker process running it died (a crash "
                                            "in native code or the out-of-memory killer?)"}
                        else:
                            suspects.append(t)
                lost.clear()

    def _restart(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        self._start()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def abort(self) -> None:
        for p in list(getattr(self.pool, "_processes", {}).values()):
            p.terminate()
        self.pool.shutdown(wait=False, cancel_futures=True)


def _from_disk(task: dict) -> dict:
    """The outcome of a run its worker committed before the pool broke."""
    from .metrics import rows_of_dir
    t0 = time.perf_counter()
    rows = rows_of_dir(task["out"])
    meta = json.loads((Path(task["out"]) / "metadata.json").read_text())
    return {"key": task["key"], "ok": True, "rows": rows,
            "loop_s": meta.get("wall_time_s"), "wall_s": time.perf_counter() - t0,
            "host": socket.gethostname()}


class DaskExecutor:
    """Runs on a dask.distributed cluster, in batches of about ``target_s`` seconds."""

    name = "dask"

    def __init__(self, address="local", *, jobs: int | None = None,
                 target_s: float = 1.0, emu: bool = False):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - dask is a dependency
            raise RuntimeError("--dask needs the dask and distributed packages "
                               "(pip install -r requirements.txt)") from e
        self.cluster = None
        self.own_client = True
        if isinstance(address, Client):  # the caller's client (and cluster): left open
            self.client, self.own_client = address, False
            self.name = f"dask {address.scheduler.address}"
        elif hasattr(address, "scheduler_address"):  # a cluster object (SLURMCluster, ...)
            self.client = Client(address)
            self.name = f"dask {type(address).__name__} {address.scheduler_address}"
        elif address == "local":
            n = 1 if emu else max(1, jobs or os.cpu_count() or 1)
            with _main_not_reimported():
                self.cluster = LocalCluster(n_workers=n, threads_per_worker=1,
                                            processes=True, dashboard_address=None,
                                            env=dict(WORKER_ENV))
            self.client = Client(self.cluster)
            self.name = f"dask LocalCluster ({n} workers)"
        else:
            self.client = Client(address, timeout="30s")
            self.name = f"dask {address}"
        info = self.client.scheduler_info()
        self.workers = max(1, sum(w.get("nthreads", 1) for w in info["workers"].values()))
        self.target_s = target_s
        self._check_versions()

    def _check_versions(self) -> None:
        """Refuse workers running another ccbench or simulator version than this process
        (their runs would be filed under this version's keys)."""
        from .store import CampaignError
        here = worker_versions()
        there = self.client.run(_installed_versions)
        odd = {w: v for w, v in there.items() if v != here}
        if odd:
            self.close()
            w, v = next(iter(odd.items()))
            raise CampaignError(f"{len(odd)} Dask worker(s) run another ccbench: {w} has "
                                f"{v}, this process {here}; install the same version "
                                "everywhere")

    def map(self, tasks: Iterable[dict]) -> Iterator[dict]:
        """Workers that see the campaign directory (a probe file in it) write their runs
        there; the others return the files for this process to commit."""
        from dask.distributed import as_completed
        tasks = iter(tasks)
        first = next(tasks, None)
        if first is None:
            return
        probe = None
        if first.get("out"):
            probe = Path(first["out"]).parent / f".dask-probe-{os.getpid()}-{time.time_ns()}"
            probe.write_text("")

        def probed():
            for t in itertools.chain([first], tasks):
                if probe is not None:
                    t["probe"] = str(probe)
                yield t
        try:
            yield from self._map(probed())
        finally:
            if probe is not None:
                probe.unlink(missing_ok=True)

    def _map(self, tasks: Iterator[dict]) -> Iterator[dict]:
        from dask.distributed import as_completed
        b = Batcher(tasks, self.workers, self.target_s)
        ac = as_completed()
        for _ in range(2 * self.workers):
            if batch := b.next():
                ac.add(self.client.submit(execute_batch, batch, key=dask_key(batch)))
        for fut in ac:
            outs = fut.result()
            fut.release()
            b.learn(outs)
            yield from outs
            if batch := b.next():
                ac.add(self.client.submit(execute_batch, batch, key=dask_key(batch)))

    def close(self) -> None:
        if self.own_client:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def abort(self) -> None:
        self.close()


def make_executor(*, jobs: int | None = None, dask: str | None = None, backend: str = "sim"):
    """The executor for the CLI options: ``dask`` (local | address) wins, then ``jobs`` (1 =
    in process, else a local pool; None = every core). Emulation: one run at a time here."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if dask:
        return DaskExecutor(dask, jobs=jobs, emu=backend == "emu")
    if backend == "emu":
        return InProcess()
    n = jobs if jobs is not None else (os.cpu_count() or 1)
    return InProcess() if n <= 1 else LocalPool(n)
