"""Issue 16, items 5 and 6: bounded unknowns (``unknown in [LO, HI]``), fresh values that differ
from every earlier text, and plans that pass earlier results on (``$1.result.access_token``).
One test per stage: parse, check, the evaluators, simulation, observation, state files, plans."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import contractsim
from contractsim.cli import main
from contractsim.compiler import lib
from contractsim.compiler.compile import make_context
from contractsim.compiler.interp import Env, Interpreter
from contractsim.compiler.values import UNKNOWN, Bounded, Fresh, thaw
from contractsim.dsl import ir
from contractsim.dsl.pretty import expr_text
from contractsim.simulator.observe import Observation

ROOT = Path(__file__).resolve().parent.parent
BANK = ROOT / "examples" / "bank_account" / "bank_account.contract"
LOGIN = ROOT / "examples" / "login_session" / "login_session.contract"
NOW = "2024-06-01T12:00:00Z"

HEADER = 'contract b version "1.0.0"\n'


def sim_of(path: Path) -> Any:
    return contractsim.load(path).simulator(now=NOW)


def codes(text: str) -> list[tuple[str, str]]:
    from contractsim.api import check_text

    return [(d.code, d.message) for d in check_text(text) if d.severity == "error"]


# ------------------------------------------------------------------------------- parse / lower


def test_unknown_in_lowers_in_state_and_effects() -> None:
    c = contractsim.loads(
        HEADER
        + """state { n: int = unknown in [1, LIMIT * 2]  f: float = unknown in [-0.5, 2.5] }
const LIMIT = 5
tool t(k: int) { effect n = unknown in [k, k + 10] }
"""
    )
    n, f = c.ir.state
    assert isinstance(n.init, ir.UnknownIn) and isinstance(f.init, ir.UnknownIn)
    assert expr_text(n.init) == "unknown in [1, LIMIT * 2]"
    (stmt,) = c.ir.tools[0].effects
    assert isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.UnknownIn)
    assert expr_text(stmt.value) == "unknown in [k, k + 10]"
    assert c.simulator().initial_state().data[:2] == (
        Bounded(1, 10, True),
        Bounded(-0.5, 2.5, False),
    )


def test_plain_unknown_is_still_an_initial_value() -> None:
    c = contractsim.loads(HEADER + "state { n: int = unknown }\ntool t() { require n > 0 }")
    assert c.ir.state[0].init is None


# -------------------------------------------------------------------------------------- check


def test_empty_range_is_e0417_in_state_and_effects() -> None:
    text = (
        HEADER + "state { n: int = unknown in [5, -5] }\ntool t() { effect n = unknown in [3, 2] }"
    )
    assert codes(text) == [
        (
            "E0417",
            "`unknown in [5, -5]` is an empty range: the lower bound 5 is greater than the "
            "upper bound -5",
        ),
        (
            "E0417",
            "`unknown in [3, 2]` is an empty range: the lower bound 3 is greater than the "
            "upper bound 2",
        ),
    ]


def test_bounds_must_be_numbers_and_fit_the_type() -> None:
    assert codes(HEADER + 'state { n: int = unknown in ["a", 2] }\ntool t() { require n > 0 }') == [
        ("E0301", "the bounds of `unknown in [lo, hi]` must be numbers, got str")
    ]
    assert codes(HEADER + "state { s: str = unknown in [1, 2] }\ntool t() { require s == s }") == [
        ("E0301", "`s` is str but its initial value is int")
    ]
    assert codes(
        HEADER + "state { n: int min 0 = unknown in [-1, 2] }\ntool t() { require n > 0 }"
    ) == [
        (
            "E0404",
            "the lower bound of `n` does not satisfy its type: must be at least 0 (got -1)",
        )
    ]
    # float bounds cannot be stored in an int
    assert codes(HEADER + "state { n: int = 0 }\ntool t() { effect n = unknown in [0.5, 2] }") == [
        ("E0301", "cannot assign float to `n` of type int")
    ]


def test_bounds_computed_out_of_order_fail_when_evaluated() -> None:
    c = contractsim.loads(
        HEADER + "state { n: int = 0 }\ntool t(a: int, b: int) { effect n = unknown in [a, b] }"
    )
    step = c.simulator().step(c.simulator().initial_state(), "t", {"a": 5, "b": 1})
    (v,) = step.violations
    assert v.code == "EVAL_ERROR"
    assert "`unknown in [5, 1]` is an empty range: 5 > 1" in v.message


# ------------------------------------------------------------------------------ the evaluators

CONDITIONS = {
    "balance >= 5000": True,
    "balance > 100000": False,
    "balance >= 50000": UNKNOWN,
    "balance == 5": False,
    "balance != 5": True,
    "balance == 50000": UNKNOWN,
    "balance - 100 >= 9900": True,
    "balance - 100 > 99899": False,
    "balance * 2 >= 20000": True,
    "-balance <= -10000": True,
    "balance / 2 < 50000": True,
    "balance + balance >= 20000": True,
    "balance // 2 >= 0": UNKNOWN,  # no interval for `//`: plain unknown
    "balance in {1, 2, 3}": False,
    "balance in {1, 20000}": UNKNOWN,
    "5 not in {balance}": True,
    "balance < 50000 or balance >= 10000": True,
    "balance < 10000 and balance > 5": False,
    "abs(balance) > 0": UNKNOWN,  # built-ins: plain unknown
}


@pytest.mark.parametrize("cond", list(CONDITIONS))
def test_interval_decided_comparisons_agree_in_every_evaluator(cond: str) -> None:
    c = contractsim.loads(
        HEADER
        + f"state {{ balance: int = unknown in [10000, 99999] }}\ngoal g = {cond}\n"
        + "tool t() { require balance > 0 }"
    )
    cc = c.compiled
    expected = CONDITIONS[cond]
    env = Env(c.ir, state={"balance": cc.initial[0]}, consts=dict(cc.consts), safe=True)
    assert Interpreter(c.ir).eval(c.ir.goals[0].cond, env) is expected
    got = cc.goals["g"].safe(cc.initial, {}, None, cc.initial, make_context("", ""))
    assert got is expected
    assert c.simulator().goal(c.simulator().initial_state(), "g") is expected


def test_interval_arithmetic_values() -> None:
    b = lib.bounded(10000, 99999)
    assert lib.safe_arith("-", b, 100) == Bounded(9900, 99899, True)
    assert lib.safe_arith("-", 100, b) == Bounded(-99899, -9900, True)
    assert lib.safe_arith("*", b, -1) == Bounded(-99999, -10000, True)
    assert lib.safe_arith("+", b, 0.5) == Bounded(10000.5, 99999.5, False)
    with pytest.raises(lib.EvalError, match="division by zero"):
        lib.safe_arith("/", b, 0)
    assert lib.safe_arith("%", b, 7) is UNKNOWN
    assert lib.safe_arith("-", b, UNKNOWN) is UNKNOWN
    assert lib.bounded(3, 3) == 3 and type(lib.bounded(3, 3)) is int
    assert lib.bounded(1.5, 3.5, True) == Bounded(2, 3, True)
    assert lib.neg(b) == Bounded(-99999, -10000, True)
    assert thaw(b) == {"$unknown": {"min": 10000, "max": 99999}}
    assert repr(b) == "unknown in [10000, 99999]"


def test_narrowing_a_whole_interval_by_strict_comparisons() -> None:
    b = lib.bounded(0, 10)
    assert lib.narrowed(b, "<", 5) == Bounded(0, 4, True)
    assert lib.narrowed(b, "<", 4.5) == Bounded(0, 4, True)
    assert lib.narrowed(b, ">", 8) == Bounded(9, 10, True)
    assert lib.narrowed(b, ">", 9) == 10
    assert lib.narrowed(b, "==", 3) == 3
    assert lib.narrowed(b, "!=", 0) == Bounded(1, 10, True)
    f = lib.bounded(0.0, 1.0)
    assert lib.narrowed(f, "<=", 0.5) == Bounded(0.0, 0.5, False)


# ------------------------------------------------------------------------------- simulation


@pytest.mark.parametrize(
    ("amounts", "verdict"),
    [([5000, 5000], "ok"), ([50000], "may_fail"), ([100000], "fails"), ([60000, 60000], "fails")],
)
def test_bank_verdicts_are_decided_by_the_interval(amounts: list[int], verdict: str) -> None:
    report = sim_of(BANK).run([("withdraw", {"amount": a}) for a in amounts])
    assert report.verdict == verdict


def test_each_branch_narrows_the_interval() -> None:
    report = sim_of(BANK).run([("withdraw", {"amount": 50000})])
    by_choice = {p.choices: p.state.data[0] for p in report.paths}
    assert by_choice == {
        ("withdraw:INSUFFICIENT_FUNDS",): Bounded(10000, 49999, True),
        ("withdraw:ok",): Bounded(0, 49999, True),  # held: [50000, 99999], then - 50000
    }


def test_an_effect_draws_a_new_bounded_unknown() -> None:
    sim = sim_of(BANK)
    report = sim.run([("withdraw", {"amount": 5000}), ("reopen", {})])
    assert report.verdict == "ok"
    assert report.paths[0].state.data[0] == Bounded(10000, 99999, True)
    (step1, step2) = report.to_json()["steps"]
    assert step1["changes"] == [
        {
            "var": "balance",
            "before": {"$unknown": {"min": 10000, "max": 99999}},
            "after": {"$unknown": {"min": 5000, "max": 94999}},
        }
    ]


def test_a_float_variable_with_whole_bounds_is_not_whole() -> None:
    c = contractsim.loads(
        HEADER + "state { x: float = unknown in [0, 10] }\ntool t() { require x < 5 }"
    )
    sim = c.simulator()
    report = sim.run([("t", {})])
    states = sorted(repr(p.state.data[0]) for p in report.paths)
    assert states == ["unknown in [0, 5]", "unknown in [5, 10]"]


# ------------------------------------------------------------------- observations (replay/guard)


def test_a_refused_real_call_narrows_the_interval() -> None:
    sim = sim_of(BANK)
    refused = sim.observe(
        sim.initial_state(), "withdraw", {"amount": 50000}, Observation("error", None, "no")
    )
    assert refused.state.data[0] == Bounded(10000, 49999, True)
    served = sim.observe(
        refused.state, "withdraw", {"amount": 20000}, Observation.returned({"receipt": "r"})
    )
    assert served.state.data[0] == Bounded(0, 29999, True)
    # now 30,000 cannot be covered any more
    assert sim.step(served.state, "withdraw", {"amount": 30000}).verdict == "fails"


# ------------------------------------------------------------------------------ state files


def test_state_files_accept_bounded_unknowns(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"balance": {"$unknown": {"min": 0, "max": 4000}}}))
    plan = tmp_path / "plan.yaml"
    plan.write_text("steps:\n  - tool: withdraw\n    args: {amount: 5000}\n")
    res = CliRunner().invoke(
        main, ["simulate", str(BANK), str(plan), "--state", str(state), "--now", NOW]
    )
    assert res.exit_code == 1, res.output
    assert "balance = unknown in [0, 4000]" in res.output


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"$unknown": {"min": 5, "max": 1}}, "`unknown in [5, 1]` is an empty range: 5 > 1"),
        ({"$unknown": {"min": 5}}, 'a bounded unknown needs exactly "min" and "max"'),
        ({"$unknown": {"min": "a", "max": 1}}, "the bounds must be numbers"),
    ],
)
def test_bad_bounded_unknowns_in_state_files(value: Any, message: str) -> None:
    from contractsim.simulator.values import validate_state_overrides

    sim = sim_of(BANK)
    with pytest.raises(contractsim.ContractError) as info:
        validate_state_overrides(sim.compiled, {"balance": value})
    assert message in str(info.value)
    assert "E0702" in str(info.value)


def test_a_bounded_unknown_needs_a_number_variable() -> None:
    from contractsim.simulator.values import validate_state_overrides

    sim = sim_of(BANK)
    with pytest.raises(contractsim.ContractError, match="only an int or float variable"):
        validate_state_overrides(sim.compiled, {"frozen": {"$unknown": {"min": 0, "max": 1}}})
    assert sim.initial_state({"balance": Bounded(1, 2, True)}).data[0] == Bounded(1, 2, True)


# -------------------------------------------------------------------------- fresh values


FRESH = (
    HEADER
    + """state { known: set[str] = {"alpha"}  last: str = ""  made: str = "" }
tool make() -> record { id: str } { effect { last = result.id  made = fresh("x") } }
tool literal(v: str) { require v != "beta" else SAME }
tool check(v: str, w: str) { require v != w else SAME }
tool member(v: str) { require v not in known else SAME }
"""
)


def test_a_fresh_id_differs_from_texts_that_existed_before() -> None:
    sim = contractsim.loads(FRESH).simulator()
    after = sim.step(sim.initial_state(), "make", {}).branches[0].state
    made, last = after.data[2], after.data[1]
    assert type(made) is Fresh and type(last) is Fresh
    # `fresh("x")` differs from the contract's texts and the texts in the state when made
    assert sim.step(after, "literal", {"v": made}).verdict == "ok"
    assert sim.step(after, "check", {"v": made, "w": "alpha"}).verdict == "ok"
    assert sim.step(after, "member", {"v": made}).verdict == "ok"
    # a text that came later (step by step, with no plan around it) may be anything
    assert sim.step(after, "check", {"v": made, "w": "gamma"}).verdict == "may_fail"


def test_a_result_may_echo_what_the_tool_sees_but_not_the_plans_later_texts() -> None:
    sim = contractsim.loads(FRESH).simulator()
    after = sim.step(sim.initial_state(), "make", {}).branches[0].state
    last = after.data[1]
    # a tool's result may be any text it sees: the contract's, the state's
    assert sim.step(after, "literal", {"v": last}).verdict == "may_fail"
    assert sim.step(after, "member", {"v": last}).verdict == "may_fail"
    # the plan's texts that were nowhere when the call returned are not its result
    plan = [("make", {}), ("check", {"v": "$1.result.id", "w": "gamma"})]
    assert sim.run(plan).verdict == "ok"
    plan = [("make", {}), ("check", {"v": "$1.result.id", "w": "alpha"})]
    assert sim.run(plan).verdict == "may_fail"


def test_reading_back_what_was_written_is_still_undecided_not_false() -> None:
    # the ensure of read_file compares a result with state text: it must not be decided false
    sim = sim_of(ROOT / "examples" / "file_system" / "file_system.contract")
    plan = [
        ("write_file", {"path": "/home/a.txt", "content": "x"}),
        ("read_file", {"path": "/home/a.txt"}),
    ]
    assert sim.run(plan).verdict == "ok"


# --------------------------------------------------------------------- plans passing results on


@pytest.mark.parametrize(
    "plan",
    sorted((ROOT / "examples" / "login_session" / "plans").glob("*.yaml")),
    ids=lambda p: p.stem,
)
def test_login_plans(plan: Path) -> None:
    verdict = plan.stem.split("_")[0].replace("may", "may_fail")
    res = CliRunner().invoke(
        main, ["simulate", str(LOGIN), str(plan), "--now", NOW, "--format", "json"]
    )
    assert json.loads(res.output)["verdict"] == verdict


def login(extra: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [("login", {"user": "a", "password": "b"}), ("query", {"q": "x", **extra})]


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (
            "$3.result.access_token",
            "`$3.result.access_token` names step 3, but the plan has steps 1 to 2",
        ),
        ("$0.result", "`$0.result` names step 0, but the plan has steps 1 to 2"),
        (
            "$2.result.rows",
            "`$2.result.rows` in step 2 names step 2, which has not run yet; a step can pass on "
            "the result of an earlier step only",
        ),
        (
            "$1.result.token",
            "`$1.result.token`: $1.result has no field `token` (its fields: `access_token`, "
            "`expires_in`)",
        ),
        (
            "$1.result.access_token[0]",
            "`$1.result.access_token[0]`: $1.result.access_token is a fresh text, not a list",
        ),
        (
            "$1.reslt",
            "`$1.reslt` is not a reference: write `$1.result…` (or `$$1.reslt` for the "
            "literal text)",
        ),
        (
            "$1.result.x-y",
            "`$1.result.x-y`: cannot read `-y`; write `.field` or `[index]` after `$1.result` "
            "(or `$$1.result.x-y` for the literal text)",
        ),
    ],
)
def test_bad_references_fail_the_step(token: str, message: str) -> None:
    report = sim_of(LOGIN).run(login({"token": token}))
    assert report.verdict == "fails"
    (v,) = report.steps[1].violations
    assert (v.code, v.message) == ("BAD_REFERENCE", message)


def test_a_reference_to_a_step_that_failed_on_the_branch() -> None:
    c = contractsim.loads(
        HEADER
        + """state { up: bool = unknown  tok: str = "" }
tool open() -> record { t: str } { require up else DOWN  effect tok = result.t }
tool use(t: str) { require t == tok else WRONG }
"""
    )
    report = c.simulator().run([("open", {}), ("use", {"t": "$1.result.t"})])
    assert report.verdict == "may_fail"
    messages = {v.code: v.message for v in report.steps[1].violations}
    assert messages == {
        "BAD_REFERENCE": "`$1.result.t`: step 1 failed on this branch, so it returned nothing"
    }
    ok_paths = [p for p in report.paths if p.failed_at is None]
    assert [p.choices for p in ok_paths] == [("open:ok", "use:ok")]


def test_whole_results_nested_fields_and_list_items() -> None:
    c = contractsim.loads(
        HEADER
        + """type Item = record { id: str }
state { seen: list[str] = [] }
tool get() -> record { page: record { items: list[Item] }, token: str } { }
tool keep(x: str) { effect seen.append(x) }
tool keep_all(r: map[str, str]) { }
"""
    )
    sim = c.simulator()
    report = sim.run([("get", {}), ("keep", {"x": "$1.result.token"})])
    assert report.verdict == "ok"
    assert repr(report.paths[0].state.data[0][0]) == "<fresh get.token#1>"
    # a list the contract cannot know the items of: an item of it is unknown
    report = sim.run([("get", {}), ("keep", {"x": "$1.result.page.items[0].id"})])
    assert report.verdict == "ok"
    assert report.paths[0].state.data[0] == (UNKNOWN,)


def test_dollar_dollar_is_a_literal_dollar() -> None:
    report = sim_of(LOGIN).run(login({"token": "$$1.result.access_token"}))
    (v,) = report.steps[1].violations
    assert v.code == "INVALID_TOKEN"
    assert ("token", '"$1.result.access_token"') in v.values
    # other texts that start with `$` are passed on as they are
    assert sim_of(LOGIN).run(login({"token": "$5.00"})).steps[1].violations[0].values[0] == (
        "token",
        '"$5.00"',
    )


def test_openai_tool_calls_plans_pass_results_on(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "tool_calls": [
                    {"function": {"name": "login", "arguments": '{"user": "a", "password": "b"}'}},
                    {
                        "function": {
                            "name": "query",
                            "arguments": '{"token": "$1.result.access_token", "q": "x"}',
                        }
                    },
                ]
            }
        )
    )
    res = CliRunner().invoke(main, ["simulate", str(LOGIN), str(plan), "--now", NOW])
    assert res.exit_code == 0, res.output


def test_check_plan_passes_results_on() -> None:
    sim = sim_of(LOGIN)
    b = sim.bind
    first = b("login", {"user": "a", "password": "b"})
    good = sim.check_plan([first, b("query", {"token": "$1.result.access_token", "q": "x"})])
    assert good.verdict == "ok"
    made_up = sim.check_plan([first, b("query", {"token": "tok-123", "q": "x"})])
    assert (made_up.verdict, made_up.failed_at) == ("fails", 2)
    # the reference counts from the plan's first step, also after a fast prefix
    q = b("query", {"token": "$2.result.access_token", "q": "x"})
    check = sim.check_plan([b("logout", {"token": "x"}), first, q])
    assert (check.verdict, check.failed_at) == ("fails", 1)


def test_passing_a_fresh_text_to_a_number_parameter_is_an_invalid_argument() -> None:
    c = contractsim.loads(
        HEADER + "state { n: int = 0 }\ntool get() -> record { t: str } { }\n"
        "tool put(k: int) { effect n = k }"
    )
    report = c.simulator().run([("get", {}), ("put", {"k": "$1.result.t"})])
    (v,) = report.steps[1].violations
    assert (v.code, v.message) == (
        "INVALID_ARGUMENT",
        "put: args.k: must be int, got fresh value (<fresh get.t#1>)",
    )


def test_the_guard_narrows_on_refused_and_served_calls() -> None:
    guard = contractsim.load(BANK).guard(mode="return")

    def withdraw(amount: int) -> dict[str, str]:
        if amount > 42000:
            raise ValueError("insufficient funds")
        return {"receipt": "r"}

    call = guard.wrap("withdraw", withdraw)
    assert call(amount=50000).ok is False  # a raise proves `balance >= 50000` failed
    assert guard.state.data[0] == Bounded(10000, 49999, True)
    assert call(amount=20000).ok is True
    assert guard.state.data[0] == Bounded(0, 29999, True)
    refused = call(amount=30000)  # certain now: refused before the call is made
    assert (refused.ok, refused.error.code) == (False, "INSUFFICIENT_FUNDS")


def test_a_float_variable_assigned_whole_bounds_is_not_whole() -> None:
    c = contractsim.loads(
        HEADER
        + "state { x: float = 0.0 }\ntool draw() { effect x = unknown in [0, 10] }\n"
        + "tool t() { require x < 5 }"
    )
    sim = c.simulator()
    drawn = sim.step(sim.initial_state(), "draw", {}).branches[0].state
    assert drawn.data[0] == Bounded(0, 10, False)
    report = sim.run([("draw", {}), ("t", {})])
    states = sorted(repr(p.state.data[0]) for p in report.paths)
    assert states == ["unknown in [0, 5]", "unknown in [5, 10]"]


def test_both_sides_of_an_and_narrow_the_interval() -> None:
    c = contractsim.loads(
        HEADER
        + "state { n: int = unknown in [0, 100] }\n"
        + "tool t(lo: int, hi: int) { require n >= lo and n <= hi else OUT }"
    )
    report = c.simulator().run([("t", {"lo": 10, "hi": 20})])
    held = [p.state.data[0] for p in report.paths if p.failed_at is None]
    assert held == [Bounded(10, 20, True)]


def test_plan_files_with_references_that_name_no_earlier_step_are_e0701(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "steps:\n"
        "  - tool: login\n    args: {user: a, password: b}\n"
        '  - tool: query\n    args: {token: "$3.result.access_token", q: x}\n'
        '  - tool: query\n    args: {token: "$1.reslt", q: x}\n'
    )
    res = CliRunner().invoke(main, ["simulate", str(LOGIN), str(plan), "--now", NOW])
    assert res.exit_code == 2
    assert (
        f"{plan}:4:1: error[E0701]: step 2: `$3.result.access_token` in step 2 names step 3, "
        "which has not run yet; a step can pass on the result of an earlier step only"
    ) in res.output
    assert (
        f"{plan}:6:1: error[E0701]: step 3: `$1.reslt` is not a reference: write `$1.result…` "
        "(or `$$1.reslt` for the literal text)"
    ) in res.output


def test_unknown_stays_a_name_in_effects() -> None:
    c = contractsim.loads(
        HEADER + "state { x: int = 0 }\ntool t(unknown: int) { effect x = unknown + 1 }"
    )
    sim = c.simulator()
    assert sim.step(sim.initial_state(), "t", {"unknown": 4}).branches[0].state.data[0] == 5


def test_an_outcome_body_after_an_effect_that_made_unknowns_runs_three_valued() -> None:
    c = contractsim.loads(
        HEADER
        + """state { n: int = 0  ids: list[str] = [] }
tool t() { effect n = unknown in [0, 2]  outcome done success { n += 1 } }
tool u() { effect ids.append(fresh("a"))  outcome done success { ids.append(ids[0] + "x") } }
"""
    )
    sim = c.simulator()
    (b,) = sim.step(sim.initial_state(), "t", {}).branches
    assert (b.violations, b.state.data[0]) == ([], Bounded(1, 3, True))
    (b,) = sim.step(sim.initial_state(), "u", {}).branches
    assert b.violations == [] and b.state.data[1][1] is UNKNOWN
