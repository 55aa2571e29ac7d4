"""The built-in functions of the expression language: arity, argument kinds, result type."""

from __future__ import annotations

from collections.abc import Callable

from ..records import record
from . import types as T


@record(frozen=True)
class Builtin:
    min_args: int
    max_args: int
    result: Callable[[list[T.Ty]], T.Ty]
    arg_kinds: tuple[str, ...] = ()  # per position: str, num, coll, any
    doc: str = ""


def _same(i: int) -> Callable[[list[T.Ty]], T.Ty]:
    return lambda args: args[i] if len(args) > i else T.ANY


def _numeric_join(args: list[T.Ty]) -> T.Ty:
    # a bool is a number (Python's `True + 1 == 2`): it counts as an int
    args = [
        T.INT
        if a == T.BOOL
        else T.NUMBER_T
        if isinstance(a, T.UnionT) and T.is_arithmetic(a) and a.options != (T.INT,)
        else a
        for a in args
    ]
    if T.FLOAT in args:
        return T.FLOAT
    if args and all(a == T.INT for a in args):
        return T.INT
    if args and all(T.is_arithmetic(a) for a in args) and T.ANY not in args:
        return T.UnionT((T.INT, T.FLOAT))  # `int | float` with an int: either
    return T.ANY


def _keys(args: list[T.Ty]) -> T.Ty:
    m = args[0] if args else T.ANY
    return T.SetT(m.key) if isinstance(m, T.MapT) else T.SetT(T.ANY)


def _values(args: list[T.Ty]) -> T.Ty:
    m = args[0] if args else T.ANY
    return T.ListT(m.value) if isinstance(m, T.MapT) else T.ListT(T.ANY)


def _as_list(args: list[T.Ty]) -> T.Ty:
    t = args[0] if args else T.ANY
    return T.ListT(t.elem) if isinstance(t, (T.ListT, T.SetT)) else T.ListT(T.ANY)


def _get(args: list[T.Ty]) -> T.Ty:
    m = args[0] if args else T.ANY
    if isinstance(m, T.MapT):
        return T.join(m.value, args[2]) if len(args) > 2 else T.UnionT((m.value, T.NULL))
    return T.ANY


BUILTINS: dict[str, Builtin] = {
    "len": Builtin(1, 1, lambda a: T.INT, ("sized",), "number of items or characters"),
    "parent": Builtin(
        1, 1, lambda a: T.STR, ("str",), 'the parent of a path: parent("/a/b") = "/a"'
    ),
    "basename": Builtin(1, 1, lambda a: T.STR, ("str",), 'last path component: "b" for "/a/b"'),
    "join_path": Builtin(2, 2, lambda a: T.STR, ("str", "str"), 'join_path("/a", "b") = "/a/b"'),
    "startswith": Builtin(2, 2, lambda a: T.BOOL, ("str", "str"), "prefix test"),
    "endswith": Builtin(2, 2, lambda a: T.BOOL, ("str", "str"), "suffix test"),
    "lower": Builtin(1, 1, lambda a: T.STR, ("str",), "lower case"),
    "upper": Builtin(1, 1, lambda a: T.STR, ("str",), "upper case"),
    "strip": Builtin(1, 1, lambda a: T.STR, ("str",), "without surrounding white space"),
    "split": Builtin(2, 2, lambda a: T.ListT(T.STR), ("str", "str"), "split on a separator"),
    "join": Builtin(2, 2, lambda a: T.STR, ("coll", "str"), "join strings with a separator"),
    "replace": Builtin(3, 3, lambda a: T.STR, ("str", "str", "str"), "replace every occurrence"),
    "zfill": Builtin(2, 2, lambda a: T.STR, ("any", "num"), 'zero-pad: zfill(7, 3) = "007"'),
    "matches": Builtin(
        2,
        2,
        lambda a: T.BOOL,
        ("str", "pattern"),
        "regex search (JSON Schema semantics); anchor with ^…$",
    ),
    "str": Builtin(1, 1, lambda a: T.STR, ("any",), "text form of a value"),
    "truthy": Builtin(
        1,
        1,
        lambda a: T.BOOL,
        ("any",),
        'Python truthiness: false for null, false, 0, "" and empty',
    ),
    "int": Builtin(1, 1, lambda a: T.UnionT((T.INT, T.NULL)), ("any",), "integer or null"),
    "float": Builtin(1, 1, lambda a: T.UnionT((T.FLOAT, T.NULL)), ("any",), "float or null"),
    "abs": Builtin(1, 1, _same(0), ("num",), "absolute value"),
    "round": Builtin(1, 2, lambda a: T.INT if len(a) == 1 else T.FLOAT, ("num", "num"), "round"),
    "min": Builtin(1, 8, _numeric_join, ("num",) * 8, "smallest argument"),
    "max": Builtin(1, 8, _numeric_join, ("num",) * 8, "largest argument"),
    "keys": Builtin(1, 1, _keys, ("map",), "the keys of a map, as a set"),
    "take": Builtin(2, 2, _as_list, ("coll", "num"), "the first n items of a list"),
    "drop": Builtin(2, 2, _as_list, ("coll", "num"), "a list without its first n items"),
    "range": Builtin(1, 1, lambda a: T.ListT(T.INT), ("num",), "[0, 1, …, n-1]"),
    "values": Builtin(1, 1, _values, ("map",), "the values of a map, as a list"),
    "get": Builtin(
        2,
        3,
        _get,
        ("map", "any", "any"),
        "m[k] or a record's field k, or the default (null) when absent",
    ),
    "union": Builtin(2, 2, _same(0), ("set", "set"), "set union"),
    "intersection": Builtin(2, 2, _same(0), ("set", "set"), "set intersection"),
    "difference": Builtin(2, 2, _same(0), ("set", "set"), "set difference"),
    "is_date": Builtin(1, 1, lambda a: T.BOOL, ("str",), "an ISO date YYYY-MM-DD"),
    "is_datetime": Builtin(1, 1, lambda a: T.BOOL, ("str",), "an RFC 3339 date-time"),
    "date": Builtin(1, 1, lambda a: T.UnionT((T.STR, T.NULL)), ("str",), "ISO date, or null"),
    "today": Builtin(0, 0, lambda a: T.STR, (), "the simulation's date (from `now`)"),
    "now": Builtin(0, 0, lambda a: T.STR, (), "the simulation's time, RFC 3339"),
    "days_between": Builtin(2, 2, lambda a: T.INT, ("str", "str"), "days from a to b"),
    "add_days": Builtin(2, 2, lambda a: T.STR, ("str", "num"), "a date n days later"),
    "fresh": Builtin(0, 1, lambda a: T.STR, ("str",), "a new unique id (effects only)"),
    "old": Builtin(1, 1, _same(0), ("any",), "the value before the call (ensure only)"),
}


# ------------------------------------------------------------------------ strings, dates, pairs


def _enumerated(args: list[T.Ty]) -> T.Ty:
    elem = T.elem_type(T.strip_null(args[0])) if args else None
    return T.ListT(T.TupleT((T.INT, elem if elem is not None else T.ANY)))


DATE_DIRECTIVES = "YmdHMSybBj%"
"""The ``strptime`` directives ``parse_date`` understands (``%%`` is a literal ``%``)."""

BUILTINS.update(
    {
        "chars": Builtin(
            1, 1, lambda a: T.ListT(T.STR), ("str",), 'the characters: chars("ab") = ["a", "b"]'
        ),
        "count": Builtin(
            2,
            2,
            lambda a: T.INT,
            ("seq", "any"),
            "occurrences of a substring in a string, or of an item in a list",
        ),
        "enumerate": Builtin(
            1, 1, _enumerated, ("iterable",), "(index, item) pairs: enumerate(xs)[0] = (0, xs[0])"
        ),
        "parse_date": Builtin(
            2,
            2,
            lambda a: T.UnionT((T.STR, T.NULL)),
            ("str", "date_format"),
            "the date YYYY-MM-DD that text gives in a strptime format, or null: "
            'parse_date("03/12/2024", "%d/%m/%Y") = "2024-12-03"',
        ),
    }
)
