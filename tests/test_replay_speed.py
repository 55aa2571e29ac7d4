"""The shortcuts of replay's hot path change no answer (issue 13: replay steps/s).

Each shortcut is compared with the long way on real recorded runs (GorillaFileSystem, pantry)
or on the values it must treat alike; the timings live in benchmarks/bench_startup.py.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import contractsim
from contractsim.api import Contract, load, loads
from contractsim.compiler import lib
from contractsim.compiler.values import UNKNOWN, FMap, Fresh
from contractsim.replay import Run, load_adapter, read_runs, render_json, render_text, replay_runs
from contractsim.simulator import observe

ROOT = Path(__file__).resolve().parent.parent


def _gorilla() -> tuple[Contract, list[Run]]:
    contract = load(ROOT / "examples/gorilla_fs/gorilla_fs.contract")
    adapter = load_adapter(str(ROOT / "examples/gorilla_fs/adapter.py") + ":from_bfcl")
    path = ROOT / "tests/data/bfcl/GorillaFileSystem.jsonl"
    return contract, read_runs(path, contract.compiled, adapter)


def _pantry() -> tuple[Contract, list[Run]]:
    contract = load(ROOT / "examples/pantry/pantry.contract")
    path = ROOT / "examples/pantry/traces/recorded.jsonl"
    return contract, read_runs(path, contract.compiled, None)


CORPORA = {"gorilla": _gorilla, "pantry": _pantry}


def _observed(contract: Contract, runs: list[Run], *, messages: bool) -> list[tuple[Any, ...]]:
    """Every observed step of the runs (carried along reality), everything it holds."""
    sim = contract.simulator(now="2000-01-01T00:00:00Z")
    sim.explain = sim.messages = messages
    out: list[tuple[Any, ...]] = []
    for run in runs:
        state = sim.state_with(run.state)
        for s in run.steps:
            seen = contractsim.Observation(s.outcome, s.result, s.error)  # type: ignore[arg-type]
            obs = sim.observe(state, s.tool, s.args, seen)
            out.append(
                (
                    obs.state,
                    obs.status,
                    obs.outcome,
                    obs.branch,  # every field: state, warnings, report, result …
                    obs.notes,
                    obs.ambiguities,
                    obs.result_problem,
                    obs.predicted,
                    [b.kind for b in obs.prediction.branches],
                    [v.code for v in obs.prediction.violations],
                )
            )
            state = obs.state
    return out


@pytest.mark.slow
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_predicting_with_the_real_result_equals_observing_it_again(
    corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that reads no result is predicted with the real result bound and its branches are
    reused; stepping again along the real result (the long way) gives the same branch — its
    ``result`` included — on every recorded step."""
    contract, runs = CORPORA[corpus]()
    taken = 0
    inert = observe._result_is_inert

    def counting(*args: Any) -> bool:
        nonlocal taken
        answer = inert(*args)
        taken += answer
        return answer

    monkeypatch.setattr(observe, "_result_is_inert", counting)
    short = _observed(contract, runs, messages=True)
    assert taken > len(short) // 2  # the shortcut is the common case on both tools
    monkeypatch.setattr(observe, "_result_is_inert", lambda *args: False)
    long = _observed(contract, runs, messages=True)
    assert len(short) == len(long)
    for i, (a, b) in enumerate(zip(short, long, strict=True)):
        assert a == b, f"step {i}"


@pytest.mark.slow
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_replay_reports_the_same_with_messages_and_explanations_computed_everywhere(
    corpus: str,
) -> None:
    """Replay predicts without message templates and explanations and predicts the steps it
    reports again with both on: the reports equal those of a replay that had both on all along
    (effect agreement included: the pantry runs carry ``state_after``)."""
    contract, runs = CORPORA[corpus]()
    # every fifth step said to have ended the other way, so that there is much to explain
    runs = [
        replace(
            run,
            steps=[
                s
                if i % 5
                else replace(
                    s,
                    outcome="ok" if s.outcome != "ok" else "error",
                    error=None if s.outcome != "ok" else "it did not work",
                )
                for i, s in enumerate(run.steps)
            ],
        )
        for run in runs
    ]
    quick = replay_runs(contract, runs)
    full_sim = contract.simulator(now="2000-01-01T00:00:00Z")
    assert full_sim.explain and full_sim.messages
    from contractsim.replay.loop import DEFAULT_NOW

    full = replay_runs(contract, runs, simulators={DEFAULT_NOW: full_sim})
    assert full_sim.explain and full_sim.messages  # left as they were
    assert len(quick.disagreements) > 100  # much to explain
    assert sum(bool(d.violations) for d in quick.disagreements) > 50
    if corpus == "pantry":
        assert quick.effects.steps == quick.steps
    assert render_json(quick, "c", "t") == render_json(full, "c", "t")
    assert render_text(quick, "c", "t", show=None, by_rule=True) == render_text(
        full, "c", "t", show=None, by_rule=True
    )


def test_messages_off_gives_the_default_texts_and_no_hint() -> None:
    contract = loads(
        'contract c version "1.0.0"\n'
        "state {\n  n: int = 0\n}\n"
        "tool t(k: int) {\n"
        '  require k > n else TOO_SMALL "k ({k}) must exceed {n}" hint "pass {n + 1}"\n'
        "}\n"
    )
    sim = contract.simulator()
    state = sim.initial_state()
    (v,) = sim.step(state, "t", {"k": 0}).violations
    assert (v.code, v.message, v.hint) == ("TOO_SMALL", "k (0) must exceed 0", "pass 1")
    sim.messages = False
    (v,) = sim.step(state, "t", {"k": 0}).violations
    assert (v.code, v.message, v.hint) == ("TOO_SMALL", "`k > n` is false", None)


def test_argument_validation_is_remembered_apart_by_type() -> None:
    """``1`` and ``True`` are equal and hash alike, but they are different arguments."""
    contract = loads(
        'contract c version "1.0.0"\nstate {\n  n: int = 0\n}\n'
        "tool t(k: int, s: str | null) {\n  effect {\n    n = k\n  }\n}\n"
    )
    sim = contract.simulator()
    ctool = sim.compiled.tools["t"]

    def direct(args: dict[str, Any]) -> dict[str, Any] | None:
        from pydantic import ValidationError

        from contractsim.compiler.validators import model_values

        try:
            return model_values(ctool.args_model.model_validate(args))
        except ValidationError:
            return None

    for args in ({"k": 1, "s": None}, {"k": True, "s": None}, {"k": 1, "s": "x"}, {"k": "1"}):
        first = observe._validated_args(sim, ctool, dict(args))
        again = observe._validated_args(sim, ctool, dict(args))  # remembered
        assert first == again == direct(dict(args)), args
        if again is not None:
            again["k"] = 99  # the caller's copy: the remembered answer does not change
            assert observe._validated_args(sim, ctool, dict(args)) == direct(dict(args))
    assert [type(k) for k in sim._stepper.valid_args if k[0] == "t"]  # plain values were kept


def test_text_plus_text_keeps_the_bounds_of_arith() -> None:
    for a, b in (("a", "b"), ("x" * 15, "y" * 10), ("p" * 40, ""), ("", "")):
        with lib.step_budget(60):
            lib.BUDGET.iterations = 0
            fast = lib.plus(a, b)
            fast_charged = lib.BUDGET.iterations
            lib.BUDGET.iterations = 0
            slow = lib.arith("+", a, b)
            assert (fast, fast_charged) == (slow, lib.BUDGET.iterations)
    big = "z" * (lib.MAX_STRING // 2 + 1)
    with pytest.raises(lib.EvalError, match="beyond 10 MB"):
        lib.plus(big, big)


def test_iteration_order_is_remembered_per_collection() -> None:
    items = frozenset({"b", 3, "a", None, 1.5, True})
    fmap = FMap({"y": 1, "x": 2, 3: 0})
    for coll in (items, fmap):
        with lib.step_budget(60):
            lib.BUDGET.iterations = 0
            first = lib.iterate(coll)
            first.append("mutated by the caller")
            second = lib.iterate(coll)
            assert lib.BUDGET.iterations == 2 * len(coll)  # charged both times
        assert second == sorted(coll, key=contractsim.compiler.values.order)
    assert lib.iterate(frozenset({"b", "a"})) == ["a", "b"]  # an equal set built anew


def test_contains_unknown_finds_what_hides_below_flat_text() -> None:
    fresh = Fresh("id", 1, ((), ()))
    assert not lib.contains_unknown(FMap({"a": "x", "b": 1, "c": None, "d": 1.5, "e": True}))
    assert not lib.contains_unknown(("a", ("b", FMap({"c": frozenset({"d"})}))))
    assert lib.contains_unknown(FMap({"a": "x", "b": UNKNOWN}))
    assert lib.contains_unknown(FMap({UNKNOWN: "x"}))
    assert lib.contains_unknown(("a", ("b", FMap({"c": frozenset({fresh})}))))
    assert lib.contains_unknown(("a", lib.bounded(1, 5, True)))


def test_a_flat_record_is_read_as_the_reader_reads_it() -> None:
    """``contract_value`` reads a dict of text keys and plain scalars without its general
    reader; anything else (nested, other keys, out of bounds) still goes through the reader."""
    from contractsim.compiler import foreign

    def by_reader(value: Any) -> foreign.Converted:
        reader = foreign._Reader("result")
        out = reader.read(value, 0)
        return foreign.Converted(out, tuple(reader.problems), reader.exact)

    samples: list[dict[Any, Any]] = [
        {},
        {"error": "cp: cannot copy 'a': No such file or directory"},
        {"a": 1, "b": 1.5, "c": True, "d": None, "e": "x", "f": float("inf")},
        {"big": 1 << 300},
        {"long": "x" * (lib.MAX_STRING + 1)},
        {1: "int key"},
        {"nested": {"a": 1}},
        {"list": [1, 2]},
        {"unknown": UNKNOWN},
    ]
    for value in samples:
        fast = foreign.contract_value(value, "result")
        slow = by_reader(value)
        assert (fast.value, fast.problems, fast.exact) == (slow.value, slow.problems, slow.exact)
        assert type(fast.value) is type(slow.value)
    assert foreign._flat_record({"error": "x"}) == FMap({"error": "x"})
    assert foreign._flat_record({"nested": {"a": 1}}) is None
