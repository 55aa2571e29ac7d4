"""A scripted agent (no LLM) backs up a file and deletes the original, through guarded real tools.

The tools are real functions on a temporary directory; the guard wraps them with
examples/backup/backup.contract. The agent's first move is the careless one — delete the file —
and the guard refuses it before anything is touched, with a structured error whose hint names the
call to make first. The agent does what the hint says (as a model reading ``to_llm()`` would),
follows a second hint (the archive directory must exist), and the task completes. At the end the
guard's tracked state is compared with the disk.

    python examples/agent_loop.py            # the transcript; exit 0 when the task completed
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import contractsim

HERE = Path(__file__).resolve().parent
CONTRACT = HERE / "backup" / "backup.contract"
HINTED_CALL = re.compile(r"(\w+)\(([^)]*)\)")


def file_tools(root: Path) -> dict[str, Callable[..., dict[str, Any]]]:
    """Real file tools on ``root``, taking absolute paths inside it and answering like typical
    agent tools: the payload, or ``{"error": message}``."""

    def real(path: str) -> Path:
        target = (root / path.lstrip("/")).resolve()
        if target != root and root not in target.parents:
            raise ValueError(f"{path} is outside the root")
        return target

    def list_dir(path: str) -> dict[str, Any]:
        if not real(path).is_dir():
            return {"error": f"{path}: not a directory"}
        return {"entries": sorted(p.name for p in real(path).iterdir())}

    def read_file(path: str) -> dict[str, Any]:
        if not real(path).is_file():
            return {"error": f"{path}: no such file"}
        return {"content": real(path).read_text(encoding="utf-8")}

    def make_dir(path: str) -> dict[str, Any]:
        real(path).mkdir(exist_ok=True)
        return {}

    def copy_file(src: str, dst: str) -> dict[str, Any]:
        shutil.copyfile(real(src), real(dst))
        return {}

    def delete_file(path: str) -> dict[str, Any]:
        real(path).unlink()
        return {}

    return {
        "list_dir": list_dir,
        "read_file": read_file,
        "make_dir": make_dir,
        "copy_file": copy_file,
        "delete_file": delete_file,
    }


def scan(root: Path) -> dict[str, Any]:
    """The directory tree as the contract's state: absolute ``dirs`` and ``files``."""
    inside = sorted(root.rglob("*"))
    dirs = ["/"] + ["/" + p.relative_to(root).as_posix() for p in inside if p.is_dir()]
    files = {
        "/" + p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in inside
        if p.is_file()
    }
    return {"dirs": dirs, "files": files}


def hinted_call(hint: str | None) -> tuple[str, dict[str, str]] | None:
    """The call a hint suggests, e.g. ``call make_dir(path=/archive) first``."""
    match = HINTED_CALL.search(hint or "")
    if match is None:
        return None
    args = dict(part.split("=", 1) for part in match.group(2).split(", ") if "=" in part)
    return match.group(1), args


def run_agent(root: Path, say: Callable[[str], None] = print, max_calls: int = 10) -> bool:
    """Back up /data/report.txt into /archive and delete the original. True when done."""
    contract = contractsim.load(CONTRACT)
    guard = contract.guard(state=scan(root), mode="return")
    tools = {name: guard.wrap(name, fn) for name, fn in file_tools(root).items()}
    # the careless first move: the agent goes straight for the delete
    todo: list[tuple[str, dict[str, str]]] = [("delete_file", {"path": "/data/report.txt"})]
    calls = 0
    while todo and calls < max_calls:
        name, args = todo[-1]
        calls += 1
        say(f"agent → {name}({', '.join(f'{k}={v}' for k, v in args.items())})")
        result = tools[name](**args)
        say("       " + result.to_llm().replace("\n", "\n       "))
        if result.ok:
            todo.pop()
            continue
        follow = hinted_call(result.error.hint if result.error else None)
        if follow is None or follow in todo:
            say("agent: no way forward, giving up")
            return False
        say(f"agent: following the hint, first {follow[0]}")
        todo.append(follow)
    done = not todo
    on_disk = contract.simulator().initial_state(scan(root))
    in_sync = guard.state["files"] == on_disk["files"] and guard.state["dirs"] == on_disk["dirs"]
    say(f"task {'complete' if done else 'NOT complete'} after {calls} call(s)")
    say(f"tracked state matches the disk: {'yes' if in_sync else 'NO'}")
    say(f"drift between contract and tools: {len(guard.drift)} call(s)")
    return done and in_sync and not guard.drift


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        (root / "data").mkdir()
        (root / "data" / "report.txt").write_text("Q3 numbers: up 4%\n", encoding="utf-8")
        ok = run_agent(root)
        archived = (root / "archive" / "report.txt").is_file()
        gone = not (root / "data" / "report.txt").exists()
        print(
            f"on disk: /archive/report.txt {'exists' if archived else 'MISSING'}, "
            f"/data/report.txt {'deleted' if gone else 'STILL THERE'}"
        )
        return 0 if ok and archived and gone else 1


if __name__ == "__main__":
    sys.exit(main())
