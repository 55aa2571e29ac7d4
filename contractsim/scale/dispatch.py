"""Where the chunks run: in this process, on local worker processes, or on Dask."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .pool import Item, Job, Outcome, _run_chunk, _run_local, chunked


def run_items(
    job: Job,
    items: Iterable[Item],
    workers: int = 1,
    chunk_size: int = 64,
    dask: Any = None,
) -> Iterator[Outcome]:
    """Every item's :class:`Outcome`, in item order. ``workers`` local processes (1: in this
    process, no pool), or a Dask cluster when ``dask`` is given (an address, ``"local"`` for a
    ``LocalCluster`` of ``workers`` processes, or a ``distributed.Client``). Items are read
    lazily, and at most a few chunks per worker are in flight: memory does not grow with the
    number of items."""
    chunks = chunked(items, chunk_size)
    if dask is not None:
        from .cluster import run_on_dask

        yield from run_on_dask(job, chunks, workers, dask)
    elif workers <= 1:
        token = job.token
        for chunk in chunks:
            yield from _run_chunk(job, token, chunk)
    else:
        yield from _run_local(job, chunks, workers)
