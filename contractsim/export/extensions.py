"""What JSON Schema cannot say about a tool, as plain data: the ``x-contract-*`` extensions.

Every target carries these (as schema/operation extensions, in MCP ``_meta``, or in the
description text), so no construct of a contract is silently dropped by an export.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..compiler.constants import constant_value
from ..dsl import ir
from ..dsl.pretty import expr_text, literal_text
from ..dsl.walk import assigned_roots
from .schema import JSON_SCHEMA_DIALECT, SchemaTranslator, jsonable, type_label

INVALID_ARGUMENT = "INVALID_ARGUMENT"
PROTOCOL_VIOLATION = "PROTOCOL_VIOLATION"
PRECONDITION_FAILED = "PRECONDITION_FAILED"  # a `require` without a code


def stmt_lines(stmts: tuple[ir.Stmt, ...], indent: str = "") -> list[str]:
    """Statements in contract syntax, one per line (blocks indented by two spaces)."""
    out: list[str] = []
    for s in stmts:
        if isinstance(s, ir.Assign):
            out.append(f"{indent}{expr_text(s.target)} {s.op} {expr_text(s.value, 1)}")
        elif isinstance(s, ir.MethodCall):
            args = ", ".join(expr_text(a) for a in s.args)
            out.append(f"{indent}{expr_text(s.target)}.{s.method}({args})")
        elif isinstance(s, ir.If):
            out.append(f"{indent}if {expr_text(s.cond)} {{")
            out.extend(stmt_lines(s.then, indent + "  "))
            if s.orelse:
                out.append(f"{indent}}} else {{")
                out.extend(stmt_lines(s.orelse, indent + "  "))
            out.append(f"{indent}}}")
        elif isinstance(s, ir.For):
            out.append(f"{indent}for {s.var} in {expr_text(s.coll)} {{")
            out.extend(stmt_lines(s.body, indent + "  "))
            out.append(f"{indent}}}")
        elif isinstance(s, ir.Let):
            out.append(f"{indent}let {s.name} = {expr_text(s.value, 1)}")
        elif isinstance(s, ir.Warn):
            message = f" {literal_text(s.message.source)}" if s.message else ""
            out.append(f"{indent}warn {s.code}{message}")
        elif isinstance(s, ir.Var):
            out.append(f"{indent}var {s.name} = {expr_text(s.value)}")
        elif isinstance(s, ir.Fail):
            message = f" {literal_text(s.message.source)}" if s.message else ""
            out.append(f"{indent}fail {s.code}{message}")
        elif isinstance(s, (ir.Break, ir.Continue)):
            out.append(f"{indent}{s.kind}")
        else:
            fields = ", ".join(f"{f.name} = {expr_text(f.value, 1)}" for f in s.fields)
            out.append(f"{indent}report {fields}")
    return out


def writes(contract: ir.Contract, stmts: tuple[ir.Stmt, ...]) -> list[str]:
    """The state variables a block may change, sorted."""
    state = {v.name for v in contract.state}
    return sorted(assigned_roots(stmts) & state)


def _template(t: ir.Template | None) -> str | None:
    return None if t is None else t.source


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None and v != [] and v != {}}


@dataclass(frozen=True)
class ErrorCode:
    """A code a call can fail with: where it comes from, its message and hint templates."""

    code: str
    source: str  # "argument", "protocol", "require" or "outcome"
    message: str | None = None
    hint: str | None = None
    condition: str | None = None

    def to_json(self) -> dict[str, Any]:
        return _clean(
            {
                "code": self.code,
                "source": self.source,
                "condition": self.condition,
                "message": self.message,
                "hint": self.hint,
            }
        )


def machines_of(contract: ir.Contract, tool: ir.Tool) -> list[ir.Machine]:
    """The protocol machines whose transitions mention the tool."""
    return [m for m in contract.machines if any(t.tool == tool.name for t in m.transitions)]


def error_codes(contract: ir.Contract, tool: ir.Tool) -> list[ErrorCode]:
    """Every way a call can fail, in a stable order: invalid arguments, protocol violations,
    hard preconditions (in order), failure outcomes (in order)."""
    out = [
        ErrorCode(
            INVALID_ARGUMENT,
            "argument",
            "an argument does not fit the parameter's type or constraints",
            "fix the named field as the message says",
        )
    ]
    if machines_of(contract, tool):
        out.append(
            ErrorCode(
                PROTOCOL_VIOLATION,
                "protocol",
                f"{tool.name} is not allowed in the protocol's current state",
                "the error names the allowed states and the shortest way there",
            )
        )
    for c in tool.conditions:
        if c.strength == "require":
            out.append(
                ErrorCode(
                    c.code or PRECONDITION_FAILED,
                    "require",
                    _template(c.message),
                    _template(c.hint),
                    expr_text(c.cond),
                )
            )
    for o in tool.outcomes:
        if o.outcome == "fails" and o.code:
            out.append(ErrorCode(o.code, "outcome", _template(o.message), _template(o.hint)))
    return out


def cost_json(contract: ir.Contract, tool: ir.Tool) -> dict[str, Any] | None:
    """The tool's cost: its expression, and its value when it is a constant."""
    if tool.cost is None:
        return None
    out: dict[str, Any] = {"expression": expr_text(tool.cost)}
    const = constant_value(tool.cost, contract)
    if const is not None and isinstance(const.value, (int, float)):
        out["value"] = const.value
    return out


def _event(ev: ir.EventRef | None) -> dict[str, Any]:
    if ev is None:
        return {}
    return _clean({"event": ev.name, "probability": ev.probability})


def outcomes_json(contract: ir.Contract, tool: ir.Tool) -> list[dict[str, Any]]:
    """The ways a call can end (one implicit ``ok`` success when none is declared)."""
    if not tool.outcomes:
        return [{"name": "ok", "kind": "success"}]
    out = []
    for o in tool.outcomes:
        out.append(
            _clean(
                {
                    "name": o.name,
                    "kind": o.outcome,
                    "code": o.code,
                    "message": _template(o.message),
                    "hint": _template(o.hint),
                    **_event(o.event),
                    "when": None if o.when is None else expr_text(o.when),
                    "observed_when": None if o.observed is None else expr_text(o.observed),
                    "writes": writes(contract, o.body),
                    "statements": stmt_lines(o.body),
                }
            )
        )
    return out


def flow_json(contract: ir.Contract, tool: ir.Tool) -> dict[str, Any] | None:
    """The tool's internal flow: steps with their statements and the transitions."""
    if tool.flow is None:
        return None
    f = tool.flow
    return _clean(
        {
            "initial": f.initial,
            "steps": [
                _clean(
                    {
                        "name": s.name,
                        "writes": writes(contract, s.body),
                        "statements": stmt_lines(s.body),
                    }
                )
                for s in f.steps
            ],
            "transitions": [
                _clean(
                    {
                        "from": t.source,
                        ("outcome" if t.to_outcome else "to"): t.target,
                        **_event(t.event),
                        "when": None if t.when is None else expr_text(t.when),
                    }
                )
                for t in f.transitions
            ],
        }
    )


def protocol_json(contract: ir.Contract, tool: ir.Tool) -> list[dict[str, Any]]:
    """Per protocol machine that mentions the tool: the states it may be called in and the
    transitions it takes."""
    out = []
    for m in machines_of(contract, tool):
        mine = [t for t in m.transitions if t.tool == tool.name]
        out.append(
            _clean(
                {
                    "machine": m.name,
                    "description": m.description,
                    "initial": [s.name for s in m.initial],
                    "allowed_in": sorted({t.source for t in mine}),
                    "transitions": [
                        _clean(
                            {
                                "from": t.source,
                                "to": t.target,
                                "on": t.tool + (f".{t.outcome}" if t.outcome else ""),
                                "when": None if t.when is None else expr_text(t.when),
                            }
                        )
                        for t in mine
                    ],
                }
            )
        )
    return out


def tool_extensions(contract: ir.Contract, tool: ir.Tool) -> dict[str, Any]:
    """Everything about a tool beyond its argument types, as ``x-contract-*`` keys (only the
    constructs the tool has; outcomes always, with the implicit ``ok``)."""
    pre = [
        _clean(
            {
                "strength": c.strength,
                "condition": expr_text(c.cond),
                "code": c.code or (PRECONDITION_FAILED if c.strength == "require" else None),
                "message": _template(c.message),
                "hint": _template(c.hint),
            }
        )
        for c in tool.conditions
        if c.strength != "ensure"
    ]
    post = [
        _clean(
            {
                "condition": expr_text(c.cond),
                "code": c.code,
                "message": _template(c.message),
            }
        )
        for c in tool.conditions
        if c.strength == "ensure"
    ]
    effects = _clean(
        {"writes": writes(contract, tool.effects), "statements": stmt_lines(tool.effects)}
    )
    reports = [
        _clean({"name": f.name, "type": type_label(f.type), "description": f.description})
        for f in tool.reports
    ]
    return _clean(
        {
            "x-contract-preconditions": pre,
            "x-contract-postconditions": post,
            "x-contract-effects": effects,
            "x-contract-outcomes": outcomes_json(contract, tool),
            "x-contract-flow": flow_json(contract, tool),
            "x-contract-reports": reports,
            "x-contract-errors": [e.to_json() for e in error_codes(contract, tool)],
            "x-contract-protocol": protocol_json(contract, tool),
            "x-contract-cost": cost_json(contract, tool),
            "x-contract-tags": [t.name for t in tool.tags],
            "x-contract-risk": [r.name for r in tool.risks],
        }
    )


__all__ = ["ErrorCode", "error_codes", "jsonable", "stmt_lines", "tool_extensions", "writes"]


def tool_schema(contract: ir.Contract, tool: ir.Tool) -> dict[str, Any]:
    """The JSON Schema 2020-12 of one tool's arguments: a closed object with ``$defs`` for the
    named types it uses, the return type as ``x-contract-returns`` and everything else the
    contract says about the tool as ``x-contract-*`` keywords (annotations to a validator)."""
    tr = SchemaTranslator(contract)
    out: dict[str, Any] = {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": tool.name,
    }
    if tool.description:
        out["description"] = tool.description
    out.update(tr.params_schema(tool))
    returns = tr.returns_schema(tool)
    defs = tr.definitions()
    if defs:
        out["$defs"] = defs
    if returns is not None:
        out["x-contract-returns"] = returns
    out.update(tool_extensions(contract, tool))
    return out
