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
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass
from itertools import accumulate, compress
from operator import itemgetter
from typing import Any

from lark import Token, Tree
from lark.tree import Meta

FAST_LITERAL_MIN = 2_000
"""Literals shorter than this (in characters) are left to lark: the fast path is for bulk data."""

CUT_BUDGET_FACTOR = 4
"""The literal reader cuts at most about this many times the text's length into tokens (over
every candidate literal); past that, the rest of the text is left to lark."""

# Where a literal may start: after `=` (an initial value, a constant, a default, an assignment),
# outside strings and comments.
_SCAN = re.compile(
    r'#[^\n]*|r"[^"\n]*"|"""(?:[^"\\]|\\.|"(?!""))*(?:"""|$)|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?'
    r"|=[ \t\f\r\n]*(?=[\[{])",
    re.S,
)
# Every character of the text belongs to one token (the last alternative takes any character
# the others do not), so a token's offset is the sum of the lengths before it; a lone `"` (an
# unterminated string) is such a one-character token, not a STRING. The commonest
# tokens first (alternatives are tried in order); none of them overlaps another, except FLOAT and
# INT, where FLOAT must come first. No token but white space holds a newline.
_TOKENS = re.compile(
    # a comma or colon takes the blanks after it on its line (one token instead of two)
    r",[ \t\f\r]*"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|[()]"
    r"|[A-Za-z_][A-Za-z0-9_]*"
    r"|\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+"
    r"|\d+"
    r"|:[ \t\f\r]*"
    r"|[{}\[\].\-]"
    r"|(?:[ \t\f\r\n]+|#[^\n]*)+"
    r"|[\s\S]"
)
# tokens of white space and comments start with one of these
_BLANK_STARTS = defaultdict(lambda: True, {c: False for c in " \t\f\r\n#"})
_NUMBER_STARTS = frozenset("0123456789")
_NAME_STARTS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_FIRST_CHUNK = 256
"""Characters tokenised at first for a candidate literal (to the end of a line): most of those
met in ordinary contracts (``= {}``, ``= ["a", "b"]``) end inside it."""
_GROWTH = 4
"""How much larger each next chunk of text tokenised for a literal is (see ``_Reader.literal``)."""
_NEWLINE = re.compile("\n")
_KEYWORD_LEAVES = frozenset(("true", "false", "null"))
_CLOSE = {"{": "}", "[": "]", "(": ")"}
_COLLECTION = {"{": "set", "[": "list", "(": "tuple"}
_RULE = {"set": "set_lit", "list": "list_lit", "tuple": "tuple_lit", "map": "map_lit"}
_LEAF_RULE = {"STRING": "string", "INT": "number", "FLOAT": "number", "NAME": "name"}
_new_token: Any = Token._future_new  # what Token(...) calls, without its keyword-argument shim
MAX_LITERAL_NESTING = 60
"""Deeper literals are left to lark (and to the nesting check)."""


class _NotALiteral(Exception):
    """The text is not (only) a literal this reader handles: lark reads it."""


# ------------------------------------------------------------------ the compact description
#
# The reader describes a literal with nested tuples, positions as offsets into the text:
#   a token      (KIND, text, start)          KIND: STRING, INT, FLOAT, NAME, true, false, null
#   `-number`    ("neg", start, number)
#   `Enum.m`     ("attr", start, name, member) name and member are NAME tokens
#   `key: value` ("entry", key, value)
#   a collection (KIND, start, end, items)    KIND: set, list, tuple, map (items: a list)
# Lines and columns are found from the offsets (:class:`Positions`) only where they are needed.

Node = tuple[Any, ...]


class Positions:
    """Line and column (1-based, lark's) of the offsets of one literal: the offsets of the
    newlines inside it, searched by bisection."""

    __slots__ = ("first_line", "first_line_start", "newlines")

    def __init__(self, text: str, start: int, end: int, line: int) -> None:
        self.first_line = line
        self.first_line_start = text.rfind("\n", 0, start) + 1
        self.newlines = [m.start() for m in _NEWLINE.finditer(text, start, end)]

    def line_col(self, offset: int) -> tuple[int, int]:
        """The line and column of ``offset``."""
        newlines = self.newlines
        if not newlines or offset <= newlines[0]:
            return self.first_line, offset - self.first_line_start + 1
        index = bisect_right(newlines, offset - 1)
        return self.first_line + index, offset - newlines[index - 1]


def node_end(node: Node) -> int:
    """The offset just after a node of the compact description."""
    while True:
        kind = node[0]
        if kind in _LEAF_RULE or kind in _KEYWORD_LEAVES:
            return int(node[2]) + len(node[1])
        if kind == "neg":
            node = node[2]
        elif kind == "attr":
            node = node[3]
        elif kind == "entry":
            node = node[2]
        else:
            return int(node[2])


def node_start(node: Node) -> int:
    """The offset of a node's first character."""
    while node[0] == "entry":
        node = node[1]
    kind = node[0]
    if kind in _LEAF_RULE or kind in _KEYWORD_LEAVES:
        return int(node[2])
    return int(node[1])


class BulkLiteral(Tree[Token]):
    """The tree of a large literal, as lark would build it, built only when its ``children``
    are read: lowering reads :attr:`bulk` (the compact description) and :attr:`positions`
    instead. ``height`` is at least the depth of the tree it stands for (a collection, and an
    entry or a `-` or `.` under it, per level of nesting)."""

    def __init__(self, data: str, children: list[Any], meta: Meta | None = None) -> None:
        self.bulk: Node | None = None
        self.positions: Positions | None = None
        self.height = 1
        self._children: list[Any] | None = children
        super().__init__(data, children, meta)

    @classmethod
    def of(cls, node: Node, positions: Positions, height: int) -> BulkLiteral:
        """The lazy tree of a collection of the compact description."""
        tree = cls.__new__(cls)
        tree.data = _RULE[node[0]]
        tree.bulk = node
        tree.positions = positions
        tree.height = height
        tree._children = None
        tree._meta = _meta_of(node, positions)
        return tree

    @property
    def children(self) -> list[Any]:
        """lark's children, built on first use."""
        if self._children is None:
            assert self.bulk is not None and self.positions is not None
            self._children = _tree(self.bulk, self.positions).children
        return self._children

    @children.setter
    def children(self, value: list[Any]) -> None:
        self._children = value


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


def _meta_of(node: Node, positions: Positions) -> Meta:
    start, end = node_start(node), node_end(node)
    line, col = positions.line_col(start)
    end_line, end_col = positions.line_col(end)
    return _meta(line, col, start, end_line, end_col, end)


def _token(node: Node, positions: Positions) -> Token:
    kind, value, start = node
    line, col = positions.line_col(start)
    n = len(value)
    return _new_token(kind, value, start, line, col, line, col + n, start + n)  # type: ignore[no-any-return]


def element_tree(node: Node, positions: Positions) -> Tree[Token]:
    """The lark tree of one node of the compact description (for what lowering does not read
    in bulk: it lowers that tree as it lowers lark's)."""
    return _tree(node, positions)


def _tree(node: Node, positions: Positions) -> Tree[Token]:
    kind = node[0]
    meta = _meta_of(node, positions)
    if kind in _LEAF_RULE:
        return Tree(_LEAF_RULE[kind], [_token(node, positions)], meta)
    if kind in _KEYWORD_LEAVES:
        return Tree(kind, [], meta)
    if kind == "neg":
        return Tree("neg", [_tree(node[2], positions)], meta)
    if kind == "attr":
        return Tree("attr", [_tree(node[2], positions), _token(node[3], positions)], meta)
    if kind == "entry":
        return Tree("entry", [_tree(node[1], positions), _tree(node[2], positions)], meta)
    items: list[Any] = [_tree(item, positions) for item in node[3]]
    if kind == "tuple" and len(items) == 1:
        items.append(None)
    return Tree(_RULE[kind], items or [None], meta)


@dataclass
class Blanked:
    """A literal taken out of the text: where it was and its (lazy) tree."""

    start: int
    end: int
    tree: BulkLiteral


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
    reader = _Reader(text, keywords)  # one for all candidates: they share its tokens
    # candidates whose cuts overlap (hostile text can make every one re-cut the rest of a
    # long line) stop being read once the cuts add up to a few times the text: the rest is
    # lark's, which reads any text in linear time
    budget = CUT_BUDGET_FACTOR * len(text) + 65_536
    while reader.cut <= budget:
        m = _SCAN.search(text, pos)
        if m is None:
            break
        pos = m.end()
        if not m.group().startswith("="):
            continue
        start = m.end()
        try:
            node = reader.literal(start, min(minimum, _FIRST_CHUNK))
        except _NotALiteral:
            continue
        end = int(node[2])
        if end - start >= minimum:
            line += text.count("\n", counted, start)
            counted = start
            positions = Positions(text, start, end, line)
            found.append(
                Blanked(start, end, BulkLiteral.of(node, positions, 2 * reader.height + 2))
            )
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
    """A recursive-descent reader of one literal into the compact description. The text is
    cut into tokens by one ``findall`` (white space and comments dropped with C-speed
    iterators); the reader walks the list, one call per collection and per element other than
    a string or an integer."""

    def __init__(self, text: str, keywords: frozenset[str]) -> None:
        self.text = text
        self.keywords = keywords
        self.depth = 0
        self.height = 0  # the deepest nesting of collections met
        self.tokens: list[str] = []
        self.offsets: list[int] = []
        self.tokenised_end = 0  # where the text cut into `tokens` ends
        self.cut = 0  # characters cut into tokens so far, over every candidate

    def literal(self, start: int, first_chunk: int) -> Node:
        """The outermost literal: a collection (the caller found `{` or `[` at ``start``).
        The tokens of a chunk of ``first_chunk`` characters (to the end of its line) are read;
        if the literal goes on past them, a chunk ``_GROWTH`` times as large, and so on. A
        short literal costs only its own chunk, not a chunk the size of a bulk literal; a
        large one costs its text about ``_GROWTH / (_GROWTH - 1)`` times. The
        tokens of a literal that ends inside a chunk do not depend on the chunk's size: a
        chunk ends after a newline, and only white space and comments hold one.

        The tokens of the previous call's chunk are used again when ``start`` is one of their
        offsets (the tokens from there on are the same): candidates on one long line (``x = []
        x = [] …``) would otherwise each cut the rest of the line into tokens."""
        text = self.text
        chunk = max(first_chunk, 1)
        first = bisect_left(self.offsets, start)
        if first == len(self.offsets) or self.offsets[first] != start:
            first = -1
        while True:
            if first < 0:
                newline = text.find("\n", start + chunk)
                end = len(text) if newline < 0 else newline + 1
                self._tokenise(start, end)
                first = 0
            self.depth = self.height = 0
            try:
                if self.tokens[first] not in ("{", "["):
                    raise _NotALiteral
                node, _ = self.collection(first)
                return node
            except IndexError:  # the tokens ran out before the literal did
                if self.tokenised_end == len(text):
                    raise _NotALiteral from None
                chunk = max(chunk, self.tokenised_end - start) * _GROWTH
                first = -1

    def _tokenise(self, start: int, end: int) -> None:
        self.tokenised_end = end
        self.cut += end - start
        tokens = _TOKENS.findall(self.text, start, end)
        offsets = list(accumulate(map(len, tokens), initial=start))
        keep = list(map(_BLANK_STARTS.__getitem__, map(itemgetter(0), tokens)))
        if all(keep):
            self.tokens, self.offsets = tokens, offsets
        else:
            self.tokens = list(compress(tokens, keep))
            self.offsets = list(compress(offsets, keep))

    def collection(self, i: int) -> tuple[Node, int]:
        """The collection whose opening bracket is token ``i``, and the index after its
        closing bracket."""
        self.depth += 1
        if self.depth > MAX_LITERAL_NESTING:
            raise _NotALiteral  # let lark and the nesting check report it
        if self.depth > self.height:
            self.height = self.depth
        tokens, offsets = self.tokens, self.offsets
        text = self.text
        opener = tokens[i]
        start = offsets[i]
        closer = _CLOSE[opener]
        may_be_map = opener == "{"
        items: list[Node] = []
        append = items.append
        is_map = False
        trailing_comma = False
        i += 1
        while True:
            tok = tokens[i]
            first = tok[0]
            if tok == closer:
                break
            if first == '"':
                at = offsets[i]
                if tok == '"' or (tok == '""' and text.startswith('"""', at)):
                    # an unterminated string (lark's error), or a long string (lark's)
                    raise _NotALiteral
                item: Node = ("STRING", tok, at)
                i += 1
            elif first in _NUMBER_STARTS and tok.isdigit():
                item = ("INT", tok, offsets[i])
                i += 1
            elif first == "(":
                # a tuple of strings and integers (bulk data's commonest element) is read
                # here; anything else in it, by the general reader
                j = i + 1
                elements: list[Node] = []
                while True:
                    tok = tokens[j]
                    first = tok[0]
                    if first == '"' and tok != '""' and tok != '"':
                        elements.append(("STRING", tok, offsets[j]))
                    elif first in _NUMBER_STARTS and tok.isdigit():
                        elements.append(("INT", tok, offsets[j]))
                    else:
                        break
                    tok = tokens[j + 1]
                    if tok == ")":
                        j += 1
                        break
                    if tok[0] != "," or tokens[j + 2] == ")":
                        break
                    j += 2
                if tok == ")" and len(elements) > 1 and self.depth < MAX_LITERAL_NESTING:
                    item = ("tuple", offsets[i], offsets[j] + 1, elements)
                    if self.depth == self.height:
                        self.height += 1
                    i = j + 1
                else:
                    item, i = self.collection(i)
            elif first in _CLOSE:
                item, i = self.collection(i)
            else:
                item, i = self.value(i)
            tok = tokens[i]
            first = tok[0]
            if may_be_map and first == ":" and (is_map or not items):
                value, i = self.value(i + 1)
                item = ("entry", item, value)
                tok = tokens[i]
                first = tok[0]
                is_map = True
            elif is_map:
                raise _NotALiteral  # a map with an element that is no entry
            append(item)
            if first == ",":
                trailing_comma = True
                i += 1
                continue
            trailing_comma = False
            if tok != closer:
                raise _NotALiteral
            break
        end = offsets[i] + 1
        self.depth -= 1
        if opener == "(":
            # lark: "(" expr "," [expr ("," expr)* [","]] ")"; `(x)` is a parenthesised expression
            if not items or (len(items) == 1 and not trailing_comma):
                raise _NotALiteral
            return ("tuple", start, end, items), i + 1
        if not items:
            if trailing_comma:
                raise _NotALiteral
            return (_COLLECTION[opener], start, end, items), i + 1
        return ("map" if is_map else _COLLECTION[opener], start, end, items), i + 1

    def value(self, i: int) -> tuple[Node, int]:
        """The element that starts at token ``i``, and the index of the token after it."""
        tokens = self.tokens
        tok = tokens[i]
        first = tok[0]
        at = self.offsets[i]
        if first == '"':
            if tok == '"' or (tok == '""' and self.text.startswith('"""', at)):
                raise _NotALiteral
            return ("STRING", tok, at), i + 1
        if first in _NUMBER_STARTS:
            return _number(tok, at), i + 1
        if first == "-":
            num = tokens[i + 1]
            if num[0] not in _NUMBER_STARTS:
                raise _NotALiteral
            return ("neg", at, _number(num, self.offsets[i + 1])), i + 2
        if first in _NAME_STARTS:
            if tok in _KEYWORD_LEAVES:
                return (tok, tok, at), i + 1
            if tok in self.keywords:
                raise _NotALiteral
            name: Node = ("NAME", tok, at)
            if tokens[i + 1] != ".":
                return name, i + 1
            member = tokens[i + 2]
            if (
                member[0] not in _NAME_STARTS
                or member in self.keywords
                or member in _KEYWORD_LEAVES
            ):
                raise _NotALiteral
            if tokens[i + 3] in (".", "(", "["):
                raise _NotALiteral  # a longer postfix chain: lark's
            return ("attr", at, name, ("NAME", member, self.offsets[i + 2])), i + 3
        if tok in _CLOSE:
            return self.collection(i)
        raise _NotALiteral


def _number(tok: str, at: int) -> Node:
    return ("INT" if tok.isdigit() else "FLOAT", tok, at)
