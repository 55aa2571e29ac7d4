"""Simulator benchmarks, each measured against a peer in the same run; prints ratios.

1. Blocksworld (8 blocks) written as a .contract: 2,000 random 20-step plans checked with
   ``sim.check_plan`` against a hand-written grounded STRIPS checker over frozensets (the
   practical Python limit). Both stop at a plan's first failing step; steps/s counts the steps
   actually checked.
2. A protocol machine of 20 states and 60 guarded transitions driven by 200,000 calls, against
   ``transitions`` with equivalent condition callbacks.
3. Branch exploration of a plan with 10 binary outcomes: states/s and peak memory.

Run: python benchmarks/bench_simulate.py [--plans N] [--calls N] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from contractsim import loads  # noqa: E402

BLOCKS = "abcdefgh"


def blocksworld(plans: int, length: int, seed: int) -> dict[str, float]:
    contract = loads((HERE / "blocksworld8.contract").read_text(), "blocksworld8.contract")
    sim = contract.simulator(now="2024-01-01T00:00:00Z")
    actions: list[tuple[str, dict[str, str]]] = []
    for x in BLOCKS:
        actions += [("pick_up", {"x": x}), ("put_down", {"x": x})]
        for y in BLOCKS:
            if x != y:
                actions += [("stack", {"x": x, "y": y}), ("unstack", {"x": x, "y": y})]

    # grounded STRIPS: (pre, delete, add) over facts
    def strips(tool: str, a: dict[str, str]) -> tuple[frozenset, frozenset, frozenset]:
        x, y = a["x"], a.get("y")
        if tool == "pick_up":
            return (
                frozenset({("clear", x), ("ontable", x), ("handempty",)}),
                frozenset({("ontable", x), ("clear", x), ("handempty",)}),
                frozenset({("holding", x)}),
            )
        if tool == "put_down":
            return (
                frozenset({("holding", x)}),
                frozenset({("holding", x)}),
                frozenset({("clear", x), ("handempty",), ("ontable", x)}),
            )
        if tool == "stack":
            return (
                frozenset({("holding", x), ("clear", y)}),
                frozenset({("holding", x), ("clear", y)}),
                frozenset({("clear", x), ("handempty",), ("on", x, y)}),
            )
        return (
            frozenset({("on", x, y), ("clear", x), ("handempty",)}),
            frozenset({("clear", x), ("handempty",), ("on", x, y)}),
            frozenset({("holding", x), ("clear", y)}),
        )

    grounded = [strips(t, a) for t, a in actions]
    bound = [sim.bind(t, a) for t, a in actions]
    init = frozenset(
        {("handempty",)} | {("clear", b) for b in BLOCKS} | {("ontable", b) for b in BLOCKS}
    )
    rng = random.Random(seed)

    def walk() -> list[int]:
        # valid walks with ~10% random actions: a realistic planner's candidate plans
        state, plan = init, []
        for _ in range(length):
            ok = [i for i, (pre, _, _) in enumerate(grounded) if pre <= state]
            i = rng.randrange(len(grounded)) if rng.random() < 0.1 or not ok else rng.choice(ok)
            plan.append(i)
            pre, dele, add = grounded[i]
            if pre <= state:
                state = (state - dele) | add
        return plan

    mixes = {
        "uniform random": [
            [rng.randrange(len(actions)) for _ in range(length)] for _ in range(plans)
        ],
        "noisy walks": [walk() for _ in range(plans)],
    }
    out: dict[str, float] = {}
    start_state = sim.initial_state()
    for mix, plan_list in mixes.items():
        steps_peer = 0
        t0 = time.perf_counter()
        verdicts_peer = []
        for plan in plan_list:
            state = init
            failed = None
            for n, i in enumerate(plan, 1):
                pre, dele, add = grounded[i]
                steps_peer += 1
                if not pre <= state:
                    failed = n
                    break
                state = (state - dele) | add
            verdicts_peer.append(failed)
        peer = time.perf_counter() - t0
        bound_plans = [[bound[i] for i in plan] for plan in plan_list]  # grounded, like the peer
        t0 = time.perf_counter()
        verdicts_us = [sim.check_plan(plan, start_state).failed_at for plan in bound_plans]
        ours = time.perf_counter() - t0
        assert verdicts_us == verdicts_peer, "contractsim and the frozenset checker disagree"
        out[f"blocksworld {mix}: contractsim steps/s"] = steps_peer / ours
        out[f"blocksworld {mix}: frozenset steps/s"] = steps_peer / peer
        out[f"blocksworld {mix}: slowdown vs frozenset (target <= 3)"] = ours / peer
    return out


MACHINE_STATES = 20
JUMPS = {"a": 1, "b": 3, "c": 7}


def machine_contract() -> str:
    lines = ['contract ring version "1.0.0"']
    for tool in JUMPS:
        lines.append(f"tool {tool}(x: int) {{ }}")
    states = ", ".join(f"s{i}" for i in range(MACHINE_STATES))
    lines.append(f"machine ring {{\n  states {states}\n  initial s0")
    for i in range(MACHINE_STATES):
        for tool, jump in JUMPS.items():
            lines.append(f"  s{i} -> s{(i + jump) % MACHINE_STATES} on {tool} when x >= 0")
    lines.append("}")
    return "\n".join(lines)


def protocol(calls: int, seed: int) -> dict[str, float]:
    from transitions import Machine

    rng = random.Random(seed)
    sequence = [(rng.choice("abc"), rng.randrange(0, 10)) for _ in range(calls)]
    contract = loads(machine_contract(), "ring.contract")
    sim = contract.simulator(now="2024-01-01T00:00:00Z")
    bound = {(t, x): sim.bind(t, {"x": x}) for t in JUMPS for x in range(10)}
    plan = [bound[c] for c in sequence]
    t0 = time.perf_counter()
    result = sim.check_plan(plan)
    ours = time.perf_counter() - t0
    assert result.verdict == "ok"

    class Model:
        pass

    model = Model()
    transitions = []
    for i in range(MACHINE_STATES):
        for tool, jump in JUMPS.items():
            transitions.append(
                {
                    "trigger": tool,
                    "source": f"s{i}",
                    "dest": f"s{(i + jump) % MACHINE_STATES}",
                    "conditions": lambda event: event.kwargs["x"] >= 0,
                }
            )
    Machine(
        model=model,
        states=[f"s{i}" for i in range(MACHINE_STATES)],
        transitions=transitions,
        initial="s0",
        send_event=True,
        auto_transitions=False,
    )
    t0 = time.perf_counter()
    for tool, x in sequence:
        model.trigger(tool, x=x)  # type: ignore[attr-defined]
    peer = time.perf_counter() - t0
    assert model.state == result.state.machine("ring")  # type: ignore[attr-defined,union-attr]
    # a rejected call explained in full: reasons, allowed states, how to get there
    t0 = time.perf_counter()
    state = sim.initial_state()
    explained = 2000
    for _ in range(explained):
        sim.step(state, "a", {"x": -1})
    reasons = time.perf_counter() - t0
    return {
        "protocol: contractsim calls/s": calls / ours,
        "protocol: transitions triggers/s": calls / peer,
        "protocol: speed-up vs transitions (target >= 5)": peer / ours,
        "protocol: rejected calls explained in full per s": explained / reasons,
    }


def branching(outcomes: int) -> dict[str, float]:
    """A plan of ``outcomes`` calls, each with two environment outcomes that leave different
    states: 2**outcomes distinct final branches, nothing to merge."""
    source = """contract coins version "1.0.0"
event tails
state { heads: set[int] = {} }
tool flip(i: int) {
  outcome head success { heads.add(i) }
  outcome tail success on tails probability 0.5
}"""
    sim = loads(source, "coins.contract").simulator(now="2024-01-01T00:00:00Z")
    plan = [("flip", {"i": i}) for i in range(outcomes)]
    t0 = time.perf_counter()
    report = sim.run(plan, max_branches=1 << 20)
    elapsed = time.perf_counter() - t0
    assert len(report.paths) == 2**outcomes
    tracemalloc.start()
    sim.run(plan, max_branches=1 << 20)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "branching: final branches": len(report.paths),
        "branching: states explored": report.states_explored,
        "branching: states/s": report.states_explored / elapsed,
        "branching: peak memory MiB": peak / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--plans", type=int, default=2000)
    ap.add_argument("--length", type=int, default=20)
    ap.add_argument("--calls", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results: dict[str, float] = {}
    results.update(blocksworld(args.plans, args.length, args.seed))
    results.update(protocol(args.calls, args.seed))
    results.update(branching(10))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    width = max(len(k) for k in results)
    for key, value in results.items():
        print(f"{key:<{width}}  {value:>14,.2f}")


if __name__ == "__main__":
    main()
