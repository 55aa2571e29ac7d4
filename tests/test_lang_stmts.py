"""Issue 16 items 2 and 3: functions; `fail`, `break`, `continue`, `var`, and the list methods
`pop`, `remove_at`, `insert` — parsed, checked, run by every evaluator, simulated, guarded and
replayed."""

from __future__ import annotations

from typing import Any

import pytest

import contractsim
from contractsim import Observation
from contractsim.compiler import lib
from contractsim.compiler.compile import make_context
from contractsim.compiler.interp import Env, Interpreter
from contractsim.diagnostics import ContractError
from contractsim.dsl import ir

NOW = "2024-06-01T12:00:00Z"


def load(text: str) -> contractsim.Contract:
    return contractsim.loads(text, "t.contract")


def codes(text: str) -> list[tuple[str, int, str]]:
    """The error diagnostics of a contract: (code, line, message)."""
    try:
        contractsim.loads(text, "t.contract")
    except ContractError as exc:
        return [(d.code, d.span.line, d.message) for d in exc.diagnostics if d.severity == "error"]
    return []


def state_of(sim: Any, branch: Any) -> dict[str, Any]:
    return dict(zip(sim.compiled.state_names, branch.state.data))


# ------------------------------------------------------------------------------------ functions

SHOP = """contract shop version "1.0.0"
type Size = enum { small, large }
const BASE = 3
state {
  budget: int = 20
  spent: int = 0
  stamp: str = ""
}
function surcharge(size: Size) -> int = len(str(size)) - 4 "1 for large, 1 for small"
function price(n: int, size: Size) -> int = n * BASE + surcharge(size)
  "what n items of a size cost"
function stamped(prefix: str) -> str = prefix + ":" + today()
predicate affordable(n: int, size: Size) = price(n, size) <= budget - spent
goal broke = price(1, Size.small) > budget - spent
tool buy(n: int min 1, size: Size = Size.small) -> record { id: str } {
  require affordable(n, size) else TOO_DEAR "{price(n, size)} is more than {budget - spent}"
  should price(n, size) < 10 else PRICEY "costs {price(n, size)}"
  effect {
    spent += price(n, size)
    stamp = stamped("buy")
  }
  ensure spent == old(spent) + price(n, size) else BROKEN "spent is off"
  outcome bulk success when price(n, size) > 9 { stamp = stamped("bulk") }
  outcome plain success
}
machine till {
  states open
  initial open
  open -> open on buy when price(1, Size.small) <= budget
}
"""


def test_a_function_is_a_declaration_with_a_return_type() -> None:
    c = load(SHOP)
    names = [f.name for f in c.ir.functions]
    assert names == ["surcharge", "price", "stamped"]
    price = c.ir.functions[1]
    assert isinstance(price.returns, ir.NamedType) and price.returns.name == "int"
    assert price.description == "what n items of a size cost"
    assert [p.name for p in price.params] == ["n", "size"]


def test_functions_work_in_conditions_effects_outcomes_templates_goals_and_guards() -> None:
    c = load(SHOP)
    sim = c.simulator(now=NOW)
    r = sim.step(sim.initial_state(), "buy", {"n": 2})
    assert r.verdict == "ok"
    assert [w.code for w in r.warnings] == []
    (b,) = r.branches
    assert b.outcome == "plain"
    assert state_of(sim, b)["spent"] == 7  # 2 * 3 + 1
    assert state_of(sim, b)["stamp"] == "buy:2024-06-01"
    r = sim.step(sim.initial_state(), "buy", {"n": 3, "size": "large"})
    (b,) = r.branches
    assert b.outcome == "bulk" and state_of(sim, b)["stamp"] == "bulk:2024-06-01"
    assert [(w.code, w.message) for w in r.warnings] == [("PRICEY", "costs 10")]
    r = sim.step(sim.initial_state(), "buy", {"n": 7})
    assert r.verdict == "fails"
    assert [(v.code, v.message) for v in r.violations] == [("TOO_DEAR", "22 is more than 20")]
    report = sim.run([("buy", {"n": 6})], goal="broke")
    assert report.verdict == "ok" and report.goal_results["reached"] is True


def test_a_function_call_is_shown_as_written_in_messages_and_exports() -> None:
    c = load(SHOP)
    card = c.export("card")
    assert "affordable(n, size)" in card
    deps = c.ir.tools[0].conditions[0]
    from contractsim.dsl.pretty import expr_text

    assert expr_text(deps.cond) == "affordable(n, size)"
    assert "price(n, size) < 10" in expr_text(c.ir.tools[0].conditions[1].cond)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "function f(x: int) -> int = g(x)\nfunction g(x: int) -> int = f(x) + 1",
            [
                ("E0309", 2, "function `f` calls itself: f → g → f"),
                ("E0309", 3, "function `g` calls itself: g → f → g"),
            ],
        ),
        (
            "function f(x: int) -> bool = p(x)\npredicate p(x: int) = f(x)",
            [
                ("E0309", 2, "function `f` calls itself: f → p → f"),
                ("E0309", 3, "predicate `p` calls itself: p → f → p"),
            ],
        ),
        (
            "function f(x: int) -> str = x + 1",
            [("E0301", 2, "the body of function `f` must be str, but this is int")],
        ),
        (
            'function f(x: int) -> int = x\nconst K = f("a")',
            [("E0301", 3, "argument `x` of `f` must be int, but this is str")],
        ),
        (
            "function f(x: int) -> int = x\nconst K = f(x=1)",
            [
                ("E0305", 3, "`f` takes 1 argument, got 0"),
                ("E0305", 3, "functions take positional arguments"),
            ],
        ),
        (
            "function keys(x: int) -> int = x",
            [("E0203", 2, "`keys` is a built-in function")],
        ),
        (
            "function t(x: int) -> int = x",
            [("E0203", 4, "`t` is already declared as a function at line 2")],
        ),
        (
            "function f() -> str = now()\nconst K = f()",
            [
                (
                    "E0304",
                    3,
                    "`f` reads the clock (today() or now()): it is not allowed in a constant",
                )
            ],
        ),
        (
            'predicate late() = now() > "2024"\nconst K = late()',
            [
                (
                    "E0304",
                    3,
                    "`late` reads the clock (today() or now()): it is not allowed in a constant",
                )
            ],
        ),
        (
            "function f(x: int) -> int = old(x)",
            [("E0304", 2, "`old(…)` is only allowed in `ensure` clauses")],
        ),
        (
            "function f() -> int = n\nconst K = f",
            [("E0301", 3, "`f` is a function: call it as f(…)")],
        ),
    ],
)
def test_function_diagnostics(text: str, expected: list[tuple[str, int, str]]) -> None:
    src = (
        f'contract c version "1.0.0"\n{text}\nstate {{ n: int = 0 }}\ntool t() {{ effect n = 1 }}\n'
    )
    assert codes(src) == expected


def test_a_function_reading_the_clock_is_fine_where_calls_are_made() -> None:
    src = """contract c version "1.0.0"
function stamp() -> str = today()
state { last: str = "" }
tool t() { effect last = stamp() }
"""
    sim = load(src).simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), "t", {}).branches
    assert state_of(sim, b)["last"] == "2024-06-01"


def test_a_function_over_unknown_state_is_unknown() -> None:
    src = """contract c version "1.0.0"
function twice(x: int) -> int = x * 2
state { n: int = unknown
  m: int = 0 }
tool t() {
  require twice(n) < 10 else BIG "too big"
  effect m = twice(n)
}
"""
    sim = load(src).simulator(now=NOW)
    r = sim.step(sim.initial_state(), "t", {})
    assert r.verdict == "may_fail"
    ok = [b for b in r.branches if not b.failed]
    assert len(ok) == 1 and state_of(sim, ok[0])["m"] is contractsim.UNKNOWN


# ---------------------------------------------------------------------------------------- fail

STOCK = """contract stock version "1.0.0"
state {
  items: list[str] = []
  moves: int = 0
  open: bool = true
  known: bool = unknown
}
tool put(name: str) {
  require open else CLOSED "closed"
  effect {
    moves += 1
    items.append(name)
    if len(items) > 2 { fail FULL "no room for {name} after {moves} moves" }
    moves += 10
  }
  ensure moves == old(moves) + 11 else BROKEN "moves is off"
}
tool sweep() {
  effect {
    for it in items {
      moves += 1
      if it == "bad" { fail BAD_ITEM "found {it}" }
    }
  }
}
tool risky() {
  effect {
    moves += 1
    if known { items.append("x"); fail RISK "risky at {moves}" }
    moves += 1
  }
}
tool close() {
  outcome jammed fails JAMMED "jammed" when moves > 100 { moves = 0; fail STUCK "stuck" }
  outcome shut success { open = false }
}
machine door {
  states opened, shut
  initial opened
  opened -> shut on close
  shut -> shut on close
}
"""


def test_fail_keeps_the_effects_applied_before_it() -> None:
    sim = load(STOCK).simulator(now=NOW)
    s = sim.initial_state()
    for name in ("a", "b"):
        (b,) = sim.step(s, "put", {"name": name}).branches
        s = b.state
    assert (s["moves"], s["items"]) == (22, ("a", "b"))
    r = sim.step(s, "put", {"name": "c"})
    assert r.verdict == "fails"
    (b,) = r.branches
    assert b.outcome is None and b.kind == "fails"
    assert [(v.code, v.message, v.kind, v.certain) for v in b.violations] == [
        ("FULL", "no room for c after 23 moves", "fail", True)
    ]
    assert b.violations[0].location == "t.contract:13"
    assert "stay applied" in (b.violations[0].hint or "")
    # the increment and the append before the fail stay; the one after it never ran; `ensure`
    # is not checked on a failure
    assert (b.state["moves"], b.state["items"]) == (23, ("a", "b", "c"))


def test_fail_inside_a_loop_and_in_a_plan_report() -> None:
    sim = load(STOCK).simulator(now=NOW)
    s = sim.initial_state()
    for name in ("ok", "bad"):
        (b,) = sim.step(s, "put", {"name": name}).branches
        s = b.state
    r = sim.step(s, "sweep", {})
    (b,) = r.branches
    assert [(v.code, v.message) for v in b.violations] == [("BAD_ITEM", "found bad")]
    assert b.state["moves"] == 24  # both items counted before the failure
    report = sim.run([("put", {"name": "bad"}), ("sweep", {})])
    assert report.verdict == "fails"
    assert report.steps[1].violations[0].code == "BAD_ITEM"
    text = report.text() if hasattr(report, "text") else str(report)
    assert "BAD_ITEM" in text


def test_fail_under_an_unknown_condition_branches() -> None:
    sim = load(STOCK).simulator(now=NOW)
    r = sim.step(sim.initial_state(), "risky", {})
    assert r.verdict == "may_fail"
    ok = [b for b in r.branches if not b.failed]
    failed = [b for b in r.branches if b.failed]
    assert len(ok) == 1 and len(failed) == 1
    assert state_of(sim, ok[0])["moves"] == 2
    assert ok[0].approximate  # items may or may not have grown: unknown
    assert ok[0].state["items"] is contractsim.UNKNOWN
    (f,) = failed
    assert not f.certain and f.violations[0].code == "RISK"
    assert f.violations[0].certain is False
    assert f.state["moves"] == 1
    assert f.assumptions == ("the `fail RISK` at line 29 is reached",)


def test_fail_in_an_outcome_body_and_machines_do_not_move() -> None:
    sim = load(STOCK).simulator(now=NOW)
    s = sim.initial_state()
    r = sim.step(s, "close", {})
    (b,) = r.branches
    assert b.outcome == "shut" and b.state["machine:door"] == "shut"
    r = sim.step(sim.initial_state({"moves": 101}), "close", {})
    (b,) = r.branches
    # the `fails` outcome's body ran up to its `fail`: its code replaces the outcome's, and the
    # branch is still that outcome's
    assert [v.code for v in b.violations] == ["STUCK"]
    assert b.outcome == "jammed"
    assert b.state["moves"] == 0 and b.state["machine:door"] == "opened"


def test_the_guard_refuses_a_certain_fail_and_replay_keeps_a_raised_ones_effects() -> None:
    c = load(STOCK)
    sim = c.simulator(now=NOW)
    # a real call that raised where the contract says it may fail: the fail branch is taken,
    # with the effects before the `fail`
    o = sim.observe(sim.initial_state(), "risky", {}, Observation.raised(RuntimeError("risk")))
    assert o.status == "crash" and o.branch is not None
    assert o.branch.violations[0].code == "RISK"
    assert o.state["moves"] == 1
    assert o.notes == ()
    # a real success takes the success branch
    o = sim.observe(sim.initial_state(), "risky", {}, Observation.returned(None))
    assert o.state["moves"] == 2
    guard = c.guard(mode="return")
    calls: list[str] = []

    @guard.tool()
    def put(name: str) -> None:
        calls.append(name)

    for name in ("a", "b"):
        assert put(name=name).error is None
    got = put(name="c")
    assert got.error is not None and got.error.code == "FULL"
    assert calls == ["a", "b"]  # certain to fail: refused like a failing precondition


def test_fail_codes_are_checked() -> None:
    src = (
        'contract c version "1.0.0"\nstate { n: int = 0 }\ntool t() { effect { fail bad_code } }\n'
    )
    assert [c for c, _, _ in codes(src)] == ["E0413"]


# ------------------------------------------------------------------ break, continue and var

LOOPS = """contract loops version "1.0.0"
state {
  xs: list[int] = [1, 5, 2, 8, 3]
  total: int = 0
  firsts: list[int] = []
  count: int = 0
  maybe: bool = unknown
}
tool sum_small(limit: int) {
  effect {
    var acc = 0
    var seen = 0
    for x in xs {
      seen += 1
      if x > limit { continue }
      if x == 8 { break }
      acc += x
    }
    total = acc
    count = seen
  }
}
tool first_big(limit: int) {
  effect {
    var found = []
    for x in xs {
      if x > limit { found.append(x); break }
    }
    firsts = found
  }
}
tool scoped() {
  effect {
    var a = 1
    if true { var b = 10; b += 1 }
    total = a
  }
}
tool unknown_break() {
  effect {
    var acc = 0
    for x in xs {
      if maybe { break }
      acc += x
    }
    total = acc
    count = 1
  }
}
"""


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("sum_small", {"limit": 4}, {"total": 6, "count": 5}),
        ("sum_small", {"limit": 9}, {"total": 8, "count": 4}),
        ("first_big", {"limit": 4}, {"firsts": (5,)}),
        ("first_big", {"limit": 9}, {"firsts": ()}),
        ("scoped", {}, {"total": 1}),
        ("unknown_break", {}, {"total": contractsim.UNKNOWN, "count": 1}),
    ],
)
def test_break_continue_and_var(tool: str, args: dict[str, Any], expected: dict[str, Any]) -> None:
    sim = load(LOOPS).simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), tool, args).branches
    got = state_of(sim, b)
    assert {k: got[k] for k in expected} == expected


def test_var_is_scoped_to_its_block_and_let_stays_immutable() -> None:
    src = """contract c version "1.0.0"
state { n: int = 0 }
tool t() {
  effect {
    if true { var a = 1 }
    n = a
    let b = 1
    b += 1
  }
}
"""
    assert codes(src) == [
        ("E0201", 6, "unknown name `a` in tool `t`"),
        ("E0303", 8, "`b` is a `let` binding; it cannot be changed"),
    ]


def test_break_outside_a_loop_is_an_error() -> None:
    src = """contract c version "1.0.0"
state { n: int = 0 }
tool t() {
  effect { n = 1; break }
  outcome o success { continue }
}
"""
    assert codes(src) == [
        ("E0312", 4, "`break` outside a `for` loop"),
        ("E0312", 5, "`continue` outside a `for` loop"),
    ]


def test_deeply_nested_loops_keep_var_break_and_continue() -> None:
    """Past ten nested loops a loop body is a function of its own in generated code."""
    depth = 12
    opening = "".join(f"for q{i} in [1, 2] {{ " for i in range(depth))
    closing = "} " * depth
    inner = f"if q{depth - 1} == 2 {{ break }}; if q{depth - 2} == 2 {{ continue }}; acc += 1"
    src = f"""contract deep version "1.0.0"
state {{ n: int = 0 }}
tool t() {{
  effect {{
    var acc = 0
    {opening} {inner} {closing}
    n = acc
  }}
}}
"""
    sim = load(src).simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), "t", {}).branches
    # the innermost loop adds 1 once (then breaks), only when q10 == 1: 2 ** 10 / 2
    assert state_of(sim, b)["n"] == 2 ** (depth - 2)


# ----------------------------------------------------------------- pop, remove_at, insert

LISTS = """contract lists version "1.0.0"
state {
  xs: list[int] = [1, 2, 3]
  ys: list[int] = []
  n: int = 0
}
tool edit(i: int, v: int) {
  effect {
    n += 1
    xs.insert(i, v)
    xs.remove_at(0)
    xs.pop()
    var local = [7, 8]
    local.insert(1, v)
    local.pop()
    ys = local
  }
}
"""


@pytest.mark.parametrize(
    ("i", "expected"),
    [
        (0, ((1, 2), (7, 9))),  # [9,1,2,3] → [1,2,3] → [1,2]
        (3, ((2, 3), (7, 9))),  # [1,2,3,9] → [2,3,9] → [2,3]
        (-1, ((2, 9), (7, 9))),  # [1,2,9,3] → [2,9,3] → [2,9]
    ],
)
def test_list_methods(i: int, expected: tuple[Any, Any]) -> None:
    sim = load(LISTS).simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), "edit", {"i": i, "v": 9}).branches
    got = state_of(sim, b)
    assert (got["xs"], got["ys"]) == expected


@pytest.mark.parametrize("i", [5, -5])
def test_an_index_out_of_range_fails_the_call_and_changes_nothing(i: int) -> None:
    sim = load(LISTS).simulator(now=NOW)
    r = sim.step(sim.initial_state(), "edit", {"i": i, "v": 9})
    (b,) = r.branches
    assert r.verdict == "fails"
    assert [v.code for v in b.violations] == ["EVAL_ERROR"]
    assert f"position {i} is out of range (length 3)" in b.violations[0].message
    assert state_of(sim, b)["n"] == 0  # a run-time error keeps the call atomic


def test_pop_on_an_empty_list_fails() -> None:
    with pytest.raises(lib.EvalError, match="`pop` on an empty list"):
        lib.coll_pop(())
    assert lib.coll_pop(contractsim.UNKNOWN) is contractsim.UNKNOWN
    assert lib.coll_insert((1,), contractsim.UNKNOWN, 2) is contractsim.UNKNOWN


def test_list_method_arguments_are_checked() -> None:
    src = """contract c version "1.0.0"
state { xs: list[int] = []
  s: set[int] = {} }
tool t() {
  effect { xs.insert("a", 1); xs.insert(0, "b"); xs.remove_at(); s.pop() }
}
"""
    assert codes(src) == [
        ("E0301", 5, "the position given to `insert` must be int, but this is str"),
        ("E0301", 5, "the argument of `insert` must be int, but this is str"),
        ("E0305", 5, "`remove_at` takes 1 argument(s), got 0"),
        ("E0310", 5, "a set has no method `pop`"),
    ]


# ---------------------------------------------------- every evaluator agrees on the new kinds


def _run_all(
    c: contractsim.Contract, tool: str, args: dict[str, Any], state: dict[str, Any]
) -> list[Any]:
    """The effects of ``tool`` run by the interpreter and both generated flavours."""
    cc = c.compiled
    body = cc.tools[tool].effects
    assert body is not None
    known = not any(v is contractsim.UNKNOWN for v in state.values())
    out = []

    def outcome(run: Any) -> Any:
        try:
            got = run()
        except lib.ContractFail as stop:
            return ("fail", stop.code, stop.values, dict(stop_state))
        except lib.EVAL_FAILURES:
            return ("error",)
        return ("ok", got)

    stop_state: dict[str, Any] = {}

    def interp() -> Any:
        env = Env(c.ir, state=dict(state), args=dict(args), consts=dict(cc.consts), safe=True)
        stop_state.clear()
        try:
            Interpreter(c.ir).exec(body.ir, env)
        finally:
            stop_state.update(env.state)
        return (dict(env.state), env.havoc, [(f[0], f[2], f[3]) for f in env.may_fail])

    def compiled(flavour: str) -> Any:
        work = list(cc.initial)
        for n, v in state.items():
            work[cc.slots[n]] = v
        ctx = make_context("2024-06-01", NOW)
        stop_state.clear()
        try:
            getattr(body, flavour)(work, args, None, tuple(work), ctx)
        finally:
            stop_state.update({n: work[cc.slots[n]] for n in state})
        may = [(f[0], f[2], {n: f[3][cc.slots[n]] for n in state}) for f in ctx.may_fail]
        return ({n: work[cc.slots[n]] for n in state}, ctx.havoc, may)

    out.append(outcome(interp))
    for flavour in ("safe", "fast") if known else ("safe",):
        out.append(outcome(lambda flavour=flavour: compiled(flavour)))
    return out


AGREE = """contract agree version "1.0.0"
state {
  xs: list[int] = [1, 5, 2]
  total: int = 0
  flag: bool = false
}
function weight(x: int) -> int = x * 2 + 1
tool t(limit: int) {
  effect {
    var acc = 0
    for x in xs {
      if x == 5 and flag { continue }
      if weight(x) > limit { break }
      acc += weight(x)
      if acc > 20 { fail TOO_MUCH "{acc} over" }
    }
    total = acc
    if flag { xs.pop(); fail FLAGGED }
    xs.insert(0, acc)
  }
}
"""


@pytest.mark.parametrize("limit", [0, 4, 12, 100])
@pytest.mark.parametrize("flag", [False, True, contractsim.UNKNOWN])
@pytest.mark.parametrize("xs", [(1, 5, 2), (9, 9), (), contractsim.UNKNOWN])
def test_every_evaluator_agrees(limit: int, flag: Any, xs: Any) -> None:
    c = load(AGREE)
    results = _run_all(c, "t", {"limit": limit}, {"xs": xs, "total": 0, "flag": flag})
    assert all(r == results[0] for r in results), results


def test_replay_carries_the_effects_before_a_fail_of_a_recorded_failure(tmp_path: Any) -> None:
    import json

    from click.testing import CliRunner

    from contractsim.cli import main

    contract = tmp_path / "stock.contract"
    contract.write_text(
        STOCK
        + """tool audit() {
  require moves == 1 else MOVES "moves is {moves}"
}
""",
        encoding="utf-8",
    )
    run = {
        "steps": [
            {"tool": "risky", "args": {}, "outcome": "crash", "error": "RuntimeError: risk"},
            {"tool": "audit", "args": {}, "outcome": "ok", "error": None, "result": None},
        ]
    }
    traces = tmp_path / "runs.jsonl"
    traces.write_text(json.dumps(run) + "\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["replay", str(contract), str(traces), "--format", "json"])
    report = json.loads(res.output)
    # the crash took the `fail RISK` branch, which keeps `moves += 1`: audit is then predicted
    # ok, as it really was
    assert report["disagreements"] == [], res.output
    assert res.exit_code == 0, res.output


def test_fail_in_a_flow_step_keeps_the_steps_before() -> None:
    src = """contract flows version "1.0.0"
state {
  done: list[str] = []
}
tool job(n: int) {
  flow {
    initial prepare
    step prepare { done.append("prepare") }
    step run { if n > 2 { fail TOO_MANY "{n} jobs" }; done.append("run") }
    prepare -> run
    run -> outcome finished
  }
  outcome finished success
}
"""
    sim = load(src).simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), "job", {"n": 3}).branches
    assert [(v.code, v.message, v.kind) for v in b.violations] == [("TOO_MANY", "3 jobs", "fail")]
    assert b.state["done"] == ("prepare",)
    assert b.flow_path == ("prepare", "run")
    (b,) = sim.step(sim.initial_state(), "job", {"n": 1}).branches
    assert b.outcome == "finished" and b.state["done"] == ("prepare", "run")


def test_diff_sees_a_changed_function_through_what_calls_it() -> None:
    base = """contract c version "{}"
state {{ n: int = 0 }}
function cost(x: int) -> int = x * {}
tool t(x: int) {{
  require cost(x) < 10 else BIG "too big"
  effect n = cost(x)
}}
"""
    old = load(base.format("1.0.0", 2))
    new = load(base.format("1.1.0", 3))
    changes = contractsim.diff(old, new).changes
    assert [(c.tool, c.field) for c in changes] == [("t", "require BIG"), ("t", "effects")]
    assert changes[1].witness is not None
    assert changes[1].witness.new["changes"] == [{"var": "n", "before": 0, "after": 3}]


def test_a_var_starts_from_a_typed_value_and_updates_like_state() -> None:
    src = """contract c version "1.0.0"
state { m: map[str, int] = {} }
tool t() {
  effect {
    var x = {}
  }
}
"""
    assert codes(src) == [("E0301", 5, "the type of `var x = {}` cannot be told")]
    src = """contract c version "1.0.0"
state { m: map[str, int] = {"b": 2} }
tool t(clear: bool) {
  effect {
    var y = m
    y["a"] = 1
    if clear { y = {} }
    m = y
  }
}
"""
    sim = load(src).simulator(now=NOW)
    for clear, expected in ((False, {"a": 1, "b": 2}), (True, {})):
        (b,) = sim.step(sim.initial_state(), "t", {"clear": clear}).branches
        assert dict(b.state["m"]) == expected


def test_the_statements_parse_to_their_ir_nodes_with_positions() -> None:
    c = load(LOOPS)
    body = c.ir.tools[0].effects
    assert [type(s).__name__ for s in body] == ["Var", "Var", "For", "Assign", "Assign"]
    loop = body[2]
    assert isinstance(loop, ir.For)
    kinds = [type(s).__name__ for s in loop.body]
    assert kinds == ["Assign", "If", "If", "Assign"]
    cont = loop.body[1]
    assert isinstance(cont, ir.If) and isinstance(cont.then[0], ir.Continue)
    assert (cont.then[0].span.line, cont.then[0].span.col) == (15, 22)
    fail = load(STOCK).ir.tools[0].effects[2]
    assert isinstance(fail, ir.If)
    stmt = fail.then[0]
    assert isinstance(stmt, ir.Fail) and stmt.code == "FULL"
    assert (
        stmt.message is not None and stmt.message.source == "no room for {name} after {moves} moves"
    )
    assert (stmt.code_span.line, stmt.code_span.col) == (13, 30)


def test_a_real_call_recognised_as_a_failing_outcome_keeps_its_body_up_to_a_fail() -> None:
    src = """contract c version "1.0.0"
state {
  tries: int = 0
  log: list[str] = []
}
tool send() -> record { error?: str } {
  outcome rejected fails REJECTED "rejected" observed when result.error != null {
    tries += 1
    if tries > 2 { fail GAVE_UP "gave up after {tries} tries" }
    log.append("retry")
  }
  outcome sent success
}
"""
    sim = load(src).simulator(now=NOW)
    o = sim.observe(
        sim.initial_state({"tries": 2}), "send", {}, Observation.returned({"error": "no"})
    )
    assert o.outcome == "rejected" and o.status == "error"
    assert o.branch is not None and [v.code for v in o.branch.violations] == ["GAVE_UP"]
    assert (o.state["tries"], o.state["log"]) == (3, ())
    assert o.notes == ()


def test_the_guard_keeps_the_effects_before_a_fail_when_the_real_call_raises() -> None:
    guard = load(STOCK).guard(mode="return")

    @guard.tool()
    def risky() -> None:
        raise RuntimeError("risk")

    got = risky()
    assert got.error is not None and got.error.code == "RISK"
    assert got.error.detail == "RuntimeError: risk"
    assert guard.state["moves"] == 1  # `moves += 1` ran before the `fail`
