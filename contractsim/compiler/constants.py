"""The plain (JSON-like) value of a constant expression, without pydantic: the checker (E0404),
the validators' defaults and the exports read constants this way."""

from __future__ import annotations

from typing import Any

from ..dsl import ir
from ..records import record


@record(frozen=True)
class Const:
    value: Any


class _Empty:
    """``{}`` before its context says whether it is a set or a map."""

    def __repr__(self) -> str:
        return "{}"


EMPTY = _Empty()


def constant_value(e: ir.Expr, contract: ir.Contract, depth: int = 0) -> Const | None:
    """The plain (JSON-like) value of a constant expression, or None when it is not constant."""
    if depth > 32:
        return None
    if isinstance(e, ir.ScalarLit):
        return Const(e.value)
    if isinstance(e, ir.Unary) and e.op == "-":
        inner = constant_value(e.operand, contract, depth + 1)
        if inner is not None and isinstance(inner.value, (int, float)):
            return Const(-inner.value)
        return None
    if isinstance(e, ir.Collection):
        items = [constant_value(i, contract, depth + 1) for i in e.items]
        if any(i is None for i in items):
            return None
        values = [i.value for i in items if i is not None]
        if e.type == "empty":
            return Const(EMPTY)
        return Const(values)
    if isinstance(e, ir.MapLit):
        out: dict[Any, Any] = {}
        for entry in e.entries:
            k = constant_value(entry.key, contract, depth + 1)
            v = constant_value(entry.value, contract, depth + 1)
            if k is None or v is None:
                return None
            try:
                out[k.value] = v.value
            except TypeError:
                return None
        return Const(out)
    if isinstance(e, ir.Name) and not e.state:
        for c in contract.consts:
            if c.name == e.name:
                return constant_value(c.value, contract, depth + 1)
        return None
    if isinstance(e, ir.Attr) and isinstance(e.obj, ir.Name):
        for t in contract.types:
            if t.name == e.obj.name and isinstance(t.type, ir.EnumType):
                if any(m.value == e.name for m in t.type.members):
                    return Const(e.name)
        return None
    if isinstance(e, ir.Call) and not e.args:
        for t in contract.types:
            if t.name == e.func and isinstance(t.type, ir.RecordType):
                fields: dict[str, Any] = {}
                for kw in e.kwargs:
                    v = constant_value(kw.value, contract, depth + 1)
                    if v is None:
                        return None
                    fields[kw.name] = v.value
                return Const(fields)
    return None
