"""Issue 15 items 6-8: `state.NAME`, declared vs accepted parameter types, open records and quoted
field names -- parsed, checked, evaluated alike by every evaluator, simulated, guarded, replayed
and exported."""

from __future__ import annotations

from typing import Any

import pytest

import contractsim
from contractsim.api import check_text
from contractsim.compiler.interp import Env, Interpreter
from contractsim.diagnostics import Diagnostic
from contractsim.dsl import ir

NOW = "2024-06-01T12:00:00Z"
H = 'contract demo version "1.0.0"\n'


def diags(text: str) -> list[Diagnostic]:
    return check_text(H + text, "t.contract")


def codes(text: str) -> list[str]:
    return [d.code for d in diags(text)]


def one(text: str, code: str) -> Diagnostic:
    found = [d for d in diags(text) if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in diags(text)]
    return found[0]


# ------------------------------------------------------------------------------ 6. `state.NAME`

COUNTER = (
    H
    + """state {
  count: int = 0
  items: set[str] = {}
  labels: map[str, int] = {}
}
tool add(count: int, items: str) {
  require state.count + count <= 10 else FULL "now {state.count}, adding {count}"
  ensure state.count == old(state.count) + count else BROKEN "{old(state.count)}"
  effect {
    state.count += count
    state.items.add(items)
    state.labels[items] = count
  }
}
tool reset() { effect state.count = 0 }
goal many = state.count > 3
"""
)


@pytest.fixture(scope="module")
def counter() -> contractsim.Contract:
    return contractsim.loads(COUNTER)


def test_state_prefix_lowers_to_a_state_name() -> None:
    c = contractsim.loads(COUNTER)
    tool = c.ir.tool("add")
    assert tool is not None
    cond = tool.conditions[0].cond
    assert isinstance(cond, ir.Binary) and isinstance(cond.left, ir.Binary)
    assert cond.left.left == ir.Name(name="count", state=True)
    assert cond.left.right == ir.Name(name="count")
    from contractsim.dsl.pretty import expr_text

    assert expr_text(cond) == "state.count + count <= 10"


def test_state_prefix_reads_and_assigns_the_hidden_state_variable(
    counter: contractsim.Contract,
) -> None:
    sim = counter.simulator(now=NOW)
    rep = sim.run([("add", {"count": 4, "items": "a"}), ("add", {"count": 4, "items": "b"})])
    assert rep.verdict == "ok"
    (path,) = rep.paths
    final = path.state
    assert final["count"] == 8
    assert final["items"] == frozenset({"a", "b"})
    assert dict(final["labels"]) == {"a": 4, "b": 4}
    failing = sim.run([("add", {"count": 4, "items": "a"})] * 3)
    assert failing.verdict == "fails"
    step = failing.steps[2]
    assert [v.code for v in step.violations] == ["FULL"]
    assert step.violations[0].message == "now 8, adding 4"


def test_w0608_hints_at_state_prefix_and_is_silent_once_the_tool_uses_it() -> None:
    assert [x.code for x in diags(COUNTER[len(H) :])] == []
    d = one("state { count: int = 0 }\ntool add(count: int) { require count > 0 }\n", "W0608")
    assert d.hint == (
        "inside this tool `count` is the parameter; write `state.count` to read or assign the "
        "state variable (or rename the state variable)"
    )


def test_state_prefix_unknown_variable_suggests() -> None:
    d = one(
        "state { count: int = 0 }\ntool t(n: int) { require state.cont > n else BAD }\n",
        "E0201",
    )
    assert d.message == "unknown state variable `state.cont`"
    assert d.hint == "did you mean `state.count`?"
    assert (d.span.line, d.span.col) == (3, 26)


def test_state_prefix_unknown_variable_as_assignment_target() -> None:
    d = one("state { count: int = 0 }\ntool t() { effect state.cout = 1 }\n", "E0201")
    assert d.message == "unknown state variable `state.cout`"
    assert d.hint == "did you mean `state.count`?"


def test_a_parameter_named_state_stays_usable() -> None:
    text = (
        "state { visits: int = 0 }\n"
        'tool ship(state: str) { require state != "" and len(state) == 2 else BAD "bad" '
        "effect visits += 1 }\n"
    )
    assert codes(text) == []
    d = one(
        "type Addr = record { city: str }\n"
        "state { visits: int = 0 }\n"
        'tool ship(state: Addr) { require state.city != "" else BAD }\n',
        "E0201",
    )
    assert d.hint == (
        "`state.NAME` always names a state variable; to read field `city` of `state` here, "
        'write `state["city"]`'
    )


def test_a_state_variable_named_state_stays_usable() -> None:
    assert (
        codes(
            'state { state: str = "idle" }\ntool t() { require state == "idle" else BUSY '
            'effect state = "busy" }\n'
        )
        == []
    )


def test_state_prefix_in_every_evaluator(counter: contractsim.Contract) -> None:
    """Generated fast and safe code and the interpreter agree on a hidden state variable."""
    cc = counter.compiled
    tool = cc.tools["add"]
    state = list(cc.initial)
    state[cc.slots["count"]] = 7
    interp = Interpreter(counter.ir)
    cond = counter.ir.tool("add").conditions[0].cond  # type: ignore[union-attr]
    env = Env(counter.ir, state={"count": 7, "items": frozenset(), "labels": {}}, args={"count": 2})
    assert interp.eval(cond, env) is True
    env = Env(counter.ir, state={"count": 9, "items": frozenset(), "labels": {}}, args={"count": 2})
    assert interp.eval(cond, env) is False
    assert tool is not None


# --------------------------------------------------------------- 7. declared and accepted types

SPEED = (
    H
    + """state {
  speed_now: float | null = 0.0
  changes: int = 0
}
tool set_speed(speed: float accepts float | int | str, unit: str accepts str | int = "kmh")
    "Sets the speed."
{
  require speed != "fast" else FAST "too fast: {speed}"
  effect {
    speed_now = float(speed)
    changes += 1
  }
}
"""
)


@pytest.fixture(scope="module")
def speed() -> contractsim.Contract:
    return contractsim.loads(SPEED)


def test_accepts_parses_beside_the_declared_type(speed: contractsim.Contract) -> None:
    tool = speed.ir.tool("set_speed")
    assert tool is not None
    p = tool.params[0]
    assert p.type == ir.NamedType(name="float")
    assert isinstance(p.accepts, ir.UnionType)
    assert [o.name for o in p.accepts.options] == ["float", "int", "str"]  # type: ignore[union-attr]
    assert p.accepted_type is p.accepts
    assert tool.params[1].default == ir.ScalarLit(value="kmh")
    assert diags(SPEED[len(H) :]) == []


def test_accepted_value_off_the_declared_type_warns_and_proceeds(
    speed: contractsim.Contract,
) -> None:
    sim = speed.simulator(now=NOW)
    r = sim.step(sim.initial_state(), "set_speed", {"speed": "12"})
    assert r.verdict == "ok"
    (b,) = r.branches
    assert b.state["speed_now"] == 12.0
    (w,) = b.warnings
    assert (w.code, w.field, w.value, w.declared) == (
        "OFF_SPEC_ARGUMENT",
        "args.speed",
        "12",
        "float",
    )
    assert w.message == (
        'set_speed: `args.speed`: must be a number (got "12"); the declared type is float, the '
        "tool accepts float | int | str"
    )
    assert w.to_json() == {
        "code": "OFF_SPEC_ARGUMENT",
        "message": w.message,
        "certain": True,
        "field": "args.speed",
        "value": "12",
        "declared": "float",
    }
    # inside the declared type: no warning; outside the accepted type: refused as before
    assert sim.step(sim.initial_state(), "set_speed", {"speed": 3}).branches[0].warnings == []
    bad = sim.step(sim.initial_state(), "set_speed", {"speed": [1]})
    assert bad.verdict == "fails"
    assert [v.message for v in bad.branches[0].violations] == [
        "set_speed: `args.speed`: must be one of float | int | str (got [1])"
    ]
    # the body sees the accepted value (so a condition on it can refuse the call)
    fast = sim.step(sim.initial_state(), "set_speed", {"speed": "fast"})
    assert [v.message for v in fast.branches[0].violations] == ["too fast: fast"]


def test_check_plan_agrees_on_accepted_values(speed: contractsim.Contract) -> None:
    sim = speed.simulator(now=NOW)
    calls = [sim.bind("set_speed", {"speed": "12"}), sim.bind("set_speed", {"speed": 2, "unit": 7})]
    assert sim.check_plan(calls).verdict == "ok"
    assert sim.run([("set_speed", {"speed": "12"}), ("set_speed", {"speed": 2, "unit": 7})]).ok
    with pytest.raises(contractsim.ContractError, match="must be one of float"):
        sim.bind("set_speed", {"speed": [1]})


def test_off_spec_warning_in_text_and_json_reports(tmp_path: Any) -> None:
    from click.testing import CliRunner

    from contractsim.cli import main

    contract = tmp_path / "speed.contract"
    contract.write_text(SPEED, encoding="utf-8")
    plan = tmp_path / "plan.yaml"
    plan.write_text('steps:\n  - {tool: set_speed, args: {speed: "12"}}\n', encoding="utf-8")
    text = CliRunner().invoke(main, ["simulate", str(contract), str(plan), "--no-color"])
    assert text.exit_code == 0, text.output
    assert (
        '! OFF_SPEC_ARGUMENT: set_speed: `args.speed`: must be a number (got "12"); the declared '
        "type is float, the tool accepts float | int | str" in text.output
    )
    res = CliRunner().invoke(main, ["simulate", str(contract), str(plan), "--format", "json"])
    assert res.exit_code == 0, res.output
    import json

    (w,) = json.loads(res.output)["steps"][0]["warnings"]
    assert (w["code"], w["field"], w["value"], w["declared"]) == (
        "OFF_SPEC_ARGUMENT",
        "args.speed",
        "12",
        "float",
    )


def test_guard_calls_the_tool_with_an_off_spec_value_and_warns(
    speed: contractsim.Contract,
) -> None:
    guard = speed.guard(mode="return", now=NOW)
    seen: list[Any] = []

    @guard.tool()
    def set_speed(speed: Any, unit: Any = "kmh") -> None:
        seen.append(speed)

    res = set_speed("12")
    assert res.ok and seen == ["12"]
    assert [(w.code, w.field, w.value) for w in res.warnings] == [
        ("OFF_SPEC_ARGUMENT", "args.speed", "12")
    ]
    assert guard.state["speed_now"] == 12.0
    refused = set_speed([1])
    assert not refused.ok and seen == ["12"]
    assert refused.error is not None and refused.error.code == "INVALID_ARGUMENT"


def test_replay_agrees_with_a_real_call_given_an_off_spec_value(
    speed: contractsim.Contract,
) -> None:
    from contractsim.replay.loop import replay_runs
    from contractsim.replay.traces import Run, Step

    steps = [
        Step(tool="set_speed", args={"speed": "12"}, outcome="ok"),
        Step(tool="set_speed", args={"speed": [1]}, outcome="error", error="TypeError"),
    ]
    result = replay_runs(speed, [Run(name="r", steps=steps)])
    assert result.disagreements == []
    assert result.matrix[("ok", "ok")] == 1
    assert result.matrix[("fails", "error")] == 1


def test_exports_and_cards_show_the_declared_type(speed: contractsim.Contract) -> None:
    schema: Any = speed.export("jsonschema", "set_speed")
    assert schema["properties"]["speed"] == {"type": "number"}
    assert schema["properties"]["unit"] == {"type": "string", "default": "kmh"}
    openapi: Any = speed.export("openapi", "set_speed")
    body = openapi["paths"]["/tools/set_speed"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["properties"]["speed"] == {
        "type": "number"
    }
    openai: Any = speed.export("openai", "set_speed")
    assert openai["function"]["parameters"]["properties"]["speed"] == {"type": "number"}
    mcp: Any = speed.export("mcp", "set_speed")
    assert mcp["inputSchema"]["properties"]["speed"] == {"type": "number"}
    assert speed.card("set_speed").splitlines()[0] == 'set_speed(speed: float, unit: str = "kmh")'


@pytest.mark.parametrize(
    ("text", "code", "message", "hint"),
    [
        (
            "tool t(x: int | str accepts int) { }\n",
            "E0415",
            "parameter `x` accepts int, which does not include its declared type int | str",
            "add the declared type: `accepts int | str | int`",
        ),
        (
            "predicate p(x: int accepts int | str) = true\ngoal g = p(1)\n",
            "E0416",
            "`accepts` is for tool parameters; predicate parameter `x` has one type",
            "write `x: int | str`",
        ),
        (
            'tool t(x: int accepts int | str = "a") { }\n',
            "E0301",
            "the default of `x` must be int, but this is str",
            None,
        ),
    ],
)
def test_accepts_diagnostics(text: str, code: str, message: str, hint: str | None) -> None:
    d = one(text, code)
    assert d.message == message
    assert d.hint == hint


def test_the_body_sees_the_accepted_type() -> None:
    d = one(
        "state { v: float = 0.0 }\ntool t(x: float accepts float | str) { effect v = x }\n",
        "E0301",
    )
    assert d.message == "cannot assign float | str to `v` of type float"


# ----------------------------------------------------- 8. open records and quoted field names

ROWS = (
    H
    + """type Row = record { id: int, "MA(5)": float, "label"?: str, ... }
type Pair = record { a: int, "b c": str }
state {
  rows: list[Row] = []
  total: float = 0.0
  last: Pair | null = null
  volumes: map[str, int] = {}
}
tool add(row: Row, pair: Pair) {
  require row["MA(5)"] > 0.0 else NEGATIVE "MA(5) of {row.id} is not positive"
  require get(row, "volume", 0) != 7 else BAD_VOLUME "volume {get(row, \\"volume\\", 0)}"
  effect {
    rows.append(row)
    total += row["MA(5)"]
    last = pair
    volumes[pair["b c"]] = get(row, "volume", 0)
  }
  ensure len(rows) == len(old(rows)) + 1
}
goal some = len(rows) > 0 and rows[0].label == null
"""
)


@pytest.fixture(scope="module")
def rows() -> contractsim.Contract:
    return contractsim.loads(ROWS)


def test_open_records_and_quoted_fields_parse(rows: contractsim.Contract) -> None:
    row, pair = rows.ir.types
    assert isinstance(row.type, ir.RecordType) and row.type.open
    assert [f.name for f in row.type.fields] == ["id", "MA(5)", "label"]
    assert isinstance(pair.type, ir.RecordType) and not pair.type.open
    assert [f.name for f in pair.type.fields] == ["a", "b c"]
    assert diags(ROWS[len(H) :]) == []
    empty = contractsim.loads(H + "type Any2 = record { ... }\nstate { v: Any2 = Any2() }\n")
    assert empty.ir.types[0].type == ir.RecordType(fields=(), open=True)


def test_open_records_keep_undeclared_fields(rows: contractsim.Contract) -> None:
    sim = rows.simulator(now=NOW)
    args = {
        "row": {"id": 1, "MA(5)": 2.5, "volume": 3, "x": [1, {"a": 2}]},
        "pair": {"a": 1, "b c": "k"},
    }
    r = sim.step(sim.initial_state(), "add", args)
    assert r.verdict == "ok", [v.message for b in r.branches for v in b.violations]
    (b,) = r.branches
    (row,) = b.state["rows"]
    assert dict(row) == {"id": 1, "MA(5)": 2.5, "label": None, "volume": 3, "x": (1, {"a": 2})}
    assert b.state["total"] == 2.5
    assert dict(b.state["volumes"]) == {"k": 3}
    # get() reads the undeclared field; a condition on it can refuse the call
    args["row"] = {"id": 2, "MA(5)": 1.0, "volume": 7}
    bad = sim.step(sim.initial_state(), "add", args)
    assert [v.message for v in bad.branches[0].violations] == ["volume 7"]
    # a closed record still refuses a field it does not declare, with today's message
    args["pair"] = {"a": 1, "b c": "k", "extra": 1}
    closed = sim.step(sim.initial_state(), "add", args)
    assert [v.message for v in closed.branches[0].violations] == [
        "add: `args.pair.extra`: is not a declared field"
    ]


def test_state_overrides_keep_undeclared_fields_of_open_records_only(
    rows: contractsim.Contract,
) -> None:
    sim = rows.simulator(now=NOW)
    state = sim.initial_state({"rows": [{"id": 1, "MA(5)": 1.0, "zz": True}]})
    (row,) = state.data[sim.compiled.slots["rows"]]
    assert dict(row) == {"id": 1, "MA(5)": 1.0, "label": None, "zz": True}
    with pytest.raises(contractsim.ContractError) as exc:
        sim.initial_state({"last": {"a": 1, "b c": "z", "q": 1}})
    assert [d.message for d in exc.value.diagnostics] == ["`last.q`: is not a declared field"]


def test_guard_keeps_undeclared_fields_of_open_records(rows: contractsim.Contract) -> None:
    guard = rows.guard(mode="return", now=NOW)

    @guard.tool()
    def add(row: Any, pair: Any) -> None:
        return None

    res = add({"id": 1, "MA(5)": 2.0, "volume": 4}, {"a": 1, "b c": "k"})
    assert res.ok, res.error
    assert dict(guard.state["volumes"]) == {"k": 4}
    refused = add({"id": 1, "MA(5)": 2.0}, {"a": 1, "b c": "k", "x": 0})
    assert not refused.ok and refused.error is not None
    assert refused.error.code == "INVALID_ARGUMENT"


def test_open_record_in_every_evaluator(rows: contractsim.Contract) -> None:
    """The interpreter and the generated fast and safe code agree on quoted fields and get()."""
    interp = Interpreter(rows.ir)
    tool = rows.ir.tool("add")
    assert tool is not None
    row = {"id": 1, "MA(5)": -1.0, "label": None, "volume": 7}
    for args, expected in (
        ({"row": row, "pair": {"a": 1, "b c": "k"}}, [False, False]),
        ({"row": {**row, "MA(5)": 1.0, "volume": None}, "pair": {}}, [True, True]),
    ):
        from contractsim.compiler.values import FMap

        frozen = {k: FMap(v) for k, v in args.items()}
        env = Env(rows.ir, state={}, args=frozen)
        got = [interp.eval(c.cond, env) for c in tool.conditions[:2]]
        assert got == expected
        sim = rows.simulator(now=NOW)
        verdict = sim.step(
            sim.initial_state(), "add", {"row": args["row"], "pair": {"a": 1, "b c": "k"}}
        )
        assert verdict.verdict == ("ok" if all(expected) else "fails")


OPEN_HINT = '`R` is an open record: read a field it does not declare with get(…, "volume", default)'


@pytest.mark.parametrize(
    ("text", "code", "message", "hint"),
    [
        (
            "type R = record { id: int, ... }\ntool t(r: R) { require r.volume > 0 else BAD }\n",
            "E0209",
            "record `R` has no field `volume`",
            OPEN_HINT,
        ),
        (
            'type R = record { id: int, ... }\ntool t(r: R) { require r["volume"] > 0 else BAD }\n',
            "E0209",
            "record `R` has no field `volume`",
            OPEN_HINT,
        ),
        (
            'type R = record { "MA(5)": float }\n'
            'tool t(r: R) { require r["MA(6)"] > 0.0 else BAD }\n',
            "E0209",
            "record `R` has no field `MA(6)`",
            "did you mean `MA(5)`?",
        ),
        (
            'type R = record { a: int }\ntool t(r: R) { require get(r, "b", 0) > 0 else BAD }\n',
            "E0209",
            "record `R` has no field `b`",
            "did you mean `a`?",
        ),
        (
            "type R = record { a: int }\ntool t(r: R, k: str) { require r[k] == 1 else BAD }\n",
            "E0306",
            "record `R` is indexed by a literal field name",
            'write r["field"]; for a computed name use get(r, name, default)',
        ),
    ],
)
def test_record_field_diagnostics(text: str, code: str, message: str, hint: str) -> None:
    d = one(text, code)
    assert (d.message, d.hint) == (message, hint)


def test_quoted_plain_names_read_as_attributes() -> None:
    c = contractsim.loads(
        H + 'type R = record { "name": str }\nstate { n: str = "" }\n'
        'tool t(r: R) { effect n = r.name + r["name"] }\n'
    )
    sim = c.simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), "t", {"r": {"name": "ab"}}).branches
    assert b.state["n"] == "abab"


def test_open_records_export_additional_properties(rows: contractsim.Contract) -> None:
    schema: Any = rows.export("jsonschema", "add")
    assert schema["$defs"]["Row"]["additionalProperties"] is True
    assert schema["$defs"]["Row"]["properties"]["MA(5)"] == {"type": "number"}
    assert schema["$defs"]["Pair"]["additionalProperties"] is False
    openapi: Any = rows.export("openapi", "add")
    assert openapi["components"]["schemas"]["Row"]["additionalProperties"] is True
    mcp: Any = rows.export("mcp", "add")
    assert mcp["inputSchema"]["$defs"]["Row"]["additionalProperties"] is True
    # OpenAI's strict mode needs closed objects: the open record is closed there
    openai: Any = rows.export("openai", "add")
    assert openai["function"]["parameters"]["$defs"]["Row"]["additionalProperties"] is False
    card = rows.card("add")
    assert '  - Row = record { id: int, "MA(5)": float, label?: str, ... }' in card.splitlines()


def test_state_prefix_in_machine_guards_outcomes_and_flows() -> None:
    c = contractsim.loads(
        H
        + """state {
  level: int = 0
  mode: str = "idle"
}
tool raise_level(level: int) {
  outcome done success when state.level + level < 5 { state.level += level }
  outcome capped partial { state.level = 5 }
}
tool work(mode: str) {
  flow {
    initial start
    step start { state.mode = mode }
    start -> outcome ok when state.mode == "busy"
    start -> outcome refused
  }
  outcome ok success
  outcome refused fails REFUSED "mode {mode}, was {state.mode}"
}
machine gate {
  states low, high
  initial low
  low -> low on raise_level when state.level + level < 3
  low -> high on raise_level
  high -> high on raise_level
  low -> low on work
  high -> high on work
}
"""
    )
    sim = c.simulator(now=NOW)
    rep = sim.run([("raise_level", {"level": 2}), ("raise_level", {"level": 3})])
    assert rep.ok
    (path,) = rep.paths
    assert path.state["level"] == 5  # 0 + 2 < 5: done (2); then 2 + 3 < 5 is false: capped
    assert path.state["machine:gate"] == "high"
    busy = sim.step(sim.initial_state(), "work", {"mode": "busy"})
    assert busy.verdict == "ok" and busy.branches[0].state["mode"] == "busy"
    idle = sim.step(sim.initial_state(), "work", {"mode": "nap"})
    assert idle.verdict == "fails"
    # an outcome's message reads the state before the call
    assert [v.message for v in idle.branches[0].violations] == ["mode nap, was idle"]
    assert idle.branches[0].state["mode"] == "nap"  # a failure outcome keeps the flow's effects


def test_state_prefix_is_three_valued_over_unknown() -> None:
    c = contractsim.loads(
        H
        + """state { network: bool = unknown }
tool send(network: str) {
  require state.network else OFFLINE "offline"
}
"""
    )
    sim = c.simulator(now=NOW)
    r = sim.step(sim.initial_state(), "send", {"network": "wifi"})
    assert r.verdict == "may_fail"
    failing = [b for b in r.branches if b.kind == "fails"]
    assert [v.code for b in failing for v in b.violations] == ["OFFLINE"]
    assert [b.state["network"] for b in failing] == [False]
    ok = [b for b in r.branches if b.kind != "fails"]
    assert [b.state["network"] for b in ok] == [True]
    assert sim.step(sim.initial_state({"network": True}), "send", {"network": "x"}).verdict == "ok"


def test_diff_reports_accepted_types_and_opened_records() -> None:
    old = contractsim.loads(
        H + "type R = record { a: int }\nstate { v: int = 0 }\n"
        "tool t(x: float, r: R) { effect v = r.a }\n"
    )
    new = contractsim.loads(
        H.replace("1.0.0", "1.1.0") + "type R = record { a: int, ... }\nstate { v: int = 0 }\n"
        "tool t(x: float accepts float | str, r: R) { effect v = r.a }\n"
    )
    changes = [(c.type, c.field, c.description) for c in contractsim.diff(old, new).changes]
    assert changes == [
        ("behavioural", "param x", "accepted type of `x` float → float | str"),
        (
            "additive",
            "param r",
            "`r` accepts more values: closed record → open (undeclared fields)",
        ),
    ]
    back = [(c.type, c.description) for c in contractsim.diff(new, old).changes]
    assert back == [
        ("behavioural", "accepted type of `x` float | str → float"),
        ("breaking", "`r` accepted values narrowed: open record → closed (undeclared fields)"),
    ]


def test_planning_relaxation_reads_state_prefix_and_not_a_hiding_parameter() -> None:
    from contractsim.planning.relaxed import Relaxation

    c = contractsim.loads(
        H
        + """state {
  ready: bool = false
  done: bool = false
}
tool prepare() { effect ready = true }
tool go_param(ready: bool) { require ready else NOT_READY  effect done = true }
tool go_state(ready: bool) { require state.ready else NOT_READY  effect done = true }
goal finished = done
"""
    )
    sim = c.simulator(now=NOW)
    calls = [
        sim.bind("prepare"),
        sim.bind("go_param", {"ready": True}),
        sim.bind("go_state", {"ready": False}),
    ]
    relax = Relaxation(sim, calls, "finished")
    assert relax.usable
    ready = relax.index[("ready", True)]
    assert relax.pre == [(), (), (ready,)]  # the parameter `ready` is no fact; state.ready is


def test_dependency_view_reads_state_prefix_behind_a_hiding_parameter() -> None:
    from contractsim.render.deps import dependencies

    c = contractsim.loads(
        H
        + """state { ready: bool = false }
tool prepare() { effect ready = true }
tool go(ready: bool) { require state.ready and ready else NOT_READY }
"""
    )
    deps = [(d.source, d.target, d.effect, d.reasons) for d in dependencies(c.ir)]
    assert deps == [("prepare", "go", "enables", ("ready",))]


def test_state_prefix_behind_let_and_loop_variables() -> None:
    c = contractsim.loads(
        H
        + """state {
  count: int = 0
  seen: list[int] = []
}
tool bump(n: int) {
  effect {
    let count = n * 10
    for seen in [1, 2] { state.count += seen + count; state.seen.append(seen) }
  }
  ensure state.count == old(state.count) + 3 + 20 * n else BROKEN "{state.count}"
}
"""
    )
    sim = c.simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), "bump", {"n": 1}).branches
    assert (b.state["count"], b.state["seen"]) == (23, (1, 2))
    assert b.violations == []
    unknown = sim.initial_state({"count": contractsim.UNKNOWN})
    r = sim.step(unknown, "bump", {"n": 1})
    assert [b.state["count"] for b in r.branches] == [contractsim.UNKNOWN]
