"""Fast plan checking for planners (:class:`PlanChecker`): arguments validated once
(:meth:`PlanChecker.bind`), then deterministic tools run as one precondition test and one effect
function per step (:attr:`PlanChecker.check`). Anything the fast path cannot decide goes through
the full semantics (:meth:`Simulator.run`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic_core import ValidationError

from ..compiler import lib
from ..compiler.compile import CompiledContract, CTool
from ..compiler.core_schemas import model_values
from ..compiler.problems import problems_from
from ..diagnostics import did_you_mean
from ..dsl import ir
from ..dsl.walk import all_exprs, walk_stmts
from ..records import record
from .results import Verdict
from .state import State

if TYPE_CHECKING:
    from .engine import Simulator


@record(frozen=True)
class BoundCall:
    """A call whose arguments were validated once (``sim.bind``); planners reuse these."""

    tool: str
    args: Mapping[str, Any]
    values: Mapping[str, Any]
    fast: Any  # a _FastTool, or None when the tool needs the full step semantics
    references: bool = False  # the arguments pass an earlier result on (`$1.result.token`)


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


def _fast_tool(compiled: CompiledContract, ctool: CTool) -> _FastTool | None:
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
    from ..dsl.walk import walk_expr

    if any(
        (isinstance(x, ir.Call) and x.func == "fresh") or isinstance(x, ir.UnknownIn)
        for e in exprs
        for x in walk_expr(e)
    ):
        # it makes a value unknown (`x = len(fresh())`, `x = unknown in [1, 9]`): the fast code
        # is for known states only, and the calls after it would read that value
        return None
    machines: list[tuple[int, dict[str, list[tuple[str, Any]]]]] = []
    for mname in ctool.machines:
        m = compiled.machines[mname]
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


class PlanChecker:
    """:meth:`Simulator.check_plan` for one simulator, with its caches: each tool's fast form
    (or None when it needs the full semantics) and whether the step budget is needed at all
    (planners check millions of plans, so that decision is taken once)."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.compiled = sim.compiled
        self.layout = sim.layout
        self._ctx = NullContext(sim.today, sim.now)
        self._start: State | None = None  # the state the plan being checked starts from
        self._fast_tools: dict[str, _FastTool | None] = {}
        self.loops = _loops(sim.compiled.ir)
        """Whether the contract has quantifiers or loops (whose work the step budget bounds)."""
        self.check: Callable[[Sequence[BoundCall], State | None], PlanCheck] = (
            self._check_in_budget if self.loops else self._check
        )
        """The verdict of a linear plan of bound calls, as fast as the contract allows:
        deterministic tools on fully known states run on a fast path (one precondition test and
        one effect function per step); anything else falls back to :meth:`Simulator.run`."""

    def bind(self, tool: str, args: Mapping[str, Any]) -> BoundCall:
        """Validate a call's arguments once, for repeated use in :attr:`check`.

        Raises :class:`~contractsim.ContractError` when the tool is unknown or the arguments are
        invalid (a plan with such a call fails at that step anyway)."""
        from ..diagnostics import ContractError, error

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
        if any(type(v) is not str or v.startswith("$") for v in args.values()):
            from .references import ReferenceError_, template

            try:
                passes_results_on = template(args) is not None
            except ReferenceError_:
                passes_results_on = True  # the plan's run reports it as BAD_REFERENCE
            if passes_results_on:
                # the values are known only when the plan runs: checked then, on every branch
                return BoundCall(tool, args, args, None, references=True)
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
            cache[tool] = _fast_tool(self.compiled, ctool)
        return BoundCall(tool, args, values, cache[tool])

    def _check_in_budget(self, calls: Sequence[BoundCall], state: State | None = None) -> PlanCheck:
        with lib.step_budget(self.sim.step_seconds):
            return self._check(calls, state)

    def _check(self, calls: Sequence[BoundCall], state: State | None = None) -> PlanCheck:
        state = state if state is not None else self.sim.initial_state()
        self._start = state
        if state.has_unknown:
            return self._slow_check(calls, state, 0)
        S = state.data
        ctx = self._ctx
        for i, call in enumerate(calls):
            fast = call.fast
            if fast is None:
                return self._slow_check(calls, State(S, self.layout), i)
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
                return self._slow_check(calls, State(S, self.layout), i)
            S = tuple(W)
        return PlanCheck("ok", None, State(S, self.layout))

    def _slow_check(self, calls: Sequence[BoundCall], state: State, offset: int) -> PlanCheck:
        if offset and any(c.references for c in calls[offset:]):
            # `$N.result` counts steps from the plan's start: run the whole plan
            offset, state = 0, self._start or state
        report = self.sim.run([(c.tool, c.args) for c in calls[offset:]], state, stop_at_first=True)
        failed = next((s.index for s in report.steps if s.verdict != "ok" and not s.skipped), None)
        final = report.paths[0].state if len(report.paths) == 1 and report.verdict == "ok" else None
        return PlanCheck(report.verdict, None if failed is None else failed + offset, final)


def _loops(contract: ir.Contract) -> bool:
    """Whether a contract has quantifiers or loops."""
    exprs = any(isinstance(e, (ir.Quantifier, ir.Comprehension)) for e in all_exprs(contract))
    bodies = [t.effects for t in contract.tools]
    bodies += [o.body for t in contract.tools for o in t.outcomes]
    bodies += [s.body for t in contract.tools if t.flow for s in t.flow.steps]
    return exprs or any(isinstance(s, ir.For) for b in bodies for s in walk_stmts(b))
