"""A PDDL s-expression reader that keeps the position of every token.

PDDL text is a tree of parenthesised lists of symbols; ``;`` starts a comment that runs to the end
of the line. Symbols keep their spelling (``text``) and are compared through ``key`` (lower case):
PDDL is case-insensitive, and IPC 2000 files write ``:INIT``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dsl.diagnostics import ContractError, Diagnostic, Span, error

MAX_DEPTH = 200
"""Deeper nesting is refused (no real PDDL file comes close; it would only exhaust the stack)."""


@dataclass(frozen=True)
class Sym:
    """A symbol (a name, ``?variable``, ``:keyword``, ``-`` or a number) and where it is."""

    text: str
    line: int
    col: int

    @property
    def key(self) -> str:
        """The symbol in lower case: what PDDL compares."""
        return self.text.lower()

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
    line, col = 1, 1
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line, col = line + 1, 1
            i += 1
            continue
        if ch in " \t\r\f\v":
            i += 1
            col += 1
            continue
        if ch == ";":
            while i < n and text[i] != "\n":
                i += 1
            continue
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
            i += 1
            col += 1
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
            i += 1
            col += 1
            continue
        start = i
        while i < n and text[i] not in " \t\r\n\f\v();":
            i += 1
        sym = Sym(text[start:i], line, col)
        col += i - start
        (stack[-1].items if stack else top).append(sym)
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
