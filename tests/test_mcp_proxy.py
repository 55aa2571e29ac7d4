"""`contractsim mcp-proxy` end to end: the `mcp` client talks to the proxy (a subprocess, stdio),
which guards a real MCP server (tests/mcp_servers/notes_server.py, a subprocess of the proxy)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import contractsim

HERE = Path(__file__).resolve().parent / "mcp_servers"
CONTRACT = str(HERE / "notes.contract")
SERVER = str(HERE / "notes_server.py")
CLI = ["-c", "from contractsim.cli import main; main()"]


def proxy_command(*options: str, server_args: tuple[str, ...] = ()) -> list[str]:
    return [*CLI, "mcp-proxy", CONTRACT, *options, "--", sys.executable, SERVER, *server_args]


@asynccontextmanager
async def proxied(*options: str, server_args: tuple[str, ...] = ()) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=proxy_command(*options, server_args=server_args)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def stats(session: ClientSession) -> dict[str, Any]:
    result = await session.call_tool("server_stats", {})
    assert not result.is_error, text(result)
    data: dict[str, Any] = result.structured_content
    return data


def run(fn: Any) -> None:
    anyio.run(fn)


@pytest.mark.slow
def test_lists_the_contract_tools_then_the_servers_others_then_get_tool_contract() -> None:
    async def body() -> None:
        async with proxied() as session:
            listed = (await session.list_tools()).tools
            names = [t.name for t in listed]
            assert names == [
                "add_note",
                "read_note",
                "delete_note",
                "server_stats",
                "get_tool_contract",
            ]
            add = listed[0]
            exported = contractsim.load(CONTRACT).export("mcp", "add_note")
            assert isinstance(exported, dict)
            assert add.description == exported["description"]
            assert add.input_schema == exported["inputSchema"]
            assert listed[3].description.startswith("How many calls")  # the server's own

    run(body)


@pytest.mark.slow
def test_a_refused_call_never_reaches_the_server() -> None:
    async def body() -> None:
        async with proxied() as session:
            result = await session.call_tool("read_note", {"name": "todo"})
            assert result.is_error
            assert text(result) == (
                'read_note(name="todo") was refused: NOT_FOUND: no note called todo\n'
                '  where name = "todo"\n'
                "  where notes = {}\n"
                "Fix: add_note(name=todo, text=...) first\n"
                "Other tools you can call now: add_note, delete_note"
            )
            assert result.meta is not None
            assert result.meta["contractsim"]["error"] == "NOT_FOUND"
            assert result.meta["contractsim"]["blocked"] is True
            assert "read_note" not in (await stats(session))["calls"]

    run(body)


@pytest.mark.slow
def test_an_allowed_call_is_forwarded_and_its_result_updates_the_state() -> None:
    async def body() -> None:
        async with proxied() as session:
            added = await session.call_tool("add_note", {"name": "todo", "text": "milk"})
            assert not added.is_error
            assert added.structured_content == {"name": "todo"}
            again = await session.call_tool("add_note", {"name": "todo", "text": "eggs"})
            assert again.is_error
            assert text(again).startswith(
                'add_note(name="todo", text="eggs") was refused: EXISTS: a note called todo '
                "exists already"
            )
            read = await session.call_tool("read_note", {"name": "todo"})
            assert read.structured_content == {"text": "milk"}
            server = await stats(session)
            assert server["calls"] == {"add_note": 1, "read_note": 1, "server_stats": 1}
            assert server["notes"] == {"todo": "milk"}

    run(body)


@pytest.mark.slow
def test_arguments_the_contract_rejects_are_refused_before_the_server() -> None:
    async def body() -> None:
        async with proxied() as session:
            result = await session.call_tool("add_note", {"name": 5, "text": "x"})
            assert result.is_error
            assert "INVALID_ARGUMENT" in text(result)
            missing = await session.call_tool("add_note", {"text": "x"})
            assert missing.is_error
            assert "INVALID_ARGUMENT" in text(missing)
            assert (await stats(session))["calls"] == {"server_stats": 1}

    run(body)


@pytest.mark.slow
def test_get_tool_contract_returns_the_card() -> None:
    async def body() -> None:
        async with proxied() as session:
            card = await session.call_tool("get_tool_contract", {"tool": "delete_note"})
            assert not card.is_error
            assert text(card) == contractsim.load(CONTRACT).card("delete_note")
            wrong = await session.call_tool("get_tool_contract", {"tool": "delete_notes"})
            assert wrong.is_error
            assert "did you mean `delete_note`" in text(wrong)

    run(body)


@pytest.mark.slow
def test_an_unknown_tool_is_an_error_result_with_a_suggestion() -> None:
    async def body() -> None:
        async with proxied() as session:
            result = await session.call_tool("read_notes", {"name": "x"})
            assert result.is_error
            assert text(result) == "there is no tool `read_notes`; did you mean `read_note`?"

    run(body)


@pytest.mark.slow
def test_a_server_that_crashes_mid_call_is_restarted_and_the_state_is_kept(
    tmp_path: Path,
) -> None:
    drift = tmp_path / "drift.jsonl"

    async def body() -> None:
        async with proxied("--drift-log", str(drift)) as session:
            assert not (await session.call_tool("add_note", {"name": "a", "text": "1"})).is_error
            crashed = await session.call_tool("add_note", {"name": "b", "text": "CRASH"})
            assert crashed.is_error
            assert text(crashed).startswith('add_note(name="b", text="CRASH") failed: TOOL_RAISED')
            assert "stopped answering" in text(crashed)
            # the crash changed nothing: b is still absent, a still present
            assert not (await session.call_tool("add_note", {"name": "b", "text": "2"})).is_error
            refused = await session.call_tool("add_note", {"name": "a", "text": "3"})
            assert "EXISTS" in text(refused)
            # the restarted server lost `a`: the contract says it is there, reality disagrees
            lost = await session.call_tool("read_note", {"name": "a"})
            assert lost.is_error
            server = await stats(session)
            assert server["notes"] == {"b": "2"}

    run(body)
    records = [json.loads(line) for line in drift.read_text().splitlines()]
    # the crash and the lost note: both predicted to succeed, both failed
    assert [(r["tool"], r["predicted"], r["status"]) for r in records] == [
        ("add_note", "ok", "crash"),
        ("read_note", "ok", "crash"),
    ]
    assert "stopped answering" in records[0]["error"]
    assert records[1]["error"] == 'ServerToolError: {"error": "no note a"}'


@pytest.mark.slow
def test_drift_is_appended_to_the_drift_log(tmp_path: Path) -> None:
    drift = tmp_path / "drift.jsonl"

    async def body() -> None:
        async with proxied("--drift-log", str(drift), server_args=("--lie",)) as session:
            await session.call_tool("add_note", {"name": "a", "text": "milk"})
            read = await session.call_tool("read_note", {"name": "a"})
            assert read.structured_content == {"text": "something else"}  # passed on as is

    run(body)
    (record,) = [json.loads(line) for line in drift.read_text().splitlines()]
    assert record["tool"] == "read_note"
    assert record["args"] == {"name": "a"}
    assert (record["predicted"], record["status"]) == ("ok", "ok")
    assert record["notes"] == ["no success outcome of the contract fits; the state is unchanged"]


@pytest.mark.slow
def test_state_file_sets_the_initial_tracked_state(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"notes": {"old": "x"}}))

    async def body() -> None:
        async with proxied("--state", str(state)) as session:
            result = await session.call_tool("add_note", {"name": "old", "text": "y"})
            assert "EXISTS" in text(result)
            assert "add_note" not in (await stats(session))["calls"]

    run(body)


def _rpc(id_: int | None, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        message["id"] = id_
    if params is not None:
        message["params"] = params
    return json.dumps(message)


@pytest.mark.slow
def test_malformed_requests_get_errors_and_lose_no_state() -> None:
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    lines = [
        _rpc(1, "initialize", init),
        _rpc(None, "notifications/initialized"),
        _rpc(2, "tools/call", {"name": "add_note", "arguments": {"name": "a", "text": "1"}}),
        "{this is not json",
        '{"jsonrpc": "2.0", "id": 3}',  # neither a request nor a response
        _rpc(4, "tools/call", {"arguments": {"name": "a"}}),
        _rpc(5, "tools/call", {"name": "add_note", "arguments": [1, 2]}),
        _rpc(6, "no/such/method", {}),
        _rpc(7, "tools/call", {"name": "add_note", "arguments": {"name": "a", "text": "2"}}),
        _rpc(8, "tools/call", {"name": "server_stats", "arguments": {}}),
    ]
    answers: dict[int, dict[str, Any]] = {}
    with subprocess.Popen(
        [sys.executable, *proxy_command()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        for line in lines:
            proxy.stdin.write(line + "\n")
            proxy.stdin.flush()
            sent = json.loads(line) if line.startswith('{"') else {}
            waiting = sent.get("id") if "method" in sent else None
            while waiting is not None and waiting not in answers:
                message = json.loads(proxy.stdout.readline())
                if message.get("id") is not None:
                    answers[message["id"]] = message
        proxy.stdin.close()
        proxy.wait(30)
    assert answers[2]["result"]["isError"] is False
    for bad in (4, 5, 6):
        assert "error" in answers[bad], answers[bad]
    # the state survived: the second add_note is refused by the contract, not by the server
    assert answers[7]["result"]["isError"] is True
    assert "EXISTS" in answers[7]["result"]["content"][0]["text"]
    assert answers[8]["result"]["structuredContent"]["calls"] == {"add_note": 1, "server_stats": 1}


@pytest.mark.slow
def test_cli_errors_exit_2(tmp_path: Path) -> None:
    missing = subprocess.run(
        [sys.executable, *CLI, "mcp-proxy", CONTRACT, "--", str(tmp_path / "no-such-server")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert missing.returncode == 2
    assert "could not be started" in missing.stderr
    no_server = subprocess.run(
        [sys.executable, *CLI, "mcp-proxy", CONTRACT],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert no_server.returncode == 2
    bad = tmp_path / "bad.contract"
    bad.write_text("contract x version\n")
    invalid = subprocess.run(
        [sys.executable, *CLI, "mcp-proxy", str(bad), "--", sys.executable, SERVER],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert invalid.returncode == 2
    assert "error[" in invalid.stdout


@pytest.mark.slow
def test_1000_sequential_and_100_concurrent_calls_lose_no_state_update(tmp_path: Path) -> None:
    saved = tmp_path / "state.json"

    async def body() -> None:
        async with proxied("--save-state", str(saved)) as session:
            for i in range(1000):
                result = await session.call_tool("add_note", {"name": f"s{i}", "text": "x"})
                assert not result.is_error, text(result)
            results: dict[int, types.CallToolResult] = {}

            async def add(i: int) -> None:
                results[i] = await session.call_tool("add_note", {"name": f"c{i}", "text": "y"})

            async with anyio.create_task_group() as group:
                for i in range(100):
                    group.start_soon(add, i)
            assert not any(r.is_error for r in results.values())

            # every update reached the tracked state: each note is now refused as existing
            async def again(i: int) -> None:
                results[i] = await session.call_tool("add_note", {"name": f"c{i}", "text": "z"})

            async with anyio.create_task_group() as group:
                for i in range(100):
                    group.start_soon(again, i)
            assert all("EXISTS" in text(r) for r in results.values())
            refused = await session.call_tool("add_note", {"name": "s999", "text": "z"})
            assert "EXISTS" in text(refused)
            server = await stats(session)
            assert server["calls"]["add_note"] == 1100
            assert len(server["notes"]) == 1100

    run(body)
    state = json.loads(saved.read_text())
    assert state["added"] == 1100
    assert len(state["notes"]) == 1100


# -- in process, with a fake server: fast, in the default run


class FakeSession:
    """Answers call_tool like notes_server.py, counting the calls that reach it."""

    def __init__(self) -> None:
        self.notes: dict[str, str] = {}
        self.calls: list[str] = []
        self.crash_next = False

    async def call_tool(
        self, name: str, arguments: dict[str, Any], read_timeout_seconds: Any = None
    ) -> types.CallToolResult:
        self.calls.append(name)
        if self.crash_next:
            self.crash_next = False
            raise anyio.BrokenResourceError()
        if name == "add_note":
            self.notes[arguments["name"]] = arguments["text"]
            value = {"name": arguments["name"]}
            return types.CallToolResult(content=[], structured_content=value)
        return types.CallToolResult(content=[types.TextContent(text="?")], is_error=True)


def fake_proxy(**options: Any) -> tuple[Any, FakeSession]:
    from contractsim.integrations import mcp_proxy

    proxy = mcp_proxy.McpProxy(contractsim.load(CONTRACT), ["unused"], **options)
    session = FakeSession()
    tool = types.Tool(name="add_note", input_schema={"type": "object"})
    extra = types.Tool(
        name="extra", input_schema={"type": "object"}, output_schema={"type": "object"}
    )
    read = types.Tool(
        name="read_note", input_schema={"type": "object"}, output_schema={"type": "object"}
    )

    async def connect() -> Any:
        link = mcp_proxy._Link()
        link.session = session  # type: ignore[assignment]
        link.tools = {"add_note": tool, "read_note": read, "extra": extra}
        proxy._last_tools = link.tools
        return link

    proxy._connect = connect
    return proxy, session


def call(proxy: Any, name: str, args: dict[str, Any]) -> types.CallToolResult:
    async def body() -> types.CallToolResult:
        result: types.CallToolResult = await proxy._call_tool(
            None, types.CallToolRequestParams(name=name, arguments=args)
        )
        return result

    return anyio.run(body)


def test_merged_listing_keeps_the_servers_output_schema_and_leaves_out_unserved_tools() -> None:
    proxy, _ = fake_proxy()
    read = types.Tool(name="read_note", input_schema={"type": "object"}, output_schema={"a": 1})
    extra = types.Tool(name="extra", input_schema={"type": "object"})
    listed = proxy.merged_tools({"read_note": read, "extra": extra})
    assert [t.name for t in listed] == ["read_note", "extra", "get_tool_contract"]
    assert listed[0].output_schema == {"a": 1}
    assert listed[0].description.startswith("Returns a note's text.\n\nContract:")
    assert listed[0].annotations is not None and listed[0].annotations.read_only_hint is True
    assert listed[2].input_schema["properties"]["tool"]["enum"] == [
        "add_note",
        "read_note",
        "delete_note",
    ]


def test_in_process_refusal_forwarding_and_crash(tmp_path: Path) -> None:
    saved = tmp_path / "state.json"
    proxy, session = fake_proxy(save_state=saved)
    assert not call(proxy, "add_note", {"name": "a", "text": "1"}).is_error
    refused = call(proxy, "add_note", {"name": "a", "text": "2"})
    assert refused.is_error and refused.meta == {"contractsim": refused.meta["contractsim"]}
    assert refused.meta["contractsim"]["error"] == "EXISTS"
    assert session.calls == ["add_note"]
    session.crash_next = True
    crashed = call(proxy, "add_note", {"name": "b", "text": "3"})
    assert crashed.is_error
    assert "stopped answering" in text(crashed)
    assert proxy.guard.state.to_json() == {"notes": {"a": "1"}, "added": 1}
    unchecked = call(proxy, "extra", {"anything": 1})
    assert unchecked.is_error and text(unchecked) == "?"  # forwarded as the server answered
    assert session.calls == ["add_note", "add_note", "extra"]
    proxy._save_state()
    assert json.loads(saved.read_text()) == {"notes": {"a": "1"}, "added": 1}


def test_in_process_drift_is_appended(tmp_path: Path) -> None:
    log = tmp_path / "drift.jsonl"
    proxy, _ = fake_proxy(drift_log=log)
    call(proxy, "add_note", {"name": "a", "text": "1"})
    read = call(proxy, "read_note", {"name": "a"})  # the fake answers isError: drift
    assert read.is_error
    # the server's own content first, then the guard's account of the failure
    assert text(read).startswith('?\nread_note(name="a") failed: ')
    assert "The tool said: ServerToolError: ?" in text(read)
    (record,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert (record["tool"], record["predicted"], record["status"]) == ("read_note", "ok", "crash")


def test_in_process_a_timeout_or_a_json_rpc_error_is_a_failed_call() -> None:
    from mcp.shared.exceptions import MCPError

    proxy, session = fake_proxy()
    answers = iter(
        [
            MCPError(types.REQUEST_TIMEOUT, "Request timed out"),
            MCPError(types.INVALID_PARAMS, "bad name"),
        ]
    )

    async def failing(
        name: str, arguments: dict[str, Any], read_timeout_seconds: Any = None
    ) -> Any:
        raise next(answers)

    session.call_tool = failing  # type: ignore[method-assign]
    timed_out = call(proxy, "add_note", {"name": "a", "text": "1"})
    assert timed_out.is_error
    assert "stopped answering during the call (Request timed out)" in text(timed_out)
    refused_by_server = call(proxy, "add_note", {"name": "a", "text": "1"})
    assert "the MCP server answered error -32602: bad name" in text(refused_by_server)
    assert proxy.guard.state.to_json() == {"notes": {}, "added": 0}
