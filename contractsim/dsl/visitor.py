"""One visitor over the IR (jinja's ``visitor.py``): ``visit`` dispatches to ``visit_<ClassName>``
and falls back to ``generic_visit``, which visits the child nodes found from the model's fields.

Children are never listed by hand: ``iter_child_nodes`` reads every field of a node and yields the
IR nodes in it (a field may hold a node, a tuple of nodes or ``None``), in field order. Spans are
not nodes. ``tests/test_visitor.py`` checks, per pass, that every expression and statement kind of
``ir.py`` has a ``visit_`` method or is listed as deliberately handled generically.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from . import ir

_LEAF_ANNOTATIONS = frozenset(
    {
        "str",
        "bool",
        "int",
        "float",
        "str | None",
        "float | None",
        "int | float | str",
        "bool | int | float | str | None",
        "tuple[str, ...]",
        "BinOp",
        "ConstraintKey",
        "OutcomeKind",
        "Span",
    }
)
"""Field annotations (as written in ``ir.py``) of values that never hold a node."""


def child_field_names(cls: type[ir.Node]) -> tuple[str, ...]:
    # every field that may hold a child: not the two every node has (`span`, `kind`), nor those
    # declared as plain strings, numbers or literals (looking at them cost a third of a walk)
    return tuple(
        f.name
        for f in dataclasses.fields(cls)
        if f.name not in ("span", "kind")
        and not (
            isinstance(f.type, str)
            and (f.type in _LEAF_ANNOTATIONS or f.type.startswith("Literal["))
        )
    )


CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
"""Per node class, :func:`child_field_names` (filled on first use; also read by
:func:`.walk.replace_nodes`)."""


def iter_child_nodes(node: ir.Node) -> Iterator[ir.Node]:
    """The IR nodes directly inside ``node``, in field order (spans are not nodes)."""
    cls = node.__class__
    names = CHILD_FIELDS.get(cls)
    if names is None:
        names = CHILD_FIELDS[cls] = child_field_names(cls)
    for name in names:
        value = getattr(node, name)
        if value.__class__ is tuple:
            for item in value:
                if isinstance(item, ir.Node):
                    yield item
        elif isinstance(value, ir.Node):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, ir.Node):
                    yield item


def _kinds(union: object) -> tuple[type[ir.Node], ...]:
    from typing import get_args

    return tuple(get_args(get_args(union)[0]))


EXPR_KINDS: tuple[type[ir.Node], ...] = _kinds(ir.Expr)
"""Every expression class of the IR (the members of ``ir.Expr``)."""
STMT_KINDS: tuple[type[ir.Node], ...] = _kinds(ir.Stmt)
"""Every statement class of the IR (the members of ``ir.Stmt``)."""
_EXPR_OR_STMT = EXPR_KINDS + STMT_KINDS


def child_exprs(node: ir.Node) -> Iterator[ir.Expr]:
    """The expressions directly below ``node``: its expression children, and the expressions in
    the helper nodes between (keyword arguments, map entries, templates, report fields …).
    Statements below are not entered."""
    return iter(child_expr_list(node))


def child_stmts(node: ir.Node) -> Iterator[ir.Stmt]:
    """The statements directly inside ``node`` (the branches of an ``if``, a loop's body)."""
    return iter(child_stmt_list(node))


# What a value found in a child field is, by its class (filled on first sight): the walks ask
# this of every child, and `isinstance` against the forty classes of `EXPR_KINDS` was a good
# part of their time
_EXPR, _STMT, _HELPER, _OTHER = 1, 2, 3, 0
_ROLES: dict[type, int] = {}


def _role(value: object) -> int:
    cls = value.__class__
    role = _ROLES.get(cls)
    if role is None:
        if isinstance(value, EXPR_KINDS):
            role = _EXPR
        elif isinstance(value, STMT_KINDS):
            role = _STMT
        elif isinstance(value, ir.Node):
            role = _HELPER
        else:
            role = _OTHER
        _ROLES[cls] = role
    return role


def child_expr_list(node: ir.Node, out: list[ir.Expr] | None = None) -> list[ir.Expr]:
    """:func:`child_exprs` as a list (appended to ``out`` if given): the same nodes, in the
    same order, found without a generator per node."""
    if out is None:
        out = []
    cls = node.__class__
    names = CHILD_FIELDS.get(cls)
    if names is None:
        names = CHILD_FIELDS[cls] = child_field_names(cls)
    roles = _ROLES
    for name in names:
        value = getattr(node, name)
        if value is None:
            continue
        if value.__class__ is tuple or (
            isinstance(value, tuple) and not isinstance(value, ir.Node)
        ):
            items = value
        else:
            items = (value,)
        for item in items:
            role = roles.get(item.__class__)
            if role is None:
                role = _role(item)
            if role == _EXPR:
                out.append(item)
            elif role == _HELPER:
                child_expr_list(item, out)
    return out


def child_stmt_list(node: ir.Node) -> list[ir.Stmt]:
    """:func:`child_stmts` as a list: the same statements, in the same order, found without a
    generator per node."""
    out: list[ir.Stmt] = []
    cls = node.__class__
    names = CHILD_FIELDS.get(cls)
    if names is None:
        names = CHILD_FIELDS[cls] = child_field_names(cls)
    roles = _ROLES
    for name in names:
        value = getattr(node, name)
        if value.__class__ is tuple:
            for item in value:
                if isinstance(item, ir.Node):
                    role = roles.get(item.__class__)
                    if (role if role is not None else _role(item)) == _STMT:
                        out.append(item)  # type: ignore[arg-type]
        elif isinstance(value, ir.Node):
            if _role(value) == _STMT:
                out.append(value)  # type: ignore[arg-type]
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, ir.Node) and _role(item) == _STMT:
                    out.append(item)  # type: ignore[arg-type]
    return out


_UNSEEN: Any = object()
"""Marks a class :meth:`NodeVisitor.visit` has not looked up yet (``None`` is "no method")."""


class NodeVisitor:
    """Walks the IR: ``visit(node, *args)`` calls ``visit_<ClassName>(node, *args)`` when the
    subclass defines it, else ``generic_visit`` (which visits the children and returns ``None``).
    Extra arguments (a scope, an environment, a precedence) are passed on unchanged."""

    _methods: dict[type, Callable[..., Any] | None] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._methods = {}

    def get_visitor(self, node: ir.Node) -> Callable[..., Any] | None:
        """The unbound ``visit_<ClassName>`` method for ``node``, or ``None``."""
        cls = type(node)
        try:
            return self._methods[cls]
        except KeyError:
            method = getattr(type(self), "visit_" + cls.__name__, None)
            self._methods[cls] = method
            return method

    def visit(self, node: ir.Node, *args: Any) -> Any:
        # the table read inline: this runs once per node of every pass
        method = self._methods.get(node.__class__, _UNSEEN)
        if method is _UNSEEN:
            method = self.get_visitor(node)
        if method is not None:
            return method(self, node, *args)
        return self.generic_visit(node, *args)

    def generic_visit(self, node: ir.Node, *args: Any) -> Any:
        for child in iter_child_nodes(node):
            self.visit(child, *args)
        return None


def handled_kinds(visitor: type[NodeVisitor]) -> set[str]:
    """The IR class names ``visitor`` has a ``visit_`` method for."""
    return {name[len("visit_") :] for name in dir(visitor) if name.startswith("visit_")}
