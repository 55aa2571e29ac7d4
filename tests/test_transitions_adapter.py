"""The `transitions` adapter (contractsim/runtime/transitions_adapter.py).

Differential test: for every protocol machine of every example (and of a test contract with
guards, outcome transitions, failing-outcome transitions and unknown values), random call
sequences are accepted or rejected identically by the adapter and by ``Simulator.step``, and the
machine state and contract state agree after every call. The mapping (the adapter's documented
semantics): a trigger follows the step's no-event branch; it is accepted when that branch is the
only one, certain, and either not a failure or a failure that moves the machine
(``on TOOL.OUTCOME``). For the examples this is checked to mean exactly "verdict ok with one
branch" for tools without environment events.
"""

from __future__ import annotations

import random
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from transitions import Machine, MachineError

import contractsim
from contractsim.runtime.transitions_adapter import ContractModel, ContractViolation
from contractsim.simulator.engine import Simulator
from contractsim.simulator.results import StepResult
from contractsim.simulator.state import State

ROOT = Path(__file__).resolve().parent.parent
NOW = "2024-06-01T12:00:00Z"
SEQUENCES_PER_MACHINE = 10_000  # the figure: 10,000 random call sequences per machine
SEQUENCE_LENGTH = 4
BAD = "/invalid"  # pool key suffix: invalid values for a parameter

DOOR = r"""
contract door version "1.0.0" "a door with a lock, to exercise guards and outcome transitions"

state {
  locked: bool = false
  pin: int = 1234
  opens: int = 0
  jammed: bool = false
  log: list[str] = []
  oiled: int = 0
  sensor: bool = unknown
}

event gust "a gust of wind slams the door"

machine door "the door" {
  states closed, opened, locked_st, alarm, broken
  initial closed
  final closed
  closed -> opened on open_door when force < 5
  closed -> broken on open_door
  opened -> closed on close_door.shut
  opened -> broken on close_door.slammed
  opened -> opened on wave when sensor
  closed -> locked_st on lock when code == pin
  locked_st -> closed on unlock.right
  locked_st -> alarm on unlock.wrong_code
  alarm -> closed on reset
  broken -> closed on repair
  closed -> closed on knock
}

tool open_door(force: int min 0 max 10 = 1) {
  require not jammed else JAMMED "the door is jammed ({oiled} oilings so far)" hint "call oil()"
  effect opens += 1
}
tool close_door(speed: int min 0 max 3) {
  outcome slammed fails SLAMMED "the wind slammed it" on gust probability 0.1 { jammed = true }
  outcome bounced partial when speed == 0 { log.append("bounced") }
  outcome shut success { log.append("shut") }
}
tool wave() { effect log.append("wave") }
tool lock(code: int) {
  require code >= 0 else NEGATIVE_CODE "negative code {code}"
  effect locked = true
}
tool unlock(code: int) {
  require locked else NOT_LOCKED "the door is not locked"
  outcome wrong_code fails WRONG_CODE "wrong code {code}" when code != pin { log.append("alarm") }
  outcome right success { locked = false }
}
tool reset(new_pin: int min 0 max 9999 = 1234) { effect pin = new_pin }
tool repair() { effect jammed = false }
tool knock() {
  require sensor else NO_ANSWER "nobody can tell whether anyone is in"
  effect log.append("knock")
}
tool oil() { effect { jammed = false; oiled += 1 } }
tool calibrate(on: bool) { effect sensor = on }
tool peek() {
  outcome dark partial when not sensor { log.append("dark") }
  outcome seen success { log.append("seen") }
}
"""

DOOR_POOLS: dict[str, dict[str, list[Any]]] = {
    "open_door": {"force": [0, 1, 4, 5, 9], "force" + BAD: [11, -1, "x"]},
    "close_door": {"speed": [0, 1, 3], "speed" + BAD: [4, None]},
    "lock": {"code": [1234, 1111, 0, -5], "code" + BAD: ["1234"]},
    "unlock": {"code": [1234, 1111, 0, 4321], "code" + BAD: ["x"]},
    "reset": {"new_pin": [1234, 1111, 4321], "new_pin" + BAD: [10000, -1]},
    "calibrate": {"on": [True, False], "on" + BAD: ["maybe"]},
}
DOOR_STARTS: list[dict[str, Any]] = [{}, {"sensor": True}, {"sensor": False, "jammed": True}]


# ---------------------------------------------------------------------------- cases
@cache
def door() -> contractsim.Contract:
    return contractsim.loads(DOOR, "door.contract")


def example_cases() -> list[tuple[str, str]]:
    out = []
    for path in sorted(ROOT.glob("examples/*/*.contract")):
        contract = contractsim.load(path)
        for name in contract.compiled.machines:
            out.append((str(path.relative_to(ROOT)), name))
    return out


@cache
def load(path: str) -> contractsim.Contract:
    return door() if path == "door" else contractsim.load(ROOT / path)


def plan_material(path: str) -> tuple[dict[str, dict[str, list[Any]]], list[dict[str, Any]]]:
    """Argument pools per tool and parameter, and start-state overrides, from the plans next
    to the contract, widened with invalid values of each value's type."""
    if path == "door":
        return DOOR_POOLS, DOOR_STARTS
    pools: dict[str, dict[str, list[Any]]] = {}
    starts: list[dict[str, Any]] = [{}]
    for plan_file in sorted((ROOT / path).parent.glob("plans/*.yaml")):
        plan = yaml.safe_load(plan_file.read_text(encoding="utf-8"))
        steps = plan.get("steps", []) if isinstance(plan, dict) else plan
        if isinstance(plan, dict) and plan.get("state") and plan["state"] not in starts:
            starts.append(plan["state"])
        for s in steps:
            for k, v in (s.get("args") or {}).items():
                values = pools.setdefault(s["tool"], {}).setdefault(k, [])
                if v not in values:
                    values.append(v)
    strings = sorted({v for t in pools.values() for vs in t.values() for v in vs if _is_str(v)})
    for tool in pools.values():
        for name, values in list(tool.items()):
            extra: list[Any] = [None]
            if any(_is_str(v) for v in values):
                extra += ["", "x" * 300, 7, *strings[:4]]
            if any(isinstance(v, int) and not isinstance(v, bool) for v in values):
                extra += [0, -1, 1001, 10**6, "ten"]
            if any(isinstance(v, list) for v in values):
                extra += [[], ["not-an-address"], "a"]
            tool[name + BAD] = [e for e in extra if e not in values]
    return pools, starts


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def random_args(rng: random.Random, ctool: Any, pools: dict[str, list[Any]]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for p in ctool.ir.params:
        good, bad = pools.get(p.name), pools.get(p.name + BAD)
        if rng.random() < 0.03:
            continue  # missing: invalid when required, the default otherwise
        if bad and (not good or rng.random() < 0.1):
            args[p.name] = rng.choice(bad)
        elif good:
            args[p.name] = rng.choice(good)
    if rng.random() < 0.02:
        args["unexpected"] = 1
    return args


# ---------------------------------------------------------------------------- the reference
def reference(
    sim: Simulator, state: State, machine: Any, tool: str, args: dict[str, Any]
) -> tuple[str, State, StepResult]:
    """What the adapter must do, from the simulator alone: "invalid" (no transition from the
    current state: MachineError), "accept" (with the successor state) or "reject"."""
    step = sim.step(state, tool, args)
    source = state.machine(machine.name)
    if tool in machine.by_tool and source not in machine.by_tool[tool]:
        assert step.verdict == "fails"
        return "invalid", state, step
    plain = [b for b in step.branches if b.event is None]
    if len(plain) == 1 and plain[0].certain:
        b = plain[0]
        moved = b.state.machine(machine.name) != source
        if tool not in machine.by_tool:  # a tool outside the machine, via adapter.call
            return ("reject", state, step) if b.failed else ("accept", b.state, step)
        if not b.failed or moved:
            return "accept", b.state, step
    return "reject", state, step


def has_events(contract: contractsim.Contract, tool: str) -> bool:
    ctool = contract.compiled.tools[tool]
    return any(t.ir.event is not None for ts in ctool.flow.outgoing.values() for t in ts)


def run_differential(
    path: str, machine_name: str, seed: int, sequences: int = SEQUENCES_PER_MACHINE
) -> dict[str, int]:
    contract = load(path)
    sim = contract.simulator(now=NOW)
    cm = contract.compiled.machines[machine_name]
    pools, starts = plan_material(path)
    in_machine = sorted(cm.tools)
    others = [t for t in contract.tools if t not in cm.tools] + ["no_such_tool"]
    rng = random.Random(seed)
    counts = {"accept": 0, "reject": 0, "invalid": 0, "calls": 0}
    for n in range(sequences):
        overrides = starts[0] if n % 5 == 0 or len(starts) == 1 else rng.choice(starts[1:])
        start = sim.initial_state(overrides)
        ignore = n % 4 == 0
        m = contract.to_transitions(
            machine_name, state=start, simulator=sim, ignore_invalid_triggers=ignore
        )
        model = m.model
        ref = start
        for _ in range(SEQUENCE_LENGTH):
            allowed = [t for t in in_machine if ref.machine(machine_name) in cm.by_tool[t]]
            r = rng.random()
            if r < 0.1:
                tool = rng.choice(others)
            elif r < 0.7 and allowed:
                tool = rng.choice(allowed)
            else:
                tool = rng.choice(in_machine)
            ctool = contract.compiled.tools.get(tool)
            args = random_args(rng, ctool, pools.get(tool, {})) if ctool else {}
            expected, ref_next, step = reference(sim, ref, cm, tool, args)
            recorded = len(model.contract_violations)
            if tool not in cm.tools:
                got = "accept" if m.contract_adapter.call(tool, **args) else "reject"
            else:
                try:
                    got = "accept" if getattr(model, tool)(**args) else "reject"
                except MachineError:
                    got = "invalid"
                if ignore and expected == "invalid":
                    assert got == "reject", (tool, args)
                    got = "invalid"
            context = (path, machine_name, n, tool, args, ref.to_json(), step.verdict)
            assert got == expected, context
            if got == "accept":
                if tool in cm.tools and not has_events(contract, tool):
                    assert step.verdict == "ok" or path == "door", context
                # a failure that moves the machine is accepted and recorded; a success is not
                failed = any(b.failed for b in step.branches if b.event is None)
                assert (len(model.contract_violations) > recorded) == failed, context
            else:
                assert len(model.contract_violations) > recorded, context
                last = model.contract_last_violation
                assert isinstance(last, ContractViolation) and last.tool == tool
                if got == "invalid":
                    assert last.code in ("PROTOCOL_VIOLATION", "INVALID_ARGUMENT")
                    assert any(
                        v.code == "PROTOCOL_VIOLATION" for v in model.contract_violations[recorded:]
                    ), context
                elif step.violations:
                    assert last.code == step.violations[0].code, context
                    assert last.message == step.violations[0].message
            if path != "door" and tool in cm.tools and not has_events(contract, tool):
                # the examples: accepted exactly when the simulator says ok, with one branch
                assert (got == "accept") == (step.verdict == "ok" and len(step.branches) == 1), (
                    context
                )
            if step.verdict == "ok" and len(step.branches) == 1:
                assert got == "accept", context
            ref = ref_next
            assert model.contract_state == ref, context
            assert model.state == ref.machine(machine_name), context
            counts[got] += 1
            counts["calls"] += 1
    return counts


CASES = [*example_cases(), ("door", "door")]


def test_examples_have_machines() -> None:
    names = {name for _, name in example_cases()}
    assert {"account", "session"} <= names


@pytest.mark.parametrize(
    "sequences",
    [
        pytest.param(SEQUENCES_PER_MACHINE // 10, id="quick"),
        pytest.param(SEQUENCES_PER_MACHINE, id="full", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize(("path", "machine"), CASES)
def test_differential(path: str, machine: str, sequences: int) -> None:
    seed = zlib.crc32(f"{path}:{machine}".encode())
    counts = run_differential(path, machine, seed=seed, sequences=sequences)
    assert counts["calls"] == sequences * SEQUENCE_LENGTH
    # every kind of answer occurs, so the comparison is not vacuous
    scale = sequences / SEQUENCES_PER_MACHINE
    assert counts["accept"] > 500 * scale and counts["reject"] > 500 * scale, counts
    assert counts["invalid"] > 200 * scale, counts


# ---------------------------------------------------------------------------- unit tests
def email() -> contractsim.Contract:
    return load("examples/email/email.contract")


def session() -> contractsim.Contract:
    return load("examples/session_protocol/session_protocol.contract")


def test_default_model_and_states() -> None:
    m = session().to_transitions()
    assert isinstance(m, Machine)
    model = m.model
    assert isinstance(model, ContractModel)
    assert model.state == "closed" and model.contract_state.machine("session") == "closed"
    assert sorted(m.states) == ["closed", "open"]
    assert m.get_state("closed").final and not m.get_state("open").final
    assert sorted(m.get_triggers("closed")) == ["init_session", "resume_session"]


def test_machine_selection_errors() -> None:
    door_m = door().to_transitions()
    assert door_m.model.state == "closed"
    with pytest.raises(ValueError, match="did you mean `session`"):
        session().to_transitions("sesion")
    two = contractsim.loads(
        DOOR.replace(
            'machine door "the door" {',
            "machine lamp {\n  states off\n  initial off\n"
            '  off -> off on oil\n}\nmachine door "the door" {',
        ),
        "two.contract",
    )
    with pytest.raises(ValueError, match="lamp, door"):
        two.to_transitions()
    with pytest.raises(ValueError, match="send_event"):
        session().to_transitions(send_event=False)


def test_blocked_guard_records_code_and_actual_values() -> None:
    m = email().to_transitions(state={"network": True, "quota": 0})
    model = m.model
    assert model.login(address="alice@example.com", password="correct-horse-battery")
    assert model.send_email(to="carol@example.com", subject="Hi", body="x") is False
    last = model.contract_last_violation
    assert last.code == "QUOTA_EXCEEDED"
    assert last.message == "the daily quota of 100 messages is used up"
    assert last.tool == "send_email" and last.state == "logged_in" and last.certain
    assert dict(last.values)["quota"] == "0"
    assert model.send_email(to="bounced@example.com", subject="Hi", body="x") is False
    assert "bounced@example.com bounced before" in model.contract_last_violation.message
    # both requires are violated: every one is recorded, the first becomes the last violation
    assert [v.code for v in model.contract_violations] == [
        "QUOTA_EXCEEDED",
        "RECIPIENT_SUPPRESSED",
        "QUOTA_EXCEEDED",
    ]
    assert model.contract_last_violation.code == "RECIPIENT_SUPPRESSED"


def test_unknown_blocks_and_is_recorded_as_uncertain() -> None:
    m = email().to_transitions()  # network = unknown
    model = m.model
    assert model.login(address="alice@example.com", password="correct-horse-battery") is False
    last = model.contract_last_violation
    assert last.code == "OFFLINE" and last.certain is False
    assert model.state == "logged_out" and model.contract_state["user"] == ""


def test_effects_applied_on_accept_only() -> None:
    m = email().to_transitions(state={"network": True})
    model = m.model
    before = model.contract_state
    assert model.send_email is not None
    assert model.login(address="alice@example.com", password="correct-horse-battery")
    assert model.contract_state["user"] == "alice@example.com"
    assert model.send_email(to="bob@example.org", subject="Minutes", body="Notes.")
    assert model.contract_state["quota"] == 99 and len(model.contract_state["outbox"]) == 1
    snapshot = model.contract_state
    assert not model.send_email(to="not-an-address", subject="Minutes", body="Notes.")
    assert model.contract_last_violation.code == "INVALID_ARGUMENT"
    assert model.contract_state is snapshot
    # flush_outbox: the provider's rate limit is an environment event; a trigger is the call
    # that went through, so the no-event branch (sent) is taken although the step's verdict is
    # "fails" on the event branch
    assert model.flush_outbox()
    assert model.contract_last_step.verdict == "fails"
    assert model.contract_state["delivered"] == 1 and model.contract_state["outbox"] == ()
    assert model.logout() and model.state == "logged_out"
    assert before["quota"] == 100  # the start state is untouched


def test_invalid_trigger_is_machine_error_and_protocol_violation() -> None:
    m = session().to_transitions()
    model = m.model
    with pytest.raises(MachineError):
        model.query(statement="SELECT 1")
    last = model.contract_last_violation
    assert last.code == "PROTOCOL_VIOLATION" and last.state == "closed"
    assert "init_session" in (last.hint or "")
    m2 = session().to_transitions(ignore_invalid_triggers=True)
    assert m2.model.query(statement="") is False  # invalid args too: both are recorded
    codes = [v.code for v in m2.model.contract_violations]
    assert codes[0] == "PROTOCOL_VIOLATION" and "INVALID_ARGUMENT" in codes


def test_outcome_transitions_guards_and_fallback() -> None:
    m = door().to_transitions(state={"sensor": True})
    model = m.model
    assert model.open_door(force=7) and model.state == "broken"  # guard false: next transition
    assert model.repair() and model.state == "closed"
    assert model.open_door() and model.state == "opened"
    assert model.close_door(speed=0)  # partial outcome named by no transition: stays
    assert model.state == "opened" and model.contract_state["log"] == ("bounced",)
    assert model.wave() and model.state == "opened"
    assert model.close_door(speed=2) and model.state == "closed"
    assert model.lock(code=1) is False  # the guard `code == pin` is false: not admitted
    assert model.contract_last_violation.code == "PROTOCOL_VIOLATION"
    assert model.lock(code=1234) and model.state == "locked_st"
    # a failing outcome that a transition names: the machine moves, the failure is recorded
    assert model.unlock(code=1) and model.state == "alarm"
    assert model.contract_last_violation.code == "WRONG_CODE"
    assert model.contract_state["log"][-1] == "alarm"
    assert m.contract_adapter.call("calibrate", on=False)
    assert model.reset() and model.knock() is False
    with pytest.raises(ValueError, match="trigger"):
        m.contract_adapter.call("knock")


def test_unknown_guard_and_undecided_outcome() -> None:
    m = door().to_transitions()  # sensor unknown
    model = m.model
    assert model.open_door()
    assert model.wave() is False  # the guard of `wave` cannot be decided
    last = model.contract_last_violation
    assert last.code == "PROTOCOL_VIOLATION" and "sensor" in last.message
    assert last.certain is False
    # which outcome `peek` has depends on `sensor`, and no rule is broken
    assert m.contract_adapter.call("peek") is False
    last = model.contract_last_violation
    assert last.code == "UNDECIDED" and "sensor" in last.message and last.certain is False
    assert m.contract_adapter.call("calibrate", on=True) and m.contract_adapter.call("peek")
    assert model.contract_state["log"] == ("seen",)


def test_user_callbacks_fire() -> None:
    class Door:
        def __init__(self) -> None:
            self.seen: list[tuple[str, Any, Any]] = []

        def on_enter_opened(self, event: Any) -> None:
            # effects are applied before the state changes: on_enter sees them
            self.seen.append(("enter", event.kwargs.get("force"), self.contract_state["opens"]))

    model = Door()
    after: list[str] = []
    m = door().to_transitions(model=model, after_state_change=lambda e: after.append(e.state.name))
    assert m.model is model
    m.on_exit_opened(lambda e: model.seen.append(("exit", e.event.name, None)))
    m.get_transitions("repair")[0].add_callback("after", lambda e: after.append("repaired"))
    m.add_transition("kick", "opened", "broken")  # a user trigger, not a contract tool
    assert model.open_door(force=3)
    assert model.kick() and model.state == "broken"
    assert model.repair()
    assert model.seen == [("enter", 3, 1), ("exit", "kick", None)]
    assert after == ["opened", "broken", "repaired", "closed"]
    assert model.contract_violations == []


def test_moving_the_machine_by_hand_moves_the_contract_machine() -> None:
    m = session().to_transitions(auto_transitions=True, state={"session_open": True, "token": "t"})
    model = m.model
    model.to_open()
    assert model.query(statement="SELECT 1")
    assert model.contract_state.machine("session") == "open"
    assert model.contract_state["queries_run"] == 1


def test_graph_machine() -> None:
    pytest.importorskip("graphviz")
    from transitions.extensions import GraphMachine

    m = email().to_transitions(graph=True, show_conditions=True)
    assert isinstance(m, GraphMachine)
    source = m.get_graph().source
    assert "logged_out -> logged_in" in source and "login" in source
    guarded = door().to_transitions(graph=True, show_conditions=True).get_graph().source
    assert "open_door when force &lt; 5" in guarded or "open_door when force < 5" in guarded


def test_docs_example_runs(capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    """The example in docs/embedding.md prints what its comments say."""
    import re

    text = (ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")
    section = text[text.index("## transitions adapter") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    code = match.group(1)
    monkeypatch.chdir(ROOT)
    exec(compile(code, "embedding.md", "exec"), {"__name__": "docs_example"})
    expected = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    assert capsys.readouterr().out.splitlines() == expected
