"""Validation errors as contract-level problems (field path, rule, value, hint), and why a
constant does not satisfy its type. Only pydantic-core here: the checker reads the errors of
validators built without pydantic's model machinery (:mod:`.core_schemas`), the simulator those
of :mod:`.validators`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import SchemaError, ValidationError

from ..records import record
from .constants import EMPTY
from .formats import FORMAT_EXAMPLES
from .values import freeze, show


@record(frozen=True)
class ArgProblem:
    """One argument that failed validation: where, which rule, what was given, what to do."""

    path: str
    rule: str
    message: str
    value: Any
    hint: str

    def text(self) -> str:
        return f"`{self.path}`: {self.message}"


def value_problem(validate: Callable[[Any], Any], value: Any) -> str | None:
    """Why ``validate`` (a validator's ``validate_python``) refuses a plain constant value, as
    the first problem's message, or None. ``{}`` (:data:`EMPTY`, a set or a map) conforms when
    either does."""
    if value is EMPTY:
        if value_problem(validate, {}) is None:
            return None
        value = []
    try:
        validate(value)
    except ValidationError as exc:
        problems = problems_from(exc, "value")
        return problems[0].message if problems else str(exc)
    except (SchemaError, TypeError, ValueError):
        return None
    return None


# --------------------------------------------------------------------------- validation errors


def problems_from(exc: ValidationError, root: str = "") -> list[ArgProblem]:
    """Pydantic's errors as contract-level problems naming the field path, rule, value and fix."""
    out: list[ArgProblem] = []
    for err in exc.errors(include_url=False):
        loc = [str(part) for part in err["loc"] if not _is_internal_loc(part)]
        path = ".".join([root, *loc]) if root else ".".join(loc) or "value"
        kind = err["type"]
        ctx = err.get("ctx") or {}
        given = None if kind == "missing" else err.get("input")
        message, hint = _explain(kind, ctx, given, err["msg"], loc[-1] if loc else root)
        if kind == "extra_forbidden" and not (root == "args" and len(loc) == 1):
            message, hint = "is not a declared field", "remove it, or check the field names"
        out.append(ArgProblem(path=path, rule=kind, message=message, value=given, hint=hint))
    return out


def _is_internal_loc(part: Any) -> bool:
    text = str(part)
    return (
        text.startswith(("function-after[", "tagged-union[", "lax-or-strict["))
        or text
        in (
            "str",
            "int",
            "float",
            "bool",
            "none",
            "tuple[str, ...]",
        )
        or "[" in text
        and "]" in text
        and not text.isdigit()
        and "," in text
    )


def _explain(
    kind: str, ctx: dict[str, Any], given: Any, default: str, field: str
) -> tuple[str, str]:
    got = f" (got {show(freeze(given))})" if kind != "missing" else ""
    if kind == "missing":
        return "is required but missing", f"add `{field}` to the arguments"
    if kind == "extra_forbidden":
        return (
            "is not a parameter",
            "remove it, or check the spelling against the tool's parameters",
        )
    if kind == "string_pattern_mismatch":
        pattern = ctx.get("pattern", "")
        return (
            f'does not match the pattern r"{pattern}"{got}',
            f'give a value matching r"{pattern}"',
        )
    if kind == "format":
        fmt = ctx.get("format", "")
        return (f"is not a valid {fmt}{got}", f"for example {FORMAT_EXAMPLES.get(str(fmt), '')}")
    if kind in ("string_too_long", "too_long"):
        limit = ctx.get("max_length")
        unit = "characters" if kind.startswith("string") else "items"
        return (
            f"is too long: at most {limit} {unit}{got}",
            f"shorten it to at most {limit} {unit}",
        )
    if kind in ("string_too_short", "too_short"):
        limit = ctx.get("min_length")
        unit = "characters" if kind.startswith("string") else "items"
        return (f"is too short: at least {limit} {unit}{got}", f"give at least {limit} {unit}")
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = ctx.get("ge", ctx.get("le", ctx.get("gt", ctx.get("lt"))))
        word = {
            "greater_than_equal": "at least",
            "less_than_equal": "at most",
            "greater_than": "more than",
            "less_than": "less than",
        }[kind]
        return (f"must be {word} {bound}{got}", f"give a value {word} {bound}")
    if kind == "union_mismatch":
        options = ctx.get("options", "")
        return (f"must be one of {options}{got}", f"give a value of one of the types {options}")
    if kind == "literal_error":
        expected = ctx.get("expected", "")
        return (f"must be one of {expected}{got}", f"use one of {expected}")
    if kind == "union_tag_invalid":
        return (
            f"has an unknown tag{got}",
            f"the tag `{ctx.get('discriminator', '')}` must be one of "
            f"{ctx.get('expected_tags', '')}",
        )
    if kind == "union_tag_not_found":
        return ("has no tag field", f"add the field {ctx.get('discriminator', '')}")
    noun = kind.replace("_type", "").replace("_parsing", "").replace("_", " ")
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return (f"must be {_article(noun)}{got}", f"give {_article(noun)}")
    return (default[0].lower() + default[1:] + got, "fix the value to fit the parameter's type")


def _article(noun: str) -> str:
    nouns = {
        "string": "a string",
        "int": "an integer",
        "float": "a number",
        "bool": "true or false",
        "dict": "an object",
        "list": "a list",
        "tuple": "a list",
        "set": "a list of distinct items",
        "frozen set": "a list of distinct items",
        "model": "an object",
        "none required": "null",
    }
    return nouns.get(noun, noun)
