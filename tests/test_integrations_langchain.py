"""contractsim.integrations.langchain: LangChain tools guarded by a contract, run through
langchain-core's own tool machinery (``invoke``/``ainvoke`` with tool calls, ``ToolMessage``) and
a scripted chat model driving a tool-calling loop."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, Tool, ToolException, tool

import contractsim
from contractsim.integrations.langchain import ContractRefusal, GuardedTool, guard_tools

BACKUP = Path(__file__).parent.parent / "examples" / "backup" / "backup.contract"
REFUSED_DELETE = (
    'delete_file(path="/data/report.txt") was refused: NO_BACKUP: /data/report.txt is the only '
    "copy of its content; deleting it would lose it\n"
    '  where path = "/data/report.txt"\n'
    '  where files = {"/data/report.txt": "Q3"}\n'
    "  where backed_up(path) = false\n"
    "Fix: call copy_file(src=/data/report.txt, dst=/archive/report.txt) first\n"
    "Other tools you can call now: list_dir, read_file, make_dir, copy_file"
)


class Disk:
    """The real world the tools change: a dict of files, and a log of the calls made."""

    def __init__(self) -> None:
        self.files = {"/data/report.txt": "Q3"}
        self.calls: list[str] = []

    def tools(self) -> list[BaseTool]:
        files, calls = self.files, self.calls

        @tool
        def copy_file(src: str, dst: str) -> dict[str, Any]:
            """Copies a file; the destination is created or overwritten."""
            calls.append(f"copy_file {src} {dst}")
            if src not in files:
                return {"error": f"{src}: no such file"}
            files[dst] = files[src]
            return {}

        @tool
        def delete_file(path: str) -> dict[str, Any]:
            """Deletes a file for good."""
            calls.append(f"delete_file {path}")
            del files[path]
            return {}

        @tool
        async def read_file(path: str) -> dict[str, Any]:
            """Returns a file's text."""
            calls.append(f"read_file {path}")
            return {"content": files[path]}

        return [copy_file, delete_file, read_file]


STATE = {"dirs": ["/", "/data", "/archive"], "files": {"/data/report.txt": "Q3"}}


@pytest.fixture
def disk() -> Disk:
    return Disk()


@pytest.fixture
def contract() -> contractsim.Contract:
    return contractsim.load(BACKUP)


def by_name(tools: list[BaseTool]) -> dict[str, BaseTool]:
    return {t.name: t for t in tools}


def test_a_refused_call_is_the_tools_output_and_the_tool_is_not_called(
    disk: Disk, contract: contractsim.Contract
) -> None:
    tools = by_name(guard_tools(contract, disk.tools(), state=STATE))
    assert tools["delete_file"].invoke({"path": "/data/report.txt"}) == REFUSED_DELETE
    assert disk.calls == [] and disk.files == {"/data/report.txt": "Q3"}
    # through a tool call the answer is a ToolMessage marked as an error
    message = tools["delete_file"].invoke(
        {
            "type": "tool_call",
            "id": "c1",
            "name": "delete_file",
            "args": {"path": "/data/report.txt"},
        }
    )
    assert isinstance(message, ToolMessage)
    assert (message.content, message.status, message.tool_call_id) == (
        REFUSED_DELETE,
        "error",
        "c1",
    )
    guard = tools["delete_file"].guard  # type: ignore[attr-defined]
    assert [(r.tool, r.status, r.verdict) for r in guard.history] == [
        ("delete_file", "blocked", "fails"),
        ("delete_file", "blocked", "fails"),
    ]


def test_real_results_update_the_guards_state(disk: Disk, contract: contractsim.Contract) -> None:
    tools = by_name(guard_tools(contract, disk.tools(), state=STATE))
    assert (
        tools["copy_file"].invoke({"src": "/data/report.txt", "dst": "/archive/report.txt"}) == {}
    )
    guard = tools["copy_file"].guard  # type: ignore[attr-defined]
    assert guard.state["files"] == {"/data/report.txt": "Q3", "/archive/report.txt": "Q3"}
    # now a copy exists: the delete is let through, and its effect is tracked
    assert tools["delete_file"].invoke({"path": "/data/report.txt"}) == {}
    assert guard.state["files"] == {"/archive/report.txt": "Q3"}
    assert disk.files == {"/archive/report.txt": "Q3"}
    assert [(r.tool, r.status, r.outcome) for r in guard.history] == [
        ("copy_file", "ok", "copied"),
        ("delete_file", "ok", "deleted"),
    ]


def test_a_failure_the_tool_reports_leaves_the_state_unchanged(
    disk: Disk, contract: contractsim.Contract
) -> None:
    state = {**STATE, "files": {"/data/report.txt": "Q3", "/data/ghost.txt": "x"}}
    tools = by_name(guard_tools(contract, disk.tools(), state=state))
    # the contract believes /data/ghost.txt exists; the tool says otherwise (observed when)
    answer = tools["copy_file"].invoke({"src": "/data/ghost.txt", "dst": "/archive/ghost.txt"})
    assert answer == {"error": "/data/ghost.txt: no such file"}
    guard = tools["copy_file"].guard  # type: ignore[attr-defined]
    assert "/archive/ghost.txt" not in guard.state["files"]
    assert (guard.history[-1].status, guard.history[-1].outcome) == ("error", "failed")


def test_ainvoke_is_guarded_too(disk: Disk, contract: contractsim.Contract) -> None:
    tools = by_name(guard_tools(contract, disk.tools(), state=STATE))
    assert asyncio.run(tools["read_file"].ainvoke({"path": "/data/report.txt"})) == {
        "content": "Q3"
    }
    refused = asyncio.run(tools["read_file"].ainvoke({"path": "/data/nothing.txt"}))
    assert refused.startswith(
        'read_file(path="/data/nothing.txt") was refused: NOT_FOUND: no such file: '
        "/data/nothing.txt\n"
    )
    assert disk.calls == ["read_file /data/report.txt"]
    # a sync tool awaited: LangChain runs it in an executor, through the same guard
    refused = asyncio.run(tools["delete_file"].ainvoke({"path": "/data/report.txt"}))
    assert refused == REFUSED_DELETE and "delete_file /data/report.txt" not in disk.calls


class ScriptedChatModel(FakeMessagesListChatModel):
    """A chat model that answers with the scripted messages in turn (tool calls included)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # noqa: ARG002 - scripted answers
        return self


def run_agent(model: Any, tools: list[BaseTool], question: str) -> list[BaseMessage]:
    """The tool-calling loop of a LangChain agent: ask the model, run each tool call with
    ``tool.invoke(tool_call)``, hand the ``ToolMessage`` back, until the model answers."""
    named = by_name(tools)
    llm = model.bind_tools(tools)
    messages: list[BaseMessage] = [HumanMessage(question)]
    for _ in range(10):
        reply = llm.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        for call in reply.tool_calls:
            messages.append(named[call["name"]].invoke(call))
    raise AssertionError("the agent did not finish")


def test_an_agent_loop_reads_the_refusal_and_follows_its_hint(
    disk: Disk, contract: contractsim.Contract
) -> None:
    def call(name: str, args: dict[str, Any], id: str) -> AIMessage:
        return AIMessage("", tool_calls=[{"name": name, "args": args, "id": id}])

    model = ScriptedChatModel(
        responses=[
            call("delete_file", {"path": "/data/report.txt"}, "1"),
            call("copy_file", {"src": "/data/report.txt", "dst": "/archive/report.txt"}, "2"),
            call("delete_file", {"path": "/data/report.txt"}, "3"),
            AIMessage("Moved the report to the archive."),
        ]
    )
    tools = guard_tools(contract, disk.tools(), state=STATE)
    messages = run_agent(model, tools, "Move the report to the archive.")
    results = [
        (m.tool_call_id, m.status, m.content) for m in messages if isinstance(m, ToolMessage)
    ]
    assert results == [
        ("1", "error", REFUSED_DELETE),
        ("2", "success", "{}"),
        ("3", "success", "{}"),
    ]
    assert disk.calls == [
        "copy_file /data/report.txt /archive/report.txt",
        "delete_file /data/report.txt",
    ]
    assert disk.files == {"/archive/report.txt": "Q3"}
    assert tools[0].guard.state["files"] == {"/archive/report.txt": "Q3"}  # type: ignore[attr-defined]


def test_the_wrapped_tool_shows_the_model_the_same_schema(
    disk: Disk, contract: contractsim.Contract
) -> None:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    originals = disk.tools()
    for original, wrapped in zip(originals, guard_tools(contract, originals, state=STATE)):
        assert isinstance(wrapped, GuardedTool) and wrapped.tool is original
        assert convert_to_openai_tool(wrapped) == convert_to_openai_tool(original)


def test_tools_the_contract_does_not_declare(contract: contractsim.Contract) -> None:
    @tool
    def delete_fle(path: str) -> str:
        """A typo'd name."""
        return "gone"

    with pytest.raises(ValueError) as raised:
        guard_tools(contract, [delete_fle])
    assert str(raised.value) == (
        "the contract `backup` declares no tool `delete_fle`; did you mean `delete_file`? "
        "(map the name with names={...}, or pass undeclared='allow' or 'refuse')"
    )
    with pytest.warns(UserWarning, match="declares no tool `delete_fle`.*runs unguarded"):
        [allowed] = guard_tools(contract, [delete_fle], undeclared="allow")
    assert allowed is delete_fle
    [refused] = guard_tools(contract, [delete_fle], undeclared="refuse")
    assert refused.invoke({"path": "/x"}).startswith(
        'delete_fle(path="/x") was refused: UNKNOWN_TOOL: the contract declares no tool '
        "`delete_fle`"
    )
    [mapped] = guard_tools(contract, [delete_fle], state=STATE, names={"delete_fle": "delete_file"})
    assert mapped.invoke({"path": "/data/report.txt"}).startswith(
        'delete_file(path="/data/report.txt") was refused: NO_BACKUP'
    )
    with pytest.raises(ValueError, match="undeclared must be one of error, refuse, allow"):
        guard_tools(contract, [delete_fle], undeclared="ignore")  # type: ignore[arg-type]


def test_tool_exceptions_are_handled_as_the_original_tool_handles_them(
    contract: contractsim.Contract,
) -> None:
    def failing(path: str) -> str:
        raise ToolException(f"disk error on {path}")

    handled = Tool.from_function(failing, "read_file", "Reads a file.", handle_tool_error=True)
    strict = Tool.from_function(failing, "read_file", "Reads a file.")
    [guarded] = guard_tools(contract, [handled], state=STATE)
    # a single-input tool: its string input is the contract's one parameter
    assert guarded.invoke("/data/report.txt") == "disk error on /data/report.txt"
    guard = guarded.guard  # type: ignore[attr-defined]
    assert (guard.history[-1].args, guard.history[-1].status) == (
        {"path": "/data/report.txt"},
        "crash",  # a raise the contract does not name: recorded, the state left as it was
    )
    [guarded] = guard_tools(contract, [strict], state=STATE)
    with pytest.raises(ToolException, match="disk error on /data/report.txt"):
        guarded.invoke("/data/report.txt")
    # a refusal is never raised, whatever the original tool's setting
    assert guarded.invoke("/nowhere.txt").startswith('read_file(path="/nowhere.txt") was refused')


def test_a_shared_guard_in_raise_mode_and_plain_functions(contract: contractsim.Contract) -> None:
    guard = contract.guard(state=STATE)  # mode="raise"
    made: list[str] = []

    def make_dir(path: str) -> dict[str, Any]:
        """Creates a directory."""
        made.append(path)
        return {}

    [tool_] = guard_tools(guard, [make_dir])
    assert tool_.invoke({"path": "/archive/2024"}) == {}
    assert tool_.invoke({"path": "/nope/2024"}).startswith(
        'make_dir(path="/nope/2024") was refused: PARENT_MISSING'
    )
    assert made == ["/archive/2024"] and "/archive/2024" in guard.state["dirs"]
    with pytest.raises(TypeError, match="pass state and guard options to contract.guard"):
        guard_tools(guard, [make_dir], state=STATE)
    with pytest.raises(TypeError, match="mode is chosen by the integration"):
        guard_tools(contract, [make_dir], mode="raise")
    with pytest.raises(TypeError, match="contract must be a contractsim Contract"):
        guard_tools("backup.contract", [make_dir])  # type: ignore[arg-type]


def test_content_and_artifact_tools_are_read_by_their_artifact(
    contract: contractsim.Contract,
) -> None:
    @tool(response_format="content_and_artifact")
    def read_file(path: str) -> tuple[str, dict[str, Any]]:
        """Returns a file's text."""
        return "the file says Q3", {"error": "the disk is gone"}

    [guarded] = guard_tools(contract, [read_file], state=STATE)
    message = guarded.invoke(
        {"type": "tool_call", "id": "r", "name": "read_file", "args": {"path": "/data/report.txt"}}
    )
    assert (message.content, message.artifact) == (
        "the file says Q3",
        {"error": "the disk is gone"},
    )
    last = guarded.guard.history[-1]  # type: ignore[attr-defined]
    assert (last.status, last.outcome) == ("error", "failed")  # the artifact's `error` was read


def test_refusal_exception_carries_the_structured_error(contract: contractsim.Contract) -> None:
    error = contract.guard(state=STATE).check("delete_file", {"path": "/data/report.txt"})
    assert error is not None
    refusal = ContractRefusal(error)
    assert isinstance(refusal, ToolException) and str(refusal) == REFUSED_DELETE
    assert refusal.error.to_json()["error"] == "NO_BACKUP"


def test_the_docs_example_prints_what_the_docs_say(
    integrations_doc_example: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, expected = integrations_doc_example("LangChain")
    monkeypatch.chdir(BACKUP.parents[2])
    exec(compile(code, "integrations.md", "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out == expected
