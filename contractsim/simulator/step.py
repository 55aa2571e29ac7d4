"""The step algorithm: what one call does from one state, across every branch.

A step: validate arguments → protocol machines admit the call → hard preconditions (three-valued) →
soft preconditions (warnings) → flow / outcomes (one branch per environment event) → that outcome's
effects, applied atomically. :class:`~.engine.Simulator` is the façade over it; failures are
explained by :mod:`.explain`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Literal, NamedTuple, cast

from pydantic_core import ValidationError

from ..compiler import lib
from ..compiler.compile import CCondition, CompiledContract, COutcome, CTool, make_context
from ..compiler.core_schemas import model_values
from ..compiler.problems import problems_from
from ..compiler.values import PLAN_TEXTS, UNKNOWN, Bounded, FMap, Fresh, show
from ..diagnostics import did_you_mean
from ..dsl.types import type_label
from .explain import Explainer, cond_text, when_text
from .results import Branch, StepResult, StepWarning, Violation
from .state import State
from .values import primitive_of

MAX_FLOW_STEPS = 256
_UNSET = object()  # (a cache entry not worked out yet)
_ORDER = ("==", "!=", "<", "<=", ">", ">=")
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
# ``real`` when a step is simulated, not observed: the result is made up (fresh or unknown)
SIMULATED: Any = object()


Emitted = tuple[tuple[str, str, tuple[Any, ...]], ...]
"""Warnings emitted by generated code on the way: (code, message template key, values)."""


class FlowPath(NamedTuple):
    """One way through a tool's flow, not yet ended in an outcome."""

    step: str  # the flow step it is at (the outcome's name once it ends in one)
    vals: tuple[Any, ...]  # the working state values
    prob: float | None  # its probability (None when unknown)
    assumed: tuple[str, ...]  # what was assumed about unknown guards on the way
    path: tuple[str, ...]  # the flow steps taken before this one
    emitted: Emitted  # warnings emitted on the way
    approx: bool = False  # an unknown condition made some values unknown
    event: str | None = None  # the environment event met on the way


class Call(NamedTuple):
    """What stays the same while one call's branches are built."""

    ctool: CTool
    values: dict[str, Any]  # the validated arguments
    state: State  # the state the call starts from
    safe: bool  # some values are unknown: run the generated code's unknown-aware form
    real: Any = SIMULATED  # the observed result of a real call, or SIMULATED


class Stepper:
    """The step algorithm for one compiled contract (its caches included)."""

    def __init__(self, compiled: CompiledContract, explainer: Explainer) -> None:
        self.compiled = compiled
        self.layout = compiled.slots
        self.today, self.now = explainer.today, explainer.now
        self._explainer = explainer
        self._result_use: dict[tuple[str, str], bool] = {}
        self._result_readers: dict[str, bool] = {}
        self.result_adapters: dict[str, Any] = {}  # tool → the validator of its `-> TYPE`
        self.real_results: dict[tuple[str, Any], Any] = {}  # see observe._real_result
        self.valid_args: dict[tuple[Any, ...], dict[str, Any] | None] = {}  # see observe
        self._direct_outcomes: dict[str, object] = {}  # tool → see direct_outcome

    def step(self, state: State, tool: str, args: Mapping[str, Any] | None) -> StepResult:
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
            if any(lib.contains_unknown(v) for v in args.values()):
                # a value passed on from an earlier step's result (`$1.result.token`)
                return self.step_symbolic(state, ctool, args)
            violations = self._argument_violations(ctool, problems_from(exc, "args"))
            # (the soft preconditions need valid arguments: only OFF_SPEC_ARGUMENT is known)
            also = _besides(off_spec_warnings(ctool, args, refused=True), violations)
            return StepResult(
                tool, args, [Branch(None, "fails", state, violations=violations, warnings=also)]
            )
        values = model_values(model)
        return self.step_validated(state, ctool, values, args)

    def _argument_violations(self, ctool: CTool, problems: Iterable[Any]) -> list[Violation]:
        """One INVALID_ARGUMENT violation per argument problem."""
        return [
            Violation(
                "INVALID_ARGUMENT",
                f"{ctool.name}: {p.text()}",
                "argument",
                hint=p.hint,
                location=self._explainer.loc(ctool.ir.span),
                field=p.path,
                rule=p.rule,
                value=p.value,
            )
            for p in problems
        ]

    def step_symbolic(self, state: State, ctool: CTool, args: dict[str, Any]) -> StepResult:
        """A step whose arguments hold values nobody has seen (a fresh token, an unknown number
        passed on from an earlier result): the other arguments are validated as usual, these
        only for their kind (text, number), since their text is not known."""
        symbolic = {k for k, v in args.items() if lib.contains_unknown(v)}
        probe = {k: v for k, v in args.items() if k not in symbolic}
        problems = []
        values: dict[str, Any] = {}
        try:
            values = model_values(ctool.args_model.model_validate(probe))
        except ValidationError as exc:
            problems = [p for p in problems_from(exc, "args") if p.path[5:] not in symbolic]
            if not problems:
                fields = ctool.args_model.model_fields
                for pname, f in fields.items():
                    name = f.alias or pname
                    if name in symbolic:
                        continue
                    if name in probe:
                        param = next(x for x in ctool.ir.params if x.name == name)
                        adapter = self.compiled.validators.adapter_for(param.type)
                        values[name] = adapter.validate_python(probe[name])
                    else:
                        values[name] = f.get_default(call_default_factory=True)
        violations = self._argument_violations(ctool, problems)
        for param in ctool.ir.params:
            if param.name not in symbolic:
                continue
            value = args[param.name]
            kind = primitive_of(self.compiled.ir, param.type)
            wrong = (type(value) is Fresh and kind in ("int", "float", "bool")) or (
                type(value) is Bounded and kind in ("str", "bool")
            )
            if wrong:
                violations.append(
                    Violation(
                        "INVALID_ARGUMENT",
                        f"{ctool.name}: args.{param.name}: must be {kind}, got "
                        f"{lib.type_name(value)} ({show(value)})",
                        "argument",
                        location=self._explainer.loc(ctool.ir.span),
                        field=f"args.{param.name}",
                        rule="type",
                    )
                )
            values[param.name] = value
        if violations:
            also = _besides(off_spec_warnings(ctool, probe, refused=True), violations)
            return StepResult(
                ctool.name,
                args,
                [Branch(None, "fails", state, violations=violations, warnings=also)],
            )
        return self.step_validated(state, ctool, values, args)

    def step_validated(
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
        failed_before = False  # an earlier hard precondition is certainly false
        for cond in ctool.requires:
            # (after a certain failure, an evaluation error is dropped: no need to explain it)
            result = self._explainer.eval(
                cond.test, state, values, safe, ctool, precise_errors=not failed_before
            )
            if result is True:
                continue
            if isinstance(result, Violation):
                if not (failed_before and result.code == "EVAL_ERROR"):
                    # (a later rule that cannot be evaluated because an earlier one failed —
                    # `require x is Rec else …` then `require x.a > 0` — is no news)
                    violations.append(result)
                continue
            failed_before = failed_before or result is False
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
            # every violated rule is reported: the soft ones too, as what else is wrong
            also = self.soft_warnings(state, ctool, values, raw_args, safe, refused=True)
            return StepResult(
                ctool.name,
                raw_args,
                [Branch(None, "fails", state, violations=violations, warnings=also)],
                self.cost(ctool, state, values, safe),
            )
        branches, held_state = self.undecided_branches(state, ctool, values, undecided)
        if force:
            branches = []  # it happened: the rules held (or the contract is wrong)
        warnings = self.soft_warnings(state, ctool, values, raw_args, safe, refused=False)
        # the branches where the unknown preconditions hold: their own failures stay certain,
        # since the complementary worlds fail already (the branch above)
        held = tuple(f"{text} holds" for _, _, text in undecided)
        # (a real call recognised as a failure outcome does not show that they held)
        failure_chosen = chosen is not None and ctool.outcomes[chosen].kind == "fails"
        if held_state is None and not force:
            # no world satisfies every rule at once: the call fails on every branch
            also = [replace(w, refused=True) for w in warnings]
            for b in branches:
                b.warnings = also + b.warnings
            return StepResult(ctool.name, raw_args, branches, self.cost(ctool, state, values, safe))
        if held_state is not None and held_state is not state and not failure_chosen:
            state = held_state
            safe = state.has_unknown
        if chosen is not None:
            outcome = ctool.outcomes[chosen]
            start = FlowPath(chosen, state.data, 1.0, (), (), (), False, None)
            ends = self.finish(outcome, start, Call(ctool, values, state, safe, real))
        else:
            ends = self.outcome_branches(Call(ctool, values, state, safe, real))
        for b in ends:
            b.preconditions_assumed = held
            if held:
                b.probability = None
            b.warnings = warnings + b.warnings
            branches.append(b)
        # protocol machines move on non-failure outcomes (or on the outcome they name)
        if machine_moves:
            branches = self.move_machines(branches, machine_moves)
        return StepResult(ctool.name, raw_args, branches, self.cost(ctool, state, values, safe))

    def soft_warnings(
        self,
        state: State,
        ctool: CTool,
        values: dict[str, Any],
        raw_args: Mapping[str, Any],
        safe: bool,
        refused: bool,
    ) -> list[StepWarning]:
        """OFF_SPEC_ARGUMENT and the failed soft preconditions (``should``). With ``refused``
        (the call fails before it runs) they are marked as what else is wrong with it, and a
        ``should`` that cannot be evaluated is left out (an earlier rule failing explains it)."""
        warnings = off_spec_warnings(ctool, raw_args, refused)
        for cond in ctool.shoulds:
            result = self._explainer.eval(cond.test, state, values, safe, ctool)
            if result is True:
                continue
            if isinstance(result, Violation):
                if not refused:
                    warnings.append(StepWarning(result.code, result.message))
                continue
            v = self._explainer.condition_violation(
                cond, state, values, ctool, certain=result is False
            )
            warnings.append(
                StepWarning(v.code, v.message, certain=result is False, refused=refused)
            )
        return warnings

    def undecided_branches(
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
                failed_state = with_slots(
                    held_state, self.implied(cond.ir.cond, held_state, ctool, values, False)
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
                held_state = with_slots(
                    held_state, self.implied(cond.ir.cond, held_state, ctool, values, True)
                )
            assumed += (f"{text} holds",)
        return branches, held_state

    def implied(
        self, cond: Any, state: State, ctool: CTool, values: dict[str, Any], holds: bool
    ) -> dict[int, Any]:
        """What a condition tells about unknown state variables once it is known to hold (or
        to fail): ``x`` and ``not x`` over a ``bool``, ``x == literal`` and ``x != literal``,
        their combinations by ``and`` (when it holds) and ``or`` (when it fails), and the
        undecided side of an ``and`` that fails (an ``or`` that holds) whose other side is
        known."""
        from ..dsl import ir

        if isinstance(cond, ir.Unary) and cond.op == "not":
            return self.implied(cond.operand, state, ctool, values, not holds)
        if isinstance(cond, ir.Binary) and cond.op in ("and", "or"):
            if (cond.op == "and") != holds:
                # one side or the other decided it: the other one, when this one is known
                for side, other in ((cond.left, cond.right), (cond.right, cond.left)):
                    if self.known(side, state, values) is (cond.op == "and"):
                        return self.implied(other, state, ctool, values, holds)
                return {}
            left = self.implied(cond.left, state, ctool, values, holds)
            right = self.implied(cond.right, state, ctool, values, holds)
            out = dict(left)
            for slot, value in right.items():
                both = _intersection(out[slot], value) if slot in out else None
                if both is not None:
                    out[slot] = both  # two narrowings of one interval: both hold
                elif slot in out and (out[slot] != value or type(out[slot]) is not type(value)):
                    del out[slot]  # contradictory: keep it unknown
                else:
                    out[slot] = value
            return out
        if isinstance(cond, ir.Name):
            var, prim = self.unknown_var(cond, state, ctool)
            return {var: holds} if var is not None and prim == "bool" else {}
        if isinstance(cond, ir.Binary) and cond.op in _ORDER:
            narrowed = self.narrowed(cond, state, ctool, values, holds)
            if narrowed is not None:
                return narrowed
        if isinstance(cond, ir.Binary) and cond.op in ("==", "!="):
            name, lit = cond.left, cond.right
            if isinstance(name, ir.ScalarLit):
                name, lit = lit, name
            if not isinstance(name, ir.Name) or not isinstance(lit, ir.ScalarLit):
                return {}
            var, prim = self.unknown_var(name, state, ctool)
            value = literal_of(prim, lit.value)
            if var is None or value is UNKNOWN:
                return {}
            if holds == (cond.op == "=="):
                return {var: value}
            return {var: not value} if prim == "bool" else {}
        return {}

    def narrowed(
        self, cond: Any, state: State, ctool: CTool, values: dict[str, Any], holds: bool
    ) -> dict[int, Any] | None:
        """A comparison of a state variable holding a bounded unknown with a known number
        narrows its interval (``balance >= amount`` held: ``balance`` is in ``[amount, HI]``).
        None when the comparison is not of that form."""
        from ..dsl import ir

        op = cond.op if holds else _NEGATED[cond.op]
        for name, other, flip in ((cond.left, cond.right, False), (cond.right, cond.left, True)):
            if not isinstance(name, ir.Name) or name.name in ctool.params:
                continue
            slot = self.layout.get(name.name)
            if slot is None or name.name not in self.compiled.state_names:
                continue
            current = state.data[slot]
            if type(current) is not Bounded:
                continue
            value = self.known(other, state, values)
            try:
                return {slot: lib.narrowed(current, _FLIPPED[op] if flip else op, value)}
            except lib.EvalError:
                return {}  # no number of the interval satisfies it: nothing to conclude
        return None

    def known(self, e: Any, state: State, values: dict[str, Any]) -> Any:
        """The value of a sub-expression (UNKNOWN when it cannot be evaluated)."""
        try:
            return self.compiled.interpreter.eval(e, self._explainer.env(state, values))
        except Exception:  # noqa: BLE001 - an error decides nothing here
            return UNKNOWN

    def unknown_var(self, e: Any, state: State, ctool: CTool) -> tuple[int | None, str | None]:
        """The slot and primitive type of a state variable named by ``e`` whose value is
        unknown (not hidden by a parameter of the tool)."""
        hidden = e.name in ctool.params and not e.state  # `state.NAME` is never hidden
        if hidden or e.name not in self.compiled.state_names:
            return None, None
        slot = self.layout[e.name]
        if state.data[slot] is not UNKNOWN:
            return None, None
        return slot, primitive(self.compiled.ir, e.name)

    def cost(self, ctool: CTool, state: State, values: dict[str, Any], safe: bool) -> float | None:
        """A call's cost (also when it fails: the call was made). None when not declared."""
        if ctool.cost is None:
            return None
        c = self._explainer.eval(ctool.cost, state, values, safe, ctool)
        return c if isinstance(c, (int, float)) and not isinstance(c, bool) else None

    # ------------------------------------------------------------------ outcomes and flows
    def outcome_branches(self, call: Call) -> list[Branch]:
        """Walk the tool's flow: every environment event forks, unknown guards fork."""
        ctool, values, state, safe, _ = call
        flow = ctool.flow
        direct = self.direct_outcome(ctool)
        if direct is not None:
            # the walk below, taken by a flow that is one unguarded transition to an outcome
            start = FlowPath(direct, state.data, 1.0, (), (flow.initial,), ())
            return self.finish(ctool.outcomes[direct], start, call)
        finished: list[Branch] = []
        todo: deque[FlowPath] = deque([FlowPath(flow.initial, state.data, 1.0, (), (), (), False)])
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
                except lib.ContractFail as stop:
                    # `fail` in a flow step: what the steps did so far stays done
                    finished.append(
                        self.failed_by_statement(
                            stop, work, state, ctool, assumed, prob, event, path
                        )
                    )
                    continue
                except Exception as exc:  # noqa: BLE001 - any failure of generated code is reported
                    finished.append(
                        self._explainer.eval_failure(
                            state, "EVAL_ERROR", lib.failure_text(exc), body.span
                        )
                    )
                    continue
                vals = tuple(work)
                emitted = emitted + tuple(ctx.warnings)
                approx = approx or ctx.havoc
                finished.extend(
                    self.possible_failures(ctx, state, ctool, assumed, prob, event, path)
                )
            transitions = flow.outgoing.get(step, [])
            sub_state = state.derive(vals)
            sub_safe = safe or sub_state.has_unknown

            def follow(
                target: tuple[str, bool, str | None],
                p: float | None,
                assumptions: tuple[str, ...],
                vals: tuple[Any, ...] = vals,
                path: tuple[str, ...] = path,
                emitted: Emitted = emitted,
                approx: bool = approx,
            ) -> None:
                """Take a transition: to the next step (pending) or to an outcome (finished)."""
                name, to_outcome, event = target
                nxt = FlowPath(name, vals, p, assumptions, path, emitted, approx, event)
                if to_outcome:
                    finished.extend(self.finish(ctool.outcomes[name], nxt, call))
                else:
                    todo.append(nxt)

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

    def direct_outcome(self, ctool: CTool) -> str | None:
        """The outcome a tool's flow goes to straight away, when its flow is a single
        unguarded transition from a step without a body to an outcome (the flow of every tool
        that declares no `flow` block); None for any other flow. Remembered per tool: replay
        walks the flow of every recorded call."""
        known = self._direct_outcomes.get(ctool.name, _UNSET)
        if known is _UNSET:
            flow = ctool.flow
            out = flow.outgoing.get(flow.initial, [])
            known = None
            if flow.initial not in flow.steps and len(out) == 1:
                t = out[0]
                if t.ir.event is None and t.when is None and t.ir.to_outcome:
                    known = t.ir.target
            self._direct_outcomes[ctool.name] = known
        return cast("str | None", known)

    def finish(self, out: COutcome, at: FlowPath, call: Call) -> list[Branch]:
        """Apply an outcome's effects atomically to the values a flow path reached, and build
        its branch; plus a failing branch for each ``fail`` under an unknown condition."""
        ctx = make_context(self.today, self.now)
        branch = self._finish(out, at, call, ctx)
        if not ctx.may_fail:
            return [branch]
        ctool, values, state, _, _ = call
        _, _, prob, assumed, path, _, _, event = at
        return [
            branch,
            *self.possible_failures(ctx, state, ctool, assumed, prob, event, path),
        ]

    def failed_by_statement(
        self,
        stop: lib.ContractFail,
        work: list[Any],
        state: State,
        ctool: CTool,
        assumed: tuple[str, ...],
        prob: float | None,
        event: str | None,
        path: tuple[str, ...],
    ) -> Branch:
        """The branch of a call that a ``fail`` statement ended: the effects applied before it
        stay applied (like a ``fails`` outcome's own effects)."""
        too_large = oversized(work, state.data, self.compiled.state_names)
        if too_large is not None:
            return self._explainer.eval_failure(state, "EVAL_ERROR", too_large, ctool.ir.span)
        t = self.compiled.warn_templates.get(stop.key)
        message = t.render(stop.values) if t is not None else f"{ctool.name} failed ({stop.code})"
        line = stop.key.split(":")[0]
        file = ctool.ir.span.file
        v = Violation(
            stop.code,
            message,
            "fail",
            hint="the call stopped at this `fail`; the effects before it stay applied",
            location=f"{file}:{line}" if file else None,
            certain=not assumed,
        )
        return Branch(
            None,
            "fails",
            state.derive(tuple(work)),
            probability=prob,
            event=event,
            assumptions=assumed,
            violations=[v],
            flow_path=path,
            guess=bool(assumed),
        )

    def possible_failures(
        self,
        ctx: Any,
        state: State,
        ctool: CTool,
        assumed: tuple[str, ...],
        prob: float | None,
        event: str | None,
        path: tuple[str, ...],
    ) -> list[Branch]:
        """A may-fail branch for each ``fail`` met under an unknown condition (recorded by the
        generated code in ``ctx.may_fail``), with the state there; duplicates merged."""
        out: list[Branch] = []
        seen: set[tuple[str, tuple[Any, ...]]] = set()
        for code, key, holes, snapshot in ctx.may_fail:
            if (key, snapshot) in seen:
                continue
            seen.add((key, snapshot))
            stop = lib.ContractFail(code, key, (UNKNOWN,) * holes)
            b = self.failed_by_statement(
                stop,
                list(snapshot),
                state,
                ctool,
                assumed + (f"the `fail {code}` at line {key.split(':')[0]} is reached",),
                None,
                event,
                path,
            )
            b.approximate = True
            out.append(b)
        ctx.may_fail.clear()
        return out

    def _finish(self, out: COutcome, at: FlowPath, call: Call, ctx: Any) -> Branch:
        ctool, values, state, safe, real = call  # (unpacked: this runs for every branch)
        _, vals, prob, assumed, path, emitted, approx, event = at
        work = list(vals)
        bodies = [] if out.kind == "fails" else [ctool.effects]
        bodies.append(out.body)
        if real is not SIMULATED:
            result = real
        else:
            # a result that no effect stores must not bump the fresh-id counter: the state would
            # differ from an identical one only by that counter and could not be merged
            stored = self.stores_result(ctool.name, out.name, bodies)
            before = None
            if ctool.ir.returns is not None:
                # a result may echo what the tool sees; it differs from the plan's other texts
                seen = (
                    self.compiled.interpreter.texts,
                    vals[: len(self.compiled.state_names)],
                    tuple(values.values()),
                )
                before = (PLAN_TEXTS.get(), seen)
            result = self.fresh_result(ctool, work if stored else [work[-1]], before)
        # a result that no expression reads (a made-up fresh id, say) does not force the
        # three-valued flavour of the code: the fast one, which it never reaches, gives the same
        result_unknown = self.reads_result(ctool) and lib.contains_unknown(result)
        use_safe = safe or result_unknown or state.derive(vals).has_unknown
        for body in bodies:
            if body is None:
                continue
            before = tuple(work)
            try:
                (body.safe if use_safe else body.fast)(work, values, result, state.data, ctx)
            except lib.ContractFail as stop:
                ctx.may_fail.clear()  # the call failed for certain before they could matter
                failed = self.failed_by_statement(
                    stop, work, state, ctool, assumed, prob, event, path
                )
                if out.kind == "fails":
                    # the call still ended in this failure outcome, with the statement's code
                    failed.outcome = out.name
                failed.warnings = [
                    self._explainer.warning(code, key, vals_)
                    for code, key, vals_ in (*emitted, *ctx.warnings)
                ]
                failed.report = dict(ctx.reports)
                failed.approximate = approx or ctx.havoc
                return failed
            except Exception as exc:  # noqa: BLE001
                precise, where = self._explainer.interpreted_error(
                    body, state.derive(before), values, result, old=state
                )
                return self._explainer.eval_failure(
                    state, "EVAL_ERROR", lib.failure_text(exc), where or body.span, precise
                )
            if body.makes_unknowns:
                use_safe = True  # it made a fresh value or a bounded unknown: so do the rest
        too_large = oversized(work, state.data, self.compiled.state_names)
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
                            f"the contract cannot evaluate `{cond_text(cond)}`: "
                            + lib.failure_text(exc),
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
            result=result,
        )

    def reads_result(self, ctool: CTool) -> bool:
        """Whether anything a call of ``ctool`` can evaluate (its own expressions, the
        contract's predicates, functions, constants and machine guards) names ``result``. When
        nothing does, the result reaches no generated code: its value, and whether it is
        unknown, cannot change the step."""
        known = self._result_readers.get(ctool.name)
        if known is None:
            from ..dsl import ir
            from ..dsl.walk import all_exprs

            def names_result(contract: ir.Contract) -> bool:
                return any(
                    isinstance(e, ir.Name) and e.name == "result" for e in all_exprs(contract)
                )

            contract = self.compiled.ir
            shared = self._result_readers.get("")  # ("" is no tool's name)
            if shared is None:
                shared = self._result_readers[""] = names_result(replace(contract, tools=()))
            known = self._result_readers[ctool.name] = shared or names_result(
                replace(
                    contract,
                    consts=(),
                    predicates=(),
                    functions=(),
                    goals=(),
                    machines=(),
                    tools=(ctool.ir,),
                )
            )
        return known

    def stores_result(self, tool: str, outcome: str, bodies: list[Any]) -> bool:
        key = (tool, outcome)
        cache = self._result_use
        if key not in cache:
            from ..dsl.walk import stmt_exprs, used_names, walk_stmts

            exprs = [
                e for b in bodies if b is not None for s in walk_stmts(b.ir) for e in stmt_exprs(s)
            ]
            cache[key] = "result" in used_names(exprs)
        return cache[key]

    def fresh_result(
        self, ctool: CTool, work: list[Any], before: tuple[Any, Any] | None = None
    ) -> Any:
        returns = ctool.ir.returns
        if returns is None:
            return None
        from .values import fresh_value

        return fresh_value(returns, self.compiled, work, ctool.name, before)

    def move_machines(
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


def _intersection(a: Any, b: Any) -> Any:
    """Where two narrowings of one bounded unknown meet (None when they are not both numbers or
    intervals, or do not meet)."""
    if type(a) is not Bounded and type(b) is not Bounded:
        return None
    bounds = []
    for x in (a, b):
        if type(x) is Bounded:
            bounds.append((x.lo, x.hi, x.whole))
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            bounds.append((x, x, isinstance(x, int)))
        else:
            return None
    try:
        return lib.bounded(
            max(bounds[0][0], bounds[1][0]),
            min(bounds[0][1], bounds[1][1]),
            bounds[0][2] and bounds[1][2],
        )
    except lib.EvalError:
        return None


def with_slots(state: State, updates: dict[int, Any]) -> State:
    data = list(state.data)
    for slot, value in updates.items():
        data[slot] = value
    return state.derive(tuple(data))


def oversized(work: list[Any], before: tuple[Any, ...], names: list[str]) -> str | None:
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


def primitive(contract: Any, var: str) -> str | None:
    """The primitive type (``bool``, ``int``, ``float``, ``str``) of a state variable, through
    type aliases; None for anything else."""
    return primitive_of(contract, next(v.type for v in contract.state if v.name == var))


def literal_of(prim: str | None, value: Any) -> Any:
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


# ------------------------------------------------------------------ declared vs accepted types
_ARG_PATH = re.compile(r"^args\.([^.\[]+)")


def _besides(warnings: list[StepWarning], violations: list[Violation]) -> list[StepWarning]:
    """The warnings about arguments that no violation already refuses."""

    def argument(path: str | None) -> str | None:
        match = _ARG_PATH.match(path or "")
        return match.group(1) if match else None

    invalid = {argument(v.field) for v in violations}
    return [w for w in warnings if argument(w.field) not in invalid]


def off_spec_warnings(
    ctool: CTool, raw_args: Mapping[str, Any], refused: bool = False
) -> list[StepWarning]:
    """OFF_SPEC_ARGUMENT for each argument the tool accepts (``p: DECLARED accepts ACCEPTED``)
    but that its declared type refuses: like a failed ``should``, the call proceeds (with
    ``refused``: the call fails for another reason, and this is what else is wrong with it)."""
    if ctool.declared_model is None:
        return []
    try:
        ctool.declared_model.model_validate(dict(raw_args))
    except ValidationError as exc:
        problems = problems_from(exc, "args")
    else:
        return []
    params = {p.name: p for p in ctool.ir.params}
    out: list[StepWarning] = []
    for problem in problems:
        match = _ARG_PATH.match(problem.path)
        param = params.get(match.group(1)) if match else None
        declared = "?" if param is None else type_label(param.type)
        accepted = "?" if param is None else type_label(param.accepted_type)
        out.append(
            StepWarning(
                "OFF_SPEC_ARGUMENT",
                f"{ctool.name}: {problem.text()}; the declared type is {declared}, "
                f"the tool accepts {accepted}",
                field=problem.path,
                value=problem.value,
                declared=declared,
                refused=refused,
            )
        )
    return out
