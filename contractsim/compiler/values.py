"""Runtime values of the simulator: immutable, hashable, and cheap to share between states.

``list`` → ``tuple``, ``set`` → ``frozenset``, ``map`` and records → :class:`FMap`, plus the two
symbolic values :data:`UNKNOWN` (not observed) and :class:`Fresh` (made by the call, not yet seen).
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import json
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn


class Unknown:
    """A value nobody has observed. Conditions over it are unknown, never true or false."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "unknown"

    def __reduce__(self) -> tuple[type[Unknown], tuple[()]]:
        return (Unknown, ())


UNKNOWN = Unknown()


UNKNOWN_JSON = "$unknown"
"""How an unknown value is written in JSON (reports, state files)."""


class Fresh:
    """A value a call creates (an id, a token), its text unknown until a real call returns it.

    It equals itself, differs from every other fresh value and from null, and from the texts in
    ``before`` (see :meth:`existed_before`); whether it equals other known text is unknown."""

    __slots__ = ("label", "serial", "before", "_texts")

    def __init__(self, label: str, serial: int, before: tuple[Any, Any] | None = None) -> None:
        self.label = label
        self.serial = serial
        # (values whose texts it differs from, values whose texts it may still be): walked only
        # when the value is compared with a text
        self.before = before
        self._texts: frozenset[str] | None = None

    def existed_before(self, text: str) -> bool:
        """Whether ``text`` is known to differ from this value, having existed before it.

        ``fresh("id")`` differs from the contract's texts, the texts in the state and in the
        call's arguments when it was made, and the texts of the plan being simulated. A value
        a tool returns may echo what the tool sees (the contract's texts, the state, its
        arguments): it differs only from the plan's texts that were nowhere in those."""
        if self.before is None:
            return False
        if self._texts is None:
            distinct, echoes = self.before
            self._texts = texts_in(distinct) - texts_in(echoes)
        return text in self._texts

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fresh) and (self.label, self.serial) == (other.label, other.serial)

    def __hash__(self) -> int:
        return hash(("fresh", self.label, self.serial))

    def __lt__(self, other: object) -> bool:
        if isinstance(other, Fresh):
            return (self.label, self.serial) < (other.label, other.serial)
        return NotImplemented

    def __repr__(self) -> str:
        return f"<fresh {self.label}#{self.serial}>"

    def __reduce__(self) -> tuple[type[Fresh], tuple[str, int]]:
        return (Fresh, (self.label, self.serial))


PLAN_TEXTS: contextvars.ContextVar[Any] = contextvars.ContextVar("PLAN_TEXTS", default=())
"""The arguments of the plan being simulated: written before the run, their texts existed
before every fresh value the run makes (set by ``Simulator.run`` and ``check_plan``; walked
only when a fresh value is compared with a text)."""


@contextlib.contextmanager
def plan_texts(args: Any) -> Iterator[None]:
    """Simulate a plan whose arguments are ``args``: fresh values made inside differ from
    every text in them."""
    token = PLAN_TEXTS.set(args)
    try:
        yield
    finally:
        PLAN_TEXTS.reset(token)


def texts_in(values: Any) -> frozenset[str]:
    """Every string inside ``values`` (items, map keys and values, nested), without recursion."""
    found: set[str] = set()
    stack = [values]
    while stack:
        v = stack.pop()
        if type(v) is str:
            found.add(v)
        elif isinstance(v, (frozenset, set)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
    return frozenset(found)


class Bounded:
    """A number nobody has observed that is known to lie in ``[lo, hi]`` (``unknown in [LO,
    HI]``): comparisons the interval decides are decided, the others are unknown. ``whole``
    says it is an integer (both bounds were ints), so ``x < 5`` means ``x <= 4``.

    Two bounded unknowns are equal (as values in a state, for merging states) when their
    intervals are; as contract values, ``x == y`` over two of them is decided only where the
    intervals do not overlap."""

    __slots__ = ("lo", "hi", "whole")

    def __init__(self, lo: int | float, hi: int | float, whole: bool) -> None:
        self.lo = lo
        self.hi = hi
        self.whole = whole

    def __eq__(self, other: object) -> bool:
        return type(other) is Bounded and (self.lo, self.hi, self.whole) == (
            other.lo,
            other.hi,
            other.whole,
        )

    def __hash__(self) -> int:
        return hash(("bounded", self.lo, self.hi, self.whole))

    def __repr__(self) -> str:
        return f"unknown in [{_number_text(self.lo)}, {_number_text(self.hi)}]"

    def __reduce__(self) -> tuple[type[Bounded], tuple[Any, Any, bool]]:
        return (Bounded, (self.lo, self.hi, self.whole))


def _number_text(n: int | float) -> str:
    return repr(n)


class FMap(dict):  # type: ignore[type-arg]
    """A frozen, hashable dict. Updates make a new map (``set``/``without``)."""

    __slots__ = ("_hash",)
    _hash: int

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            h = hash(frozenset(self.items()))
            self._hash = h
            return h

    def _immutable(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("FMap is immutable")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _immutable  # noqa: E501

    def set(self, key: Any, value: Any) -> FMap:
        new = FMap(self)
        dict.__setitem__(new, key, value)
        return new

    def without(self, key: Any) -> FMap:
        new = FMap(self)
        dict.pop(new, key, None)
        return new

    def __repr__(self) -> str:
        return "FMap(" + dict.__repr__(self) + ")"

    def __reduce__(self) -> tuple[type[FMap], tuple[dict[Any, Any]]]:
        return (FMap, (dict(self),))


class OpenRecord(FMap):
    """A value of an open record type that simulation made (a call's ``result``): it holds the
    declared fields, and the real value may hold more that nobody has seen. So a field it does
    not hold is not known to be absent: ``get(r, "x", d)`` and ``"x" in r`` are unknown, and so
    are its size, its keys and iterating over them (see ``compiler/lib.py``). Values built in the
    contract, parsed from arguments or returned by a real call are plain :class:`FMap` values.

    It never equals a plain map (that one is known to have no more fields).

    ``edited``: whether a field was set or removed since the call made it (its fields then no
    longer tell which call's undeclared fields it holds: see ``lib.equal3``)."""

    __slots__ = ("edited",)
    edited: bool

    def __eq__(self, other: object) -> bool:
        return type(other) is OpenRecord and dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            h = hash(("open", frozenset(self.items())))
            self._hash = h
            return h

    def set(self, key: Any, value: Any) -> OpenRecord:
        new = OpenRecord(self)
        dict.__setitem__(new, key, value)
        if getattr(self, "edited", False) or key not in self or self[key] is not value:
            new.edited = True
        return new

    def without(self, key: Any) -> OpenRecord:
        new = OpenRecord(self)
        dict.pop(new, key, None)
        if getattr(self, "edited", False) or key in self:
            new.edited = True
        return new

    def __repr__(self) -> str:
        return "OpenRecord(" + dict.__repr__(self) + ")"

    def __reduce__(self) -> tuple[Any, ...]:
        if getattr(self, "edited", False):
            return (_edited_open_record, (dict(self),))
        return (OpenRecord, (dict(self),))


def _edited_open_record(fields: dict[Any, Any]) -> OpenRecord:
    """An :class:`OpenRecord` marked edited (unpickling one)."""
    record = OpenRecord(fields)
    record.edited = True
    return record


MAX_FREEZE_DEPTH = 10_000
"""Nesting :func:`freeze` accepts (it works without recursion; deeper data is refused)."""
_END = object()


def _is_plain_container(value: Any) -> bool:
    return isinstance(value, (list, tuple, set, frozenset, Mapping))


def _children(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        return itertools.chain.from_iterable(value.items())
    return iter(value)


def _rebuild(value: Any, items: list[Any]) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(items)
    if isinstance(value, (set, frozenset)):
        return frozenset(items)
    return FMap(zip(items[::2], items[1::2]))


def freeze(value: Any) -> Any:
    """Plain JSON-like data → runtime values (lists become tuples, dicts become FMaps).

    Works without recursion, so data nested thousands of levels deep (a recorded result, a
    state file) is no ``RecursionError``; a value that contains itself, or nests more than
    :data:`MAX_FREEZE_DEPTH` levels, is a ``ValueError``."""
    if not _is_plain_container(value):
        return value
    stack: list[tuple[Any, Iterator[Any], list[Any]]] = [(value, _children(value), [])]
    on_path = {id(value)}
    while True:
        node, children, done = stack[-1]
        child = next(children, _END)
        if child is _END:
            stack.pop()
            on_path.discard(id(node))
            built = _rebuild(node, done)
            if not stack:
                return built
            stack[-1][2].append(built)
        elif _is_plain_container(child):
            if id(child) in on_path:
                raise ValueError("the value contains itself")
            if len(stack) >= MAX_FREEZE_DEPTH:
                raise ValueError(f"the value is nested more than {MAX_FREEZE_DEPTH:,} levels deep")
            on_path.add(id(child))
            stack.append((child, _children(child), []))
        else:
            done.append(child)


def json_ready(value: Any) -> Any:
    """Plain data as JSON would read it back: what JSON cannot hold (dates, sets, objects)
    becomes its text. Raises ``ValueError`` for a value that contains itself."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


OPEN_JSON = "$open"
"""The key that marks a simulated open record in JSON: ``{"id": "$fresh:call.id#1",
"$open": true}`` holds the declared fields and may hold others nobody has seen."""


def thaw(value: Any) -> Any:
    """Runtime values → JSON-ready data; sets become sorted lists, symbols become strings, a
    simulated open record gets ``"$open": true`` after its fields."""
    if isinstance(value, FMap) or isinstance(value, dict):
        out = {_key_text(k): thaw(v) for k, v in sorted(value.items(), key=_item_order)}
        if type(value) is OpenRecord:
            # it may hold fields nobody has seen (unless it declares a field named so)
            out.setdefault(OPEN_JSON, True)
        return out
    if isinstance(value, frozenset) or isinstance(value, set):
        return [thaw(v) for v in sorted(value, key=order)]
    if isinstance(value, tuple) or isinstance(value, list):
        return [thaw(v) for v in value]
    if isinstance(value, Unknown):
        return UNKNOWN_JSON
    if isinstance(value, Fresh):
        return f"$fresh:{value.label}#{value.serial}"
    if isinstance(value, Bounded):
        return {UNKNOWN_JSON: {"min": value.lo, "max": value.hi}}
    if isinstance(value, float) and value != value:
        return "nan"
    return value


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, (Unknown, Fresh)):
        return str(thaw(key))
    if isinstance(key, Bounded):
        return repr(key)
    if isinstance(key, tuple):
        return "(" + ", ".join(_key_text(k) for k in key) + ")"
    return show(key)


def order(value: Any) -> tuple[int, Any, str]:
    """A total, deterministic order over runtime values of mixed types."""
    rank = _rank(value)
    if rank == 2 or rank == 3:
        return (rank, value, "")
    if rank == 1:
        return (1, int(value), "")
    return (rank, 0, _show(value))


def _item_order(item: tuple[Any, Any]) -> tuple[int, Any, str]:
    return order(item[0])


def _rank(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        return 1
    if isinstance(value, (int, float)):
        return 2
    if isinstance(value, str):
        return 3
    return 4


def show(value: Any, limit: int = 120) -> str:
    """A value as the contract would write it: ``"a"``, ``{"/", "/home"}``, ``[1, 2]``, cut
    to ``limit`` characters (ending in ``…``). Writing stops at the limit, so a value of
    billions of characters (one long string held many times) costs no more than a short one."""
    parts: list[str] = []
    size = 0
    # a stack of what is still to write: text, or a value to expand
    todo: list[tuple[bool, Any]] = [(False, value)]
    while todo and size <= limit:
        is_text, item = todo.pop()
        if is_text:
            text = item
        elif isinstance(item, str) and len(item) > limit + 2:
            from ..dsl.pretty import literal_text

            text = literal_text(item[: limit + 2])[:-1]  # cut: the closing quote never shows
        elif isinstance(item, (dict, frozenset, set, tuple, list)):
            entries: list[Any] | tuple[Any, ...]
            if isinstance(item, dict):
                entries = sorted(item.items(), key=_item_order)
                opener, closer = "{", "}"
            elif isinstance(item, (frozenset, set)):
                entries = sorted(item, key=order)
                opener, closer = "{", "}"
            else:
                entries = item
                opener, closer = "[", "]"
            pending: list[tuple[bool, Any]] = [(True, opener)]
            for i, entry in enumerate(entries):
                if i:
                    pending.append((True, ", "))
                if isinstance(item, dict):
                    pending += [(False, entry[0]), (True, ": "), (False, entry[1])]
                else:
                    pending.append((False, entry))
                if i > limit:
                    break  # every item writes at least one character
            else:
                if type(item) is OpenRecord:  # it may hold fields nobody has seen
                    pending.append((True, ", ..." if entries else "..."))
                pending.append((True, closer))
            todo.extend(reversed(pending))
            continue
        else:
            text = _show(item)
        parts.append(text)
        size += len(text)
    text = "".join(parts)
    if len(text) > limit or todo:
        text = text[: limit - 1] + "…"
    return text


def _show(value: Any) -> str:
    if value is None or isinstance(value, (bool, str)):
        from ..dsl.pretty import literal_text

        return literal_text(value)
    if isinstance(value, (Unknown, Fresh, Bounded)):
        return repr(value)
    if isinstance(value, dict):
        items = sorted(value.items(), key=_item_order)
        shown = [f"{_show(k)}: {_show(v)}" for k, v in items]
        if type(value) is OpenRecord:
            shown.append("...")  # it may hold fields nobody has seen
        return "{" + ", ".join(shown) + "}"
    if isinstance(value, (frozenset, set)):
        return "{" + ", ".join(_show(v) for v in sorted(value, key=order)) + "}"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value)
