"""Replay's shortcuts answer what the general step answers: the quick path
(contractsim/simulator/quick.py), and observing a step once when the real state before it is
the carried one (``identical_states`` in contractsim/replay/loop.py).

Every recorded run of the repository is observed twice, call by call — once with the quick path
and once without — and the observations must be equal (and print the same); the replay reports
(JSON and text) must be byte-identical. Hand-made contracts cover what the quick path hands
back to the general step: warnings, ``fail`` statements, values too large, unknown state, tools
with protocol machines, ``observed when``, postconditions, a result the contract reads.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from contractsim.api import Contract, load, loads
from contractsim.compiler.values import UNKNOWN, FMap
from contractsim.replay import Run, load_adapter, read_runs, render_json, render_text, replay_runs
from contractsim.replay.loop import DEFAULT_NOW, identical
from contractsim.simulator.engine import Simulator
from contractsim.simulator.observe import Observation
from contractsim.simulator.quick import QuickObserver

ROOT = Path(__file__).resolve().parent.parent
GORILLA = ROOT / "examples/gorilla_fs/gorilla_fs.contract"
GORILLA_ADAPTER = str(ROOT / "examples/gorilla_fs/adapter.py") + ":from_bfcl"

# (contract, runs, adapter or None): every recorded run in the repository
CORPORA: dict[str, tuple[Path, Path, str | None]] = {
    "gorilla": (GORILLA, ROOT / "tests/data/bfcl/GorillaFileSystem.jsonl", GORILLA_ADAPTER),
    "gorilla-edge": (
        GORILLA,
        ROOT / "tests/data/bfcl/GorillaFileSystem.edge.jsonl",
        GORILLA_ADAPTER,
    ),
    "gorilla-snapshots": (
        GORILLA,
        ROOT / "tests/data/bfcl/GorillaFileSystem.snapshots.jsonl",
        None,
    ),
    "gorilla-sample": (GORILLA, ROOT / "examples/gorilla_fs/traces/sample.jsonl", None),
    "pantry": (
        ROOT / "examples/pantry/pantry.contract",
        ROOT / "examples/pantry/traces/recorded.jsonl",
        None,
    ),
}


def _corpus(name: str) -> tuple[Contract, list[Run]]:
    contract_path, runs_path, adapter = CORPORA[name]
    contract = load(contract_path)
    read = None if adapter is None else load_adapter(adapter)
    return contract, read_runs(runs_path, contract.compiled, read)


def _flipped(runs: list[Run]) -> list[Run]:
    """Every fifth step said to have ended the other way: false alarms and misses, which the
    quick path hands to the general step."""
    return [
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


def _simulator(contract: Contract, quick: bool) -> Simulator:
    sim = contract.simulator(now=DEFAULT_NOW)
    sim.explain = sim.messages = False  # as replay predicts
    sim.quick_observe = quick
    return sim


def _compare_observations(contract: Contract, runs: list[Run]) -> tuple[int, int]:
    """Observe every step both ways along the general path's states; (steps, quick answers)."""
    quick, general = _simulator(contract, True), _simulator(contract, False)
    observer = QuickObserver(quick)
    steps = answered = 0
    for run in runs:
        state = general.state_with(run.state)
        for step in run.steps:
            seen = Observation(step.outcome, step.result, step.error)  # type: ignore[arg-type]
            expected = general._observe_checked(state, step.tool, step.args, seen)
            got = quick._observe_checked(state, step.tool, step.args, seen)
            assert got == expected, (run.name, step)
            assert repr(got) == repr(expected), (run.name, step)  # (1 == True, 1.0 == 1 …)
            answered += observer.observe(state, step.tool, dict(step.args), seen) is not None
            steps += 1
            state = expected.state
    return steps, answered


@pytest.mark.slow
@pytest.mark.parametrize("corpus", sorted(CORPORA))
@pytest.mark.parametrize("flip", [False, True], ids=["recorded", "flipped"])
def test_every_recorded_call_is_observed_alike_both_ways(corpus: str, flip: bool) -> None:
    contract, runs = _corpus(corpus)
    if flip:
        runs = _flipped(runs)
    steps, answered = _compare_observations(contract, runs)
    assert steps > 0
    assert answered * 2 >= steps  # the quick path did answer most calls


@pytest.mark.slow
@pytest.mark.parametrize("corpus", sorted(CORPORA))
@pytest.mark.parametrize("flip", [False, True], ids=["recorded", "flipped"])
def test_replay_reports_are_byte_identical_with_and_without_the_quick_path(
    corpus: str, flip: bool
) -> None:
    contract, runs = _corpus(corpus)
    if flip:
        runs = _flipped(runs)
    fast = replay_runs(contract, runs)
    slow = replay_runs(contract, runs, simulators={DEFAULT_NOW: _simulator(contract, False)})
    assert fast.steps == slow.steps == sum(len(r.steps) for r in runs)
    assert render_json(fast, "c", "t") == render_json(slow, "c", "t")
    assert render_text(fast, "c", "t", show=None, by_rule=True) == render_text(
        slow, "c", "t", show=None, by_rule=True
    )


def test_the_sample_runs_take_the_quick_path_and_agree() -> None:
    """The quick form of the slow tests above, on the small sample (default run)."""
    contract, runs = _corpus("gorilla-sample")
    steps, answered = _compare_observations(contract, runs + _flipped(runs))
    assert answered > steps // 2


SMALL = """
contract quick version "1.0.0"
state {
  items: set[str] = {}
  prices: map[str, int] = {}
  count: int = 0
}
machine door "a protocol" {
  states shut, ajar
  initial shut
  shut -> ajar on open_it
  ajar -> shut on close_it
}
tool put(name: str, qty: int accepts int | str = 1) -> record { ok: bool } "add an item" {
  require name != "" else EMPTY "put: empty name"
  should len(name) < 5 else LONG "put: long name"
  effect { items.add(name) count = count + 1 }
}
tool warn_me(name: str) "a warning from the effects" {
  effect { if name == "w" { warn ODD "odd name {name}" } count = count + 1 }
}
tool stop(name: str) "a fail statement" {
  effect { if name == "x" { fail STOPPED "stopped at {name}" } count = count + 1 }
}
tool price(name: str) "an evaluation error in the effects" {
  effect count = prices[name]
}
tool open_it() "a machine" { }
tool close_it() "a machine" { }
tool watched(name: str) -> record { error?: str } "observed when" {
  outcome fine success
  outcome bad fails BAD "bad" observed when result.error != null
}
tool checked(name: str) "a postcondition" {
  effect count = count + 1
  ensure count > 0
}
tool echoes(name: str) -> str "reads its result" {
  effect items.add(result)
}
"""


def _small() -> Contract:
    return loads(SMALL, "quick.contract")


def test_only_simple_tools_have_a_plan() -> None:
    sim = _simulator(_small(), True)
    observer = QuickObserver(sim)
    tools = sim.compiled.tools
    from contractsim.simulator.quick import tool_plan

    planned = {name for name, ctool in tools.items() if tool_plan(sim, ctool) is not None}
    assert planned == {"put", "warn_me", "stop", "price"}
    assert observer.plans == {}


@pytest.mark.parametrize(
    ("tool", "args", "seen", "quick"),
    [
        ("put", {"name": "ab"}, Observation("ok", {"ok": True}), True),
        ("put", {"name": "ab", "qty": "7"}, Observation("ok", {"ok": True}), True),  # off-spec
        ("put", {"name": "abcdefg"}, Observation("ok", {"ok": True}), False),  # `should` fails
        ("put", {"name": "ab"}, Observation("ok", {"ok": "yes"}), True),  # result misfits
        ("put", {"name": ""}, Observation("error", None, "empty"), True),
        ("put", {"name": ""}, Observation("crash", None, "ValueError: x"), True),
        ("put", {"name": ""}, Observation("ok", {"ok": True}), False),  # false alarm
        ("put", {"name": "ab"}, Observation("error", None, "no"), False),  # a miss
        ("put", {"nom": "ab"}, Observation("ok", None), False),  # invalid arguments
        ("warn_me", {"name": "w"}, Observation("ok"), False),
        ("warn_me", {"name": "v"}, Observation("ok"), True),
        ("stop", {"name": "x"}, Observation("ok"), False),
        ("stop", {"name": "y"}, Observation("ok"), True),
        ("price", {"name": "a"}, Observation("ok"), True),
        ("price", {"name": "b"}, Observation("ok"), False),
        ("open_it", {}, Observation("ok"), False),
        ("watched", {"name": "a"}, Observation("ok", {"error": "no"}), False),
        ("checked", {"name": "a"}, Observation("ok"), False),
        ("echoes", {"name": "a"}, Observation("ok", "hi"), False),
        ("nosuch", {}, Observation("ok"), False),
    ],
)
def test_each_call_is_answered_alike_or_handed_to_the_general_step(
    tool: str, args: dict[str, Any], seen: Observation, quick: bool
) -> None:
    contract = _small()
    fast, slow = _simulator(contract, True), _simulator(contract, False)
    state = fast.initial_state({"items": ["ab"], "prices": {"a": 3}})
    got = fast._observe_checked(state, tool, args, seen)
    expected = slow._observe_checked(state, tool, args, seen)
    assert got == expected
    assert repr(got) == repr(expected)
    answer = QuickObserver(fast).observe(state, tool, dict(args), seen)
    assert (answer is not None) == quick
    if answer is not None:
        assert answer == expected


def test_a_state_with_unknown_values_takes_the_general_step() -> None:
    contract = _small()
    fast, slow = _simulator(contract, True), _simulator(contract, False)
    state = fast.initial_state({"count": UNKNOWN})
    seen = Observation("ok", {"ok": True})
    assert QuickObserver(fast).observe(state, "put", {"name": "ab"}, seen) is None
    got = fast._observe_checked(state, "put", {"name": "ab"}, seen)
    assert got == slow._observe_checked(state, "put", {"name": "ab"}, seen)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("x", "x", True),
        (1, 1, True),
        (1, 1.0, False),
        (1, True, False),
        (0.5, 0.5, True),
        (0.0, -0.0, False),
        (float("nan"), float("nan"), False),
        (None, None, True),
        (("a", 1), ("a", 1), True),
        (("a", 1), ("a", 1.0), False),
        (frozenset({"a", "b"}), frozenset({"b", "a"}), True),
        (frozenset({1}), frozenset({True}), False),
        (frozenset({1.0}), frozenset({1.0}), False),  # (inexact: unsure, observed again)
        (frozenset({1, "a"}), frozenset({1, "a"}), False),  # (mixed: unsure)
        (frozenset(), frozenset(), True),
        (FMap({"a": FMap({"q": 2.0})}), FMap({"a": FMap({"q": 2.0})}), True),
        (FMap({"a": FMap({"q": 2.0})}), FMap({"a": FMap({"q": 2})}), False),
        (FMap({"a": 1, "b": 2}), FMap({"b": 2, "a": 1}), False),  # (another order: unsure)
        (UNKNOWN, UNKNOWN, True),  # (the same object)
    ],
)
def test_identical_values_are_equal_values_of_equal_types(a: Any, b: Any, same: bool) -> None:
    """Replay observes a step once when the real state before it is the carried one: only
    values that no computation can tell apart count as the same."""
    assert identical(a, b) is same
    assert identical(b, a) is same


def test_a_real_state_identical_to_the_carried_one_is_observed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    contract, runs = _corpus("pantry")
    runs = runs[:40]
    sim = _simulator(contract, True)
    calls = 0
    observe_checked = Simulator._observe_checked

    def counted(self: Simulator, *args: Any) -> Any:
        nonlocal calls
        calls += 1
        return observe_checked(self, *args)

    monkeypatch.setattr(Simulator, "_observe_checked", counted)
    fast = replay_runs(contract, runs, simulators={DEFAULT_NOW: sim})
    once = calls
    calls = 0
    slow = replay_runs(contract, runs, simulators={DEFAULT_NOW: _simulator(contract, False)})
    steps = sum(len(r.steps) for r in runs)
    assert steps <= once < calls <= 2 * steps
    assert render_json(fast, "c", "t") == render_json(slow, "c", "t")


def test_result_keys_tell_plain_json_apart_exactly() -> None:
    from contractsim.simulator.observe import _result_key

    def key(value: Any, room: int = 256) -> Any:
        return _result_key(value, [room])

    values = [1, 1.0, True, 0.0, -0.0, "1", None, [1], {"a": 1}, {"a": 1.0}, {"a": 1, "b": 2}]
    values += [{"b": 2, "a": 1}, [[1]], ["a", ["b"]], [["a", "b"]]]
    keys = [key(v) for v in values]
    assert None not in keys
    assert len(set(keys)) == len(values)
    assert key({"a": [1, 2]}) == key({"a": [1, 2]})
    for unkeyed in (float("nan"), float("inf"), (1,), {1: "a"}, {"a": {1, 2}}, object()):
        assert key(unkeyed) is None
    assert key(list(range(300))) is None  # too large to be worth a key
    assert key(list(range(10)), room=5) is None


def test_a_remembered_result_keeps_its_misfit_note() -> None:
    contract = _small()
    sim, slow = _simulator(contract, True), _simulator(contract, False)
    state = sim.initial_state()
    seen = Observation("ok", {"ok": "maybe"})
    first = sim._observe_checked(state, "put", {"name": "ab"}, seen)
    again = sim._observe_checked(state, "put", {"name": "ab"}, seen)
    assert len(sim._stepper.real_results) == 1
    assert first.result_problem is not None
    assert "does not match" in first.result_problem
    assert again == first == slow._observe_checked(state, "put", {"name": "ab"}, seen)


def test_both_memos_of_plain_arguments_share_one_key() -> None:
    # validated arguments (observe) and off-spec warnings (quick) are remembered under the same
    # key: the tool and each argument's name, type and value; None when one is not plain
    from contractsim.simulator.observe import plain_args_key

    ctool = _simulator(_small(), True).compiled.tools["put"]
    key = plain_args_key(ctool, {"name": "a", "qty": 1})
    assert key == ("put", "name", str, "a", "qty", int, 1)
    assert plain_args_key(ctool, {"qty": 1}) != plain_args_key(ctool, {"qty": True})
    assert plain_args_key(ctool, {}) == ("put",)
    assert plain_args_key(ctool, {"name": "a", "qty": 1.0}) is None
    assert plain_args_key(ctool, {"name": ("a",)}) is None
