"""The same chunks on a Dask cluster (``--dask ADDRESS`` or ``--dask local``).

The job (the contract's source, the options) is scattered to every worker once; each chunk is a
task that reads it from the worker's memory, and a worker builds the contract from it once (see
:func:`.pool._state_for`). Dask retries a task whose worker died once (``retries=1``); a chunk
that fails again is reported as failed runs. Needs the optional extra ``contractsim[dask]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .pool import Item, Job, Outcome, _run_chunk, in_order

INSTALL_HINT = "install the extra: pip install 'contractsim[dask]'"


class DaskUnavailable(RuntimeError):
    """``dask.distributed`` is not installed, or the scheduler cannot be reached."""


def _dask_chunk(job: Job, token: str, chunk: list[Item]) -> list[Outcome]:
    return _run_chunk(job, token, chunk)


def connect(dask: Any, workers: int) -> tuple[Any, Any]:
    """(client, cluster to close or None) for ``dask``: a ``Client``, ``"local"`` (a
    ``LocalCluster`` of ``workers`` one-thread processes) or a scheduler address."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise DaskUnavailable(f"--dask needs dask.distributed ({INSTALL_HINT})") from exc
    if isinstance(dask, Client):
        return dask, None
    if dask == "local":
        cluster = LocalCluster(
            n_workers=max(workers, 1), threads_per_worker=1, dashboard_address=None
        )
        return Client(cluster), cluster
    try:
        return Client(str(dask), timeout="10s"), None
    except (OSError, TimeoutError) as exc:
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {dask}: {exc}") from exc


def run_on_dask(
    job: Job, chunks: Iterable[list[Item]], workers: int, dask: Any
) -> Iterator[Outcome]:
    """Each chunk as one Dask task; the outcomes in item order."""
    from distributed import wait

    client, cluster = connect(dask, workers)
    owned = client is not dask
    try:
        token = job.token
        shipped = client.scatter(job, broadcast=True, hash=False)
        window = 2 * max(len(client.scheduler_info().get("workers", {})), 1) + 2
        chunk_of: dict[Any, list[Item]] = {}

        def submit(chunk: list[Item]) -> Any:
            future = client.submit(_dask_chunk, shipped, token, chunk, retries=1, pure=False)
            chunk_of[future] = chunk
            return future

        def collect(handles: set[Any]) -> Iterator[tuple[Any, list[Outcome]]]:
            finished = wait(list(handles), return_when="FIRST_COMPLETED").done
            for future in finished:
                chunk = chunk_of.pop(future)
                try:
                    outcomes = future.result()
                except Exception as exc:  # noqa: BLE001 - KilledWorker and the like
                    reason = f"the Dask task failed twice: {type(exc).__name__}: {exc}"
                    outcomes = [Outcome(key, None, reason) for key, _ in chunk]
                future.release()
                yield future, outcomes

        yield from in_order(chunks, submit, window, collect)
    finally:
        if owned:
            client.close()
        if cluster is not None:
            cluster.close()
