"""A skeleton contract inferred from recorded values, when none is given.

State variable types come from the initial states and every ``state_after``: JSON lists whose
items never repeat become sets (of tuples when the items are lists of one length), objects
become maps from strings, scalars keep their JSON type; a value of mixed types is the union
:data:`ANY`.
Parameter types come from the arguments of the successful calls — what the tool accepted (a
union of the JSON types seen; a parameter missing from some successful calls is optional).
Results are not typed (effects do not read them then).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..diagnostics import ContractError, Span, error
from .atoms import literal

if TYPE_CHECKING:
    from ..api import Contract
    from ..replay.traces import Adapter

_SCALARS = ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"))


def _scalar(value: Any) -> str | None:
    if value is None:
        return "null"
    for cls, name in _SCALARS:
        if isinstance(value, cls):
            return name
    return None


ANY = "any"
"""What a value of mixed or unknown JSON type is declared as."""


def _union(names: Iterable[str]) -> str:
    kinds = set(names)
    if not kinds:
        return ANY
    if kinds <= {"int", "float"} and "float" in kinds:
        kinds = {"float"}
    order = ["bool", "int", "float", "str", "null", "list[str]"]
    known = [k for k in order if k in kinds]
    if len(known) < len(kinds) or len(set(known) - {"null"}) > 1:
        return ANY  # values that vary in kind: a dynamically typed parameter or variable
    return " | ".join(known) if known else ANY


def state_type(values: Sequence[Any]) -> tuple[str, str]:
    """(type, empty initial value) for the observed values of one state variable."""
    scalars = [_scalar(v) for v in values]
    if all(s is not None for s in scalars):
        t = _union(s for s in scalars if s is not None)
        empty = {"bool": "false", "int": "0", "float": "0.0", "str": '""'}.get(t, "null")
        if empty == "null" and "null" not in t:
            t += " | null"
        return t, empty
    if all(isinstance(v, list) for v in values):
        items = [x for v in values for x in v]
        unique = all(len({repr(x) for x in v}) == len(v) for v in values)
        if items and all(isinstance(x, list) for x in items):
            sizes = {len(x) for x in items}
            if len(sizes) == 1:
                size = sizes.pop()
                cols = [_union(_scalar(x[i]) or "?" for x in items) for i in range(size)]
                if not any("|" in c for c in cols):
                    return f"set[tuple[{', '.join(cols)}]]", "{}"
            return f"list[{ANY}]", "[]"
        item = _union(_scalar(x) or "?" for x in items) if items else "str"
        if unique and "|" not in item:
            return f"set[{item}]", "{}"
        return f"list[{item}]", "[]"
    if all(isinstance(v, dict) for v in values):
        inner = [x for v in values for x in v.values()]
        item = _union(_scalar(x) or "?" for x in inner) if inner else "str"
        if any(_scalar(x) is None for x in inner):
            item = ANY  # objects inside: open records the skeleton cannot name
        return f"map[str, {item}]", "{}"
    return ANY, "null"


def _records(paths: Sequence[str | os.PathLike[str]], adapter: Adapter | None) -> list[Any]:
    from ..replay.traces import read_trace_text, trace_records

    out = []
    for path in paths:
        for _, record in trace_records(read_trace_text(str(path)), str(path)):
            out.append(adapter(record) if adapter is not None else record)
    return out


ENUM_MAX_MEMBERS = 6
ENUM_MIN_CALLS = 30
ENUM_MIN_EACH = 3


def enum_members(values: Sequence[Any]) -> list[str] | None:
    """The members of an enum for a text parameter whose values form a small closed set: at
    most :data:`ENUM_MAX_MEMBERS` values, each seen at least :data:`ENUM_MIN_EACH` times, over
    at least :data:`ENUM_MIN_CALLS` calls; else None."""
    if len(values) < ENUM_MIN_CALLS or not all(isinstance(v, str) and v for v in values):
        return None
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    if not 2 <= len(counts) <= ENUM_MAX_MEMBERS or min(counts.values()) < ENUM_MIN_EACH:
        return None
    return sorted(counts)


def _enum_name(tool: str, param: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in f"{tool}_{param}".split("_") if part)


def skeleton_text(records: Sequence[Any], name: str = "learned", *, enums: bool = False) -> str:
    """The text of a skeleton contract for these runs (JSON data); ``enums``: a text parameter
    whose successful calls show a small closed set of values (:func:`enum_members`) gets an
    enum type (which refuses any other value: use it when the data covers the tool's range)."""
    state_values: dict[str, list[Any]] = {}
    tools: dict[str, dict[str, list[Any]]] = {}
    calls: dict[str, int] = {}
    for run in records:
        if not isinstance(run, dict):
            continue
        for k, v in (run.get("state") or {}).items():
            state_values.setdefault(str(k), []).append(v)
        for step in run.get("steps") or []:
            if not isinstance(step, dict) or not isinstance(step.get("tool"), str):
                continue
            tool = step["tool"]
            tools.setdefault(tool, {})
            # parameter types are what the tool accepted: the arguments of successful calls
            # (all calls for a tool that never succeeded)
            key = tool if step.get("outcome") == "ok" else "\0" + tool
            calls[key] = calls.get(key, 0) + 1
            params = tools.setdefault(key, {})
            for k, v in (step.get("args") or {}).items():
                params.setdefault(str(k), []).append(v)
            for k, v in (step.get("state_after") or {}).items():
                state_values.setdefault(str(k), []).append(v)
    lines = [f'contract {name} version "0.1.0"', '  "learned from recorded runs"', "", "state {"]
    for var, values in state_values.items():
        if not var.isidentifier():
            continue
        t, empty = state_type(values)
        lines.append(f"  {var}: {t} = {empty}")
    lines += ["}", ""]
    enum_lines: list[str] = []
    for tool in list(tools):
        if not tool.isidentifier():
            continue
        params = tools[tool] if calls.get(tool) else tools.get("\0" + tool, {})
        seen = calls.get(tool) or calls.get("\0" + tool, 0)
        parts = []
        for p, values in params.items():
            if not p.isidentifier():
                continue
            kinds = [
                _scalar(v)
                or (
                    "list[str]"
                    if isinstance(v, list) and all(isinstance(x, str) for x in v)
                    else ""
                )
                for v in values
            ]
            t = _union(k for k in kinds if k)
            members = enum_members(values) if enums and calls.get(tool) else None
            if members is not None:
                t = _enum_name(tool, p)
                enum_lines.append(f"type {t} = enum {{ {', '.join(literal(m) for m in members)} }}")
            optional = "?" if len(values) < seen else ""
            parts.append(f"{p}{optional}: {t}")
        lines.append(f"tool {tool}({', '.join(parts)}) {{")
        lines.append("}")
        lines.append("")
    if enum_lines:
        at = lines.index("state {")
        lines[at:at] = [*enum_lines, ""]
    return "\n".join(lines)


def infer_skeleton(
    paths: Sequence[str | os.PathLike[str]],
    load_text: Callable[[str, str], Contract],
    adapter: Adapter | None = None,
    *,
    enums: bool = False,
) -> Contract:
    """A checked skeleton contract inferred from the runs of the trace files; ``load_text``
    (text, filename) checks and compiles contract text (the façade's ``loads``); ``enums``: see
    :func:`skeleton_text`."""
    records = _records(paths, adapter)
    text = skeleton_text(records, enums=enums)
    try:
        return load_text(text, "learned.contract")
    except ContractError as exc:
        first = exc.diagnostics[0]
        raise ContractError(
            [
                error(
                    "E0903",
                    f"the types inferred from the runs do not make a contract: {first.message}",
                    Span(file=str(paths[0]) if paths else "<traces>"),
                    hint="give --skeleton with the types, state and tool signatures",
                )
            ]
        ) from None
