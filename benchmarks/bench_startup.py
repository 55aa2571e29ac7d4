#!/usr/bin/env python3
"""Cold start of every CLI command, against the bare import of contractsim's dependencies.

What it measures
----------------
* **Cold start.** Each command runs in a fresh Python process, as a user or a CI step runs it:
  ``--version``; ``check`` of the file-system example; ``simulate`` of its 2-step plan;
  ``export --to openai``; ``render --format mermaid``; ``replay`` of the 300 recorded
  GorillaFileSystem runs (3,600 calls). The baseline, in the same run, is a process that only
  does ``import pydantic, lark, click, yaml``. The figure is the CPU time of the child process
  (user + system, from ``os.wait4``), which other load on a shared machine disturbs much less
  than wall time; the commands and the baseline are interleaved round by round and the median
  of the rounds is reported, with its ratio to the baseline's median.

  Before the timed rounds every command runs once, so Python's bytecode cache is warm as it is
  after any install; ``PYTHONDONTWRITEBYTECODE`` is removed from the children's environment for
  that reason (``--keep-env`` keeps it).

* **Replay throughput.** In this process: the contract is loaded and the runs read, then
  ``replay_runs`` is timed alone (best of ``--repeat``, CPU time) and reported as steps/s. A
  step is what ``contractsim replay`` does per recorded call: predict it, follow the real
  outcome, count the verdicts. Two corpora: the 300 GorillaFileSystem runs (the target's; they
  carry no ``state_after``, so no effect agreement is computed) and the 300 pantry runs
  (``examples/pantry``), whose every step carries ``state_after``: effect agreement too, which
  observes the step a second time from the real state before it when that differs.

Targets (issue 13): ``--version`` ≤ 1.2× the baseline, ``check`` ≤ 1.5×, ``simulate`` ≤ 1.6×,
replay ≥ 10,000 steps/s.

Usage::

    python benchmarks/bench_startup.py [--rounds 7] [--repeat 3] [--json] [--keep-env]
        [--replay-only]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO_ROOT))

FS = "examples/file_system/file_system.contract"
GORILLA = "examples/gorilla_fs/gorilla_fs.contract"
GORILLA_RUNS = "tests/data/bfcl/GorillaFileSystem.jsonl"
GORILLA_ADAPTER = "examples/gorilla_fs/adapter.py:from_bfcl"
PANTRY = "examples/pantry/pantry.contract"
PANTRY_RUNS = "examples/pantry/traces/recorded.jsonl"

BASELINE = "import pydantic, lark, click, yaml"
CLI = "import sys; from contractsim.cli import main; sys.argv[0] = 'contractsim'; main()"

COMMANDS: list[tuple[str, list[str], float | None]] = [
    ("--version", ["--version"], 1.2),
    ("check", ["check", FS], 1.5),
    (
        "simulate (2 steps)",
        ["simulate", FS, "examples/file_system/plans/fails_read_after_delete.yaml"],
        1.6,
    ),
    ("export --to openai", ["export", FS, "--to", "openai"], None),
    (
        "render --overview --format mermaid",
        ["render", FS, "--overview", "--format", "mermaid"],
        None,
    ),
    ("replay (300 runs)", ["replay", GORILLA, GORILLA_RUNS, "--adapter", GORILLA_ADAPTER], None),
]
REPLAY_TARGET = 10_000


def child_cpu(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process; its output is discarded."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1, 3):  # 1 and 3 are verdicts (the plan fails / may fail)
        raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, wall


def bench_cold_starts(rounds: int, keep_env: bool) -> dict[str, Any]:
    env = dict(os.environ)
    if not keep_env:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    jobs: list[tuple[str, list[str], float | None]] = [
        ("baseline: " + BASELINE, [sys.executable, "-c", BASELINE], None)
    ]
    jobs += [(name, [sys.executable, "-c", CLI, *args], target) for name, args, target in COMMANDS]
    for _, argv, _ in jobs:  # warm the bytecode cache
        child_cpu(argv, env)
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in jobs}
    wall: dict[str, list[float]] = {name: [] for name, _, _ in jobs}
    for _ in range(rounds):
        for name, argv, _ in jobs:
            c, w = child_cpu(argv, env)
            cpu[name].append(c)
            wall[name].append(w)
    base = statistics.median(cpu[jobs[0][0]])
    rows = []
    for name, _, target in jobs:
        med = statistics.median(cpu[name])
        ratio = med / base
        rows.append(
            {
                "command": name,
                "cpu_median_s": med,
                "cpu_min_s": min(cpu[name]),
                "wall_median_s": statistics.median(wall[name]),
                "ratio": ratio,
                "target": target,
                "meets": None if target is None else ratio <= target,
            }
        )
    return {"rounds": rounds, "bytecode_cache": not keep_env, "rows": rows}


def bench_replay(
    repeat: int,
    contract_path: str = GORILLA,
    runs_path: str = GORILLA_RUNS,
    adapter_spec: str | None = GORILLA_ADAPTER,
) -> dict[str, Any]:
    from contractsim.api import load
    from contractsim.replay import load_adapter, read_runs, replay_runs

    t0 = time.process_time()
    contract = load(REPO_ROOT / contract_path)
    contract.compiled  # noqa: B018 - compile before timing
    adapter = None if adapter_spec is None else load_adapter(str(REPO_ROOT / adapter_spec))
    runs = read_runs(str(REPO_ROOT / runs_path), contract.compiled, adapter)
    load_s = time.process_time() - t0
    times = []
    steps = 0
    for _ in range(repeat):
        t0 = time.process_time()
        result = replay_runs(contract, runs)
        times.append(time.process_time() - t0)
        steps = result.steps
    best = min(times)
    return {
        "contract": contract_path,
        "runs": len(runs),
        "steps": steps,
        "effect_steps": result.effects.steps,
        "load_s": load_s,
        "replay_best_s": best,
        "replay_median_s": statistics.median(times),
        "steps_per_s": steps / best,
        "target": REPLAY_TARGET,
        "meets": steps / best >= REPLAY_TARGET,
    }


def print_report(
    cold: dict[str, Any] | None, replay: dict[str, Any], pantry: dict[str, Any]
) -> None:
    if cold is not None:
        print_cold(cold)
        print()
    verdict = "meets" if replay["meets"] else "MISSES"
    print(
        f"replay after loading (CPU, best of runs; a step = predict the call, follow its real "
        f"outcome, count):\n  GorillaFileSystem: {replay['runs']} runs, {replay['steps']:,} "
        f"steps in {replay['replay_best_s']:.3f} s = {replay['steps_per_s']:,.0f} steps/s "
        f"({verdict} the {replay['target']:,} steps/s target; no state_after, so no effect "
        f"agreement); loading took {replay['load_s']:.3f} s"
    )
    print(
        f"  pantry: {pantry['runs']} runs, {pantry['steps']:,} steps in "
        f"{pantry['replay_best_s']:.3f} s = {pantry['steps_per_s']:,.0f} steps/s (effect "
        f"agreement with state_after on {pantry['effect_steps']:,} steps); loading took "
        f"{pantry['load_s']:.3f} s"
    )


def print_cold(cold: dict[str, Any]) -> None:
    cache = "warm bytecode cache" if cold["bytecode_cache"] else "environment as given"
    print(
        f"cold start, CPU seconds (user+sys) of a fresh process, median of {cold['rounds']} "
        f"rounds, {cache}"
    )
    header = f"{'command':<44} {'cpu s':>7} {'wall s':>7} {'ratio':>6}  target"
    print(header)
    print("-" * len(header))
    for r in cold["rows"]:
        target = "" if r["target"] is None else f"≤ {r['target']:.1f}×"
        verdict = "" if r["meets"] is None else ("  meets" if r["meets"] else "  MISSES")
        print(
            f"{r['command']:<44} {r['cpu_median_s']:>7.3f} {r['wall_median_s']:>7.3f} "
            f"{r['ratio']:>5.2f}×  {target}{verdict}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds of every command")
    ap.add_argument("--repeat", type=int, default=3, help="timed replays (best is reported)")
    ap.add_argument("--json", action="store_true", help="print machine-readable JSON only")
    ap.add_argument(
        "--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if it is set"
    )
    ap.add_argument(
        "--replay-only", action="store_true", help="measure replay throughput only (no cold starts)"
    )
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.repeat < 1:
        ap.error("--rounds and --repeat must be at least 1")
    cold = None if args.replay_only else bench_cold_starts(args.rounds, args.keep_env)
    replay = bench_replay(args.repeat)
    pantry = bench_replay(args.repeat, PANTRY, PANTRY_RUNS, None)
    if args.json:
        json.dump(
            {
                "python": sys.version.split()[0],
                "cold": cold,
                "replay": replay,
                "replay_pantry": pantry,
            },
            sys.stdout,
            indent=2,
        )
        print()
    else:
        print_report(cold, replay, pantry)
    return 0


if __name__ == "__main__":
    sys.exit(main())
