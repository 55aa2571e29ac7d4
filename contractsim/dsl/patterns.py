"""Regular-expression patterns of the language: whether one can be used, and matching it.

Patterns run on pydantic-core's Rust regex engine, which matches in linear time and refuses
backreferences and look-around. The checker asks :func:`pattern_problem` (front end); the
validators and the ``matches`` built-in call :func:`regex_search` (back end).
"""

from __future__ import annotations

import functools
import re
import warnings

# pydantic-core only (its Rust engine, loaded with ``import pydantic`` anyway): not pydantic's
# model machinery, which the front end never needs
from pydantic_core import SchemaError, SchemaValidator, core_schema

_NOT_LINEAR = ("look-around", "backreference")
"""What the linear-time engine refuses on principle (rather than as a syntax error)."""
_PYTHON_ONLY_NONLINEAR = re.compile(r"\(\?(?:=|!|<=|<!|P=)|\\[1-9]")
"""Look-around and backreferences as Python writes them (the engine calls them unknown flags)."""


def pattern_problem(pattern: str) -> tuple[str, str] | None:
    """Why a pattern cannot be used, as (code, message), or None when it is fine.

    The engine that matches (the Rust ``regex`` crate behind pydantic-core) decides: what it
    accepts is fine (``\\p{Greek}`` too), look-around and backreferences are E0403, anything
    else it refuses is a syntax problem, E0402 (with Python's message when Python's parser
    agrees that the syntax is wrong, as it names the position)."""
    try:
        _pattern_validator(pattern)
        return None
    except SchemaError as exc:
        reason = str(exc).strip().splitlines()[-1].removeprefix("error: ").strip()
        reason = reason.removeprefix("SchemaError: ")
    if any(word in reason for word in _NOT_LINEAR) or _PYTHON_ONLY_NONLINEAR.search(pattern):
        return "E0403", f"the pattern cannot be matched in linear time: {reason}"
    try:
        with warnings.catch_warnings():
            # Python's own hints about its future syntax (e.g. "possible set difference" for
            # `[a--b]`) are not the user's problem
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except re.error as exc:
        return "E0402", f"the pattern does not compile: {exc}"
    except (RecursionError, OverflowError, MemoryError):
        pass  # Python's recursive parser gives up on deep nesting: the engine's reason stands
    return "E0402", f"the pattern does not compile: {reason}"


@functools.lru_cache(maxsize=512)
def _pattern_validator(pattern: str) -> SchemaValidator:
    """The validator pydantic builds for ``Annotated[str, StringConstraints(pattern=…)]``."""
    return SchemaValidator(core_schema.str_schema(pattern=pattern))


@functools.lru_cache(maxsize=4096)
def _match_cached(pattern: str, text: str) -> bool:
    return _pattern_validator(pattern).isinstance_python(text)


def regex_search(pattern: str, text: str) -> bool:
    """JSON Schema ``pattern`` semantics (an unanchored search), in linear time."""
    return _match_cached(pattern, text)
