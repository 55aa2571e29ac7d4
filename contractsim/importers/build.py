"""OpenAPI operations, MCP tools and OpenAI functions → contract tools, and the contract text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .names import code_name, comment_text, identifier, string_text, template_text
from .schema import JSON_DECL, JSON_TYPE, SchemaImporter, StepWarning, ptr

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
SEMVER = re.compile(r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")


@dataclass
class ToolSpec:
    name: str
    params: list[str] = field(default_factory=list)
    returns: str | None = None
    description: str | None = None
    tags: list[str] = field(default_factory=list)
    risk: list[str] = field(default_factory=list)
    outcomes: list[tuple[str, str, str]] = field(default_factory=list)  # (event, CODE, message)
    # the source's arguments as one object schema, by contract parameter name (for comparisons)
    source_props: dict[str, Any] = field(default_factory=dict)
    source_required: list[str] = field(default_factory=list)
    source_returns: Any = None

    def source_schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "object", "properties": self.source_props}
        if self.source_required:
            out["required"] = self.source_required
        return out


@dataclass
class Built:
    """What an import produced: the contract text, the warnings (JSON pointer, message) and the
    renamed names (kind, source, contract name)."""

    text: str
    warnings: list[StepWarning]
    renames: list[tuple[str, str, str]]
    tool_names: dict[str, str]


def _param_list(
    sch: SchemaImporter, schema: Any, pointer: str, taken: set[str], prefix: str, tool: ToolSpec
) -> list[str]:
    """An object schema's properties as parameters (flattened)."""
    merged = sch.merged_object(schema, pointer)
    assert merged is not None
    obj, obj_ptr = merged
    if obj.get("additionalProperties", True) is not False and obj.get("properties"):
        sch.warn(
            ptr(obj_ptr, "additionalProperties"),
            "arguments beyond those listed are allowed here; a contract tool refuses them",
        )
    out = []
    props = sch.props_of(obj, obj_ptr)
    required = obj.get("required") or []
    for name, sub in props.items():
        at = ptr(obj_ptr, "properties", name)
        ident = _param_name(sch, name, taken, prefix, at)
        out.append(sch.member_text(ident, sub, at, name in required, 0))
        tool.source_props[ident] = sub
        if name in required:
            tool.source_required.append(ident)
    return out


def _param_name(sch: SchemaImporter, name: str, taken: set[str], prefix: str, at: str) -> str:
    ident = identifier(name)
    if ident in taken:
        ident = identifier(f"{prefix}_{name}", taken)
    taken.add(ident)
    if ident != name:
        sch.renames.append(("parameter", at, ident))
        sch.warn(at, f"parameter {string_text(name)} is imported as `{ident}`")
    return ident


def _list(sch: SchemaImporter, value: Any, pointer: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise sch.fail("E1502", pointer, f"must be a list (got {type(value).__name__})")
    return value


def openapi_tools(sch: SchemaImporter, doc: dict[str, Any]) -> list[ToolSpec]:
    """One tool per operation; parameters flattened (path, query, header, cookie, then the JSON
    body's properties, or one ``body`` parameter when the body is not an object)."""
    tools = []
    taken_tools: set[str] = set()
    paths = doc.get("paths") or {}
    if not isinstance(paths, dict):
        raise sch.fail("E1502", "/paths", "`paths` must be an object")
    for path, item in paths.items():
        item_ptr = ptr("", "paths", path)
        if isinstance(item, dict) and "$ref" in item:
            item, item_ptr = sch.deref(item, item_ptr)
        if not isinstance(item, dict):
            raise sch.fail("E1502", item_ptr, "a path item must be an object")
        shared = _list(sch, item.get("parameters"), ptr(item_ptr, "parameters"))
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            op_ptr = ptr(item_ptr, method)
            if not isinstance(op, dict):
                raise sch.fail("E1502", op_ptr, "an operation must be an object")
            raw = op.get("operationId") or f"{method}_{path}"
            name = identifier(str(raw), taken_tools)
            name = re.sub(r"__+", "_", name) if "operationId" not in op else name
            name = identifier(name.strip("_") or "op", taken_tools)
            taken_tools.add(name)
            if name != raw:
                sch.renames.append(("tool", str(raw), name))
            tool = ToolSpec(name=name)
            text = op.get("description") or op.get("summary")
            tool.description = text if isinstance(text, str) else None
            for tag in op.get("tags") or []:
                tag_name = (
                    ".".join(identifier(part) for part in str(tag).split(".")) if tag else "_"
                )
                if tag_name != tag:
                    sch.renames.append(("tag", str(tag), tag_name))
                tool.tags.append(tag_name)
            taken: set[str] = set()
            params = {}
            own = _list(sch, op.get("parameters"), ptr(op_ptr, "parameters"))
            for i, p in enumerate([*shared, *own]):
                at = (
                    ptr(item_ptr, "parameters", i)
                    if i < len(shared)
                    else ptr(op_ptr, "parameters", i - len(shared))
                )
                p, at = sch.deref(p, at)
                if not (
                    isinstance(p, dict)
                    and isinstance(p.get("name"), str)
                    and p.get("in") in ("path", "query", "header", "cookie")
                ):
                    raise sch.fail(
                        "E1502",
                        at,
                        "a parameter needs a `name` and `in` (path, query, header or cookie)",
                    )
                params[(p["in"], p["name"])] = (p, at)  # operation parameters override shared ones
            for (where, pname), (p, at) in params.items():
                ident = _param_name(sch, str(pname), taken, str(where), at)
                schema = p.get("schema")
                if schema is None:
                    content = p.get("content") or {}
                    media: Any = (
                        next(iter(content.values()), {}) if isinstance(content, dict) else {}
                    )
                    schema = media.get("schema", {}) if isinstance(media, dict) else {}
                    sch.warn(
                        ptr(at, "content"),
                        "a parameter given by `content` is imported from its schema; its "
                        "serialization is not kept",
                    )
                if where == "path":
                    required = True
                else:
                    required = p.get("required") is True
                sub = schema
                tool.params.append(
                    sch.member_text(
                        ident, sub, ptr(at, "schema"), required, 0, p.get("description")
                    )
                )
                tool.source_props[ident] = sub
                if required:
                    tool.source_required.append(ident)
            body = op.get("requestBody")
            if body is not None:
                body, body_ptr = sch.deref(body, ptr(op_ptr, "requestBody"))
                content = (body.get("content") or {}) if isinstance(body, dict) else {}
                if not isinstance(content, dict):
                    raise sch.fail("E1502", ptr(body_ptr, "content"), "`content` must be an object")
                media_key = next((k for k in content if "json" in k), None)
                if media_key is None and content:
                    sch.warn(
                        ptr(body_ptr, "content"), "no JSON media type; the body is not imported"
                    )
                elif media_key is not None:
                    schema = content[media_key].get("schema", {})
                    at = ptr(body_ptr, "content", media_key, "schema")
                    if sch.merged_object(schema, at) is not None:
                        tool.params += _param_list(sch, schema, at, taken, "body", tool)
                    else:
                        ident = _param_name(sch, "body", taken, "request", at)
                        tool.params.append(
                            sch.member_text(ident, schema, at, body.get("required") is True, 0)
                        )
                        tool.source_props[ident] = schema
                        if body.get("required") is True:
                            tool.source_required.append(ident)
            tool.returns, tool.outcomes, tool.source_returns = _responses(sch, op, op_ptr)
            tools.append(tool)
    for key in ("webhooks", "callbacks"):
        if doc.get(key):
            sch.warn(
                f"/{key}",
                f"`{key}` are requests the API makes, not tools an agent calls; not imported",
            )
    return tools


def _responses(
    sch: SchemaImporter, op: dict[str, Any], op_ptr: str
) -> tuple[str | None, list[tuple[str, str, str]], Any]:
    responses = op.get("responses") or {}
    if not isinstance(responses, dict):
        raise sch.fail("E1502", ptr(op_ptr, "responses"), "`responses` must be an object")
    returns = None
    source_returns = None
    outcomes = []
    for status in sorted(responses, key=str):
        resp, at = sch.deref(responses[status], ptr(op_ptr, "responses", status))
        if not isinstance(resp, dict):
            continue
        s = str(status)
        content = resp.get("content") or {}
        media_key = (
            next((k for k in content if "json" in k), None) if isinstance(content, dict) else None
        )
        if s.startswith("2") and returns is None:
            if media_key is not None and "schema" in content[media_key]:
                source_returns = content[media_key]["schema"]
                returns = sch.type_text(source_returns, ptr(at, "content", media_key, "schema"))
            continue
        if s[:1] in ("4", "5") or s == "default":
            code = "HTTP_ERROR" if s == "default" else code_name("HTTP_" + s)
            description = resp.get("description")
            message = description if isinstance(description, str) else s
            outcomes.append((code.lower(), code, message))
    return returns, outcomes, source_returns


def mcp_tool(sch: SchemaImporter, t: dict[str, Any], at: str, taken: set[str]) -> ToolSpec:
    raw = str(t.get("name", ""))
    name = identifier(raw, taken)
    taken.add(name)
    if name != raw:
        sch.renames.append(("tool", raw, name))
        sch.warn(ptr(at, "name"), f"tool {string_text(raw)} is imported as `{name}`")
    tool = ToolSpec(
        name=name,
        description=t.get("description") if isinstance(t.get("description"), str) else None,
    )
    schema = t.get("inputSchema", t.get("parameters", {"type": "object"}))
    key = "inputSchema" if "inputSchema" in t else "parameters"
    # references in a tool's schemas are local to each schema (`#/$defs/X`)
    sch.doc, sch.scope = schema, ptr(at, key)
    tool.params = (
        _param_list(sch, schema, ptr(at, key), set(), "arg", tool)
        if sch.merged_object(schema, ptr(at, key))
        else []
    )
    if "outputSchema" in t:
        sch.doc, sch.scope = t["outputSchema"], ptr(at, "outputSchema")
        tool.returns = sch.type_text(t["outputSchema"], ptr(at, "outputSchema"))
        tool.source_returns = t["outputSchema"]
    ann = t.get("annotations") or {}
    if isinstance(ann, dict):
        if ann.get("readOnlyHint") is True:
            tool.risk.append("read_only")
            if ann.get("destructiveHint") is True:
                sch.warn(
                    ptr(at, "annotations"),
                    "`readOnlyHint` and `destructiveHint` are both true; kept read_only",
                )
        elif ann.get("destructiveHint") is True:
            tool.risk.append("destructive")
        if ann.get("idempotentHint") is True:
            tool.risk.append("idempotent")
        if ann.get("openWorldHint") is True:
            tool.risk.append("open_world")
        for k in ann:
            if k not in (
                "readOnlyHint",
                "destructiveHint",
                "idempotentHint",
                "openWorldHint",
                "title",
            ):
                sch.warn(
                    ptr(at, "annotations", k),
                    f"annotation `{k}` has no contract counterpart; dropped",
                )
    return tool


def emit(
    kind: str,
    source_name: str,
    title: str,
    version: str,
    description: str | None,
    sch: SchemaImporter,
    tools: list[ToolSpec],
) -> str:
    """The contract text."""
    lines = [f"# Imported from {comment_text(source_name)} ({kind}) by `contractsim import`."]
    lines.append(
        "# A skeleton: add state, preconditions and effects by hand or with `contractsim learn`."
    )
    if sch.warnings:
        lines.append(
            f"# {len(sch.warnings)} thing(s) the contract cannot say exactly (JSON pointer: what):"
        )
        lines += [f"#   {comment_text(w.text())}" for w in sch.warnings]
    contract_name = identifier(title or "imported")
    if not SEMVER.fullmatch(version or ""):
        lines.append(
            f"# the version {comment_text(repr(version))} is not a semantic version; 0.0.0 is used"
        )
        version = "0.0.0"
    lines.append(f"contract {contract_name} version {string_text(version)}")
    if description:
        lines.append(f"  {string_text(description)}")
    lines.append("")
    if sch.needs_json:
        lines.append(f'type {JSON_TYPE} = {JSON_DECL} "any JSON value"')
    for name, text in sch.decls.items():
        desc = sch.decl_descriptions.get(name)
        lines.append(f"type {name} = {text}" + (f" {string_text(desc)}" if desc else ""))
    events: dict[str, str] = {}
    for t in tools:
        for event, code, _ in t.outcomes:
            events.setdefault(event, f"the service answers {code}")
    if events:
        lines.append("")
        lines += [f"event {e} {string_text(d)}" for e, d in events.items()]
    for t in tools:
        lines.append("")
        head = f"tool {t.name}("
        if t.params:
            head += "\n" + "".join(f"    {p},\n" for p in t.params)
        head += ")"
        if t.returns is not None:
            head += f" -> {t.returns}"
        lines.append(head)
        if t.description:
            lines.append(f"    {string_text(t.description)}")
        if t.tags:
            lines.append(f"    tags [{', '.join(t.tags)}]")
        if t.risk:
            lines.append(f"    risk {', '.join(t.risk)}")
        lines.append("{")
        if t.outcomes:
            lines.append("  outcome ok success")
            for event, code, message in t.outcomes:
                lines.append(f"  outcome {event} fails {code} {template_text(message)} on {event}")
        lines.append("}")
    # string literals are escaped, so a blank line is never inside one
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines) + "\n")
