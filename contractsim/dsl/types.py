"""The checker's view of types: resolved, structural, and small.

Named types are resolved through the contract's ``type`` declarations; constraints are kept beside
the structure (they matter to validation, not to type compatibility).
"""

from __future__ import annotations

from dataclasses import field

from ..records import record
from . import ir


@record(frozen=True)
class Ty:
    """Base of all checker types."""

    def show(self) -> str:
        return "?"


@record(frozen=True)
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


@record(frozen=True)
class DynT(Ty):
    """The declared type ``any``: every JSON value (null, bool, int, float, str, list, map with
    str keys). Unlike :data:`ANY` (the checker's "accept anything" after an error) it is checked:
    comparisons, type tests, ``truthy`` and ``str`` accept it; fields, indexes, arithmetic and
    functions that need a particular type want a type test first (``x is T``)."""

    def show(self) -> str:
        return "any"


DYN = DynT()


@record(frozen=True)
class ListT(Ty):
    elem: Ty

    def show(self) -> str:
        return f"list[{self.elem.show()}]"


@record(frozen=True)
class SetT(Ty):
    elem: Ty

    def show(self) -> str:
        return f"set[{self.elem.show()}]"


@record(frozen=True)
class MapT(Ty):
    key: Ty
    value: Ty

    def show(self) -> str:
        return f"map[{self.key.show()}, {self.value.show()}]"


@record(frozen=True)
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


@record(frozen=True)
class EmptyT(Ty):
    """The type of ``{}``: an empty set or an empty map, whichever the context needs. ``literal``
    (left out of equality) records what the context made of it."""

    literal: EmptyLiteral | None = field(default=None, compare=False, hash=False, repr=False)

    def show(self) -> str:
        return "{}"


def _note_empty(empty: Ty, target: Ty) -> None:
    if isinstance(empty, EmptyT) and empty.literal is not None:
        empty.literal.decide(target)


@record(frozen=True)
class EnumT(Ty):
    name: str
    members: tuple[str, ...]

    def show(self) -> str:
        return self.name


@record(frozen=True)
class FieldT:
    type: Ty
    optional: bool
    has_default: bool


@record(frozen=True)
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


@record(frozen=True)
class UnionT(Ty):
    options: tuple[Ty, ...]
    name: str = ""

    def show(self) -> str:
        return self.name or " | ".join(o.show() for o in self.options)


@record(frozen=True)
class TaggedT(Ty):
    name: str
    tag: str
    variants: tuple[tuple[str, Ty], ...]

    def show(self) -> str:
        return self.name


@record(frozen=True)
class TypeRefT(Ty):
    """A type used as a value, as in ``Color.red``."""

    name: str
    target: Ty = field(default=ANY)

    def show(self) -> str:
        return f"type {self.name}"


NUMERIC = (INT, FLOAT)
NUMBER_T = UnionT((INT, FLOAT), "number")
"""``number``: the built-in alias of ``int | float``."""


# The checker asks these of nearly every operand. A `Prim` equals only a `Prim` of the same
# name (its `==` is the record's, by class and fields), so they read the name instead of
# calling `==` against each constant; `tests/test_check_shortcuts.py` compares.
_NUMERIC_NAMES = frozenset({"int", "float", "any"})
_ARITHMETIC_NAMES = frozenset({"int", "float", "bool", "any"})
_STRINGY_NAMES = frozenset({"str", "any"})


def is_numeric(t: Ty) -> bool:
    """A number, or a union whose every option is one (``int | float``)."""
    if t.__class__ is Prim:
        return t.name in _NUMERIC_NAMES
    if isinstance(t, UnionT):
        return all(is_numeric(o) for o in t.options)
    return False


def is_arithmetic(t: Ty) -> bool:
    """What ordering and arithmetic accept, with Python's semantics: ``int``, ``float`` and
    ``bool`` (``true + 1 == 2``), and any union of them."""
    if t.__class__ is Prim:
        return t.name in _ARITHMETIC_NAMES
    if isinstance(t, UnionT):
        return all(is_arithmetic(o) for o in t.options)
    return False


def is_stringy(t: Ty) -> bool:
    """A string or an enum, or a union whose every option is one."""
    if t.__class__ is Prim:
        return t.name in _STRINGY_NAMES
    if isinstance(t, UnionT):
        return all(is_stringy(o) for o in t.options)
    return isinstance(t, EnumT)


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
    # `value == target or ANY in (value, target)`, `target == DYN`, `value == DYN` answered by
    # class and name first: checker types equal only types of their own class
    if value is target:
        return True
    value_cls, target_cls = value.__class__, target.__class__
    if (value_cls is Prim and value.name == "any") or (  # type: ignore[attr-defined]
        target_cls is Prim and target.name == "any"  # type: ignore[attr-defined]
    ):
        return True
    if value_cls is target_cls and value == target:
        return True
    if target_cls is DynT:
        return is_json(value)
    if value_cls is DynT:
        return covers_json(target)
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
    # `ANY in (a, b) or NULL in (a, b) or DYN in (a, b)` by class and name (a Prim equals only
    # a Prim of the same name, a DynT every DynT): six record comparisons per call before
    for t in (a, b):
        cls = t.__class__
        if (cls is Prim and t.name in _ANY_OR_NULL) or cls is DynT:  # type: ignore[attr-defined]
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
    return (t.__class__ is Prim and t.name == "bool") or is_numeric(t)


_ANY_OR_NULL = frozenset(("any", "null"))


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
    if DYN in (a, b):
        return DYN
    if {a, b} == {INT, FLOAT}:
        return FLOAT
    if isinstance(a, EmptyT):
        _note_empty(a, b)
        return b
    if isinstance(b, EmptyT):
        _note_empty(b, a)
        return a
    if isinstance(a, UnionT) or isinstance(b, UnionT):
        return _flat_union(a, b)
    if a == NULL or b == NULL:
        other = b if a == NULL else a
        return UnionT((other, NULL))
    if is_stringy(a) and is_stringy(b):
        return STR
    return UnionT((a, b))


def _flat_union(a: Ty, b: Ty) -> Ty:
    """The join of two types of which one is a union: one flat union of their options, each
    once, `null` last (a nested `str | (str | null)` would hide the null from narrowing)."""
    options: list[Ty] = []
    for t in (a, b):
        for o in t.options if isinstance(t, UnionT) else (t,):
            if o not in options:
                options.append(o)
    if NULL in options:
        options.remove(NULL)
        options.append(NULL)
    return _union(options, a)


def resolve_simple(name: str) -> Ty | None:
    return {
        "bool": BOOL,
        "int": INT,
        "float": FLOAT,
        "str": STR,
        "null": NULL,
        "any": DYN,
        "number": NUMBER_T,
    }.get(name)


JSON_MARK_FIELDS = ("$open", "$unknown", "$entries")
"""Keys JSON gives a meaning of its own (a simulated open record, an unknown, a map by its
entries): a record field may not be named so, or its values would not read back."""

PRIMITIVE_NAMES = ("bool", "int", "float", "str", "number", "any")
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


# ------------------------------------------------ type tests and narrowing (lang-types)

BARE_GENERICS = {"list": ListT(DYN), "set": SetT(DYN), "map": MapT(DYN, DYN)}
"""``x is list`` (and ``set``, ``map``): a collection of any items."""


def is_json(t: Ty) -> bool:
    """Whether every value of ``t`` is a JSON value (what ``any`` holds)."""
    if isinstance(t, (Prim, DynT, EnumT, RecordT, TaggedT, EmptyT)):
        return True
    if isinstance(t, UnionT):
        return all(is_json(o) for o in t.options)
    if isinstance(t, (ListT, SetT)):
        return is_json(t.elem)
    if isinstance(t, MapT):
        return is_stringy(t.key) and is_json(t.value)
    if isinstance(t, TupleT):
        return all(is_json(i) for i in t.items)
    return False


def covers_json(t: Ty) -> bool:
    """Whether every JSON value is of type ``t`` (``type Json = null | bool | int | float | str |
    list[Json] | map[str, Json]``): then an ``any`` value may be stored there."""
    kinds: set[str] = set()
    for o in options_of(t):
        if o in (ANY, DYN):
            return True
        if o == NULL:
            kinds.add("null")
        elif o == BOOL:
            kinds.add("bool")
        elif o == FLOAT:
            kinds.add("number")
        elif o == STR:
            kinds.add("str")
        elif isinstance(o, ListT) and o.elem in (ANY, DYN):
            kinds.add("list")
        elif isinstance(o, MapT) and o.key == STR and o.value in (ANY, DYN):
            kinds.add("map")
    return kinds >= {"null", "bool", "number", "str", "list", "map"}


def options_of(t: Ty) -> tuple[Ty, ...]:
    return t.options if isinstance(t, UnionT) else (t,)


def _kind(t: Ty) -> str:
    """The runtime shape of a type's values: what a type test can tell apart."""
    if t in (INT, FLOAT):
        return "number"
    if t == BOOL:
        return "bool"
    if t == NULL:
        return "null"
    if is_stringy(t):
        return "str"
    if isinstance(t, (ListT, TupleT)):
        return "list"
    if isinstance(t, SetT):
        return "set"
    if isinstance(t, (MapT, RecordT, TaggedT)):
        return "map"
    if isinstance(t, EmptyT):
        return "empty"
    return "any"


def overlaps(a: Ty, b: Ty) -> bool:
    """May a value be of both types? (Loosely: element types of collections are not compared,
    since an empty collection is of every element type.)"""
    if a in (ANY, DYN) or b in (ANY, DYN):
        return True
    if isinstance(a, UnionT) or isinstance(b, UnionT):
        return any(overlaps(x, y) for x in options_of(a) for y in options_of(b))
    ka, kb = _kind(a), _kind(b)
    if "any" in (ka, kb):
        return True
    if "empty" in (ka, kb):
        return (ka if kb == "empty" else kb) in ("list", "set", "map", "empty")
    if ka != kb:
        return False
    if ka == "number":
        return INT in (a, b) or a == b  # an int is a float too; a float is not always an int
    if isinstance(a, EnumT) and isinstance(b, EnumT):
        return bool(set(a.members) & set(b.members))
    if isinstance(a, RecordT) and isinstance(b, RecordT):
        return a.name == b.name
    return True


def within(a: Ty, b: Ty) -> bool:
    """Is every value of ``a`` also of ``b``? (What makes ``x is b`` always true.)"""
    if b in (ANY, DYN) or a == ANY:
        return True
    if a == DYN:
        return False
    if isinstance(a, UnionT):
        return all(within(o, b) for o in a.options)
    if isinstance(b, UnionT):
        return any(within(a, o) for o in b.options)
    if isinstance(a, EmptyT):
        return False
    if a == BOOL or b == BOOL:
        return a == b
    return assignable(a, b) and not (isinstance(b, EnumT) and not isinstance(a, EnumT))


def narrow(current: Ty, tested: Ty, positive: bool) -> Ty:
    """The type of a value of type ``current`` where ``x is tested`` is ``positive``."""
    if positive:
        if current in (ANY, DYN):
            return tested
        kept = [o for o in options_of(current) if overlaps(o, tested)]
        narrowed = [o if within(o, tested) else _meet(o, tested) for o in kept]
        if not narrowed:
            return tested  # never true (the checker warns): what follows is dead code
        return _union(narrowed, current)
    kept = [o for o in options_of(current) if not within(o, tested)]
    if not kept:
        return current  # never false (the checker warns)
    return _union(kept, current)


def _meet(o: Ty, tested: Ty) -> Ty:
    if isinstance(tested, UnionT):
        parts = [t for t in tested.options if overlaps(o, t)]
        return parts[0] if len(parts) == 1 else UnionT(tuple(parts))
    if o == FLOAT and tested == INT:
        return INT
    return tested


def _union(options: list[Ty], original: Ty) -> Ty:
    unique: list[Ty] = []
    for o in options:
        if o not in unique:
            unique.append(o)
    if len(unique) == 1:
        return unique[0]
    if isinstance(original, UnionT) and tuple(unique) == original.options:
        return original
    return UnionT(tuple(unique))
