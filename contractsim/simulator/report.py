"""Plan reports as text: numbered steps like a model checker's counterexample."""

from __future__ import annotations

from typing import Any

from ..compiler.values import FMap, order, show
from ..dsl.diagnostics import visible
from .explore import PlanReport, StepReport

MARKS = {"ok": "✓", "fails": "✗", "may_fail": "?"}
COLOURS = {"ok": "green", "fails": "red", "may_fail": "yellow"}
VERDICT_TEXT = {
    "ok": "succeeds on every branch",
    "fails": "fails on some branch",
    "may_fail": "may fail (depends on values that are unknown)",
}


def _style(text: str, colour: str | None, bold: bool = False) -> str:
    if colour is None and not bold:
        return text
    import click

    return click.style(text, fg=colour, bold=bold)


def render_text(report: PlanReport, colour: bool = False) -> str:
    """The human-readable report. Colour only when asked (the CLI asks on a terminal)."""
    lines: list[str] = []
    lines.append(f"contract {report.contract}: {len(report.steps)} step(s)")
    lines.append("")
    for step in report.steps:
        lines.extend(_step_lines(step, colour))
    lines.append("")
    verdict = report.verdict
    text = VERDICT_TEXT[verdict]
    if verdict == "may_fail" and any(s.skipped for s in report.steps):
        text = "not known to succeed: a bound left steps out (see the notes)"
    if verdict == "fails" and report.failure_probability is not None:
        if report.failure_probability < 1.0 - 1e-12:
            text += f" (probability {_pct(report.failure_probability)})"
    lines.append(
        _style(f"verdict: {verdict} — {text}", COLOURS[verdict] if colour else None, bold=colour)
    )
    n = len(report.paths)
    lines.append(
        f"{n} final branch{'es' if n != 1 else ''}, {report.states_explored} state(s) explored"
    )
    for p in report.paths[:5]:
        prob = "" if p.probability is None else f" p={_pct(p.probability)}"
        status = "ok" if p.failed_at is None else f"fails at step {p.failed_at}"
        if p.failed_at is not None and not p.certain:
            status = f"may fail at step {p.failed_at}"
        lines.append(visible(f"  - {status}{prob}: " + " → ".join(p.choices)))
    if len(report.paths) > 5:
        lines.append(f"  … and {len(report.paths) - 5} more")
    if report.goal is not None:
        reached = report.goal_results.get("reached")
        lines.append(
            visible(
                f"goal {report.goal}: {'reached' if reached else 'NOT reached'} "
                f"({report.goal_results.get('branches_reaching', 0)} branch(es) reach it)"
            )
        )
    for note in report.notes:
        lines.append(visible(f"note: {note}"))
    return "\n".join(lines) + "\n"


def _pct(p: float) -> str:
    return f"{p * 100:.4g}%"


def _step_lines(step: StepReport, colour: bool) -> list[str]:
    mark = MARKS[step.verdict]
    head = f"{step.index:>3}. {mark} {step.tool}({_args(step.args)})"
    if step.skipped:
        return [visible(f"{step.index:>3}. - {step.tool}({_args(step.args)})  (not simulated)")]
    if step.verdict != "ok":
        head += f"  — {step.verdict.replace('_', ' ')}"
    out = [_style(visible(head), COLOURS[step.verdict] if colour else None)]
    for v in step.violations:
        prefix = "✗" if v.certain else "?"
        where = f"  [{v.location}]" if v.location else ""
        earlier = step.only_after_failure(v)
        after = f" (only after step {earlier} failed)" if earlier is not None else ""
        out.append(f"       {prefix} {v.code}: {v.message}{after}{where}")
        for text, value in v.values:
            out.append(f"           {text} = {value}")
        if v.hint:
            out.append(f"           hint: {v.hint}")
    for w in step.warnings:
        branches = step.warning_where(w)
        suffix = "" if w.certain else " (possibly)"
        if branches:
            suffix += f" (on branch {branches})"
        out.append(f"       ! {w.code}: {w.message}{suffix}")
    if len(step.outcomes) > 1 or any(k != "ok" for k in step.outcomes):
        parts = []
        for name, info in step.outcomes.items():
            if name == "rejected":
                continue
            prob = info.get("probability")
            label = f"{name.split('@')[0]} ({info['kind']}"
            if prob is not None and prob < 1.0 - 1e-12:
                label += f", p={_pct(prob)}"
            if info.get("event"):
                label += f", on {info['event']}"
            if not info.get("certain", True):
                label += ", if unknowns allow"
            parts.append(label + ")")
        if parts:
            out.append("       branches: " + "; ".join(parts))
    for r in step.reports:
        out.append("       report: " + ", ".join(f"{k}={show(v)}" for k, v in r.items()))
    for name, before, after in step.changes:
        out.append(f"       {name}: {change_text(before, after)}")
    # messages interpolate values and arguments: no escape sequence reaches the terminal
    return [out[0], *(visible(line) for line in out[1:])]


MAX_CHANGES = 6


def change_text(before: Any, after: Any) -> str:
    """What changed in a variable: added and removed items of collections, else old → new."""
    text = _change_parts(before, after)
    if isinstance(text, str):
        return text
    if len(text) > MAX_CHANGES:
        return ", ".join(text[:MAX_CHANGES]) + f", … (+{len(text) - MAX_CHANGES} more)"
    return ", ".join(text)


def _change_parts(before: Any, after: Any) -> list[str] | str:
    if isinstance(before, frozenset) and isinstance(after, frozenset):
        parts = [f"+{show(v, 60)}" for v in sorted(after - before, key=order)]
        parts += [f"-{show(v, 60)}" for v in sorted(before - after, key=order)]
        return parts
    if isinstance(before, FMap) and isinstance(after, FMap):
        parts = []
        for k in sorted(set(before) | set(after), key=order):
            if k not in before:
                parts.append(f"+{show(k, 40)}: {show(after[k], 60)}")
            elif k not in after:
                parts.append(f"-{show(k, 40)}")
            elif before[k] != after[k]:
                parts.append(f"{show(k, 40)}: {show(before[k], 40)} → {show(after[k], 40)}")
        return parts
    return f"{show(before, 60)} → {show(after, 60)}"


def _args(args: Any) -> str:
    return ", ".join(f"{k}={show(v, 40)}" for k, v in dict(args).items())
