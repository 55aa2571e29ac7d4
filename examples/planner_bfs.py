"""A breadth-first planner on top of the contractsim simulator.

It finds a shortest sequence of tool calls that takes examples/file_system/file_system.contract
from its initial state to the goal the contract declares (``notes_archived``: a copy of
/home/notes.txt exists on the backup volume and the original is gone).

    python examples/planner_bfs.py                 # plan for the contract's first goal
    python examples/planner_bfs.py --goal NAME     # plan for another declared goal

How it works:
  * the candidate actions are built from the contract itself: every tool, with each parameter that
    has no default filled from a small pool of values chosen by the parameter's type;
  * a step is accepted only when the simulator says it is certain to succeed (verdict ``ok``) and
    it has exactly one outcome, so the plan needs no luck;
  * states are immutable and hashable, so identical states reached by different prefixes are
    merged with a plain ``visited`` set.

The backup volume's availability is ``unknown`` in the contract, and every write to it is then
only "may fail". A planner cannot make that certain, so, like examples/file_system/plans/
ok_archive_to_mounted_volume.yaml, it plans for the state in which the mount has been checked.

Exit status: 0 when a plan is found, 1 when none exists within the depth bound.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import contractsim

CONTRACT = Path(__file__).resolve().parent / "file_system" / "file_system.contract"
NOW = "2024-05-20T12:00:00Z"  # fixed, so that runs are reproducible
ASSUMED_STATE = {"backup_mounted": True}

Action = tuple[str, dict[str, Any]]  # (tool name, arguments)

# Argument values to try, by the parameter's declared type name.
POOL: dict[str, list[Any]] = {
    "Path": ["/home/notes.txt", "/mnt/backup", "/mnt/backup/notes.txt"],
    "str": ["meeting at 10\n"],
}


def candidate_actions(contract: contractsim.Contract) -> list[Action]:
    """Every (tool, args) pair that can be built from the pool; parameters with a default (or
    optional ones) keep it. Tools with a parameter the pool cannot fill are left out."""
    actions: list[Action] = []
    for tool in contract.ir.tools:
        names: list[str] = []
        choices: list[list[Any]] = []
        usable = True
        for p in tool.params:
            if p.default is not None or p.optional:
                continue
            type_name = getattr(p.type, "name", None)
            if type_name not in POOL:
                usable = False
                break
            names.append(p.name)
            choices.append(POOL[type_name])
        if not usable:
            continue
        for values in itertools.product(*choices):
            actions.append((tool.name, dict(zip(names, values, strict=True))))
    return actions


def successors(
    sim: Any, state: Any, actions: list[Action]
) -> Iterator[tuple[str, dict[str, Any], Any]]:
    for tool, args in actions:
        result = sim.step(state, tool, args)
        if result.verdict != "ok" or len(result.branches) != 1:
            continue  # fails, may fail, or depends on the environment: not a certain step
        yield tool, args, result.branches[0].state


def plan(goal: str | None = None, max_depth: int = 4) -> tuple[str, list[Action] | None]:
    """Breadth-first search: the first plan found is a shortest one."""
    contract = contractsim.load(CONTRACT)
    goal = goal or contract.ir.goals[0].name
    sim = contract.simulator(now=NOW)
    start = sim.initial_state(ASSUMED_STATE)
    actions = candidate_actions(contract)
    if sim.goal(start, goal) is True:
        return goal, []
    queue: deque[tuple[Any, list[Action]]] = deque([(start, [])])
    visited = {start}
    while queue:
        state, prefix = queue.popleft()
        if len(prefix) >= max_depth:
            continue
        for tool, args, nxt in successors(sim, state, actions):
            if nxt in visited:
                continue
            visited.add(nxt)
            steps = prefix + [(tool, args)]
            if sim.goal(nxt, goal) is True:
                return goal, steps
            queue.append((nxt, steps))
    return goal, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goal", help="a goal declared in the contract (default: the first)")
    parser.add_argument("--max-depth", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print the plan as a JSON plan file")
    opts = parser.parse_args()
    goal, steps = plan(opts.goal, opts.max_depth)
    if steps is None:
        print(f"no plan reaches goal `{goal}` within {opts.max_depth} steps", file=sys.stderr)
        return 1
    if opts.json:
        print(
            json.dumps(
                {
                    "state": ASSUMED_STATE,
                    "goal": goal,
                    "steps": [{"tool": t, "args": a} for t, a in steps],
                },
                indent=2,
            )
        )
        return 0
    print(f"plan for goal `{goal}` ({len(steps)} step(s), assuming {ASSUMED_STATE}):")
    for i, (tool, args) in enumerate(steps, 1):
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        print(f"  {i}. {tool}({shown})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
