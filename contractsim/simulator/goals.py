"""Which parts of a goal a state misses: the goal split on its top-level ``and`` (and on the
items of an ``all(…)`` and the body of a named predicate), each part evaluated with the values
that decided it — as a plan validator names the goal atoms a plan leaves unsatisfied."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from ..compiler import lib
from ..compiler.interp import Env
from ..compiler.values import UNKNOWN, show
from ..dsl import ir
from ..dsl.pretty import expr_text
from ..dsl.walk import used_names, walk_expr
from ..records import record

if TYPE_CHECKING:
    from .engine import Simulator
    from .state import State

MAX_INSTANCES = 1000
"""An ``all(…)`` over more items than this is one part, not one part per item."""


@record(frozen=True)
class GoalPart:
    """A part of a goal that does not hold in a state: ``status`` is ``false``, ``unknown`` (it
    depends on unknown values) or ``error`` (the contract cannot evaluate it). ``bindings`` are
    the item of an ``all(…)`` or the arguments of a predicate the part is about, ``predicate``
    the named predicate whose body it is part of."""

    expr: str
    status: Literal["false", "unknown", "error"]
    values: tuple[tuple[str, str], ...] = ()  # sub-expression text → shown value
    bindings: tuple[tuple[str, str], ...] = ()  # variable → shown value
    predicate: str | None = None
    error: str | None = None

    @property
    def text(self) -> str:
        """The part on its own: ``t in done for t = "c"``."""
        where = ", ".join(f"{n} = {v}" for n, v in self.bindings)
        return self.expr + (f" for {where}" if where else "")

    def describe(self) -> str:
        """`` `EXPR` is false for x = 1 (in `pred`)`` (or unknown, or cannot be evaluated)."""
        what = (
            f"cannot be evaluated: {self.error}" if self.status == "error" else f"is {self.status}"
        )
        where = ", ".join(f"{n} = {v}" for n, v in self.bindings)
        inside = f" (in `{self.predicate}`)" if self.predicate else ""
        return f"`{self.expr}` {what}" + (f" for {where}" if where else "") + inside

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "status": self.status}
        if self.values:
            out["values"] = dict(self.values)
        if self.bindings:
            out["bindings"] = dict(self.bindings)
        if self.predicate:
            out["predicate"] = self.predicate
        if self.error is not None:
            out["error"] = self.error
        return out


def unmet_parts(sim: Simulator, state: State, name: str) -> list[GoalPart]:
    """The parts of goal ``name`` that do not hold in ``state`` (empty when it is reached)."""
    goal = {g.name: g for g in sim.compiled.ir.goals}[name]  # KeyError, as Simulator.goal
    env = sim._env(state, {})
    interp = sim.compiled.interpreter
    parts: list[GoalPart] = []
    with lib.step_budget(sim.step_seconds):
        for piece in _split(goal.cond, _Scope(env), interp):
            parts.extend(_judge(piece, interp))
    if not parts and sim.goal(state, name) is not True:
        # the pieces hold, but the whole does not (it cannot be split): report the whole
        parts = _judge((goal.cond, _Scope(env)), interp)
    return parts


@record(frozen=True)
class _Scope:
    """Where a part is evaluated: the environment, the variables bound on the way (innermost
    last) and the predicate whose body it belongs to."""

    env: Env
    bound: tuple[tuple[str, Any], ...] = ()
    predicate: str | None = None
    # a predicate call kept whole: its body and the environment it runs in, for the values
    body: tuple[ir.Expr, Env] | None = None

    def bind(self, env: Env, names: dict[str, Any], predicate: str | None) -> _Scope:
        kept = tuple((n, v) for n, v in self.bound if n not in names)
        return _Scope(env, kept + tuple(names.items()), predicate)


def _split(e: ir.Expr, scope: _Scope, interp: Any) -> list[tuple[ir.Expr, _Scope]]:
    """The conjuncts of ``e``, each with the scope it is evaluated in."""
    env = scope.env
    if isinstance(e, ir.Binary) and e.op == "and":
        return _split(e.left, scope, interp) + _split(e.right, scope, interp)
    if isinstance(e, ir.Quantifier) and e.op == "all" and e.cond is None and not e.unpack:
        try:
            coll = interp.eval(e.coll, env)
            items = None if coll is UNKNOWN else lib.iterate(coll)
        except Exception:  # noqa: BLE001 - judged whole, with its error
            items = None
        if items is not None and len(items) <= MAX_INSTANCES:
            out: list[tuple[ir.Expr, _Scope]] = []
            for item in items:
                inner = scope.bind(env.with_locals(**{e.var: item}), {e.var: item}, scope.predicate)
                out += _split(e.body, inner, interp)
            return out
    if isinstance(e, ir.Call) and e.func in interp.predicates and not e.kwargs:
        pred = interp.predicates[e.func]
        try:
            args = [interp.eval(a, env) for a in e.args]
        except Exception:  # noqa: BLE001
            return [(e, scope)]
        params = {p.name: v for p, v in zip(pred.params, args)}
        inner_env = Env(**{**env.__dict__, "locals": params, "args": {}})
        pieces = _split(pred.body, scope.bind(inner_env, params, pred.name), interp)
        if len(pieces) == 1 and pieces[0][0] is pred.body:
            # nothing to split: the call as written in the goal reads best (`has("milk")`)
            return [(e, replace(scope, body=(pred.body, inner_env)))]
        return pieces
    return [(e, scope)]


def _judge(piece: tuple[ir.Expr, _Scope], interp: Any) -> list[GoalPart]:
    e, scope = piece
    used = used_names([e])
    bindings = tuple((n, show(v, 40)) for n, v in scope.bound if n in used)
    try:
        value = interp.eval(e, scope.env)
    except Exception as exc:  # noqa: BLE001 - a goal that fails to evaluate is not reached
        error = str(exc) or type(exc).__name__
        return [GoalPart(expr_text(e), "error", (), bindings, scope.predicate, error)]
    if value is True:
        return []
    explained, env = scope.body or (e, scope.env)
    constant = _constant_texts(explained)
    names = {n for n, _ in scope.bound} | set(env.locals)
    values = tuple(
        (sub, v if isinstance(v, str) and v.startswith("<error") else show(v))
        for sub, v in interp.explain(explained, env)
        if sub not in constant and sub not in names
    )
    status: Literal["false", "unknown"] = "unknown" if value is UNKNOWN else "false"
    return [GoalPart(expr_text(e), status, values, bindings, scope.predicate)]


def _constant_texts(e: ir.Expr) -> set[str]:
    """Texts of the literal collections in ``e`` (``("d", "c")``): their value says nothing."""

    def constant(x: ir.Expr) -> bool:
        if isinstance(x, ir.ScalarLit):
            return True
        return isinstance(x, ir.Collection) and all(constant(i) for i in x.items)

    return {expr_text(x) for x in walk_expr(e) if isinstance(x, ir.Collection) and constant(x)}
