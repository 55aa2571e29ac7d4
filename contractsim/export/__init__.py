"""Exports of a contract to the ecosystems agents are built in.

``export(contract_ir, target, tool=None)`` with target ``jsonschema`` (JSON Schema 2020-12 of
each tool's arguments), ``openapi`` (an OpenAPI 3.1 document), ``openai`` (strict-mode function
tools), ``mcp`` (MCP tool definitions) or ``card`` (a compact text for a system prompt). All
targets share one IR → JSON Schema translation (:mod:`.schema`); what a target cannot express is
carried as ``x-contract-*`` extensions or in the description (see docs/export.md).

Modules: :mod:`.schema` (IR types → JSON Schema), :mod:`.extensions` (the ``x-contract-*``
keywords and the whole :func:`tool_schema`), :mod:`.openapi`, :mod:`.openai`, :mod:`.mcp` and
:mod:`.card` (one per target).
"""

from __future__ import annotations

import re
from typing import Any

from ..diagnostics import suggestion_hint
from ..dsl import ir
from .card import card
from .extensions import tool_schema
from .mcp import mcp_tool
from .openai import from_openai_arguments, openai_tool, to_openai_arguments
from .openapi import openapi
from .schema import SchemaTranslator

TARGETS = ("jsonschema", "openapi", "openai", "mcp", "card")
MAX_FUNCTION_NAME = 64
FUNCTION_NAME = re.compile(rf"[a-zA-Z0-9_-]{{1,{MAX_FUNCTION_NAME}}}")
"""A function name OpenAI accepts (``^[a-zA-Z0-9_-]{1,64}$``); the MCP export keeps to it too:
MCP allows 128 characters, but clients hand tool names on to model APIs that allow 64."""


class ExportError(ValueError):
    """An export that cannot be made: an unknown target or tool. ``hint`` says what would work."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def select_tools(contract: ir.Contract, tool: str | None) -> list[ir.Tool]:
    """All tools, or the one named (raises :class:`ExportError` with a did-you-mean)."""
    if tool is None:
        return list(contract.tools)
    found = contract.tool(tool)
    if found is None:
        names = [t.name for t in contract.tools]
        raise ExportError(
            f"the contract declares no tool `{tool}`", suggestion_hint(tool, names, "tool")
        )
    return [found]


def export(
    contract: ir.Contract, target: str, tool: str | None = None
) -> dict[str, Any] | list[dict[str, Any]] | str:
    """Export ``contract`` (its IR) to ``target``; ``tool`` limits it to one tool.

    * ``jsonschema``: one tool → its schema; all tools → ``{tool name: schema}``;
    * ``openapi``: the OpenAPI 3.1 document (with ``tool``, only that operation);
    * ``openai``, ``mcp``: one tool → its definition; all tools → a list, in declaration order;
    * ``card``: the text card(s), separated by a blank line.

    Raises :class:`ExportError` for an unknown target or tool.
    """
    if target not in TARGETS:
        raise ExportError(
            f"unknown export target `{target}`",
            suggestion_hint(target, TARGETS, "target") or "targets: " + ", ".join(TARGETS),
        )
    tools = select_tools(contract, tool)
    if target == "openapi":
        return openapi(contract, tools)
    if target == "card":
        return "\n".join(card(contract, t) for t in tools)
    if target == "jsonschema":
        schemas = {t.name: tool_schema(contract, t) for t in tools}
        return schemas[tools[0].name] if tool is not None else schemas
    for t in tools:
        if not FUNCTION_NAME.fullmatch(t.name):
            raise ExportError(
                f"tool `{t.name}` cannot be exported to {target}: its name has {len(t.name)} "
                f"characters, and a function name has at most {MAX_FUNCTION_NAME} (letters, "
                "digits, `_` and `-`)",
                "rename the tool, or export the other tools one by one with --tool",
            )
    make = openai_tool if target == "openai" else mcp_tool
    defs = [make(contract, t) for t in tools]
    return defs[0] if tool is not None else defs


__all__ = [
    "TARGETS",
    "ExportError",
    "SchemaTranslator",
    "card",
    "export",
    "from_openai_arguments",
    "mcp_tool",
    "openai_tool",
    "openapi",
    "select_tools",
    "to_openai_arguments",
    "tool_schema",
]
