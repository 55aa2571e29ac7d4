"""The cost a contract adds to each tool call in the LangChain and OpenAI Agents SDK integrations.

LangChain: ``tool.invoke(tool_call)`` of the wrapped tool against the bare ``@tool`` (both return
a ``ToolMessage`` through langchain-core's callback and validation machinery). OpenAI Agents
SDK: what the SDK runs for one function call — the tool input guardrails and ``on_invoke_tool``
— of the guarded tool against the bare ``@function_tool`` (the agent loop around it, the model
call above all, is left out: it is the same for both). The tool is ``read_file`` of
examples/backup/backup.contract on a state of ``--files`` files.

Figures are CPU time (``time.process_time``), best of three rounds; the machine is shared, so
read the ratios, not the absolute numbers.

Run: python benchmarks/bench_integrations.py [--calls N] [--files N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import contractsim

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "examples" / "backup" / "backup.contract"


def per_call(run: Callable[[list[str]], None], paths: list[str]) -> float:
    """CPU seconds per call, best of three rounds."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        run(paths)
        best = min(best, (time.process_time() - start) / len(paths))
    return best


def langchain_rows(state: dict[str, Any], paths: list[str]) -> list[tuple[str, float]]:
    from langchain_core.tools import tool

    from contractsim.integrations.langchain import guard_tools

    @tool
    def read_file(path: str) -> dict[str, Any]:
        """Returns a file's text."""
        return {"content": "x"}

    [guarded] = guard_tools(contractsim.load(CONTRACT), [read_file], state=state)

    def calls(tool_: Any) -> Callable[[list[str]], None]:
        def run(ps: list[str]) -> None:
            for i, p in enumerate(ps):
                tool_.invoke(
                    {"type": "tool_call", "id": str(i), "name": "read_file", "args": {"path": p}}
                )

        return run

    return [
        ("bare @tool", per_call(calls(read_file), paths)),
        ("guarded", per_call(calls(guarded), paths)),
    ]


def agents_rows(state: dict[str, Any], paths: list[str]) -> list[tuple[str, float]]:
    from agents import FunctionTool, function_tool
    from agents.tool_context import ToolContext
    from agents.tool_guardrails import ToolInputGuardrailData

    from contractsim.integrations.openai_agents import guard_tools

    @function_tool
    def read_file(path: str) -> dict[str, Any]:
        """Returns a file's text."""
        return {"content": "x"}

    guard = contractsim.load(CONTRACT).guard(state=state, mode="return")
    [guarded] = guard_tools(guard, [read_file])

    def calls(tool_: FunctionTool) -> Callable[[list[str]], None]:
        async def each(ps: list[str]) -> None:
            for i, p in enumerate(ps):
                args = json.dumps({"path": p})
                ctx = ToolContext(
                    None, tool_name="read_file", tool_call_id=str(i), tool_arguments=args
                )
                for guardrail in tool_.tool_input_guardrails or []:
                    await guardrail.run(ToolInputGuardrailData(context=ctx, agent=None))  # type: ignore[arg-type]
                await tool_.on_invoke_tool(ctx, args)

        return lambda ps: asyncio.run(each(ps))

    return [
        ("bare @function_tool", per_call(calls(read_file), paths)),
        ("guarded", per_call(calls(guarded), paths)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--files", type=int, default=200)
    opts = parser.parse_args()
    files = {f"/data/f{i}.txt": f"content {i % 50}" for i in range(opts.files)}
    state = {"dirs": ["/", "/data"], "files": files}
    paths = [f"/data/f{i % opts.files}.txt" for i in range(opts.calls)]
    print(f"{opts.calls} calls of read_file, {opts.files} files in the state (CPU time)")
    for title, rows in (("LangChain", langchain_rows), ("OpenAI Agents SDK", agents_rows)):
        (bare_name, bare), (_, guarded) = rows(state, paths)
        print(f"{title}:")
        print(f"  {bare_name:22} {bare * 1e6:9.1f} µs/call")
        print(
            f"  {'guarded':22} {guarded * 1e6:9.1f} µs/call  "
            f"(+{(guarded - bare) * 1e6:.1f} µs, {guarded / bare:.2f}x the bare tool)"
        )


if __name__ == "__main__":
    main()
