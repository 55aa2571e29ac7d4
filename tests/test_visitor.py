"""The one IR visitor: children are found from the models' fields, and every pass that walks
expressions or statements handles every kind of ``dsl/ir.py`` (or says it handles it generically).

When you add an expression or statement kind, ``test_every_pass_handles_every_kind`` names each
pass that has no ``visit_<Kind>`` method for it: write one, or list the kind in that pass's
``generic`` set below if the pass's ``generic_visit`` already does the right thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from contractsim.compiler.codegen import CodeGen
from contractsim.compiler.interp import Interpreter
from contractsim.dsl import ir
from contractsim.dsl.pretty import Printer
from contractsim.dsl.typecheck import Checker
from contractsim.dsl.visitor import (
    EXPR_KINDS,
    STMT_KINDS,
    NodeVisitor,
    child_exprs,
    handled_kinds,
    iter_child_nodes,
)
from contractsim.dsl.walk import all_exprs, stmt_exprs, walk_expr, walk_stmts
from contractsim.render.deps import _AtomFinder


@dataclass(frozen=True)
class Pass:
    """A pass over the IR: its visitor, which kinds it must cover, and the kinds its
    ``generic_visit`` handles on purpose (each with the reason)."""

    name: str
    visitor: type[NodeVisitor]
    kinds: Literal["expressions", "statements", "both"]
    generic: dict[str, str] = field(default_factory=dict)


PASSES = (
    Pass("type checking (dsl/typecheck.py Checker)", Checker, "both"),
    Pass("pretty printing (dsl/pretty.py Printer)", Printer, "expressions"),
    Pass("code generation (compiler/codegen.py CodeGen)", CodeGen, "both"),
    # constant evaluation (dsl/check.py) runs this interpreter too
    Pass("reference interpreter (compiler/interp.py Interpreter)", Interpreter, "both"),
    Pass(
        "dependency view (render/deps.py _AtomFinder)",
        _AtomFinder,
        "expressions",
        generic={
            "ScalarLit": "a constant alone is no atom about the state",
            "Attr": "a field of a state variable is not tracked",
            "Index": "an entry of a state variable is not tracked",
            "Collection": "a collection literal is no condition",
            "MapLit": "a map literal is no condition",
            "Comprehension": "a comprehension builds a collection, it is no condition",
            "Conditional": "which branch holds depends on its condition: no single fact",
            "TypeTest": "a type test is no fact about a state variable's value the view draws",
            "UnknownIn": "a bounded unknown is an assigned value, no condition",
        },
    ),
)


def ir_kinds(scope: str, expr_kinds: tuple[type, ...], stmt_kinds: tuple[type, ...]) -> list[str]:
    kinds: list[type] = []
    if scope in ("expressions", "both"):
        kinds += expr_kinds
    if scope in ("statements", "both"):
        kinds += stmt_kinds
    return [k.__name__ for k in kinds]


def missing_cases(
    passes: tuple[Pass, ...],
    expr_kinds: tuple[type, ...] = EXPR_KINDS,
    stmt_kinds: tuple[type, ...] = STMT_KINDS,
) -> list[str]:
    """One line per (pass, IR kind) that the pass neither visits nor lists as generic."""
    out: list[str] = []
    for p in passes:
        handled = handled_kinds(p.visitor)
        for kind in ir_kinds(p.kinds, expr_kinds, stmt_kinds):
            if kind not in handled and kind not in p.generic:
                out.append(
                    f"{p.name} does not handle the IR kind {kind}: add visit_{kind}, or list "
                    f"{kind} in its `generic` set in tests/test_visitor.py with the reason"
                )
    return out


def test_every_pass_handles_every_kind() -> None:
    missing = missing_cases(PASSES)
    assert not missing, "\n".join(missing)


def test_generic_exemptions_are_still_needed() -> None:
    for p in PASSES:
        for kind in p.generic:
            assert kind in ir_kinds(p.kinds, EXPR_KINDS, STMT_KINDS), (p.name, kind)
            assert kind not in handled_kinds(p.visitor), (
                f"{p.name} has visit_{kind}: drop {kind} from its generic set"
            )


def test_completeness_check_names_each_pass_missing_a_new_kind() -> None:
    """Proof the test above catches a forgotten case: a new expression kind is missing from every
    pass, a new statement kind from the passes over statements, and each is named."""

    class Abs2(ir.Node):
        kind: Literal["abs2"] = "abs2"
        operand: ir.Expr

    class Assert(ir.Node):
        kind: Literal["assert"] = "assert"
        cond: ir.Expr

    missing = missing_cases(PASSES, EXPR_KINDS + (Abs2,), STMT_KINDS + (Assert,))
    new = [m for m in missing if m not in missing_cases(PASSES)]
    assert [m for m in new if " Abs2:" in m] == [
        f"{p.name} does not handle the IR kind Abs2: add visit_Abs2, or list Abs2 in its "
        "`generic` set in tests/test_visitor.py with the reason"
        for p in PASSES
    ]
    assert [m.split(" does not")[0] for m in new if " Assert:" in m] == [
        p.name for p in PASSES if p.kinds == "both"
    ]
    assert len(new) == len(PASSES) + 3


# ---------------------------------------------------------------------------------- the visitor


def _n(name: str) -> ir.Name:
    return ir.Name(name=name)


def test_children_come_from_the_fields_in_order() -> None:
    call = ir.Call(
        func="f",
        args=(_n("a"), _n("b")),
        kwargs=(ir.KeywordArg(name="k", value=_n("c")),),
    )
    assert [type(c).__name__ for c in iter_child_nodes(call)] == ["Name", "Name", "KeywordArg"]
    # helper nodes between expressions (keyword arguments, map entries) are looked through
    assert [e.name for e in child_exprs(call)] == ["a", "b", "c"]  # type: ignore[union-attr]
    m = ir.MapLit(entries=(ir.MapEntry(key=_n("k"), value=_n("v")),))
    assert [e.name for e in walk_expr(m) if isinstance(e, ir.Name)] == ["v", "k"]


def test_statement_children() -> None:
    inner = ir.Let(name="x", value=_n("y"))
    s = ir.If(cond=_n("c"), then=(inner,), orelse=(ir.Report(fields=()),))
    assert list(walk_stmts([s])) == [s, inner, s.orelse[0]]
    assert [e.name for e in stmt_exprs(s)] == ["c"]  # type: ignore[union-attr]
    warn = ir.Warn(
        code="W1",
        message=ir.Template(source="{a}", parts=(ir.TemplatePart(expr=_n("a")),)),
    )
    assert [e.name for e in stmt_exprs(warn)] == ["a"]  # type: ignore[union-attr]


def test_dispatch_and_generic_fallback() -> None:
    class Names(NodeVisitor):
        def __init__(self) -> None:
            self.seen: list[str] = []

        def visit_Name(self, e: ir.Name) -> None:
            self.seen.append(e.name)

    v = Names()
    v.visit(ir.Binary(op="+", left=_n("a"), right=ir.Unary(op="-", operand=_n("b"))))
    assert v.seen == ["a", "b"]


def test_all_exprs_reaches_every_kind_in_the_examples() -> None:
    from pathlib import Path

    from contractsim import load

    seen: set[str] = set()
    for path in sorted(Path(__file__).parent.parent.joinpath("examples").rglob("*.contract")):
        seen |= {type(e).__name__ for e in all_exprs(load(path).ir)}
    unused = {k.__name__ for k in EXPR_KINDS} - seen
    assert not unused, f"no contract in examples/ uses the IR kind(s) {sorted(unused)}: add one"


@pytest.mark.parametrize("p", PASSES, ids=lambda p: p.visitor.__name__)
def test_generic_visit_of_an_unhandled_kind(p: Pass) -> None:
    """A pass with no generic cases refuses an unknown node loudly rather than skipping it."""

    class Unknown(ir.Node):
        kind: Literal["unknown"] = "unknown"

    if p.generic:
        return
    with pytest.raises(TypeError, match="Unknown"):
        p.visitor.generic_visit(object.__new__(p.visitor), Unknown())
