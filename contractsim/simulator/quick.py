"""Observing recorded calls quickly (replay's hot path): the common calls of simple tools skip
the step algorithm's general machinery; every other call takes :func:`.observe.observe`.

A tool qualifies (:class:`ToolPlan`, worked out once per tool) when it has no protocol machine,
its flow goes straight to one outcome that does not fail (no ``flow`` block), no outcome has an
``observed when``, it has no postcondition, no expression it can evaluate reads ``result``
(:meth:`Stepper.reads_result`: the prediction is then the observation), and its effects make no
fresh or bounded unknown values. For such a tool, on a state without ``unknown``:

* a call that really succeeded, and whose hard and soft preconditions all hold, is one test per
  precondition and one run of the effects in the generated code's fast flavour — what
  :meth:`Stepper.step_validated` does, without the branch walk, the candidate filtering and the
  result-independent work done twice;
* a call that really failed is predicted by the general step (its violations are the report's
  business), and the observation is built straight from that prediction when it is the single
  failing branch of a precondition, which is what :func:`.observe.observe` would pick.

Anything else — an unknown, an exception, a ``fail`` statement, a warning emitted by the
effects, a value too large, a prediction of another shape — returns None and the caller takes
the general path, which then decides (and explains) everything itself. The answers are the
general path's exactly: ``tests/test_replay_quick.py`` compares the two observation by
observation and report by report on every recorded run of the repository.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, cast

from ..compiler.compile import CTool, make_context
from .observe import (
    Observation,
    Observed,
    Status,
    _real_result,
    _validated_args,
    plain_args_key,
)
from .results import Branch, StepResult, StepWarning
from .state import State
from .step import SIMULATED, off_spec_warnings, oversized

if TYPE_CHECKING:
    from .engine import Simulator


_UNSET: Any = object()  # (a tool whose plan is not worked out yet)


class ToolPlan:
    """What the quick path needs of one qualifying tool, worked out once."""

    __slots__ = (
        "ctool",
        "name",
        "requires",
        "shoulds",
        "bodies",
        "outcome",
        "kind",
        "flow_path",
        "costs",
        "off_spec",
    )

    def __init__(self, ctool: CTool, outcome: str) -> None:
        out = ctool.outcomes[outcome]
        self.ctool = ctool
        self.name = ctool.name
        self.costs = ctool.cost is not None
        self.off_spec = ctool.declared_model is not None  # (OFF_SPEC_ARGUMENT warnings)
        self.requires = tuple(c.test.fast for c in ctool.requires)
        self.shoulds = tuple(c.test.fast for c in ctool.shoulds)
        self.bodies = tuple(b.fast for b in (ctool.effects, out.body) if b is not None)
        self.outcome = outcome
        self.kind: Literal["success", "partial", "fails"] = out.ir.outcome
        self.flow_path = (ctool.flow.initial,)


def tool_plan(sim: Simulator, ctool: CTool) -> ToolPlan | None:
    """The quick path's plan for ``ctool``, or None when the tool needs the general step."""
    stepper = sim._stepper
    if ctool.machines or ctool.ensures or stepper.reads_result(ctool):
        return None
    if any(out.observed is not None for out in ctool.outcomes.values()):
        return None
    outcome = stepper.direct_outcome(ctool)
    if outcome is None or ctool.outcomes[outcome].kind == "fails":
        return None
    bodies = (ctool.effects, ctool.outcomes[outcome].body)
    if any(b is not None and b.makes_unknowns for b in bodies):
        return None
    return ToolPlan(ctool, outcome)


class QuickObserver:
    """The quick path for one simulator, with its per-tool plans and the off-spec warnings of
    the argument tuples seen so far."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.stepper = sim._stepper
        self.names = sim.compiled.state_names
        self.plans: dict[str, ToolPlan | None] = {}
        self.off_spec: dict[tuple[Any, ...], tuple[StepWarning, ...]] = {}

    def observe(
        self, state: State, tool: str, args: dict[str, Any], seen: Observation
    ) -> Observed | None:
        """What :func:`.observe.observe` answers for this call, or None: take that path.
        (Called inside the step budget; ``args`` were read as contract values.)"""
        plans = self.plans
        plan = plans.get(tool, _UNSET)
        if plan is _UNSET:
            ctool = self.sim.compiled.tools.get(tool)
            plan = plans[tool] = None if ctool is None else tool_plan(self.sim, ctool)
        if plan is None or state.has_unknown:
            return None
        plan = cast(ToolPlan, plan)
        ctool = plan.ctool
        values = _validated_args(self.sim, ctool, args)
        if values is None:
            return None
        if seen.status == "ok":
            return self._succeeded(plan, state, values, args, seen)
        if seen.status in ("error", "crash"):
            return self._failed(plan, state, values, args, seen)
        return None

    def _succeeded(
        self,
        plan: ToolPlan,
        state: State,
        values: dict[str, Any],
        args: dict[str, Any],
        seen: Observation,
    ) -> Observed | None:
        S = state.data
        null_ctx = self.stepper._explainer._null_ctx  # (what the general step evaluates with)
        try:
            for test in plan.requires:
                if test(S, values, None, S, null_ctx) is not True:
                    return None  # predicted to fail: the general path explains it
            for test in plan.shoulds:
                if test(S, values, None, S, null_ctx) is not True:
                    return None  # a warning to explain
        except Exception:  # noqa: BLE001 - the general path reports it
            return None
        ctool = plan.ctool
        shape: list[Callable[[], str]] = []
        real, _ = _real_result(self.sim, ctool, seen.result, shape)
        work = list(S)
        ctx = make_context(self.stepper.today, self.stepper.now)
        try:
            for body in plan.bodies:
                body(work, values, real, S, ctx)
        except Exception:  # noqa: BLE001 - a `fail` or an error: the general path reports it
            return None
        if ctx.may_fail or ctx.warnings or ctx.havoc:
            return None
        if oversized(work, S, self.names) is not None:
            return None
        new_state = state.derive(tuple(work))
        branch = Branch(
            plan.outcome,
            plan.kind,
            new_state,
            probability=1.0,
            warnings=self._off_spec(ctool, args) if plan.off_spec else [],
            report=dict(ctx.reports),
            flow_path=plan.flow_path,
            result=real,
        )
        cost = self.stepper.cost(ctool, state, values, False) if plan.costs else None
        prediction = StepResult(plan.name, dict(args), [branch], cost)
        notes: tuple[str, ...] = ()
        problem = None
        if shape:
            notes = tuple(why() for why in shape)
            problem = notes[0]
        return Observed(prediction, "ok", plan.outcome, branch, new_state, notes, problem)

    def _failed(
        self,
        plan: ToolPlan,
        state: State,
        values: dict[str, Any],
        args: dict[str, Any],
        seen: Observation,
    ) -> Observed | None:
        prediction = self.stepper.step_validated(state, plan.ctool, values, dict(args), SIMULATED)
        branches = prediction.branches
        if len(branches) != 1:
            return None
        branch = branches[0]
        if (
            branch.kind != "fails"
            or branch.outcome is not None
            or branch.event is not None
            or branch.assumptions
            or branch.state is not state
        ):
            return None
        status: Status = "crash" if seen.status == "crash" else "error"
        return Observed(prediction, status, None, branch, state)

    def _off_spec(self, ctool: CTool, args: dict[str, Any]) -> list[StepWarning]:
        """:func:`.step.off_spec_warnings`, remembered for arguments of plain values."""
        if ctool.declared_model is None:
            return []
        key = plain_args_key(ctool, args)
        if key is None:
            return off_spec_warnings(ctool, args)
        known = self.off_spec.get(key)
        if known is None:
            if len(self.off_spec) >= 10_000:
                self.off_spec.clear()
            known = self.off_spec[key] = tuple(off_spec_warnings(ctool, args))
        return list(known)
