"""What the framework integrations share: the guard they use, the contract tool a framework tool
stands for, and how a guarded call's answer is read (a refusal, a raise, or the real value)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..compiler.foreign import described
from ..diagnostics import did_you_mean
from ..runtime.guard import CallResult, Guard, GuardError

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.state import State

Undeclared = Literal["error", "refuse", "allow"]
UNDECLARED_CHOICES = ("error", "refuse", "allow")


def make_guard(
    contract: Contract | Guard,
    state: Mapping[str, Any] | State | None,
    options: Mapping[str, Any],
) -> Guard:
    """``contract``'s guard (``mode="return"``: a refusal is an answer, not an exception), or
    ``contract`` itself when it already is a guard (then ``state`` and options must be unset)."""
    if isinstance(contract, Guard):
        if state is not None or options:
            given = ["state"] * (state is not None) + sorted(options)
            raise TypeError(
                "pass state and guard options to contract.guard(...), not with an existing "
                f"guard (got {', '.join(given)})"
            )
        return contract
    guard_of = getattr(contract, "guard", None)
    if not callable(guard_of) or not hasattr(contract, "compiled"):
        raise TypeError(
            "contract must be a contractsim Contract (contractsim.load(...)) or a Guard "
            f"(contract.guard(...)), not {described(contract)}"
        )
    if "mode" in options:
        raise TypeError("mode is chosen by the integration; a refusal is always the tool's answer")
    guard: Guard = guard_of(state=state, mode="return", **options)
    return guard


def contract_tool_name(
    guard: Guard,
    name: str,
    names: Mapping[str, str] | None,
    undeclared: str,
) -> str | None:
    """The contract tool that framework tool ``name`` stands for (``names`` maps framework names
    to contract names), or ``None`` when the contract does not declare it and ``undeclared`` is
    ``"allow"`` (the tool then runs unguarded, with a warning). ``"error"`` raises ``ValueError``
    with a did-you-mean; ``"refuse"`` returns the name, and every call to it is refused."""
    if undeclared not in UNDECLARED_CHOICES:
        raise ValueError(
            f"undeclared must be one of {', '.join(UNDECLARED_CHOICES)}, not {undeclared!r}"
        )
    target = (names or {}).get(name, name)
    tools = guard.contract.compiled.tools
    if target in tools or undeclared == "refuse":
        return target
    guess = did_you_mean(target, tools)
    text = f"the contract `{guard.contract.name}` declares no tool `{target}`" + (
        f"; did you mean `{guess}`?" if guess else ""
    )
    if undeclared == "error":
        raise ValueError(
            text + " (map the name with names={...}, or pass undeclared='allow' or 'refuse')"
        )
    warnings.warn(text + ": it runs unguarded (undeclared='allow')", UserWarning, stacklevel=3)
    return None


def refusal_of(answer: Any) -> GuardError | None:
    """The refusal in a guarded call's answer (``mode="return"``), if the tool was not called."""
    if isinstance(answer, CallResult) and answer.error is not None and answer.error.blocked:
        return answer.error
    return None


def real_value(guard: Guard, answer: Any) -> Any:
    """The tool's own answer: its value, or its exception raised again (the framework handles a
    failing tool as it would without the guard)."""
    if guard.mode == "return" and isinstance(answer, CallResult):
        if answer.exception is not None:
            raise answer.exception
        return answer.value
    return answer


__all__ = [
    "Undeclared",
    "contract_tool_name",
    "make_guard",
    "real_value",
    "refusal_of",
]
