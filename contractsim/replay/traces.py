"""Trace files: recorded runs in contractsim's own format, or in any format through an adapter.

A trace file is JSON Lines (one run per line) or a JSON/YAML document holding a list of runs (or
one run). A run::

    {"name": "optional id", "state": {...initial-state overrides...}, "now": "RFC 3339",
     "steps": [{"tool": "cd", "args": {...}, "outcome": "ok" | "error" | "crash",
                "error": "message or null", "result": <the returned JSON value or null>}]}

An adapter (``path/to/file.py:func`` or ``module:func``) turns one foreign record (one parsed
JSON line, or one item of a document's list) into such a run. Every problem is a diagnostic with
the file, the line of the run, a code (E0901–E0912) and a hint.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..compiler.compile import CompiledContract
from ..compiler.foreign import contract_value
from ..compiler.values import json_ready, thaw
from ..diagnostics import ContractError, Diagnostic, Span, article, did_you_mean, error
from ..simulator.formats import item_lines, parse_data, parse_now
from ..simulator.json_maps import JsonMaps, KeyProblem, entries_as_dicts, entries_for_keys
from ..simulator.observe import STATUSES
from ..simulator.values import validate_state_overrides
from ..sources import path_problem, read_input

MAX_TRACE_BYTES = 512 * 1024 * 1024
MAX_BAD_RUNS = 5
"""Reading stops after this many runs with problems (one mistake often repeats in every run)."""
OUTCOMES = STATUSES
RUN_KEYS = ("name", "state", "now", "steps", "description")
STEP_KEYS = (
    "tool",
    "args",
    "outcome",
    "error",
    "result",
    "truncated",
    "comment",
    "state_after",
)

Adapter = Callable[[Any], Any]


@dataclass(frozen=True)
class Step:
    """One recorded call and what really happened."""

    tool: str
    args: dict[str, Any]
    outcome: str
    """``ok``, ``error`` (the tool returned a failure) or ``crash`` (the tool raised)."""
    error: str | None = None
    result: Any = None
    """The returned value; None when unknown (also when the record marks it truncated)."""
    state_after: dict[str, Any] | None = None
    """The observed world state after the call (runtime values), complete or for some
    variables; None when the record has none."""


@dataclass
class Run:
    """One recorded sequence of calls from one initial state."""

    name: str
    steps: list[Step]
    state: dict[str, Any] = field(default_factory=dict)
    """Initial-state overrides, validated against the contract (runtime values)."""
    now: datetime | None = None
    line: int = 1
    """The line of the trace file the run starts on."""
    index: int = 1
    """1-based position of the run in the file."""


def _diag(code: str, message: str, file: str, line: int = 1, hint: str | None = None) -> Diagnostic:
    return error(code, message, Span(file=file, line=line, col=1, end_line=line, end_col=2), hint)


# ------------------------------------------------------------------------------------ adapters


def load_adapter(spec: str) -> Adapter:
    """The function named by ``FILE.py:FUNC`` or ``MODULE:FUNC``. Loading runs the user's own
    code (that is the point of an adapter); every failure is an E0910 diagnostic."""
    where = "<command line: --adapter>"
    target, sep, func = spec.rpartition(":")
    if not sep or not target or not func:
        raise ContractError(
            [
                _diag(
                    "E0910",
                    f"`{spec}` does not name a function",
                    where,
                    hint="write --adapter path/to/file.py:func or --adapter package.module:func",
                )
            ]
        )
    is_file = target.endswith(".py") or "/" in target or os.sep in target
    try:
        with contextlib.redirect_stdout(sys.stderr):
            module = _load_file(target, where) if is_file else _import(target, where)
    except ContractError:
        raise
    except BaseException as exc:  # the user's module raised while loading
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ContractError(
            [
                _diag(
                    "E0910",
                    f"loading the adapter {target} raised {_exc_text(exc)}",
                    target if is_file else where,
                    _exc_line(exc, target),
                    hint="fix the adapter module so that it imports cleanly",
                )
            ]
        ) from None
    fn = getattr(module, func, None)
    if fn is None or not callable(fn):
        names = [n for n in vars(module) if not n.startswith("_") and callable(vars(module)[n])]
        guess = did_you_mean(func, names)
        what = "has no function" if fn is None else "has a non-callable"
        raise ContractError(
            [
                _diag(
                    "E0910",
                    f"the adapter module {target} {what} `{func}`",
                    target if is_file else where,
                    hint=f"did you mean `{guess}`?"
                    if guess
                    else ("it defines: " + ", ".join(sorted(names)[:8]) if names else None),
                )
            ]
        )
    adapter: Adapter = fn
    return adapter


def _load_file(target: str, where: str) -> Any:
    path = Path(target)
    unreadable = path_problem(path, "adapter")  # missing, a FIFO, a symlink loop …
    if unreadable is not None:
        raise ContractError(
            [
                _diag(
                    "E0910",
                    unreadable[0],
                    where,
                    hint="check the path (relative paths start from the current directory)",
                )
            ]
        )
    digest = hashlib.sha1(str(path.resolve()).encode("utf-8"), usedforsecurity=False).hexdigest()
    name = f"_contractsim_adapter_{digest[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - .py files always have one
        raise ContractError([_diag("E0910", f"{target} cannot be loaded as Python", where)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import(target: str, where: str) -> Any:
    added = os.getcwd() not in sys.path
    if added:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and target.startswith(exc.name):
            raise ContractError(
                [
                    _diag(
                        "E0910",
                        f"no module named `{target}`",
                        where,
                        hint="give a file instead (path/to/file.py:func), or install the module",
                    )
                ]
            ) from None
        raise
    finally:
        if added and sys.path and sys.path[0] == os.getcwd():
            sys.path.pop(0)


def _exc_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - the user's exception, with a broken __str__
        text = "<its message cannot be read>"
    if len(text) > 300:
        text = text[:300] + " …"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _exc_line(exc: BaseException, target: str) -> int:
    """The line of ``target`` (the adapter file) where ``exc`` was raised, else 1."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return exc.lineno
    want = os.path.abspath(target)
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if os.path.abspath(frame.filename) == want and frame.lineno:
            return frame.lineno
    return 1


def _exc_where(exc: BaseException) -> str:
    """``file:line`` of the innermost frame of an exception (where an adapter raised)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno})"


# ------------------------------------------------------------------------------------ reading


def read_runs(
    path: str | os.PathLike[str],
    compiled: CompiledContract,
    adapter: Adapter | None = None,
) -> list[Run]:
    """Every run of a trace file, checked against the contract; a :class:`ContractError` with
    one diagnostic per problem (up to 200) otherwise."""
    name = str(path)
    text = read_trace_text(name)
    problems: list[Diagnostic] = []
    runs: list[Run] = []
    bad_runs = 0
    maps = JsonMaps(compiled)  # one per file: it caches which types hold maps
    for index, (line, record) in enumerate(trace_records(text, name), 1):
        if bad_runs >= MAX_BAD_RUNS:
            problems.append(
                Diagnostic(
                    code=problems[-1].code,
                    severity="note",
                    message=f"stopped reading after {MAX_BAD_RUNS} runs with problems",
                    span=Span(file=name, line=line, col=1, end_line=line, end_col=2),
                    hint="fix these first: the same mistake is likely repeated in later runs",
                )
            )
            break
        before = len(problems)
        run = _record_run(record, index, line, name, maps, adapter, problems)
        if run is not None:
            runs.append(run)
        bad_runs += len(problems) > before
    if not runs and not problems:
        problems.append(
            _diag(
                "E0908",
                f"{name} holds no runs",
                name,
                hint="write one run per line (JSON Lines), or a list of runs",
            )
        )
    if problems:
        raise ContractError(problems, {name: text})
    return runs


def _record_run(
    record: Any,
    index: int,
    line: int,
    name: str,
    maps: JsonMaps,
    adapter: Adapter | None,
    problems: list[Diagnostic],
) -> Run | None:
    """One record as a checked run (through the adapter, when there is one)."""
    data = record
    if adapter is not None:
        try:
            # what the adapter prints must not mix with the report (stdout may be JSON)
            with contextlib.redirect_stdout(sys.stderr):
                data = adapter(record)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the user's code: any exception (even SystemExit)
            problems.append(
                _diag(
                    "E0911",
                    f"the adapter raised {_exc_text(exc)} on run {index}{_exc_where(exc)}",
                    name,
                    line,
                    hint="fix the adapter, or the record it cannot convert",
                )
            )
            return None
        converted = contract_value(data, "the run")
        if not converted.exact:  # objects, dict subclasses: what they hold, not their methods
            if converted.problems:
                problems.append(
                    _diag(
                        "E0912",
                        f"the adapter returned a value that cannot be read for run {index}: "
                        + converted.problems[0],
                        name,
                        line,
                        hint="an adapter returns plain data (dicts, lists, str, numbers)",
                    )
                )
                return None
            data = thaw(converted.value)
        if not isinstance(data, dict):
            problems.append(
                _diag(
                    "E0912",
                    f"the adapter returned {_kind(data)} for run {index}, not a run object",
                    name,
                    line,
                    hint='an adapter returns {"steps": [...], "state": {...}, "name": ...}',
                )
            )
            return None
    return _run(data, index, line, name, maps, adapter is not None, problems)


def read_trace_text(name: str) -> str:
    """The text of a trace file (bounded, UTF-8), or a located E0901."""
    data = read_input(name, "trace", "E0901", MAX_TRACE_BYTES)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ContractError([_diag("E0901", f"{name} is not UTF-8 text", name, line)]) from None


def _is_jsonl(text: str, name: str) -> bool:
    if name.endswith((".jsonl", ".ndjson")):
        return True
    if not text.lstrip().startswith("{"):
        return False
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.msg == "Extra data"
    except (ValueError, RecursionError):
        return False
    return False


def trace_records(text: str, name: str) -> Iterator[tuple[int, Any]]:
    """(line, record) for each run of the file, JSON Lines or a JSON/YAML document."""
    if _is_jsonl(text, name):
        for lineno, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                yield lineno, json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ContractError(
                    [
                        error(
                            "E0902",
                            f"line {lineno} is not valid JSON: {exc.msg}",
                            Span(
                                file=name,
                                line=lineno,
                                col=exc.colno,
                                end_line=lineno,
                                end_col=exc.colno + 1,
                            ),
                            hint="a JSON Lines trace holds one complete JSON object per line",
                        )
                    ],
                    {name: text},
                ) from None
            except (ValueError, RecursionError) as exc:
                raise ContractError(
                    [_diag("E0902", f"line {lineno} cannot be read: {exc}", name, lineno)],
                    {name: text},
                ) from None
        return
    try:
        data = parse_data(text, name, "trace")
    except ContractError as exc:
        raise ContractError(
            [dataclasses.replace(d, code="E0902") for d in exc.diagnostics], exc.sources
        ) from None
    if data is None:
        return
    items: Any = data
    if isinstance(data, dict):
        if "runs" not in data or "steps" in data:
            yield 1, data  # one run (or one foreign record)
            return
        items = data["runs"]
    if not isinstance(items, list):
        raise ContractError(
            [
                _diag(
                    "E0903",
                    f"a trace document is a list of runs, got {_kind(items)}",
                    name,
                    hint="write a list of {steps: [...]} objects, or JSON Lines",
                )
            ],
            {name: text},
        )
    lines = item_lines(text, len(items), ("runs",))
    yield from zip(lines, items, strict=True)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    kinds.update({int: "a number", float: "a number"})
    return kinds.get(type(value)) or article(type(value).__name__)


def _run(
    data: Any,
    index: int,
    line: int,
    name: str,
    maps: JsonMaps,
    adapted: bool,
    problems: list[Diagnostic],
) -> Run | None:
    where = f"run {index}" + (" (as the adapter returned it)" if adapted else "")
    if not isinstance(data, dict):
        problems.append(
            _diag(
                "E0903",
                f"{where} must be an object with `steps`, got {_kind(data)}",
                name,
                line,
                hint="a run is {name?, state?, now?, steps: [...]}",
            )
        )
        return None
    before = len(problems)
    unknown = [k for k in data if k not in RUN_KEYS]
    if unknown:
        guess = did_you_mean(str(unknown[0]), RUN_KEYS)
        problems.append(
            _diag(
                "E0903",
                f"{where} has unknown field(s) " + ", ".join(f"`{k}`" for k in unknown),
                name,
                line,
                hint=f"did you mean `{guess}`?"
                if guess
                else (
                    "a run has name, state, now and steps"
                    + ("" if adapted else "; records of another format need --adapter FILE:FUNC")
                ),
            )
        )
    steps_raw = data.get("steps")
    if not isinstance(steps_raw, list):
        problems.append(
            _diag(
                "E0903",
                f"{where} has no `steps` list"
                + ("" if steps_raw is None else f" (`steps` is {_kind(steps_raw)})"),
                name,
                line,
                hint="add steps: [{tool, args, outcome}, ...]",
            )
        )
        steps_raw = []
    steps = [_step(s, i, where, line, name, maps, problems) for i, s in enumerate(steps_raw, 1)]
    state_raw = data.get("state")
    state: dict[str, Any] = {}
    if state_raw is not None and not isinstance(state_raw, dict):
        problems.append(
            _diag("E0906", f"{where}: `state` must be an object of variable: value", name, line)
        )
    elif state_raw:
        try:
            state = validate_state_overrides(maps.compiled, dict(state_raw), name)
        except ContractError as exc:
            for d in exc.diagnostics:
                problems.append(
                    _diag(
                        "E0906",
                        f"{where}: the contract rejects the state: {d.message}",
                        name,
                        line,
                        hint=d.hint or "the state must fit the contract's state declarations",
                    )
                )
    now: datetime | None = None
    if data.get("now") is not None:
        try:
            now = parse_now(str(data["now"]), name, line)
        except ContractError as exc:
            problems.extend(
                dataclasses.replace(d, code="E0907", message=f"{where}: {d.message}")
                for d in exc.diagnostics
            )
    if len(problems) > before:
        return None
    run_name = data.get("name")
    return Run(
        name=str(run_name) if run_name is not None else f"run {index}",
        steps=[s for s in steps if s is not None],
        state=state,
        now=now,
        line=line,
        index=index,
    )


def _step(
    raw: Any,
    i: int,
    where: str,
    line: int,
    name: str,
    maps: JsonMaps,
    problems: list[Diagnostic],
) -> Step | None:
    at = f"{where}, step {i}"
    if not isinstance(raw, dict):
        problems.append(_diag("E0904", f"{at} must be an object, got {_kind(raw)}", name, line))
        return None
    bad = len(problems)
    for key in raw:
        if key not in STEP_KEYS:
            guess = did_you_mean(str(key), STEP_KEYS)
            problems.append(
                _diag(
                    "E0904",
                    f"{at} has an unknown field `{key}`",
                    name,
                    line,
                    hint=f"did you mean `{guess}`?"
                    if guess
                    else "a step has tool, args, outcome, error and result",
                )
            )
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool:
        problems.append(
            _diag(
                "E0904", f"{at} has no `tool`", name, line, hint="add the tool's name: tool: NAME"
            )
        )
    args = raw.get("args")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        problems.append(
            _diag("E0904", f"{at}: `args` must be an object, got {_kind(args)}", name, line)
        )
    message = raw.get("error")
    if message is not None and not isinstance(message, str):
        problems.append(
            _diag(
                "E0904", f"{at}: `error` must be a string or null, got {_kind(message)}", name, line
            )
        )
    outcome = raw.get("outcome")
    if outcome not in OUTCOMES:
        shown = "no `outcome`" if outcome is None else f"the unknown outcome `{outcome}`"
        guess = did_you_mean(str(outcome), OUTCOMES) if isinstance(outcome, str) else None
        problems.append(
            _diag(
                "E0905",
                f"{at} has {shown}",
                name,
                line,
                hint=f"did you mean `{guess}`?"
                if guess
                else "outcome is ok (returned normally), error (returned a failure) or crash "
                "(raised)",
            )
        )
    after_raw = raw.get("state_after")
    after: dict[str, Any] | None = None
    if after_raw is not None and not isinstance(after_raw, dict):
        problems.append(
            _diag(
                "E0904",
                f"{at}: `state_after` must be an object of variable: value, got {_kind(after_raw)}",
                name,
                line,
                hint="state_after holds the state observed after the call, like a run's `state`",
            )
        )
    elif after_raw is not None:
        try:
            after = validate_state_overrides(maps.compiled, dict(after_raw), name)
        except ContractError as exc:
            for d in exc.diagnostics:
                problems.append(
                    _diag(
                        "E0904",
                        f"{at}: the contract rejects `state_after`: {d.message}",
                        name,
                        line,
                        hint=d.hint or "state_after must fit the contract's state declarations",
                    )
                )
    if len(problems) > bad:
        return None
    result = None if raw.get("truncated") else raw.get("result")
    # an adapter's (or YAML's) non-string keys survive as explicit entries, read by type below
    args, wrapped_args = entries_for_keys(args)
    result, wrapped_result = entries_for_keys(result)
    try:
        # YAML dates, an adapter's sets or datetimes …: a run holds JSON data, like a recording
        args, result = json_ready(args), json_ready(result)
    except (ValueError, RecursionError) as exc:
        problems.append(_diag("E0904", f"{at}: its data is not JSON-like ({exc})", name, line))
        return None
    try:
        # JSON writes every map key as a string: read them by the parameter and return types
        args = maps.read_args(str(tool), args)
        result = maps.read_result(str(tool), result)
    except KeyProblem as exc:
        problems.append(_diag("E0904", f"{at}: {exc}", name, line, hint=exc.hint))
        return None
    if wrapped_args:  # where no map type reached them (a result without `-> TYPE` …)
        args = entries_as_dicts(args)
    if wrapped_result:
        result = entries_as_dicts(result)
    return Step(str(tool), dict(args), str(outcome), message, result, after)
