"""The front end's fast paths for bulk literals (second speed round, branch s5b-front) change no
result: the types the checker gives literal elements, the values the interpreter computes for
them, and which constants are evaluated are those of the visitor's per-node dispatch."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from contractsim.api import check_text
from contractsim.compiler.consteval import evaluate_constant
from contractsim.compiler.interp import Interpreter
from contractsim.compiler.values import FMap
from contractsim.diagnostics import ContractError, Span
from contractsim.dsl import ir
from contractsim.dsl.lower import lower
from contractsim.dsl.visitor import iter_child_nodes
from contractsim.dsl.walk import all_exprs, replace_nodes
from contractsim.grammar.parse import parse

H = 'contract demo version "1.0.0"\n'


def _errors(text: str) -> list[tuple[str, str, int, int, int]]:
    return [
        (d.code, d.message, d.span.line, d.span.col, d.span.end_col)
        for d in check_text(H + text, "t.contract")
        if d.severity == "error"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'state { x: int = [1, 2.5, null, true, "a"] }\n',
            [
                (
                    "E0301",
                    "`x` is int but its initial value is list[float | bool | str | null]",
                    2,
                    18,
                    43,
                )
            ],
        ),
        (
            'state { x: int = [(1, "b", null), (2, "c", 3.5), (false, "d", null)] }\n',
            [
                (
                    "E0301",
                    "`x` is int but its initial value is list[tuple[int, str, null] | "
                    "tuple[int, str, float] | tuple[bool, str, null]]",
                    2,
                    18,
                    69,
                )
            ],
        ),
        (
            "state { x: int = {[1, 2], [3, 1 + 2], [], [null]} }\n",
            [
                (
                    "E0301",
                    "`x` is int but its initial value is set[list[int] | list[any] | list[null]]",
                    2,
                    18,
                    50,
                )
            ],
        ),
        (
            'const K = 3\nstate { x: int = [K, 2.0, {"a": 1}, {}, {1}] }\n',
            [
                (
                    "E0301",
                    "`x` is int but its initial value is list[float | map[str, int] | set[int]]",
                    3,
                    18,
                    45,
                )
            ],
        ),
        (
            "state { x: int = [unknown_name, (1, 2)] }\n",
            [
                ("E0301", "`x` is int but its initial value is list[any]", 2, 18, 40),
                ("E0201", "unknown name `unknown_name` in an initial value", 2, 19, 31),
            ],
        ),
        (
            "state { x: int = [1.5, 2] }\n",
            [("E0301", "`x` is int but its initial value is list[float]", 2, 18, 26)],
        ),
        (
            'state { x: set[tuple[str, str]] = {("a", "b"), ("c", 1)} }\n',
            [
                (
                    "E0301",
                    "`x` is set[tuple[str, str]] but its initial value is "
                    "set[tuple[str, str] | tuple[str, int]]",
                    2,
                    35,
                    57,
                )
            ],
        ),
    ],
)
def test_literal_elements_are_typed_as_the_visitor_types_them(
    text: str, expected: list[tuple[str, str, int, int, int]]
) -> None:
    assert _errors(text) == expected


def test_literal_elements_are_computed_as_the_visitor_computes_them() -> None:
    text = (
        H + "const K = 3\n"
        'const L = [1, 2.5, null, true, "a", (1, "b"), [1, 2], {3}, K + 1, {}, {"k": [K]}, '
        "{(1, 2), (1, 2)}, [[], [[1]]]]\n"
    )
    contract, diags = lower(parse(text, "t.contract"), "t.contract")
    assert diags == []
    interpreter = Interpreter(contract)
    k = evaluate_constant(interpreter, contract.consts[0].value, {})
    value = evaluate_constant(interpreter, contract.consts[1].value, {"K": k})
    assert value == (
        1,
        2.5,
        None,
        True,
        "a",
        (1, "b"),
        (1, 2),
        frozenset({3}),
        4,
        frozenset(),
        FMap([("k", (3,))]),
        frozenset({(1, 2)}),
        ((), ((1,),)),
    )
    assert [type(v) for v in value[:5]] == [int, float, type(None), bool, str]


def test_a_constant_naming_a_failed_one_is_not_evaluated_and_others_are() -> None:
    found = [
        (d.code, d.message)
        for d in check_text(
            H + "const K = 1 // 0\nconst J = [K, 1]\nconst M = [1 // 0]\n"
            "state { n: int = 0 }\ntool t() { effect n = len(J) + len(M) }\n",
            "t.contract",
        )
        if d.severity == "error"
    ]
    assert found == [
        ("E0414", "constant `K` cannot be computed: division by zero"),
        ("E0414", "constant `M` cannot be computed: division by zero"),
    ]


def _replace_reference(node: object, table: dict[int, ir.Node]) -> object:
    """``replace_nodes`` as it was before the fast path: every field and item looked up."""
    found = table.get(id(node))
    if found is not None:
        return found
    if isinstance(node, Span):
        return node
    if isinstance(node, ir.Node):
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            new = _replace_reference(value, table)
            if new is not value:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node  # type: ignore[type-var]
    if isinstance(node, tuple):
        items = tuple(_replace_reference(item, table) for item in node)
        return items if any(a is not b for a, b in zip(items, node)) else node
    return node


def _sources() -> list[Path]:
    root = Path(__file__).resolve().parent.parent
    return sorted(root.glob("examples/*/*.contract")) + sorted(
        (root / "tests" / "golden").glob("*.contract")
    )


def test_replace_nodes_matches_the_field_by_field_walk() -> None:
    compared = 0
    for path in _sources():
        text = path.read_text("utf-8")
        try:
            contract, _ = lower(parse(text, path.name), path.name)
        except ContractError:
            continue  # golden files of syntax errors
        # replace every third name and every empty literal by a marker node
        table: dict[int, ir.Node] = {}
        for i, e in enumerate(all_exprs(contract)):
            if (isinstance(e, ir.Name) and i % 3 == 0) or (
                isinstance(e, ir.Collection) and e.type == "empty"
            ):
                table[id(e)] = ir.Name(span=e.span, name=f"marker_{i}")
        new = replace_nodes(contract, table)
        old = _replace_reference(contract, table)
        assert new == old, path
        assert (new is contract) == (not table), path
        # the parts that do not change are shared, as before
        assert [t is u for t, u in zip(new.tools, contract.tools)] == [
            t is u
            for t, u in zip(old.tools, contract.tools)  # type: ignore[attr-defined]
        ], path
        compared += 1
    assert compared > 40


def _children_reference(node: ir.Node) -> list[ir.Node]:
    """``iter_child_nodes`` as it was before it skipped fields declared as plain values."""
    out: list[ir.Node] = []
    for f in dataclasses.fields(node):
        if f.name in ("span", "kind"):
            continue
        value = getattr(node, f.name)
        if isinstance(value, ir.Node):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(item for item in value if isinstance(item, ir.Node))
    return out


def test_child_nodes_are_those_of_the_field_by_field_walk() -> None:
    visited = 0
    for path in _sources():
        try:
            contract, _ = lower(parse(path.read_text("utf-8"), path.name), path.name)
        except ContractError:
            continue
        stack: list[ir.Node] = [contract]
        while stack:
            node = stack.pop()
            children = list(iter_child_nodes(node))
            expected = _children_reference(node)
            assert len(children) == len(expected), (path, node)
            assert all(a is b for a, b in zip(children, expected)), (path, node)
            stack.extend(children)
            visited += 1
    assert visited > 5_000


def test_the_interpreter_finds_the_contract_texts_on_first_use() -> None:
    from contractsim.compiler.interp import contract_texts

    text = (
        H + 'type Color = enum { red, "dark blue" }\nconst K = "k"\n'
        'state { n: str = "start" }\ntool t(c: Color) { effect n = "x" + K }\n'
    )
    contract, _ = lower(parse(text, "t.contract"), "t.contract")
    interpreter = Interpreter(contract)
    assert "texts" not in vars(interpreter)
    assert interpreter.texts == contract_texts(contract)
    assert interpreter.texts == frozenset({"red", "dark blue", "k", "x"})
    assert interpreter.texts is interpreter.texts
