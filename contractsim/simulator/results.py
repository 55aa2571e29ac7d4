"""The public results of a simulation step: violations, warnings, branches and verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal

from ..compiler.values import thaw
from ..records import record
from .state import State

Verdict = Literal["ok", "fails", "may_fail"]


@record(frozen=True)
class Violation:
    """A rule a step breaks (or may break, when ``certain`` is false)."""

    code: str
    message: str
    # unknown_tool, argument, protocol, precondition, outcome, postcondition, evaluation, fail
    kind: str
    hint: str | None = None
    location: str | None = None  # contract file:line
    field: str | None = None  # argument path, for argument errors
    rule: str | None = None  # the validation rule, for argument errors
    value: Any = None
    values: tuple[tuple[str, str], ...] = ()  # sub-expression text → shown value
    certain: bool = True
    allowed_states: tuple[str, ...] = ()
    path_to_allowed: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "kind": self.kind,
            "certain": self.certain,
        }
        if self.hint:
            out["hint"] = self.hint
        if self.location:
            out["location"] = self.location
        if self.field:
            out["field"] = self.field
        if self.rule:
            out["rule"] = self.rule
        if self.values:
            out["values"] = {k: v for k, v in self.values}
        if self.allowed_states:
            out["allowed_states"] = list(self.allowed_states)
            out["path_to_allowed"] = list(self.path_to_allowed)
        return out


@record(frozen=True)
class StepWarning:
    code: str
    message: str
    certain: bool = True
    # OFF_SPEC_ARGUMENT: the argument path, its value and the type the tool declares for it
    field: str | None = None
    value: Any = None
    declared: str | None = None
    # on a call that fails before it runs: what else is wrong with it (not something it did)
    refused: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message, "certain": self.certain}
        if self.field is not None:
            out["field"] = self.field
            out["value"] = thaw(self.value)
            out["declared"] = self.declared
        if self.refused:
            out["refused"] = True
        return out


@record
class Branch:
    """One way a call can end, with the state it leaves behind."""

    outcome: str | None
    kind: Literal["success", "partial", "fails"]
    state: State
    probability: float | None = 1.0
    event: str | None = None
    assumptions: tuple[str, ...] = ()
    violations: list[Violation] = field(default_factory=list)
    warnings: list[StepWarning] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    flow_path: tuple[str, ...] = ()
    approximate: bool = False  # an unknown condition made some effects unknown
    guess: bool = False  # taken because an unknown guard (not a precondition) might hold
    preconditions_assumed: tuple[str, ...] = ()  # unknown preconditions taken to hold
    result: Any = None  # what the call returned on this branch (made up when simulated)

    @property
    def certain(self) -> bool:
        return not self.assumptions

    @property
    def failed(self) -> bool:
        return self.kind == "fails"


@record
class StepResult:
    """What one call does from one state: every branch, and the step's verdict."""

    tool: str
    args: Mapping[str, Any]
    branches: list[Branch]
    cost: float | None = None

    @property
    def verdict(self) -> Verdict:
        if all(not b.failed for b in self.branches):
            return "ok"
        if any(b.failed and b.certain for b in self.branches):
            return "fails"
        return "may_fail"

    @property
    def violations(self) -> list[Violation]:
        seen: dict[tuple[str, str], Violation] = {}
        for b in self.branches:
            for v in b.violations:
                seen.setdefault((v.code, v.message), v)
        return list(seen.values())

    @property
    def warnings(self) -> list[StepWarning]:
        seen: dict[tuple[str, str], StepWarning] = {}
        for b in self.branches:
            for w in b.warnings:
                seen.setdefault((w.code, w.message), w)
        return list(seen.values())


@record(frozen=True)
class Enabled:
    """Whether a tool can be called in a state, before its arguments are known."""

    tool: str
    verdict: Verdict
    reasons: tuple[Violation, ...] = ()
