"""The runtime guard: refusals before the call, outcomes and effects after it, drift, observers,
threads and async. Real functions are called (or provably not called) in every test."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import contractsim
from contractsim import CallResult, ContractViolation

ROOT = Path(__file__).resolve().parents[1]
BACKUP = ROOT / "examples" / "backup" / "backup.contract"
NOW = "2024-06-01T12:00:00Z"
REPORT = {"dirs": ["/", "/data"], "files": {"/data/report.txt": "Q3"}}

SESSION = """
contract svc version "1.0.0"
type Opened = record { token: str }
const LIMIT = 1000
state {
  online: bool = unknown
  tokens: set[str] = {}
  count: int = 0
  level: int = 0
}
tool open_session() -> Opened {
  require online else OFFLINE "the service is offline" hint "wait until it is back"
  effect tokens.add(result.token)
}
tool query(q: str min_length 1) -> record { rows: int } {
  require len(tokens) > 0 else NO_SESSION "no session is open" hint "call open_session() first"
  should len(q) < 20 else LONG_QUERY "a {len(q)}-character query is slow"
}
tool bump() {
  require count < LIMIT else FULL "the counter is full"
  effect count += 1
}
tool close() {
  effect tokens.clear()
}
tool set_level(to: int min 0 max 9) {
  effect level = to
}
machine lifecycle {
  states idle, busy
  initial idle
  idle -> busy on open_session
  busy -> busy on query
  busy -> idle on close
}
"""


class Calls:
    """A real function that counts its calls."""

    def __init__(self, answer: Any = None, raises: BaseException | None = None) -> None:
        self.count = 0
        self.answer = {} if answer is None else answer
        self.raises = raises

    def __call__(self, **kwargs: Any) -> Any:
        self.count += 1
        if self.raises is not None:
            raise self.raises
        return self.answer


def backup_guard(mode: str = "raise") -> contractsim.Guard:
    return contractsim.load(BACKUP).guard(state=REPORT, mode=mode, now=NOW)


def session_guard(**kwargs: Any) -> contractsim.Guard:
    return contractsim.loads(SESSION).guard(now=NOW, **kwargs)


# ---------------------------------------------------------------------------- before the call
def test_a_refused_call_is_not_made_and_says_why_with_values_hint_and_allowed_tools() -> None:
    guard = backup_guard()
    delete = Calls()

    def delete_file(path: str) -> Any:
        return delete(path=path)

    guarded = guard.wrap("delete_file", delete_file)
    with pytest.raises(ContractViolation) as info:
        guarded("/data/report.txt")
    assert delete.count == 0
    err = info.value
    assert err.code == "NO_BACKUP"
    data = err.to_json()
    assert data["error"] == "NO_BACKUP"
    assert data["tool"] == "delete_file"
    assert data["blocked"] is True
    assert data["message"] == (
        "/data/report.txt is the only copy of its content; deleting it would lose it"
    )
    assert data["hint"] == "call copy_file(src=/data/report.txt, dst=/archive/report.txt) first"
    assert data["allowed_tools"] == ["list_dir", "read_file", "make_dir", "copy_file"]
    assert data["violations"][0]["values"] == {
        "path": '"/data/report.txt"',
        "files": '{"/data/report.txt": "Q3"}',
        "backed_up(path)": "false",
    }
    assert err.to_llm().splitlines() == [
        'delete_file(path="/data/report.txt") was refused: NO_BACKUP: /data/report.txt is the '
        "only copy of its content; deleting it would lose it",
        '  where path = "/data/report.txt"',
        '  where files = {"/data/report.txt": "Q3"}',
        "  where backed_up(path) = false",
        "Fix: call copy_file(src=/data/report.txt, dst=/archive/report.txt) first",
        "Other tools you can call now: list_dir, read_file, make_dir, copy_file",
    ]
    assert guard.state["files"] == {"/data/report.txt": "Q3"}
    assert guard.history[-1].status == "blocked"
    assert guard.history[-1].warnings == ()  # a refusal is no "may fail" warning as well


def test_return_mode_gives_a_structured_error_instead_of_raising() -> None:
    guard = backup_guard("return")
    copy = Calls()
    result = guard.wrap("copy_file", lambda src, dst: copy(src=src, dst=dst))(
        "/data/report.txt", "/archive/report.txt"
    )
    assert isinstance(result, CallResult)
    assert copy.count == 0
    assert not result.ok and result.error is not None
    assert result.error.code == "PARENT_MISSING"
    assert result.error.hint == "call make_dir(path=/archive) first"
    assert result.to_json()["ok"] is False
    assert result.to_json()["error"] == "PARENT_MISSING"


def test_arguments_are_validated_first_and_name_the_field() -> None:
    guard = backup_guard()
    read = Calls({"content": "x"})
    guarded = guard.wrap("read_file", lambda path: read(path=path))
    with pytest.raises(ContractViolation) as info:
        guarded("data/report.txt")
    assert read.count == 0
    assert info.value.code == "INVALID_ARGUMENT"
    assert info.value.error.field == "args.path"
    assert "does not match the pattern" in info.value.error.message


def test_every_violated_precondition_is_reported() -> None:
    guard = backup_guard()
    with pytest.raises(ContractViolation) as info:
        guard.wrap("copy_file", lambda src, dst: {})("/data/nope.txt", "/missing/x.txt")
    codes = [v["code"] for v in info.value.to_json()["violations"]]
    assert codes == ["NOT_FOUND", "PARENT_MISSING"]
    assert info.value.to_llm().splitlines()[1] == (
        "also PARENT_MISSING: directory /missing does not exist"
    )


def test_protocol_violation_names_the_way_to_an_allowed_state() -> None:
    guard = session_guard(state={"online": True, "tokens": ["t"]})
    with pytest.raises(ContractViolation) as info:
        guard.wrap("query", lambda q: {"rows": 1})("select")
    assert info.value.code == "PROTOCOL_VIOLATION"
    assert info.value.error.hint == "call open_session first"
    assert "open_session" in info.value.error.allowed_tools
    assert "query" not in info.value.error.allowed_tools


def test_check_answers_without_calling() -> None:
    guard = backup_guard()
    refusal = guard.check("delete_file", {"path": "/data/report.txt"})
    assert refusal is not None and refusal.code == "NO_BACKUP"
    assert guard.check("read_file", {"path": "/data/report.txt"}) is None
    assert not guard.history


# ----------------------------------------------------------------------------- after the call
def test_effects_of_a_real_success_are_tracked() -> None:
    guard = backup_guard()
    guard.wrap("make_dir", lambda path: {})("/archive")
    guard.wrap("copy_file", lambda src, dst: {})("/data/report.txt", "/archive/report.txt")
    assert guard.state["files"] == {"/data/report.txt": "Q3", "/archive/report.txt": "Q3"}
    # the copy made the delete legal
    assert guard.wrap("delete_file", lambda path: {})("/data/report.txt") == {}
    assert guard.state["files"] == {"/archive/report.txt": "Q3"}
    assert [r.status for r in guard.history] == ["ok", "ok", "ok"]
    assert [r.outcome for r in guard.history] == ["made", "copied", "deleted"]
    assert not guard.drift


def test_a_result_with_an_error_key_is_the_declared_failure_and_changes_nothing() -> None:
    guard = backup_guard("return")
    guard.wrap("make_dir", lambda path: {})("/archive")
    result = guard.wrap("copy_file", lambda src, dst: {"error": "disk full"})(
        "/data/report.txt", "/archive/report.txt"
    )
    assert not result.ok
    assert result.outcome == "failed"
    assert result.error is not None and result.error.code == "COPY_FAILED"
    assert result.error.blocked is False
    assert result.value == {"error": "disk full"}
    assert guard.state["files"] == {"/data/report.txt": "Q3"}
    assert result.error.detail == '{"error": "disk full"}'
    assert 'The tool said: {"error": "disk full"}' in result.to_llm()
    # a failure the contract declares and recognises is not drift
    assert not guard.drift
    assert guard.history[-1].outcome == "failed"


def test_raise_mode_returns_the_real_value_even_for_a_recognised_failure() -> None:
    guard = backup_guard()
    assert guard.wrap("read_file", lambda path: {"error": "EIO"})("/data/report.txt") == {
        "error": "EIO"
    }
    assert guard.last is not None and guard.last.outcome == "failed"
    assert guard.last.status == "error"


def test_a_raising_tool_leaves_the_state_unchanged_and_is_logged_as_drift() -> None:
    guard = backup_guard()
    guard.wrap("make_dir", lambda path: {})("/archive")
    before = guard.state
    boom = Calls(raises=OSError("read-only file system"))
    guarded = guard.wrap("copy_file", lambda src, dst: boom(src=src, dst=dst))
    with pytest.raises(OSError, match="read-only"):
        guarded("/data/report.txt", "/archive/report.txt")
    assert guard.state == before
    (drift,) = guard.drift
    assert drift.status == "crash"
    assert drift.error == "OSError: read-only file system"
    returning = backup_guard("return")
    returning.wrap("make_dir", lambda path: {})("/archive")
    result = returning.wrap("copy_file", lambda src, dst: boom(src=src, dst=dst))(
        "/data/report.txt", "/archive/report.txt"
    )
    assert not result.ok and result.error is not None
    assert result.error.code == "TOOL_RAISED"
    assert result.error.message == "OSError: read-only file system"
    assert isinstance(result.exception, OSError)


def test_drift_log_is_exportable(tmp_path: Path) -> None:
    guard = backup_guard()
    with pytest.raises(PermissionError):
        guard.wrap("read_file", Calls(raises=PermissionError("denied")))(path="/data/report.txt")
    out = tmp_path / "drift.jsonl"
    guard.save_drift(out)
    (line,) = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(line) == {
        "call": 0,
        "tool": "read_file",
        "args": {"path": "/data/report.txt"},
        "predicted": "ok",
        "predicted_codes": [],
        "status": "crash",
        "outcome": None,
        "notes": [
            "the contract predicted success, but the call failed",
            "the contract has no failure here that fits; the state is unchanged",
        ],
        "error": "PermissionError: denied",
    }


def test_a_result_that_does_not_fit_the_return_type_is_drift() -> None:
    guard = backup_guard()
    guard.wrap("read_file", lambda path: {"content": 42})("/data/report.txt")
    (drift,) = guard.drift
    assert drift.status == "ok"
    assert drift.notes[0].startswith("the result does not match `-> Reply`: `result.content`")


def test_real_results_flow_into_the_state() -> None:
    guard = session_guard(state={"online": True})
    guard.wrap("open_session", lambda: {"token": "tok-123"})()
    assert guard.state["tokens"] == frozenset({"tok-123"})
    assert guard.state["machine:lifecycle"] == "busy"


def test_soft_violations_are_warnings_on_the_result() -> None:
    guard = session_guard(state={"online": True}, mode="return")
    guard.wrap("open_session", lambda: {"token": "t"})()
    result = guard.wrap("query", lambda q: {"rows": 3})("x" * 30)
    assert result.ok and result.value == {"rows": 3}
    assert [(w.code, w.message) for w in result.warnings] == [
        ("LONG_QUERY", "a 30-character query is slow")
    ]
    assert result.to_llm() == '{"rows": 3}\nWarning LONG_QUERY: a 30-character query is slow'
    raising = session_guard(state={"online": True})
    raising.wrap("open_session", lambda: {"token": "t"})()
    raising.wrap("query", lambda q: {"rows": 3})("y" * 25)
    assert raising.last is not None
    assert [w.code for w in raising.last.warnings] == ["LONG_QUERY"]


# ------------------------------------------------------------------- unknowns and observers
def test_an_unknown_precondition_lets_the_call_through_and_reality_decides() -> None:
    guard = session_guard()
    guard.wrap("open_session", lambda: {"token": "t"})()
    assert guard.state["online"] is True  # the call succeeded, so the service was online
    strict = session_guard(block_on_unknown=True)
    with pytest.raises(ContractViolation) as info:
        strict.wrap("open_session", lambda: {"token": "t"})()
    assert info.value.code == "OFFLINE"


def test_observers_refresh_the_state_before_each_check() -> None:
    guard = session_guard()
    online = {"now": False}
    guard.add_observer("online", lambda: online["now"])
    opener = guard.wrap("open_session", lambda: {"token": "t"})
    with pytest.raises(ContractViolation) as info:
        opener()
    assert info.value.code == "OFFLINE"
    online["now"] = True
    opener()
    assert guard.state["tokens"] == frozenset({"t"})


def test_observer_mistakes_are_clear_errors() -> None:
    guard = session_guard()
    with pytest.raises(ValueError, match=r"no state variable `onlin`; did you mean `online`"):
        guard.add_observer("onlin", lambda: True)
    guard.add_observer("count", lambda: "many")
    with pytest.raises(ValueError, match="state values do not fit the contract: `count`"):
        guard.wrap("bump", lambda: None)()


# ---------------------------------------------------------------------------- wrapping rules
def test_wrapping_mistakes_are_reported_at_wrap_time() -> None:
    guard = backup_guard()
    with pytest.raises(ValueError, match=r"no tool `delete_fil`; did you mean `delete_file`"):
        guard.wrap("delete_fil", lambda path: {})
    with pytest.raises(ValueError, match="has no parameter `dst` that tool `copy_file` requires"):
        guard.wrap("copy_file", lambda src: {})


def test_decorator_form_and_pass_through_parameters() -> None:
    guard = session_guard()
    seen: dict[str, Any] = {}

    @guard.tool()
    def set_level(to: int, timeout: float = 5.0) -> None:
        seen.update(to=to, timeout=timeout)

    set_level(3, timeout=1.5)
    assert seen == {"to": 3, "timeout": 1.5}
    assert guard.state["level"] == 3
    with pytest.raises(ContractViolation) as info:
        set_level(12)
    assert info.value.error.field == "args.to"


def test_a_call_python_cannot_bind_is_refused_as_an_argument_error() -> None:
    guard = session_guard()
    guarded = guard.wrap("set_level", lambda to: None)
    with pytest.raises(ContractViolation) as info:
        guarded(1, 2)
    assert info.value.code == "INVALID_ARGUMENT"


# ----------------------------------------------------------------------- threads and async
def test_concurrent_calls_apply_every_effect_exactly_once() -> None:
    guard = session_guard()
    calls = Calls()
    bump = guard.wrap("bump", lambda: calls())

    def worker() -> None:
        for _ in range(50):
            bump()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls.count == 400
    assert guard.state["count"] == 400
    assert len(guard.history) == 400
    assert not guard.drift


def test_async_tools_are_guarded() -> None:
    guard = session_guard(state={"online": True})

    async def open_session() -> dict[str, str]:
        await asyncio.sleep(0)
        return {"token": "async-token"}

    async def query(q: str) -> dict[str, int]:
        return {"rows": 1}

    opener = guard.wrap("open_session", open_session)
    querier = guard.wrap("query", query)

    async def scenario() -> None:
        with pytest.raises(ContractViolation):
            await querier("q")
        await opener()
        assert await querier("q") == {"rows": 1}

    asyncio.run(scenario())
    assert guard.state["tokens"] == frozenset({"async-token"})
    assert [r.status for r in guard.history] == ["blocked", "ok", "ok"]


# ------------------------------------------------------------- the guard agrees with simulate
PATHS = ["/data/report.txt", "/data/other.txt", "/archive/report.txt", "/archive", "/data"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("make_dir"), st.fixed_dictionaries({"path": st.sampled_from(PATHS)})),
            st.tuples(
                st.just("copy_file"),
                st.fixed_dictionaries(
                    {"src": st.sampled_from(PATHS), "dst": st.sampled_from(PATHS)}
                ),
            ),
            st.tuples(
                st.sampled_from(["delete_file", "read_file", "list_dir"]),
                st.fixed_dictionaries({"path": st.sampled_from(PATHS)}),
            ),
        ),
        max_size=12,
    )
)
def test_guard_refuses_exactly_what_the_simulator_says_fails(
    calls: list[tuple[str, dict[str, str]]],
) -> None:
    """Tools that always succeed when called: the guard must refuse exactly the steps the
    simulator predicts as failing, and track the same state."""
    contract = contractsim.load(BACKUP)
    guard = contract.guard(state=REPORT, now=NOW, mode="return")
    sim = contract.simulator(now=NOW)
    state = sim.initial_state(REPORT)
    tools = {name: guard.wrap(name, _always_ok) for name in contract.tools}
    for tool, args in calls:
        step = sim.step(state, tool, args)
        result = tools[tool](**args)
        assert result.ok == (step.verdict == "ok"), (tool, args, step.violations)
        if step.verdict == "ok":
            (branch,) = [b for b in step.branches if not b.failed]
            state = branch.state
        assert guard.state == state
    assert not guard.drift


def _always_ok(**kwargs: Any) -> dict[str, Any]:
    return {}


# ------------------------------------------------------------------ found in review (regressions)
OUTBOX = """
contract outbox version "1.0.0"
type Reply = record { error?: str }
event rate_limit "the provider's hourly limit was reached"
state {
  outbox: list[str] = ["m1"]
  attempts: int = 0
  sent: list[str] = []
}
tool flush() -> Reply {
  outcome limited fails RATE_LIMITED "{len(outbox)} message(s) stay queued"
      hint "try again later" on rate_limit probability 0.02 {
    attempts += 1
  }
  outcome sent success {
    outbox.clear()
  }
}
tool send(body: str, urgent: bool = false) -> Reply {
  outcome rejected fails REJECTED "rejected" observed when result.error != null
  outcome queued success {
    sent.append(body)
  }
}
"""


def outbox_guard(**kwargs: Any) -> contractsim.Guard:
    return contractsim.loads(OUTBOX).guard(now=NOW, **kwargs)


def test_an_environment_event_failure_is_a_warning_not_a_refusal() -> None:
    guard = outbox_guard(mode="return")
    flush = Calls()
    result = guard.wrap("flush", lambda: flush())()
    assert flush.count == 1 and result.ok
    assert [(w.code, w.message) for w in result.warnings] == [
        ("RATE_LIMITED", "may fail: 1 message(s) stay queued (on rate_limit, p=0.02)")
    ]
    assert guard.check("flush") is None
    assert guard.state["outbox"] == ()


def test_an_outcome_recognised_only_in_real_calls_is_not_the_simulated_default() -> None:
    guard = outbox_guard()
    guard.wrap("send", lambda body, urgent=False: {})("hi")
    assert guard.state["sent"] == ("hi",)
    sim = contractsim.loads(OUTBOX).simulator(now=NOW)
    assert sim.step(sim.initial_state(), "send", {"body": "x"}).verdict == "ok"


def test_a_failure_reply_with_undeclared_fields_is_still_recognised() -> None:
    guard = backup_guard("return")
    guard.wrap("make_dir", lambda path: {})("/archive")
    result = guard.wrap("copy_file", lambda src, dst: {"error": "ENOSPC", "errno": 28})(
        "/data/report.txt", "/archive/report.txt"
    )
    assert not result.ok and result.outcome == "failed"
    assert guard.state["files"] == {"/data/report.txt": "Q3"}
    assert guard.check("delete_file", {"path": "/data/report.txt"}) is not None


def test_dataclass_and_model_results_are_read_as_their_fields() -> None:
    from dataclasses import dataclass as dc

    @dc
    class Answer:
        error: str | None = None

    guard = backup_guard("return")
    result = guard.wrap("read_file", lambda path: Answer(error="EIO"))("/data/report.txt")
    assert not result.ok and result.outcome == "failed"


def test_the_function_defaults_are_what_the_contract_checks() -> None:
    guard = outbox_guard()
    seen: list[bool] = []

    def send(body: str, urgent: bool = True) -> dict[str, Any]:
        seen.append(urgent)
        return {}

    guard.wrap("send", send)("x")
    assert seen == [True]
    assert guard.history[-1].args == {"body": "x", "urgent": True}


def test_cancelled_and_interrupted_calls_are_recorded_and_re_raised() -> None:
    guard = backup_guard("return")

    def interrupted(path: str) -> Any:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        guard.wrap("read_file", interrupted)("/data/report.txt")
    assert guard.history[-1].status == "crash"
    assert guard.last is guard.history[-1]

    async def slow(path: str) -> Any:
        await asyncio.sleep(10)

    async def scenario() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(guard.wrap("read_file", slow)("/data/report.txt"), 0.01)

    asyncio.run(scenario())
    assert guard.history[-1].status == "crash"
    assert guard.state["files"] == {"/data/report.txt": "Q3"}


def test_an_object_with_async_call_is_guarded_as_async() -> None:
    class Copy:
        async def __call__(self, src: str, dst: str) -> dict[str, str]:
            return {"error": "ENOSPC"}

    guard = backup_guard("return")
    guard.wrap("make_dir", lambda path: {})("/archive")
    copy = guard.wrap("copy_file", Copy())
    result = asyncio.run(copy("/data/report.txt", "/archive/report.txt"))
    assert not result.ok and result.outcome == "failed"


def test_a_sync_function_returning_an_awaitable_is_an_error_not_a_success() -> None:
    async def work() -> dict[str, str]:
        return {}

    guard = backup_guard()
    with pytest.raises(TypeError, match="returned an awaitable"):
        guard.wrap("make_dir", lambda path: work())("/archive")
    assert guard.state["dirs"] == frozenset({"/", "/data"})


def test_violations_pickle_and_results_serialise() -> None:
    import datetime
    import pickle

    guard = backup_guard()
    with pytest.raises(ContractViolation) as info:
        guard.wrap("delete_file", lambda path: {})("/data/report.txt")
    again = pickle.loads(pickle.dumps(info.value))
    assert again.code == "NO_BACKUP" and again.to_llm() == info.value.to_llm()
    returning = backup_guard("return")
    when = datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc)
    result = returning.wrap("list_dir", lambda path: {"entries": [], "at": when})("/data")
    assert json.loads(json.dumps(result.to_json()))["result"]["at"] == "2024-01-02T00:00:00+00:00"


def test_serialize_stops_two_parallel_deletes_of_the_last_two_copies() -> None:
    state = {"dirs": ["/", "/data"], "files": {"/data/a": "x", "/data/b": "x"}}

    def race(serialize: bool) -> tuple[int, dict[str, str]]:
        guard = contractsim.load(BACKUP).guard(
            state=state, now=NOW, mode="return", serialize=serialize
        )
        inside = threading.Barrier(2, timeout=0.5)

        def delete_file(path: str) -> dict[str, str]:
            try:
                inside.wait()  # both calls are inside the tool at once, if the guard lets them
            except threading.BrokenBarrierError:
                pass
            return {}

        delete = guard.wrap("delete_file", delete_file)
        results: list[Any] = []
        threads = [
            threading.Thread(target=lambda p=p: results.append(delete(p))) for p in state["files"]
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sum(r.ok for r in results), dict(guard.state["files"])

    assert race(serialize=True)[0] == 1
    made, files = race(serialize=False)
    assert made == 2 and files == {}  # the documented race without serialize


def test_observer_failures_and_async_observers() -> None:
    guard = session_guard(mode="return")

    def broken() -> bool:
        raise TimeoutError("health check timed out")

    guard.add_observer("online", broken)
    opener = Calls({"token": "t"})
    result = guard.wrap("open_session", lambda: opener())()
    assert opener.count == 0
    assert result.error is not None and result.error.code == "OBSERVER_FAILED"
    assert "TimeoutError: health check timed out" in result.error.message

    async def aread() -> bool:
        return True

    with pytest.raises(ValueError, match="observer of `online` is async"):
        guard.add_observer("online", aread)


# ------------------------------------------------------------- found in code review (regressions)
def test_serialize_also_queues_async_calls() -> None:
    state = {"dirs": ["/", "/data"], "files": {"/data/a": "x", "/data/b": "x"}}
    guard = contractsim.load(BACKUP).guard(state=state, now=NOW, mode="return", serialize=True)
    inside = {"now": 0, "peak": 0}

    async def delete_file(path: str) -> dict[str, str]:
        inside["now"] += 1
        inside["peak"] = max(inside["peak"], inside["now"])
        await asyncio.sleep(0.01)
        inside["now"] -= 1
        return {}

    delete = guard.wrap("delete_file", delete_file)

    async def both() -> list[Any]:
        return list(await asyncio.gather(delete("/data/a"), delete("/data/b")))

    results = asyncio.run(both())
    assert inside["peak"] == 1
    assert [r.ok for r in results] == [True, False]
    assert results[1].error.code == "NO_BACKUP"


LOGIN = """
contract login version "1.0.0"
type Reply = record { error?: str, data?: str }
state {
  logged_in: bool = unknown
}
tool fetch() -> Reply {
  require logged_in else NOT_LOGGED_IN "log in first"
  outcome got success
  outcome failed fails FETCH_FAILED "fetch failed" observed when result.error != null
}
"""


def test_a_recognised_failure_does_not_decide_an_unknown_precondition() -> None:
    guard = contractsim.loads(LOGIN).guard(now=NOW, mode="return")
    result = guard.wrap("fetch", lambda: {"error": "not logged in"})()
    assert result.outcome == "failed"
    assert guard.state["logged_in"] is contractsim.UNKNOWN
    guard.wrap("fetch", lambda: {"data": "x"})()
    assert guard.state["logged_in"] is True


def test_a_result_the_guard_cannot_read_is_recorded_not_raised() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    guard = backup_guard("return")
    result = guard.wrap("read_file", lambda path: cyclic)("/data/report.txt")
    assert result.ok
    assert guard.history[-1].status == "ok"
    (drift,) = guard.drift
    assert drift.notes[0] == "the result cannot be read: `result.self` contains itself"
    assert guard.state["files"] == {"/data/report.txt": "Q3"}


def test_when_following_a_return_fails_it_is_followed_again_with_the_result_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from contractsim.simulator.engine import Simulator

    real_observe = Simulator.observe
    failures = []

    def flaky(self: Simulator, state: Any, tool: str, args: Any, seen: Any, *rest: Any) -> Any:
        if seen.result is not contractsim.UNKNOWN and not failures:
            failures.append(tool)
            raise RuntimeError("a bug in the guard")
        return real_observe(self, state, tool, args, seen, *rest)

    monkeypatch.setattr(Simulator, "observe", flaky)
    guard = session_guard()
    guard.wrap("bump", lambda: 1)()
    assert failures == ["bump"]
    assert guard.state["count"] == 1 and guard.history[-1].status == "ok"
    assert guard.drift[0].notes[0] == (
        "the guard could not read the call's result: RuntimeError: a bug in the guard"
    )


AMBIGUOUS = """
contract amb version "1.0.0"
event cache_hit "served from the cache"
state {
  fetched: int = 0
}
tool get() {
  outcome cached success on cache_hit probability 0.5
  outcome fetched success {
    fetched += 1
  }
}
"""


def test_ambiguous_outcomes_are_not_drift() -> None:
    guard = contractsim.loads(AMBIGUOUS).guard(now=NOW)
    for _ in range(3):
        guard.wrap("get", lambda: None)()
    assert not guard.drift
    assert guard.state["fetched"] == 3


def test_a_bad_initial_state_is_a_value_error_like_set_state() -> None:
    with pytest.raises(ValueError, match="unknown state variable `filez`"):
        contractsim.load(BACKUP).guard(state={"filez": {}})
    guard = backup_guard()
    with pytest.raises(ValueError, match="unknown state variable `filez`"):
        guard.set_state({"filez": {}})


# ------------------------------------------------------- hostile results, exceptions, misuse
class _Unreadable:
    """An object every way of reading raises from."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


class _BadItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise RuntimeError("no items")

    def __iter__(self) -> Any:
        raise RuntimeError("no iter")


class _BadMapping(Mapping):  # type: ignore[type-arg]
    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Any:
        raise RuntimeError("no items")

    def __len__(self) -> int:
        return 1


def _cyclic() -> dict[str, Any]:
    d: dict[str, Any] = {"ok": True}
    d["self"] = d
    return d


def _deep(levels: int) -> dict[str, Any]:
    d: dict[str, Any] = {}
    for _ in range(levels):
        d = {"a": d}
    return d


def _cyclic_list() -> list[Any]:
    out: list[Any] = [1]
    out.append(out)
    return out


HOSTILE_RESULTS = {
    "self-referential dict": (_cyclic, "`result.self` contains itself"),
    "self-referential list": (_cyclic_list, "`result[1]` contains itself"),
    "dict nested 5000 levels": (lambda: _deep(5000), "nests more than 100 levels"),
    "10**5000": (lambda: 10**5000, "`result` is an integer beyond 2**256"),
    "object whose reads raise": (_Unreadable, "is of type `_Unreadable`, not a contract value"),
    "mapping whose items() raises": (
        lambda: _BadMapping(),
        "`result` cannot be read: RuntimeError: no items",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE_RESULTS))
@pytest.mark.parametrize("mode", ["raise", "return"])
def test_an_unreadable_result_is_drift_and_unknown_and_the_effects_still_apply(
    name: str, mode: str
) -> None:
    make, problem = HOSTILE_RESULTS[name]
    value = make()
    guard = session_guard(mode=mode)
    answer = guard.wrap("bump", lambda: value)()
    assert guard.state["count"] == 1  # the success effect applied
    record = guard.history[-1]
    assert (record.status, record.outcome) == ("ok", "ok")
    (drift,) = guard.drift
    assert drift.notes[0].startswith("the result cannot be read: ")
    assert problem in drift.notes[0]
    json.dumps(drift.to_json())
    if mode == "raise":
        assert answer is value
    else:
        assert answer.ok and answer.value is value
        text = answer.to_llm()  # total, whatever the value
        assert isinstance(text, str) and len(text) < 100_000
        json.dumps(answer.to_json())


def test_an_unreadable_part_of_a_result_is_unknown_where_it_is_read() -> None:
    guard = session_guard(mode="return")
    guard.set_state({"online": True})
    reply: dict[str, Any] = {"token": "t-1"}
    reply["again"] = reply
    result = guard.wrap("open_session", lambda: reply)()
    assert result.ok
    assert result.to_json()["result"] == {"again": "$unknown", "token": "t-1"}
    assert guard.state["tokens"] == frozenset({contractsim.UNKNOWN})  # result.token unknown
    (drift,) = guard.drift
    assert drift.notes == ("the result cannot be read: `result.again` contains itself",)


class _BrokenMessage(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message")


@pytest.mark.parametrize("mode", ["raise", "return"])
def test_an_exception_whose_text_raises_is_the_tools_own_and_a_crash(mode: str) -> None:
    guard = session_guard(mode=mode)
    original = _BrokenMessage()

    def bump() -> None:
        raise original

    guarded = guard.wrap("bump", bump)
    if mode == "raise":
        with pytest.raises(_BrokenMessage) as info:
            guarded()
        assert info.value is original
    else:
        result = guarded()
        assert not result.ok and result.error is not None
        assert result.error.code == "TOOL_RAISED"
        assert result.error.message == "_BrokenMessage: <its message cannot be read>"
        assert result.exception is original
        assert "TOOL_RAISED" in result.to_llm()
    assert guard.history[-1].status == "crash"
    assert guard.state["count"] == 0


def test_an_observer_whose_exception_text_raises_blocks_the_call_cleanly() -> None:
    guard = session_guard(mode="return")

    def read() -> bool:
        raise _BrokenMessage()

    guard.add_observer("online", read)
    calls = Calls()
    result = guard.wrap("bump", calls)()
    assert calls.count == 0
    assert result.error is not None and result.error.code == "OBSERVER_FAILED"
    assert result.error.message == (
        "reading the state failed: _BrokenMessage: <its message cannot be read>"
    )


@pytest.mark.parametrize(
    "value",
    [_cyclic(), _deep(5000), 10**5000, _Unreadable()],
    ids=["cyclic", "deep", "huge int", "unreadable"],
)
def test_an_observer_value_that_cannot_be_read_is_a_value_error(value: Any) -> None:
    guard = session_guard()
    guard.add_observer("count", lambda: value)
    with pytest.raises(ValueError, match="state values do not fit the contract: the value of"):
        guard.wrap("bump", Calls())()
    assert not guard.history or guard.history[-1].status == "blocked"


def test_call_results_serialise_whatever_the_value() -> None:
    for value in (_cyclic(), 10**5000, _Unreadable(), _deep(5000), float("nan"), b"\x00"):
        result = CallResult("t", True, value)
        assert isinstance(json.dumps(result.to_json()), str)
        assert isinstance(result.to_llm(), str)


def test_hostile_arguments_are_refused_as_invalid_arguments() -> None:
    guard = session_guard(mode="return")
    guarded = guard.wrap("query", lambda q: {"rows": 1})
    guard.set_state({"tokens": ["t"]})
    for bad, text in ((_cyclic(), "contains itself"), (10**5000, "beyond 2**256")):
        result = guarded(bad)
        assert result.error is not None and result.error.code == "INVALID_ARGUMENT"
        assert result.error.field == "args.q"
        assert text in result.error.message
        assert isinstance(result.to_llm(), str)
        json.dumps(result.to_json())


def test_results_records_and_drift_print_whatever_the_tool_returned() -> None:
    guard = session_guard(mode="return")
    result = guard.wrap("bump", _Unreadable)()
    assert repr(result).startswith("CallResult(tool='bump', ok=True, value=<a _Unreadable whose")
    assert repr(guard.drift[-1]).startswith("Drift(index=0, tool='bump'")
    refused = guard.wrap("query", lambda q: None)(_Unreadable())
    assert refused.error is not None and refused.error.code == "INVALID_ARGUMENT"
    assert "args={'q': <a _Unreadable whose repr cannot be read>}" in repr(guard.history[-1])
    assert "whose repr cannot be read" in repr(refused)
    huge = CallResult("t", True, 10**5000)
    assert "value=<a int whose repr cannot be read>" in repr(huge)


def test_a_callable_that_cannot_be_read_as_a_function_is_a_type_error_at_wrap_time() -> None:
    class Odd:
        def __call__(self) -> int:
            return 1

        def __getattr__(self, name: str) -> Any:
            raise RuntimeError(f"no {name}")

    with pytest.raises(TypeError, match="cannot guard .* as `bump`: it cannot be read as a "):
        session_guard().wrap("bump", Odd())
