"""The checker's passes: names, types, constraints, machines, flows and lints, in the order of
:data:`PASSES`. IR in, diagnostics out; nothing is mutated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Literal, Protocol, cast

from ..diagnostics import Diagnostic, Span, suggestion_hint
from . import ir
from . import types as T
from .builtins import BUILTINS
from .hiding import check_hidden_names
from .lets import inline_tool_lets
from .typecheck import SEMVER, Checker, Scope, Symbol, _child_types, _root_name
from .walk import all_exprs, replace_nodes, stmt_exprs, walk_expr, walk_stmts

__all__ = [
    "PASSES",
    "BackEndChecks",
    "all_exprs",
    "check_and_resolve",
    "check_contract",
    "stmt_exprs",
    "walk_expr",
    "walk_stmts",
]


class BackEndChecks(Protocol):
    """The checks that compute values, supplied by the back end: the front end does not import
    the compiler (docs/architecture.md, "Layers"); ``contractsim.compiler.checks`` implements
    this."""

    def conformance_problem(
        self, ck: Checker, value: ir.Expr, type_expr: ir.TypeExpr
    ) -> str | None:
        """Why the constant ``value`` breaks a constraint of ``type_expr``, or None."""

    def check_constant_values(self, ck: Checker) -> None:
        """Report (E0414) every constant, initial value or default that cannot be computed."""


# ---------------------------------------------------------------------------------------- passes


def check_header(ck: Checker) -> None:
    h = ck.c.header
    if not SEMVER.match(h.version):
        ck.err(
            "E0409",
            f'version "{h.version}" is not a semantic version',
            h.version_span,
            hint='write MAJOR.MINOR.PATCH, e.g. "1.0.0"',
        )


def check_unique_names(ck: Checker) -> None:
    seen: dict[str, tuple[str, Span]] = {}
    decls: list[tuple[str, str, Span]] = []
    decls += [("type", t.name, t.span) for t in ck.c.types]
    decls += [("state variable", s.name, s.span) for s in ck.c.state]
    decls += [("constant", c.name, c.span) for c in ck.c.consts]
    decls += [("predicate", p.name, p.span) for p in ck.c.predicates]
    decls += [("function", f.name, f.span) for f in ck.c.functions]
    decls += [("tool", t.name, t.span) for t in ck.c.tools]
    decls += [("machine", m.name, m.span) for m in ck.c.machines]
    for kind, name, span in decls:
        if name in seen:
            other_kind, other = seen[name]
            ck.err(
                "E0203",
                f"`{name}` is already declared as a {other_kind} at line {other.line}",
                span,
                hint="every type, state variable, constant, predicate, function, tool and machine "
                "needs its own name",
            )
        else:
            seen[name] = (kind, span)
        if kind != "tool" and name in T.PRIMITIVE_NAMES + ("list", "set", "map", "tuple", "result"):
            ck.err("E0203", f"`{name}` is a reserved name", span)
        elif kind != "tool" and name in _EXPRESSION_WORDS:
            ck.err(
                "E0203",
                f"`{name}` is a reserved name: in an expression it is the literal or operator",
                span,
                hint="rename it",
            )
        if kind in ("predicate", "function") and name in BUILTINS:
            ck.err("E0203", f"`{name}` is a built-in function", span, hint=f"rename the {kind}")
    for kind, group in (("event", ck.c.events), ("goal", ck.c.goals)):
        names: dict[str, Span] = {}
        for decl in group:
            if decl.name in names:
                ck.err(
                    "E0203",
                    f"{kind} `{decl.name}` is already declared at line {names[decl.name].line}",
                    decl.span,
                )
            names[decl.name] = decl.span


_EXPRESSION_WORDS = frozenset(("true", "false", "null", "and", "or", "not", "in"))
"""Words an expression always reads as a literal or an operator, never as a name."""


def check_types(ck: Checker) -> None:
    # resolve the types a declaration refers to before it: a chain of a thousand aliases is
    # then resolved one link at a time instead of a thousand calls deep
    for name in _dependencies_first(ck.c.types):
        ck.named(name)
    for decl in ck.c.types:
        ck.named(decl.name)
        ck.check_constraints(decl.type)
    graph = _alias_graph({d.name: d for d in ck.c.types})
    suspects = _on_or_before_cycles(graph)
    for decl in ck.c.types:
        cycle = _cycle_from(decl.name, graph) if decl.name in suspects else None
        if cycle is not None:
            ck.err(
                "E0311",
                f"type `{decl.name}` is defined as itself: " + " → ".join(cycle),
                decl.span,
                hint="a type may refer to itself only inside a list, set, map, record or union "
                "by tag, where a value can end",
            )


def _dependencies_first(types: Iterable[ir.TypeDecl]) -> list[str]:
    """Declared type names, each after the declared types it mentions (cycles cut anywhere),
    found without recursion."""
    decls = {d.name: d for d in types}

    def mentions(t: ir.TypeExpr) -> list[str]:
        out: list[str] = []
        todo = [t]
        while todo:
            node = todo.pop()
            if isinstance(node, ir.NamedType) and node.name in decls:
                out.append(node.name)
            todo.extend(_child_types(node))
        return out

    order: list[str] = []
    state: dict[str, int] = {}  # 1: being visited, 2: done
    for root in decls:
        if root in state:
            continue
        stack = [(root, iter(mentions(decls[root].type)))]
        state[root] = 1
        while stack:
            name, children = stack[-1]
            nxt = next((c for c in children if c not in state), None)
            if nxt is None:
                stack.pop()
                state[name] = 2
                order.append(name)
            else:
                state[nxt] = 1
                stack.append((nxt, iter(mentions(decls[nxt].type))))
    return order


def _alias_graph(decls: dict[str, ir.TypeDecl]) -> dict[str, set[str]]:
    """Plain alias edges (``type A = B``, ``type R = R | null``): a cycle of them has no
    values, and validators for it cannot be built."""

    def direct(t: ir.TypeExpr) -> list[str]:
        if isinstance(t, ir.NamedType):
            return [t.name] if t.name in decls else []
        if isinstance(t, ir.UnionType):
            return [name for option in t.options for name in direct(option)]
        return []

    return {name: set(direct(d.type)) for name, d in decls.items()}


def _on_or_before_cycles(graph: dict[str, set[str]]) -> set[str]:
    """The nodes from which a cycle can be reached (the others are peeled off from the ends,
    in linear time, so a long acyclic chain costs no search per link)."""
    remaining = {name: set(edges) & graph.keys() for name, edges in graph.items()}
    users: dict[str, set[str]] = {name: set() for name in graph}
    for name, edges in remaining.items():
        for target in edges:
            users[target].add(name)
    ends = [name for name, edges in remaining.items() if not edges]
    while ends:
        end = ends.pop()
        for user in users[end]:
            remaining[user].discard(end)
            if not remaining[user]:
                ends.append(user)
        del remaining[end]
    return set(remaining)


def _conforms(ck: Checker, value: ir.Expr, type_expr: ir.TypeExpr, what: str) -> None:
    """A default or initial value must satisfy its own type's constraints."""
    if ck.back_end is None:
        return  # computing the value needs the compiler (see BackEndChecks)
    if not _constrained(type_expr, ck.type_decls, 0):
        return  # the type check already said all there is to say
    if not _well_formed(type_expr, ck.type_decls, 0):
        return  # an ill-formed type is reported where it is written
    if obviously_conforms(value, type_expr, ck.type_decls):
        return  # `{}`, `[]` or `null` where nothing constrains it: no validator to build
    problem = ck.back_end.conformance_problem(ck, value, type_expr)
    if problem is not None:
        ck.err(
            "E0404",
            f"{what} does not satisfy its type: {problem}",
            value.span,
            hint="change the value or relax the constraint",
        )


#: the collection types an empty literal of each kind is (`{}` is a set or a map until its
#: context decides; a `{}` written where a list is expected validates as `[]`)
_EMPTY_FITS: dict[str, frozenset[str]] = {
    "list": frozenset({"list"}),
    "set": frozenset({"set"}),
    "empty": frozenset({"list", "set", "map"}),
    "map": frozenset({"map"}),
}


def obviously_conforms(value: ir.Expr, t: ir.TypeExpr, decls: dict[str, ir.TypeDecl]) -> bool:
    """Whether ``value`` satisfies ``t`` without computing it: an empty collection literal of a
    list, set or map type, or ``null`` for a union with a ``null`` option, where no constraint
    sits on the type itself or an alias on the way to it but, for an empty collection, item-count
    bounds it meets (item types are never looked at, and their constraints do not matter to an
    empty collection). Building a pydantic validator for
    the type (a model per record type) is the cost this saves; ``False`` means "ask the
    validator", never "does not conform"."""
    if isinstance(value, ir.Collection) and not value.items:
        fits = _EMPTY_FITS.get(value.type)
    elif isinstance(value, ir.MapLit) and not value.entries:
        fits = _EMPTY_FITS["map"]
    elif isinstance(value, ir.ScalarLit) and value.value is None:
        fits = None
    else:
        return False
    seen: set[str] = set()
    while isinstance(t, ir.NamedType) and t.name in decls and t.name not in seen:
        if t.constraints and not (fits is not None and _empty_fits_bounds(t.constraints)):
            return False
        seen.add(t.name)
        t = decls[t.name].type
    if t.constraints and not (fits is not None and _empty_fits_bounds(t.constraints)):
        return False
    if fits is not None:
        return isinstance(t, ir.GenericType) and t.name in fits
    return isinstance(t, ir.UnionType) and any(
        not o.constraints
        and (isinstance(o, ir.NullType) or (isinstance(o, ir.NamedType) and o.name == "null"))
        for o in t.options
    )


def _empty_fits_bounds(constraints: tuple[ir.Constraint, ...]) -> bool:
    """Whether an empty collection satisfies every one of ``constraints``: only item-count
    bounds written as whole numbers, ``max_items`` at least 0 and ``min_items`` at most 0
    (``cc: list[Address] max_items 50 = []``); anything else is left to the validator."""
    for c in constraints:
        value = c.value
        if value.__class__ is not int:
            return False
        if not ((c.key == "max_items" and value >= 0) or (c.key == "min_items" and value <= 0)):
            return False
    return True


def _well_formed(t: ir.TypeExpr, decls: dict[str, ir.TypeDecl], depth: int) -> bool:
    """Whether every type name resolves and every generic has the right number of arguments."""
    if depth > 16:
        return True  # a recursive alias: its other uses are checked on their own
    if isinstance(t, ir.NamedType):
        if T.resolve_simple(t.name) is not None:
            return True
        decl = decls.get(t.name)
        return decl is not None and _well_formed(decl.type, decls, depth + 1)
    if isinstance(t, ir.GenericType):
        arity = T.GENERIC_ARITY.get(t.name)
        if t.name != "tuple" and (arity is None or len(t.args) != arity):
            return False
    return all(_well_formed(sub, decls, depth + 1) for sub in _child_types(t))


def _constrained(t: ir.TypeExpr, decls: dict[str, ir.TypeDecl], depth: int) -> bool:
    """Whether a type carries constraints anywhere (through aliases, fields and items)."""
    if depth > 16 or t.constraints:
        return depth <= 16 or bool(t.constraints)
    if isinstance(t, ir.NamedType):
        decl = decls.get(t.name)
        return decl is not None and _constrained(decl.type, decls, depth + 1)
    if isinstance(t, ir.RecordType):
        return True  # required fields and defaults are checked by validation
    return any(_constrained(sub, decls, depth + 1) for sub in _child_types(t))


def check_state(ck: Checker) -> None:
    const_scope = Scope(where="a constant")
    for c in ck.c.consts:
        ty = ck.expr(c.value, const_scope)
        if c.type is not None:
            declared = ck.resolve(c.type)
            ck.check_constraints(c.type)
            ck.expect(ty, declared, c.value.span, f"constant `{c.name}`")
            ty = declared
            _conforms(ck, c.value, c.type, f"the value of `{c.name}`")
        sym = Symbol(ty, "const", c.span)
        ck.consts[c.name] = sym
        const_scope.names[c.name] = sym
    for var in ck.c.state:
        ty = ck.resolve(var.type)
        ck.check_constraints(var.type)
        ck.state[var.name] = Symbol(ty, "state", var.span)
    scope = ck_scope(ck, where="an initial value")
    for var in ck.c.state:
        if var.init is None:
            continue
        init = ck.expr(var.init, scope)
        ty = ck.state[var.name].type
        ck.enum_literal(ty, var.init)
        if not T.assignable(init, ty):
            ck.err(
                "E0301",
                f"`{var.name}` is {ty.show()} but its initial value is {init.show()}",
                var.init.span,
            )
        elif isinstance(var.init, ir.UnknownIn):  # each bound must fit the type (issue 16)
            for bound, which in ((var.init.lo, "lower"), (var.init.hi, "upper")):
                _conforms(ck, bound, var.type, f"the {which} bound of `{var.name}`")
        else:
            _conforms(ck, var.init, var.type, f"the initial value of `{var.name}`")
    _check_field_defaults(ck)


def _check_field_defaults(ck: Checker) -> None:
    """Record field defaults are computed once, from constants, like parameter defaults."""
    scope = Scope(dict(ck.consts), where="a default")
    todo: list[ir.TypeExpr] = [t.type for t in ck.c.types]
    while todo:
        t = todo.pop()
        if isinstance(t, ir.RecordType):
            for f in t.fields:
                if f.default is not None:
                    ck.expr(f.default, scope)
        todo.extend(_child_types(t))


def ck_scope(ck: Checker, where: str) -> Scope:
    return Scope({**ck.consts, **ck.state}, where=where)


def check_predicates(ck: Checker) -> None:
    for p in ck.c.predicates:
        scope = ck_scope(ck, where=f"predicate `{p.name}`")
        _params_into(ck, p.params, scope)
        ck.expect(ck.expr(p.body, scope), T.BOOL, p.body.span, f"the body of predicate `{p.name}`")
    check_functions(ck)
    # recursion: predicates and functions must terminate (a cycle may pass through both)
    callables = ck.callables
    calls = {
        name: {e.func for e in walk_expr(p.body) if isinstance(e, ir.Call) and e.func in callables}
        for name, p in callables.items()
    }
    suspects = _on_or_before_cycles(calls)
    for decl in callables.values():
        path = _cycle_from(decl.name, calls) if decl.name in suspects else None
        if path:
            what = "function" if isinstance(decl, ir.FunctionDecl) else "predicate"
            ck.err(
                "E0309",
                f"{what} `{decl.name}` calls itself: " + " → ".join(path),
                decl.span,
                hint=f"{what}s must always terminate; use a quantifier over a collection",
            )
    for g in ck.c.goals:
        ck.expect(
            ck.expr(g.cond, ck_scope(ck, where=f"goal `{g.name}`")),
            T.BOOL,
            g.cond.span,
            f"goal `{g.name}`",
        )


def _cycle_from(start: str, calls: dict[str, set[str]]) -> list[str] | None:
    """A path from ``start`` back to itself along ``calls`` edges, if there is one."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(calls.get(node, ())):
            if nxt == start:
                return path + [nxt]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


def _accepted_type(ck: Checker, p: ir.Param, declared: T.Ty, in_tool: bool) -> T.Ty:
    """``p: DECLARED accepts ACCEPTED``: the type the tool body sees (ACCEPTED), after checking
    that it takes every declared value (E0415) and that ``p`` is a tool's parameter (E0416)."""
    assert p.accepts is not None
    if not in_tool:
        ck.err(
            "E0416",
            f"`accepts` is for tool parameters; predicate parameter `{p.name}` has one type",
            p.accepts.span,
            hint=f"write `{p.name}: {T.type_label(p.accepts)}`",
        )
        return declared
    accepted = ck.resolve(p.accepts)
    ck.check_constraints(p.accepts)
    if not T.assignable(declared, accepted):
        ck.err(
            "E0415",
            f"parameter `{p.name}` accepts {accepted.show()}, which does not include its "
            f"declared type {declared.show()}",
            p.accepts.span,
            hint=f"add the declared type: `accepts {T.type_label(p.type)} | "
            f"{T.type_label(p.accepts)}`",
        )
    return accepted


def check_functions(ck: Checker) -> None:
    """A function's body has its declared return type; it is pure (no ``old``, ``fresh`` or
    ``result``: the scope of a predicate)."""
    for f in ck.c.functions:
        scope = ck_scope(ck, where=f"function `{f.name}`")
        _params_into(ck, f.params, scope)
        want = ck.resolve(f.returns)
        ck.check_constraints(f.returns)
        got = ck.expr(f.body, scope)
        ck.enum_literal(want, f.body)
        ck.expect(got, want, f.body.span, f"the body of function `{f.name}`")


def _state_prefixed(tool: ir.Tool) -> set[str]:
    """The state variables a tool names as ``state.NAME``."""
    from .visitor import iter_child_nodes

    found: set[str] = set()
    stack: list[ir.Node] = [tool]
    while stack:
        node = stack.pop()
        if isinstance(node, ir.Name) and node.state:
            found.add(node.name)
        stack.extend(iter_child_nodes(node))
    return found


def _params_into(
    ck: Checker,
    params: Iterable[ir.Param],
    scope: Scope,
    in_tool: bool = False,
    acknowledged: set[str] | frozenset[str] = frozenset(),
) -> None:
    seen: set[str] = set()
    for p in params:
        if p.name in seen:
            ck.err("E0412", f"parameter `{p.name}` is declared twice", p.span)
        seen.add(p.name)
        ty = ck.resolve(p.type)
        ck.check_constraints(p.type)
        if p.accepts is not None:
            ty = _accepted_type(ck, p, ty, in_tool)
        if p.optional and p.default is None:
            ty = T.UnionT((ty, T.NULL))
        if p.name in ck.state and p.name not in acknowledged:
            ck.warn(
                "W0608",
                f"parameter `{p.name}` hides the state variable of the same name",
                p.span,
                hint=f"inside this tool `{p.name}` is the parameter; write `state.{p.name}` "
                "to read or assign the state variable (or rename the state variable)",
            )
        scope.names[p.name] = Symbol(ty, "param", p.span)


def check_tools(ck: Checker) -> None:
    for tool in ck.c.tools:
        check_tool(ck, tool)


def check_tool(ck: Checker, tool: ir.Tool) -> None:
    pre = ck_scope(ck, where=f"tool `{tool.name}`")
    # a tool that writes `state.NAME` knows that its parameter NAME hides the variable (the
    # walk over the whole tool only when a parameter has the name of a state variable)
    hides = any(p.name in ck.state for p in tool.params)
    acknowledged: set[str] | frozenset[str] = _state_prefixed(tool) if hides else frozenset()
    _params_into(ck, tool.params, pre, in_tool=True, acknowledged=acknowledged)
    for p in tool.params:
        if p.default is not None:
            pt = ck.resolve_quiet(p.type)
            dt = ck.expr(p.default, Scope(dict(ck.consts), where="a default"))
            ck.enum_literal(pt, p.default)
            ck.expect(dt, pt, p.default.span, f"the default of `{p.name}`")
            if T.assignable(dt, pt):
                _conforms(ck, p.default, p.type, f"the default of `{p.name}`")
    _tool_lets(ck, tool, pre)
    result_sym = None
    if tool.returns is not None:
        ck.check_constraints(tool.returns)
        result_sym = Symbol(ck.resolve(tool.returns), "result", tool.returns.span)

    def about_state(text: str) -> bool:
        """Whether a narrowed expression reads a state variable (``x.a`` with ``x`` a state
        variable not hidden by a parameter or binding, or ``state.x``)."""
        root = _root_name(text)
        if text.startswith("state."):
            return True
        symbol = pre.names.get(root)
        return root in ck.state and (symbol is None or symbol.kind == "state")

    def post_scope() -> Scope:
        """Effects and postconditions: the narrowing of earlier `require`s holds there for
        parameters and bindings, not for state variables (effects change them)."""
        post = pre.child()
        post.allow_fresh = True
        post.non_null = frozenset(t for t in post.non_null if not about_state(t))
        post.facts = {t: ty for t, ty in post.facts.items() if not about_state(t)}
        if result_sym is not None:
            post.names["result"] = result_sym
        return post

    post = post_scope()
    reports = {f.name: ck.resolve(f.type) for f in tool.reports}
    if tool.cost is not None:
        cost = ck.expr(tool.cost, pre)
        if not T.is_numeric(cost):
            ck.err("E0301", f"a cost is a number, got {cost.show()}", tool.cost.span)
    for risk in tool.risks:
        if risk.name not in ir.RISKS:
            ck.err(
                "E0411",
                f"unknown risk annotation `{risk.name}`",
                risk.span,
                hint=suggestion_hint(risk.name, ir.RISKS, "risk annotation"),
            )
    if tool.has_risk("read_only") and tool.has_risk("destructive"):
        ck.err("E0411", "a tool cannot be both read_only and destructive", tool.span)
    for cond in tool.conditions:
        scope = pre
        if cond.strength == "ensure":
            scope = post_scope()
            scope.allow_old = True
            scope.allow_fresh = False
        ck.expect(ck.expr(cond.cond, scope), T.BOOL, cond.cond.span, f"a `{cond.strength}` clause")
        if cond.strength == "require":
            # later clauses are checked where this one holds (`require x is str else …`)
            pre = ck.narrowed(pre, cond.cond)
        ck.template(cond.message, scope)
        ck.template(cond.hint, scope)
        if cond.code is not None:
            ck.error_code(cond.code, cond.code_span)
        elif cond.strength == "require":
            ck.warn(
                "W0603",
                "this precondition has no error code",
                cond.span,
                hint='add `else CODE "message"` so callers and agents can tell failures apart',
            )
    post = post_scope()
    ck.stmts(tool.effects, post, reports)
    outcome_names: dict[str, ir.Outcome] = {}
    for out in tool.outcomes:
        if out.name in outcome_names:
            ck.err(
                "E0203",
                f"outcome `{out.name}` is already declared in tool `{tool.name}`",
                out.span,
            )
        outcome_names[out.name] = out
        if out.outcome == "fails" and out.code is None:
            ck.err(
                "E0507",
                f"failure outcome `{out.name}` has no error code",
                out.span,
                hint=f'write: outcome {out.name} fails CODE "message"',
            )
        if out.code is not None:
            ck.error_code(out.code, out.code_span if out.code_span.file else out.span)
        ck.template(out.message, post)
        ck.template(out.hint, post)
        if out.event is not None:
            check_event_ref(ck, out.event)
        if out.when is not None:
            ck.expect(ck.expr(out.when, pre), T.BOOL, out.when.span, "an outcome's `when`")
        if out.observed is not None:
            _check_observed(ck, tool, out.observed, pre)
        ck.stmts(out.body, post, reports)
    if tool.outcomes and all(o.outcome == "fails" for o in tool.outcomes) and tool.flow is None:
        ck.warn("W0609", f"tool `{tool.name}` can never succeed", tool.span)
    _check_outcome_probabilities(ck, tool)
    _lint_outcome_selectors(ck, tool)
    if tool.flow is not None:
        check_flow(ck, tool, tool.flow, pre, post, outcome_names, reports)
    if tool.has_risk("destructive") and not tool.has_risk("needs_confirmation"):
        ck.warn(
            "W0604",
            f"destructive tool `{tool.name}` is not marked needs_confirmation",
            tool.span,
            hint="add `risk destructive, needs_confirmation` so agents ask before calling it",
        )


def _tool_lets(ck: Checker, tool: ir.Tool, pre: Scope) -> None:
    """``let NAME = EXPR`` at the top of a tool: in order, each seeing the ones before it; it
    must come before the tool's clauses and may not hide another name."""
    if not tool.lets:
        return  # (most tools: no need to find where their first clause is)
    clauses = [
        *(c.span for c in tool.conditions),
        *(s.span for s in tool.effects),
        *(o.span for o in tool.outcomes),
        *(f.span for f in tool.reports),
        *([tool.flow.span] if tool.flow is not None else []),
    ]
    first = min(((s.line, s.col) for s in clauses if s.file), default=None)
    for let in tool.lets:
        if first is not None and let.span.file and (let.span.line, let.span.col) > first:
            ck.err(
                "E0330",
                f"`let {let.name}` comes after a clause of tool `{tool.name}`",
                let.span,
                hint="bindings go at the top of the tool body, before its `require`, "
                "`should`, `ensure`, `effect`, `outcome`, `flow` and `reports`; move it up",
            )
        earlier = pre.names.get(let.name)
        if earlier is not None or let.name == "result":
            kind = (
                "the result"
                if earlier is None
                else {
                    "param": "the parameter",
                    "state": "the state variable",
                    "const": "the constant",
                    "local": "the binding",
                }.get(earlier.kind, "the name")
            )
            ck.err(
                "E0331",
                f"`let {let.name}` hides {kind} `{let.name}`",
                let.span,
                hint="give the binding a name of its own; inside the tool it would make "
                f"`{let.name}` mean two things",
            )
            ck.expr(let.value, pre)
            continue
        pre.names[let.name] = Symbol(ck.expr(let.value, pre), "local", let.span)


def _check_observed(ck: Checker, tool: ir.Tool, cond: ir.Expr, pre: Scope) -> None:
    """``observed when`` reads the real call: ``result`` (what it returned; when the call
    raised, a condition that reads it is false) and ``error`` (the failure text: ``Type:
    message`` of a raised exception, or the error a trace recorded), besides parameters and the
    state before the call."""
    returned = T.ANY if tool.returns is None else ck.resolve_quiet(tool.returns)
    if any(p.name == "error" for p in tool.params):
        ck.warn(
            "W0611",
            f"parameter `error` of tool `{tool.name}` is hidden inside `observed when`, where "
            "`error` is the real call's failure text",
            cond.span,
            hint="a parameter's name is part of the tool's interface, so keep it; read it in a "
            "`require` or the outcome's `when`, or rename it if the API is yours",
        )
    scope = pre.child(
        result=Symbol(returned, "result", cond.span),
        error=Symbol(T.UnionT((T.STR, T.NULL)), "observed", cond.span),
    )
    scope.where = "`observed when`"
    ck.expect(ck.expr(cond, scope), T.BOOL, cond.span, "`observed when`")


def _check_outcome_probabilities(ck: Checker, tool: ir.Tool) -> None:
    total = 0.0
    for out in tool.outcomes:
        if out.event is not None and out.event.probability is not None:
            total += out.event.probability
    if total > 1.0 + 1e-9:
        ck.err(
            "E0410",
            f"the event probabilities of tool `{tool.name}` add up to {total:g}, more than 1",
            tool.span,
        )


def check_event_ref(ck: Checker, ref: ir.EventRef) -> None:
    if ref.name not in ck.events:
        ck.err(
            "E0205",
            f"unknown event `{ref.name}`",
            ref.span,
            hint=suggestion_hint(ref.name, ck.events, "event")
            or f'declare it: event {ref.name} "what happens"',
        )
    if ref.probability is not None and not 0.0 < ref.probability <= 1.0:
        ck.err(
            "E0410",
            f"probability {ref.probability:g} is not in (0, 1]",
            ref.probability_span,
        )


def _lint_outcome_selectors(ck: Checker, tool: ir.Tool) -> None:
    """In a tool with a flow, transitions choose outcomes: an outcome's own `on`/`when` is
    never consulted, and exporters would advertise an event that cannot happen."""
    if tool.flow is None:
        return
    for out in tool.outcomes:
        if out.event is not None or out.when is not None:
            ck.warn(
                "W0610",
                f"outcome `{out.name}` has `on`/`when`, but tool `{tool.name}` has a flow: its "
                "transitions choose the outcome, so these are ignored",
                out.span,
                hint=f"move the event or condition onto a flow transition: STEP -> outcome "
                f"{out.name} on EVENT …",
            )


def check_flow(
    ck: Checker,
    tool: ir.Tool,
    flow: ir.Flow,
    pre: Scope,
    post: Scope,
    outcomes: dict[str, ir.Outcome],
    reports: dict[str, T.Ty],
) -> None:
    steps: dict[str, ir.FlowStep] = {}
    for step in flow.steps:
        if step.name in steps:
            ck.err("E0203", f"flow step `{step.name}` is declared twice", step.span)
        steps[step.name] = step
        ck.stmts(step.body, post, reports)
    names = set(steps) | {t.source for t in flow.transitions if t.source not in steps}
    # a step may be declared by a transition alone; only targets must name known steps
    if flow.initial is None:
        ck.err(
            "E0501",
            f"the flow of `{tool.name}` has no initial step",
            flow.span,
            hint="add `initial STEP`",
        )
        return
    known = set(steps) | {t.source for t in flow.transitions}
    if flow.initial not in known:
        ck.err(
            "E0211",
            f"unknown flow step `{flow.initial}`",
            flow.initial_span,
            hint=suggestion_hint(flow.initial, known, "step"),
        )
    outgoing: dict[str, list[ir.FlowTransition]] = {}
    probs: dict[str, float] = {}
    for t in flow.transitions:
        outgoing.setdefault(t.source, []).append(t)
        if t.to_outcome:
            if t.target not in outcomes:
                ck.err(
                    "E0207",
                    f"tool `{tool.name}` has no outcome `{t.target}`",
                    t.target_span,
                    hint=suggestion_hint(t.target, outcomes, "outcome")
                    or f"declare it: outcome {t.target} success",
                )
        elif t.target not in known:
            ck.err(
                "E0211",
                f"unknown flow step `{t.target}`",
                t.target_span,
                hint=suggestion_hint(t.target, known, "step")
                or "steps are named by `step NAME { … }` or by a transition from them",
            )
        if t.event is not None:
            check_event_ref(ck, t.event)
            probs[t.source] = probs.get(t.source, 0.0) + (t.event.probability or 0.0)
        if t.when is not None:
            ck.expect(ck.expr(t.when, post), T.BOOL, t.when.span, "a flow transition's `when`")
    for source, total in probs.items():
        if total > 1.0 + 1e-9:
            ck.err(
                "E0410",
                f"the event probabilities out of step `{source}` add up to {total:g}, more than 1",
                outgoing[source][0].span,
            )
    for name in sorted(names | known):
        trans = outgoing.get(name, [])
        span = steps[name].span if name in steps else flow.span
        if not trans:
            ck.err(
                "E0503",
                f"flow step `{name}` is a dead end: it has no transition out",
                span,
                hint=f"end it in an outcome: {name} -> outcome NAME",
            )
        elif all(t.when is not None or t.event is not None for t in trans):
            ck.warn(
                "W0606",
                f"every transition out of step `{name}` has a condition or an event; when none "
                "applies the call gets stuck",
                span,
                hint=f"add a last, unconditional transition out of `{name}`",
            )
    reachable = {flow.initial}
    frontier = [flow.initial]
    while frontier:
        node = frontier.pop()
        for t in outgoing.get(node, []):
            if not t.to_outcome and t.target not in reachable:
                reachable.add(t.target)
                frontier.append(t.target)
    for name in sorted(known - reachable):
        span = steps[name].span if name in steps else outgoing[name][0].span
        ck.err(
            "E0502",
            f"flow step `{name}` can never be reached from `{flow.initial}`",
            span,
            hint="add a transition into it, or remove it",
        )


def check_machines(ck: Checker) -> None:
    for m in ck.c.machines:
        states: dict[str, ir.MachineState] = {}
        for s in m.states:
            if s.name in states:
                ck.err("E0203", f"state `{s.name}` is declared twice in machine `{m.name}`", s.span)
            states[s.name] = s
        if not states:
            ck.err(
                "E0501",
                f"machine `{m.name}` declares no states",
                m.span,
                hint="add `states A, B, …`",
            )
            continue

        def known(
            name: str,
            span: Span,
            m: ir.Machine = m,
            states: dict[str, ir.MachineState] = states,
        ) -> bool:
            if name in states:
                return True
            ck.err(
                "E0206",
                f"machine `{m.name}` has no state `{name}`",
                span,
                hint=suggestion_hint(name, states, "state"),
            )
            return False

        if len(m.initial) != 1:
            ck.err(
                "E0501",
                f"machine `{m.name}` must have exactly one initial state, has {len(m.initial)}",
                m.initial[1].span if len(m.initial) > 1 else m.span,
                hint="write `initial STATE` once",
            )
        for s in (*m.initial, *m.finals):
            known(s.name, s.span)
        graph: dict[str, set[str]] = {name: set() for name in states}
        for t in m.transitions:
            ok = known(t.source, t.source_span) & known(t.target, t.target_span)
            tool = ck.tools.get(t.tool)
            if tool is None:
                ck.err(
                    "E0204",
                    f"unknown tool `{t.tool}` in machine `{m.name}`",
                    t.tool_span,
                    hint=suggestion_hint(t.tool, ck.tools, "tool"),
                )
            elif t.outcome is not None and t.outcome not in {o.name for o in tool.outcomes}:
                ck.err(
                    "E0207",
                    f"tool `{t.tool}` has no outcome `{t.outcome}`",
                    t.outcome_span,
                    hint=suggestion_hint(t.outcome, [o.name for o in tool.outcomes], "outcome"),
                )
            if t.when is not None:
                scope = ck_scope(ck, where=f"machine `{m.name}`")
                if tool is not None:
                    for p in tool.params:
                        accepted = ck.resolve_quiet(p.accepted_type)
                        scope.names[p.name] = Symbol(accepted, "param", p.span)
                ck.expect(ck.expr(t.when, scope), T.BOOL, t.when.span, "a transition's `when`")
            if ok:
                graph[t.source].add(t.target)
        if len(m.initial) != 1 or m.initial[0].name not in states:
            continue
        start = m.initial[0].name
        reachable = {start}
        frontier = [start]
        while frontier:
            node = frontier.pop()
            for nxt in graph[node]:
                if nxt not in reachable:
                    reachable.add(nxt)
                    frontier.append(nxt)
        finals = {s.name for s in m.finals}
        for name, s in states.items():
            if name not in reachable:
                ck.err(
                    "E0502",
                    f"state `{name}` of machine `{m.name}` can never be reached from `{start}`",
                    s.span,
                    hint="add a transition into it, or remove it",
                )
            elif not graph[name] and name not in finals:
                ck.err(
                    "E0503",
                    f"state `{name}` of machine `{m.name}` is a dead end and is not final",
                    s.span,
                    hint=f"add a transition out of `{name}`, or declare it `final {name}`",
                )


def lint_unused(ck: Checker) -> None:
    # the declared names no expression uses
    unused = {p.name for p in ck.c.predicates}
    unused.update(f.name for f in ck.c.functions)
    unused.update(var.name for var in ck.c.state)
    if unused:  # the walk every expression's names come from is shared with the E0331 pass
        unused -= ck.expr_facts().used
    events_used = {o.event.name for t in ck.c.tools for o in t.outcomes if o.event}
    events_used |= {
        tr.event.name for t in ck.c.tools if t.flow for tr in t.flow.transitions if tr.event
    }
    for p in ck.c.predicates:
        if p.name in unused:
            ck.warn("W0601", f"predicate `{p.name}` is never used", p.span)
    for f in ck.c.functions:
        if f.name in unused:
            ck.warn("W0601", f"function `{f.name}` is never used", f.span)
    for var in ck.c.state:
        if var.name in unused:
            ck.warn(
                "W0602",
                f"state variable `{var.name}` is never read or changed",
                var.span,
                hint="use it in a condition or an effect, or remove it",
            )
    for ev in ck.c.events:
        if ev.name not in events_used:
            ck.warn("W0605", f"event `{ev.name}` is never used", ev.span)


def check_constant_values(ck: Checker) -> None:
    """Constants, initial values and defaults that cannot be computed are errors at their place
    (E0414); computing them needs the compiler, which supplies the pass (see BackEndChecks)."""
    if ck.back_end is not None:
        ck.back_end.check_constant_values(ck)


def has_error_within(ck: Checker, span: Span) -> bool:
    """Whether an error was reported inside ``span`` (its expression is not worth running)."""
    for d in ck.diags:
        if d.severity != "error" or d.span.file != span.file:
            continue
        if (span.line, span.col) <= (d.span.line, d.span.col) <= (span.end_line, span.end_col):
            return True
    return False


PASSES: tuple[Callable[[Checker], None], ...] = (
    check_header,
    check_unique_names,
    check_types,
    check_state,
    check_predicates,
    check_tools,
    check_hidden_names,
    check_machines,
    check_constant_values,
    lint_unused,
)


def check_contract(
    contract: ir.Contract, back_end: BackEndChecks | None = None
) -> list[Diagnostic]:
    """Run every pass over a lowered contract and return its diagnostics in source order."""
    return check_and_resolve(contract, back_end)[1]


def check_and_resolve(
    contract: ir.Contract, back_end: BackEndChecks | None = None
) -> tuple[ir.Contract, list[Diagnostic]]:
    """Check a lowered contract; return it with every ``{}`` made the empty set, map or list
    its context needs (:func:`resolve_empty`), and its diagnostics in source order.

    ``back_end`` computes values (constants, defaults against their constraints); without it
    those checks are left out. :func:`contractsim.loads` passes
    ``contractsim.compiler.checks.COMPILER_CHECKS``."""
    ck = Checker(contract)
    ck.back_end = back_end
    for run in PASSES:
        run(ck)
    unique: dict[tuple[str, str, int, int], Diagnostic] = {}
    for d in ck.diags:
        unique.setdefault((d.code, d.message, d.span.line, d.span.col), d)
    resolved = inline_tool_lets(resolve_empty(ck))
    return resolved, sorted(unique.values(), key=Diagnostic.sort_key)


def resolve_empty(ck: Checker) -> ir.Contract:
    """The checked contract with each ``{}`` whose type the checker inferred written as that
    collection: ``m != {}`` with a map ``m`` compares with an empty map, ``get(m, k, {})`` on a
    map of maps defaults to an empty map. A ``{}`` no context decided stays as it is (a set)."""
    table: dict[int, ir.Node] = {}
    for node, literal in ck.empty_literals.values():
        if literal.kind == "map":
            table[id(node)] = ir.MapLit(span=node.span, entries=())
        elif literal.kind in ("set", "list"):
            kind: Literal["set", "list"] = "set" if literal.kind == "set" else "list"
            table[id(node)] = ir.Collection(span=node.span, type=kind)
    if not table:
        return ck.c
    # most `{}` are the initial values of state variables: replace those in place, and walk
    # the whole contract only when another one is left
    state = tuple(
        dataclasses.replace(var, init=cast(ir.Expr, table[id(var.init)]))
        if id(var.init) in table
        else var
        for var in ck.c.state
    )
    if sum(a is not b for a, b in zip(state, ck.c.state)) == len(table):
        return dataclasses.replace(ck.c, state=state)
    return replace_nodes(ck.c, table)
