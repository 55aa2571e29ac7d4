"""pydantic-core schemas of plain types, built without pydantic's model machinery.

For the types this module knows — ``bool``, ``int``, ``float``, ``str``, ``null``, enums, and
lists, sets, tuples and maps of them, with the constraints that apply to them (``pattern``,
``min``, ``max``, ``min_length``/``max_length``, ``min_items``/``max_items``), through aliases —
it builds the very schema that :class:`~.validators.ValidatorBuilder` makes pydantic generate,
so a value gets the same errors either way (``tests/test_simstart.py`` compares the two schemas
for every type of the examples and golden files). Anything else (records, unions, ``number``,
``any``, formats, recursive aliases) is None: the caller falls back to the validators.

Importing pydantic's model machinery and generating a schema costs a process about a tenth of a
second; the checker needs a validator only to test a constant against a constrained type
(E0404), which for the types above pydantic-core does alone. Patterns run on pydantic-core's Rust
regex engine either way (linear time).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic_core import CoreSchema, SchemaValidator

from ..dsl import ir
from .values import FMap

_SCALARS = {"bool", "int", "float", "str"}
_NUMBER_KEYS = {"min": "ge", "max": "le"}
_LENGTH_KEYS = {
    "min_length": "min_length",
    "max_length": "max_length",
    "min_items": "min_length",
    "max_items": "max_length",
}
_MAX_DEPTH = 16


def plain_schema(t: ir.TypeExpr, decls: Mapping[str, ir.TypeDecl]) -> CoreSchema | None:
    """The pydantic-core schema of ``t`` when it is a plain type (see the module), else None."""
    return cast("CoreSchema | None", _schema(t, decls, 0))


def plain_validator(t: ir.TypeExpr, decls: Mapping[str, ir.TypeDecl]) -> SchemaValidator | None:
    """A validator of ``t`` built by pydantic-core alone, or None (see :func:`plain_schema`)."""
    schema = plain_schema(t, decls)
    return None if schema is None else SchemaValidator(schema)


def _schema(t: ir.TypeExpr, decls: Mapping[str, ir.TypeDecl], depth: int) -> dict[str, Any] | None:
    if depth > _MAX_DEPTH:
        return None  # deep (or recursive) aliases: left to the validators
    base: dict[str, Any] | None
    if isinstance(t, ir.NamedType):
        if t.name in _SCALARS:
            base = {"type": t.name, "strict": True}
        elif t.name == "null":
            base = {"type": "none"}
        elif t.name in decls:
            inner = _schema(decls[t.name].type, decls, depth + 1)
            if inner is None:
                return None
            if not t.constraints:
                return inner
            base = dict(inner)
            if "metadata" in base or base["type"] in ("literal", "none", "bool"):
                return None  # constraints on a constrained alias: pydantic nests them
        else:
            return None
    elif isinstance(t, ir.NullType):
        base = {"type": "none"}
    elif isinstance(t, ir.EnumType):
        base = {"type": "literal", "expected": [m.value for m in t.members]}
    elif isinstance(t, ir.GenericType):
        args = [_schema(a, decls, depth + 1) for a in t.args]
        if any(a is None for a in args):
            return None
        if t.name == "list" and len(args) == 1:
            base = {"type": "tuple", "items_schema": args, "variadic_item_index": 0}
        elif t.name == "set" and len(args) == 1:
            base = {"type": "frozenset", "items_schema": args[0]}
        elif t.name == "tuple" and args:
            base = {"type": "tuple", "items_schema": args}
        elif t.name == "map" and len(args) == 2 and not t.constraints:
            dict_schema: dict[str, Any] = {
                "type": "dict",
                "keys_schema": args[0],
                "values_schema": args[1],
            }
            return {
                "type": "function-after",
                "function": {"type": "no-info", "function": FMap},
                "schema": dict_schema,
            }
        else:
            return None
    else:
        return None
    return _constrained(base, t.constraints)


def _constrained(
    base: dict[str, Any], constraints: tuple[ir.Constraint, ...]
) -> dict[str, Any] | None:
    """``base`` with ``constraints`` applied where pydantic applies them (in the schema itself),
    or None for a combination this module does not build."""
    if not constraints:
        return base
    kind = base["type"]
    out = dict(base)
    pattern: str | None = None
    for c in constraints:
        value = c.value
        if c.key == "pattern" and kind == "str" and isinstance(value, str) and pattern is None:
            pattern = value
        elif c.key in _NUMBER_KEYS and kind in ("int", "float") and _number(value):
            out[_NUMBER_KEYS[c.key]] = value
        elif (
            c.key in _LENGTH_KEYS
            and kind in ("str", "tuple", "frozenset")
            and type(value) is int
            and (kind != "tuple" or "variadic_item_index" in base)
        ):
            out[_LENGTH_KEYS[c.key]] = value
        else:
            return None  # a format, a description, a constraint of another kind of type
    if len(out) > len(base):
        out["metadata"] = {}  # what pydantic's Field(ge=…, max_length=…) leaves
    if pattern is not None:
        out["pattern"] = pattern
    return out


def _number(value: Any) -> bool:
    return type(value) is int or type(value) is float
