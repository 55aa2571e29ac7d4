"""Observed steps: what the contract predicted for a real call, and where reality took the state.

The runtime guard and ``contractsim replay`` both feed real calls through here. A real call ends
``ok`` (it returned normally), ``error`` (it returned a failure, e.g. a result with an ``error``
key) or ``crash`` (it raised). The prediction is the simulator's step before the result is known;
the state is then carried forward along the branch that matches what really happened, with
``result`` bound to the real return value:

* a real success takes the success/partial branches (when the contract predicted a failure, the
  outcomes run anyway: the call happened, so its effects did);
* a real failure — returned or raised — takes the failing branches (a violated precondition
  leaves the state unchanged; a ``fails`` outcome applies its own effects; a raise takes no
  branch that only an environment event causes); with none, the state is left unchanged;
* outcomes whose ``observed when`` is false are excluded, those where it holds are preferred.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic_core import ValidationError

from ..compiler import lib
from ..compiler.compile import OBSERVED_ERROR, CTool
from ..compiler.core_schemas import PlainArgsModel, model_values
from ..compiler.foreign import contract_value, exception_text
from ..compiler.problems import problems_from
from ..compiler.values import UNKNOWN
from ..dsl.types import type_label
from .results import Branch, StepResult, Verdict, Violation
from .state import State
from .step import SIMULATED

if TYPE_CHECKING:
    from .engine import Simulator

Status = Literal["ok", "error", "crash"]
STATUSES: tuple[Status, ...] = ("ok", "error", "crash")
"""How a real call can end: returned normally, returned a failure, raised."""


@dataclass(frozen=True)
class Observation:
    """What a real call did.

    ``status`` is ``ok``, ``error`` or ``crash``; ``None`` lets the contract classify the call:
    a given ``error`` (an exception's ``Type: message``) makes it a crash, otherwise the first
    outcome whose ``observed when`` holds decides, and with none it is ``ok``.
    """

    status: Status | None = None
    result: Any = None
    error: str | None = None

    @classmethod
    def returned(cls, value: Any) -> Observation:
        """A call that returned ``value`` (classified by the contract's ``observed when``)."""
        return cls(None, value, None)

    @classmethod
    def raised(cls, exc: BaseException) -> Observation:
        """A call that raised ``exc``."""
        if not isinstance(exc, BaseException):
            raise TypeError(f"exc must be the exception the call raised, not {type(exc).__name__}")
        return cls("crash", None, exception_text(exc))


@dataclass
class Observed:
    """A real call seen through the contract."""

    prediction: StepResult
    """The simulator's step before the result was known."""
    status: Status
    """What really happened."""
    outcome: str | None
    """The contract outcome the real call was matched to (None: no outcome fits)."""
    branch: Branch | None
    """The branch taken, with ``result`` bound to the real value."""
    state: State
    """The state carried forward."""
    notes: tuple[str, ...] = field(default=())
    """Why the call and the contract do not fit together, when they do not (a ``may_fail``
    either way is no disagreement here)."""
    result_problem: str | None = None
    """Why the returned value does not fit ``-> TYPE`` (for a call that succeeded)."""
    ambiguities: tuple[str, ...] = ()
    """Other outcomes that fit as well as the one taken (no disagreement: the contract may want
    an ``observed when`` to tell them apart)."""

    @property
    def predicted(self) -> Verdict:
        """The prediction for this one call: :func:`expected_verdict`."""
        return expected_verdict(self.prediction)

    @property
    def predicted_failure(self) -> bool:
        """The prediction was ``fails`` or ``may_fail``."""
        return self.predicted != "ok"

    @property
    def agrees(self) -> bool:
        """Predicted failure (fails or may_fail) equals real failure (error or crash)."""
        return self.predicted_failure == (self.status != "ok")

    @property
    def violations(self) -> list[Violation]:
        """The rules the prediction found violated."""
        return self.prediction.violations


def expected_verdict(step: StepResult) -> Verdict:
    """What a single real call should do: ``fails`` when it fails whatever the environment does,
    ``may_fail`` when that depends on unknown state, ``ok`` otherwise. A failure that only an
    environment event causes (``on EVENT``) is a risk, not a prediction (unlike the plan-level
    :attr:`StepResult.verdict`, which counts every branch)."""
    failing = predicted_failures(step)
    if any(b.certain for b in failing):
        return "fails"
    return "may_fail" if failing else "ok"


def predicted_failures(step: StepResult) -> list[Branch]:
    """The failure branches that do not need an environment event (certain or under unknowns)."""
    return [b for b in step.branches if b.failed and b.event is None]


def event_risks(step: StepResult) -> list[Branch]:
    """The failure branches that only an environment event causes."""
    return [b for b in step.branches if b.failed and b.event is not None]


def observe(
    sim: Simulator,
    state: State,
    tool: str,
    args: Mapping[str, Any] | None,
    seen: Observation,
    prediction: StepResult | None = None,
) -> Observed:
    """Predict ``tool(**args)`` in ``state`` (or take the ``prediction`` made before the call),
    then follow what really happened."""
    with lib.step_budget(sim.step_seconds):
        return _observe(sim, state, tool, dict(args or {}), seen, prediction)


def _observe(
    sim: Simulator,
    state: State,
    tool: str,
    args: dict[str, Any],
    seen: Observation,
    prediction: StepResult | None,
) -> Observed:
    ctool = sim.compiled.tools.get(tool)
    values = None if ctool is None else _validated_args(sim, ctool, args)
    predicted_here = prediction is None
    if ctool is None or values is None:
        if prediction is None:
            prediction = sim._step(state, tool, args)
        status = seen.status or ("crash" if seen.error is not None else "ok")
        what = "declares no such tool" if ctool is None else "rejects these arguments"
        odd = () if status != "ok" else (f"the call went through, but the contract {what}",)
        return Observed(prediction, status, None, None, state, odd)
    notes: list[str] = []
    raised = seen.status == "crash" or (seen.status is None and seen.error is not None)
    shape: list[Callable[[], str]] = []  # why the result does not fit (made when needed)
    real, raw = (None, None) if raised else _real_result(sim, ctool, seen.result, shape)
    # a tool that reads no result is predicted with the real one bound, which changes nothing
    # but the branches' `result` (no made-up result to build): they are then the very branches
    # that observing the real result builds (see _result_is_inert)
    unread = predicted_here and _result_is_inert(sim, ctool, real)
    if prediction is None:
        # what `sim._step` does, with the arguments validated once
        prediction = sim._step_validated(state, ctool, values, args, real if unread else SIMULATED)
    # `observed when` reads the value as returned, even when it does not fit `-> TYPE`: a
    # failure reply with an extra field must still be recognised as a failure
    matched = _observed_matches(sim, ctool, state, values, raw, seen.error, notes)
    status = seen.status or _classify(ctool, raised, matched, notes)
    wanted_failure = status != "ok"
    problem = None
    if not wanted_failure and shape:
        misfits = [why() for why in shape]
        problem = misfits[0]
        notes.extend(misfits)
    expected = expected_verdict(prediction)
    explicit = [
        name
        for name, cout in ctool.outcomes.items()
        if matched.get(name) is True and (cout.kind == "fails") == wanted_failure
    ]
    if explicit:
        # the contract recognises this result as one of its outcomes: end there, whatever the
        # simulated flow would have chosen (the call happened, so its effects did too)
        if len(explicit) > 1:
            notes.append(
                "outcomes " + ", ".join(f"`{n}`" for n in explicit) + f" all match; took "
                f"`{explicit[0]}`, the first declared"
            )
        branches = sim._step_validated(
            state, ctool, values, args, real, force=True, chosen=explicit[0]
        ).branches
        candidates = [b for b in branches if b.outcome == explicit[0]]
    else:
        if unread:
            branches = prediction.branches  # the same run: see above
        else:
            branches = sim._step_validated(state, ctool, values, args, real).branches
        candidates = [b for b in branches if b.failed == wanted_failure]
        if raised:
            # a crash that no `observed when` decides fails like a returned error: it takes the
            # failing branch the contract chose (a `fails` outcome applies its own effects) —
            # but an exception is no evidence of an environment event: not an event's branch
            candidates = [b for b in candidates if b.event is None]
        if not candidates and not wanted_failure:
            # the call succeeded where the contract says it cannot: its effects happened anyway
            forced = sim._step_validated(state, ctool, values, args, real, force=True).branches
            candidates = [b for b in forced if not b.failed]
    candidates = [b for b in candidates if matched.get(b.outcome or "") is not False]
    if expected == "fails" and not wanted_failure:
        notes.insert(0, "the contract predicted a failure, but the call succeeded")
    elif expected == "ok" and wanted_failure and not explicit and not event_risks(prediction):
        # (a failure the contract declares — recognised, or an environment event — is no
        # disagreement with the contract)
        notes.insert(0, "the contract predicted success, but the call failed")
    ambiguities: list[str] = []
    branch = _pick(candidates, matched, ambiguities)
    if branch is None:
        if wanted_failure:
            notes.append("the contract has no failure here that fits; the state is unchanged")
        else:
            notes.append("no success outcome of the contract fits; the state is unchanged")
        return Observed(prediction, status, None, None, state, tuple(notes), problem)
    return Observed(
        prediction,
        status,
        branch.outcome,
        branch,
        branch.state,
        tuple(notes),
        problem,
        tuple(ambiguities),
    )


def _result_is_inert(sim: Simulator, ctool: CTool, real: Any) -> bool:
    """Whether stepping with the real result bound to ``result`` repeats the prediction exactly.

    The prediction ran :meth:`Simulator._step_validated` with the same state and arguments and a
    made-up result — or, for a tool like this, the real one. When no expression of the tool
    (nor a predicate, function, constant or machine guard) names ``result``, the result reaches
    no generated code, and whether it is unknown does not choose the code's flavour either
    (:meth:`Stepper.reads_result`); a made-up result that no effect stores does not bump the
    fresh-id counter. So the prediction's branches are what a second run would build, whatever
    the real result is.
    """
    return not sim._stepper.reads_result(ctool)


_PLAIN_ARGS = (str, int, bool, type(None))
"""Argument values whose validation is remembered (kept apart by type: ``1`` is not ``True``)."""


def plain_args_key(ctool: CTool, args: dict[str, Any]) -> tuple[Any, ...] | None:
    """A memo key for a call of ``ctool`` with these arguments when all are plain values
    (:data:`_PLAIN_ARGS`, kept apart by type), else None."""
    key: tuple[Any, ...] = (ctool.name,)
    for name, value in args.items():
        kind = type(value)
        if kind not in _PLAIN_ARGS:
            return None
        key += (name, kind, value)
    return key


def _validated_args(sim: Simulator, ctool: CTool, args: dict[str, Any]) -> dict[str, Any] | None:
    """The validated arguments, or None when they are invalid. A tool whose parameters are all
    of plain types is validated by pydantic-core straight into a dict (faster than a memo);
    for the others, recorded runs repeat the same calls: the answer for arguments of plain
    text, integers, booleans and nulls is kept."""
    model = ctool.args_model
    if isinstance(model, type) and issubclass(model, PlainArgsModel):
        try:
            return model.validate_values(args)
        except ValidationError:
            return None
    key = plain_args_key(ctool, args)
    memo = sim._stepper.valid_args
    if key is not None and key in memo:
        known = memo[key]
        return None if known is None else dict(known)
    try:
        values: dict[str, Any] | None = model_values(ctool.args_model.model_validate(args))
    except ValidationError:
        values = None
    if key is not None:
        if len(memo) >= 10_000:
            memo.clear()
        memo[key] = None if values is None else dict(values)
    return values


def _real_result(
    sim: Simulator, ctool: CTool, value: Any, notes: list[Callable[[], str]]
) -> tuple[Any, Any]:
    """:func:`_read_real_result`, remembered for results of plain JSON data (text, integers,
    finite floats, booleans, null, lists and objects of them; kept apart by type): recorded
    runs return the same few replies over and over."""
    key = _result_key(value, [_KEYED_ITEMS])
    if key is None:
        return _read_real_result(sim, ctool, value, notes)
    memo = sim._stepper.real_results
    key = (ctool.name, key)
    known = memo.get(key)
    if known is None:
        why: list[Callable[[], str]] = []
        result, raw = _read_real_result(sim, ctool, value, why)
        if len(memo) >= 10_000:
            memo.clear()
        known = memo[key] = (result, raw, tuple(why))
    notes.extend(known[2])
    return known[0], known[1]


_KEYED_ITEMS = 256
"""The most values a result may hold to be remembered (its key costs a walk)."""


def _result_key(value: Any, room: list[int]) -> Any:
    """A key that tells plain JSON data apart exactly (``1``, ``1.0``, ``True`` and ``-0.0``
    differ; the order of an object's keys counts), or None for anything else or anything
    larger than ``room``."""
    room[0] -= 1
    if room[0] < 0:
        return None
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return (kind, value)
    if kind is float:
        return (kind, repr(value)) if math.isfinite(value) else None
    if kind is dict:
        items: list[Any] = [dict]
        for name, item in value.items():
            if type(name) is not str:
                return None
            part = _result_key(item, room)
            if part is None:
                return None
            items += (name, part)
        return tuple(items)
    if kind is list:
        items = [list]
        for item in value:
            part = _result_key(item, room)
            if part is None:
                return None
            items.append(part)
        return tuple(items)
    return None


def _read_real_result(
    sim: Simulator, ctool: CTool, value: Any, notes: list[Callable[[], str]]
) -> tuple[Any, Any]:
    """The real return value checked against ``-> TYPE`` (``unknown`` when it does not fit, for
    effects), and as it was returned (for ``observed when``). A value that cannot be read in
    full (it contains itself, nests or grows beyond the bounds, raises when read) is read as far
    as it can be for ``observed when``, and is ``unknown`` for effects. Why it does not fit goes
    to ``notes`` as a function that writes the note: only a successful call keeps it."""
    converted = contract_value(value, "result")
    raw = converted.value
    if converted.problems:
        unreadable = "the result cannot be read: " + "; ".join(converted.problems)
        notes.append(lambda: unreadable)
        return UNKNOWN, raw
    returns = ctool.ir.returns
    if returns is None:
        return raw, raw
    try:
        adapters = sim._stepper.result_adapters
        adapter = adapters.get(ctool.name)
        if adapter is None:
            adapter = adapters[ctool.name] = sim.compiled.validators.adapter_for(returns)
        return adapter.validate_python(raw), raw
    except ValidationError as exc:
        error = exc

        def misfit() -> str:
            problems = problems_from(error, "result")
            detail = problems[0].text() if problems else str(error)
            return f"the result does not match `-> {type_label(returns)}`: {detail}"

        notes.append(misfit)
        return UNKNOWN, raw


def _observed_matches(
    sim: Simulator,
    ctool: CTool,
    state: State,
    values: dict[str, Any],
    real: Any,
    error: str | None,
    notes: list[str],
) -> dict[str, bool | None]:
    """For each outcome with ``observed when``: True, False, or None (undecided)."""
    out: dict[str, bool | None] = {}
    scope: dict[str, Any] | None = None  # (made for the first `observed when`: most have none)
    for name, cout in ctool.outcomes.items():
        if cout.observed is None:
            continue
        if scope is None:
            scope = {**values, OBSERVED_ERROR: error}
        verdict = sim._eval(cout.observed, state, scope, True, ctool, real)
        if isinstance(verdict, Violation):
            if real is not None:  # on a crash, conditions that read the result are false
                notes.append(f"`observed when` of outcome `{name}`: {verdict.message}")
            out[name] = False
        else:
            out[name] = verdict if isinstance(verdict, bool) else None
    return out


def _classify(
    ctool: CTool, raised: bool, matched: dict[str, bool | None], notes: list[str]
) -> Status:
    if raised:
        return "crash"
    for name, cout in ctool.outcomes.items():
        if matched.get(name) is True:
            return "error" if cout.kind == "fails" else "ok"
    undecided = [
        n
        for n, c in ctool.outcomes.items()
        if c.kind == "fails" and matched.get(n) is None and c.observed is not None
    ]
    if undecided:
        # not known to have succeeded: applying success effects could unlock a destructive call
        notes.append(
            f"cannot tell whether the call failed: `observed when` of `{undecided[0]}` is "
            "undecided; taken as a failure, the state is unchanged"
        )
        return "error"
    return "ok"


def _pick(
    branches: list[Branch], matched: dict[str, bool | None], notes: list[str]
) -> Branch | None:
    """The branch reality most plausibly took: one the contract recognised by ``observed when``,
    else the plain (no environment event) one, certain before assumed, likelier first."""
    if not branches:
        return None
    explicit = [b for b in branches if matched.get(b.outcome or "") is True]
    pool = explicit or branches
    if len(pool) == 1:
        return pool[0]  # (the commonest case: nothing else fits)
    best = min(
        pool,
        key=lambda b: (b.event is not None, not b.certain, -(b.probability or 0.0)),
    )
    others = {b.outcome for b in pool if b.state != best.state and b.outcome != best.outcome}
    if others:
        names = ", ".join(f"`{o}`" for o in sorted(o or "precondition failure" for o in others))
        notes.append(
            f"ambiguous: outcome {names} also fits; took `{best.outcome or 'failure'}` "
            "(add `observed when` to the outcomes to tell them apart)"
        )
    return best
