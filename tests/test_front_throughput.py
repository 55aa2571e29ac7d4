"""The front end's fast paths for bulk literals (second speed round, branch s5b-front) change no
result: the types the checker gives literal elements, the values the interpreter computes for
them, and which constants are evaluated are those of the visitor's per-node dispatch."""

from __future__ import annotations

import pytest

from contractsim.api import check_text
from contractsim.compiler.consteval import evaluate_constant
from contractsim.compiler.interp import Interpreter
from contractsim.compiler.values import FMap
from contractsim.dsl.lower import lower
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
