"""examples/planner_bfs.py finds a plan, and the simulator agrees that the plan reaches the goal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import contractsim

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "planner_bfs.py"
CONTRACT = ROOT / "examples" / "file_system" / "file_system.contract"


def run_planner(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def test_planner_prints_a_plan_and_exits_0() -> None:
    proc = run_planner()
    assert proc.returncode == 0, proc.stderr
    assert "plan for goal `notes_archived`" in proc.stdout
    assert "delete_file(path='/home/notes.txt')" in proc.stdout


def test_the_plan_found_reaches_the_goal_in_simulation() -> None:
    proc = run_planner("--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["goal"] == "notes_archived"
    steps = found["steps"]
    assert len(steps) == 2  # a copy on the backup volume, then the delete: nothing is shorter

    contract = contractsim.load(CONTRACT)
    sim = contract.simulator(now="2024-05-20T12:00:00Z")
    state = sim.initial_state(found["state"])
    report = sim.run(steps, state, goal=found["goal"])
    assert report.verdict == "ok"
    assert report.goal_results["reached"] is True
    assert report.goal_results["branches_missing"] == 0
    assert report.to_json()["goal"]["reached"] is True
