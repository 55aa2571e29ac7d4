"""E0331 for the local names below a tool's top: a ``var``, a ``let`` among statements, the
variable of a ``for`` loop, of a quantifier or of a comprehension must not take the name of
one already in scope (a parameter, a state variable, a constant, ``result``, a tool-level
``let``, or an enclosing local): inside its scope the name would mean two things. A local may
take a state variable's name where its declaration writes ``state.NAME`` (as a parameter may,
warning W0608): that tells the two apart.

(Tool-level ``let`` bindings themselves are checked by ``check._tool_lets``.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..diagnostics import Span
from . import ir
from .visitor import EXPR_KINDS, NodeVisitor, child_exprs, iter_child_nodes

if TYPE_CHECKING:
    from .typecheck import Checker

Names = dict[str, str]
"""Name → what it is (a key of :data:`_WHAT`)."""

_WHAT = {
    "param": "the parameter",
    "state": "the state variable",
    "const": "the constant",
    "result": "the result",
    "binding": "the binding",  # a tool-level `let`, or a `let` among statements
    "var": "the variable",
    "loop": "the loop variable",
}


def check_hidden_names(ck: Checker) -> None:
    """Report every local name that hides another (E0331) in tools, predicates, functions and
    goals."""
    names: Names = {c.name: "const" for c in ck.c.consts}
    names.update((v.name, "state") for v in ck.c.state)
    hiding = _Hiding(ck)
    decls: list[ir.PredicateDecl | ir.FunctionDecl] = [*ck.c.predicates, *ck.c.functions]
    for decl in decls:
        hiding.owner = decl
        hiding.expr(decl.body, {**names, **{p.name: "param" for p in decl.params}})
    for goal in ck.c.goals:
        hiding.owner = goal
        hiding.expr(goal.cond, names)
    for tool in ck.c.tools:
        hiding.tool(tool, names)


class _Hiding(NodeVisitor):
    """Walks blocks and expressions with the names in scope; a block of statements shares one
    scope, in which a ``var`` or ``let`` is seen by the statements after it."""

    def __init__(self, ck: Checker) -> None:
        self.ck = ck
        self.owner: ir.Node = ck.c  # the declaration being walked
        self._prefixed: tuple[ir.Node, set[str]] | None = None
        self._facts = ck.expr_facts()
        # whether any expression of the contract binds a name: when none does, only the
        # statements (`var`, `let`, `for`) are left to look at
        self._binders = self._facts.any_binds

    def state_prefixed(self) -> set[str]:
        """The state variables the declaration being walked names as ``state.NAME``."""
        if self._prefixed is None or self._prefixed[0] is not self.owner:
            found: set[str] = set()
            stack: list[ir.Node] = [self.owner]
            while stack:
                node = stack.pop()
                if isinstance(node, ir.Name) and node.state:
                    found.add(node.name)
                stack.extend(iter_child_nodes(node))
            self._prefixed = (self.owner, found)
        return self._prefixed[1]

    def expr(self, e: ir.Expr | None, names: Names) -> None:
        """Check an expression (most bind no name: they are only looked through once)."""
        if e is not None and self._facts.binds_names(e):
            self.visit(e, names)

    def block(self, body: tuple[ir.Stmt, ...], names: Names) -> None:
        scope = dict(names)
        for s in body:
            self.visit(s, scope)

    def generic_visit(self, node: ir.Node, names: Names) -> None:
        if isinstance(node, EXPR_KINDS):
            for child in child_exprs(node):
                self.visit(child, names)
        elif self._binders:  # a statement without bindings or blocks of its own
            for child in child_exprs(node):
                self.expr(child, names)

    def hides(self, name: str, span: Span, names: Names, local: str) -> None:
        kind = names.get(name)
        if kind is None or kind == "state" and name in self.state_prefixed():
            return  # (a declaration that writes `state.NAME` tells the two apart)
        if local == "loop":
            what, it, where = f"loop variable `{name}`", "the loop variable", "inside the loop"
        else:
            what, where = f"`{local} {name}`", "after it"
            it = "the variable" if local == "var" else "the binding"
        self.ck.err(
            "E0331",
            f"{what} hides {_WHAT[kind]} `{name}`",
            span,
            hint=f"give {it} a name of its own; {where} `{name}` would mean two things",
        )

    def tool(self, tool: ir.Tool, names: Names) -> None:
        self.owner = tool
        names = dict(names)
        names.update((p.name, "param") for p in tool.params)
        if tool.returns is not None:
            names["result"] = "result"
        # does an expression of this tool bind a name? else only its statements are looked at
        binders = self._binders and self._facts.tool_binds.get(id(tool), True)
        saved, self._binders = self._binders, binders  # (generic_visit reads it too)
        for let in tool.lets:  # each hiding another is E0331 in check._tool_lets
            self.expr(let.value, names)
            names[let.name] = "binding"
        if binders:
            self.expr(tool.cost, names)
            for cond in tool.conditions:
                for e in child_exprs(cond):
                    self.expr(e, names)
        self.block(tool.effects, names)
        for out in tool.outcomes:
            if binders:
                for e in child_exprs(out):
                    self.expr(e, names)
            self.block(out.body, names)
        if tool.flow is not None:
            for step in tool.flow.steps:
                self.block(step.body, names)
            if binders:
                for t in tool.flow.transitions:
                    self.expr(t.when, names)
        self._binders = saved

    # -------------------------------------------------------------------- statements
    def visit_Var(self, s: ir.Var, names: Names) -> None:
        self.expr(s.value, names)
        self.hides(s.name, s.span, names, "var")
        names[s.name] = "var"

    def visit_Let(self, s: ir.Let, names: Names) -> None:
        self.expr(s.value, names)
        self.hides(s.name, s.span, names, "let")
        names[s.name] = "binding"

    def visit_If(self, s: ir.If, names: Names) -> None:
        self.expr(s.cond, names)
        self.block(s.then, names)
        self.block(s.orelse, names)

    def visit_For(self, s: ir.For, names: Names) -> None:
        self.expr(s.coll, names)
        # the caret goes under `for VAR`, not the whole loop
        at = s.span
        head = Span(
            file=at.file,
            line=at.line,
            col=at.col,
            end_line=at.line,
            end_col=at.col + 4 + len(s.var),
        )
        self.hides(s.var, head if at.file else at, names, "loop")
        self.block(s.body, {**names, s.var: "loop"})

    # ------------------------------------------------------------------- expressions
    def visit_Quantifier(self, e: ir.Quantifier, names: Names) -> None:
        self._loop(e, (e.body, e.cond), names)

    def visit_Comprehension(self, e: ir.Comprehension, names: Names) -> None:
        self._loop(e, (e.body, e.cond, e.key), names)

    def _loop(
        self,
        e: ir.Quantifier | ir.Comprehension,
        inside: tuple[ir.Expr | None, ...],
        names: Names,
    ) -> None:
        self.expr(e.coll, names)
        inner = dict(names)
        for var in e.unpack or (e.var,):
            self.hides(var, e.span, names, "loop")
            inner[var] = "loop"
        for part in inside:
            self.expr(part, inner)
