"""A simulated call's `result` of an OPEN record type may hold fields nobody declared: in
simulation they are not known to be absent (`get` with a default, `in`, `len`, `keys`, iterating
are unknown), in every evaluator, while a real result (guard) has exactly its fields."""

from __future__ import annotations

from typing import Any

import pytest

import contractsim
from contractsim import UNKNOWN
from contractsim.compiler import lib
from contractsim.compiler.compile import make_context
from contractsim.compiler.interp import Env, Interpreter
from contractsim.compiler.values import FMap, OpenRecord

NOW = "2024-06-01T12:00:00Z"

CONTRACT = """contract o version "1.0.0"
type Reply = record { id: str, "n"?: int, ... }
type Shut = record { id: str }
state {
  extra: int = 0
  idv: str = ""
  j: any = null
  shut: any = null
}
tool call() -> Reply {
  effect {
    extra = get(result, "extra", 0)
    idv = get(result, "id", "none")
    j = result
  }
}
tool closed() -> Shut {
  effect shut = result
}
tool use() {
  require extra == 0 else EXTRA "extra is {extra}"
  require j is map and not ("extra" in j) else HAS_EXTRA "has extra"
  require j is map and len(j) == 2 else SIZE "size"
  require j is map and all(k != "zz" for k in j) else ZZ "zz"
  require j is map and len(keys(j)) == 2 else KEYS "keys"
  require j is map and len([v for v in values(j)]) == 2 else VALUES "values"
}
tool use_closed() {
  require shut is map and len(shut) == 1 and not ("extra" in shut) else SHUT "{shut}"
}
"""


@pytest.fixture(scope="module")
def contract() -> contractsim.Contract:
    return contractsim.loads(CONTRACT)


def test_simulated_open_result_may_hold_undeclared_fields(contract: contractsim.Contract) -> None:
    sim = contract.simulator(now=NOW)
    first = sim.step(sim.initial_state(), "call", {})
    (b,) = first.branches
    assert b.state["extra"] is UNKNOWN  # not the default 0: the real result may hold "extra"
    assert b.state["idv"] == b.state["j"]["id"]  # a declared field is read as it is
    assert type(b.state["j"]) is OpenRecord
    second = sim.step(b.state, "use", {})
    assert second.verdict == "may_fail"
    maybe = sorted(v.code for br in second.branches for v in br.violations)
    assert [br.kind for br in second.branches].count("success") == 1
    assert maybe == ["EXTRA", "HAS_EXTRA", "KEYS", "SIZE", "VALUES", "ZZ"]


def test_simulated_closed_result_has_only_its_fields(contract: contractsim.Contract) -> None:
    sim = contract.simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), "closed", {}).branches
    assert type(b.state["shut"]) is FMap
    assert sim.step(b.state, "use_closed", {}).verdict == "ok"


def test_real_open_result_has_exactly_its_fields(contract: contractsim.Contract) -> None:
    guard = contract.guard(mode="return", now=NOW)
    guard.wrap("call", lambda: {"id": "a", "extra": 5})()
    assert guard.state["extra"] == 5
    assert type(guard.state["j"]) is not OpenRecord
    assert not guard.wrap("use", lambda: None)().ok
    guard = contract.guard(mode="return", now=NOW)
    guard.wrap("call", lambda: {"id": "a"})()
    assert guard.state["extra"] == 0
    assert guard.wrap("use", lambda: None)().ok


OPEN = OpenRecord({"id": "a", "n": UNKNOWN})


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ('get(j, "extra", 0)', UNKNOWN),
        ('get(j, "id", "none")', "a"),
        ('"extra" in j', UNKNOWN),
        ('"id" in j', True),
        ('"extra" not in j', UNKNOWN),
        ("len(j)", UNKNOWN),
        ("keys(j)", UNKNOWN),
        ("values(j)", UNKNOWN),
        ("truthy(j)", True),
        ('all(k != "zz" for k in j)', UNKNOWN),
        ("[k for k in j]", UNKNOWN),
        ('j == {"id": "a", "n": 1}', UNKNOWN),
        ("str(j)", UNKNOWN),
    ],
)
def test_every_evaluator_reads_an_open_record_alike(expr: str, expected: Any) -> None:
    """The interpreter and the generated safe code agree (the fast code never sees an open
    record: a state holding one is evaluated three-valued). The value is read through a message
    template, which both evaluate without judging it."""
    c = contractsim.loads(
        f'contract e version "1.0.0"\nstate {{ j: map[str, any] = {{}} }}\n'
        f'tool t() {{ ensure true else X "{{{expr.replace(chr(34), chr(92) + chr(34))}}}" }}\n'
    )
    cc = c.compiled
    message = cc.tools["t"].ensures[0].message
    assert message is not None and message.values is not None
    env = Env(c.ir, state={"j": OPEN}, args={}, safe=True)
    interp = Interpreter(c.ir)
    (by_interp,) = (interp.eval(p.expr, env) for p in message.template.parts if p.expr)
    state = list(cc.initial)
    state[cc.slots["j"]] = OPEN
    (by_code,) = message.values.safe(
        tuple(state), {}, None, tuple(state), make_context(NOW[:10], NOW)
    )
    assert by_interp == expected
    assert by_code == expected


def test_an_open_record_differs_from_a_plain_map_and_stays_open() -> None:
    plain = FMap({"id": "a", "n": UNKNOWN})
    assert OPEN != plain and plain != OPEN
    assert OPEN == OpenRecord(plain) and hash(OPEN) == hash(OpenRecord(plain))
    assert type(lib.coll_set(OPEN, "id", "b")) is OpenRecord
    assert type(OPEN.without("n")) is OpenRecord
    assert lib.contains_unknown(OpenRecord({"id": "a"}))
    assert lib.contains_unknown((FMap({"r": OpenRecord()}),))
    assert lib.SAFE_FUNCS["truthy"](OpenRecord()) is UNKNOWN  # no declared field
    import pickle

    assert type(pickle.loads(pickle.dumps(OPEN))) is OpenRecord


def test_check_plan_leaves_the_fast_path_when_a_call_makes_a_value_unknown() -> None:
    """The fast path of check_plan is for known states: once a call makes a value unknown, the
    rest of the plan takes the full three-valued semantics (found by the differential test)."""
    c = contractsim.loads(
        'contract p version "1.0.0"\nstate { i1: int = 0 }\n'
        "tool t0() { effect i1 = len(fresh()) }\n"
        "tool t1() { effect i1 = count(q > 0 for q in {1, 2} if q != i1) }\n"
    )
    sim = c.simulator(now=NOW)
    check = sim.check_plan([sim.bind("t0", {}), sim.bind("t1", {})])
    assert check.verdict == "ok" and check.state is not None
    assert check.state["i1"] is UNKNOWN  # was 2: fast code run on an unknown state


def test_a_simulated_open_result_is_known_not_to_be_null() -> None:
    """Its undeclared fields are unknown, not whether it is there: `r != null` holds. (Was
    unknown: any value holding something unobserved compared unknown, even with null, so the
    usual `require last != null` could not be decided after a call.)"""
    c = contractsim.loads(
        'contract n version "1.0.0"\n'
        "type Reply = record { id: str, ... }\n"
        "state { last: Reply | null = null\n  seen: bool = false }\n"
        "tool call() -> Reply { effect last = result }\n"
        'tool use() { require last != null else NONE "no reply yet"\n'
        "  effect seen = last == null }\n"
    )
    sim = c.simulator(now=NOW)
    (b,) = sim.step(sim.initial_state(), "call", {}).branches
    assert type(b.state["last"]) is OpenRecord
    used = sim.step(b.state, "use", {})
    assert used.verdict == "ok"
    (after,) = used.branches
    assert after.state["seen"] is False
    assert lib.safe_compare("==", (UNKNOWN,), None) is False
    assert lib.safe_compare("!=", None, FMap({"a": UNKNOWN})) is True


def test_reports_show_that_a_simulated_open_record_may_hold_more() -> None:
    """The text report wrote `{"id": <fresh …>}`, read as a record with exactly that field."""
    from contractsim.compiler.values import show
    from contractsim.simulator.report import change_text

    assert show(OPEN) == '{"id": "a", "n": unknown, ...}'
    assert show(OpenRecord()) == "{...}"
    assert show(FMap({"id": "a"})) == '{"id": "a"}'
    assert show([OpenRecord({"id": "a"})]) == '[{"id": "a", ...}]'
    assert change_text(None, OpenRecord({"id": "a"})) == 'null → {"id": "a", ...}'


@pytest.mark.parametrize(
    ("item", "coll", "expected"),
    [
        (OpenRecord({"id": "a"}), frozenset({FMap({"id": "a"})}), UNKNOWN),
        (OpenRecord({"id": "a"}), (FMap({"id": "a", "x": 1}),), UNKNOWN),
        (OpenRecord({"id": "a"}), (FMap({"id": "b"}),), False),
        (OpenRecord({"id": "a"}), (FMap({"x": 1}),), False),
        ((UNKNOWN, 1), frozenset({(2, 1)}), UNKNOWN),
        ((UNKNOWN, 1), frozenset({(2, 3)}), False),
        (FMap({"id": UNKNOWN}), (FMap({"id": "b"}),), UNKNOWN),
        (FMap({"id": UNKNOWN}), (FMap({"id": "b", "y": 2}),), False),
    ],
)
def test_membership_of_an_item_holding_unknowns(item: Any, coll: Any, expected: Any) -> None:
    """`r in rs` was confidently false when the item held unknowns (a simulated open record, a
    list with an unknown) and no item of the collection was equal as a Python value."""
    assert lib.safe_contains(item, coll) is expected
