"""contractsim: tool behaviour contracts for LLM agents.

Load a contract with :func:`load` or :func:`loads`, check files with :func:`check`, dry-run plans
with ``contract.simulator()``, guard real tool calls with ``contract.guard()``.
"""

from typing import TYPE_CHECKING, Any

from .api import Contract, check, check_text, from_pddl, import_spec, load, loads
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
    "from_pddl",
    "import_spec",
    "load",
    "loads",
]
