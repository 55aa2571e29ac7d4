"""The checking shortcuts of the seventh speed session (branch s7-check) change no result: each
is compared with the code it stands in for, on every example, every golden file, the contract
blocks of the docs, corrupted examples and a few contracts written to reach the edge cases."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from contractsim.api import check_text
from contractsim.compiler.checks import COMPILER_CHECKS
from contractsim.diagnostics import ContractError, Span
from contractsim.dsl import check as check_module
from contractsim.dsl import hiding, ir, lets, walk
from contractsim.dsl import types as T
from contractsim.dsl.lower import lower
from contractsim.dsl.typecheck import Checker, Scope, Symbol, _root_name
from contractsim.dsl.visitor import (
    EXPR_KINDS,
    STMT_KINDS,
    child_exprs,
    child_field_names,
    child_stmt_list,
    iter_child_nodes,
)
from contractsim.dsl.walk import ExprFacts, expr_roots, replace_nodes, template_exprs, walk_expr
from contractsim.grammar.parse import parse

_ROOT = Path(__file__).resolve().parent.parent

H = 'contract demo version "1.0.0"\n'

# binders at every depth and in every place the E0331 pass looks: nested quantifiers and
# comprehensions, inside templates, outcomes, lets, flows and goals, some hiding a name
_BINDERS = (
    H
    + """
const LIMIT = 3
state { seen: set[str] = {}, n: int = 0 }
predicate all_short(xs: list[str]) = all(len(x) < LIMIT for x in xs)
function total(xs: list[int]) -> int = sum(x for x in xs if any(y > x for y in xs))
goal done = count(s != "" for s in seen) > 0
tool put(items: list[str], m: map[str, int]) {
  let firsts = [i for i in items if i != ""]
  require all(len(i) > 0 for i in items) else EMPTY "empty item in {[n for n in items]}"
  require n >= 0 and any(k == "a" for k in m) else NOKEY "no key"
  effect {
    for item in items { seen.add(item) }
    n = n + count(x != "" for x in [v for v in {k: 1 for k in m}])
  }
  outcome ok success when all(f != "" for f in firsts)
}
"""
)

_BLOCK = re.compile(r"^```contract\n(.*?)^```", re.S | re.M)

_TEXTS = (
    [
        (path.name, path.read_text(encoding="utf-8"))
        for path in sorted(_ROOT.glob("examples/*/*.contract"))
        + sorted((_ROOT / "tests" / "golden").glob("*.contract"))
    ]
    + [
        (f"{doc.name}#{i}", m.group(1))
        for doc in sorted((_ROOT / "docs").glob("*.md"))
        for i, m in enumerate(_BLOCK.finditer(doc.read_text(encoding="utf-8")))
    ]
    + [("binders.contract", _BINDERS)]
)
_CUT = [
    (f"{name}@{n}", text[: len(text) * n // 5])
    for name, text in _TEXTS
    if name.startswith(("gorilla", "file_system", "binders"))
    for n in range(1, 5)
]
_SOURCES = _TEXTS + _CUT


def _lowered(name: str, text: str) -> ir.Contract | None:
    try:
        contract, _ = lower(parse(text, name), name)
    except ContractError:
        return None
    return contract


def _contracts() -> list[tuple[str, ir.Contract]]:
    out = []
    for name, text in _SOURCES:
        contract = _lowered(name, text)
        if contract is not None:
            out.append((name, contract))
    return out


_CONTRACTS = _contracts()
_IDS = [name for name, _ in _CONTRACTS]


def _reference_binds(e: ir.Expr) -> bool:
    """The E0331 pass's test as it was: walk the expression, look for a binder."""
    return any(isinstance(x, (ir.Quantifier, ir.Comprehension)) for x in walk_expr(e))


def test_the_sources_reach_the_edge_cases() -> None:
    contract = _lowered("binders.contract", _BINDERS)
    assert contract is not None
    roots = expr_roots(contract)
    assert sum(_reference_binds(r) for r in roots) >= 7
    diags = check_module.check_contract(contract, COMPILER_CHECKS)
    assert [(d.code, d.message) for d in diags if d.code == "E0331"] == [
        ("E0331", "loop variable `n` hides the state variable `n`")
    ]


def test_names_and_literals_have_no_children() -> None:
    # ExprFacts skips looking for their children, and takes a binary's two without asking
    assert child_field_names(ir.Name) == ()
    assert child_field_names(ir.ScalarLit) == ()
    assert child_field_names(ir.Binary) == ("left", "right")
    # ... and a call's arguments, an attribute's object and an index's two
    assert child_field_names(ir.Call) == ("args", "kwargs")
    assert child_field_names(ir.KeywordArg) == ("value",)
    assert child_field_names(ir.Attr) == ("obj",)
    assert child_field_names(ir.Index) == ("obj", "key")


def _reference_child_stmts(node: ir.Node) -> list[ir.Node]:
    """``child_stmts`` as it was: the generator over ``iter_child_nodes``."""
    return [child for child in iter_child_nodes(node) if isinstance(child, STMT_KINDS)]


def _reference_walk_stmts(stmts: tuple[ir.Node, ...] | list[ir.Node]) -> list[ir.Node]:
    out: list[ir.Node] = []
    for s in stmts:
        out.append(s)
        out.extend(_reference_walk_stmts(_reference_child_stmts(s)))
    return out


def _reference_expr_roots(contract: ir.Contract) -> list[ir.Expr]:
    """``expr_roots`` as it was: ``stmt_exprs`` of every statement ``walk_stmts`` yields."""
    roots: list[ir.Expr] = []
    roots.extend(c.value for c in contract.consts)
    roots.extend(p.body for p in contract.predicates)
    roots.extend(f.body for f in contract.functions)
    roots.extend(g.cond for g in contract.goals)
    for tool in contract.tools:
        if tool.cost is not None:
            roots.append(tool.cost)
        roots.extend(let.value for let in tool.lets)
        for cond in tool.conditions:
            roots.append(cond.cond)
            roots.extend(template_exprs(cond.message))
            roots.extend(template_exprs(cond.hint))
        bodies: list[tuple[ir.Stmt, ...]] = [tool.effects]
        for out in tool.outcomes:
            bodies.append(out.body)
            roots.extend(e for e in (out.when, out.observed) if e is not None)
            roots.extend(template_exprs(out.message))
            roots.extend(template_exprs(out.hint))
        if tool.flow is not None:
            bodies.extend(step.body for step in tool.flow.steps)
            roots.extend(t.when for t in tool.flow.transitions if t.when is not None)
        for body in bodies:
            for s in _reference_walk_stmts(body):
                roots.extend(child_exprs(s))
    for m in contract.machines:
        roots.extend(t.when for t in m.transitions if t.when is not None)
    return roots


@pytest.mark.parametrize(("name", "contract"), _CONTRACTS, ids=_IDS)
def test_statement_walks_unchanged(name: str, contract: ir.Contract) -> None:
    """``child_stmt_list`` finds the statements the generator found, in order, below every
    node of the contract; ``expr_roots`` lists the roots it listed, in order."""
    stack: list[ir.Node] = [contract]
    seen = 0
    while stack:
        node = stack.pop()
        got = child_stmt_list(node)
        assert [id(s) for s in got] == [id(s) for s in _reference_child_stmts(node)]
        seen += len(got)
        stack.extend(iter_child_nodes(node))
    assert [id(e) for e in expr_roots(contract)] == [id(e) for e in _reference_expr_roots(contract)]
    if name == "binders.contract":
        assert seen >= 3
    assert all(isinstance(e, EXPR_KINDS) for e in expr_roots(contract))


@pytest.mark.parametrize(("name", "contract"), _CONTRACTS, ids=_IDS)
def test_expr_facts_unchanged(name: str, contract: ir.Contract) -> None:
    """One walk gives the names the old lint walk collected and, for every root and every
    expression below it, the answer the old per-expression walk gave."""
    facts = ExprFacts(contract)
    used: set[str] = set()
    for root in expr_roots(contract):
        assert facts.binds[id(root)] is _reference_binds(root)
        for e in walk_expr(root):
            assert facts.binds_names(e) is _reference_binds(e)
            if isinstance(e, ir.Name):
                used.add(e.name)
            elif isinstance(e, ir.Call):
                used.add(e.func)
    assert facts.used == used


@pytest.mark.parametrize(("name", "contract"), _CONTRACTS, ids=_IDS)
def test_hidden_names_unchanged(
    name: str, contract: ir.Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """E0331 with the shared walk equals E0331 with a walk per expression."""
    got = Checker(contract)
    hiding.check_hidden_names(got)
    expected = Checker(contract)
    monkeypatch.setattr(ExprFacts, "binds_names", lambda self, e: _reference_binds(e))
    hiding.check_hidden_names(expected)
    assert got.diags == expected.diags


@pytest.mark.parametrize(("name", "contract"), _CONTRACTS, ids=_IDS)
def test_hidden_names_asks_only_about_expressions_the_walk_saw(
    name: str, contract: ir.Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no root expression (of the contract, of a tool) binds a name the E0331 pass looks
    at statements only: that is exact because every expression it asks about lies below a
    root of ``expr_roots``, and, inside a tool, below a root of that tool."""
    below_roots = {id(e) for root in expr_roots(contract) for e in walk_expr(root)}
    below_tool: dict[int, set[int]] = {}
    for tool in contract.tools:
        roots: list[ir.Expr] = []
        walk._tool_roots(tool, roots)
        below_tool[id(tool)] = {id(e) for root in roots for e in walk_expr(root)}
    asked: list[tuple[ir.Node, ir.Expr]] = []
    current: list[ir.Node] = [contract]  # the tool being walked, else the contract
    original_tool = hiding._Hiding.tool

    def tool(self: hiding._Hiding, t: ir.Tool, names: hiding.Names) -> None:
        current[0] = t
        original_tool(self, t, names)
        current[0] = contract

    def record(self: ExprFacts, e: ir.Expr) -> bool:
        asked.append((current[0], e))
        return _reference_binds(e)

    monkeypatch.setattr(ExprFacts, "binds_names", record)
    monkeypatch.setattr(hiding._Hiding, "tool", tool)
    ck = Checker(contract)
    facts = ck.expr_facts()
    facts.any_binds = True  # look at every expression, as before the shortcuts
    facts.tool_binds = {}  # (a tool not in it is looked at whole)
    hiding.check_hidden_names(ck)
    assert all(id(e) in below_roots for _, e in asked)
    for owner, e in asked:
        if isinstance(owner, ir.Tool):
            assert id(e) in below_tool[id(owner)]
    if name == "gorilla_fs.contract":
        assert sum(isinstance(owner, ir.Tool) for owner, _ in asked) > 100


def test_a_contract_without_binders_still_reports_statements() -> None:
    text = (
        H
        + """
state { n: int = 0 }
tool t(x: int) {
  effect {
    var x = 1
    for n in [1, 2] { let y = n }
  }
}
"""
    )
    contract = _lowered("plain.contract", text)
    assert contract is not None
    ck = Checker(contract)
    assert ck.expr_facts().any_binds is False
    hiding.check_hidden_names(ck)
    assert [(d.code, d.message) for d in ck.diags] == [
        ("E0331", "`var x` hides the parameter `x`"),
        ("E0331", "loop variable `n` hides the state variable `n`"),
    ]


def _resolved_dump(contract: ir.Contract) -> str:
    resolved, _ = check_module.check_and_resolve(contract, COMPILER_CHECKS)
    return ir.dump_json(resolved)


@pytest.mark.parametrize(("name", "contract"), _CONTRACTS, ids=_IDS)
def test_replacing_unchanged(
    name: str, contract: ir.Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resolved IR (spans included) is the one ``dataclasses.replace`` and a walk over the
    whole tool gave: replacing a node calls its class with every field, and the tool-level
    ``let`` uses are replaced in the fields they are found in only."""
    got = _resolved_dump(contract)
    for tool in contract.tools:
        table: dict[int, ir.Node] = {}
        lets._collect_tool(tool, table)
        if table:
            assert lets._replaced_in_tool(tool, table) == replace_nodes(tool, table)
            assert ir.dump_json(lets._replaced_in_tool(tool, table)) == ir.dump_json(
                replace_nodes(tool, table)
            )
    monkeypatch.setattr(
        walk, "_replaced", lambda node, changes: dataclasses.replace(node, **changes)
    )
    monkeypatch.setattr(lets, "inline_tool_lets", _reference_inline_tool_lets)
    monkeypatch.setattr(check_module, "inline_tool_lets", _reference_inline_tool_lets)
    assert got == _resolved_dump(contract)


def _reference_inline_tool_lets(contract: ir.Contract) -> ir.Contract:
    """``inline_tool_lets`` as it was: each tool with bindings walked whole."""
    tools = []
    for tool in contract.tools:
        table: dict[int, ir.Node] = {}
        if tool.lets:
            lets._collect_tool(tool, table)
        tools.append(replace_nodes(tool, table) if table else tool)
    if all(new is old for new, old in zip(tools, contract.tools)):
        return contract
    return dataclasses.replace(contract, tools=tuple(tools))


@pytest.mark.parametrize(("name", "contract"), _CONTRACTS, ids=_IDS)
def test_unchanged_parts_are_only_those_without_uses(name: str, contract: ir.Contract) -> None:
    """What ``_collect_tool`` maps to itself holds no use it replaces, and the tool comes out
    as the whole-tool walk makes it."""
    for tool in contract.tools:
        if not tool.lets:
            continue
        table = lets._Uses()
        unchanged: dict[int, ir.Node] = {}
        lets._collect_tool(tool, table, unchanged)
        below = {id(node): node for kept in unchanged.values() for node in _all_nodes(kept)}
        assert not set(table) & set(below)
        plain: dict[int, ir.Node] = {}
        lets._collect_tool(tool, plain)
        assert dict(table) == plain
        whole = replace_nodes(tool, plain)
        pruned = lets._replaced_in_tool(tool, {**unchanged, **table})
        assert ir.dump_json(pruned) == ir.dump_json(whole)


def _all_nodes(node: ir.Node) -> list[ir.Node]:
    out = [node]
    for child in iter_child_nodes(node):
        out.extend(_all_nodes(child))
    return out


def test_the_sources_replace_lets_and_empty_literals() -> None:
    replaced = pruned = 0
    for _, contract in _CONTRACTS:
        for tool in contract.tools:
            table: dict[int, ir.Node] = {}
            lets._collect_tool(tool, table)
            replaced += len(table)
            kept: dict[int, ir.Node] = {}
            lets._collect_tool(tool, lets._Uses(), kept)
            pruned += len(kept)
    assert replaced > 20
    assert pruned > 20


def _types() -> list[T.Ty]:
    prims = [T.BOOL, T.INT, T.FLOAT, T.STR, T.NULL, T.ANY, T.Prim("int"), T.Prim("null")]
    others = [
        T.DYN,
        T.DynT(),
        T.ListT(T.INT),
        T.SetT(T.STR),
        T.MapT(T.STR, T.INT),
        T.TupleT((T.INT, T.STR)),
        T.EmptyT(),
        T.EnumT("E", ("a", "b")),
        T.RecordT("R", (("a", T.FieldT(T.INT, False, False)),), False),
        T.TypeRefT("R"),
        T.NUMBER_T,
    ]
    unions = [T.UnionT((a, b)) for a in prims + others[:8] for b in prims + others[:8]]
    return prims + others + unions


def test_comparable_unchanged() -> None:
    """``comparable`` and ``_numberlike`` test a type's class and name where they compared it
    with ANY, NULL, DYN and BOOL; the answers are those of the comparisons, for every pair."""

    def numberlike(t: T.Ty) -> bool:
        return t == T.BOOL or T.is_numeric(t)

    def reference(a: T.Ty, b: T.Ty) -> bool:
        if T.ANY in (a, b) or T.NULL in (a, b) or T.DYN in (a, b):
            return True
        if isinstance(a, T.UnionT) or isinstance(b, T.UnionT):
            left = a.options if isinstance(a, T.UnionT) else (a,)
            right = b.options if isinstance(b, T.UnionT) else (b,)
            if T.NULL in left and T.NULL in right:
                return True
            return any(reference(x, y) for x in left for y in right if x != T.NULL and y != T.NULL)
        if numberlike(a) and numberlike(b):
            return True
        return T.assignable(a, b) or T.assignable(b, a)

    answers = set()
    types = _types()
    for a in types:
        assert T._numberlike(a) is numberlike(a), a
        for b in types:
            got = T.comparable(a, b)
            assert got == reference(a, b), (a, b)
            answers.add(got)
    assert answers == {True, False}


def _scopes() -> list[Scope]:
    sym = Symbol(T.INT, "param", Span(file="x"))
    return [
        Scope(),
        Scope({"a": sym}),
        Scope({"a": sym}, non_null=frozenset({"a", "b.c", "state.a"})),
        Scope({"a": sym}, facts={"a": T.STR, "b[k]": T.INT}),
        Scope({"b": sym}, True, True, "tool `t`", frozenset({"b"}), True, {"b.x": T.INT}),
    ]


def test_scope_child_unchanged() -> None:
    """``Scope.child`` copies what it kept before, without filtering when nothing is shadowed
    or there is nothing to forget."""
    sym = Symbol(T.STR, "loop", Span(file="x"))

    def reference(scope: Scope, **extra: Symbol) -> Scope:
        shadowed = set(extra)
        return Scope(
            {**scope.names, **extra},
            scope.allow_old,
            scope.allow_fresh,
            scope.where,
            frozenset(t for t in scope.non_null if _root_name(t) not in shadowed),
            scope.in_loop,
            {t: ty for t, ty in scope.facts.items() if _root_name(t) not in shadowed},
        )

    for scope in _scopes():
        for extra in ({}, {"a": sym}, {"b": sym}, {"z": sym}):
            got = scope.child(**extra)
            assert got == reference(scope, **extra)
            assert got.names is not scope.names and got.facts is not scope.facts


# ----------------------------------------------- empty collections under item-count bounds

_BOUND_DECLS = """
type Address = str format "email" max_length 254
type Capped = list[Address] max_items 3
type CappedAlias = Capped max_items 2
type AtLeastOne = set[str] min_items 1
type NoneNeeded = map[str, int] min_items 0
"""
_BOUND_TYPES = [
    "list[Address] max_items 50",
    "list[int] max_items 0",
    "list[int] min_items 0 max_items 5",
    "list[int] min_items 1",
    "list[int] max_items -1",
    "list[int] max_items 2.5",
    "list[int] max_length 3",
    "set[Address] max_items 1",
    "map[str, Address] max_items 4",
    "Capped",
    "CappedAlias",
    "CappedAlias max_items 1",
    "AtLeastOne",
    "NoneNeeded",
    "NoneNeeded max_items 0",
    "str max_length 3",
    "Address | null",
]
_BOUND_VALUES = ["[]", "{}", "null", '["a@example.com"]', '{"a@example.com"}']


def _bound_contract(type_text: str, value_text: str) -> ir.Contract | None:
    text = H + _BOUND_DECLS + f"const C: {type_text} = {value_text}\n"
    try:
        contract, _ = lower(parse(text, "t.contract"), "t.contract")
    except ContractError:
        return None
    return contract


@pytest.mark.parametrize(
    ("type_text", "value_text"),
    [(t, v) for t in _BOUND_TYPES for v in _BOUND_VALUES],
)
def test_obviously_conforms_under_item_bounds(
    type_text: str, value_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ``obviously_conforms`` answers without the validator, the validator finds no
    problem; and the diagnostics are those of always asking the validator."""
    contract = _bound_contract(type_text, value_text)
    assert contract is not None
    const = contract.consts[0]
    assert const.type is not None
    ck = Checker(contract)
    if check_module.obviously_conforms(const.value, const.type, ck.type_decls):
        assert COMPILER_CHECKS.conformance_problem(ck, const.value, const.type) is None
    text = H + _BOUND_DECLS + f"const C: {type_text} = {value_text}\n"
    state = f"state {{ s: {type_text} = {value_text} }}\n"
    fast = [repr(d) for d in check_text(text + state, "t.contract")]
    monkeypatch.setattr(check_module, "obviously_conforms", lambda *_: False)
    assert fast == [repr(d) for d in check_text(text + state, "t.contract")]


@pytest.mark.parametrize(
    ("type_text", "value_text", "expected"),
    [
        ("list[Address] max_items 50", "[]", True),  # email.contract's `cc`
        ("list[int] max_items 0", "[]", True),
        ("list[int] min_items 0 max_items 5", "[]", True),
        ("set[Address] max_items 1", "{}", True),
        ("map[str, Address] max_items 4", "{}", True),
        ("Capped", "[]", True),
        ("CappedAlias max_items 1", "[]", True),
        ("NoneNeeded max_items 0", "{}", True),
        ("list[int] min_items 1", "[]", False),  # the validator says why
        ("AtLeastOne", "{}", False),
        ("list[int] max_items -1", "[]", False),
        ("list[int] max_items 2.5", "[]", False),
        ("list[int] max_length 3", "[]", False),
        ("list[Address] max_items 50", '["a@example.com"]', False),
        ("Address | null", "null", True),  # null: as before
        ("list[int] max_items 5", "null", False),
    ],
)
def test_obviously_conforms_item_bound_cases(
    type_text: str, value_text: str, expected: bool
) -> None:
    contract = _bound_contract(type_text, value_text)
    assert contract is not None
    const = contract.consts[0]
    assert const.type is not None
    got = check_module.obviously_conforms(const.value, const.type, Checker(contract).type_decls)
    assert got is expected


class _ReferenceChecker(Checker):
    """The checker's name lookup, message templates and narrowing as they were."""

    def visit_Name(self, e: ir.Name, scope: Scope) -> T.Ty:
        key = f"state.{e.name}" if e.state else e.name
        ty = scope.facts.get(key) if scope.facts else None
        if ty is None:
            ty = self.name_type(e, scope)
        return T.strip_null(ty) if scope.non_null and key in scope.non_null else ty

    def template(self, t: ir.Template | None, scope: Scope) -> None:
        for e in template_exprs(t):
            self.expr(e, scope)

    def narrowed(self, scope: Scope, cond: ir.Expr, positive: bool = True) -> Scope:
        new = scope.narrowed(cond, positive)
        facts = self._type_facts(cond, positive, scope)
        if not facts:
            return new
        if new is scope:
            new = scope.child()
        new.facts = {**new.facts, **facts}
        return new


@pytest.mark.parametrize(("name", "contract"), _CONTRACTS, ids=_IDS)
def test_checker_diagnostics_unchanged(name: str, contract: ir.Contract) -> None:
    """Every pass gives the diagnostics, in order, that the checker with the old name lookup
    and templates gives."""
    got = Checker(contract)
    expected = _ReferenceChecker(contract)
    for ck in (got, expected):
        ck.back_end = COMPILER_CHECKS
        for run in check_module.PASSES:
            run(ck)
    assert [repr(d) for d in got.diags] == [repr(d) for d in expected.diags]


@pytest.mark.parametrize(("name", "contract"), _CONTRACTS, ids=_IDS)
def test_narrowing_unchanged(name: str, contract: ir.Contract) -> None:
    """``narrowed`` returns the scope itself for an expression that cannot narrow, as the
    full look at it did; for every expression of the contract, both ways."""
    ck = Checker(contract)
    for run in check_module.PASSES[:4]:  # the names and types a scope holds
        run(ck)
    scope = check_module.ck_scope(ck, where="a test")
    narrowing = 0
    for e in walk.all_exprs(contract):
        for positive in (True, False):
            got = ck.narrowed(scope, e, positive)
            expected = _ReferenceChecker.narrowed(ck, scope, e, positive)
            assert (got is scope) == (expected is scope)
            assert (got.non_null, got.facts) == (expected.non_null, expected.facts)
            narrowing += got is not scope
    if name == "gorilla_fs.contract":
        assert narrowing > 0
