"""Foreign Python values → contract values, totally.

Whatever a real tool returns, an observer reads or a caller passes in, :func:`contract_value`
answers: it never raises, never recurses without bound and never walks more than a bounded
number of items. What it cannot read — a value that contains itself, nests too deeply, is too
large, is an object that is not data, or raises when read — becomes :data:`UNKNOWN` there, with
a problem saying why. The guard, ``observe`` (and so ``replay``) and the argument checks of the
Python API all read foreign values through here; :func:`exception_text` and :func:`safe_text`
format foreign exceptions and objects the same way.

The bounds are those of the simulator's own values: at most :data:`MAX_DEPTH` levels of nesting,
:data:`MAX_NODES` values in all, ``lib.MAX_ITEMS`` items in one collection, ``lib.MAX_STRING``
characters in one string, integers within ±2**256.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import uuid
from collections.abc import Mapping, Set
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from ..records import record
from .lib import MAX_ITEMS, MAX_STRING
from .values import UNKNOWN, Bounded, FMap, Fresh, OpenRecord, Unknown

MAX_DEPTH = 100
"""Levels of nesting a value read from Python may have (contract types nest at most 64)."""
MAX_NODES = 1_000_000
"""Values (items, keys, fields) read from one Python value in all."""
MAX_INT = 1 << 256
"""The largest integer magnitude a contract computes with."""
MAX_TEXT = 1000
"""Characters of an exception's or object's text kept in messages."""

_MAX_PROBLEMS = 3


@record(frozen=True)
class Converted:
    """A foreign value read as a contract value: ``value`` holds :data:`UNKNOWN` wherever a
    part could not be read, and ``problems`` says where and why (empty: read in full)."""

    value: Any
    problems: tuple[str, ...] = ()
    exact: bool = True
    """The value was plain data already (builtin dicts, lists, sets, str, numbers …, no
    subclasses or objects): a caller may keep the original instead of ``value``."""

    @property
    def ok(self) -> bool:
        """Whether the value was read in full."""
        return not self.problems


def contract_value(value: Any, path: str = "value") -> Converted:
    """``value`` as an immutable contract value (lists → tuples, sets → frozensets, mappings,
    records, dataclasses and pydantic models → :class:`FMap`, dates → their ISO text, enums →
    their value). ``path`` names the value in problems (``result``, ``args.path``)."""
    kind = type(value)
    if (kind is str and len(value) <= MAX_STRING) or kind is bool or kind is float or value is None:
        return _PLAIN if value is None else Converted(value)
    if kind is dict and len(value) <= MAX_ITEMS:
        flat = _flat_record(value)  # the commonest result: {"error": "…"}
        if flat is not None:
            return Converted(flat)
    reader = _Reader(path)
    try:
        out = reader.read(value, 0)
    except Exception as exc:  # noqa: BLE001 - the reader is total; this is its last guard
        reader.where[1:] = []
        reader.problem(f"cannot be read ({exception_text(exc)})")
        out = UNKNOWN
    problems = reader.problems[:_MAX_PROBLEMS]
    if len(reader.problems) > _MAX_PROBLEMS:
        problems.append(f"… and {len(reader.problems) - _MAX_PROBLEMS} more")
    return Converted(out, tuple(problems), reader.exact)


_PLAIN = Converted(None)


def _flat_record(value: dict[Any, Any]) -> FMap | None:
    """A dict of text keys and plain scalar values within the bounds, as the reader would read
    it (None for anything else: the reader reads it)."""
    for k, v in value.items():
        if type(k) is not str:
            return None
        kind = type(v)
        if kind is str:
            if len(v) > MAX_STRING:
                return None
        elif kind is int:
            if not -MAX_INT <= v <= MAX_INT:
                return None
        elif kind is not float and kind is not bool and v is not None:
            return None
    return FMap(value)


class _Reader:
    """One reading: the problems found, the values counted, the containers open on the path
    (a container met again inside itself is a cycle), the keys leading to the current value."""

    def __init__(self, path: str) -> None:
        self.problems: list[str] = []
        self.nodes = 0
        self.open: set[int] = set()
        self.exact = True
        self.where: list[Any] = [path]
        self.max_items = MAX_ITEMS
        self.max_string = MAX_STRING

    def problem(self, text: str) -> None:
        if len(self.problems) > _MAX_PROBLEMS:
            self.problems.append(text)  # counted, not shown
            return
        parts = []
        for key in self.where[1:]:
            if isinstance(key, int):
                parts.append(f"[{key}]")
            elif key is _ELEMENT:
                parts.append("[…]")
            elif key is _KEY:
                parts.append(" (a key)")
            elif isinstance(key, str) and key.isidentifier():
                parts.append(f".{key}")
            else:
                parts.append(f"[{safe_text(key, 40)}]")
        if len(parts) > 8:  # a deep path: its ends say where
            parts[4:-4] = [f"…{len(parts) - 8} levels…"]
        self.problems.append(f"`{self.where[0]}{''.join(parts)}` {text}")

    def read(self, value: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            if self.nodes == MAX_NODES + 1:
                self.problem(f"is beyond the first {MAX_NODES:,} values read")
            return UNKNOWN
        kind = type(value)
        if kind is str:
            if len(value) > self.max_string:
                self.problem(f"is a string longer than {self.max_string:,} characters")
                return UNKNOWN
            return value
        if kind is int:
            if -MAX_INT <= value <= MAX_INT:
                return value
            self.problem("is an integer beyond 2**256")
            return UNKNOWN
        if (
            kind is float
            or value is None
            or kind is bool
            or kind is Unknown
            or kind is Fresh
            or kind is Bounded
        ):
            return value
        if kind is dict or kind is FMap or kind is list or kind is tuple:
            if depth >= MAX_DEPTH:
                self.problem(f"nests more than {MAX_DEPTH} levels")
                return UNKNOWN
            key = id(value)
            if key in self.open:
                self.problem("contains itself")
                return UNKNOWN
            self.open.add(key)
            try:
                if kind is list or kind is tuple:
                    return self._sequence(value, depth + 1)
                return self._mapping(list(value.items()), depth + 1)
            finally:
                self.open.discard(key)
        if kind is OpenRecord:  # the simulator's own value: it stays open
            read = self.read(FMap(value), depth)
            if type(read) is not FMap:
                return read
            reopened = OpenRecord(read)
            if getattr(value, "edited", False):
                reopened.edited = True  # (see OpenRecord.edited)
            return reopened
        if kind is not set and kind is not frozenset:
            self.exact = False
        return self._foreign(value, depth)

    def _foreign(self, value: Any, depth: int) -> Any:
        """Anything but exact builtin data: subclasses, objects, dates …"""
        if isinstance(value, bool):  # pragma: no cover - bool cannot be subclassed
            return bool(value)
        if isinstance(value, int):
            return self.read(int.__int__(value), depth)
        if isinstance(value, float):
            return float.__float__(value)
        if isinstance(value, str):
            return self.read(str.__str__(value), depth)
        if isinstance(value, datetime | date | time):
            return value.isoformat()
        if isinstance(value, enum.Enum):
            return self.read(value.value, depth)
        if isinstance(value, uuid.UUID | PurePath):
            return str(value)
        if isinstance(value, Decimal):
            return self._decimal(value, depth)
        if depth >= MAX_DEPTH:
            self.problem(f"nests more than {MAX_DEPTH} levels")
            return UNKNOWN
        key = id(value)
        if key in self.open:
            self.problem("contains itself")
            return UNKNOWN
        self.open.add(key)
        mark = len(self.where)
        try:
            return self._container(value, depth + 1)
        except Exception as exc:  # noqa: BLE001 - a user object raised while being read
            del self.where[mark:]
            self.problem(f"cannot be read: {exception_text(exc)}")
            return UNKNOWN
        finally:
            self.open.discard(key)

    def _decimal(self, value: Decimal, depth: int) -> Any:
        if value.is_finite() and value == value.to_integral_value():
            if value.adjusted() > 78:
                self.problem("is an integer beyond 2**256")
                return UNKNOWN
            return self.read(int(value), depth)
        return float(value)

    def _sequence(self, items: list[Any] | tuple[Any, ...], depth: int) -> Any:
        if len(items) > self.max_items:
            self.problem(f"has more than {self.max_items:,} items")
            return UNKNOWN
        where = self.where
        where.append(0)
        out = []
        read = self.read
        for i, v in enumerate(items):
            where[-1] = i
            out.append(read(v, depth))
        where.pop()
        return tuple(out)

    def _set(self, elements: list[Any], depth: int) -> Any:
        if len(elements) > self.max_items:
            self.problem(f"has more than {self.max_items:,} items")
            return UNKNOWN
        self.where.append(_ELEMENT)
        out = frozenset(self.read(v, depth) for v in elements)
        self.where.pop()
        return out

    def _mapping(self, items: list[tuple[Any, Any]], depth: int) -> Any:
        if len(items) > self.max_items:
            self.problem(f"has more than {self.max_items:,} items")
            return UNKNOWN
        where = self.where
        out: dict[Any, Any] = {}
        for k, v in items:
            if type(k) is str:
                name = k
            else:
                where.append(_KEY)
                name = self.read(k, depth)
                where.pop()
                if name is UNKNOWN:
                    return UNKNOWN
            where.append(name)
            out[name] = self.read(v, depth)
            where.pop()
        return FMap(out)

    def _container(self, value: Any, depth: int) -> Any:
        if isinstance(value, dict):
            return self._mapping(list(dict.items(value)), depth)
        if isinstance(value, list):
            return self._sequence(list(list.__iter__(value)), depth)
        if isinstance(value, tuple):
            return self._sequence(tuple(tuple.__iter__(value)), depth)
        if isinstance(value, set):
            return self._set(list(set.__iter__(value)), depth)
        if isinstance(value, frozenset):
            return self._set(list(frozenset.__iter__(value)), depth)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
            return self._mapping(fields, depth)
        if _is_pydantic_model(value):
            names = list(type(value).model_fields)
            return self._mapping([(n, getattr(value, n)) for n in names], depth)
        if isinstance(value, Mapping):
            return self._mapping(_bounded_list(value.items(), self.max_items + 1), depth)
        if isinstance(value, Set):
            return self._set(_bounded_list(iter(value), self.max_items + 1), depth)
        self.problem(f"is of type `{safe_type_name(value)}`, not a contract value")
        return UNKNOWN


_ELEMENT = object()  # in a path: an element of a set
_KEY = object()  # in a path: a mapping's key


def _is_pydantic_model(value: Any) -> bool:
    from pydantic import BaseModel

    return isinstance(value, BaseModel) and not isinstance(value, type)


def _bounded_list(items: Any, limit: int) -> list[Any]:
    out: list[Any] = []
    for item in items:
        out.append(item)
        if len(out) >= limit:
            break
    return out


def safe_type_name(value: Any) -> str:
    """The name of ``value``'s type (never raises)."""
    try:
        name = type(value).__name__
        return name if isinstance(name, str) else "object"
    except Exception:  # noqa: BLE001
        return "object"


def safe_text(value: Any, limit: int = MAX_TEXT) -> str:
    """``str(value)`` for messages, cut at ``limit`` characters; a value whose ``__str__``
    raises (or returns no text) is named by its type instead."""
    try:
        text = str(value)
        if not isinstance(text, str):  # pragma: no cover - str() checks this itself
            raise TypeError("__str__ returned no text")
        text = str.__str__(text)
    except Exception:  # noqa: BLE001 - a user object: its text is not worth a crash
        return f"<a {safe_type_name(value)} whose text cannot be read>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def safe_repr(value: Any, limit: int = MAX_TEXT) -> str:
    """``repr(value)`` cut at ``limit`` characters, never raising (a ``__repr__`` that raises
    gives ``<a TYPE whose repr cannot be read>``)."""
    try:
        text = repr(value)
        text = str.__str__(text)
    except Exception:  # noqa: BLE001 - a user object: its repr is not worth a crash
        return f"<a {safe_type_name(value)} whose repr cannot be read>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of an exception, never raising (a ``__str__`` that raises gives
    ``Type: <its message cannot be read>``); at most :data:`MAX_TEXT` characters."""
    name = safe_type_name(exc)
    try:
        message = str(exc)
        message = str.__str__(message)
    except Exception:  # noqa: BLE001 - a user exception with a broken __str__
        message = "<its message cannot be read>"
    text = f"{name}: {message}"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def described(value: Any) -> str:
    """A value's type and (short) text for an error message: ``int 5``, ``str 'x'``."""
    if isinstance(value, str):
        return f"str {safe_text(repr(value), 60)}"
    return f"{safe_type_name(value)} {safe_text(value, 60)}"


def expect_mapping(value: Any, what: str, keys: str) -> dict[str, Any]:
    """``value`` (a mapping with str keys, or None) as a dict — a plain dict is returned as it
    is, not copied; a TypeError naming ``what`` and the ``keys`` it expects otherwise (for the
    arguments of the Python API)."""
    if value is None:
        return {}
    if type(value) is dict:
        out: dict[Any, Any] = value  # the caller's own dict, not copied: read it, never change it
    elif not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a dict of {keys} to values, not {described(value)}")
    else:
        try:
            out = dict(value.items())
        except Exception as exc:  # noqa: BLE001 - the caller's mapping cannot be read
            raise TypeError(f"{what} cannot be read as a dict: {exception_text(exc)}") from None
    for key in out:
        if type(key) is not str and not isinstance(key, str):
            raise TypeError(f"{what} must have str keys ({keys}), not {described(key)}")
    return out


def is_finite_number(value: Any) -> bool:
    """A real ``int``/``float`` (not ``bool``) that is finite."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an int beyond any float
        return False
