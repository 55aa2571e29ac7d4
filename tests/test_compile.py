"""The compiler: generated code (fast and three-valued flavours) agrees with the reference
interpreter, contract strings stay data, and `contractsim compile` prints what it compiles to."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import contractsim
from contractsim import UNKNOWN
from contractsim.cli import main
from contractsim.compiler import lib
from contractsim.compiler.compile import make_context
from contractsim.compiler.interp import Env, Interpreter
from contractsim.compiler.values import FMap

ERRORS = (lib.EvalError, TypeError, KeyError, ZeroDivisionError)
SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ------------------------------------------------------------------------------ the tiny contract

VARS: dict[str, str] = {
    "i1": "int",
    "i2": "int",
    "b1": "bool",
    "b2": "bool",
    "s1": "str",
    "s2": "str",
    "xs": "set[int]",
    "ss": "set[str]",
    "m": "map[str, int]",
}
INITS = {
    "int": "0",
    "bool": "false",
    "str": '""',
    "set[int]": "{}",
    "set[str]": "{}",
    "map[str, int]": "{}",
}


def contract_text(goal: str, cost: str = "1", effect: str = "") -> str:
    state = "\n".join(f"  {n}: {t} = {INITS[t]}" for n, t in VARS.items())
    return f"""contract gen version "1.0.0"
const LIMIT = 3
state {{
{state}
}}
predicate big(x: int) = x > i1
predicate has(k: str) = k in m and m[k] >= 0
goal g = {goal}
tool t(x: int, k: str) cost {cost} {{
  effect {{
    {effect}
  }}
}}
"""


# ------------------------------------------------------------------------- expression generator

STRS = ["", "a", "b", "ab"]


def _lit_int(n: int) -> str:
    return f"({n})" if n < 0 else str(n)


@st.composite
def int_expr(draw: Any, depth: int, loc: dict[str, str]) -> str:
    ints = [n for n, t in loc.items() if t == "int"]
    leaves = [st.integers(-4, 4).map(_lit_int), st.sampled_from(["i1", "i2", "LIMIT", *ints])]
    if depth <= 0:
        return draw(st.one_of(*leaves))
    d = depth - 1
    choice = draw(st.integers(0, 8))
    if choice <= 1:
        return draw(st.one_of(*leaves))
    if choice <= 3:
        op = draw(st.sampled_from(["+", "-"]))
        return f"({draw(int_expr(d, loc))} {op} {draw(int_expr(d, loc))})"
    if choice == 4:
        coll = draw(st.sampled_from(["s1", "ss", "xs", "m"]))
        return f"len({coll})"
    if choice == 5:
        q = f"q{len(loc)}"
        coll = draw(set_int_expr(d, loc))
        body = draw(bool_expr(d, {**loc, q: "int"}))
        return f"count({body} for {q} in {coll})"
    if choice == 6:
        return f"m[{draw(str_expr(d, loc))}]"
    if choice == 7:
        return f"get(m, {draw(str_expr(d, loc))}, {draw(int_expr(d, loc))})"
    return f"(-{draw(int_expr(d, loc))})"


@st.composite
def str_expr(draw: Any, depth: int, loc: dict[str, str]) -> str:
    strs = [n for n, t in loc.items() if t == "str"]
    leaves = [st.sampled_from(STRS).map(json.dumps), st.sampled_from(["s1", "s2", *strs])]
    if depth <= 0 or draw(st.booleans()):
        return draw(st.one_of(*leaves))
    d = depth - 1
    if draw(st.booleans()):
        return f"({draw(str_expr(d, loc))} + {draw(str_expr(d, loc))})"
    return f"upper({draw(str_expr(d, loc))})"


@st.composite
def set_int_expr(draw: Any, depth: int, loc: dict[str, str]) -> str:
    if depth <= 0 or draw(st.booleans()):
        return draw(st.sampled_from(["xs", "xs", "{}"]))
    items = draw(st.lists(int_expr(depth - 1, loc), min_size=1, max_size=3))
    return "{" + ", ".join(items) + "}"


@st.composite
def set_str_expr(draw: Any, depth: int, loc: dict[str, str]) -> str:
    if depth <= 0 or draw(st.booleans()):
        return "ss"
    items = draw(st.lists(str_expr(depth - 1, loc), min_size=1, max_size=3))
    return "{" + ", ".join(items) + "}"


@st.composite
def bool_expr(draw: Any, depth: int, loc: dict[str, str]) -> str:
    leaves = st.sampled_from(["true", "false", "b1", "b2"])
    if depth <= 0:
        return draw(leaves)
    d = depth - 1
    choice = draw(st.integers(0, 14))
    if choice == 0:
        return draw(leaves)
    if choice in (1, 2):
        op = draw(st.sampled_from(["and", "or"]))
        return f"({draw(bool_expr(d, loc))} {op} {draw(bool_expr(d, loc))})"
    if choice == 3:
        return f"(not {draw(bool_expr(d, loc))})"
    if choice in (4, 5):
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
        return f"({draw(int_expr(d, loc))} {op} {draw(int_expr(d, loc))})"
    if choice == 6:
        op = draw(st.sampled_from(["==", "!=", "<"]))
        return f"({draw(str_expr(d, loc))} {op} {draw(str_expr(d, loc))})"
    if choice == 7:
        op = draw(st.sampled_from(["in", "not in"]))
        return f"({draw(int_expr(d, loc))} {op} {draw(set_int_expr(d, loc))})"
    if choice == 8:
        op = draw(st.sampled_from(["in", "not in"]))
        coll = draw(st.one_of(set_str_expr(d, loc), st.just("m"), str_expr(d, loc)))
        return f"({draw(str_expr(d, loc))} {op} {coll})"
    if choice in (9, 10):
        q = f"q{len(loc)}"
        quant = draw(st.sampled_from(["all", "any"]))
        if draw(st.booleans()):
            coll, kind = draw(set_int_expr(d, loc)), "int"
        else:
            coll, kind = draw(set_str_expr(d, loc)), "str"
        body = draw(bool_expr(d, {**loc, q: kind}))
        return f"{quant}({body} for {q} in {coll})"
    if choice == 11:
        if draw(st.booleans()):
            return f"big({draw(int_expr(d, loc))})"
        return f"has({draw(str_expr(d, loc))})"
    if choice == 12:
        op = draw(st.sampled_from(["==", "!="]))
        return f"({draw(set_int_expr(d, loc))} {op} {draw(set_int_expr(d, loc))})"
    if choice == 13:  # `{}` is a map here: the checker's type decides (issue 11.1)
        op = draw(st.sampled_from(["==", "!="]))
        return draw(st.sampled_from([f"(m {op} {{}})", f"({{}} {op} m)"]))
    op = draw(st.sampled_from(["==", "!="]))
    return f"({draw(bool_expr(d, loc))} {op} {draw(bool_expr(d, loc))})"


# ----------------------------------------------------------------------------- state generator

SMALL_INT = st.integers(-3, 3)
SMALL_STR = st.sampled_from(STRS)
VALUE_OF = {
    "int": SMALL_INT,
    "bool": st.booleans(),
    "str": SMALL_STR,
    "set[int]": st.frozensets(SMALL_INT, max_size=3),
    "set[str]": st.frozensets(SMALL_STR, max_size=3),
    "map[str, int]": st.dictionaries(SMALL_STR, SMALL_INT, max_size=3).map(FMap),
}


@st.composite
def state_values(draw: Any, unknown: bool) -> dict[str, Any]:
    out = {}
    for name, t in VARS.items():
        if unknown and draw(st.integers(0, 3)) == 0:
            out[name] = UNKNOWN
        else:
            out[name] = draw(VALUE_OF[t])
    return out


def as_tuple(contract: contractsim.Contract, values: dict[str, Any]) -> tuple[Any, ...]:
    slots = contract.compiled.slots
    out: list[Any] = list(contract.compiled.initial)
    for name, v in values.items():
        out[slots[name]] = v
    return tuple(out)


def attempt(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return ("value", tagged(fn(*args)))
    except ERRORS:
        return ("error", None)


def tagged(v: Any) -> Any:
    """A value with its type, so that True and 1 differ."""
    if isinstance(v, frozenset):
        return ("set", frozenset(tagged(x) for x in v))
    if isinstance(v, dict):
        return ("map", frozenset((tagged(k), tagged(x)) for k, x in v.items()))
    if isinstance(v, tuple):
        return ("list", tuple(tagged(x) for x in v))
    return (type(v).__name__, v)


_CACHE: dict[str, contractsim.Contract] = {}


def load_cached(text: str) -> contractsim.Contract:
    if text not in _CACHE:
        if len(_CACHE) > 500:
            _CACHE.clear()
        _CACHE[text] = contractsim.loads(text)
    return _CACHE[text]


# ------------------------------------------------------------------ expressions: differential test


@SETTINGS
@given(
    goal=bool_expr(3, {}),
    cost=int_expr(3, {}),
    states=st.lists(st.booleans().flatmap(state_values), min_size=1, max_size=4),
)
def test_expressions_compiled_agree_with_interpreter(
    goal: str, cost: str, states: list[dict[str, Any]]
) -> None:
    c = load_cached(contract_text(goal, cost))
    cc = c.compiled
    interp = Interpreter(c.ir)
    fns = [cc.goals["g"], cc.tools["t"].cost]
    assert fns[1] is not None
    for values in states:
        S = as_tuple(c, values)
        known = not any(v is UNKNOWN for v in values.values())
        for fn in fns:
            env = Env(c.ir, state=dict(values), consts=dict(cc.consts), safe=True)
            expected = attempt(interp.eval, fn.ir, env)
            safe = attempt(fn.safe, S, {}, None, S, None)
            assert safe == expected, (values, fn.ir)
            if known:
                fast = attempt(fn.fast, S, {}, None, S, None)
                assert fast == expected, (values, fn.ir)


def test_goal_through_the_simulator() -> None:
    c = contractsim.loads(contract_text('(big(2) and has("a"))'))
    sim = c.simulator(now="2024-06-01T12:00:00Z")
    assert sim.goal(sim.initial_state(), "g") is False
    st_ = sim.initial_state({"m": {"a": 1}})
    assert sim.goal(st_, "g") is True
    st_ = sim.initial_state({"i1": UNKNOWN, "m": {"a": 1}})
    assert sim.goal(st_, "g") is UNKNOWN


# ----------------------------------------------------------------------- effects: differential test

PARAMS = {"x": "int", "k": "str"}


@st.composite
def stmt(draw: Any, depth: int, loc: dict[str, str]) -> str:
    e = max(depth, 1)
    choice = draw(st.integers(0, 14 if depth > 0 else 12))
    if choice == 0:
        return f"i1 = {draw(int_expr(e, loc))}"
    if choice == 1:
        return f"i1 += {draw(int_expr(e, loc))}"
    if choice == 2:
        return f"i2 -= {draw(int_expr(e, loc))}"
    if choice == 3:
        return f"b1 = {draw(bool_expr(e, loc))}"
    if choice == 4:
        return f"s1 = {draw(str_expr(e, loc))}"
    if choice == 5:
        return f"xs.add({draw(int_expr(e, loc))})"
    if choice == 6:
        return f"xs.remove({draw(int_expr(e, loc))})"
    if choice == 7:
        return f"ss.add({draw(str_expr(e, loc))})"
    if choice == 8:
        return f"ss.discard({draw(str_expr(e, loc))})"
    if choice == 9:
        return f"m[{draw(str_expr(e, loc))}] = {draw(int_expr(e, loc))}"
    if choice == 10:
        return f"m.remove({draw(str_expr(e, loc))})"
    if choice == 11:
        return draw(st.sampled_from(["xs = {}", "m = {}", "ss.clear()", "m[k] += x"]))
    if choice == 12:
        return f"s2 = s2 + {draw(str_expr(e, loc))}"
    if choice == 13:
        q = f"q{len(loc)}"
        body = draw(block(depth - 1, {**loc, q: "int"}))
        return f"for {q} in {draw(set_int_expr(1, loc))} {{ {body} }}"
    cond = draw(bool_expr(2, loc))
    then = draw(block(depth - 1, loc))
    if draw(st.booleans()):
        return f"if {cond} {{ {then} }}"
    if draw(st.booleans()):
        return f"if {cond} {{ {then} }} else if {draw(bool_expr(1, loc))} {{ i2 = 7 }}"
    return f"if {cond} {{ {then} }} else {{ {draw(block(depth - 1, loc))} }}"


@st.composite
def block(draw: Any, depth: int, loc: dict[str, str]) -> str:
    return "; ".join(draw(st.lists(stmt(depth, loc), min_size=1, max_size=4)))


@SETTINGS
@given(
    body=block(2, dict(PARAMS)),
    states=st.lists(st.booleans().flatmap(state_values), min_size=1, max_size=3),
    x=SMALL_INT,
    k=SMALL_STR,
)
def test_effects_compiled_agree_with_interpreter(
    body: str, states: list[dict[str, Any]], x: int, k: str
) -> None:
    c = load_cached(contract_text("true", effect=body))
    cc = c.compiled
    effects = cc.tools["t"].effects
    assert effects is not None
    interp = Interpreter(c.ir)
    args = {"x": x, "k": k}

    def run_compiled(flavour: str, S: tuple[Any, ...]) -> tuple[dict[str, Any], bool]:
        work = list(S)
        ctx = make_context("2024-06-01", "2024-06-01T12:00:00.000Z")
        getattr(effects, flavour)(work, args, None, S, ctx)
        assert work[-1] == S[-1]  # the fresh counter is untouched (no fresh() here)
        return {n: work[cc.slots[n]] for n in VARS}, ctx.havoc

    def run_interp(values: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        env = Env(c.ir, state=dict(values), args=dict(args), consts=dict(cc.consts), safe=True)
        interp.exec(effects.ir, env)
        return dict(env.state), env.havoc

    def outcome(run: Any, *args: Any) -> Any:
        try:
            new, havoc = run(*args)
        except ERRORS:
            return "error"
        return {n: tagged(v) for n, v in new.items()}, havoc

    for values in states:
        S = as_tuple(c, values)
        expected = outcome(run_interp, values)
        assert outcome(run_compiled, "safe", S) == expected, (values, body)
        if not any(v is UNKNOWN for v in values.values()):
            assert outcome(run_compiled, "fast", S) == expected, (values, body)
            if expected != "error":
                assert expected[1] is False  # no unknown condition on a known state


def test_unknown_if_condition_havocs_what_the_block_assigns() -> None:
    body = 'if b1 { i1 = 1; xs.add(2) } else { s1 = "z" }'
    c = contractsim.loads(contract_text("true", effect=body))
    sim = c.simulator(now="2024-06-01T12:00:00Z")
    st_ = sim.initial_state({"b1": UNKNOWN})
    b = sim.step(st_, "t", {"x": 1, "k": "a"}).branches
    assert len(b) == 1 and b[0].approximate
    after = b[0].state
    assert after["i1"] is UNKNOWN and after["xs"] is UNKNOWN and after["s1"] is UNKNOWN
    assert after["i2"] == 0 and after["m"] == FMap()


# ---------------------------------------------------------------------------------- escaping

CRAFTED = [
    'he said "hi"',
    "back\\slash",
    "__import__('os').system('touch /tmp/contractsim_pwned')",
    "line1\nline2",
    'triple """ quotes',
    "{not a hole} and }{ braces {{",
    "ünïcödé ✓ 日本語 \u2028 sep \U0001f600",
    "'; import os; x = '",
    "tab\there\rcarriage",
    "nul\0byte",
    "ends with backslash\\",
    "\\u0041 literally",
    "\\{ backslash before a brace",
    "#comment\n    return 1\n",
]


def dsl_string(text: str) -> str:
    """A contract string literal whose value is ``text``."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    out = out.replace("\r", "\\r").replace("\t", "\\t").replace("\0", "\\0")
    return '"' + out + '"'


def dsl_message(text: str) -> str:
    """A message template whose rendered text is ``text`` (braces escaped as ``\\{``)."""
    return dsl_string(text).replace("{", "\\{").replace("}", "\\}")


def crafted_contract(s: str) -> str:
    lit, msg = dsl_string(s), dsl_message(s)
    return f"""contract crafted version "1.0.0"
  {lit}

type Kind = enum {{ {lit}, plain }} {lit}
type Note = record {{
  text: str {lit}
  tag: str = {lit} {lit}
}}
type Code = str pattern r"^[a-z]+\\('x'\\)\\{{1\\}}$" {lit}

state {{
  seen: set[str] = {{{lit}}} {lit}
  last: str = {lit} {lit}
  notes: map[str, str] = {{}}
}}

predicate is_crafted(v: str) = v == {lit} {lit}
event odd {lit}
goal got = {lit} in notes {lit}

tool put(v: str {lit}, kind: Kind = "plain", note?: Note, code?: Code) -> record {{ id: str }}
    {lit}
{{
  require not is_crafted(v) else CRAFTED {msg} hint {msg}
  should v != "x" else NOT_X {msg}
  effect {{
    notes[{lit}] = v + {lit}
    seen.add(v)
    last = {lit}
    if kind == {lit} {{ warn KIND_CRAFTED {msg} }}
  }}
  outcome done success {msg}
  outcome bad fails ODD {msg} hint {msg} on odd probability 0.5
}}
"""


@pytest.mark.parametrize("s", CRAFTED, ids=range(len(CRAFTED)))
def test_crafted_strings_stay_data(s: str, tmp_path: Path) -> None:
    text = crafted_contract(s)
    c = contractsim.loads(text)
    assert c.ir.header.description == s
    assert c.ir.tools[0].description == s
    kind = next(t for t in c.ir.types if t.name == "Kind")
    assert [m.value for m in kind.type.members] == [s, "plain"]
    cc = c.compiled
    # the generated module compiles, and has no builtins
    compile(cc.python_source, "<generated>", "exec")
    goal_fn = cc.goals["got"]
    for fn in (goal_fn.fast, goal_fn.safe):
        assert fn.__globals__["__builtins__"] == {}
    assert cc.initial[cc.slots["last"]] == s
    assert cc.initial[cc.slots["seen"]] == frozenset({s})

    sim = c.simulator(now="2024-06-01T12:00:00Z")
    st0 = sim.initial_state()
    # the require compares with the crafted literal: calling with it fails with the message
    r = sim.step(st0, "put", {"v": s})
    assert r.verdict == "fails"
    (v,) = r.violations
    assert (v.code, v.message, v.hint) == ("CRAFTED", s, s)
    # another value succeeds; the effect stores the crafted literals verbatim
    r = sim.step(st0, "put", {"v": "y", "kind": s, "note": {"text": s}})
    assert r.verdict == "fails"  # the `odd` event branch
    done = next(b for b in r.branches if b.outcome == "done")
    assert done.state["notes"] == FMap({s: "y" + s})
    assert done.state["last"] == s
    assert [w.message for w in r.warnings] == [s]
    bad = next(b for b in r.branches if b.outcome == "bad")
    assert (bad.violations[0].message, bad.violations[0].hint) == (s, s)
    assert sim.goal(done.state, "got") is True
    # the record default is the crafted string
    assert cc.defaults[("Note", "tag")] == s
    # nothing ran
    assert not os.path.exists("/tmp/contractsim_pwned")

    # the CLI: compile --emit python output compiles; --emit ir round-trips the strings
    path = tmp_path / "crafted.contract"
    path.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(main, ["compile", str(path), "--emit", "python"])
    assert res.exit_code == 0, res.output
    compile(res.output, "<cli>", "exec")
    res = CliRunner().invoke(main, ["compile", str(path), "--emit", "ir"])
    assert res.exit_code == 0, res.output
    ir_json = json.loads(res.output)
    assert ir_json["header"]["description"] == s
    # simulate through the CLI: the message appears verbatim in the JSON report
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"tool": "put", "args": {"v": s}}]), encoding="utf-8")
    res = CliRunner().invoke(
        main,
        ["simulate", str(path), str(plan), "--format", "json", "--now", "2024-06-01T12:00:00Z"],
    )
    assert res.exit_code == 1, res.output
    report = json.loads(res.output)
    assert report["steps"][0]["violations"][0]["message"] == s


def test_double_braces_in_messages_are_literal() -> None:
    text = crafted_contract("x").replace('CRAFTED "x"', 'CRAFTED "{{a}} {v} }}"')
    c = contractsim.loads(text)
    sim = c.simulator(now="2024-06-01T12:00:00Z")
    r = sim.step(sim.initial_state(), "put", {"v": "x"})
    assert r.violations[0].message == "{a} x }"


def test_pattern_with_crafted_characters_validates() -> None:
    c = contractsim.loads(crafted_contract("x"))
    sim = c.simulator(now="2024-06-01T12:00:00Z")
    st0 = sim.initial_state()
    r = sim.step(st0, "put", {"v": "y", "code": "ab('x'){1}"})
    assert {b.outcome for b in r.branches} == {"done", "bad"}
    r = sim.step(st0, "put", {"v": "y", "code": "ab('x')"})
    assert r.verdict == "fails"
    assert r.violations[0].field == "args.code"


# -------------------------------------------------------------------------------------- the CLI

EXAMPLES = sorted(Path(__file__).parent.parent.glob("examples/*/*.contract"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_cli_compile_emit_python(path: Path) -> None:
    res = CliRunner().invoke(main, ["compile", str(path), "--emit", "python"])
    assert res.exit_code == 0, res.output
    assert "def " in res.output and "# ---- three-valued flavour ----" in res.output
    compile(res.output, str(path), "exec")
    default = CliRunner().invoke(main, ["compile", str(path)])
    assert default.output == res.output


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_cli_compile_emit_ir(path: Path) -> None:
    res = CliRunner().invoke(main, ["compile", str(path), "--emit", "ir"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    c = contractsim.load(path)
    assert data["header"]["name"] == c.name
    assert [t["name"] for t in data["tools"]] == c.tools


def test_cli_compile_bad_input(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["compile", str(tmp_path / "missing.contract")])
    assert res.exit_code == 2
    bad = tmp_path / "bad.contract"
    bad.write_text('contract x version "1.0.0"\nstate { a: int = "s" }\n')
    res = CliRunner().invoke(main, ["compile", str(bad)])
    assert res.exit_code == 2
    res = CliRunner().invoke(main, ["compile", str(bad), "--emit", "wasm"])
    assert res.exit_code == 2


# ---------------------------------------------------------- `{}` takes the type its context needs

EMPTY_TEXT = """contract empties version "1.0.0"
type Box = record { items: map[str, int], seen: set[str] }
state {
  boxes: map[str, map[str, int]] = {}
  kept: list[Box] = []
  names: list[str] = ["a"]
}
tool t(m: map[str, int]) { require m != {} else EMPTY }
tool t2(m: map[str, int]) { require {} != m else EMPTY }
tool u(m: map[str, map[str, float]], k: str) {
  require get(get(m, k, {}), "price", 0.0) >= 0.0 else NEGATIVE
}
tool v(k: str) {
  effect {
    boxes[k] = {}
    boxes[k]["n"] = 1
    kept.append(Box(items={}, seen={}))
  }
}
tool w() { require names != {} and keys(boxes) == {} else NOT_EMPTY }
"""


def test_empty_braces_are_a_map_where_a_map_is_compared() -> None:
    """Issue 11.1: `m != {}` with `m = {}` was predicted ok ({} was always a set)."""
    sim = load_cached(EMPTY_TEXT).simulator(now="2024-06-01T12:00:00Z")
    s = sim.initial_state()
    for tool in ("t", "t2"):
        assert sim.step(s, tool, {"m": {}}).verdict == "fails"
        assert sim.step(s, tool, {"m": {"a": 1}}).verdict == "ok"


def test_empty_braces_as_the_default_of_get_on_a_map_of_maps() -> None:
    """Issue 11.1: `get(get(m, k, {}), "price", 0.0)` failed with EVAL_ERROR."""
    sim = load_cached(EMPTY_TEXT).simulator(now="2024-06-01T12:00:00Z")
    s = sim.initial_state()
    assert sim.step(s, "u", {"m": {}, "k": "x"}).verdict == "ok"
    r = sim.step(s, "u", {"m": {"x": {"price": -1.0}}, "k": "x"})
    assert (r.verdict, [v.code for v in r.violations]) == ("fails", ["NEGATIVE"])


def test_empty_braces_stored_in_a_map_of_maps_and_a_record_field() -> None:
    c = load_cached(EMPTY_TEXT)
    sim = c.simulator(now="2024-06-01T12:00:00Z")
    r = sim.step(sim.initial_state(), "v", {"k": "a"})
    assert r.verdict == "ok"
    (branch,) = r.branches
    assert branch.state["boxes"] == {"a": {"n": 1}}
    (box,) = branch.state["kept"]
    assert isinstance(box["items"], dict) and isinstance(box["seen"], frozenset)
    assert sim.step(sim.initial_state(), "w", {}).verdict == "ok"


def test_empty_braces_compiled_and_interpreted_agree() -> None:
    c = load_cached(EMPTY_TEXT)
    cc = c.compiled
    interp = Interpreter(c.ir)
    for tool, arg in (("t", {"m": FMap()}), ("t", {"m": FMap({"a": 1})}), ("u", None)):
        cond = cc.tools[tool].requires[0]
        args = arg or {"m": FMap({"x": FMap()}), "k": "y"}
        S = tuple(cc.initial)
        state = {n: S[i] for n, i in cc.slots.items()}
        env = Env(c.ir, state=state, args=dict(args), consts=dict(cc.consts), safe=True)
        expected = attempt(interp.eval, cond.test.ir, env)
        assert expected[0] == "value"
        assert attempt(cond.test.safe, S, args, None, S, None) == expected
        assert attempt(cond.test.fast, S, args, None, S, None) == expected


# ------------------------------------------------------------ the clock inside predicates (11.3)

CLOCK_TEXT = """contract clock version "1.0.0"
state {
  due: list[str] = ["2024-05-01"]
  n: int = 0
}
predicate past(d: str) = d < today()
predicate late() = now() > "2024-06-01T00:00:00Z"
goal all_past = all(past(d) for d in due)
machine m {
  states a, b
  initial a
  a -> b on t when past("2024-01-01")
  b -> a on t
}
tool t(d: str) {
  require past(d) and late() else NOT_PAST "{d} is not before {today()}"
  effect { if past(d) { n += 1 } }
  ensure old(past(d)) else ENSURE
}
"""


@pytest.mark.parametrize(("day", "verdict"), [("2024-05-31", "ok"), ("2024-06-02", "fails")])
def test_today_and_now_inside_a_predicate(day: str, verdict: str) -> None:
    """Issue 11.3: every call failed with `NameError: name 'C' is not defined`."""
    c = contractsim.loads(CLOCK_TEXT)
    sim = c.simulator(now="2024-06-01T12:00:00Z")
    s = sim.initial_state()
    r = sim.step(s, "t", {"d": day})
    assert r.verdict == verdict
    if verdict == "fails":
        assert [(v.code, v.message) for v in r.violations] == [
            ("NOT_PAST", "2024-06-02 is not before 2024-06-01")
        ]
    else:
        (branch,) = r.branches
        assert branch.state["n"] == 1 and branch.state.machine("m") == "b"
    assert sim.goal(s, "all_past") is True
    assert (
        contractsim.loads(CLOCK_TEXT).simulator(now="2024-04-01T00:00:00Z").goal(s, "all_past")
        is False
    )


@pytest.mark.parametrize(
    ("decl", "where"),
    [
        ("const D = today()", "a constant"),
        ("state { s: str = now() }", "an initial value"),
        ("tool t(d: str = today()) { }", "a default"),
        ('type R = record { d: str = "x" + today() }', "a default"),
    ],
)
def test_the_clock_is_refused_where_a_value_is_fixed_at_load(decl: str, where: str) -> None:
    """A constant, default or initial value was computed with 1970-01-01 (or became null)."""
    with pytest.raises(contractsim.ContractError) as info:
        contractsim.loads('contract c version "1.0.0"\n' + decl + "\n")
    (d,) = info.value.errors
    func = "now" if "now()" in decl else "today"
    assert (d.code, d.message) == ("E0304", f"`{func}()` is not allowed in {where}")


# ------------------------------------------------------------------ fresh values in operators

FRESH = """contract fresh version "1.0.0"
state { log: str = "", n: int = 0, ok: bool = false, c: str = "" }
tool join() -> record { id: str } {
  effect { log += result.id; n = len(log) }
}
tool mix() -> record { id: str } {
  effect {
    log = "x" + result.id + upper(result.id)
    ok = "a" in result.id and all(ch != "z" for ch in result.id)
    c = result.id[0]
    for ch in result.id { n += 1 }
  }
}
tool missing() {
  effect {
    n = 1
    log = {"a": "b"}["c"]
  }
}
"""


@pytest.mark.parametrize("tool", ["join", "mix"])
def test_operators_on_a_fresh_result_are_unknown_not_errors(tool: str) -> None:
    sim = contractsim.loads(FRESH, "fresh.contract").simulator(now="2024-01-01T00:00:00Z")
    result = sim.step(sim.initial_state(), tool, {})
    assert result.verdict == "ok", [v.message for v in result.violations]
    (branch,) = result.branches
    assert branch.state["log"] is UNKNOWN
    assert branch.state["n"] is UNKNOWN


def test_evaluation_errors_point_at_the_failing_statement() -> None:
    sim = contractsim.loads(FRESH, "fresh.contract").simulator(now="2024-01-01T00:00:00Z")
    (violation,) = sim.step(sim.initial_state(), "missing", {}).violations
    assert violation.code == "EVAL_ERROR"
    assert violation.message == 'the contract cannot evaluate this: key "c" is not in the map'
    assert violation.location == "fresh.contract:17"  # not the `tool` line


def test_fresh_values_in_lib_operators() -> None:
    from contractsim.compiler.values import Fresh

    f = Fresh("t.id", 1)
    assert lib.safe_arith("+", "a", f) is UNKNOWN
    assert lib.safe_arith("+", f, f) is UNKNOWN
    assert lib.safe_contains("a", f) is UNKNOWN
    assert lib.index(f, 0) is UNKNOWN
    with pytest.raises(lib.EvalError, match="multiplies numbers only"):
        lib.safe_arith("*", f, 2)


def test_text_written_from_collections_holding_fresh_values_is_unknown() -> None:
    from contractsim.compiler.values import Fresh

    f = Fresh("t.id", 1)
    assert lib.SAFE_FUNCS["join"](("a", f), ",") is UNKNOWN
    assert lib.SAFE_FUNCS["str"](("a", f)) is UNKNOWN
    assert lib.SAFE_FUNCS["str"](FMap({"k": UNKNOWN})) is UNKNOWN
    assert lib.SAFE_FUNCS["join"](("a", "b"), ",") == "a,b"
