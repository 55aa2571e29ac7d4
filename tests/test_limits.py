"""Contracts from strangers cannot make a step run away: loops and quantifiers have a budget."""

from __future__ import annotations

from pathlib import Path

import pytest

import contractsim
from contractsim.compiler import lib

NESTED = """contract nested version "1.0.0"
state { s: set[int] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10} }
tool nest() {
  require all(all(all(a + b + c >= 0 for c in s) for b in s) for a in s) else NEG "negative"
}
tool grow(n: int) {
  effect { for x in s { s.add(x + 100 * n) } }
}
"""


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lib, "MAX_ITERATIONS", 500)


def test_nested_quantifiers_within_budget_are_fine() -> None:
    sim = contractsim.loads(NESTED).simulator(now="2024-01-01T00:00:00Z")
    assert sim.step(sim.initial_state(), "nest", {}).verdict == "ok"


def test_nested_quantifiers_beyond_budget_fail_with_a_reason(small_budget: None) -> None:
    sim = contractsim.loads(NESTED).simulator(now="2024-01-01T00:00:00Z")
    result = sim.step(sim.initial_state(), "nest", {})
    assert result.verdict == "fails"
    (violation,) = result.violations
    assert violation.code == "EVAL_ERROR"
    assert "more than 500 items" in violation.message


def test_loops_in_effects_are_budgeted_per_step(small_budget: None) -> None:
    sim = contractsim.loads(NESTED).simulator(now="2024-01-01T00:00:00Z")
    report = sim.run([("grow", {"n": 2**i}) for i in range(8)])
    verdicts = [s.verdict for s in report.steps]
    # the set doubles each step: the first steps fit the budget, a later one does not
    assert verdicts[0] == "ok"
    assert "fails" in verdicts
    failing = report.steps[verdicts.index("fails")]
    assert failing.violations[0].code == "EVAL_ERROR"


def test_budget_applies_to_fast_plan_checks(small_budget: None) -> None:
    sim = contractsim.loads(NESTED).simulator(now="2024-01-01T00:00:00Z")
    calls = [sim.bind("grow", {"n": 2**i}) for i in range(8)]
    assert sim.check_plan(calls).verdict == "fails"


def test_the_budget_is_off_outside_a_step() -> None:
    # the reference interpreter and direct evaluation are not limited when no step is running
    lib.charge(10**9)
    assert lib.BUDGET.deadline == float("inf")


def test_collections_are_bounded() -> None:
    with pytest.raises(lib.EvalError, match="beyond"):
        lib.coll_append(tuple(range(lib.MAX_ITEMS)), 1)


def test_a_whole_plan_has_a_time_bound() -> None:
    sim = contractsim.loads(NESTED).simulator(now="2024-01-01T00:00:00Z")
    report = sim.run([("nest", {})] * 3, max_seconds=1e-9)
    assert [s.skipped for s in report.steps] == [False, True, True]
    assert report.verdict == "may_fail"
    assert any("--max-seconds" in note for note in report.notes)


def test_max_seconds_on_the_command_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from contractsim.cli import main

    contract = tmp_path / "c.contract"
    contract.write_text(NESTED)
    plan = tmp_path / "p.yaml"
    plan.write_text("- tool: nest\n- tool: nest\n")
    res = CliRunner().invoke(
        main,
        ["simulate", str(contract), str(plan), "--max-seconds", "0.000001", "--now", "2024-01-01"],
    )
    assert res.exit_code == 3
    assert "--max-seconds 1e-06 stopped the simulation after step 1" in res.output
