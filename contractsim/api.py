"""One-call entry points: :func:`load`, :func:`loads`, :func:`check`, and the :class:`Contract`."""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .diagnostics import ContractError, Diagnostic, Span, error
from .dsl import ir
from .dsl.check import check_and_resolve
from .dsl.lower import lower
from .grammar.parse import nesting_depth_problem, parse
from .sources import MAX_SOURCE_BYTES
from .sources import decode_source as decode_source  # re-exported: older import paths
from .sources import path_problem as path_problem
from .sources import read_bounded as read_bounded
from .sources import read_input as read_input
from .sources import read_source as read_source

if TYPE_CHECKING:
    from .compiler.compile import CompiledContract
    from .diffing import DiffReport
    from .importers import ImportResult
    from .learning import LearnResult
    from .replay.traces import Adapter, Run
    from .runtime.guard import Guard
    from .simulator.engine import Simulator
    from .simulator.explore import PlanReport
    from .simulator.state import State


class Contract:
    """A checked contract: its IR, its warnings, and the way into the simulator.

    Build one with :func:`load` or :func:`loads`; it is never constructed from unchecked IR.
    """

    def __init__(
        self, contract_ir: ir.Contract, source: str, filename: str, diagnostics: list[Diagnostic]
    ) -> None:
        self.ir = contract_ir
        self.source = source
        self.filename = filename
        self.warnings = [d for d in diagnostics if d.severity != "error"]

    @property
    def name(self) -> str:
        return self.ir.header.name

    @property
    def version(self) -> str:
        return self.ir.header.version

    @property
    def tools(self) -> list[str]:
        """The tool names, in declaration order."""
        return [t.name for t in self.ir.tools]

    @functools.cached_property
    def compiled(self) -> CompiledContract:
        """The runtime artefacts (validators, compiled predicates and effects, tables)."""
        from .compiler.compile import compile_contract

        return compile_contract(self.ir, self.source)

    def compile(self, lazy: bool = False) -> CompiledContract:
        """:attr:`compiled`, made now if it was not. ``lazy``: its generated code is compiled
        chunk by chunk (the predicates, each tool's functions, ...) when first called, so that
        a process that calls a few tools compiles only theirs (``contractsim simulate``)."""
        if "compiled" not in self.__dict__:  # where functools.cached_property keeps it
            from .compiler.compile import compile_contract

            self.__dict__["compiled"] = compile_contract(self.ir, self.source, lazy=lazy)
        return self.compiled

    def simulator(self, now: datetime | str | None = None, step_seconds: float = 10.0) -> Simulator:
        """A :class:`~contractsim.simulator.engine.Simulator` for dry-running plans. ``now``
        fixes ``today()``/``now()`` (RFC 3339 text or a datetime; default: the wall clock);
        ``step_seconds`` bounds the looping of one step."""
        from .simulator.engine import Simulator

        return Simulator(self, now=now, step_seconds=step_seconds)

    def select(
        self,
        needs: list[str],
        exclude: list[str] | None = None,
        goal: str | None = None,
        **plan_bounds: Any,
    ) -> Any:
        """The minimum-cost set of tools whose tags cover every need (``Selection``; None when
        nothing covers them). With ``goal``: the tools of the cheapest plan to the goal (also
        covering the needs), each shown necessary. See docs/planning.md."""
        from .planning.select import causal_select, select

        if goal is not None:
            return causal_select(self.simulator(), needs, exclude or [], goal, **plan_bounds)
        return select(self.ir, needs, exclude or [])

    def guard(
        self,
        state: Mapping[str, Any] | State | None = None,
        mode: Literal["raise", "return"] = "raise",
        now: datetime | str | None = None,
        block_on_unknown: bool = False,
        serialize: bool = False,
        history_limit: int = 10_000,
    ) -> Guard:
        """A :class:`~contractsim.runtime.guard.Guard` that checks real tool calls against this
        contract and tracks their effects (docs/guard.md)."""
        from .runtime.guard import Guard

        return Guard(self, state, mode, now, block_on_unknown, serialize, history_limit)

    def to_transitions(
        self,
        machine: str | None = None,
        model: Any = None,
        graph: bool = False,
        state: Any = None,
        **kwargs: Any,
    ) -> Any:
        """A ``transitions.Machine`` (``GraphMachine`` with ``graph=True``) driving protocol
        machine ``machine``; see :func:`contractsim.runtime.transitions_adapter.to_transitions`."""
        from .runtime.transitions_adapter import to_transitions

        _expect_name(machine, "machine", "a protocol machine's name")
        if model is not None and (
            isinstance(model, int | float | str | bytes | tuple | list | dict | set | frozenset)
            or not hasattr(model, "__dict__")
        ):
            raise TypeError(
                "model must be an object the machine can set attributes on (an instance of a "
                f"class of yours), not {type(model).__name__}"
            )
        return to_transitions(self, machine, model, graph, state, **kwargs)

    def render(
        self,
        view: str | None = None,
        name: str | None = None,
        format: str = "dot",
        plan_report: PlanReport | None = None,
    ) -> str | bytes:
        """A diagram: ``view`` is ``"machine"``, ``"tool"`` or ``"overview"`` (default: the only
        protocol machine), ``format`` ``"dot"``, ``"mermaid"``, ``"svg"`` (text) or ``"png"``
        (bytes); a ``plan_report`` from :meth:`Simulator.run` is drawn on a machine or the
        overview. See :func:`contractsim.render.render`."""
        from .render import render

        _expect_name(view, "view", '"machine", "tool" or "overview"')
        _expect_name(name, "name", "a machine's or tool's name")
        _expect_name(format, "format", '"dot", "mermaid", "svg" or "png"', optional=False)
        return render(self.ir, view, name, format, plan_report)

    def export(
        self, target: str, tool: str | None = None
    ) -> dict[str, Any] | list[dict[str, Any]] | str:
        """The contract (or one tool) as ``jsonschema``, ``openapi``, ``openai``, ``mcp`` or
        ``card``; see :func:`contractsim.export.export`. Raises
        :class:`~contractsim.export.ExportError` for an unknown target or tool."""
        from .export import export

        _expect_name(target, "target", '"jsonschema", "openapi", "openai", "mcp" or "card"', False)
        _expect_name(tool, "tool", "a tool name")
        return export(self.ir, target, tool)

    def card(self, tool: str) -> str:
        """A compact text of one tool's contract for a system prompt: signature, what it needs,
        what it changes, how it can end, its errors and how to recover, its risk."""
        from .export import card, select_tools

        _expect_name(tool, "tool", "a tool name", optional=False)
        return card(self.ir, select_tools(self.ir, tool)[0])

    def __repr__(self) -> str:
        return f"<Contract {self.name} {self.version}: {len(self.ir.tools)} tools>"


def _front_end(text: str, filename: str) -> tuple[ir.Contract | None, list[Diagnostic]]:
    # The passes build hundreds of thousands of small immutable objects and no cycles; the cyclic
    # garbage collector would rescan them again and again (a third of the time on large files).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _front_end_passes(text, filename)
    finally:
        if was_enabled:
            gc.enable()


def _front_end_passes(text: str, filename: str) -> tuple[ir.Contract | None, list[Diagnostic]]:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
        return None, [
            error(
                "E0106",
                f"the contract is larger than {MAX_SOURCE_BYTES:,} bytes",
                Span(file=filename),
            )
        ]
    if "\0" in text:
        at = text.index("\0")
        line = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        return None, [
            error(
                "E0100",
                "the contract contains a NUL character",
                Span(file=filename, line=line, col=col, end_line=line, end_col=col + 1),
                hint="contracts are UTF-8 text",
            )
        ]
    try:
        tree = parse(text, filename)
    except ContractError as exc:
        return None, exc.diagnostics
    too_deep = nesting_depth_problem(tree, filename)
    if too_deep is not None:
        return None, [too_deep]
    try:
        contract, diags = lower(tree, filename)
        if any(d.severity == "error" for d in diags):
            return contract, diags
        from .compiler.checks import COMPILER_CHECKS

        resolved, more = check_and_resolve(contract, COMPILER_CHECKS)
        return resolved, diags + more
    except RecursionError:
        # a safety net: the nesting limits above are meant to keep every pass within Python's
        # recursion limit
        return None, [
            error(
                "E0104",
                "the contract nests too deeply to be checked",
                Span(file=filename),
                hint="split deep expressions with `let`, a predicate or a quantifier",
            )
        ]


def check_text(text: str, filename: str = "<string>") -> list[Diagnostic]:
    """Every diagnostic for contract text: syntax, names, types, machines, lints."""
    _expect_text(text, filename)
    return sorted(_front_end(text, filename)[1], key=Diagnostic.sort_key)


def check(*paths: str | os.PathLike[str]) -> list[Diagnostic]:
    """Check contract files; unreadable files become diagnostics rather than exceptions."""
    for i, path in enumerate(paths):
        _expect_path(path, f"paths[{i}]")
    out: list[Diagnostic] = []
    for path in paths:
        try:
            text = read_source(path)
        except ContractError as exc:
            out.extend(exc.diagnostics)
            continue
        out.extend(check_text(text, str(path)))
    return out


def loads(text: str, filename: str = "<string>") -> Contract:
    """Parse and check contract text. Raises :class:`ContractError` when it has errors (and
    ``TypeError`` when ``text`` or ``filename`` is not a ``str``)."""
    _expect_text(text, filename)
    contract, diags = _front_end(text, filename)
    errors = [d for d in diags if d.severity == "error"]
    if errors or contract is None:
        raise ContractError(sorted(errors, key=Diagnostic.sort_key), {filename: text})
    return Contract(contract, text, filename, diags)


def load(path: str | os.PathLike[str]) -> Contract:
    """Read, parse and check a ``.contract`` file."""
    _expect_path(path, "path")
    text = read_source(path)
    return loads(text, str(path))


def from_pddl(
    domain: str | os.PathLike[str], problem: str | os.PathLike[str], filename: str | None = None
) -> Contract:
    """Import a PDDL domain and problem (paths) as a checked :class:`Contract` (docs/pddl.md).

    Predicates become state relations, objects enum members, ``:init`` the initial state and
    ``:goal`` the goal ``solved``; ``contract.source`` is the generated text. Raises
    :class:`ContractError` (E08xx, located in the PDDL files) for unsupported or malformed
    PDDL."""
    from . import pddl

    _expect_path(domain, "domain")
    _expect_path(problem, "problem")
    if filename is not None and not isinstance(filename, str):
        raise TypeError(f"filename must be a str or None, not {type(filename).__name__}")
    domain_text = pddl.read_pddl_file(domain, "domain")
    problem_text = pddl.read_pddl_file(problem, "problem")
    text = pddl.pddl_to_contract(domain_text, problem_text, str(domain), str(problem))
    name = filename or Path(str(problem)).with_suffix(".contract").name
    try:
        return loads(text, name)
    except ContractError as exc:
        raise pddl.importer_bug(exc, str(domain), domain_text) from None


def diff(
    old: Contract | str | os.PathLike[str],
    new: Contract | str | os.PathLike[str],
    tool: str | None = None,
    witnesses: bool = True,
) -> DiffReport:
    """What changed from ``old`` to ``new`` (docs/diff.md): a
    :class:`~contractsim.diffing.DiffReport`
    whose ``changes`` are classified breaking / additive / behavioural, each with an
    ``impact_on_agent`` and, for precondition and effect changes, a witness plan. ``old`` and
    ``new`` are loaded contracts, paths, or ``git:REV:PATH``; ``tool`` limits the report to one
    tool; ``witnesses=False`` skips the witness search."""
    from .diffing import diff_contracts

    _expect_name(tool, "tool", "a tool name")
    if not isinstance(witnesses, bool):
        raise TypeError(f"witnesses must be a bool, not {type(witnesses).__name__}")
    return diff_contracts(load_operand(old, "old"), load_operand(new, "new"), tool, witnesses)


def load_operand(value: Contract | str | os.PathLike[str], what: str) -> Contract:
    """A diff operand as a :class:`Contract`: itself, a path, or ``git:REV:PATH``."""
    if isinstance(value, Contract):
        return value
    if isinstance(value, str) and value.startswith("git:"):
        from .diffing.sources import read_git

        return loads(read_git(value), filename=value)
    _expect_path(value, what)
    return load(value)


def import_spec(
    source: str | os.PathLike[str] | dict[str, Any] | list[Any],
    kind: str,
    *,
    name: str | None = None,
) -> ImportResult:
    """Import an OpenAPI 3.0/3.1 document, an MCP ``tools/list`` answer or an OpenAI tools array
    (``kind`` = ``openapi``, ``mcp`` or ``openai``; ``source`` a path or the parsed document) as
    a contract skeleton (docs/import.md). The result's ``text`` checks; its ``warnings`` list,
    at JSON pointers, what the contract cannot say exactly. Raises :class:`ContractError` with
    E15xx diagnostics for input that cannot be imported."""
    from .importers import KINDS
    from .importers import import_spec as _import_spec

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if not isinstance(source, dict | list):
        _expect_path(source, "source")
    _expect_name(name, "name", "the contract's name")
    return _import_spec(source, kind, name=name)


def _expect_text(text: Any, filename: Any) -> None:
    if isinstance(text, bytes | bytearray):
        raise TypeError(
            "text must be a str, not bytes: decode it first (text.decode('utf-8')) or use "
            "contractsim.load(path)"
        )
    if not isinstance(text, str):
        raise TypeError(f"text must be the contract's text (a str), not {type(text).__name__}")
    if not isinstance(filename, str):
        raise TypeError(
            f"filename must be a str (the name used in diagnostics), not {type(filename).__name__}"
        )


def _expect_name(value: Any, what: str, expected: str, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise TypeError(
            f"{what} must be {expected} (a str{' or None' if optional else ''}), "
            f"not {type(value).__name__}"
        )


def _expect_path(path: Any, what: str) -> None:
    if not isinstance(path, str | os.PathLike):
        raise TypeError(
            f"{what} must be a file path (a str or os.PathLike), not {type(path).__name__}"
        )


def sources_of(paths: Iterable[str]) -> dict[str, str]:
    """File contents for rendering source lines under diagnostics (unreadable files skipped)."""
    out: dict[str, str] = {}
    for path in paths:
        try:
            out[path] = read_source(path)
        except ContractError:
            continue
    return out


def learn(
    traces: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    skeleton: str | os.PathLike[str] | Contract | None = None,
    *,
    adapter: Adapter | None = None,
    safe: bool = False,
    refine: bool = False,
    max_atoms: int | None = None,
    min_support: int | None = None,
    infer_enums: bool = False,
    effect_exceptions: int | None = None,
) -> LearnResult:
    """Learn a contract from trace files (docs/learn.md).

    ``skeleton``: a contract (path or :class:`Contract`) whose types, state and tool signatures
    are kept (its ``require``, ``should`` and effects are dropped, unless ``refine``: then they
    are kept and only what the data demands is added); without one they are inferred from the
    recorded values (``infer_enums``: a text parameter with a small closed set of values becomes
    an enum; ``effect_exceptions``: an effect is kept when at most one in that many of a tool's
    observations is one no template explains, default 50; 0 keeps only effects that explain every
    observation). Raises :class:`~contractsim.ContractError` for unreadable traces or skeletons."""
    from .learning import skeleton_of
    from .learning.infer import infer_skeleton
    from .replay.traces import read_runs

    paths = [traces] if isinstance(traces, str | os.PathLike) else list(traces)
    if skeleton is None:
        contract = infer_skeleton(paths, loads, adapter, enums=infer_enums)
    elif isinstance(skeleton, Contract):
        contract = skeleton
    else:
        contract = load(skeleton)
    if skeleton is not None and not refine:
        contract = loads(skeleton_of(contract), contract.filename)
    runs: list[Run] = []
    for path in paths:
        runs += read_runs(path, contract.compiled, adapter)
    return learn_from_runs(
        contract,
        runs,
        safe=safe,
        max_atoms=max_atoms,
        min_support=min_support,
        effect_exceptions=effect_exceptions,
    )


def learn_from_runs(
    skeleton: Contract,
    runs: Sequence[Run],
    *,
    safe: bool = False,
    max_atoms: int | None = None,
    min_support: int | None = None,
    effect_exceptions: int | None = None,
) -> LearnResult:
    """Learn from runs already read against ``skeleton`` (``replay.read_runs``); the learned
    contract is checked (:func:`contractsim.learning.learn_from_runs`)."""
    from .learning import DEFAULT_MAX_ATOMS, DEFAULT_MIN_SUPPORT
    from .learning import learn_from_runs as learn_checked
    from .learning.effects import EXCEPTIONS

    return learn_checked(
        skeleton,
        runs,
        safe=safe,
        max_atoms=DEFAULT_MAX_ATOMS if max_atoms is None else max_atoms,
        min_support=DEFAULT_MIN_SUPPORT if min_support is None else min_support,
        effect_exceptions=EXCEPTIONS if effect_exceptions is None else effect_exceptions,
        load_text=loads,
    )
