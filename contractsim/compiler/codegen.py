"""IR → Python source. Every generated function is compiled once per contract and run with an
explicit environment and no builtins.

Nothing from the contract reaches the source unescaped: names are identifiers the grammar
already restricts to ``[A-Za-z_][A-Za-z0-9_]*`` and are always prefixed (``p_``, ``l_``, ``P_``
…), and every literal goes through :func:`repr`.

Two flavours of every function are generated: *fast* (plain Python operators, for states with no
unknown value) and *safe* (three-valued helpers). The engine picks one per state.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import field
from typing import Any, Literal

from ..diagnostics import Span
from ..dsl import ir
from ..dsl.pretty import expr_text
from ..dsl.visitor import NodeVisitor
from ..dsl.walk import (
    assigned_roots,
    fails_in,
    jumps_out,
    lvalue_path,
    stmt_exprs,
    used_names,
    walk_stmts,
)
from ..records import record
from .empty import empty_of, float_target

CONTEXT_FUNCS = ("today", "now", "fresh", "old")

Flavour = Literal["fast", "safe"]
"""Which of the two generated functions: plain Python operators, or three-valued helpers."""


@record
class Ctx:
    """What a name means inside the function being generated."""

    locals: dict[str, str] = field(default_factory=dict)
    state: str = "S"  # the variable holding state values (``O`` inside old())


@record
class Source:
    """Generated source with a map from its lines back to contract spans."""

    lines: list[str] = field(default_factory=list)
    spans: dict[int, Span] = field(default_factory=dict)

    def emit(self, line: str, indent: int, span: Span | None = None) -> None:
        text = "    " * indent + line
        if span is not None and span.file:
            self.spans[len(self.lines) + 1] = span
            text += f"  # line {span.line}"
        self.lines.append(text)

    def span_at(self, line: int) -> Span | None:
        """The contract span that generated ``line`` (or the nearest line before it)."""
        for n in range(line, 0, -1):
            if n in self.spans:
                return self.spans[n]
        return None

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class CodeGen(NodeVisitor):
    """Generates the Python source of one contract's predicates, conditions and effects."""

    def __init__(self, contract: ir.Contract, slots: dict[str, int], flavour: Flavour) -> None:
        self.contract = contract
        self.slots = slots
        self.safe = flavour == "safe"
        self.enums = {
            t.name: {m.value for m in t.type.members}
            for t in contract.types
            if isinstance(t.type, ir.EnumType)
        }
        self.type_names = {t.name for t in contract.types}
        self.consts = {c.name for c in contract.consts}
        self.predicates: dict[str, ir.PredicateDecl | ir.FunctionDecl] = {
            **{p.name: p for p in contract.predicates},
            **{f.name: f for f in contract.functions},
        }
        self.collection_kind = _state_collection_kinds(contract)
        self._tmp = 0
        self._loop_depth = 0
        self._blocks = 0  # `for` loops around the statement being generated, in this function
        self._depth = 0  # expression nesting since the function (or hoisted part) began
        self._hoisted: list[str] = []
        self._var_names: set[str] = set()  # the generated names of `var` locals
        # the `for` loops around the statement being generated, innermost last: whether its body
        # is a function of its own (see visit_For), and the body
        self._loops: list[tuple[bool, tuple[ir.Stmt, ...]]] = []
        # the spec of every `x is T` in the source, read as TS[i] (see compiler/typetest.py)
        self.type_specs: list[tuple[Any, ...]] = []

    def tmp(self, base: str = "t") -> str:
        self._tmp += 1
        return f"_{base}{self._tmp}"

    # ------------------------------------------------------------------ expressions
    def expr(self, e: ir.Expr, ctx: Ctx) -> str:
        if self._depth >= HOIST_DEPTH:
            return self._hoist(e, ctx)
        self._depth += 1
        try:
            return self.visit(e, ctx)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1

    def _hoist(self, e: ir.Expr, ctx: Ctx) -> str:
        """A deep sub-expression as a call of a function of its own: Python refuses source
        nested more than 200 parentheses deep, and a contract's chain of 300 `and`s or `+`s
        must still compile. The function takes the local names the sub-expression uses."""
        saved, self._depth = self._depth, 0
        try:
            code = self.expr(e, ctx)
        finally:
            self._depth = saved
        names = sorted(_free_names(code))
        fn = self.tmp("x")
        self._hoisted += [f"def {fn}({', '.join(names)}):", f"    return {code}", ""]
        return f"{fn}({', '.join(names)})"

    def flush(self, src: Source) -> None:
        """Emit the functions hoisted out of deep expressions since the last flush."""
        for line in self._hoisted:
            src.emit(line, 0)
        self._hoisted = []

    def visit_ScalarLit(self, e: ir.ScalarLit, ctx: Ctx) -> str:
        value = e.value
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return f"K_float({str(value)!r})"
        return repr(value)

    def visit_Name(self, e: ir.Name, ctx: Ctx) -> str:
        if e.state:
            return f"{ctx.state}[{self.slots[e.name]}]"
        if e.name in ctx.locals:
            return ctx.locals[e.name]
        if e.name in self.slots:
            return f"{ctx.state}[{self.slots[e.name]}]"
        if e.name in self.consts:
            return f"K_{e.name}"
        raise AssertionError(f"unresolved name {e.name!r} reached code generation")

    def visit_Attr(self, e: ir.Attr, ctx: Ctx) -> str:
        if isinstance(e.obj, ir.Name) and e.obj.name in self.enums and e.obj.name not in ctx.locals:
            return repr(e.name)
        obj = self.expr(e.obj, ctx)
        return f"H_attr({obj}, {e.name!r})"

    def visit_Index(self, e: ir.Index, ctx: Ctx) -> str:
        obj = self.expr(e.obj, ctx)
        key = self.expr(e.key, ctx)
        if self.safe:
            return f"H_index({obj}, {key})"
        return f"{obj}[{key}]"

    def visit_Call(self, e: ir.Call, ctx: Ctx) -> str:
        args = [self.expr(a, ctx) for a in e.args]
        if e.func in self.predicates:
            # the context goes along: a predicate may read today() or now()
            return (
                f"P_{e.func}({ctx.state}, C, {', '.join(args)})"
                if args
                else f"P_{e.func}({ctx.state}, C)"
            )
        if e.func in self.type_names:
            return self.construct(e, ctx)
        if e.func == "old":
            return self.expr(e.args[0], Ctx(ctx.locals, "O"))
        if e.func == "today":
            return "C.today"
        if e.func == "now":
            return "C.now"
        if e.func == "fresh":
            label = args[0] if args else "'id'"
            return f"H_fresh({ctx.state}, A, {label})"
        return f"F_{e.func}({', '.join(args)})"

    def construct(self, e: ir.Call, ctx: Ctx) -> str:
        decl = next(t for t in self.contract.types if t.name == e.func)
        assert isinstance(decl.type, ir.RecordType)
        given = {k.name: self.expr(k.value, ctx) for k in e.kwargs}
        items: list[str] = []
        for f in decl.type.fields:
            if f.name in given:
                items.append(f"{f.name!r}: {given[f.name]}")
            elif f.default is not None:
                items.append(f"{f.name!r}: D[({e.func!r}, {f.name!r})]")
            else:
                items.append(f"{f.name!r}: None")
        return "FMap({" + ", ".join(items) + "})"

    def visit_Quantifier(self, e: ir.Quantifier, ctx: Ctx) -> str:
        if e.unpack or e.cond is not None or e.op in ("first", "last"):
            return self._binding(e, ctx)
        var = self.tmp("q")
        inner = Ctx({**ctx.locals, e.var: var}, ctx.state)
        coll = self.expr(e.coll, ctx)
        body = self.expr(e.body, inner)
        if self.safe:
            return f"H_quant({e.op!r}, {coll}, lambda {var}: {body})"
        it = f"H_iter({coll})"
        if e.op == "all":
            return f"_all(H_truth({body}) for {var} in {it})"
        if e.op == "any":
            return f"_any(H_truth({body}) for {var} in {it})"
        if e.op == "count":
            return f"_sum(1 for {var} in {it} if H_truth({body}))"
        return f"H_sum({body} for {var} in {it})"

    def visit_Unary(self, e: ir.Unary, ctx: Ctx) -> str:
        operand = self.expr(e.operand, ctx)
        if e.op == "not":
            return f"H_not({operand})" if self.safe else f"(not {_truthy(e.operand, operand)})"
        return f"H_neg({operand})"

    def visit_Binary(self, e: ir.Binary, ctx: Ctx) -> str:
        left = self.expr(e.left, ctx)
        right = self.expr(e.right, ctx)
        op = e.op
        if self.safe:
            if op == "and":
                return f"H_and({left}, lambda: {right})"
            if op == "or":
                return f"H_or({left}, lambda: {right})"
            if op in ("in", "not in"):
                test = f"H_contains({left}, {right})"
                return test if op == "in" else f"H_not({test})"
            if op in ("==", "!=", "<", "<=", ">", ">="):
                return f"H_compare({op!r}, {left}, {right})"
            return f"H_arith({op!r}, {left}, {right})"
        if op in ("and", "or"):
            return f"({_truthy(e.left, left)} {op} {_truthy(e.right, right)})"
        if op in ("in", "not in"):
            return f"({left} {op} {right})"
        if op in ("==", "!="):
            return f"({left} {op} {right})"
        if op in ("<", "<=", ">", ">="):
            return f"H_compare({op!r}, {left}, {right})"
        if op == "+":
            return f"H_plus({left}, {right})"
        if op == "*":
            return f"H_times({left}, {right})"
        return f"H_arith({op!r}, {left}, {right})"

    def visit_Collection(self, e: ir.Collection, ctx: Ctx) -> str:
        items = [self.expr(i, ctx) for i in e.items]
        if e.type == "set":
            return "frozenset((" + "".join(f"{i}, " for i in items) + "))"
        if e.type == "empty":
            return "H_EMPTY"
        return "(" + "".join(f"{i}, " for i in items) + ")"

    def visit_MapLit(self, e: ir.MapLit, ctx: Ctx) -> str:
        pairs = [f"({self.expr(x.key, ctx)}, {self.expr(x.value, ctx)})" for x in e.entries]
        return "FMap((" + "".join(f"{p}, " for p in pairs) + "))"

    # ------------------------------------------------------ comprehensions, conditionals
    def _bound(self, e: ir.Quantifier | ir.Comprehension, ctx: Ctx) -> tuple[str, str, Ctx]:
        """(item variable, items code, context inside): ``for i, x in …`` reads the parts of
        each (already unpacked) item as ``_q1[0]``, ``_q1[1]``."""
        var = self.tmp("q")
        if e.unpack:
            parts = {name: f"{var}[{i}]" for i, name in enumerate(e.unpack)}
            inner = Ctx({**ctx.locals, **parts}, ctx.state)
        else:
            inner = Ctx({**ctx.locals, e.var: var}, ctx.state)
        coll = self.expr(e.coll, ctx)
        n = len(e.unpack)
        if self.safe:
            return var, f"H_items({coll}, {n})", inner
        return var, (f"H_fast_items({coll}, {n})" if n else f"H_iter({coll})"), inner

    def _binding(self, e: ir.Quantifier, ctx: Ctx) -> str:
        var, found, inner = self._bound(e, ctx)
        body = self.expr(e.body, inner)
        cond = None if e.cond is None else self.expr(e.cond, inner)
        if self.safe:
            cond_fn = "None" if cond is None else f"lambda {var}: {cond}"
            return f"H_quant_where({e.op!r}, {found}, lambda {var}: {body}, {cond_fn})"
        if e.op == "last":
            found += "[::-1]"
        loop = f"for {var} in {found}" + ("" if cond is None else f" if H_truth({cond})")
        if e.op in ("first", "last"):
            return f"H_first({body} {loop})"
        if e.op == "all":
            return f"_all(H_truth({body}) {loop})"
        if e.op == "any":
            return f"_any(H_truth({body}) {loop})"
        if e.op == "count":
            return f"_sum(1 {loop} if H_truth({body}))"
        return f"H_sum({body} {loop})"

    def visit_Comprehension(self, e: ir.Comprehension, ctx: Ctx) -> str:
        var, found, inner = self._bound(e, ctx)
        body = self.expr(e.body, inner)
        key = None if e.key is None else self.expr(e.key, inner)
        cond = None if e.cond is None else self.expr(e.cond, inner)
        if self.safe:
            cond_fn = "None" if cond is None else f"lambda {var}: {cond}"
            key_fn = "None" if key is None else f"lambda {var}: {key}"
            return f"H_comp({e.type!r}, {found}, lambda {var}: {body}, {cond_fn}, {key_fn})"
        loop = f"for {var} in {found}" + ("" if cond is None else f" if H_truth({cond})")
        item = body if key is None else f"({key}, {body})"
        return f"H_build({e.type!r}, [{item} {loop}])"

    def visit_Conditional(self, e: ir.Conditional, ctx: Ctx) -> str:
        cond = self.expr(e.cond, ctx)
        then = self.expr(e.then, ctx)
        orelse = self.expr(e.orelse, ctx)
        if self.safe:
            return f"H_choose({cond}, lambda: {then}, lambda: {orelse})"
        return f"({then} if {_truthy(e.cond, cond)} else {orelse})"

    # ---- lang-types: type tests
    def visit_TypeTest(self, e: ir.TypeTest, ctx: Ctx) -> str:
        from .typetest import type_spec

        self.type_specs.append(type_spec(e.type))
        test = f"H_istype({self.expr(e.operand, ctx)}, TS[{len(self.type_specs) - 1}], TY)"
        if not e.negated:
            return test
        return f"H_not({test})" if self.safe else f"(not {test})"

    # ------------------------------------------------------------ bounded unknowns (issue 16)
    def visit_UnknownIn(self, e: ir.UnknownIn, ctx: Ctx) -> str:
        return f"H_bounded({self.expr(e.lo, ctx)}, {self.expr(e.hi, ctx)})"

    # ------------------------------------------------------------------ functions
    def bind_params(
        self, src: Source, params: Iterable[ir.Param], used: set[str], indent: int
    ) -> dict[str, str]:
        names: dict[str, str] = {}
        for p in params:
            names[p.name] = f"p_{p.name}"
            if p.name in used:
                src.emit(f"p_{p.name} = A[{p.name!r}]", indent)
        return names

    def expr_function(
        self,
        src: Source,
        name: str,
        e: ir.Expr,
        params: Iterable[ir.Param],
        span: Span,
        extra_locals: dict[str, str] | None = None,
    ) -> None:
        """``def name(S, A, R, O, C): return <e>``"""
        src.emit(f"def {name}(S, A, R, O, C):", 0, span)
        src.emit(f"# {_comment(expr_text(e))}", 1)
        local_names = self.bind_params(src, params, used_names([e]), 1)
        local_names.update(extra_locals or {"result": "R"})
        src.emit(f"return {self.expr(e, Ctx(local_names))}", 1, e.span)
        src.emit("", 0)
        self.flush(src)

    def tuple_function(
        self, src: Source, name: str, exprs: list[ir.Expr], params: Iterable[ir.Param], span: Span
    ) -> None:
        src.emit(f"def {name}(S, A, R, O, C):", 0, span)
        local_names = self.bind_params(src, params, used_names(exprs), 1)
        local_names["result"] = "R"
        body = "".join(self.expr(x, Ctx(local_names)) + ", " for x in exprs)
        src.emit(f"return ({body})", 1, span)
        src.emit("", 0)
        self.flush(src)

    def predicate_function(self, src: Source, pred: ir.PredicateDecl | ir.FunctionDecl) -> None:
        params = "".join(f", p_{p.name}" for p in pred.params)
        src.emit(f"def P_{pred.name}(S, C{params}):", 0, pred.span)
        src.emit(f"# {_comment(expr_text(pred.body))}", 1)
        local_names = {p.name: f"p_{p.name}" for p in pred.params}
        src.emit(f"return {self.expr(pred.body, Ctx(local_names))}", 1, pred.body.span)
        src.emit("", 0)
        self.flush(src)

    def effect_function(
        self,
        src: Source,
        name: str,
        body: tuple[ir.Stmt, ...],
        params: Iterable[ir.Param],
        span: Span,
    ) -> None:
        """``def name(S, A, R, O, C)``: apply statements to the working state list ``S``."""
        src.emit(f"def {name}(S, A, R, O, C):", 0, span)
        exprs = [x for s in walk_stmts(body) for x in stmt_exprs(s)]
        local_names = self.bind_params(src, params, used_names(exprs), 1)
        local_names["result"] = "R"
        self.stmts(src, body, Ctx(local_names), 1)
        src.emit("return None", 1)
        src.emit("", 0)
        self.flush(src)

    # ------------------------------------------------------------------ statements
    def stmts(self, src: Source, body: Iterable[ir.Stmt], ctx: Ctx, indent: int) -> None:
        ctx = Ctx(dict(ctx.locals), ctx.state)
        for s in body:
            self.stmt(src, s, ctx, indent)

    def stmt(self, src: Source, s: ir.Stmt, ctx: Ctx, indent: int) -> None:
        self.visit(s, src, ctx, indent)

    def generic_visit(self, node: ir.Node, *args: Any) -> Any:
        raise TypeError(f"the code generator has no rule for {type(node).__name__}")

    def visit_Assign(self, s: ir.Assign, src: Source, ctx: Ctx, indent: int) -> None:
        value = self.expr(s.value, ctx)
        if isinstance(s.value, ir.UnknownIn) and float_target(self.contract, s.target):
            lo, hi = self.expr(s.value.lo, ctx), self.expr(s.value.hi, ctx)
            value = f"H_bounded({lo}, {hi}, False)"  # real numbers, even between whole bounds
        if isinstance(s.value, ir.Collection) and s.value.type == "empty":
            declared = None if self._local_root(s.target, ctx) else self._declared_empty(s.target)
            value = declared or (f"H_empty_like({self.expr(s.target, ctx)})")
        if s.op == "+=":
            value = (
                f"H_plus({self.expr(s.target, ctx)}, {value})"
                if not self.safe
                else (f"H_arith('+', {self.expr(s.target, ctx)}, {value})")
            )
        elif s.op == "-=":
            value = f"H_arith('-', {self.expr(s.target, ctx)}, {value})"
        self.update(src, s.target, lambda current: value, ctx, indent, s.span)

    def visit_MethodCall(self, s: ir.MethodCall, src: Source, ctx: Ctx, indent: int) -> None:
        args = "".join(", " + self.expr(a, ctx) for a in s.args)
        root = s.target.name if isinstance(s.target, ir.Name) else None
        if (
            not self.safe
            and root is not None
            and root not in ctx.locals
            and self._loop_depth == 0
            and self.collection_kind.get(root) == "set"
            and s.method in ("add", "remove", "discard")
        ):
            # one element per statement outside loops: growth is bounded by the plan length
            slot = f"S[{self.slots[root]}]"
            op = "|" if s.method == "add" else "-"
            src.emit(f"{slot} = {slot} {op} {{{args[2:]}}}", indent, s.span)
            return
        self.update(
            src,
            s.target,
            lambda current: f"H_method_{s.method}({current}{args})",
            ctx,
            indent,
            s.span,
        )

    def visit_If(self, s: ir.If, src: Source, ctx: Ctx, indent: int) -> None:
        # `else if` chains become `elif`s: a chain of 200 must not nest 200 levels deep
        branch: ir.If | None = s
        keyword = "if"
        while branch is not None:
            cond = self.expr(branch.cond, ctx)
            if self.safe:
                c = self.tmp("c")
                if keyword == "if":
                    src.emit(f"{c} = {cond}", indent, branch.span)
                    src.emit(f"if {c} is U:", indent)
                else:
                    src.emit(f"elif ({c} := {cond}) is U:", indent, branch.span)
                self.unknown_block([branch], src, ctx, indent + 1)
                src.emit(f"elif H_truth({c}):", indent)
            else:
                src.emit(f"{keyword} H_truth({cond}):", indent, branch.span)
            self.stmts(src, branch.then, ctx, indent + 1)
            src.emit("pass", indent + 1)
            keyword = "elif"
            orelse = branch.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ir.If):
                branch = orelse[0]
                continue
            branch = None
            if orelse:
                src.emit("else:", indent)
                self.stmts(src, orelse, ctx, indent + 1)
                src.emit("pass", indent + 1)

    def visit_For(self, s: ir.For, src: Source, ctx: Ctx, indent: int) -> None:
        var = self.tmp("v")
        coll = self.expr(s.coll, ctx)
        c = self.tmp("c")
        src.emit(f"{c} = {coll}", indent, s.span)
        if self.safe:
            src.emit(f"if H_unobserved({c}):", indent)
            self.unknown_block(s.body, src, ctx, indent + 1, in_loop=False)
            src.emit(f"{c} = ()", indent + 1)
        inner = Ctx({**ctx.locals, s.var: var}, ctx.state)
        self._loop_depth += 1
        if self._blocks >= MAX_STATIC_LOOPS:
            # Python allows 20 statically nested blocks per function: deeper loops run
            # their body in a nested function (it reads the enclosing names as closures,
            # writes `var` locals as nonlocals and the rest through S and C; it returns True
            # for `break`)
            body_fn = self.tmp("b")
            src.emit(f"def {body_fn}({var}):", indent)
            outer_vars = sorted(n for n in ctx.locals.values() if n in self._var_names)
            if outer_vars:
                src.emit(f"nonlocal {', '.join(outer_vars)}", indent + 1)
            saved, self._blocks = self._blocks, 0
            self._loops.append((True, s.body))
            self.stmts(src, s.body, inner, indent + 1)
            self._loops.pop()
            self._blocks = saved
            src.emit("return None", indent + 1)
            src.emit(f"for {var} in H_iter({c}):", indent)
            src.emit(f"if {body_fn}({var}):", indent + 1)
            src.emit("break", indent + 2)
        else:
            src.emit(f"for {var} in H_iter({c}):", indent)
            self._blocks += 1
            self._loops.append((False, s.body))
            self.stmts(src, s.body, inner, indent + 1)
            self._loops.pop()
            self._blocks -= 1
            src.emit("pass", indent + 1)
        self._loop_depth -= 1

    def visit_Let(self, s: ir.Let, src: Source, ctx: Ctx, indent: int) -> None:
        var = self.tmp("l")
        src.emit(f"{var} = {self.expr(s.value, ctx)}", indent, s.span)
        ctx.locals[s.name] = var

    # ---------------------------------------- statements that compute and fail part-way
    def visit_Var(self, s: ir.Var, src: Source, ctx: Ctx, indent: int) -> None:
        var = self.tmp("l")
        src.emit(f"{var} = {self.expr(s.value, ctx)}", indent, s.span)
        ctx.locals[s.name] = var
        self._var_names.add(var)

    def visit_Fail(self, s: ir.Fail, src: Source, ctx: Ctx, indent: int) -> None:
        values = ""
        if s.message is not None:
            values = "".join(
                self.expr(p.expr, ctx) + ", " for p in s.message.parts if p.expr is not None
            )
        key = f"{s.span.line}:{s.span.col}"
        src.emit(f"raise H_Fail({s.code!r}, {key!r}, ({values}))", indent, s.span)

    def visit_Break(self, s: ir.Break, src: Source, ctx: Ctx, indent: int) -> None:
        in_function = self._loops[-1][0]
        src.emit("return True" if in_function else "break", indent, s.span)

    def visit_Continue(self, s: ir.Continue, src: Source, ctx: Ctx, indent: int) -> None:
        in_function = self._loops[-1][0]
        src.emit("return None" if in_function else "continue", indent, s.span)

    def unknown_block(
        self,
        body: Iterable[ir.Stmt],
        src: Source,
        ctx: Ctx,
        indent: int,
        in_loop: bool = True,
    ) -> None:
        """What a block under an unknown condition (or a loop over an unknown collection) does
        in the safe flavour: what it may change becomes unknown; each `fail` in it is a branch
        where the call may fail; a `break`/`continue` in it may cut the loop around it short,
        so what the rest of that loop changes becomes unknown too and the loop ends here."""
        body = tuple(body)
        jumps = in_loop and bool(self._loops) and jumps_out(body)
        roots = assigned_roots(body)
        if jumps:
            roots |= assigned_roots(self._loops[-1][1])
        state_roots = _state_roots(body)  # `state.k = …` where a parameter `k` hides it
        if jumps:
            state_roots |= _state_roots(self._loops[-1][1])
        for root in sorted(roots):
            local = ctx.locals.get(root)
            if local is not None and local in self._var_names:
                src.emit(f"{local} = U", indent)
            if root in self.slots and (
                local is None or root not in ctx.locals or root in state_roots
            ):
                src.emit(f"S[{self.slots[root]}] = U", indent)
        src.emit("C.havoc = True", indent)
        # a cut-short loop may have failed in any of its later iterations
        for f in _unique(fails_in(body) + (fails_in(self._loops[-1][1]) if jumps else [])):
            holes = 0 if f.message is None else sum(p.expr is not None for p in f.message.parts)
            key = f"{f.span.line}:{f.span.col}"
            src.emit(f"C.possible_failure({f.code!r}, {key!r}, {holes}, S)", indent)
        if jumps:
            src.emit("return True" if self._loops[-1][0] else "break", indent)

    def _local_root(self, target: ir.Expr, ctx: Ctx) -> str | None:
        """The generated name of the `var` local that ``target`` changes, if it is one."""
        node, _ = lvalue_path(target)
        local = ctx.locals.get(node.name)
        return local if local is not None and local in self._var_names else None

    def visit_Warn(self, s: ir.Warn, src: Source, ctx: Ctx, indent: int) -> None:
        values = ""
        if s.message is not None:
            values = "".join(
                self.expr(p.expr, ctx) + ", " for p in s.message.parts if p.expr is not None
            )
        src.emit(f"C.warn({s.code!r}, {_template_key(s)!r}, ({values}))", indent, s.span)

    def visit_Report(self, s: ir.Report, src: Source, ctx: Ctx, indent: int) -> None:
        for f in s.fields:
            src.emit(f"C.report({f.name!r}, {self.expr(f.value, ctx)})", indent, f.span)

    def _declared_empty(self, target: ir.Expr) -> str | None:
        """``x = {}`` on a state variable: the empty value of its declared type (known even when
        the old value of ``x`` is not)."""
        if not isinstance(target, ir.Name):
            return None
        var = next((v for v in self.contract.state if v.name == target.name), None)
        if var is None:
            return None
        value = empty_of(var.type, {t.name: t.type for t in self.contract.types})
        return (
            "FMap()"
            if isinstance(value, dict)
            else "()"
            if isinstance(value, tuple)
            else ("H_EMPTY")
        )

    def update(
        self, src: Source, target: ir.Expr, make: Any, ctx: Ctx, indent: int, span: Span
    ) -> None:
        """Write ``make(current)`` into the location ``target`` of the working state."""
        node, path = lvalue_path(target)
        slot = self._local_root(target, ctx) or f"S[{self.slots[node.name]}]"
        if not path:
            src.emit(f"{slot} = {make(slot)}", indent, span)
            return
        containers = [self.tmp("o")]
        keys: list[str] = []
        src.emit(f"{containers[0]} = {slot}", indent, span)
        for i, step in enumerate(path):
            if isinstance(step, ir.Attr):
                key = repr(step.name)
            else:
                assert isinstance(step, ir.Index)
                key = self.expr(step.key, ctx)
            k = self.tmp("k")
            src.emit(f"{k} = {key}", indent)
            keys.append(k)
            if i < len(path) - 1:
                nxt = self.tmp("o")
                src.emit(f"{nxt} = H_index({containers[-1]}, {k})", indent)
                containers.append(nxt)
        leaf = f"H_index({containers[-1]}, {keys[-1]})"
        value = make(leaf)
        for container, k in zip(reversed(containers), reversed(keys)):
            value = f"H_set({container}, {k}, {value})"
        src.emit(f"{slot} = {value}", indent)


HOIST_DEPTH = 40
"""Expression nesting after which the rest goes into a function of its own (each level may
cost up to three parentheses of generated source; Python refuses more than 200)."""
MAX_STATIC_LOOPS = 10
"""Nested ``for`` loops per generated function (Python refuses more than 20 nested blocks)."""
_LOCAL_NAME = re.compile(r"(?:[pl]_\w+|_[qvlb]\d+|[SAROC])")


def _free_names(code: str) -> set[str]:
    """The generated local names (parameters, loop and let variables, S A R O C) that ``code``
    reads, found by tokenizing it (names inside string literals do not count)."""
    names: set[str] = set()
    bound: set[str] = set()  # `lambda _q1:` and `for _q1 in` inside the code itself
    previous = ""
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.NAME and _LOCAL_NAME.fullmatch(tok.string):
            (bound if previous in ("lambda", "for") else names).add(tok.string)
        previous = tok.string
    return names - bound


_BOOL_OPS = ("and", "or", "==", "!=", "<", "<=", ">", ">=", "in", "not in")


def _truthy(e: ir.Expr, code: str) -> str:
    """``code`` as a condition: expressions that are always bool need no run-time check."""
    if isinstance(e, ir.Binary) and e.op in _BOOL_OPS:
        return code
    if isinstance(e, ir.TypeTest) and e.negated:
        return code
    if isinstance(e, ir.Unary) and e.op == "not":
        return code
    if isinstance(e, ir.ScalarLit) and isinstance(e.value, bool):
        return code
    return f"H_truth({code})"


def _state_collection_kinds(contract: ir.Contract) -> dict[str, str]:
    decls = {t.name: t.type for t in contract.types}
    out: dict[str, str] = {}
    for var in contract.state:
        t: ir.TypeExpr = var.type
        depth = 0
        while isinstance(t, ir.NamedType) and t.name in decls and depth < 32:
            t = decls[t.name]
            depth += 1
        if isinstance(t, ir.GenericType):
            out[var.name] = t.name
    return out


def _template_key(s: ir.Warn) -> str:
    return f"{s.span.line}:{s.span.col}"


def _state_roots(body: Iterable[ir.Stmt]) -> set[str]:
    """The state variables a block changes through ``state.NAME`` (named so because a local
    of that name hides the variable)."""
    roots: set[str] = set()
    for s in walk_stmts(body):
        if isinstance(s, (ir.Assign, ir.MethodCall)):
            node, _ = lvalue_path(s.target)
            if node.state:
                roots.add(node.name)
    return roots


def _unique(fails: list[ir.Fail]) -> list[ir.Fail]:
    """The statements in their first order, each once."""
    return list({id(f): f for f in fails}.values())


def _comment(text: str) -> str:
    # a comment must stay one line of source: \r, NUL and other control characters in a string
    # literal would end it (or make the module uncompilable); most texts are printable already
    if text.isprintable():
        return text[:200]
    return "".join(ch if ch.isprintable() else " " for ch in text)[:200]
