"""A planner on top of the contractsim simulator, in a few lines: ``Simulator.plan``.

It finds a cheapest sequence of tool calls that takes examples/file_system/file_system.contract
from its initial state to the goal the contract declares (``notes_archived``: a copy of
/home/notes.txt exists on the backup volume and the original is gone).

    python examples/planner_bfs.py                 # plan for the contract's first goal
    python examples/planner_bfs.py --goal NAME     # plan for another declared goal

``sim.plan`` (docs/planning.md) grounds the candidate calls from the contract itself (enum and
bool values, values in the state, the contract's literals), accepts a step only when the
simulator says it is certain to succeed (verdict ``ok``, one resulting state), merges identical
states (they are hashable) and searches cheapest-first — uniform-cost here, A* with h_max on
contracts whose state is sets of tuples (imported PDDL). ``contractsim plan`` is the same on the
command line.

The backup volume's availability is ``unknown`` in the contract, and every write to it is then
only "may fail". A planner cannot make that certain, so, like examples/file_system/plans/
ok_archive_to_mounted_volume.yaml, it plans for the state in which the mount has been checked.

Exit status: 0 when a plan is found, 1 when none exists within the depth bound.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import contractsim

CONTRACT = Path(__file__).resolve().parent / "file_system" / "file_system.contract"
NOW = "2024-05-20T12:00:00Z"  # fixed, so that runs are reproducible
ASSUMED_STATE = {"backup_mounted": True}


def plan(goal: str | None = None, max_depth: int = 4) -> tuple[str, Any]:
    """The cheapest plan to ``goal`` (default: the contract's first goal), or None."""
    contract = contractsim.load(CONTRACT)
    goal = goal or contract.ir.goals[0].name
    sim = contract.simulator(now=NOW)
    result = sim.plan(sim.initial_state(ASSUMED_STATE), goal, max_depth=max_depth)
    return goal, result.steps


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
        doc = {
            "state": ASSUMED_STATE,
            "goal": goal,
            "steps": [{"tool": t, "args": a} for t, a in steps],
        }
        print(json.dumps(doc, indent=2))
        return 0
    print(f"plan for goal `{goal}` ({len(steps)} step(s), assuming {ASSUMED_STATE}):")
    for i, (tool, args) in enumerate(steps, 1):
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        print(f"  {i}. {tool}({shown})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
