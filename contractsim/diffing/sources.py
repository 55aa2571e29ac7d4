"""Where OLD and NEW come from: a file, or ``git:REV:PATH`` read with ``git show`` (no shell)."""

from __future__ import annotations

import re
import shutil
import subprocess

from ..diagnostics import ContractError, Span, error
from ..sources import decode_source, read_source

GIT_PREFIX = "git:"
_REV = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@{}~^-]{0,199}$")
MAX_GIT_BYTES = 16 * 1024 * 1024


def _bad(message: str, where: str, hint: str | None = None) -> ContractError:
    return ContractError([error("E0100", message, Span(file=where), hint=hint)])


def parse_git_spec(spec: str) -> tuple[str, str]:
    """``git:REV:PATH`` → (REV, PATH), validated so that neither can be read as an option or
    escape the repository."""
    body = spec[len(GIT_PREFIX) :]
    rev, sep, path = body.partition(":")
    if not sep or not rev or not path:
        raise _bad(
            f"`{spec}` is not of the form git:REV:PATH",
            spec,
            "e.g. git:HEAD~1:examples/email/email.contract or git:main:contract.contract",
        )
    if not _REV.match(rev) or ".." in rev:
        raise _bad(
            f"`{rev}` is not a revision name diff accepts",
            spec,
            "use a branch, tag, commit hash or an expression like HEAD~1 (letters, digits and "
            "._/@{}~^- only, not starting with -)",
        )
    if (
        path.startswith(("-", "/"))
        or "\x00" in path
        or any(part == ".." for part in path.split("/"))
        or any(ord(ch) < 32 for ch in path)
    ):
        raise _bad(
            f"`{path}` is not a path inside the repository",
            spec,
            "give the path relative to the repository root, without `..`",
        )
    return rev, path


def read_git(spec: str, cwd: str | None = None) -> str:
    """The text of ``PATH`` at ``REV``, read with ``git show REV:PATH``."""
    rev, path = parse_git_spec(spec)
    git = shutil.which("git")
    if git is None:
        raise _bad(
            f"cannot read `{spec}`: git is not installed", spec, "install git, or pass a file"
        )
    try:
        done = subprocess.run(  # noqa: S603 - fixed argv, validated rev and path, no shell
            [git, "show", "--no-textconv", f"{rev}:{path}"],
            cwd=cwd,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _bad(f"cannot run git to read `{spec}`: {exc}", spec) from None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        first = reason[0] if reason else f"git exited with status {done.returncode}"
        hint = "check the revision with `git log --oneline` and the path with `git ls-tree -r REV`"
        if "not a git repository" in first:
            hint = "run contractsim diff inside the repository that holds the contract"
        raise _bad(f"cannot read `{spec}`: {first}", spec, hint)
    if len(done.stdout) > MAX_GIT_BYTES:
        raise _bad(f"`{spec}` is larger than {MAX_GIT_BYTES} bytes", spec)
    return decode_source(done.stdout, spec)


def read_side(spec: str) -> tuple[str, str]:
    """(text, filename) of a diff operand: a path, or ``git:REV:PATH``."""
    if spec.startswith(GIT_PREFIX):
        return read_git(spec), spec
    return read_source(spec), spec


MAX_PLAN_FILES = 50


def example_values(*specs: str) -> list[object]:
    """Argument values from the example plans beside file operands (``DIR/plans/*.yaml``,
    ``*.yml``, ``*.json``; at most 50 files), for the witness search. Unreadable plans are
    skipped: they only suggest candidates."""
    from pathlib import Path

    import yaml

    from .witness import iter_plan_args

    plans: list[object] = []
    seen: set[Path] = set()
    for spec in specs:
        if spec.startswith(GIT_PREFIX):
            continue
        folder = Path(spec).parent / "plans"
        if folder in seen or not folder.is_dir():
            continue
        seen.add(folder)
        files = sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
        for path in files[:MAX_PLAN_FILES]:
            try:
                plans.append(yaml.safe_load(read_source(path)))
            except Exception:  # noqa: BLE001 - a plan that cannot be read suggests nothing
                continue
    return list(iter_plan_args(plans))
