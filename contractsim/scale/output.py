"""``--output FILE.jsonl`` and ``--resume``: one result line per finished run, and skipping them.

The file starts with a header line (what was run: the contract's SHA-256, the inputs, the
options that change results); then one JSON line per finished run, keyed by its place in the
input (``"key"``). ``--resume`` reads the lines back, checks that the header matches the
command, drops a last line cut short by a kill, and the caller replays only the runs whose key
is missing. Runs that failed (a worker died twice) are not written, so a resume retries them.
"""

from __future__ import annotations

import json
import os
from typing import Any, TextIO


class OutputProblem(ValueError):
    """The output file cannot be written, or does not belong to this command (``--resume``)."""


class ResultFile:
    """An open result file: :attr:`done` holds the lines already there (key → line)."""

    def __init__(self, path: str, header: dict[str, Any], resume: bool) -> None:
        self.path = path
        self.done: dict[tuple[Any, ...], str] = {}
        try:
            if resume and os.path.exists(path):
                self._read_back(header)
                self._file: TextIO = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
            else:
                self._file = open(path, "w", encoding="utf-8", buffering=1)  # noqa: SIM115
                self._file.write(json.dumps(header, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise OutputProblem(f"cannot write {path}: {exc.strerror or exc}") from None

    def _read_back(self, header: dict[str, Any]) -> None:
        with open(self.path, "rb") as handle:
            data = handle.read()
        keep = data.rfind(b"\n") + 1
        if keep < len(data):  # the last line was cut short (the command was killed): drop it
            with open(self.path, "r+b") as handle:
                handle.truncate(keep)
        lines = data[:keep].decode("utf-8", errors="replace").splitlines()
        if not lines:
            with open(self.path, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(header, ensure_ascii=False) + "\n")
            return
        try:
            theirs = json.loads(lines[0])
        except json.JSONDecodeError:
            theirs = None
        if theirs != header:
            differ = (
                "it is not a contractsim result file"
                if not isinstance(theirs, dict) or "contractsim" not in theirs
                else "it was written for another "
                + ", ".join(k for k in header if theirs.get(k) != header[k])
            )
            raise OutputProblem(
                f"cannot resume from {self.path}: {differ}; give another --output, or leave "
                "out --resume to start again"
            )
        for number, text in enumerate(lines[1:], 2):
            try:
                key = tuple(json.loads(text)["key"])
            except (json.JSONDecodeError, KeyError, TypeError):
                raise OutputProblem(
                    f"cannot resume from {self.path}: line {number} is not a result line"
                ) from None
            self.done[key] = text

    def write(self, line: str) -> None:
        """Append one result line."""
        self._file.write(line + "\n")

    def close(self) -> None:
        self._file.close()
