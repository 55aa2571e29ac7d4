"""What ``diff`` reports: changes, their class and the version bump they require."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

ChangeType = Literal["breaking", "additive", "behavioural"]
Bump = Literal["major", "minor", "patch"]

BUMP_OF: dict[str, Bump] = {"breaking": "major", "additive": "minor", "behavioural": "patch"}
_RANK = {"none": 0, "patch": 1, "minor": 2, "major": 3}
SEVERITY = {"behavioural": 1, "additive": 0, "breaking": 2}
"""How far up ``--fail-on`` a change reaches: breaking ≥ behavioural ≥ any."""


@dataclass(frozen=True)
class Witness:
    """A concrete call on which OLD and NEW disagree: a runnable plan (``state`` overrides and
    ``steps``) and what ``simulate`` predicts on each side."""

    steps: tuple[dict[str, Any], ...]
    state: dict[str, Any]
    old: dict[str, Any]
    new: dict[str, Any]
    now: str | None = None

    def plan(self) -> dict[str, Any]:
        """The plan file (JSON/YAML data) that reproduces the disagreement with ``simulate``."""
        out: dict[str, Any] = {}
        if self.now is not None:
            out["now"] = self.now
        if self.state:
            out["state"] = self.state
        out["steps"] = [dict(s) for s in self.steps]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"plan": self.plan(), "old": self.old, "new": self.new}


@dataclass(frozen=True)
class Change:
    """One difference between two versions of a contract.

    ``field`` names what changed inside ``tool`` (``param path``, ``require NOT_FOUND``,
    ``outcome sent``, ``effects`` …) or, for contract-level items (``tool`` is None), the item
    (``state files``, ``machine session``). ``witness_status`` is ``"found"``, ``"not shown to
    differ"`` (searched, none found within the bounds) or None (no search applies).
    """

    type: ChangeType
    tool: str | None
    field: str
    description: str
    impact_on_agent: str
    witness: Witness | None = None
    witness_status: str | None = None

    @property
    def bump(self) -> Bump:
        return BUMP_OF[self.type]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type,
            "tool": self.tool,
            "field": self.field,
            "description": self.description,
            "impact_on_agent": self.impact_on_agent,
            "bump": self.bump,
        }
        if self.witness is not None:
            out["witness"] = self.witness.to_json()
        if self.witness_status is not None:
            out["witness_status"] = self.witness_status
        return out


_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def parse_version(text: str) -> tuple[int, int, int, str] | None:
    m = _SEMVER.match(text)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""


def actual_bump(old: str, new: str) -> str:
    """The bump from ``old`` to ``new``: ``major``, ``minor``, ``patch``, ``none`` (same
    release), ``lower`` (NEW is older) or ``invalid``. Before 1.0.0 a minor bump counts as major
    (semver: anything may change in 0.y.z, and 0.y → 0.(y+1) is how a breaking change is
    announced)."""
    a, b = parse_version(old), parse_version(new)
    if a is None or b is None:
        return "invalid"
    if b[:3] < a[:3]:
        return "lower"
    if b[0] > a[0]:
        return "major"
    if b[1] > a[1]:
        return "major" if a[0] == 0 else "minor"
    if b[2] > a[2]:
        return "minor" if a[0] == 0 else "patch"
    if a[3] and not b[3]:  # 1.0.0-rc.1 → 1.0.0: the release itself
        return "major" if a[0] >= 1 and a[1:3] == (0, 0) else "minor"
    return "none"


@dataclass
class DiffReport:
    """The changes from OLD to NEW, and whether NEW's version announces them."""

    name: str
    previous_version: str
    version: str
    changes: list[Change] = field(default_factory=list)

    @property
    def required_bump(self) -> str:
        """The bump the changes require: ``major``, ``minor``, ``patch`` or ``none``."""
        best = "none"
        for c in self.changes:
            if _RANK[c.bump] > _RANK[best]:
                best = c.bump
        return best

    @property
    def actual_bump(self) -> str:
        return actual_bump(self.previous_version, self.version)

    @property
    def version_problem(self) -> str | None:
        """Why NEW's version number does not announce the changes, or None."""
        required, actual = self.required_bump, self.actual_bump
        if actual == "invalid":
            return None
        if actual == "lower":
            return f"version {self.version} is lower than the previous {self.previous_version}"
        if required == "none":
            return None
        if _RANK.get(actual, 0) < _RANK[required]:
            shown = "no bump" if actual == "none" else f"a {actual} bump"
            return (
                f"the changes require a {required} version bump, but "
                f"{self.previous_version} → {self.version} is {shown}"
            )
        return None

    def counts(self) -> dict[str, int]:
        out = {"breaking": 0, "additive": 0, "behavioural": 0}
        for c in self.changes:
            out[c.type] += 1
        return out

    def at_or_above(self, fail_on: str) -> list[Change]:
        """The changes that ``--fail-on fail_on`` fails on."""
        if fail_on == "any":
            return list(self.changes)
        floor = SEVERITY[fail_on]
        return [c for c in self.changes if SEVERITY[c.type] >= floor]

    def fails(self, fail_on: str) -> bool:
        """Whether ``--fail-on fail_on`` fails: some change is at or above it, or NEW's version is
        lower than OLD's. (A breaking change fails every level; whether it came with the major
        bump it requires is reported beside it.)"""
        return bool(self.at_or_above(fail_on)) or self.actual_bump == "lower"

    def to_json(self) -> dict[str, Any]:
        return {
            "contract": self.name,
            "version": self.version,
            "previous_version": self.previous_version,
            "required_bump": self.required_bump,
            "actual_bump": self.actual_bump,
            "version_problem": self.version_problem,
            "summary": self.counts(),
            "changes": [c.to_json() for c in self.changes],
        }
