"""Planning over a contract: the cheapest calls to a goal (:func:`plan`), plan repair
(:func:`repair`) and minimal tool sets (:func:`select`).

Sits above the simulator: every step a plan takes is one the simulator says is ``ok`` (or, with
``allow_may_fail``, ``may_fail``); grounding is in :mod:`.grounding`, the delete relaxation and its
heuristics in :mod:`.relaxed`, the search in :mod:`.search`, repair in :mod:`.repair` and tool
selection in :mod:`.select`.
"""

from __future__ import annotations

from .grounding import Grounding, ground
from .repair import RepairResult, repair
from .search import PlanResult, plan

__all__ = [
    "Grounding",
    "PlanResult",
    "RepairResult",
    "ground",
    "plan",
    "repair",
]

from .select import Selection, select  # noqa: E402

__all__ += ["Selection", "select"]
