"""examples/pantry: a dynamically typed Python tool of our own (pantry.py), its contract, and
runs of the real tool (record.py). The contract must agree with the tool on every recorded call —
verdicts and the state after each call — and on every example plan, run against the real tool."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import contractsim
from contractsim.cli import main

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "examples" / "pantry"
CONTRACT = HERE / "pantry.contract"
TRACES = HERE / "traces" / "recorded.jsonl"
NOW = "2024-06-01T12:00:00Z"


def load_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"pantry_example_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(HERE))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(HERE))
    return module


@pytest.fixture(scope="module")
def replay_report() -> dict[str, Any]:
    res = CliRunner().invoke(
        main, ["replay", str(CONTRACT), str(TRACES), "--format", "json", "--show", "0"]
    )
    assert res.exit_code == 0, res.output[-3000:]
    report: dict[str, Any] = json.loads(res.output)
    return report


def test_every_recorded_call_agrees_with_the_contract(replay_report: dict[str, Any]) -> None:
    assert replay_report["runs"] == 300 and replay_report["steps"] == 2376
    assert replay_report["precision"] == 1.0 and replay_report["recall"] == 1.0
    assert replay_report["agreements"] == 2376
    assert replay_report["disagreements"] == [] and replay_report["contract_errors"] == 0
    # the runs fail for every reason the contract names, not one
    rules = {row["code"] for row in replay_report["by_rule"]}
    assert len(rules) >= 10, rules


def test_the_state_after_every_recorded_call_agrees(replay_report: dict[str, Any]) -> None:
    effects = replay_report["effects"]
    assert effects["steps"] == 2376
    assert effects["carried"] == 1.0 and effects["from_real"] == 1.0, effects["differences"][:3]
    assert set(effects["variables"]) == {"budget", "items", "shopping"}


def test_the_runs_exercise_every_tool_and_both_kinds_of_failure() -> None:
    outcomes: dict[tuple[str, str], int] = {}
    for line in TRACES.read_text(encoding="utf-8").splitlines():
        for step in json.loads(line)["steps"]:
            key = (step["tool"], step["outcome"])
            outcomes[key] = outcomes.get(key, 0) + 1
    for tool in ("add_item", "use_item", "buy", "tag_item"):
        for outcome in ("ok", "error", "crash"):
            assert outcomes.get((tool, outcome), 0) >= 10, (tool, outcome)
    assert outcomes[("set_budget", "ok")] >= 10 and outcomes[("set_budget", "error")] >= 10


def test_the_recorder_is_repeatable(tmp_path: Path) -> None:
    record = load_module("record")
    out = tmp_path / "again.jsonl"
    assert record.main(["-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == TRACES.read_text(encoding="utf-8")


def real_outcome(plan: dict[str, Any]) -> tuple[str, list[str]]:
    """Run a plan against the real tool: 'fails' at the first failing call, else 'ok'."""
    pantry = load_module("pantry")
    state = copy.deepcopy(plan.get("state") or {})
    tool = pantry.Pantry(**{k: v for k, v in state.items() if k in ("items", "budget", "shopping")})
    seen = []
    for step in plan["steps"]:
        try:
            result = getattr(tool, step["tool"])(**step["args"])
        except Exception as exc:  # noqa: BLE001 - a raise is a failure of the call
            return "fails", seen + [type(exc).__name__]
        if isinstance(result, dict) and "error" in result:
            return "fails", seen + [result["error"]]
        seen.append("ok")
    return "ok", seen


@pytest.mark.parametrize(
    "plan_file",
    sorted(p.name for p in (HERE / "plans").glob("*.yaml") if not p.name.startswith("may_fail")),
)
def test_each_example_plan_gets_the_real_tools_verdict(plan_file: str) -> None:
    plan = yaml.safe_load((HERE / "plans" / plan_file).read_text(encoding="utf-8"))
    expected, trail = real_outcome(plan)
    assert plan_file.startswith(expected + "_"), trail
    sim = contractsim.load(CONTRACT).simulator(now=NOW)
    report = sim.run(
        [(s["tool"], s["args"]) for s in plan["steps"]],
        sim.initial_state(plan.get("state") or {}),
    )
    assert report.verdict == expected


def test_writing_state_prefix_acknowledges_a_hiding_parameter() -> None:
    from contractsim.api import check_text

    base = 'contract c version "1.0.0"\nstate { budget: int = 0 }\n'
    hides = check_text(base + "tool t(budget: int) { require budget > 0 }\n")
    assert "W0608" in [d.code for d in hides]
    knows = check_text(base + "tool t(budget: int) { effect state.budget = budget }\n")
    assert "W0608" not in [d.code for d in knows]
