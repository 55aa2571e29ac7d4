"""Plan arguments that pass an earlier step's result on: ``"$1.result.access_token"``.

A string argument (anywhere inside the arguments: a list item, a map value) of the form
``$N.result`` followed by ``.field`` and ``[index]`` parts names what step ``N`` (1-based)
returned on the branch being simulated — a fresh value in simulation, so that a later
``token == session_token`` is decided. ``$$`` at the start of a string writes a literal ``$``
(``"$$1.result"`` is the text ``$1.result``). Any other string is passed on as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..compiler.values import UNKNOWN, FMap, Fresh
from ..records import record

_REFERENCE = re.compile(r"\$(\d+)\.([A-Za-z_]\w*)(.*)", re.S)
_PART = re.compile(r"\.([A-Za-z_]\w*)|\[(\d+)\]")

FAILED: Any = object()
"""The result of a step that failed on a branch: a reference to it is a failing step there."""


@record(frozen=True)
class Reference:
    """``$N.result…``: step ``step``'s result, then ``path`` (field names and list indexes)."""

    text: str
    step: int
    path: tuple[str | int, ...]


class ReferenceError_(Exception):
    """A reference that names nothing: the message says what is wrong and what to write."""


def parse(text: str) -> Reference | str:
    """A plan string as a :class:`Reference`, or the literal text it stands for (``$$`` → ``$``).
    Raises :class:`ReferenceError_` for a string that starts like a reference (``$N.``) but is
    not one."""
    if not text.startswith("$"):
        return text
    if text.startswith("$$"):
        return text[1:]
    m = _REFERENCE.fullmatch(text)
    if m is None:
        return text  # "$5.00", "$HOME": no reference
    step, head, rest = int(m.group(1)), m.group(2), m.group(3)
    if head != "result":
        raise ReferenceError_(
            f"`{text}` is not a reference: write `${step}.result…` (or `$${text[1:]}` for the "
            "literal text)"
        )
    path: list[str | int] = []
    pos = 0
    while pos < len(rest):
        part = _PART.match(rest, pos)
        if part is None:
            raise ReferenceError_(
                f"`{text}`: cannot read `{rest[pos:]}`; write `.field` or `[index]` after "
                f"`${step}.result` (or `$${text[1:]}` for the literal text)"
            )
        path.append(part.group(1) if part.group(1) is not None else int(part.group(2)))
        pos = part.end()
    return Reference(text, step, tuple(path))


@record(frozen=True)
class Template:
    """A step's arguments with the references found in them (``None`` when there are none and
    no ``$$`` escape either: the arguments are then used as they are)."""

    args: Any  # the arguments, with Reference objects in place of reference strings
    references: tuple[Reference, ...]


def template(args: Mapping[str, Any]) -> Template | None:
    """The references (and escapes) in a step's arguments; None when there are none.
    Raises :class:`ReferenceError_` for a malformed one."""
    found: list[Reference] = []
    changed = [False]

    def walk(value: Any) -> Any:
        if type(value) is str:
            if not value.startswith("$"):
                return value
            out = parse(value)
            if isinstance(out, Reference):
                found.append(out)
            if out is not value:
                changed[0] = True
            return out
        if isinstance(value, Mapping):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    out = {k: walk(v) for k, v in args.items()}
    if not changed[0]:
        return None
    return Template(out, tuple(found))


def static_problem(ref: Reference, index: int, steps: int) -> str | None:
    """What is wrong with a reference in step ``index`` (1-based) of a plan of ``steps`` steps
    whatever the branch: a step out of range, the step itself or a later one."""
    if ref.step < 1 or ref.step > steps:
        return f"`{ref.text}` names step {ref.step}, but the plan has steps 1 to {steps}"
    if ref.step >= index:
        return (
            f"`{ref.text}` in step {index} names step {ref.step}, which has not run yet; "
            "a step can pass on the result of an earlier step only"
        )
    return None


def plan_problem(args: Mapping[str, Any], index: int, steps: int) -> Template | str | None:
    """A plan step's references (``None`` when it has none), or what is wrong with them whatever
    the branch: malformed, out of range, not an earlier step."""
    try:
        found = template(args)
    except ReferenceError_ as exc:
        return str(exc)
    if found is None:
        return None
    problem = next((p for r in found.references if (p := static_problem(r, index, steps))), None)
    return found if problem is None else problem


def resolve(template_: Template, results: tuple[Any, ...], index: int) -> dict[str, Any]:
    """The arguments with every reference replaced by the value it names on a branch whose
    steps returned ``results``. Raises :class:`ReferenceError_` when one names nothing."""

    def value_of(ref: Reference) -> Any:
        problem = static_problem(ref, index, max(len(results) + 1, index))
        if problem is not None:
            raise ReferenceError_(problem)
        value = results[ref.step - 1]
        if value is FAILED:
            raise ReferenceError_(
                f"`{ref.text}`: step {ref.step} failed on this branch, so it returned nothing"
            )
        where = f"${ref.step}.result"
        for part in ref.path:
            if value is UNKNOWN:
                return UNKNOWN  # a part of a result nobody has seen
            if isinstance(part, str):
                if not isinstance(value, FMap):
                    raise ReferenceError_(
                        f"`{ref.text}`: {where} is {_kind(value)}, which has no field `{part}`"
                    )
                if part not in value:
                    fields = ", ".join(f"`{k}`" for k in sorted(map(str, value))) or "none"
                    raise ReferenceError_(
                        f"`{ref.text}`: {where} has no field `{part}` (its fields: {fields})"
                    )
                value = value[part]
                where += f".{part}"
            else:
                if not isinstance(value, tuple):
                    raise ReferenceError_(f"`{ref.text}`: {where} is {_kind(value)}, not a list")
                if part >= len(value):
                    raise ReferenceError_(
                        f"`{ref.text}`: {where} has {len(value)} item(s), no item {part}"
                    )
                value = value[part]
                where += f"[{part}]"
        return value

    def walk(value: Any) -> Any:
        if isinstance(value, Reference):
            return value_of(value)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return {k: walk(v) for k, v in template_.args.items()}


def _kind(value: Any) -> str:
    if value is None:
        return "null (the tool declares no `-> TYPE`)"
    if isinstance(value, Fresh):
        return "a fresh text"
    if isinstance(value, FMap):
        return "a record"
    if isinstance(value, tuple):
        return "a list"
    return f"a {type(value).__name__}"
