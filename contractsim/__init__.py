"""contractsim: tool behaviour contracts for LLM agents.

Load a contract with :func:`load` or :func:`loads`, check files with :func:`check`, dry-run plans
with ``contract.simulator()``, guard real tool calls with ``contract.guard()``.

The packages follow the pipeline, bottom to top (docs/architecture.md): :mod:`.sources` reads
input files and :mod:`.diagnostics` reports; :mod:`.grammar` parses text; :mod:`.dsl` lowers it to
IR and checks it; :mod:`.compiler` compiles the IR; :mod:`.simulator` runs it; :mod:`.runtime`,
:mod:`.replay`, :mod:`.export`, :mod:`.render` and :mod:`.pddl` build on them; :mod:`.api` is the
façade and :mod:`.cli` the command line. A module imports only from its own package or a lower
layer (``tests/test_layers.py``).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import Contract, check, check_text, diff, from_pddl, import_spec, learn, load, loads
    from .compiler.values import UNKNOWN
    from .diagnostics import ContractError, Diagnostic, Span
    from .runtime.guard import CallResult, ContractViolation, Guard, GuardError
    from .simulator.observe import Observation

# Every name loads on first use: ``contractsim --version`` imports nothing else, ``check`` need
# not import the simulator.
_LAZY = {
    "Contract": "api",
    "check": "api",
    "check_text": "api",
    "diff": "api",
    "learn": "api",
    "from_pddl": "api",
    "import_spec": "api",
    "load": "api",
    "loads": "api",
    "UNKNOWN": "compiler.values",
    "ContractError": "diagnostics",
    "Diagnostic": "diagnostics",
    "Span": "diagnostics",
    "CallResult": "runtime.guard",
    "ContractViolation": "runtime.guard",
    "Guard": "runtime.guard",
    "GuardError": "runtime.guard",
    "Observation": "simulator.observe",
}


def __getattr__(name: str) -> Any:
    """The public names load on first use (see ``_LAZY``)."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
    "learn",
    "import_spec",
    "load",
    "loads",
]
