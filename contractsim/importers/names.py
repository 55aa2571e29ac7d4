"""Deterministic contract identifiers for names found in foreign specs, and contract text
literals for untrusted strings."""

from __future__ import annotations

import re

from ..dsl.pretty import literal_text

# The seven words an expression always reads as a literal or an operator (docs/language.md).
RESERVED = frozenset({"true", "false", "null", "and", "or", "not", "in"})
# Words a type name must not be: primitives, generics and type keywords.
TYPE_WORDS = RESERVED | frozenset(
    {"bool", "int", "float", "str", "list", "set", "map", "tuple", "record", "enum", "union", "by"}
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def identifier(
    name: str, taken: set[str] | frozenset[str] = frozenset(), avoid: frozenset[str] = RESERVED
) -> str:
    """``name`` as a contract identifier: characters other than ASCII letters, digits and ``_``
    become ``_``, a leading digit gets a ``_`` prefix, a reserved word a ``_`` suffix, and a
    name already in ``taken`` a ``_2``, ``_3`` … suffix. The same input gives the same output."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name) or "_"
    if out[0].isdigit():
        out = "_" + out
    if out in avoid:
        out += "_"
    if out in taken:
        n = 2
        while f"{out}_{n}" in taken:
            n += 1
        out = f"{out}_{n}"
    return out


def is_identifier(name: str) -> bool:
    return _IDENT.fullmatch(name) is not None and name not in RESERVED


def code_name(text: str) -> str:
    """An UPPER_SNAKE_CASE error code."""
    out = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper() or "ERROR"
    return out if not out[0].isdigit() else "HTTP_" + out


def string_text(value: str) -> str:
    """A plain contract string literal with every special character escaped."""
    return literal_text(value)


def template_text(value: str) -> str:
    """A message template literal: braces doubled so that nothing is interpolated."""
    return literal_text(value.replace("{", "{{").replace("}", "}}"))


def pattern_text(value: str) -> str:
    """A pattern literal: raw when it can be (readable), else an escaped plain string."""
    if '"' not in value and value.isprintable() and not value.endswith("\\"):
        return literal_text(value, raw=True)
    return literal_text(value)


def comment_text(value: str) -> str:
    """Text safe inside a ``#`` comment: one line, control characters escaped."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in value)
