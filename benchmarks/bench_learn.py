"""Learning curves of ``contractsim learn`` on PDDL domains (issue 17), and its throughput.

For each domain, the imported contract is the *true* model. Random walks of it (20 steps each,
``state_after`` on every step) are the recorded runs; the learner starts from the true contract
with every ``require``, ``should`` and effect removed (the skeleton) and learns from 10, 100 and
1,000 walks, in both modes. Measured against the true model:

* verdict agreement on fresh random plans (the index of the first failing step, or none, is the
  same for both contracts);
* unsafe approvals: steps of those plans the true contract refuses and the learned one allows,
  judged on the true state (SAM's safety property says 0 for ``--safe``);
* precondition and effect precision / recall per action: the learned ``require`` atoms and
  effect statements against the true ones, as written (micro-averaged over the actions);
* learning speed in steps per CPU second (the machine is shared: figures are noisy; CPU time).

Run: python benchmarks/bench_learn.py [--plans 2000] [--counts 10,100,1000] [--domains ...]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import tempfile
import time
from pathlib import Path

import contractsim
from contractsim.api import learn_from_runs, loads
from contractsim.learning import skeleton_of
from contractsim.learning.walks import first_failure, random_plans, random_runs
from contractsim.replay import read_runs

ROOT = Path(__file__).resolve().parents[1]
PDDL = ROOT / "tests" / "data" / "pddl"
DOMAINS = {
    "blocks": ("blocks/domain.pddl", "blocks/probBLOCKS-4-0.pddl"),
    "gripper": ("gripper/domain.pddl", "gripper/prob01.pddl"),
    "logistics": ("logistics00/domain.pddl", "logistics00/probLOGISTICS-4-0.pddl"),
    "depot": ("depot/domain.pddl", "depot/p01.pddl"),
    "childsnack": ("childsnack/domain.pddl", "childsnack/p01.pddl"),
}
WALK = 20


def _clauses(contract: contractsim.Contract) -> dict[str, tuple[set[str], set[str]]]:
    """tool → (require atoms, effect statements), as written."""
    lines = contract.source.splitlines()
    out: dict[str, tuple[set[str], set[str]]] = {}
    for tool in contract.ir.tools:
        reqs: set[str] = set()
        effs: set[str] = set()
        for cond in tool.conditions:
            if cond.strength == "require":
                text = lines[cond.span.line - 1].strip().removeprefix("require ")
                reqs.add(text)
        for stmt in tool.effects:
            for i in range(stmt.span.line - 1, stmt.span.end_line):
                text = lines[i].strip().removeprefix("effect ").strip()
                if re.match(r"^[\w.]+(\.add|\.remove)\(", text):
                    effs.add(text)
        out[tool.name] = (reqs, effs)
    return out


def _pr(learned: set[str], true: set[str]) -> tuple[int, int, int]:
    return len(learned & true), len(learned), len(true)


def _ratio(a: int, b: int) -> str:
    return "  n/a" if b == 0 else f"{a / b:5.2f}"


def run_domain(name: str, counts: list[int], plans_n: int) -> None:
    domain, problem = DOMAINS[name]
    true = contractsim.from_pddl(PDDL / domain, PDDL / problem)
    skeleton = loads(skeleton_of(true), f"{name}.skeleton.contract")
    truth = _clauses(true)
    plans = random_plans(true, plans_n, 10, seed=4242)
    tsim = true.simulator()
    true_first = [first_failure(tsim, p) for p in plans]
    walks = random_runs(true, max(counts), WALK, seed=17)
    with tempfile.TemporaryDirectory() as tmp:
        for n in counts:
            path = Path(tmp) / f"{name}.{n}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in walks[:n]))
            runs = read_runs(path, skeleton.compiled)
            for safe in (False, True):
                t0 = time.process_time()
                result = learn_from_runs(skeleton, runs, safe=safe)
                cpu = time.process_time() - t0
                lsim = result.contract.simulator()
                agree = sum(
                    first_failure(lsim, p) == f for p, f in zip(plans, true_first, strict=True)
                )
                unsafe = 0
                for plan in plans:
                    state = tsim.initial_state()
                    for tool, args in plan:
                        real = tsim.step(state, tool, args)
                        mine = lsim.step(lsim.state_with(dict(state)), tool, args)
                        if real.verdict != "ok":
                            unsafe += mine.verdict == "ok"
                            break
                        state = real.branches[0].state
                learned = _clauses(result.contract)
                pre = [0, 0, 0]
                eff = [0, 0, 0]
                for tool, (treq, teff) in truth.items():
                    lreq, leff = learned.get(tool, (set(), set()))
                    for acc, got in ((pre, _pr(lreq, treq)), (eff, _pr(leff, teff))):
                        for i in range(3):
                            acc[i] += got[i]
                steps = result.learned.steps
                print(
                    f"{name:<11}{n:>6}{'safe' if safe else 'default':>9}{steps:>8}"
                    f"{agree / len(plans):>9.3f}{unsafe:>8}"
                    f"{_ratio(pre[0], pre[1]):>8}{_ratio(pre[0], pre[2]):>8}"
                    f"{_ratio(eff[0], eff[1]):>8}{_ratio(eff[0], eff[2]):>8}"
                    f"{cpu:>8.2f}{steps / cpu if cpu else 0:>10.0f}",
                    flush=True,
                )


def throughput() -> None:
    """10,000 recorded steps of BFCL's file system (skeleton: the shipped contract stripped)."""
    full = contractsim.load(ROOT / "examples" / "gorilla_fs" / "gorilla_fs.contract")
    skeleton = loads(skeleton_of(full), "gorilla.skeleton.contract")
    runs = read_runs(
        ROOT / "tests" / "data" / "bfcl" / "GorillaFileSystem.snapshots.jsonl", skeleton.compiled
    )
    many = (runs * 3)[: 10_000 // 12 + 1]
    t0 = time.process_time()
    result = learn_from_runs(skeleton, many)
    cpu = time.process_time() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"\nthroughput: {result.learned.steps} GorillaFileSystem steps learned in {cpu:.1f} s CPU "
        f"({result.learned.steps / cpu:.0f} steps/s, including the check of the result); "
        f"peak RSS of this process {rss:.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans", type=int, default=2000)
    parser.add_argument("--counts", default="10,100,1000")
    parser.add_argument("--domains", default=",".join(DOMAINS))
    parser.add_argument("--no-throughput", action="store_true")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    print(
        f"{'domain':<11}{'traces':>6}{'mode':>9}{'steps':>8}{'verdict':>9}{'unsafe':>8}"
        f"{'pre P':>8}{'pre R':>8}{'eff P':>8}{'eff R':>8}{'cpu s':>8}{'steps/s':>10}"
    )
    for name in args.domains.split(","):
        run_domain(name, counts, args.plans)
    if not args.no_throughput:
        throughput()


if __name__ == "__main__":
    main()
