"""Adapter: BFCL's GorillaFileSystem trace records → contractsim runs.

``contractsim replay examples/gorilla_fs/gorilla_fs.contract TRACES \\
    --adapter examples/gorilla_fs/adapter.py:from_bfcl``

A BFCL record (one line of the JSON Lines file) is::

    {"env": "GorillaFileSystem", "config_id": ..., "initial_config": {"root": {NAME: DIR}},
     "seed": ..., "index": ..., "steps": [{"tool", "args", "outcome", "error", "result",
     ["truncated"]}]}

where a directory is ``{"type": "directory", "contents": {NAME: ITEM}}`` and a file is
``{"type": "file", "content": "..."}``. The tool keeps only the first folder under ``"root"``
(the others are ignored) and starts in it. The contract names every entry by its absolute path:
the root folder ``NAME`` is ``/NAME``, its entry ``x`` is ``/NAME/x``, and so on.

Only the initial tree is converted; calls, outcomes and messages are copied as they are.
"""

from __future__ import annotations

from typing import Any


def from_bfcl(record: dict[str, Any]) -> dict[str, Any]:
    """One BFCL GorillaFileSystem record as a contractsim run."""
    root_map = record["initial_config"]["root"]
    if not isinstance(root_map, dict) or not root_map:
        raise ValueError("initial_config.root must hold one folder")
    name, top = next(iter(root_map.items()))
    root = "/" + name
    dirs: list[str] = [root]
    files: dict[str, str] = {}
    _walk(root, top, dirs, files)
    steps = [
        {
            "tool": s["tool"],
            "args": s.get("args") or {},
            "outcome": s["outcome"],
            "error": s.get("error"),
            # a result cut at 500 characters is not the real value: leave it out
            "result": None if s.get("truncated") else s.get("result"),
        }
        for s in record["steps"]
    ]
    label = f"{record.get('config_id', 'run')}#{record.get('index', '?')}"
    return {
        "name": label,
        "state": {"root": root, "cwd": root, "dirs": sorted(dirs), "files": files},
        "steps": steps,
    }


def _walk(path: str, item: dict[str, Any], dirs: list[str], files: dict[str, str]) -> None:
    """Collect the directories and files below the directory ``item`` found at ``path``."""
    for child, sub in (item.get("contents") or {}).items():
        child_path = f"{path}/{child}"
        if sub.get("type") == "directory":
            dirs.append(child_path)
            _walk(child_path, sub, dirs, files)
        else:
            files[child_path] = str(sub.get("content", ""))
