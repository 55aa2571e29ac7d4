"""The :class:`Simulator` façade: checks the arguments of its public calls and delegates.

The step algorithm is :mod:`.step`, failure explanation :mod:`.explain`, the result types
:mod:`.results`, fast plan checking for planners :mod:`.fast`, plan exploration :mod:`.explore`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..compiler import lib
from ..compiler.compile import (
    CompiledContract,
    CTool,
)
from ..compiler.foreign import (
    contract_value,
    described,
    expect_mapping,
    is_finite_number,
    safe_type_name,
)
from ..compiler.interp import Env
from ..compiler.values import UNKNOWN
from ..diagnostics import did_you_mean
from .explain import Explainer
from .explore import DEFAULT_MAX_BRANCHES, DEFAULT_MAX_SECONDS, DEFAULT_MAX_STATES
from .fast import BoundCall, PlanCheck, PlanChecker
from .results import Branch, Enabled, StepResult, Verdict, Violation
from .state import State
from .step import SIMULATED, Stepper, with_slots

if TYPE_CHECKING:
    from ..api import Contract
    from .explore import PlanReport
    from .goals import GoalPart
    from .observe import Observation, Observed
    from .quick import QuickObserver


class Simulator:
    """Dry-runs tool calls against a contract. Create it with ``contract.simulator()``.

    ``now`` fixes the simulation's time (``today()``/``now()`` in contracts); by default it is the
    wall clock at creation, so give one when reports must be reproducible.
    """

    def __init__(
        self,
        contract: Contract,
        now: datetime | str | None = None,
        step_seconds: float = lib.STEP_SECONDS,
    ) -> None:
        if now is not None and not isinstance(now, (str, datetime)):
            raise TypeError(
                "now must be an RFC 3339 time such as 2024-06-01T12:00:00Z or a datetime, not "
                f"{described(now)}"
            )
        _expect_positive(step_seconds, "step_seconds", "a number of seconds such as 10")
        self.contract = contract
        self.step_seconds = step_seconds
        self.compiled: CompiledContract = contract.compiled
        if isinstance(now, str):
            try:
                now = datetime.fromisoformat(now.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(
                    "now must be an RFC 3339 time such as 2024-06-01T12:00:00Z, not "
                    f"{str.__str__(now)[:80]!r}"
                ) from None
        self.now_dt = now or datetime.now(timezone.utc)
        self.now = lib.now_text(self.now_dt)
        self.today = self.now[:10]
        self.layout = self.compiled.slots
        self._explainer = Explainer(self.compiled, self.today, self.now)
        self._stepper = Stepper(self.compiled, self._explainer)
        # caches, filled on first use
        self._plan_checker: PlanChecker | None = None
        self._quick: QuickObserver | None = None
        self.quick_observe = True
        """Replay observes the common calls of simple tools on a quick path with the same
        answers (:mod:`.quick`); off, every call takes the general step (tests compare them)."""

    @property
    def explain(self) -> bool:
        """Show the values of a failed condition's parts in its violation (``Violation.values``).
        Replay turns this off and explains only the steps it reports (a third of its time)."""
        return self._explainer.explain

    @explain.setter
    def explain(self, on: bool) -> None:
        self._explainer.explain = on

    @property
    def messages(self) -> bool:
        r"""Render the contract's message and hint templates in violations; off, a violation
        says only which rule failed (``\`x > 0\` is false``, ``tool failed (outcome)``) and has
        no hint. Replay turns this off with :attr:`explain` and predicts again, with both on,
        the steps it reports."""
        return self._explainer.messages

    @messages.setter
    def messages(self, on: bool) -> None:
        self._explainer.messages = on

    def _eval(
        self,
        fn: Any,
        state: State,
        values: dict[str, Any],
        safe: bool,
        ctool: CTool | None,
        result: Any = None,
    ) -> Any:
        """A compiled expression's value, or the violation that explains why it has none."""
        return self._explainer.eval(fn, state, values, safe, ctool, result)

    def _env(self, state: State, values: Mapping[str, Any], result: Any = None) -> Env:
        """The reference interpreter's environment for a state and a call's arguments."""
        return self._explainer.env(state, values, result)

    # ------------------------------------------------------------------ states
    def initial_state(self, overrides: Mapping[str, Any] | None = None) -> State:
        """The contract's initial state, with some variables replaced (plain JSON-like values,
        validated against the declared types; :data:`contractsim.UNKNOWN` makes a value unknown
        — the string ``"$unknown"`` is special in state files only, here it is a string)."""
        overrides = expect_mapping(overrides, "overrides", "state variable names")
        state = State(self.compiled.initial, self.layout)
        if overrides:
            from .values import validate_state_overrides

            checked = validate_state_overrides(self.compiled, overrides, unknown_mark=False)
            state = self.state_with(checked)
        return state

    def state_with(self, values: Mapping[str, Any], base: State | None = None) -> State:
        """``base`` (the initial state by default) with some slots replaced by runtime values
        that were already validated (``machine:NAME`` keys set protocol machines)."""
        values = expect_mapping(values, "values", "state variable names")
        unknown_names = [name for name in values if name not in self.layout]
        if unknown_names:
            guess = did_you_mean(unknown_names[0], self.layout)
            raise ValueError(
                f"values: the contract has no state variable `{unknown_names[0]}`"
                + (f"; did you mean `{guess}`?" if guess else "")
            )
        if base is not None:
            expect_state(self, base, "base")
        base = base if base is not None else State(self.compiled.initial, self.layout)
        return with_slots(base, {self.layout[name]: value for name, value in values.items()})

    # ------------------------------------------------------------------ one step
    def step(self, state: State, tool: str, args: Mapping[str, Any] | None = None) -> StepResult:
        """Every way calling ``tool(**args)`` in ``state`` can end."""
        expect_state(self, state, "state")
        _expect_str(tool, "tool", "a tool name")
        args = expect_mapping(args, "args", "parameter names")
        args, unreadable = _read_args(tool, args)
        if unreadable:
            return StepResult(tool, args, [Branch(None, "fails", state, violations=unreadable)])
        with lib.step_budget(self.step_seconds):
            return self._stepper.step(state, tool, args)

    def _step(self, state: State, tool: str, args: Mapping[str, Any] | None) -> StepResult:
        """:meth:`step` without the checks of its arguments and without the time budget."""
        return self._stepper.step(state, tool, args)

    def _step_validated(
        self,
        state: State,
        ctool: CTool,
        values: dict[str, Any],
        raw_args: Mapping[str, Any],
        real: Any = SIMULATED,
        force: bool = False,
        chosen: str | None = None,
    ) -> StepResult:
        """The step after argument validation (see :meth:`Stepper.step_validated`)."""
        return self._stepper.step_validated(state, ctool, values, raw_args, real, force, chosen)

    # ------------------------------------------------------------------ public helpers
    def enabled(self, state: State) -> list[Enabled]:
        """Each tool with ``ok`` / ``fails`` / ``may_fail`` in this state, judged by its protocol
        machines and by the preconditions that do not depend on its arguments."""
        from ..dsl.walk import used_names

        expect_state(self, state, "state")
        out: list[Enabled] = []
        for ctool in self.compiled.tools.values():
            reasons: list[Violation] = []
            unknown = False
            for mname in ctool.machines:
                m = self.compiled.machines[mname]
                current = state.data[m.slot]
                if current not in m.by_tool[ctool.name]:
                    allowed = tuple(sorted(m.by_tool[ctool.name]))
                    path = self._explainer.path_to(m, current, set(allowed))
                    reasons.append(
                        Violation(
                            "PROTOCOL_VIOLATION",
                            f"`{ctool.name}` is not allowed while {mname} is `{current}`",
                            "protocol",
                            hint=f"call {' → '.join(path)} first" if path else None,
                            allowed_states=allowed,
                            path_to_allowed=tuple(path),
                        )
                    )
            for cond in ctool.requires:
                if used_names([cond.ir.cond]) & ctool.params:
                    continue
                result = self._explainer.eval(cond.test, state, {}, state.has_unknown, ctool)
                if result is False:
                    reasons.append(
                        self._explainer.condition_violation(cond, state, {}, ctool, True)
                    )
                elif result is UNKNOWN:
                    unknown = True
                    reasons.append(
                        self._explainer.condition_violation(cond, state, {}, ctool, False)
                    )
            verdict: Verdict = (
                "fails" if any(r.certain for r in reasons) else ("may_fail" if unknown else "ok")
            )
            out.append(Enabled(ctool.name, verdict, tuple(reasons)))
        return out

    def bind(self, tool: str, args: Mapping[str, Any] | None = None) -> BoundCall:
        """Validate a call once for repeated use in :meth:`check_plan` (planners ground their
        actions once, then check thousands of candidate plans)."""
        _expect_str(tool, "tool", "a tool name")
        args, unreadable = _read_args(tool, expect_mapping(args, "args", "parameter names"))
        if unreadable:
            from ..diagnostics import ContractError, error

            raise ContractError([error(v.code, v.message, hint=v.hint) for v in unreadable])
        return self._checker().bind(tool, args)

    def check_plan(self, calls: Sequence[BoundCall], state: State | None = None) -> PlanCheck:
        """Just the verdict of a linear plan of bound calls, on the fastest path available."""
        if type(calls) not in (list, tuple) and (
            isinstance(calls, (str, bytes)) or not isinstance(calls, Sequence)
        ):
            raise TypeError(
                f"calls must be a list of calls from sim.bind(), not {safe_type_name(calls)}"
            )
        # planners check millions of plans: the item types are compared at C speed, and walked
        # one by one (subclasses allowed) only when that quick look is not conclusive
        if not set(map(type, calls)) <= _BOUND_CALL:
            self._expect_bound_calls(calls)
        if state is not None:
            expect_state(self, state, "state")
        return (self._plan_checker or self._checker()).check(calls, state)

    @staticmethod
    def _expect_bound_calls(calls: Sequence[BoundCall]) -> None:
        for i, call in enumerate(calls):
            if not isinstance(call, BoundCall):
                raise TypeError(
                    f"calls[{i}] must be a call from sim.bind(tool, args), not "
                    f"{safe_type_name(call)}"
                )

    def _checker(self) -> PlanChecker:
        if self._plan_checker is None:
            self._plan_checker = PlanChecker(self)
        return self._plan_checker

    @property
    def plan_checker(self) -> PlanChecker:
        """The fast plan checker behind :meth:`check_plan`, for callers that check millions of
        plans and have validated their calls and states already (planners): its ``check`` skips
        the argument checks of :meth:`check_plan`."""
        return self._plan_checker or self._checker()

    def call_cost(self, call: BoundCall, state: State) -> float | None:
        """The cost of a bound call in ``state`` (its tool's ``cost`` expression; None when the
        tool declares none or the cost cannot be computed there)."""
        ctool = self.compiled.tools[call.tool]
        return self._stepper.cost(ctool, state, dict(call.values), state.has_unknown)

    def plan(
        self,
        state: State | None,
        goal: str,
        *,
        values: Mapping[str, Any] | None = None,
        max_depth: int | None = None,
        max_states: int = 100_000,
        max_seconds: float = 60.0,
        allow_may_fail: bool = False,
        fast: bool = False,
    ) -> Any:
        """The cheapest sequence of calls from ``state`` (default: the initial state) to a state
        where the declared goal ``goal`` certainly holds: a ``PlanResult`` (``steps`` None when
        no plan exists within the bounds; ``stopped_by`` says which bound stopped the search).
        ``values`` maps ``"tool.param"`` to extra argument values to try. A* with h_max where
        the contract's delete relaxation is readable, uniform-cost search otherwise; ``fast``:
        greedy best-first with h_FF, no optimality claim (see docs/planning.md)."""
        from ..planning.search import plan

        if state is None:
            state = self.initial_state()
        expect_state(self, state, "state")
        _expect_str(goal, "goal", "a goal name")
        if max_depth is not None:
            _expect_count(max_depth, "max_depth", minimum=0)
        _expect_count(max_states, "max_states")
        _expect_positive(max_seconds, "max_seconds", "a number of seconds such as 60")
        return plan(
            self,
            state,
            goal,
            values=values,
            max_depth=max_depth,
            max_states=max_states,
            max_seconds=max_seconds,
            allow_may_fail=allow_may_fail,
            fast=fast,
        )

    def repair(
        self,
        plan: Sequence[Mapping[str, Any]] | Iterable[tuple[str, Mapping[str, Any]]],
        state: State | None = None,
        *,
        goal: str | None = None,
        values: Mapping[str, Any] | None = None,
        max_states: int = 100_000,
        max_seconds: float = 60.0,
    ) -> Any:
        """The cheapest calls to insert into ``plan`` (its own steps kept in order) so that
        every step succeeds (and, with ``goal``, the goal holds at the end): a ``RepairResult``
        with the whole repaired ``plan``, the ``inserted`` calls and their ``cost`` (``plan``
        None when no repair exists within the bounds)."""
        from ..planning.repair import repair

        steps = _expect_plan(plan)
        if state is None:
            state = self.initial_state()
        expect_state(self, state, "state")
        _expect_count(max_states, "max_states")
        _expect_positive(max_seconds, "max_seconds", "a number of seconds such as 60")
        return repair(
            self,
            steps,
            state,
            goal=goal,
            values=values,
            max_states=max_states,
            max_seconds=max_seconds,
        )

    def goal(self, state: State, name: str) -> Any:
        """The value of a named goal in a state: True, False or UNKNOWN."""
        expect_state(self, state, "state")
        _expect_str(name, "name", "a goal name")
        if name not in self.compiled.goals:
            guess = did_you_mean(name, self.compiled.goals)
            declared = ", ".join(f"`{g}`" for g in self.compiled.goals) or "none"
            raise ValueError(
                f"the contract declares no goal `{name}`"
                + (f"; did you mean `{guess}`?" if guess else f" (it declares: {declared})")
            )
        fn = self.compiled.goals[name]
        return self._explainer.eval(fn, state, {}, state.has_unknown, None)

    def goal_unmet(self, state: State, name: str) -> list[GoalPart]:
        """The parts of a named goal that do not hold in a state, each ``false``, ``unknown`` or
        ``error``, with the values that decided it (empty when the goal holds): the goal split
        on its top-level ``and``, on the items of an ``all(…)`` and into named predicates."""
        from .goals import unmet_parts

        return unmet_parts(self, state, name)

    def observe(
        self,
        state: State,
        tool: str,
        args: Mapping[str, Any] | None,
        seen: Observation,
        prediction: StepResult | None = None,
    ) -> Observed:
        """A real call of ``tool(**args)`` from ``state`` that ended as ``seen``: the prediction
        (computed, or the one made before the call), the outcome it matched and the state
        carried forward (see :mod:`.observe`)."""
        from .observe import Observation, observe

        expect_state(self, state, "state")
        _expect_str(tool, "tool", "a tool name")
        args = _read_args(tool, expect_mapping(args, "args", "parameter names"))[0]
        if not isinstance(seen, Observation):
            raise TypeError(
                "seen must be an Observation (Observation.returned(value), "
                f"Observation.raised(exc)), not {safe_type_name(seen)}"
            )
        if seen.status not in (None, "ok", "error", "crash"):
            raise ValueError(
                f"seen.status must be 'ok', 'error', 'crash' or None, not {described(seen.status)}"
            )
        if seen.error is not None and not isinstance(seen.error, str):
            raise TypeError(
                "seen.error must be the exception's text (a str) or None, not "
                f"{described(seen.error)}"
            )
        if prediction is not None and not isinstance(prediction, StepResult):
            raise TypeError(
                f"prediction must be a StepResult from sim.step(), not {safe_type_name(prediction)}"
            )

        return observe(self, state, tool, args, seen, prediction)

    def _observe_checked(
        self, state: State, tool: str, args: dict[str, Any], seen: Observation
    ) -> Observed:
        """:meth:`observe` without its checks of the caller's types, for replay, which builds
        the state and the observation itself from runs that :func:`read_runs` checked; anything
        else (runs built by hand) takes :meth:`observe` and its errors. The arguments are read
        as contract values either way."""
        if (
            type(state) is not State
            or state.layout is not self.layout
            or type(tool) is not str
            or type(args) is not dict
            or not set(map(type, args)) <= _STR
            or seen.status not in ("ok", "error", "crash")
            or not (seen.error is None or type(seen.error) is str)
        ):
            return self.observe(state, tool, args, seen)
        args = _read_args(tool, args)[0]
        if self.quick_observe:
            quick = self._quick
            if quick is None:
                from .quick import QuickObserver

                quick = self._quick = QuickObserver(self)
            with lib.step_budget(self.step_seconds):
                observed = quick.observe(state, tool, args, seen)
            if observed is not None:
                return observed
        from .observe import observe

        return observe(self, state, tool, args, seen)

    def run(
        self,
        plan: Sequence[Mapping[str, Any]] | Iterable[tuple[str, Mapping[str, Any]]],
        state: State | None = None,
        *,
        max_depth: int | None = None,
        max_states: int = DEFAULT_MAX_STATES,
        max_branches: int = DEFAULT_MAX_BRANCHES,
        max_seconds: float = DEFAULT_MAX_SECONDS,
        stop_at_first: bool = False,
        goal: str | None = None,
    ) -> PlanReport:
        """Simulate a whole plan across every branch, within the bounds (as the CLI's
        ``--max-depth`` … ``--stop-at-first``, ``--goal``; see
        :func:`~contractsim.simulator.explore.explore`)."""
        from .explore import explore

        plan = _expect_plan(plan)
        if state is not None:
            expect_state(self, state, "state")
        if max_depth is not None:
            _expect_count(max_depth, "max_depth", minimum=0)
        _expect_count(max_states, "max_states")
        _expect_count(max_branches, "max_branches")
        _expect_positive(max_seconds, "max_seconds", "a number of seconds such as 60")
        if goal is not None:
            _expect_str(goal, "goal", "a goal name")

        return explore(
            self,
            plan,
            state if state is not None else self.initial_state(),
            max_depth=max_depth,
            max_states=max_states,
            max_branches=max_branches,
            stop_at_first=stop_at_first,
            goal=goal,
            max_seconds=max_seconds,
        )


# ------------------------------------------------------------------ checks of API arguments
_STR = frozenset({str})
_SCALARS = frozenset({str, bool, float, type(None)})  # nothing to read in these
_UNREADABLE_HINT = "pass plain data: str, numbers, bool, None, lists, sets, dicts"


def expect_state(sim: Simulator, state: Any, what: str) -> None:
    """A TypeError unless ``state`` is a :class:`State`, a ValueError unless it is a state of
    ``sim``'s contract (same variables)."""
    if not isinstance(state, State):
        raise TypeError(
            f"{what} must be a State of this contract (sim.initial_state(), a branch's state), "
            f"not {safe_type_name(state)}; to build one from values use sim.initial_state(values)"
        )
    if state.layout is not sim.layout and state.layout != sim.layout:
        raise ValueError(
            f"{what} is a State of another contract (its variables: "
            + ", ".join(n for n in state.layout if not n.startswith("machine:"))
            + f"); use a state of `{sim.compiled.ir.header.name}` (sim.initial_state())"
        )


def _expect_str(value: Any, what: str, expected: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be {expected} (a str), not {safe_type_name(value)}")


_BOUND_CALL = frozenset({BoundCall})


def _expect_positive(value: Any, what: str, example: str) -> None:
    if not is_finite_number(value) or value <= 0:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        raise (ValueError if number else TypeError)(
            f"{what} must be a positive, finite number ({example}), not {described(value)}"
        )


def _expect_count(value: Any, what: str, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {safe_type_name(value)}")
    if value < minimum:
        raise ValueError(f"{what} must be at least {minimum}, not {value}")


def _expect_plan(plan: Any) -> list[tuple[str, dict[str, Any]]]:
    """A plan given to :meth:`Simulator.run` as (tool, args) pairs, or a TypeError naming the
    step that is neither a ``{tool, args}`` mapping nor a ``(tool, args)`` pair."""
    if isinstance(plan, (str, bytes, Mapping)) or not isinstance(plan, Iterable):
        raise TypeError(
            "plan must be a list of {tool, args} mappings or (tool, args) pairs, not "
            f"{safe_type_name(plan)}"
        )
    out: list[tuple[str, dict[str, Any]]] = []
    for i, step in enumerate(plan):
        if isinstance(step, Mapping):
            tool, args = step.get("tool"), step.get("args")
        elif isinstance(step, tuple) and len(step) == 2:
            tool, args = step
        else:
            tool = None
            if not isinstance(step, (str, bytes)):
                with contextlib.suppress(Exception):  # an object of the caller's may raise
                    tool = getattr(step, "tool", None)
                    args = getattr(step, "args", None)
            if tool is None:
                raise TypeError(
                    f"plan[{i}] must be a {{tool, args}} mapping or a (tool, args) pair, not "
                    f"{safe_type_name(step)}"
                )
        if not isinstance(tool, str):
            raise TypeError(f"plan[{i}] tool must be a tool name (a str), not {described(tool)}")
        values, unreadable = _read_args(tool, expect_mapping(args, f"plan[{i}] args", "parameters"))
        if unreadable:
            raise ValueError(f"plan[{i}]: {unreadable[0].message} ({_UNREADABLE_HINT})")
        out.append((tool, values))
    return out


def _read_args(tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], list[Violation]]:
    """The arguments as plain data (objects and subclasses read as contract values), and an
    ``INVALID_ARGUMENT`` violation for each one that cannot be read (it contains itself, nests
    or grows beyond the bounds, or raises when read)."""
    violations = []
    out = args
    for name, value in args.items():
        if type(value) in _SCALARS:
            continue
        converted = contract_value(value, f"args.{name}")
        if not converted.exact or converted.problems:
            if out is args:
                out = dict(args)
            out[name] = converted.value  # what was read; the unreadable parts are unknown
        for problem in converted.problems:
            violations.append(
                Violation(
                    "INVALID_ARGUMENT",
                    f"{tool}: {problem}",
                    "argument",
                    hint=_UNREADABLE_HINT,
                    field=f"args.{name}",
                )
            )
    return out, violations
