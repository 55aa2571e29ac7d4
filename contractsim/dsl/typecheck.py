"""Name resolution and type checking of types, expressions and statements (the :class:`Checker`).

The passes in :mod:`contractsim.dsl.check` drive it declaration by declaration.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import field
from typing import Any

from ..diagnostics import Diagnostic, Span, did_you_mean, error, suggestion_hint, warning
from ..records import record
from . import ir
from . import types as T
from .builtins import BUILTINS, _numeric_join
from .pretty import expr_text
from .visitor import NodeVisitor
from .walk import ExprFacts, template_exprs, walk_expr

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$"
)
ERROR_CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")
FORMATS = ("uuid", "uuid4", "date-time", "date", "email", "ipv4", "ipv6", "uri")
COLLECTION_METHODS = {
    "set": {"add": 1, "remove": 1, "discard": 1, "clear": 0},
    "map": {"remove": 1, "discard": 1, "clear": 0},
    "list": {"append": 1, "remove": 1, "clear": 0, "pop": 0, "remove_at": 1, "insert": 2},
}


@record(frozen=True)  # what @dataclass makes, for less at import (records.py)
class Symbol:
    type: T.Ty
    kind: str  # param, state, const, local (let), loop (a for variable), var, result
    span: Span


@record
class Scope:
    names: dict[str, Symbol] = field(default_factory=dict)
    allow_old: bool = False
    allow_fresh: bool = False
    where: str = "an expression"
    non_null: frozenset[str] = frozenset()  # expressions known not to be null here
    in_loop: bool = False  # inside the body of a `for` (where `break` and `continue` go)
    # expressions whose type a type test narrowed here (``x is str`` …), by their text
    facts: dict[str, T.Ty] = field(default_factory=dict)

    def child(self, **extra: Symbol) -> Scope:
        if not extra or not (self.non_null or self.facts):  # nothing shadowed or to forget
            non_null = self.non_null
            facts = dict(self.facts)
        else:
            shadowed = {n for n in extra}
            non_null = frozenset(t for t in self.non_null if _root_name(t) not in shadowed)
            facts = {t: ty for t, ty in self.facts.items() if _root_name(t) not in shadowed}
        return Scope(
            {**self.names, **extra},
            self.allow_old,
            self.allow_fresh,
            self.where,
            non_null,
            self.in_loop,
            facts,
        )

    def narrowed(self, cond: ir.Expr, positive: bool = True) -> Scope:
        """The scope inside ``if cond`` (or its else when ``positive`` is false)."""
        facts = _non_null_facts(cond, positive)
        if not facts:
            return self
        new = self.child()
        new.non_null = new.non_null | facts
        return new


def _root_name(text: str) -> str:
    return text.split(".")[0].split("[")[0]


_FIXED_AT_LOAD = ("a constant", "a default", "an initial value")
"""Where an expression is evaluated once, when the contract is loaded: no clock there."""


def _non_null_facts(cond: ir.Expr, positive: bool) -> frozenset[str]:

    if isinstance(cond, ir.Unary) and cond.op == "not":
        return _non_null_facts(cond.operand, not positive)
    if isinstance(cond, ir.Binary):
        if cond.op in ("!=", "==") and (cond.op == "!=") == positive:
            for a, b in ((cond.left, cond.right), (cond.right, cond.left)):
                if (
                    isinstance(b, ir.ScalarLit)
                    and b.value is None
                    and isinstance(a, (ir.Name, ir.Attr))
                ):
                    return frozenset({expr_text(a)})
        if (cond.op == "and" and positive) or (cond.op == "or" and not positive):
            return _non_null_facts(cond.left, positive) | _non_null_facts(cond.right, positive)
    return frozenset()


class Checker(NodeVisitor):
    def __init__(self, contract: ir.Contract) -> None:
        self.c = contract
        self.diags: list[Diagnostic] = []
        self.types: dict[str, T.Ty] = {}
        self.type_decls = {t.name: t for t in contract.types}
        self._resolving: set[str] = set()
        self.state: dict[str, Symbol] = {}
        self.consts: dict[str, Symbol] = {}
        self.predicates = {p.name: p for p in contract.predicates}
        self.functions = {f.name: f for f in contract.functions}
        # everything a call can name that the contract declares with a body
        self.callables: dict[str, ir.PredicateDecl | ir.FunctionDecl] = {
            **self.predicates,
            **self.functions,
        }
        self._clock_readers: dict[str, bool] = {}
        self.tools = {t.name: t for t in contract.tools}
        self.events = {e.name: e for e in contract.events}
        self.pred_types: dict[str, T.Ty] = {}
        self.back_end: Any = None  # the compiler's value checks (check.BackEndChecks), if given
        self.validators: Any = None  # one ValidatorBuilder per check, made on first use
        # every `{}` met, by node identity: what its context made of it (see resolve_empty)
        self.empty_literals: dict[int, tuple[ir.Collection, T.EmptyLiteral]] = {}
        # resolve_quiet's answers, by node identity (see there)
        self._quiet_types: dict[int, tuple[ir.TypeExpr, T.Ty]] = {}
        self._expr_facts: ExprFacts | None = None

    def expr_facts(self) -> ExprFacts:
        """The names every expression uses and the roots that bind names (one walk over the
        contract, made on first use and shared by the lints; see :class:`.walk.ExprFacts`)."""
        if self._expr_facts is None:
            self._expr_facts = ExprFacts(self.c)
        return self._expr_facts

    def empty_literal(self, e: ir.Collection) -> T.EmptyLiteral:
        """The record of what the ``{}`` at ``e`` is, shared by every look at the node."""
        found = self.empty_literals.get(id(e))
        if found is None:
            found = self.empty_literals[id(e)] = (e, T.EmptyLiteral())
        return found[1]

    def err(self, code: str, msg: str, span: Span, hint: str | None = None) -> None:
        self.diags.append(error(code, msg, span, hint))

    def warn(self, code: str, msg: str, span: Span, hint: str | None = None) -> None:
        self.diags.append(warning(code, msg, span, hint))

    # ------------------------------------------------------------------ types
    def resolve(self, t: ir.TypeExpr, name: str = "") -> T.Ty:
        if isinstance(t, ir.NamedType):
            prim = T.resolve_simple(t.name)
            if prim is not None:
                return prim
            if t.name in self.type_decls:
                return self.named(t.name)
            if t.name in T.GENERIC_ARITY or t.name == "tuple":
                self.err(
                    "E0308",
                    f"`{t.name}` needs type arguments",
                    t.span,
                    hint=f"write {t.name}[…]" if t.name != "map" else "write map[K, V]",
                )
                return T.ANY
            self.err(
                "E0202",
                f"unknown type `{t.name}`",
                t.span,
                hint=suggestion_hint(
                    t.name, [*self.type_decls, *T.PRIMITIVE_NAMES, "list", "set", "map"], "type"
                ),
            )
            return T.ANY
        if isinstance(t, ir.GenericType):
            args = [self.resolve(a) for a in t.args]
            if t.name == "tuple":
                return T.TupleT(tuple(args))
            arity = T.GENERIC_ARITY.get(t.name)
            if arity is None:
                self.err(
                    "E0308",
                    f"`{t.name}` takes no type arguments",
                    t.span,
                    hint="the generic types are list[T], set[T], map[K, V] and tuple[A, B, …]",
                )
                return T.ANY
            if len(args) != arity:
                self.err(
                    "E0308",
                    f"`{t.name}` takes {arity} type argument{'s' if arity > 1 else ''}, "
                    f"got {len(args)}",
                    t.span,
                    hint="write map[K, V]" if t.name == "map" else f"write {t.name}[T]",
                )
                return T.ANY
            if t.name == "list":
                return T.ListT(args[0])
            if t.name == "set":
                return T.SetT(args[0])
            return T.MapT(args[0], args[1])
        if isinstance(t, ir.EnumType):
            self.once([(m.value, m.span) for m in t.members], "E0406", "enum member {} is listed")
            if not t.members:
                self.err("E0405", "an enum needs at least one member", t.span)
            return T.EnumT(
                name or "enum {" + ", ".join(m.value for m in t.members) + "}",
                tuple(m.value for m in t.members),
            )
        if isinstance(t, ir.NullType):
            return T.NULL
        if isinstance(t, ir.RecordType):
            self.once([(f.name, f.span) for f in t.fields], "E0412", "field {} is declared")
            for f in t.fields:
                if f.name in T.JSON_MARK_FIELDS:
                    self.err(
                        "E0203",
                        f'`"{f.name}"` is a reserved field name: reports and state files use '
                        "it to mark a value JSON cannot write plainly",
                        f.span,
                        hint='rename the field (`"$open"`, `"$unknown"` and `"$entries"` are '
                        "reserved)",
                    )
            fields = [
                (f.name, T.FieldT(self.resolve(f.type), f.optional, f.default is not None))
                for f in t.fields
            ]
            return T.RecordT(name or "record", tuple(fields), t.open)
        if isinstance(t, ir.TaggedUnionType):
            self.once([(v.tag, v.span) for v in t.variants], "E0412", "variant {} is declared")
            variants: list[tuple[str, T.Ty]] = []
            for v in t.variants:
                vt = self.resolve(v.type)
                if not isinstance(vt, (T.RecordT, T.Prim)) or (
                    isinstance(vt, T.Prim) and vt != T.ANY
                ):
                    self.err(
                        "E0301",
                        f"variant `{v.tag}` must be a record type, not {vt.show()}",
                        v.type.span,
                        hint="a tagged union picks a record by its tag field",
                    )
                variants.append((v.tag, vt))
            return T.TaggedT(name or "union", t.tag_field, tuple(variants))
        options = tuple(self.resolve(o) for o in t.options)
        return T.UnionT(options, name)

    def once(self, names: list[tuple[str, Span]], code: str, what: str) -> None:
        """Report every name after its first occurrence: ``what`` reads e.g. "field {} is
        declared" and gets " twice"."""
        seen: set[str] = set()
        for name, span in names:
            if name in seen:
                self.err(code, what.format(f"`{name}`") + " twice", span)
            seen.add(name)

    def named(self, name: str) -> T.Ty:
        if name in self.types:
            return self.types[name]
        if name in self._resolving:
            return T.ANY  # a recursive type: its inner uses are not checked structurally
        self._resolving.add(name)
        ty = self.resolve(self.type_decls[name].type, name)
        self._resolving.discard(name)
        self.types[name] = ty
        return ty

    def check_constraints(self, t: ir.TypeExpr) -> None:
        """Constraints must fit their type and each other; patterns must compile in linear time."""
        if not t.constraints:  # most types: only those inside may have constraints
            for sub in _child_types(t):
                self.check_constraints(sub)
            return
        base = self.resolve_quiet(t)
        bounds: dict[str, float] = {}
        for c in t.constraints:
            if c.key == "pattern" or c.key == "format":
                if not T.is_stringy(base):
                    self.err(
                        "E0407",
                        f"`{c.key}` applies to strings, not to {base.show()}",
                        c.span,
                    )
                elif not isinstance(c.value, str):
                    self.err("E0407", f"`{c.key}` takes a string", c.span)
                elif c.key == "pattern":
                    from .patterns import pattern_problem

                    problem = pattern_problem(c.value)
                    if problem is not None:
                        code, message = problem
                        self.err(
                            code,
                            message,
                            c.span,
                            hint='write patterns as raw strings r"…"; backreferences and '
                            "look-around are not allowed (matching must take linear time)",
                        )
                elif c.value not in FORMATS:
                    self.err(
                        "E0408",
                        f"unknown format `{c.value}`",
                        c.span,
                        hint=suggestion_hint(str(c.value), FORMATS, "format"),
                    )
                continue
            if not isinstance(c.value, (int, float)) or isinstance(c.value, bool):
                self.err("E0407", f"`{c.key}` takes a number", c.span)
                continue
            if c.key in ("min", "max"):
                if not T.is_numeric(base):
                    self.err(
                        "E0407",
                        f"`{c.key}` applies to numbers, not to {base.show()}",
                        c.span,
                        hint="use min_length/max_length for strings, min_items/max_items for "
                        "collections",
                    )
            elif c.key in ("min_length", "max_length"):
                if not T.is_stringy(base):
                    self.err(
                        "E0407",
                        f"`{c.key}` applies to strings, not to {base.show()}",
                        c.span,
                        hint="use min_items/max_items for collections",
                    )
            elif not isinstance(base, (T.ListT, T.SetT, T.MapT)) and base != T.ANY:
                self.err(
                    "E0407",
                    f"`{c.key}` applies to collections, not to {base.show()}",
                    c.span,
                    hint="use min_length/max_length for strings",
                )
            if c.key.endswith(("length", "items")) and c.value < 0:
                self.err("E0401", f"`{c.key}` cannot be negative", c.span)
            bounds[c.key] = float(c.value)
        for lo, hi in (("min", "max"), ("min_length", "max_length"), ("min_items", "max_items")):
            if lo in bounds and hi in bounds and bounds[lo] > bounds[hi]:
                span = next(c.span for c in t.constraints if c.key == hi)
                self.err(
                    "E0401",
                    f"{lo} ({_num(bounds[lo])}) is greater than {hi} ({_num(bounds[hi])})",
                    span,
                    hint="no value can satisfy both; swap them or fix one",
                )
        for sub in _child_types(t):
            self.check_constraints(sub)

    def resolve_quiet(self, t: ir.TypeExpr) -> T.Ty:
        """``resolve(t)`` without its diagnostics. A parameter's type is asked for at each use;
        the answer is kept by node identity, since it depends only on ``t`` and on the named
        types, each fixed once resolved -- except while a recursive type is being resolved (its
        inner uses see ``any`` then), so nothing is kept or read during that."""
        if not self._resolving:
            found = self._quiet_types.get(id(t))
            if found is not None and found[0] is t:
                return found[1]
        saved = len(self.diags)
        ty = self.resolve(t)
        del self.diags[saved:]
        if not self._resolving:
            self._quiet_types[id(t)] = (t, ty)
        return ty

    # ------------------------------------------------------------------ expressions
    def expr(self, e: ir.Expr, scope: Scope) -> T.Ty:
        # NodeVisitor.visit inlined: this runs once per expression checked
        method = self._methods.get(e.__class__)
        if method is None:
            return self.visit(e, scope)  # type: ignore[no-any-return]
        return method(self, e, scope)  # type: ignore[no-any-return]

    def generic_visit(self, node: ir.Node, *args: Any) -> Any:
        raise TypeError(f"the type checker has no rule for {type(node).__name__}")

    def visit_ScalarLit(self, e: ir.ScalarLit, scope: Scope) -> T.Ty:
        v = e.value
        if v is None:
            return T.NULL
        if isinstance(v, bool):
            return T.BOOL
        if isinstance(v, int):
            return T.INT
        if isinstance(v, float):
            return T.FLOAT
        return T.STR

    def visit_Name(self, e: ir.Name, scope: Scope) -> T.Ty:
        if not (scope.facts or scope.non_null or e.state):  # most names: a symbol in scope
            sym = scope.names.get(e.name)
            if sym is not None:
                return sym.type
            return self.name_type(e, scope)
        key = f"state.{e.name}" if e.state else e.name
        ty = scope.facts.get(key) if scope.facts else None
        if ty is None:
            ty = self.name_type(e, scope)
        return T.strip_null(ty) if scope.non_null and key in scope.non_null else ty

    def visit_Attr(self, e: ir.Attr, scope: Scope) -> T.Ty:
        if scope.non_null or scope.facts:
            text = expr_text(e)
            ty = scope.facts.get(text)
            if ty is None:
                ty = self.attr_type(e, scope)
            return T.strip_null(ty) if text in scope.non_null else ty
        return self.attr_type(e, scope)

    def visit_Index(self, e: ir.Index, scope: Scope) -> T.Ty:
        obj = T.strip_null(self.expr(e.obj, scope))
        key = self.expr(e.key, scope)
        if isinstance(obj, T.MapT):
            self.expect(key, obj.key, e.key.span, "a key")
            return obj.value
        if isinstance(obj, T.ListT):
            self.expect(key, T.INT, e.key.span, "a list index")
            return obj.elem
        if isinstance(obj, T.TupleT):
            if isinstance(e.key, ir.ScalarLit) and isinstance(e.key.value, int):
                if 0 <= e.key.value < len(obj.items):
                    return obj.items[e.key.value]
                self.err("E0301", f"tuple index {e.key.value} is out of range", e.key.span)
                return T.ANY
            self.err("E0301", "a tuple is indexed by a literal number", e.key.span)
            return T.ANY
        if obj == T.STR:
            self.expect(key, T.INT, e.key.span, "a string index")
            return T.STR
        if isinstance(obj, T.RecordT):
            return self.record_index(e, obj)
        if obj != T.ANY:
            self.err(
                "E0306",
                f"{obj.show()} cannot be indexed",
                e.span,
                hint=_narrow_hint(e.obj, obj) or "only maps, lists, tuples and strings take `[…]`",
            )
        return T.ANY

    def visit_Call(self, e: ir.Call, scope: Scope) -> T.Ty:
        return self.call_type(e, scope)

    def visit_Quantifier(self, e: ir.Quantifier, scope: Scope) -> T.Ty:
        if e.unpack or e.cond is not None or e.op in ("first", "last"):
            return self.binding_quantifier(e, scope)
        coll = self.expr(e.coll, scope)
        elem = T.elem_type(T.strip_null(coll))
        if elem is None:
            self.err(
                "E0306",
                f"`{e.op}` needs a collection to range over, got {coll.show()}",
                e.coll.span,
            )
            elem = T.ANY
        inner = scope.child(**{e.var: Symbol(elem, "local", e.span)})
        body = self.expr(e.body, inner)
        if e.op == "sum":
            if not T.is_arithmetic(body):
                self.err("E0301", f"`sum` adds numbers, got {body.show()}", e.body.span)
            return body if T.is_numeric(body) else T.INT
        self.expect(body, T.BOOL, e.body.span, f"the condition of `{e.op}`")
        return T.INT if e.op == "count" else T.BOOL

    # ------------------------------------------------------ comprehensions, conditionals
    def bind(self, e: ir.Quantifier | ir.Comprehension, scope: Scope, what: str) -> Scope:
        """The scope inside ``for var in coll if cond``: the item's name(s), narrowed by the
        filter (``[x.a for x in xs if x != null]``)."""
        coll = self.expr(e.coll, scope)
        elem = T.elem_type(T.strip_null(coll))
        if elem is None:
            self.err(
                "E0306",
                f"{what} needs a collection to range over, got {coll.show()}",
                e.coll.span,
            )
            elem = T.ANY
        names: dict[str, Symbol] = {e.var: Symbol(elem, "local", e.span)}
        if e.unpack:
            n = len(e.unpack)
            parts: tuple[T.Ty, ...] = (T.ANY,) * n
            if isinstance(elem, T.TupleT) and len(elem.items) == n:
                parts = elem.items
            elif elem != T.ANY:
                if isinstance(elem, T.TupleT):
                    hint = f"the items have {len(elem.items)} parts: name each of them"
                elif isinstance(T.strip_null(coll), T.MapT):
                    hint = "a map gives its keys: bind one name and read the value, m[k]"
                else:
                    hint = "unpack pairs such as those of enumerate(xs), which gives (index, item)"
                self.err(
                    "E0320",
                    f"`for {e.var} in …` unpacks every item into {n} names, but the items "
                    f"are {elem.show()}",
                    e.coll.span,
                    hint=hint,
                )
            names = {n_: Symbol(t, "local", e.span) for n_, t in zip(e.unpack, parts)}
        inner = scope.child(**names)
        if e.cond is not None:
            cond = self.expr(e.cond, inner)
            self.expect(cond, T.BOOL, e.cond.span, "the condition after `if`")
            inner = self.narrowed(inner, e.cond)
        return inner

    def binding_quantifier(self, e: ir.Quantifier, scope: Scope) -> T.Ty:
        inner = self.bind(e, scope, f"`{e.op}`")
        body = self.expr(e.body, inner)
        if e.op in ("first", "last"):
            return body if T.nullable(body) else T.UnionT((body, T.NULL))
        if e.op == "sum":
            if not T.is_numeric(body):
                self.err("E0301", f"`sum` adds numbers, got {body.show()}", e.body.span)
            return body if T.is_numeric(body) else T.INT
        self.expect(body, T.BOOL, e.body.span, f"the condition of `{e.op}`")
        return T.INT if e.op == "count" else T.BOOL

    def visit_Comprehension(self, e: ir.Comprehension, scope: Scope) -> T.Ty:
        inner = self.bind(e, scope, f"a {e.type} comprehension")
        body = self.expr(e.body, inner)
        if e.key is not None:
            return T.MapT(self.expr(e.key, inner), body)
        return T.ListT(body) if e.type == "list" else T.SetT(body)

    def visit_Conditional(self, e: ir.Conditional, scope: Scope) -> T.Ty:
        cond = self.expr(e.cond, scope)
        self.expect(cond, T.BOOL, e.cond.span, "the condition of `… if … else …`")
        then = self.expr(e.then, self.narrowed(scope, e.cond, positive=True))
        orelse = self.expr(e.orelse, self.narrowed(scope, e.cond, positive=False))
        return T.join(then, orelse)

    def visit_Unary(self, e: ir.Unary, scope: Scope) -> T.Ty:
        operand = self.expr(e.operand, scope)
        if e.op == "not":
            self.expect(operand, T.BOOL, e.operand.span, "the operand of `not`")
            return T.BOOL
        if not T.is_arithmetic(operand):
            self.err(
                "E0301",
                f"`-` needs a number, got {operand.show()}",
                e.operand.span,
                hint=_narrow_hint(e.operand, operand),
            )
            return T.ANY
        return T.INT if operand == T.BOOL else operand

    # ---- lang-types: type tests and the narrowing they give
    def visit_TypeTest(self, e: ir.TypeTest, scope: Scope) -> T.Ty:
        operand = self.expr(e.operand, scope)
        tested = self.tested_type(e.type)
        if operand in (T.ANY, T.DYN) or tested == T.ANY:
            return T.BOOL

        text = expr_text(e)
        what = f"`{expr_text(e.operand)}`" if len(text) <= 60 else "the value"
        test = f"`{text}`" if len(text) <= 60 else "the type test"
        if not T.overlaps(operand, tested):
            self.warn(
                "W0630",
                f"{test} is always {'true' if e.negated else 'false'}: {what} is {operand.show()}",
                e.span,
                hint="a type test is for values whose type may vary (`any`, unions); "
                "remove it or fix the type",
            )
        elif T.within(operand, tested) and not e.type.constraints:
            self.warn(
                "W0631",
                f"{test} is always {'false' if e.negated else 'true'}: {what} is {operand.show()}",
                e.span,
                hint="the declared type already says so; remove the test",
            )
        return T.BOOL

    def tested_type(self, t: ir.TypeExpr) -> T.Ty:
        """The type in ``x is T``: any type, and also ``list``, ``set`` and ``map`` alone."""
        if isinstance(t, ir.NamedType) and t.name in T.BARE_GENERICS:
            if t.constraints:
                self.check_constraints(t)
            return T.BARE_GENERICS[t.name]
        ty = self.resolve(t)
        self.check_constraints(t)
        return ty

    def narrowed(self, scope: Scope, cond: ir.Expr, positive: bool = True) -> Scope:
        """The scope where ``cond`` is ``positive``: ``x != null`` and type tests narrow the
        type of ``x`` (a name or a field path); ``and`` (``or`` when negative) collects both
        sides, ``not`` flips."""
        # what the two below find in any other expression: nothing
        cls = cond.__class__
        if cls is ir.Binary:
            if cond.op not in _NARROWING:  # type: ignore[union-attr]
                return scope
        elif cls is not ir.Unary and cls is not ir.TypeTest:
            return scope
        new = scope.narrowed(cond, positive)
        facts = self._type_facts(cond, positive, scope)
        if not facts:
            return new
        if new is scope:
            new = scope.child()
        new.facts = {**new.facts, **facts}
        return new

    def _type_facts(self, cond: ir.Expr, positive: bool, scope: Scope) -> dict[str, T.Ty]:

        if isinstance(cond, ir.Unary) and cond.op == "not":
            return self._type_facts(cond.operand, not positive, scope)
        if isinstance(cond, ir.Binary) and (
            (cond.op == "and" and positive) or (cond.op == "or" and not positive)
        ):
            left = self._type_facts(cond.left, positive, scope)
            inner = scope
            if left:
                inner = scope.child()
                inner.facts = {**scope.facts, **left}
            return {**left, **self._type_facts(cond.right, positive, inner)}
        if isinstance(cond, ir.Binary) and (
            (cond.op == "or" and positive) or (cond.op == "and" and not positive)
        ):
            # either side holds: what both sides say of the same expression, joined
            # (`x is int or x is bool` makes x an `int | bool`)
            left = self._type_facts(cond.left, positive, scope)
            if not left:
                return {}
            right = self._type_facts(cond.right, positive, scope)
            return {k: T.join(left[k], right[k]) for k in left.keys() & right.keys()}
        if isinstance(cond, ir.TypeTest) and isinstance(cond.operand, (ir.Name, ir.Attr)):
            saved = len(self.diags)
            current = self.expr(cond.operand, scope)
            tested = self.tested_type(cond.type)
            del self.diags[saved:]
            holds = positive != cond.negated
            return {expr_text(cond.operand): T.narrow(current, tested, holds)}
        return {}

    def visit_Binary(self, e: ir.Binary, scope: Scope) -> T.Ty:
        return self.binary_type(e, scope)

    # ------------------------------------------------------------ bounded unknowns (issue 16)
    def visit_UnknownIn(self, e: ir.UnknownIn, scope: Scope) -> T.Ty:
        """``unknown in [lo, hi]``: both bounds numbers (E0301), ``lo <= hi`` when both are
        written as numbers (E0417); an ``int`` when both bounds are, else a ``float``."""
        bounds = [self.expr(b, scope) for b in (e.lo, e.hi)]
        for b, ty in zip((e.lo, e.hi), bounds):
            if not T.is_numeric(ty):
                self.err(
                    "E0301",
                    f"the bounds of `unknown in [lo, hi]` must be numbers, got {ty.show()}",
                    b.span,
                )
                return T.ANY
        lo, hi = _number_literal(e.lo), _number_literal(e.hi)
        if lo is not None and hi is not None and lo > hi:
            self.err(
                "E0417",
                f"`unknown in [{lo}, {hi}]` is an empty range: the lower bound {lo} is "
                f"greater than the upper bound {hi}",
                e.span,
                hint=f"write the smaller bound first: `unknown in [{hi}, {lo}]`",
            )
        if all(T.assignable(ty, T.INT) for ty in bounds):
            return T.INT
        return T.FLOAT

    def visit_Collection(self, e: ir.Collection, scope: Scope) -> T.Ty:
        # bulk data (100,000s of elements) is literals of literals: the plain scalar and
        # collection elements are typed here without the visitor's dispatch, as it would type them
        items: list[T.Ty] = []
        tuple_types: dict[tuple[type, ...], T.Ty] = {}  # s6-literal: see _scalar_tuple_type
        for i in e.items:
            if i.__class__ is ir.ScalarLit:
                ty = _SCALAR_TYPES.get(i.value.__class__)
                items.append(ty if ty is not None else self.visit_ScalarLit(i, scope))
            elif i.__class__ is ir.Collection:
                ty = _scalar_tuple_type(i, tuple_types)
                items.append(ty if ty is not None else self.visit_Collection(i, scope))
            else:
                items.append(self.expr(i, scope))
        if e.type == "tuple":
            return T.TupleT(tuple(items))
        if e.type == "empty":
            return T.EmptyT(self.empty_literal(e))
        joined: T.Ty = items[0] if items else T.ANY
        for it in items[1:]:
            if it is not joined:  # the same type (object) again joins to itself
                joined = T.join(joined, it)
        return T.ListT(joined) if e.type == "list" else T.SetT(joined)

    def visit_MapLit(self, e: ir.MapLit, scope: Scope) -> T.Ty:
        key_t: T.Ty | None = None
        val_t: T.Ty | None = None
        for entry in e.entries:
            kt = self.expr(entry.key, scope)
            vt = self.expr(entry.value, scope)
            key_t = kt if key_t is None else T.join(key_t, kt)
            val_t = vt if val_t is None else T.join(val_t, vt)
        return T.MapT(key_t or T.ANY, val_t or T.ANY)

    def expect(self, got: T.Ty, want: T.Ty, span: Span, what: str) -> None:
        if not T.assignable(got, want):
            self.err(
                "E0301",
                f"{what} must be {want.show()}, but this is {got.show()}",
                span,
                hint=_ANY_HINT if got == T.DYN else None,
            )

    def name_type(self, e: ir.Name, scope: Scope) -> T.Ty:
        if e.state:
            return self.state_ref_type(e, scope)
        sym = scope.names.get(e.name)
        if sym is not None:
            return sym.type
        if e.name in self.type_decls:
            return T.TypeRefT(e.name, self.named(e.name))
        if e.name == "result":
            self.err(
                "E0307",
                "`result` is not available here",
                e.span,
                hint="`result` is what the call returned: use it in effects and outcomes of a "
                "tool that declares `-> Type`",
            )
            return T.ANY
        if e.name in self.callables or e.name in BUILTINS:
            self.err("E0301", f"`{e.name}` is a function: call it as {e.name}(…)", e.span)
            return T.ANY
        self.err(
            "E0201",
            f"unknown name `{e.name}` in {scope.where}",
            e.span,
            hint=suggestion_hint(e.name, scope.names, "name"),
        )
        return T.ANY

    # ------------------------------------------------------------------ `state.NAME`
    def state_ref_type(self, e: ir.Name, scope: Scope) -> T.Ty:
        """``state.NAME``: the type of state variable NAME (E0201 with a did-you-mean when there
        is none; a hint to ``state["NAME"]`` when ``state`` is itself a name here)."""
        sym = self.state.get(e.name)
        if sym is not None:
            return sym.type
        guess = did_you_mean(e.name, self.state)
        hint = (
            f"did you mean `state.{guess}`?"
            if guess is not None
            else suggestion_hint(e.name, self.state, "state variable")
        )
        if "state" in scope.names and guess is None:
            hint = (
                f"`state.NAME` always names a state variable; to read field `{e.name}` of "
                f'`state` here, write `state["{e.name}"]`'
            )
        self.err("E0201", f"unknown state variable `state.{e.name}`", e.span, hint=hint)
        return T.ANY

    # ------------------------------------------------------------------ records by field name
    def record_field(
        self, rec: T.RecordT, name: str, span: Span, via_get: bool = False
    ) -> T.Ty | None:
        """The type of field ``name`` of ``rec`` (``T | null`` when optional without a default);
        None after E0209 when it has no such field (never for ``get`` on an open record)."""
        f = rec.field(name)
        if f is not None:
            return T.UnionT((f.type, T.NULL)) if f.optional and not f.has_default else f.type
        if via_get and rec.open:
            return None
        hint = suggestion_hint(name, [n for n, _ in rec.fields], "field")
        if rec.open and did_you_mean(name, [n for n, _ in rec.fields]) is None:
            hint = (
                f"`{rec.name}` is an open record: read a field it does not declare with "
                f'get(…, "{name}", default)'
            )
        self.err("E0209", f"record `{rec.name}` has no field `{name}`", span, hint=hint)
        return None

    def record_index(self, e: ir.Index, rec: T.RecordT) -> T.Ty:
        """``r["MA(5)"]``: a field by its (quoted) name, a literal string."""
        if not (isinstance(e.key, ir.ScalarLit) and isinstance(e.key.value, str)):
            self.err(
                "E0306",
                f"record `{rec.name}` is indexed by a literal field name",
                e.key.span,
                hint='write r["field"]; for a computed name use get(r, name, default)',
            )
            return T.ANY
        found = self.record_field(rec, e.key.value, e.key.span)
        return T.ANY if found is None else found

    def record_get(self, e: ir.Call, args: list[T.Ty]) -> T.Ty:
        """``get(r, "name", default)`` on a record: a declared field (joined with the default),
        or, on an open record, any field (of a type the contract cannot know)."""
        rec = args[0]
        assert isinstance(rec, T.RecordT)
        if len(args) > 1:
            self.expect(args[1], T.STR, e.args[1].span, "a field name")
        key = e.args[1] if len(e.args) > 1 else None
        if isinstance(key, ir.ScalarLit) and isinstance(key.value, str):
            found = self.record_field(rec, key.value, key.span, via_get=True)
            if found is not None:
                return T.join(found, args[2]) if len(args) > 2 else found
            if not rec.open:
                return T.ANY
        elif not rec.open:
            options = [f.type for _, f in rec.fields] + [T.NULL]
            ty = options[0]
            for other in options[1:]:
                ty = T.join(ty, other)
            return T.join(ty, args[2]) if len(args) > 2 else ty
        return T.ANY

    def attr_type(self, e: ir.Attr, scope: Scope) -> T.Ty:
        obj = self.expr(e.obj, scope)
        if isinstance(obj, T.TypeRefT):
            target = obj.target
            if isinstance(target, T.EnumT):
                if e.name not in target.members:
                    self.err(
                        "E0210",
                        f"`{e.name}` is not a member of enum `{obj.name}`",
                        e.name_span,
                        hint=suggestion_hint(e.name, target.members, "member"),
                    )
                return target
            self.err("E0301", f"`{obj.name}` is not an enum; it has no members", e.span)
            return T.ANY
        base = T.strip_null(obj)
        if isinstance(base, T.RecordT):
            field_type = self.record_field(base, e.name, e.name_span)
            return T.ANY if field_type is None else field_type
        if isinstance(base, T.TaggedT):
            if e.name == base.tag:
                return T.EnumT(base.name + "." + base.tag, tuple(t for t, _ in base.variants))
            found: list[T.Ty] = []
            for _, vt in base.variants:
                if isinstance(vt, T.RecordT) and vt.field(e.name) is not None:
                    ft = vt.field(e.name)
                    assert ft is not None
                    found.append(ft.type)
            if not found:
                self.err(
                    "E0209", f"no variant of `{base.name}` has a field `{e.name}`", e.name_span
                )
                return T.ANY
            ty = found[0]
            for other in found[1:]:
                ty = T.join(ty, other)
            return T.UnionT((ty, T.NULL))
        if base != T.ANY:
            self.err(
                "E0209",
                f"{obj.show()} has no fields (looked up `{e.name}`)",
                e.name_span,
                hint=_narrow_hint(e.obj, base)
                or "only records have fields; enum members are written Type.member",
            )
        return T.ANY

    def binary_type(self, e: ir.Binary, scope: Scope) -> T.Ty:
        left = self.expr(e.left, scope)
        right = T.ANY if e.op in ("and", "or") else self.expr(e.right, scope)
        op = e.op
        if op in ("and", "or"):
            right = self.expr(e.right, self.narrowed(scope, e.left, positive=op == "and"))
            self.expect(left, T.BOOL, e.left.span, f"the left side of `{op}`")
            self.expect(right, T.BOOL, e.right.span, f"the right side of `{op}`")
            return T.BOOL
        if op in ("==", "!="):
            self.enum_literal(left, e.right)
            self.enum_literal(right, e.left)
            if not T.comparable(left, right):
                self.err(
                    "E0301",
                    f"{left.show()} and {right.show()} can never be equal",
                    e.span,
                    hint="compare values of the same type",
                )
            return T.BOOL
        if op in ("<", "<=", ">", ">="):
            ok = (T.is_arithmetic(left) and T.is_arithmetic(right)) or (
                T.is_stringy(left) and T.is_stringy(right)
            )
            if not ok:
                self.err(
                    "E0301",
                    f"`{op}` compares numbers or strings, not {left.show()} and {right.show()}",
                    e.span,
                    hint=_narrow_hint(e, left, right),
                )
            return T.BOOL
        if op in ("in", "not in"):
            base = T.strip_null(right)
            if T.is_stringy(base):
                self.expect(left, T.STR, e.left.span, "the left side of a substring test")
                return T.BOOL
            elem = T.elem_type(base)
            if elem is None:
                self.err(
                    "E0306",
                    f"`{op}` needs a collection or a string on its right, got {right.show()}",
                    e.right.span,
                )
                return T.BOOL
            self.enum_literal(elem, e.left)
            if not T.comparable(left, elem):
                self.err(
                    "E0301",
                    f"{left.show()} can never be in a collection of {elem.show()}",
                    e.span,
                )
            return T.BOOL
        # arithmetic
        if op == "+":
            if T.is_arithmetic(left) and T.is_arithmetic(right):
                return _numeric_join([left, right])
            if T.is_stringy(left) and T.is_stringy(right):
                return T.STR
            if isinstance(left, T.ListT) and isinstance(right, (T.ListT, T.EmptyT)):
                T.join(left, right)  # a `{}` added to a list is an empty list
                return left
        elif op == "-":
            if T.is_arithmetic(left) and T.is_arithmetic(right):
                return _numeric_join([left, right])
            if isinstance(left, T.SetT) and isinstance(right, (T.SetT, T.EmptyT)):
                T.join(left, right)
                return left
        elif T.is_arithmetic(left) and T.is_arithmetic(right):
            if op == "/":
                return T.FLOAT
            return _numeric_join([left, right])
        if T.ANY in (left, right):
            return T.ANY
        self.err(
            "E0301",
            f"`{op}` cannot combine {left.show()} and {right.show()}",
            e.span,
            hint=_narrow_hint(e, left, right)
            or "+ adds numbers, joins strings and lists; - subtracts numbers and sets",
        )
        return T.ANY

    def enum_literal(self, ty: T.Ty, other: ir.Expr) -> None:
        """A string literal compared with an enum must be one of its members."""
        if (
            isinstance(ty, T.EnumT)
            and isinstance(other, ir.ScalarLit)
            and isinstance(other.value, str)
            and other.value not in ty.members
        ):
            self.err(
                "E0210",
                f'"{other.value}" is not a member of enum `{ty.show()}`',
                other.span,
                hint=suggestion_hint(other.value, ty.members, "member"),
            )

    def call_type(self, e: ir.Call, scope: Scope) -> T.Ty:
        args = [self.expr(a, scope) for a in e.args]
        if e.func in self.type_decls:
            return self.construct(e, scope)
        if e.func in self.callables:
            return self.declared_call_type(e, args, scope)
        builtin = BUILTINS.get(e.func)
        if builtin is None:
            self.err(
                "E0208",
                f"unknown function `{e.func}`",
                e.func_span,
                hint=suggestion_hint(e.func, [*BUILTINS, *self.callables], "function"),
            )
            return T.ANY
        if e.kwargs:
            self.err("E0305", f"`{e.func}` takes no keyword arguments", e.kwargs[0].span)
        if not builtin.min_args <= len(args) <= builtin.max_args:
            count = (
                str(builtin.min_args)
                if builtin.min_args == builtin.max_args
                else f"{builtin.min_args} to {builtin.max_args}"
            )
            self.err(
                "E0305",
                f"`{e.func}` takes {count} argument{'s' if builtin.max_args != 1 else ''}, "
                f"got {len(args)}",
                e.span,
                hint=f"{e.func}: {builtin.doc}",
            )
            return builtin.result(args)
        if e.func == "old" and not scope.allow_old:
            self.err(
                "E0304",
                "`old(…)` is only allowed in `ensure` clauses",
                e.func_span,
                hint="old(x) is the value of x before the call; preconditions already see it",
            )
        if e.func in ("today", "now") and scope.where in _FIXED_AT_LOAD:
            self.err(
                "E0304",
                f"`{e.func}()` is not allowed in {scope.where}",
                e.func_span,
                hint="the time is known only when a call is made, and "
                f"{scope.where} is computed once, when the contract is loaded; "
                f"use {e.func}() in a condition or set a state variable from it in an effect",
            )
        if e.func == "fresh" and not scope.allow_fresh:
            self.err(
                "E0304",
                "`fresh(…)` is only allowed in effects",
                e.func_span,
                hint="a fresh id is made when the call changes state",
            )
        if e.func == "get" and args and isinstance(args[0], T.RecordT):
            return self.record_get(e, args)
        for kind, ty, a_expr in zip(builtin.arg_kinds, args, e.args):
            self.builtin_arg(e.func, kind, ty, a_expr)
        if e.func == "count":
            self.count_args(args, e.args)
        return builtin.result(args)

    def count_args(self, args: list[T.Ty], exprs: tuple[ir.Expr, ...]) -> None:
        """``count(s, sub)`` counts substrings of a string, ``count(xs, x)`` items of a list."""
        base = T.strip_null(args[0])
        if T.is_stringy(base):
            self.expect(args[1], T.STR, exprs[1].span, "what `count` looks for in a string")
        elif isinstance(base, T.ListT) and not T.comparable(args[1], base.elem):
            self.err(
                "E0301",
                f"{args[1].show()} can never be an item of a list of {base.elem.show()}",
                exprs[1].span,
            )

    def date_format(self, a: ir.Expr) -> None:
        """The format of ``parse_date``: a literal string of supported directives (E0321)."""
        from .builtins import DATE_DIRECTIVES

        if not (isinstance(a, ir.ScalarLit) and isinstance(a.value, str)):
            self.err(
                "E0321",
                "the format of `parse_date` must be a literal string",
                a.span,
                hint='write it in the contract, e.g. parse_date(s, "%Y-%m-%d")',
            )
            return
        text = a.value
        i = 0
        while i < len(text):
            if text[i] == "%":
                directive = text[i + 1 : i + 2]
                if directive == "" or directive not in DATE_DIRECTIVES:
                    shown = f"%{directive}" if directive else "a lone `%` at the end"
                    self.err(
                        "E0321",
                        f"`parse_date` does not support {shown} in its format",
                        a.span,
                        hint="the directives are %Y %m %d %H %M %S %y %b %B %j, and %% for a "
                        "literal %",
                    )
                    return
                i += 2
            else:
                i += 1

    def declared_call_type(self, e: ir.Call, args: list[T.Ty], scope: Scope) -> T.Ty:
        """A call of a predicate (bool) or a function (its declared return type)."""
        decl = self.callables[e.func]
        what = "functions" if isinstance(decl, ir.FunctionDecl) else "predicates"
        if e.kwargs:
            self.err("E0305", f"{what} take positional arguments", e.kwargs[0].span)
        if len(args) != len(decl.params):
            self.err(
                "E0305",
                f"`{e.func}` takes {len(decl.params)} argument"
                f"{'s' if len(decl.params) != 1 else ''}, got {len(args)}",
                e.span,
                hint=f"{e.func}(" + ", ".join(p.name for p in decl.params) + ")",
            )
        for arg, a_expr, p in zip(args, e.args, decl.params):
            want = self.resolve_quiet(p.type)
            self.enum_literal(want, a_expr)
            self.expect(arg, want, a_expr.span, f"argument `{p.name}` of `{e.func}`")
        if scope.where in _FIXED_AT_LOAD and self.reads_clock(e.func):
            self.err(
                "E0304",
                f"`{e.func}` reads the clock (today() or now()): it is not allowed in "
                f"{scope.where}",
                e.func_span,
                hint="the time is known only when a call is made, and "
                f"{scope.where} is computed once, when the contract is loaded; "
                f"call {e.func}(…) in a condition or an effect",
            )
        if isinstance(decl, ir.FunctionDecl):
            return self.resolve_quiet(decl.returns)
        return T.BOOL

    def reads_clock(self, name: str) -> bool:
        """Whether the predicate or function ``name`` calls today() or now(), itself or through
        the predicates and functions it calls."""
        known = self._clock_readers.get(name)
        if known is not None:
            return known
        self._clock_readers[name] = False  # a recursive call (E0309) adds nothing
        found = False
        for sub in walk_expr(self.callables[name].body):
            if isinstance(sub, ir.Call) and (
                sub.func in ("today", "now")
                or (sub.func in self.callables and self.reads_clock(sub.func))
            ):
                found = True
                break
        self._clock_readers[name] = found
        return found

    def builtin_arg(self, func: str, kind: str, ty: T.Ty, a: ir.Expr) -> None:
        base = T.strip_null(ty)
        # only the test ``kind`` names is computed (each is a pure function of ``base``)
        ok = _ARG_KIND_TESTS[kind](base, a)
        if kind == "date_format":
            self.date_format(a)
            return
        if ok and kind == "pattern":
            from .patterns import pattern_problem

            assert isinstance(a, ir.ScalarLit) and isinstance(a.value, str)
            problem = pattern_problem(a.value)
            if problem is not None:
                self.err(problem[0], problem[1], a.span, hint='write patterns as raw strings r"…"')
            return
        if not ok:
            want = {
                "str": "a string",
                "num": "a number",
                "sized": "a string or a collection",
                "coll": "a list or a set",
                "set": "a set",
                "map": "a map",
                "pattern": 'a literal pattern r"…"',
                "seq": "a string or a list",
                "iterable": "a list, a set, a map or a string",
            }[kind]
            self.err(
                "E0301", f"`{func}` needs {want}, got {ty.show()}", a.span, _narrow_hint(a, ty)
            )

    def construct(self, e: ir.Call, scope: Scope) -> T.Ty:
        ty = self.named(e.func)
        if not isinstance(ty, T.RecordT):
            self.err("E0301", f"`{e.func}` is not a record type; it cannot be constructed", e.span)
            return T.ANY
        if e.args:
            self.err(
                "E0305",
                f"record `{e.func}` is built with named fields",
                e.args[0].span,
                hint=f"{e.func}(" + ", ".join(f"{n}=…" for n, _ in ty.fields) + ")",
            )
        given: set[str] = set()
        for kw in e.kwargs:
            f = ty.field(kw.name)
            vt = self.expr(kw.value, scope)
            if f is None:
                self.err(
                    "E0209",
                    f"record `{e.func}` has no field `{kw.name}`",
                    kw.span,
                    hint=suggestion_hint(kw.name, [n for n, _ in ty.fields], "field"),
                )
                continue
            if kw.name in given:
                self.err("E0412", f"field `{kw.name}` is given twice", kw.span)
            given.add(kw.name)
            self.enum_literal(f.type, kw.value)
            self.expect(vt, f.type, kw.value.span, f"field `{kw.name}`")
        missing = [
            n for n, f in ty.fields if n not in given and not f.optional and not f.has_default
        ]
        if missing:
            self.err(
                "E0305",
                f"record `{e.func}` needs field{'s' if len(missing) > 1 else ''} "
                + ", ".join(f"`{m}`" for m in missing),
                e.span,
            )
        return ty

    # ------------------------------------------------------------------ statements
    def stmts(self, body: Iterable[ir.Stmt], scope: Scope, reports: dict[str, T.Ty]) -> None:
        scope = scope.child()
        for s in body:
            self.stmt(s, scope, reports)

    def stmt(self, s: ir.Stmt, scope: Scope, reports: dict[str, T.Ty]) -> None:
        self.visit(s, scope, reports)

    def visit_Assign(self, s: ir.Assign, scope: Scope, reports: dict[str, T.Ty]) -> None:
        target = self.lvalue(s.target, scope)
        value = self.expr(s.value, scope)
        if s.op == "=":
            self.enum_literal(target, s.value)
            if not T.assignable(value, target):
                self.err(
                    "E0301",
                    f"cannot assign {value.show()} to `{_lv_text(s.target)}` "
                    f"of type {target.show()}",
                    s.value.span,
                    hint=_ANY_HINT if value == T.DYN else None,
                )
        elif not (T.is_numeric(target) and T.is_arithmetic(value)) and not (
            s.op == "+=" and T.is_stringy(target) and T.is_stringy(value)
        ):
            self.err(
                "E0301",
                f"`{s.op}` needs numbers, got {target.show()} and {value.show()}",
                s.span,
            )

    def visit_MethodCall(self, s: ir.MethodCall, scope: Scope, reports: dict[str, T.Ty]) -> None:
        target = T.strip_null(self.lvalue(s.target, scope))
        args = [self.expr(a, scope) for a in s.args]
        kind = (
            "set"
            if isinstance(target, T.SetT)
            else "map"
            if isinstance(target, T.MapT)
            else "list"
            if isinstance(target, T.ListT)
            else None
        )
        if kind is None:
            if target != T.ANY:
                self.err(
                    "E0310",
                    f"`{_lv_text(s.target)}` is {target.show()}, which has no method `{s.method}`",
                    s.method_span,
                    hint="collection updates work on sets, maps and lists",
                )
            return
        methods = COLLECTION_METHODS[kind]
        if s.method not in methods:
            self.err(
                "E0310",
                f"a {kind} has no method `{s.method}`",
                s.method_span,
                hint=suggestion_hint(s.method, methods, "method")
                or f"{kind} methods: " + ", ".join(methods),
            )
            return
        if len(args) != methods[s.method]:
            self.err(
                "E0305",
                f"`{s.method}` takes {methods[s.method]} argument(s), got {len(args)}",
                s.span,
            )
            return
        if s.method in ("remove_at", "insert"):
            # the position first; `insert` then takes the item
            self.expect(args[0], T.INT, s.args[0].span, f"the position given to `{s.method}`")
            args, arg_exprs = args[1:], s.args[1:]
        else:
            arg_exprs = s.args
        if args:
            want = (
                target.key
                if isinstance(target, T.MapT)
                else target.elem
                if isinstance(target, (T.SetT, T.ListT))
                else T.ANY
            )
            self.enum_literal(want, arg_exprs[0])
            self.expect(args[0], want, arg_exprs[0].span, f"the argument of `{s.method}`")

    def visit_If(self, s: ir.If, scope: Scope, reports: dict[str, T.Ty]) -> None:
        self.expect(self.expr(s.cond, scope), T.BOOL, s.cond.span, "an `if` condition")
        self.stmts(s.then, self.narrowed(scope, s.cond), reports)
        self.stmts(s.orelse, self.narrowed(scope, s.cond, positive=False), reports)

    def visit_For(self, s: ir.For, scope: Scope, reports: dict[str, T.Ty]) -> None:
        coll = self.expr(s.coll, scope)
        elem = T.elem_type(T.strip_null(coll))
        if elem is None:
            self.err("E0306", f"cannot loop over {coll.show()}", s.coll.span)
            elem = T.ANY
        inner = scope.child(**{s.var: Symbol(elem, "loop", s.span)})
        inner.in_loop = True
        self.stmts(s.body, inner, reports)

    def visit_Let(self, s: ir.Let, scope: Scope, reports: dict[str, T.Ty]) -> None:
        scope.names[s.name] = Symbol(self.expr(s.value, scope), "local", s.span)

    # ---------------------------------------- statements that compute and fail part-way
    def visit_Var(self, s: ir.Var, scope: Scope, reports: dict[str, T.Ty]) -> None:
        value = self.expr(s.value, scope)
        if isinstance(value, T.EmptyT):
            self.err(
                "E0301",
                f"the type of `var {s.name} = {{}}` cannot be told",
                s.value.span,
                hint="start it from a value of the type it is to hold, e.g. a state variable",
            )
        scope.names[s.name] = Symbol(value, "var", s.span)

    def visit_Fail(self, s: ir.Fail, scope: Scope, reports: dict[str, T.Ty]) -> None:
        self.error_code(s.code, s.code_span if s.code_span.file else s.span)
        for part in template_exprs(s.message):
            self.expr(part, scope)

    def visit_Break(self, s: ir.Break, scope: Scope, reports: dict[str, T.Ty]) -> None:
        self.loop_only("break", s.span, scope)

    def visit_Continue(self, s: ir.Continue, scope: Scope, reports: dict[str, T.Ty]) -> None:
        self.loop_only("continue", s.span, scope)

    def loop_only(self, word: str, span: Span, scope: Scope) -> None:
        if not scope.in_loop:
            self.err(
                "E0312",
                f"`{word}` outside a `for` loop",
                span,
                hint=f"`{word}` leaves or skips items of the innermost `for`; to end the call "
                "write `fail CODE`, to do nothing put the statements under an `if`",
            )

    def visit_Warn(self, s: ir.Warn, scope: Scope, reports: dict[str, T.Ty]) -> None:
        self.error_code(s.code, s.code_span if s.code_span.file else s.span)
        for part in template_exprs(s.message):
            self.expr(part, scope)

    def visit_Report(self, s: ir.Report, scope: Scope, reports: dict[str, T.Ty]) -> None:
        for f in s.fields:
            value = self.expr(f.value, scope)
            if reports and f.name not in reports:
                self.err(
                    "E0209",
                    f"the report has no field `{f.name}`",
                    f.span,
                    hint=suggestion_hint(f.name, reports, "report field"),
                )
            elif f.name in reports:
                self.expect(value, reports[f.name], f.value.span, f"report field `{f.name}`")

    def lvalue(self, e: ir.Expr, scope: Scope) -> T.Ty:
        root = e
        while isinstance(root, (ir.Attr, ir.Index)):
            root = root.obj
        if not isinstance(root, ir.Name):
            self.err("E0303", "only state variables can be assigned", e.span)
            return T.ANY
        sym = self.state.get(root.name) if root.state else scope.names.get(root.name)
        if root.state and sym is None:
            self.state_ref_type(root, scope)
            return T.ANY
        if sym is not None and sym.kind == "param":
            self.err(
                "E0302",
                f"parameter `{root.name}` is read-only",
                root.span,
                hint="effects change state variables; declare one in `state { … }`",
            )
            return T.ANY
        if sym is not None and sym.kind == "var":
            return self.expr(e, scope)
        if sym is not None and sym.kind in ("local", "loop"):
            what = "a `let` binding" if sym.kind == "local" else "the loop variable"
            self.err(
                "E0303",
                f"`{root.name}` is {what}; it cannot be changed",
                root.span,
                hint=f"declare it with `var {root.name} = …` to change it, or assign a state "
                "variable"
                if sym.kind == "local"
                else f"copy it into a local first: `var item = {root.name}`",
            )
            return T.ANY
        if sym is None or sym.kind != "state":
            if sym is None and root.name not in self.type_decls and root.name != "result":
                self.err(
                    "E0201",
                    f"unknown state variable `{root.name}`",
                    root.span,
                    hint=suggestion_hint(root.name, self.state, "state variable"),
                )
            else:
                self.err(
                    "E0303",
                    f"`{root.name}` is not a state variable; effects assign only state",
                    root.span,
                    hint=suggestion_hint(root.name, self.state, "state variable"),
                )
            return T.ANY
        return self.expr(e, scope)

    def error_code(self, code: str, span: Span) -> None:
        if not ERROR_CODE.match(code):
            self.err(
                "E0413",
                f"`{code}` is not a valid code",
                span,
                hint=f"codes are UPPER_SNAKE_CASE, e.g. `{_upper_snake(code)}`",
            )

    def template(self, t: ir.Template | None, scope: Scope) -> None:
        if t is not None:  # template_exprs(t), without a generator per message and hint
            for part in t.parts:
                if part.expr is not None:
                    self.expr(part.expr, scope)


_NARROWING = frozenset(("and", "or", "==", "!="))
"""The operators of the binary expressions ``_non_null_facts`` and ``_type_facts`` look into."""

#: the type ``visit_ScalarLit`` gives a literal, by the exact class of its value
_SCALAR_TYPES: dict[type, T.Ty] = {
    type(None): T.NULL,
    bool: T.BOOL,
    int: T.INT,
    float: T.FLOAT,
    str: T.STR,
}


def _scalar_tuple_type(e: ir.Collection, known: dict[tuple[type, ...], T.Ty]) -> T.Ty | None:
    """The type of a tuple of scalar literals, one object per combination of its elements'
    classes in ``known`` (bulk data repeats a few: typed once each, and joined by identity);
    None for anything else, which the visitor types."""
    if e.type != "tuple":
        return None
    key = tuple([i.value.__class__ if i.__class__ is ir.ScalarLit else None for i in e.items])
    found = known.get(key)  # type: ignore[arg-type]
    if found is None and all(k in _SCALAR_TYPES for k in key):
        found = known[key] = T.TupleT(tuple(_SCALAR_TYPES[k] for k in key))  # type: ignore[index]
    return found


_ANY_HINT = (
    "a value of type any must be narrowed first: `require x is T else …` or `if x is T { … }`"
)


def _narrow_hint(e: ir.Expr, *types: T.Ty) -> str | None:
    """For an operation on a value of type ``any`` (or a union): how to make it typed."""

    if not any(t == T.DYN or isinstance(t, T.UnionT) for t in types):
        return None
    operand = e
    if isinstance(e, ir.Binary):
        left_dyn = types and (types[0] == T.DYN or isinstance(types[0], T.UnionT))
        operand = e.left if left_dyn else e.right
    text = expr_text(operand)
    if len(text) > 40 or not isinstance(operand, (ir.Name, ir.Attr)):
        return "narrow the value first with a type test, e.g. `require x is int else …`"
    return f"narrow it with a type test first: `{text} is T and …`, T the type needed here"


def _upper_snake(text: str) -> str:
    """A valid UPPER_SNAKE_CASE code close to ``text`` (never ``text`` itself when that is
    invalid): words split at lower→upper changes, other characters become ``_``, and what
    cannot start a code (``_``, digits) is dropped from the front."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", text).upper()
    snake = re.sub(r"[^A-Z0-9]+", "_", spaced).strip("_")
    snake = re.sub(r"^[^A-Z]+", "", snake)
    return snake or "FAILED"


def _lv_text(e: ir.Expr) -> str:
    if isinstance(e, ir.Name):
        return f"state.{e.name}" if e.state else e.name
    if isinstance(e, ir.Attr):
        return f"{_lv_text(e.obj)}.{e.name}"
    if isinstance(e, ir.Index):
        return f"{_lv_text(e.obj)}[…]"
    return "…"


def _num(v: float) -> str:
    return str(int(v)) if v == int(v) else str(v)


def _child_types(t: ir.TypeExpr) -> list[ir.TypeExpr]:
    if isinstance(t, ir.GenericType):
        return list(t.args)
    if isinstance(t, ir.RecordType):
        return [f.type for f in t.fields]
    if isinstance(t, ir.TaggedUnionType):
        return [v.type for v in t.variants]
    if isinstance(t, ir.UnionType):
        return list(t.options)
    return []


def _number_literal(e: ir.Expr) -> int | float | None:
    """The value of a number written out (``5``, ``-2.5``), else None."""
    if isinstance(e, ir.Unary) and e.op == "-":
        inner = _number_literal(e.operand)
        return None if inner is None else -inner
    if isinstance(e, ir.ScalarLit) and isinstance(e.value, (int, float)):
        if not isinstance(e.value, bool):
            return e.value
    return None


# builtin_arg's test for each argument kind: whether an argument of type ``base`` (null
# stripped) or the expression ``a`` fits it
_ARG_KIND_TESTS: dict[str, Callable[[T.Ty, ir.Expr], bool]] = {
    "str": lambda base, a: T.is_stringy(base),
    "num": lambda base, a: T.is_arithmetic(base),
    "any": lambda base, a: True,
    "sized": lambda base, a: (
        T.is_stringy(base) or isinstance(base, (T.ListT, T.SetT, T.MapT, T.TupleT, T.EmptyT))
    ),
    "coll": lambda base, a: isinstance(base, (T.ListT, T.SetT, T.EmptyT)) or base == T.ANY,
    "set": lambda base, a: isinstance(base, (T.SetT, T.EmptyT)) or base == T.ANY,
    "map": lambda base, a: isinstance(base, (T.MapT, T.EmptyT)) or base == T.ANY,
    "pattern": lambda base, a: isinstance(a, ir.ScalarLit) and isinstance(a.value, str),
    "seq": lambda base, a: (
        T.is_stringy(base) or isinstance(base, (T.ListT, T.EmptyT)) or base == T.ANY
    ),
    "iterable": lambda base, a: (
        T.is_stringy(base) or isinstance(base, (T.ListT, T.SetT, T.MapT, T.EmptyT)) or base == T.ANY
    ),
    "date_format": lambda base, a: True,  # checked in builtin_arg, with its own code
}
