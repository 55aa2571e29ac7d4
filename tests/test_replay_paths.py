"""Second round of the replay hot path (issue 13, branch s5b-replay): shortcuts taken per tool
give exactly what the general step machinery gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_replay_speed import CORPORA, _observed

from contractsim.api import Contract, load
from contractsim.simulator.step import Stepper

ROOT = Path(__file__).resolve().parent.parent


def _every_step(contract: Contract) -> list[tuple[Any, ...]]:
    """Every tool stepped from the initial state with the arguments of its first example (or
    none), and from the states that step reaches: every branch, every field."""
    sim = contract.simulator(now="2000-01-01T00:00:00Z")
    out: list[tuple[Any, ...]] = []
    states = [sim.initial_state()]
    for _ in range(2):
        reached = []
        for state in states:
            for name, ctool in contract.compiled.tools.items():
                args = {p.name: _sample(p.type) for p in ctool.ir.params}
                step = sim.step(state, name, args)
                out.append((name, step.branches, step.verdict))
                reached.extend(b.state for b in step.branches[:1])
        states = reached[:8]
    return out


def _sample(t: Any) -> Any:
    text = str(getattr(t, "name", ""))
    return {"int": 1, "float": 1.5, "bool": True, "str": "a"}.get(text, "a")


def test_a_flow_of_one_unguarded_transition_goes_straight_to_its_outcome() -> None:
    gorilla = load(ROOT / "examples/gorilla_fs/gorilla_fs.contract")
    sim = gorilla.simulator()
    stepper: Stepper = sim._stepper
    assert {stepper.direct_outcome(t) for t in gorilla.compiled.tools.values()} == {"ok"}
    enricher = load(ROOT / "examples/data_enricher/data_enricher.contract")
    flows = [t for t in enricher.compiled.tools.values() if t.flow.steps]
    assert flows
    stepper = enricher.simulator()._stepper
    assert all(stepper.direct_outcome(t) is None for t in flows)


@pytest.mark.parametrize(
    "example", ["data_enricher", "file_system", "bank_account", "login_session", "warehouse"]
)
def test_the_direct_outcome_steps_like_the_flow_walk(
    example: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    contract = load(next((ROOT / "examples" / example).glob("*.contract")))
    short = _every_step(contract)
    monkeypatch.setattr(Stepper, "direct_outcome", lambda self, ctool: None)
    assert _every_step(contract) == short


@pytest.mark.slow
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_replay_observes_the_same_without_the_direct_outcome(
    corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every recorded step of both corpora, every field of the observation, with and without
    the shortcut."""
    contract, runs = CORPORA[corpus]()
    short = _observed(contract, runs, messages=True)
    monkeypatch.setattr(Stepper, "direct_outcome", lambda self, ctool: None)
    long = _observed(contract, runs, messages=True)
    assert len(short) == len(long)
    for i, (a, b) in enumerate(zip(short, long, strict=True)):
        assert a == b, f"step {i}"


def test_replay_of_runs_built_by_hand_keeps_the_checks_of_observe() -> None:
    """Replay skips the type checks of ``sim.observe`` for the runs it read; a run built by hand
    with arguments that are no dict (or keys that are no text) still gets observe's errors."""
    from contractsim.replay import Run, Step, replay_runs

    contract = load(ROOT / "examples/gorilla_fs/gorilla_fs.contract")
    good = replay_runs(contract, [Run("r", [Step("pwd", {}, "ok")])])
    assert (good.steps, good.disagreements) == (1, [])
    with pytest.raises(TypeError, match="args must be a dict of parameter names to values"):
        replay_runs(contract, [Run("r", [Step("pwd", [], "ok")])])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"args must have str keys \(parameter names\)"):
        replay_runs(contract, [Run("r", [Step("pwd", {1: "a"}, "ok")])])  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="seen.status must be 'ok', 'error', 'crash' or None"):
        replay_runs(contract, [Run("r", [Step("pwd", {}, "fine")])])
