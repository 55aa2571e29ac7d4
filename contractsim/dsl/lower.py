"""Lark parse tree → typed IR. The only module that reads raw lark trees.

Each grammar rule (or alias) ``r`` is lowered by the method ``_r``; :data:`LOWERED_RULES` lists them
and a test checks that it covers every rule of the grammar.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from typing import Any, ClassVar, cast

from lark import Token, Tree

from ..diagnostics import SPAN_SWAP, ContractError, Diagnostic, OpenSpan, Span, error, span_at
from ..grammar.literals import BulkLiteral
from ..grammar.parse import parse
from . import ir
from .bulk import PLAIN_STRING_TEXT as _PLAIN
from .bulk import lower_bulk
from .bulk import make_scalar as _make_scalar
from .bulk import node_setters as _node_setters

# ``\{`` and ``\}`` stay literal braces in message templates; until the template is read they are
# held as two private-use characters, so that ``\\{`` (a backslash, then a hole) stays a hole
_OPEN, _CLOSE = "\ue000", "\ue001"

_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "0": "\0",
    "{": _OPEN,
    "}": _CLOSE,
}


# ---------------------------------------------------------------------- node makers
# The commonest nodes (names, type names, binary operations, message parts) are made by setting
# their slots, as bulk.py makes scalars: a frozen record's ``__init__`` takes keyword arguments
# and fills the defaults, which costs about as much again. Used only while the classes have
# exactly these fields (else the constructors; tests/test_lower_speed.py compares both).
_NAME_SETTERS = _node_setters(ir.Name, ["span", "kind", "name", "state"])
_NAMED_TYPE_SETTERS = _node_setters(ir.NamedType, ["span", "kind", "name", "constraints"])
_BINARY_SETTERS = _node_setters(ir.Binary, ["span", "kind", "op", "left", "right"])
_PART_SETTERS = _node_setters(ir.TemplatePart, ["span", "kind", "text", "expr"])
_new_node = object.__new__


def _make_name(span: Span, name: str) -> ir.Name:
    """``ir.Name(span=span, name=name)``."""
    if _NAME_SETTERS is None:
        return ir.Name(span=span, name=name)
    s_span, s_kind, s_name, s_state = _NAME_SETTERS
    node: ir.Name = _new_node(ir.Name)
    s_span(node, span)
    s_kind(node, "name")
    s_name(node, name)
    s_state(node, False)
    return node


def _make_named_type(span: Span, name: str) -> ir.NamedType:
    """``ir.NamedType(span=span, name=name)``."""
    if _NAMED_TYPE_SETTERS is None:
        return ir.NamedType(span=span, name=name)
    s_span, s_kind, s_name, s_constraints = _NAMED_TYPE_SETTERS
    node: ir.NamedType = _new_node(ir.NamedType)
    s_span(node, span)
    s_kind(node, "named")
    s_name(node, name)
    s_constraints(node, ())
    return node


def _make_binary(span: Span, op: Any, left: ir.Expr, right: ir.Expr) -> ir.Binary:
    """``ir.Binary(span=span, op=op, left=left, right=right)``."""
    if _BINARY_SETTERS is None:
        return ir.Binary(span=span, op=op, left=left, right=right)
    s_span, s_kind, s_op, s_left, s_right = _BINARY_SETTERS
    node: ir.Binary = _new_node(ir.Binary)
    s_span(node, span)
    s_kind(node, "binary")
    s_op(node, op)
    s_left(node, left)
    s_right(node, right)
    return node


def _make_part(span: Span, text: str | None, expr: ir.Expr | None) -> ir.TemplatePart:
    """``ir.TemplatePart(span=span, text=text, expr=expr)``."""
    if _PART_SETTERS is None:
        return ir.TemplatePart(span=span, text=text, expr=expr)
    s_span, s_kind, s_text, s_expr = _PART_SETTERS
    node: ir.TemplatePart = _new_node(ir.TemplatePart)
    s_span(node, span)
    s_kind(node, "part")
    s_text(node, text)
    s_expr(node, expr)
    return node


def _rule_table(cls: type) -> dict[str, Callable[[Any, Any], Any]]:
    """Grammar rule ``r`` → the method ``_r`` of ``cls`` (a lowercase name after the
    underscore), looked up once per class instead of once per node."""
    return {
        name[1:]: getattr(cls, name)
        for name in dir(cls)
        if name.startswith("_") and not name.startswith("__") and name[1:].islower()
    }


class _Lowerer:
    #: grammar rule → this class's method lowering it (a subclass gets its own table)
    rule_methods: ClassVar[dict[str, Callable[[Any, Any], Any]]]
    #: where the lowered text starts in its file (a message hole's expression is parsed alone)
    line_shift = 0
    col_shift = 0

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.diagnostics: list[Diagnostic] = []
        #: the class's table, read from the instance (cheaper per node)
        self._rules = self.rule_methods

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.rule_methods = _rule_table(cls)

    # ------------------------------------------------------------------ positions
    def span(self, node: Tree[Token] | Token | None) -> Span:
        """Where ``node`` is: a tree's span from its ``meta``, a token's from its positions,
        the file alone for None or a tree without positions."""
        try:
            # ``node.meta`` read without lark's property (which makes an empty Meta when
            # there is none: a span of the file alone, as no Meta does here)
            meta = node._meta  # type: ignore[union-attr]
        except AttributeError:  # a token, or None
            return self._token_span(node)  # type: ignore[arg-type]
        if meta is None or meta.empty:
            return Span(file=self.filename)
        if SPAN_SWAP:  # span_at's body, inlined: this runs for nearly every node
            span = OpenSpan()
            span.file = self.filename
            span.line = meta.line
            span.col = meta.column
            span.end_line = meta.end_line
            span.end_col = meta.end_column
            span.__class__ = Span  # type: ignore[assignment]
            return span  # type: ignore[return-value]
        return span_at(self.filename, meta.line, meta.column, meta.end_line, meta.end_column)

    def _token_span(self, tok: Token | None) -> Span:
        if tok is None:
            return Span(file=self.filename)
        line, col = tok.line or 1, tok.column or 1
        end_line, end_col = tok.end_line or line, tok.end_column or col + len(tok)
        return span_at(self.filename, line, col, end_line, end_col)

    # ------------------------------------------------------------------ dispatch
    def lower(self, node: Tree[Token] | Token) -> Any:
        try:
            rule = node.data  # type: ignore[union-attr]
        except AttributeError:
            if isinstance(node, Token):
                return self._token(node)
            raise
        try:
            method = self._rules[rule]
        except KeyError:  # pragma: no cover - guarded by test_lower
            raise NotImplementedError(f"no lowering for grammar rule {rule!r}") from None
        return method(self, node)

    def _token(self, tok: Token) -> Any:
        return str(tok)

    # ------------------------------------------------------------------ strings
    def _string(self, tree: Tree[Token]) -> ir.ScalarLit:
        return _make_scalar(self.span(tree), self.string_text(tree.children[0]))  # type: ignore[arg-type]

    def string_text(self, tok: Token) -> str:
        """The value of a string token (its escapes read; unknown ones reported)."""
        if tok[0] == '"' and tok[1:2] != '"' and _PLAIN.fullmatch(tok, 1, len(tok) - 1):
            return tok[1:-1]  # no escape, no brace held as a private-use character
        return self.unescape(tok).replace(_OPEN, "{").replace(_CLOSE, "}")

    def value(self, node: Tree[Token] | Token) -> Any:
        """A literal in a declaration position (a version, a description, a probability)."""
        if isinstance(node, Tree) and node.data == "string":  # its text, without a node
            return self.string_text(node.children[0])  # type: ignore[arg-type]
        lowered = self.lower(node)
        return lowered.value if isinstance(lowered, ir.ScalarLit) else lowered

    def unescape(self, tok: Token) -> str:
        raw = str(tok)
        body = raw[3:-3] if raw.startswith('"""') else raw[1:-1]
        if "\\" not in body:
            return body
        out: list[str] = []
        i = 0
        while i < len(body):
            ch = body[i]
            if ch != "\\":
                out.append(ch)
                i += 1
                continue
            nxt = body[i + 1] if i + 1 < len(body) else ""
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
            elif nxt == "u" and _is_hex(body[i + 2 : i + 6]):
                out.append(chr(int(body[i + 2 : i + 6], 16)))
                i += 6
            else:
                self.diagnostics.append(
                    error(
                        "E0107",
                        f"unknown escape sequence `\\{nxt}` in string",
                        self.span(tok),
                        hint='use one of \\n \\t \\r \\\\ \\" \\uXXXX, or a raw string r"…" for '
                        "patterns",
                    )
                )
                out.append(nxt)
                i += 2
        return "".join(out)

    def opt_string(self, node: Tree[Token] | Token | None) -> str | None:
        return None if node is None else cast(str, self.value(node))

    def template(self, node: Tree[Token] | None) -> ir.Template | None:
        """Lower a message string, parsing each ``{expr}`` hole as an expression."""
        if node is None:
            return None
        tok: Token = node.children[0]  # type: ignore[assignment]
        text = self.unescape(tok)
        span = self.span(tok)
        simple = self._simple_template(text, tok, span)
        if simple is not None:
            return simple
        parts: list[ir.TemplatePart] = []
        i, n = 0, len(text)
        buf: list[str] = []
        while i < n:
            # plain text up to the next brace is taken whole (not a character at a time)
            special = _TEMPLATE_SPECIAL.search(text, i)
            if special is None:
                buf.append(text[i:])
                break
            if special.start() > i:
                buf.append(text[i : special.start()])
                i = special.start()
            ch = text[i]
            if ch in (_OPEN, _CLOSE):
                buf.append("{" if ch == _OPEN else "}")
                i += 1
                continue
            if ch == "{":
                if i + 1 < n and text[i + 1] == "{":
                    buf.append("{")
                    i += 2
                    continue
                close = _matching_brace(text, i)
                if close < 0:
                    self.diagnostics.append(
                        error(
                            "E0108",
                            "`{` in a message opens a value that is never closed",
                            span,
                            hint="close it with `}`, or write `{{` for a literal brace",
                        )
                    )
                    buf.append(text[i:])
                    break
                if buf:
                    parts.append(_make_part(span, "".join(buf), None))
                    buf = []
                hole = text[i + 1 : close]
                parts.append(_make_part(span, None, self.hole(hole, tok, i + 1)))
                i = close + 1
                continue
            if ch == "}" and i + 1 < n and text[i + 1] == "}":
                buf.append("}")
                i += 2
                continue
            buf.append(ch)
            i += 1
        if buf:
            parts.append(_make_part(span, "".join(buf), None))
        source = text.replace(_OPEN, "{").replace(_CLOSE, "}")
        return ir.Template(span=span, source=source, parts=tuple(parts))

    def _simple_template(self, text: str, tok: Token, span: Span) -> ir.Template | None:
        """The template of a message whose every brace belongs to a hole holding no brace and
        no quote (``"{path} is missing"``: nearly every message), read with one split; None for
        any other message, which :meth:`template` reads a character class at a time."""
        pieces = _SIMPLE_HOLE.split(text)
        holes = len(pieces) // 2
        if text.count("{") != holes or text.count("}") != holes or _OPEN in text or _CLOSE in text:
            return None  # `{{`, `}}`, an escaped or unclosed brace, a nested one, a string
        if not holes:
            parts = (_make_part(span, text, None),) if text else ()
            return ir.Template(span=span, source=text, parts=parts)
        # where :meth:`hole` puts a bare name: on the string's first line, at its place in the
        # token, or at column 1 once the token has passed a line break
        file, line = self.filename, (tok.line or 1) + self.line_shift
        first = (tok.column or 1) + (3 if tok.startswith('"""') else 1)
        newline = tok.find("\n")
        made: list[ir.TemplatePart] = []
        at = 0  # where the piece starts in the text
        for index, piece in enumerate(pieces):
            if index % 2 == 0:  # text between holes
                if piece:
                    made.append(_make_part(span, piece, None))
                at += len(piece)
                continue
            offset = at + 1  # the hole's source, after its `{`
            if _IDENTIFIER.fullmatch(piece) and piece not in _KEYWORDS:  # as in hole()
                start = 1 if 0 <= newline <= offset else first + offset
                name_span = span_at(file, line, start, line, start + len(piece))
                made.append(_make_part(span, None, _make_name(name_span, piece)))
            else:
                made.append(_make_part(span, None, self.hole(piece, tok, offset)))
            at += len(piece) + 2
        return ir.Template(span=span, source=text, parts=tuple(made))

    def hole(self, source: str, tok: Token, offset: int) -> ir.Expr:
        line = (tok.line or 1) - 1 + self.line_shift
        col = (tok.column or 1) + offset + (3 if tok.startswith('"""') else 1) - 1
        if "\n" in tok[: offset + 1]:
            col = 0
        if _IDENTIFIER.fullmatch(source) and source not in _KEYWORDS:
            # most holes are a bare name: no need for a parser run
            start = col + 1
            span = span_at(self.filename, line + 1, start, line + 1, start + len(source))
            return _make_name(span, source)
        sub = _ShiftedLowerer(self.filename, line_shift=line, col_shift=col)
        try:
            tree = _parse_hole(source, self.filename)
        except ContractError as exc:
            for diag in exc.diagnostics:
                d_span = diag.span
                shifted = dataclasses.replace(
                    d_span,
                    line=d_span.line + line,
                    end_line=d_span.end_line + line,
                    col=d_span.col + col,
                    end_col=d_span.end_col + col,
                )
                self.diagnostics.append(
                    error(
                        "E0108",
                        f"the value `{{{source}}}` in this message is not an expression: "
                        + diag.message,
                        shifted,
                        hint="write `{{` and `}}` for literal braces",
                    )
                )
            return ir.ScalarLit(span=self.span(tok), value=source)
        result = cast(ir.Expr, sub.lower(tree))
        self.diagnostics.extend(sub.diagnostics)
        return result

    def _raw_string(self, tree: Tree[Token]) -> ir.ScalarLit:
        tok = cast(Token, tree.children[0])
        return ir.ScalarLit(span=self.span(tree), value=str(tok)[2:-1], raw=True)

    def _number(self, tree: Tree[Token]) -> ir.ScalarLit:
        tok: Token = tree.children[0]  # type: ignore[assignment]
        if tok.type == "INT" and len(tok) < 19:  # fits whatever its digits: no check needed
            return _make_scalar(self.span(tree), int(tok))
        if tok.type == "FLOAT":
            value: float = float(tok)
            if value in (float("inf"), float("-inf")):
                self._too_big(tok, "the number is too large for a float", "floats go up to 1.8e308")
            return ir.ScalarLit(span=self.span(tree), value=value)
        digits = str(tok).lstrip("0") or "0"
        if len(digits) > 78:  # 2**256 has 78 digits; longer never fits
            self._too_big(tok, f"the integer has {len(digits):,} digits")
            return ir.ScalarLit(span=self.span(tree), value=0)
        number = int(digits)
        if number > 1 << 256:
            self._too_big(tok, "the integer is larger than 2**256")
        return ir.ScalarLit(span=self.span(tree), value=number)

    def _too_big(
        self,
        tok: Token,
        message: str,
        hint: str = "integers go up to 2**256; write large quantities in a smaller unit",
    ) -> None:
        self.diagnostics.append(error("E0109", message, self.span(tok), hint=hint))

    def _neg_number(self, tree: Tree[Token]) -> ir.ScalarLit:
        return ir.ScalarLit(span=self.span(tree), value=-cast(float, self.value(tree.children[0])))

    # ------------------------------------------------------------------ contract
    def _start(self, tree: Tree[Token]) -> ir.Contract:
        header = cast(ir.Header, self.lower(tree.children[0]))
        buckets: dict[str, list[Any]] = {
            "types": [],
            "state": [],
            "consts": [],
            "predicates": [],
            "functions": [],
            "events": [],
            "goals": [],
            "tools": [],
            "machines": [],
        }
        for child in tree.children[1:]:
            item = self.lower(cast("Tree[Token]", child))
            if isinstance(item, list):
                buckets["state"].extend(item)
            else:
                buckets[_BUCKET[type(item)]].append(item)
        return ir.Contract(
            span=self.span(tree),
            header=header,
            **{k: tuple(v) for k, v in buckets.items()},  # type: ignore[arg-type]
        )

    def _header(self, tree: Tree[Token]) -> ir.Header:
        name, version, desc = tree.children
        return ir.Header(
            span=self.span(tree),
            name=str(name),
            version=self.value(version),
            version_span=self.span(version),
            description=self.opt_string(desc),
        )

    def _type_decl(self, tree: Tree[Token]) -> ir.TypeDecl:
        name, texpr, desc = tree.children
        return ir.TypeDecl(
            span=self.span(name),
            name=str(name),
            type=self.lower(texpr),
            description=self.opt_string(desc),
        )

    def _const_decl(self, tree: Tree[Token]) -> ir.ConstDecl:
        name, texpr, value = tree.children
        return ir.ConstDecl(
            span=self.span(name),
            name=str(name),
            type=None if texpr is None else self.lower(texpr),
            value=self.lower(value),
        )

    def _predicate_decl(self, tree: Tree[Token]) -> ir.PredicateDecl:
        name, params, body, desc = tree.children
        return ir.PredicateDecl(
            span=self.span(name),
            name=str(name),
            params=() if params is None else self.lower(params),
            body=self.lower(body),
            description=self.opt_string(desc),
        )

    def _function_decl(self, tree: Tree[Token]) -> ir.FunctionDecl:
        name, params, returns, body, desc = tree.children
        return ir.FunctionDecl(
            span=self.span(name),
            name=str(name),
            params=() if params is None else self.lower(params),
            returns=self.lower(returns),
            body=self.lower(body),
            description=self.opt_string(desc),
        )

    def _event_decl(self, tree: Tree[Token]) -> ir.EventDecl:
        name, desc = tree.children
        return ir.EventDecl(span=self.span(name), name=str(name), description=self.opt_string(desc))

    def _goal_decl(self, tree: Tree[Token]) -> ir.GoalDecl:
        name, cond, desc = tree.children
        return ir.GoalDecl(
            span=self.span(name),
            name=str(name),
            cond=self.lower(cond),
            description=self.opt_string(desc),
        )

    def _state_decl(self, tree: Tree[Token]) -> list[ir.StateVar]:
        return [self.lower(child) for child in tree.children]

    def _state_var(self, tree: Tree[Token]) -> ir.StateVar:
        name, texpr, init, desc = tree.children
        lowered_init = self.lower(init)
        return ir.StateVar(
            span=self.span(name),
            name=str(name),
            type=self.lower(texpr),
            init=None if lowered_init is _UNKNOWN else lowered_init,
            description=self.opt_string(desc),
        )

    def _unknown_init(self, tree: Tree[Token]) -> object:
        return _UNKNOWN

    def _unknown_in(self, tree: Tree[Token]) -> ir.UnknownIn:
        lo, hi = tree.children
        return ir.UnknownIn(span=self.span(tree), lo=self.lower(lo), hi=self.lower(hi))

    # ------------------------------------------------------------------ types
    def _type_expr(self, tree: Tree[Token]) -> ir.TypeExpr:
        children = tree.children
        if len(children) == 1:  # one option, as nearly every type has: the term is the type
            return self._type_term(cast("Tree[Token]", children[0]))
        options = [self.lower(child) for child in children]
        return ir.UnionType(span=self.span(tree), options=tuple(options))

    def _type_term(self, tree: Tree[Token]) -> ir.TypeExpr:
        children = tree.children
        atom = children[0]
        if len(children) == 1:  # no constraint, as nearly every type has; the atom is a tree
            return self._rules[atom.data](self, atom)  # type: ignore[union-attr,no-any-return]
        if isinstance(atom, Tree) and atom.data == "type_name":
            # `str max_length 10`: the named type made once, with its constraints (what
            # replacing those of the bare `str` below gives, without making it twice)
            name = str(atom.children[0])
            constraints = tuple([self.lower(c) for c in children[1:]])
            return ir.NamedType(span=self.span(tree), name=name, constraints=constraints)
        base: ir.TypeExpr = self.lower(atom)
        constraints = tuple([self.lower(c) for c in children[1:]])
        span = self.span(tree)
        return dataclasses.replace(base, constraints=base.constraints + constraints, span=span)

    def _type_name(self, tree: Tree[Token]) -> ir.NamedType:
        return _make_named_type(self.span(tree), str(tree.children[0]))

    def _type_generic(self, tree: Tree[Token]) -> ir.GenericType:
        name, *args = tree.children
        return ir.GenericType(
            span=self.span(tree),
            name=str(name),
            args=tuple(self.lower(a) for a in args),
        )

    def _type_enum(self, tree: Tree[Token]) -> ir.EnumType:
        members = [self.lower(c) for c in tree.children if c is not None]
        return ir.EnumType(span=self.span(tree), members=tuple(members))

    def _enum_member(self, tree: Tree[Token]) -> ir.EnumMember:
        child = tree.children[0]
        value = str(child) if isinstance(child, Token) else cast(str, self.value(child))
        return ir.EnumMember(span=self.span(tree), value=value)

    def _type_record(self, tree: Tree[Token]) -> ir.RecordType:
        is_open = any(isinstance(c, Token) and c.type == "OPEN_REST" for c in tree.children)
        fields = [self.lower(c) for c in tree.children if isinstance(c, Tree)]
        if is_open:
            return ir.RecordType(span=self.span(tree), fields=tuple(fields), open=True)
        return ir.RecordType(span=self.span(tree), fields=tuple(fields))

    def _field(self, tree: Tree[Token]) -> ir.RecordField:
        name, optional, texpr, default, desc = tree.children
        return ir.RecordField(
            span=self.span(name),
            name=str(name) if isinstance(name, Token) else cast(str, self.value(name)),
            type=self.lower(texpr),
            optional=optional is not None,
            default=None if default is None else self.lower(default),
            description=self.opt_string(desc),
        )

    def _type_tagged(self, tree: Tree[Token]) -> ir.TaggedUnionType:
        tag, *variants = tree.children
        return ir.TaggedUnionType(
            span=self.span(tree),
            tag_field=str(tag),
            variants=tuple(self.lower(v) for v in variants if v is not None),
        )

    def _variant(self, tree: Tree[Token]) -> ir.Variant:
        key, texpr = tree.children
        tag = str(key) if isinstance(key, Token) else cast(str, self.value(key))
        return ir.Variant(span=self.span(tree), tag=tag, type=self.lower(texpr))

    def _type_null(self, tree: Tree[Token]) -> ir.NullType:
        return ir.NullType(span=self.span(tree))

    def _constraint(self, tree: Tree[Token]) -> ir.Constraint:
        key, value = tree.children
        return ir.Constraint(
            span=self.span(tree), key=cast(ir.ConstraintKey, str(key)), value=self.value(value)
        )

    # ------------------------------------------------------------------ tools
    def _tool_decl(self, tree: Tree[Token]) -> ir.Tool:
        name, params, returns, desc, *rest = tree.children
        attrs: dict[str, Any] = {"tags": (), "risks": (), "cost": None}
        conditions: list[ir.Condition] = []
        effects: list[ir.Stmt] = []
        outcomes: list[ir.Outcome] = []
        reports: list[ir.RecordField] = []
        flow: ir.Flow | None = None
        lets: list[ir.Let] = []
        rules = self._rules  # tool attributes and items are trees
        for child in rest:
            item = rules[child.data](self, child)  # type: ignore[union-attr]
            if isinstance(item, tuple) and item and item[0] == "attr":
                attrs[item[1]] = item[2]
            elif isinstance(item, ir.Condition):
                conditions.append(item)
            elif isinstance(item, ir.Outcome):
                outcomes.append(item)
            elif isinstance(item, ir.Flow):
                if flow is not None:
                    self.diagnostics.append(
                        error(
                            "E0203",
                            f"tool `{name}` has more than one flow",
                            item.span,
                            hint="merge the steps into one `flow { … }`",
                        )
                    )
                flow = item
            elif isinstance(item, tuple) and item and item[0] == "reports":
                reports.extend(item[1])
            elif isinstance(item, ir.Let):
                lets.append(item)
            else:
                effects.extend(cast("list[ir.Stmt]", item))
        return ir.Tool(
            span=self.span(name),
            name=str(name),
            params=() if params is None else self.lower(params),
            returns=None if returns is None else self.lower(returns),
            description=self.opt_string(desc),
            cost=attrs["cost"],
            tags=attrs["tags"],
            risks=attrs["risks"],
            conditions=tuple(conditions),
            effects=tuple(effects),
            outcomes=tuple(outcomes),
            flow=flow,
            reports=tuple(reports),
            lets=tuple(lets),
        )

    def _params(self, tree: Tree[Token]) -> tuple[ir.Param, ...]:
        return tuple([self.lower(c) for c in tree.children if c is not None])

    def _param(self, tree: Tree[Token]) -> ir.Param:
        name, optional, texpr, accepts, default, desc = tree.children
        return ir.Param(
            span=self.span(name),
            name=str(name),
            type=self.lower(texpr),
            optional=optional is not None,
            default=None if default is None else self.lower(default),
            description=self.opt_string(desc),
            accepts=None if accepts is None else self.lower(accepts),
        )

    def _cost_attr(self, tree: Tree[Token]) -> tuple[str, str, ir.Expr]:
        return ("attr", "cost", self.lower(tree.children[0]))

    def _tags_attr(self, tree: Tree[Token]) -> tuple[str, str, tuple[ir.Tag, ...]]:
        return ("attr", "tags", tuple([self.lower(c) for c in tree.children if c is not None]))

    def _tag(self, tree: Tree[Token]) -> ir.Tag:
        return ir.Tag(span=self.span(tree), name=".".join(str(c) for c in tree.children))

    def _risk_attr(self, tree: Tree[Token]) -> tuple[str, str, tuple[ir.Risk, ...]]:
        risks = tuple(ir.Risk(span=self.span(c), name=str(c)) for c in tree.children)
        return ("attr", "risks", risks)

    def _condition(self, tree: Tree[Token], strength: str) -> ir.Condition:
        cond, info = tree.children
        code: str | None = None
        code_span: Span | None = None
        message = hint = None
        if info is not None:
            for part in info.children:  # type: ignore[union-attr]
                if isinstance(part, Token):
                    code, code_span = str(part), self.span(part)
                elif part is None:
                    continue
                elif part.data == "hint":
                    hint = self.template(part.children[0])  # type: ignore[arg-type]
                else:
                    message = self.template(part)
        return ir.Condition(
            span=self.span(tree),
            strength=strength,  # type: ignore[arg-type]
            cond=self.lower(cond),
            code=code,
            code_span=Span(file=self.filename) if code_span is None else code_span,
            message=message,
            hint=hint,
        )

    def _require(self, tree: Tree[Token]) -> ir.Condition:
        return self._condition(tree, "require")

    def _should(self, tree: Tree[Token]) -> ir.Condition:
        return self._condition(tree, "should")

    def _ensure(self, tree: Tree[Token]) -> ir.Condition:
        return self._condition(tree, "ensure")

    def _failure_info(self, tree: Tree[Token]) -> None:  # pragma: no cover - read by _condition
        raise AssertionError("failure_info is lowered by _condition")

    def _hint(self, tree: Tree[Token]) -> None:  # pragma: no cover - read by its parent
        raise AssertionError("hint is lowered by its parent")

    def _effect(self, tree: Tree[Token]) -> list[ir.Stmt]:
        child = tree.children[0]
        lowered = self.lower(child)
        return list(lowered) if isinstance(lowered, tuple) else [lowered]

    def _reports(self, tree: Tree[Token]) -> tuple[str, list[ir.RecordField]]:
        return ("reports", [self.lower(c) for c in tree.children if c is not None])

    def _outcome(self, tree: Tree[Token]) -> ir.Outcome:
        name, kind, code, message, hint, event, when, observed, body = tree.children
        return ir.Outcome(
            span=self.span(name),
            name=str(name),
            outcome=cast(ir.OutcomeKind, str(kind)),
            code=None if code is None else str(code),
            code_span=self.span(name) if code is None else self.span(code),
            message=self.template(cast("Tree[Token] | None", message)),
            hint=None
            if hint is None
            else self.template(cast(Tree[Token], cast(Tree[Token], hint).children[0])),
            event=None if event is None else self.lower(event),
            when=None if when is None else self.lower(when),
            observed=None if observed is None else self.lower(observed),
            body=() if body is None else self.lower(body),
        )

    def _event_clause(self, tree: Tree[Token]) -> ir.EventRef:
        name, prob = tree.children
        return ir.EventRef(
            span=self.span(name),
            name=str(name),
            probability=None if prob is None else float(self.value(prob)),
            probability_span=self.span(prob) if prob is not None else Span(file=self.filename),
        )

    def _flow(self, tree: Tree[Token]) -> ir.Flow:
        initial: str | None = None
        initial_span = Span(file=self.filename)
        steps: list[ir.FlowStep] = []
        transitions: list[ir.FlowTransition] = []
        for child in tree.children:
            item = self.lower(child)
            if isinstance(item, ir.FlowStep):
                steps.append(item)
            elif isinstance(item, ir.FlowTransition):
                transitions.append(item)
            else:
                if initial is not None:
                    self.diagnostics.append(
                        error(
                            "E0501",
                            "the flow has more than one initial step",
                            item[1],
                            hint=f"`{initial}` is already the initial step",
                        )
                    )
                initial, initial_span = item
        return ir.Flow(
            span=self.span(tree),
            initial=initial,
            initial_span=initial_span,
            steps=tuple(steps),
            transitions=tuple(transitions),
        )

    def _flow_initial(self, tree: Tree[Token]) -> tuple[str, Span]:
        tok = tree.children[0]
        return str(tok), self.span(tok)

    def _flow_step(self, tree: Tree[Token]) -> ir.FlowStep:
        name, body = tree.children
        return ir.FlowStep(span=self.span(name), name=str(name), body=self.lower(body))

    def _flow_transition(self, tree: Tree[Token]) -> ir.FlowTransition:
        source, target, event, when = tree.children
        to_outcome, target_name, target_span = self.lower(target)
        return ir.FlowTransition(
            span=self.span(tree),
            source=str(source),
            target=target_name,
            target_span=target_span,
            to_outcome=to_outcome,
            event=None if event is None else self.lower(event),
            when=None if when is None else self.lower(when),
        )

    def _flow_to_step(self, tree: Tree[Token]) -> tuple[bool, str, Span]:
        tok = tree.children[0]
        return False, str(tok), self.span(tok)

    def _flow_to_outcome(self, tree: Tree[Token]) -> tuple[bool, str, Span]:
        tok = tree.children[0]
        return True, str(tok), self.span(tok)

    # ------------------------------------------------------------------ machines
    def _machine_decl(self, tree: Tree[Token]) -> ir.Machine:
        name, desc, *items = tree.children
        states: list[ir.MachineState] = []
        initial: list[ir.MachineState] = []
        finals: list[ir.MachineState] = []
        transitions: list[ir.MachineTransition] = []
        groups: dict[str, list[Any]] = {
            "states": states,
            "initial": initial,
            "final": finals,
            "transition": transitions,
        }
        for child in items:
            kind, value = self.lower(child)
            groups[kind].extend(value)
        return ir.Machine(
            span=self.span(name),
            name=str(name),
            description=self.opt_string(desc),
            states=tuple(states),
            initial=tuple(initial),
            finals=tuple(finals),
            transitions=tuple(transitions),
        )

    def _state_refs(self, tree: Tree[Token]) -> list[ir.MachineState]:
        return [
            ir.MachineState(span=self.span(tok), name=str(tok))
            for tok in tree.children
            if tok is not None
        ]

    def _machine_states(self, tree: Tree[Token]) -> tuple[str, list[ir.MachineState]]:
        return "states", self._state_refs(tree)

    def _machine_initial(self, tree: Tree[Token]) -> tuple[str, list[ir.MachineState]]:
        return "initial", self._state_refs(tree)

    def _machine_final(self, tree: Tree[Token]) -> tuple[str, list[ir.MachineState]]:
        return "final", self._state_refs(tree)

    def _machine_transition(self, tree: Tree[Token]) -> tuple[str, list[ir.MachineTransition]]:
        source, target, tool, outcome, when = tree.children
        trans = ir.MachineTransition(
            span=self.span(tree),
            source=str(source),
            source_span=self.span(source),
            target=str(target),
            target_span=self.span(target),
            tool=str(tool),
            tool_span=self.span(tool),
            outcome=None if outcome is None else str(outcome),
            outcome_span=self.span(outcome) if outcome is not None else Span(file=self.filename),
            when=None if when is None else self.lower(when),
        )
        return "transition", [trans]

    # ------------------------------------------------------------------ statements
    def _block(self, tree: Tree[Token]) -> tuple[ir.Stmt, ...]:
        rules = self._rules  # statements are trees
        return tuple([rules[c.data](self, c) for c in tree.children])  # type: ignore[union-attr]

    def _stmt(self, tree: Tree[Token]) -> ir.Stmt:
        # ``stmt_body ";"``: the separator is optional and carries no meaning
        return self.lower(tree.children[0])  # type: ignore[no-any-return]

    def _assign(self, tree: Tree[Token]) -> ir.Assign:
        target, value = tree.children
        lowered = _as_unknown_in(self.lower(value))
        return ir.Assign(span=self.span(tree), target=self.lower(target), value=lowered)

    def _aug_assign(self, tree: Tree[Token]) -> ir.Assign:
        target, op, value = tree.children
        return ir.Assign(
            span=self.span(tree),
            target=self.lower(target),
            op=cast(Any, str(op)),
            value=self.lower(value),
        )

    def _method_stmt(self, tree: Tree[Token]) -> ir.MethodCall:
        target, method, args = tree.children
        positional, _ = self._split_args(args)
        return ir.MethodCall(
            span=self.span(tree),
            target=self.lower(target),
            method=str(method),
            method_span=self.span(method),
            args=positional,
        )

    def _if_stmt(self, tree: Tree[Token]) -> ir.If:
        cond, then, orelse = tree.children
        lowered_else: tuple[ir.Stmt, ...] = ()
        if orelse is not None:
            lowered = self.lower(orelse)
            lowered_else = lowered if isinstance(lowered, tuple) else (lowered,)
        return ir.If(
            span=self.span(tree),
            cond=self.lower(cond),
            then=self.lower(then),
            orelse=lowered_else,
        )

    def _for_stmt(self, tree: Tree[Token]) -> ir.For:
        var, coll, body = tree.children
        return ir.For(
            span=self.span(tree), var=str(var), coll=self.lower(coll), body=self.lower(body)
        )

    def _let_stmt(self, tree: Tree[Token]) -> ir.Let:
        name, value = tree.children
        return ir.Let(span=self.span(tree), name=str(name), value=self.lower(value))

    def _warn_stmt(self, tree: Tree[Token]) -> ir.Warn:
        code, message = tree.children
        return ir.Warn(
            span=self.span(tree),
            code=str(code),
            code_span=self.span(code),
            message=self.template(cast("Tree[Token] | None", message)),
        )

    def _report_stmt(self, tree: Tree[Token]) -> ir.Report:
        children = tree.children
        fields = [
            ir.ReportField(
                span=self.span(children[i]),
                name=str(children[i]),
                value=self.lower(children[i + 1]),
            )
            for i in range(0, len(children), 2)
        ]
        return ir.Report(span=self.span(tree), fields=tuple(fields))

    def _var_stmt(self, tree: Tree[Token]) -> ir.Var:
        name, value = tree.children
        return ir.Var(span=self.span(tree), name=str(name), value=self.lower(value))

    def _fail_stmt(self, tree: Tree[Token]) -> ir.Fail:
        code, message = tree.children
        return ir.Fail(
            span=self.span(tree),
            code=str(code),
            code_span=self.span(code),
            message=self.template(cast("Tree[Token] | None", message)),
        )

    def _break_stmt(self, tree: Tree[Token]) -> ir.Break:
        return ir.Break(span=self.span(tree))

    def _continue_stmt(self, tree: Tree[Token]) -> ir.Continue:
        return ir.Continue(span=self.span(tree))

    def _lv_name(self, tree: Tree[Token]) -> ir.Name:
        return ir.Name(span=self.span(tree), name=str(tree.children[0]))

    def _lv_attr(self, tree: Tree[Token]) -> ir.Attr | ir.Name:
        obj, name = tree.children
        if self._is_state_prefix(obj):
            return self._state_name(tree, name)
        return ir.Attr(
            span=self.span(tree),
            obj=self.lower(obj),
            name=str(name),
            name_span=self.span(name),
        )

    def _lv_index(self, tree: Tree[Token]) -> ir.Index:
        obj, key = tree.children
        return ir.Index(span=self.span(tree), obj=self.lower(obj), key=self.lower(key))

    # ------------------------------------------------------------------ expressions
    def _binary(self, tree: Tree[Token], op: str) -> ir.Binary:
        # operands are expressions, always trees: their methods are called without `lower`
        left, right = tree.children[0], tree.children[-1]
        rules, span = self._rules, self.span(tree)
        lowered_left = rules[left.data](self, left)  # type: ignore[union-attr]
        return _make_binary(span, op, lowered_left, rules[right.data](self, right))  # type: ignore[union-attr]

    def _or_op(self, tree: Tree[Token]) -> ir.Binary:
        return self._binary(tree, "or")

    def _and_op(self, tree: Tree[Token]) -> ir.Binary:
        return self._binary(tree, "and")

    def _not_op(self, tree: Tree[Token]) -> ir.Unary:
        return ir.Unary(span=self.span(tree), op="not", operand=self.lower(tree.children[0]))

    def _neg(self, tree: Tree[Token]) -> ir.Expr:
        operand = self.lower(tree.children[0])
        if (
            isinstance(operand, ir.ScalarLit)
            and isinstance(operand.value, (int, float))
            and not isinstance(operand.value, bool)
        ):
            return ir.ScalarLit(span=self.span(tree), value=-operand.value)
        return ir.Unary(span=self.span(tree), op="-", operand=operand)

    def _compare(self, tree: Tree[Token]) -> ir.Binary:
        return self._binary(tree, str(tree.children[1]))

    def _in_op(self, tree: Tree[Token]) -> ir.Binary:
        return self._binary(tree, "in")

    def _not_in_op(self, tree: Tree[Token]) -> ir.Binary:
        return self._binary(tree, "not in")

    # ---- lang-types: type tests and tool-level `let`
    def _is_type(self, tree: Tree[Token]) -> ir.TypeTest:
        operand, texpr = tree.children
        return ir.TypeTest(
            span=self.span(tree), operand=self.lower(operand), type=self.lower(texpr)
        )

    def _is_not_type(self, tree: Tree[Token]) -> ir.TypeTest:
        operand, texpr = tree.children
        return ir.TypeTest(
            span=self.span(tree),
            operand=self.lower(operand),
            type=self.lower(texpr),
            negated=True,
        )

    def _tool_let(self, tree: Tree[Token]) -> ir.Let:
        return self._let_stmt(tree)

    def _arith(self, tree: Tree[Token]) -> ir.Binary:
        return self._binary(tree, str(tree.children[1]))

    def _attr(self, tree: Tree[Token]) -> ir.Attr | ir.Name:
        obj, name = tree.children
        if self._is_state_prefix(obj):
            return self._state_name(tree, name)
        return ir.Attr(
            span=self.span(tree),
            obj=self.lower(obj),
            name=str(name),
            name_span=self.span(name),
        )

    def _index(self, tree: Tree[Token]) -> ir.Index:
        obj, key = tree.children
        return ir.Index(span=self.span(tree), obj=self.lower(obj), key=self.lower(key))

    # ------------------------------------------------------------------ `state.NAME`
    @staticmethod
    def _is_state_prefix(obj: Tree[Token] | Token) -> bool:
        """Whether ``obj`` is the bare name ``state`` (of ``state.NAME``)."""
        return (
            isinstance(obj, Tree)
            and obj.data in ("name", "lv_name")
            and len(obj.children) == 1
            and str(obj.children[0]) == "state"
        )

    def _state_name(self, tree: Tree[Token], name: Token | Tree[Token]) -> ir.Name:
        """``state.NAME``: the state variable NAME, even where a parameter hides it."""
        return ir.Name(span=self.span(tree), name=str(name), state=True)

    def _split_args(
        self, args: Tree[Token] | Token | None
    ) -> tuple[tuple[ir.Expr, ...], tuple[ir.KeywordArg, ...]]:
        if args is None:
            return (), ()
        lowered = self._args(args) if args.data == "args" else self.lower(args)  # type: ignore[union-attr,arg-type]
        for arg in lowered:
            if arg.__class__ is ir.KeywordArg:
                break
        else:  # no keyword argument, as in most calls
            return tuple(lowered), ()
        positional = tuple(a for a in lowered if not isinstance(a, ir.KeywordArg))
        keywords = tuple(a for a in lowered if isinstance(a, ir.KeywordArg))
        return positional, keywords

    def _call(self, tree: Tree[Token]) -> ir.Call:
        func, args = tree.children
        positional, keywords = self._split_args(args)
        return ir.Call(
            span=self.span(tree),
            func=str(func),
            func_span=self.span(func),
            args=positional,
            kwargs=keywords,
        )

    def _args(self, tree: Tree[Token]) -> list[Any]:
        rules = self._rules  # arguments are trees (expressions, `name=value`)
        return [rules[c.data](self, c) for c in tree.children if c is not None]  # type: ignore[union-attr]

    def _kwarg(self, tree: Tree[Token]) -> ir.KeywordArg:
        name, value = tree.children
        return ir.KeywordArg(span=self.span(tree), name=str(name), value=self.lower(value))

    def _quantifier(self, tree: Tree[Token]) -> ir.Expr:
        func, body, comp = tree.children
        op = str(func)
        if op not in QUANTIFIERS:
            self.diagnostics.append(
                error(
                    "E0208",
                    f"`{op}(… for … in …)` is not a quantifier",
                    self.span(func),
                    hint="the quantifiers are " + ", ".join(QUANTIFIERS[:-1]) + " and last",
                )
            )
            op = "any"
        binding = self.lower(cast(Tree[Token], comp))
        return ir.Quantifier(
            span=self.span(tree), op=cast(Any, op), body=self.lower(body), **binding
        )

    # ------------------------------------------------------------------ comprehensions
    def _comp_for(self, tree: Tree[Token]) -> dict[str, Any]:
        """``for target in coll [if cond]``: the binding fields shared by quantifiers and
        comprehensions."""
        target, coll, cond = tree.children
        names = self.lower(cast(Tree[Token], target))
        return {
            "var": ", ".join(names),
            "unpack": tuple(names) if len(names) > 1 else (),
            "coll": self.lower(coll),
            "cond": None if cond is None else self.lower(cond),
        }

    def _comp_target(self, tree: Tree[Token]) -> list[str]:
        return [str(c) for c in tree.children]

    def _comprehension(self, tree: Tree[Token], kind: str) -> ir.Comprehension:
        item, comp = tree.children
        binding = self.lower(cast(Tree[Token], comp))
        if kind == "map":
            entry = cast(Tree[Token], item)
            key, value = (self.lower(c) for c in entry.children)
            return ir.Comprehension(
                span=self.span(tree), type="map", key=key, body=value, **binding
            )
        return ir.Comprehension(
            span=self.span(tree),
            type=cast(Any, kind),
            body=self.lower(item),
            **binding,
        )

    def _list_comp(self, tree: Tree[Token]) -> ir.Comprehension:
        return self._comprehension(tree, "list")

    def _set_comp(self, tree: Tree[Token]) -> ir.Comprehension:
        return self._comprehension(tree, "set")

    def _map_comp(self, tree: Tree[Token]) -> ir.Comprehension:
        return self._comprehension(tree, "map")

    def _cond_expr(self, tree: Tree[Token]) -> ir.Conditional:
        then, cond, orelse = (self.lower(c) for c in tree.children)
        return ir.Conditional(span=self.span(tree), cond=cond, then=then, orelse=orelse)

    def _literal(self, tree: Tree[Token], value: Any) -> ir.ScalarLit:
        return _make_scalar(self.span(tree), value)

    def _true(self, tree: Tree[Token]) -> ir.ScalarLit:
        return self._literal(tree, True)

    def _false(self, tree: Tree[Token]) -> ir.ScalarLit:
        return self._literal(tree, False)

    def _null(self, tree: Tree[Token]) -> ir.ScalarLit:
        return self._literal(tree, None)

    def _name(self, tree: Tree[Token]) -> ir.Name:
        return _make_name(self.span(tree), str(tree.children[0]))

    def _items(self, tree: Tree[Token]) -> tuple[ir.Expr, ...]:
        if self.line_shift or self.col_shift:
            return tuple([self.lower(c) for c in tree.children if c is not None])
        # the elements of a literal (100,000 of them in bulk data) are mostly plain strings and
        # integers: those are built here, as `_string` and `_number` build them, without three
        # calls each
        items: list[ir.Expr] = []
        lower = self.lower
        file = self.filename
        for c in tree.children:
            if c is None:
                continue
            data = c.data if isinstance(c, Tree) else None
            if isinstance(c, Tree) and (data == "string" or data == "number"):
                tok = cast(Token, c.children[0])
                meta = c.meta
                if data == "string":
                    simple = (
                        tok[0] == '"' and tok[1:2] != '"' and _PLAIN.fullmatch(tok, 1, len(tok) - 1)
                    )
                    value: str | int | None = tok[1:-1] if simple else None
                else:
                    value = int(tok) if tok.type == "INT" and len(tok) < 19 else None
                if value is not None and not meta.empty:
                    span = span_at(file, meta.line, meta.column, meta.end_line, meta.end_column)
                    items.append(_make_scalar(span, value))
                    continue
            items.append(lower(c))
        return tuple(items)

    def _tuple_lit(self, tree: Tree[Token]) -> ir.Collection:
        return ir.Collection(span=self.span(tree), type="tuple", items=self._items(tree))

    def _list_lit(self, tree: Tree[Token]) -> ir.Collection:
        if isinstance(tree, BulkLiteral):  # a large literal, read in bulk
            return cast(ir.Collection, lower_bulk(self, tree))
        return ir.Collection(span=self.span(tree), type="list", items=self._items(tree))

    def _set_lit(self, tree: Tree[Token]) -> ir.Collection:
        if isinstance(tree, BulkLiteral):  # a large literal, read in bulk
            return cast(ir.Collection, lower_bulk(self, tree))
        items = self._items(tree)
        return ir.Collection(span=self.span(tree), type="set" if items else "empty", items=items)

    def _map_lit(self, tree: Tree[Token]) -> ir.MapLit:
        if isinstance(tree, BulkLiteral):  # a large literal, read in bulk
            return cast(ir.MapLit, lower_bulk(self, tree))
        return ir.MapLit(
            span=self.span(tree),
            entries=tuple([self.lower(c) for c in tree.children if c is not None]),
        )

    def _entry(self, tree: Tree[Token]) -> ir.MapEntry:
        key, value = tree.children
        return ir.MapEntry(span=self.span(tree), key=self.lower(key), value=self.lower(value))


_Lowerer.rule_methods = _rule_table(_Lowerer)


class _ShiftedLowerer(_Lowerer):
    """Lowers the expression of a message hole, parsed on its own: its positions are moved to
    where the hole sits in the file."""

    def __init__(self, filename: str, line_shift: int, col_shift: int) -> None:
        super().__init__(filename)
        self.line_shift = line_shift
        self.col_shift = col_shift

    def span(self, node: Tree[Token] | Token | None) -> Span:
        if node is None:
            return Span(file=self.filename)
        if isinstance(node, Token):
            line, col = node.line or 1, node.column or 1
            end_line, end_col = node.end_line or line, node.end_column or col + len(node)
        else:
            meta = node._meta
            if meta is None or meta.empty:
                return Span(file=self.filename)
            line, col, end_line, end_col = meta.line, meta.column, meta.end_line, meta.end_column
        if line == 1:
            col += self.col_shift
        if end_line == 1:
            end_col += self.col_shift
        return span_at(
            self.filename, line + self.line_shift, col, end_line + self.line_shift, end_col
        )


QUANTIFIERS = ("all", "any", "count", "sum", "first", "last")
"""The functions written ``f(body for x in coll)``."""

_UNKNOWN = object()


def _as_unknown_in(value: ir.Expr) -> ir.Expr:
    """``x = unknown in [lo, hi]`` parses as a membership test; as the whole assigned value it
    is a bounded unknown (issue 16). Elsewhere ``unknown`` is an ordinary name."""
    if (
        isinstance(value, ir.Binary)
        and value.op == "in"
        and isinstance(value.left, ir.Name)
        and value.left.name == "unknown"
        and isinstance(value.right, ir.Collection)
        and value.right.type == "list"
        and len(value.right.items) == 2
    ):
        lo, hi = value.right.items
        return ir.UnknownIn(span=value.span, lo=lo, hi=hi)
    return value


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = frozenset(("true", "false", "null", "not", "and", "or", "in"))

_BUCKET: dict[type, str] = {
    ir.TypeDecl: "types",
    ir.ConstDecl: "consts",
    ir.PredicateDecl: "predicates",
    ir.FunctionDecl: "functions",
    ir.EventDecl: "events",
    ir.GoalDecl: "goals",
    ir.Tool: "tools",
    ir.Machine: "machines",
}


_SIMPLE_HOLE = re.compile(r'\{([^{}"]*)\}')
"""A message hole holding no brace and no quote; its source is the group."""

_TEMPLATE_SPECIAL = re.compile("[{}" + _OPEN + _CLOSE + "]")
"""What :meth:`_Lowerer.template` looks at in a message: braces, escaped or not."""


@functools.lru_cache(maxsize=4096)
def _parse_hole(source: str, filename: str) -> Tree[Token]:
    """Message holes repeat a lot (``{path}``, ``{len(items)}``): parse each text once. Trees are
    only read by the lowering, never changed, so sharing them is safe."""
    return parse(source, filename, start="expr")


def _is_hex(text: str) -> bool:
    return len(text) == 4 and all(c in "0123456789abcdefABCDEF" for c in text)


def _matching_brace(text: str, start: int) -> int:
    """Where the ``}`` closing the ``{`` at ``start`` is (-1 if none): braces nest, and a
    brace inside a double-quoted string does not count."""
    close = text.find("}", start + 1)
    if close >= 0 and text.find("{", start + 1, close) < 0 and text.find('"', start + 1, close) < 0:
        return close  # nothing nested and no string: the first `}` closes it (most holes)
    depth = 0
    quote = False
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quote = False
        elif ch == '"':
            quote = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


LOWERED_RULES = frozenset(
    name[1:]
    for name in dir(_Lowerer)
    if name.startswith("_") and not name.startswith("__") and name[1:].islower()
)


def lower(tree: Tree[Token], filename: str = "<string>") -> tuple[ir.Contract, list[Diagnostic]]:
    """Lower a parse tree to IR; also returns the diagnostics found while lowering."""
    lowerer = _Lowerer(filename)
    contract = cast(ir.Contract, lowerer.lower(tree))
    if ir.VALIDATE:  # CONTRACTSIM_VALIDATE_IR=1: every node has its declared types
        ir.validate_node(contract)
    return contract, lowerer.diagnostics
