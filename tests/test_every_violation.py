"""Every violated rule is reported: a step that fails for one reason (bad arguments, a failed
precondition or protocol) still shows the failed soft preconditions (`should`) and the
OFF_SPEC_ARGUMENT warnings, marked as what else is wrong with the refused call (`refused`), in the
text report, the JSON report and the guard's structured error."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import contractsim
from contractsim.cli import main

NOW = "2024-01-01T00:00:00Z"
SCHEMA = json.loads(
    (Path(__file__).parent.parent / "docs" / "report.schema.json").read_text(encoding="utf-8")
)
TEXT = """contract s version "1.0.0"
state {
  ready: bool = false
  hidden: bool = unknown
}
tool t(n: int accepts int | str, size: int) {
  require ready else NOT_READY "not ready"
  require size < 10 else TOO_BIG "size {size} too big"
  should size < 5 else LARGE "size {size} is large"
}
tool u(n: int accepts int | str) {
  require hidden else HIDDEN "hidden is false"
  require not hidden else SHOWN "hidden is true"
  should n is int else TEXT_N "n is text"
}
tool v(size: int) {
  should size < 5 else LARGE "size {size} is large"
}
"""
OFF_SPEC = (
    't: `args.n`: must be an integer (got "3"); the declared type is int, the tool accepts '
    "int | str"
)


@pytest.fixture(scope="module")
def contract() -> contractsim.Contract:
    return contractsim.loads(TEXT)


def warned(step: contractsim.StepResult) -> list[tuple[str, str, bool]]:
    return [(w.code, w.message, w.refused) for w in step.warnings]


def test_a_failed_precondition_shows_the_soft_rules_too(contract: contractsim.Contract) -> None:
    sim = contract.simulator(now=NOW)
    step = sim.step(sim.initial_state(), "t", {"n": "3", "size": 7})
    assert step.verdict == "fails"
    assert [v.code for v in step.violations] == ["NOT_READY"]
    assert warned(step) == [
        ("OFF_SPEC_ARGUMENT", OFF_SPEC, True),
        ("LARGE", "size 7 is large", True),
    ]


def test_bad_arguments_show_the_other_arguments_off_spec(contract: contractsim.Contract) -> None:
    sim = contract.simulator(now=NOW)
    step = sim.step(sim.initial_state(), "t", {"n": "3", "size": "x"})
    assert [v.code for v in step.violations] == ["INVALID_ARGUMENT"]
    # `size` is refused already; the `should` needs valid arguments and is not evaluated
    assert warned(step) == [("OFF_SPEC_ARGUMENT", OFF_SPEC, True)]


def test_no_world_satisfies_the_rules_shows_the_soft_rules_too(
    contract: contractsim.Contract,
) -> None:
    sim = contract.simulator(now=NOW)
    step = sim.step(sim.initial_state(), "u", {"n": "x"})
    # every branch fails (each on an assumption about `hidden`), none runs the call
    assert all(b.failed for b in step.branches) and len(step.branches) == 2
    assert {c for c, _, _ in warned(step)} == {"OFF_SPEC_ARGUMENT", "TEXT_N"}
    assert all(refused for _, _, refused in warned(step))


def test_a_call_that_runs_has_plain_warnings(contract: contractsim.Contract) -> None:
    sim = contract.simulator(now=NOW)
    step = sim.step(sim.initial_state(), "v", {"size": 7})
    assert step.verdict == "ok"
    assert warned(step) == [("LARGE", "size 7 is large", False)]
    assert "refused" not in step.warnings[0].to_json()


def test_text_and_json_reports(tmp_path: Path) -> None:
    (tmp_path / "c.contract").write_text(TEXT, encoding="utf-8")
    plan = tmp_path / "p.json"
    plan.write_text(json.dumps([{"tool": "t", "args": {"n": "3", "size": 7}}]), encoding="utf-8")
    args = ["simulate", str(tmp_path / "c.contract"), str(plan), "--now", NOW]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 1
    assert (
        "       ! LARGE: size 7 is large (also wrong; the call was refused and did not run)"
        in text.output
    )
    out = CliRunner().invoke(main, [*args, "--format", "json"])
    report = json.loads(out.output)
    jsonschema.validate(report, SCHEMA)
    (step,) = report["steps"]
    assert [(w["code"], w.get("refused")) for w in step["warnings"]] == [
        ("OFF_SPEC_ARGUMENT", True),
        ("LARGE", True),
    ]


def test_guard_error_carries_the_other_problems(contract: contractsim.Contract) -> None:
    guard = contract.guard(mode="return", now=NOW)
    res = guard.wrap("t", lambda n, size: None)(n="3", size=7)
    assert not res.ok and res.error is not None
    assert res.error.code == "NOT_READY"
    assert [(w["code"], w["refused"]) for w in res.error.to_json()["warnings"]] == [
        ("OFF_SPEC_ARGUMENT", True),
        ("LARGE", True),
    ]
    assert [line for line in res.error.to_llm().splitlines() if "(warning)" in line] == [
        f"also (warning) OFF_SPEC_ARGUMENT: {OFF_SPEC}",
        "also (warning) LARGE: size 7 is large",
    ]
    assert [w.code for w in res.warnings] == ["OFF_SPEC_ARGUMENT", "LARGE"]
    with pytest.raises(contractsim.ContractViolation) as exc:
        contract.guard(mode="raise", now=NOW).wrap("t", lambda n, size: None)(n="3", size=7)
    assert [w.code for w in exc.value.error.warnings] == ["OFF_SPEC_ARGUMENT", "LARGE"]
