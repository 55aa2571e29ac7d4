"""Which tool can enable or disable which: the edges of the overview diagram.

The analysis is a conservative, syntactic heuristic — an edge is a hint for a reader, never a proof.

**Writes.** Every statement a tool can run (its ``effect``, every outcome body — failure outcomes
included, since effects on failure are allowed — and every flow step body; both branches of ``if``
and loop bodies count) is classified per state variable it changes:

* ``s.add(x)``, ``l.append(x)``, ``m[k] = e`` (a new key) — the collection *grows*;
* ``s.remove(x)``, ``s.discard(x)``, ``m.remove(k)``, ``c.clear()``, ``v = {}`` / ``[]`` — it
  *shrinks*;
* ``v += e`` / ``v -= e`` — the number goes *up* / *down* (a negative literal flips it);
* ``v = LITERAL`` (consts with a literal value included) — the variable is *set* to that value;
* ``v = e`` with a computed ``e`` — the variable is *supplied* a new value.

Anything else (``m[k].field = e``) is ignored.

**Reads.** Only hard preconditions (``require``) of the other tool count. Each condition is split
into atoms through ``and`` / ``or`` / ``not`` (``not`` flips the atom), ``all(…)`` / ``any(…)``
(their body is an atom of the same polarity) and predicate calls (the predicate's body is
inlined). Atoms that are understood:

* ``x in v`` / ``x in keys(v)`` (and ``not in``) — needs ``v`` to contain ``x`` (or not);
* ``len(v) OP n`` with a literal ``n`` — needs ``v`` to grow (``>``, ``>=``, ``!= 0``) or to
  shrink (``<``, ``<=``, ``== 0``);
* ``v OP LITERAL`` (either side) and a bare boolean ``v`` / ``not v`` — a comparison.

Every other atom (``count(…)``, ``sum(…)``, function calls on state, comparisons between two
state variables …) is ignored: no edge is claimed for it.

**Edges.** ``A → B enables`` when a write of A can make an atom of B true: a growing collection for
a membership or a minimum length, a shrinking one for a non-membership or a maximum length, a number
that goes up for ``>`` / ``>=`` (down for ``<`` / ``<=``), a set literal for which the comparison
holds, and a supplied (computed) value for any comparison. ``A → B disables`` when a write can make
an atom false: the opposite cases, and a set literal for which the comparison does not hold. A
supplied value never counts as disabling (its value is not known). An edge from a tool to itself
is not drawn.

Protocol machines add their own edges: ``A → B enables`` when a transition on A enters a state
that has a transition on B, and ``A → B disables`` when a transition on A leaves a state where B
is allowed for one where it is not.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..dsl import ir
from ..dsl.visitor import NodeVisitor
from ..dsl.walk import walk_stmts

Effect = Literal["enables", "disables"]
_NOT_LITERAL = object()

_FLIP = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_MIRROR = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Write:
    """One way a tool changes a state variable."""

    var: str
    how: Literal["grow", "shrink", "up", "down", "set", "supply"]
    value: Any = None  # for "set": the literal value


@dataclass(frozen=True)
class Atom:
    """One understood piece of a precondition, polarity applied."""

    var: str
    test: Literal["member", "nonmember", "compare"]
    op: str = "=="
    value: Any = None


@dataclass(frozen=True)
class Dependency:
    """``source`` can make a precondition of ``target`` true (enables) or false (disables)."""

    source: str
    target: str
    effect: Effect
    reasons: tuple[str, ...]  # state variables, or ``machine NAME``


# ------------------------------------------------------------------------------------------ writes


class _Context:
    def __init__(self, contract: ir.Contract) -> None:
        self.state = {v.name for v in contract.state}
        self.consts: dict[str, Any] = {}
        for c in contract.consts:
            value = _literal(c.value, {})
            if value is not _NOT_LITERAL:
                self.consts[c.name] = value
        self.predicates = {p.name: p for p in contract.predicates}

    def literal(self, e: ir.Expr) -> Any:
        return _literal(e, self.consts)


def _literal(e: ir.Expr, consts: dict[str, Any]) -> Any:
    if isinstance(e, ir.ScalarLit):
        return e.value
    if isinstance(e, ir.Name) and e.name in consts:
        return consts[e.name]
    if isinstance(e, ir.Unary) and e.op == "-":
        inner = _literal(e.operand, consts)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner
    if isinstance(e, (ir.Collection, ir.MapLit)):
        items = e.items if isinstance(e, ir.Collection) else e.entries
        return () if not items else _NOT_LITERAL
    return _NOT_LITERAL


def _root(target: ir.Expr) -> tuple[str | None, int]:
    """The variable an assignment target is rooted at, and how many keys/fields deep it is."""
    depth = 0
    node = target
    while isinstance(node, (ir.Attr, ir.Index)):
        depth += 1
        node = node.obj
    return (node.name if isinstance(node, ir.Name) else None), depth


def tool_bodies(tool: ir.Tool) -> list[tuple[ir.Stmt, ...]]:
    """Every statement block a call of ``tool`` can run."""
    bodies: list[tuple[ir.Stmt, ...]] = [tool.effects]
    bodies.extend(o.body for o in tool.outcomes)
    if tool.flow is not None:
        bodies.extend(step.body for step in tool.flow.steps)
    return bodies


def writes(tool: ir.Tool, ctx: _Context) -> list[Write]:
    """How ``tool`` can change each state variable, in statement order."""
    out: list[Write] = []
    for body in tool_bodies(tool):
        for s in walk_stmts(body):
            w = _write(s, ctx)
            if w is not None and w not in out:
                out.append(w)
    return out


def _write(s: ir.Stmt, ctx: _Context) -> Write | None:
    if isinstance(s, ir.MethodCall):
        var, depth = _root(s.target)
        if var is None or var not in ctx.state or depth:
            return None
        if s.method in ("add", "append"):
            return Write(var, "grow")
        if s.method in ("remove", "discard", "clear"):
            return Write(var, "shrink")
        return None
    if not isinstance(s, ir.Assign):
        return None
    var, depth = _root(s.target)
    if var is None or var not in ctx.state:
        return None
    if depth == 1 and isinstance(s.target, ir.Index) and s.op == "=":
        return Write(var, "grow")
    if depth:
        return None
    value = ctx.literal(s.value)
    if s.op in ("+=", "-="):
        up = s.op == "+="
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            up = not up
        return Write(var, "up" if up else "down")
    if value == () and value is not _NOT_LITERAL:
        return Write(var, "shrink")
    if value is _NOT_LITERAL:
        return Write(var, "supply")
    return Write(var, "set", value)


# ------------------------------------------------------------------------------------------- reads


def atoms(tool: ir.Tool, ctx: _Context) -> list[Atom]:
    """The understood atoms of ``tool``'s hard preconditions."""
    out: list[Atom] = []
    for cond in tool.conditions:
        if cond.strength != "require":
            continue
        bound = {p.name for p in tool.params}
        for a in _atoms(cond.cond, True, bound, ctx, 0):
            if a not in out:
                out.append(a)
    return out


def _state_var(e: ir.Expr, bound: set[str], ctx: _Context) -> str | None:
    if isinstance(e, ir.Name) and e.name in ctx.state and (e.state or e.name not in bound):
        return e.name
    return None


def _atoms(
    e: ir.Expr, positive: bool, bound: set[str], ctx: _Context, depth: int
) -> Iterator[Atom]:
    if depth > 32:
        return iter(())
    return _ATOMS.visit(e, positive, bound, ctx, depth)  # type: ignore[no-any-return]


class _AtomFinder(NodeVisitor):
    """``visit(e, positive, bound, ctx, depth)``: the atoms of condition ``e``; the kinds without
    a method (literals, fields, keys, collections) say nothing the view understands."""

    def generic_visit(self, node: ir.Node, *args: Any) -> Iterator[Atom]:
        return iter(())

    def visit_Unary(
        self, e: ir.Unary, positive: bool, bound: set[str], ctx: _Context, depth: int
    ) -> Iterator[Atom]:
        if e.op == "not":
            yield from _atoms(e.operand, not positive, bound, ctx, depth + 1)

    def visit_Quantifier(
        self, e: ir.Quantifier, positive: bool, bound: set[str], ctx: _Context, depth: int
    ) -> Iterator[Atom]:
        if e.op in ("all", "any"):
            names = {e.var, *e.unpack}
            yield from _atoms(e.body, positive, bound | names, ctx, depth + 1)

    def visit_Call(
        self, e: ir.Call, positive: bool, bound: set[str], ctx: _Context, depth: int
    ) -> Iterator[Atom]:
        if e.func in ctx.predicates and not e.kwargs:
            pred = ctx.predicates[e.func]
            inner = {p.name for p in pred.params}
            yield from _atoms(pred.body, positive, inner, ctx, depth + 1)

    def visit_Name(
        self, e: ir.Name, positive: bool, bound: set[str], ctx: _Context, depth: int
    ) -> Iterator[Atom]:
        var = _state_var(e, bound, ctx)
        if var is not None:
            yield Atom(var, "compare", "==" if positive else "!=", True)

    def visit_Binary(
        self, e: ir.Binary, positive: bool, bound: set[str], ctx: _Context, depth: int
    ) -> Iterator[Atom]:
        if e.op in ("and", "or"):
            yield from _atoms(e.left, positive, bound, ctx, depth + 1)
            yield from _atoms(e.right, positive, bound, ctx, depth + 1)
            return
        if e.op in ("in", "not in"):
            coll = e.right
            if isinstance(coll, ir.Call) and coll.func == "keys" and len(coll.args) == 1:
                coll = coll.args[0]
            var = _state_var(coll, bound, ctx)
            if var is not None:
                member = (e.op == "in") == positive
                yield Atom(var, "member" if member else "nonmember")
            return
        if e.op not in _OPS:
            return
        op = e.op if positive else _FLIP[e.op]
        for subject, other, this_op in ((e.left, e.right, op), (e.right, e.left, _MIRROR[op])):
            value = ctx.literal(other)
            if value is _NOT_LITERAL:
                continue
            var = _state_var(subject, bound, ctx)
            if var is not None:
                yield Atom(var, "compare", this_op, value)
                return
            if (
                isinstance(subject, ir.Call)
                and subject.func == "len"
                and len(subject.args) == 1
                and isinstance(value, (int, float))
                and not isinstance(value, bool)
            ):
                var = _state_var(subject.args[0], bound, ctx)
                if var is None:
                    return
                if this_op in (">", ">=") or (this_op == "!=" and value == 0):
                    yield Atom(var, "member")
                elif this_op in ("<", "<=") or (this_op == "==" and value == 0):
                    yield Atom(var, "nonmember")
                return


_ATOMS = _AtomFinder()


# ------------------------------------------------------------------------------------------ verdict


def judge(w: Write, a: Atom) -> Effect | None:
    """Whether write ``w`` can make atom ``a`` true (enables) or false (disables)."""
    if w.var != a.var:
        return None
    if a.test in ("member", "nonmember"):
        grows = {"grow": True, "shrink": False}.get(w.how)
        if w.how == "supply":
            return "enables"
        if grows is None:
            return None
        return "enables" if grows == (a.test == "member") else "disables"
    if w.how == "supply":
        return "enables"
    if w.how == "set":
        try:
            holds = _OPS[a.op](w.value, a.value)
        except TypeError:
            return None
        return "enables" if holds else "disables"
    if w.how in ("up", "down") and a.op in ("<", "<=", ">", ">="):
        increasing = a.op in (">", ">=")
        return "enables" if (w.how == "up") == increasing else "disables"
    return None


def dependencies(contract: ir.Contract) -> list[Dependency]:
    """Every enables/disables edge between two different tools, sorted by source and target."""
    ctx = _Context(contract)
    found: dict[tuple[str, str, Effect], set[str]] = {}
    tool_writes = {t.name: writes(t, ctx) for t in contract.tools}
    tool_atoms = {t.name: atoms(t, ctx) for t in contract.tools}
    for a_name, ws in tool_writes.items():
        for b_name, ats in tool_atoms.items():
            if a_name == b_name:
                continue
            for w in ws:
                for at in ats:
                    verdict = judge(w, at)
                    if verdict is not None:
                        found.setdefault((a_name, b_name, verdict), set()).add(w.var)
    for m in contract.machines:
        allowed: dict[str, set[str]] = {}
        for t in m.transitions:
            allowed.setdefault(t.tool, set()).add(t.source)
        for t in m.transitions:
            if t.target == t.source:
                continue  # a self-loop leaves the machine where it is: it changes nothing
            for other, states in allowed.items():
                if other == t.tool:
                    continue
                if t.target in states and t.source not in states:
                    found.setdefault((t.tool, other, "enables"), set()).add(f"machine {m.name}")
                elif t.source in states:
                    found.setdefault((t.tool, other, "disables"), set()).add(f"machine {m.name}")
    order = {t.name: i for i, t in enumerate(contract.tools)}
    return [
        Dependency(a, b, eff, tuple(sorted(reasons, key=lambda r: (r.startswith("machine "), r))))
        for (a, b, eff), reasons in sorted(
            found.items(),
            key=lambda kv: (order.get(kv[0][0], 0), order.get(kv[0][1], 0), kv[0][2]),
        )
    ]
