"""File formats of plans and state files: read, shape-checked, with diagnostics instead of
tracebacks (what the values mean at run time is :mod:`.values`).

A plan is JSON or YAML: a list of ``{tool, args}``; or an object with ``steps`` (and optionally
``state``, ``now``, ``goal``); or OpenAI-style ``tool_calls`` (``function.name`` and
``function.arguments`` as a JSON string); or an IPC plan (one ``(action arg …)`` per line). In a
state file (or a plan's ``state``) the string ``$unknown`` marks a value as not observed.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import field
from datetime import datetime
from typing import Any

import yaml

from ..compiler.compile import CompiledContract
from ..diagnostics import ContractError, Diagnostic, Span, error, suggestion_hint
from ..dsl import ir
from ..records import record
from ..sources import read_input

MAX_PLAN_BYTES = 32 * 1024 * 1024
MAX_PLAN_STEPS = 100_000


@record
class PlanStep:
    tool: str
    args: dict[str, Any]
    line: int = 0


@record
class Plan:
    """A parsed plan: its calls, and the options it carries."""

    steps: list[PlanStep]
    source: str = "<plan>"
    state: dict[str, Any] = field(default_factory=dict)
    now: str | None = None
    goal: str | None = None
    text: str = ""


def diagnostic_at(
    code: str, message: str, file: str, line: int = 1, hint: str | None = None, col: int = 1
) -> Diagnostic:
    return error(
        code,
        message,
        Span(file=file, line=line, col=col, end_line=line, end_col=col + 1),
        hint=hint,
    )


def read_text(path: str | os.PathLike[str], what: str) -> str:
    data = read_input(path, what, "E0700", MAX_PLAN_BYTES)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise ContractError(
            [diagnostic_at("E0700", f"{path} is not UTF-8 text", str(path))]
        ) from None


def parse_data(text: str, name: str, what: str) -> Any:
    """JSON, else YAML (safe loader: no Python objects), with positions in errors."""
    return _parse_data_node(text, name, what)[0]


def _parse_data_node(text: str, name: str, what: str) -> tuple[Any, Any]:
    """The data of ``text`` and, when it was read as YAML, its root node (positions)."""
    code = "E0702" if what == "state" else "E0701"
    try:
        return _parse_data(text, name, what)
    except _DuplicateKey as exc:
        raise ContractError(
            [
                diagnostic_at(
                    code,
                    f"the key `{exc.key}` appears twice in one object of the {what}",
                    name,
                    exc.line or line_of(text, f'"{exc.key}"', nth=1),
                    hint="keep one of them: with duplicates, which one counts is ambiguous",
                )
            ],
            {name: text},
        ) from None
    except _NotJsonData as exc:
        raise ContractError(
            [
                diagnostic_at(
                    code,
                    f"the {what} holds a YAML `!!{exc.tag}` value, which is not JSON data",
                    name,
                    exc.line,
                    hint=f"a {what} holds strings, numbers, booleans, null, lists and objects: "
                    "write the value as a quoted string",
                    col=exc.col,
                )
            ],
            {name: text},
        ) from None
    except RecursionError:
        raise ContractError([diagnostic_at(code, f"the {what} nests too deeply", name)]) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        long_number = re.search(r"\d{1000,}", text)
        line = text.count("\n", 0, long_number.start()) + 1 if long_number else 1
        raise ContractError(
            [
                diagnostic_at(
                    code,
                    f"the {what} holds a value that cannot be read: {exc}",
                    name,
                    line,
                    hint="a number may have at most 4,300 digits",
                )
            ],
            {name: text},
        ) from None


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int) -> None:
        super().__init__(key)
        self.key, self.line = key, line


class _NotJsonData(Exception):
    """A YAML value JSON cannot hold (``!!binary``, ``!!set`` …): refused, never turned into a
    Python object that a report could not write."""

    def __init__(self, tag: str, line: int, col: int) -> None:
        super().__init__(tag)
        self.tag, self.line, self.col = tag, line, col


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key, 0)
        out[key] = value
    return out


def _parse_data(text: str, name: str, what: str) -> tuple[Any, Any]:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(text, object_pairs_hook=_no_duplicates), None
        except json.JSONDecodeError as exc:
            # YAML's flow style ([{tool: t}]) looks like JSON; accept it when it parses as YAML
            try:
                return _load_yaml(text)
            except (yaml.YAMLError, RecursionError):
                pass
            raise ContractError(
                [
                    diagnostic_at(
                        "E0701",
                        f"the {what} is not valid JSON: {exc.msg}",
                        name,
                        exc.lineno,
                        hint="check brackets, commas and quotes",
                        col=exc.colno,
                    )
                ],
                {name: text},
            ) from None
    try:
        return _load_yaml(text)
    except yaml.YAMLError as exc:
        line, col = 1, 1
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            line, col = mark.line + 1, mark.column + 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ContractError(
            [
                diagnostic_at(
                    "E0701",
                    f"the {what} is not valid YAML: {problem}",
                    name,
                    line,
                    hint="check indentation and quoting",
                    col=col,
                )
            ],
            {name: text},
        ) from None
    except RecursionError:
        raise ContractError(
            [diagnostic_at("E0701", f"the {what} nests too deeply", name)]
        ) from None


ALIAS_REFUSED = "YAML aliases (*name) are not allowed in plans and states"


def _load_yaml(text: str) -> tuple[Any, Any]:
    """The data of a YAML text and its root node. libyaml's parser when PyYAML has it (about
    five times faster than the pure-Python one), which resolves aliases itself: a text that
    could hold one is first scanned for it."""
    if _FastLoader is not None:
        if "*" in text and "&" in text:
            for event in yaml.parse(text, Loader=_FastLoader):
                if isinstance(event, yaml.AliasEvent):
                    mark: Any = event.start_mark
                    raise yaml.composer.ComposerError(None, None, ALIAS_REFUSED, mark)
        loader: Any = _FastLoader(text)
    else:
        loader = _NoAliasLoader(text)
    try:
        node = loader.get_single_node()
        return (loader.construct_document(node) if node is not None else None), node
    finally:
        loader.dispose()


class _JsonDataLoader:
    """What a plan, state, goal or trace holds is JSON data: a YAML date or time is its text
    as written (``2024-05-20``), a ``!!binary``, ``!!set``, ``!!omap`` or ``!!pairs`` value is
    refused (E0701/E0702)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[attr-defined]
            try:
                duplicate = key in seen
            except TypeError:
                continue
            if duplicate:
                raise _DuplicateKey(str(key), key_node.start_mark.line + 1)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]

    def construct_yaml_timestamp(self, node: Any) -> Any:
        return self.construct_scalar(node)  # type: ignore[attr-defined]

    def refuse_tag(self, node: Any) -> Any:
        mark = node.start_mark
        raise _NotJsonData(node.tag.rsplit(":", 1)[-1], mark.line + 1, mark.column + 1)


def _json_data_constructors(loader: type[Any]) -> None:
    loader.add_constructor("tag:yaml.org,2002:timestamp", _JsonDataLoader.construct_yaml_timestamp)
    for tag in ("binary", "set", "omap", "pairs"):
        loader.add_constructor(f"tag:yaml.org,2002:{tag}", _JsonDataLoader.refuse_tag)


class _NoAliasLoader(_JsonDataLoader, yaml.SafeLoader):
    """YAML without aliases: ``*ref`` lets a few lines expand into billions of nodes."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(None, None, ALIAS_REFUSED, event.start_mark)
        return super().compose_node(parent, index)


_json_data_constructors(_NoAliasLoader)
_FastLoader: type[Any] | None = None
if getattr(yaml, "__with_libyaml__", False):

    class _CLoader(_JsonDataLoader, yaml.CSafeLoader):
        """libyaml's parser, the same constructors; aliases are refused before (_load_yaml)."""

    _json_data_constructors(_CLoader)
    _FastLoader = _CLoader


def line_of(text: str, needle: str, nth: int = 0) -> int:
    count = 0
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            if count == nth:
                return i
            count += 1
    return 1


def load_plan(path: str | os.PathLike[str]) -> Plan:
    text = read_text(path, "plan")
    return parse_plan(text, str(path))


def parse_plan(text: str, name: str = "<plan>") -> Plan:
    """Read a plan from text; every shape problem becomes a diagnostic with a line."""
    if text.strip().startswith("(") or _looks_like_ipc(text):
        return _ipc_plan(text, name)
    if len(text) > 2 * MAX_PLAN_STEPS:
        _refuse_too_many_steps(text, name)
    data, root = _parse_data_node(text, name, "plan")
    if data is None:
        raise ContractError(
            [
                diagnostic_at(
                    "E0701",
                    "the plan is empty",
                    name,
                    hint="write a list of {tool: NAME, args: {...}} (an empty list [] is a plan "
                    "with no steps)",
                )
            ],
            {name: text},
        )
    problems: list[Diagnostic] = []
    plan = Plan(steps=[], source=name, text=text)
    calls: Any = data
    if isinstance(data, dict):
        if "tool_calls" in data:
            calls = data["tool_calls"]
        elif "steps" in data:
            calls = data["steps"]
        else:
            raise ContractError(
                [
                    diagnostic_at(
                        "E0701",
                        "the plan object has no `steps` (or `tool_calls`)",
                        name,
                        hint="write `steps:` followed by a list of {tool, args}",
                    )
                ],
                {name: text},
            )
        for key in data:
            if key not in ("steps", "tool_calls", "state", "now", "goal", "description"):
                problems.append(
                    diagnostic_at(
                        "E0701",
                        f"unknown plan field `{key}`",
                        name,
                        line_of(text, str(key)),
                        hint=suggestion_hint(str(key), ["steps", "state", "now", "goal"], "field"),
                    )
                )
        state = data.get("state") or {}
        if not isinstance(state, dict):
            problems.append(
                diagnostic_at(
                    "E0701",
                    "`state` must be an object of variable: value",
                    name,
                    line_of(text, "state"),
                )
            )
        else:
            plan.state = state
        if data.get("now") is not None:
            plan.now = str(data["now"])
        if data.get("goal") is not None:
            plan.goal = str(data["goal"])
    if calls is None:
        calls = []
    if not isinstance(calls, list):
        raise ContractError(
            [
                diagnostic_at(
                    "E0701",
                    "a plan is a list of calls",
                    name,
                    hint="write a list of {tool: NAME, args: {...}}",
                )
            ],
            {name: text},
        )
    if len(calls) > MAX_PLAN_STEPS:
        raise _too_many_steps(f"{len(calls):,}", name)
    keys = ("steps", "tool_calls")
    lines = _node_lines(root, len(calls), keys) if root else item_lines(text, len(calls), keys)
    for i, call in enumerate(calls):
        step = _plan_step(call, i, name, lines[i], problems)
        if step is not None:
            plan.steps.append(step)
            problem = _reference_problem(step.args, i + 1, len(calls))
            if problem is not None:
                problems.append(
                    diagnostic_at(
                        "E0701",
                        f"step {i + 1}: {problem}",
                        name,
                        step.line,
                        hint="`$N.result.FIELD` passes on what an earlier step N returned; "
                        "`$$` starts a literal `$`",
                    )
                )
    if problems:
        raise ContractError(problems, {name: text})
    return plan


def _reference_problem(args: dict[str, Any], index: int, steps: int) -> str | None:
    """What is wrong with the `$N.result…` references in a step's arguments whatever the
    branch, or None."""
    from .references import plan_problem

    found = plan_problem(args, index, steps)
    return found if isinstance(found, str) else None


def _too_many_steps(count: str, name: str) -> ContractError:
    return ContractError(
        [
            diagnostic_at(
                "E0701",
                f"the plan has {count} steps; the limit is {MAX_PLAN_STEPS:,}",
                name,
                hint="split the plan into several files",
            )
        ]
    )


def _refuse_too_many_steps(text: str, name: str) -> None:
    """Count the steps of a large YAML plan from the parser's events, before anything is built
    (building 100,000 steps takes far longer): past the limit is an E0701 at once. JSON is
    read fast enough to count afterwards; text the parser refuses is reported by the reader."""
    if text.lstrip().startswith(("{", "[")):
        return
    loader: Any = (_FastLoader or _NoAliasLoader)(text)
    stack: list[list[Any]] = []  # [is a mapping, nodes seen in it, is the list of steps]
    target_next = False
    count = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.CollectionEndEvent):
                stack.pop()
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            is_value_of_key = False
            if stack:
                parent = stack[-1]
                if parent[2]:
                    count += 1
                    if count > MAX_PLAN_STEPS:
                        raise _too_many_steps(f"more than {MAX_PLAN_STEPS:,}", name)
                if parent[0]:
                    is_key = parent[1] % 2 == 0
                    is_value_of_key = not is_key and target_next
                    target_next = (
                        is_key
                        and len(stack) == 1
                        and isinstance(event, yaml.ScalarEvent)
                        and event.value in ("steps", "tool_calls")
                    )
                parent[1] += 1
            if isinstance(event, yaml.CollectionStartEvent):
                is_list = isinstance(event, yaml.SequenceStartEvent)
                stack.append([not is_list, 0, is_list and (not stack or is_value_of_key)])
    except (yaml.YAMLError, RecursionError, ValueError):
        return
    finally:
        loader.dispose()


def item_lines(text: str, count: int, keys: tuple[str, ...]) -> list[int]:
    """The line each of ``count`` items starts on: of the top-level list, or of the list under
    one of ``keys`` of a top-level object (from the YAML node tree; JSON is YAML too). Line 1
    for every item when the text does not have that shape."""
    if "\n" not in text.rstrip():
        return [1] * count  # one line (generated JSON): nothing to compose
    if text.lstrip().startswith(("{", "[")):
        lines = _json_item_lines(text, keys)
        if lines is not None and len(lines) == count:
            return lines
    try:
        # composes, builds nothing
        root = yaml.compose(text, Loader=_FastLoader or _NoAliasLoader)  # noqa: S506
    except (yaml.YAMLError, RecursionError, ValueError):
        return [1] * count
    return _node_lines(root, count, keys)


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _json_item_lines(text: str, keys: tuple[str, ...]) -> list[int] | None:
    """:func:`item_lines` for JSON text, from the JSON decoder (composing a large JSON document
    as YAML takes a hundred times longer): each item is decoded to find where the next one
    starts. None when the text is not JSON of that shape."""
    decoder = json.JSONDecoder()

    def skip(pos: int) -> int:
        match = _JSON_SPACE.match(text, pos)
        return match.end() if match else pos

    try:
        pos = skip(0)
        if text.startswith("{", pos):
            pos = skip(pos + 1)
            while True:  # to the value of the first of `keys`
                key, pos = decoder.raw_decode(text, pos)
                pos = skip(pos)
                if not isinstance(key, str) or not text.startswith(":", pos):
                    return None
                pos = skip(pos + 1)
                if key in keys:
                    break
                _, pos = decoder.raw_decode(text, pos)
                pos = skip(pos)
                if not text.startswith(",", pos):
                    return None
                pos = skip(pos + 1)
        if not text.startswith("[", pos):
            return None
        starts: list[int] = []
        pos = skip(pos + 1)
        while not text.startswith("]", pos):
            starts.append(pos)
            _, pos = decoder.raw_decode(text, pos)
            pos = skip(pos)
            if text.startswith(",", pos):
                pos = skip(pos + 1)
            elif not text.startswith("]", pos):
                return None
    except (ValueError, RecursionError):
        return None
    lines, line, last = [], 1, 0
    for start in starts:
        line += text.count("\n", last, start)
        lines.append(line)
        last = start
    return lines


def _node_lines(root: Any, count: int, keys: tuple[str, ...]) -> list[int]:
    fallback = [1] * count
    seq = root
    if isinstance(root, yaml.MappingNode):
        seq = next(
            (v for k, v in root.value if getattr(k, "value", None) in keys),
            None,
        )
    if not isinstance(seq, yaml.SequenceNode) or len(seq.value) != count:
        return fallback
    return [item.start_mark.line + 1 for item in seq.value]


def _plan_step(
    call: Any, i: int, name: str, line: int, problems: list[Diagnostic]
) -> PlanStep | None:
    where = f"step {i + 1}"
    if not isinstance(call, dict):
        problems.append(
            diagnostic_at(
                "E0701",
                f"{where} must be an object with `tool` and `args`",
                name,
                line,
                hint="e.g. {tool: read_file, args: {path: /a}}",
            )
        )
        return None
    if "function" in call and isinstance(call["function"], dict):
        fn = call["function"]
        tool = fn.get("name")
        raw = fn.get("arguments", "{}")
        if isinstance(raw, str):
            try:
                args = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                problems.append(
                    diagnostic_at(
                        "E0701",
                        f"{where}: `function.arguments` is not valid JSON: {exc.msg}",
                        name,
                        line,
                    )
                )
                return None
        else:
            args = raw
    else:
        tool = call.get("tool", call.get("name"))
        args = call.get("args", call.get("arguments", {}))
        for key in call:
            if key not in ("tool", "name", "args", "arguments", "id", "type", "comment"):
                problems.append(
                    diagnostic_at(
                        "E0701",
                        f"{where}: unknown field `{key}`",
                        name,
                        line,
                        hint="a step has `tool` and `args`",
                    )
                )
    if not isinstance(tool, str) or not tool:
        problems.append(
            diagnostic_at("E0701", f"{where} has no tool name", name, line, hint="add `tool: NAME`")
        )
        return None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        problems.append(
            diagnostic_at(
                "E0701",
                f"{where}: `args` must be an object, got {type(args).__name__}",
                name,
                line,
            )
        )
        return None
    return PlanStep(tool, args, line)


def _looks_like_ipc(text: str) -> bool:
    """Whether a plan file is an IPC plan: some line is a step ``(action …)`` (or a timed step
    ``0: (action …)``, refused later at its line), or it holds only ``;`` comments (a planner's
    empty plan, e.g. ``; cost = 0 (unit cost)``)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    code = [ln for ln in lines if not ln.startswith(";")]
    if not code:
        return bool(lines)
    # the pattern is compiled only for a line that starts with a digit (YAML and JSON plans
    # seldom have one): compiling it is most of what this costs a cold `simulate`
    return any(
        ln.startswith("(") or (ln[0].isdigit() and re.match(r"\d+(\.\d+)?\s*:\s*\(", ln))
        for ln in code
    )


def _ipc_plan(text: str, name: str) -> Plan:
    """IPC plan files: ``(action arg …)`` steps (usually one per line; several on a line, or
    one over several lines, are read too), ``;`` comments. Arguments are positional and bound to
    the tool's parameters in order when the plan runs. A line with anything else (a timestamp
    ``0:``, a duration ``[1]``, planner output) is an E0701 at that line."""
    steps: list[PlanStep] = []
    problems: list[Diagnostic] = []
    hint = (
        "an IPC plan holds `(action arg …)` steps and `;` comments; timestamps (`0:`), "
        "durations (`[1]`) and planner output are not read"
    )
    lines = [raw.split(";", 1)[0] for raw in text.splitlines()]
    step: list[str] | None = None  # the words of an open `(…`, which may go on over lines
    start = 0
    for i, line in enumerate(lines, 1):
        for m in re.finditer(r"[()]|[^\s()]+", line):
            word = m.group()
            if step is None and word == "(":
                step, start = [], i
            elif step is not None and word == ")":
                if not step:
                    problems.append(diagnostic_at("E0701", "an empty step `()`", name, start, hint))
                else:
                    steps.append(
                        PlanStep(step[0], {"$positional": step[1:], "$source": name}, start)
                    )
                    if len(steps) > MAX_PLAN_STEPS:
                        raise _too_many_steps(f"more than {MAX_PLAN_STEPS:,}", name)
                step = None
            elif step is not None and word != "(":
                step.append(word)
            else:
                problems.append(
                    diagnostic_at(
                        "E0701",
                        f"not an IPC plan step: {line.strip()[:60]}",
                        name,
                        i,
                        hint,
                        m.start() + 1,
                    )
                )
                step = None
                break
        if len(problems) >= 20:
            break
    if step is not None and len(problems) < 20:
        problems.append(
            diagnostic_at("E0701", "this step is never closed with `)`", name, start, hint)
        )
    if problems:
        raise ContractError(problems)
    return Plan(steps=steps, source=name, text=text)


def bind_positional(compiled: CompiledContract, step: PlanStep) -> dict[str, Any]:
    """Turn IPC positional arguments into named ones (objects matched case-insensitively).

    A step naming no action of a contract imported from PDDL, or with more or fewer arguments
    than the action has parameters, is an E0701 at the step's line."""
    positional = step.args.get("$positional")
    if positional is None:
        return step.args
    source = str(step.args.get("$source", "<plan>"))
    mark = "PDDL action `"
    pddl = {
        (c.ir.description or "")[len(mark) : -1].lower(): t
        for t, c in compiled.tools.items()
        if (c.ir.description or "").startswith(mark)
    }
    if pddl and step.tool.lower() not in pddl:
        raise ContractError(
            [
                diagnostic_at(
                    "E0701",
                    f"the PDDL domain has no action `{step.tool}`",
                    source,
                    step.line,
                    suggestion_hint(step.tool.lower(), list(pddl), "action"),
                )
            ]
        )
    ctool = compiled.tools.get(_tool_name(compiled, step.tool))
    if ctool is None:
        return {}
    params = ctool.ir.params
    if len(positional) != len(params):
        shown = step.tool.lower() if pddl else ctool.ir.name
        expected = " ".join([shown, *(p.name.upper() for p in params)])
        raise ContractError(
            [
                diagnostic_at(
                    "E0701",
                    f"`{shown}` takes {len(params)} argument(s) "
                    f"({', '.join(p.name for p in params) or 'none'}), {len(positional)} given: "
                    f"`({' '.join([step.tool, *positional])})`",
                    source,
                    step.line,
                    f"write `({expected})`",
                )
            ]
        )
    return {p.name: _member(compiled, ctool.ir, p.name, v) for p, v in zip(params, positional)}


def _tool_name(compiled: CompiledContract, name: str) -> str:
    """The tool an IPC step's action NAME runs. A contract imported from PDDL names each tool's
    PDDL action in its description (``PDDL action `pick-up```, docs/pddl.md): its actions are
    found by exactly that name, case-insensitively as in PDDL. Other contracts: the tool NAME,
    else one whose name matches case-insensitively with ``-`` read as ``_``."""
    mark = "PDDL action `"
    for tool, c in compiled.tools.items():
        desc = c.ir.description or ""
        if desc.startswith(mark) and desc[len(mark) : -1].lower() == name.lower():
            return tool
    if name in compiled.tools:
        return name
    normal = name.lower().replace("-", "_")
    for tool in compiled.tools:
        if tool.lower() == normal:
            return tool
    for tool in compiled.tools:  # imported before the description was written: `in` → `in_`
        if tool.lower() == normal + "_":
            return tool
    return name


def _member(compiled: CompiledContract, tool: ir.Tool, param: str, value: str) -> Any:
    """An IPC argument as the parameter's type: enum members match case-insensitively, numbers
    are read as numbers."""
    decls = {t.name: t.type for t in compiled.ir.types}

    def enum_member(t: ir.TypeExpr, depth: int = 0) -> str | None:
        # through named types and unions of enums (an imported PDDL supertype is such a union)
        if depth > 32:
            return None
        if isinstance(t, ir.NamedType) and t.name in decls:
            return enum_member(decls[t.name], depth + 1)
        if isinstance(t, ir.EnumType):
            return next((m.value for m in t.members if m.value.lower() == value.lower()), None)
        if isinstance(t, ir.UnionType):
            for option in t.options:
                found = enum_member(option, depth + 1)
                if found is not None:
                    return found
        return None

    for p in tool.params:
        if p.name == param:
            if isinstance(p.type, ir.NamedType) and p.type.name in ("int", "float"):
                try:
                    return int(value) if p.type.name == "int" else float(value)
                except ValueError:
                    return value
            found = enum_member(p.type)
            if found is not None:
                return found
    return value


def resolve_step(compiled: CompiledContract, step: PlanStep) -> tuple[str, dict[str, Any]]:
    if "$positional" in step.args:
        return _tool_name(compiled, step.tool), bind_positional(compiled, step)
    return step.tool, step.args


# ------------------------------------------------------------------------------------ state files


def load_state_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    return parse_state(read_text(path, "state"), str(path))


def parse_state(text: str, name: str) -> dict[str, Any]:
    """State overrides from the text of a state file (an object of variable: value)."""
    data = parse_data(text, name, "state")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ContractError(
            [diagnostic_at("E0702", "a state file is an object of variable: value", name)]
        )
    return data


def parse_now(text: str, source: str, line: int = 1) -> datetime:
    """An RFC 3339 time, or a located diagnostic (E0705)."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise ContractError(
            [
                diagnostic_at(
                    "E0705",
                    f"`now` is not an RFC 3339 time: {exc}",
                    source,
                    line,
                    hint="write e.g. 2024-05-20T14:30:00Z",
                )
            ]
        ) from None
