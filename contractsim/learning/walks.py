"""Recorded runs made by a contract itself: random walks over tools whose parameters are enums
(an imported PDDL domain), with ``state_after`` on every step. The learning curves and the
safety tests learn from such runs and compare the learned contract with the true one."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.engine import Simulator
    from ..simulator.state import State

TRIES = 40
"""A step of a walk draws up to this many calls and prefers one that succeeds."""


@dataclass(frozen=True)
class Grounding:
    """Every tool of a contract whose parameters are all enums, with their members."""

    tools: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]

    def draw(self, rng: random.Random) -> tuple[str, dict[str, Any]]:
        tool, params = rng.choice(self.tools)
        return tool, {p: rng.choice(values) for p, values in params}


def grounding(contract: Contract) -> Grounding:
    """The enum-typed tools of ``contract`` and the values their parameters take."""
    enums: dict[str, tuple[str, ...]] = {}
    for decl in contract.ir.types:
        members = getattr(decl.type, "members", None)
        if members:
            enums[decl.name] = tuple(str(getattr(m, "value", m)) for m in members)
    tools = []
    for tool in contract.ir.tools:
        params = []
        for p in tool.params:
            name = getattr(p.type, "name", None)
            if name not in enums:
                break
            params.append((p.name, enums[name]))
        else:
            tools.append((tool.name, tuple(params)))
    return Grounding(tuple(tools))


def _call(sim: Simulator, state: State, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    step = sim.step(state, tool, args)
    if step.verdict == "ok":
        return True, step.branches[0].state
    return False, step.violations[0].message if step.violations else "failed"


def random_runs(
    contract: Contract, runs: int, length: int, seed: int, success_bias: float = 0.6
) -> list[dict[str, Any]]:
    """``runs`` random walks of ``length`` steps from the initial state, in the trace format
    (docs/replay.md), each step with its real outcome (the contract's verdict), the failing
    rule's message and the whole ``state_after``."""
    rng = random.Random(seed)
    sim = contract.simulator()
    ground = grounding(contract)
    out = []
    for r in range(runs):
        state = sim.initial_state()
        steps = []
        for _ in range(length):
            want_ok = rng.random() < success_bias
            chosen = None
            for _ in range(TRIES if want_ok else 1):
                tool, args = ground.draw(rng)
                ok, after = _call(sim, state, tool, args)
                chosen = (tool, args, ok, after)
                if ok or not want_ok:
                    break
            assert chosen is not None
            tool, args, ok, after = chosen
            if ok:
                state = after
            steps.append(
                {
                    "tool": tool,
                    "args": args,
                    "outcome": "ok" if ok else "error",
                    "error": None if ok else after,
                    "result": None,
                    "state_after": state.to_json(),
                }
            )
        out.append({"name": f"walk {seed}.{r}", "steps": steps})
    return out


def random_plans(
    contract: Contract, plans: int, length: int, seed: int
) -> list[list[tuple[str, dict[str, Any]]]]:
    """Random plans: walks that mostly follow calls the contract allows, with some random calls
    (so that plans fail at various steps)."""
    runs = random_runs(contract, plans, length, seed, success_bias=0.8)
    return [[(s["tool"], s["args"]) for s in run["steps"]] for run in runs]


def first_failure(sim: Simulator, plan: Sequence[tuple[str, dict[str, Any]]]) -> int | None:
    """The index of the first step of ``plan`` that does not succeed for certain, or None."""
    state = sim.initial_state()
    for i, (tool, args) in enumerate(plan):
        step = sim.step(state, tool, args)
        if step.verdict != "ok":
            return i
        state = step.branches[0].state
    return None
