"""Diagnostics: one type for every message the toolchain reports, rendered like a compiler's."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .records import record

if TYPE_CHECKING:
    from pydantic import TypeAdapter

Severity = Literal["error", "warning", "note"]


@record(frozen=True, slots=True, kw_only=True)
class Span:
    """A region of a source file: 1-based lines and columns, ``end_col`` exclusive.

    Spans never take part in equality or hashing, so two IRs of the same contract compare equal
    wherever their text sits. A frozen dataclass (not a pydantic model), like the IR nodes.
    """

    #: read by pydantic when it validates a span: unknown keys are errors
    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    file: str = "<string>"
    line: int = 1
    col: int = 1
    end_line: int = 1
    end_col: int = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Span)

    def __hash__(self) -> int:
        return 0

    def same_place(self, other: Span) -> bool:
        """Positional equality, which ``==`` deliberately ignores."""
        return (self.file, self.line, self.col, self.end_line, self.end_col) == (
            other.file,
            other.line,
            other.col,
            other.end_line,
            other.end_col,
        )

    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_SPAN = Span()

# A span per node is most of the objects lowering makes: the frozen record's ``__init__``
# (keyword arguments, then a setter per field) costs more than setting its slots directly,
# and does nothing more (`tests/test_lower_check_speed.py` compares)
_new_span = object.__new__
_set_file = Span.__dict__["file"].__set__
_set_line = Span.__dict__["line"].__set__
_set_col = Span.__dict__["col"].__set__
_set_end_line = Span.__dict__["end_line"].__set__
_set_end_col = Span.__dict__["end_col"].__set__


class OpenSpan:
    """A :class:`Span`'s slots, writable: a span maker fills one with plain attribute
    assignments and turns it into the ``Span`` by assigning ``__class__`` (the two classes
    have the same layout, which Python checks). That costs half as much as setting a frozen
    span's five slots through their descriptors (a call each); lowering makes one span per
    node. Only :func:`span_at` and lowering's span method use it, and only when
    :data:`SPAN_SWAP` says the assignment works."""

    __slots__ = ("file", "line", "col", "end_line", "end_col")
    file: str
    line: int
    col: int
    end_line: int
    end_col: int


def _span_swap_works() -> bool:
    if OpenSpan.__slots__ != Span.__slots__:  # a field added to Span and not here
        return False
    probe = OpenSpan()
    try:
        probe.__class__ = Span  # type: ignore[assignment]
    except TypeError:  # pragma: no cover - layouts that differ (another Python)
        return False
    return True


SPAN_SWAP = _span_swap_works()
"""Whether an :class:`OpenSpan` can become a :class:`Span` (its slots are Span's)."""


def _span_at_by_setters(file: str, line: int, col: int, end_line: int, end_col: int) -> Span:
    span: Span = _new_span(Span)
    _set_file(span, file)
    _set_line(span, line)
    _set_col(span, col)
    _set_end_line(span, end_line)
    _set_end_col(span, end_col)
    return span


def _span_at_by_swap(file: str, line: int, col: int, end_line: int, end_col: int) -> Span:
    span = OpenSpan()
    span.file = file
    span.line = line
    span.col = col
    span.end_line = end_line
    span.end_col = end_col
    span.__class__ = Span  # type: ignore[assignment]
    return span  # type: ignore[return-value]


span_at = _span_at_by_swap if SPAN_SWAP else _span_at_by_setters
"""``span_at(file, line, col, end_line, end_col)``: ``Span(file=file, line=line, …)``, made
for less."""


@record(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    """One finding: a stable code, a severity, a message, where it is, and what to do about it.

    A frozen dataclass; :meth:`dump` and :meth:`load` convert it to and from nested
    dictionaries (pydantic validates on load, imported only then).
    """

    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    code: str
    severity: Severity
    message: str
    span: Span = NO_SPAN
    hint: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The flat JSON shape used by ``--format json``."""
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": self.span.file,
            "line": self.span.line,
            "col": self.span.col,
            "end_line": self.span.end_line,
            "end_col": self.span.end_col,
            "hint": self.hint,
        }

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.file, self.span.line, self.span.col, self.code)

    def dump(self) -> dict[str, Any]:
        """Nested dictionaries of plain values: the diagnostic's fields, its span as a
        dictionary of its own (what :meth:`load` reads back)."""
        return dataclasses.asdict(self)

    @classmethod
    def load(cls, data: Any) -> Diagnostic:
        """A diagnostic validated from what :meth:`dump` wrote; raises pydantic's
        ``ValidationError`` on anything else."""
        result: Diagnostic = _diagnostic_adapter().validate_python(data)
        return result


@functools.cache
def _diagnostic_adapter() -> TypeAdapter[Diagnostic]:
    from pydantic import TypeAdapter

    return TypeAdapter(Diagnostic)


class ContractError(Exception):
    """Raised when a contract (or a plan, a state file, an argument) cannot be used.

    ``diagnostics`` holds every finding, errors first in source order; ``str()`` renders them.
    """

    def __init__(self, diagnostics: Sequence[Diagnostic], sources: dict[str, str] | None = None):
        self.diagnostics = list(diagnostics)
        self.sources = sources or {}
        super().__init__(render_all(self.diagnostics, self.sources))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def error(code: str, message: str, span: Span = NO_SPAN, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, severity="error", message=message, span=span, hint=hint)


def warning(code: str, message: str, span: Span = NO_SPAN, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, severity="warning", message=message, span=span, hint=hint)


def render(diag: Diagnostic, source: str | None = None) -> str:
    """``file:line:col: error[CODE]: message``, the source line, carets under the span, the hint."""
    span = diag.span
    lines = [
        visible(f"{span.file}:{span.line}:{span.col}: {diag.severity}[{diag.code}]: {diag.message}")
    ]
    if source is not None:
        text_lines = source.splitlines()
        if 1 <= span.line <= len(text_lines):
            text = _source_line(text_lines[span.line - 1].expandtabs(1))
            if len(text) > 200:
                text = text[:200] + " …"
            gutter = f"{span.line:>5} | "
            lines.append(gutter + text)
            start = max(span.col - 1, 0)
            if span.end_line == span.line and span.end_col > span.col:
                width = span.end_col - span.col
            else:
                width = max(len(text) - start, 1)
            width = max(1, min(width, max(len(text) - start, 1)))
            lines.append(" " * (len(gutter) - 2) + "| " + " " * start + "^" * width)
    if diag.hint:
        lines.append(visible(f"  = hint: {diag.hint}"))
    return "\n".join(lines)


def render_all(
    diagnostics: Iterable[Diagnostic], sources: dict[str, str] | None = None, limit: int = 50
) -> str:
    """Render diagnostics in order, capped at ``limit`` with an "… and N more" line."""
    sources = sources or {}
    diags = list(diagnostics)
    shown = [render(d, sources.get(d.span.file)) for d in diags[:limit]]
    if len(diags) > limit:
        shown.append(f"… and {len(diags) - limit} more")
    return "\n\n".join(shown)


def control_escape(ch: str) -> str:
    """A character that is not printable as a visible escape: ``\\n``, ``\\t``, ``\\r`` by
    name, others as ``\\u001b`` (``\\U…`` past the BMP). The one spelling of such characters
    in values (``show``), messages and diagnostics."""
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch)
    if named is not None:
        return named
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"


def visible(text: str) -> str:
    """``text`` safe to print on a terminal: every character that is not printable (escape
    sequences, NUL, line breaks, bidirectional overrides …) as :func:`control_escape` writes
    it; the rest unchanged."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else control_escape(ch) for ch in text)


def _source_line(text: str) -> str:
    """A quoted source line: each character that is not printable shows as one visible
    character (control pictures ␛ ␀ …, else �), so the carets below stay in their columns."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x20:
            out.append(chr(0x2400 + ord(ch)))
        elif ord(ch) == 0x7F:
            out.append("\u2421")
        else:
            out.append("\ufffd")
    return "".join(out)


def article(word: str) -> str:
    """``word`` after "a" or "an", by its first letter (a leading backtick is looked past):
    ``article("object")`` is ``"an object"``, ``article("`animal`")`` is ``"an `animal`"``."""
    first = word.lstrip("`'\"(")[:3].lower()
    vowel = first[:1] in ("a", "e", "i", "o") or (
        first[:1] == "u" and not first.startswith(("uni", "use", "usu", "uti"))
    )
    return ("an " if vowel else "a ") + word


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate by edit distance, when one is close enough to be a likely typo."""
    best: tuple[int, str] | None = None
    lowered = name.lower()
    for cand in candidates:
        if cand == name:
            continue
        if cand.lower() == lowered:
            return cand
        dist = _edit_distance(lowered, cand.lower(), limit=3)
        if dist is None:
            continue
        if best is None or (dist, cand) < best:
            best = (dist, cand)
    if best is None:
        return None
    dist, cand = best
    if dist <= max(1, min(len(name), len(cand)) // 3):
        return cand
    return None


def _edit_distance(a: str, b: str, limit: int) -> int | None:
    if abs(len(a) - len(b)) > limit:
        return None
    # optimal string alignment: like Levenshtein, and a swap of two neighbours costs one
    before: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            best = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, before[j - 2] + 1)
            cur.append(best)
        if min(cur) > limit:
            return None
        before, prev = prev, cur
    return prev[-1] if prev[-1] <= limit else None


def suggestion_hint(name: str, candidates: Iterable[str], what: str) -> str | None:
    guess = did_you_mean(name, candidates)
    if guess is not None:
        return f"did you mean `{guess}`?"
    names = sorted(set(candidates))
    if not names:
        return f"no {what} is declared"
    if len(names) <= 8:
        return f"declared {what}s: " + ", ".join(names)
    return None
