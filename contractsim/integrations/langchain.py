"""LangChain tools guarded by a contract (docs/integrations.md, "LangChain").

``guard_tools(contract, tools, state=...)`` returns the tools wrapped in one guard: before each
call the guard validates the arguments and checks the contract's preconditions and protocol
machines against its tracked state; a call the contract says must fail is not made, and its
structured error (:meth:`~contractsim.runtime.guard.GuardError.to_llm`) becomes the tool's output
(a ``ToolMessage`` with ``status="error"``), so the model reads why and what to do instead. A call
that is made updates the tracked state with what the tool really returned (the guard's observe
path). ``invoke`` and ``ainvoke`` are both guarded; the wrapped tool keeps the name, description,
argument schema and response format of the original.

Requires ``langchain-core`` (``pip install 'contractsim[langchain]'``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_core.tools.base import _get_runnable_config_param, _handle_tool_error
from pydantic import ConfigDict, PrivateAttr

from ..compiler.foreign import described
from ..runtime.guard import ContractViolation, Guard, GuardError
from ._common import Undeclared, contract_tool_name, make_guard, real_value, refusal_of

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.state import State

# the key under which the guarded shim receives the call to make; no contract parameter has it
_RUN = "__contractsim_run__"


class ContractRefusal(ToolException):
    """The guard refused a call: the tool was not called. A :class:`GuardedTool` turns it into
    the tool's output (``error.to_llm()``); ``error`` holds the structured details."""

    def __init__(self, error: GuardError) -> None:
        super().__init__(error.to_llm())
        self.error = error


class GuardedTool(BaseTool):
    """A LangChain tool run through a contract's guard; create it with :func:`guard_tool` or
    :func:`guard_tools`. ``tool`` is the original tool, ``guard`` the
    :class:`~contractsim.runtime.guard.Guard`, ``contract_tool`` the contract tool it stands for
    (with ``undeclared="refuse"``, one the contract does not
    declare: then every call is refused)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: BaseTool
    guard: Guard
    contract_tool: str

    _guarded: Callable[..., Any] | None = PrivateAttr(default=None)
    _aguarded: Callable[..., Any] | None = PrivateAttr(default=None)
    # what the original's _run / _arun asks to be given (run_manager, the config's name): read
    # once, as reading a signature's type hints costs more than the guard's own check
    _sync_wants: tuple[bool, str | None] = PrivateAttr(default=(False, None))
    _async_wants: tuple[bool, str | None] = PrivateAttr(default=(False, None))

    def model_post_init(self, context: Any, /) -> None:
        inner = self.tool
        self._sync_wants = _wants(inner._run)
        self._async_wants = _wants(
            inner._run if type(inner)._arun is BaseTool._arun else inner._arun
        )
        if self.contract_tool in self.guard.contract.compiled.tools:

            def run(**kwargs: Any) -> Any:
                return kwargs[_RUN]()

            async def arun(**kwargs: Any) -> Any:
                return await kwargs[_RUN]()

            self._guarded = self.guard.wrap(self.contract_tool, run)
            self._aguarded = self.guard.wrap(self.contract_tool, arun)

    # the schema the model sees and the way input is read are the original tool's
    @property
    def args(self) -> dict[str, Any]:
        return self.tool.args

    @property
    def tool_call_schema(self) -> Any:
        return self.tool.tool_call_schema

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return self.tool._to_args_and_kwargs(tool_input, tool_call_id)

    def _run(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        extra = _injected(self._sync_wants, run_manager, config)
        response: list[Any] = []

        def call() -> Any:
            response.append(self.tool._run(*args, **kwargs, **extra))
            return self._observed(response[0])

        values = self._contract_args(args, kwargs)
        if self._guarded is None:  # undeclared="refuse": every call is refused
            raise ContractRefusal(self._refusal(values))
        try:
            answer = self._guarded(**values, **{_RUN: call})
        except ContractViolation as refused:  # a guard in raise mode
            raise ContractRefusal(refused.error) from None
        return self._answer(answer, response)

    async def _arun(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        inner = self.tool
        extra = _injected(self._async_wants, run_manager, config)
        response: list[Any] = []

        async def call() -> Any:
            response.append(await inner._arun(*args, **kwargs, **extra))
            return self._observed(response[0])

        values = self._contract_args(args, kwargs)
        if self._aguarded is None:
            raise ContractRefusal(self._refusal(values))
        try:
            answer = await self._aguarded(**values, **{_RUN: call})
        except ContractViolation as refused:
            raise ContractRefusal(refused.error) from None
        return self._answer(answer, response)

    # -- helpers
    def _contract_args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments by contract parameter name: keywords as they are, positional
        input (a single-input ``Tool``'s string) bound to the parameters in declared order."""
        values = dict(kwargs)
        ctool = self.guard.contract.compiled.tools.get(self.contract_tool)
        if args and ctool is not None:
            for param, value in zip((p.name for p in ctool.ir.params), args):
                values.setdefault(param, value)
        return values

    def _refusal(self, values: Mapping[str, Any]) -> GuardError:
        error = self.guard.check(self.contract_tool, values)
        assert error is not None  # the contract declares no such tool: the check must fail
        return error

    def _observed(self, response: Any) -> Any:
        """What the contract reads as the call's result: the artifact (the raw output) of a
        ``content_and_artifact`` tool, the returned content otherwise."""
        if self.response_format == "content_and_artifact" and isinstance(response, tuple):
            return response[1] if len(response) == 2 else response
        return response

    def _answer(self, answer: Any, response: list[Any]) -> Any:
        error = refusal_of(answer)
        if error is not None:
            raise ContractRefusal(error)
        real_value(self.guard, answer)  # raises the tool's own exception again
        return response[0]


def _wants(run: Callable[..., Any]) -> tuple[bool, str | None]:
    """Whether ``run`` takes ``run_manager``, and the name of its ``RunnableConfig`` parameter,
    as ``BaseTool.run`` reads them."""
    return "run_manager" in inspect.signature(run).parameters, _get_runnable_config_param(run)


def _injected(
    wants: tuple[bool, str | None],
    run_manager: CallbackManagerForToolRun | AsyncCallbackManagerForToolRun | None,
    config: RunnableConfig,
) -> dict[str, Any]:
    """The run manager and config the original tool's ``_run``/``_arun`` asks for, as
    ``BaseTool.run`` would pass them."""
    takes_manager, config_name = wants
    extra: dict[str, Any] = {"run_manager": run_manager} if takes_manager else {}
    if config_name:
        extra[config_name] = config
    return extra


def _error_handler(original: Any) -> Callable[[ToolException], Any]:
    """``handle_tool_error`` of a guarded tool: a refusal is the tool's output; any other
    ``ToolException`` is handled as the original tool handles it (raised when it does not)."""

    def handle(error: ToolException) -> Any:
        if isinstance(error, ContractRefusal):
            return str(error)
        if not original:
            raise error
        return _handle_tool_error(error, flag=original)

    return handle


def guard_tool(
    guard: Guard,
    tool: BaseTool | Callable[..., Any],
    *,
    name: str | None = None,
    undeclared: Undeclared = "error",
) -> BaseTool:
    """``tool`` (a LangChain tool, or a plain function made into one with
    ``StructuredTool.from_function``) guarded by ``guard`` as the contract's tool ``name``
    (default: the tool's own name). See :func:`guard_tools` for ``undeclared``."""
    if not isinstance(guard, Guard):
        raise TypeError(f"guard must be a contractsim Guard, not {described(guard)}")
    if not isinstance(tool, BaseTool):
        if not callable(tool):
            raise TypeError(f"tool must be a LangChain tool or a function, not {described(tool)}")
        tool = StructuredTool.from_function(tool)
    contract_tool = contract_tool_name(
        guard, tool.name, {tool.name: name} if name else None, undeclared
    )
    if contract_tool is None:
        return tool
    return GuardedTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.args_schema,
        return_direct=tool.return_direct,
        verbose=tool.verbose,
        callbacks=tool.callbacks,
        tags=tool.tags,
        metadata=tool.metadata,
        handle_tool_error=_error_handler(tool.handle_tool_error),
        handle_validation_error=tool.handle_validation_error,
        response_format=tool.response_format,
        extras=tool.extras,
        tool=tool,
        guard=guard,
        contract_tool=contract_tool,
    )


def guard_tools(
    contract: Contract | Guard,
    tools: Iterable[BaseTool | Callable[..., Any]],
    state: Mapping[str, Any] | State | None = None,
    *,
    names: Mapping[str, str] | None = None,
    undeclared: Undeclared = "error",
    **guard_options: Any,
) -> list[BaseTool]:
    """Every tool of ``tools`` guarded by one guard of ``contract``.

    ``contract``: a loaded contract (its guard is made with ``state`` and ``guard_options`` —
    ``now``, ``block_on_unknown``, ``serialize``, ``history_limit``, as ``contract.guard`` takes
    them) or a :class:`~contractsim.runtime.guard.Guard` to share. ``names`` maps a tool's name
    to the contract tool it stands for, when they differ. ``undeclared`` says what happens to a
    tool the contract does not declare: ``"error"`` (default) raises ``ValueError`` here, with a
    did-you-mean; ``"refuse"`` wraps it so that every call is refused (``UNKNOWN_TOOL``);
    ``"allow"`` returns it unguarded, with a ``UserWarning``. Each wrapped tool's ``guard``
    attribute is the shared guard (its ``state``, ``history`` and ``drift``)."""
    guard = make_guard(contract, state, guard_options)
    out: list[BaseTool] = []
    for tool in tools:
        original = tool.name if isinstance(tool, BaseTool) else getattr(tool, "__name__", None)
        mapped = (names or {}).get(original) if isinstance(original, str) else None
        out.append(guard_tool(guard, tool, name=mapped, undeclared=undeclared))
    return out


__all__ = ["ContractRefusal", "GuardedTool", "guard_tool", "guard_tools"]
