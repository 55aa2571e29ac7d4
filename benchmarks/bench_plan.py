"""Planning benchmark: `contractsim plan` on imported PDDL problems beside pyperplan.

For each shipped problem (blocks, gripper, logistics, depot, childsnack) the same PDDL files are
solved in the same run by

* contractsim: the problem imported with ``contractsim.from_pddl`` (as ``import-pddl`` does),
  then ``Simulator.plan`` — A* with h_max (optimal) and ``fast=True`` (greedy, h_FF);
* pyperplan: breadth-first search, A* with h_max, greedy best-first with h_FF.

Reported per run: solved, plan cost (PDDL action count, or total cost), states expanded, CPU
seconds, expansions per CPU second, and the time ratio against pyperplan's A* h_max. CPU time is
used because the machine may be shared; figures are still noisy. No timed assertions.

Run: python benchmarks/bench_plan.py [--max-seconds S] [--only NAME] [--json]
Needs pyperplan (``pip install pyperplan``); without it only contractsim runs, and it says so.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import contractsim  # noqa: E402

# the shared data beside the checkout, else the copies the tests ship
DATA = ROOT.parent / "shared" / "data" / "pddl"
if not (DATA / "blocks").exists():
    DATA = ROOT / "tests" / "data" / "pddl"
CASES = [
    ("blocks", "probBLOCKS-4-0.pddl"),
    ("blocks", "probBLOCKS-8-0.pddl"),
    ("gripper", "prob01.pddl"),
    ("logistics00", "probLOGISTICS-4-0.pddl"),
    ("depot", "p01.pddl"),
    ("childsnack", "p01.pddl"),
]


def run_contractsim(folder: str, problem: str, fast: bool, max_seconds: float) -> dict[str, Any]:
    c = contractsim.from_pddl(DATA / folder / "domain.pddl", DATA / folder / problem)
    sim = c.simulator(now="2024-01-01T00:00:00Z")
    importlib.import_module("contractsim.planning")  # loaded lazily by plan(); not searching
    t = time.process_time()
    r = sim.plan(None, "solved", max_seconds=max_seconds, max_states=10**7, fast=fast)
    cpu = time.process_time() - t
    return {
        "solved": r.found,
        "cost": r.cost,
        "expanded": r.expanded,
        "cpu": cpu,
        "stopped_by": r.stopped_by,
    }


def _pyperplan(args: tuple[str, str, str, str | None], out: Any) -> None:
    from pyperplan import search as S
    from pyperplan.planner import HEURISTICS, _ground, _parse

    folder, problem, search, heuristic = args
    logging.disable(logging.CRITICAL)
    t = time.process_time()
    task = _ground(_parse(str(DATA / folder / "domain.pddl"), str(DATA / folder / problem)))
    expanded = [0]
    original = task.get_successor_states

    def counted(state: Any) -> Any:
        expanded[0] += 1
        return original(state)

    task.get_successor_states = counted  # type: ignore[method-assign]
    if search == "bfs":
        plan = S.breadth_first_search(task)
    elif search == "astar":
        plan = S.astar_search(task, HEURISTICS[heuristic](task))
    else:
        plan = S.greedy_best_first_search(task, HEURISTICS[heuristic](task))
    cpu = time.process_time() - t
    out.put(
        {
            "solved": plan is not None,
            "cost": None if plan is None else float(len(plan)),
            "expanded": expanded[0],
            "cpu": cpu,
        }
    )


def run_pyperplan(
    folder: str, problem: str, search: str, heuristic: str | None, max_seconds: float
) -> dict[str, Any]:
    """In a child process, so that a search over the time limit can be stopped."""
    q: Any = multiprocessing.Queue()
    p = multiprocessing.Process(target=_pyperplan, args=((folder, problem, search, heuristic), q))
    p.daemon = True
    p.start()
    p.join(max_seconds * 3)  # wall clock: the machine is shared
    if p.is_alive():
        p.terminate()
        p.join()
        return {"solved": False, "cost": None, "expanded": None, "cpu": None, "stopped_by": "time"}
    try:
        return dict(q.get(timeout=5))
    except Exception:  # noqa: BLE001 - pyperplan refused the files (e.g. negative preconditions)
        return {
            "solved": False,
            "cost": None,
            "expanded": None,
            "cpu": None,
            "stopped_by": f"pyperplan failed (exit {p.exitcode})",
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-seconds", type=float, default=60.0)
    parser.add_argument("--only", help="run only problems whose folder contains this")
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    try:
        import pyperplan  # noqa: F401

        have_pyperplan = True
    except ImportError:
        have_pyperplan = False
        print("pyperplan is not installed (pip install pyperplan): only contractsim runs")
    rows = []
    for folder, problem in CASES:
        if opts.only and opts.only not in folder:
            continue
        row: dict[str, Any] = {"problem": f"{folder}/{problem}"}
        row["contractsim astar-hmax"] = run_contractsim(folder, problem, False, opts.max_seconds)
        row["contractsim greedy-hff"] = run_contractsim(folder, problem, True, opts.max_seconds)
        if have_pyperplan:
            row["pyperplan bfs"] = run_pyperplan(folder, problem, "bfs", None, opts.max_seconds)
            row["pyperplan astar-hmax"] = run_pyperplan(
                folder, problem, "astar", "hmax", opts.max_seconds
            )
            row["pyperplan gbfs-hff"] = run_pyperplan(
                folder, problem, "gbf", "hff", opts.max_seconds
            )
        rows.append(row)
        if not opts.json:
            print(f"\n{row['problem']}")
            base = row.get("pyperplan astar-hmax", {}).get("cpu")
            for name, r in row.items():
                if name == "problem":
                    continue
                rate = (
                    f"{r['expanded'] / r['cpu']:9.0f}/s"
                    if r.get("cpu") and r.get("expanded")
                    else "        -  "
                )
                ratio = f"×{r['cpu'] / base:.2f}" if base and r.get("cpu") else ""
                cost = "-" if r["cost"] is None else f"{r['cost']:g}"
                cpu = "-" if r.get("cpu") is None else f"{r['cpu']:.2f}s"
                why = r.get("stopped_by") or ""
                print(
                    f"  {name:24} solved={str(r['solved']):5} cost={cost:>4} "
                    f"expanded={r['expanded']!s:>7} cpu={cpu:>8} {rate} {ratio} {why}"
                )
    if opts.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
