"""``x is T`` at run time: a type as a small tree of plain literals (a *spec*), and the test of a
value against it, three-valued over unknown.

The generated code writes every spec with :func:`repr` (it holds only strings, numbers and
tuples) and the declared types once, as a table ``TY`` of specs by name, so recursive types
(``type Json = … | list[Json]``) need no recursion in the source. The reference interpreter
uses the same functions.

Semantics (see docs/language.md, "Type tests"): ``bool`` is not an ``int`` (as in argument
validation), an ``int`` is a ``float`` (as everywhere a float is expected), ``number`` is
``int | float``; a record is a map with exactly its fields; a fresh value is a string whose
text is not known yet (``is str`` holds, a pattern or enum test on it is unknown).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..dsl import ir
from ..dsl.patterns import regex_search
from .formats import FORMAT_CHECKS
from .values import UNKNOWN, FMap, Fresh

Spec = tuple[Any, ...]
U = UNKNOWN

_SIMPLE: dict[str, Spec] = {
    "any": ("any",),
    "bool": ("bool",),
    "int": ("int",),
    "float": ("float",),
    "number": ("float",),  # int | float: every int is a float here
    "str": ("str",),
    "null": ("null",),
    "list": ("list", None),
    "set": ("set", None),
    "map": ("map", None, None),
}


def type_spec(t: ir.TypeExpr) -> Spec:
    """The spec of a type expression (declared names stay references: ``("named", name)``)."""
    spec = _base_spec(t)
    if t.constraints:
        spec = ("c", spec, tuple((c.key, c.value) for c in t.constraints))
    return spec


def _base_spec(t: ir.TypeExpr) -> Spec:
    if isinstance(t, ir.NamedType):
        return _SIMPLE.get(t.name) or ("named", t.name)
    if isinstance(t, ir.NullType):
        return ("null",)
    if isinstance(t, ir.GenericType):
        args = tuple(type_spec(a) for a in t.args)
        if t.name == "list":
            return ("list", args[0])
        if t.name == "set":
            return ("set", args[0])
        if t.name == "map":
            return ("map", args[0], args[1])
        return ("tuple", args)
    if isinstance(t, ir.EnumType):
        return ("enum", tuple(m.value for m in t.members))
    if isinstance(t, ir.RecordType):
        return (
            "record",
            tuple(
                (f.name, type_spec(f.type), f.optional or f.default is not None) for f in t.fields
            ),
        )
    if isinstance(t, ir.TaggedUnionType):
        return ("tagged", t.tag_field, tuple((v.tag, type_spec(v.type)) for v in t.variants))
    return ("union", tuple(type_spec(o) for o in t.options))


def declared_specs(contract: ir.Contract) -> dict[str, Spec]:
    """The spec of every declared type, by name."""
    return {d.name: type_spec(d.type) for d in contract.types}


def _and(results: Any) -> Any:
    """Three-valued conjunction of an iterable of results (stops at the first false)."""
    unknown = False
    for r in results:
        if r is False:
            return False
        if r is U:
            unknown = True
    return U if unknown else True


def type_test(value: Any, spec: Spec, types: Mapping[str, Spec]) -> Any:
    """Whether ``value`` has the type ``spec``: true, false or unknown."""
    return _test(value, spec, types, 0)


_MAX_DEPTH = 200


def _test(v: Any, spec: Spec, types: Mapping[str, Spec], depth: int) -> Any:
    if v is U:
        return U
    if depth > _MAX_DEPTH:
        return U
    kind = spec[0]
    if kind == "any":
        return True
    if kind == "named":
        target = types.get(spec[1])
        return U if target is None else _test(v, target, types, depth + 1)
    if kind == "null":
        return v is None
    if kind == "bool":
        return v is True or v is False
    if kind == "int":
        return type(v) is int
    if kind == "float":
        return type(v) is float or type(v) is int
    if kind == "str":
        return isinstance(v, (str, Fresh))
    if kind == "enum":
        if type(v) is Fresh:
            return U
        return isinstance(v, str) and v in spec[1]
    if kind == "list":
        if not isinstance(v, tuple):
            return False
        return True if spec[1] is None else _and(_test(x, spec[1], types, depth + 1) for x in v)
    if kind == "set":
        if not isinstance(v, frozenset):
            return False
        return True if spec[1] is None else _and(_test(x, spec[1], types, depth + 1) for x in v)
    if kind == "tuple":
        items = spec[1]
        if not isinstance(v, tuple) or len(v) != len(items):
            return False
        return _and(_test(x, s, types, depth + 1) for x, s in zip(v, items))
    if kind == "map":
        if not isinstance(v, FMap):
            return False
        if spec[1] is None:
            return True
        return _and(
            _and((_test(k, spec[1], types, depth + 1), _test(x, spec[2], types, depth + 1)))
            for k, x in v.items()
        )
    if kind == "record":
        if not isinstance(v, FMap):
            return False
        fields = spec[1]
        names = {f[0] for f in fields}
        if any(k not in names for k in v):
            return False
        checks = []
        for name, fspec, optional in fields:
            if name not in v:
                if not optional:
                    return False
                continue
            x = v[name]
            checks.append(True if x is None and optional else _test(x, fspec, types, depth + 1))
        return _and(checks)
    if kind == "tagged":
        if not isinstance(v, FMap):
            return False
        tag = v.get(spec[1])
        if tag is U or type(tag) is Fresh:
            return U
        for name, vspec in spec[2]:
            if name == tag:
                rest = FMap({k: x for k, x in v.items() if k != spec[1]})
                return _test(rest, vspec, types, depth + 1)
        return False
    if kind == "union":
        unknown = False
        for option in spec[1]:
            r = _test(v, option, types, depth + 1)
            if r is True:
                return True
            if r is U:
                unknown = True
        return U if unknown else False
    if kind == "c":
        base = _test(v, spec[1], types, depth + 1)
        if base is not True:
            return base
        return _and(_constraint(v, key, limit) for key, limit in spec[2])
    raise ValueError(f"unknown type spec {kind!r}")


def _constraint(v: Any, key: str, limit: Any) -> Any:
    if key in ("pattern", "format", "min_length", "max_length") and type(v) is Fresh:
        return U
    if key == "pattern":
        return isinstance(v, str) and regex_search(str(limit), v)
    if key == "format":
        check = FORMAT_CHECKS.get(str(limit))
        return True if check is None else isinstance(v, str) and check(v)
    if key == "min":
        return v >= limit
    if key == "max":
        return v <= limit
    if key in ("min_length", "min_items"):
        return len(v) >= limit
    if key in ("max_length", "max_items"):
        return len(v) <= limit
    return True
