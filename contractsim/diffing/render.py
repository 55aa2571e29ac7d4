"""A diff report as text (for a terminal or a CI log), markdown (a changelog section) or JSON."""

from __future__ import annotations

import json
from typing import Any

from .changes import Change, DiffReport

_ORDER = ("breaking", "behavioural", "additive")
_TITLES = {"breaking": "Breaking", "behavioural": "Behavioural", "additive": "Additive"}


def _where(c: Change) -> str:
    if c.tool is None:
        return c.field
    return c.tool if c.field == "tool" else f"{c.tool}: {c.field}"


def _plan_lines(c: Change) -> list[str]:
    assert c.witness is not None
    plan = json.dumps(c.witness.plan(), ensure_ascii=False, sort_keys=False)
    return [
        f"witness plan: {plan}",
        f"  old: {_observed(c.witness.old)}",
        f"  new: {_observed(c.witness.new)}",
    ]


def _observed(obs: dict[str, Any]) -> str:
    parts = [obs["verdict"]]
    if obs.get("codes"):
        parts.append("codes " + ", ".join(obs["codes"]))
    if obs.get("warnings"):
        parts.append("warnings " + ", ".join(obs["warnings"]))
    if obs.get("changes"):
        shown = "; ".join(
            f"{ch['var']}: {json.dumps(ch['before'], ensure_ascii=False)} → "
            f"{json.dumps(ch['after'], ensure_ascii=False)}"
            for ch in obs["changes"]
        )
        parts.append("changes " + shown)
    return ", ".join(parts)


def _version_line(report: DiffReport) -> str | None:
    problem = report.version_problem
    if problem is None:
        return None
    level = (
        "error" if report.required_bump == "major" or report.actual_bump == "lower" else "warning"
    )
    return f"{level}: {problem}"


def render_text(report: DiffReport) -> str:
    """The report for a terminal: one line per change, grouped by class, witnesses indented."""
    lines = [
        f"contract {report.name}: {report.previous_version} → {report.version}",
    ]
    counts = report.counts()
    if not report.changes:
        lines.append("no changes")
    for kind in _ORDER:
        changes = [c for c in report.changes if c.type == kind]
        if not changes:
            continue
        lines.append("")
        lines.append(f"{_TITLES[kind]} ({len(changes)}):")
        for c in changes:
            lines.append(f"  - {_where(c)}: {c.description}")
            lines.append(f"      impact: {c.impact_on_agent}")
            if c.witness is not None:
                lines.extend("      " + line for line in _plan_lines(c))
            elif c.witness_status is not None and c.witness_status != "found":
                lines.append(f"      witness: {c.witness_status} within the search bounds")
    lines.append("")
    lines.append(
        f"{counts['breaking']} breaking, {counts['behavioural']} behavioural, "
        f"{counts['additive']} additive; requires a {report.required_bump} bump"
        if report.required_bump != "none"
        else "0 changes; no version bump required"
    )
    version = _version_line(report)
    if version is not None:
        lines.append(version)
    return "\n".join(lines) + "\n"


def render_markdown(report: DiffReport) -> str:
    """A changelog section ready to paste: ``## name version``, then one list per class."""
    lines = [f"## {report.name} {report.version}", ""]
    if report.previous_version != report.version:
        lines[0] += f" (from {report.previous_version})"
    if not report.changes:
        lines.append("No changes.")
    for kind in _ORDER:
        changes = [c for c in report.changes if c.type == kind]
        if not changes:
            continue
        lines.append(f"### {_TITLES[kind]}")
        lines.append("")
        for c in changes:
            where = (
                f"`{c.tool}`" + (f" ({c.field})" if c.field != "tool" else "")
                if c.tool
                else (f"{c.field}")
            )
            lines.append(f"- **{where}**: {_md(c.description)}  ")
            lines.append(f"  *Impact on agents:* {_md(c.impact_on_agent)}")
            if c.witness is not None:
                lines.append("")
                lines.append("  <details><summary>witness</summary>")
                lines.append("")
                lines.append("  ```json")
                for line in json.dumps(c.witness.plan(), indent=2, ensure_ascii=False).split("\n"):
                    lines.append("  " + line)
                lines.append("  ```")
                lines.append("")
                lines.append(f"  old: {_md(_observed(c.witness.old))}  ")
                lines.append(f"  new: {_md(_observed(c.witness.new))}")
                lines.append("")
                lines.append("  </details>")
            elif c.witness_status is not None and c.witness_status != "found":
                lines.append(f"  *Witness:* {c.witness_status} within the search bounds")
        lines.append("")
    version = _version_line(report)
    if version is not None:
        lines.append(f"> **{version}**")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _md(text: str) -> str:
    """Text for a markdown list item: a line break in it would end the item."""
    return " ".join(text.split("\n"))


def render_json(report: DiffReport) -> str:
    """The changelog as JSON (docs/diff.schema.json)."""
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
