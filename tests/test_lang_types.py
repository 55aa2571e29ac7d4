"""Dynamically typed tools (issue 15, items 1–5): type tests with narrowing (`x is T`), the `any`
type, Python numbers (`number`, bool as a number), `truthy(x)` and tool-level `let`, at every
stage: parsing, checking, the three evaluators, simulation verdicts and exports."""

from __future__ import annotations

from typing import Any

import pytest

import contractsim
from contractsim import UNKNOWN
from contractsim.api import check_text
from contractsim.compiler import lib
from contractsim.compiler.compile import make_context
from contractsim.compiler.interp import Env, Interpreter
from contractsim.compiler.typetest import type_test
from contractsim.compiler.validators import json_value
from contractsim.compiler.values import FMap, Fresh
from contractsim.diagnostics import Diagnostic
from contractsim.dsl import ir
from contractsim.dsl.lower import lower
from contractsim.grammar.parse import parse

H = 'contract demo version "1.0.0"\n'


def diags(text: str) -> list[Diagnostic]:
    return check_text(H + text, "t.contract")


def found(text: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in diags(text)]


def clean(text: str) -> None:
    assert found(text) == []


def verdicts(text: str, *plan: tuple[str, dict[str, Any]]) -> list[tuple[str, list[str]]]:
    sim = contractsim.loads(H + text).simulator(now="2024-06-01T12:00:00Z")
    report = sim.run([{"tool": t, "args": a} for t, a in plan])
    return [(s.verdict, [v.code for v in s.violations]) for s in report.steps]


# ---------------------------------------------------------------------------------- parsing


def lowered(text: str) -> ir.Contract:
    contract, problems = lower(parse(H + text, "t.contract"), "t.contract")
    assert problems == []
    return contract


def test_type_tests_parse_with_comparison_precedence() -> None:
    c = lowered("tool t(x: any, y: bool) { require x is str and y else E }\n")
    cond = c.tools[0].conditions[0].cond
    assert isinstance(cond, ir.Binary) and cond.op == "and"
    test = cond.left
    assert isinstance(test, ir.TypeTest) and not test.negated
    assert test.type == ir.NamedType(name="str")


def test_negated_and_generic_and_union_type_tests_parse() -> None:
    c = lowered("tool t(x: any) { require x is not list[int] or x is int | str else E }\n")
    cond = c.tools[0].conditions[0].cond
    assert isinstance(cond, ir.Binary) and cond.op == "or"
    assert isinstance(cond.left, ir.TypeTest) and cond.left.negated
    assert cond.left.type == ir.GenericType(name="list", args=(ir.NamedType(name="int"),))
    assert isinstance(cond.right, ir.TypeTest)
    assert isinstance(cond.right.type, ir.UnionType)


def test_tool_lets_are_lowered_in_order() -> None:
    c = lowered(
        "tool t(s: str) {\n  let f = float(s)\n  let g = f\n  require g != null else E\n}\n"
    )
    assert [let.name for let in c.tools[0].lets] == ["f", "g"]
    assert c.tools[0].lets[0].value == ir.Call(func="float", args=(ir.Name(name="s"),))


# ---------------------------------------------------------------------------- type checking


def test_narrowing_on_the_right_of_and() -> None:
    clean("tool t(v: any) { require v is str and len(v) > 2 else E }\n")


def test_narrowing_on_the_right_of_or_by_the_negated_left() -> None:
    clean("tool t(v: any) { require v is not str or len(v) > 2 else E }\n")
    clean("tool t(v: any) { require not (v is int) or v > 2 else E }\n")


def test_narrowing_inside_if_bodies() -> None:
    clean(
        'state { n: int = 0, s: str = "" }\n'
        "tool t(v: any) { effect { if v is int { n = v } else { if v is str { s = v } } } }\n"
    )


def test_narrowing_in_later_clauses_after_require() -> None:
    clean(
        "state { n: int = 0 }\n"
        "tool t(v: any) {\n"
        "  require v is int else NOT_INT\n"
        "  require v > 0 else NEG\n"
        '  ensure n == old(n) + v else BROKE "{v + 1}"\n'
        "  effect { n = n + v }\n"
        "}\n"
    )


def test_no_narrowing_without_the_test() -> None:
    got = found("tool t(v: any) { require v > 0 else NEG }\n")
    assert got == [("E0301", "`>` compares numbers or strings, not any and int")]
    assert diags("tool t(v: any) { require v > 0 else NEG }\n")[0].hint == (
        "narrow it with a type test first: `v is T and …`, T the type needed here"
    )


def test_narrowing_a_union_and_a_field_path() -> None:
    clean("tool t(x: int | str) { require x is int and x > 0 or x is str and len(x) > 0 else E }\n")
    clean(
        "type R = record { v?: int | str }\n"
        "tool t(r: R) { require r.v is int and r.v > 3 else E }\n"
    )


def test_not_null_is_a_type_fact_too() -> None:
    clean("tool t(x: int | null) { require x != null and x > 0 else E }\n")
    clean("tool t(x: int | null) { require x is not null and x > 0 else E }\n")
    clean("tool t(x?: int) {\n  require x != null else E\n  require x > 0 else F\n}\n")


def test_narrowing_of_state_is_not_carried_into_effects() -> None:
    # after `require s is int`, an effect may still store what `s` is declared to hold
    clean(
        "state { s: int | str = 0 }\n"
        'tool t() {\n  require s is int and s > 0 else E\n  effect { s = "x" }\n}\n'
    )


def test_type_test_never_true_and_always_true_warn() -> None:
    assert found("tool t(n: int) { require n is str else E }\n") == [
        ("W0630", "`n is str` is always false: `n` is int")
    ]
    assert found("tool t(n: int) { require n is not str else E }\n") == [
        ("W0630", "`n is not str` is always true: `n` is int")
    ]
    assert found("tool t(n: int) { require n is number else E }\n") == [
        ("W0631", "`n is number` is always true: `n` is int")
    ]
    # a bool is not an int, an int is a float; constraints make a test worth writing
    clean("tool t(n: int | bool) { require n is int else E }\n")
    clean('tool t(s: str) { require s is str pattern r"^a" else E }\n')


def test_bare_collections_and_named_types_in_type_tests() -> None:
    clean(
        "type Rec = record { a: int }\n"
        "type Color = enum { red, green }\n"
        "type Json = null | bool | int | float | str | list[Json] | map[str, Json]\n"
        "tool t(v: any) {\n"
        "  require v is list and len(v) > 0 or v is map or v is set[int] else A\n"
        "}\n"
        "tool u(v: any) {\n"
        "  require v is Rec or v is Color or v is Json else B\n"
        "}\n"
    )
    # after `require A or B`, a later clause sees what either side narrowed to
    narrowed = found(
        "type Color = enum { red, green }\n"
        "tool t(v: any) {\n"
        "  require v is list or v is map else A\n"
        "  require v is Color else B\n"
        "}\n"
    )
    assert narrowed == [("W0630", "`v is Color` is always false: `v` is list[any] | map[any, any]")]
    assert found("tool t(v: any) { require v is Nope else E }\n")[0][0] == "E0202"


def test_any_is_usable_everywhere_a_type_is() -> None:
    clean(
        "type Doc = record { id: str, body: any }\n"
        "const DEFAULT: any = 3\n"
        "state { docs: list[Doc] = [], seen: map[str, any] = {}, last: any = unknown }\n"
        "tool put(id: str, body: any, tags: list[any] = []) -> any {\n"
        '  require id != "" else EMPTY\n'
        '  require body == DEFAULT or str(body) != "" or truthy(tags) else W\n'
        '  effect { docs.append(Doc(id=id, body=body)); seen[id] = result; last = [1, "a"] }\n'
        "}\n"
    )


def test_any_needs_a_type_test_before_use() -> None:
    got = found(
        "state { n: int = 0 }\n"
        "tool t(v: any) {\n"
        '  require v.name == "a" else A\n'
        "  require v[0] == 1 else B\n"
        "  require -v < 0 else C\n"
        "  effect { n = v }\n"
        "}\n"
    )
    assert got == [
        ("E0209", "any has no fields (looked up `name`)"),
        ("E0306", "any cannot be indexed"),
        ("E0301", "`-` needs a number, got any"),
        ("E0301", "cannot assign any to `n` of type int"),
    ]


def test_recursive_json_union_holds_any_values() -> None:
    clean(
        "type Json = null | bool | int | float | str | list[Json] | map[str, Json]\n"
        "type Doc = record { body: Json }\n"
        "state { last: Json = null, docs: list[Doc] = [] }\n"
        "tool t(v: any) -> Json { effect { last = v; docs.append(Doc(body=result)) } }\n"
    )


def test_python_numbers_typecheck() -> None:
    clean(
        "state { n: number = 0, i: int = 0 }\n"
        "tool t(b: bool, x: number) {\n"
        "  require b + 1 == 2 and b < 3 and x * 2 > 0 and -b <= 0 else E\n"
        "  effect { n = x + b; i = b + 1 }\n"
        "}\n"
    )
    assert found("state { i: int = 0 }\ntool t(x: number) { effect { i = x } }\n") == [
        ("E0301", "cannot assign number to `i` of type int")
    ]


def test_tool_let_narrows_on_its_name() -> None:
    clean(
        "tool set_speed(speed: str) {\n"
        "  let f = float(speed)\n"
        '  require f != null and f % 5 == 0 else NOT_MULTIPLE "speed {f} is not a multiple of 5"\n'
        "}\n"
    )
    got = found("tool t(speed: str) {\n  let f = float(speed)\n  require f % 5 == 0 else E\n}\n")
    assert [code for code, _ in got] == ["E0301"]


def test_tool_let_after_a_clause_and_shadowing_are_errors() -> None:
    got = found(
        "state { count: int = 0 }\n"
        "tool t(speed: str) {\n"
        "  let speed = 1\n"
        "  let count = 2\n"
        "  let a = 1\n"
        "  let a = 2\n"
        "  require count > 0 else E\n"
        "  let late = 3\n"
        "}\n"
    )
    assert got == [
        ("E0331", "`let speed` hides the parameter `speed`"),
        ("E0331", "`let count` hides the state variable `count`"),
        ("E0331", "`let a` hides the binding `a`"),
        ("E0330", "`let late` comes after a clause of tool `t`"),
    ]


def test_tool_let_sees_no_result_nor_fresh() -> None:
    codes = [c for c, _ in found("tool t() -> str {\n  let result = 1\n}\n")]
    assert codes == ["E0331"]
    codes = [c for c, _ in found("tool t() -> str {\n  let r = result\n}\n")]
    assert codes == ["E0307"]
    codes = [c for c, _ in found('tool t() {\n  let r = fresh("id")\n}\n')]
    assert codes == ["E0304"]


# ------------------------------------------------------------ semantics: the three evaluators

TYPES = (
    "type Rec = record { a: int, b?: str }\n"
    "type Color = enum { red, green }\n"
    "type Json = null | bool | int | float | str | list[Json] | map[str, Json]\n"
    "type Shape = union by kind { circle: Circle, square: Square }\n"
    "type Circle = record { r: float }\n"
    "type Square = record { side: float }\n"
)

CASES: list[tuple[str, Any, Any]] = [
    ("int", 1, True),
    ("int", True, False),  # a bool is not an int in a type test (as in argument validation)
    ("int", 1.0, False),
    ("float", 1, True),  # an int is a float (as everywhere a float is expected)
    ("float", False, False),
    ("number", 2.5, True),
    ("number", True, False),
    ("bool", False, True),
    ("str", "", True),
    ("str", Fresh("id", 1), True),
    ("null", None, True),
    ("null", 0, False),
    ("list", (1, "a"), True),
    ("list[int]", (1, 2), True),
    ("list[int]", (1, "a"), False),
    ("list[int]", (1, UNKNOWN), UNKNOWN),
    ("list[int]", ("a", UNKNOWN), False),
    ("set[str]", frozenset({"a"}), True),
    ("map", FMap({"a": 1}), True),
    ("map[str, int]", FMap({"a": "x"}), False),
    ("Rec", FMap({"a": 1}), True),
    ("Rec", FMap({"a": 1, "b": None}), True),
    ("Rec", FMap({"a": 1, "c": 2}), False),
    ("Rec", FMap({"b": "x"}), False),
    ("Color", "red", True),
    ("Color", "blue", False),
    ("Color", Fresh("id", 1), UNKNOWN),
    ("Json", FMap({"x": (1, FMap({"y": None}))}), True),
    ("Json", frozenset(), False),
    ("Shape", FMap({"kind": "circle", "r": 1.0}), True),
    ("Shape", FMap({"kind": "circle", "side": 1.0}), False),
    ("int | str", "a", True),
    ('str pattern r"^a"', "abc", True),
    ('str pattern r"^a"', "bc", False),
    ('str pattern r"^a"', Fresh("id", 2), UNKNOWN),
    ("int min 0 max 9", 10, False),
    ("any", FMap(), True),
    ("int", UNKNOWN, UNKNOWN),
]


@pytest.mark.parametrize(("tested", "value", "expected"), CASES)
@pytest.mark.parametrize("negated", [False, True])
def test_every_evaluator_agrees_on_type_tests(
    tested: str, value: Any, expected: Any, negated: bool
) -> None:
    op = "is not" if negated else "is"
    text = (
        H
        + TYPES
        + "state { v: any = null }\n"
        + f'goal g = v {op} {tested}\ntool t() {{ require v {op} {tested} else E "x" }}\n'
    )
    c = contractsim.loads(text)
    want = expected if not negated else (UNKNOWN if expected is UNKNOWN else not expected)
    state = list(c.compiled.initial)
    state[c.compiled.slots["v"]] = value
    goal = c.compiled.goals["g"]
    ctx = make_context("2024-06-01", "2024-06-01T00:00:00.000Z")
    assert goal.safe(tuple(state), {}, None, tuple(state), ctx) is want
    if value is not UNKNOWN and expected is not UNKNOWN:
        assert goal.fast(tuple(state), {}, None, tuple(state), ctx) is want
    env = Env(c.ir, state={"v": value}, safe=True)
    assert Interpreter(c.ir).eval(goal.ir, env) is want


def test_type_test_is_three_valued_over_unknown_state() -> None:
    text = "state { v: any = unknown }\ntool t() { require v is str else NOT_STR }\n"
    assert verdicts(text, ("t", {})) == [("may_fail", ["NOT_STR"])]


def test_truthy_follows_python() -> None:
    for value, want in [
        (None, False),
        (0, False),
        (0.0, False),
        ("", False),
        ((), False),
        (FMap(), False),
        (frozenset(), False),
        ("0", True),
        ((None,), True),
        (-1, True),
        (Fresh("id", 3), True),  # a fresh id is a non-empty value
    ]:
        assert lib.BUILTIN_FUNCS["truthy"](value) is want, value
        assert lib.SAFE_FUNCS["truthy"](value) is want, value
    assert lib.SAFE_FUNCS["truthy"](UNKNOWN) is UNKNOWN


def test_python_number_semantics_at_run_time() -> None:
    text = (
        'state { b: bool = true, a: any = "7" }\n'
        "tool t() {\n"
        "  require b + 1 == 2 else PLUS\n"
        "  require 1 == 1.0 else FLOAT_EQ\n"
        "  require 0 == false else BOOL_EQ\n"
        "  require a != 7 else STR_EQ\n"
        "  require b < 2 else ORDER\n"
        "}\n"
    )
    assert verdicts(text, ("t", {})) == [("ok", [])]


# -------------------------------------------------------------------------- simulation verdicts

SPEED = (
    "state { speed: number = 0 }\n"
    "tool set_speed(value: any) {\n"
    "  let f = float(str(value))\n"
    '  require value is str or value is number else BAD_TYPE "got {value}"\n'
    "  require value is not bool else FLAG\n"
    '  require f != null and f % 5 == 0 else NOT_MULTIPLE "speed {f}"\n'
    "  effect { speed = f }\n"
    "}\n"
)


def test_set_speed_accepts_numbers_and_numeric_strings() -> None:
    assert verdicts(SPEED, ("set_speed", {"value": "55"}), ("set_speed", {"value": 60})) == [
        ("ok", []),
        ("ok", []),
    ]
    assert verdicts(SPEED, ("set_speed", {"value": 57})) == [("fails", ["NOT_MULTIPLE"])]
    assert verdicts(SPEED, ("set_speed", {"value": [5]})) == [
        ("fails", ["BAD_TYPE", "NOT_MULTIPLE"])
    ]
    assert verdicts(SPEED, ("set_speed", {"value": True})) == [
        ("fails", ["BAD_TYPE", "FLAG", "NOT_MULTIPLE"])
    ]


def test_a_later_rule_that_cannot_be_evaluated_after_a_failed_one_is_not_reported() -> None:
    text = (
        "type Rec = record { a: int }\n"
        "tool h(v: any) {\n"
        "  require v is Rec else NOT_REC\n"
        "  require v.a > 0 else NEG\n"
        "}\n"
    )
    assert verdicts(text, ("h", {"v": {"a": 1}})) == [("ok", [])]
    assert verdicts(text, ("h", {"v": {"a": -1}})) == [("fails", ["NEG"])]
    assert verdicts(text, ("h", {"v": {"b": 1}})) == [("fails", ["NOT_REC"])]


def test_tool_let_in_effects_keeps_the_value_before_the_call() -> None:
    text = (
        "state { n: int = 1, before: int = 0 }\n"
        "tool t() {\n"
        "  let was = n\n"
        "  ensure before == was and n == was + 1 else BROKE\n"
        "  effect { n = n + 1; before = was }\n"
        "}\n"
    )
    c = contractsim.loads(H + text)
    report = c.simulator().run([{"tool": "t", "args": {}}, {"tool": "t", "args": {}}])
    assert report.verdict == "ok"
    assert [p.state.to_json() for p in report.paths] == [{"n": 3, "before": 2}]


def test_truthy_reads_flags_like_python() -> None:
    text = (
        "state { stored: int = 0 }\n"
        "tool store(dry_run: any = false) { effect { if not truthy(dry_run) { stored += 1 } } }\n"
    )
    c = contractsim.loads(H + text)
    sim = c.simulator()
    # 0, "", [] and null are falsy: four calls store, two ("yes", 1) are dry runs
    plan = [{"tool": "store", "args": {"dry_run": v}} for v in (0, "", [], "yes", 1, None)]
    report = sim.run(plan)
    assert [p.state.to_json() for p in report.paths] == [{"stored": 4}]


def test_any_arguments_are_frozen_json_and_other_values_are_refused() -> None:
    assert json_value({"a": [1, {"b": None}]}) == FMap({"a": (1, FMap({"b": None}))})
    with pytest.raises(Exception, match="not a JSON value: set"):
        json_value({"a": {1, 2}})
    with pytest.raises(Exception, match="string keys"):
        json_value({1: "a"})


def test_type_test_helper_on_recursive_types() -> None:
    types = {"Json": ("union", (("null",), ("list", ("named", "Json"))))}
    assert type_test(((None,), ()), ("named", "Json"), types) is True
    assert type_test(((1,),), ("named", "Json"), types) is False


# ------------------------------------------------------------------------------------ exports


def test_any_and_number_export_as_json_schema() -> None:
    c = contractsim.loads(
        H + "tool t(v: any, n: number, vs: list[any]) { require n > 0 or v == null else E }\n"
    )
    schema = c.export("jsonschema")
    assert isinstance(schema, dict)
    props = schema["t"]["properties"]
    assert props == {
        "v": {},
        "n": {"type": "number"},
        "vs": {"type": "array", "items": {}},
    }
    card = c.export("card", "t")
    assert isinstance(card, str) and "t(v: any, n: number, vs: list[any])" in card


EVERYWHERE = """contract everywhere version "1.0.0"
state { log: list[any] = [], mode: any = "idle", n: number = 0 }
predicate texty(x: any) = x is str and len(x) > 0
goal logged = all(e is int or truthy(e) for e in log)
tool put(v: any) {
  let size = len(str(v))
  require texty(v) or v is number else BAD "cannot store {v} ({size} chars)"
  should not (v is str) or size < 10 else LONG "long: {size}"
  ensure len(log) == len(old(log)) + 1 else BROKE
  effect { log.append(v); if v is number { n = n + v } }
  outcome small success when size < 3 { mode = "small" }
  outcome big success "stored {size} chars" { mode = size }
}
tool reset() { effect { log = [] } }
machine m {
  states idle, busy
  initial idle
  idle -> busy on put when mode is str
  busy -> idle on reset
  busy -> busy on put
}
"""


def test_type_tests_truthy_and_let_work_in_every_position() -> None:
    """Predicates, goals, require/should/ensure, messages, effects, outcome `when` and bodies,
    machine guards."""
    c = contractsim.loads(EVERYWHERE)
    assert c.warnings == []
    sim = c.simulator()
    plan = [
        {"tool": "put", "args": {"v": "ab"}},  # small: mode "small"
        {"tool": "put", "args": {"v": 12.5}},  # big: mode 4 (a number)
        {"tool": "reset", "args": {}},
        {"tool": "put", "args": {"v": "hello world!"}},  # the guard `mode is str` is false
    ]
    report = sim.run(plan)
    assert [(s.verdict, [v.code for v in s.violations]) for s in report.steps] == [
        ("ok", []),
        ("ok", []),
        ("ok", []),
        ("fails", ["PROTOCOL_VIOLATION"]),
    ]
    report = sim.run([{"tool": "put", "args": {"v": [1]}}])
    assert [v.message for v in report.steps[0].violations] == ["cannot store [1] (3 chars)"]
    report = sim.run(
        [{"tool": "put", "args": {"v": "abcd"}}, {"tool": "put", "args": {"v": 5}}], goal="logged"
    )
    assert report.verdict == "ok"
    assert [p.state.to_json()["n"] for p in report.paths] == [5]


def test_number_arguments_keep_their_type_and_refuse_bool_and_text() -> None:
    c = contractsim.loads(H + "state { s: number = 0 }\ntool t(n: number) { effect { s = n } }\n")
    sim = c.simulator()
    for value, state in ((1, {"s": 1}), (1.5, {"s": 1.5})):
        report = sim.run([{"tool": "t", "args": {"n": value}}])
        assert [p.state.to_json() for p in report.paths] == [state]
        assert type(report.paths[0].state.to_json()["s"]) is type(value)
    for value, shown in ((True, "true"), ("1", '"1"')):
        report = sim.run([{"tool": "t", "args": {"n": value}}])
        assert [v.message for v in report.steps[0].violations] == [
            f"t: `args.n`: must be a number (got {shown})"
        ]


def test_explanations_leave_out_the_right_of_a_false_and_that_cannot_be_evaluated() -> None:
    c = contractsim.loads(H + SPEED)
    report = c.simulator().run([{"tool": "set_speed", "args": {"value": True}}])
    (violation,) = [v for v in report.steps[0].violations if v.code == "NOT_MULTIPLE"]
    assert violation.values == (("float(str(value))", "null"),)


def test_guard_with_any_arguments_and_results() -> None:
    c = contractsim.loads(
        H
        + "state { last: any = null }\n"
        + "tool t(v: any) -> any { require v is not null else NULL  effect { last = result } }\n"
    )
    guard = c.guard(mode="return")
    echo = guard.wrap("t", lambda v: {"echo": v})
    assert echo(v=[1, {"a": None}]).ok
    assert guard.state.to_json() == {"last": {"echo": [1, {"a": None}]}}
    refused = echo(v=None)
    assert not refused.ok and refused.error is not None and refused.error.code == "NULL"
    wrong = echo(v={1, 2})
    assert wrong.error is not None and wrong.error.code == "INVALID_ARGUMENT"
    assert wrong.error.message == "t: `args.v`: not a JSON value: set (got {1, 2})"


def test_bools_are_numbers_in_negation_sum_and_augmented_assignment() -> None:
    text = (
        "state { flags: list[bool] = [true, true, false], n: int = 0 }\n"
        "tool t(b: bool) {\n"
        "  require sum(f for f in flags) == 2 and -b == -1 else ARITH\n"
        "  effect { n += b }\n"
        "}\n"
    )
    assert verdicts(text, ("t", {"b": True}), ("t", {"b": True})) == [("ok", []), ("ok", [])]
    c = contractsim.loads(H + text)
    report = c.simulator().run([{"tool": "t", "args": {"b": True}}])
    assert [p.state.to_json()["n"] for p in report.paths] == [1]
    assert lib.neg(True) == -1


def test_type_tests_narrow_in_conditionals_and_comprehension_filters() -> None:
    clean(
        "predicate longer(v: any) = (len(v) if v is str else 0) > 1\n"
        "predicate texts(xs: list[any]) = all(len(x) > 0 for x in xs if x is str)\n"
        "tool t(tags: any) {\n"
        "  require tags is str or tags is list[str] else BAD\n"
        "  require longer(tags) or texts([tags]) else SHORT\n"
        '  effect { for t in ([tags] if tags is str else tags) { warn SEEN "{len(t)}" } }\n'
        "}\n"
    )
    codes = [c for c, _ in found("predicate p(v: any) = (len(v) if v is int else 0) > 1\n")]
    assert "E0301" in codes


def test_a_tool_let_reaches_comprehension_filters_and_no_name_may_hide_it() -> None:
    text = (
        'contract c version "1.0.0"\n'
        "state { l: list[int] = [1, 2, 3], total: int = 0, seen: list[int] = [], n: int = 0 }\n"
        "tool t(x: int) {\n"
        "  let w = x + 1\n"
        "  effect {\n"
        "    total = sum(q for q in l if q != w)\n"
        "    seen = [q * 10 for q in l if q != w]\n"
        "    n = count(v > 2 for v in l)\n"
        "  }\n"
        "}\n"
    )
    hiding = text.replace("count(v > 2 for v in l)", "count(w > 2 for w in l)")
    assert [(d.code, d.message) for d in check_text(hiding, "t.contract")] == [
        ("E0331", "loop variable `w` hides the binding `w`")
    ]
    c = contractsim.loads(text)
    sim = c.simulator(now="2024-01-01T00:00:00Z")
    (branch,) = sim.step(sim.initial_state(), "t", {"x": 1}).branches
    state = branch.state
    assert (state["total"], list(state["seen"]), state["n"]) == (4, [10, 30], 1)
    check = sim.check_plan([sim.bind("t", {"x": 1})])
    assert check.verdict == "ok" and check.state is not None
    assert (check.state["total"], list(check.state["seen"]), check.state["n"]) == (4, [10, 30], 1)
