"""``contractsim mcp-proxy``: an MCP server (stdio) in front of a real MCP server.

The proxy starts the real server as a subprocess (stdio) and answers an MCP client in its place:

* ``tools/list``: the contract's tools as ``export --to mcp`` makes them, for the tools the server
  lists too (the server's ``outputSchema`` is kept: it describes what the server really returns);
  then the server's tools the contract does not declare, unchanged; then ``get_tool_contract``;
* ``tools/call`` of a contract tool: the call goes through a runtime guard
  (:class:`~contractsim.runtime.guard.Guard`, return mode). A call the contract says must fail is
  answered with an ``isError`` result holding :meth:`GuardError.to_llm` (the message, the violated
  rules with their values, the fix and the tools callable now) and never reaches the server; the
  others are forwarded, and the real result updates the tracked state (``isError`` results and a
  crashed server count as failures: the state is left as it was, unless the contract names the
  failure as an outcome). Drift (contract and reality disagree) is appended to a JSON Lines file;
* ``tools/call`` of a server tool the contract does not declare is forwarded unchecked;
* ``get_tool_contract(tool)`` returns the tool's card (``contractsim export --to card``).

A server that exits or stops answering is restarted on the next call (its own state is then
whatever it starts with; the tracked state stays as the calls that completed left it).
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

import anyio
import anyio.abc
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from ..compiler.foreign import exception_text
from ..diagnostics import suggestion_hint

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.state import State

log = logging.getLogger("contractsim.mcp_proxy")

CONTRACT_TOOL = "get_tool_contract"
"""The proxy's own tool: a contract tool's card, so an agent can look the contract up."""

_RAW: contextvars.ContextVar[list[types.CallToolResult] | None] = contextvars.ContextVar(
    "contractsim_mcp_raw", default=None
)


class ProxyError(Exception):
    """The proxy cannot run: the server cannot be started or does not answer ``initialize``."""


class ServerToolError(Exception):
    """The server answered a call with ``isError``: the tool failed (the guard's ``crash``)."""


class ServerUnavailable(Exception):
    """The server process exited, or stopped answering, during or before a call."""


@dataclass
class _Link:
    """One running server process and the client session to it."""

    ready: anyio.Event = field(default_factory=anyio.Event)
    broken: anyio.Event = field(default_factory=anyio.Event)
    session: ClientSession | None = None
    tools: dict[str, types.Tool] = field(default_factory=dict)


class McpProxy:
    """An MCP server that guards a real MCP server's tools with ``contract``.

    ``command``: the server's command line (``["python", "server.py"]``); ``state``: the initial
    tracked state (overrides, or a simulator ``State``); ``now``, ``block_on_unknown``,
    ``serialize``: as :meth:`Contract.guard` takes them; ``drift_log``: a file that every drift
    record is appended to as a JSON line; ``save_state``: a file the tracked state is written
    to (JSON, as ``--state`` reads it) when the proxy stops; ``call_timeout``: seconds a
    forwarded call may take before the server is taken as hung (restarted on the next call);
    ``start_timeout``: seconds the server may take to start and answer ``initialize`` and
    ``tools/list``.
    """

    def __init__(
        self,
        contract: Contract,
        command: Sequence[str],
        *,
        state: Mapping[str, Any] | State | None = None,
        now: str | None = None,
        block_on_unknown: bool = False,
        serialize: bool = False,
        drift_log: str | os.PathLike[str] | None = None,
        save_state: str | os.PathLike[str] | None = None,
        call_timeout: float | None = None,
        start_timeout: float = 30.0,
        env: Mapping[str, str] | None = None,
        errlog: TextIO | None = None,
    ) -> None:
        if not command:
            raise ValueError("command must name the MCP server to start")
        self.contract = contract
        self.guard = contract.guard(
            state=state,
            mode="return",
            now=now,
            block_on_unknown=block_on_unknown,
            serialize=serialize,
        )
        self.drift_log = drift_log
        self.save_state = save_state
        self.call_timeout = call_timeout
        self.start_timeout = start_timeout
        self.starts = 0
        """How many times the server was started."""
        self._params = StdioServerParameters(
            command=command[0], args=list(command[1:]), env=dict(env) if env else None
        )
        self._errlog = errlog or sys.stderr
        self._exported: dict[str, dict[str, Any]] = {}
        for name in contract.tools:
            try:
                definition = contract.export("mcp", name)
            except ValueError as exc:  # a name MCP clients cannot take: checked, not listed
                log.warning("tool %s is not listed: %s", name, exc)
                continue
            assert isinstance(definition, dict)
            self._exported[name] = definition
        self._guarded = {
            name: self.guard.wrap(name, self._forwarder(name)) for name in contract.tools
        }
        self._link: _Link | None = None
        self._last_tools: dict[str, types.Tool] = {}
        self._connect_lock: anyio.Lock | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self.server = Server(
            f"contractsim-proxy-{contract.name}",
            version=contract.version,
            instructions=(
                f"Tools guarded by the contract `{contract.name}` {contract.version}: a call the "
                "contract says must fail is refused with the reason and what to call instead. "
                f"`{CONTRACT_TOOL}(tool)` returns a tool's contract."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    # -- running
    async def serve_stdio(self) -> None:
        """Start the server, then answer MCP requests on stdin/stdout until stdin closes."""
        failed: ProxyError | None = None
        with anyio.CancelScope() as scope:
            async with stdio_server() as (read, write):
                try:
                    await self.serve(read, write)
                except ProxyError as exc:  # raised outside the transport's task group, unwrapped
                    failed = exc
                    scope.cancel()  # stop reading stdin
        if failed is not None:
            raise failed

    async def serve(self, read: Any, write: Any) -> None:
        """Start the server, then answer MCP requests on the given streams until they close.
        Raises :class:`ProxyError` when the server cannot be started."""
        failed: str | None = None
        async with anyio.create_task_group() as group:
            self._group = group
            self._connect_lock = anyio.Lock()
            try:
                link = await self._connect()
            except ServerUnavailable as exc:
                failed = str(exc)
            else:
                self._listing_drift(link.tools)
                try:
                    await self.server.run(read, write, self.server.create_initialization_options())
                finally:
                    if self._link is not None:
                        self._link.broken.set()
                    self._save_state()
            group.cancel_scope.cancel()
        if failed is not None:
            raise ProxyError(failed)

    async def _connect(self) -> _Link:
        """The running server's link, starting the server when there is none (or it broke)."""
        assert self._connect_lock is not None and self._group is not None
        async with self._connect_lock:
            link = self._link
            if link is not None and link.session is not None and not link.broken.is_set():
                return link
            link = _Link()
            try:
                await self._group.start(self._run_link, link)
            except Exception as exc:  # noqa: BLE001 - any failure to start is reported the same way
                raise ServerUnavailable(
                    f"the MCP server `{self._command_text()}` could not be started: "
                    f"{_error_text(exc)}"
                ) from None
            self._link = link
            self._last_tools = link.tools
            self.starts += 1
            return link

    async def _run_link(
        self, link: _Link, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        started = False
        try:
            async with stdio_client(self._params, errlog=self._errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(self.start_timeout):
                        await session.initialize()
                        link.tools = await _list_all(session)
                    link.session = session
                    started = True
                    task_status.started()
                    await link.broken.wait()
        except Exception as exc:
            if not started:
                raise
            log.warning("the MCP server stopped: %s", _error_text(exc))
        finally:
            link.session = None
            link.broken.set()

    def _command_text(self) -> str:
        return " ".join([self._params.command, *self._params.args])

    # -- tools/list
    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        try:
            server_tools = (await self._connect()).tools
        except ServerUnavailable:
            server_tools = self._last_tools
        return types.ListToolsResult(tools=self.merged_tools(server_tools))

    def merged_tools(self, server_tools: Mapping[str, types.Tool]) -> list[types.Tool]:
        """What ``tools/list`` answers: contract tools the server lists (the contract's
        definition with the server's ``outputSchema``), the server's other tools unchanged,
        and ``get_tool_contract``."""
        out: list[types.Tool] = []
        for name, definition in self._exported.items():
            real = server_tools.get(name)
            if real is None:
                continue
            merged = {k: v for k, v in definition.items() if k != "outputSchema"}
            tool = types.Tool.model_validate(merged)
            out.append(tool.model_copy(update={"output_schema": real.output_schema}))
        out += [t for name, t in server_tools.items() if name not in self._guarded]
        out = [t for t in out if t.name != CONTRACT_TOOL]
        out.append(
            types.Tool(
                name=CONTRACT_TOOL,
                description=(
                    "Returns the contract of one of these tools: what it needs, what it changes, "
                    "how it can fail and how to recover. Look it up instead of guessing."
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        "tool": {"type": "string", "enum": list(self._exported) or [""]}
                    },
                    "required": ["tool"],
                    "additionalProperties": False,
                },
                annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
            )
        )
        return out

    def _listing_drift(self, server_tools: Mapping[str, types.Tool]) -> None:
        for name in self.contract.tools:
            if name not in server_tools:
                self._write_drift(
                    {
                        "tool": name,
                        "notes": [
                            "the contract declares this tool but the server does not list it: "
                            "it is not listed, and calls to it are refused"
                        ],
                    }
                )
        if CONTRACT_TOOL in server_tools:
            self._write_drift(
                {
                    "tool": CONTRACT_TOOL,
                    "notes": [f"the server's own `{CONTRACT_TOOL}` is hidden by the proxy's"],
                }
            )

    # -- tools/call
    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name, args = params.name, dict(params.arguments or {})
        try:
            if name == CONTRACT_TOOL:
                return self._card(args)
            if name in self._guarded:
                return await self._guarded_call(name, args)
            try:
                link = await self._connect()
            except ServerUnavailable as exc:
                return _error(str(exc))
            if name in link.tools:
                try:
                    return await self._forward(name, args)
                except (ServerToolError, ServerUnavailable) as exc:
                    return _error(str(exc))
            known = sorted({*self._exported, *link.tools, CONTRACT_TOOL})
            hint = suggestion_hint(name, known, "tool")
            return _error(f"there is no tool `{name}`" + (f"; {hint}" if hint else ""))
        except Exception as exc:  # noqa: BLE001 - the proxy keeps serving whatever happens
            log.exception("the proxy failed on a call of %s", name)
            return _error(f"the proxy could not handle this call of {name}: {_error_text(exc)}")

    async def _guarded_call(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        if name not in self._last_tools:
            try:
                listed = (await self._connect()).tools
            except ServerUnavailable as exc:
                return _error(str(exc))
            if name not in listed:
                return _error(
                    f"the contract declares `{name}`, but the MCP server does not offer it",
                    {"error": "NOT_OFFERED", "tool": name},
                )
        raw: list[types.CallToolResult] = []
        token = _RAW.set(raw)
        try:
            answer = await self._guarded[name](**args)
        finally:
            _RAW.reset(token)
        record = self.guard.last
        if record is not None and record.drift is not None:
            self._write_drift(record.drift.to_json())
        warnings = [
            types.TextContent(text=f"Warning {w.code}: {w.message}") for w in answer.warnings
        ]
        if answer.ok and raw:
            result = raw[0]
            return result.model_copy(update={"content": [*result.content, *warnings]})
        error = answer.error
        assert error is not None
        text = types.TextContent(text=error.to_llm())
        content = [*raw[0].content, text] if raw else [text]
        return types.CallToolResult(
            content=[*content, *warnings],
            is_error=True,
            _meta={"contractsim": error.to_json()},
        )

    def _forwarder(self, tool: str) -> Any:
        async def forward(**arguments: Any) -> Any:
            result = await self._forward(tool, arguments)
            raw = _RAW.get()
            if raw is not None:
                raw.append(result)
            return _value(result)

        forward.__name__ = f"forward_{tool}"
        return forward

    async def _forward(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Call ``tool`` on the server. An ``isError`` answer raises :class:`ServerToolError`
        (after the raw result is kept); a server that is gone raises :class:`ServerUnavailable`
        and is restarted on the next call."""
        link = await self._connect()
        session = link.session
        if session is None:
            raise ServerUnavailable("the MCP server exited")
        try:
            result = await session.call_tool(
                tool, arguments, read_timeout_seconds=self.call_timeout
            )
        except MCPError as exc:
            if exc.code in (types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT):
                link.broken.set()
                raise ServerUnavailable(
                    f"the MCP server stopped answering during the call ({exc.error.message})"
                ) from None
            raise ServerToolError(
                f"the MCP server answered error {exc.code}: {exc.error.message}"
            ) from None
        except Exception as exc:  # noqa: BLE001 - the transport failed: the server is gone
            link.broken.set()
            raise ServerUnavailable(
                f"the MCP server stopped answering during the call ({_error_text(exc)})"
            ) from None
        if not isinstance(result, types.CallToolResult):
            raise ServerToolError(f"the MCP server answered {type(result).__name__}, not a result")
        if result.is_error:
            raw = _RAW.get()
            if raw is not None:
                raw.append(result)
            raise ServerToolError(_text(result) or f"{tool} reported an error")
        return result

    def _card(self, args: Mapping[str, Any]) -> types.CallToolResult:
        tool = args.get("tool")
        names = list(self._exported)
        if not isinstance(tool, str) or tool not in self._exported:
            hint = suggestion_hint(tool, names, "tool") if isinstance(tool, str) else None
            return _error(
                f"`{CONTRACT_TOOL}` takes `tool`, one of: {', '.join(names)}; got {tool!r}"
                + (f" ({hint})" if hint else "")
            )
        return types.CallToolResult(content=[types.TextContent(text=self.contract.card(tool))])

    def _save_state(self) -> None:
        if self.save_state is None:
            return
        try:
            with open(self.save_state, "w", encoding="utf-8") as out:
                json.dump(self.guard.state.to_json(), out, ensure_ascii=False, indent=2)
                out.write("\n")
        except OSError as exc:
            log.warning("cannot write the state to %s: %s", self.save_state, exc.strerror)

    # -- drift
    def _write_drift(self, record: dict[str, Any]) -> None:
        if self.drift_log is None:
            return
        try:
            with open(self.drift_log, "a", encoding="utf-8") as out:
                out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        except OSError as exc:
            log.warning("cannot write the drift log %s: %s", self.drift_log, exc.strerror)


async def _list_all(session: ClientSession) -> dict[str, types.Tool]:
    tools: dict[str, types.Tool] = {}
    cursor: str | None = None
    for _ in range(1000):  # a server whose cursor never ends is not followed forever
        page = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )
        tools.update((t.name, t) for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _value(result: types.CallToolResult) -> Any:
    """What the guard reads as the tool's return value: the structured content, else the text
    read as JSON, else the text."""
    if result.structured_content is not None:
        return result.structured_content
    text = _text(result)
    try:
        return json.loads(text)
    except ValueError:
        return text


def _error(message: str, meta: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=message)],
        is_error=True,
        _meta={"contractsim": meta or {"error": "PROXY", "message": message}},
    )


def _error_text(exc: BaseException) -> str:
    """An exception's text; a group (anyio's task groups) is read through to its first leaf."""
    while isinstance(getattr(exc, "exceptions", None), tuple) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exception_text(exc)
