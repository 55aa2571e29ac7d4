"""OpenAI Agents SDK function tools guarded by a contract (docs/integrations.md, "OpenAI Agents
SDK").

:func:`contract_guardrail` is a tool input guardrail (``ToolInputGuardrail``): before the SDK
invokes a function tool it validates the model's arguments against the contract and checks the
preconditions and protocol machines against the guard's tracked state; a call the contract says
must fail is rejected with ``ToolGuardrailFunctionOutput.reject_content``, so the model reads the
structured error (:meth:`~contractsim.runtime.guard.GuardError.to_llm`) instead of the tool's
output, and the run goes on. :func:`guard_tools` adds that guardrail to each tool and also routes
the tool's invocation through the guard, so that what the tool really returns (or raises) updates
the tracked state.

Requires ``openai-agents`` (``pip install 'contractsim[openai-agents]'``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agents import (
    FunctionTool,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
)
from agents.tool_context import ToolContext

from ..compiler.foreign import described, exception_text
from ..runtime.guard import ContractViolation, Guard, GuardError
from ._common import Undeclared, contract_tool_name, make_guard, refusal_of

try:  # how the SDK turns a raising tool into text for the model (internal in 0.24)
    from agents.tool import (
        maybe_invoke_function_tool_failure_error_function,
        set_function_tool_failure_error_function,
    )
except ImportError:  # pragma: no cover - another SDK version: errors stay the SDK's own text
    maybe_invoke_function_tool_failure_error_function = None  # type: ignore[assignment]
    set_function_tool_failure_error_function = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.state import State

_RUN = "__contractsim_run__"
Invoke = Callable[[ToolContext[Any], str], Awaitable[Any]]


def _arguments(text: str) -> dict[str, Any] | None:
    """The model's JSON arguments as a dict, or ``None`` when they are not a JSON object (the
    SDK reports those itself)."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def contract_guardrail(
    guard: Guard,
    *,
    names: Mapping[str, str] | None = None,
    undeclared: Undeclared = "refuse",
) -> ToolInputGuardrail[Any]:
    """A tool input guardrail that rejects the calls ``guard`` says must fail; the model gets
    ``error.to_llm()`` as the tool's output, and ``output_info`` holds ``error.to_json()``.

    Add it to a ``FunctionTool``'s ``tool_input_guardrails``. It only checks: to record what the
    tools really do into the guard's state, use :func:`guard_tools`. ``names`` maps a tool's name
    to the contract tool it stands for; a tool the contract does not declare is refused
    (``UNKNOWN_TOOL``, with a did-you-mean) with ``undeclared="refuse"``, let through with
    ``"allow"``."""
    if not isinstance(guard, Guard):
        raise TypeError(f"guard must be a contractsim Guard, not {described(guard)}")
    if undeclared not in ("refuse", "allow"):
        raise ValueError(f"undeclared must be 'refuse' or 'allow' here, not {undeclared!r}")
    mapping = dict(names or {})

    def contractsim_guard(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        tool = mapping.get(context.tool_name, context.tool_name)
        if undeclared == "allow" and tool not in guard.contract.compiled.tools:
            return ToolGuardrailFunctionOutput.allow()
        args = _arguments(context.tool_arguments)
        if args is None:
            return ToolGuardrailFunctionOutput.allow()
        try:
            error = guard.check(tool, args)
        except Exception as exc:  # an observer failed: as the guard answers it in return mode
            if guard.mode == "raise":
                raise
            error = GuardError(
                tool,
                args,
                "OBSERVER_FAILED",
                f"reading the state failed: {exception_text(exc)}",
                "the call was not made; try again when the state can be read",
            )
        if error is None:
            return ToolGuardrailFunctionOutput.allow()
        return ToolGuardrailFunctionOutput.reject_content(error.to_llm(), error.to_json())

    return ToolInputGuardrail(guardrail_function=contractsim_guard, name="contractsim_guard")


class _GuardedInvoke:
    """A function tool's ``on_invoke_tool`` run through the guard: the call is checked again
    (the state may have changed since the guardrail ran, e.g. between parallel calls), made,
    and its real outcome applied to the tracked state."""

    def __init__(self, guard: Guard, tool: str, original: FunctionTool) -> None:
        self.original = original
        self.raising = original
        # a tool made with @function_tool turns its exceptions into text for the model; a
        # FunctionTool built by hand raises them (and the run fails): both stay as they are
        self.formats_errors = callable(
            getattr(original.on_invoke_tool, "__agents_bind_function_tool__", None)
        )
        if self.formats_errors and set_function_tool_failure_error_function is not None:
            # a copy whose exceptions reach the guard; the original's policy then formats them
            self.raising = set_function_tool_failure_error_function(copy.copy(original), None)

        async def run(**kwargs: Any) -> Any:
            return await kwargs[_RUN]()

        self.guarded = guard.wrap(tool, run)
        self.guard = guard

    async def __call__(self, context: ToolContext[Any], arguments: str) -> Any:
        args = _arguments(arguments)
        if args is None:  # not a JSON object: the SDK's own error
            return await self.original.on_invoke_tool(context, arguments)

        async def call() -> Any:
            return await self.raising.on_invoke_tool(context, arguments)

        try:
            answer = await self.guarded(**args, **{_RUN: call})
        except ContractViolation as refused:  # a guard in raise mode
            return refused.error.to_llm()
        except Exception as exc:  # a guard in raise mode re-raises the tool's exception
            return await self._failed(context, exc)
        error: GuardError | None = refusal_of(answer)
        if error is not None:
            return error.to_llm()
        if self.guard.mode == "return":
            if answer.exception is not None:
                return await self._failed(context, answer.exception)
            return answer.value
        return answer

    async def _failed(self, context: ToolContext[Any], exc: BaseException) -> Any:
        """The text the original tool gives the model for ``exc``, or ``exc`` raised when the
        tool has no failure text (``failure_error_function=None``)."""
        if not self.formats_errors or maybe_invoke_function_tool_failure_error_function is None:
            raise exc
        text = await maybe_invoke_function_tool_failure_error_function(
            function_tool=self.original, context=context, error=exc
        )
        if text is None:
            raise exc
        return text


def guard_tool(
    guard: Guard,
    tool: FunctionTool,
    *,
    name: str | None = None,
    undeclared: Undeclared = "error",
) -> FunctionTool:
    """A copy of ``tool`` with :func:`contract_guardrail` among its input guardrails and its
    invocation run through ``guard`` as the contract's tool ``name`` (default: the tool's own
    name). See :func:`guard_tools` for ``undeclared``."""
    if not isinstance(guard, Guard):
        raise TypeError(f"guard must be a contractsim Guard, not {described(guard)}")
    if not isinstance(tool, FunctionTool):
        raise TypeError(
            "tool must be an Agents SDK FunctionTool (made with @function_tool), "
            f"not {described(tool)}"
        )
    contract_tool = contract_tool_name(
        guard, tool.name, {tool.name: name} if name else None, undeclared
    )
    if contract_tool is None:
        return tool
    guarded = copy.copy(tool)
    names = {tool.name: contract_tool}
    guarded.tool_input_guardrails = [
        *(tool.tool_input_guardrails or []),
        contract_guardrail(guard, names=names),
    ]
    if contract_tool in guard.contract.compiled.tools:
        guarded.on_invoke_tool = _GuardedInvoke(guard, contract_tool, tool)
    return guarded


def guard_tools(
    contract: Contract | Guard,
    tools: Iterable[FunctionTool],
    state: Mapping[str, Any] | State | None = None,
    *,
    names: Mapping[str, str] | None = None,
    undeclared: Undeclared = "error",
    **guard_options: Any,
) -> list[FunctionTool]:
    """Every function tool of ``tools`` guarded by one guard of ``contract``: a copy of each
    with :func:`contract_guardrail` added to its ``tool_input_guardrails`` and its invocation
    recorded into the guard's state.

    ``contract``: a loaded contract (its guard is made with ``state`` and ``guard_options`` —
    ``now``, ``block_on_unknown``, ``serialize``, ``history_limit``) or a
    :class:`~contractsim.runtime.guard.Guard` to share. ``names`` maps a tool's name to the
    contract tool it stands for. ``undeclared`` — a tool the contract does not declare:
    ``"error"`` (default) raises ``ValueError`` here, with a did-you-mean; ``"refuse"`` keeps the
    tool, and the guardrail rejects every call to it (``UNKNOWN_TOOL``); ``"allow"`` returns it
    unguarded, with a ``UserWarning``. Other tools (hosted tools, handoffs) are returned as
    they are."""
    guard = make_guard(contract, state, guard_options)
    out: list[FunctionTool] = []
    for tool in tools:
        if not isinstance(tool, FunctionTool):
            out.append(tool)
            continue
        mapped = (names or {}).get(tool.name)
        out.append(guard_tool(guard, tool, name=mapped, undeclared=undeclared))
    return out


__all__ = ["contract_guardrail", "guard_tool", "guard_tools"]
