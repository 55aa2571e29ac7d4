"""The semantics of every operator and built-in function, shared by the compiled code and the
reference interpreter so that the two cannot drift apart.

Plain functions take known values. ``safe_*`` variants and :func:`lift` add three-valued logic: an
:data:`~contractsim.compiler.values.UNKNOWN` operand makes the result unknown (Kleene logic for
``and``/``or``/``not``).
"""

from __future__ import annotations

import contextlib
import operator
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from datetime import date as _date
from datetime import datetime, timedelta
from itertools import chain, islice
from typing import Any, TypeVar

from ..dsl.patterns import regex_search
from .formats import is_date as _is_date
from .formats import is_datetime as _is_datetime
from .values import UNKNOWN, Bounded, FMap, Fresh, OpenRecord, Unknown

U = UNKNOWN


class EvalError(Exception):
    """A contract expression could not be evaluated (a missing key, a null record, 1/0 …)."""

    span: Any = None
    """The contract statement that failed, when the reference interpreter knows it."""


class ContractFail(Exception):
    """A ``fail CODE "message"`` statement ended the call: the effects applied before it stay
    applied (generated code and the interpreter both raise it; it is no evaluation error)."""

    def __init__(self, code: str, key: str, values: tuple[Any, ...]) -> None:
        super().__init__(code)
        self.code = code
        self.key = key  # the statement's message template ("line:col", as for `warn`)
        self.values = values  # the values of the message's holes


# ------------------------------------------------------------------------------------ built-ins


def _len(x: Any) -> int:
    return len(x)


def parent(path: str) -> str:
    stripped = path.rstrip("/")
    if not stripped:
        return "/"
    head, _, _ = stripped.rpartition("/")
    if not head:
        return "/" if path.startswith("/") else "."
    return head


def basename(path: str) -> str:
    return path.rstrip("/").rpartition("/")[2]


def join_path(a: str, b: str) -> str:
    if b.startswith("/"):
        return b
    if not a:
        return b
    return a.rstrip("/") + "/" + b if a != "/" else "/" + b


def _str(x: Any) -> str:
    if isinstance(x, str):
        return x
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, Fresh):
        return repr(x)
    from .values import show

    return show(x, limit=10_000)


def _int(x: Any) -> int | None:
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, (int, float)):
        if x != x or x in (float("inf"), float("-inf")):
            return None
        return int(x)
    if isinstance(x, str):
        try:
            return int(x.strip())
        except ValueError:
            return None
    return None


def _float(x: Any) -> float | None:
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x.strip())
        except ValueError:
            return None
    return None


def _whole(n: Any, what: str) -> int:
    """A count given as a number: floats must be whole and finite (``range(1.5)`` is an error,
    not ``range(1)``)."""
    if isinstance(n, float):
        if n != n or n in (float("inf"), float("-inf")) or n != int(n):
            raise EvalError(f"{what} needs a whole number, got {n!r}")
        return int(n)
    if isinstance(n, bool):
        return int(n)
    if not isinstance(n, int):
        raise EvalError(f"{what} needs a whole number, got {type_name(n)}")
    return n


def _round(x: float, n: int | None = None) -> float:
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        if n is None:
            raise EvalError(f"round({x!r}) has no integer value")
        return x
    if n is None:
        return round(x)
    digits = _whole(n, "the second argument of round")
    # beyond ±400 digits nothing changes for a float (and huge counts make Python give up)
    return round(x, max(-400, min(400, digits)))


def zfill(x: Any, width: int) -> str:
    return _str(x).zfill(max(0, min(_whole(width, "zfill"), 10_000)))


def _get(m: FMap, key: Any, default: Any = None) -> Any:
    return m.get(key, default)


def _union(a: frozenset[Any], b: frozenset[Any]) -> frozenset[Any]:
    return _bounded(frozenset(a) | frozenset(b))


def _intersection(a: frozenset[Any], b: frozenset[Any]) -> frozenset[Any]:
    return frozenset(a) & frozenset(b)


def _difference(a: frozenset[Any], b: frozenset[Any]) -> frozenset[Any]:
    return frozenset(a) - frozenset(b)


def date(text: str) -> str | None:
    if _is_date(text):
        return text
    if _is_datetime(text):
        return text[:10]
    return None


def _parse_date(text: str, what: str) -> _date:
    try:
        return _date.fromisoformat(text[:10])
    except ValueError:
        from .values import show

        raise EvalError(f"{what} needs a date (YYYY-MM-DD), got {show(text)}") from None


def days_between(a: str, b: str) -> int:
    return (_parse_date(b, "days_between") - _parse_date(a, "days_between")).days


def add_days(d: str, n: int) -> str:
    start = _parse_date(d, "add_days")
    days = _whole(n, "add_days")
    try:
        return (start + timedelta(days=days)).isoformat()
    except OverflowError:
        raise EvalError(
            f"add_days({start.isoformat()}, {days}) is outside the years 1 to 9999"
        ) from None


def _split(s: str, sep: str) -> tuple[str, ...]:
    if sep == "":
        raise EvalError("split needs a non-empty separator")
    if s.count(sep) >= MAX_ITEMS:
        raise EvalError(f"split would make a list of more than {MAX_ITEMS:,} items")
    charge_text(len(s))
    return tuple(s.split(sep))


def _charged(s: str) -> str:
    """``s``, after charging a copy of it to the step's budget."""
    charge_text(len(s))
    return s


MAX_STRING = 10_000_000
"""Characters a string built by the contract may have."""


def _bounded_str(text: str) -> str:
    if len(text) > MAX_STRING:
        raise EvalError(f"a string would grow beyond {MAX_STRING:,} characters")
    return text


def _join(items: Any, sep: str) -> str:
    parts = [_str(i) for i in iterate(items)]
    size = sum(map(len, parts)) + len(sep) * max(len(parts) - 1, 0)
    if size > MAX_STRING:
        raise EvalError(f"a string would grow beyond {MAX_STRING:,} characters")
    charge_text(size)
    return sep.join(parts)


def _replace(s: str, old: str, new: str) -> str:
    if old == "":
        return s
    size = len(s) + s.count(old) * (len(new) - len(old))
    if size > MAX_STRING:
        raise EvalError(f"replace would make a string longer than {MAX_STRING:,} characters")
    charge_text(size)
    return s.replace(old, new)


def _matches(s: str, pattern: str) -> bool:
    try:
        return regex_search(pattern, s)
    except Exception:  # noqa: BLE001 - pydantic-core's SchemaError for a pattern it refuses
        from ..dsl.patterns import pattern_problem

        problem = pattern_problem(pattern)
        reason = problem[1] if problem is not None else "the pattern cannot be used"
        raise EvalError(f"matches(…, {pattern[:60]!r}): {reason}") from None


def _keys(m: FMap) -> frozenset[Any]:
    return frozenset(m)


def _values(m: FMap) -> tuple[Any, ...]:
    return tuple(m.values())


def take(xs: Any, n: int) -> tuple[Any, ...]:
    """The first ``n`` items (of a set: in the deterministic order of :func:`iterate`)."""
    return tuple(iterate(xs))[: max(_whole(n, "take"), 0)]


def drop(xs: Any, n: int) -> tuple[Any, ...]:
    return tuple(iterate(xs))[max(_whole(n, "drop"), 0) :]


def _range(n: int) -> tuple[int, ...]:
    count = _whole(n, "range")
    if count > MAX_ITEMS:
        raise EvalError(f"range({count}) is longer than {MAX_ITEMS:,} items")
    charge(max(count, 0))
    return tuple(range(count))


def truthy(x: Any) -> bool:
    """Python truthiness: false for null, false, 0, 0.0, "" and empty collections. A fresh value
    is an id a call made: never empty, so true."""
    if type(x) is Fresh:
        return True
    return bool(x)


def _safe_truthy(x: Any) -> Any:
    if type(x) is OpenRecord and not x:
        return U  # no declared field: whether the real value has any is not known
    return U if x is U else truthy(x)


def _safe_get(m: Any, key: Any, default: Any = None) -> Any:
    """``get`` over unknowns: a key a simulated open record does not hold is unknown, not
    absent (the real value may hold it)."""
    if type(m) is OpenRecord:
        for a in (key, default):  # as lift: an unknown argument makes the value unknown
            if a is U or type(a) is Fresh or type(a) is Bounded or type(a) is OpenRecord:
                return U
        return m[key] if key in m else U
    if isinstance(m, FMap) and isinstance(key, _STRUCTURES) and safe_contains(key, m) is U:
        return U  # a key that may be one of the map's keys, as `in` says (and `m[key]`)
    return _lifted_get(m, key, default)


def _min(*xs: Any) -> Any:
    return min(xs)


def _max(*xs: Any) -> Any:
    return max(xs)


BUILTIN_FUNCS: dict[str, Callable[..., Any]] = {
    "len": _len,
    "parent": parent,
    "basename": basename,
    "join_path": join_path,
    "startswith": lambda s, p: s.startswith(p),
    "endswith": lambda s, p: s.endswith(p),
    "lower": lambda s: _bounded_str(_charged(s).lower()),
    "upper": lambda s: _bounded_str(_charged(s).upper()),
    "strip": lambda s: s.strip(),
    "split": _split,
    "join": _join,
    "replace": _replace,
    "zfill": zfill,
    "matches": _matches,
    "str": _str,
    "truthy": truthy,
    "int": _int,
    "float": _float,
    "abs": abs,
    "round": _round,
    "min": _min,
    "max": _max,
    "keys": _keys,
    "take": take,
    "drop": drop,
    "range": _range,
    "values": _values,
    "get": _get,
    "union": _union,
    "intersection": _intersection,
    "difference": _difference,
    "is_date": _is_date,
    "is_datetime": _is_datetime,
    "date": date,
    "days_between": days_between,
    "add_days": add_days,
}
"""Pure built-ins. ``today``, ``now``, ``fresh`` and ``old`` need the simulation context and are
handled by the code generator and the interpreter themselves."""


def lift(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Make a function three-valued: unknown in, unknown out. A fresh value counts as unknown
    here: its text (its length, its prefix …) is not known yet; so does a simulated open
    record (:class:`OpenRecord`): its size, keys and values are not known."""

    def lifted(*args: Any) -> Any:
        for a in args:
            if a is U or type(a) is Fresh or type(a) is Bounded or type(a) is OpenRecord:
                return U
        return fn(*args)

    lifted.__name__ = getattr(fn, "__name__", "builtin")
    return lifted


def lift_deep(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Like :func:`lift`, for functions that write out whole collections (``str``, ``join``):
    an unknown or fresh value anywhere inside makes the text unknown."""

    def lifted(*args: Any) -> Any:
        for a in args:
            if _contains_unknown(a):
                return U
        return fn(*args)

    lifted.__name__ = getattr(fn, "__name__", "builtin")
    return lifted


def sum_values(values: Iterable[Any]) -> Any:
    """``sum(…)`` of a quantifier: numbers; a bool is a number, as in Python (a sum of flags
    counts them)."""
    total: Any = 0
    for v in values:
        if not isinstance(v, (int, float)):
            raise EvalError(f"`sum` adds numbers, got {type_name(v)}")
        total = total + v
    return total


# ------------------------------------------------------------------ strings, dates, pairs


def chars(s: str) -> tuple[str, ...]:
    """The characters of ``s``, as a list of one-character strings."""
    if len(s) > MAX_ITEMS:
        raise EvalError(f"chars would make a list of more than {MAX_ITEMS:,} items")
    charge(len(s))
    return tuple(s)


def count(xs: Any, sub: Any) -> int:
    """``str.count`` for a string, ``list.count`` for a list."""
    if isinstance(xs, str):
        if not isinstance(sub, str):
            raise EvalError(f"count in a string needs a string, got {type_name(sub)}")
        charge_text(len(xs))
        return xs.count(sub)
    if isinstance(xs, tuple):
        charge(len(xs))
        return xs.count(sub)
    raise EvalError(f"count needs a string or a list, got {type_name(xs)}")


def _enumerate(xs: Any) -> tuple[tuple[int, Any], ...]:
    """(index, item) pairs, in the order of :func:`iterate` (a map gives its keys, a string its
    characters)."""
    if isinstance(xs, str) and len(xs) > MAX_ITEMS:
        raise EvalError(f"enumerate would make a list of more than {MAX_ITEMS:,} items")
    return _bounded(tuple(enumerate(iterate(xs))))


MAX_DATE_TEXT = 200
"""Text longer than this is no date for ``parse_date`` (null, without trying)."""


def parse_date(text: str, fmt: str) -> str | None:
    """The date ``text`` gives in the ``strptime`` format ``fmt`` as ``YYYY-MM-DD``, or null
    when it does not parse. The month names of %b/%B are English whatever the locale."""
    if len(text) > MAX_DATE_TEXT or len(fmt) > MAX_DATE_TEXT:
        return None
    try:
        return _english_strptime(text, fmt).date().isoformat()
    except ValueError:
        return None


_MONTHS = (
    "january february march april may june july august september october november december"
).split()


def _english_strptime(text: str, fmt: str) -> datetime:
    """``datetime.strptime`` with English month names for %b and %B (the process's locale
    must not change what a contract means): the names are turned into month numbers first."""
    if "%b" not in fmt and "%B" not in fmt:
        return datetime.strptime(text, fmt)
    import re

    pattern: list[str] = []
    numeric: list[str] = []
    i = 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            d = fmt[i + 1]
            if d in "bB":
                names = "|".join(m[:3] if d == "b" else m for m in _MONTHS)
                pattern.append(f"(?P<m{len(numeric)}>{names})")
                numeric.append("%m")
            else:
                pattern.append(f"(?P<k{len(numeric)}>.*?)")
                numeric.append(fmt[i : i + 2])
            i += 2
        else:
            pattern.append(r"\s+" if fmt[i].isspace() else re.escape(fmt[i]))
            numeric.append("")
            i += 1
    # a plain rewrite: each month name becomes its number, the rest is matched by strptime
    out_fmt: list[str] = []
    out_text: list[str] = []
    regex = re.compile("".join(pattern), re.IGNORECASE | re.DOTALL)
    match = regex.fullmatch(text)
    if match is None:
        raise ValueError(text)
    for n, part in enumerate(numeric):
        if part == "":
            continue
        group = match.group(f"m{n}") if f"m{n}" in regex.groupindex else match.group(f"k{n}")
        if part == "%m" and f"m{n}" in regex.groupindex:
            month = group.lower()
            index = next(k for k, m in enumerate(_MONTHS) if m == month or m[:3] == month)
            out_text.append(f"{index + 1:02d}")
        else:
            out_text.append(group)
        out_fmt.append(part)
    return datetime.strptime("\x00".join(out_text), "\x00".join(out_fmt))


BUILTIN_FUNCS.update(
    {"chars": chars, "count": count, "enumerate": _enumerate, "parse_date": parse_date}
)


_lifted_get = lift(_get)

SAFE_FUNCS: dict[str, Callable[..., Any]] = {
    name: (lift_deep if name in ("str", "join", "zfill", "count") else lift)(fn)
    for name, fn in BUILTIN_FUNCS.items()
}
SAFE_FUNCS["truthy"] = _safe_truthy  # a fresh value is known to be non-empty
SAFE_FUNCS["get"] = _safe_get  # reads the declared fields of a simulated open record


# ------------------------------------------------------------------------------------- operators

ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
}

COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def arith(op: str, a: Any, b: Any) -> Any:
    """Arithmetic with the contract's rules: ``+`` joins lists, ``-`` subtracts sets, big strings
    and numbers are bounded so that a contract cannot exhaust memory."""
    if op == "*" and (isinstance(a, (str, tuple)) or isinstance(b, (str, tuple))):
        raise EvalError("`*` multiplies numbers only")
    if op == "-" and isinstance(a, frozenset):
        return a - frozenset(b)
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        if len(a) + len(b) > MAX_STRING:
            raise EvalError("a string would grow beyond 10 MB")
        charge_text(len(a) + len(b))
    if op in ("/", "//", "%") and b == 0:
        raise EvalError("division by zero")
    if op == "+" and isinstance(a, tuple):
        return _bounded(a + tuple(b))
    result = ARITH[op](a, b)
    if isinstance(result, int) and not isinstance(result, bool) and abs(result) > 1 << 256:
        raise EvalError("an integer grew beyond 2**256")
    return result


def unobserved(v: Any) -> bool:
    """Unknown (bounded or not), a fresh value (text that is new but not known yet), or a
    simulated open record (whose keys are not all known)."""
    return v is U or type(v) is Fresh or type(v) is Bounded or type(v) is OpenRecord


def safe_arith(op: str, a: Any, b: Any) -> Any:
    if a is U or b is U:
        return U
    if type(a) is Bounded or type(b) is Bounded:
        return interval_arith(op, a, b)
    if type(a) is Fresh or type(b) is Fresh:
        # text joined to a fresh value is new text that is not known yet; `*` still refuses it
        if op == "*":
            raise EvalError("`*` multiplies numbers only")
        return U
    return arith(op, a, b)


def compare(op: str, a: Any, b: Any) -> bool:
    try:
        return bool(COMPARE[op](a, b))
    except TypeError:
        raise EvalError(f"cannot compare {type_name(a)} and {type_name(b)} with `{op}`") from None


def safe_compare(op: str, a: Any, b: Any) -> Any:
    if a is U or b is U:
        return U
    if type(a) is Bounded or type(b) is Bounded:
        return interval_compare(op, a, b)
    fresh_a, fresh_b = isinstance(a, Fresh), isinstance(b, Fresh)
    if fresh_a or fresh_b:
        # a fresh value equals only itself and is never null; its order and its relation to
        # known text are unknown
        if op in ("==", "!=") and ((fresh_a and fresh_b) or a is None or b is None):
            return compare(op, a, b)
        if op in ("==", "!=") and _fresh_apart(a, b):
            return op == "!="  # the text existed before the fresh value was made
        return U
    if op in ("==", "!=") and (_contains_unknown(a) or _contains_unknown(b)):
        same = equal3(a, b)
        return same if op == "==" or same is U else not same
    return compare(op, a, b)


_STRUCTURES = (tuple, frozenset, FMap)


def equal3(a: Any, b: Any) -> Any:
    """``a == b`` over values that may hold unknowns, three-valued and exact: false as soon as
    some part is known to differ (lists of other lengths, a key one map holds and a closed other
    lacks, items known to differ), true when every part is known equal, else unknown.

    A simulated open record (:class:`OpenRecord`) may hold fields besides its declared ones: it
    is unequal to a map or record that lacks one of its declared fields or holds a differing
    value, and otherwise unknown, except against itself (the same fields, one of them a fresh
    value: the same call's result). A collection is never null, a number or text, whatever it
    holds."""
    undecided = False
    pairs = [(a, b)]  # without recursion (but for sets): a value may nest deeper than the stack
    while pairs:
        x, y = pairs.pop()
        if x is U or y is U:
            undecided = True
            continue
        tx, ty = type(x), type(y)
        if tx is tuple and ty is tuple:
            if len(x) != len(y):
                return False
            charge(len(x))
            pairs.extend(zip(x, y))
        elif isinstance(x, FMap) and isinstance(y, FMap):
            open_x, open_y = tx is OpenRecord, ty is OpenRecord
            if open_x and open_y and _same_result(x, y):
                continue
            if not _keys_observed(x) or not _keys_observed(y):
                undecided = True  # a fresh or unknown key may be any of the other's keys
                continue
            if (not open_y and x.keys() - y.keys()) or (not open_x and y.keys() - x.keys()):
                return False  # a closed side lacks a key the other holds
            if open_x or open_y:
                undecided = True  # the open side may hold fields the other lacks
            charge(len(x))
            pairs.extend((x[k], y[k]) for k in x.keys() & y.keys())
        elif tx is frozenset and ty is frozenset:
            same = _sets_equal3(x, y)
            if same is False:
                return False
            undecided = undecided or same is U
        elif isinstance(x, _STRUCTURES) or isinstance(y, _STRUCTURES):
            return False  # a list, set or map never equals a value of another kind
        else:
            same = safe_compare("==", x, y)
            if same is False:
                return False
            undecided = undecided or same is U
    return U if undecided else True


def _same_result(a: FMap, b: FMap) -> bool:
    """Two simulated open records that are one call's result: a fresh value among their
    fields names the call that made it, so the fields nobody has seen are the same too."""
    if a is b:
        return True  # one value (a call makes a new record)
    if getattr(a, "edited", False) or getattr(b, "edited", False):
        return False  # a field set since: it may hold another call's fresh value
    return dict.__eq__(a, b) and any(type(v) is Fresh for v in a.values())


def _keys_observed(m: FMap) -> bool:
    return all(type(k) is str for k in m) or not any(map(_contains_unknown, m))


def vague_members(coll: Any) -> tuple[Any, ...]:
    """The items of a list or set (the keys of a map) that are or hold something unobserved,
    remembered per collection (states share them, and steps ask again)."""
    known = _VAGUE.get(id(coll))
    if known is not None and known[0] is coll:
        return known[1]
    members = coll.keys() if isinstance(coll, FMap) else coll
    kinds = set(map(type, members))
    if kinds <= _OBSERVED_SCALARS or _flat_and_observed(members, kinds):
        vague: tuple[Any, ...] = ()
    else:
        charge(len(coll))
        vague = tuple(filter(_contains_unknown, members))
    if len(_VAGUE) >= _ORDERED_KEPT:
        _VAGUE.clear()
    _VAGUE[id(coll)] = (coll, vague)
    return vague


_VAGUE: dict[int, tuple[Any, tuple[Any, ...]]] = {}


def _flat_and_observed(members: Any, kinds: set[type]) -> bool:
    """Whether every member is a list, set or plain map of text, numbers and the like (told
    at C speed: a set of 100,000 pairs or records)."""
    if kinds <= {tuple, frozenset}:
        parts: Iterable[Any] = chain.from_iterable(members)
    elif kinds == {FMap}:
        parts = chain(chain.from_iterable(members), chain.from_iterable(map(FMap.values, members)))
    else:
        return False
    return set(map(type, parts)) <= _OBSERVED_SCALARS


def _sets_equal3(a: frozenset[Any], b: frozenset[Any]) -> Any:
    """``a == b`` for sets that may hold unknowns: false when an item of one is known to
    differ from every item of the other (unknown items may turn out equal to each other, so
    sizes decide nothing), true when every item of each is known equal to one of the other."""
    if not _contains_unknown(a) and not _contains_unknown(b):
        return a == b
    matched = True
    for one, other in ((a, b), (b, a)):
        vague = vague_members(other)
        for x in one:
            if x in other and not _contains_unknown(x):
                continue  # (told by hashing: its equal is there)
            # only an item holding unknowns may equal a known item it differs from
            found = any_equal3(x, other if _contains_unknown(x) else vague)
            if found is False:
                return False
            matched = matched and found is True
    return True if matched else U


def contains(item: Any, coll: Any) -> bool:
    if isinstance(coll, str):
        if not isinstance(item, str):
            raise EvalError(f"`in` on a string needs a string, got {type_name(item)}")
        return item in coll
    if coll is None:
        raise EvalError("`in` on null")
    try:
        return item in coll
    except TypeError:
        raise EvalError(f"cannot test membership in {type_name(coll)}") from None


def safe_contains(item: Any, coll: Any) -> Any:
    if item is U or coll is U or type(coll) is Fresh or type(coll) is Bounded:
        return U
    if type(item) is Bounded:
        return _interval_contains(item, coll)
    if isinstance(item, _STRUCTURES) and isinstance(coll, _STRUCTURES):
        # a list, set or map (a record): equal item by item, where an item holding unknowns (a
        # simulated open record among them) may equal one it differs from as a Python value,
        # and differ from one it equals as a Python value (the same open record may hold
        # other undeclared fields than the one in the collection)
        if _contains_unknown(item):
            found = any_equal3(item, coll)
        elif contains(item, coll):
            return True
        else:  # only an item holding unknowns may equal a known item it differs from
            found = any_equal3(item, vague_members(coll))
        return U if found is False and type(coll) is OpenRecord else found
    if contains(item, coll):
        return True
    if type(coll) is OpenRecord:
        return U  # a field a simulated open record does not declare may be there
    if isinstance(coll, (frozenset, FMap, tuple)):
        if U in coll:
            return U
        # a fresh value's text is not known: it may equal any text, but only itself among fresh
        # and none that existed before it was made
        if isinstance(item, Fresh):
            if any(
                x is not None and not isinstance(x, Fresh) and not _fresh_apart(item, x)
                for x in coll
            ):
                return U
        elif item is not None and any(
            isinstance(x, Fresh) and not _fresh_apart(item, x) for x in coll
        ):
            return U
        elif _is_number(item) and any(
            type(x) is Bounded and interval_compare("==", item, x) is not False for x in coll
        ):
            return U  # a number a bounded unknown in the collection may be
    return False


def any_equal3(item: Any, coll: Any) -> Any:
    """Whether ``item`` equals an item of ``coll`` (a key of a map), three-valued with
    :func:`equal3`: true when one is known equal, false when every one is known to differ."""
    charge(len(coll))
    found: Any = False
    for x in coll:
        same = equal3(item, x)
        if same is True:
            return True
        if same is U:
            found = U
    return found


def _fresh_apart(a: Any, b: Any) -> bool:
    """One is a fresh value and the other a text that existed before it was made."""
    if type(a) is Fresh and type(b) is str:
        return a.existed_before(b)
    if type(b) is Fresh and type(a) is str:
        return b.existed_before(a)
    return False


def failure_text(exc: BaseException) -> str:
    """What went wrong when evaluating a contract expression raised ``exc``, in the
    contract's terms."""
    if isinstance(exc, EvalError):
        return str(exc)
    if isinstance(exc, KeyError):
        from .values import show

        return f"key {show(exc.args[0]) if exc.args else '?'} is missing"
    if isinstance(exc, ZeroDivisionError):
        return "division by zero"
    if isinstance(exc, RecursionError):
        return "the expression nests too deeply"
    if isinstance(exc, MemoryError):
        return "the value is too large to build"
    if isinstance(exc, AttributeError):
        return "a value of the wrong type (e.g. null where a record was expected)"
    return f"{type(exc).__name__}: {exc}"


def safe_not(a: Any) -> Any:
    return U if a is U else not a


EVAL_FAILURES = (EvalError, KeyError, IndexError, TypeError, ZeroDivisionError, AttributeError)
"""What evaluating a contract expression can raise (the engine reports each as EVAL_ERROR)."""


def _maybe(b: Callable[[], Any]) -> Any:
    """The right side of ``and``/``or`` when the left is unknown: in the worlds where it is
    evaluated at all, the guard on the left held, so an error here (``k in m and m[k]``) means
    only that the value is unknown."""
    try:
        return b()
    except EVAL_FAILURES:
        return U


def safe_and(a: Any, b: Callable[[], Any]) -> Any:
    if a is False:
        return False
    if a is True:
        return b()
    return False if _maybe(b) is False else U


def safe_or(a: Any, b: Callable[[], Any]) -> Any:
    if a is True:
        return True
    if a is False:
        return b()
    return True if _maybe(b) is True else U


def truth(value: Any, what: str = "a condition") -> bool:
    if value is True or value is False:
        return value
    raise EvalError(f"{what} must be true or false, got {type_name(value)}")


def neg(a: Any) -> Any:
    if a is U:
        return U
    if type(a) is Bounded:
        return bounded(-a.hi, -a.lo, a.whole)
    if type(a) is Fresh:
        raise EvalError("`-` needs a number, got a fresh value (text)")
    if not isinstance(a, (int, float)):
        raise EvalError(f"`-` needs a number, got {type_name(a)}")
    return -a  # a bool is a number, as in Python: -true == -1


def attr(obj: Any, name: str) -> Any:
    if obj is U:
        return U
    if isinstance(obj, FMap):
        return obj.get(name)
    raise EvalError(f"{type_name(obj)} has no field `{name}`")


def index(obj: Any, key: Any) -> Any:
    if obj is U or key is U:
        return U
    if type(obj) is Fresh:
        return U  # a character of text that is not known yet
    if isinstance(obj, FMap) and isinstance(key, _STRUCTURES) and safe_contains(key, obj) is U:
        return U  # a key that may be one of the map's keys, as `in` says (and `get`)
    try:
        return obj[key]
    except KeyError:
        from .values import show

        if isinstance(obj, FMap) and (
            isinstance(key, Fresh) or any(isinstance(k, Fresh) for k in obj)
        ):
            return U  # a fresh key's text is unknown: it may be any of the map's keys
        if type(obj) is OpenRecord:
            return U  # a field a simulated open record does not declare may be there
        raise EvalError(f"key {show(key)} is not in the map") from None
    except IndexError:
        raise EvalError(f"index {key} is out of range (length {len(obj)})") from None
    except TypeError:
        raise EvalError(f"{type_name(obj)} cannot be indexed by {type_name(key)}") from None


class _Budget(threading.local):
    """How much looping the current step may still do (per thread)."""

    iterations = 0
    next_clock = 0  # the clock is read again once ``iterations`` reaches this (see charge)
    deadline = float("inf")
    seconds = 10.0
    run_deadline = float("inf")  # when the whole simulation (``max_seconds``) must stop


class OutOfTime(BaseException):
    """The whole simulation's time ran out inside a step. Not the contract's fault, so it is a
    ``BaseException``: it passes the handlers that turn contract failures into EVAL_ERROR, up
    to the explorer, which stops there and says so."""


@contextlib.contextmanager
def run_budget(deadline: float) -> Iterator[None]:
    """Bound every step run inside by the ``time.monotonic()`` ``deadline`` of a whole run:
    a step that reaches it raises :class:`OutOfTime`."""
    outer = BUDGET.run_deadline
    BUDGET.run_deadline = min(outer, deadline)
    try:
        yield
    finally:
        BUDGET.run_deadline = outer


BUDGET = _Budget()
_NO_DEADLINE = float("inf")
MAX_ITERATIONS = 5_000_000
"""Items that quantifiers and ``for`` loops may visit in one step, all nested loops together."""
STEP_SECONDS = 10.0
"""Wall-clock time one step may take; only pathological contracts come near it."""
CLOCK_EVERY = 256
"""Items charged between two readings of the clock by :func:`charge` (and at the start of a
step's budget): the time limits are tested at most this many items late, a few milliseconds
even for items of costly bodies, while ordinary steps (a few text sums) read it not at all."""


class step_budget:  # noqa: N801 - used like the function (a context manager) it was
    """Bound the looping of one step (or one fast plan check): a contract from a stranger can nest
    quantifiers over large collections, and the simulator must still answer. (A class, not a
    generator: replay enters it for every step.)"""

    __slots__ = ("seconds", "outer")

    def __init__(self, seconds: float = STEP_SECONDS) -> None:
        self.seconds = seconds

    def __enter__(self) -> None:
        budget = BUDGET
        self.outer = (budget.iterations, budget.next_clock, budget.deadline, budget.seconds)
        budget.iterations = 0
        budget.next_clock = CLOCK_EVERY  # the clock was just read
        budget.deadline = time.monotonic() + self.seconds
        budget.seconds = self.seconds

    def __exit__(self, *exc: object) -> None:
        BUDGET.iterations, BUDGET.next_clock, BUDGET.deadline, BUDGET.seconds = self.outer


def charge(n: int) -> None:
    """Account for ``n`` loop iterations against the current step's budget."""
    budget = BUDGET
    if budget.deadline == _NO_DEADLINE:
        return
    iterations = budget.iterations = budget.iterations + n
    if iterations > MAX_ITERATIONS:
        raise EvalError(
            f"the step's loops and quantifiers visited more than {MAX_ITERATIONS:,} items"
        )
    if iterations < budget.next_clock:
        return  # (the clock is read once per CLOCK_EVERY items: most steps charge a few)
    budget.next_clock = iterations + CLOCK_EVERY
    now = time.monotonic()
    if now > budget.run_deadline:
        raise OutOfTime
    if now > budget.deadline:
        raise EvalError(
            f"the step ran longer than {budget.seconds:g} s (loops over large collections?)"
        )


def iterate(coll: Any) -> list[Any]:
    """The items of a collection in a deterministic order (sets and maps are sorted)."""
    from .values import order

    if isinstance(coll, (FMap, frozenset, tuple, str)):
        charge(len(coll))
    if isinstance(coll, (FMap, frozenset)):
        known = _ORDERED.get(id(coll))
        if known is not None and known[0] is coll:
            return list(known[1])
        items = sorted(coll.keys() if isinstance(coll, FMap) else coll, key=order)
        if len(_ORDERED) >= _ORDERED_KEPT:
            _ORDERED.clear()
        _ORDERED[id(coll)] = (coll, tuple(items))
        return items
    if isinstance(coll, (tuple, str)):
        return list(coll)
    raise EvalError(f"cannot range over {type_name(coll)}")


_ORDERED: dict[int, tuple[Any, tuple[Any, ...]]] = {}
"""id → (a set or map, its items in order): states share their collections, and every step
ranges over the same ones again (kept like :data:`_SIZES`)."""
_ORDERED_KEPT = 10_000


def _contains_unknown(v: Any) -> bool:
    """Whether a value is or holds something unobserved (unknown, or a fresh value whose text is
    not known yet); states holding one are evaluated with three-valued code."""
    if v is U or isinstance(v, (Fresh, Bounded)):
        return True
    if not isinstance(v, (frozenset, tuple, FMap)):
        return False
    stack = [v]  # without recursion: a value may nest deeper than Python's stack
    while stack:
        coll = stack.pop()
        if type(coll) is OpenRecord:
            return True  # fields nobody has seen
        for part in (coll.keys(), coll.values()) if isinstance(coll, FMap) else (coll,):
            if set(map(type, part)) <= _OBSERVED_SCALARS:
                continue  # (told at C speed: text and numbers hold nothing unobserved)
            for x in part:
                if x is U or isinstance(x, (Fresh, Bounded)):
                    return True
                if isinstance(x, (frozenset, tuple, FMap)):
                    stack.append(x)
    return False


_OBSERVED_SCALARS = {str, int, float, bool, type(None)}


contains_unknown = _contains_unknown


def type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, frozenset):
        return "set"
    if isinstance(v, tuple):
        return "list"
    if isinstance(v, FMap):
        return "map or record"
    if isinstance(v, Unknown):
        return "unknown"
    if isinstance(v, Fresh):
        return "fresh value"
    if isinstance(v, Bounded):
        return "bounded unknown number"
    return type(v).__name__


# ------------------------------------------------------------------------------ collection updates


_C = TypeVar("_C", bound=Sized)

MAX_ITEMS = 100_000
"""No collection in a simulated state grows beyond this many items (a contract from a stranger must
not eat the machine's memory)."""


MAX_VALUE_SIZE = 20_000_000
"""The largest value (each state variable, each constant) a simulation holds, in characters
of text plus one for every item, number and key — counted as the value would be written out, so
a list holding the same long string many times is as large as its text. Reports and JSON stay
bounded by it."""
MAX_VALUE_DEPTH = 200
"""The deepest nesting of collections in a value (a list of lists of …)."""
TEXT_PER_ITEM = 20
"""Characters of text built that cost as much of a step's budget as one loop item."""


def value_size(value: Any, limit: int = MAX_VALUE_SIZE) -> int:
    """The written size of ``value`` (see :data:`MAX_VALUE_SIZE`), counted up to just past
    ``limit``: the count stops there, so it costs at most ``limit`` steps whatever the value.
    A value nested deeper than :data:`MAX_VALUE_DEPTH` counts as larger than any limit.

    Flat collections are measured at C speed (a state update copies them anyway), and the sizes
    of nested collections are remembered: states share them, so a map of records that gains one
    record is measured in time proportional to its keys, not to all of its records."""
    return _size(value, 0, limit)[0]


_COLLECTIONS = {tuple, frozenset, FMap, OpenRecord}
_MAPS = {FMap, OpenRecord}
_SIZES: dict[int, tuple[Any, int, int]] = {}  # id → (the value, its size, its height)
_SIZES_KEPT = 100_000
_SIZE_CHUNK = 4_096
"""Flat children measured together (see :func:`_size`)."""


def _size(v: Any, depth: int, limit: int) -> tuple[int, int]:
    """(size, height) of ``v``, the size counted only up to just past ``limit``."""
    kind = type(v)
    if kind is str:
        return len(v) + 1, 0
    if kind not in _COLLECTIONS:
        return 1, 0
    if depth >= MAX_VALUE_DEPTH:
        return limit + 1, 0
    total = 1 + len(v)
    height = 1
    for part in (v.keys(), v.values()) if kind in _MAPS else (v,):
        kinds = set(map(type, part))
        if str in kinds:
            total += sum(map(len, part if len(kinds) == 1 else _strings(part)))
        if not kinds & _COLLECTIONS:
            continue
        children = iter(
            part if kinds <= _COLLECTIONS else [x for x in part if type(x) in _COLLECTIONS]
        )
        # flat tuples and sets (a set of 100,000 pairs) are measured a chunk at a time at C speed,
        # as one flat collection of their items; a chunk with deeper values, one child at a time
        # (not maps: iterating one gives its keys only, and a simulated open record is a map)
        bulk = not kinds & _MAPS and depth + 1 < MAX_VALUE_DEPTH
        while chunk := list(islice(children, _SIZE_CHUNK)):
            if bulk:
                items = list(chain.from_iterable(chunk))
                inner_kinds = set(map(type, items))
                if not inner_kinds & _COLLECTIONS:
                    total += len(chunk) + len(items)  # each child and each of its items
                    if str in inner_kinds:
                        total += sum(map(len, items if len(inner_kinds) == 1 else _strings(items)))
                    height = max(height, 2)
                    if total > limit:
                        return total, height
                    continue
            for x in chunk:
                known = _SIZES.get(id(x))
                if known is not None and known[0] is x and depth + 1 + known[2] <= MAX_VALUE_DEPTH:
                    size, inner = known[1], known[2]
                else:
                    size, inner = _size(x, depth + 1, limit - total)
                    if size > limit - total:
                        return total + size, height
                    if len(_SIZES) >= _SIZES_KEPT:
                        _SIZES.clear()
                    _SIZES[id(x)] = (x, size, inner)
                total += size
                height = max(height, inner + 1)
                if total > limit:
                    return total, height
    return total, height


def _strings(items: Any) -> list[str]:
    return [x for x in items if type(x) is str]


def check_value_size(value: Any, what: str = "a value") -> None:
    """Refuse a value larger than :data:`MAX_VALUE_SIZE` (or nested deeper than
    :data:`MAX_VALUE_DEPTH`) with an :class:`EvalError`."""
    if value_size(value, MAX_VALUE_SIZE) > MAX_VALUE_SIZE:
        raise EvalError(
            f"{what} would grow beyond {MAX_VALUE_SIZE:,} characters (text, items and keys "
            f"counted as they would be written out) or {MAX_VALUE_DEPTH} levels of nesting"
        )


def charge_text(chars: int) -> None:
    """Account for building ``chars`` characters of text against the step's budget: a step
    cannot build more than ``MAX_ITERATIONS * TEXT_PER_ITEM`` characters, however it does it."""
    if chars >= TEXT_PER_ITEM:
        charge(chars // TEXT_PER_ITEM)


def _bounded(coll: _C) -> _C:
    if len(coll) > 10_000:
        charge(0)  # updating a large collection copies it: keep an eye on the clock
    if len(coll) > MAX_ITEMS:
        raise EvalError(f"a collection would grow beyond {MAX_ITEMS:,} items")
    return coll


def coll_add(coll: Any, item: Any) -> Any:
    if coll is U:
        return U
    if isinstance(coll, frozenset) and item in coll:
        return coll
    return _bounded(coll | frozenset((item,)))


def coll_discard(coll: Any, item: Any) -> Any:
    if coll is U:
        return U
    if isinstance(coll, FMap):
        return coll.without(item)
    if isinstance(coll, tuple):
        if item in coll:
            i = coll.index(item)
            return coll[:i] + coll[i + 1 :]
        return coll
    return coll - frozenset((item,))


def coll_append(coll: Any, item: Any) -> Any:
    if coll is U:
        return U
    return _bounded(coll + (item,))


def coll_clear(coll: Any) -> Any:
    if coll is U:
        return U
    return type(coll)()


def coll_set(coll: Any, key: Any, value: Any) -> Any:
    """``coll[key] = value`` on an immutable map, record or list, returning the new collection."""
    if coll is U or key is U:
        return U
    if isinstance(coll, FMap):
        return _bounded(coll.set(key, value)) if key not in coll else coll.set(key, value)
    if isinstance(coll, tuple):
        if not isinstance(key, int) or not -len(coll) <= key < len(coll):
            raise EvalError(f"index {key} is out of range (length {len(coll)})")
        items = list(coll)
        items[key] = value
        return tuple(items)
    raise EvalError(f"{type_name(coll)} cannot be updated with `[…] =`")


def _position(coll: tuple[Any, ...], at: Any, method: str, end: bool = False) -> int:
    """A list position as Python reads it (negative counts from the end); out of range is an
    :class:`EvalError` (with ``end``, for ``insert``, the position just past the last item is
    allowed)."""
    if isinstance(at, bool) or not isinstance(at, int):
        raise EvalError(f"`{method}` needs an int position, got {type_name(at)}")
    size = len(coll)
    if not -size <= at < size + (1 if end else 0):
        raise EvalError(f"`{method}`: position {at} is out of range (length {size})")
    return at + size if at < 0 else at


def coll_pop(coll: Any) -> Any:
    """``xs.pop()``: a list without its last item; an empty list is an error (as in Python)."""
    if coll is U:
        return U
    if not coll:
        raise EvalError("`pop` on an empty list")
    return coll[:-1]


def coll_remove_at(coll: Any, at: Any) -> Any:
    """``xs.remove_at(i)``: a list without the item at position ``i``."""
    if coll is U or at is U:
        return U
    i = _position(coll, at, "remove_at")
    return coll[:i] + coll[i + 1 :]


def coll_insert(coll: Any, at: Any, item: Any) -> Any:
    """``xs.insert(i, v)``: ``v`` put before position ``i`` (``len(xs)``: at the end). Unlike
    Python's, a position beyond the ends is an error, not clamped."""
    if coll is U or at is U:
        return U
    i = _position(coll, at, "insert", end=True)
    return _bounded(coll[:i] + (item,) + coll[i:])


METHODS: dict[str, Callable[..., Any]] = {
    "add": coll_add,
    "remove": coll_discard,
    "discard": coll_discard,
    "append": coll_append,
    "clear": coll_clear,
    "pop": coll_pop,
    "remove_at": coll_remove_at,
    "insert": coll_insert,
}


def now_text(now: datetime) -> str:
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def plus(a: Any, b: Any) -> Any:
    """``a + b`` in compiled fast code: plain addition with the growth bounds of :func:`arith`."""
    if type(a) is str and type(b) is str:  # paths and messages: the commonest sum
        chars = len(a) + len(b)
        if chars < TEXT_PER_ITEM:
            return a + b
        if chars > MAX_STRING:
            raise EvalError("a string would grow beyond 10 MB")
        charge(chars // TEXT_PER_ITEM)
        return a + b
    if (
        type(a) is int
        and type(b) is int
        and -(1 << 62) < a < (1 << 62)
        and -(1 << 62) < b < (1 << 62)
    ):
        return a + b
    return arith("+", a, b)


def times(a: Any, b: Any) -> Any:
    return arith("*", a, b)


# --------------------------------------------------------------------------- bounded unknowns


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and x == x  # bools count (0 and 1), NaN does not


def bounded(lo: Any, hi: Any, whole: bool | None = None) -> Any:
    """``unknown in [lo, hi]``: a :class:`~.values.Bounded` number, or the number itself when
    ``lo == hi``. ``whole`` (an integer) defaults to both bounds being ints. An empty range
    (``lo > hi``) or a bound that is not a number is an :class:`EvalError`."""
    if lo is U or hi is U or type(lo) is Bounded or type(hi) is Bounded:
        # a bound that is itself not known: the widest interval that is sure to hold
        lo_b = lo.lo if type(lo) is Bounded else None
        hi_b = hi.hi if type(hi) is Bounded else None
        if lo_b is None or hi_b is None:
            return U
        lo, hi = lo_b, hi_b
    for b in (lo, hi):
        if not _is_number(b) or b in (float("inf"), float("-inf")):
            raise EvalError(
                f"the bounds of `unknown in [lo, hi]` must be finite numbers, got {b!r}"
            )
    if whole is None:
        whole = not isinstance(lo, float) and not isinstance(hi, float)
    if whole:
        lo, hi = _ceil(lo), _floor(hi)
    if lo > hi:
        raise EvalError(f"`unknown in [{lo}, {hi}]` is an empty range: {lo} > {hi}")
    if lo == hi:
        return int(lo) if whole else lo
    return Bounded(int(lo) if whole else lo, int(hi) if whole else hi, whole)


def _floor(x: Any) -> int:
    return int(x) if x >= 0 or x == int(x) else int(x) - 1


def _ceil(x: Any) -> int:
    return -_floor(-x)


def _bounds(x: Any) -> tuple[Any, Any] | None:
    if type(x) is Bounded:
        return x.lo, x.hi
    if _is_number(x):
        return x, x
    return None


def interval_compare(op: str, a: Any, b: Any) -> Any:
    """A comparison with a bounded unknown: decided where the intervals decide it."""
    ab, bb = _bounds(a), _bounds(b)
    if ab is None or bb is None:
        if op in ("==", "!=") and (a is None or b is None):
            return op == "!="  # a number is never null
        return U
    (alo, ahi), (blo, bhi) = ab, bb
    if op in ("==", "!="):
        apart = ahi < blo or bhi < alo
        return (op == "!=") if apart else U
    if op in (">", ">="):
        (alo, ahi), (blo, bhi) = (blo, bhi), (alo, ahi)
        op = "<" if op == ">" else "<="
    if op == "<":
        return True if ahi < blo else False if alo >= bhi else U
    return True if ahi <= blo else False if alo > bhi else U


def interval_arith(op: str, a: Any, b: Any) -> Any:
    """Arithmetic with a bounded unknown: ``+ - *`` and ``/`` by a number keep an interval
    (sound: every value the operands can take lands inside it); the rest is plain unknown."""
    ab, bb = _bounds(a), _bounds(b)
    if ab is None or bb is None:
        return U
    whole = all(x.whole if type(x) is Bounded else not isinstance(x, float) for x in (a, b))
    (alo, ahi), (blo, bhi) = ab, bb
    if op == "+":
        return bounded(alo + blo, ahi + bhi, whole)
    if op == "-":
        return bounded(alo - bhi, ahi - blo, whole)
    if op == "*":
        products = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
        return bounded(min(products), max(products), whole)
    if op == "/" and type(b) is not Bounded:
        if b == 0:
            raise EvalError("division by zero")
        ends = (alo / b, ahi / b)
        return bounded(min(ends), max(ends), False)
    return U


def _interval_contains(item: Any, coll: Any) -> Any:
    """``item in coll`` where a bounded unknown takes part: false when no number of the
    interval can be in the collection, otherwise unknown."""
    if isinstance(coll, str):
        return U
    if not isinstance(coll, (frozenset, FMap, tuple)):
        return contains(item, coll)
    for x in coll:
        if x is U:
            return U
        if interval_compare("==", item, x) is not False:
            return U
    return False


def narrowed(value: Bounded, op: str, other: Any) -> Any:
    """What ``value OP other`` (known to hold) leaves of the interval: a narrower bounded
    unknown, a number, or ``value`` itself when the comparison says nothing new. Raises
    :class:`EvalError` when no number of the interval satisfies it."""
    ob = _bounds(other)
    if ob is None or op == "!=":
        if op == "!=" and _is_number(other) and value.whole:
            if other == value.lo:
                return bounded(value.lo + 1, value.hi, True)
            if other == value.hi:
                return bounded(value.lo, value.hi - 1, True)
        return value
    olo, ohi = ob
    lo, hi = value.lo, value.hi
    step = 1 if value.whole else 0
    if op == "==":
        lo, hi = max(lo, olo), min(hi, ohi)
    elif op == "<":
        hi = min(hi, ohi - step if value.whole and ohi == int(ohi) else ohi)
    elif op == "<=":
        hi = min(hi, ohi)
    elif op == ">":
        lo = max(lo, olo + step if value.whole and olo == int(olo) else olo)
    elif op == ">=":
        lo = max(lo, olo)
    return bounded(lo, hi, value.whole)
