"""The results of a job in input order, with the ones ``--resume`` found merged at their place."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from typing import Any

from .dispatch import run_items
from .output import ResultFile
from .pool import Item, Job, Outcome
from .progress import Progress


def ordered_outcomes(
    job: Job,
    items: Iterable[Item],
    *,
    workers: int,
    dask: Any,
    chunk_size: int,
    results: ResultFile | None,
    bar: Progress,
) -> Iterator[tuple[Outcome, bool]]:
    """(outcome, fresh) for every item in key order: ``fresh`` is False for an item whose line
    ``results`` already held (it is not run again)."""
    done = results.done if results is not None else {}
    todo = (item for item in items if tuple(item[0]) not in done)
    fresh = ((o, True) for o in run_items(job, todo, workers, chunk_size, dask))
    earlier = ((Outcome(list(key), line), False) for key, line in sorted(done.items()))
    for outcome, is_fresh in heapq.merge(earlier, fresh, key=lambda pair: tuple(pair[0].key)):
        bar.advance()
        yield outcome, is_fresh
