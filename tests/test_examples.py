"""The examples: every contract checks clean, every plan gets the verdict its file name states, and
every report matches docs/report.schema.json. Three reports are kept as golden files
(regenerate with CONTRACTSIM_UPDATE_GOLDEN=1)."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

import contractsim
from contractsim.cli import main

ROOT = Path(__file__).resolve().parent.parent
NOW = "2024-06-01T12:00:00Z"
CONTRACTS = sorted(ROOT.glob("examples/*/*.contract"))
PLANS = sorted(ROOT.glob("examples/*/plans/*.yaml"))
GOLDEN = ROOT / "tests" / "golden" / "reports"
GOLDEN_PLANS = [
    "examples/file_system/plans/ok_make_dir_then_write.yaml",
    "examples/session_protocol/plans/fails_query_before_init.yaml",
    "examples/email/plans/may_fail_network_not_observed.yaml",
]
EXIT = {"ok": 0, "fails": 1, "may_fail": 3}
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8"))


def expected_verdict(plan: Path) -> str:
    name = plan.name
    if name.startswith("may_fail_"):
        return "may_fail"
    if name.startswith("fails_"):
        return "fails"
    assert name.startswith("ok_"), f"plan file {name} does not start with ok_/fails_/may_fail_"
    return "ok"


def contract_of(plan: Path) -> Path:
    (contract,) = plan.parent.parent.glob("*.contract")
    return contract


@cache
def simulate(rel_plan: str) -> tuple[int, str]:
    """Run the CLI from the repository root, with paths relative to it (stable locations)."""
    plan = ROOT / rel_plan
    contract = contract_of(plan).relative_to(ROOT)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        res = CliRunner().invoke(
            main, ["simulate", str(contract), rel_plan, "--format", "json", "--now", NOW]
        )
    finally:
        os.chdir(cwd)
    return res.exit_code, res.output


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def test_examples_exist() -> None:
    assert len(CONTRACTS) >= 6 and len(PLANS) >= 60
    for plan in PLANS:
        expected_verdict(plan)


@pytest.mark.parametrize("contract", CONTRACTS, ids=[c.stem for c in CONTRACTS])
def test_example_contract_checks_clean(contract: Path) -> None:
    diags = contractsim.check(contract)
    assert [(d.severity, d.code, d.message) for d in diags] == []
    c = contractsim.load(contract)
    assert c.warnings == []
    assert c.compiled is not None


@pytest.mark.parametrize("plan", [rel(p) for p in PLANS])
def test_example_plan_verdict(plan: str) -> None:
    expected = expected_verdict(Path(plan))
    code, output = simulate(plan)
    report = json.loads(output)
    assert report["verdict"] == expected, output
    assert code == EXIT[expected], output


@pytest.mark.parametrize("plan", [rel(p) for p in PLANS])
def test_example_report_matches_schema(plan: str) -> None:
    _, output = simulate(plan)
    jsonschema.validate(
        json.loads(output), SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def test_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_schema_covers_optional_fields() -> None:
    """Reports with a goal, skipped steps, notes, execution reports and unknown probabilities."""
    c = contractsim.loads("""contract opt version "1.0.0"
state {
  n: int = 0
  flag: bool = unknown
}
event blip "a blip"
goal some = n > 0
tool inc(k: int = 1) cost k {
  reports { done: int }
  effect { n += k; if flag { n += 1 } }
  outcome blipped fails BLIP "blip" on blip probability 0.5
  outcome ok success { report done = k }
}
tool check() { require flag else NO_FLAG "flag is not set" }
""")
    sim = c.simulator(now=NOW)
    reports: list[Any] = [
        sim.run([("inc", {}), ("check", {}), ("inc", {"k": 2})], goal="some"),
        sim.run([("inc", {}), ("inc", {}), ("check", {})], stop_at_first=True, max_branches=1),
        sim.run([("inc", {}), ("inc", {})], max_depth=1),
        sim.run([("nope", {}), ("inc", {"k": "x"})]),
    ]
    seen_keys: set[str] = set()
    for r in reports:
        j = json.loads(json.dumps(r.to_json()))
        jsonschema.validate(j, SCHEMA)
        seen_keys |= set(j)
        for s in j["steps"]:
            seen_keys |= {f"step.{k}" for k in s}
            for o in s["outcomes"]:
                seen_keys |= {f"outcome.{k}" for k in o}
    assert {
        "goal",
        "failure_probability",
        "step.skipped",
        "step.reports",
        "step.cost",
        "step.failure_probability",
        "outcome.assumptions",
        "outcome.approximate",
    } <= seen_keys
    assert any(r.notes for r in reports)


def test_schema_rejects_malformed_reports() -> None:
    _, output = simulate(GOLDEN_PLANS[1])
    good = json.loads(output)
    for mutate in (
        lambda r: r.update(verdict="maybe"),
        lambda r: r.pop("steps"),
        lambda r: r["steps"][0]["violations"][0].pop("code"),
        lambda r: r["steps"][0]["violations"][0].update(kind="other"),
        lambda r: r.update(extra=1),
        lambda r: r["branches"][0].update(probability=1.5),
    ):
        bad = json.loads(json.dumps(good))
        mutate(bad)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA)


@pytest.mark.parametrize("plan", GOLDEN_PLANS)
def test_golden_report(plan: str) -> None:
    code, output = simulate(plan)
    assert code == EXIT[expected_verdict(Path(plan))]
    golden = GOLDEN / (Path(plan).stem + ".json")
    if os.environ.get("CONTRACTSIM_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(output, encoding="utf-8")
    assert golden.exists(), f"missing {golden}; run with CONTRACTSIM_UPDATE_GOLDEN=1"
    assert json.loads(output) == json.loads(golden.read_text(encoding="utf-8"))
    assert output == golden.read_text(encoding="utf-8")


def test_golden_plans_cover_every_verdict() -> None:
    assert sorted(expected_verdict(Path(p)) for p in GOLDEN_PLANS) == ["fails", "may_fail", "ok"]
