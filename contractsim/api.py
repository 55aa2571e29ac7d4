"""One-call entry points: :func:`load`, :func:`loads`, :func:`check`, and the :class:`Contract`."""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .dsl import ir
from .dsl.check import check_contract
from .dsl.diagnostics import ContractError, Diagnostic, Span, error
from .dsl.lower import lower
from .grammar.parse import MAX_SOURCE_BYTES, nesting_depth_problem, parse

if TYPE_CHECKING:
    from .compiler.compile import CompiledContract
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

    def simulator(self, now: datetime | str | None = None, step_seconds: float = 10.0) -> Simulator:
        """A :class:`~contractsim.simulator.engine.Simulator` for dry-running plans. ``now``
        fixes ``today()``/``now()`` (RFC 3339 text or a datetime; default: the wall clock);
        ``step_seconds`` bounds the looping of one step."""
        from .simulator.engine import Simulator

        return Simulator(self, now=now, step_seconds=step_seconds)

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

        return render(self.ir, view, name, format, plan_report)

    def export(
        self, target: str, tool: str | None = None
    ) -> dict[str, Any] | list[dict[str, Any]] | str:
        """The contract (or one tool) as ``jsonschema``, ``openapi``, ``openai``, ``mcp`` or
        ``card``; see :func:`contractsim.export.export`. Raises
        :class:`~contractsim.export.ExportError` for an unknown target or tool."""
        from .export import export

        return export(self.ir, target, tool)

    def card(self, tool: str) -> str:
        """A compact text of one tool's contract for a system prompt: signature, what it needs,
        what it changes, how it can end, its errors and how to recover, its risk."""
        from .export import card, select_tools

        return card(self.ir, select_tools(self.ir, tool)[0])

    def __repr__(self) -> str:
        return f"<Contract {self.name} {self.version}: {len(self.ir.tools)} tools>"


def read_source(path: str | os.PathLike[str]) -> str:
    """Read a text input, turning every way it can be unreadable into a diagnostic."""
    p = Path(path)
    where = Span(file=str(path))
    if not p.exists():
        raise ContractError(
            [
                error(
                    "E0100",
                    f"no such file: {path}",
                    where,
                    hint="check the path and the current directory",
                )
            ]
        )
    if p.is_dir():
        raise ContractError(
            [
                error(
                    "E0100",
                    f"{path} is a directory, not a file",
                    where,
                    hint="pass the .contract file inside it",
                )
            ]
        )
    try:
        data = read_bounded(p, MAX_SOURCE_BYTES)
        if data is None:
            raise ContractError(
                [
                    error(
                        "E0106",
                        f"{path} is larger than {MAX_SOURCE_BYTES:,} bytes",
                        where,
                        hint="split the contract into smaller files",
                    )
                ]
            )
    except OSError as exc:
        raise ContractError(
            [error("E0100", f"cannot read {path}: {exc.strerror or exc}", where)]
        ) from None
    return decode_source(data, str(path))


def read_bounded(path: Path, limit: int) -> bytes | None:
    """At most ``limit`` bytes of a file, or None when it has more. Reads by size, never by the
    size the file claims (``/dev/zero`` claims 0 and never ends)."""
    with path.open("rb") as f:
        data = f.read(limit + 1)
    return None if len(data) > limit else data


def read_input(path: str | os.PathLike[str], what: str, code: str, limit: int) -> bytes:
    """The bytes of an input file (a plan, a trace, a PDDL file …): a missing path, a directory,
    an unreadable or too large file is a ``code`` diagnostic, never an exception."""
    p = Path(path)
    name = str(path)

    def problem(message: str, hint: str | None = None) -> ContractError:
        return ContractError([error(code, message, Span(file=name, end_col=2), hint=hint)])

    if not p.exists():
        raise problem(f"no such {what} file: {name}", "check the path")
    if p.is_dir():
        raise problem(f"{name} is a directory, not a {what} file")
    try:
        data = read_bounded(p, limit)
    except OSError as exc:
        raise problem(f"cannot read {name}: {exc.strerror or exc}") from None
    if data is None:
        raise problem(f"{name} is larger than {limit:,} bytes")
    return data


def decode_source(data: bytes, filename: str) -> str:
    if b"\0" in data[:8192]:
        raise ContractError(
            [
                error(
                    "E0100",
                    f"{filename} is a binary file, not a contract",
                    Span(file=filename),
                    hint="contracts are UTF-8 text files",
                )
            ]
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ContractError(
            [
                error(
                    "E0100",
                    f"{filename} is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                    Span(file=filename, line=line, col=col, end_line=line, end_col=col + 1),
                    hint="save the file as UTF-8",
                )
            ]
        ) from None
    return text.removeprefix("\ufeff")


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
        return contract, diags + check_contract(contract)
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
    return sorted(_front_end(text, filename)[1], key=Diagnostic.sort_key)


def check(*paths: str | os.PathLike[str]) -> list[Diagnostic]:
    """Check contract files; unreadable files become diagnostics rather than exceptions."""
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
    """Parse and check contract text. Raises :class:`ContractError` when it has errors."""
    contract, diags = _front_end(text, filename)
    errors = [d for d in diags if d.severity == "error"]
    if errors or contract is None:
        raise ContractError(sorted(errors, key=Diagnostic.sort_key), {filename: text})
    return Contract(contract, text, filename, diags)


def load(path: str | os.PathLike[str]) -> Contract:
    """Read, parse and check a ``.contract`` file."""
    text = read_source(path)
    return loads(text, str(path))


def from_pddl(
    domain: str | os.PathLike[str], problem: str | os.PathLike[str], filename: str | None = None
) -> Contract:
    """Import a PDDL domain and problem as a checked :class:`Contract` (docs/pddl.md); raises
    :class:`ContractError` with E08xx diagnostics located in the PDDL files."""
    from .pddl import from_pddl as _from_pddl

    return _from_pddl(domain, problem, filename)


def sources_of(paths: Iterable[str]) -> dict[str, str]:
    """File contents for rendering source lines under diagnostics (unreadable files skipped)."""
    out: dict[str, str] = {}
    for path in paths:
        try:
            out[path] = read_source(path)
        except ContractError:
            continue
    return out
