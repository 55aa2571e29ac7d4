"""Walking IR: every expression of an expression, a statement or a whole contract."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar, cast

from ..diagnostics import Span
from . import ir
from .visitor import (
    CHILD_FIELDS,
    child_expr_list,
    child_exprs,
    child_field_names,
    child_stmt_list,
    child_stmts,
)


def walk_expr(e: ir.Expr) -> Iterator[ir.Expr]:
    """``e`` and all its sub-expressions (pre-order; children found by the visitor's
    ``child_exprs``, so a new expression kind needs no change here)."""
    stack: list[ir.Expr] = [e]
    while stack:
        node = stack.pop()
        yield node
        child_expr_list(node, stack)


def walk_stmts(stmts: Iterable[ir.Stmt]) -> Iterator[ir.Stmt]:
    """Every statement of a block, nested ones included, in source order."""
    for s in stmts:
        yield s
        yield from walk_stmts(child_stmts(s))


def stmt_exprs(s: ir.Stmt) -> Iterator[ir.Expr]:
    """The expressions written in a statement itself (not those of the statements nested in it)."""
    return child_exprs(s)


def lvalue_path(target: ir.Expr) -> tuple[ir.Name, list[ir.Attr | ir.Index]]:
    """``a.b[k].c`` as its root name and the steps from it, outermost first."""
    path: list[ir.Attr | ir.Index] = []
    node = target
    while isinstance(node, (ir.Attr, ir.Index)):
        path.append(node)
        node = node.obj
    assert isinstance(node, ir.Name), "the checker only lets names, fields and keys be assigned"
    path.reverse()
    return node, path


def template_exprs(t: ir.Template | None) -> Iterator[ir.Expr]:
    if t is not None:
        for part in t.parts:
            if part.expr is not None:
                yield part.expr


def all_exprs(contract: ir.Contract) -> Iterator[ir.Expr]:
    """Every expression of a contract, sub-expressions included."""
    for root in expr_roots(contract):
        yield from walk_expr(root)


def expr_roots(contract: ir.Contract) -> list[ir.Expr]:
    """The outermost expressions of a contract (those :func:`all_exprs` walks), in order."""
    roots: list[ir.Expr] = []
    _declaration_roots(contract, roots)
    for tool in contract.tools:
        _tool_roots(tool, roots)
    _machine_roots(contract, roots)
    return roots


def _declaration_roots(contract: ir.Contract, roots: list[ir.Expr]) -> None:
    for c in contract.consts:
        roots.append(c.value)
    for p in contract.predicates:
        roots.append(p.body)
    for f in contract.functions:
        roots.append(f.body)
    for g in contract.goals:
        roots.append(g.cond)


def _tool_roots(tool: ir.Tool, roots: list[ir.Expr]) -> None:
    if tool.cost is not None:
        roots.append(tool.cost)
    roots.extend(let.value for let in tool.lets)
    for cond in tool.conditions:
        roots.append(cond.cond)
        roots.extend(template_exprs(cond.message))
        roots.extend(template_exprs(cond.hint))
    bodies: list[tuple[ir.Stmt, ...]] = [tool.effects]
    for out in tool.outcomes:
        bodies.append(out.body)
        roots.extend(e for e in (out.when, out.observed) if e is not None)
        roots.extend(template_exprs(out.message))
        roots.extend(template_exprs(out.hint))
    if tool.flow is not None:
        bodies.extend(step.body for step in tool.flow.steps)
        roots.extend(t.when for t in tool.flow.transitions if t.when is not None)
    for body in bodies:
        _block_roots(body, roots)


def _machine_roots(contract: ir.Contract, roots: list[ir.Expr]) -> None:
    for m in contract.machines:
        roots.extend(t.when for t in m.transitions if t.when is not None)


class ExprFacts:
    """What the checker's lints ask of every expression of a contract, found in one walk over
    :func:`expr_roots` (they asked it in two walks, one of them once per root).

    ``used``: every name an expression reads or calls (``Name.name``, ``Call.func``).
    ``binds``: per root expression, by ``id()``, whether it holds a quantifier or a
    comprehension (only those roots; ask :meth:`binds_names` about any expression).
    ``any_binds``: whether any of them does; ``tool_binds``: per tool, by ``id()``, whether
    any of its roots does."""

    __slots__ = ("any_binds", "binds", "tool_binds", "used")

    def __init__(self, contract: ir.Contract) -> None:
        self.used: set[str] = set()
        self.binds: dict[int, bool] = {}
        used, binds = self.used, self.binds
        # expr_roots(contract), noting where each tool's roots are
        roots: list[ir.Expr] = []
        _declaration_roots(contract, roots)
        tool_ranges: list[tuple[ir.Tool, int, int]] = []
        for tool in contract.tools:
            start = len(roots)
            _tool_roots(tool, roots)
            tool_ranges.append((tool, start, len(roots)))
        _machine_roots(contract, roots)
        root_binds: list[bool] = []
        name_cls, call_cls, literal_cls, binary_cls = ir.Name, ir.Call, ir.ScalarLit, ir.Binary
        attr_cls, index_cls = ir.Attr, ir.Index
        for root in roots:
            found = False
            stack: list[ir.Expr] = [root]
            while stack:  # the order of the walk does not matter to what it finds
                e = stack.pop()
                cls = e.__class__
                if cls is name_cls:  # names and literals (half the nodes) have no children
                    used.add(e.name)  # type: ignore[union-attr]
                    continue
                if cls is literal_cls:
                    continue
                # the next most frequent kinds: their children taken as child_expr_list
                # finds them, in any order
                if cls is binary_cls:
                    stack.append(e.left)  # type: ignore[union-attr]
                    stack.append(e.right)  # type: ignore[union-attr]
                    continue
                if cls is call_cls:
                    used.add(e.func)  # type: ignore[union-attr]
                    stack.extend(e.args)  # type: ignore[union-attr]
                    for keyword in e.kwargs:  # type: ignore[union-attr]
                        stack.append(keyword.value)
                    continue
                if cls is attr_cls or cls is index_cls:
                    stack.append(e.obj)  # type: ignore[union-attr]
                    if cls is index_cls:
                        stack.append(e.key)  # type: ignore[union-attr, arg-type]
                    continue
                if not found and isinstance(e, _BINDERS):
                    found = True
                child_expr_list(e, stack)
            binds[id(root)] = found
            root_binds.append(found)
        self.any_binds = any(root_binds)
        self.tool_binds = {id(tool): any(root_binds[a:b]) for tool, a, b in tool_ranges}

    def binds_names(self, e: ir.Expr) -> bool:
        """Whether ``e`` holds a quantifier or a comprehension (from the walk when ``e`` is a
        root, else by walking it)."""
        found = self.binds.get(id(e))
        if found is None:
            return any(isinstance(x, _BINDERS) for x in walk_expr(e))
        return found


_BINDERS = (ir.Quantifier, ir.Comprehension)
"""The expressions that bind names (a loop variable) below them."""


def _block_roots(body: Iterable[ir.Stmt], roots: list[ir.Expr]) -> None:
    """``roots.extend(stmt_exprs(s))`` for every ``s`` of ``walk_stmts(body)``, in that order,
    without a generator per statement."""
    for s in body:
        child_expr_list(s, roots)
        nested = child_stmt_list(s)
        if nested:
            _block_roots(nested, roots)


def reads_clock(contract: ir.Contract) -> bool:
    """Whether a contract calls ``today()`` or ``now()`` anywhere."""
    return any(isinstance(e, ir.Call) and e.func in ("today", "now") for e in all_exprs(contract))


def used_names(exprs: Iterable[ir.Expr]) -> set[str]:
    """Every name the expressions read (parameters, state variables, locals, `result`)."""
    out: set[str] = set()
    for root in exprs:
        for e in walk_expr(root):
            if isinstance(e, ir.Name):
                out.add(e.name)
    return out


def assigned_roots(body: Iterable[ir.Stmt]) -> set[str]:
    """State variables (and ``var`` locals) a block may change (for havoc when its condition is
    unknown)."""
    roots: set[str] = set()
    for s in walk_stmts(body):
        target: ir.Expr | None = None
        if isinstance(s, (ir.Assign, ir.MethodCall)):
            target = s.target
        while isinstance(target, (ir.Attr, ir.Index)):
            target = target.obj
        if isinstance(target, ir.Name):
            roots.add(target.name)
    return roots


def replace_nodes(node: _N, table: dict[int, ir.Node]) -> _N:
    """``node`` with every descendant whose ``id()`` is in ``table`` replaced by its entry; the
    parts that do not change are shared, not copied."""
    return cast(_N, _replace(node, table))


_N = TypeVar("_N")


_LEAVES = frozenset({str, int, float, bool, type(None), Span})
"""Classes of field values that hold no node. Every key of a replacement table is the ``id()`` of
a node of the tree (alive while it is walked), so a value of these classes is never one."""


def _replace(node: object, table: dict[int, ir.Node]) -> object:
    found = table.get(id(node))
    if found is not None:
        return found
    cls = node.__class__
    if cls is tuple:
        return _replace_items(node, table)  # type: ignore[arg-type]
    names = CHILD_FIELDS.get(cls)
    if names is None:
        if isinstance(node, Span):
            return node
        if isinstance(node, tuple):
            return _replace_items(node, table)
        if not isinstance(node, ir.Node):
            return node
        names = CHILD_FIELDS[cls] = child_field_names(node.__class__)
    changes: dict[str, Any] | None = None
    for name in names:
        value = getattr(node, name)
        if value.__class__ in _LEAVES:
            continue
        new = _replace(value, table)
        if new is not value:
            if changes is None:
                changes = {}
            changes[name] = new
    return _replaced(node, changes) if changes else node


_INIT_FIELDS: dict[type, tuple[str, ...] | None] = {}
"""Per record class, its fields in order when every one is an argument of ``__init__`` (else
None: :func:`dataclasses.replace` then)."""


def _replaced(node: Any, changes: dict[str, Any]) -> Any:
    """``dataclasses.replace(node, **changes)``: the same call of the class with every field,
    without looking again at each field's kind (the walk replaces hundreds of nodes)."""
    cls = node.__class__
    names = _INIT_FIELDS.get(cls, ())
    if names == ():
        fields = dataclasses.fields(cls)
        names = tuple(f.name for f in fields) if all(f.init for f in fields) else None
        _INIT_FIELDS[cls] = names
    if names is None:
        return dataclasses.replace(node, **changes)
    arguments = {name: getattr(node, name) for name in names}
    arguments.update(changes)
    return cls(**arguments)


def _replace_items(items: tuple[Any, ...], table: dict[int, ir.Node]) -> tuple[Any, ...]:
    """``items`` with replacements, or ``items`` itself when none of them changes."""
    changed: list[Any] | None = None
    for i, item in enumerate(items):
        if item.__class__ in _LEAVES:
            continue
        new = _replace(item, table)
        if new is not item:
            if changed is None:
                changed = list(items)
            changed[i] = new
    return items if changed is None else tuple(changed)


def jumps_out(body: Iterable[ir.Stmt]) -> bool:
    """Whether a block holds a ``break`` or ``continue`` of the loop around it (not one of a
    loop nested inside the block)."""
    for s in body:
        if isinstance(s, (ir.Break, ir.Continue)):
            return True
        if isinstance(s, ir.If) and (jumps_out(s.then) or jumps_out(s.orelse)):
            return True
    return False


def fails_in(body: Iterable[ir.Stmt]) -> list[ir.Fail]:
    """The ``fail`` statements of a block, nested ones included, in source order."""
    return [s for s in walk_stmts(body) if isinstance(s, ir.Fail)]
