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


def is_float_type(t: ir.TypeExpr, decls: dict[str, ir.TypeExpr]) -> bool:
    """Whether a type is ``float`` (through aliases): a bounded unknown stored in it is a real
    number even between whole bounds (``x: float = unknown in [0, 10]``)."""
    for _ in range(32):
        if not isinstance(t, ir.NamedType):
            return False
        if t.name == "float":
            return True
        if t.name not in decls:
            return False
        t = decls[t.name]
    return False


def float_target(contract: ir.Contract, target: ir.Expr) -> bool:
    """Whether an assignment's target is a state variable of type ``float``."""
    if not isinstance(target, ir.Name):
        return False
    var = next((v for v in contract.state if v.name == target.name), None)
    return var is not None and is_float_type(var.type, {t.name: t.type for t in contract.types})
