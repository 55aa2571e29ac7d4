"""The replay loop: predict every recorded step, compare with reality, follow reality.

For each step the simulator predicts the call (``ok``, ``fails`` or ``may_fail``) from the state
reached so far, then :meth:`Simulator.observe` carries the state forward along what really
happened. A ``may_fail`` counts as a predicted failure; ``error`` and ``crash`` are real failures.
A failure that only an environment event causes (``on EVENT probability p``) is a risk, not a
prediction: such a step counts as predicted ``ok`` and is counted among the risks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast

from ..simulator.observe import STATUSES, Observation, Status, event_risks
from .traces import Run

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.engine import Simulator, Violation
    from ..simulator.observe import Observed
    from ..simulator.state import State
    from .traces import Step

DEFAULT_NOW = datetime(2000, 1, 1, tzinfo=timezone.utc)
"""The time of runs that carry no ``now`` when none is given: fixed, so replays are repeatable."""

VERDICTS = ("ok", "fails", "may_fail")
OUTCOMES = STATUSES


@dataclass
class ToolCounts:
    """How one tool's steps compared."""

    steps: int = 0
    false_alarms: int = 0
    """Predicted to fail (fails or may_fail), but the call succeeded."""
    misses: int = 0
    """Predicted ok, but the call failed."""

    @property
    def agree(self) -> int:
        return self.steps - self.false_alarms - self.misses


@dataclass
class Disagreement:
    """One step where the contract and the tool disagree, with everything needed to see why."""

    run: str
    run_index: int
    line: int
    step: int
    """1-based position of the step in its run."""
    tool: str
    args: dict[str, Any]
    state: dict[str, Any]
    """The state before the call (JSON-ready)."""
    predicted: str
    violations: list[dict[str, Any]]
    """The contract's violated rules (empty when it predicted ok)."""
    outcome: str
    error: str | None
    notes: tuple[str, ...] = ()
    matched: str | None = None
    """The contract outcome the real call was matched to (e.g. by ``observed when``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "run_index": self.run_index,
            "line": self.line,
            "step": self.step,
            "tool": self.tool,
            "args": self.args,
            "predicted": self.predicted,
            "violations": self.violations,
            "outcome": self.outcome,
            "error": self.error,
            "matched_outcome": self.matched,
            "notes": list(self.notes),
            "state": self.state,
        }


@dataclass(frozen=True)
class ResultMismatch:
    """A real result that does not fit the contract's return type."""

    run: str
    line: int
    step: int
    tool: str
    problem: str

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "line": self.line,
            "step": self.step,
            "tool": self.tool,
            "problem": self.problem,
        }


@dataclass
class ReplayResult:
    """Counts over every replayed step, and the disagreements in order."""

    runs: int = 0
    matrix: dict[tuple[str, str], int] = field(
        default_factory=lambda: {(v, o): 0 for v in VERDICTS for o in OUTCOMES}
    )
    """(predicted verdict, real outcome) → number of steps."""
    tools: dict[str, ToolCounts] = field(default_factory=dict)
    disagreements: list[Disagreement] = field(default_factory=list)
    risks: int = 0
    """Steps predicted ok that only an environment event could make fail."""
    risks_realised: int = 0
    """Of those, the steps that really failed."""
    result_mismatches: list[ResultMismatch] = field(default_factory=list)
    """Successful steps whose returned value does not fit the tool's ``-> TYPE``."""

    @property
    def steps(self) -> int:
        return sum(self.matrix.values())

    def _count(self, predicted_failure: bool, real_failure: bool) -> int:
        return sum(
            n
            for (v, o), n in self.matrix.items()
            if (v != "ok") == predicted_failure and (o != "ok") == real_failure
        )

    @property
    def true_positives(self) -> int:
        """Predicted failures that really failed."""
        return self._count(True, True)

    @property
    def false_positives(self) -> int:
        """Predicted failures that succeeded (false alarms)."""
        return self._count(True, False)

    @property
    def false_negatives(self) -> int:
        """Predicted successes that failed (misses)."""
        return self._count(False, True)

    @property
    def true_negatives(self) -> int:
        return self._count(False, False)

    @property
    def precision(self) -> float | None:
        """Of the predicted failures, the share that really failed (None: none predicted)."""
        predicted = self.true_positives + self.false_positives
        return None if predicted == 0 else self.true_positives / predicted

    @property
    def recall(self) -> float | None:
        """Of the real failures, the share that was predicted (None: nothing failed)."""
        real = self.true_positives + self.false_negatives
        return None if real == 0 else self.true_positives / real

    @property
    def agree(self) -> bool:
        return not self.disagreements


def replay_runs(contract: Contract, runs: list[Run], now: datetime | None = None) -> ReplayResult:
    """Replay ``runs`` against ``contract``. A run's own ``now`` wins over ``now``, which wins
    over :data:`DEFAULT_NOW`."""
    sims: dict[datetime, Simulator] = {}
    out = ReplayResult()
    for run in runs:
        when = run.now or now or DEFAULT_NOW
        sim = sims.get(when)
        if sim is None:
            sim = sims[when] = contract.simulator(now=when)
            sim.explain = False  # only the disagreements are explained (see _explained)
        _replay_one(sim, run, out)
        out.runs += 1
    return out


def _replay_one(sim: Simulator, run: Run, out: ReplayResult) -> None:
    state = sim.state_with(run.state)
    for i, step in enumerate(run.steps, 1):
        seen = Observation(cast(Status, step.outcome), step.result, step.error)
        obs = sim.observe(state, step.tool, step.args, seen)
        verdict = obs.predicted
        if verdict == "ok" and event_risks(obs.prediction):
            out.risks += 1
            out.risks_realised += step.outcome != "ok"
        if obs.result_problem is not None:
            out.result_mismatches.append(
                ResultMismatch(run.name, run.line, i, step.tool, obs.result_problem)
            )
        out.matrix[(verdict, step.outcome)] += 1
        counts = out.tools.setdefault(step.tool, ToolCounts())
        counts.steps += 1
        predicted_failure = verdict != "ok"
        real_failure = step.outcome != "ok"
        if predicted_failure != real_failure:
            if predicted_failure:
                counts.false_alarms += 1
            else:
                counts.misses += 1
            out.disagreements.append(
                Disagreement(
                    run=run.name,
                    run_index=run.index,
                    line=run.line,
                    step=i,
                    tool=step.tool,
                    args=step.args,
                    state=state.to_json(),
                    predicted=verdict,
                    violations=[v.to_json() for v in _explained(sim, state, step, obs)],
                    outcome=step.outcome,
                    error=step.error,
                    notes=obs.notes + obs.ambiguities,
                    matched=obs.outcome,
                )
            )
        state = obs.state


def _explained(sim: Simulator, state: State, step: Step, obs: Observed) -> list[Violation]:
    """The prediction's violations with the values of their conditions' parts: the prediction
    made again with explanations on (it is deterministic: the same state, tool and arguments)."""
    if not obs.prediction.violations or sim.explain:
        return obs.prediction.violations
    sim.explain = True
    try:
        return sim.step(state, step.tool, step.args).violations
    finally:
        sim.explain = False
