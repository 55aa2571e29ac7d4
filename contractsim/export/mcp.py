"""MCP tool definitions (``tools/list`` entries): name, description, inputSchema, outputSchema,
annotations, and the contract in ``_meta``.

Annotations come from the contract's ``risk`` list. A hint the contract does not decide is left
out, so MCP's cautious default applies (``destructiveHint`` and ``openWorldHint`` default to
true): ``readOnlyHint`` = read_only; ``destructiveHint`` = true for destructive, false for
read_only, else absent; ``idempotentHint`` = idempotent; ``openWorldHint`` = true for
open_world, else absent.
"""

from __future__ import annotations

from typing import Any

from ..dsl import ir
from .card import card_lines
from .extensions import tool_extensions
from .schema import SchemaTranslator


def mcp_annotations(tool: ir.Tool) -> dict[str, Any]:
    """MCP ``ToolAnnotations`` from the tool's risk annotations."""
    out: dict[str, Any] = {"readOnlyHint": tool.has_risk("read_only")}
    if tool.has_risk("destructive"):
        out["destructiveHint"] = True
    elif tool.has_risk("read_only"):
        out["destructiveHint"] = False
    out["idempotentHint"] = tool.has_risk("idempotent")
    if tool.has_risk("open_world"):
        out["openWorldHint"] = True
    return out


def mcp_tool(contract: ir.Contract, tool: ir.Tool) -> dict[str, Any]:
    """One MCP tool definition. ``outputSchema`` is the return record's schema, or
    ``{"result": T}`` for a return type that is not a record (``_meta`` says so)."""
    tr = SchemaTranslator(contract)
    input_schema = tr.params_schema(tool)
    output: dict[str, Any] | None = None
    wrapped = False
    if tool.returns is not None:
        output, wrapped = tr.object_schema(tool.returns)
    defs = tr.definitions()
    if defs:
        input_schema["$defs"] = defs
        if output is not None:
            output["$defs"] = defs
    parts = [tool.description] if tool.description else []
    parts.append("Contract:\n" + "\n".join(card_lines(contract, tool, with_signature=False)))
    out: dict[str, Any] = {
        "name": tool.name,
        "description": "\n\n".join(parts),
        "inputSchema": input_schema,
    }
    if output is not None:
        out["outputSchema"] = output
    out["annotations"] = mcp_annotations(tool)
    meta = tool_extensions(contract, tool)
    if wrapped:
        meta["x-contract-output-wrapped"] = "result"
    out["_meta"] = meta
    return out
