"""A PDDL s-expression reader that keeps the position of every token.

PDDL text is a tree of parenthesised lists of symbols; ``;`` starts a comment that runs to the end
of the line. Symbols keep their spelling (``text``) and are compared through ``key`` (lower case):
PDDL is case-insensitive, and IPC 2000 files write ``:INIT``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..diagnostics import ContractError, Diagnostic, Span, error

_SPACE = " \t\r\f\v"
_TOKEN = re.compile(r"\n|[ \t\r\f\v]+|;[^\n]*|[()]|[^ \t\r\n\f\v();]+")
MAX_DEPTH = 64
"""Deeper nesting is refused: no real PDDL file comes close, and the contract language reads
brackets nested at most 64 deep (E0104), and a condition's contract text nests about as deep as
its PDDL (a rare deeper one is reported as E0811, not as an error in the generated file)."""


@dataclass(frozen=True, slots=True)
class Sym:
    """A symbol (a name, ``?variable``, ``:keyword``, ``-`` or a number) and where it is;
    ``key`` is the symbol in lower case: what PDDL compares."""

    text: str
    line: int
    col: int
    key: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", self.text.lower())

    @property
    def end_col(self) -> int:
        return self.col + len(self.text)


@dataclass
class SList:
    """A parenthesised list; ``line``/``col`` are those of its ``(``."""

    items: list[SList | Sym]
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0
    head_key: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self.head_key = self.items[0].key if self.items and isinstance(self.items[0], Sym) else ""


Node = SList | Sym


def span_of(node: Node, file: str) -> Span:
    """The span of a node: a symbol's text, or a list's opening parenthesis to its closing one."""
    if isinstance(node, Sym):
        return Span(
            file=file, line=node.line, col=node.col, end_line=node.line, end_col=node.end_col
        )
    end_line = node.end_line or node.line
    end_col = node.end_col if node.end_line == node.line else node.col + 1
    return Span(file=file, line=node.line, col=node.col, end_line=end_line, end_col=end_col)


def pddl_error(
    code: str, message: str, node: Node | None, file: str, hint: str | None
) -> Diagnostic:
    """A diagnostic at ``node`` (or at the start of the file)."""
    span = span_of(node, file) if node is not None else Span(file=file)
    return error(code, message, span, hint=hint)


def read_sexprs(text: str, file: str) -> list[Node]:
    """Every top-level expression of ``text``. Raises :class:`ContractError` (E0802) on an
    unbalanced parenthesis, pointing at the unmatched one."""
    stack: list[SList] = []
    top: list[Node] = []
    line, line_start = 1, 0
    for m in _TOKEN.finditer(text):
        tok = m.group()
        ch = tok[0]
        if ch == "\n":
            line, line_start = line + 1, m.end()
            continue
        if ch in _SPACE or ch == ";":
            continue
        col = m.start() - line_start + 1
        if ch == "(":
            if len(stack) >= MAX_DEPTH:
                raise _fail(
                    "E0802",
                    f"parentheses nest more than {MAX_DEPTH} levels",
                    file,
                    line,
                    col,
                    hint="no real PDDL nests this deep: is the file generated wrongly?",
                )
            stack.append(SList([], line, col))
            continue
        if ch == ")":
            if not stack:
                raise _fail(
                    "E0802",
                    "unbalanced `)`: nothing is open here",
                    file,
                    line,
                    col,
                    hint="remove it, or add the `(` it was meant to close",
                )
            done = stack.pop()
            done.end_line, done.end_col = line, col + 1
            done.__post_init__()
            (stack[-1].items if stack else top).append(done)
            continue
        (stack[-1].items if stack else top).append(Sym(tok, line, col))
    if stack:
        open_ = stack[-1]
        raise _fail(
            "E0802",
            "unbalanced `(`: this list is never closed",
            file,
            open_.line,
            open_.col,
            hint=f"add {len(stack)} `)` at the end, or find the one that is missing",
        )
    return top


def _fail(
    code: str, message: str, file: str, line: int, col: int, hint: str | None = None
) -> ContractError:
    span = Span(file=file, line=line, col=col, end_line=line, end_col=col + 1)
    return ContractError([error(code, message, span, hint=hint)])
