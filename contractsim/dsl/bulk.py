"""Lowering of large literals in bulk: the compact description that
:mod:`contractsim.grammar.literals` reads a large literal into, turned into the IR in one tight
loop.

The IR is exactly what lowering lark's tree of the literal gives (same node classes, values and
spans): plain strings, integers, ``true``/``false``/``null``, names and collections are built
here; any other element (a float, a negative number, ``Enum.member``, a string with escapes, an
integer too large to read at once) is handed, as the lark tree it stands for, to the ordinary
lowering, which also reports its diagnostics. Nodes are made without their ``__init__``: every
slot is set through its descriptor, which costs half as much as the keyword arguments (and
the classes' fields are checked at import: if they change, the ordinary constructors are used).
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from collections import deque
from collections.abc import Callable
from itertools import chain, islice, repeat
from operator import add, getitem, itemgetter, sub
from typing import TYPE_CHECKING, Any

from ..diagnostics import Span, span_at
from ..grammar.literals import BulkLiteral, Node, Positions, element_tree, node_end, node_start
from . import ir

if TYPE_CHECKING:
    from .lower import _Lowerer

PLAIN_STRING_TEXT = re.compile(r'[^"\\\ue000\ue001\n]*')
"""The text of a string literal that is its value as it is: no escape, no private-use brace."""

_CONSTANTS = {"true": True, "false": False, "null": None}
_new = object.__new__
_NOT_PLAIN = ('"', "\\", "\ue000", "\ue001", "\n")
"""The characters `PLAIN_STRING_TEXT` refuses."""
_COLUMNS_FROM = 32
"""Collections of at least this many flat collections on one line are built column by column."""
_FLAT_KINDS = {"tuple", "list", "set"}


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def _setters(cls: type, names: list[str]) -> list[Callable[[Any, Any], None]]:
    return [getattr(cls, name).__set__ for name in names]


def node_setters(cls: type, names: list[str]) -> list[Callable[[Any, Any], None]] | None:
    """The setters of the slots of ``cls`` named ``names``, if those are exactly its fields
    in that order and it has slots (a maker may then make a node by setting them); else None
    (the maker uses the constructor)."""
    if _fields(cls) != names or not hasattr(cls, "__slots__"):
        return None
    return _setters(cls, names)


# the fields these makers set, in order; any other layout falls back to the constructors
_SPAN_FIELDS = ["file", "line", "col", "end_line", "end_col"]
_SCALAR_FIELDS = ["span", "kind", "value", "raw"]
_COLLECTION_FIELDS = ["span", "kind", "type", "items"]
_FAST = (
    _fields(Span) == _SPAN_FIELDS
    and _fields(ir.ScalarLit) == _SCALAR_FIELDS
    and _fields(ir.Collection) == _COLLECTION_FIELDS
    and all(hasattr(cls, "__slots__") for cls in (Span, ir.ScalarLit, ir.Collection))
)


def _slow_scalar(span: Span, value: Any) -> ir.ScalarLit:
    return ir.ScalarLit(span=span, value=value)


def _slow_collection(span: Span, kind: Any, items: tuple[ir.Expr, ...]) -> ir.Collection:
    return ir.Collection(span=span, type=kind, items=items)


if _FAST:
    _s_file, _s_line, _s_col, _s_end_line, _s_end_col = _setters(Span, _SPAN_FIELDS)
    _l_span, _l_kind, _l_value, _l_raw = _setters(ir.ScalarLit, _SCALAR_FIELDS)

    def _make_scalar(span: Span, value: Any) -> ir.ScalarLit:
        node: ir.ScalarLit = _new(ir.ScalarLit)
        _l_span(node, span)
        _l_kind(node, "literal")
        _l_value(node, value)
        _l_raw(node, False)
        return node

    _c_span, _c_kind, _c_type, _c_items = _setters(ir.Collection, _COLLECTION_FIELDS)

    def _make_collection(span: Span, kind: Any, items: tuple[ir.Expr, ...]) -> ir.Collection:
        node: ir.Collection = _new(ir.Collection)
        _c_span(node, span)
        _c_kind(node, "collection")
        _c_type(node, kind)
        _c_items(node, items)
        return node

    def _flat_leaves(
        elements: list[Node], file: str, line: int, line_start: int
    ) -> tuple[ir.Expr, ...] | None:
        """The elements of a collection on one line when all are plain strings and integers
        (the commonest case, built without a call per node), else None."""
        plain = PLAIN_STRING_TEXT.fullmatch
        new, span_class, scalar_class = _new, Span, ir.ScalarLit
        s_file, s_line, s_col, s_end_line, s_end_col = (
            _s_file,
            _s_line,
            _s_col,
            _s_end_line,
            _s_end_col,
        )
        l_span, l_kind, l_value, l_raw = _l_span, _l_kind, _l_value, _l_raw
        built: list[ir.Expr] = []
        append = built.append
        for element in elements:
            kind, text, start = element[0], element[1], element[2]
            if kind == "STRING":
                if not plain(text, 1, len(text) - 1):
                    return None
                value: Any = text[1:-1]
            elif kind == "INT" and len(text) < 19:
                value = int(text)
            else:
                return None
            col = start - line_start + 1
            span = new(span_class)
            s_file(span, file)
            s_line(span, line)
            s_col(span, col)
            s_end_line(span, line)
            s_end_col(span, col + len(text))
            node = new(scalar_class)
            l_span(node, span)
            l_kind(node, "literal")
            l_value(node, value)
            l_raw(node, False)
            append(node)
        return tuple(built)

    def _consume(calls: Any) -> None:
        deque(calls, 0)

    def _column_spans(file: str, line: int, cols: list[int], end_cols: list[int]) -> list[Span]:
        """Spans on one line, each field set for all of them by one ``map`` (C speed)."""
        n = len(cols)
        spans: list[Span] = list(map(_new, repeat(Span, n)))
        _consume(map(_s_file, spans, repeat(file, n)))
        _consume(map(_s_line, spans, repeat(line, n)))
        _consume(map(_s_col, spans, cols))
        _consume(map(_s_end_line, spans, repeat(line, n)))
        _consume(map(_s_end_col, spans, end_cols))
        return spans

    def _flat_columns(
        items: list[Node], file: str, line: int, line_start: int
    ) -> tuple[ir.Expr, ...] | None:
        """A collection's elements when they are all lists, sets and tuples of plain strings
        (or all of integers) on one line (a set of 100,000 pairs): the same nodes as
        :func:`_flat_leaves` builds one by one, made column by column; else None."""
        if not set(map(itemgetter(0), items)) <= _FLAT_KINDS:
            return None
        elements = list(map(itemgetter(3), items))
        if not all(elements):  # an empty `{}` is a set of kind "empty": built one by one
            return None
        leaves = list(chain.from_iterable(elements))
        leaf_kinds = set(map(itemgetter(0), leaves))
        texts = list(map(itemgetter(1), leaves))
        values: list[Any]
        if leaf_kinds == {"STRING"}:
            values = list(map(getitem, texts, repeat(slice(1, -1))))
            inside = "".join(values)
            if any(c in inside for c in _NOT_PLAIN):
                return None
        elif leaf_kinds == {"INT"}:
            if max(map(len, texts)) >= 19:
                return None
            values = list(map(int, texts))
        else:
            return None
        shift = line_start - 1
        cols = list(map(sub, map(itemgetter(2), leaves), repeat(shift)))
        spans = _column_spans(file, line, cols, list(map(add, cols, map(len, texts))))
        n = len(leaves)
        scalars: list[ir.ScalarLit] = list(map(_new, repeat(ir.ScalarLit, n)))
        _consume(map(_l_span, scalars, spans))
        _consume(map(_l_kind, scalars, repeat("literal", n)))
        _consume(map(_l_value, scalars, values))
        _consume(map(_l_raw, scalars, repeat(False, n)))
        sizes = set(map(len, elements))
        parts: list[tuple[ir.Expr, ...]]
        if len(sizes) == 1:  # all pairs, say: cut at C speed
            parts = list(zip(*[iter(scalars)] * sizes.pop()))
        else:
            rest = iter(scalars)
            parts = [tuple(islice(rest, len(e))) for e in elements]
        m = len(items)
        starts = list(map(sub, map(itemgetter(1), items), repeat(shift)))
        ends = list(map(sub, map(itemgetter(2), items), repeat(shift)))
        nodes: list[ir.Collection] = list(map(_new, repeat(ir.Collection, m)))
        _consume(map(_c_span, nodes, _column_spans(file, line, starts, ends)))
        _consume(map(_c_kind, nodes, repeat("collection", m)))
        _consume(map(_c_type, nodes, map(itemgetter(0), items)))
        _consume(map(_c_items, nodes, parts))
        return tuple(nodes)

else:  # pragma: no cover - only if the node classes change
    _make_scalar = _slow_scalar
    _make_collection = _slow_collection

    def _flat_leaves(
        elements: list[Node], file: str, line: int, line_start: int
    ) -> tuple[ir.Expr, ...] | None:
        return None

    def _flat_columns(
        items: list[Node], file: str, line: int, line_start: int
    ) -> tuple[ir.Expr, ...] | None:
        return None


make_scalar = _make_scalar
"""``make_scalar(span, value)``: ``ir.ScalarLit(span=span, value=value)``, made for less."""


def lower_bulk(lowerer: _Lowerer, tree: BulkLiteral) -> ir.Expr:
    """The IR of a large literal read by :mod:`contractsim.grammar.literals`."""
    node, positions = tree.bulk, tree.positions
    if node is None or positions is None or lowerer.line_shift or lowerer.col_shift:
        plain: ir.Expr = lowerer.lower(_plain_tree(tree))
        return plain
    return _Builder(lowerer, positions).collection(node)


def _plain_tree(tree: BulkLiteral) -> Any:
    from lark import Tree

    return Tree(tree.data, tree.children, tree.meta)


class _Builder:
    """Builds the IR of one literal; spans from offsets (see :class:`Positions`)."""

    def __init__(self, lowerer: _Lowerer, positions: Positions) -> None:
        self.lowerer = lowerer
        self.positions = positions
        self.file = lowerer.filename
        self.newlines = positions.newlines
        self.first_line = positions.first_line
        self.first_line_start = positions.first_line_start

    def span(self, start: int, end: int) -> Span:
        line_col = self.positions.line_col
        line, col = line_col(start)
        end_line, end_col = line_col(end)
        return span_at(self.file, line, col, end_line, end_col)

    def fallback(self, node: Node) -> ir.Expr:
        """An element this module does not build: lowered from its lark tree."""
        result: ir.Expr = self.lowerer.lower(element_tree(node, self.positions))
        return result

    def collection(self, node: Node) -> ir.Expr:
        kind, start, end, items = node
        span = self.span(start, end)
        if kind == "map":
            entries = tuple(self.entry(entry) for entry in items)
            return ir.MapLit(span=span, entries=entries)
        lowered = self.items(items)
        if kind == "set" and not lowered:
            return ir.Collection(span=span, type="empty", items=lowered)
        return ir.Collection(span=span, type=kind, items=lowered)

    def entry(self, node: Node) -> ir.MapEntry:
        _, key, value = node
        start = node_start(key)
        span = self.span(start, node_end(value))
        return ir.MapEntry(span=span, key=self.element(key), value=self.element(value))

    def element(self, node: Node) -> ir.Expr:
        kind = node[0]
        if kind in ("set", "list", "tuple", "map"):
            return self.collection(node)
        result = self.items([node])
        return result[0]

    def items(self, items: list[Node]) -> tuple[ir.Expr, ...]:
        """The elements of a collection: strings, integers, names, constants and the lists,
        sets and tuples of those built here, in one loop (the common case); a span on one line
        found without bisection."""
        out: list[ir.Expr] = []
        append = out.append
        file = self.file
        newlines = self.newlines
        first_line, first_line_start = self.first_line, self.first_line_start
        first_newline = newlines[0] if newlines else 1 << 62
        last_newline = newlines[-1] if newlines else -1
        if (
            len(items) >= _COLUMNS_FROM
            and items[0][0] in _FLAT_KINDS
            and items[-1][0] in _FLAT_KINDS
        ):
            start, end = items[0][1], items[-1][2]
            index = bisect_right(newlines, start - 1)
            if index == len(newlines) or newlines[index] >= end:  # all on one line
                line_start = newlines[index - 1] + 1 if index else first_line_start
                columns = _flat_columns(items, file, first_line + index, line_start)
                if columns is not None:
                    return columns
        plain = PLAIN_STRING_TEXT.fullmatch
        make_span, make_scalar, make_collection = span_at, _make_scalar, _make_collection
        flat_leaves = _flat_leaves
        for node in items:
            kind = node[0]
            if kind == "STRING" or kind == "INT" or kind == "NAME" or kind in _CONSTANTS:
                text, start = node[1], node[2]
                if kind == "STRING":
                    if not plain(text, 1, len(text) - 1):
                        append(self.fallback(node))
                        continue
                    value: Any = text[1:-1]
                elif kind == "INT":
                    if len(text) >= 19:
                        append(self.fallback(node))
                        continue
                    value = int(text)
                elif kind == "NAME":
                    value = text
                else:
                    value = _CONSTANTS[kind]
                # the line of `start`: the first line, the last, or found by bisection
                if start <= first_newline:
                    line, col = first_line, start - first_line_start + 1
                elif start > last_newline:
                    line, col = first_line + len(newlines), start - last_newline
                else:
                    index = bisect_right(newlines, start - 1)
                    line, col = first_line + index, start - newlines[index - 1]
                span = make_span(file, line, col, line, col + len(text))
                if kind == "NAME":
                    append(ir.Name(span=span, name=value))
                else:
                    append(make_scalar(span, value))
            elif kind == "tuple" or kind == "list" or kind == "set":
                _, start, end, elements = node
                # the line it starts on, and whether it ends on that line
                if end <= first_newline:
                    line, line_start, one_line = first_line, first_line_start, True
                else:
                    index = bisect_right(newlines, start - 1)
                    line = first_line + index
                    line_start = newlines[index - 1] + 1 if index else first_line_start
                    one_line = index == len(newlines) or newlines[index] >= end
                if one_line:
                    col = start - line_start + 1
                    span = make_span(file, line, col, line, end - line_start + 1)
                    lowered = flat_leaves(elements, file, line, line_start)
                    if lowered is None:
                        lowered = self.items(elements)
                else:
                    lowered = self.items(elements)
                    span = self.span(start, end)
                if kind == "set" and not lowered:
                    kind = "empty"
                append(make_collection(span, kind, lowered))
            elif kind == "map":
                append(self.collection(node))
            else:
                append(self.fallback(node))
        return tuple(out)
