"""PDDL import: a domain and a problem become a ``.contract`` (docs/pddl.md).

:mod:`.sexpr` reads s-expressions with positions, :mod:`.read` reads them into the domain and
problem of :mod:`.model`, :mod:`.emit` writes those as contract text. Loading that text is the
façade's: :func:`contractsim.from_pddl` (this package does not import ``api``).

>>> contract = contractsim.from_pddl("blocks/domain.pddl", "blocks/prob-4-0.pddl")  # doctest: +SKIP
>>> contract.simulator().goal(contract.simulator().initial_state(), "solved")  # doctest: +SKIP
False
"""

from __future__ import annotations

import os

from ..diagnostics import ContractError, Span, error
from ..sources import read_input
from .emit import GOAL_NAME, emit_contract
from .read import read_domain, read_problem

MAX_PDDL_BYTES = 16 * 1024 * 1024

__all__ = ["GOAL_NAME", "importer_bug", "pddl_to_contract", "read_pddl_file"]


def read_pddl_file(path: str | os.PathLike[str], what: str) -> str:
    """The text of a PDDL file; every way it can be unreadable is a diagnostic (E0801)."""
    name = str(path)
    where = Span(file=name)
    data = read_input(path, what, "E0801", MAX_PDDL_BYTES)
    if b"\0" in data[:8192]:
        raise ContractError(
            [error("E0801", f"{name} is a binary file, not PDDL", where, "pass a .pddl text file")]
        )
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        try:
            return data.decode("latin-1")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
            raise ContractError([error("E0801", f"{name} is not text", where)]) from None


def pddl_to_contract(
    domain_text: str,
    problem_text: str,
    domain_file: str = "<domain>",
    problem_file: str = "<problem>",
) -> str:
    """The ``.contract`` text for a PDDL domain and problem (both given as text).

    Raises :class:`~contractsim.ContractError` with located diagnostics (E08xx) for PDDL the
    importer cannot read; the texts are attached for rendering."""
    sources = {domain_file: domain_text, problem_file: problem_text}
    try:
        domain = read_domain(domain_text, domain_file)
        problem = read_problem(problem_text, problem_file, domain)
        return emit_contract(domain, problem)
    except ContractError as exc:
        raise ContractError(exc.diagnostics, sources) from None
    except RecursionError:
        raise ContractError(
            [error("E0802", "the PDDL nests too deeply", Span(file=problem_file))], sources
        ) from None


def importer_bug(exc: ContractError, domain: str, domain_text: str) -> ContractError:
    """The error for a generated contract that does not check (E0811): a bug of the importer,
    said at the PDDL, never in a file that does not exist. :func:`contractsim.from_pddl` raises
    it; the loading itself is the façade's (this package does not import ``api``)."""
    errors = [d for d in exc.diagnostics if d.severity == "error"] or exc.diagnostics
    shown = "; ".join(f"line {d.span.line}: {d.code} {d.message}" for d in errors[:3])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return ContractError(
        [
            error(
                "E0811",
                f"the importer wrote a contract that does not check: {shown}{more}",
                Span(file=domain, line=1, col=1, end_line=1, end_col=2),
                hint="this PDDL is read but cannot be imported yet; please report it "
                "(`contractsim.pddl.pddl_to_contract` gives the generated text)",
            )
        ],
        {domain: domain_text},
    )
