"""IR expressions back to contract text, for messages, reports and diagrams."""

from __future__ import annotations

from . import ir
from .diagnostics import control_escape

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
    if isinstance(e, ir.Literal_):
        return literal_text(e.value, e.raw)
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.Attr):
        return f"{expr_text(e.obj, 9)}.{e.name}"
    if isinstance(e, ir.Index):
        return f"{expr_text(e.obj, 9)}[{expr_text(e.key)}]"
    if isinstance(e, ir.Call):
        args = [expr_text(a) for a in e.args] + [f"{k.name}={expr_text(k.value)}" for k in e.kwargs]
        return f"{e.func}({', '.join(args)})"
    if isinstance(e, ir.Quantifier):
        return f"{e.op}({expr_text(e.body)} for {e.var} in {expr_text(e.coll)})"
    if isinstance(e, ir.Unary):
        if e.op == "not":
            text = f"not {expr_text(e.operand, 3)}"
            return f"({text})" if parent > 3 else text
        return f"-{expr_text(e.operand, 8)}"
    if isinstance(e, ir.Binary):
        prec = _PRECEDENCE[e.op]
        left = expr_text(e.left, prec)
        right = expr_text(e.right, prec + 1)
        text = f"{left} {e.op} {right}"
        return f"({text})" if prec < parent else text
    if isinstance(e, ir.Collection):
        items = ", ".join(expr_text(i) for i in e.items)
        if e.type == "list":
            return f"[{items}]"
        if e.type == "tuple":
            return f"({items}{',' if len(e.items) == 1 else ''})"
        return "{" + items + "}"
    assert isinstance(e, ir.MapLit)
    return "{" + ", ".join(f"{expr_text(x.key)}: {expr_text(x.value)}" for x in e.entries) + "}"
