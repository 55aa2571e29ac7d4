"""contractsim: tool behaviour contracts for LLM agents.

Load a contract with :func:`load` or :func:`loads`, check files with :func:`check`, dry-run plans
with ``contract.simulator()``, guard real tool calls with ``contract.guard()``.
"""

import sys
import types
from typing import TYPE_CHECKING, Any

from .api import Contract, check, check_text, diff, from_pddl, load, loads
from .api import diff as _api_diff
from .compiler.values import UNKNOWN
from .dsl.diagnostics import ContractError, Diagnostic, Span

if TYPE_CHECKING:
    from .runtime.guard import CallResult, ContractViolation, Guard, GuardError
    from .simulator.observe import Observation

_LAZY = {
    "CallResult": "runtime.guard",
    "ContractViolation": "runtime.guard",
    "Guard": "runtime.guard",
    "GuardError": "runtime.guard",
    "Observation": "simulator.observe",
}


def __getattr__(name: str) -> Any:
    """The runtime names load on first use: ``check`` need not import the simulator."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _CallableDiff(types.ModuleType):
    """The ``contractsim.diff`` package, callable as :func:`contractsim.api.diff`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _api_diff(*args, **kwargs)


class _Package(types.ModuleType):
    """``contractsim``: importing the ``contractsim.diff`` package binds it here as a module; it
    stays callable, so ``contractsim.diff(old, new)`` works before and after that import."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "diff" and isinstance(value, types.ModuleType):
            value.__class__ = _CallableDiff
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__version__ = "0.1.0"

__all__ = [
    "UNKNOWN",
    "CallResult",
    "Contract",
    "ContractViolation",
    "ContractError",
    "Diagnostic",
    "Guard",
    "GuardError",
    "Observation",
    "Span",
    "__version__",
    "check",
    "check_text",
    "diff",
    "from_pddl",
    "load",
    "loads",
]
