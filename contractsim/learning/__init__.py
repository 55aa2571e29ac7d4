"""Contracts learned from recorded runs (``contractsim learn``, docs/learn.md).

From runs in the trace format of ``replay`` (docs/replay.md), where steps may carry
``state_after``, the learner writes each tool's preconditions (from a bounded hypothesis
language of atoms, :mod:`.atoms`), error codes and messages (from the failure messages,
:mod:`.messages`) and effects (from the state before and after, :mod:`.effects`) into a skeleton
contract (given, or inferred from the values, :mod:`.infer`). It never runs code from a trace.

* default mode: the fewest clauses (greedy set cover) that are violated before as many observed
  failures as possible, each holding before every observed success;
* ``safe``: every atom that held before every observed success (SAM learning's conservative
  model: when the true preconditions are conjunctions of atoms of the language, the learned
  contract never approves a call the true one refuses).

Reading traces reuses ``replay``'s reader (:func:`contractsim.replay.read_runs`): both packages
are on the same layer, and the trace format is one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..diagnostics import ContractError
from .core import DEFAULT_MAX_ATOMS, DEFAULT_MIN_SUPPORT, Learned, learn_runs
from .effects import EXCEPTIONS
from .emit import drop_items, emit, skeleton_of, widen_accepts

MAX_CHECK_ROUNDS = 5
"""A learned item the checker refuses (a value outside an enum, a type the term does not have …)
is dropped and the contract checked again, at most this many times."""

if TYPE_CHECKING:
    from ..api import Contract
    from ..replay.traces import Run

__all__ = [
    "DEFAULT_MAX_ATOMS",
    "DEFAULT_MIN_SUPPORT",
    "Learned",
    "LearnResult",
    "emit",
    "learn_from_runs",
    "learn_runs",
    "skeleton_of",
]


@dataclass
class LearnResult:
    """A learned contract: its text, the checked :class:`~contractsim.Contract`, and the report."""

    text: str
    contract: Contract
    learned: Learned

    def report(self) -> dict[str, Any]:
        """The JSON report: per tool, atoms considered, clauses with support and confidence,
        unexplained failures and state changes."""
        return self.learned.to_json()


def learn_from_runs(
    skeleton: Contract,
    runs: Sequence[Run],
    *,
    safe: bool = False,
    max_atoms: int = DEFAULT_MAX_ATOMS,
    min_support: int = DEFAULT_MIN_SUPPORT,
    effect_exceptions: int = EXCEPTIONS,
    filename: str = "learned.contract",
    load_text: Callable[[str, str], Contract],
) -> LearnResult:
    """Learn from runs already read against ``skeleton``; the result is checked with
    ``load_text`` (text, filename → a compiled contract: the façade's ``loads``)."""
    loads = load_text
    widened_text, widened = widen_accepts(skeleton, runs)
    if widened:  # successes with values of other kinds: the tool accepts more than it declares
        skeleton = loads(widened_text, skeleton.filename)
    learned = learn_runs(
        skeleton,
        runs,
        safe=safe,
        max_atoms=max_atoms,
        min_support=min_support,
        effect_exceptions=effect_exceptions,
    )
    learned.widened = widened
    text = emit(skeleton, learned)
    for _ in range(MAX_CHECK_ROUNDS):
        try:
            return LearnResult(text, loads(text, filename), learned)
        except ContractError as exc:
            lines = sorted(
                {d.span.line for d in exc.diagnostics if d.severity == "error" and d.span.line}
            )
            text, dropped = drop_items(text, lines)
            if not dropped:
                raise
            learned.dropped += dropped
    return LearnResult(text, loads(text, filename), learned)
