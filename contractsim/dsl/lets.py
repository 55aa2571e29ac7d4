"""Tool-level ``let NAME = EXPR`` bindings, made plain expressions after checking.

A binding at the top of a tool body names a value computed from the arguments and the state
*before* the call. After the checker has typed the bindings (and narrowed on their names), every
use of a bound name in the tool is replaced by the bound expression, so that no later stage —
code generation, the interpreter, the simulator's explanations, the guard — needs to know about
bindings. In postconditions and effects, where the state may already have changed, the
expression is wrapped in ``old(…)``: a binding keeps the value it had before the call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from . import ir
from .visitor import child_exprs
from .walk import replace_nodes, stmt_exprs, template_exprs


def inline_tool_lets(contract: ir.Contract) -> ir.Contract:
    """``contract`` with every use of a tool-level ``let`` replaced by its value."""
    tools: list[ir.Tool] = []
    for tool in contract.tools:
        if not tool.lets:
            tools.append(tool)
            continue
        table = _Uses()
        unchanged: dict[int, ir.Node] = {}
        _collect_tool(tool, table, unchanged)
        # the uses of a tool's bindings are all inside the tool: only it is walked, and not
        # into the clauses, outcomes and statements without a use (each mapped to itself)
        tools.append(_replaced_in_tool(tool, {**unchanged, **table}) if table else tool)
    if all(new is old for new, old in zip(tools, contract.tools)):
        return contract
    return dataclasses.replace(contract, tools=tuple(tools))


_USE_FIELDS = ("cost", "conditions", "effects", "outcomes", "flow")
"""The fields of a tool :func:`_collect_tool` finds uses in (not its parameters, their types,
its tags, reports or the bindings themselves): only they are walked to replace them."""


def _replaced_in_tool(tool: ir.Tool, table: dict[int, ir.Node]) -> ir.Tool:
    """``replace_nodes(tool, table)`` for a table of uses :func:`_collect_tool` found."""
    changes = {}
    for name in _USE_FIELDS:
        value = getattr(tool, name)
        new = replace_nodes(value, table)
        if new is not value:
            changes[name] = new
    return dataclasses.replace(tool, **changes) if changes else tool


class _Uses(dict[int, ir.Node]):
    """A replacement table that counts the replacements written to it (a node written twice,
    were the IR ever to share one, counts twice)."""

    writes = 0

    def __setitem__(self, key: int, value: ir.Node) -> None:
        self.writes += 1
        super().__setitem__(key, value)


def _collect_tool(
    tool: ir.Tool, table: dict[int, ir.Node], unchanged: dict[int, ir.Node] | None = None
) -> None:
    """Record in ``table`` the replacement of every use of a binding in ``tool``; with
    ``unchanged`` (and a :class:`_Uses` table), also each clause, outcome, statement and
    expression processed without one, mapped to itself."""
    values: dict[str, ir.Expr] = {}
    for let in tool.lets:
        inner: dict[int, ir.Node] = {}
        _expr(let.value, values, frozenset(), inner, wrap=False)
        values[let.name] = replace_nodes(let.value, inner) if inner else let.value
    if not values:
        return

    def pre(e: ir.Expr | None) -> None:
        if e is not None:
            written = _writes(table)
            _expr(e, values, frozenset(), table, wrap=False)
            _keep_unchanged(e, table, written, unchanged)

    def templates(*ts: ir.Template | None, wrap: bool = False) -> None:
        for t in ts:
            for e in template_exprs(t):
                _expr(e, values, frozenset(), table, wrap)

    pre(tool.cost)
    for cond in tool.conditions:
        written = _writes(table)
        post = cond.strength == "ensure"
        _expr(cond.cond, values, frozenset(), table, wrap=post)
        templates(cond.message, cond.hint, wrap=post)
        _keep_unchanged(cond, table, written, unchanged)
    _stmts(tool.effects, values, frozenset(), table, unchanged)
    for out in tool.outcomes:
        written = _writes(table)
        pre(out.when)
        pre(out.observed)
        templates(out.message, out.hint)
        _stmts(out.body, values, frozenset(), table, unchanged)
        _keep_unchanged(out, table, written, unchanged)
    if tool.flow is not None:
        for step in tool.flow.steps:
            _stmts(step.body, values, frozenset(), table, unchanged)
        for t in tool.flow.transitions:
            pre(t.when)


def _writes(table: dict[int, ir.Node]) -> int:
    return table.writes if isinstance(table, _Uses) else 0


def _keep_unchanged(
    node: ir.Node,
    table: dict[int, ir.Node],
    written: int,
    unchanged: dict[int, ir.Node] | None,
) -> None:
    """Map ``node`` to itself in ``unchanged`` when no replacement was written while it was
    processed (every use inside it is written while it is processed)."""
    if unchanged is not None and isinstance(table, _Uses) and table.writes == written:
        unchanged[id(node)] = node


def _replacement(name: ir.Name, value: ir.Expr, wrap: bool) -> ir.Expr:
    if not wrap:
        return value
    return ir.Call(span=name.span, func="old", func_span=name.span, args=(value,))


def _expr(
    e: ir.Expr,
    values: dict[str, ir.Expr],
    bound: frozenset[str],
    table: dict[int, ir.Node],
    wrap: bool,
) -> None:
    """Record the replacement of every free use of a bound name in ``e``."""
    if isinstance(e, ir.Name):
        if e.name in values and e.name not in bound:
            table[id(e)] = _replacement(e, values[e.name], wrap)
        return
    if isinstance(e, (ir.Quantifier, ir.Comprehension)):
        # the loop names (`x`, or `i, x` unpacked) hide a binding of the same name inside
        _expr(e.coll, values, bound, table, wrap)
        inner = bound | {e.var} | set(e.unpack)
        key = e.key if isinstance(e, ir.Comprehension) else None
        for part in (e.body, e.cond, key):
            if part is not None:
                _expr(part, values, inner, table, wrap)
        return
    if isinstance(e, ir.Call) and e.func == "old":
        for a in e.args:
            _expr(a, values, bound, table, False)
        return
    for child in _children(e):
        _expr(child, values, bound, table, wrap)


def _children(e: ir.Expr) -> Iterable[ir.Expr]:
    return child_exprs(e)


def _stmts(
    body: Iterable[ir.Stmt],
    values: dict[str, ir.Expr],
    bound: frozenset[str],
    table: dict[int, ir.Node],
    unchanged: dict[int, ir.Node] | None = None,
) -> None:
    """Effects run after the state may have changed: uses read the value before the call."""
    for s in body:
        written = _writes(table)
        _stmt(s, values, bound, table, unchanged)
        _keep_unchanged(s, table, written, unchanged)
        if isinstance(s, (ir.Let, ir.Var)):
            bound = bound | {s.name}


def _stmt(
    s: ir.Stmt,
    values: dict[str, ir.Expr],
    bound: frozenset[str],
    table: dict[int, ir.Node],
    unchanged: dict[int, ir.Node] | None,
) -> None:
    """The uses in one statement (``bound``: the names a ``var``, ``let`` or loop hides)."""
    if isinstance(s, (ir.Let, ir.Var)):
        _expr(s.value, values, bound, table, True)
    elif isinstance(s, ir.For):
        _expr(s.coll, values, bound, table, True)
        _stmts(s.body, values, bound | {s.var}, table, unchanged)
    elif isinstance(s, ir.If):
        _expr(s.cond, values, bound, table, True)
        _stmts(s.then, values, bound, table, unchanged)
        _stmts(s.orelse, values, bound, table, unchanged)
    elif isinstance(s, ir.Assign):
        _lvalue(s.target, values, bound, table)
        _expr(s.value, values, bound, table, True)
    elif isinstance(s, ir.MethodCall):
        _lvalue(s.target, values, bound, table)
        for a in s.args:
            _expr(a, values, bound, table, True)
    else:  # Warn, Report and statement kinds without bindings of their own
        for e in stmt_exprs(s):
            _expr(e, values, bound, table, True)


def _lvalue(
    target: ir.Expr, values: dict[str, ir.Expr], bound: frozenset[str], table: dict[int, ir.Node]
) -> None:
    """The keys in ``m[k] = …`` are expressions; the root is a state variable, never a binding."""
    while isinstance(target, (ir.Attr, ir.Index)):
        if isinstance(target, ir.Index):
            _expr(target.key, values, bound, table, True)
        target = target.obj
