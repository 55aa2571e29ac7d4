"""contractsim: tool behaviour contracts for LLM agents.

Load a contract with :func:`load` or :func:`loads`, check files with :func:`check`, dry-run plans
with ``contract.simulator()``.
"""

from .api import Contract, check, check_text, load, loads
from .compiler.values import UNKNOWN
from .dsl.diagnostics import ContractError, Diagnostic, Span

__version__ = "0.1.0"

__all__ = [
    "UNKNOWN",
    "Contract",
    "ContractError",
    "Diagnostic",
    "Span",
    "__version__",
    "check",
    "check_text",
    "load",
    "loads",
]
