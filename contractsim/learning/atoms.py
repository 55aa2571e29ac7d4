"""The hypothesis language: terms built from a call's parameters and the state before it, and
atoms (true/false facts about one call) over them. Everything here is plain data evaluated in
Python over the recorded values; no code from a trace is ever run.

Terms (:class:`Term`):

* ``p`` — a parameter;
* ``v + "/" + p`` — a string parameter below a string state variable (a path in a directory;
  behind ``p != null`` for an optional ``p``), and ``v + "/" + p + "/" + q`` (an entry inside an
  entry);
* ``(p, q, …)`` — a tuple of parameters, when some state collection holds tuples of that length;
* ``parent(v)`` — the part of a string state variable before its last ``/``.

Atoms (:class:`Atom`): ``T in S`` and ``T not in S`` (S a state set, list or map's keys),
``v`` / ``not v`` (a state boolean), ``p == c`` / ``p != c`` (an observed constant),
``c in p`` / ``not (c in p)`` (a one-character constant in a string parameter),
``v == w`` / ``v != w`` (two text state variables), frequent text constants of a parameter with
an open set of values, atoms over an optional parameter in a strict (``p != null and A``) and a
vacuous (``p == null or A``) form,
``p <= v`` … (numeric parameter against a numeric state value), ``len(S) == 0`` / ``> 0``,
and for a parameter whose values vary in kind (a dynamically typed tool) ``p is T`` /
``p is not T`` (T one of the observed kinds: ``str``, ``int``, ``float``, ``number``, ``bool``,
``null``, ``list``, ``list[str]``, ``map``) and ``truthy(p)`` / ``not truthy(p)``.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..compiler.lib import BUILTIN_FUNCS

MISSING = object()
"""The value of a term that cannot be formed for a call (a parameter that was not passed …)."""

PUNCTUATION = '/\\|?%*:"<>'
"""One-character constants tried inside string parameters."""

FREQUENT_SHARE = 0.05
"""A text parameter with more than 12 values gets constants for the values (at most 6) seen in
at least this share of its tool's calls: the special names a tool treats apart (``..``, ``/``)."""


def _literal(value: Any) -> str:
    """A contract literal for a JSON-like scalar or tuple."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(_literal(v) for v in value) + ")"
    text = str(value)
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    escaped = escaped.replace("\t", "\\t").replace("\r", "\\r")
    return '"' + escaped + '"'


def literal(value: Any) -> str:
    """A contract literal for a JSON-like scalar or tuple (strings escaped)."""
    return _literal(value)


@dataclass(frozen=True)
class Term:
    """A value computed from a call's arguments and the state before it."""

    text: str
    """How the term is written in a contract."""
    fn: Callable[[Mapping[str, Any], Mapping[str, Any]], Any]
    """(args, state) → value, or :data:`MISSING`."""
    params: tuple[str, ...] = ()
    let: str = ""
    """The ``let NAME = EXPR`` the term's text needs in the tool (a conversion), or empty."""
    guard: str = ""
    """A condition the text needs to type check (``p != null`` for an optional parameter
    ``p``), written before every atom and effect that reads the term; empty: none."""

    def __call__(self, args: Mapping[str, Any], state: Mapping[str, Any]) -> Any:
        try:
            return self.fn(args, state)
        except (TypeError, KeyError, ValueError):
            return MISSING


@dataclass(frozen=True)
class Atom:
    """A fact about one call, true or false before it."""

    text: str
    fn: Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
    params: tuple[str, ...] = ()
    negation: str = ""
    """The text of the atom's negation (for explanations)."""
    constant: bool = False
    """``p == c`` or ``p != c``: a parameter against a constant."""
    special: bool = False
    """``p == c`` for a frequent value of a parameter with an open set of values (``cd ..``):
    a clause may add up to two of them to an atom that is no constant comparison."""

    def __call__(self, args: Mapping[str, Any], state: Mapping[str, Any]) -> bool:
        try:
            return bool(self.fn(args, state))
        except (TypeError, KeyError, ValueError):
            return False


def _param(name: str) -> Term:
    def get(args: Mapping[str, Any], state: Mapping[str, Any]) -> Any:
        return args.get(name, MISSING)

    return Term(name, get, (name,))


def _below(var: str, name: str, optional: bool = False) -> Term:
    def get(args: Mapping[str, Any], state: Mapping[str, Any]) -> Any:
        p, v = args.get(name, MISSING), state.get(var, MISSING)
        if not isinstance(p, str) or not isinstance(v, str):
            return MISSING
        return v + "/" + p

    return Term(f'{var} + "/" + {name}', get, (name,), guard=f"{name} != null" if optional else "")


def _below_two(var: str, outer: str, inner: str) -> Term:
    """``v + "/" + outer + "/" + inner``: the entry ``inner`` inside the directory ``outer`` of
    the directory ``v`` (where ``cp`` and ``mv`` put a file into a folder)."""

    def get(args: Mapping[str, Any], state: Mapping[str, Any]) -> Any:
        p, q, v = args.get(outer, MISSING), args.get(inner, MISSING), state.get(var, MISSING)
        if not (isinstance(p, str) and isinstance(q, str) and isinstance(v, str)):
            return MISSING
        return v + "/" + p + "/" + q

    return Term(f'{var} + "/" + {outer} + "/" + {inner}', get, (outer, inner))


def path_terms(
    params: Sequence[str], optional: Sequence[str], string_vars: Sequence[str]
) -> list[Term]:
    """Paths in a directory held by a string state variable ``v``: ``v + "/" + p`` for every
    text parameter ``p`` (behind ``p != null`` when ``p`` is optional) and
    ``v + "/" + p + "/" + q`` for two required text parameters (an entry inside an entry)."""
    out: list[Term] = []
    for var in string_vars:
        out += [_below(var, p) for p in params]
        out += [_below(var, p, optional=True) for p in optional]
    for var in string_vars:
        out += [_below_two(var, p, q) for p, q in itertools.permutations(params, 2)]
    return out


def _tuple(names: Sequence[str]) -> Term:
    def get(args: Mapping[str, Any], state: Mapping[str, Any]) -> Any:
        values = tuple(args.get(n, MISSING) for n in names)
        return MISSING if any(v is MISSING for v in values) else values

    return Term("(" + ", ".join(names) + ")", get, tuple(names))


def _as_float(name: str) -> Term:
    """``float(p)``: the language's conversion (null when the text is no number)."""
    convert = BUILTIN_FUNCS["float"]

    def get(args: Mapping[str, Any], state: Mapping[str, Any]) -> Any:
        value = args.get(name, MISSING)
        return MISSING if value is MISSING else convert(value)

    return Term(f"{name}_number", get, (name,), f"let {name}_number = float({name})")


def _normalized(name: str) -> Term:
    """``lower(strip(str(p)))``: a name looked up the way tools often do (``name.strip().lower()``);
    formed for text only (what ``str`` makes of other values is the language's business)."""

    def get(args: Mapping[str, Any], state: Mapping[str, Any]) -> Any:
        value = args.get(name, MISSING)
        return value.strip().lower() if isinstance(value, str) else MISSING

    return Term(f"{name}_key", get, (name,), f"let {name}_key = lower(strip(str({name})))")


def conversion_terms(
    params: Sequence[str], calls: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]
) -> list[Term]:
    """``float(p)`` for a parameter seen both as a number and as text, and
    ``lower(strip(str(p)))`` for a text parameter seen with surrounding space or capitals."""
    seen: dict[str, set[str]] = {p: set() for p in params}
    padded: set[str] = set()
    for args, _ in calls:
        for p in params:
            value = args.get(p, MISSING)
            seen[p] |= value_kinds([value])
            if isinstance(value, str) and value != value.strip().lower():
                padded.add(p)
    out = []
    for p in params:
        if "str" in seen[p] and seen[p] & {"int", "float"}:
            out.append(_as_float(p))
        if p in padded:
            out.append(_normalized(p))
    return out


Check = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
"""An atom's test: (args, state) → true or false."""


def _state_is(var: str, value: bool) -> Check:
    def check(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        return s.get(var) is value

    return check


def _texts_equal(left: str, right: str, equal: bool, *, in_state: bool) -> Check:
    """Two texts (state variables when ``in_state``, else parameters) are equal / differ."""

    def check(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        values = s if in_state else a
        x, y = values.get(left, MISSING), values.get(right, MISSING)
        return isinstance(x, str) and isinstance(y, str) and (x == y) is equal

    return check


def _guarded(term: Term, atoms: list[Atom]) -> list[Atom]:
    """The atoms of a term behind a guard (an optional parameter ``p``) in two forms:
    ``p != null and A`` and ``p == null or A``; other atoms as they are."""
    if not term.guard:
        return atoms
    out = []
    for atom in atoms:
        out += [_strict(atom, term.guard), _vacuous(atom, term.params[0])]
    return out


def _vacuous(atom: Atom, param: str) -> Atom:
    """``p == null or A``: an atom over an optional parameter that holds when it is absent."""

    def check(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        return a.get(param) is None or atom(a, s)

    return Atom(f"{param} == null or {atom.text}", check, atom.params)


def _strict(atom: Atom, guard: str) -> Atom:
    """``p != null and A`` (``guard`` first, for the checker's narrowing)."""
    return Atom(f"{guard} and {atom.text}", atom.fn, atom.params, atom.negation)


def _state_size(var: str, *, empty: bool) -> Check:
    def check(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        size = _size(s.get(var))
        return size == 0 if empty else size > 0

    return check


def _param_equals(param: str, value: Any, equal: bool) -> Check:
    def check(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        return bool(_eq(a.get(param, MISSING), value)) is equal

    return check


def _char_absent(param: str, char: str) -> Check:
    def check(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        value = a.get(param)
        return isinstance(value, str) and char not in value

    return check


def _param_compared(param: str, var: str, cmp: Callable[[Any, Any], bool]) -> Check:
    def check(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        x, y = _num(a.get(param)), _num(s.get(var))
        return x is not None and y is not None and cmp(a[param], s[var])

    return check


def _param_test(param: str, test: Callable[[Any], bool], want: bool) -> Check:
    def check(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        return param in a and bool(test(a[param])) is want

    return check


def _number_compared(
    number: Callable[[Mapping[str, Any], Mapping[str, Any]], float | None],
    cmp: Callable[[Any, Any], bool],
    var: str | None,
) -> Check:
    """``c op 0`` (``var`` None) or ``c op var`` for a conversion ``c`` that is not null."""

    def check(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        n = number(a, s)
        m = 0.0 if var is None else _num(s.get(var))
        return n is not None and m is not None and cmp(n, m)

    return check


def _derived_atoms(term: Term, numeric: Sequence[str]) -> list[Atom]:
    """Atoms over a conversion term: ``float(p) != null``, its sign and its comparisons with
    numeric state; ``lower(strip(str(p))) != ""``."""
    out: list[Atom] = []
    if term.let.endswith(f"float({term.params[0]})"):

        def number(a: Mapping[str, Any], s: Mapping[str, Any]) -> float | None:
            value = term(a, s)
            return None if value is MISSING else _num(value)

        def pair(text: str, neg: str, fn: Callable[[Any, Any], bool]) -> list[Atom]:
            return [
                Atom(text, fn, term.params, neg),
                Atom(neg, lambda a, s: not fn(a, s), term.params, text),
            ]

        out += pair(
            f"{term.text} != null",
            f"{term.text} == null",
            lambda a, s: number(a, s) is not None,
        )
        for op, cmp in _COMPARISONS:
            out.append(
                Atom(
                    f"{term.text} != null and {term.text} {op} 0",
                    _number_compared(number, cmp, None),
                    term.params,
                )
            )
            for var in numeric:
                out.append(
                    Atom(
                        f"{term.text} != null and {term.text} {op} {var}",
                        _number_compared(number, cmp, var),
                        term.params,
                    )
                )
    elif term.let:
        out.append(
            Atom(
                f'{term.text} != ""',
                lambda a, s: (v := term(a, s)) is not MISSING and v != "",
                term.params,
                f'{term.text} == ""',
            )
        )
    return out


def _contains(collection: Any, value: Any) -> bool:
    if value is MISSING or collection is MISSING or collection is None:
        return False
    try:
        return value in collection
    except TypeError:
        return False


def _is_collection(value: Any) -> bool:
    return isinstance(value, frozenset | set | list | tuple | Mapping)


def terms_for(
    params: Sequence[str],
    calls: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    state_kinds: Mapping[str, str],
    tuple_sizes: Iterable[int],
    max_terms: int,
) -> list[Term]:
    """The terms of one tool: its parameters, strings below string state variables, and tuples
    of parameters of the lengths the state's collections hold (at most ``max_terms``)."""
    del calls
    out = [_param(p) for p in params]
    for var, kind in state_kinds.items():
        if kind == "str":
            out += [_below(var, p) for p in params]
    for size in sorted(set(tuple_sizes)):
        if 2 <= size <= 4 and size <= len(params):
            out += [_tuple(c) for c in itertools.permutations(params, size)]
    return out[:max_terms]


def atoms_for(
    params: Sequence[str],
    terms: Sequence[Term],
    calls: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    state_kinds: Mapping[str, str],
    max_atoms: int,
    min_support: int,
    maps: frozenset[str] = frozenset(),
    optional: Collection[str] = (),
) -> list[Atom]:
    """Every atom of the language for one tool's recorded calls, cut at ``max_atoms`` (membership
    first, then booleans, constants, characters, comparisons and emptiness)."""
    atoms: list[Atom] = []
    collections = [v for v, k in state_kinds.items() if k == "collection"]
    for term in terms:
        for var in collections:
            atoms += _guarded(term, _membership(term, var, calls))
    for term in terms:
        if "+" not in term.text:
            continue
        for var in collections:
            atoms += _guarded(term, [_nothing_below(term, var, var in maps)])
    for var, kind in state_kinds.items():
        if kind == "bool":
            atoms.append(Atom(var, _state_is(var, True), (), f"not {var}"))
            atoms.append(Atom(f"not {var}", _state_is(var, False), (), var))
    texts = [v for v, k in state_kinds.items() if k == "str"]
    numeric = [v for v, k in state_kinds.items() if k == "number"]
    for var, other in itertools.combinations(texts, 2):
        # two text state values equal or not (`cwd != root`: not at the top)
        atoms.append(
            Atom(
                f"{var} == {other}",
                _texts_equal(var, other, True, in_state=True),
                (),
                f"{var} != {other}",
            )
        )
        atoms.append(
            Atom(
                f"{var} != {other}",
                _texts_equal(var, other, False, in_state=True),
                (),
                f"{var} == {other}",
            )
        )
    for p in params:
        # keyed by type too: `true` and `1` (equal and of one hash in Python) are two constants
        counts: Counter[tuple[str, Any]] = Counter()
        chars: Counter[str] = Counter()
        for args, _ in calls:
            value = args.get(p, MISSING)
            if isinstance(value, str | int | bool) or value is None:
                counts[(type(value).__name__, value)] += 1
            if isinstance(value, str):
                chars.update(c for c in set(value) if c in PUNCTUATION)
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], str(kv[0][1])))
        special = len(counts) > 12
        if special:
            # an open set of values: only text values frequent enough to be special (`..`)
            often = max(min_support, FREQUENT_SHARE * len(calls))
            ordered = [kv for kv in ordered if kv[0][0] == "str" and kv[1] >= often][:6]
        if 1 < len(counts):  # a small closed set of values, or the frequent ones: constants
            for (_, value), n in ordered:
                if n < min_support:
                    continue
                lit = _literal(value)
                atoms.append(
                    Atom(
                        f"{p} == {lit}",
                        _param_equals(p, value, True),
                        (p,),
                        constant=True,
                        special=special,
                    )
                )
                atoms.append(
                    Atom(f"{p} != {lit}", _param_equals(p, value, False), (p,), constant=True)
                )
        for c, n in sorted(chars.items()):
            if n < min_support:
                continue
            lit = _literal(c)
            char_atom = Atom(f"not ({lit} in {p})", _char_absent(p, c), (p,))
            atoms.append(_vacuous(char_atom, p) if p in optional else char_atom)
        if any(
            isinstance(a.get(p), int | float) and not isinstance(a.get(p), bool) for a, _ in calls
        ):
            for var in numeric:
                for op, fn in _COMPARISONS:
                    atoms.append(
                        Atom(
                            f"{p} {op} {var}",
                            _param_compared(p, var, fn),
                            (p,),
                        )
                    )
    for p in params:
        atoms += type_atoms(p, [args.get(p, MISSING) for args, _ in calls])
    for term in terms:
        atoms += _derived_atoms(term, numeric)
    for var in collections:
        atoms.append(Atom(f"len({var}) == 0", _state_size(var, empty=True)))
        atoms.append(Atom(f"len({var}) > 0", _state_size(var, empty=False)))
    seen: set[str] = set()
    unique = []
    for atom in atoms:
        if atom.text not in seen:
            seen.add(atom.text)
            unique.append(atom)
    return unique[:max_atoms]


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


TYPE_TESTS: tuple[tuple[str, Callable[[Any], bool]], ...] = (
    ("str", lambda v: isinstance(v, str)),
    ("int", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    ("float", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
    ("number", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
    ("bool", lambda v: isinstance(v, bool)),
    ("null", lambda v: v is None),
    ("list", _is_list),
    ("list[str]", lambda v: _is_list(v) and all(isinstance(x, str) for x in v)),
    ("map", lambda v: isinstance(v, Mapping)),
)
"""The type tests of the hypothesis language and their meaning over recorded values, as the
language defines them (docs/language.md, "Type tests and narrowing": an int is a float, a bool
is no number)."""


def value_kinds(values: Iterable[Any]) -> set[str]:
    """The JSON kinds of the observed values (``int``/``float`` apart, ``missing`` ignored)."""
    kinds: set[str] = set()
    for v in values:
        if v is MISSING:
            continue
        if isinstance(v, bool):
            kinds.add("bool")
        elif isinstance(v, int):
            kinds.add("int")
        elif isinstance(v, float):
            kinds.add("float")
        elif isinstance(v, str):
            kinds.add("str")
        elif v is None:
            kinds.add("null")
        elif _is_list(v):
            kinds.add("list")
        elif isinstance(v, Mapping):
            kinds.add("map")
        else:
            kinds.add("other")
    return kinds


def truthy(value: Any) -> bool:
    """Python truthiness, as the language's ``truthy(x)``."""
    if value is MISSING:
        return False
    try:
        return bool(value)
    except (TypeError, ValueError):
        return True


def type_atoms(param: str, values: Sequence[Any]) -> list[Atom]:
    """``p is T`` / ``p is not T`` for the type tests that tell the observed kinds of a
    parameter apart, and ``truthy(p)`` / ``not truthy(p)``: only when the values vary in kind
    (for a parameter of one kind the checker knows the answer: W0630/W0631)."""
    kinds = value_kinds(values)
    if len(kinds - {"null"}) < 2 and not (kinds - {"null"} and "null" in kinds):
        return []
    present = [v for v in values if v is not MISSING]
    out: list[Atom] = []
    for name, test in TYPE_TESTS:
        hits = sum(1 for v in present if test(v))
        if hits == 0 or hits == len(present):
            continue  # says nothing about these values
        if name == "float" and "float" not in kinds:
            continue  # `p is number` says the same
        if name == "list[str]" and hits == sum(1 for v in present if _is_list(v)):
            continue  # every list seen holds text: `p is list` says the same
        out.append(
            Atom(
                f"{param} is {name}",
                _param_test(param, test, True),
                (param,),
                f"{param} is not {name}",
            )
        )
        out.append(
            Atom(
                f"{param} is not {name}",
                _param_test(param, test, False),
                (param,),
                f"{param} is {name}",
            )
        )
    if any(truthy(v) for v in present) and not all(truthy(v) for v in present):
        out.append(
            Atom(
                f"truthy({param})",
                _param_test(param, truthy, True),
                (param,),
                f"not truthy({param})",
            )
        )
        out.append(
            Atom(
                f"not truthy({param})",
                _param_test(param, truthy, False),
                (param,),
                f"truthy({param})",
            )
        )
    return out


_COMPARISONS: tuple[tuple[str, Callable[[Any, Any], bool]], ...] = (
    ("<=", lambda x, y: x <= y),
    ("<", lambda x, y: x < y),
    (">=", lambda x, y: x >= y),
    (">", lambda x, y: x > y),
)


def _num(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _size(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return -1


def _eq(x: Any, y: Any) -> bool:
    return x is not MISSING and type(x) is type(y) and x == y


def _below_any(coll: Any, prefix: Any) -> bool:
    if not isinstance(prefix, str) or coll is None or coll is MISSING:
        return False
    start = prefix + "/"
    return any(isinstance(x, str) and x.startswith(start) for x in coll)


def _nothing_below(term: Term, var: str, is_map: bool) -> Atom:
    """``all(not startswith(x, T + "/") for x in S)``: nothing of S lies below the path T."""

    def holds(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        value = term(a, s)
        return isinstance(value, str) and not _below_any(s.get(var), value)

    items = f"keys({var})" if is_map else var
    text = f'all(not startswith(x, {term.text} + "/") for x in {items})'
    return Atom(text, holds, term.params)


def _membership(
    term: Term, var: str, calls: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]
) -> list[Atom]:
    """``term in var`` and ``term not in var`` when the term's values have the shape of the
    collection's items for some call."""
    fits = True
    for args, state in calls:
        value, coll = term(args, state), state.get(var)
        if value is MISSING or not _is_collection(coll) or not coll:
            continue
        sample = next(iter(coll))
        fits = type(sample) is type(value) and (
            not isinstance(value, tuple) or len(sample) == len(value)
        )
        break
    if not fits:
        return []

    def inside(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        return _contains(s.get(var), term(a, s))

    def outside(a: Mapping[str, Any], s: Mapping[str, Any]) -> bool:
        value = term(a, s)
        return value is not MISSING and not _contains(s.get(var), value)

    pos = f"{term.text} in {var}"
    neg = f"{term.text} not in {var}"
    return [Atom(pos, inside, term.params, neg), Atom(neg, outside, term.params, pos)]


def equality_atoms(
    params: Sequence[str],
    calls: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    min_support: int,
) -> list[Atom]:
    """``p == q`` and ``p != q`` for two text parameters that were passed the same value in at
    least ``min_support`` calls (``cp d d``): conditions of effects."""
    out: list[Atom] = []
    for p, q in itertools.combinations(params, 2):
        same = sum(1 for a, _ in calls if isinstance(a.get(p), str) and a.get(p) == a.get(q))
        if same < min_support:
            continue
        out.append(
            Atom(f"{p} == {q}", _texts_equal(p, q, True, in_state=False), (p, q), f"{p} != {q}")
        )
        out.append(
            Atom(f"{p} != {q}", _texts_equal(p, q, False, in_state=False), (p, q), f"{p} == {q}")
        )
    return out
