"""Simulator.observe: the prediction for a real call, the outcome reality matched (by success or
failure, and by `observed when`), and the state carried forward with the real result."""

from __future__ import annotations

from typing import Any

import pytest

import contractsim
from contractsim import Observation

SOURCE = """
contract fs version "1.0.0"
type Reply = record { error?: str, cwd?: str, id?: str }
event slow "the disk was slow"
state {
  dirs: set[str] = {"/", "/a"}
  cwd: str = "/"
  online: bool = unknown
  bumps: int = 0
  ids: set[str] = {}
}
tool cd(folder: str) -> Reply {
  require folder in dirs else NO_DIR "no such directory {folder}"
  effect cwd = folder
  outcome moved success
  outcome missing fails NO_DIR "gone"
      observed when result.error != null and startswith(result.error, "cd:") {
    bumps += 1
  }
  outcome crashed fails CRASH "it crashed"
      observed when error != null and startswith(error, "TypeError")
}
tool ping() -> Reply {
  require online else OFFLINE "offline"
  effect bumps += 1
}
tool create() -> record { id: str } {
  effect ids.add(result.id)
  outcome late partial SLOW "slow" on slow probability 0.1
  outcome made success
}
"""


@pytest.fixture(scope="module")
def sim() -> Any:
    return contractsim.loads(SOURCE).simulator(now="2024-06-01T00:00:00Z")


def seen(sim: Any, tool: str, args: dict[str, Any], obs: Observation) -> tuple[Any, ...]:
    o = sim.observe(sim.initial_state(), tool, args, obs)
    return (o.prediction.verdict, o.status, o.outcome, o.agrees, o.state["cwd"], o.state["bumps"])


@pytest.mark.parametrize(
    "args, obs, expected",
    [
        # predicted ok, returned a plain result: the first success outcome, its effects
        (
            {"folder": "/a"},
            Observation.returned({"cwd": "/a"}),
            ("ok", "ok", "moved", True, "/a", 0),
        ),
        # the result is recognised as failure `missing`: its own effects only
        (
            {"folder": "/a"},
            Observation.returned({"error": "cd: no"}),
            ("ok", "error", "missing", False, "/", 1),
        ),
        # predicted failure, but the call succeeded: the effects happened anyway
        (
            {"folder": "/b"},
            Observation.returned({"cwd": "/b"}),
            ("fails", "ok", "moved", False, "/b", 0),
        ),
        # predicted failure, recorded failure (replay gives the status)
        (
            {"folder": "/b"},
            Observation("error", None, "cd: no"),
            ("fails", "error", None, True, "/", 0),
        ),
        # an exception the contract recognises
        (
            {"folder": "/a"},
            Observation.raised(TypeError("bad")),
            ("ok", "crash", "crashed", False, "/", 0),
        ),
        # an exception it does not: no outcome, state unchanged
        (
            {"folder": "/a"},
            Observation.raised(ValueError("x")),
            ("ok", "crash", None, False, "/", 0),
        ),
    ],
)
def test_observed_outcomes(sim: Any, args: dict[str, Any], obs: Observation, expected: Any) -> None:
    assert seen(sim, "cd", args, obs) == expected


def test_notes_say_where_contract_and_reality_part(sim: Any) -> None:
    o = sim.observe(
        sim.initial_state(), "cd", {"folder": "/b"}, Observation.returned({"cwd": "/b"})
    )
    assert o.notes == ("the contract predicted a failure, but the call succeeded",)
    o = sim.observe(
        sim.initial_state(), "cd", {"folder": "/a"}, Observation.raised(ValueError("x"))
    )
    assert o.notes == (
        "the contract predicted success, but the call failed",
        "the contract has no failure here that fits; the state is unchanged",
    )
    o = sim.observe(sim.initial_state(), "cd", {"folder": "/a"}, Observation.returned({"x": 1}))
    assert o.notes == ("the result does not match `-> Reply`: `result.x`: is not a declared field",)


def test_a_real_success_decides_an_unknown_precondition(sim: Any) -> None:
    ok = sim.observe(sim.initial_state(), "ping", {}, Observation.returned({}))
    assert (ok.prediction.verdict, ok.status, ok.state["online"], ok.state["bumps"]) == (
        "may_fail",
        "ok",
        True,
        1,
    )
    failed = sim.observe(sim.initial_state(), "ping", {}, Observation("error", None, "offline"))
    assert (failed.status, failed.state["online"], failed.state["bumps"]) == ("error", False, 0)
    # a may_fail counts as a predicted failure: it agrees with the failure, not with the success
    assert failed.agrees and not ok.agrees
    assert ok.notes == failed.notes == ()


def test_the_real_result_is_stored_not_a_fresh_value(sim: Any) -> None:
    o = sim.observe(sim.initial_state(), "create", {}, Observation.returned({"id": "r-1"}))
    assert o.state["ids"] == frozenset({"r-1"})
    # of the event branch and the plain one, the plain (likelier) one is taken
    assert o.outcome == "made"


def test_unknown_tools_and_rejected_arguments(sim: Any) -> None:
    o = sim.observe(sim.initial_state(), "rmdir", {}, Observation("error", None, "no"))
    assert (o.prediction.verdict, o.status, o.agrees, o.notes) == ("fails", "error", True, ())
    o = sim.observe(sim.initial_state(), "cd", {"folder": 3}, Observation.returned({}))
    assert (o.status, o.agrees) == ("ok", False)
    assert o.notes == ("the call went through, but the contract rejects these arguments",)
    assert o.state == sim.initial_state()


EVENTS = """
contract ev version "1.0.0"
type Opened = record { token: str }
event rate_limit "limited"
state {
  attempts: int = 0
  tokens: set[str] = {}
}
tool flush() {
  outcome limited fails RATE_LIMITED "limited" on rate_limit probability 0.02 {
    attempts += 1
  }
  outcome sent success
}
tool open() -> Opened {
  effect tokens.add(result.token)
}
"""


def test_an_unrecognised_exception_is_not_an_event_outcome() -> None:
    sim = contractsim.loads(EVENTS).simulator(now="2024-06-01T00:00:00Z")
    o = sim.observe(sim.initial_state(), "flush", {}, Observation.raised(TypeError("bug")))
    assert (o.status, o.outcome, o.state["attempts"]) == ("crash", None, 0)
    # a recorded error (not a crash) may be the event's failure: its effects apply
    o = sim.observe(sim.initial_state(), "flush", {}, Observation("error", None, "limited"))
    assert (o.status, o.outcome, o.state["attempts"]) == ("error", "limited", 1)


def test_a_none_result_is_checked_against_the_return_type() -> None:
    sim = contractsim.loads(EVENTS).simulator(now="2024-06-01T00:00:00Z")
    o = sim.observe(sim.initial_state(), "open", {}, Observation.returned(None))
    assert o.status == "ok"
    assert o.notes[0].startswith("the result does not match `-> Opened`")


STOPS = """
contract engine version "1.0.0"
state {
  running: bool = true
  busy: bool = unknown
  stops: int = 0
}
tool shutdown(force: bool) {
  outcome refused fails ENGINE_BUSY "the engine is still busy" when busy and not force {
    running = false                # effects on failure: the engine stops, then the call fails
    stops += 1
  }
  outcome done success {
    running = false
  }
}
tool start() {
  require not running else ALREADY_RUNNING "the engine runs"
  effect running = true
}
"""


@pytest.mark.parametrize(
    "seen",
    [
        Observation("error", None, "busy"),
        Observation("crash", None, "RuntimeError: busy"),
        Observation.raised(RuntimeError("busy")),
    ],
    ids=["returned", "crash-recorded", "raised"],
)
def test_a_raised_failure_applies_the_chosen_fails_outcome(seen: Observation) -> None:
    """Issue 11 item 5: a crash that no `observed when` decides takes the `fails` outcome the
    contract chose by `when`, with its effects on failure, as a returned error does."""
    sim = contractsim.loads(STOPS).simulator(now="2024-06-01T00:00:00Z")
    o = sim.observe(sim.initial_state(), "shutdown", {"force": False}, seen)
    assert o.outcome == "refused"
    assert (o.state["running"], o.state["stops"]) == (False, 1)
    assert o.notes == ()
    # the next call is judged from the state the failure left: `start` is allowed
    assert sim.observe(o.state, "start", {}, Observation.returned(None)).predicted == "ok"


def test_the_guard_keeps_the_effects_of_a_raised_failure() -> None:
    guard = contractsim.loads(STOPS).guard(mode="return")

    @guard.tool()
    def shutdown(force: bool) -> None:
        raise RuntimeError("busy")

    got = shutdown(force=False)
    assert got.error is not None and got.error.code == "ENGINE_BUSY"
    assert got.error.detail == "RuntimeError: busy"
    assert (guard.state["running"], guard.state["stops"]) == (False, 1)
    assert guard.last is not None and guard.last.outcome == "refused"


# ----------------------------------------------------------------- values read from Python
class _BrokenMessage(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message")


def test_a_result_that_cannot_be_read_is_unknown_for_effects_and_read_where_it_can(sim) -> None:  # type: ignore[no-untyped-def]
    reply: dict[str, Any] = {"error": "cd: gone"}
    reply["loop"] = [reply]
    o = sim.observe(sim.initial_state(), "cd", {"folder": "/a"}, Observation.returned(reply))
    # `observed when result.error …` still reads the part that can be read
    assert (o.status, o.outcome, o.state["bumps"]) == ("error", "missing", 1)
    looping: dict[str, Any] = {"id": "x-1"}
    looping["again"] = looping
    o = sim.observe(sim.initial_state(), "create", {}, Observation.returned(looping))
    assert (o.status, o.outcome) == ("ok", "made")
    assert o.state["ids"] == frozenset({contractsim.UNKNOWN})  # the success effect applied
    assert o.notes == ("the result cannot be read: `result.again` contains itself",)
    assert o.result_problem == o.notes[0]


def test_an_exception_whose_text_raises_is_observed_by_its_type(sim) -> None:  # type: ignore[no-untyped-def]
    obs = Observation.raised(_BrokenMessage())
    assert obs.error == "_BrokenMessage: <its message cannot be read>"
    o = sim.observe(sim.initial_state(), "ping", {}, obs)
    assert (o.status, o.state["bumps"]) == ("crash", 0)


def test_the_reader_of_python_values() -> None:
    import dataclasses
    import datetime
    import decimal
    import enum

    from pydantic import BaseModel

    from contractsim.compiler.foreign import MAX_NODES, contract_value
    from contractsim.compiler.values import FMap

    class Colour(enum.Enum):
        RED = "red"

    @dataclasses.dataclass
    class Point:
        x: int
        when: datetime.date

    class Model(BaseModel):
        name: str
        tags: list[str]

    class Text(str):
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no eq")

        __hash__ = str.__hash__

    shared = [1]
    u = contractsim.UNKNOWN
    cases: list[tuple[Any, Any, tuple[str, ...]]] = [
        ({"a": [1, {2}]}, FMap({"a": (1, frozenset({2}))}), ()),
        (Point(1, datetime.date(2024, 5, 20)), FMap({"x": 1, "when": "2024-05-20"}), ()),
        (Model(name="n", tags=["t"]), FMap({"name": "n", "tags": ("t",)}), ()),
        (Colour.RED, "red", ()),
        (decimal.Decimal("12"), 12, ()),
        (decimal.Decimal("1.5"), 1.5, ()),
        (Text("a"), "a", ()),
        ([shared, shared], ((1,), (1,)), ()),  # shared, not a cycle
        (2**256, 2**256, ()),
        (2**256 + 1, u, ("`value` is an integer beyond 2**256",)),
        ({"k": object()}, FMap({"k": u}), ("`value.k` is of type `object`, not a contract value",)),
        ({1: {"x y": b""}}, FMap({1: FMap({"x y": u})}),
         ("`value[1][x y]` is of type `bytes`, not a contract value",)),
    ]  # fmt: skip
    for given, value, problems in cases:
        converted = contract_value(given)
        assert (converted.value, converted.problems) == (value, problems), given
    # a shared value referenced 2**40 times is cut at the bound, quickly
    wide: list[Any] = [1]
    for _ in range(40):
        wide = [wide, wide]
    converted = contract_value(wide)
    assert converted.problems[0].endswith(f"is beyond the first {MAX_NODES:,} values read")
    # at most three problems are listed
    many = contract_value([object()] * 10)
    assert len(many.problems) == 4 and many.problems[-1] == "… and 7 more"
    # the exact flag: plain data can be kept as it is
    assert contract_value({"a": [1, {2}, frozenset()]}).exact
    assert not contract_value({"a": Text("x")}).exact
