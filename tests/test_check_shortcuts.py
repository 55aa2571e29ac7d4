"""The checking shortcuts of the second speed round on lowering and checking (branch
s6b-lower) change no result: each one is compared with the code it stands in for, on every
example, every golden file and a few contracts written to reach the edge cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contractsim.compiler.checks import COMPILER_CHECKS
from contractsim.diagnostics import ContractError, Diagnostic
from contractsim.dsl import check as check_module
from contractsim.dsl import ir
from contractsim.dsl.lower import lower
from contractsim.dsl.typecheck import Checker
from contractsim.dsl.visitor import NodeVisitor, child_expr_list
from contractsim.dsl.walk import expr_roots
from contractsim.grammar.parse import parse

_ROOT = Path(__file__).resolve().parent.parent

H = 'contract demo version "1.0.0"\n'

# recursive and mutually recursive types used as parameter types: `resolve_quiet` keeps nothing
# while one of them is being resolved
_RECURSIVE = (
    H
    + """
type Tree = record { label: str, kids: list[Tree] }
type Ping = record { pong: Pong | null }
type Pong = record { ping: Ping | null, n: int }
state { seen: set[str] = {} }
tool grow(t: Tree, p: Ping, q: Pong, n: int min 0) {
  require len(t.kids) >= 0
  effect { seen.add(t.label) }
}
tool grow_again(t: Tree, q: Pong) {
  require q.n >= 0
  effect { seen.add(t.label) }
}
"""
)

# names used only deep inside, late in the walk, or never: the lint stops walking once every
# declared name is seen, so its verdicts must not depend on where the uses are
_UNUSED = (
    H
    + """
predicate never(n: int) = n > 0
predicate deep(n: int) = n > 1
function twice(n: int) -> int = n * 2
function unused_fn(n: int) -> int = n + 1
state { a: int = 0, b: int = 0, c: int = 0 }
event nothing_happens
tool t1(x: int) {
  require deep(twice(x))
  effect { a = a + 1 }
}
tool t2(y: int) {
  require y > 0 else BAD "y is {b}"
}
"""
)

_SOURCES = (
    [
        (path.name, path.read_text(encoding="utf-8"))
        for path in sorted(_ROOT.glob("examples/*/*.contract"))
        + sorted((_ROOT / "tests" / "golden").glob("*.contract"))
    ]
    + [("recursive.contract", _RECURSIVE), ("unused.contract", _UNUSED)]
    + [(f"prefix{n}.contract", _UNUSED[: len(_UNUSED) * n // 6]) for n in range(1, 6)]
)


def _lowered(name: str, text: str) -> ir.Contract | None:
    try:
        contract, _ = lower(parse(text, name), name)
    except ContractError:
        return None
    return contract


def _reference_lint_unused(ck: Checker) -> None:
    """The unused-name lint as it was: every expression walked, every name collected."""
    used: set[str] = set()
    stack = expr_roots(ck.c)
    while stack:
        e = stack.pop()
        if isinstance(e, ir.Name):
            used.add(e.name)
        elif isinstance(e, ir.Call):
            used.add(e.func)
        child_expr_list(e, stack)
    for p in ck.c.predicates:
        if p.name not in used:
            ck.warn("W0601", f"predicate `{p.name}` is never used", p.span)
    for f in ck.c.functions:
        if f.name not in used:
            ck.warn("W0601", f"function `{f.name}` is never used", f.span)
    for var in ck.c.state:
        if var.name not in used:
            ck.warn(
                "W0602",
                f"state variable `{var.name}` is never read or changed",
                var.span,
                hint="use it in a condition or an effect, or remove it",
            )


class _ReferenceChecker(Checker):
    """The checker as it was: no type kept by ``resolve_quiet``, the visitor's own dispatch."""

    def resolve_quiet(self, t: ir.TypeExpr) -> Any:
        saved = len(self.diags)
        ty = self.resolve(t)
        del self.diags[saved:]
        return ty

    def expr(self, e: ir.Expr, scope: Any) -> Any:
        return NodeVisitor.visit(self, e, scope)


def _run(ck: Checker, passes: Any) -> list[Diagnostic]:
    ck.back_end = COMPILER_CHECKS
    for run in passes:
        run(ck)
    return ck.diags


def test_the_sources_reach_the_edge_cases() -> None:
    ck = Checker(_lowered("unused.contract", _UNUSED))  # type: ignore[arg-type]
    codes = [(d.code, d.message) for d in _run(ck, check_module.PASSES)]
    assert ("W0601", "predicate `never` is never used") in codes
    assert ("W0601", "function `unused_fn` is never used") in codes
    assert ("W0602", "state variable `c` is never read or changed") in codes
    assert ("W0605", "event `nothing_happens` is never used") in codes
    assert not any("`deep`" in m or "`twice`" in m or "`b`" in m for _, m in codes)


@pytest.mark.parametrize(("name", "text"), _SOURCES, ids=[name for name, _ in _SOURCES])
def test_lint_unused_unchanged(name: str, text: str) -> None:
    contract = _lowered(name, text)
    if contract is None:
        pytest.skip("a syntax error: nothing to lint")
    got = Checker(contract)
    check_module.lint_unused(got)
    expected = Checker(contract)
    _reference_lint_unused(expected)
    events = [d for d in got.diags if d.code == "W0605"]
    assert got.diags == expected.diags + events


@pytest.mark.parametrize(("name", "text"), _SOURCES, ids=[name for name, _ in _SOURCES])
def test_checker_diagnostics_and_types_unchanged(name: str, text: str) -> None:
    """Every pass with the shortcuts gives the diagnostics, in order, the reference gives; and
    each parameter type the cache kept is the type resolved afresh."""
    contract = _lowered(name, text)
    if contract is None:
        pytest.skip("a syntax error: nothing to check")
    got = Checker(contract)
    expected = _ReferenceChecker(contract)
    assert _run(got, check_module.PASSES) == _run(expected, check_module.PASSES)
    for tool in contract.tools:
        for p in tool.params:
            assert got.resolve_quiet(p.type) == expected.resolve_quiet(p.type)
    for t, ty in got._quiet_types.values():
        assert ty == expected.resolve_quiet(t)


def _all_types() -> list[Any]:
    from contractsim.dsl import types as T

    prims = [T.BOOL, T.INT, T.FLOAT, T.STR, T.NULL, T.ANY, T.Prim("int"), T.Prim("str")]
    others = [
        T.DYN,
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
    unions = [T.UnionT((a, b)) for a in prims + others[:7] for b in prims + others[:7]]
    return prims + others + unions + [T.UnionT((u, T.STR)) for u in unions[:40]]


def test_type_predicates_unchanged() -> None:
    """``is_numeric``, ``is_arithmetic`` and ``is_stringy`` read a ``Prim``'s name; the answers
    are those of the ``==`` tests they replace, on every kind of type and union of two."""
    from contractsim.dsl import types as T

    def numeric(t: Any) -> bool:
        if isinstance(t, T.UnionT):
            return all(numeric(o) for o in t.options)
        return t in T.NUMERIC or t == T.ANY

    def arithmetic(t: Any) -> bool:
        if isinstance(t, T.UnionT):
            return all(arithmetic(o) for o in t.options)
        return t in T.NUMERIC or t == T.BOOL or t == T.ANY

    def stringy(t: Any) -> bool:
        if isinstance(t, T.UnionT):
            return all(stringy(o) for o in t.options)
        return t == T.STR or isinstance(t, T.EnumT) or t == T.ANY

    seen = set()
    for t in _all_types():
        got = (T.is_numeric(t), T.is_arithmetic(t), T.is_stringy(t))
        assert got == (numeric(t), arithmetic(t), stringy(t)), t
        seen.add(got)
    assert len(seen) >= 4  # the cases are not all alike


def test_every_builtin_argument_kind_has_its_test() -> None:
    from contractsim.dsl.builtins import BUILTINS
    from contractsim.dsl.typecheck import _ARG_KIND_TESTS

    kinds = {kind for b in BUILTINS.values() for kind in b.arg_kinds}
    assert kinds <= set(_ARG_KIND_TESTS)
    assert "num" in kinds and "str" in kinds


def test_span_of_a_tree_without_positions_is_the_file_alone() -> None:
    """``span`` reads a tree's ``_meta`` without lark's property: a tree with no Meta, or an
    empty one, still gives the span of the file alone; a placed one its place."""
    from lark import Tree
    from lark.tree import Meta

    from contractsim.diagnostics import Span
    from contractsim.dsl.lower import _Lowerer

    lowerer = _Lowerer("f.contract")
    assert lowerer.span(Tree("x", [])) == Span(file="f.contract")
    assert lowerer.span(Tree("x", [], Meta())) == Span(  # type: ignore[no-untyped-call]
        file="f.contract"
    )
    placed = Meta()  # type: ignore[no-untyped-call]
    placed.empty = False
    placed.line, placed.column, placed.end_line, placed.end_column = 2, 3, 4, 5
    assert lowerer.span(Tree("x", [], placed)) == Span(
        file="f.contract", line=2, col=3, end_line=4, end_col=5
    )


def test_assignable_unchanged() -> None:
    """``assignable`` answers by class and name first; on every pair of types it gives what
    the ``==`` tests it starts with gave."""
    from contractsim.dsl import types as T

    def reference(value: Any, target: Any) -> bool:
        if value == target or T.ANY in (value, target):
            return True
        if target == T.DYN:
            return T.is_json(value)
        if value == T.DYN:
            return T.covers_json(target)
        # the rest as it is in `types.assignable`, recursing into this reference
        if isinstance(target, T.UnionT):
            if isinstance(value, T.UnionT):
                return all(reference(v, target) for v in value.options)
            return any(reference(value, o) for o in target.options)
        if isinstance(value, T.UnionT):
            return all(reference(v, target) for v in value.options)
        if value == T.INT and target == T.FLOAT:
            return True
        if T.is_stringy(value) and T.is_stringy(target):
            return True
        if isinstance(value, T.EmptyT):
            return isinstance(target, (T.SetT, T.MapT, T.ListT, T.EmptyT))
        for cls in (T.ListT, T.SetT):
            if isinstance(value, cls) and isinstance(target, cls):
                return reference(value.elem, target.elem)
        if isinstance(value, T.MapT) and isinstance(target, T.MapT):
            return reference(value.key, target.key) and reference(value.value, target.value)
        if isinstance(value, T.TupleT) and isinstance(target, T.TupleT):
            return len(value.items) == len(target.items) and all(
                reference(a, b) for a, b in zip(value.items, target.items)
            )
        if isinstance(value, T.RecordT) and isinstance(target, T.RecordT):
            return value.name == target.name
        if isinstance(target, T.TaggedT):
            return isinstance(value, T.RecordT) and any(
                isinstance(v, T.RecordT) and v.name == value.name for _, v in target.variants
            )
        return False

    record = T.RecordT("R", (("a", T.FieldT(T.INT, False, False)),), False)
    types = _all_types()[:60] + [
        T.UnionT((T.DYN, T.INT)),
        T.ListT(T.DYN),
        T.MapT(T.STR, T.DYN),
        T.TaggedT("U", "kind", (("r", record),)),
        T.RecordT("S", (), True),
    ]
    answers = set()
    for value in types:
        for target in types:
            got = T.assignable(value, target)
            assert got == reference(value, target), (value, target)
            answers.add(got)
    assert answers == {True, False}
