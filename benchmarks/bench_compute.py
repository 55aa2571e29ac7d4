"""``first(…)`` and comprehensions against the index quantifiers contract authors wrote before
them; prints ratios measured in the same run (CPU time, best of ``--repeat``).

The peer is the same question asked without the new forms: "the position of the first name equal
to ``n``" as the ``count`` of positions with no match up to them (an index quantifier inside a
quantifier, O(n²)), and "how many names end with ``ext``" as a ``count`` quantifier rather than
the length of a list comprehension. Each question is asked by simulating one call, so parsing
and compiling are left out; both forms run the same generated code and step budget.

Run: python benchmarks/bench_compute.py [--items N] [--calls N] [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from contractsim import loads  # noqa: E402

CONTRACT = """contract bench version "1.0.0"
state {
  names: list[str] = []
  at: int | null = null
  hits: int = 0
}
tool find_first(n: str) {
  effect { at = first(i for i, x in enumerate(names) if x == n) }
}
tool find_index(n: str) {
  effect { at = count(not any(names[k] == n for k in range(j + 1)) for j in range(len(names))) }
}
tool select_new(ext: str) {
  effect { hits = len([x for x in names if endswith(x, ext)]) }
}
tool select_old(ext: str) {
  effect { hits = count(endswith(x, ext) for x in names) }
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    names = [f"f{i}.{'txt' if i % 3 else 'md'}" for i in range(a.items)]
    target = names[a.items * 2 // 3]
    sim = loads(CONTRACT).simulator(now="2024-01-01T00:00:00Z")
    state = sim.initial_state({"names": names})
    results: dict[str, float] = {}
    answers: dict[str, object] = {}
    for tool, args in [
        ("find_first", {"n": target}),
        ("find_index", {"n": target}),
        ("select_new", {"ext": ".md"}),
        ("select_old", {"ext": ".md"}),
    ]:
        step = sim.step(state, tool, args)
        assert step.verdict == "ok", (tool, step.verdict)
        (branch,) = step.branches
        answers[tool] = (branch.state["at"], branch.state["hits"])
        best = float("inf")
        for _ in range(a.repeat):
            start = time.process_time()
            for _ in range(a.calls):
                sim.step(state, tool, args)
            best = min(best, (time.process_time() - start) / a.calls)
        results[f"{tool} s/call"] = best
    assert answers["find_first"] == answers["find_index"], answers  # the same position
    assert answers["select_new"] == answers["select_old"], answers  # the same count
    results["first vs index quantifier: speed-up"] = (
        results["find_index s/call"] / results["find_first s/call"]
    )
    results["list comprehension vs count: ratio"] = (
        results["select_new s/call"] / results["select_old s/call"]
    )
    if a.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{a.items} names, {a.calls} calls a run, best of {a.repeat} (CPU time, shared machine)")
    for key, value in results.items():
        print(f"{key:<45} {value:>14,.6f}")


if __name__ == "__main__":
    main()
