"""The three-valued semantics of comprehensions, ``first``/``last``, filtered quantifiers
(``all(x > 0 for x in xs if x != null)``), tuple unpacking (``for i, x in enumerate(xs)``) and
the conditional expression ``a if c else b``.

Shared by the reference interpreter and the safe generated code (the fast generated code uses
plain Python comprehensions, and the differential tests hold the three together). Items come in
the deterministic order of :func:`lib.iterate` (sets and map keys sorted), and iterating charges
the step's loop budget, so a comprehension is bounded like every other loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import lib
from .values import UNKNOWN, FMap

U = UNKNOWN

Fn = Callable[[Any], Any]


def unpack(item: Any, n: int) -> tuple[Any, ...]:
    """The ``n`` parts of one item of ``for a, b in …`` (all unknown when the item is)."""
    if item is U:
        return (U,) * n
    if isinstance(item, tuple) and len(item) == n:
        return item
    what = f"a list of {len(item)} items" if isinstance(item, tuple) else lib.type_name(item)
    raise lib.EvalError(f"cannot unpack {what} into {n} names")


def items(coll: Any, n: int = 0) -> Any:
    """The items a comprehension visits (unknown when the collection is not known); with
    ``n``, each item unpacked into a tuple of ``n`` parts."""
    if lib.unobserved(coll):
        return U
    found = lib.iterate(coll)
    if n:
        return [unpack(item, n) for item in found]
    return found


def fast_items(coll: Any, n: int) -> list[Any]:
    """:func:`items` in fast code, whose values are all known."""
    found = lib.iterate(coll)
    return [unpack(item, n) for item in found] if n else found


def _kept(cond: Fn | None, item: Any) -> Any:
    """Whether the filter keeps ``item``: true, false or unknown."""
    if cond is None:
        return True
    value = cond(item)
    return U if value is U else lib.truth(value, "the condition after `if`")


def _maybe(body: Fn, item: Any) -> Any:
    """The body for an item the filter may or may not keep: an error means unknown (in the
    worlds where the body is evaluated at all, the filter held; see ``lib._maybe``)."""
    try:
        return body(item)
    except lib.EVAL_FAILURES:
        return U


def quantify(op: str, found: Any, body: Fn, cond: Fn | None) -> Any:
    """``op(body for … in … if cond)`` over ``found`` (from :func:`items`)."""
    if found is U:
        return U
    if op in ("first", "last"):
        for item in found if op == "first" else reversed(found):
            kept = _kept(cond, item)
            if kept is U:
                return U  # this item, or a later one
            if kept:
                return body(item)
        return None
    result: Any = {"all": True, "any": False, "count": 0, "sum": 0}[op]
    values: list[Any] = []
    for item in found:
        kept = _kept(cond, item)
        if kept is False:
            continue
        value = body(item) if kept else _maybe(body, item)
        if op == "sum":
            if kept is U or value is U:
                return U
            values.append(value)
            continue
        if value is not U:
            value = lib.truth(value, f"the condition of `{op}`")
        if op == "all":
            if value is False:
                if kept is True:
                    return False
                result = U
            elif value is U:
                result = U
        elif op == "any":
            if value is True:
                if kept is True:
                    return True
                result = U
            elif value is U:
                result = U
        else:  # count
            if value is U or (kept is U and value is True):
                return U
            if value:
                result += 1
    if op == "sum":
        return lib.sum_values(values)
    return result


def comprehend(kind: str, found: Any, body: Fn, cond: Fn | None, key: Fn | None = None) -> Any:
    """``[body for …]`` (kind ``list``), ``{body for …}`` (``set``) or ``{key: body for …}``
    (``map``) over ``found`` (from :func:`items`). Unknown when the collection is, when the
    filter is unknown for some item, or (for a map) when a key is."""
    if found is U:
        return U
    out: list[Any] = []
    for item in found:
        kept = _kept(cond, item)
        if kept is U:
            return U
        if not kept:
            continue
        if key is not None:
            k = key(item)
            if k is U:
                return U
            out.append((k, body(item)))
        else:
            out.append(body(item))
    return build(kind, out)


def build(kind: str, out: list[Any]) -> Any:
    """The collection of a comprehension from its items (``(key, value)`` pairs for a map),
    bounded like every collection a contract builds."""
    if kind == "list":
        return lib._bounded(tuple(out))
    if kind == "set":
        return lib._bounded(frozenset(out))
    return lib._bounded(FMap(out))


def choose(cond: Any, then: Callable[[], Any], orelse: Callable[[], Any]) -> Any:
    """``then if cond else orelse``: with an unknown condition, the common value of both
    branches when they agree, else unknown."""
    if cond is U:
        a = _maybe(lambda _: then(), None)
        b = _maybe(lambda _: orelse(), None)
        if a is U or b is U:
            return U
        return a if lib.safe_compare("==", a, b) is True else U
    if lib.truth(cond, "the condition of `… if … else …`"):
        return then()
    return orelse()
