"""examples/agent_loop.py: the guard refuses the careless delete, the agent follows two hints, the
task completes on a real temporary directory, and the tracked state matches the disk."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "agent_loop.py"


def test_agent_loop_completes_the_backup_by_following_the_hints() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    calls = [line for line in lines if line.startswith("agent → ")]
    assert calls == [
        "agent → delete_file(path=/data/report.txt)",
        "agent → copy_file(src=/data/report.txt, dst=/archive/report.txt)",
        "agent → make_dir(path=/archive)",
        "agent → copy_file(src=/data/report.txt, dst=/archive/report.txt)",
        "agent → delete_file(path=/data/report.txt)",
    ]
    refusals = [line.strip() for line in lines if "was refused" in line]
    assert [r.split(": ")[1] for r in refusals] == ["NO_BACKUP", "PARENT_MISSING"]
    assert (
        "       Fix: call copy_file(src=/data/report.txt, dst=/archive/report.txt) first" in lines
    )
    assert "       Fix: call make_dir(path=/archive) first" in lines
    assert lines[-4:] == [
        "task complete after 5 call(s)",
        "tracked state matches the disk: yes",
        "drift between contract and tools: 0 call(s)",
        "on disk: /archive/report.txt exists, /data/report.txt deleted",
    ]
