"""Issue 15 items 6-8: `state.NAME`, declared vs accepted parameter types, open records and quoted
field names -- parsed, checked, evaluated alike by every evaluator, simulated, guarded, replayed
and exported."""

from __future__ import annotations

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


def test_state_prefix_only_warns_w0608_with_a_hint_to_it() -> None:
    d = diags(COUNTER[len(H) :])
    assert [x.code for x in d] == ["W0608", "W0608"]
    assert d[0].hint == (
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
