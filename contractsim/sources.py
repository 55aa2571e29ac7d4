"""Reading input files: contracts, plans, state files, traces and PDDL files.

Every way a path can be unreadable (missing, a directory, a FIFO, socket or device, a symbolic
link loop, unreadable, too large, not UTF-8) is a located diagnostic with the caller's code,
never an exception or a hang. The lowest layer besides diagnostics: every stage that reads a
file imports it from here.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .diagnostics import ContractError, Span, article, error

__all__ = [
    "MAX_SOURCE_BYTES",
    "NotARegularFile",
    "decode_source",
    "path_problem",
    "read_bounded",
    "read_input",
    "read_source",
]


# a contract is parsed into a positioned tree: ~450 MB of memory and ~12 s per MiB of source
MAX_SOURCE_BYTES = 4 * 1024 * 1024


def read_source(path: str | os.PathLike[str]) -> str:
    """Read a text input, turning every way it can be unreadable into a diagnostic."""
    where = Span(file=str(path))
    unreadable = path_problem(Path(path), "")
    if unreadable is not None:
        message, hint = unreadable
        if message.endswith("is a directory, not a file"):
            hint = "pass the .contract file inside it"
        raise ContractError([error("E0100", message, where, hint=hint)])
    try:
        data = read_bounded(Path(path), MAX_SOURCE_BYTES)
        if data is None:
            raise ContractError(
                [
                    error(
                        "E0106",
                        f"{path} is larger than {MAX_SOURCE_BYTES:,} bytes",
                        where,
                        hint="split the contract into smaller files",
                    )
                ]
            )
    except NotARegularFile as exc:
        raise ContractError(
            [error("E0100", f"{path} is {exc}, not a regular file", where)]
        ) from None
    except OSError as exc:
        raise ContractError(
            [error("E0100", f"cannot read {path}: {exc.strerror or exc}", where)]
        ) from None
    return decode_source(data, str(path))


class NotARegularFile(OSError):
    """An input path that names a FIFO, a socket or a device: reading one can wait forever
    (a FIFO nobody writes to) or never end."""


def _file_kind(mode: int) -> str | None:
    """What a file that is not a regular file is (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def path_problem(path: Path, what: str) -> tuple[str, str | None] | None:
    """Why ``path`` cannot be read as a ``what`` file (message, hint), or None when it is a
    regular file. A symlink loop or a link to nothing is said as such, not as a missing file."""
    name = str(path)
    file = f"{what} file" if what else "file"
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{name} is a symbolic link loop", "point the link at a file"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            if path.is_symlink():
                return (
                    f"{name} is a symbolic link to {os.readlink(path)}, which does not exist",
                    "point the link at a file",
                )
            return f"no such {file}: {name}", "check the path and the current directory"
        if exc.errno == errno.ENAMETOOLONG:
            return f"the path is too long: {name[:80]}…", None
        return f"cannot read {name}: {exc.strerror or exc}", None
    kind = _file_kind(mode)
    if kind is None:
        return None
    if kind == "a directory":
        return f"{name} is a directory, not {article(file)}", None
    regular = f"{what} file" if what else "regular file"
    return f"{name} is {kind}, not {article(regular)}", f"pass {article(file)} saved on disk"


def read_bounded(path: Path, limit: int) -> bytes | None:
    """At most ``limit`` bytes of a file, or None when it has more. Reads by size, never by the
    size the file claims (``/dev/zero`` claims 0 and never ends). Raises
    :class:`NotARegularFile` for a FIFO, socket or device: it is opened without waiting for a
    writer and looked at before anything is read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb", closefd=True) as f:
        kind = _file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotARegularFile(kind)
        data = f.read(limit + 1)
    return None if len(data) > limit else data


def read_input(path: str | os.PathLike[str], what: str, code: str, limit: int) -> bytes:
    """The bytes of an input file (a plan, a trace, a PDDL file …): a missing path, a directory,
    a FIFO, socket or device, a symlink loop, an unreadable or too large file is a ``code``
    diagnostic, never an exception."""
    p = Path(path)
    name = str(path)

    def problem(message: str, hint: str | None = None) -> ContractError:
        return ContractError([error(code, message, Span(file=name, end_col=2), hint=hint)])

    unreadable = path_problem(p, what)
    if unreadable is not None:
        raise problem(*unreadable)
    try:
        data = read_bounded(p, limit)
    except NotARegularFile as exc:
        raise problem(f"{name} is {exc}, not {article(what + ' file')}") from None
    except OSError as exc:
        raise problem(f"cannot read {name}: {exc.strerror or exc}") from None
    if data is None:
        raise problem(f"{name} is larger than {limit:,} bytes")
    return data


def decode_source(data: bytes, filename: str) -> str:
    if b"\0" in data[:8192]:
        raise ContractError(
            [
                error(
                    "E0100",
                    f"{filename} is a binary file, not a contract",
                    Span(file=filename),
                    hint="contracts are UTF-8 text files",
                )
            ]
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ContractError(
            [
                error(
                    "E0100",
                    f"{filename} is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                    Span(file=filename, line=line, col=col, end_line=line, end_col=col + 1),
                    hint="save the file as UTF-8",
                )
            ]
        ) from None
    return text.removeprefix("\ufeff")
