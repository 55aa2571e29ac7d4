"""Regression tests for semantics problems found in review (each names what it guards)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import contractsim
from contractsim.simulator.engine import Simulator

NOW = "2024-01-01T00:00:00Z"


def sim_of(text: str) -> Simulator:
    return contractsim.loads(text).simulator(now=NOW)


def test_set_order_never_depends_on_the_hash_seed(tmp_path: Path) -> None:
    contract = tmp_path / "c.contract"
    contract.write_text(
        'contract c version "1.0.0"\n'
        'state { s: set[str] = {"pear", "apple", "fig", "kiwi", "plum"}  out: str = "" '
        " first: list[str] = [] }\n"
        'tool t() { effect { out = join(s, ","); first = take(s, 2) } }\n'
    )
    plan = tmp_path / "p.yaml"
    plan.write_text("- tool: t\n")
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "contractsim.cli",
                "simulate",
                str(contract),
                str(plan),
                "--format",
                "json",
                "--now",
                NOW,
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert res.returncode == 0, res.stderr
        outputs.add(res.stdout)
    assert len(outputs) == 1
    final = json.loads(outputs.pop())["branches"][0]["final_state"]
    assert final["out"] == "apple,fig,kiwi,pear,plum"
    assert final["first"] == ["apple", "fig"]


def test_unknown_protocol_guard_may_fail() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nstate { quota: int = unknown }\ntool go() { }\n'
        "machine m { states a, b  initial a  final b  a -> b on go when quota > 0 }\n"
    )
    result = sim.step(sim.initial_state(), "go", {})
    assert result.verdict == "may_fail"
    assert [v.code for v in result.violations] == ["PROTOCOL_VIOLATION"]
    assert not result.violations[0].certain


def test_no_plain_outcome_applies_is_reported_not_dropped() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nevent boom\nstate { n: int = 0 }\n'
        "tool t(x: int) {\n"
        "  outcome small success when x < 5\n"
        '  outcome blew fails BOOM "boom" on boom probability 0.1\n'
        "}\n"
    )
    result = sim.step(sim.initial_state(), "t", {"x": 10})
    codes = sorted(v.code for v in result.violations)
    assert codes == ["BOOM", "FLOW_STUCK"]
    stuck = next(b for b in result.branches if b.violations[0].code == "FLOW_STUCK")
    assert abs((stuck.probability or 0) - 0.9) < 1e-9


def test_guarded_lookup_with_unknown_left_side_is_unknown_not_an_error() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nstate { m: map[str, int] = {} ok: bool = unknown }\n'
        "tool t(k: str) {\n"
        '  require ok and m[k] > 0 else BAD "bad"\n'
        "}\n"
    )
    result = sim.step(sim.initial_state(), "t", {"k": "x"})
    assert result.verdict == "may_fail"
    assert [v.code for v in result.violations] == ["BAD"]


def test_fresh_keys_are_unknown_in_lookups() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nstate { paid: map[str, int] = {} }\n'
        "tool charge() -> record { id: str } { effect paid[result.id] = 5 }\n"
        "tool refund(id: str) {\n"
        '  require id in paid and paid[id] > 0 else UNKNOWN_PAYMENT "no {id}"\n'
        "}\n"
    )
    report = sim.run([("charge", {}), ("refund", {"id": "ch_1"})])
    assert report.steps[1].verdict == "may_fail"
    assert [v.code for v in report.steps[1].violations] == ["UNKNOWN_PAYMENT"]


def test_an_unknown_precondition_does_not_soften_a_later_certain_failure() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nevent timeout\nstate { card_valid: bool = unknown }\n'
        "tool pay() {\n"
        '  require card_valid else CARD "card refused"\n'
        "  outcome paid success\n"
        '  outcome timed_out fails TIMEOUT "gateway timeout" on timeout probability 0.03\n'
        "}\n"
    )
    report = sim.run([("pay", {})])
    # in every world something fails: the card is refused, or the gateway may time out
    assert report.verdict == "fails"


def test_a_decided_unknown_stays_decided() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nstate { network: bool = unknown  sent: int = 0 }\n'
        'tool send() { require network else OFFLINE "offline"  effect sent += 1 }\n'
    )
    report = sim.run([("send", {}), ("send", {})])
    assert [s.verdict for s in report.steps] == ["may_fail", "ok"]
    assert len(report.paths) == 2


def test_step_verdict_agrees_with_the_plan_when_the_main_path_fails_for_sure() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nstate { a: bool = unknown  b: bool = false }\n'
        'tool t() { require a else A "a"  require b else B "b" }\n'
    )
    report = sim.run([("t", {})])
    assert report.verdict == "fails"
    assert report.steps[0].verdict == "fails"


def test_changes_come_from_the_most_probable_successful_path() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nevent timeout\nstate { balance: int = 0 }\n'
        "tool deposit(n: int) {\n"
        "  outcome ok success { balance += n }\n"
        '  outcome slow fails TIMEOUT "timeout" on timeout probability 0.03\n'
        "}\n"
    )
    report = sim.run([("deposit", {"n": 1}), ("deposit", {"n": 1000})])
    assert report.steps[1].changes == [("balance", 1, 1001)]


def test_different_failures_are_not_merged() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nevent timeout\nevent fraud\nstate { n: int = 0 }\n'
        "tool pay() {\n"
        "  outcome ok success\n"
        '  outcome slow fails TIMEOUT "timeout" on timeout probability 0.03\n'
        '  outcome flagged fails FRAUD "fraud" on fraud probability 0.01\n'
        "}\n"
    )
    report = sim.run([("pay", {})])
    failing = sorted(
        (p.choices, round(p.probability or 0, 6)) for p in report.paths if p.failed_at is not None
    )
    assert failing == [(("pay:flagged@fraud",), 0.01), (("pay:slow@timeout",), 0.03)]


def test_stop_at_first_waits_for_a_certain_failure() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nstate { net: bool = unknown }\n'
        'tool up() { require net else OFFLINE "offline" }\n'
        'tool boom() { require false else BOOM "always" }\n'
    )
    report = sim.run([("up", {}), ("boom", {})], stop_at_first=True)
    assert report.verdict == "fails"
    assert not report.steps[1].skipped


def test_bounds_that_leave_steps_out_never_claim_success() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\ntool ok() { }\ntool boom() { require false else BOOM "x" }\n'
    )
    report = sim.run([("ok", {}), ("boom", {})], max_depth=1)
    assert report.verdict == "may_fail"
    assert report.steps[1].skipped


def test_a_false_protocol_guard_says_so() -> None:
    sim = sim_of(
        'contract c version "1.0.0"\nstate { quota: int = 0 }\ntool go(n: int) { }\n'
        "machine m { states a, b  initial a  final b  a -> b on go when quota > n }\n"
    )
    (violation,) = sim.step(sim.initial_state(), "go", {"n": 1}).violations
    assert violation.code == "PROTOCOL_VIOLATION"
    assert violation.message == (
        "`go` is allowed while m is `a` only when `quota > n`, which is false"
    )
    assert violation.values == (("quota", "0"), ("n", "1"))
