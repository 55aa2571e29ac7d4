"""Step semantics: what one call does from one state, across every branch.

A step: validate arguments → protocol machines admit the call → hard preconditions (three-valued) →
soft preconditions (warnings) → flow / outcomes (one branch per environment event) → that outcome's
effects, applied atomically. Plans are explored in :mod:`.explore`; verdict-only checking of
plans for planners is in :mod:`.fast`.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from ..compiler import lib
from ..compiler.compile import (
    CCondition,
    CompiledContract,
    COutcome,
    CTool,
    make_context,
)
from ..compiler.foreign import (
    contract_value,
    described,
    expect_mapping,
    is_finite_number,
    safe_type_name,
)
from ..compiler.interp import Env
from ..compiler.validators import model_values, problems_from
from ..compiler.values import UNKNOWN, FMap, show
from ..dsl.diagnostics import did_you_mean
from .explain import Explainer, cond_text, error_text, when_text
from .fast import BoundCall, PlanCheck, PlanChecker
from .results import Branch, Enabled, StepResult, Verdict, Violation, Warning_
from .state import State

if TYPE_CHECKING:
    from ..api import Contract
    from .explore import PlanReport
    from .goals import GoalPart
    from .observe import Observation, Observed

MAX_FLOW_STEPS = 256
DEFAULT_MAX_BRANCHES = 256
DEFAULT_MAX_STATES = 100_000
DEFAULT_MAX_SECONDS = 300.0
"""Wall-clock time a whole plan may take; each step also has its own budget (lib.step_budget)."""
# ``real`` when a step is simulated, not observed: the result is made up (fresh or unknown)
SIMULATED: Any = object()


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
        # caches, filled on first use
        self._result_use: dict[tuple[str, str], bool] = {}
        self._plan_checker: PlanChecker | None = None

    @property
    def explain(self) -> bool:
        """Show the values of a failed condition's parts in its violation (``Violation.values``).
        Replay turns this off and explains only the steps it reports (a third of its time)."""
        return self._explainer.explain

    @explain.setter
    def explain(self, on: bool) -> None:
        self._explainer.explain = on

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
            from .inputs import validate_state_overrides

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
        return _with(base, {self.layout[name]: value for name, value in values.items()})

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
            return self._step(state, tool, args)

    def _step(self, state: State, tool: str, args: Mapping[str, Any] | None) -> StepResult:
        args = dict(args or {})
        ctool = self.compiled.tools.get(tool)
        if ctool is None:
            guess = did_you_mean(tool, self.compiled.tools)
            hint = (
                f"did you mean `{guess}`?"
                if guess
                else ("the contract declares: " + ", ".join(self.compiled.tools))
            )
            v = Violation(
                "UNKNOWN_TOOL", f"the contract declares no tool `{tool}`", "unknown_tool", hint=hint
            )
            return StepResult(tool, args, [Branch(None, "fails", state, violations=[v])])
        try:
            model = ctool.args_model.model_validate(args)
        except ValidationError as exc:
            violations = [
                Violation(
                    "INVALID_ARGUMENT",
                    f"{tool}: {p.text()}",
                    "argument",
                    hint=p.hint,
                    location=self._explainer.loc(ctool.ir.span),
                    field=p.path,
                    rule=p.rule,
                    value=p.value,
                )
                for p in problems_from(exc, "args")
            ]
            return StepResult(tool, args, [Branch(None, "fails", state, violations=violations)])
        values = model_values(model)
        return self._step_validated(state, ctool, values, args)

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
        """The step after argument validation. Observed real calls (:mod:`.observe`) pass
        ``real`` (bound to ``result``), ``force`` (run the outcomes even where preconditions or
        protocols refuse the call: it happened) and ``chosen`` (end in this outcome instead of
        walking the flow)."""
        safe = state.has_unknown
        S = state.data
        violations: list[Violation] = []
        # undecided rules, in order: the violation, its precondition (None for a protocol
        # guard) and its text for the branches' assumptions
        undecided: list[tuple[Violation, CCondition | None, str]] = []
        # protocol machines
        machine_moves: list[tuple[int, list[tuple[str, Any, str | None]]]] = []
        for mname in ctool.machines:
            m = self.compiled.machines[mname]
            current = S[m.slot]
            options = m.by_tool[ctool.name].get(current, [])
            admitted: list[tuple[str, Any, str | None]] = []
            for t in options:
                ok: Any = True
                if t.guard is not None:
                    ok = self._explainer.eval(t.guard, state, values, safe, ctool)
                if ok is True or ok is UNKNOWN:
                    admitted.append((t.ir.target, ok, t.ir.outcome))
            if not admitted and options:
                guards = " or ".join(f"`{when_text(t)}`" for t in options)
                violations.append(
                    Violation(
                        "PROTOCOL_VIOLATION",
                        f"`{ctool.name}` is allowed while {mname} is `{current}` only when "
                        f"{guards}, which is false",
                        "protocol",
                        location=self._explainer.loc(m.ir.span),
                        values=tuple(
                            (text, show(value))
                            for t in options
                            if t.ir.when is not None
                            for text, value in self.compiled.interpreter.explain(
                                t.ir.when, self._explainer.env(state, values)
                            )
                        ),
                    )
                )
            elif not admitted:
                allowed = tuple(sorted(m.by_tool[ctool.name]))
                path = self._explainer.path_to(m, current, set(allowed))
                hint = (
                    f"call {' → '.join(path)} first"
                    if path
                    else ("no sequence of calls reaches a state that allows it")
                )
                violations.append(
                    Violation(
                        "PROTOCOL_VIOLATION",
                        f"`{ctool.name}` is not allowed while {mname} is `{current}`; "
                        "it is allowed in " + ", ".join(f"`{s}`" for s in allowed),
                        "protocol",
                        hint=hint,
                        location=self._explainer.loc(m.ir.span),
                        allowed_states=allowed,
                        path_to_allowed=tuple(path),
                    )
                )
            else:
                if all(ok is UNKNOWN for _, ok, _ in admitted):
                    # every transition's guard is unknown: the call may be refused
                    guards = "; ".join(when_text(t) for t in options if t.guard is not None)
                    undecided.append(
                        (
                            Violation(
                                "PROTOCOL_VIOLATION",
                                f"`{ctool.name}` may not be allowed while {mname} is "
                                f"`{current}`: its guard cannot be decided ({guards})",
                                "protocol",
                                location=self._explainer.loc(m.ir.span),
                                certain=False,
                            ),
                            None,
                            f"the guard of `{ctool.name}` in {mname}",
                        )
                    )
                machine_moves.append((m.slot, admitted))
        # hard preconditions: every one is checked, so every violated rule is reported
        for cond in ctool.requires:
            result = self._explainer.eval(cond.test, state, values, safe, ctool)
            if result is True:
                continue
            if isinstance(result, Violation):
                violations.append(result)
                continue
            v = self._explainer.condition_violation(
                cond, state, values, ctool, certain=result is False
            )
            if result is False:
                violations.append(v)
            elif result is UNKNOWN:
                undecided.append((v, cond, f"`{cond_text(cond)}`"))
            else:
                violations.append(self._explainer.not_bool(cond, result))
        if violations and not force:
            return StepResult(
                ctool.name,
                raw_args,
                [Branch(None, "fails", state, violations=violations)],
                self._cost(ctool, state, values, safe),
            )
        branches, held_state = self._undecided_branches(state, ctool, values, undecided)
        if force:
            branches = []  # it happened: the rules held (or the contract is wrong)
        warnings: list[Warning_] = []
        for cond in ctool.shoulds:
            result = self._explainer.eval(cond.test, state, values, safe, ctool)
            if result is True:
                continue
            if isinstance(result, Violation):
                warnings.append(Warning_(result.code, result.message))
                continue
            v = self._explainer.condition_violation(
                cond, state, values, ctool, certain=result is False
            )
            warnings.append(Warning_(v.code, v.message, certain=result is False))
        # the branches where the unknown preconditions hold: their own failures stay certain,
        # since the complementary worlds fail already (the branch above)
        held = tuple(f"{text} holds" for _, _, text in undecided)
        # (a real call recognised as a failure outcome does not show that they held)
        failure_chosen = chosen is not None and ctool.outcomes[chosen].kind == "fails"
        if held_state is None and not force:
            # no world satisfies every rule at once: the call fails on every branch
            return StepResult(
                ctool.name, raw_args, branches, self._cost(ctool, state, values, safe)
            )
        if held_state is not None and held_state is not state and not failure_chosen:
            state = held_state
            safe = state.has_unknown
        if chosen is not None:
            outcome = ctool.outcomes[chosen]
            ends = [
                self._finish(
                    outcome,
                    state.data,
                    1.0,
                    (),
                    (),
                    (),
                    False,
                    None,
                    ctool,
                    values,
                    state,
                    safe,
                    real,
                )
            ]
        else:
            ends = self._outcome_branches(state, ctool, values, safe, real)
        for b in ends:
            b.preconditions_assumed = held
            if held:
                b.probability = None
            b.warnings = warnings + b.warnings
            branches.append(b)
        # protocol machines move on non-failure outcomes (or on the outcome they name)
        if machine_moves:
            branches = self._move_machines(branches, machine_moves)
        return StepResult(ctool.name, raw_args, branches, self._cost(ctool, state, values, safe))

    def _undecided_branches(
        self,
        state: State,
        ctool: CTool,
        values: dict[str, Any],
        undecided: list[tuple[Violation, CCondition | None, str]],
    ) -> tuple[list[Branch], State | None]:
        """The failing branches of a step whose rules are undecided, and the state where all of
        them hold (None when no state does).

        Rule *i* fails first on its own branch: the undecided rules before it held there, and
        what that (and its failing) implies about unknown state variables is remembered, so
        each branch names the rule that failed on it and its state agrees with the
        assumptions. A later rule that is false on that branch is reported there too; a rule
        that holds once the earlier ones held gets no branch of its own."""
        branches: list[Branch] = []
        held_state = state
        assumed: tuple[str, ...] = ()
        for i, (v, cond, text) in enumerate(undecided):
            result: Any = UNKNOWN
            if cond is not None and held_state is not state:
                result = self._explainer.eval(
                    cond.test, held_state, values, held_state.has_unknown, ctool
                )
            if result is True:
                continue  # it holds wherever the earlier ones hold
            failed_state = held_state
            if result is UNKNOWN and cond is not None:
                failed_state = _with(
                    held_state, self._implied(cond.ir.cond, held_state, ctool, values, False)
                )
            failing = [v]
            if isinstance(result, Violation):
                failing = [result]
            elif result is not UNKNOWN and result is not False:
                failing = [self._explainer.not_bool(cond, result)]  # type: ignore[arg-type]
            for later, later_cond, _ in undecided[i + 1 :]:
                if later_cond is None:
                    continue
                r = self._explainer.eval(
                    later_cond.test, failed_state, values, failed_state.has_unknown, ctool
                )
                if r is False:
                    failing.append(later)
            branches.append(
                Branch(
                    None,
                    "fails",
                    failed_state,
                    probability=None,
                    assumptions=assumed + (f"{text} is false",),
                    violations=failing,
                )
            )
            if result is not UNKNOWN:
                return branches, None  # false wherever the earlier ones hold
            if cond is not None:
                held_state = _with(
                    held_state, self._implied(cond.ir.cond, held_state, ctool, values, True)
                )
            assumed += (f"{text} holds",)
        return branches, held_state

    def _implied(
        self, cond: Any, state: State, ctool: CTool, values: dict[str, Any], holds: bool
    ) -> dict[int, Any]:
        """What a condition tells about unknown state variables once it is known to hold (or
        to fail): ``x`` and ``not x`` over a ``bool``, ``x == literal`` and ``x != literal``,
        their combinations by ``and`` (when it holds) and ``or`` (when it fails), and the
        undecided side of an ``and`` that fails (an ``or`` that holds) whose other side is
        known."""
        from ..dsl import ir

        if isinstance(cond, ir.Unary) and cond.op == "not":
            return self._implied(cond.operand, state, ctool, values, not holds)
        if isinstance(cond, ir.Binary) and cond.op in ("and", "or"):
            if (cond.op == "and") != holds:
                # one side or the other decided it: the other one, when this one is known
                for side, other in ((cond.left, cond.right), (cond.right, cond.left)):
                    if self._known(side, state, values) is (cond.op == "and"):
                        return self._implied(other, state, ctool, values, holds)
                return {}
            left = self._implied(cond.left, state, ctool, values, holds)
            right = self._implied(cond.right, state, ctool, values, holds)
            out = dict(left)
            for slot, value in right.items():
                if slot in out and (out[slot] != value or type(out[slot]) is not type(value)):
                    del out[slot]  # contradictory: keep it unknown
                else:
                    out[slot] = value
            return out
        if isinstance(cond, ir.Name):
            var, prim = self._unknown_var(cond, state, ctool)
            return {var: holds} if var is not None and prim == "bool" else {}
        if isinstance(cond, ir.Binary) and cond.op in ("==", "!="):
            name, lit = cond.left, cond.right
            if isinstance(name, ir.Literal_):
                name, lit = lit, name
            if not isinstance(name, ir.Name) or not isinstance(lit, ir.Literal_):
                return {}
            var, prim = self._unknown_var(name, state, ctool)
            value = _literal_of(prim, lit.value)
            if var is None or value is UNKNOWN:
                return {}
            if holds == (cond.op == "=="):
                return {var: value}
            return {var: not value} if prim == "bool" else {}
        return {}

    def _known(self, e: Any, state: State, values: dict[str, Any]) -> Any:
        """The value of a sub-expression (UNKNOWN when it cannot be evaluated)."""
        try:
            return self.compiled.interpreter.eval(e, self._explainer.env(state, values))
        except Exception:  # noqa: BLE001 - an error decides nothing here
            return UNKNOWN

    def _unknown_var(self, e: Any, state: State, ctool: CTool) -> tuple[int | None, str | None]:
        """The slot and primitive type of a state variable named by ``e`` whose value is
        unknown (not hidden by a parameter of the tool)."""
        if e.name in ctool.params or e.name not in self.compiled.state_names:
            return None, None
        slot = self.layout[e.name]
        if state.data[slot] is not UNKNOWN:
            return None, None
        return slot, _primitive(self.compiled.ir, e.name)

    def _cost(self, ctool: CTool, state: State, values: dict[str, Any], safe: bool) -> float | None:
        """A call's cost (also when it fails: the call was made). None when not declared."""
        if ctool.cost is None:
            return None
        c = self._explainer.eval(ctool.cost, state, values, safe, ctool)
        return c if isinstance(c, (int, float)) and not isinstance(c, bool) else None

    # ------------------------------------------------------------------ outcomes and flows
    def _outcome_branches(
        self, state: State, ctool: CTool, values: dict[str, Any], safe: bool, real: Any = SIMULATED
    ) -> list[Branch]:
        """Walk the tool's flow: every environment event forks, unknown guards fork."""
        flow = ctool.flow
        finished: list[Branch] = []
        # (step, working state values, probability, assumptions, flow path, ctx warnings, havoc,
        # the event met on the way)
        Pending = tuple[
            str,
            tuple[Any, ...],
            "float | None",
            tuple[str, ...],
            tuple[str, ...],
            tuple[tuple[str, str, tuple[Any, ...]], ...],
            bool,
            "str | None",
        ]
        todo: deque[Pending] = deque([(flow.initial, state.data, 1.0, (), (), (), False, None)])
        budget = MAX_FLOW_STEPS
        while todo:
            step, vals, prob, assumed, path, emitted, approx, event = todo.popleft()
            budget -= 1
            if budget < 0:
                finished.append(
                    self._explainer.eval_failure(
                        state,
                        "FLOW_TOO_LONG",
                        f"the flow of `{ctool.name}` ran more than {MAX_FLOW_STEPS} steps",
                        ctool.ir.span,
                    )
                )
                break
            path = path + (step,)
            body = flow.steps.get(step)
            if body is not None:
                ctx = make_context(self.today, self.now)
                work = list(vals)
                try:
                    (body.safe if safe else body.fast)(work, values, None, state.data, ctx)
                except Exception as exc:  # noqa: BLE001 - any failure of generated code is reported
                    finished.append(
                        self._explainer.eval_failure(
                            state, "EVAL_ERROR", error_text(exc), body.span
                        )
                    )
                    continue
                vals = tuple(work)
                emitted = emitted + tuple(ctx.warnings)
                approx = approx or ctx.havoc
            transitions = flow.outgoing.get(step, [])
            sub_state = state.derive(vals)
            sub_safe = safe or sub_state.has_unknown

            def follow(
                target: tuple[str, bool, str | None],
                p: float | None,
                assumptions: tuple[str, ...],
                vals: tuple[Any, ...] = vals,
                path: tuple[str, ...] = path,
                emitted: tuple[tuple[str, str, tuple[Any, ...]], ...] = emitted,
                approx: bool = approx,
            ) -> None:
                """Take a transition: to the next step (pending) or to an outcome (finished)."""
                nxt = self._advance(
                    target,
                    vals,
                    p,
                    assumptions,
                    path,
                    emitted,
                    approx,
                    ctool,
                    values,
                    state,
                    safe,
                    real,
                )
                (finished if isinstance(nxt, Branch) else todo).append(nxt)

            events = [t for t in transitions if t.ir.event is not None]
            plain = [t for t in transitions if t.ir.event is None]
            event_total = 0.0
            event_known = True
            for t in events:
                ok: Any = True
                if t.when is not None:
                    ok = self._explainer.eval(t.when, sub_state, values, sub_safe, ctool)
                if isinstance(ok, Violation):  # the guard cannot be evaluated: not "it holds"
                    finished.append(Branch(None, "fails", state, violations=[ok]))
                    continue
                if ok is False:
                    continue
                p = t.ir.event.probability if t.ir.event else None
                if p is None:
                    event_known = False
                else:
                    event_total += p
                branch_prob = None if prob is None or p is None else prob * p
                extra = (f"{when_text(t)} (unknown)",) if ok is UNKNOWN else ()
                target = (t.ir.target, t.ir.to_outcome, t.ir.event.name)  # type: ignore[union-attr]
                follow(target, branch_prob, assumed + extra)
            rest: float | None = (
                None if prob is None or not event_known else prob * max(0.0, 1.0 - event_total)
            )
            if rest == 0.0:
                continue
            chosen = False
            for t in plain:
                ok = True
                if t.when is not None:
                    ok = self._explainer.eval(t.when, sub_state, values, sub_safe, ctool)
                if isinstance(ok, Violation):
                    finished.append(
                        Branch(
                            None,
                            "fails",
                            state,
                            probability=rest,
                            assumptions=assumed,
                            violations=[ok],
                            event=event,
                        )
                    )
                    chosen = True
                    break
                if ok is False:
                    continue
                extra = (f"{when_text(t)}",) if ok is UNKNOWN else ()
                # an event met in an earlier step of the flow stays this branch's event
                follow(
                    (t.ir.target, t.ir.to_outcome, event),
                    None if ok is UNKNOWN else rest,
                    assumed + extra,
                )
                if ok is True:
                    chosen = True
                    break
                # unknown: the next transitions are the branch where this guard is false
                assumed = assumed + (f"not ({when_text(t)})",)
            if not chosen:
                stuck = self._explainer.eval_failure(
                    state,
                    "FLOW_STUCK",
                    f"the flow of `{ctool.name}` is stuck at step `{step}`: no transition applies",
                    ctool.ir.span,
                )
                stuck.probability, stuck.assumptions, stuck.event = rest, assumed, event
                finished.append(stuck)
        return finished

    def _advance(
        self,
        target: tuple[str, bool, str | None],
        vals: tuple[Any, ...],
        prob: float | None,
        assumed: tuple[str, ...],
        path: tuple[str, ...],
        emitted: tuple[tuple[str, str, tuple[Any, ...]], ...],
        approx: bool,
        ctool: CTool,
        values: dict[str, Any],
        state: State,
        safe: bool,
        real: Any = SIMULATED,
    ) -> Any:
        name, to_outcome, event = target
        if not to_outcome:
            return (name, vals, prob, assumed, path, emitted, approx, event)
        out = ctool.outcomes[name]
        return self._finish(
            out, vals, prob, assumed, path, emitted, approx, event, ctool, values, state, safe, real
        )

    def _finish(
        self,
        out: COutcome,
        vals: tuple[Any, ...],
        prob: float | None,
        assumed: tuple[str, ...],
        path: tuple[str, ...],
        emitted: tuple[tuple[str, str, tuple[Any, ...]], ...],
        approx: bool,
        event: str | None,
        ctool: CTool,
        values: dict[str, Any],
        state: State,
        safe: bool,
        real: Any = SIMULATED,
    ) -> Branch:
        """Apply an outcome's effects atomically and build its branch."""
        ctx = make_context(self.today, self.now)
        work = list(vals)
        bodies = [] if out.kind == "fails" else [ctool.effects]
        bodies.append(out.body)
        if real is not SIMULATED:
            result = real
        else:
            # a result that no effect stores must not bump the fresh-id counter: the state would
            # differ from an identical one only by that counter and could not be merged
            stored = self._stores_result(ctool.name, out.name, bodies)
            result = self._fresh_result(ctool, work if stored else [work[-1]])
        result_unknown = lib.contains_unknown(result)
        use_safe = safe or result_unknown or state.derive(vals).has_unknown
        for body in bodies:
            if body is None:
                continue
            before = tuple(work)
            try:
                (body.safe if use_safe else body.fast)(work, values, result, state.data, ctx)
            except Exception as exc:  # noqa: BLE001
                precise, where = self._explainer.interpreted_error(
                    body, state.derive(before), values, result
                )
                return self._explainer.eval_failure(
                    state, "EVAL_ERROR", error_text(exc), where or body.span, precise
                )
        too_large = _oversized(work, state.data, self.compiled.state_names)
        if too_large is not None:
            return self._explainer.eval_failure(state, "EVAL_ERROR", too_large, out.ir.span)
        new_state = state.derive(tuple(work))
        warnings = [self._explainer.warning(code, key, vals_) for code, key, vals_ in emitted]
        warnings += [self._explainer.warning(code, key, vals_) for code, key, vals_ in ctx.warnings]
        violations: list[Violation] = []
        kind: Literal["success", "partial", "fails"] = out.ir.outcome
        if out.kind == "fails":
            message = self._explainer.render(
                out.message, state, values, ctool, use_safe, result
            ) or (f"{ctool.name} failed ({out.name})")
            hint = self._explainer.render(out.hint, state, values, ctool, use_safe, result)
            violations.append(
                Violation(
                    out.ir.code or out.name.upper(),
                    message,
                    "outcome",
                    hint=hint,
                    location=self._explainer.loc(out.ir.span),
                    certain=not assumed,
                )
            )
        else:
            for cond in ctool.ensures:
                test = cond.test.safe if new_state.has_unknown or result_unknown else cond.test.fast
                try:
                    ok = test(new_state.data, values, result, state.data, ctx)
                except Exception as exc:  # noqa: BLE001
                    violations.append(
                        Violation(
                            "EVAL_ERROR",
                            f"the contract cannot evaluate `{cond_text(cond)}`: {error_text(exc)}",
                            "evaluation",
                            location=self._explainer.loc(cond.ir.span),
                        )
                    )
                    kind = "fails"
                    continue
                if ok is True or ok is UNKNOWN:
                    continue
                ensure_message = self._explainer.render(
                    cond.message, new_state, values, ctool, use_safe, result
                )
                violations.append(
                    Violation(
                        cond.ir.code or "ENSURE_FAILED",
                        ensure_message
                        or f"postcondition `{cond_text(cond)}` does not hold after the call",
                        "postcondition",
                        location=self._explainer.loc(cond.ir.span),
                        hint="the contract's effects do not establish its own postcondition",
                    )
                )
                kind = "fails"
        return Branch(
            out.name,
            kind,
            new_state,
            probability=prob,
            event=event,
            assumptions=assumed,
            violations=violations,
            warnings=warnings,
            report=dict(ctx.reports),
            flow_path=path,
            approximate=approx or ctx.havoc,
            guess=bool(assumed),
        )

    def _stores_result(self, tool: str, outcome: str, bodies: list[Any]) -> bool:
        key = (tool, outcome)
        cache = self._result_use
        if key not in cache:
            from ..dsl.walk import stmt_exprs, used_names, walk_stmts

            exprs = [
                e for b in bodies if b is not None for s in walk_stmts(b.ir) for e in stmt_exprs(s)
            ]
            cache[key] = "result" in used_names(exprs)
        return cache[key]

    def _fresh_result(self, ctool: CTool, work: list[Any]) -> Any:
        returns = ctool.ir.returns
        if returns is None:
            return None
        from .inputs import fresh_value

        return fresh_value(returns, self.compiled, work, ctool.name)

    def _move_machines(
        self, branches: list[Branch], moves: list[tuple[int, list[tuple[str, Any, str | None]]]]
    ) -> list[Branch]:
        out: list[Branch] = []
        for b in branches:
            if b.outcome is None:
                out.append(b)
                continue
            variants = [b]
            for slot, admitted in moves:
                nxt: list[Branch] = []
                for v in variants:
                    applicable = [
                        (target, ok)
                        for target, ok, only in admitted
                        if (only is None and v.kind != "fails") or only == v.outcome
                    ]
                    if not applicable:
                        nxt.append(v)
                        continue
                    for target, ok in applicable:
                        values = list(v.state.data)
                        values[slot] = target
                        moved = replace(v, state=v.state.derive(tuple(values)))
                        if ok is UNKNOWN:
                            moved.assumptions = v.assumptions + ("a transition guard holds",)
                            moved.probability = None
                            moved.guess = True
                        nxt.append(moved)
                        if ok is True:
                            break
                variants = nxt
            out.extend(variants)
        return out

    # ------------------------------------------------------------------ evaluation helpers
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
            from ..dsl.diagnostics import ContractError, error

            raise ContractError([error(v.code, v.message, hint=v.hint) for v in unreadable])
        return self._checker().bind(tool, args)

    def check_plan(self, calls: Sequence[BoundCall], state: State | None = None) -> PlanCheck:
        """Just the verdict of a linear plan of bound calls, on the fastest path available."""
        if isinstance(calls, (str, bytes)) or not isinstance(calls, Sequence):
            raise TypeError(
                f"calls must be a list of calls from sim.bind(), not {safe_type_name(calls)}"
            )
        for i, call in enumerate(calls):
            if not isinstance(call, BoundCall):
                raise TypeError(
                    f"calls[{i}] must be a call from sim.bind(tool, args), not "
                    f"{safe_type_name(call)}"
                )
        if state is not None:
            expect_state(self, state, "state")
        return (self._plan_checker or self._checker()).check(calls, state)

    def _checker(self) -> PlanChecker:
        if self._plan_checker is None:
            self._plan_checker = PlanChecker(self)
        return self._plan_checker

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


def _with(state: State, updates: dict[int, Any]) -> State:
    data = list(state.data)
    for slot, value in updates.items():
        data[slot] = value
    return state.derive(tuple(data))


def _oversized(work: list[Any], before: tuple[Any, ...], names: list[str]) -> str | None:
    """Why a changed state variable is too large to keep (lib.MAX_VALUE_SIZE), if one is."""
    for slot, name in enumerate(names):
        value = work[slot]
        if value is before[slot] or not isinstance(value, (tuple, frozenset, FMap)):
            continue  # unchanged, or a scalar (strings have their own, smaller bound)
        try:
            lib.check_value_size(value, f"`{name}`")
        except lib.EvalError as exc:
            return str(exc)
    return None


def _primitive(contract: Any, var: str) -> str | None:
    """The primitive type (``bool``, ``int``, ``float``, ``str``) of a state variable, through
    type aliases; None for anything else."""
    from ..dsl import ir

    aliases = {t.name: t.type for t in contract.types}
    t: Any = next(v.type for v in contract.state if v.name == var)
    for _ in range(len(aliases) + 1):
        if not isinstance(t, ir.NamedType):
            return None
        if t.name in ("bool", "int", "float", "str"):
            return t.name
        if t.name not in aliases:
            return None
        t = aliases[t.name]
    return None


def _literal_of(prim: str | None, value: Any) -> Any:
    """A literal as a value of a variable of primitive type ``prim``; UNKNOWN when it is not
    one (so nothing is concluded from comparing them)."""
    if prim == "bool":
        return value if isinstance(value, bool) else UNKNOWN
    if prim == "int":
        return value if isinstance(value, int) and not isinstance(value, bool) else UNKNOWN
    if prim == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return UNKNOWN
    if prim == "str":
        return value if isinstance(value, str) else UNKNOWN
    return UNKNOWN
