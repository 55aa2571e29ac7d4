"""An OpenAPI 3.1 document: one ``POST /tools/{name}`` operation per tool.

Error codes map to HTTP statuses: ``INVALID_ARGUMENT`` → 400, ``PROTOCOL_VIOLATION`` and every
``require … else CODE`` → 409 (the world's state does not allow the call), every ``fails``
outcome → 502 (the call was made and failed). Each status's response is a ``oneOf`` with one
error schema per code (``code`` is a ``const``).
"""

from __future__ import annotations

from typing import Any

from ..dsl import ir
from ..dsl.pretty import expr_text
from .extensions import ErrorCode, error_codes, tool_extensions
from .schema import SchemaTranslator, type_label

ERROR_SCHEMA = "contractsim.Error"
_STATUS = {"argument": "400", "protocol": "409", "require": "409", "outcome": "502"}
_STATUS_TEXT = {
    "400": "The arguments do not fit the parameters' types or constraints.",
    "409": "The call is not allowed in the current state (a protocol or a precondition).",
    "502": "The call was made and failed (a declared failure outcome).",
}


def _summary(tool: ir.Tool) -> str:
    if not tool.description:
        return f"Call {tool.name}"
    first = tool.description.strip().split(". ")[0].rstrip(".")
    return first if len(first) <= 120 else first[:117] + "..."


def _error_variant(codes: list[ErrorCode]) -> dict[str, Any]:
    """One error schema for a code (several declarations of a code share it)."""
    lines = []
    for e in codes:
        text = e.message or e.code
        if e.condition:
            text = f"when not ({e.condition}): {text}"
        if e.hint:
            text += f" (hint: {e.hint})"
        lines.append(text)
    return {
        "title": codes[0].code,
        "description": "\n".join(lines),
        "allOf": [{"$ref": f"#/components/schemas/{ERROR_SCHEMA}"}],
        "properties": {"code": {"const": codes[0].code}},
        "x-contract-error": [e.to_json() for e in codes],
    }


def _responses(
    contract: ir.Contract, tool: ir.Tool, tr: SchemaTranslator
) -> dict[str, dict[str, Any]]:
    returns = tr.returns_schema(tool)
    ok: dict[str, Any] = {
        "description": "The call succeeded (a success or partial outcome).",
        "content": {"application/json": {"schema": returns or {"type": "object"}}},
    }
    out: dict[str, dict[str, Any]] = {"200": ok}
    by_status: dict[str, dict[str, list[ErrorCode]]] = {}
    for e in error_codes(contract, tool):
        by_status.setdefault(_STATUS[e.source], {}).setdefault(e.code, []).append(e)
    for status in sorted(by_status):
        variants = [_error_variant(codes) for codes in by_status[status].values()]
        schema = variants[0] if len(variants) == 1 else {"oneOf": variants}
        codes = ", ".join(by_status[status])
        out[status] = {
            "description": f"{_STATUS_TEXT[status]} Codes: {codes}.",
            "content": {"application/json": {"schema": schema}},
        }
    return out


def error_schema() -> dict[str, Any]:
    """The shape of every error response: ``{code, message, hint?}``."""
    return {
        "type": "object",
        "description": "A contract violation or failure, as the simulator and the guard report it.",
        "properties": {
            "code": {"type": "string", "description": "the stable UPPER_SNAKE_CASE code"},
            "message": {"type": "string", "description": "the message, with actual values"},
            "hint": {"type": "string", "description": "how to recover"},
        },
        "required": ["code", "message"],
    }


def openapi(contract: ir.Contract, tools: list[ir.Tool]) -> dict[str, Any]:
    """The OpenAPI 3.1 document for ``tools`` (operation extensions carry ``x-contract-*``)."""
    tr = SchemaTranslator(contract, "#/components/schemas/")
    info: dict[str, Any] = {"title": contract.header.name, "version": contract.header.version}
    if contract.header.description:
        info["description"] = contract.header.description
    paths: dict[str, Any] = {}
    for tool in tools:
        operation: dict[str, Any] = {
            "operationId": tool.name,
            "summary": _summary(tool),
        }
        if tool.description:
            operation["description"] = tool.description
        if tool.tags:
            operation["tags"] = [t.name for t in tool.tags]
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": tr.params_schema(tool)}},
        }
        operation["responses"] = _responses(contract, tool, tr)
        operation.update(tool_extensions(contract, tool))
        paths[f"/tools/{tool.name}"] = {"post": operation}
    schemas = tr.definitions()
    schemas[ERROR_SCHEMA] = error_schema()
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": info,
        "paths": paths,
        "components": {"schemas": dict(sorted(schemas.items()))},
    }
    if contract.machines:
        doc["x-contract-machines"] = [
            {
                "machine": m.name,
                **({"description": m.description} if m.description else {}),
                "states": [s.name for s in m.states],
                "initial": [s.name for s in m.initial],
                "final": [s.name for s in m.finals],
                "transitions": [
                    {
                        "from": t.source,
                        "to": t.target,
                        "on": t.tool + (f".{t.outcome}" if t.outcome else ""),
                        **({"when": expr_text(t.when)} if t.when is not None else {}),
                    }
                    for t in m.transitions
                ],
            }
            for m in contract.machines
        ]
    if contract.state:
        doc["x-contract-state"] = [
            {
                "name": v.name,
                "type": type_label(v.type),
                "initial": "unknown" if v.init is None else expr_text(v.init),
                **({"description": v.description} if v.description else {}),
            }
            for v in contract.state
        ]
    return doc
