"""Language inclusion of two patterns, decided where the regex is simple enough.

A pattern constrains a string the way the validators apply it: it must match *somewhere* in the
string (``search``), with ``^`` and ``$`` anchoring at the ends. Patterns built from literals,
character classes, ``.``, groups, alternation, bounded or unbounded repetition and ``^``/``$``
are compiled to NFAs and compared by a product subset construction, which yields the shortest
string one accepts and the other refuses. Anything else (flags, look-around, backreferences,
``\\b``, Unicode properties), or an automaton beyond the bounds, is ``unknown``.

``\\d``, ``\\w`` and ``\\s`` are modelled as their ASCII members plus a sample of non-ASCII
members, so ``\\d`` is (correctly) wider than ``[0-9]``.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal

from ..dsl.patterns import regex_search

try:  # Python 3.11+
    import re._constants as C  # type: ignore[import-not-found]
    import re._parser as P  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C
    import sre_parse as P

_POSSESSIVE = getattr(C, "POSSESSIVE_REPEAT", None)

MAX_CHAR = 0x10FFFF
MAX_NFA_STATES = 4000
MAX_DFA_STATES = 20000

Interval = tuple[int, int]  # inclusive

_DIGIT: list[Interval] = [(0x30, 0x39), (0x660, 0x669), (0x966, 0x96F)]
_WORD: list[Interval] = [
    (0x30, 0x39),
    (0x41, 0x5A),
    (0x5F, 0x5F),
    (0x61, 0x7A),
    (0xC0, 0xD6),
    (0xD8, 0xF6),
    (0xF8, 0x2FF),
    (0x370, 0x3FF),
    (0x400, 0x4FF),
    (0x660, 0x669),
    (0x966, 0x96F),
    (0x4E00, 0x9FFF),
]
_SPACE: list[Interval] = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x2000, 0x200A)]


def _normalise(ranges: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _negate(ranges: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    nxt = 0
    for lo, hi in _normalise(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CHAR:
        out.append((nxt, MAX_CHAR))
    return out


_CATEGORIES = {
    C.CATEGORY_DIGIT: _DIGIT,
    C.CATEGORY_NOT_DIGIT: _negate(_DIGIT),
    C.CATEGORY_WORD: _WORD,
    C.CATEGORY_NOT_WORD: _negate(_WORD),
    C.CATEGORY_SPACE: _SPACE,
    C.CATEGORY_NOT_SPACE: _negate(_SPACE),
}
_ANY_BUT_NEWLINE = [(0, 9), (11, MAX_CHAR)]
_ANY = [(0, MAX_CHAR)]


class Unsupported(Exception):
    """The pattern uses something the inclusion check does not model."""


class _NFA:
    """States are ints; ``edges[s]`` holds (intervals, target); ``eps[s]`` holds (anchor, target)
    where anchor is "", "^" or "$"."""

    def __init__(self) -> None:
        self.edges: list[list[tuple[list[Interval], int]]] = []
        self.eps: list[list[tuple[str, int]]] = []

    def new(self) -> int:
        if len(self.edges) >= MAX_NFA_STATES:
            raise Unsupported("the pattern's automaton is too large")
        self.edges.append([])
        self.eps.append([])
        return len(self.edges) - 1

    def build(self, items: Any, start: int) -> int:
        """Add ``items`` (a parsed sequence) after ``start``; return the end state."""
        current = start
        for op, arg in items:
            current = self._item(op, arg, current)
        return current

    def _item(self, op: Any, arg: Any, start: int) -> int:
        if op is C.LITERAL:
            return self._chars([(arg, arg)], start)
        if op is C.NOT_LITERAL:
            return self._chars(_negate([(arg, arg)]), start)
        if op is C.ANY:
            return self._chars(_ANY_BUT_NEWLINE, start)
        if op is C.IN:
            return self._chars(_class(arg), start)
        if op is C.SUBPATTERN:
            _group, add_flags, del_flags, sub = arg
            if add_flags or del_flags:
                raise Unsupported("flags inside the pattern")
            return self.build(sub, start)
        if op is C.BRANCH:
            end = self.new()
            for alt in arg[1]:
                s = self.new()
                self.eps[start].append(("", s))
                e = self.build(alt, s)
                self.eps[e].append(("", end))
            return end
        if op in (C.MAX_REPEAT, C.MIN_REPEAT) or (_POSSESSIVE is not None and op is _POSSESSIVE):
            lo, hi, sub = arg
            if lo > 100 or (hi is not C.MAXREPEAT and hi > 100):
                raise Unsupported("a repetition count above 100")
            current = start
            for _ in range(lo):
                current = self.build(sub, current)
            if hi is C.MAXREPEAT:
                loop = self.new()
                self.eps[current].append(("", loop))
                body_end = self.build(sub, loop)
                self.eps[body_end].append(("", loop))
                return loop
            end = self.new()
            self.eps[current].append(("", end))
            for _ in range(hi - lo):
                current = self.build(sub, current)
                self.eps[current].append(("", end))
            return end
        if op is C.AT:
            if arg in (C.AT_BEGINNING, C.AT_BEGINNING_STRING):
                anchor = "^"
            elif arg in (C.AT_END, C.AT_END_STRING):
                anchor = "$"
            else:
                raise Unsupported(f"the assertion {arg}")
            nxt = self.new()
            self.eps[start].append((anchor, nxt))
            return nxt
        raise Unsupported(f"the construct {op}")

    def _chars(self, ranges: list[Interval], start: int) -> int:
        nxt = self.new()
        self.edges[start].append((_normalise(ranges), nxt))
        return nxt


def _class(items: Any) -> list[Interval]:
    ranges: list[Interval] = []
    negate = False
    for op, arg in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            ranges.append((arg, arg))
        elif op is C.RANGE:
            ranges.append(arg)
        elif op is C.CATEGORY and arg in _CATEGORIES:
            ranges.extend(_CATEGORIES[arg])
        else:
            raise Unsupported(f"the class item {op}")
    return _negate(ranges) if negate else _normalise(ranges)


@dataclass
class _Automaton:
    nfa: _NFA
    start: int
    final: int


def _compile(pattern: str) -> _Automaton:
    try:
        parsed = P.parse(pattern)
    except Exception as exc:  # re.error, or a Rust-only construct Python does not know
        raise Unsupported(str(exc)) from None
    if parsed.state.flags & (re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE):
        raise Unsupported("flags")
    nfa = _NFA()
    start = nfa.new()
    nfa.edges[start].append((_ANY, start))  # search: anything may come before the match
    inner = nfa.new()
    nfa.eps[start].append(("", inner))
    end = nfa.build(list(parsed), inner)
    final = nfa.new()
    nfa.eps[end].append(("", final))
    nfa.edges[final].append((_ANY, final))  # … and after it
    return _Automaton(nfa, start, final)


def _closure(nfa: _NFA, states: frozenset[int], at_start: bool, at_end: bool) -> frozenset[int]:
    seen = set(states)
    stack = list(states)
    while stack:
        s = stack.pop()
        for anchor, t in nfa.eps[s]:
            if anchor == "^" and not at_start:
                continue
            if anchor == "$" and not at_end:
                continue
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return frozenset(seen)


def _move(nfa: _NFA, states: frozenset[int], char: int) -> frozenset[int]:
    out: set[int] = set()
    for s in states:
        for ranges, t in nfa.edges[s]:
            for lo, hi in ranges:
                if lo <= char <= hi:
                    out.add(t)
                    break
    return frozenset(out)


def _alphabet(*nfas: _NFA) -> list[int]:
    """One representative character per block of characters that no class tells apart,
    preferring readable ones."""
    cuts = {0, MAX_CHAR + 1}
    for nfa in nfas:
        for edges in nfa.edges:
            for ranges, _ in edges:
                for lo, hi in ranges:
                    cuts.add(lo)
                    cuts.add(hi + 1)
    bounds = sorted(cuts)
    reps: list[int] = []
    for lo, nxt in zip(bounds, bounds[1:], strict=False):
        hi = nxt - 1
        rep = lo
        for preferred in (ord("a"), ord("0"), ord("A"), 0x21, 0x20):
            if lo <= preferred <= hi:
                rep = preferred
                break
        else:
            if lo < 0x21 <= hi:
                rep = 0x21
            elif lo <= 0x7E and hi >= 0x21:
                rep = max(lo, 0x21)
        reps.append(rep)
    return reps


Relation = Literal["equal", "wider", "narrower", "incomparable", "unknown"]


@dataclass(frozen=True)
class PatternVerdict:
    """How NEW's pattern relates to OLD's: ``lost`` is a string OLD accepts and NEW refuses,
    ``gained`` one NEW accepts and OLD refuses (shortest found; ``None`` when there is none or
    none was found)."""

    relation: Relation
    lost: str | None = None
    gained: str | None = None
    reason: str | None = None


def compare_patterns(old: str, new: str) -> PatternVerdict:
    """Decide whether ``new`` accepts the same, more, fewer or other strings than ``old``."""
    if old == new:
        return PatternVerdict("equal")
    try:
        a = _compile(old)
        b = _compile(new)
    except Unsupported as exc:
        return PatternVerdict("unknown", _sampled_witness(old, new), None, str(exc))
    reps = _alphabet(a.nfa, b.nfa)
    lost: str | None = None
    gained: str | None = None
    start = (frozenset({a.start}), frozenset({b.start}), True)
    queue: deque[tuple[tuple[frozenset[int], frozenset[int], bool], str]] = deque([(start, "")])
    seen = {start}
    while queue:
        (sa, sb, at_start), text = queue.popleft()
        acc_a = a.final in _closure(a.nfa, sa, at_start, True)
        acc_b = b.final in _closure(b.nfa, sb, at_start, True)
        if acc_a and not acc_b and lost is None:
            lost = text
        if acc_b and not acc_a and gained is None:
            gained = text
        if lost is not None and gained is not None:
            break
        ca = _closure(a.nfa, sa, at_start, False)
        cb = _closure(b.nfa, sb, at_start, False)
        for rep in reps:
            na, nb = _move(a.nfa, ca, rep), _move(b.nfa, cb, rep)
            key = (na, nb, False)
            if key in seen:
                continue
            if len(seen) >= MAX_DFA_STATES:
                return PatternVerdict(
                    "unknown", lost or _sampled_witness(old, new), gained, "too many states"
                )
            seen.add(key)
            queue.append((key, text + chr(rep)))
    # a witness is only reported when the real engine agrees with it
    if lost is not None and not (regex_search(old, lost) and not regex_search(new, lost)):
        return PatternVerdict("unknown", None, None, "the model and the engine disagree")
    if gained is not None and not (regex_search(new, gained) and not regex_search(old, gained)):
        return PatternVerdict("unknown", lost, None, "the model and the engine disagree")
    if lost is None and gained is None:
        return PatternVerdict("equal")
    if lost is None:
        return PatternVerdict("wider", None, gained)
    if gained is None:
        return PatternVerdict("narrower", lost, None)
    return PatternVerdict("incomparable", lost, gained)


_SAMPLES = ("", "a", "A", "0", "abc", "a1", "-", "_", " ", "/", "a/b", "test", "x" * 40)


def _sampled_witness(old: str, new: str) -> str | None:
    for text in _SAMPLES:
        try:
            if regex_search(old, text) and not regex_search(new, text):
                return text
        except Exception:
            return None
    return None


def refused_sample(accepted_by: list[str], pattern: str) -> str | None:
    """A string every pattern of ``accepted_by`` accepts and ``pattern`` refuses, if one is
    found."""
    base = accepted_by[0] if accepted_by else ""
    verdict = compare_patterns(base, pattern)
    candidates = [verdict.lost] if verdict.lost is not None else list(_SAMPLES)
    for text in candidates:
        if text is None:
            continue
        if all(regex_search(o, text) for o in accepted_by) and not regex_search(pattern, text):
            return text
    return None
