"""E0331 beyond tool-level `let`: a `var`, a statement `let`, a `for` variable, a quantifier's or
a comprehension's variable that hides a parameter, state variable, constant, `result`, a
tool-level `let` or an enclosing local."""

from __future__ import annotations

import pytest

from contractsim.api import check_text

HEAD = """contract demo version "1.0.0"
const LIMIT = 3
state {
  count: int = 0
  xs: list[int] = []
}
"""


def hidden(body: str) -> list[tuple[str, int, int, str]]:
    found = check_text(HEAD + body, "t.contract")
    return [
        (d.code, d.span.line - HEAD.count("\n"), d.span.col, d.message)
        for d in found
        if d.severity == "error"
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (  # a quantifier's variable hides a tool-level `let`
            "tool t(x: int) {\n  let w = x + 1\n  require all(w > 0 for w in xs) else NEG\n}\n",
            [(3, 11, "loop variable `w` hides the binding `w`")],
        ),
        (  # a `var` hides a tool-level `let`, a parameter
            "tool t(x: int) {\n  let w = x\n  effect {\n    var w = 2\n    var x = 1\n"
            "    count = w + x\n  }\n}\n",
            [(4, 5, "`var w` hides the binding `w`"), (5, 5, "`var x` hides the parameter `x`")],
        ),
        (  # a `for` variable hides a state variable, a `var` of the enclosing block
            "tool t() {\n  effect {\n    var total = 0\n    for count in xs { total += count }\n"
            "    if total > 0 { for total in xs { count += total } }\n  }\n}\n",
            [
                (4, 5, "loop variable `count` hides the state variable `count`"),
                (5, 20, "loop variable `total` hides the variable `total`"),
            ],
        ),
        (  # a comprehension's (unpacked) variables hide a constant and the result
            "tool t() -> int {\n  effect count = len([i for i, LIMIT in enumerate(xs)])\n"
            "  ensure all(result > 0 for result in xs) else BAD\n}\n",
            [
                (2, 22, "loop variable `LIMIT` hides the constant `LIMIT`"),
                (3, 10, "loop variable `result` hides the result `result`"),
            ],
        ),
        (  # a statement `let` in an outcome's body hides a parameter
            "tool t(x: int) {\n  outcome done success {\n    let x = 1\n    count = x\n  }\n}\n",
            [(3, 5, "`let x` hides the parameter `x`")],
        ),
        (  # predicates and functions: a loop variable hides a parameter
            "predicate p(n: int) = all(n > 0 for n in xs)\n"
            "function f(n: int) -> int = sum(n for n in xs)\ngoal g = p(1) and f(1) > 0\n",
            [
                (1, 23, "loop variable `n` hides the parameter `n`"),
                (2, 29, "loop variable `n` hides the parameter `n`"),
            ],
        ),
    ],
)
def test_a_local_that_hides_a_name_is_e0331(
    body: str, expected: list[tuple[int, int, str]]
) -> None:
    assert hidden(body) == [("E0331", line, col, message) for line, col, message in expected]


def test_locals_that_hide_nothing_are_fine() -> None:
    body = (
        "tool t(x: int) {\n  let w = x + 1\n"
        "  require all(q > 0 for q in xs) and all(q < 9 for q in xs) else NEG\n"
        "  effect {\n    for a in xs { var s = a\n count += s }\n"
        "    for a in xs { var s = a + w\n count += s }\n  }\n}\n"
    )
    assert hidden(body) == []


def test_hint_says_what_to_do() -> None:
    found = check_text(HEAD + "tool t() {\n  effect { for count in xs { } }\n}\n", "t.contract")
    (d,) = [d for d in found if d.code == "E0331"]
    assert d.code == "E0331"
    assert d.hint == (
        "give the loop variable a name of its own; inside the loop `count` would mean two things"
    )


def test_a_local_may_take_a_state_name_the_tool_writes_as_state_name() -> None:
    body = (
        "tool t(n: int) {\n  effect {\n    let count = n * 10\n"
        "    for xs in [[1]] { state.count += count + len(xs) }\n  }\n}\n"
    )
    # `state.count` tells the two `count`s apart; `xs` is never written `state.xs`
    assert hidden(body) == [("E0331", 4, 5, "loop variable `xs` hides the state variable `xs`")]
