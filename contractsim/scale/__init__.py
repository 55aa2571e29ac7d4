"""Replay and simulate at production scale: streamed input, every core, or a Dask cluster.

* :mod:`.pool` runs chunks of items on local processes (or in this process) and gives the
  results back in input order; a worker that dies has its runs retried once, then failed;
* :mod:`.cluster` runs the same chunks on ``dask.distributed`` (extra ``contractsim[dask]``);
* :mod:`.replay` streams trace files through the workers and merges the reports by run index;
* :mod:`.batch` simulates many plan files the same way;
* :mod:`.output` writes one result line per run (``--output``) and resumes from it;
* :mod:`.progress` draws a progress bar on standard error.

See ``docs/scale.md``.
"""

from __future__ import annotations

from .dispatch import run_items
from .output import OutputProblem
from .pool import Job, Outcome, default_workers
from .replay import FailedRun, ScaleReplay, replay_at_scale

__all__ = [
    "FailedRun",
    "Job",
    "Outcome",
    "OutputProblem",
    "ScaleReplay",
    "default_workers",
    "replay_at_scale",
    "run_items",
]
