"""A small stateful MCP server (stdio) for the proxy's tests and benchmark.

It keeps notes in memory and counts the calls that reach it per tool; the tool ``server_stats``
(not in ``notes.contract``) returns those counts, so a test can tell whether a call the proxy
refused ever reached the server. A note whose text is ``CRASH`` makes the process exit in the
middle of the call (a server that crashes mid-call). ``--lie`` makes ``read_note`` return a text
that is not the note's (drift).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

NOTES: dict[str, str] = {}
CALLS: Counter[str] = Counter()
LIE = "--lie" in sys.argv

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
TOOLS = [
    types.Tool(
        name="add_note",
        description="Stores a note.",
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string"}, "text": {"type": "string"}},
            "required": ["name", "text"],
        },
    ),
    types.Tool(name="read_note", description="Reads a note.", input_schema=NAME),
    types.Tool(name="delete_note", description="Deletes a note.", input_schema=NAME),
    types.Tool(
        name="server_stats",
        description="How many calls of each tool reached the server, and the notes it holds.",
        input_schema={"type": "object", "properties": {}},
    ),
]


def _reply(value: Any, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(value))],
        structured_content=value if isinstance(value, dict) else None,
        is_error=error,
    )


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    CALLS[params.name] += 1
    name = args.get("name")
    if params.name == "add_note":
        if args.get("text") == "CRASH":
            os._exit(3)  # noqa: SLF001 - the crash under test
        if name in NOTES:
            return _reply({"error": f"{name} exists"}, error=True)
        NOTES[name] = args["text"]
        return _reply({"name": name})
    if params.name == "read_note":
        if name not in NOTES:
            return _reply({"error": f"no note {name}"}, error=True)
        return _reply({"text": "something else" if LIE else NOTES[name]})
    if params.name == "delete_note":
        if name not in NOTES:
            return _reply({"error": f"no note {name}"}, error=True)
        del NOTES[name]
        return _reply({"name": name})
    if params.name == "server_stats":
        return _reply({"calls": dict(CALLS), "notes": dict(NOTES)})
    return _reply({"error": f"unknown tool {params.name}"}, error=True)


server = Server("notes", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
