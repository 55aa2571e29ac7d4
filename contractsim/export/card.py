"""A compact text of one tool's contract, written for an LLM's system prompt: its signature, what
it needs, what it changes, how it can end, its errors and how to recover, its risk."""

from __future__ import annotations

from ..diagnostics import visible
from ..dsl import ir
from ..dsl.pretty import expr_text
from .extensions import (
    cost_json,
    error_codes,
    machines_of,
    outcomes_json,
    stmt_lines,
    writes,
)
from .schema import type_label


def _named_types(contract: ir.Contract, types: list[ir.TypeExpr]) -> list[ir.TypeDecl]:
    decls = {t.name: t for t in contract.types}
    order: list[str] = []

    def visit(t: ir.TypeExpr) -> None:
        if isinstance(t, ir.NamedType):
            if t.name in decls and t.name not in order:
                order.append(t.name)
                visit(decls[t.name].type)
        elif isinstance(t, ir.GenericType):
            for a in t.args:
                visit(a)
        elif isinstance(t, ir.RecordType):
            for f in t.fields:
                visit(f.type)
        elif isinstance(t, ir.TaggedUnionType):
            for v in t.variants:
                visit(v.type)
        elif isinstance(t, ir.UnionType):
            for o in t.options:
                visit(o)

    for t in types:
        visit(t)
    return [decls[n] for n in order]


def signature(tool: ir.Tool) -> str:
    """``name(param: Type constraints = default, opt?: T) -> Returns``."""
    params = []
    for p in tool.params:
        text = f"{p.name}{'?' if p.optional else ''}: {type_label(p.type)}"
        if p.default is not None:
            text += f" = {expr_text(p.default)}"
        params.append(text)
    out = f"{tool.name}({', '.join(params)})"
    if tool.returns is not None:
        out += f" -> {type_label(tool.returns)}"
    return out


def inline_statements(stmts: tuple[ir.Stmt, ...]) -> str:
    """Statements on one line: ``a += 1; if c { b = 2 } else { b = 3 }``."""
    out = ""
    for line in stmt_lines(stmts):
        token = line.strip()
        if out and not out.endswith("{") and not token.startswith("}"):
            out += "; "
        elif out:
            out += " "
        out += token
    return out


def _condition(c: ir.Condition, fallback: str | None) -> str:
    code = c.code or fallback
    return expr_text(c.cond) + (f" (else {code})" if code else "")


def card_lines(contract: ir.Contract, tool: ir.Tool, with_signature: bool = True) -> list[str]:
    """The card as lines (``with_signature=False`` leaves out the first line and the
    description, for targets that carry both elsewhere)."""
    lines: list[str] = []
    if with_signature:
        lines.append(signature(tool))
        if tool.description:
            lines.append(tool.description)
    described = [p for p in tool.params if p.description]
    if described and with_signature:
        lines.append("Parameters:")
        lines.extend(f"  - {p.name}: {p.description}" for p in described)
    types = [p.type for p in tool.params] + ([tool.returns] if tool.returns else [])
    decls = _named_types(contract, types)
    if decls and with_signature:
        lines.append("Types:")
        for d in decls:
            text = f"  - {d.name} = {type_label(d.type)}"
            if d.description:
                text += f"  ({d.description})"
            lines.append(text)
    requires = [c for c in tool.conditions if c.strength == "require"]
    shoulds = [c for c in tool.conditions if c.strength == "should"]
    ensures = [c for c in tool.conditions if c.strength == "ensure"]
    machines = machines_of(contract, tool)
    if requires or machines:
        lines.append("Needs (otherwise the call fails and changes nothing):")
        for m in machines:
            options = [
                t.source + (f" (when {expr_text(t.when)})" if t.when is not None else "")
                for t in m.transitions
                if t.tool == tool.name
            ]
            lines.append(f"  - protocol {m.name} in state {' or '.join(sorted(set(options)))}")
        lines.extend(f"  - {_condition(c, 'PRECONDITION_FAILED')}" for c in requires)
    if shoulds:
        lines.append("Should hold (otherwise a warning; the call proceeds):")
        for c in shoulds:
            text = f"  - {_condition(c, None)}"
            if c.message:
                text += f": {c.message.source}"
            if c.hint:
                text += f" -> {c.hint.source}"
            lines.append(text)
    changed = set(writes(contract, tool.effects))
    for declared in tool.outcomes:
        if declared.outcome != "fails":
            changed.update(writes(contract, declared.body))
    if tool.flow is not None:
        for s in tool.flow.steps:
            changed.update(writes(contract, s.body))
    lines.append("Changes on success: " + (", ".join(sorted(changed)) or "nothing"))
    if tool.effects:
        lines.append(f"  effect: {inline_statements(tool.effects)}")
    if tool.flow is not None:
        for s in tool.flow.steps:
            if s.body:
                lines.append(f"  flow step {s.name}: {inline_statements(s.body)}")
        moves = []
        for t in tool.flow.transitions:
            move = f"{t.source} -> {'outcome ' if t.to_outcome else ''}{t.target}"
            if t.event is not None:
                move += f" on {t.event.name}"
                if t.event.probability is not None:
                    move += f" (p={t.event.probability:g})"
            if t.when is not None:
                move += f" when {expr_text(t.when)}"
            moves.append(move)
        lines.append(f"  flow from {tool.flow.initial}: {'; '.join(moves)}")
    for m in machines:
        moves = [
            f"{t.source} -> {t.target}"
            + (f" on {t.outcome}" if t.outcome else "")
            + (f" when {expr_text(t.when)}" if t.when is not None else "")
            for t in m.transitions
            if t.tool == tool.name
        ]
        lines.append(f"  protocol {m.name}: {'; '.join(moves)}")
    lines.append("Ends:")
    bodies = {o.name: o.body for o in tool.outcomes}
    for o in outcomes_json(contract, tool):
        if bodies.get(o["name"]):
            o["statements"] = [inline_statements(bodies[o["name"]])]
        text = f"  - {o['name']}: {o['kind']}"
        if "code" in o:
            text += f" {o['code']}"
        if "event" in o:
            p = o.get("probability")
            text += f" when {o['event']} happens" + (f" (p={p:g})" if p is not None else "")
        if "when" in o:
            text += f" if {o['when']}"
        if "message" in o:
            text += f": {o['message']}"
        if o.get("statements"):
            text += " { " + "; ".join(o["statements"]) + " }"
        if "hint" in o:
            text += f" -> {o['hint']}"
        lines.append(text)
    if ensures:
        lines.append("Guarantees: " + "; ".join(_condition(c, None) for c in ensures))
    if tool.reports:
        fields = ", ".join(f"{f.name}: {type_label(f.type)}" for f in tool.reports)
        lines.append(f"Reports: {fields}")
    lines.append("Errors and how to recover:")
    seen: set[tuple[str, str | None]] = set()
    for e in error_codes(contract, tool):
        if (e.code, e.hint) in seen:
            continue
        seen.add((e.code, e.hint))
        text = f"  - {e.code}"
        if e.message and e.source in ("require", "outcome"):
            text += f": {e.message}"
        if e.hint:
            text += f" -> {e.hint}"
        lines.append(text)
    facts = []
    cost = cost_json(contract, tool)
    if cost is not None:
        facts.append(f"cost {cost['expression']}")
    if tool.tags:
        facts.append("tags " + ", ".join(t.name for t in tool.tags))
    facts.append("risk " + (", ".join(r.name for r in tool.risks) or "none declared"))
    summary = "; ".join(facts)
    lines.append(summary[:1].upper() + summary[1:])
    return lines


def card(contract: ir.Contract, tool: ir.Tool) -> str:
    """The card of one tool, as text ending in a newline (characters that are not printable,
    such as escape sequences in a message, written as escapes)."""
    return "\n".join(visible(line) for line in card_lines(contract, tool)) + "\n"
