"""The runtime guard's cost per call, against the raw function and pydantic's ``validate_call``.

``validate_call`` is the closest peer: it validates arguments against type hints and nothing
else. The guard validates arguments too, and also checks protocol machines and preconditions
against its tracked state, classifies the real result and applies the outcome's effects.

The tool is ``read_file`` of examples/backup/backup.contract on a state of ``--files`` files (the
contract's preconditions look files up in that map; ``delete_file`` counts copies over it).

Run: python benchmarks/bench_guard.py [--calls N] [--files N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import validate_call

import contractsim

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "examples" / "backup" / "backup.contract"


def read_file(path: str) -> dict[str, Any]:
    return {"content": "x"}


def per_call(fn: Callable[[str], Any], paths: list[str]) -> float:
    """Seconds per call, best of three rounds."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for p in paths:
            fn(p)
        best = min(best, (time.perf_counter() - start) / len(paths))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--files", type=int, default=200)
    opts = parser.parse_args()
    files = {f"/data/f{i}.txt": f"content {i % 50}" for i in range(opts.files)}
    paths = [f"/data/f{i % opts.files}.txt" for i in range(opts.calls)]
    contract = contractsim.load(CONTRACT)
    state = {"dirs": ["/", "/data"], "files": files}
    guarded = contract.guard(state=state).wrap("read_file", read_file)
    returning = contract.guard(state=state, mode="return").wrap("read_file", read_file)
    validated = validate_call(read_file)
    rows = [
        ("raw function", per_call(read_file, paths)),
        ("pydantic validate_call", per_call(validated, paths)),
        ("contractsim guard (raise mode)", per_call(guarded, paths)),
        ("contractsim guard (return mode)", per_call(returning, paths)),
    ]
    peer = rows[1][1]
    print(f"read_file on a state of {opts.files} files, {opts.calls} calls, best of 3")
    print(f"{'':34}{'us/call':>10}{'calls/s':>12}{'x validate_call':>17}")
    for name, seconds in rows:
        print(f"{name:34}{seconds * 1e6:>10.1f}{1 / seconds:>12,.0f}{seconds / peer:>17.1f}")


if __name__ == "__main__":
    main()
