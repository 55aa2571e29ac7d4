"""contractsim.integrations.openai_agents: the contract as a tool input guardrail of the OpenAI
Agents SDK, run by the SDK's own agent loop (``Runner.run``) with a scripted model (the SDK's
``Model`` interface; no network, no API key)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    FunctionTool,
    ModelResponse,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from agents.exceptions import UserError
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

import contractsim
from contractsim.integrations.openai_agents import contract_guardrail, guard_tool, guard_tools

BACKUP = Path(__file__).parent.parent / "examples" / "backup" / "backup.contract"
STATE = {"dirs": ["/", "/data", "/archive"], "files": {"/data/report.txt": "Q3"}}
REFUSED_DELETE = (
    'delete_file(path="/data/report.txt") was refused: NO_BACKUP: /data/report.txt is the only '
    "copy of its content; deleting it would lose it\n"
    '  where path = "/data/report.txt"\n'
    '  where files = {"/data/report.txt": "Q3"}\n'
    "  where backed_up(path) = false\n"
    "Fix: call copy_file(src=/data/report.txt, dst=/archive/report.txt) first\n"
    "Other tools you can call now: list_dir, read_file, make_dir, copy_file"
)


def call(name: str, args: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=call_id, call_id=call_id, type="function_call", name=name, arguments=json.dumps(args)
    )


def say(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="final",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[])],
    )


class ScriptedModel(Model):
    """A model that answers each turn with the next scripted output items, and keeps the input
    it was given (where the tool outputs the SDK handed back can be read)."""

    def __init__(self, turns: list[list[Any]]) -> None:
        self.turns = list(turns)
        self.inputs: list[Any] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kw: Any
    ) -> Any:
        self.inputs.append(input)
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


class Disk:
    def __init__(self) -> None:
        self.files = {"/data/report.txt": "Q3"}
        self.calls: list[str] = []

    def tools(self) -> list[FunctionTool]:
        files, calls = self.files, self.calls

        @function_tool
        def copy_file(src: str, dst: str) -> dict[str, Any]:
            """Copies a file; the destination is created or overwritten."""
            calls.append(f"copy_file {src} {dst}")
            files[dst] = files[src]
            return {}

        @function_tool
        async def delete_file(path: str) -> dict[str, Any]:
            """Deletes a file for good."""
            calls.append(f"delete_file {path}")
            del files[path]
            return {}

        @function_tool
        def read_file(path: str) -> dict[str, Any]:
            """Returns a file's text."""
            calls.append(f"read_file {path}")
            if path not in files:
                raise FileNotFoundError(path)
            return {"content": files[path]}

        return [copy_file, delete_file, read_file]


def tool_outputs(model: ScriptedModel) -> dict[str, str]:
    """What the model was shown as each tool call's output, by call id."""
    return {
        item["call_id"]: item["output"]
        for item in model.inputs[-1]
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    }


@pytest.fixture(autouse=True)
def no_tracing() -> Any:
    """The SDK exports traces by default; nothing leaves this machine in the tests."""
    set_tracing_disabled(True)
    yield
    set_tracing_disabled(False)


@pytest.fixture
def contract() -> contractsim.Contract:
    return contractsim.load(BACKUP)


def run(agent: Agent[Any], question: str) -> Any:
    return asyncio.run(Runner.run(agent, question))


@pytest.mark.parametrize("mode", ["return", "raise"])
def test_the_agent_loop_reads_the_refusal_and_follows_its_hint(
    contract: contractsim.Contract, mode: Any
) -> None:
    disk = Disk()
    guard = contract.guard(state=STATE, mode=mode)
    model = ScriptedModel(
        [
            [call("delete_file", {"path": "/data/report.txt"}, "c1")],
            [call("copy_file", {"src": "/data/report.txt", "dst": "/archive/report.txt"}, "c2")],
            [call("delete_file", {"path": "/data/report.txt"}, "c3")],
            [say("Moved the report to the archive.")],
        ]
    )
    agent = Agent(name="archivist", model=model, tools=guard_tools(guard, disk.tools()))
    result = run(agent, "Move the report to the archive.")
    assert result.final_output == "Moved the report to the archive."
    outputs = tool_outputs(model)
    assert outputs == {"c1": REFUSED_DELETE, "c2": "{}", "c3": "{}"}
    assert disk.calls == [
        "copy_file /data/report.txt /archive/report.txt",
        "delete_file /data/report.txt",
    ]
    # the refusal is the SDK's own guardrail result, with the structured error
    [rejected] = [
        r for r in result.tool_input_guardrail_results if r.output.behavior["type"] != "allow"
    ]
    assert rejected.guardrail.get_name() == "contractsim_guard"
    assert rejected.output.output_info["error"] == "NO_BACKUP"
    # the real calls updated the guard's state
    assert guard.state["files"] == {"/archive/report.txt": "Q3"}
    assert [(r.tool, r.status, r.outcome) for r in guard.history] == [
        ("copy_file", "ok", "copied"),
        ("delete_file", "ok", "deleted"),
    ]


def test_a_raising_tool_fails_as_it_would_without_the_guard(
    contract: contractsim.Contract,
) -> None:
    disk = Disk()
    # the contract believes the file exists; the real tool raises
    guard = contract.guard(
        state={**STATE, "files": {"/data/report.txt": "Q3", "/data/gone.txt": "x"}}, mode="return"
    )
    model = ScriptedModel(
        [[call("read_file", {"path": "/data/gone.txt"}, "r1")], [say("It is gone.")]]
    )
    agent = Agent(name="reader", model=model, tools=guard_tools(guard, disk.tools()))
    assert run(agent, "Read /data/gone.txt").final_output == "It is gone."
    # the SDK's default failure text, as for the unguarded tool
    assert tool_outputs(model) == {
        "r1": "An error occurred while running the tool. Please try again."
    }
    assert (guard.history[-1].tool, guard.history[-1].status) == ("read_file", "crash")
    assert guard.state["files"]["/data/gone.txt"] == "x"  # a raise changes nothing


def test_arguments_the_contract_rejects_never_reach_the_tool(
    contract: contractsim.Contract,
) -> None:
    disk = Disk()
    model = ScriptedModel(
        [[call("read_file", {"path": "relative/path"}, "r1")], [say("Bad path.")]]
    )
    agent = Agent(name="reader", model=model, tools=guard_tools(contract, disk.tools(), STATE))
    run(agent, "Read it")
    output = tool_outputs(model)["r1"]
    assert output.startswith('read_file(path="relative/path") was refused: INVALID_ARGUMENT: ')
    assert disk.calls == []


def test_the_guardrail_alone_checks_without_recording(contract: contractsim.Contract) -> None:
    disk = Disk()
    guard = contract.guard(state=STATE)
    tools = disk.tools()
    for tool in tools:
        tool.tool_input_guardrails = [contract_guardrail(guard)]
    model = ScriptedModel(
        [
            [
                call("delete_file", {"path": "/data/report.txt"}, "d1"),
                call("read_file", {"path": "/data/report.txt"}, "r1"),
            ],
            [say("done")],
        ]
    )
    run(Agent(name="a", model=model, tools=tools), "go")
    outputs = tool_outputs(model)
    assert outputs["d1"] == REFUSED_DELETE
    assert json.loads(outputs["r1"].replace("'", '"')) == {"content": "Q3"}
    assert disk.calls == ["read_file /data/report.txt"] and guard.history == type(guard.history)()


def test_tools_the_contract_does_not_declare(contract: contractsim.Contract) -> None:
    @function_tool
    def delete_fle(path: str) -> str:
        """A typo'd name."""
        return "gone"

    with pytest.raises(
        ValueError, match="declares no tool `delete_fle`; did you mean `delete_file`"
    ):
        guard_tools(contract, [delete_fle])
    with pytest.warns(UserWarning, match="runs unguarded"):
        assert guard_tools(contract, [delete_fle], undeclared="allow") == [delete_fle]
    [refused] = guard_tools(contract, [delete_fle], undeclared="refuse")
    model = ScriptedModel([[call("delete_fle", {"path": "/x"}, "x1")], [say("no")]])
    run(Agent(name="a", model=model, tools=[refused]), "go")
    assert tool_outputs(model)["x1"].startswith(
        'delete_fle(path="/x") was refused: UNKNOWN_TOOL: the contract declares no tool '
        "`delete_fle`"
    )
    # mapped to the contract's name
    [mapped] = guard_tools(contract, [delete_fle], STATE, names={"delete_fle": "delete_file"})
    model = ScriptedModel([[call("delete_fle", {"path": "/data/report.txt"}, "m1")], [say("no")]])
    run(Agent(name="a", model=model, tools=[mapped]), "go")
    assert tool_outputs(model)["m1"].startswith('delete_file(path="/data/report.txt") was refused')
    with pytest.raises(TypeError, match="tool must be an Agents SDK FunctionTool"):
        guard_tool(contract.guard(), len)  # type: ignore[arg-type]


def test_the_docs_example_prints_what_the_docs_say(
    integrations_doc_example: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agents.models.multi_provider import MultiProvider

    code, expected = integrations_doc_example("OpenAI Agents SDK")
    model = ScriptedModel(
        [
            [call("delete_file", {"path": "/data/report.txt"}, "c1")],
            [call("copy_file", {"src": "/data/report.txt", "dst": "/archive/report.txt"}, "c2")],
            [call("delete_file", {"path": "/data/report.txt"}, "c3")],
            [say("Moved the report to /archive/report.txt.")],
        ]
    )
    # the scripted model in place of the OpenAI one: no network, no API key
    monkeypatch.setattr(MultiProvider, "get_model", lambda self, name: model)
    monkeypatch.chdir(BACKUP.parents[2])
    exec(compile(code, "integrations.md", "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out == expected


def test_tools_that_are_not_function_tools_are_returned_as_they_are(
    contract: contractsim.Contract,
) -> None:
    from agents import WebSearchTool

    hosted = WebSearchTool()
    [same] = guard_tools(contract, [hosted])
    assert same is hosted


def test_a_hand_built_tool_that_raises_still_fails_the_run(contract: contractsim.Contract) -> None:
    class DiskGone(Exception):
        pass

    async def invoke(context: Any, arguments: str) -> Any:
        raise DiskGone(arguments)

    def hand_built() -> FunctionTool:
        schema = {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        }
        return FunctionTool("read_file", "Reads a file.", schema, invoke)

    guard = contract.guard(state=STATE, mode="return")
    for tools in ([hand_built()], guard_tools(guard, [hand_built()])):
        model = ScriptedModel([[call("read_file", {"path": "/data/report.txt"}, "r1")]])
        with pytest.raises(UserError, match="Error running tool read_file") as raised:
            run(Agent(name="a", model=model, tools=tools), "go")
        assert isinstance(raised.value.__cause__, DiskGone)
    assert (guard.history[-1].tool, guard.history[-1].status) == ("read_file", "crash")


def test_an_observer_that_fails_refuses_the_call_in_return_mode(
    contract: contractsim.Contract,
) -> None:
    disk = Disk()
    guard = contract.guard(state=STATE, mode="return")

    @guard.observer("files")
    def files() -> Any:
        raise OSError("the disk is not mounted")

    model = ScriptedModel([[call("read_file", {"path": "/data/report.txt"}, "r1")], [say("no")]])
    run(Agent(name="a", model=model, tools=guard_tools(guard, disk.tools())), "go")
    assert tool_outputs(model)["r1"] == (
        'read_file(path="/data/report.txt") was refused: OBSERVER_FAILED: reading the state '
        "failed: OSError: the disk is not mounted\n"
        "Fix: the call was not made; try again when the state can be read"
    )
    assert disk.calls == []
