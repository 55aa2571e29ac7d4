"""The ``contractsim`` command: a thin click layer over :mod:`contractsim.api`.

Exit codes: 0 success; 1 errors found / the plan fails on some branch; 2 bad input or usage;
3 the plan may fail (only because of unknown values).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from . import __version__
from .api import Contract, check_text, load
from .dsl.diagnostics import ContractError, Diagnostic, Span, render_all
from .sources import read_source

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_MAY_FAIL = 0, 1, 2, 3
INPUT_CODES = ("E0100", "E0106")


def _emit_diagnostics(
    diags: list[Diagnostic], sources: dict[str, str], fmt: str, limit: int
) -> None:
    if fmt == "json":
        click.echo(
            json.dumps({"diagnostics": [d.to_json() for d in diags]}, indent=2, ensure_ascii=False)
        )
        return
    if diags:
        click.echo(render_all(diags, sources, limit=limit), err=False)


def _fail_input(exc: ContractError, fmt: str = "text") -> None:
    _emit_diagnostics(exc.diagnostics, exc.sources, fmt, 50)
    sys.exit(EXIT_INPUT)


def _load(path: str, fmt: str = "text") -> Contract:
    try:
        return load(path)
    except ContractError as exc:
        _fail_input(exc, fmt)
        raise AssertionError from None  # pragma: no cover


def _finite(param: click.Parameter, value: float) -> float:
    """A bound that is a number: ``nan`` (and ``inf``) would switch it off."""
    if value != value or value in (float("inf"), float("-inf")):
        raise click.BadParameter(f"{value} is not a finite number of seconds", param=param)
    return value


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="contractsim")
def main() -> None:
    """Tool behaviour contracts: check them, simulate plans, compile them."""


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json prints code, severity, message, file, line, col, "
    "end_line, end_col and hint for each diagnostic.",
)
@click.option("--strict", is_flag=True, help="Warnings fail the check too.")
@click.option(
    "--max-errors",
    default=50,
    show_default=True,
    type=click.IntRange(1),
    help="Show at most this many diagnostics in text output.",
)
def check(files: tuple[str, ...], fmt: str, strict: bool, max_errors: int) -> None:
    """Check contract FILES: syntax, names, types, machines, lints.

    Exit 0 when clean, 1 on errors (or warnings with --strict), 2 when a file cannot be read.
    """
    diags: list[Diagnostic] = []
    sources: dict[str, str] = {}
    unreadable = False
    for path in files:
        try:
            text = read_source(path)
        except ContractError as exc:
            diags.extend(exc.diagnostics)
            unreadable = True
            continue
        sources[path] = text
        diags.extend(check_text(text, path))
    _emit_diagnostics(diags, sources, fmt, max_errors)
    errors = sum(1 for d in diags if d.severity == "error")
    warnings = sum(1 for d in diags if d.severity == "warning")
    if fmt == "text":
        summary = f"{len(files)} file(s) checked: {errors} error(s), {warnings} warning(s)"
        click.echo(("\n" if diags else "") + summary, err=True)
    if unreadable:
        sys.exit(EXIT_INPUT)
    if errors or (strict and warnings):
        sys.exit(EXIT_FAIL)


@main.command()
@click.argument("contract", type=click.Path(dir_okay=True))
@click.argument("plan", type=click.Path(dir_okay=True))
@click.option(
    "--state",
    "state_file",
    type=click.Path(dir_okay=True),
    help="JSON or YAML overrides of the initial state ($unknown marks a value unknown).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--now",
    help="The simulation's time (RFC 3339). Default: the plan's `now`, else the wall clock.",
)
@click.option("--goal", help="A goal declared in the contract, checked on every final branch.")
@click.option("--max-depth", type=click.IntRange(1), help="Simulate at most this many steps.")
@click.option(
    "--max-states",
    type=click.IntRange(1),
    default=100_000,
    show_default=True,
    help="Stop after exploring this many states.",
)
@click.option(
    "--max-branches",
    type=click.IntRange(1),
    default=256,
    show_default=True,
    help="Keep at most this many distinct branches after each step.",
)
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0, min_open=True),
    callback=lambda _ctx, param, value: _finite(param, value),
    default=300.0,
    show_default=True,
    help="Stop simulating after this much wall-clock time (later steps are reported as not "
    "simulated, and the plan is then not known to succeed).",
)
@click.option(
    "--stop-at-first", is_flag=True, help="Do not simulate steps after the first failing one."
)
@click.option(
    "--color/--no-color", default=None, help="Colour the text report (default: only on a terminal)."
)
def simulate(
    contract: str,
    plan: str,
    state_file: str | None,
    fmt: str,
    now: str | None,
    goal: str | None,
    max_depth: int | None,
    max_states: int,
    max_branches: int,
    stop_at_first: bool,
    max_seconds: float,
    color: bool | None,
) -> None:
    """Dry-run PLAN against CONTRACT and predict, per step, ok / fails / may fail.

    Exit 0 when the plan succeeds on every branch, 1 when it fails on some branch (or misses
    --goal), 3 when it may fail (because of unknown values, or because a bound left steps out),
    2 on bad input.
    """
    from .simulator.inputs import prepare_run
    from .simulator.report import render_text

    c = _load(contract, fmt)
    try:
        run = prepare_run(c.compiled, plan, state_file, now)
        goal = goal or run.plan.goal
        if goal is not None and goal not in c.compiled.goals:
            from .dsl.diagnostics import error, suggestion_hint

            raise ContractError(
                [
                    error(
                        "E0703",
                        f"the contract declares no goal `{goal}`",
                        Span(file=contract),
                        hint=suggestion_hint(goal, c.compiled.goals, "goal"),
                    )
                ]
            )
    except ContractError as exc:
        _fail_input(exc, fmt)
        return
    sim = c.simulator(now=run.now)
    state = sim.state_with(run.state_overrides)
    calls = run.calls
    report = sim.run(
        calls,
        state,
        max_depth=max_depth,
        max_states=max_states,
        max_branches=max_branches,
        stop_at_first=stop_at_first,
        goal=goal,
        max_seconds=max_seconds,
    )
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False, sort_keys=False))
    else:
        use_colour = sys.stdout.isatty() if color is None else color
        click.echo(render_text(report, colour=use_colour), nl=False)
    goal_missed = goal is not None and not report.goal_results.get("reached")
    if report.verdict == "fails" or goal_missed:
        sys.exit(EXIT_FAIL)
    if report.verdict == "may_fail":
        sys.exit(EXIT_MAY_FAIL)


@main.command(name="compile")
@click.argument("contract", type=click.Path(dir_okay=True))
@click.option(
    "--emit",
    type=click.Choice(["python", "ir"]),
    default="python",
    show_default=True,
    help="python: the generated code (both flavours); ir: the typed IR as JSON.",
)
def compile_cmd(contract: str, emit: str) -> None:
    """Print what CONTRACT compiles to."""
    c = _load(contract)
    if emit == "ir":
        click.echo(c.ir.model_dump_json(indent=2, exclude_defaults=True))
        return
    click.echo(c.compiled.python_source, nl=False)


def _render_plan(c: Contract, plan: str, state_file: str | None, now: str | None) -> Any:
    """Simulate PLAN (as `simulate` does) for a diagram overlay; returns the PlanReport."""
    from .simulator.inputs import prepare_run

    run = prepare_run(c.compiled, plan, state_file, now)
    sim = c.simulator(now=run.now)
    return sim.run(run.calls, sim.state_with(run.state_overrides))


@main.command()
@click.argument("contract", type=click.Path(dir_okay=True))
@click.option("--machine", help="Draw this protocol machine.")
@click.option("--tool", help="Draw this tool's flow (its implicit flow when it has none).")
@click.option("--overview", is_flag=True, help="Draw all tools and what enables/disables what.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["dot", "svg", "png", "mermaid"]),
    default="dot",
    show_default=True,
    help="dot and mermaid are text; svg and png need Graphviz's `dot`.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here (png needs it).")
@click.option("--plan", type=click.Path(dir_okay=True), help="Draw this plan's simulated path.")
@click.option("--state", "state_file", type=click.Path(dir_okay=True), help="State overrides.")
@click.option("--now", help="The simulation's time for --plan (RFC 3339).")
def render(
    contract: str,
    machine: str | None,
    tool: str | None,
    overview: bool,
    fmt: str,
    output: str | None,
    plan: str | None,
    state_file: str | None,
    now: str | None,
) -> None:
    """Draw CONTRACT: a protocol machine, a tool's flow, or the overview; with --plan, the
    simulated path on the machine or the overview.

    Without a selector: the contract's protocol machine when it has exactly one, the overview
    when it has none; with several, exit 2 listing the choices.

    Exit 0 on success, 2 on bad input (unknown names, no `dot` for svg/png, png without -o).
    """
    import graphviz

    from .dsl.diagnostics import error
    from .render import RenderError
    from .render import render as draw

    def fail(message: str, hint: str | None) -> None:
        _fail_input(ContractError([error("E0704", message, Span(file=contract), hint=hint)]))

    selectors = [s for s in (machine, tool) if s is not None] + (["overview"] if overview else [])
    if len(selectors) > 1:
        fail("choose one of --machine, --tool and --overview", None)
    if fmt == "png" and output is None:
        fail("PNG is binary: pass -o FILE", "or use --format svg, dot or mermaid for stdout")
    if (state_file or now) and plan is None:
        fail("--state and --now only apply with --plan", None)
    c = _load(contract)
    view = "machine" if machine else "tool" if tool else "overview" if overview else None
    report = None
    if plan is not None:
        try:
            report = _render_plan(c, plan, state_file, now)
        except ContractError as exc:
            _fail_input(exc)
    try:
        result = draw(c.ir, view, machine or tool, fmt, report)
    except RenderError as exc:
        fail(exc.message, exc.hint)
        return
    except graphviz.ExecutableNotFound:
        click.echo(
            f"error: --format {fmt} needs Graphviz's `dot` program, which is not installed.\n"
            "  install it: `apt-get install graphviz` (Debian/Ubuntu) or `brew install graphviz`"
            " (macOS)\n"
            "  or draw without it: --format mermaid (renders on GitHub) or --format dot",
            err=True,
        )
        sys.exit(EXIT_INPUT)
    data = result.encode("utf-8") if isinstance(result, str) else result
    if output is None:
        click.echo(data.decode("utf-8"), nl=not data.endswith(b"\n"))
        return
    try:
        with open(output, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        click.echo(f"error: cannot write {output}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_INPUT)


@main.command(name="export")
@click.argument("contract", type=click.Path(dir_okay=True))
@click.option(
    "--to",
    "target",
    type=click.Choice(["jsonschema", "openapi", "openai", "mcp", "card"]),
    required=True,
    help="jsonschema: JSON Schema 2020-12 of each tool's arguments; openapi: an OpenAPI 3.1 "
    "document; openai: strict-mode function tools; mcp: MCP tool definitions; card: a compact "
    "text per tool for a system prompt.",
)
@click.option("--tool", help="Export only this tool.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here, not stdout.")
def export_cmd(contract: str, target: str, tool: str | None, output: str | None) -> None:
    """Export CONTRACT (or one tool of it) for another ecosystem. JSON is pretty-printed with a
    stable key order; what the target cannot express is kept as x-contract-* extensions or in
    the descriptions (docs/export.md).

    Exit 0 on success, 2 on bad input (an unreadable or invalid contract, an unknown tool, an
    output file that cannot be written).
    """
    from .dsl.diagnostics import error
    from .export import ExportError, export

    c = _load(contract)
    try:
        result = export(c.ir, target, tool)
    except ExportError as exc:
        _fail_input(
            ContractError([error("E0706", exc.message, Span(file=contract), hint=exc.hint)])
        )
        return
    if isinstance(result, str):
        text = result
    else:
        text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        click.echo(f"error: cannot write {output}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_INPUT)


@main.command(name="replay")
@click.argument("contract", type=click.Path(dir_okay=True))
@click.argument("traces", type=click.Path(dir_okay=True))
@click.option(
    "--adapter",
    help="FILE.py:FUNC or MODULE:FUNC turning one foreign record into a run (docs/replay.md).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--now",
    help="The time of runs that carry no `now` (RFC 3339). Default: 2000-01-01T00:00:00Z.",
)
@click.option(
    "--show",
    type=click.IntRange(0),
    default=10,
    show_default=True,
    help="List this many disagreements in full (0: all).",
)
@click.option(
    "--by-rule",
    is_flag=True,
    help="Also list the steps predicted to fail by violated rule x real error (masked), and "
    "the notes on agreeing steps (always in --format json).",
)
def replay_cmd(
    contract: str,
    traces: str,
    adapter: str | None,
    fmt: str,
    now: str | None,
    show: int,
    by_rule: bool,
) -> None:
    """Replay recorded runs in TRACES against CONTRACT: per step, the contract's prediction
    against what really happened, carrying the state along the real outcome.

    Exit 0 when every step agrees, 1 when some step disagrees or the contract cannot evaluate
    itself (EVAL_ERROR), 2 on bad input.
    """
    from .replay import load_adapter, read_runs, render_json, render_text, replay_runs
    from .simulator.inputs import parse_now

    c = _load(contract, fmt)
    try:
        when = parse_now(now, "<command line: --now>") if now is not None else None
        fn = load_adapter(adapter) if adapter is not None else None
        runs = read_runs(traces, c.compiled, fn)
    except ContractError as exc:
        _fail_input(exc, fmt)
        return
    result = replay_runs(c, runs, when)
    limit = show or None
    if fmt == "json":
        report = render_json(result, contract, traces, limit)
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(result, contract, traces, limit, by_rule), nl=False)
    if not result.agree:
        sys.exit(EXIT_FAIL)


@main.command(name="import-pddl")
@click.argument("domain", type=click.Path(dir_okay=True))
@click.argument("problem", type=click.Path(dir_okay=True))
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the contract here, not stdout."
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def import_pddl(domain: str, problem: str, output: str | None, fmt: str) -> None:
    """Import a PDDL DOMAIN and PROBLEM as a .contract: predicates become state relations,
    objects enum members, :init the initial state and :goal the goal `solved` (docs/pddl.md).

    Exit 0 on success, 2 when the PDDL cannot be read or uses what the importer does not
    support (E08xx diagnostics at file:line:col), or the output cannot be written.
    """
    from .pddl import from_pddl

    try:
        contract = from_pddl(domain, problem)
    except ContractError as exc:
        _fail_input(exc, fmt)
        return
    if output is None:
        click.echo(contract.source, nl=False)
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(contract.source)
    except OSError as exc:
        click.echo(f"error: cannot write {output}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_INPUT)
    click.echo(
        f"wrote {output}: {len(contract.tools)} tool(s); check a plan with "
        f"`contractsim simulate {output} PLAN --goal solved`",
        err=True,
    )


@main.command(name="import")
@click.argument("kind", type=click.Choice(["openapi", "mcp", "openai"]))
@click.argument("file", type=click.Path(dir_okay=True))
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the contract here, not stdout."
)
@click.option("--name", help="The contract's name (default: the document's title or file name).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: print {contract, warnings, renames} instead of the contract text.",
)
def import_cmd(kind: str, file: str, output: str | None, name: str | None, fmt: str) -> None:
    """Import FILE — an OpenAPI 3.0/3.1 document (JSON or YAML), an MCP tools/list answer or an
    OpenAI tools array — as a contract skeleton: types, tool signatures, descriptions,
    constraints, result types, outcomes for documented error responses, tags and risk
    (docs/import.md). What the contract cannot say exactly is listed as warnings with JSON
    pointers (on stderr, and as comments at the top of the contract). Nothing is fetched: a
    remote $ref is an error.

    Exit 0 on success (also with warnings), 2 when FILE cannot be read or imported (E15xx
    diagnostics: not JSON/YAML, not that kind of document, a remote, missing or cyclic $ref,
    too large) or the output cannot be written.
    """
    from .importers import import_spec

    try:
        result = import_spec(file, kind, name=name)
    except ContractError as exc:
        _fail_input(exc, fmt)
        return
    if fmt == "json":
        payload = {
            "contract": result.text,
            "warnings": [{"pointer": w.pointer, "message": w.message} for w in result.warnings],
            "renames": [{"kind": k, "source": s, "name": n} for k, s, n in result.renames],
        }
        text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    else:
        text = result.text
    if output is None:
        click.echo(text, nl=False)
    else:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            click.echo(f"error: cannot write {output}: {exc.strerror or exc}", err=True)
            sys.exit(EXIT_INPUT)
    if fmt == "text":
        for w in result.warnings:
            click.echo(f"warning: {w.text()}", err=True)
        where = f"wrote {output}: " if output else ""
        click.echo(
            f"{where}{len(result.source_schemas)} tool(s), {len(result.warnings)} warning(s)",
            err=True,
        )


if __name__ == "__main__":  # pragma: no cover
    main()
