"""Run many small jobs over local processes or a Dask cluster, and give the results back in order.

A :class:`Job` says how a worker builds what it needs once (``setup``: the compiled contract,
from its source text) and what it does with one item (``task``: replay one run, simulate one
plan). Items are shipped in chunks; each chunk's results come back as JSON text lines, and
:func:`run_items` yields them **in item order** whatever the order of completion, so that the
merged report is byte-identical for any number of workers.

A worker process that dies (killed, out of memory, a crash in C code) breaks a
``ProcessPoolExecutor``: the runs of every chunk that did not come back are retried once, one by
one, each in a fresh single-process pool; a run that kills its worker again is reported as a
failed :class:`Outcome` (``line`` None, ``failure`` set). Nothing is lost and nothing is counted
twice: a chunk's results are taken only from a chunk that finished.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from itertools import islice
from typing import Any

Key = Any
"""An item's place in the input (picklable, JSON-ready), e.g. ``[file, index]``."""
WORKER_DIED = "the worker process died twice on this run (killed, or crashed outside Python)"


@dataclass(frozen=True)
class Job:
    """What every worker needs: ``setup(*setup_args)`` is called once per worker and builds its
    state; ``task(state, payload)`` handles one item and returns one JSON text line. Both must
    be module-level functions (they are pickled by reference)."""

    setup: Callable[..., Any]
    setup_args: tuple[Any, ...]
    task: Callable[[Any, Any], str]

    @property
    def token(self) -> str:
        """Identifies the job in a worker's cache (one setup per worker, not per chunk)."""
        import hashlib
        import pickle

        data = pickle.dumps((self.setup, self.setup_args, self.task))
        return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Outcome:
    """The result of one item: its JSON text ``line``, or why it failed (``failure``)."""

    key: Key
    line: str | None
    failure: str | None = None


Item = tuple[Key, Any]
"""(key, payload): the payload is what the task receives."""

# ------------------------------------------------------------------------------ in the worker

_STATES: dict[str, Any] = {}
_STATES_LOCK = threading.Lock()


def _state_for(job: Job, token: str) -> Any:
    """The worker's state for ``job``, built on first use (thread-safe: Dask may run several
    tasks of one worker in threads)."""
    with _STATES_LOCK:
        state = _STATES.get(token)
        if state is None:
            state = _STATES[token] = job.setup(*job.setup_args)
        return state


def _init_worker(job: Job, token: str) -> None:
    _state_for(job, token)


def _run_chunk(job: Job, token: str, chunk: list[Item]) -> list[Outcome]:
    """Run a chunk in a worker. An exception from the task fails its item only."""
    state = _state_for(job, token)
    out = []
    for key, payload in chunk:
        try:
            out.append(Outcome(key, job.task(state, payload)))
        except Exception as exc:  # noqa: BLE001 - a bug on one item must not lose the others
            out.append(Outcome(key, None, f"{type(exc).__name__}: {exc}"))
    return out


def _run_chunk_in_pool(token: str, chunk: list[Item]) -> list[Outcome]:
    """The task of a local pool: the job was set up by the pool's initializer."""
    job = _POOL_JOBS[token]
    return _run_chunk(job, token, chunk)


_POOL_JOBS: dict[str, Job] = {}


def _init_pool_worker(job: Job, token: str) -> None:
    _POOL_JOBS[token] = job
    _init_worker(job, token)


# ------------------------------------------------------------------------------ in the parent


def chunked(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    """Consecutive chunks of ``size`` items (the last may be shorter), read lazily."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def in_order(
    chunks: Iterable[list[Item]],
    submit: Callable[[list[Item]], Any],
    window: int,
    collect: Callable[[set[Any]], Iterator[tuple[Any, list[Outcome]]]],
) -> Iterator[Outcome]:
    """Submit chunks (at most ``window`` in flight) and yield their outcomes in chunk order.
    ``submit`` returns a handle; ``collect(handles)`` waits for some of them and yields (handle,
    outcomes) for each that finished."""
    pending: dict[Any, int] = {}  # handle → chunk number
    done: dict[int, list[Outcome]] = {}
    next_out = 0
    source = iter(chunks)
    number = 0
    exhausted = False
    while True:
        while not exhausted and len(pending) + len(done) < window:
            chunk = next(source, None)
            if chunk is None:
                exhausted = True
                break
            pending[submit(chunk)] = number
            number += 1
        if not pending:
            break
        for handle, outcomes in collect(set(pending)):
            done[pending.pop(handle)] = outcomes
        while next_out in done:
            yield from done.pop(next_out)
            next_out += 1
    while next_out in done:  # pragma: no cover - every chunk was collected above
        yield from done.pop(next_out)
        next_out += 1


def _context() -> Any:
    """Fork where it is safe (no threads yet: fast, nothing re-imported), else forkserver."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _new_pool(job: Job, token: str, workers: int) -> ProcessPoolExecutor:
    context = _context()
    if context.get_start_method() == "fork":
        # built once here, the workers inherit it: no worker compiles the contract again
        _state_for(job, token)
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_init_pool_worker,
        initargs=(job, token),
    )


def _run_local(job: Job, chunks: Iterable[list[Item]], workers: int) -> Iterator[Outcome]:
    token = job.token
    pool = [_new_pool(job, token, workers)]
    chunk_of: dict[Future[list[Outcome]], tuple[list[Item], ProcessPoolExecutor]] = {}

    def submit(chunk: list[Item]) -> Future[list[Outcome]]:
        try:
            future = pool[0].submit(_run_chunk_in_pool, token, chunk)
        except BrokenProcessPool:
            _replace_pool(pool[0])
            future = pool[0].submit(_run_chunk_in_pool, token, chunk)
        chunk_of[future] = (chunk, pool[0])
        return future

    def _replace_pool(broken: ProcessPoolExecutor) -> None:
        """A fresh pool instead of ``broken``, once (the chunks that were in flight in it come
        back broken one by one; the pool that replaced it is not touched)."""
        if broken is pool[0]:
            broken.shutdown(wait=False, cancel_futures=True)
            pool[0] = _new_pool(job, token, workers)

    def collect(
        handles: set[Future[list[Outcome]]],
    ) -> Iterator[tuple[Future[list[Outcome]], list[Outcome]]]:
        finished, _ = wait(handles, return_when=FIRST_COMPLETED)
        for future in finished:
            chunk, owner = chunk_of.pop(future)
            try:
                outcomes = future.result()
            except (BrokenProcessPool, CancelledError):
                _replace_pool(owner)
                outcomes = _retry_alone(job, token, chunk)
            yield future, outcomes

    try:
        yield from in_order(chunks, submit, 2 * workers + 2, collect)
    finally:
        pool[0].shutdown(wait=True, cancel_futures=True)


def _retry_alone(job: Job, token: str, chunk: list[Item]) -> list[Outcome]:
    """Each item of a chunk whose worker died, once more, alone in a fresh one-process pool:
    an item that kills that worker too is a failed outcome; the others come back as usual."""
    out: list[Outcome] = []
    pool = _new_pool(job, token, 1)
    try:
        for item in chunk:
            try:
                out += pool.submit(_run_chunk_in_pool, token, [item]).result()
            except BrokenProcessPool:
                out.append(Outcome(item[0], None, WORKER_DIED))
                pool.shutdown(wait=False, cancel_futures=True)
                pool = _new_pool(job, token, 1)
    finally:
        pool.shutdown(wait=True)
    return out


def default_workers() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1
