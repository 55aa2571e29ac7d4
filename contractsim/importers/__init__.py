"""Import OpenAPI 3.0/3.1 documents, MCP tool lists and OpenAI tool arrays as contract skeletons
(docs/import.md): types, tool signatures, descriptions, constraints, result types, outcomes for
documented error responses, tags and risk. What the contract cannot say is reported as warnings
at JSON pointers (and as comments in the contract); nothing is fetched from the network.

>>> result = import_spec("petstore.yaml", "openapi")  # doctest: +SKIP
>>> print(result.text)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..diagnostics import ContractError, Span, error
from ..sources import MAX_SOURCE_BYTES, read_input
from .build import emit, mcp_tool, openapi_tools
from .schema import SchemaImporter, StepWarning, ptr

KINDS = ("openapi", "mcp", "openai")
MAX_SPEC_BYTES = MAX_SOURCE_BYTES

__all__ = ["KINDS", "ImportResult", "import_spec", "parse_spec"]


@dataclass(frozen=True)
class ImportResult:
    """An imported contract: its ``text``, the ``warnings`` (JSON pointer, message) for what it
    could not say exactly, the ``renames`` (kind, source name or pointer, contract name), and
    ``tool_names`` (source tool name → contract tool name)."""

    text: str
    warnings: list[StepWarning]
    renames: list[tuple[str, str, str]]
    tool_names: dict[str, str]
    source_schemas: dict[str, dict[str, Any]]
    document: Any = None
    """The parsed source document."""
    source_returns: dict[str, Any] | None = None
    """Per contract tool, the source schema of its result (the first 2xx JSON response, or
    the MCP ``outputSchema``), for tools that declare one."""
    """Per contract tool, the source's arguments flattened into one object schema by contract
    parameter name (``$ref``s still point into the source document): what the round trip
    compares the export with."""


def _fail(file: str, code: str, message: str, hint: str | None = None) -> ContractError:
    return ContractError([error(code, message, Span(file=file, end_col=2), hint)])


def _refuse_aliases(text: str, file: str) -> None:
    """YAML aliases (``*name``) are refused before anything is built: a few lines of them expand
    into billions of nodes for a walker that follows every reference."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            mark = event.start_mark
            line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            raise ContractError(
                [
                    error(
                        "E1501",
                        f"{file} uses a YAML alias (*{event.anchor}), which imported documents "
                        "may not",
                        Span(file=file, line=line, col=col, end_line=line, end_col=col + 1),
                        "expand the alias (write the value out), or convert the document to JSON",
                    )
                ]
            )


def parse_spec(text: str, file: str = "<spec>") -> Any:
    """A JSON or YAML document (YAML with the safe loader: no tags, no code)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        _refuse_aliases(text, file)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        col = mark.column + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ContractError(
            [
                error(
                    "E1501",
                    f"{file} is neither JSON nor YAML: {problem}",
                    Span(file=file, line=line, col=col, end_line=line, end_col=col + 1),
                    "pass an OpenAPI document, an MCP tools/list answer or an OpenAI tools array",
                )
            ]
        ) from None
    except RecursionError:
        raise _fail(file, "E1501", f"{file} is nested too deeply to read") from None


def import_spec(
    source: str | os.PathLike[str] | dict[str, Any] | list[Any],
    kind: str,
    *,
    name: str | None = None,
    file: str | None = None,
) -> ImportResult:
    """Import ``source`` — a path, or the already parsed document — of ``kind`` (``openapi``,
    ``mcp`` or ``openai``) as contract text. Raises :class:`~contractsim.ContractError` with
    E15xx diagnostics for input that cannot be imported (unreadable, not JSON/YAML, not that
    kind of document, a remote or cyclic ``$ref``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown spec kind {kind!r}; expected one of {', '.join(KINDS)}")
    if isinstance(source, (dict, list)):
        doc: Any = source
        file = file or "<spec>"
    else:
        file = file or str(source)
        data = read_input(source, "spec", "E1501", MAX_SPEC_BYTES)
        try:
            text = data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            raise _fail(file, "E1501", f"{file} is not UTF-8 text") from None
        doc = parse_spec(text, file)
    stem = Path(file).stem if not file.startswith("<") else "imported"
    try:
        if kind == "openapi":
            return _openapi(doc, file, stem, name)
        return _tools(doc, kind, file, name or stem)
    except RecursionError:
        raise _fail(file, "E1502", f"{file} is nested too deeply to import") from None
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        # a value of an unexpected shape where the importer has no check of its own yet
        raise _fail(
            file,
            "E1502",
            f"{file} has a value of an unexpected shape ({type(exc).__name__}: {exc})",
            "validate the document (e.g. with openapi-spec-validator) and fix what it reports",
        ) from None


def _openapi(doc: Any, file: str, stem: str, name: str | None = None) -> ImportResult:
    if not isinstance(doc, dict) or not isinstance(doc.get("openapi"), str):
        found = (
            "a Swagger 2.0 document"
            if isinstance(doc, dict) and "swagger" in doc
            else "no `openapi` version"
        )
        raise _fail(
            file,
            "E1502",
            f"/: {file} is not an OpenAPI 3 document ({found})",
            "convert Swagger 2.0 with a converter first; only OpenAPI 3.0 and 3.1 are imported",
        )
    version = doc["openapi"]
    if not (version.startswith("3.0") or version.startswith("3.1")):
        raise _fail(
            file, "E1502", f"/openapi: OpenAPI {version} is not supported (3.0 and 3.1 are)"
        )
    sch = SchemaImporter(doc, file, ("/components/schemas/",), openapi30=version.startswith("3.0"))
    tools = openapi_tools(sch, doc)
    info: dict[str, Any] = doc["info"] if isinstance(doc.get("info"), dict) else {}
    # --name wins; else the document's title; else the file's name
    title = name or str(info.get("title") or stem)
    text = emit(
        "openapi",
        file,
        title,
        str(info.get("version", "")),
        _str(info.get("description")),
        sch,
        tools,
    )
    return ImportResult(
        text,
        sch.warnings,
        sch.renames,
        _tool_names(sch, tools),
        {t.name: t.source_schema() for t in tools},
        doc,
        {t.name: t.source_returns for t in tools if t.source_returns is not None},
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _tool_names(sch: SchemaImporter, tools: list[Any]) -> dict[str, str]:
    renamed = {src: new for kind, src, new in sch.renames if kind == "tool"}
    out = {t.name: t.name for t in tools}
    for src, new in renamed.items():
        out.pop(new, None)
        out[src] = new
    return out


def _tool_list(doc: Any, kind: str, file: str) -> tuple[list[Any], str]:
    """The list of tool definitions and its JSON pointer."""
    if isinstance(doc, dict) and isinstance(doc.get("result"), dict):
        doc = doc["result"]
        base = "/result"
    else:
        base = ""
    if isinstance(doc, dict) and isinstance(doc.get("tools"), list):
        return doc["tools"], base + "/tools"
    if isinstance(doc, list):
        return doc, base
    what = (
        'an MCP tools/list answer (`{"tools": [...]}`)'
        if kind == "mcp"
        else "an OpenAI tools array"
    )
    raise _fail(file, "E1502", f"/: {file} is not {what}", "pass a JSON list of tool definitions")


def _tools(doc: Any, kind: str, file: str, stem: str) -> ImportResult:
    items, base = _tool_list(doc, kind, file)
    sch = SchemaImporter(doc, file, ())
    tools = []
    taken: set[str] = set()
    for i, item in enumerate(items):
        at = ptr(base, i)
        if not isinstance(item, dict):
            raise _fail(file, "E1502", f"{at}: a tool definition must be an object")
        if kind == "openai":
            if isinstance(item.get("function"), dict):
                item, at = item["function"], ptr(at, "function")
            if item.get("type") not in (None, "function") and "parameters" not in item:
                sch.warn(at, f"a {item.get('type')!s} tool is not a function; skipped")
                continue
        elif "inputSchema" not in item:
            raise _fail(
                file,
                "E1502",
                f"{at}: an MCP tool needs `inputSchema`",
                "pass the `tools` of a tools/list answer",
            )
        known = {
            "name",
            "description",
            "parameters",
            "strict",
            "type",
            "inputSchema",
            "outputSchema",
            "annotations",
            "title",
            "_meta",
            "icons",
        }
        owner = "an MCP tool" if kind == "mcp" else "an OpenAI function"
        for key in item:
            if key not in known:
                sch.warn(ptr(at, key), f"`{key}` is not part of {owner}; ignored")
        if not isinstance(item.get("name"), str) or not item["name"]:
            raise _fail(file, "E1502", f"{at}/name: a tool needs a name")
        sch.named_prefixes = ("/$defs/", "/definitions/")
        tools.append(mcp_tool(sch, item, at, taken))
    text = emit(kind, file, stem, "0.1.0", None, sch, tools)
    return ImportResult(
        text,
        sch.warnings,
        sch.renames,
        _tool_names(sch, tools),
        {t.name: t.source_schema() for t in tools},
        doc,
        {t.name: t.source_returns for t in tools if t.source_returns is not None},
    )
