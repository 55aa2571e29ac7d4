"""Targeted checker tests: suggestions, read-only parameters, constraints, machines, flows,
lints."""

from __future__ import annotations

import pytest

from contractsim.api import check_text
from contractsim.diagnostics import Diagnostic, did_you_mean

H = 'contract demo version "1.0.0"\n'


def diags(text: str) -> list[Diagnostic]:
    return check_text(H + text, "t.contract")


def codes(text: str) -> list[str]:
    return [d.code for d in diags(text)]


def one(text: str, code: str) -> Diagnostic:
    found = [d for d in diags(text) if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in diags(text)]
    return found[0]


def clean(text: str) -> None:
    assert diags(text) == [], [(d.code, d.message) for d in diags(text)]


COUNTER = "state { count: int = 0 }\n"
DOOR = (
    "state { open: bool = false }\n"
    'tool open_door() { require not open else OPEN "open"  effect open = true }\n'
    'tool close_door() { require open else CLOSED "closed"  effect open = false }\n'
)


def test_did_you_mean_basics() -> None:
    assert did_you_mean("cout", ["count", "total"]) == "count"
    assert did_you_mean("COUNT", ["count"]) == "count"
    assert did_you_mean("xyz", ["count", "total"]) is None


# ------------------------------------------------------------------------------ suggestions


def test_suggests_type() -> None:
    d = one("type Path = str\nstate { p: set[Pth] = {} }\ntool t() { effect p.clear() }\n", "E0202")
    assert d.hint == "did you mean `Path`?"
    assert (d.span.line, d.span.col) == (3, 16)


def test_suggests_name() -> None:
    d = one(COUNTER + 'tool t() { require cuont < 3 else FULL "f"  effect count += 1 }\n', "E0201")
    assert d.hint == "did you mean `count`?"
    assert "cuont" in d.message


def test_suggests_tool_in_machine() -> None:
    text = DOOR + "machine m {\n  states a, b\n  initial a\n  final a\n"
    text += "  a -> b on open_dor\n  b -> a on close_door\n}\n"
    d = one(text, "E0204")
    assert d.hint == "did you mean `open_door`?"
    assert (d.span.line, d.span.col) == (9, 13)


def test_suggests_enum_member() -> None:
    text = 'type Level = enum { low, high }\nstate { level: Level = "low" }\n'
    d = one(
        text + 'tool t() { require level != Level.hgh else X "x"  effect level = "high" }\n',
        "E0210",
    )
    assert d.hint == "did you mean `high`?"
    d = one(
        text + 'tool t() { require level != "hihg" else X "x"  effect level = "high" }\n', "E0210"
    )
    assert d.hint == "did you mean `high`?"


def test_suggests_field() -> None:
    text = "type U = record { name: str, email: str }\nstate { seen: set[str] = {} }\n"
    d = one(
        text
        + 'tool t(u: U) { require u.emial not in seen else X "x"  effect seen.add(u.email) }\n',
        "E0209",
    )
    assert d.hint == "did you mean `email`?"


def test_suggests_event() -> None:
    text = 'event timeout "t"\n' + COUNTER
    text += 'tool t() { require count < 9 else F "f"\n  outcome ok success { count += 1 }\n'
    text += '  outcome late fails LATE "late" on timout probability 0.1\n}\n'
    d = one(text, "E0205")
    assert d.hint == "did you mean `timeout`?"


def test_suggests_machine_state() -> None:
    text = DOOR + "machine m {\n  states shut, ajar\n  initial shut\n  final shut\n"
    text += "  shut -> ajr on open_door\n  ajar -> shut on close_door\n}\n"
    d = one(text, "E0206")
    assert d.hint == "did you mean `ajar`?"


def test_suggests_function_and_outcome() -> None:
    d = one(
        COUNTER + 'tool t(s: str) { require stratswith(s, "/") else E "e"  effect count += 1 }\n',
        "E0208",
    )
    assert d.hint == "did you mean `startswith`?"
    # too far from every builtin: no guess rather than a wrong one
    d = one(
        COUNTER + 'tool t(s: str) { require lenght(s) > 0 else E "e"  effect count += 1 }\n',
        "E0208",
    )
    assert d.hint is None


# ------------------------------------------------------------------------------ effects


def test_parameters_are_read_only() -> None:
    d = one(
        COUNTER + 'tool t(n: int) { require n > 0 else B "b"  effect { count += n; n = 1 } }\n',
        "E0302",
    )
    assert d.message == "parameter `n` is read-only"


def test_parameter_collections_are_read_only_too() -> None:
    one('tool t(s: set[str]) { require true else B "b"  effect s.add("x") }\n', "E0302")


def test_effects_assign_only_state() -> None:
    d = one(
        "const LIMIT = 3\n"
        + COUNTER
        + 'tool t() { require count < 3 else B "b"  effect { count += 1; LIMIT = 4 } }\n',
        "E0303",
    )
    assert "not a state variable" in d.message


def test_let_variables_cannot_be_assigned() -> None:
    one(
        COUNTER
        + 'tool t() { require count < 3 else B "b"  effect { let k = 1; k = 2; count += k } }\n',
        "E0303",
    )


def test_unknown_assignment_target_suggests_state() -> None:
    d = one(COUNTER + 'tool t() { require count < 3 else B "b"  effect cont += 1 }\n', "E0201")
    assert d.hint == "did you mean `count`?"


def test_old_only_in_ensure() -> None:
    ok = (
        COUNTER
        + 'tool t() { require count < 3 else B "b"  effect count += 1\n'
        + "  ensure count == old(count) + 1 }\n"
    )
    clean(ok)
    d = one(
        COUNTER + 'tool t() { require old(count) < 3 else B "b"  effect count += 1 }\n', "E0304"
    )
    assert "ensure" in d.message
    one(COUNTER + 'tool t() { require count < 3 else B "b"  effect count = old(count) }\n', "E0304")


def test_fresh_only_in_effects() -> None:
    one(
        "state { ids: set[str] = {} }\n"
        + 'tool t() { require fresh("x") not in ids else B "b"  effect ids.add(fresh("id")) }\n',
        "E0304",
    )


# ------------------------------------------------------------------------------ constraints


def test_min_greater_than_max() -> None:
    d = one(
        "type P = int min 10 max 1\nstate { p: P = 5 }\n"
        'tool t(x: P) { require x != p else S "s"  effect p = x }\n',
        "E0401",
    )
    assert d.message == "min (10) is greater than max (1)"
    assert (d.span.line, d.span.col) == (2, 21)


def test_negative_length() -> None:
    one(
        'state { s: str max_length -1 = "" }\n'
        'tool t() { require s == "" else X "x"  effect s = "a" }\n',
        "E0401",
    )


def test_bad_regex() -> None:
    d = one(
        'type C = str pattern r"[a-"\nstate { c: set[C] = {} }\n'
        'tool t(x: C) { require x not in c else D "d"  effect c.add(x) }\n',
        "E0402",
    )
    assert "does not compile" in d.message


@pytest.mark.parametrize("pattern", [r"[a--b]", r"[a&&b]", r"[|?*%||]"])
def test_patterns_python_warns_about_are_no_error(pattern: str) -> None:
    """Python's FutureWarning ("possible set difference") must not escape from checking (found by
    the fuzzer on the GorillaFileSystem contract); the linear engine decides these patterns."""
    text = f'contract c version "1.0.0"\ntype C = str pattern r"{pattern}"\ntool t(x: C) {{ }}\n'
    errors = [d.code for d in check_text(text) if d.severity == "error"]
    assert errors in ([], ["E0402"], ["E0403"])


@pytest.mark.parametrize("pattern", [r"^(?=a)b$", r"^(?!a)b$", r"(?<=a)b", r"^(a)\1$"])
def test_non_linear_regex(pattern: str) -> None:
    d = one(
        f'type C = str pattern r"{pattern}"\nstate {{ c: set[C] = {{}} }}\n'
        'tool t(x: C) { require x not in c else D "d"  effect c.add(x) }\n',
        "E0403",
    )
    assert "linear time" in d.message


def test_bad_regex_in_matches() -> None:
    one(
        COUNTER + 'tool t(s: str) { require matches(s, r"(?=x)") else M "m"  effect count += 1 }\n',
        "E0403",
    )


def test_default_violating_its_constraint() -> None:
    d = one(
        COUNTER
        + 'tool t(n: int min 1 max 5 = 9) { require n > 0 else B "b"  effect count += n }\n',
        "E0404",
    )
    assert "at most 5" in d.message


def test_initial_value_violating_its_constraint() -> None:
    d = one(
        'state { name: str pattern r"^[a-z]+$" = "ABC" }\n'
        'tool t() { require name != "" else B "b"  effect name = "x" }\n',
        "E0404",
    )
    assert "initial value of `name`" in d.message


def test_const_violating_its_type() -> None:
    one(
        "const SMALL: int max 3 = 7\n"
        + COUNTER
        + 'tool t() { require count < SMALL else B "b"  effect count += 1 }\n',
        "E0404",
    )


def test_ill_formed_type_does_not_crash_the_conformance_check() -> None:
    # used to raise IndexError from the validator builder
    assert "E0308" in codes("state { m: map[str] min_items 1 = {} }\ntool t() { effect m = m }\n")
    assert "E0308" in codes(
        "type M = map[str] min_items 1\nstate { m: M = {} }\ntool t() { effect m = m }\n"
    )


def test_empty_enum_is_a_syntax_error() -> None:
    """The checker's E0405 cannot be reached from text: the grammar needs a member."""
    assert codes("type E = enum { }\n") == ["E0101"]


# ------------------------------------------------------------------------------ duplicates


@pytest.mark.parametrize(
    "text",
    [
        COUNTER + "state { count: int = 1 }\n",
        "type A = int\ntype A = str\n",
        "const A = 1\ntool A() { }\n",
        'event e "x"\nevent e "y"\n',
        "type E = enum { a, b, a }\n",
        "type R = record { a: int, a: str }\n",
        "tool t(a: int, a: str) { }\n",
        "tool t() {\n  outcome ok success\n  outcome ok success\n}\n",
    ],
    ids=["state", "type", "const-vs-tool", "event", "enum-member", "field", "param", "outcome"],
)
def test_duplicate_names(text: str) -> None:
    found = set(codes(text))
    assert found & {"E0203", "E0406", "E0412"}, found


def test_duplicate_declaration_points_at_the_second() -> None:
    d = one(COUNTER + "const count = 3\n", "E0203")
    assert (d.span.line, d.span.col) == (3, 7)
    assert "already declared as a state variable at line 2" in d.message


# ------------------------------------------------------------------------------ machines


def machine(body: str) -> str:
    return DOOR + "machine door {\n" + body + "}\n"


def test_clean_machine() -> None:
    clean(
        machine(
            "  states shut, ajar\n  initial shut\n  final shut\n"
            "  shut -> ajar on open_door\n  ajar -> shut on close_door\n"
        )
    )


def test_machine_without_initial() -> None:
    d = one(
        machine(
            "  states shut, ajar\n  final shut\n  shut -> ajar on open_door\n"
            "  ajar -> shut on close_door\n"
        ),
        "E0501",
    )
    assert "has 0" in d.message


def test_machine_with_two_initial_states() -> None:
    d = one(
        machine(
            "  states shut, ajar\n  initial shut\n  initial ajar\n  final shut\n"
            "  shut -> ajar on open_door\n  ajar -> shut on close_door\n"
        ),
        "E0501",
    )
    assert "has 2" in d.message
    assert (d.span.line, d.span.col) == (8, 11)


def test_machine_without_states() -> None:
    one(machine("  initial shut\n"), "E0501")


def test_unreachable_machine_state() -> None:
    d = one(
        machine(
            "  states shut, ajar, broken\n  initial shut\n  final shut, broken\n"
            "  shut -> ajar on open_door\n  ajar -> shut on close_door\n"
        ),
        "E0502",
    )
    assert "`broken`" in d.message


def test_dead_end_machine_state() -> None:
    d = one(machine("  states shut, ajar\n  initial shut\n  shut -> ajar on open_door\n"), "E0503")
    assert "`ajar`" in d.message and "final" in (d.hint or "")


def test_machine_unknown_outcome() -> None:
    d = one(
        machine(
            "  states shut, ajar\n  initial shut\n  final shut\n"
            "  shut -> ajar on open_door.done\n  ajar -> shut on close_door\n"
        ),
        "E0207",
    )
    assert "open_door" in d.message


# ------------------------------------------------------------------------------ flows


FLOW_TOOL = (
    COUNTER + "tool job(fast: bool) {\n  outcome done success { count += 1 }\n  flow {\n{}  }\n}\n"
)


def flow(body: str) -> str:
    return FLOW_TOOL.replace("{}", body)


def test_clean_flow() -> None:
    clean(
        flow(
            "    initial a\n    step b { count += 0 }\n    a -> b when fast\n"
            "    a -> outcome done\n"
            "    b -> outcome done\n"
        )
    )


def test_flow_without_initial() -> None:
    one(flow("    a -> outcome done\n"), "E0501")


def test_flow_with_two_initial_steps() -> None:
    d = one(flow("    initial a\n    initial b\n    a -> b\n    b -> outcome done\n"), "E0501")
    assert "more than one initial" in d.message


def test_flow_unknown_step_and_outcome() -> None:
    found = codes(flow("    initial a\n    a -> c\n    c -> outcome dne\n"))
    assert "E0207" in found
    found = codes(flow("    initial a\n    a -> outcome done\n    a -> b\n"))
    assert "E0211" in found


def test_flow_unreachable_step() -> None:
    d = one(flow("    initial a\n    a -> outcome done\n    b -> outcome done\n"), "E0502")
    # a step named only by its transition is reported at that transition
    assert (d.span.line, d.span.col) == (8, 5)


def test_flow_dead_end() -> None:
    d = one(flow("    initial a\n    step b { count += 0 }\n    a -> b\n"), "E0503")
    assert "`b`" in d.message


def test_flow_may_get_stuck() -> None:
    one(flow("    initial a\n    a -> outcome done when fast\n"), "W0606")


def test_flow_unknown_event_and_probability() -> None:
    found = codes(flow("    initial a\n    a -> outcome done on nope\n    a -> outcome done\n"))
    assert "E0205" in found


# ------------------------------------------------------------------------------ null narrowing


NULLABLE = "state { seen: set[str] = {}  last: str | null = null }\n"


def test_null_narrowing_in_if() -> None:
    clean(
        NULLABLE + 'tool t(x: str | null) {\n  require true else T "t"\n'
        "  effect { if x != null { seen.add(x) }  last = x }\n}\n"
    )


def test_null_narrowing_in_else_and_with_and() -> None:
    clean(
        NULLABLE + 'tool t(x: str | null) {\n  require true else T "t"\n'
        "  effect { if x == null { last = null } else { seen.add(x) }\n"
        "           if x != null and len(x) > 0 { seen.add(x) }  last = x }\n}\n"
    )


def test_null_narrowing_of_optional_field() -> None:
    clean(
        "type R = record { ip?: str }\n" + NULLABLE + 'tool t(r: R) {\n  require true else T "t"\n'
        "  effect { if r.ip != null { seen.add(r.ip) }  last = r.ip }\n}\n"
    )


def test_without_narrowing_null_is_an_error() -> None:
    d = one(
        NULLABLE + 'tool t(x: str | null) {\n  require true else T "t"\n'
        "  effect { seen.add(x)  last = x }\n}\n",
        "E0301",
    )
    assert "str | null" in d.message


# ------------------------------------------------------------------------------ lints


def test_unused_predicate() -> None:
    d = one(
        COUNTER + "predicate full(n: int) = n > 3\n"
        'tool t() { require count < 3 else F "f"  effect count += 1 }\n',
        "W0601",
    )
    assert d.severity == "warning"


def test_unused_state_var() -> None:
    d = one(
        "state { count: int = 0  spare: int = 0 }\n"
        'tool t() { require count < 3 else F "f"  effect count += 1 }\n',
        "W0602",
    )
    assert "`spare`" in d.message and d.severity == "warning"


def test_require_without_code() -> None:
    d = one(COUNTER + "tool t() { require count < 3  effect count += 1 }\n", "W0603")
    assert d.severity == "warning" and d.hint and "else CODE" in d.hint


def test_should_without_code_is_fine() -> None:
    clean(
        COUNTER + 'tool t() { require count < 3 else F "f"  should count < 2  effect count += 1 }\n'
    )


def test_destructive_without_confirmation() -> None:
    text = (
        COUNTER
        + 'tool t()\n    risk destructive\n{ require count < 3 else F "f"  effect count += 1 }\n'
    )
    d = one(text, "W0604")
    assert d.severity == "warning"
    clean(text.replace("risk destructive", "risk destructive, needs_confirmation"))


def test_unused_event() -> None:
    one(
        'event e "x"\n'
        + COUNTER
        + 'tool t() { require count < 3 else F "f"  effect count += 1 }\n',
        "W0605",
    )


def test_lints_do_not_fire_on_errors_only_contracts() -> None:
    # a syntax error stops before the checker: only one diagnostic
    assert codes("state { x: int = 0\n") == ["E0103"]


# ------------------------------------------------------------------------------ types & misc


def test_bad_version() -> None:
    d = check_text('contract demo version "1.0"\n', "t.contract")
    assert [x.code for x in d] == ["E0409"]


def test_risk_conflict() -> None:
    one(
        COUNTER + "tool t()\n    risk read_only, destructive, needs_confirmation\n"
        '{ require count < 3 else F "f" }\n',
        "E0411",
    )


def test_bad_error_code() -> None:
    d = one(
        COUNTER + 'tool t() { require count < 3 else tooMany "f"  effect count += 1 }\n', "E0413"
    )
    assert d.hint and "TOO_MANY" in d.hint


def test_failure_outcome_needs_a_code() -> None:
    one(
        COUNTER + 'tool t() {\n  outcome ok success { count += 1 }\n  outcome bad fails "no"\n}\n',
        "E0507",
    )


def test_record_constructor() -> None:
    text = "type B = record { f: str, seats: int }\nstate { bs: list[B] = [] }\n"
    clean(
        text
        + 'tool t(f: str) { require len(bs) < 3 else F "f"  effect bs.append(B(f=f, seats=2)) }\n'
    )
    found = codes(
        text + 'tool t(f: str) { require len(bs) < 3 else F "f"  effect bs.append(B(f=f)) }\n'
    )
    assert "E0305" in found


def test_examples_check_clean() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for path in sorted((root / "examples").glob("*/*.contract")):
        assert check_text(path.read_text("utf-8"), str(path)) == [], path


# ------------------------------------------------------------------ numeric and overlapping unions


@pytest.mark.parametrize(
    "body",
    [
        "tool t(amount: int | float) { require amount > 0 and -amount < 0 else NEG }",
        "tool t(amount: int | float) { require amount * 2 + 1 >= abs(amount) else NEG }",
        "tool t(xs: list[int | float]) { require sum(x for x in xs) <= min(9, xs[0]) else BIG }",
        "tool t(x: float | str) { require float(x) == x else NOT_FLOAT }",
        "tool t(x: int | null, y: str | null) { require x != y else SAME }",
        "tool t(b: bool, n: int, f: float) { require b == 0 and n != false and n == f else E }",
        "tool t(x: int | float | null) { require x == null or x > 0 else NEG }",
    ],
)
def test_numeric_and_overlapping_unions(body: str) -> None:
    """Issue 11.9: `amount > 0` with `amount: int | float` was E0301, and so was
    `float(x) == x` with `x: float | str`."""
    clean(body + "\n")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            'tool t(x: int | null) { require x != "a" else E }',
            "int | null and str can never be equal",
        ),
        (
            "tool t(x: int | str) { require x > 0 else E }",
            "`>` compares numbers or strings, not int | str and int",
        ),
        # (`b < 1` with a bool `b` is allowed now: a bool is a number, as in Python; see
        # tests/test_lang_types.py)
        (
            "state { n: int = 0 }\ntool t(x: int | float) { effect n = x }",
            "cannot assign int | float to `n` of type int",
        ),
    ],
)
def test_unions_that_cannot_work_are_still_refused(body: str, message: str) -> None:
    assert one(body + "\n", "E0301").message == message


@pytest.mark.parametrize(
    ("code", "suggestion"),
    [("tooMany", "TOO_MANY"), ("_too_many", "TOO_MANY"), ("HTTPError", "HTTP_ERROR")],
)
def test_bad_error_code_hint_is_valid_and_under_the_code(code: str, suggestion: str) -> None:
    for text, where in (
        (f'tool t() {{\n  outcome ok success\n  outcome no fails {code} "f"\n}}\n', (5, 20)),
        (f'tool t() {{\n  effect {{ warn {code} "w" }}\n}}\n', (4, 17)),
    ):
        d = one(COUNTER + text, "E0413")
        assert d.hint == f"codes are UPPER_SNAKE_CASE, e.g. `{suggestion}`"
        assert (d.span.line, d.span.col) == where, d.span


# ------------------------------------------------------------------------- constant values


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("1 / 0", "division by zero"),
        ("7 % 0", "division by zero"),
        ("[1, 2][5]", "index 5 is out of range (length 2)"),
        ('{"a": 1}["b"]', 'key "b" is not in the map'),
        ("range(1000000)", "range(1000000) is longer than 100,000 items"),
        ("range(1.5)", "range needs a whole number, got 1.5"),
        ('split("a/b", "")', "split needs a non-empty separator"),
        ('add_days("2024-01-01", 100000000)', "is outside the years 1 to 9999"),
        ('days_between("x", "y")', 'days_between needs a date (YYYY-MM-DD), got "y"'),
        ("zfill(1, 1.5)", "zfill needs a whole number, got 1.5"),
        (
            "115792089237316195423570985008687907853269984665640564039457584007913129639935 * 2",
            "an integer grew beyond 2**256",
        ),
    ],
)
def test_constants_that_cannot_be_computed_are_reported_at_the_const(
    expr: str, message: str
) -> None:
    d = one(
        f"const K = {expr}\nconst J = K\n" + COUNTER + "tool t() { effect count = 1 }\n", "E0414"
    )
    assert d.message.startswith("constant `K` cannot be computed: ")
    assert message in d.message
    assert (d.span.line, d.span.col) == (2, 11)


def test_initial_values_and_defaults_are_computed_too() -> None:
    found = diags(
        'type R = record { a: int = 1 // 0 }\nconst M = {"a": 1}\n'
        'state { n: int = M["x"] }\ntool t(a: int = 1 % 0) { effect n = a }\n'
    )
    assert [(d.code, d.message) for d in found if d.severity == "error"] == [
        ("E0414", "the default of `R.a` cannot be computed: division by zero"),
        ("E0414", 'the initial value of `n` cannot be computed: key "x" is not in the map'),
        ("E0414", "the default of `a` in `t` cannot be computed: division by zero"),
    ]


def test_constant_evaluation_is_bounded_in_time() -> None:
    import time

    start = time.monotonic()
    found = codes(
        "const R = range(100000)\n"
        "const K = count(all(x != y for y in R) for x in R)\n"
        + COUNTER
        + "tool t() { effect count = K }\n"
    )
    assert found == ["E0414"]
    assert time.monotonic() - start < 10


def test_constants_with_type_errors_are_not_evaluated() -> None:
    assert codes('const K = 1 / "a"\n' + COUNTER + "tool t() { effect count = 1 }\n") == ["E0301"]


@pytest.mark.parametrize(
    ("pattern", "code"),
    [
        (r"\p{Greek}+", None),
        (r"^\d{4}-\d{3}[\dxX]$", None),
        (r"a\Z", "E0402"),
        (r"^[A-Z{2}$", "E0402"),
        ("(" * 900 + "a" + ")" * 900, "E0402"),
        (r"^(?=.*\d).{8,}$", "E0403"),
        (r"(a)\1", "E0403"),
        (r"(?P<n>a)(?P=n)", "E0403"),
    ],
)
def test_patterns_are_judged_by_the_engine_that_matches_them(
    pattern: str, code: str | None
) -> None:
    text = (
        f'type P = str pattern r"{pattern}"\n'
        + COUNTER
        + "tool t(p: P) { effect count = len(p) }\n"
    )
    assert codes(text) == ([] if code is None else [code])


def test_the_largest_integer_literal_is_2_to_the_256() -> None:
    big = 2**256
    assert (
        codes(
            f"const A = {big - 1}\nconst B = {big}\n"
            + COUNTER
            + "tool t() { effect count = A - B }\n"
        )
        == []
    )
    assert codes(f"const C = {big + 1}\n") == ["E0109"]
