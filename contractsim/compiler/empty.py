"""The empty value of a collection type: shared by the code generator, the interpreter and
the compiler's initial state (``x = {}`` on a map variable makes an empty map)."""

from __future__ import annotations

from typing import Any

from ..dsl import ir
from .values import FMap


def empty_of(t: ir.TypeExpr, decls: dict[str, ir.TypeExpr]) -> Any:
    """The empty value of a collection type (``{}`` as a map or a set)."""
    seen = 0
    while isinstance(t, ir.NamedType) and t.name in decls and seen < 64:
        t = decls[t.name]
        seen += 1
    if isinstance(t, ir.GenericType):
        return {"map": FMap(), "list": ()}.get(t.name, frozenset())
    return frozenset()
