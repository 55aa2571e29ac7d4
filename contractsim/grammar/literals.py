"""A fast path for large literal values (a state's initial set of 100,000 pairs, say).

lark's LALR parser spends a dozen reductions on every element of a literal (``expr → or_expr →
… → atom``), which made a 2.5 MB literal take most of half a minute. Large literals made only of
strings, numbers, ``true``/``false``/``null``, names, ``Enum.member`` and nested tuples, lists,
sets and maps are read here instead, into exactly the tree lark would build (same rule names,
tokens and positions). :func:`blank_literals` replaces them by a bracket pair padded with white
space, lark parses the rest, and :func:`splice_literals` puts the trees in. Anything this reader
does not accept is left to lark, which also reports every syntax error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lark import Token, Tree
from lark.tree import Meta

FAST_LITERAL_MIN = 2_000
"""Literals shorter than this (in characters) are left to lark: the fast path is for bulk data."""

# Where a literal may start: after `=` (an initial value, a constant, a default, an assignment),
# outside strings and comments.
_SCAN = re.compile(
    r'#[^\n]*|r"[^"\n]*"|"""(?:[^"\\]|\\.|"(?!""))*(?:"""|$)|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?'
    r"|=[ \t\f\r\n]*(?=[\[{])",
    re.S,
)
# the commonest tokens first (alternatives are tried in order); none of them overlaps another,
# except FLOAT and INT, where FLOAT must come first
_TOKEN = re.compile(
    # a comma or colon takes the blanks after it on its line (one match instead of two; no
    # newline, so no line to count)
    r"(?P<sep>[,:])[ \t\f\r]*"
    r"|(?P<punct>[{}\[\]().\-])"
    r"|(?P<NAME>[A-Za-z_][A-Za-z0-9_]*)"
    r'|(?P<STRING>"[^"\\\n]*(?:\\.[^"\\\n]*)*")'
    r"|(?P<FLOAT>\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)"
    r"|(?P<INT>\d+)"
    r"|(?P<ws>(?:[ \t\f\r\n]+|#[^\n]*)+)"
)
_new_token: Any = Token._future_new  # what Token(...) calls, without its keyword-argument shim
_KEYWORD_TREES = {"true": "true", "false": "false", "null": "null"}
_CLOSE = {"{": "}", "[": "]", "(": ")"}


class _NotALiteral(Exception):
    """The text is not (only) a literal this reader handles: lark reads it."""


@dataclass
class Blanked:
    """A literal taken out of the text: where it was and the tree lark would have built."""

    start: int
    end: int
    tree: Tree[Token]


def blank_literals(
    text: str, keywords: frozenset[str], minimum: int | None = None
) -> tuple[str, list[Blanked]]:
    """The text with every large literal replaced by its brackets around white space (newlines
    kept, so every other position is unchanged), and the literals' trees. ``keywords`` are the
    words the grammar reserves: a literal that uses one as a name is left to lark."""
    minimum = FAST_LITERAL_MIN if minimum is None else minimum
    if len(text) < minimum:
        return text, []
    found: list[Blanked] = []
    pos = 0
    line, counted = 1, 0  # the line number at offset `counted`
    while True:
        m = _SCAN.search(text, pos)
        if m is None:
            break
        pos = m.end()
        if not m.group().startswith("="):
            continue
        start = m.end()
        line += text.count("\n", counted, start)
        counted = start
        try:
            reader = _Reader(text, start, line, keywords)
            tree = reader.literal()
        except _NotALiteral:
            continue
        end = reader.pos
        if end - start >= minimum:
            found.append(Blanked(start, end, tree))
            pos = end
    if not found:
        return text, []
    parts: list[str] = []
    last = 0
    for b in found:
        parts.append(text[last : b.start + 1])
        inner = text[b.start + 1 : b.end - 1]
        parts.append("\n".join(" " * len(line) for line in inner.split("\n")))
        parts.append(text[b.end - 1])
        last = b.end
    parts.append(text[last:])
    return "".join(parts), found


def splice_literals(tree: Tree[Token], found: list[Blanked]) -> bool:
    """Put the literals' trees in place of their blanked brackets. False when a blanked region
    is not where lark parsed an empty literal (then the text must be parsed as it is)."""
    by_start = {b.start: b for b in found}
    done = 0
    for node in tree.iter_subtrees():
        for i, child in enumerate(node.children):
            if not isinstance(child, Tree) or child.data not in ("set_lit", "list_lit"):
                continue
            meta = child.meta
            if meta.empty or meta.start_pos not in by_start:
                continue
            b = by_start[meta.start_pos]
            if meta.end_pos != b.end or child.children != [None]:
                return False
            node.children[i] = b.tree
            done += 1
    return done == len(found)


class _Reader:
    """A recursive-descent reader of one literal, building lark's trees with lark's positions."""

    def __init__(self, text: str, pos: int, line: int, keywords: frozenset[str]) -> None:
        self.text = text
        self.pos = pos
        self.keywords = keywords
        self.line = line
        self.line_start = text.rfind("\n", 0, pos) + 1
        self.depth = 0
        self._next: tuple[str, str, int, int, int] | None = None

    # tokens: (kind, text, start, line, column); white space and comments are skipped
    def peek(self) -> tuple[str, str, int, int, int]:
        if self._next is None:
            self._next = self._scan()
        return self._next

    def take(self) -> tuple[str, str, int, int, int]:
        tok = self.peek()
        self._next = None
        return tok

    def _scan(self) -> tuple[str, str, int, int, int]:
        text = self.text
        while True:
            m = _TOKEN.match(text, self.pos)
            if m is None:
                if self.pos >= len(text):
                    return ("EOF", "", self.pos, self.line, self.pos - self.line_start + 1)
                raise _NotALiteral
            kind = m.lastgroup
            value = m.group()
            start = self.pos
            self.pos = m.end()
            if kind == "ws":
                newlines = value.count("\n")
                if newlines:
                    self.line += newlines
                    self.line_start = start + value.rfind("\n") + 1
                continue
            assert kind is not None
            if kind == "STRING" and text.startswith('"""', start):
                raise _NotALiteral  # a long string: lark's LONG_STRING
            if kind == "sep":
                value = value[0]
                kind = value
            elif kind == "punct":
                kind = value
            return (kind, value, start, self.line, start - self.line_start + 1)

    def expect(self, kind: str) -> tuple[str, str, int, int, int]:
        tok = self.take()
        if tok[0] != kind:
            raise _NotALiteral
        return tok

    # trees
    @staticmethod
    def _meta(line: int, column: int, start: int, end_line: int, end_col: int, end: int) -> Meta:
        meta = Meta()  # type: ignore[no-untyped-call]
        meta.empty = False
        meta.line = meta.container_line = line  # type: ignore[attr-defined]
        meta.column = meta.container_column = column  # type: ignore[attr-defined]
        meta.start_pos = meta.container_start_pos = start  # type: ignore[attr-defined]
        meta.end_line = meta.container_end_line = end_line  # type: ignore[attr-defined]
        meta.end_column = meta.container_end_column = end_col  # type: ignore[attr-defined]
        meta.end_pos = meta.container_end_pos = end  # type: ignore[attr-defined]
        return meta

    def _token(self, tok: tuple[str, str, int, int, int]) -> Token:
        kind, value, start, line, col = tok
        n = len(value)
        return _new_token(kind, value, start, line, col, line, col + n, start + n)  # type: ignore[no-any-return]

    def _leaf(
        self, data: str, tok: tuple[str, str, int, int, int], children: list[object]
    ) -> Tree[Token]:
        _, value, start, line, col = tok
        n = len(value)
        meta = self._meta(line, col, start, line, col + n, start + n)
        return Tree(data, children, meta)  # type: ignore[arg-type]

    def literal(self) -> Tree[Token]:
        """The outermost literal: a collection (the caller found `{` or `[`)."""
        tree = self.value()
        if tree.data not in ("set_lit", "list_lit", "map_lit"):
            raise _NotALiteral
        return tree

    def value(self) -> Tree[Token]:
        tok = self.take()
        kind = tok[0]
        if kind == "STRING":
            return self._leaf("string", tok, [self._token(tok)])
        if kind in ("INT", "FLOAT"):
            return self._leaf("number", tok, [self._token(tok)])
        if kind == "-":
            num = self.take()
            if num[0] not in ("INT", "FLOAT"):
                raise _NotALiteral
            inner = self._leaf("number", num, [self._token(num)])
            m = inner.meta
            meta = self._meta(tok[3], tok[4], tok[2], m.end_line, m.end_column, m.end_pos)
            return Tree("neg", [inner], meta)
        if kind == "NAME":
            word = tok[1]
            if word in _KEYWORD_TREES:
                return self._leaf(_KEYWORD_TREES[word], tok, [])
            if word in self.keywords:
                raise _NotALiteral
            name = self._leaf("name", tok, [self._token(tok)])
            if self.peek()[0] != ".":
                return name
            self.take()
            member = self.expect("NAME")
            if member[1] in self.keywords or member[1] in _KEYWORD_TREES:
                raise _NotALiteral
            if self.peek()[0] in (".", "(", "["):
                raise _NotALiteral  # a longer postfix chain: lark's
            end = self._token(member)
            meta = self._meta(tok[3], tok[4], tok[2], end.end_line, end.end_column, end.end_pos)  # type: ignore[arg-type]
            return Tree("attr", [name, end], meta)
        if kind in ("{", "[", "("):
            return self.collection(tok)
        raise _NotALiteral

    def collection(self, open_tok: tuple[str, str, int, int, int]) -> Tree[Token]:
        self.depth += 1
        if self.depth > 60:
            raise _NotALiteral  # let lark and the nesting check report it
        opener = open_tok[0]
        closer = _CLOSE[opener]
        items: list[Tree[Token] | None] = []
        is_map = False
        trailing_comma = False
        while True:
            if self.peek()[0] == closer:
                break
            item = self.value()
            if opener == "{" and (is_map or not items) and self.peek()[0] == ":":
                colon = self.take()
                del colon
                value = self.value()
                km, vm = item.meta, value.meta
                meta = self._meta(
                    km.line, km.column, km.start_pos, vm.end_line, vm.end_column, vm.end_pos
                )
                item = Tree("entry", [item, value], meta)
                is_map = True
            elif is_map:
                raise _NotALiteral  # a map with an element that is no entry
            items.append(item)
            trailing_comma = False
            if self.peek()[0] == ",":
                self.take()
                trailing_comma = True
                continue
            if self.peek()[0] != closer:
                raise _NotALiteral
        close = self.take()
        end_line, end_col, end = close[3], close[4] + 1, close[2] + 1
        meta = self._meta(open_tok[3], open_tok[4], open_tok[2], end_line, end_col, end)
        self.depth -= 1
        if opener == "(":
            # lark: "(" expr "," [expr ("," expr)* [","]] ")"; `(x)` is a parenthesised expression
            if not items or (len(items) == 1 and not trailing_comma):
                raise _NotALiteral
            children: list[Tree[Token] | None] = items if len(items) > 1 else [items[0], None]
            return Tree("tuple_lit", children, meta)  # type: ignore[arg-type]
        if not items:
            if trailing_comma:
                raise _NotALiteral
            return Tree("set_lit" if opener == "{" else "list_lit", [None], meta)  # type: ignore[list-item]
        if is_map:
            return Tree("map_lit", items, meta)  # type: ignore[arg-type]
        return Tree("set_lit" if opener == "{" else "list_lit", items, meta)  # type: ignore[arg-type]
