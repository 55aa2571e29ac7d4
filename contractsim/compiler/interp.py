"""A small tree-walking reference interpreter with the same semantics as the compiled code.

It is slow on purpose: it is the oracle the tests compare the compiled code against, and it explains
failures (the value of every sub-expression of a violated condition).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field
from functools import cached_property
from itertools import chain, islice
from operator import attrgetter
from typing import Any

from ..dsl import ir
from ..dsl.pretty import expr_text
from ..dsl.visitor import NodeVisitor
from ..dsl.walk import assigned_roots, fails_in, jumps_out, lvalue_path
from ..records import record
from . import comprehend, lib
from .empty import empty_of, float_target
from .lib import sum_values
from .values import PLAN_TEXTS, UNKNOWN, FMap, Fresh

U = UNKNOWN


@record
class Env:
    """Everything an expression can see."""

    contract: ir.Contract
    state: dict[str, Any]
    args: dict[str, Any] = field(default_factory=dict)
    locals: dict[str, Any] = field(default_factory=dict)
    consts: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    old: dict[str, Any] | None = None
    today: str = "1970-01-01"
    now: str = "1970-01-01T00:00:00.000Z"
    safe: bool = True
    fresh_counter: list[int] = field(default_factory=lambda: [0])
    warnings: list[tuple[str, str, tuple[Any, ...]]] = field(default_factory=list)
    reports: dict[str, Any] = field(default_factory=dict)
    havoc: bool = False
    # `fail` statements under unknown conditions: (code, template key, hole count, state there)
    may_fail: list[tuple[str, str, int, dict[str, Any]]] = field(default_factory=list)

    def with_locals(self, **extra: Any) -> Env:
        new = Env(**{**self.__dict__, "locals": {**self.locals, **extra}})
        return new


class Interpreter(NodeVisitor):
    def __init__(self, contract: ir.Contract) -> None:
        self.contract = contract
        self.predicates: dict[str, ir.PredicateDecl | ir.FunctionDecl] = {
            **{p.name: p for p in contract.predicates},
            **{f.name: f for f in contract.functions},
        }
        self.enums = {t.name for t in contract.types if isinstance(t.type, ir.EnumType)}
        self.records = {t.name: t.type for t in contract.types if isinstance(t.type, ir.RecordType)}
        self._declared: dict[str, tuple[Any, ...]] | None = None  # type-test specs, on first use
        self.state_names = tuple(v.name for v in contract.state)

    @cached_property
    def texts(self) -> frozenset[str]:
        """The texts written in the contract (:func:`contract_texts`), found on first use:
        checking computes constants with an interpreter but seldom needs them (finding them walks
        every expression)."""
        return contract_texts(self.contract)

    # ------------------------------------------------------------------ expressions
    def eval(self, e: ir.Expr, env: Env) -> Any:
        return self.visit(e, env)

    def generic_visit(self, node: ir.Node, *args: Any) -> Any:
        raise TypeError(f"the interpreter has no rule for {type(node).__name__}")

    def visit_ScalarLit(self, e: ir.ScalarLit, env: Env) -> Any:
        return e.value

    def visit_Name(self, e: ir.Name, env: Env) -> Any:
        if e.state:
            if e.name in env.state:
                return env.state[e.name]
            raise lib.EvalError(f"unknown state variable {e.name}")
        if e.name in env.locals:
            value = env.locals[e.name]
            return value.value if type(value) is _Cell else value
        if e.name in env.args:
            return env.args[e.name]
        if e.name == "result":
            return env.result
        if e.name in env.state:
            return env.state[e.name]
        if e.name in env.consts:
            return env.consts[e.name]
        raise lib.EvalError(f"unknown name {e.name}")

    def visit_Attr(self, e: ir.Attr, env: Env) -> Any:
        if isinstance(e.obj, ir.Name) and e.obj.name in self.enums and e.obj.name not in env.locals:
            return e.name
        return lib.attr(self.eval(e.obj, env), e.name)

    def visit_Index(self, e: ir.Index, env: Env) -> Any:
        return lib.index(self.eval(e.obj, env), self.eval(e.key, env))

    def visit_Call(self, e: ir.Call, env: Env) -> Any:
        if e.func == "old":
            if env.old is None:
                raise lib.EvalError("old() outside a postcondition")
            return self.eval(e.args[0], Env(**{**env.__dict__, "state": env.old}))
        if e.func == "today":
            return env.today
        if e.func == "now":
            return env.now
        args = [self.eval(a, env) for a in e.args]
        if e.func == "fresh":
            env.fresh_counter[0] += 1
            state = tuple(env.state.get(n) for n in self.state_names)
            made_before = (self.texts, state, tuple(env.args.values()), PLAN_TEXTS.get())
            return Fresh(args[0] if args else "id", env.fresh_counter[0], (made_before, ()))
        if e.func in self.predicates:
            pred = self.predicates[e.func]
            inner = Env(**{**env.__dict__, "locals": {}, "args": {}})
            inner.locals = {p.name: v for p, v in zip(pred.params, args)}
            return self.eval(pred.body, inner)
        if e.func in self.records:
            rec = self.records[e.func]
            given = {k.name: self.eval(k.value, env) for k in e.kwargs}
            fields: dict[str, Any] = {}
            for f in rec.fields:
                if f.name in given:
                    fields[f.name] = given[f.name]
                elif f.default is not None:
                    fields[f.name] = self.eval(f.default, env)
                else:
                    fields[f.name] = None
            return FMap(fields)
        funcs = lib.SAFE_FUNCS if env.safe else lib.BUILTIN_FUNCS
        return funcs[e.func](*args)

    def visit_Quantifier(self, e: ir.Quantifier, env: Env) -> Any:
        if e.unpack or e.cond is not None or e.op in ("first", "last"):
            found = comprehend.items(self.eval(e.coll, env), len(e.unpack))
            body, cond = self._bound(e, e.body, env), self._bound(e, e.cond, env)
            assert body is not None
            return comprehend.quantify(e.op, found, body, cond)
        coll = self.eval(e.coll, env)
        return quantify(
            e.op, coll, lambda item: self.eval(e.body, env.with_locals(**{e.var: item}))
        )

    def visit_Unary(self, e: ir.Unary, env: Env) -> Any:
        value = self.eval(e.operand, env)
        if e.op == "not":
            return U if value is U else not lib.truth(value, "the operand of `not`")
        return lib.neg(value)

    # ---- lang-types: type tests
    def visit_TypeTest(self, e: ir.TypeTest, env: Env) -> Any:
        from .typetest import declared_specs, type_spec, type_test

        if self._declared is None:
            self._declared = declared_specs(self.contract)
        result = type_test(self.eval(e.operand, env), type_spec(e.type), self._declared)
        if not e.negated:
            return result
        return lib.safe_not(result) if env.safe else not result

    def visit_Binary(self, e: ir.Binary, env: Env) -> Any:
        op = e.op
        if op in ("and", "or"):
            left = self.eval(e.left, env)
            if left is not U:
                left = lib.truth(left, f"the left side of `{op}`")
            if op == "and" and left is False:
                return False
            if op == "or" and left is True:
                return True
            if left is U:
                try:
                    right = self.eval(e.right, env)
                    if right is not U:
                        right = lib.truth(right, f"the right side of `{op}`")
                except lib.EVAL_FAILURES:
                    right = U  # see lib._maybe: only worlds where the left side held get here
            else:
                right = self.eval(e.right, env)
                if right is not U:
                    right = lib.truth(right, f"the right side of `{op}`")
            if left is U:
                return (
                    (False if right is False else U)
                    if op == "and"
                    else (True if right is True else U)
                )
            return right
        left = self.eval(e.left, env)
        right = self.eval(e.right, env)
        if op in ("in", "not in"):
            found = lib.safe_contains(left, right)
            return found if op == "in" else lib.safe_not(found)
        if op in lib.COMPARE:
            return lib.safe_compare(op, left, right)
        return lib.safe_arith(op, left, right)

    def visit_Collection(self, e: ir.Collection, env: Env) -> Any:
        if len(e.items) >= FLAT_VALUES_FROM:  # a set of 100,000 pairs, say
            children = _flat_children(e.items)
            if children is not None:
                return frozenset(children) if e.type == "set" else tuple(children)
        # bulk data is literals of literals: their elements are computed here, as `visit_ScalarLit`
        # and this method compute them, without the visitor's dispatch per element
        items = [
            i.value
            if i.__class__ is ir.ScalarLit
            else self.visit_Collection(i, env)
            if i.__class__ is ir.Collection
            else self.eval(i, env)
            for i in e.items
        ]
        if e.type == "set":
            return frozenset(items)
        if e.type == "empty":
            return frozenset()
        return tuple(items)

    def visit_MapLit(self, e: ir.MapLit, env: Env) -> Any:
        return FMap((self.eval(x.key, env), self.eval(x.value, env)) for x in e.entries)

    # ------------------------------------------------------ comprehensions, conditionals
    def _bound(
        self, e: ir.Quantifier | ir.Comprehension, part: ir.Expr | None, env: Env
    ) -> Callable[[Any], Any] | None:
        """``part`` of a comprehension as a function of one item (its names bound to the item,
        or to its parts when unpacking)."""
        if part is None:
            return None
        if e.unpack:
            names = e.unpack
            return lambda item: self.eval(part, env.with_locals(**dict(zip(names, item))))
        return lambda item: self.eval(part, env.with_locals(**{e.var: item}))

    def visit_Comprehension(self, e: ir.Comprehension, env: Env) -> Any:
        found = comprehend.items(self.eval(e.coll, env), len(e.unpack))
        body = self._bound(e, e.body, env)
        assert body is not None
        return comprehend.comprehend(
            e.type, found, body, self._bound(e, e.cond, env), self._bound(e, e.key, env)
        )

    def visit_Conditional(self, e: ir.Conditional, env: Env) -> Any:
        return comprehend.choose(
            self.eval(e.cond, env),
            lambda: self.eval(e.then, env),
            lambda: self.eval(e.orelse, env),
        )

    # ------------------------------------------------------------ bounded unknowns (issue 16)
    def visit_UnknownIn(self, e: ir.UnknownIn, env: Env) -> Any:
        return lib.bounded(self.eval(e.lo, env), self.eval(e.hi, env))

    # ------------------------------------------------------------------ statements
    def exec(self, body: Iterable[ir.Stmt], env: Env) -> None:
        """Run statements against ``env.state`` (a dict that is updated in place)."""
        scope = env.with_locals()
        scope.state = env.state
        scope.may_fail = env.may_fail
        for s in body:
            self._stmt(s, scope)
        env.havoc = env.havoc or scope.havoc

    def _stmt(self, s: ir.Stmt, env: Env) -> None:
        try:
            self.visit(s, env)
        except lib.EvalError as exc:
            if exc.span is None:
                exc.span = s.span  # the innermost statement that failed
            raise

    def visit_Assign(self, s: ir.Assign, env: Env) -> None:
        if isinstance(s.value, ir.UnknownIn):
            whole = False if float_target(self.contract, s.target) else None
            value = lib.bounded(self.eval(s.value.lo, env), self.eval(s.value.hi, env), whole)
        else:
            value = self.eval(s.value, env)
        if isinstance(s.value, ir.Collection) and s.value.type == "empty":
            value = self._empty_for(s.target, env)
        if s.op != "=":
            value = lib.safe_arith(s.op[0], self.eval(s.target, env), value)
        # the old value is not read: `m[k] = v` may add a new key
        self._update(s.target, lambda _current: value, env, read_current=False)

    def visit_MethodCall(self, s: ir.MethodCall, env: Env) -> None:
        args = [self.eval(a, env) for a in s.args]
        method = lib.METHODS[s.method]
        self._update(s.target, lambda current: method(current, *args), env)

    def visit_If(self, s: ir.If, env: Env) -> None:
        cond = self.eval(s.cond, env)
        if cond is U:
            self._unknown_block([s], env)
        elif lib.truth(cond, "an `if` condition"):
            self._block(s.then, env)
        else:
            self._block(s.orelse, env)

    def visit_For(self, s: ir.For, env: Env) -> None:
        coll = self.eval(s.coll, env)
        if lib.unobserved(coll):
            self._unknown_block(s.body, env, in_loop=False)
            return
        for item in lib.iterate(coll):
            try:
                self._block(s.body, env, **{_LOOP: s.body, s.var: item})
            except _Break:
                break
            except _Continue:
                continue

    def visit_Let(self, s: ir.Let, env: Env) -> None:
        env.locals[s.name] = self.eval(s.value, env)

    # ---------------------------------------- statements that compute and fail part-way
    def visit_Var(self, s: ir.Var, env: Env) -> None:
        env.locals[s.name] = _Cell(self.eval(s.value, env))

    def visit_Fail(self, s: ir.Fail, env: Env) -> None:
        values: tuple[Any, ...] = ()
        if s.message is not None:
            values = tuple(self.eval(p.expr, env) for p in s.message.parts if p.expr is not None)
        raise lib.ContractFail(s.code, f"{s.span.line}:{s.span.col}", values)

    def visit_Break(self, s: ir.Break, env: Env) -> None:
        raise _Break

    def visit_Continue(self, s: ir.Continue, env: Env) -> None:
        raise _Continue

    def _unknown_block(
        self, body: list[ir.Stmt] | tuple[ir.Stmt, ...], env: Env, in_loop: bool = True
    ) -> None:
        """A block under an unknown condition (see CodeGen.unknown_block: the same rules)."""
        loop: tuple[ir.Stmt, ...] | None = env.locals.get(_LOOP)
        jumps = in_loop and loop is not None and jumps_out(body)
        roots = assigned_roots(body)
        if loop is not None and jumps:
            roots |= assigned_roots(loop)
        for root in sorted(roots):
            local = env.locals.get(root)
            if type(local) is _Cell:
                local.value = U
            elif root in env.state and local is None:
                env.state[root] = U
        env.havoc = True
        failing = fails_in(body) + (fails_in(loop) if loop is not None and jumps else [])
        for f in {id(f): f for f in failing}.values():
            holes = 0 if f.message is None else sum(p.expr is not None for p in f.message.parts)
            env.may_fail.append((f.code, f"{f.span.line}:{f.span.col}", holes, dict(env.state)))
        if jumps:
            raise _Break

    def visit_Warn(self, s: ir.Warn, env: Env) -> None:
        values: tuple[Any, ...] = ()
        if s.message is not None:
            values = tuple(self.eval(p.expr, env) for p in s.message.parts if p.expr is not None)
        env.warnings.append((s.code, f"{s.span.line}:{s.span.col}", values))

    def visit_Report(self, s: ir.Report, env: Env) -> None:
        for f in s.fields:
            env.reports[f.name] = self.eval(f.value, env)

    def _empty_for(self, target: ir.Expr, env: Env) -> Any:
        """``x = {}``: a state variable gets the empty value of its declared type; anything else
        the empty value like its current one (unknown when that is unknown)."""
        if isinstance(target, ir.Name) and type(env.locals.get(target.name)) is not _Cell:
            var = next((v for v in self.contract.state if v.name == target.name), None)
            if var is not None:
                return empty_of(var.type, {t.name: t.type for t in self.contract.types})
        current = self.eval(target, env)
        return U if current is U else empty_like(current)

    def _block(self, body: Iterable[ir.Stmt], env: Env, **extra: Any) -> None:
        inner = env.with_locals(**extra)
        inner.state = env.state
        inner.warnings = env.warnings
        inner.reports = env.reports
        inner.may_fail = env.may_fail
        try:
            for s in body:
                self._stmt(s, inner)
        finally:
            env.havoc = env.havoc or inner.havoc

    def _update(
        self, target: ir.Expr, make: Callable[[Any], Any], env: Env, read_current: bool = True
    ) -> None:
        node, path = lvalue_path(target)
        keys = [p.name if isinstance(p, ir.Attr) else self.eval(p.key, env) for p in path]
        cell = env.locals.get(node.name)
        if type(cell) is not _Cell:
            cell = None
        containers = [env.state[node.name] if cell is None else cell.value]
        for k in keys[:-1]:
            containers.append(lib.index(containers[-1], k))
        if not keys:
            value = make(containers[0])
        else:
            value = make(lib.index(containers[-1], keys[-1]) if read_current else None)
            for container, k in zip(reversed(containers), reversed(keys)):
                value = lib.coll_set(container, k, value)
        if cell is None:
            env.state[node.name] = value
        else:
            cell.value = value

    # ------------------------------------------------------------------ explanations
    def explain(self, e: ir.Expr, env: Env, limit: int = 8) -> list[tuple[str, Any]]:
        """The sub-expressions that decided a condition, with their values (for reports)."""
        out: list[tuple[str, Any]] = []
        self._explain(e, env, out)
        seen: set[str] = set()
        unique: list[tuple[str, Any]] = []
        for text, value in out:
            if text not in seen:
                seen.add(text)
                unique.append((text, value))
        return unique[:limit]

    def _explain(self, e: ir.Expr, env: Env, out: list[tuple[str, Any]]) -> None:
        try:
            value = self.eval(e, env)
        except Exception as exc:  # noqa: BLE001 - an explanation never fails the step
            out.append((expr_text(e), f"<error: {lib.failure_text(exc)}>"))
            return
        if isinstance(e, ir.Binary) and e.op in ("and", "or"):
            # only the operands that made the whole false (and) or not true (or) matter
            left_false = False
            for side in (e.left, e.right):
                try:
                    side_value = self.eval(side, env)
                except Exception:  # noqa: BLE001
                    if left_false and e.op == "and":
                        # never evaluated: `x is Rec and x.a > 0` stops at a false left side
                        return
                    side_value = None
                if side_value is not True or e.op == "or":
                    self._explain(side, env, out)
                left_false = side_value is False
            return
        if isinstance(e, ir.Unary) and e.op == "not":
            self._explain(e.operand, env, out)
            return
        if isinstance(e, ir.Binary) or isinstance(e, ir.Quantifier):
            operands = [e.left, e.right] if isinstance(e, ir.Binary) else [e.coll]
            for side in operands:
                if not isinstance(side, ir.ScalarLit):
                    self._leaf(side, env, out)
            return
        if isinstance(e, ir.Call) and e.func in self.predicates:
            out.append((expr_text(e), value))
            for arg in e.args:
                if not isinstance(arg, ir.ScalarLit):
                    self._leaf(arg, env, out)
            return
        if not isinstance(e, ir.ScalarLit):
            self._leaf(e, env, out)

    def _leaf(self, e: ir.Expr, env: Env, out: list[tuple[str, Any]]) -> None:
        try:
            out.append((expr_text(e), self.eval(e, env)))
        except Exception as exc:  # noqa: BLE001
            out.append((expr_text(e), f"<error: {lib.failure_text(exc)}>"))


class _Cell:
    """The value of a ``var`` local: blocks nested in its block change it in place."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(Exception):
    """``break``: caught by the innermost ``for``."""


class _Continue(Exception):
    """``continue``: caught by the innermost ``for``."""


_LOOP = "\x00loop"
"""The local holding the body of the innermost ``for`` (no contract name can be it)."""


def quantify(op: str, coll: Any, body: Callable[[Any], Any]) -> Any:
    """Kleene semantics of all/any/count/sum over a collection."""
    if lib.unobserved(coll):
        return U
    items = lib.iterate(coll)
    if op == "all":
        result: Any = True
        for item in items:
            v = body(item)
            if v is U:
                result = U
            elif not lib.truth(v, "the condition of `all`"):
                return False
        return result
    if op == "any":
        result = False
        for item in items:
            v = body(item)
            if v is U:
                result = U
            elif lib.truth(v, "the condition of `any`"):
                return True
        return result
    if op == "count":
        total = 0
        for item in items:
            v = body(item)
            if v is U:
                return U
            if lib.truth(v, "the condition of `count`"):
                total += 1
        return total
    values = [body(item) for item in items]
    if any(v is U for v in values):
        return U
    return sum_values(values)


def empty_like(value: Any) -> Any:
    if isinstance(value, FMap):
        return FMap()
    if isinstance(value, tuple):
        return ()
    return frozenset()


def contract_texts(contract: ir.Contract) -> frozenset[str]:
    """The texts written in a contract (its string literals and enum members): they existed
    before any fresh value a simulation makes."""
    from ..dsl.walk import all_exprs

    texts = {e.value for e in all_exprs(contract) if isinstance(e, ir.ScalarLit)}
    for t in contract.types:
        if isinstance(t.type, ir.EnumType):
            texts.update(m.value for m in t.type.members)
    return frozenset(x for x in texts if isinstance(x, str))


# ------------------------------------------------ bulk literals (issue 13, branch s6b-literal)

FLAT_VALUES_FROM = 32
"""A collection of at least this many collections of scalar literals has its values computed
by :func:`_flat_children`."""
_items_of = attrgetter("items")
_value_of = attrgetter("value")
_type_of = attrgetter("type")


def _flat_children(items: tuple[ir.Expr, ...]) -> list[Any] | None:
    """The values of ``items`` when all are lists, sets and tuples of scalar literals (what
    :meth:`Interpreter.visit_Collection` computes for each, computed column-wise at C speed),
    else None."""
    if set(map(type, items)) != {ir.Collection}:
        return None
    parts = list(map(_items_of, items))
    leaves = list(chain.from_iterable(parts))
    if set(map(type, leaves)) != {ir.ScalarLit}:
        return None
    values = list(map(_value_of, leaves))
    sizes = set(map(len, parts))
    children: list[Any]
    if len(sizes) == 1:  # all pairs, say: cut at C speed
        children = list(zip(*[iter(values)] * sizes.pop()))
    else:
        rest = iter(values)
        children = [tuple(islice(rest, len(part))) for part in parts]
    kinds = set(map(_type_of, items))
    if kinds <= {"tuple", "list"}:
        return children
    if kinds == {"set"}:
        return list(map(frozenset, children))
    return [
        frozenset(child) if kind == "set" else frozenset() if kind == "empty" else child
        for child, kind in zip(children, map(_type_of, items))
    ]
