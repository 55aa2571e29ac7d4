"""Plan reports as text: numbered steps like a model checker's counterexample."""

from __future__ import annotations

from typing import Any

from ..compiler.values import FMap, order, show
from ..diagnostics import visible
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
        lines.extend(_goal_lines(report))
    for note in report.notes:
        lines.append(visible(f"note: {note}"))
    return "\n".join(lines) + "\n"


MAX_GOAL_BRANCHES = 5
MAX_GOAL_PARTS = 8


def _goal_lines(report: PlanReport) -> list[str]:
    """The parts of the goal each branch misses, with the values that decided them."""
    out: list[str] = []
    if not report.goal_results.get("reached") and all(
        p.failed_at is not None for p in report.paths
    ):
        out.append("  - no branch gets through the plan without failing")
    for i, parts in report.goal_unmet[:MAX_GOAL_BRANCHES]:
        out.append(f"  - on {' → '.join(report.paths[i].choices) or 'the initial state'}:")
        shown: set[tuple[str, str]] = set()
        for part in parts[:MAX_GOAL_PARTS]:
            out.append(f"      {'✗' if part.status == 'false' else '?'} {part.describe()}")
            for sub, value in part.values:
                if (sub, value) not in shown:
                    shown.add((sub, value))
                    out.append(f"          {sub} = {value}")
        if len(parts) > MAX_GOAL_PARTS:
            out.append(f"      … and {len(parts) - MAX_GOAL_PARTS} more part(s)")
    if len(report.goal_unmet) > MAX_GOAL_BRANCHES:
        more = len(report.goal_unmet) - MAX_GOAL_BRANCHES
        out.append(f"  … and {more} more branch(es) that do not reach it")
    return out


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
        after = f" (only on branches that failed at step {earlier})" if earlier is not None else ""
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
        if w.refused:
            suffix += " (also wrong; the call was refused and did not run)"
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


def _change_parts(before: Any, after: Any, path: str = "") -> list[str] | str:
    """Only what differs: items added to or removed from a set, keys of a map and fields of a
    record (recursively, as ``KEY.field`` or ``KEY["k"]``), items of a list; anything else as
    ``old → new``, cut around the first difference so that the change stays visible."""
    head = f"{path}: " if path else ""
    if isinstance(before, frozenset) and isinstance(after, frozenset):
        parts = [f"{head}+{show(v, 60)}" for v in sorted(after - before, key=order)]
        parts += [f"{head}-{show(v, 60)}" for v in sorted(before - after, key=order)]
        return parts
    if isinstance(before, FMap) and isinstance(after, FMap):
        parts = []
        for k in sorted(set(before) | set(after), key=order):
            key = _key_path(path, k)
            if k not in before:
                parts.append(f"+{key}: {show(after[k], 60)}")
            elif k not in after:
                parts.append(f"-{key}")
            elif before[k] != after[k] or type(before[k]) is not type(after[k]):
                parts.extend(_as_list(_change_parts(before[k], after[k], key)))
        return parts
    if isinstance(before, tuple) and isinstance(after, tuple):
        n = len(before)
        if len(after) == n and n:
            parts = []
            for i, (b, a) in enumerate(zip(before, after)):
                if b != a or type(b) is not type(a):
                    parts.extend(_as_list(_change_parts(b, a, f"{path}[{i}]")))
            if len(parts) <= MAX_CHANGES:
                return parts
        elif len(after) > n and after[:n] == before:
            return [f"{head}+{show(v, 60)}" for v in after[n:]]
        elif len(after) < n and before[: len(after)] == after:
            return [f"{head}-{show(v, 60)}" for v in before[len(after) :]]
    return head + _centred(show(before, 10_000), show(after, 10_000))


def _as_list(parts: list[str] | str) -> list[str]:
    return [parts] if isinstance(parts, str) else parts


def _key_path(path: str, key: Any) -> str:
    """A map key or record field below ``path``: ``KEY`` at the top, then ``.field`` for a name,
    ``[KEY]`` for anything else."""
    if not path:
        return show(key, 40)
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{show(key, 40)}]"


CHANGE_WIDTH = 60
"""How much of each side of an ``old → new`` change is shown."""


def _centred(before: str, after: str, width: int = CHANGE_WIDTH) -> str:
    """``old → new``, each side cut to ``width`` characters around the first character where
    they differ (a change deep inside a long value would be lost to a plain prefix)."""
    if len(before) <= width and len(after) <= width:
        return f"{before} → {after}"
    first = next(
        (i for i, (b, a) in enumerate(zip(before, after)) if b != a), min(len(before), len(after))
    )
    start = max(0, first - width // 3)
    return f"{_window(before, start, width)} → {_window(after, start, width)}"


def _window(text: str, start: int, width: int) -> str:
    if len(text) <= width:
        return text
    start = min(start, max(0, len(text) - width))
    cut = text[start : start + width]
    return ("…" if start > 0 else "") + cut + ("…" if start + width < len(text) else "")


def _args(args: Any) -> str:
    return ", ".join(f"{k}={show(v, 40)}" for k, v in dict(args).items())
