"""Conformance checking of recorded runs against a contract (``contractsim replay``).

A recorded run is a sequence of real calls with what really happened at each (``ok``, ``error``,
``crash``). For every step the contract's prediction is compared with reality, and the state is
carried forward along the real outcome (:meth:`Simulator.observe`). The report counts where the
contract and the tool disagree; see ``docs/replay.md``.

* :mod:`.traces` reads trace files (contractsim's own format, or any format through an adapter);
* :mod:`.loop` replays runs and collects the counts;
* :mod:`.report` renders the result as text or JSON.
"""

from __future__ import annotations

from .loop import ClockUse, Disagreement, ReplayResult, RuleRow, ToolCounts, mask, replay_runs
from .report import render_json, render_text
from .traces import Run, Step, load_adapter, read_runs

__all__ = [
    "ClockUse",
    "Disagreement",
    "ReplayResult",
    "RuleRow",
    "Run",
    "Step",
    "ToolCounts",
    "load_adapter",
    "mask",
    "read_runs",
    "render_json",
    "render_text",
    "replay_runs",
]
