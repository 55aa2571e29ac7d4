"""The checker's view of types: resolved, structural, and small.

Named types are resolved through the contract's ``type`` declarations; constraints are kept beside
the structure (they matter to validation, not to type compatibility).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ir


@dataclass(frozen=True)
class Ty:
    """Base of all checker types."""

    def show(self) -> str:
        return "?"


@dataclass(frozen=True)
class Prim(Ty):
    name: str  # bool, int, float, str, null, any

    def show(self) -> str:
        return self.name


BOOL = Prim("bool")
INT = Prim("int")
FLOAT = Prim("float")
STR = Prim("str")
NULL = Prim("null")
ANY = Prim("any")  # an error was already reported, or the type cannot be known: accept anything


@dataclass(frozen=True)
class ListT(Ty):
    elem: Ty

    def show(self) -> str:
        return f"list[{self.elem.show()}]"


@dataclass(frozen=True)
class SetT(Ty):
    elem: Ty

    def show(self) -> str:
        return f"set[{self.elem.show()}]"


@dataclass(frozen=True)
class MapT(Ty):
    key: Ty
    value: Ty

    def show(self) -> str:
        return f"map[{self.key.show()}, {self.value.show()}]"


@dataclass(frozen=True)
class TupleT(Ty):
    items: tuple[Ty, ...]

    def show(self) -> str:
        return "tuple[" + ", ".join(t.show() for t in self.items) + "]"


class EmptyLiteral:
    """What one ``{}`` in the source turned out to be: the first collection type it met decides
    (``set``, ``map`` or ``list``); ``None`` while no context said (it is then a set)."""

    __slots__ = ("kind",)

    def __init__(self) -> None:
        self.kind: str | None = None

    def decide(self, target: Ty) -> None:
        if self.kind is None:
            if isinstance(target, MapT):
                self.kind = "map"
            elif isinstance(target, SetT):
                self.kind = "set"
            elif isinstance(target, ListT):
                self.kind = "list"


@dataclass(frozen=True)
class EmptyT(Ty):
    """The type of ``{}``: an empty set or an empty map, whichever the context needs. ``literal``
    (left out of equality) records what the context made of it."""

    literal: EmptyLiteral | None = field(default=None, compare=False, hash=False, repr=False)

    def show(self) -> str:
        return "{}"


def _note_empty(empty: Ty, target: Ty) -> None:
    if isinstance(empty, EmptyT) and empty.literal is not None:
        empty.literal.decide(target)


@dataclass(frozen=True)
class EnumT(Ty):
    name: str
    members: tuple[str, ...]

    def show(self) -> str:
        return self.name


@dataclass(frozen=True)
class FieldT:
    type: Ty
    optional: bool
    has_default: bool


@dataclass(frozen=True)
class RecordT(Ty):
    name: str
    fields: tuple[tuple[str, FieldT], ...]
    open: bool = False  # `record { …, ... }`: values may carry fields nobody declared

    def field(self, name: str) -> FieldT | None:
        for fname, f in self.fields:
            if fname == name:
                return f
        return None

    def show(self) -> str:
        return self.name


@dataclass(frozen=True)
class UnionT(Ty):
    options: tuple[Ty, ...]
    name: str = ""

    def show(self) -> str:
        return self.name or " | ".join(o.show() for o in self.options)


@dataclass(frozen=True)
class TaggedT(Ty):
    name: str
    tag: str
    variants: tuple[tuple[str, Ty], ...]

    def show(self) -> str:
        return self.name


@dataclass(frozen=True)
class TypeRefT(Ty):
    """A type used as a value, as in ``Color.red``."""

    name: str
    target: Ty = field(default=ANY)

    def show(self) -> str:
        return f"type {self.name}"


NUMERIC = (INT, FLOAT)


def is_numeric(t: Ty) -> bool:
    """A number, or a union whose every option is one (``int | float``)."""
    if isinstance(t, UnionT):
        return all(is_numeric(o) for o in t.options)
    return t in NUMERIC or t == ANY


def is_stringy(t: Ty) -> bool:
    """A string or an enum, or a union whose every option is one."""
    if isinstance(t, UnionT):
        return all(is_stringy(o) for o in t.options)
    return t == STR or isinstance(t, EnumT) or t == ANY


def nullable(t: Ty) -> bool:
    return t == NULL or t == ANY or (isinstance(t, UnionT) and any(nullable(o) for o in t.options))


def strip_null(t: Ty) -> Ty:
    if isinstance(t, UnionT):
        rest = tuple(o for o in t.options if o != NULL)
        if len(rest) == 1:
            return rest[0]
        return UnionT(rest)
    return t


def assignable(value: Ty, target: Ty) -> bool:
    """Can a value of type ``value`` be stored where ``target`` is expected?"""
    if value == target or ANY in (value, target):
        return True
    if isinstance(target, UnionT):
        if isinstance(value, UnionT):
            return all(assignable(v, target) for v in value.options)
        return any(assignable(value, o) for o in target.options)
    if isinstance(value, UnionT):
        return all(assignable(v, target) for v in value.options)
    if value == INT and target == FLOAT:
        return True
    if is_stringy(value) and is_stringy(target):
        return True
    if isinstance(value, EmptyT):
        if isinstance(target, (SetT, MapT, ListT)):
            _note_empty(value, target)
            return True
        return isinstance(target, EmptyT)
    if isinstance(value, ListT) and isinstance(target, ListT):
        return assignable(value.elem, target.elem)
    if isinstance(value, SetT) and isinstance(target, SetT):
        return assignable(value.elem, target.elem)
    if isinstance(value, MapT) and isinstance(target, MapT):
        return assignable(value.key, target.key) and assignable(value.value, target.value)
    if isinstance(value, TupleT) and isinstance(target, TupleT):
        return len(value.items) == len(target.items) and all(
            assignable(a, b) for a, b in zip(value.items, target.items)
        )
    if isinstance(value, RecordT) and isinstance(target, RecordT):
        return value.name == target.name
    if isinstance(target, TaggedT):
        return isinstance(value, RecordT) and any(
            isinstance(v, RecordT) and v.name == value.name for _, v in target.variants
        )
    return False


def comparable(a: Ty, b: Ty) -> bool:
    """May ``a == b`` ever be true? Numbers and booleans compare by value (``1 == 1.0``,
    ``0 == false``); unions may be equal when some options may (``float | str`` and
    ``float | null``), null options only to each other."""
    if ANY in (a, b) or NULL in (a, b):
        return True
    if isinstance(a, UnionT) or isinstance(b, UnionT):
        left = a.options if isinstance(a, UnionT) else (a,)
        right = b.options if isinstance(b, UnionT) else (b,)
        if NULL in left and NULL in right:
            return True
        return any(comparable(x, y) for x in left for y in right if x != NULL and y != NULL)
    if _numberlike(a) and _numberlike(b):
        return True
    return assignable(a, b) or assignable(b, a)


def _numberlike(t: Ty) -> bool:
    return t == BOOL or is_numeric(t)


def elem_type(t: Ty) -> Ty | None:
    """What iterating over a collection yields (a map yields its keys)."""
    if isinstance(t, (ListT, SetT)):
        return t.elem
    if isinstance(t, MapT):
        return t.key
    if isinstance(t, EmptyT) or t == ANY:
        return ANY
    if t == STR:
        return STR
    return None


def join(a: Ty, b: Ty) -> Ty:
    """The type of a value that is either an ``a`` or a ``b``."""
    if a == b:
        return a
    if ANY in (a, b):
        return ANY
    if {a, b} == {INT, FLOAT}:
        return FLOAT
    if isinstance(a, EmptyT):
        _note_empty(a, b)
        return b
    if isinstance(b, EmptyT):
        _note_empty(b, a)
        return a
    if a == NULL or b == NULL:
        other = b if a == NULL else a
        return UnionT((other, NULL))
    if is_stringy(a) and is_stringy(b):
        return STR
    return UnionT((a, b))


def resolve_simple(name: str) -> Ty | None:
    return {
        "bool": BOOL,
        "int": INT,
        "float": FLOAT,
        "str": STR,
        "null": NULL,
    }.get(name)


PRIMITIVE_NAMES = ("bool", "int", "float", "str")
GENERIC_ARITY = {"list": 1, "set": 1, "map": 2}


def type_label(t: ir.TypeExpr) -> str:
    """A short rendering of a type expression, for messages."""
    if isinstance(t, ir.NamedType):
        return t.name
    if isinstance(t, ir.GenericType):
        return f"{t.name}[" + ", ".join(type_label(a) for a in t.args) + "]"
    if isinstance(t, ir.EnumType):
        return "enum {" + ", ".join(m.value for m in t.members) + "}"
    if isinstance(t, ir.NullType):
        return "null"
    if isinstance(t, ir.RecordType):
        return "record {…}"
    if isinstance(t, ir.TaggedUnionType):
        return f"union by {t.tag_field} {{…}}"
    return " | ".join(type_label(o) for o in t.options)
