"""PDDL benchmark: imported contracts against unified-planning and a frozenset checker.

For blocks probBLOCKS-8-0 and gripper prob05 (tests/data/pddl), 2,000 sequences of 20 grounded
actions in three mixes — uniform random, noisy walks (valid walks with ~10% random actions) and
valid walks — are checked by

* contractsim: the imported contract, calls bound once (``sim.bind``), ``sim.check_plan``;
* unified-planning: one warm ``SequentialSimulator`` reused for every plan, ``apply`` per step
  with pre-built parameter expressions;
* a hand-written grounded STRIPS checker over frozensets (``pre <= state``,
  ``(state - del) | add``).

All three stop at a plan's first failing step; steps/s counts the steps actually checked, and the
three must agree on every plan's first failing step. Also times ``import-pddl`` (read, emit,
check) against unified-planning's ``PDDLReader`` on the same files.

Run: python benchmarks/bench_pddl.py [--plans N] [--length N] [--seed N] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from contractsim import loads  # noqa: E402
from contractsim.pddl import pddl_to_contract  # noqa: E402
from contractsim.pddl.model import Atom, Lit  # noqa: E402
from contractsim.pddl.read import read_domain, read_problem  # noqa: E402

DATA = ROOT / "tests" / "data" / "pddl"
CASES = [("blocks", "probBLOCKS-8-0.pddl"), ("gripper", "prob05.pddl")]
Fact = tuple[str, ...]
Grounded = tuple[frozenset[Fact], frozenset[Fact], frozenset[Fact]]


def ground_strips(
    folder: str, problem: str
) -> tuple[list[tuple[str, tuple[str, ...]]], list[Grounded], frozenset[Fact]]:
    """Every grounding of every action as (pre, delete, add) fact sets (STRIPS domains)."""
    d_file, p_file = DATA / folder / "domain.pddl", DATA / folder / problem
    domain = read_domain(d_file.read_text(), str(d_file))
    prob = read_problem(p_file.read_text(), str(p_file), domain)
    objects = {**domain.constants, **prob.objects}
    calls: list[tuple[str, tuple[str, ...]]] = []
    grounded: list[Grounded] = []

    def fact(atom: Atom, env: dict[str, str]) -> Fact:
        return (atom.pred, *(env[t.name] if t.is_var else t.name for t in atom.args))

    for action in domain.actions:
        pools = [
            [o for o, t in objects.items() if t in p.types or "object" in p.types]
            for p in action.params
        ]
        pre_atoms: list[Atom] = []
        stack = [action.pre] if action.pre is not None else []
        while stack:
            f = stack.pop()
            if isinstance(f, Atom):
                pre_atoms.append(f)
            else:
                stack.extend(getattr(f, "args", ()))
        for combo in itertools.product(*pools):
            env = dict(zip([p.name for p in action.params], combo))
            pre = frozenset(fact(a, env) for a in pre_atoms)
            dels = frozenset(
                fact(e.atom, env) for e in action.effects if isinstance(e, Lit) and not e.positive
            )
            adds = frozenset(
                fact(e.atom, env) for e in action.effects if isinstance(e, Lit) and e.positive
            )
            calls.append((action.name, combo))
            grounded.append((pre, dels, adds))
    init = frozenset(fact(a, {}) for a in prob.init)
    return calls, grounded, init


def mixes(
    grounded: list[Grounded], init: frozenset[Fact], plans: int, length: int, rng: random.Random
) -> dict[str, list[list[int]]]:
    def walk(noise: float) -> list[int]:
        state, plan = init, []
        for _ in range(length):
            ok = [i for i, (pre, _, _) in enumerate(grounded) if pre <= state]
            if rng.random() < noise or not ok:
                i = rng.randrange(len(grounded))
            else:
                i = rng.choice(ok)
            plan.append(i)
            pre, dele, add = grounded[i]
            if pre <= state:
                state = (state - dele) | add
        return plan

    return {
        "uniform random": [
            [rng.randrange(len(grounded)) for _ in range(length)] for _ in range(plans)
        ],
        "noisy walks": [walk(0.1) for _ in range(plans)],
        "valid walks": [walk(0.0) for _ in range(plans)],
    }


def frozenset_check(
    grounded: list[Grounded], init: frozenset[Fact], plan: list[int]
) -> tuple[int | None, int]:
    state = init
    for n, i in enumerate(plan, 1):
        pre, dele, add = grounded[i]
        if not pre <= state:
            return n, n
        state = (state - dele) | add
    return None, len(plan)


def bench_problem(
    folder: str, problem: str, plans: int, length: int, seed: int
) -> list[dict[str, Any]]:
    from unified_planning.engines.sequential_simulator import UPSequentialSimulator
    from unified_planning.exceptions import UPInvalidActionError
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import get_environment

    get_environment().credits_stream = None
    d_file, p_file = DATA / folder / "domain.pddl", DATA / folder / problem
    contract = loads(
        pddl_to_contract(d_file.read_text(), p_file.read_text(), str(d_file), str(p_file))
    )
    sim = contract.simulator(now="2024-01-01T00:00:00Z")
    calls, grounded, init = ground_strips(folder, problem)
    tools = {t.name: t for t in contract.ir.tools}
    bound = []
    for name, args in calls:
        tool = tools[name.replace("-", "_")]
        bound.append(sim.bind(tool.name, dict(zip([p.name for p in tool.params], args))))

    up_problem = PDDLReader().parse_problem(str(d_file), str(p_file))
    up_sim = UPSequentialSimulator(up_problem)
    em = up_problem.environment.expression_manager
    up_actions = {a.name: a for a in up_problem.actions}
    up_calls = [
        (up_actions[name], tuple(em.ObjectExp(up_problem.object(o)) for o in args))
        for name, args in calls
    ]
    up_init = up_sim.get_initial_state()
    for action, params in up_calls:  # warm: every grounding built and cached once, untimed
        up_sim.is_applicable(up_init, action, params)

    rows = []
    start = sim.initial_state()
    for mix, plan_list in mixes(grounded, init, plans, length, random.Random(seed)).items():
        t0 = time.perf_counter()
        peer = [frozenset_check(grounded, init, p) for p in plan_list]
        t_frozen = time.perf_counter() - t0
        steps = sum(n for _, n in peer)

        bound_plans = [[bound[i] for i in p] for p in plan_list]
        t0 = time.perf_counter()
        ours = [sim.check_plan(p, start).failed_at for p in bound_plans]
        t_ours = time.perf_counter() - t0

        t0 = time.perf_counter()
        theirs = []
        for p in plan_list:
            state, failed = up_init, None
            for n, i in enumerate(p, 1):
                action, params = up_calls[i]
                try:
                    state = up_sim.apply(state, action, params)
                except UPInvalidActionError:  # the grounding simplifies to a contradiction
                    state = None
                if state is None:
                    failed = n
                    break
            theirs.append(failed)
        t_up = time.perf_counter() - t0

        expected = [f for f, _ in peer]
        assert ours == expected, f"{folder} {mix}: contractsim and the frozenset checker disagree"
        assert theirs == expected, (
            f"{folder} {mix}: unified-planning and the frozenset checker disagree"
        )
        rows.append(
            {
                "problem": f"{folder}/{problem}",
                "mix": mix,
                "steps": steps,
                "contractsim steps/s": steps / t_ours,
                "contractsim plans/s": len(plan_list) / t_ours,
                "unified-planning steps/s": steps / t_up,
                "unified-planning plans/s": len(plan_list) / t_up,
                "frozenset steps/s": steps / t_frozen,
                "speed-up vs unified-planning (target >= 100)": t_up / t_ours,
                "slowdown vs frozenset (target <= 3)": t_ours / t_frozen,
            }
        )
    return rows


def bench_import(repeat: int = 3) -> list[dict[str, Any]]:
    from unified_planning.io import PDDLReader

    rows = []
    for folder, problem in CASES:
        d_file, p_file = DATA / folder / "domain.pddl", DATA / folder / problem
        ours, theirs = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            loads(
                pddl_to_contract(d_file.read_text(), p_file.read_text(), str(d_file), str(p_file))
            )
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            PDDLReader().parse_problem(str(d_file), str(p_file))
            theirs.append(time.perf_counter() - t0)
        rows.append(
            {
                "problem": f"{folder}/{problem}",
                "import-pddl + check ms": min(ours) * 1000,
                "PDDLReader ms": min(theirs) * 1000,
                "speed-up": min(theirs) / min(ours),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--plans", type=int, default=2000)
    ap.add_argument("--length", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)  # pyparsing names in unified-planning
    rows: list[dict[str, Any]] = []
    for folder, problem in CASES:
        rows += bench_problem(folder, problem, args.plans, args.length, args.seed)
    imports = bench_import()
    if args.json:
        print(json.dumps({"checking": rows, "import": imports}, indent=2))
        return
    cols = [
        ("steps", "steps", ",.0f"),
        ("ours st/s", "contractsim steps/s", ",.0f"),
        ("ours pl/s", "contractsim plans/s", ",.0f"),
        ("UP st/s", "unified-planning steps/s", ",.0f"),
        ("frozen st/s", "frozenset steps/s", ",.0f"),
        ("x UP", "speed-up vs unified-planning (target >= 100)", ",.0f"),
        ("/frozen", "slowdown vs frozenset (target <= 3)", ".2f"),
    ]
    head = f"{'problem / mix':<42}" + "".join(f"{c:>12}" for c, _, _ in cols)
    print(head)
    print("-" * len(head))
    for r in rows:
        label = f"{r['problem']} / {r['mix']}"
        print(f"{label:<42}" + "".join(f"{r[k]:>12{fmt}}" for _, k, fmt in cols))
    print(
        "\n(x UP: contractsim's speed-up over unified-planning, target >= 100; /frozen: "
        "contractsim's slowdown vs the frozenset checker, target <= 3)\n"
    )
    for r in imports:
        print(
            f"import {r['problem']:<28} contractsim (read, emit, check) "
            f"{r['import-pddl + check ms']:7.1f} ms   PDDLReader {r['PDDLReader ms']:7.1f} ms   "
            f"speed-up {r['speed-up']:.1f}x"
        )


if __name__ == "__main__":
    main()
