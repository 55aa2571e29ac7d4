"""The replay loop: predict every recorded step, compare with reality, follow reality.

For each step the simulator predicts the call (``ok``, ``fails`` or ``may_fail``) from the state
reached so far, then :meth:`Simulator.observe` carries the state forward along what really
happened. A ``may_fail`` counts as a predicted failure; ``error`` and ``crash`` are real failures.
A failure that only an environment event causes (``on EVENT probability p``) is a risk, not a
prediction: such a step counts as predicted ``ok`` and is counted among the risks. A predicted
failure that comes from the contract's own evaluation error (``EVAL_ERROR``) is no prediction
either: such a step is a *contract error*, counted apart and left out of precision and recall.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

from ..compiler.values import FMap, thaw
from ..dsl.walk import reads_clock
from ..simulator.observe import STATUSES, Observation, Status, event_risks, predicted_failures
from ..simulator.state import State
from .traces import Run

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.engine import Simulator
    from ..simulator.observe import Observed
    from ..simulator.results import Violation
    from .traces import Step

DEFAULT_NOW = datetime(2000, 1, 1, tzinfo=timezone.utc)
"""The time of runs that carry no ``now`` when none is given: fixed, so replays are repeatable."""

VERDICTS = ("ok", "fails", "may_fail")
OUTCOMES = STATUSES
CONTRACT_ERROR = "EVAL_ERROR"
"""The violation code of a contract that cannot evaluate itself (not a prediction)."""
UNRECOGNISED_CRASH = "the call raised and no `observed when` recognises the exception"
MESSAGE_CHARS = 200
"""A masked message is cut at this length (the groups stay readable)."""

_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
)
_PATH = re.compile(r"(?<![\w<])[\w.~-]*(?:/[\w.~-]*)+")
_NUMBER = re.compile(r"(?<![\w<.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w>])")
_OPERAND = re.compile(r"^([a-z][\w-]*): ([^:'\"`<…]+): ")


@lru_cache(maxsize=4096)  # a replay masks the same few messages over and over
def mask(message: str) -> str:
    """A message with its particulars masked, so that similar messages group together: quoted
    values become ``'…'``, dates and times ``<date>``, paths ``<path>``, numbers ``<n>``, and
    the operands of a Unix-style ``cmd: OPERANDS: problem`` become ``<name>`` (`backticked`
    names are kept)."""
    text = _QUOTED.sub(lambda m: m.group()[0] + "…" + m.group()[0], message.strip())
    text = _DATE.sub("<date>", text)
    text = _PATH.sub("<path>", text)
    text = _NUMBER.sub("<n>", text)
    text = _OPERAND.sub(r"\1: <name>: ", text)
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


@dataclass
class ToolCounts:
    """How one tool's steps compared."""

    steps: int = 0
    false_alarms: int = 0
    """Predicted to fail (fails or may_fail), but the call succeeded."""
    misses: int = 0
    """Predicted ok, but the call failed."""
    contract_errors: int = 0
    """The contract could not evaluate itself (``EVAL_ERROR``): no prediction."""

    @property
    def agree(self) -> int:
        return self.steps - self.false_alarms - self.misses - self.contract_errors


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
class RuleRow:
    """Steps predicted to fail by one rule that really ended one way (one masked message)."""

    code: str
    outcome: str
    message: str
    """The tool's message, masked (:func:`mask`); empty for a call that succeeded."""
    steps: int = 0
    example: str = ""
    """Where the first such step is, with the tool's message unmasked."""

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "outcome": self.outcome,
            "message": self.message,
            "steps": self.steps,
            "example": self.example,
        }


@dataclass
class ClockUse:
    """Which time the replay gave ``today()``/``now()``, and where it came from."""

    reads_clock: bool
    """Whether the contract calls ``today()`` or ``now()`` anywhere."""
    option: datetime | None
    """``--now`` (the time of runs without their own)."""
    from_runs: int = 0
    """Runs replayed at their own ``now``."""
    from_option: int = 0
    from_default: int = 0
    """Runs replayed at :data:`DEFAULT_NOW` (no ``now`` of their own, no ``--now``)."""
    run_times: set[datetime] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {
            "reads_clock": self.reads_clock,
            "runs_with_own_now": self.from_runs,
            "runs_at_option": self.from_option,
            "runs_at_default": self.from_default,
            "option": None if self.option is None else iso_text(self.option),
            "default": iso_text(DEFAULT_NOW),
        }


def iso_text(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


EFFECT_EXAMPLES = 20
"""The effect report keeps the first differences in full up to this many steps."""
DIFF_PATHS = 5
"""At most this many differing paths are named per variable."""


@dataclass
class EffectCounts:
    """How often the contract's state after a call matched the observed ``state_after`` for one
    variable: ``carried`` from the state the replay carried along the run, ``from_real`` from the
    real state before the step (the previous ``state_after``)."""

    compared: int = 0
    carried: int = 0
    from_real: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "compared": self.compared,
            "carried_agree": self.carried,
            "from_real_agree": self.from_real,
        }


@dataclass
class EffectDifference:
    """One step where the contract's state after the call differs from ``state_after``."""

    run: str
    line: int
    step: int
    tool: str
    mode: str
    """``carried`` or ``from_real``."""
    paths: tuple[str, ...]
    """The first differing paths, e.g. ``files["/a/b"]: contract "x", observed "y"``."""

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "line": self.line,
            "step": self.step,
            "tool": self.tool,
            "mode": self.mode,
            "paths": list(self.paths),
        }


@dataclass
class EffectAgreement:
    """Per state variable, how often the contract's effects reproduced the observed state after
    the call (steps that carry ``state_after`` only)."""

    steps: int = 0
    variables: dict[str, EffectCounts] = field(default_factory=dict)
    differences: list[EffectDifference] = field(default_factory=list)
    """The first :data:`EFFECT_EXAMPLES` differing steps."""
    differing_steps: dict[str, int] = field(default_factory=lambda: {"carried": 0, "from_real": 0})
    tools: dict[str, dict[str, int]] = field(default_factory=dict)
    """tool → {steps, carried_differ, from_real_differ}."""

    def _ratio(self, which: str) -> float | None:
        total = sum(c.compared for c in self.variables.values())
        if not total:
            return None
        agree: int = sum(getattr(c, which) for c in self.variables.values())
        return agree / total

    @property
    def carried(self) -> float | None:
        """Share of (step, variable) comparisons that agree, state carried along the run."""
        return self._ratio("carried")

    @property
    def from_real(self) -> float | None:
        """Share of (step, variable) comparisons that agree, from the real state before."""
        return self._ratio("from_real")

    def to_json(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "carried": self.carried,
            "from_real": self.from_real,
            "differing_steps": dict(self.differing_steps),
            "variables": {k: v.to_json() for k, v in sorted(self.variables.items())},
            "tools": {k: dict(v) for k, v in sorted(self.tools.items())},
            "differences": [d.to_json() for d in self.differences],
        }


def _show(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:79] + "…"


def diff_paths(name: str, contract: Any, observed: Any, out: list[str], limit: int) -> None:
    """Append to ``out`` (up to ``limit``) the paths where two JSON-ready values differ."""
    if len(out) >= limit or contract == observed:
        return
    if isinstance(contract, dict) and isinstance(observed, dict):
        for key in sorted(set(contract) | set(observed), key=str):
            path = f"{name}[{_show(key)}]"
            if key not in contract:
                out.append(f"{path}: contract has none, observed {_show(observed[key])}")
            elif key not in observed:
                out.append(f"{path}: contract {_show(contract[key])}, observed none")
            else:
                diff_paths(path, contract[key], observed[key], out, limit)
            if len(out) >= limit:
                return
        return
    if isinstance(contract, list) and isinstance(observed, list):
        try:
            extra = [x for x in contract if x not in observed]
            missing = [x for x in observed if x not in contract]
        except TypeError:  # pragma: no cover - JSON values always compare
            extra, missing = [], []
        if (extra or missing) and len(contract) + len(missing) - len(extra) == len(observed):
            for x in missing:
                if len(out) < limit:
                    out.append(f"{name}: contract lacks {_show(x)}")
            for x in extra:
                if len(out) < limit:
                    out.append(f"{name}: contract has extra {_show(x)}")
            return
        if len(contract) == len(observed):
            for i, (a, b) in enumerate(zip(contract, observed, strict=True)):
                diff_paths(f"{name}[{i}]", a, b, out, limit)
            return
    out.append(f"{name}: contract {_show(contract)}, observed {_show(observed)}")


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
    contract_errors: list[Disagreement] = field(default_factory=list)
    """Steps whose predicted failure came from ``EVAL_ERROR``: not in :attr:`matrix`, nor in
    precision and recall."""
    by_rule: dict[tuple[str, str, str], RuleRow] = field(default_factory=dict)
    """Steps predicted to fail, by the first violated rule × real outcome × masked message."""
    noted_agreements: int = 0
    """Agreeing steps about which ``observe`` noted something (a crash nothing recognised, a
    result that did not fit, an ambiguous outcome …)."""
    agreement_notes: dict[str, int] = field(default_factory=dict)
    """Those notes, masked → number of agreeing steps."""
    clock: ClockUse = field(default_factory=lambda: ClockUse(False, None))
    effects: EffectAgreement = field(default_factory=EffectAgreement)
    """Effect agreement on the steps that carry ``state_after``."""

    @property
    def steps(self) -> int:
        """Every replayed step (contract errors included)."""
        return sum(self.matrix.values()) + len(self.contract_errors)

    @property
    def agreements(self) -> int:
        return self.steps - len(self.disagreements) - len(self.contract_errors)

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
        """Every step agrees, and the contract could evaluate itself at every step."""
        return not self.disagreements and not self.contract_errors


def replay_runs(
    contract: Contract,
    runs: Iterable[Run],
    now: datetime | None = None,
    simulators: dict[datetime, Simulator] | None = None,
    into: ReplayResult | None = None,
) -> ReplayResult:
    """Replay ``runs`` against ``contract``. A run's own ``now`` wins over ``now``, which wins
    over :data:`DEFAULT_NOW`. A caller that replays run by run can keep its simulators between
    calls (``simulators``: time → simulator) and give the result to add to (``into``, which
    also saves walking the contract for its clock use on every call)."""
    sims: dict[datetime, Simulator] = {} if simulators is None else simulators
    out = into if into is not None else ReplayResult(clock=ClockUse(reads_clock(contract.ir), now))
    for run in runs:
        when = run.now or now or DEFAULT_NOW
        if run.now is not None:
            out.clock.from_runs += 1
            out.clock.run_times.add(run.now)
        elif now is not None:
            out.clock.from_option += 1
        else:
            out.clock.from_default += 1
        sim = sims.get(when)
        if sim is None:
            sim = sims[when] = contract.simulator(now=when)
            # only the disagreements are explained, with their messages (see _explained)
            sim.explain = sim.messages = False
        _replay_one(sim, run, out)
        out.runs += 1
    return out


def _replay_one(sim: Simulator, run: Run, out: ReplayResult) -> None:
    state = sim.state_with(run.state)
    real = state  # the real state before the step, as far as the trace shows it
    for i, step in enumerate(run.steps, 1):
        seen = Observation(cast(Status, step.outcome), step.result, step.error)
        # (the checked form of sim.observe: the runs were read and checked by read_runs)
        obs = sim._observe_checked(state, step.tool, step.args, seen)
        if step.state_after is not None:
            from_real = (
                obs
                if real is state or (sim.quick_observe and identical_states(real, state))
                else sim._observe_checked(real, step.tool, step.args, seen)
            )
            _compare_effects(out.effects, run, i, step.tool, step.state_after, obs, from_real)
            real = sim.state_with(step.state_after, base=from_real.state)
        else:
            real = obs.state
        verdict = obs.predicted
        predicted_failure = verdict != "ok"
        violations: list[Violation] = []
        if predicted_failure:
            failing = predicted_failures(obs.prediction)
            violations = [
                v for b in sorted(failing, key=lambda b: not b.certain) for v in b.violations
            ]
        contract_error = predicted_failure and any(v.code == CONTRACT_ERROR for v in violations)
        if verdict == "ok" and event_risks(obs.prediction):
            out.risks += 1
            out.risks_realised += step.outcome != "ok"
        if obs.result_problem is not None:
            out.result_mismatches.append(
                ResultMismatch(run.name, run.line, i, step.tool, obs.result_problem)
            )
        counts = out.tools.get(step.tool)
        if counts is None:
            counts = out.tools[step.tool] = ToolCounts()
        counts.steps += 1
        real_failure = step.outcome != "ok"
        if predicted_failure:
            _count_rule(
                out, violations[0].code if violations else "?", run, i, step.outcome, step.error
            )
        agrees = predicted_failure == real_failure and not contract_error
        if not contract_error:
            out.matrix[(verdict, step.outcome)] += 1
        if not agrees:
            if contract_error:
                counts.contract_errors += 1
            elif predicted_failure:
                counts.false_alarms += 1
            else:
                counts.misses += 1
            found = Disagreement(
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
            (out.contract_errors if contract_error else out.disagreements).append(found)
        else:
            notes = list(obs.notes + obs.ambiguities)
            if step.outcome == "crash" and not _recognised(sim, step.tool, obs.outcome):
                notes.append(UNRECOGNISED_CRASH)
            if notes:
                out.noted_agreements += 1
                for note in dict.fromkeys(mask(n) for n in notes):
                    out.agreement_notes[note] = out.agreement_notes.get(note, 0) + 1
        state = obs.state


def identical_states(a: State, b: State) -> bool:
    """Whether two states hold the same values of the same types all the way down, so that
    observing a call from either gives the same answers (replay then observes it once when the
    real state before a step is the carried one). Stricter than ``==``, for which ``1``,
    ``1.0`` and ``True`` are equal; False when unsure."""
    return a.layout is b.layout and all(map(identical, a.data, b.data))


_EXACT = frozenset({str, int, bool, type(None)})
"""Types whose equal values are the same value (unlike ``float``: ``0.0 == -0.0``)."""


def identical(a: Any, b: Any) -> bool:
    """Whether two contract values are the same value of the same types all the way down
    (see :func:`identical_states`); False when unsure (unknowns, fresh values, sets of mixed
    or inexact types, maps whose keys come in another order)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in _EXACT:
        return bool(a == b)
    if kind is float:
        return bool(a == b) and math.copysign(1.0, a) == math.copysign(1.0, b)
    if kind is tuple:
        return len(a) == len(b) and all(map(identical, a, b))
    if kind is FMap:
        return (
            len(a) == len(b)
            and all(map(identical, a.keys(), b.keys()))
            and all(map(identical, a.values(), b.values()))
        )
    if kind is frozenset:
        types = set(map(type, a))
        return len(types) <= 1 and types <= _EXACT and a == b and types == set(map(type, b))
    return False


def _compare_effects(
    eff: EffectAgreement,
    run: Run,
    i: int,
    tool: str,
    after: dict[str, Any],
    carried: Any,
    from_real: Any,
) -> None:
    eff.steps += 1
    row = eff.tools.get(tool)
    if row is None:
        row = eff.tools[tool] = {"steps": 0, "carried_differ": 0, "from_real_differ": 0}
    row["steps"] += 1
    variables = eff.variables
    compared: list[tuple[str, Any, Any]] = []  # (name, the contract's value, the observed one)
    for name, value in after.items():
        if name.startswith("machine:") or name not in carried.state:
            continue
        counts = variables.get(name)
        if counts is None:
            counts = variables[name] = EffectCounts()
        counts.compared += 1
        compared.append((name, counts, value))
    agreed: list[bool] = []
    for mode, observed_step in (("carried", carried), ("from_real", from_real)):
        state = observed_step.state
        if observed_step is not carried or not agreed:  # (the same observation: same answers)
            agreed = [_same(state[name], value) for name, _, value in compared]
        paths: list[str] = []
        differs = False
        for (name, counts, value), same in zip(compared, agreed, strict=True):
            if same:
                setattr(counts, mode, getattr(counts, mode) + 1)
                continue
            differs = True
            diff_paths(name, thaw(state[name]), thaw(value), paths, DIFF_PATHS)
        if differs:
            eff.differing_steps[mode] += 1
            row[f"{mode}_differ"] += 1
            if len(eff.differences) < EFFECT_EXAMPLES:
                eff.differences.append(
                    EffectDifference(run.name, run.line, i, tool, mode, tuple(paths))
                )


def _same(mine: Any, observed: Any) -> bool:
    try:
        return (
            bool(mine == observed) and type(mine) is type(observed) or thaw(mine) == thaw(observed)
        )
    except Exception:  # noqa: BLE001 - unknown values do not compare: they do not agree
        return False


def _recognised(sim: Simulator, tool: str, outcome: str | None) -> bool:
    """Whether the outcome a real call was matched to has an ``observed when`` (which then
    recognised the call)."""
    ctool = sim.compiled.tools.get(tool)
    cout = None if ctool is None or outcome is None else ctool.outcomes.get(outcome)
    return cout is not None and cout.observed is not None


def _count_rule(
    out: ReplayResult, code: str, run: Run, step: int, outcome: str, error: str | None
) -> None:
    message = "" if outcome == "ok" else mask(error or "")
    row = out.by_rule.get((code, outcome, message))
    if row is None:
        where = f"{run.name} step {step}" + (f": {error}" if error and outcome != "ok" else "")
        row = out.by_rule[(code, outcome, message)] = RuleRow(code, outcome, message, 0, where)
    row.steps += 1


def _explained(sim: Simulator, state: State, step: Step, obs: Observed) -> list[Violation]:
    """The prediction's violations with the values of their conditions' parts: the prediction
    made again with explanations on (it is deterministic: the same state, tool and arguments)."""
    if not obs.prediction.violations or (sim.explain and sim.messages):
        return obs.prediction.violations
    explain, messages = sim.explain, sim.messages
    sim.explain = sim.messages = True
    try:
        return sim.step(state, step.tool, step.args).violations
    finally:
        sim.explain, sim.messages = explain, messages
