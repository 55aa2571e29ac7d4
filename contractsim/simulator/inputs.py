"""A prepared run: a plan file (and a state file) read by :mod:`.formats`, its values checked
by :mod:`.values`, and its calls resolved against the contract, as the CLI simulates them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..compiler.compile import CompiledContract
from ..diagnostics import ContractError, Diagnostic
from ..records import record
from .formats import (
    Plan,
    diagnostic_at,
    line_of,
    load_plan,
    parse_now,
    parse_state,
    read_text,
    resolve_step,
)
from .json_maps import JsonMaps, KeyProblem
from .values import validate_state_overrides


@record
class PreparedRun:
    """Everything a simulation of a plan file needs, read and validated."""

    plan: Plan
    now: datetime | None
    state_overrides: dict[str, Any]
    calls: list[tuple[str, dict[str, Any]]]


def prepare_run(
    compiled: CompiledContract, plan_path: str, state_path: str | None, now: str | None
) -> PreparedRun:
    """Read a plan (and a state file), check them against the contract, and resolve the calls.
    Every problem is a :class:`ContractError` whose diagnostics point into the file at fault."""
    plan = load_plan(plan_path)
    state_text = read_text(state_path, "state") if state_path is not None else ""
    run = prepare_plan(compiled, plan, plan_path, now)
    # overrides from the plan are located in the plan; those from --state in the state file
    if state_path is not None:
        overrides = parse_state(state_text, state_path)
        run.state_overrides.update(
            validate_state_overrides(compiled, overrides, state_path, state_text)
        )
    return run


def prepare_plan(
    compiled: CompiledContract, plan: Plan, plan_name: str, now: str | None
) -> PreparedRun:
    """A parsed plan (``parse_plan(text, plan_name)``) checked against the contract and its
    calls resolved, as :func:`prepare_run` does for a plan file (``now`` overrides the plan's)."""
    when: datetime | None = None
    if now is not None:
        when = parse_now(now, "<command line: --now>")
    elif plan.now is not None:
        when = parse_now(plan.now, plan_name, line_of(plan.text, "now"))
    validated = validate_state_overrides(compiled, dict(plan.state), plan_name, plan.text)
    calls = [resolve_step(compiled, s) for s in plan.steps]
    return PreparedRun(plan, when, validated, _read_maps(compiled, plan, calls))


def _read_maps(
    compiled: CompiledContract, plan: Plan, calls: list[tuple[str, dict[str, Any]]]
) -> list[tuple[str, dict[str, Any]]]:
    """The calls with the map keys of their (JSON) arguments read by the parameter types."""
    maps = JsonMaps(compiled)
    problems: list[Diagnostic] = []
    out: list[tuple[str, dict[str, Any]]] = []
    for step, (tool, args) in zip(plan.steps, calls, strict=True):
        try:
            out.append((tool, maps.read_args(tool, args)))
        except KeyProblem as exc:
            problems.append(
                diagnostic_at(
                    "E0701", f"step {len(out) + 1}: {exc}", plan.source, step.line, exc.hint
                )
            )
            out.append((tool, args))
    if problems:
        raise ContractError(problems, {plan.source: plan.text})
    return out
