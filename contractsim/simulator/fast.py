"""Fast plan checking for planners: arguments validated once (:func:`bind`), then deterministic
tools run as one precondition test and one effect function per step (:func:`check_plan`).
Anything the fast path cannot decide goes through the full semantics of :mod:`.engine`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pydantic import ValidationError

from ..compiler import lib
from ..compiler.compile import CTool
from ..compiler.validators import model_values, problems_from
from ..dsl import ir
from ..dsl.diagnostics import did_you_mean
from ..dsl.walk import all_exprs, walk_stmts
from .engine import Simulator
from .results import Verdict
from .state import State


@dataclass(frozen=True)
class BoundCall:
    """A call whose arguments were validated once (``sim.bind``); planners reuse these."""

    tool: str
    args: Mapping[str, Any]
    values: Mapping[str, Any]
    fast: Any  # a _FastTool, or None when the tool needs the full step semantics


class PlanCheck(NamedTuple):
    """A plan's verdict from :meth:`Simulator.check_plan`: no report, just the answer."""

    verdict: Verdict
    failed_at: int | None  # 1-based index of the first failing step
    state: State | None  # the final state when the plan is deterministic, else None


class _FastTool:
    """A deterministic tool reduced to: machine moves, one precondition test, one effect."""

    __slots__ = ("machines", "pre", "effects", "today", "now")

    def __init__(
        self,
        machines: list[tuple[int, dict[str, list[tuple[str, Any]]]]],
        pre: Any,
        effects: list[Any],
    ) -> None:
        self.machines = machines
        self.pre = pre
        self.effects = effects


class NullContext:
    """The ``C`` of generated code when nothing it emits is wanted (fast checks, conditions)."""

    __slots__ = ("today", "now", "havoc", "warnings", "reports")

    def __init__(self, today: str, now: str) -> None:
        self.today, self.now, self.havoc = today, now, False
        self.warnings: list[Any] = []
        self.reports: dict[str, Any] = {}

    def warn(self, code: str, key: str, values: tuple[Any, ...]) -> None:
        pass

    def report(self, name: str, value: Any) -> None:
        pass


def _fast_tool(sim: Simulator, ctool: CTool) -> _FastTool | None:
    from ..dsl.walk import used_names

    tool = ctool.ir
    if tool.flow is not None or ctool.ensures or tool.returns is not None:
        return None
    outcomes = list(ctool.outcomes.values())
    if (
        len(outcomes) != 1
        or outcomes[0].kind == "fails"
        or outcomes[0].ir.event is not None
        or outcomes[0].ir.when is not None
    ):
        return None
    exprs: list[Any] = []
    from ..dsl.walk import stmt_exprs, walk_stmts

    for s in walk_stmts((*tool.effects, *outcomes[0].ir.body)):
        exprs.extend(stmt_exprs(s))
    if "result" in used_names(exprs):
        return None
    machines: list[tuple[int, dict[str, list[tuple[str, Any]]]]] = []
    for mname in ctool.machines:
        m = sim.compiled.machines[mname]
        table: dict[str, list[tuple[str, Any]]] = {}
        for source, transitions in m.by_tool[ctool.name].items():
            entries = []
            for t in transitions:
                if t.ir.outcome is not None and t.ir.outcome != outcomes[0].name:
                    continue
                entries.append((t.ir.target, None if t.guard is None else t.guard.fast))
            table[source] = entries
        machines.append((m.slot, table))
    effects = [b.fast for b in (ctool.effects, outcomes[0].body) if b is not None]
    return _FastTool(machines, ctool.fast_pre, effects)


def bind(self: Simulator, tool: str, args: Mapping[str, Any] | None = None) -> BoundCall:
    """Validate a call's arguments once, for repeated use in :meth:`check_plan`.

    Raises :class:`~contractsim.ContractError` when the tool is unknown or the arguments are
    invalid (a plan with such a call fails at that step anyway)."""
    from ..dsl.diagnostics import ContractError, error

    args = dict(args or {})
    ctool = self.compiled.tools.get(tool)
    if ctool is None:
        guess = did_you_mean(tool, self.compiled.tools)
        raise ContractError(
            [
                error(
                    "UNKNOWN_TOOL",
                    f"the contract declares no tool `{tool}`",
                    hint=f"did you mean `{guess}`?" if guess else None,
                )
            ]
        )
    try:
        model = ctool.args_model.model_validate(args)
    except ValidationError as exc:
        raise ContractError(
            [
                error("INVALID_ARGUMENT", f"{tool}: {p.text()}", hint=p.hint)
                for p in problems_from(exc, "args")
            ]
        ) from None
    values = model_values(model)
    cache = self._fast_tools
    if tool not in cache:
        cache[tool] = _fast_tool(self, ctool)
    return BoundCall(tool, args, values, cache[tool])


def check_plan(
    self: Simulator, calls: Sequence[BoundCall], state: State | None = None
) -> PlanCheck:
    """The verdict of a linear plan of bound calls, as fast as the contract allows.

    Deterministic tools on fully known states run on a fast path (one precondition test and one
    effect function per step); anything else falls back to :meth:`run`."""
    if _loops(self):
        with lib.step_budget(self.step_seconds):
            return _check_plan(self, calls, state)
    return _check_plan(self, calls, state)


def plan_checker(
    sim: Simulator,
) -> Callable[[Simulator, Sequence[BoundCall], State | None], PlanCheck]:
    """:func:`check_plan`, with the budget decision taken once per simulator (planners call it
    millions of times)."""
    return check_plan if _loops(sim) else _check_plan


def _loops(sim: Simulator) -> bool:
    """Whether the contract has quantifiers or loops (whose work the step budget bounds)."""
    cached = sim._loops
    if cached is None:
        contract = sim.compiled.ir
        exprs = any(isinstance(e, ir.Quantifier) for e in all_exprs(contract))
        bodies = [t.effects for t in contract.tools]
        bodies += [o.body for t in contract.tools for o in t.outcomes]
        bodies += [s.body for t in contract.tools if t.flow for s in t.flow.steps]
        stmts = any(isinstance(s, ir.For) for b in bodies for s in walk_stmts(b))
        cached = sim._loops = exprs or stmts
    return cached


def _check_plan(
    self: Simulator, calls: Sequence[BoundCall], state: State | None = None
) -> PlanCheck:
    state = state if state is not None else self.initial_state()
    if state.has_unknown:
        return _slow_check(self, calls, state, 0)
    S = state.data
    ctx = self._null_ctx
    for i, call in enumerate(calls):
        fast = call.fast
        if fast is None:
            return _slow_check(self, calls, State(S, self.layout), i)
        A = call.values
        try:
            moved: list[tuple[int, str]] | None = None
            if fast.machines:
                moved = []
                for slot, table in fast.machines:
                    for target, guard in table.get(S[slot], ()):
                        if guard is None or guard(S, A, None, S, ctx) is True:
                            moved.append((slot, target))
                            break
                    else:
                        return PlanCheck("fails", i + 1, None)
            pre = fast.pre
            if pre is not None and pre(S, A, None, S, ctx) is not True:
                return PlanCheck("fails", i + 1, None)
            W = list(S)
            for eff in fast.effects:
                eff(W, A, None, S, ctx)
            if moved:
                for slot, target in moved:
                    W[slot] = target
        except Exception:  # noqa: BLE001 - let the full semantics explain it
            return _slow_check(self, calls, State(S, self.layout), i)
        S = tuple(W)
    return PlanCheck("ok", None, State(S, self.layout))


def _slow_check(
    self: Simulator, calls: Sequence[BoundCall], state: State, offset: int
) -> PlanCheck:
    report = self.run([(c.tool, c.args) for c in calls[offset:]], state, stop_at_first=True)
    failed = next((s.index for s in report.steps if s.verdict != "ok" and not s.skipped), None)
    final = report.paths[0].state if len(report.paths) == 1 and report.verdict == "ok" else None
    return PlanCheck(report.verdict, None if failed is None else failed + offset, final)
