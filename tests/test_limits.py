"""Contracts from strangers cannot make a step run away: loops and quantifiers have a budget."""

from __future__ import annotations

import json
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
    # the time is up before the first step's loops finish: nothing is simulated
    assert [s.skipped for s in report.steps] == [True, True, True]
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
    assert "--max-seconds 1e-06 stopped the simulation before step 1" in res.output


WIDE = """contract wide version "1.0.0"
event coin "a coin flip"
state { seen: list[int] = [], big: list[int] = range(100000) }
tool flip(k: int) {
  outcome heads success on coin probability 0.5 { seen.append(k) }
  outcome tails success
}
tool slow() {
  require count(a > len(seen) for a in big) + count(a > 1 for a in big) >= 0 else SLOW "slow"
}
tool very_slow() {
  require all(all(a >= b or a < b for b in big) for a in big) else SLOW "slow"
}
"""


def _wide_plan(flips: int, last: str, repeat: int = 1) -> list[tuple[str, dict[str, int]]]:
    return [("flip", {"k": k}) for k in range(flips)] + [(last, {})] * repeat


def test_max_states_holds_between_the_branches_of_a_step() -> None:
    sim = contractsim.loads(WIDE).simulator(now="2024-01-01T00:00:00Z")
    report = sim.run(_wide_plan(10, "slow", 0), max_states=100)
    # the paths double each step: the bound stops the search inside step 6, not after it
    assert report.states_explored <= 100 + 2
    assert [s.skipped for s in report.steps] == [False] * 6 + [True] * 4
    assert report.verdict == "may_fail"
    assert report.notes[0] == (
        "--max-states 100 stopped the simulation during step 6: 20 of 32 branch(es) were "
        "simulated, the others were dropped"
    )
    assert report.notes[-1] == "steps were left out, so the plan is not known to succeed: may_fail"


def test_max_seconds_holds_between_the_branches_of_a_step() -> None:
    import time

    sim = contractsim.loads(WIDE).simulator(now="2024-01-01T00:00:00Z")
    start = time.monotonic()
    report = sim.run(_wide_plan(6, "slow", 3), max_seconds=0.5)
    elapsed = time.monotonic() - start
    # 64 paths of 20 ms or more each in the slow steps: without the check it takes seconds
    assert any("--max-seconds 0.5 stopped the simulation" in n for n in report.notes), report.notes
    assert report.verdict == "may_fail"
    assert elapsed < 3


def test_max_seconds_holds_inside_one_long_step() -> None:
    import time

    sim = contractsim.loads(WIDE).simulator(now="2024-01-01T00:00:00Z", step_seconds=60)
    start = time.monotonic()
    report = sim.run([("very_slow", {}), ("very_slow", {})], max_seconds=0.3)
    assert time.monotonic() - start < 3
    # the only branch of step 1 was cut: the step is left out, not an EVAL_ERROR of the contract
    assert [s.skipped for s in report.steps] == [True, True]
    assert report.notes[0] == "--max-seconds 0.3 stopped the simulation before step 1"
    assert report.verdict == "may_fail"
    # the run's deadline is gone afterwards: a plain step has only its own budget
    assert lib.BUDGET.run_deadline == float("inf")


@pytest.mark.parametrize("bad", [float("nan"), 0.0, -1.0])
def test_max_seconds_must_be_a_positive_number(bad: float) -> None:
    sim = contractsim.loads(NESTED).simulator(now="2024-01-01T00:00:00Z")
    with pytest.raises(ValueError, match="max_seconds must be a positive"):
        sim.run([("nest", {})], max_seconds=bad)


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_max_seconds_nan_is_a_usage_error(tmp_path: Path, value: str) -> None:
    from click.testing import CliRunner

    from contractsim.cli import main

    contract = tmp_path / "c.contract"
    contract.write_text(NESTED)
    plan = tmp_path / "p.yaml"
    plan.write_text("- tool: nest\n")
    res = CliRunner().invoke(main, ["simulate", str(contract), str(plan), "--max-seconds", value])
    assert res.exit_code == 2
    assert f"{value} is not a finite number of seconds" in res.output


BIG = """contract big version "1.0.0"
state { s: str = "", L: list[str] = [], n: int = 0 }
tool grow() { effect { s = zfill(1, 10000)  for i in range(9) { s = s + s } } }
tool app() { effect { L.append(s) } }
tool measure() { effect { n = len(str(L)) } }
tool many() { effect { for i in range(3000) { L.append(s + str(i)) } } }
"""


def test_a_state_variable_holding_the_same_text_many_times_is_bounded() -> None:
    sim = contractsim.loads(BIG, "big.contract").simulator(now="2024-01-01T00:00:00Z")
    report = sim.run([("grow", {})] + [("app", {})] * 5)
    assert [s.verdict for s in report.steps] == ["ok"] * 4 + ["fails", "fails"]
    (violation,) = report.steps[4].violations
    assert violation.code == "EVAL_ERROR"
    assert violation.message.startswith(
        "the contract cannot evaluate this: `L` would grow beyond 20,000,000 characters"
    )
    # the JSON report gives a large changed value as its text, cut: it stays small
    changes = report.steps[3].to_json()["changes"]
    assert changes[0]["var"] == "L" and changes[0]["after"].endswith("…")
    assert len(json.dumps(report.to_json())) < 3 * lib.MAX_VALUE_SIZE


def test_building_text_is_charged_to_the_step_budget() -> None:
    sim = contractsim.loads(BIG, "big.contract").simulator(now="2024-01-01T00:00:00Z")
    report = sim.run([("grow", {}), ("many", {})])
    (violation,) = report.steps[1].violations
    assert violation.code == "EVAL_ERROR"
    assert "visited more than 5,000,000 items" in violation.message


def test_text_of_a_huge_value_is_cut_while_it_is_written() -> None:
    import time

    from contractsim.compiler.values import show

    huge = ("x" * 10_000_000,) * 2000  # 20 billion characters when written out
    start = time.monotonic()
    assert len(show(huge, 10_000)) == 10_000
    assert lib.value_size(huge) > lib.MAX_VALUE_SIZE
    assert time.monotonic() - start < 1
    sim = contractsim.loads(BIG, "big.contract").simulator(now="2024-01-01T00:00:00Z")
    report = sim.run([("grow", {})] + [("app", {})] * 3 + [("measure", {})])
    assert report.verdict == "ok"
    assert report.paths[0].state["n"] == 10_000  # str() writes at most 10,000 characters


def test_values_nested_too_deeply_are_refused() -> None:
    deep: object = ()
    for _ in range(lib.MAX_VALUE_DEPTH + 1):
        deep = (deep,)
    with pytest.raises(lib.EvalError, match="200 levels of nesting"):
        lib.check_value_size(deep)
