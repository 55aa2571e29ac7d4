"""Record runs of the real ``Pantry`` tool in contractsim's trace format (docs/replay.md).

Each run starts from a random pantry, makes random calls with the kind of arguments agents really
send (numbers as text, booleans, names that are not text, empty values), and records each call's
outcome, error, result and the state after it. The runs are repeatable (a fixed seed)::

    python examples/pantry/record.py            # writes examples/pantry/traces/recorded.jsonl
    python examples/pantry/record.py --runs 500 --seed 7 -o /tmp/more.jsonl
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pantry import Pantry  # noqa: E402

GOOD_NAMES = ["rice", "Rice ", "flour", "  oats", "beans", "tea"]
ODD_NAMES: list[Any] = ["", "  ", 42, None, 1.5]
QUANTITIES: list[Any] = [1, 2, 3, 0, -1, 0.5, 2.5, "2", " 3 ", "two", "", True, False, None, [1]]
UNITS = ["pcs", "pcs", "pcs", "kg", "g"]
BUDGETS: list[Any] = [0, 5, 12.5, 40, 100, -5, "20", True, None, 7.25]
PRICES: list[Any] = [1, 2.5, "3.5", 4, 10, 60, "cheap", True, " 1.25 ", 0]
TAGS: list[Any] = ["dry", "bulk", ["dry", "bulk"], ["tin"], [], "", None, 0, ["dry", 3], ("x",)]
TOOLS = ["add_item", "add_item", "use_item", "use_item", "set_budget", "buy", "tag_item", "report"]


def random_state(rng: random.Random) -> dict[str, Any]:
    items: dict[str, dict[str, Any]] = {}
    for name in rng.sample(["rice", "flour", "oats", "beans", "tea"], rng.randint(0, 3)):
        item: dict[str, Any] = {"qty": rng.choice([1, 2, 3, 1.5]), "unit": rng.choice(UNITS)}
        if rng.random() < 0.3:
            item["tags"] = ["dry"]
        items[name] = item
    shopping = [n for n in ["rice", "flour", "oats", "beans", "tea"] if n not in items]
    shopping = rng.sample(shopping, rng.randint(0, len(shopping)))
    return {"items": items, "budget": rng.choice([0, 10, 40, 12.5]), "shopping": shopping}


def random_args(rng: random.Random, tool: str) -> dict[str, Any]:
    if tool == "report":
        return {}
    if tool == "set_budget":
        return {"budget": rng.choice(BUDGETS)}
    name = rng.choice(GOOD_NAMES) if rng.random() < 0.85 else rng.choice(ODD_NAMES)
    args: dict[str, Any] = {"name": name}
    if tool == "add_item":
        if rng.random() < 0.8:
            args["qty"] = rng.choice(QUANTITIES)
        if rng.random() < 0.5:
            args["unit"] = rng.choice(UNITS)
    elif tool == "use_item":
        if rng.random() < 0.8:
            args["qty"] = rng.choice(QUANTITIES)
    elif tool == "buy":
        args["price"] = rng.choice(PRICES)
    elif tool == "tag_item":
        args["tags"] = rng.choice(TAGS)
    return args


def snapshot(pantry: Pantry) -> dict[str, Any]:
    return copy.deepcopy(
        {"items": pantry.items, "budget": pantry.budget, "shopping": pantry.shopping}
    )


def record_run(rng: random.Random, index: int, steps: int) -> dict[str, Any]:
    state = random_state(rng)
    pantry = Pantry(**copy.deepcopy(state))
    calls = []
    for _ in range(steps):
        tool = rng.choice(TOOLS)
        args = random_args(rng, tool)
        # a tuple is not JSON: the trace says what the tool received, so keep only JSON values
        if any(isinstance(v, tuple) for v in args.values()):
            continue
        step: dict[str, Any] = {"tool": tool, "args": copy.deepcopy(args)}
        try:
            result = getattr(pantry, tool)(**args)
        except Exception as exc:  # noqa: BLE001 - a raised failure is what the trace records
            step.update(outcome="crash", error=f"{type(exc).__name__}: {exc}", result=None)
        else:
            failed = isinstance(result, dict) and "error" in result
            step.update(
                outcome="error" if failed else "ok",
                error=result["error"] if failed else None,
                result=None if failed else result,
            )
        step["state_after"] = snapshot(pantry)
        calls.append(step)
    return {"name": f"pantry run {index}", "state": state, "steps": calls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--seed", type=int, default=2026)
    default_out = Path(__file__).resolve().parent / "traces" / "recorded.jsonl"
    parser.add_argument("-o", "--output", type=Path, default=default_out)
    options = parser.parse_args(argv)
    rng = random.Random(options.seed)
    options.output.parent.mkdir(parents=True, exist_ok=True)
    with options.output.open("w", encoding="utf-8") as out:
        for index in range(1, options.runs + 1):
            out.write(json.dumps(record_run(rng, index, options.steps), sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
