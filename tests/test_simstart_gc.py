"""A single-plan ``simulate`` pauses the cyclic garbage collector while it loads the simulator
and the contract, then freezes what it loaded (session 6 round 3, branch s6c-start): the
collector is on again for the simulation itself, a caller that switched it off keeps it off,
and the report is the same either way."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from contractsim.cli import main

ROOT = Path(__file__).resolve().parent.parent
FS = ROOT / "examples" / "file_system" / "file_system.contract"
PLAN = ROOT / "examples" / "file_system" / "plans" / "fails_read_after_delete.yaml"
CLI = "import sys; from contractsim.cli import main; sys.argv[0] = 'contractsim'; main()"


def test_a_cold_simulate_runs_with_the_collector_on_and_the_load_frozen() -> None:
    """In a fresh process: the collector is enabled when the command ends, and the objects of
    the load (modules, record classes, compiled code) were frozen out of later collections."""
    code = (
        "import atexit, gc, json; atexit.register(lambda: print(json.dumps("
        "[gc.isenabled(), gc.get_freeze_count() > 10000]))); " + CLI
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "simulate", str(FS), str(PLAN)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr[-500:]  # the plan fails: exit 1 as before
    assert json.loads(proc.stdout.rstrip().splitlines()[-1]) == [True, True]


def test_a_caller_with_the_collector_off_keeps_it_off_and_gets_the_same_report() -> None:
    runner = CliRunner()
    args = ["simulate", str(FS), str(PLAN), "--format", "json"]
    enabled = runner.invoke(main, args)
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    gc.disable()
    try:
        disabled = runner.invoke(main, args)
        assert not gc.isenabled()
        assert gc.get_freeze_count() == frozen  # nothing frozen when the caller paused it
    finally:
        gc.enable()
    assert enabled.exit_code == disabled.exit_code == 1
    assert enabled.output == disabled.output
    assert json.loads(enabled.output)["verdict"] == "fails"


def test_a_cold_simulate_without_a_goal_does_not_import_the_goal_module() -> None:
    """``simulator.goals`` (goal explanations) is imported when a goal is simulated only."""
    code = (
        "import atexit, sys; atexit.register(lambda: print("
        "'contractsim.simulator.goals' in sys.modules)); " + CLI
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "simulate", str(FS), str(PLAN)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.stdout.rstrip().splitlines()[-1] == "False", proc.stderr[-500:]


def test_format_patterns_are_compiled_on_first_use_and_check_as_before() -> None:
    """compiler.formats compiles its four patterns the first time a format is checked: a cold
    ``simulate`` of a plan whose contract checks no format compiles none of them."""
    code = (
        "import atexit; from contractsim.compiler import formats as f; atexit.register(lambda: "
        "print([g.cache_info().currsize for g in (f._email, f._datetime, f._uri, f._uuid)])); "
        + CLI
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "simulate", str(FS), str(PLAN)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.stdout.rstrip().splitlines()[-1] == "[0, 0, 0, 0]", proc.stderr[-500:]
    from contractsim.compiler.formats import FORMAT_CHECKS, FORMAT_EXAMPLES

    for name, example in FORMAT_EXAMPLES.items():
        assert FORMAT_CHECKS[name](example), name
    bad = {
        "uuid": "123e4567-e89b-12d3-a456-42661417400",
        "uuid4": "123e4567-e89b-12d3-a456-426614174000",  # version 1
        "date-time": "2024-05-20 14:30",
        "email": "ada@example",
        "uri": "no scheme",
    }
    for name, text in bad.items():
        assert not FORMAT_CHECKS[name](text), name
    assert FORMAT_CHECKS["date-time"]("2024-05-20t14:30:00z")
    assert FORMAT_CHECKS["uri"]("mailto:ada@example.com")
