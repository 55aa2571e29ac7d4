"""Writing learned clauses and effects into the skeleton's text, in the skeleton's order."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .atoms import literal, value_kinds
from .core import Learned, ToolModel

if TYPE_CHECKING:
    from ..api import Contract
    from ..replay.traces import Run

_DECL = re.compile(r"^(tool|type|state|predicate|machine|goal|function|contract|record|const)\b")


def _last_close(text: str) -> int:
    """The offset of the last ``}`` of ``text`` outside strings and comments, or -1."""
    i, last, n = 0, -1, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch == '"':
            if text.startswith('"""', i):
                j = text.find('"""', i + 3)
                i = n if j < 0 else j + 3
                continue
            raw = i > 0 and text[i - 1] == "r"
            i += 1
            while i < n and text[i] != '"' and text[i] != "\n":
                i += 2 if text[i] == "\\" and not raw else 1
            i += 1
            continue
        if ch == "}":
            last = i
        i += 1
    return last


def _bodies(contract: Contract) -> dict[str, tuple[int, int]]:
    """tool → (start offset of its declaration, offset of its body's closing brace)."""
    text = contract.source
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    decl_lines = [i for i, line in enumerate(lines) if _DECL.match(line)]
    out: dict[str, tuple[int, int]] = {}
    for tool in contract.ir.tools:
        first = tool.span.line - 1
        nxt = next((d for d in decl_lines if d > first), len(lines))
        begin, end = starts[first], starts[nxt]
        close = _last_close(text[begin:end])
        if close >= 0:
            out[tool.name] = (begin, begin + close)
    return out


def tool_lines(model: ToolModel, existing: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """The learned clauses and effects of one tool, as contract lines (indented 2)."""
    out: list[str] = ["  " + let for let in model.lets]
    for clause in model.clauses:
        if clause.text in existing:
            continue
        out.append("  " + clause.comment())
        out.append(f"  require {clause.text}")
        out.append(f"    else {clause.code} {literal(clause.template)}")
    for eff in model.effects:
        if not eff.kept:
            continue  # an effect is kept only when it explains every observation (EXCEPTIONS)
        explained = eff.observations - eff.unexplained
        out.append(
            f"  # learned: explains {explained}/{eff.observations} observed successes "
            f"({eff.changed} changed {eff.var})"
        )
        if len(eff.lines) == 1:
            out.append(f"  effect {eff.lines[0]}")
        else:
            out.append("  effect {")
            out += ["    " + line for line in eff.lines]
            out.append("  }")
    return out


def emit(contract: Contract, learned: Learned) -> str:
    """The skeleton's text with every tool's learned lines at the end of its body."""
    text = contract.source
    bodies = _bodies(contract)
    pieces: list[tuple[int, str]] = []
    for tool in contract.ir.tools:
        model = learned.tools.get(tool.name)
        if model is None or tool.name not in bodies:
            continue
        lines = tool_lines(model)
        if not lines:
            continue
        _, close = bodies[tool.name]
        line_start = text.rfind("\n", 0, close) + 1
        if text[line_start:close].strip():
            insert = "\n" + "\n".join(lines) + "\n"
            pieces.append((close, insert))
        else:
            pieces.append((line_start, "\n".join(lines) + "\n"))
    for offset, insert in sorted(pieces, reverse=True):
        text = text[:offset] + insert + text[offset:]
    return text


def skeleton_of(contract: Contract) -> str:
    """The contract's text with every ``require``, ``should`` and ``effect`` of its tools
    removed (what ``learn`` starts from when the types, state and signatures are known)."""
    text = contract.source
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    for tool in contract.ir.tools:
        for cond in tool.conditions:
            if cond.strength in ("require", "should"):
                drop.update(range(cond.span.line - 1, cond.span.end_line))
        for stmt in tool.effects:
            drop.update(range(stmt.span.line - 1, stmt.span.end_line))
    kept = "".join(line for i, line in enumerate(lines) if i not in drop)
    return _EMPTY_EFFECT.sub("", kept)


_EMPTY_EFFECT = re.compile(
    r"^[ \t]*effect \{[ \t]*\n(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*\}[ \t]*\n", re.M
)


def drop_items(text: str, error_lines: list[int]) -> tuple[str, list[str]]:
    """Remove the learned items (a ``# learned:`` comment and the lines up to the next one or
    the end of the tool) holding ``error_lines`` (1-based); returns the text and what was
    dropped."""
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    dropped: list[str] = []
    for err in error_lines:
        i = err - 1
        if i >= len(lines):
            continue
        start = i
        while start >= 0 and not lines[start].lstrip().startswith("# learned:"):
            if lines[start].startswith("}") or _DECL.match(lines[start]):
                start = -1
                break
            start -= 1
        if start < 0 or start in drop:
            continue
        end = start + 1
        while (
            end < len(lines)
            and not lines[end].lstrip().startswith("# learned:")
            and not (lines[end].startswith("}"))
        ):
            end += 1
        drop.update(range(start, end))
        dropped.append(" ".join(x.strip() for x in lines[start + 1 : end])[:300])
    return "".join(x for i, x in enumerate(lines) if i not in drop), dropped


_ACCEPTED_KINDS = {
    "str": {"str"},
    "int": {"int"},
    "float": {"int", "float"},
    "number": {"int", "float"},
    "bool": {"bool"},
}
"""The value kinds (:func:`.atoms.value_kinds`) a declared scalar type takes."""


def _fits(declared: Any, values: Sequence[Any]) -> bool | None:
    """Whether every value has a kind the declared type takes: a plain scalar type, or
    ``list[S]`` of one (None: a type this check does not judge)."""
    kind = getattr(declared, "kind", None)
    name = str(getattr(declared, "name", ""))
    if kind == "named" and name in _ACCEPTED_KINDS:
        return not value_kinds(values) - _ACCEPTED_KINDS[name]
    args: tuple[Any, ...] = tuple(getattr(declared, "args", ()) or ())
    if kind == "generic" and name == "list" and len(args) == 1:
        if value_kinds(values) - {"list"}:
            return False
        items = [x for v in values for x in v]
        return _fits(args[0], items) is not False
    return None


def widen_accepts(contract: Contract, runs: Sequence[Run]) -> tuple[str, list[str]]:
    """The skeleton's text with ``DECLARED accepts any`` on every parameter declared as a plain
    scalar type (``str``, ``int``, ``float``, ``number``, ``bool``) or a list of one that
    successful recorded calls passed values of another kind (a dynamically typed tool: the
    declared type stays what agents are told); and the ``tool.param`` names widened."""
    values: dict[tuple[str, str], list[Any]] = {}
    for run in runs:
        for step in run.steps:
            if step.outcome == "ok":
                for name, value in step.args.items():
                    values.setdefault((step.tool, name), []).append(value)
    lines = contract.source.splitlines(keepends=True)
    inserts: list[tuple[int, int]] = []
    widened: list[str] = []
    for tool in contract.ir.tools:
        for param in tool.params:
            if param.accepts is not None:
                continue
            seen = values.get((tool.name, param.name), [])
            if param.optional or param.default is not None:
                seen = [v for v in seen if v is not None]
            span = param.type.span
            if _fits(param.type, seen) is not False or span.end_line - 1 >= len(lines):
                continue
            inserts.append((span.end_line - 1, span.end_col - 1))
            widened.append(f"{tool.name}.{param.name}")
    for line, col in sorted(inserts, reverse=True):
        text = lines[line]
        lines[line] = text[:col] + " accepts any" + text[col:]
    return "".join(lines), widened
