"""Exact step and plan semantics of the simulator, on small inline contracts."""

from __future__ import annotations

import json
from typing import Any

import pytest

import contractsim
from contractsim import UNKNOWN, ContractError
from contractsim.compiler.values import FMap, Fresh, thaw
from contractsim.simulator.engine import Simulator
from contractsim.simulator.observe import Observation

NOW = "2024-06-01T12:00:00Z"

FS = """contract fs version "1.0.0"
type Path = str pattern r"^/([^/]+/?)*$" max_length 40
type Meta = record {
  owner: str min_length 1
  size: int min 0 max 100
  inner: record { tag: str pattern r"^[a-z]+$" }
}
state {
  dirs: set[Path] = {"/", "/home"}
  files: map[Path, str] = {}
  network: bool = unknown
  quota: int = 2
}
event disk_full "the disk is full"
goal has_a = "/home/a" in files
tool write_file(path: Path, content: str, meta?: Meta, n: int min 1 max 5 = 1)
    -> record { id: str } {
  require parent(path) in dirs
    else PARENT_MISSING "parent directory {parent(path)} does not exist"
    hint "call make_dir(path={parent(path)}) first"
  require quota > 0 else QUOTA "no quota left"
  should len(content) <= 3 else LARGE_WRITE "writing {len(content)} bytes"
  effect { files[path] = content; quota -= 1 }
  outcome written success
  outcome full fails DISK_FULL "disk full writing {path}" on disk_full probability 0.25 {
    quota = 0
  }
}
tool make_dir(path: Path) {
  require parent(path) in dirs else PARENT_MISSING "no parent {path}"
  effect dirs.add(path)
}
tool ping() {
  require network else OFFLINE "network down"
}
tool touch(path: Path) {
  require quota > 0 else QUOTA "no quota left"
  effect files[path] = ""
}
"""


@pytest.fixture(scope="module")
def fs() -> contractsim.Contract:
    return contractsim.loads(FS)


@pytest.fixture
def sim(fs: contractsim.Contract):  # type: ignore[no-untyped-def]
    return fs.simulator(now=NOW)


# ---------------------------------------------------------------------------------- verdicts


def test_ok_step_and_plan(sim) -> None:  # type: ignore[no-untyped-def]
    s0 = sim.initial_state()
    r = sim.step(s0, "make_dir", {"path": "/tmp"})
    assert r.verdict == "ok"
    (b,) = r.branches
    assert b.kind == "success" and b.outcome == "ok" and b.probability == 1.0
    assert b.state["dirs"] == frozenset({"/", "/home", "/tmp"})
    rep = sim.run([("make_dir", {"path": "/tmp"}), ("touch", {"path": "/tmp/a"})])
    assert rep.verdict == "ok" and rep.ok
    assert [s.verdict for s in rep.steps] == ["ok", "ok"]
    assert rep.failure_probability is None


def test_fails_step_and_plan(sim) -> None:  # type: ignore[no-untyped-def]
    rep = sim.run(
        [{"tool": "touch", "args": {"path": "/x"}}, {"tool": "make_dir", "args": {"path": "/a/b"}}]
    )
    assert rep.verdict == "fails"
    assert [s.verdict for s in rep.steps] == ["ok", "fails"]
    assert rep.failure_probability == 1.0
    assert rep.paths[0].failed_at == 2


def test_may_fail_on_unknown_state(sim) -> None:  # type: ignore[no-untyped-def]
    s0 = sim.initial_state()
    r = sim.step(s0, "ping", {})
    assert r.verdict == "may_fail"
    failing = [b for b in r.branches if b.failed]
    ok = [b for b in r.branches if not b.failed]
    assert len(failing) == 1 and len(ok) == 1
    assert not failing[0].certain and failing[0].probability is None
    v = failing[0].violations[0]
    assert v.code == "OFFLINE" and not v.certain
    assert "network" in v.message and "unknown" in v.message
    assert dict(v.values) == {"network": "unknown"}
    rep = sim.run([("ping", {})], s0)
    assert rep.verdict == "may_fail"
    assert rep.failure_probability is None
    # with the network known, the same call is decided
    assert sim.step(sim.initial_state({"network": True}), "ping", {}).verdict == "ok"
    assert sim.step(sim.initial_state({"network": False}), "ping", {}).verdict == "fails"


def test_unknown_state_variable_via_override(sim) -> None:  # type: ignore[no-untyped-def]
    s = sim.initial_state({"quota": UNKNOWN, "network": True})
    assert s["quota"] is UNKNOWN and s.has_unknown
    assert sim.step(s, "touch", {"path": "/a"}).verdict == "may_fail"
    # from Python the string "$unknown" is a string (the marker belongs to state files)
    with pytest.raises(ContractError, match=r'`quota`: must be an integer \(got "\$unknown"\)'):
        sim.initial_state({"quota": "$unknown", "network": True})


def test_every_violated_rule_is_reported(sim) -> None:  # type: ignore[no-untyped-def]
    s = sim.initial_state({"quota": 0})
    r = sim.step(s, "write_file", {"path": "/nope/x", "content": "a"})
    assert r.verdict == "fails"
    assert [v.code for v in r.violations] == ["PARENT_MISSING", "QUOTA"]
    assert all(v.kind == "precondition" and v.certain for v in r.violations)


def test_explanation_values(sim) -> None:  # type: ignore[no-untyped-def]
    r = sim.step(sim.initial_state(), "write_file", {"path": "/tmp/x/y", "content": "a"})
    (v,) = r.violations
    assert v.code == "PARENT_MISSING"
    assert v.message == "parent directory /tmp/x does not exist"
    assert v.hint == "call make_dir(path=/tmp/x) first"
    assert dict(v.values) == {"parent(path)": '"/tmp/x"', "dirs": '{"/", "/home"}'}
    assert v.location == "<string>:18"
    j = v.to_json()
    assert j["values"] == {"parent(path)": '"/tmp/x"', "dirs": '{"/", "/home"}'}
    assert j["kind"] == "precondition" and j["certain"] is True


def test_failed_step_leaves_state_unchanged(sim) -> None:  # type: ignore[no-untyped-def]
    s = sim.initial_state({"quota": 0})
    r = sim.step(s, "write_file", {"path": "/home/a", "content": "a"})
    assert all(b.state == s for b in r.branches)
    rep = sim.run([("write_file", {"path": "/home/a", "content": "a"})], s)
    assert rep.steps[0].changes == []
    assert rep.paths[0].state == s


# ----------------------------------------------------------------------------- argument errors


def _arg_violations(sim, args):  # type: ignore[no-untyped-def]
    r = sim.step(sim.initial_state(), "write_file", args)
    assert r.verdict == "fails"
    assert all(v.kind == "argument" and v.code == "INVALID_ARGUMENT" for v in r.violations)
    return {v.field: v for v in r.violations}


def test_argument_pattern_and_type(sim) -> None:  # type: ignore[no-untyped-def]
    vs = _arg_violations(sim, {"path": "rel", "content": 3})
    assert set(vs) == {"args.path", "args.content"}
    p = vs["args.path"]
    assert p.value == "rel"
    assert 'pattern r"^/([^/]+/?)*$"' in p.message and '(got "rel")' in p.message
    assert p.message.startswith("write_file: `args.path`")
    assert p.hint == 'give a value matching r"^/([^/]+/?)*$"'
    assert "must be a string" in vs["args.content"].message
    assert vs["args.content"].value == 3


def test_argument_nested_record_fields(sim) -> None:  # type: ignore[no-untyped-def]
    meta = {"owner": "", "size": 101, "inner": {"tag": "A1"}, "extra": 1}
    vs = _arg_violations(sim, {"path": "/home/a", "content": "x", "meta": meta, "n": 0})
    assert set(vs) == {
        "args.meta.owner",
        "args.meta.size",
        "args.meta.inner.tag",
        "args.meta.extra",
        "args.n",
    }
    assert "at least 1 characters" in vs["args.meta.owner"].message
    assert vs["args.meta.size"].message.endswith("must be at most 100 (got 101)")
    assert vs["args.meta.size"].hint == "give a value at most 100"
    assert vs["args.meta.size"].value == 101
    assert 'pattern r"^[a-z]+$"' in vs["args.meta.inner.tag"].message
    assert vs["args.meta.inner.tag"].value == "A1"
    assert "is not a declared field" in vs["args.meta.extra"].message
    assert vs["args.n"].message.endswith("must be at least 1 (got 0)")


def test_argument_missing_and_extra(sim) -> None:  # type: ignore[no-untyped-def]
    vs = _arg_violations(sim, {"content": "x", "pth": "/a"})
    assert set(vs) == {"args.path", "args.pth"}
    assert "is required but missing" in vs["args.path"].message
    assert vs["args.path"].hint == "add `path` to the arguments"
    assert vs["args.path"].value is None
    assert "is not a parameter" in vs["args.pth"].message
    assert vs["args.pth"].value == "/a"


def test_argument_max_length(sim) -> None:  # type: ignore[no-untyped-def]
    vs = _arg_violations(sim, {"path": "/" + "a" * 50, "content": "x"})
    assert "at most 40 characters" in vs["args.path"].message


def test_unknown_tool_did_you_mean(sim) -> None:  # type: ignore[no-untyped-def]
    s0 = sim.initial_state()
    r = sim.step(s0, "wirte_file", {})
    assert r.verdict == "fails"
    (v,) = r.violations
    assert (v.code, v.kind) == ("UNKNOWN_TOOL", "unknown_tool")
    assert "wirte_file" in v.message
    assert v.hint == "did you mean `write_file`?"
    r = sim.step(s0, "zzzzzz", {})
    assert "write_file" in (r.violations[0].hint or "")
    assert r.branches[0].state == s0


# --------------------------------------------------------------------------------- protocols

PROTO = """contract proto version "1.0.0"
state { n: int = 0 }
machine session "life cycle" {
  states closed, authed, open
  initial closed
  final closed
  closed -> authed on login
  authed -> open on init
  open -> open on query
  open -> closed on close
}
tool login() { effect n += 1 }
tool init() { effect n += 1 }
tool query() { effect n += 1 }
tool close() { effect n += 1 }
"""


def test_protocol_violation_names_states_and_path() -> None:
    c = contractsim.loads(PROTO)
    sim = c.simulator(now=NOW)
    s0 = sim.initial_state()
    assert s0.machine("session") == "closed"
    r = sim.step(s0, "query", {})
    assert r.verdict == "fails"
    (v,) = r.violations
    assert v.code == "PROTOCOL_VIOLATION" and v.kind == "protocol"
    assert v.allowed_states == ("open",)
    assert v.path_to_allowed == ("login", "init")
    assert "`open`" in v.message and "`closed`" in v.message
    assert v.hint == "call login → init first"
    assert v.to_json()["path_to_allowed"] == ["login", "init"]
    assert r.branches[0].state == s0
    rep = sim.run([("login", {}), ("init", {}), ("query", {}), ("close", {})])
    assert rep.verdict == "ok"
    assert rep.paths[0].state.machine("session") == "closed"
    assert rep.paths[0].state["n"] == 4
    assert rep.steps[0].changes == [("n", 0, 1), ("machine session", "closed", "authed")]
    enabled = {e.tool: e.verdict for e in sim.enabled(s0)}
    assert enabled == {"login": "ok", "init": "fails", "query": "fails", "close": "fails"}
    reason = next(e for e in sim.enabled(s0) if e.tool == "query").reasons[0]
    assert reason.path_to_allowed == ("login", "init")


def test_enabled_judges_argument_free_preconditions(sim) -> None:  # type: ignore[no-untyped-def]
    s0 = sim.initial_state()
    got = {e.tool: e.verdict for e in sim.enabled(s0)}
    # write_file's preconditions that need no argument hold; ping depends on the unknown network
    assert got == {"write_file": "ok", "make_dir": "ok", "ping": "may_fail", "touch": "ok"}
    got = {e.tool: e.verdict for e in sim.enabled(sim.initial_state({"quota": 0}))}
    assert got["touch"] == "fails" and got["write_file"] == "fails"


# ------------------------------------------------------------------------ events and outcomes


def test_event_branches_and_probabilities(sim) -> None:  # type: ignore[no-untyped-def]
    s0 = sim.initial_state()
    r = sim.step(s0, "write_file", {"path": "/home/a", "content": "abcd"})
    assert r.verdict == "fails"
    by = {b.outcome: b for b in r.branches}
    assert set(by) == {"written", "full"}
    assert by["full"].probability == pytest.approx(0.25)
    assert by["written"].probability == pytest.approx(0.75)
    assert by["full"].event == "disk_full" and by["written"].event is None
    # a failure outcome's own body runs (quota = 0) but not the tool's effects
    assert by["full"].state["quota"] == 0 and by["full"].state["files"] == FMap()
    assert by["full"].violations[0].code == "DISK_FULL"
    assert by["full"].violations[0].message == "disk full writing /home/a"
    assert by["written"].state["quota"] == 1
    assert by["written"].state["files"] == FMap({"/home/a": "abcd"})
    # the soft precondition is a warning on every branch
    assert [(w.code, w.message) for w in r.warnings] == [("LARGE_WRITE", "writing 4 bytes")]
    rep = sim.run(
        [
            ("write_file", {"path": "/home/a", "content": "ab"}),
            ("write_file", {"path": "/home/b", "content": "ab"}),
        ]
    )
    assert rep.verdict == "fails"
    # fails at step 1 with 0.25; otherwise at step 2 with 0.75 * 0.25
    assert rep.failure_probability == pytest.approx(0.25 + 0.75 * 0.25)
    assert rep.steps[0].failure_probability == pytest.approx(0.25)
    assert rep.steps[1].failure_probability == pytest.approx(0.75 * 0.25)
    ok = [p for p in rep.paths if p.failed_at is None]
    assert len(ok) == 1 and ok[0].probability == pytest.approx(0.75 * 0.75)
    assert ok[0].choices == ("write_file:written", "write_file:written")
    assert sum(p.probability for p in rep.paths) == pytest.approx(1.0)
    j = rep.to_json()
    assert j["failure_probability"] == pytest.approx(0.4375)
    (full,) = [o for o in j["steps"][0]["outcomes"] if o["kind"] == "fails"]
    assert full["name"].startswith("full")
    assert full["probability"] == pytest.approx(0.25)
    assert full["event"] == "disk_full"


def test_stop_at_first(sim) -> None:  # type: ignore[no-untyped-def]
    plan = [
        ("make_dir", {"path": "/a/b"}),
        ("make_dir", {"path": "/a"}),
        ("make_dir", {"path": "/c/d"}),
    ]
    rep = sim.run(plan, stop_at_first=True)
    assert rep.verdict == "fails"
    assert [s.skipped for s in rep.steps] == [False, True, True]
    assert [s.to_json().get("skipped", False) for s in rep.steps] == [False, True, True]
    full = sim.run(plan)
    assert [s.verdict for s in full.steps] == ["fails", "ok", "fails"]


def test_max_branches_and_max_depth_notes(sim) -> None:  # type: ignore[no-untyped-def]
    plan = [
        ("write_file", {"path": "/home/a", "content": "a"}),
        ("write_file", {"path": "/home/b", "content": "b"}),
    ]
    rep = sim.run(plan, max_branches=1)
    assert any("--max-branches 1" in n for n in rep.notes)
    assert len(rep.paths) == 1
    rep = sim.run(plan, max_depth=1)
    assert any("--max-depth 1" in n for n in rep.notes)
    assert [s.skipped for s in rep.steps] == [False, True]


def test_identical_states_are_merged() -> None:
    c = contractsim.loads("""contract m version "1.0.0"
state { n: int = 0 }
event hiccup "a retry that changes nothing"
tool inc() {
  effect n += 1
  outcome retried success on hiccup probability 0.5
  outcome done success
}
""")
    sim = c.simulator(now=NOW)
    r = sim.step(sim.initial_state(), "inc", {})
    assert len(r.branches) == 2 and r.branches[0].state == r.branches[1].state
    rep = sim.run([("inc", {})] * 3)
    assert rep.verdict == "ok"
    assert len(rep.paths) == 1
    (p,) = rep.paths
    assert p.probability == pytest.approx(1.0) and p.state["n"] == 3
    assert p.merged == 2


# ------------------------------------------------------------------------------------- flows

FLOW = """contract geo version "1.0.0"
state {
  calls: int = 0
  looked_up: int = 0
}
event geo_timeout "the geo service did not answer"
tool enrich(ip?: str, n: int = 1) -> record { id: str } {
  reports { processed: int, dropped: int }
  effect { calls += 1 }
  flow {
    initial check
    step check { }
    check -> geo when ip != null
    check -> outcome enriched_no_geo
    step geo { looked_up += 1 }
    geo -> slow on geo_timeout probability 0.05
    geo -> outcome enriched
    step slow { warn GEO_SLOW "geo lookup for {ip} timed out" }
    slow -> outcome enriched_no_geo
  }
  outcome enriched success { report processed = n, dropped = 0 }
  outcome enriched_no_geo success { report processed = n, dropped = 1 }
}
"""


def test_flow_with_timeout_warning_and_reports() -> None:
    c = contractsim.loads(FLOW)
    sim = c.simulator(now=NOW)
    s0 = sim.initial_state()
    r = sim.step(s0, "enrich", {"ip": "1.2.3.4", "n": 3})
    assert r.verdict == "ok"
    by = {b.outcome: b for b in r.branches}
    assert set(by) == {"enriched", "enriched_no_geo"}
    assert by["enriched"].probability == pytest.approx(0.95)
    assert by["enriched_no_geo"].probability == pytest.approx(0.05)
    assert by["enriched_no_geo"].event == "geo_timeout"
    assert by["enriched_no_geo"].flow_path == ("check", "geo", "slow")
    assert by["enriched"].flow_path == ("check", "geo")
    assert [(w.code, w.message) for w in by["enriched_no_geo"].warnings] == [
        ("GEO_SLOW", "geo lookup for 1.2.3.4 timed out")
    ]
    assert by["enriched"].warnings == []
    assert by["enriched"].report == {"processed": 3, "dropped": 0}
    assert by["enriched_no_geo"].report == {"processed": 3, "dropped": 1}
    assert by["enriched"].state["looked_up"] == 1 and by["enriched"].state["calls"] == 1
    # no ip: no lookup, a single branch
    r = sim.step(s0, "enrich", {})
    assert [(b.outcome, b.probability, b.state["looked_up"]) for b in r.branches] == [
        ("enriched_no_geo", 1.0, 0)
    ]
    rep = sim.run([("enrich", {"ip": "1.2.3.4"})])
    j = rep.to_json()
    assert j["verdict"] == "ok"
    assert {"processed": 1, "dropped": 0} in j["steps"][0]["reports"]
    assert [w["code"] for w in j["steps"][0]["warnings"]] == ["GEO_SLOW"]


# ----------------------------------------------------------------------------- fresh results

FRESH = """contract ids version "1.0.0"
state {
  ids: set[str] = {}
  last: str | null = null
}
tool create() -> record { id: str } {
  effect { ids.add(result.id); last = result.id }
}
tool use(id: str) {
  require id in ids else NO_SUCH_ID "no object {id}"
}
tool use_last() {
  require last != null else NOTHING "nothing created"
}
"""


def test_fresh_results_flow_into_state() -> None:
    c = contractsim.loads(FRESH)
    sim = c.simulator(now=NOW)
    s0 = sim.initial_state()
    (b,) = sim.step(s0, "create", {}).branches
    (fresh,) = b.state["ids"]
    assert isinstance(fresh, Fresh) and b.state["last"] == fresh
    (b2,) = sim.step(b.state, "create", {}).branches
    assert len(b2.state["ids"]) == 2  # a second call makes a different id
    # a fresh id is never null, so `last != null` is decided
    assert sim.step(b.state, "use_last", {}).verdict == "ok"
    assert sim.step(s0, "use", {"id": "abc"}).verdict == "fails"
    rep = sim.run([("create", {}), ("use_last", {})])
    assert rep.verdict == "ok"
    final = rep.paths[0].state["last"]
    assert isinstance(final, Fresh) and final.label == "create.id"
    assert rep.to_json()["branches"][0]["final_state"]["last"] == thaw(final)


# ------------------------------------------------------------------------------ determinism


def test_same_plan_twice_gives_identical_json(fs: contractsim.Contract) -> None:
    plan = [
        ("make_dir", {"path": "/tmp"}),
        ("write_file", {"path": "/tmp/a", "content": "abcdef"}),
        ("write_file", {"path": "/tmp/b", "content": "x"}),
        ("ping", {}),
    ]
    outs = []
    for _ in range(2):
        sim = fs.simulator(now=NOW)
        rep = sim.run(plan)
        outs.append(json.dumps(rep.to_json(), sort_keys=True))
    assert outs[0] == outs[1]
    fresh = contractsim.loads(FS).simulator(now=NOW).run(plan)
    assert json.dumps(fresh.to_json(), sort_keys=True) == outs[0]


def test_goal(sim) -> None:  # type: ignore[no-untyped-def]
    rep = sim.run([("touch", {"path": "/home/a"})], goal="has_a")
    assert rep.goal_results["reached"] is True
    assert rep.to_json()["goal"]["name"] == "has_a"
    rep = sim.run([("touch", {"path": "/home/b"})], goal="has_a")
    assert rep.goal_results["reached"] is False
    assert rep.goal_results["branches_missing"] == 1
    s = sim.initial_state({"files": UNKNOWN})
    assert sim.goal(s, "has_a") is UNKNOWN


# ------------------------------------------------------------------------------------ states


def test_states_are_hashable_and_immutable(sim) -> None:  # type: ignore[no-untyped-def]
    s0 = sim.initial_state()
    s1 = sim.initial_state()
    assert s0 == s1 and hash(s0) == hash(s1) and s0 is not s1
    assert len({s0, s1}) == 1
    assert s0["dirs"] == frozenset({"/", "/home"})
    assert set(s0) == {"dirs", "files", "network", "quota"}
    with pytest.raises(TypeError):
        s0["quota"] = 3  # type: ignore[index]
    with pytest.raises(TypeError):
        s0["files"]["/x"] = "y"
    with pytest.raises(AttributeError):
        s0["dirs"].add("/x")
    b = sim.step(s0, "make_dir", {"path": "/x"}).branches[0]
    assert b.state != s0 and s0["dirs"] == frozenset({"/", "/home"})
    assert hash(b.state) != hash(s0) or b.state != s0
    assert s0.to_json() == {
        "dirs": ["/", "/home"],
        "files": {},
        "network": thaw(UNKNOWN),
        "quota": 2,
    }


def test_event_guard_that_cannot_be_evaluated_is_an_error() -> None:
    c = contractsim.loads("""contract t version "1.0.0"
state { m: map[str, int] = {} }
event e "e"
tool t() {
  flow {
    initial a
    step a { }
    a -> outcome bad on e probability 0.5 when m["x"] > 0
    a -> outcome good
  }
  outcome good success
  outcome bad fails BAD "bad"
}
""")
    sim = c.simulator(now=NOW)
    r = sim.step(sim.initial_state(), "t", {})
    assert r.verdict == "fails"
    assert [v.code for v in r.violations] == ["EVAL_ERROR"]
    assert 'key "x" is not in the map' in r.violations[0].message
    assert all(b.outcome != "bad" for b in r.branches)
    assert sim.step(sim.initial_state({"m": {"x": 0}}), "t", {}).verdict == "ok"


# ------------------------------------------------------- undecided preconditions: one branch each

UNDECIDED = """contract c version "1.0.0"
type Mode = str max_length 4
state {
  a: bool = unknown  n: int = unknown  b: bool = unknown  f: float = unknown  m: Mode = unknown
}
tool t() { require a else A  require not a or n > 0 else N }
tool u() { require a else A2 }
tool both() { require a and b else AB }
tool either() { require a or b else EITHER }
tool one() { require f == 1 else F }
tool writable() { require m != "ro" else RO }
tool shadow(a: bool) { require a and b else SH }
tool clash() { require a else A  require not a else NOT_A }
tool later() { require a else A  require b else B  require not a or b else NB }
"""


@pytest.fixture(scope="module")
def undecided() -> contractsim.Contract:
    return contractsim.loads(UNDECIDED)


def _branches(rep):  # type: ignore[no-untyped-def]
    return [(p.choices, p.failed_at, p.state.to_json()) for p in rep.paths]


def test_each_undecided_precondition_fails_on_its_own_branch(undecided) -> None:  # type: ignore[no-untyped-def]
    """issue 11 item 2: the branch where N failed is labelled N, and a holds on it."""
    sim = undecided.simulator(now=NOW)
    rep = sim.run([("t", {}), ("u", {})])
    u = thaw(UNKNOWN)
    assert _branches(rep) == [
        (("t:A", "u:A2"), 1, {"a": False, "n": u, "b": u, "f": u, "m": u}),
        (("t:N", "u:ok"), 1, {"a": True, "n": u, "b": u, "f": u, "m": u}),
        (("t:ok", "u:ok"), None, {"a": True, "n": u, "b": u, "f": u, "m": u}),
    ]
    step = sim.step(sim.initial_state(), "t", {})
    assert [(b.outcome, [v.code for v in b.violations], b.assumptions) for b in step.branches] == [
        (None, ["A"], ("`a` is false",)),
        (None, ["N"], ("`a` holds", "`not a or n > 0` is false")),
        ("ok", [], ()),
    ]
    assert step.branches[2].preconditions_assumed == ("`a` holds", "`not a or n > 0` holds")
    assert rep.verdict == "may_fail" and [s.verdict for s in rep.steps] == ["may_fail", "ok"]


def test_fast_check_agrees_on_undecided_preconditions(undecided) -> None:  # type: ignore[no-untyped-def]
    sim = undecided.simulator(now=NOW)
    calls = [sim.bind("t"), sim.bind("u")]
    assert sim.check_plan(calls) == ("may_fail", 1, None)
    full = sim.run([("t", {}), ("u", {})], stop_at_first=True)
    assert full.verdict == "may_fail"
    known = sim.initial_state({"a": True, "n": 0})
    assert sim.check_plan(calls, known)[:2] == ("fails", 1)
    assert sim.run([("t", {}), ("u", {})], known).paths[0].choices == ("t:N", "u:ok")


def test_a_failed_conjunction_implies_nothing_of_either_side(undecided) -> None:  # type: ignore[no-untyped-def]
    sim = undecided.simulator(now=NOW)
    failed, held = sim.step(sim.initial_state(), "both", {}).branches
    assert (failed.state["a"], failed.state["b"]) == (UNKNOWN, UNKNOWN)
    assert (held.state["a"], held.state["b"]) == (True, True)
    failed, held = sim.step(sim.initial_state(), "either", {}).branches
    assert (failed.state["a"], failed.state["b"]) == (False, False)
    assert (held.state["a"], held.state["b"]) == (UNKNOWN, UNKNOWN)


def test_comparisons_with_a_literal_imply_a_value_of_the_declared_type(undecided) -> None:  # type: ignore[no-untyped-def]
    sim = undecided.simulator(now=NOW)
    failed, held = sim.step(sim.initial_state(), "one", {}).branches
    assert failed.state["f"] is UNKNOWN
    assert held.state["f"] == 1.0 and type(held.state["f"]) is float
    failed, held = sim.step(sim.initial_state(), "writable", {}).branches
    assert failed.state["m"] == "ro" and held.state["m"] is UNKNOWN


def test_a_parameter_that_hides_a_state_variable_is_not_refined(undecided) -> None:  # type: ignore[no-untyped-def]
    sim = undecided.simulator(now=NOW)
    failed, held = sim.step(sim.initial_state(), "shadow", {"a": True}).branches
    assert held.state["a"] is UNKNOWN and held.state["b"] is True
    assert failed.state["b"] is False


def test_contradictory_undecided_preconditions_leave_no_success(undecided) -> None:  # type: ignore[no-untyped-def]
    sim = undecided.simulator(now=NOW)
    step = sim.step(sim.initial_state(), "clash", {})
    assert [(b.outcome, [v.code for v in b.violations], b.state["a"]) for b in step.branches] == [
        (None, ["A"], False),
        (None, ["NOT_A"], True),
    ]
    assert step.verdict == "may_fail"


def test_a_later_rule_false_on_a_branch_is_reported_there(undecided) -> None:  # type: ignore[no-untyped-def]
    sim = undecided.simulator(now=NOW)
    step = sim.step(sim.initial_state(), "later", {})
    # a fails first; b fails with a held (and then `not a or b` is false too); `not a or b`
    # holds wherever a and b held, so it has no branch of its own
    assert [(b.outcome, [v.code for v in b.violations]) for b in step.branches] == [
        (None, ["A"]),
        (None, ["B", "NB"]),
        ("ok", []),
    ]
    assert step.branches[1].state["b"] is False and step.branches[1].state["a"] is True


# ------------------------------------------------------------------------- text report: changes


@pytest.mark.parametrize(
    ("before", "after", "text"),
    [
        ({"o": {"a": 1, "s": "x"}}, {"o": {"a": 1, "s": "y"}}, '"o".s: "x" → "y"'),
        ({1: {"k": {"a b": 1}}}, {1: {"k": {"a b": 2}}}, '1.k["a b"]: 1 → 2'),
        ({1: {"a": 1}}, {1: {"a": 1}, 2: {"a": 2}}, '+2: {"a": 2}'),
        ({1: {"a": 1}, 2: 3}, {1: {"a": 1}}, "-2"),
        (["a", "b"], ["a", "b", "c"], '+"c"'),
        (["a", "b", "c"], ["a"], '-"b", -"c"'),
        (["a", "b", "c"], ["a", "x", "c"], '[1]: "b" → "x"'),
        ({"t": frozenset({1})}, {"t": frozenset({1, 2})}, '"t": +2'),
        (1, 2, "1 → 2"),
        ("x" * 100 + "a", "x" * 100 + "b", "…" + "x" * 58 + 'a" → …' + "x" * 58 + 'b"'),
    ],
)
def test_change_text_shows_only_what_differs(before, after, text) -> None:  # type: ignore[no-untyped-def]
    from contractsim.compiler.values import freeze
    from contractsim.simulator.report import change_text

    assert change_text(freeze(before), freeze(after)) == text


def test_a_long_change_is_cut_around_its_first_difference() -> None:
    from contractsim.simulator.report import change_text

    before = "[" + ", ".join(str(i) for i in range(40)) + "]"
    after = before.replace("33", "99")
    text = change_text(before, after)
    assert "33" in text.split(" → ")[0] and "99" in text.split(" → ")[1]


# ------------------------------------------------------------------------- unmet goal parts

GOALS = """contract g version "1.0.0"
state {
  done: set[str] = {"a"}
  tasks: list[str] = ["a", "b", "c"]
  online: bool = unknown
  n: int = 0
  prices: map[str, int] = {}
}
event lucky "a lucky day"
predicate finished(t: str) = t in done and n >= 0
goal all_done = all(finished(x) for x in tasks) and online and (n > 2 or online)
  and all(y != "b" for y in tasks)
goal priced = prices["x"] > 0
predicate has(t: str) = t in done
goal first = has("a") and has("z")
goal big = n > 1
tool work(t: str) {
  outcome plain success { done.add(t); n += 1 }
  outcome twice success on lucky probability 0.5 { done.add(t); n += 2 }
}
"""


def test_unmet_goal_parts_name_what_is_false_with_values() -> None:
    """issue 11 item 17: each false (or unknown) conjunct, per item of an all() and inside a
    named predicate, with the values that decided it."""
    sim = contractsim.loads(GOALS).simulator(now=NOW)
    parts = sim.goal_unmet(sim.initial_state(), "all_done")
    assert [p.describe() for p in parts] == [
        '`t in done` is false for t = "b" (in `finished`)',
        '`t in done` is false for t = "c" (in `finished`)',
        "`online` is unknown",
        "`n > 2 or online` is unknown",
        '`y != "b"` is false for y = "b"',
    ]
    assert parts[0].to_json() == {
        "text": 't in done for t = "b"',
        "status": "false",
        "values": {"done": '{"a"}'},
        "bindings": {"t": '"b"'},
        "predicate": "finished",
    }
    assert dict(parts[3].values) == {"n": "0", "online": "unknown"}
    (whole,) = sim.goal_unmet(sim.initial_state(), "first")
    assert (whole.describe(), whole.values) == ('`has("z")` is false', (("done", '{"a"}'),))
    (error,) = sim.goal_unmet(sim.initial_state(), "priced")
    assert error.status == "error" and error.text == 'prices["x"] > 0'
    assert sim.goal_unmet(sim.initial_state({"n": 5}), "big") == []
    with pytest.raises(KeyError):
        sim.goal_unmet(sim.initial_state(), "nope")


def test_unmet_goal_is_reported_per_branch_that_misses_it() -> None:
    sim = contractsim.loads(GOALS).simulator(now=NOW)
    rep = sim.run([("work", {"t": "b"})], goal="big")
    assert [p.choices for p in rep.paths] == [("work:plain",), ("work:twice@lucky",)]
    goal = rep.to_json()["goal"]
    assert (goal["reached"], goal["branches_reaching"], goal["branches_missing"]) == (False, 1, 1)
    assert goal["unmet"] == [
        {
            "branch": 0,
            "choices": ["work:plain"],
            "parts": [{"text": "n > 1", "status": "false", "values": {"n": "1"}}],
        }
    ]
    from contractsim.simulator.report import render_text

    assert render_text(rep).endswith(
        "goal big: NOT reached (1 branch(es) reach it)\n"
        "  - on work:plain:\n"
        "      ✗ `n > 1` is false\n"
        "          n = 1\n"
    )


def test_a_goal_after_a_plan_that_fails_everywhere_says_so(sim) -> None:  # type: ignore[no-untyped-def]
    from contractsim.simulator.report import render_text

    rep = sim.run([("make_dir", {"path": "/a/b"})], goal="has_a")
    assert rep.goal_unmet == [] and rep.to_json()["goal"]["unmet"] == []
    assert render_text(rep).endswith(
        "goal has_a: NOT reached (0 branch(es) reach it)\n"
        "  - no branch gets through the plan without failing\n"
    )


def test_unmet_goal_atoms_of_an_imported_pddl_problem() -> None:
    from pathlib import Path

    blocks = Path(__file__).parent / "data" / "pddl" / "blocks"
    c = contractsim.from_pddl(blocks / "domain.pddl", blocks / "probBLOCKS-4-0.pddl")
    sim = c.simulator(now=NOW)
    rep = sim.run([("pick_up", {"x": "b"}), ("stack", {"x": "b", "y": "a"})], goal="solved")
    (entry,) = rep.to_json()["goal"]["unmet"]
    assert [(p["text"], p["status"]) for p in entry["parts"]] == [
        ('("d", "c") in on_', "false"),
        ('("c", "b") in on_', "false"),
    ]
    assert entry["parts"][0]["values"] == {"on_": '{["b", "a"]}'}


# ------------------------------------------------------------------- unions in values (issue 11.9)

UNIONS = """contract unions version "1.0.0"
type R = record { a: int }
tool t(amount: int | float) { require amount > 0 else NOT_POSITIVE }
tool u(x: float | str) { require float(x) == x else NOT_FLOAT }
tool v(x: str | int | null = null, r: R | null = null, n: int min 0 | str = 0,
       q: list[R] | int = 0) { }
"""


@pytest.mark.parametrize(
    ("tool", "args", "verdict"),
    [
        ("t", {"amount": 1}, "ok"),
        ("t", {"amount": 0.5}, "ok"),
        ("t", {"amount": -0.5}, "fails"),
        ("u", {"x": 1.5}, "ok"),
        ("u", {"x": "1.5"}, "fails"),
    ],
)
def test_numeric_and_overlapping_union_verdicts(
    tool: str, args: dict[str, Any], verdict: str
) -> None:
    sim = contractsim.loads(UNIONS).simulator(now="2024-06-01T12:00:00Z")
    assert sim.step(sim.initial_state(), tool, args).verdict == verdict


@pytest.mark.parametrize(
    ("args", "problems"),
    [
        ({"x": {}}, [("args.x", "must be one of str | int | null (got {})")]),
        (
            {"x": 1.5, "n": {}},
            [
                ("args.x", "must be one of str | int | null (got 1.5)"),
                ("args.n", "must be one of int | str (got {})"),
            ],
        ),
        # the value has the shape of one option: what is wrong inside it is said instead
        ({"r": {"a": "1"}}, [("args.r.a", 'must be an integer (got "1")')]),
        ({"r": {}}, [("args.r.a", "is required but missing")]),
        ({"n": -1}, [("args.n", "must be at least 0 (got -1)")]),
        ({"q": [{"a": 1}, {}]}, [("args.q.1.a", "is required but missing")]),
    ],
)
def test_a_value_that_fits_no_option_of_a_union_is_one_problem(
    args: dict[str, Any], problems: list[tuple[str, str]]
) -> None:
    """Issue 11.9: one line per option, and none for `null`."""
    sim = contractsim.loads(UNIONS).simulator(now="2024-06-01T12:00:00Z")
    r = sim.step(sim.initial_state(), "v", args)
    assert [(v.field, v.message.split(": ", 2)[-1]) for v in r.violations] == problems


# ---------------------------------------------------- recursive types inside records (issue 11.7)

JSON_TYPES = """contract json version "1.0.0"
type Json = str | null | int | list[Json] | map[str, Json]
type T = record { v: Json }
type Q = record { name: str, sub: list[Q] = [] }
state {
  x: list[T] = []
  qs: list[Q] = []
}
tool t(x: record { v: Json }) { }
tool keep(y: T, q: Q) -> T { effect { x.append(result)  qs.append(q) } }
"""


def test_a_recursive_alias_inside_an_inline_record_parameter() -> None:
    """Issue 11.7: a raw PydanticUserError (`t_args` is not fully defined)."""
    sim = contractsim.loads(JSON_TYPES).simulator(now=NOW)
    s = sim.initial_state()
    assert sim.step(s, "t", {"x": {"v": ["a", [None, {"k": 1}]]}}).verdict == "ok"
    r = sim.step(s, "t", {"x": {"v": ["a", [2.5]]}})
    assert [(v.field, v.message) for v in r.violations] == [
        (
            "args.x.v.1.0",
            "t: `args.x.v.1.0`: must be one of str | null | int | list[Json] | map[str, Json] "
            "(got 2.5)",
        )
    ]


def test_recursive_values_are_plain_maps_and_lists_at_every_depth() -> None:
    """Nested levels of a recursive record came out as pydantic models, not maps."""
    c = contractsim.loads(JSON_TYPES)
    sim = c.simulator(now=NOW)
    s = sim.initial_state({"x": [{"v": {"a": [1, None]}}]})
    assert s["x"] == ({"v": {"a": (1, None)}},)
    q = {"name": "a", "sub": [{"name": "b", "sub": [{"name": "c"}]}]}
    seen = Observation("ok", {"v": {"k": ["x", {"y": None}]}})
    o = sim.observe(s, "keep", {"y": {"v": 1}, "q": q}, seen)
    assert o.state["x"][-1] == {"v": {"k": ("x", {"y": None})}}
    inner = o.state["qs"][0]["sub"][0]["sub"][0]
    assert isinstance(inner, FMap) and inner == {"name": "c", "sub": ()}


def test_a_result_of_a_recursive_type_that_does_not_fit_is_drift() -> None:
    sim = contractsim.loads(JSON_TYPES).simulator(now=NOW)
    seen = Observation("ok", {"v": [1.5]})
    o = sim.observe(sim.initial_state(), "keep", {"y": {"v": 1}, "q": {"name": "a"}}, seen)
    assert o.notes == (
        "the result does not match `-> T`: `result.v.0`: must be one of "
        "str | null | int | list[Json] | map[str, Json] (got 1.5)",
    )


# ------------------------------------------- equality across types, number coercions (issue 11.16)

EQUALITY = """contract equality version "1.0.0"
state { seen: list[str] = [] }
tool t(b: bool, n: int, f: float, x: int | str) {
  require b == 0 and n == 1 and n == f and str(b) == "false" and str(f) == "1.0" else CROSS
  require x != 7 else SEVEN
  effect seen.append(str(f))
}
"""


@pytest.mark.parametrize(
    ("args", "codes"),
    [
        ({"b": False, "n": 1, "f": 1.0, "x": "7"}, []),  # "7" != 7
        ({"b": False, "n": 1, "f": 1, "x": "7"}, []),  # 1 for a float is 1.0
        ({"b": True, "n": 1, "f": 1.0, "x": 7}, ["CROSS", "SEVEN"]),
    ],
)
def test_equality_across_types_as_documented(args: dict[str, Any], codes: list[str]) -> None:
    """docs/language.md, "Equality and numbers": `0 == false`, `1 == 1.0`, `"7" != 7`,
    `str(true) == "true"`; the compiled code and the interpreter agree on each."""
    from contractsim.compiler.interp import Env, Interpreter

    c = contractsim.loads(EQUALITY)
    sim = c.simulator(now=NOW)
    r = sim.step(sim.initial_state(), "t", args)
    assert [v.code for v in r.violations] == codes
    if not codes:
        assert r.branches[0].state["seen"] == ("1.0",)
    interp, cc = Interpreter(c.ir), c.compiled
    values = {**args, "f": float(args["f"])}
    S = tuple(cc.initial)
    state = {name: S[i] for name, i in cc.slots.items()}
    for cond in cc.tools["t"].requires:
        env = Env(c.ir, state=state, args=values, safe=True)
        expected = interp.eval(cond.test.ir, env)
        assert cond.test.fast(S, values, None, S, None) == expected
        assert cond.test.safe(S, values, None, S, None) == expected


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"f": 1.0, "n": 1.0}, ("args.n", "must be an integer (got 1.0)")),
        ({"f": True, "n": 1}, ("args.f", "must be a number (got true)")),
        ({"f": 1.0, "n": True}, ("args.n", "must be an integer (got true)")),
        ({"f": "1", "n": 1}, ("args.f", 'must be a number (got "1")')),
    ],
)
def test_number_coercions_of_arguments(args: dict[str, Any], problem: tuple[str, str]) -> None:
    """`1` is accepted for a float (and becomes 1.0); `1.0` is refused for an int; a boolean or
    a numeric string is never a number."""
    sim = contractsim.loads(EQUALITY).simulator(now=NOW)
    r = sim.step(sim.initial_state(), "t", {"b": False, "x": 1, **args})
    assert [(v.field, v.message.split(": ", 2)[-1]) for v in r.violations] == [problem]


# ------------------------------------------------------------ found in review: semantics


def sim_of(text: str) -> Simulator:
    return contractsim.loads(text).simulator(now=NOW)


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
    charged = sim.step(sim.initial_state(), "charge", {}).branches[0].state
    step = sim.step(charged, "refund", {"id": "ch_1"})
    assert step.verdict == "may_fail"
    assert [v.code for v in step.violations] == ["UNKNOWN_PAYMENT"]
    # in a plan, "ch_1" was written before the charge returned its id: it is not that id
    # (issue 16: a fresh value differs from the plan's texts)
    report = sim.run([("charge", {}), ("refund", {"id": "ch_1"})])
    assert report.steps[1].verdict == "fails"
    assert sim.run([("charge", {}), ("refund", {"id": "$1.result.id"})]).verdict == "ok"


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


def test_uuid_format_needs_the_standard_hyphens() -> None:
    sim = contractsim.loads(
        'contract u version "1.0.0"\ntool f(id: str format "uuid4") { }\n'
    ).simulator(now="2024-01-01T00:00:00Z")
    bad = sim.step(sim.initial_state(), "f", {"id": "9b2f3c1e4a5d-4e6f-8a7b-1c2d3e4f5a6b-"})
    good = sim.step(sim.initial_state(), "f", {"id": "9b2f3c1e-4a5d-4e6f-8a7b-1c2d3e4f5a6b"})
    assert (bad.verdict, good.verdict) == ("fails", "ok")


def test_a_fresh_value_compared_in_an_effect_on_a_known_state_is_unknown() -> None:
    """Found by the differential test: on a fully known state an effect ran the two-valued code,
    where ordering a fresh value against text raised (EVAL_ERROR) instead of being unknown."""
    c = contractsim.loads(
        """contract c version "1.0.0"
state { b1: bool = false }
tool t() { effect { b1 = fresh() < add_days(today(), 1) } }
"""
    )
    sim = c.simulator(now=NOW)
    step = sim.step(sim.initial_state(), "t", {})
    assert (step.verdict, step.violations) == ("ok", [])
    assert step.branches[0].state["b1"] is UNKNOWN
