"""``contractsim serve``: a folder of contracts over HTTP (Starlette, run by uvicorn).

Every ``*.contract`` file under the folder is served under its file name without the suffix:

* ``GET /health``: ``{"status": "ok" | "errors", "contracts": N, "errors": [...]}``; a file that no
  longer checks is listed here with its diagnostics (file, line, col, code, message) while the
  last version that checked stays served;
* ``GET /contracts``: name, contract name, version, tools and file of each contract;
* ``GET /contracts/NAME``: the same for one, with the URLs of what follows;
* ``GET /contracts/NAME/openapi.json`` | ``openapi.yaml`` | ``mcp`` | ``openai`` |
  ``jsonschema/TOOL`` | ``card/TOOL`` (text): the exports (``contractsim export``);
* ``GET /contracts/NAME/version``, ``GET /contracts/NAME/changelog``: the version, and when the
  folder is in a git repository, what changed between the committed versions of the file
  (``contractsim diff`` between consecutive commits, newest first; the working copy counts as a
  version when it differs from the last commit);
* ``POST /contracts/NAME/simulate``: a plan (JSON or YAML, as ``contractsim simulate`` reads it)
  in, the report of ``simulate --format json`` out; 400 with the diagnostics for a bad plan,
  413 for a body over the size limit, 408 when the body is not received in time, 503 when the
  simulation runs out of time or every simulation slot is busy for that long.

Files are polled for changes (their modification time and size) every ``poll_seconds``.
The stages are given as functions (``load_text``, ``diff``) so this module stays below the
façade in the layer table; ``contractsim serve`` passes :func:`contractsim.loads` and
:func:`contractsim.diff`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import yaml
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..diagnostics import ContractError, Diagnostic, suggestion_hint

if TYPE_CHECKING:
    from ..api import Contract

log = logging.getLogger("contractsim.serve")

LoadText = Callable[[str, str], "Contract"]
"""``(text, filename) -> Contract``, raising :class:`ContractError` (``contractsim.loads``)."""
Diff = Callable[["Contract", "Contract"], Any]
"""``(old, new) -> report`` with ``to_json()`` (``contractsim.diff`` without witnesses)."""


@dataclass
class Entry:
    """One contract file: the last version that checked, and the current problem if any."""

    name: str
    path: Path
    stamp: tuple[int, int] = (0, 0)
    contract: Contract | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    changelog: tuple[Any, dict[str, Any]] | None = None  # (key, answer)


@dataclass
class Limits:
    """Bounds on ``POST /simulate``: body size (bytes), time to receive it, time to simulate,
    and how many simulations run at once."""

    max_body: int = 1_000_000
    body_seconds: float = 10.0
    simulate_seconds: float = 10.0
    max_states: int = 100_000
    concurrent: int = 4


class ContractFolder:
    """The contracts of a folder, reloaded when a file changes (call :meth:`refresh`)."""

    def __init__(self, directory: str | os.PathLike[str], load_text: LoadText, diff: Diff) -> None:
        self.directory = Path(directory)
        self.load_text = load_text
        self.diff = diff
        self.entries: dict[str, Entry] = {}
        self.problems: list[dict[str, Any]] = []  # folder-level: duplicate names
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Load new and changed files; drop deleted ones."""
        with self._lock:
            found: dict[str, Path] = {}
            problems: list[dict[str, Any]] = []
            for path in sorted(self.directory.rglob("*.contract")):
                if any(part.startswith(".") for part in path.relative_to(self.directory).parts):
                    continue
                if path.stem in found:
                    problems.append(
                        {
                            "file": str(path),
                            "message": f"another file is served as `{path.stem}` already "
                            f"({found[path.stem]}); this one is not served",
                        }
                    )
                    continue
                found[path.stem] = path
            entries: dict[str, Entry] = {}
            for name, path in found.items():
                entry = self.entries.get(name)
                if entry is None or entry.path != path:
                    entry = Entry(name, path)
                try:
                    info = path.stat()
                except OSError:
                    continue
                stamp = (info.st_mtime_ns, info.st_size)
                if stamp != entry.stamp:
                    entry.stamp = stamp
                    self._load(entry)
                entries[name] = entry
            # replaced whole: requests read the dict from other threads while this runs
            self.entries = entries
            self.problems = problems

    def _load(self, entry: Entry) -> None:
        try:
            text = entry.path.read_text(encoding="utf-8")
            entry.contract = self.load_text(text, str(entry.path))
            entry.errors = []
            entry.changelog = None
        except ContractError as exc:
            entry.errors = [_diagnostic_json(d) for d in exc.diagnostics if d.severity == "error"]
        except (OSError, UnicodeDecodeError) as exc:
            entry.errors = [{"file": str(entry.path), "message": f"cannot read the file: {exc}"}]

    def health(self) -> dict[str, Any]:
        """The ``/health`` answer."""
        errors = [
            {
                "name": e.name,
                "file": str(e.path),
                "served": e.contract is not None,
                "diagnostics": e.errors,
            }
            for e in self.entries.values()
            if e.errors
        ]
        errors += [{"diagnostics": [p]} for p in self.problems]
        return {
            "status": "errors" if errors else "ok",
            "contracts": sum(1 for e in self.entries.values() if e.contract is not None),
            "errors": errors,
        }

    def changelog(self, entry: Entry) -> dict[str, Any]:
        """The version history of ``entry``'s file from git, each step a diff report."""
        assert entry.contract is not None
        versions = _git_versions(entry.path)
        key = (entry.stamp, tuple(commit for commit, _, _ in versions))
        if entry.changelog is not None and entry.changelog[0] == key:
            return entry.changelog[1]
        answer: dict[str, Any] = {"name": entry.name, "version": entry.contract.version}
        if not versions and not _in_git(entry.path):
            answer["history"] = None
            answer["note"] = "the folder is not a git repository: only the current version is known"
        else:
            history: list[dict[str, Any]] = []
            loaded: list[tuple[str, str | None, Contract | None]] = []
            c: Contract | None
            current = entry.path.read_text(encoding="utf-8")
            if not versions or versions[0][2] != current:
                loaded.append(("working copy", None, entry.contract))
            for commit, date, text in versions:
                try:
                    c = self.load_text(text, f"git:{commit[:12]}:{entry.path.name}")
                except ContractError:
                    c = None
                loaded.append((commit, date, c))
            for (rev, when, new), (_, _, old) in zip(loaded, [*loaded[1:], ("", None, None)]):
                item: dict[str, Any] = {"commit": rev, "date": when}
                if new is None:
                    item["error"] = "this version does not check"
                else:
                    item["version"] = new.version
                    if old is not None:
                        item["diff"] = self.diff(old, new).to_json()
                history.append(item)
            answer["history"] = history
        entry.changelog = (key, answer)
        return answer


def create_app(
    directory: str | os.PathLike[str],
    load_text: LoadText,
    diff: Diff,
    *,
    poll_seconds: float = 1.0,
    limits: Limits | None = None,
) -> Starlette:
    """The Starlette application serving ``directory`` (see the module docstring)."""
    folder = ContractFolder(directory, load_text, diff)
    folder.refresh()
    bounds = limits or Limits()
    slots = anyio.CapacityLimiter(bounds.concurrent)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:

            async def poll() -> None:
                while True:
                    await anyio.sleep(poll_seconds)
                    try:
                        await anyio.to_thread.run_sync(folder.refresh)
                    except Exception:  # noqa: BLE001 - polling goes on
                        log.exception("reloading %s failed", folder.directory)

            group.start_soon(poll)
            yield
            group.cancel_scope.cancel()

    def entry_of(request: Request) -> Entry:
        name = request.path_params["name"]
        entry = folder.entries.get(name)
        if entry is None or entry.contract is None:
            hint = suggestion_hint(
                name, [n for n, e in folder.entries.items() if e.contract], "contract"
            )
            raise _NotFound(f"no contract `{name}` is served", hint)
        return entry

    def tool_of(contract: Contract, request: Request) -> str:
        tool = request.path_params["tool"]
        if tool not in contract.tools:
            raise _NotFound(
                f"contract `{contract.name}` declares no tool `{tool}`",
                suggestion_hint(tool, contract.tools, "tool"),
            )
        return str(tool)

    def summary(entry: Entry) -> dict[str, Any]:
        c = entry.contract
        assert c is not None
        base = f"/contracts/{entry.name}"
        return {
            "name": entry.name,
            "contract": c.name,
            "version": c.version,
            "file": str(entry.path.relative_to(folder.directory)),
            "tools": c.tools,
            "stale": bool(entry.errors),
            "links": {
                "openapi": f"{base}/openapi.json",
                "mcp": f"{base}/mcp",
                "openai": f"{base}/openai",
                "jsonschema": [f"{base}/jsonschema/{t}" for t in c.tools],
                "card": [f"{base}/card/{t}" for t in c.tools],
                "changelog": f"{base}/changelog",
                "simulate": f"{base}/simulate",
            },
        }

    async def health(request: Request) -> Response:
        return JSONResponse(folder.health())

    async def contracts(request: Request) -> Response:
        return JSONResponse([summary(e) for e in folder.entries.values() if e.contract is not None])

    async def one(request: Request) -> Response:
        return JSONResponse(summary(entry_of(request)))

    async def export(request: Request) -> Response:
        entry = entry_of(request)
        assert entry.contract is not None
        what = request.path_params["what"]
        if what == "openapi.json":
            return JSONResponse(entry.contract.export("openapi"))
        if what == "openapi.yaml":
            text = yaml.safe_dump(
                entry.contract.export("openapi"), sort_keys=False, allow_unicode=True
            )
            return PlainTextResponse(text, media_type="application/yaml")
        if what in ("mcp", "openai"):
            try:
                return JSONResponse(entry.contract.export(what))
            except ValueError as exc:  # a tool name the target cannot take
                return _problem(422, "EXPORT", str(exc))
        if what == "version":
            return JSONResponse({"name": entry.name, "version": entry.contract.version})
        if what == "changelog":
            return JSONResponse(await anyio.to_thread.run_sync(folder.changelog, entry))
        raise _NotFound(
            f"no export `{what}`",
            "one of: openapi.json, openapi.yaml, mcp, openai, version, changelog, "
            "jsonschema/TOOL, card/TOOL, simulate (POST)",
        )

    async def jsonschema(request: Request) -> Response:
        entry = entry_of(request)
        assert entry.contract is not None
        return JSONResponse(entry.contract.export("jsonschema", tool_of(entry.contract, request)))

    async def card(request: Request) -> Response:
        entry = entry_of(request)
        assert entry.contract is not None
        return PlainTextResponse(entry.contract.card(tool_of(entry.contract, request)) + "\n")

    async def simulate(request: Request) -> Response:
        entry = entry_of(request)
        contract = entry.contract
        assert contract is not None
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > bounds.max_body:
            return _too_large(bounds)
        body = bytearray()
        try:
            with anyio.fail_after(bounds.body_seconds):
                async for chunk in request.stream():
                    body += chunk
                    if len(body) > bounds.max_body:
                        return _too_large(bounds)
        except TimeoutError:
            return _problem(
                408, "TIMEOUT", f"the plan was not received within {bounds.body_seconds:g} s"
            )
        except ClientDisconnect:
            return _problem(400, "DISCONNECTED", "the client went away")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return _problem(400, "BAD_PLAN", "the plan is not UTF-8 text")
        now = request.query_params.get("now")
        try:
            with anyio.fail_after(bounds.simulate_seconds + 1):
                report = await anyio.to_thread.run_sync(
                    _simulate, contract, text, now, bounds, abandon_on_cancel=True, limiter=slots
                )
        except TimeoutError:
            return _problem(
                503,
                "BUSY",
                f"the simulation did not finish within {bounds.simulate_seconds:g} s",
                "try a shorter plan, or later",
            )
        except ContractError as exc:
            return JSONResponse(
                {
                    "error": "BAD_PLAN",
                    "message": "the plan does not fit the contract",
                    "diagnostics": [_diagnostic_json(d) for d in exc.diagnostics],
                },
                status_code=400,
            )
        return JSONResponse(report)

    async def not_found(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, _NotFound)
        return _problem(404, "NOT_FOUND", exc.message, exc.hint)

    routes = [
        Route("/health", health),
        Route("/contracts", contracts),
        Route("/contracts/{name}", one),
        Route("/contracts/{name}/simulate", simulate, methods=["POST"]),
        Route("/contracts/{name}/jsonschema/{tool}", jsonschema),
        Route("/contracts/{name}/card/{tool}", card),
        Route("/contracts/{name}/{what}", export),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={_NotFound: not_found})
    app.state.folder = folder
    return app


class _NotFound(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def _simulate(contract: Contract, text: str, now: str | None, bounds: Limits) -> dict[str, Any]:
    """The JSON report of ``contractsim simulate --format json`` for a plan's text."""
    from ..diagnostics import Span, error
    from ..simulator.formats import parse_plan
    from ..simulator.inputs import prepare_plan

    plan = parse_plan(text, "<request body>")
    run = prepare_plan(contract.compiled, plan, "<request body>", now)
    goal = run.plan.goal
    if goal is not None and goal not in contract.compiled.goals:
        raise ContractError(
            [
                error(
                    "E0703",
                    f"the contract declares no goal `{goal}`",
                    Span(file="<request body>"),
                    hint=suggestion_hint(goal, contract.compiled.goals, "goal"),
                )
            ]
        )
    sim = contract.simulator(now=run.now)
    report = sim.run(
        run.calls,
        sim.state_with(run.state_overrides),
        goal=goal,
        max_states=bounds.max_states,
        max_seconds=bounds.simulate_seconds,
    )
    data: dict[str, Any] = report.to_json()
    return data


def _problem(status: int, code: str, message: str, hint: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": code, "message": message}
    if hint:
        body["hint"] = hint
    return JSONResponse(body, status_code=status)


def _too_large(bounds: Limits) -> JSONResponse:
    return _problem(
        413, "TOO_LARGE", f"the plan is larger than {bounds.max_body} bytes", "send a shorter plan"
    )


def _diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = d.to_json()
    return out


def _git(path: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _in_git(path: Path) -> bool:
    return _git(path, "rev-parse", "--is-inside-work-tree") is not None


def _git_versions(path: Path, limit: int = 50) -> list[tuple[str, str, str]]:
    """``(commit, date, text)`` of the file's committed versions, newest first."""
    out = _git(path, "log", f"-{limit}", "--format=%H %cI", "--", path.name)
    if not out:
        return []
    versions = []
    for line in out.splitlines():
        commit, _, date = line.partition(" ")
        text = _git(path, "show", f"{commit}:./{path.name}")
        if text is not None:
            versions.append((commit, date, text))
    return versions
