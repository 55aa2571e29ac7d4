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
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from .values import UNKNOWN, FMap, Fresh, Unknown

MAX_DEPTH = 100
"""Levels of nesting a value read from Python may have (contract types nest at most 64)."""
MAX_NODES = 1_000_000
"""Values (items, keys, fields) read from one Python value in all."""
MAX_INT = 1 << 256
"""The largest integer magnitude a contract computes with."""
MAX_TEXT = 1000
"""Characters of an exception's or object's text kept in messages."""

_MAX_PROBLEMS = 3


@dataclass(frozen=True)
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
    reader = _Reader()
    try:
        out = reader.read(value, path, 0)
    except Exception as exc:  # noqa: BLE001 - the reader is total; this is its last guard
        reader.problem(path, f"it cannot be read ({exception_text(exc)})")
        out = UNKNOWN
    problems = reader.problems[:_MAX_PROBLEMS]
    if len(reader.problems) > _MAX_PROBLEMS:
        problems.append(f"… and {len(reader.problems) - _MAX_PROBLEMS} more")
    return Converted(out, tuple(problems), reader.exact)


class _Reader:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.nodes = 0
        self.open: set[int] = set()  # ids of the containers on the current path
        self.exact = True

    def problem(self, path: str, text: str) -> None:
        self.problems.append(f"`{path}` {text}")

    def read(self, value: Any, path: str, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            if self.nodes == MAX_NODES + 1:
                self.problem(path, f"is beyond the first {MAX_NODES:,} values read")
            return UNKNOWN
        kind = type(value)
        if value is None or kind is bool or kind is Unknown or kind is Fresh:
            return value
        if kind not in _EXACT:
            self.exact = False
        if isinstance(value, bool):  # pragma: no cover - bool cannot be subclassed
            return bool(value)
        if isinstance(value, int):
            number = int.__int__(value)
            if abs(number) > MAX_INT:
                self.problem(path, "is an integer beyond 2**256")
                return UNKNOWN
            return number
        if isinstance(value, float):
            return float.__float__(value)
        if isinstance(value, str):
            from .lib import MAX_STRING

            if str.__len__(value) > MAX_STRING:
                self.problem(path, f"is a string longer than {MAX_STRING:,} characters")
                return UNKNOWN
            return str.__str__(value)
        if isinstance(value, datetime | date | time):
            return value.isoformat()
        if isinstance(value, enum.Enum):
            return self.read(value.value, path, depth)
        if isinstance(value, uuid.UUID | PurePath):
            return str(value)
        if isinstance(value, Decimal):
            return self._decimal(value, path)
        if depth >= MAX_DEPTH:
            self.problem(path, f"nests more than {MAX_DEPTH} levels")
            return UNKNOWN
        key = id(value)
        if key in self.open:
            self.problem(path, "contains itself")
            return UNKNOWN
        self.open.add(key)
        try:
            return self._container(value, path, depth + 1)
        except Exception as exc:  # noqa: BLE001 - a user object raised while being read
            self.problem(path, f"cannot be read: {exception_text(exc)}")
            return UNKNOWN
        finally:
            self.open.discard(key)

    def _decimal(self, value: Decimal, path: str) -> Any:
        if value.is_finite() and value == value.to_integral_value():
            if value.adjusted() > 78:
                self.problem(path, "is an integer beyond 2**256")
                return UNKNOWN
            return self.read(int(value), path, 0)
        return float(value)

    def _container(self, value: Any, path: str, depth: int) -> Any:
        from .lib import MAX_ITEMS

        if isinstance(value, dict):
            items: list[tuple[Any, Any]] = list(dict.items(value))
        elif isinstance(value, list | tuple):
            seq = list(list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value))
            if len(seq) > MAX_ITEMS:
                self.problem(path, f"has more than {MAX_ITEMS:,} items")
                return UNKNOWN
            return tuple(self.read(v, f"{path}[{i}]", depth) for i, v in enumerate(seq))
        elif isinstance(value, set | frozenset):
            elements = list(set.__iter__(value) if isinstance(value, set) else iter(value))
            if len(elements) > MAX_ITEMS:
                self.problem(path, f"has more than {MAX_ITEMS:,} items")
                return UNKNOWN
            return frozenset(self.read(v, f"{path}[…]", depth) for v in elements)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            items = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
        elif _is_pydantic_model(value):
            items = [(name, getattr(value, name)) for name in type(value).model_fields]
        elif isinstance(value, Mapping):
            items = _bounded_list(value.items(), MAX_ITEMS + 1)
        elif isinstance(value, Set):
            elements = _bounded_list(iter(value), MAX_ITEMS + 1)
            if len(elements) > MAX_ITEMS:
                self.problem(path, f"has more than {MAX_ITEMS:,} items")
                return UNKNOWN
            return frozenset(self.read(v, f"{path}[…]", depth) for v in elements)
        else:
            self.problem(path, f"is a `{safe_type_name(value)}` object, not a contract value")
            return UNKNOWN
        if len(items) > MAX_ITEMS:
            self.problem(path, f"has more than {MAX_ITEMS:,} items")
            return UNKNOWN
        out: dict[Any, Any] = {}
        for k, v in items:
            name = self.read(k, f"{path} key", depth)
            if name is UNKNOWN:
                return UNKNOWN
            if isinstance(name, str) and name.isidentifier():
                child = f"{path}.{name}"
            else:
                child = f"{path}[{safe_text(name, 40)}]"
            out[name] = self.read(v, child, depth)
        return FMap(out)


_EXACT = frozenset({int, float, str, dict, list, tuple, set, frozenset, FMap})


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
    """``value`` (a mapping with str keys, or None) as a dict; a TypeError naming ``what``
    and the ``keys`` it expects otherwise (for the arguments of the Python API)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a dict of {keys} to values, not {described(value)}")
    try:
        out = dict(value.items())
    except Exception as exc:  # noqa: BLE001 - the caller's mapping cannot be read
        raise TypeError(f"{what} cannot be read as a dict: {exception_text(exc)}") from None
    for key in out:
        if not isinstance(key, str):
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
