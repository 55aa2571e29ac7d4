"""The simulator's parts after the split by concept (issue 14): the façade's switches reach the
parts that use them, and the fast plan checker owns its caches."""

from __future__ import annotations

import contractsim
from contractsim.simulator.fast import PlanChecker

LAMP = """contract lamp version "1.0.0"
state { on: bool = false }
tool switch_on() {
  require not on else LIT "the lamp is already on"
  effect { on = true }
}
"""


def test_explain_switch_reaches_the_explainer() -> None:
    sim = contractsim.loads(LAMP).simulator(now="2024-01-01T00:00:00Z")
    on = sim.step(sim.initial_state(), "switch_on").branches[0].state
    assert sim.explain is True
    (v,) = sim.step(on, "switch_on").violations
    assert v.message == "the lamp is already on" and dict(v.values) == {"on": "true"}
    sim.explain = False  # as replay does: the message stays, the values are not computed
    (v,) = sim.step(on, "switch_on").violations
    assert v.message == "the lamp is already on" and v.values == ()
    assert sim.explain is False


def test_plan_checker_owns_its_caches() -> None:
    sim = contractsim.loads(LAMP).simulator(now="2024-01-01T00:00:00Z")
    first, second = sim.bind("switch_on"), sim.bind("switch_on")
    assert first.fast is not None and first.fast is second.fast  # one fast form per tool
    assert sim.check_plan([first]).verdict == "ok"
    assert tuple(sim.check_plan([first, second])) == ("fails", 2, None)
    other = PlanChecker(sim)  # a checker of its own: its own caches, the same verdicts
    assert other.loops is False
    assert other.bind("switch_on", {}).fast is not first.fast
    assert tuple(other.check([first, second], None)) == ("fails", 2, None)
