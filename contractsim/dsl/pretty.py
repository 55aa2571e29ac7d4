"""IR expressions back to contract text, for messages, reports and diagrams."""

from __future__ import annotations

from ..diagnostics import control_escape
from . import ir
from .visitor import NodeVisitor

_PRECEDENCE = {
    "or": 1,
    "and": 2,
    "not": 3,
    "==": 4,
    "!=": 4,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "in": 4,
    "not in": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "//": 6,
    "%": 6,
}


_ESCAPES = {"\\": "\\\\", '"': '\\"'}


def _escape_char(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if not ch.isprintable():
        return control_escape(ch)
    return ch


def literal_text(value: object, raw: bool = False) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        if raw:
            return f'r"{value}"'
        return '"' + "".join(_escape_char(ch) for ch in value) + '"'
    return repr(value)


def expr_text(e: ir.Expr, parent: int = 0) -> str:
    """Render an expression with the fewest parentheses that keep its meaning."""
    return _PRINTER.visit(e, parent)  # type: ignore[no-any-return]


class Printer(NodeVisitor):
    """``visit(e, parent)``: the text of ``e`` inside an operator of precedence ``parent``."""

    def generic_visit(self, node: ir.Node, *args: object) -> str:
        raise TypeError(f"no text for {type(node).__name__}")

    def visit_ScalarLit(self, e: ir.ScalarLit, parent: int) -> str:
        return literal_text(e.value, e.raw)

    def visit_Name(self, e: ir.Name, parent: int) -> str:
        return f"state.{e.name}" if e.state else e.name

    def visit_Attr(self, e: ir.Attr, parent: int) -> str:
        return f"{expr_text(e.obj, 9)}.{e.name}"

    def visit_Index(self, e: ir.Index, parent: int) -> str:
        return f"{expr_text(e.obj, 9)}[{expr_text(e.key)}]"

    def visit_Call(self, e: ir.Call, parent: int) -> str:
        args = [expr_text(a) for a in e.args] + [f"{k.name}={expr_text(k.value)}" for k in e.kwargs]
        return f"{e.func}({', '.join(args)})"

    def visit_Quantifier(self, e: ir.Quantifier, parent: int) -> str:
        return f"{e.op}({expr_text(e.body)} {_comp_for(e)})"

    def visit_Unary(self, e: ir.Unary, parent: int) -> str:
        if e.op == "not":
            text = f"not {expr_text(e.operand, 3)}"
            return f"({text})" if parent > 3 else text
        return f"-{expr_text(e.operand, 8)}"

    def visit_Binary(self, e: ir.Binary, parent: int) -> str:
        prec = _PRECEDENCE[e.op]
        left = expr_text(e.left, prec)
        right = expr_text(e.right, prec + 1)
        text = f"{left} {e.op} {right}"
        return f"({text})" if prec < parent else text

    # ---- lang-types: type tests
    def visit_TypeTest(self, e: ir.TypeTest, parent: int) -> str:
        from .types import type_label

        tested = type_label(e.type) + "".join(
            f" {c.key} {literal_text(c.value)}" for c in e.type.constraints
        )
        text = f"{expr_text(e.operand, 5)} is {'not ' if e.negated else ''}{tested}"
        return f"({text})" if 4 < parent else text

    def visit_Collection(self, e: ir.Collection, parent: int) -> str:
        items = ", ".join(expr_text(i) for i in e.items)
        if e.type == "list":
            return f"[{items}]"
        if e.type == "tuple":
            return f"({items}{',' if len(e.items) == 1 else ''})"
        return "{" + items + "}"

    def visit_MapLit(self, e: ir.MapLit, parent: int) -> str:
        return "{" + ", ".join(f"{expr_text(x.key)}: {expr_text(x.value)}" for x in e.entries) + "}"

    # ------------------------------------------------------ comprehensions, conditionals
    def visit_Comprehension(self, e: ir.Comprehension, parent: int) -> str:
        if e.key is not None:
            return "{" + f"{expr_text(e.key)}: {expr_text(e.body)} {_comp_for(e)}" + "}"
        text = f"{expr_text(e.body)} {_comp_for(e)}"
        return f"[{text}]" if e.type == "list" else "{" + text + "}"

    def visit_Conditional(self, e: ir.Conditional, parent: int) -> str:
        # the condition and the first branch are `or` level; the else branch may chain
        text = f"{expr_text(e.then, 1)} if {expr_text(e.cond, 1)} else {expr_text(e.orelse)}"
        return f"({text})" if parent > 0 else text

    # ------------------------------------------------------------ bounded unknowns (issue 16)
    def visit_UnknownIn(self, e: ir.UnknownIn, parent: int) -> str:
        return f"unknown in [{expr_text(e.lo)}, {expr_text(e.hi)}]"


def _comp_for(e: ir.Quantifier | ir.Comprehension) -> str:
    """``for x in xs if c``: the collection and the filter are `or` level, like Python's."""
    text = f"for {e.var} in {expr_text(e.coll, 1)}"
    return text if e.cond is None else f"{text} if {expr_text(e.cond, 1)}"


_PRINTER = Printer()
