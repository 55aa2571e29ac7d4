"""The ``contractsim`` command: a thin click layer over :mod:`contractsim.api`.

Exit codes: 0 success; 1 errors found / the plan fails on some branch; 2 bad input or usage;
3 the plan may fail (only because of unknown values).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from . import __version__

if TYPE_CHECKING:
    from . import diagnostics
    from .api import Contract

# The front end (pydantic, the parser) is imported inside each command, so that `--version` and
# `--help` start as fast as click itself: a command imports ContractError, Span, load … itself
# (module-level annotations use `diagnostics.X`, so a bare name missing its import is flagged).

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_MAY_FAIL = 0, 1, 2, 3
INPUT_CODES = ("E0100", "E0106")


def _emit_diagnostics(
    diags: list[diagnostics.Diagnostic], sources: dict[str, str], fmt: str, limit: int
) -> None:
    from .diagnostics import render_all

    if fmt == "json":
        click.echo(
            json.dumps({"diagnostics": [d.to_json() for d in diags]}, indent=2, ensure_ascii=False)
        )
        return
    if diags:
        click.echo(render_all(diags, sources, limit=limit), err=False)


def _fail_input(exc: diagnostics.ContractError, fmt: str = "text") -> None:
    _emit_diagnostics(exc.diagnostics, exc.sources, fmt, 50)
    sys.exit(EXIT_INPUT)


def _load(path: str, fmt: str = "text") -> Contract:
    from .api import load
    from .diagnostics import ContractError

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


def _scale_options(command: Any) -> Any:
    """The options of ``replay`` and ``simulate`` that run them streamed and in parallel."""
    options = [
        click.option(
            "--workers",
            type=click.IntRange(1),
            help="Run on this many local processes (streamed input, results merged in input "
            "order: the same report as one process). Default: 1.",
        ),
        click.option(
            "--dask",
            metavar="ADDRESS",
            help="Run on a dask.distributed cluster at ADDRESS (host:port), or `local` for a "
            "LocalCluster of --workers processes (default: one per core); needs the extra "
            "contractsim[dask].",
        ),
        click.option(
            "--chunk-size",
            type=click.IntRange(1),
            default=64,
            show_default=True,
            help="Runs (or plans) sent to a worker at a time.",
        ),
        click.option(
            "--output",
            type=click.Path(dir_okay=False),
            help="Also write one JSON line per finished run (or plan) to this file.",
        ),
        click.option(
            "--resume",
            is_flag=True,
            help="With --output: keep the results already in the file and do only the rest.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


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
    from .api import check_text, read_source
    from .diagnostics import ContractError, Diagnostic

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
@click.argument("plans", nargs=-1, required=True, type=click.Path(dir_okay=True))
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
@click.option(
    "--repair",
    is_flag=True,
    help="When the plan fails (or misses --goal), add the cheapest calls to insert so that "
    "every step succeeds, as a diff of the plan (docs/planning.md).",
)
@_scale_options
def simulate(
    contract: str,
    plans: tuple[str, ...],
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
    repair: bool,
    workers: int | None,
    dask: str | None,
    chunk_size: int,
    output: str | None,
    resume: bool,
) -> None:
    """Dry-run PLANS against CONTRACT and predict, per step, ok / fails / may fail.

    One plan file: its full report. Several plans, a directory of plans (*.yaml, *.yml,
    *.json), --workers, --dask or --output: one line per plan and a summary, simulated in
    parallel (docs/scale.md).

    Exit 0 when the plan succeeds on every branch, 1 when it fails on some branch (or misses
    --goal), 3 when it may fail (because of unknown values, or because a bound left steps out),
    2 on bad input; with several plans, the worst of them (2, then 1, then 3).
    """
    import os

    if len(plans) > 1 or os.path.isdir(plans[0]) or workers or dask or output or resume:
        from .scale.batch import SimulateOptions

        if repair:
            raise click.UsageError("--repair simulates one plan: give a single plan file")
        options = SimulateOptions(
            state_file, now, goal, max_depth, max_states, max_branches, max_seconds, stop_at_first
        )
        _simulate_at_scale(
            contract, list(plans), options, fmt, workers, dask, chunk_size, output, resume
        )
        return
    (plan,) = plans
    import gc

    # Loading the simulator and compiling the contract build tens of thousands of long-lived
    # objects (modules, record classes, code) and little garbage: the cyclic collector would only
    # rescan them (~25 ms of a cold run). Paused while they are made; then those objects are frozen
    # (left out of later collections) and the simulation runs with the collector on as usual.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        from .diagnostics import ContractError, Span
        from .simulator.inputs import prepare_run
        from .simulator.report import render_text

        c = _load(contract, fmt)
        c.compile(lazy=True)  # one plan calls a few tools: compile only their code
    finally:
        if was_enabled:
            gc.enable()
    if was_enabled:
        # no collection first: it would scan all of them once (~10 ms) for ~400 objects of
        # garbage, which an in-process caller (CliRunner) keeps frozen instead
        gc.freeze()
    try:
        run = prepare_run(c.compiled, plan, state_file, now)
        goal = goal or run.plan.goal
        if goal is not None and goal not in c.compiled.goals:
            from .diagnostics import error, suggestion_hint

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
    goal_missed = goal is not None and not report.goal_results.get("reached")
    fixed = None
    if repair and (report.verdict != "ok" or goal_missed):
        fixed = sim.repair(calls, state, goal=goal, max_states=max_states, max_seconds=max_seconds)
    if fmt == "json":
        data = report.to_json()
        if repair:
            data["repair"] = None if fixed is None else fixed.to_json()
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))
    else:
        use_colour = sys.stdout.isatty() if color is None else color
        click.echo(render_text(report, colour=use_colour), nl=False)
        if fixed is not None:
            click.echo(_repair_text(fixed, calls), nl=False)
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
        from .dsl import ir

        click.echo(ir.dump_json(c.ir, indent=2, exclude_defaults=True))
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
    from .diagnostics import ContractError, Span, error
    from .render import RenderError
    from .render import render as draw

    missing_dot: tuple[type[Exception], ...] = ()  # only SVG and PNG run `dot` (and need graphviz)
    if fmt in ("svg", "png"):
        import graphviz

        missing_dot = (graphviz.ExecutableNotFound,)

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
    except missing_dot:
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
    from .diagnostics import ContractError, Span, error
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
@click.argument("traces", nargs=-1, required=True, type=click.Path(dir_okay=True))
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
@_scale_options
def replay_cmd(
    contract: str,
    traces: tuple[str, ...],
    adapter: str | None,
    fmt: str,
    now: str | None,
    show: int,
    by_rule: bool,
    workers: int | None,
    dask: str | None,
    chunk_size: int,
    output: str | None,
    resume: bool,
) -> None:
    """Replay recorded runs in TRACES against CONTRACT: per step, the contract's prediction
    against what really happened, carrying the state along the real outcome.

    With several TRACES, --workers, --dask or --output the runs are streamed and replayed in
    parallel (docs/scale.md); the report is the same, byte for byte.

    Exit 0 when every step agrees, 1 when some step disagrees, the contract cannot evaluate
    itself (EVAL_ERROR) or a run failed in its worker, 2 on bad input.
    """
    if len(traces) > 1 or workers or dask or output or resume:
        _replay_at_scale(
            contract, list(traces), adapter, fmt, now, show, by_rule,
            workers, dask, chunk_size, output, resume,
        )  # fmt: skip
        return
    (trace_file,) = traces
    from .diagnostics import ContractError
    from .replay import load_adapter, read_runs, render_json, render_text, replay_runs
    from .simulator.formats import parse_now

    c = _load(contract, fmt)
    try:
        when = parse_now(now, "<command line: --now>") if now is not None else None
        fn = load_adapter(adapter) if adapter is not None else None
        runs = read_runs(trace_file, c.compiled, fn)
    except ContractError as exc:
        _fail_input(exc, fmt)
        return
    result = replay_runs(c, runs, when)
    limit = show or None
    if fmt == "json":
        report = render_json(result, contract, trace_file, limit)
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(result, contract, trace_file, limit, by_rule), nl=False)
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
    from .api import from_pddl
    from .diagnostics import ContractError

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


@main.command(name="learn")
@click.argument("traces", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option(
    "--skeleton",
    type=click.Path(dir_okay=True),
    help="A contract whose types, state and tool signatures are kept (its require, should and "
    "effects are dropped). Without one, they are inferred from the recorded values.",
)
@click.option(
    "--refine",
    type=click.Path(dir_okay=True),
    help="A hand-written contract to refine: its clauses and effects are kept and only what the "
    "data demands is added (instead of --skeleton).",
)
@click.option(
    "--adapter",
    help="FILE.py:FUNC or MODULE:FUNC turning one foreign record into a run (docs/replay.md).",
)
@click.option(
    "-o", "--output", type=click.Path(), help="Write the contract here (default: stdout)."
)
@click.option("--report", type=click.Path(), help="Write the JSON learning report here.")
@click.option(
    "--safe",
    is_flag=True,
    help="Keep every atom that held before every observed success (never approves a call the "
    "true contract refuses, when its preconditions are expressible); default: the fewest "
    "clauses that explain the failures.",
)
@click.option(
    "--min-support",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="A clause, constant or effect branch needs at least this many observations.",
)
@click.option(
    "--max-atoms",
    type=click.IntRange(1, 5000),
    default=400,
    show_default=True,
    help="Consider at most this many atoms per tool (bounds the work).",
)
@click.option(
    "--infer-enums",
    is_flag=True,
    help="Without --skeleton/--refine: a text parameter whose successful calls show at most 6 "
    "values, each at least 3 times over at least 30 calls, gets an enum type (which refuses "
    "any other value).",
)
@click.option(
    "--effect-exceptions",
    type=click.IntRange(0),
    default=50,
    show_default=True,
    metavar="N",
    help="Keep an effect when at most one in N of the tool's observations is one no template "
    "explains (counted in its comment and the report); 0 keeps only effects that explain every "
    "observation.",
)
def learn_cmd(
    traces: tuple[str, ...],
    skeleton: str | None,
    refine: str | None,
    adapter: str | None,
    output: str | None,
    report: str | None,
    safe: bool,
    min_support: int,
    max_atoms: int,
    infer_enums: bool,
    effect_exceptions: int,
) -> None:
    """Learn a contract from recorded runs in TRACES (the trace format of `replay`, steps with
    `state_after` for effects): preconditions, error codes and effects of every tool, each with
    its evidence as a comment (docs/learn.md).

    Exit 0 with a contract that `check` accepts, 2 on bad input (traces, skeleton, adapter).
    """
    from pathlib import Path

    from .api import learn
    from .diagnostics import ContractError
    from .replay import load_adapter

    if skeleton is not None and refine is not None:
        raise click.UsageError("give --skeleton or --refine, not both")
    base: str | None = refine if refine is not None else skeleton
    try:
        fn = load_adapter(adapter) if adapter is not None else None
        result = learn(
            list(traces),
            _load(base) if base is not None else None,
            adapter=fn,
            safe=safe,
            refine=refine is not None,
            max_atoms=max_atoms,
            min_support=min_support,
            infer_enums=infer_enums,
            effect_exceptions=effect_exceptions,
        )
    except ContractError as exc:
        _fail_input(exc)
        return
    if output is None:
        click.echo(result.text, nl=False)
    else:
        Path(output).write_text(result.text, encoding="utf-8")
    if report is not None:
        Path(report).write_text(
            json.dumps(result.report(), indent=2, ensure_ascii=False, default=str) + "\n",
            encoding="utf-8",
        )
    learned = result.learned
    effects = sum(1 for t in learned.tools.values() for e in t.effects if e.kept)
    click.echo(
        f"learned from {learned.steps} step(s) in {learned.seconds:.2f} s CPU ({learned.mode} "
        f"mode): {sum(len(t.clauses) for t in learned.tools.values())} clause(s), "
        f"{effects} effect(s)",
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
    from .diagnostics import ContractError
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


@main.command(name="diff")
@click.argument("old")
@click.argument("new")
@click.option("--tool", help="Report only the changes of this tool.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text for a terminal or CI log; markdown for a changelog section; json for agents and "
    "tools (docs/diff.schema.json).",
)
@click.option(
    "--fail-on",
    type=click.Choice(["breaking", "behavioural", "any"]),
    default="breaking",
    show_default=True,
    help="Exit 1 when a change of this class or a more severe one is found "
    "(breaking > behavioural > additive; any: every change).",
)
@click.option(
    "--no-witnesses",
    is_flag=True,
    help="Skip the search for calls on which OLD and NEW disagree (faster).",
)
def diff_cmd(
    old: str, new: str, tool: str | None, fmt: str, fail_on: str, no_witnesses: bool
) -> None:
    """Compare two versions of a contract and classify every change.

    OLD and NEW are contract files or git:REV:PATH (read with `git show REV:PATH` in the current
    repository), e.g. `contractsim diff git:origin/main:api.contract api.contract`. Each change is
    breaking, additive or behavioural, says what an agent that relied on OLD now experiences, and
    precondition and effect changes come with a witness plan that `simulate` reproduces on both
    files. The report also checks NEW's version against the bump the changes require.

    Exit 0 when no change reaches --fail-on, 1 when one does (or NEW's version is lower
    than OLD's), 2 on bad input (unreadable file, contract errors, git or the revision
    missing, unknown --tool).
    """
    from .api import load_operand
    from .diagnostics import ContractError, Span
    from .diffing import diff_contracts
    from .diffing.render import render_json, render_markdown, render_text

    json_errors = "json" if fmt == "json" else "text"
    try:
        a = load_operand(old, "old")
        b = load_operand(new, "new")
        if tool is not None and a.ir.tool(tool) is None and b.ir.tool(tool) is None:
            from .diagnostics import error, suggestion_hint

            names = sorted(set(a.tools) | set(b.tools))
            raise ContractError(
                [
                    error(
                        "E0100",
                        f"neither version declares a tool `{tool}`",
                        Span(file=new),
                        hint=suggestion_hint(tool, names, "tool"),
                    )
                ]
            )
    except ContractError as exc:
        _fail_input(exc, json_errors)
        return
    from .diffing.sources import example_values

    extra = example_values(old, new) if not no_witnesses else []
    report = diff_contracts(a, b, tool, witnesses=not no_witnesses, example_args=extra)
    render = {"json": render_json, "markdown": render_markdown}.get(fmt, render_text)
    click.echo(render(report), nl=False)
    if report.fails(fail_on):
        sys.exit(EXIT_FAIL)


def _parse_values(items: tuple[str, ...], c: Contract) -> dict[str, list[Any]]:
    """``--values TOOL.PARAM=V,V2`` options as {"tool.param": [values]} (JSON values, else text)."""
    from .diagnostics import ContractError, Diagnostic, Span, error, suggestion_hint

    out: dict[str, list[Any]] = {}
    problems: list[Diagnostic] = []
    where = Span(file="<command line: --values>", line=1, col=1, end_line=1, end_col=2)
    for item in items:
        name, sep, raw = item.partition("=")
        tool, dot, param = name.strip().partition(".")
        if not sep or not dot or not tool or not param:
            problems.append(
                error(
                    "E0707",
                    f"`{item}` is not TOOL.PARAM=VALUE[,VALUE…]",
                    where,
                    hint="write e.g. --values write_file.content='hello'",
                )
            )
            continue
        t = c.ir.tool(tool)
        if t is None:
            problems.append(
                error(
                    "E0707",
                    f"--values: the contract declares no tool `{tool}`",
                    where,
                    hint=suggestion_hint(tool, c.tools, "tool"),
                )
            )
            continue
        params = [p.name for p in t.params]
        if param not in params:
            problems.append(
                error(
                    "E0707",
                    f"--values: `{tool}` has no parameter `{param}`",
                    where,
                    hint=suggestion_hint(param, params, "parameter"),
                )
            )
            continue
        values: list[Any] = []
        try:  # one JSON value (a list gives several values) ...
            whole = json.loads(raw)
            values = whole if isinstance(whole, list) else [whole]
        except ValueError:  # ... else comma-separated items, each JSON or text
            for text in raw.split(","):
                try:
                    values.append(json.loads(text))
                except ValueError:
                    values.append(text)
        out.setdefault(f"{tool}.{param}", []).extend(values)
    if problems:
        raise ContractError(problems)
    return out


def _goal_contract(c: Contract, goal: str, path: str) -> tuple[Contract, str]:
    """The contract and goal name for --goal: a declared goal, or an expression (added to the
    contract as goal `plan_goal`)."""
    from .api import loads
    from .diagnostics import ContractError, Span, error, suggestion_hint

    if goal in c.compiled.goals:
        return c, goal
    if goal.isidentifier():
        raise ContractError(
            [
                error(
                    "E0703",
                    f"the contract declares no goal `{goal}`",
                    Span(file=path),
                    hint=suggestion_hint(goal, c.compiled.goals, "goal")
                    or 'give a declared goal\'s name or a condition such as "x in done"',
                )
            ]
        )
    name = "plan_goal"
    while name in c.compiled.goals:
        name += "_"
    text = c.source.rstrip("\n") + f"\n\ngoal {name} = {goal}\n"
    return loads(text, path), name


def _call_text(tool: str, args: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{tool}({shown})"


@main.command(name="plan")
@click.argument("contract", type=click.Path(dir_okay=True))
@click.option("--goal", required=True, help='A declared goal, or a condition ("x in done").')
@click.option(
    "--state",
    "state_file",
    type=click.Path(dir_okay=True),
    help="JSON or YAML overrides of the initial state ($unknown marks a value unknown).",
)
@click.option("--now", help="The simulation's time (RFC 3339). Default: the wall clock.")
@click.option(
    "--values",
    "values",
    multiple=True,
    metavar="TOOL.PARAM=V[,V…]",
    help="The argument values to try for a parameter, instead of the grounded ones: one JSON "
    "value, a JSON list, or comma-separated items (each JSON, else text); repeatable.",
)
@click.option("--max-depth", type=click.IntRange(0), help="Plans of at most this many steps.")
@click.option(
    "--max-states",
    type=click.IntRange(1),
    default=100_000,
    show_default=True,
    help="Stop after expanding this many states.",
)
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0, min_open=True),
    callback=lambda _ctx, param, value: _finite(param, value),
    default=60.0,
    show_default=True,
    help="Stop searching after this much wall-clock time.",
)
@click.option(
    "--allow-may-fail",
    is_flag=True,
    help="Allow calls that may fail (because of unknown values or an environment event); the "
    "plan's success probability and its risks are reported.",
)
@click.option(
    "--fast",
    is_flag=True,
    help="Greedy best-first search with h_FF: usually much faster, no optimality claim.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "plan"]),
    default="text",
    show_default=True,
    help="plan: a plan file that `contractsim simulate` runs unchanged.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here, not stdout.")
def plan_cmd(
    contract: str,
    goal: str,
    state_file: str | None,
    now: str | None,
    values: tuple[str, ...],
    max_depth: int | None,
    max_states: int,
    max_seconds: float,
    allow_may_fail: bool,
    fast: bool,
    fmt: str,
    output: str | None,
) -> None:
    """Find the cheapest calls that take CONTRACT from its state to --goal (docs/planning.md).

    Every call is certain to succeed (`ok`; with --allow-may-fail, `may_fail` too); cost is each
    tool's `cost` (default 1). A* with h_max when the contract's relaxation is readable (imported
    PDDL), uniform-cost search otherwise; --fast: greedy, not optimal.

    Exit 0 when a plan is found, 1 when no plan exists with the grounded calls (every reachable
    state was expanded), 3 when a bound (--max-depth, --max-states, --max-seconds) stopped the
    search first, 2 on bad input (unknown goal, unreadable state file, bad --values).
    """
    from .diagnostics import ContractError
    from .simulator.formats import parse_now, parse_state, read_text
    from .simulator.values import validate_state_overrides

    jfmt = "json" if fmt == "json" else "text"
    c = _load(contract, jfmt)
    raw_state: dict[str, Any] = {}
    try:
        c, goal_name = _goal_contract(c, goal, contract)
        extra = _parse_values(values, c)
        when = parse_now(now, "<command line: --now>") if now is not None else None
        overrides: dict[str, Any] = {}
        if state_file is not None:
            text = read_text(state_file, "state")
            raw_state = parse_state(text, state_file)
            overrides = validate_state_overrides(c.compiled, raw_state, state_file, text)
    except ContractError as exc:
        _fail_input(exc, jfmt)
        return
    sim = c.simulator(now=when)
    state = sim.state_with(overrides)
    result = sim.plan(
        state,
        goal_name,
        values=extra,
        max_depth=max_depth,
        max_states=max_states,
        max_seconds=max_seconds,
        allow_may_fail=allow_may_fail,
        fast=fast,
    )
    if fmt == "plan" and result.found:
        doc: dict[str, Any] = {}
        if now is not None:
            doc["now"] = now
        if raw_state:
            doc["state"] = raw_state
        if goal_name == goal:
            doc["goal"] = goal
        doc["steps"] = [{"tool": t, "args": a} for t, a in result.steps]
        out = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    elif fmt == "json":
        out = json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"
    else:
        out = _plan_text(result, goal)
    if output is not None:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(out)
        except OSError as exc:
            click.echo(f"error: cannot write {output}: {exc.strerror}", err=True)
            sys.exit(EXIT_INPUT)
    elif fmt == "plan" and not result.found:
        click.echo(_plan_text(result, goal), err=True, nl=False)
    else:
        click.echo(out, nl=False)
    if not result.found:
        sys.exit(EXIT_FAIL if result.stopped_by == "exhausted" else EXIT_MAY_FAIL)


_METHODS = {
    "astar-hmax": "A* with h_max: optimal",
    "uniform-cost": "uniform-cost search: optimal",
    "greedy-hff": "greedy best-first with h_FF: not necessarily optimal",
    "greedy-blind": "greedy best-first without a heuristic: not necessarily optimal",
}
_STOPS = {
    "exhausted": "no plan exists with the grounded calls (every reachable state was expanded)",
    "max_depth": "stopped by --max-depth: no plan of at most that many steps",
    "max_states": "stopped by --max-states before a plan was found",
    "max_seconds": "stopped by --max-seconds before a plan was found",
}


def _plan_text(result: Any, goal: str) -> str:
    lines: list[str] = []
    if result.found:
        cost = f"{result.cost:g}"
        lines.append(
            f"plan for goal `{goal}`: {len(result.steps)} step(s), cost {cost} "
            f"({_METHODS[result.method]})"
        )
        for i, (tool, args) in enumerate(result.steps, 1):
            lines.append(f"  {i}. {_call_text(tool, args)}")
        if result.probability != 1.0:
            p = "unknown" if result.probability is None else f"{result.probability:.0%}"
            lines.append(f"success probability: {p}")
        for a in result.assumptions:
            lines.append(f"  risk: {a}")
    else:
        lines.append(f"no plan for goal `{goal}`: {_STOPS[result.stopped_by]}")
    for note in result.notes:
        lines.append(f"note: {note}")
    lines.append(
        f"{result.expanded} state(s) expanded, {result.generated} generated, "
        f"{result.seconds:.2f} s CPU"
    )
    return "\n".join(lines) + "\n"


@main.command(name="select")
@click.argument("contract", type=click.Path(dir_okay=True))
@click.option("--need", "needs", multiple=True, help="A capability tag to cover; repeatable.")
@click.option("--exclude", multiple=True, help="A tool that must not be chosen; repeatable.")
@click.option(
    "--goal",
    help="Causal selection: the tools of the cheapest plan to this goal, each shown necessary.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def select_cmd(
    contract: str, needs: tuple[str, ...], exclude: tuple[str, ...], goal: str | None, fmt: str
) -> None:
    """The cheapest set of CONTRACT's tools whose tags cover every --need (docs/planning.md).

    A need `data` is covered by a tag `data` or `data.*`. Exact (branch and bound) for up to 40
    tools, greedy weighted set cover beyond (within H(n) of the optimum). With --goal, the tools
    of the cheapest plan to the goal, each necessary (no plan without it within the bounds).

    Exit 0 when a set is found, 1 when no set covers the needs (or no plan reaches --goal), 2
    on bad input (unknown need or tool, with a did-you-mean).
    """
    from .diagnostics import ContractError, Diagnostic, Span, error, suggestion_hint

    c = _load(contract, fmt)
    where = Span(file=contract)
    tags = sorted({tag.name for t in c.ir.tools for tag in t.tags})
    prefixes = sorted(
        {".".join(t.split(".")[:i]) for t in tags for i in range(1, t.count(".") + 2)}
    )
    problems: list[Diagnostic] = []
    for need in needs:
        if need not in prefixes:
            problems.append(
                error(
                    "E0708",
                    f"no tool has a tag `{need}` or `{need}.*`",
                    where,
                    hint=suggestion_hint(need, prefixes, "tag")
                    or (
                        "tags: " + ", ".join(tags) if tags else "the contract's tools have no tags"
                    ),
                )
            )
    for name in exclude:
        if name not in c.tools:
            problems.append(
                error(
                    "E0708",
                    f"--exclude: the contract declares no tool `{name}`",
                    where,
                    hint=suggestion_hint(name, c.tools, "tool"),
                )
            )
    if not needs and goal is None:
        problems.append(
            error("E0708", "nothing to select for", where, hint="give --need TAG or --goal NAME")
        )
    if problems:
        _fail_input(ContractError(problems), fmt)
    try:
        result = c.select(list(needs), exclude=list(exclude), goal=goal)
    except ValueError as exc:
        _fail_input(ContractError([error("E0703", str(exc), where)]), fmt)
        return
    if fmt == "json":
        click.echo(json.dumps(None if result is None else result.to_json(), indent=2))
    elif result is None:
        click.echo("no set of tools covers the needs" + (" and reaches the goal" if goal else ""))
    else:
        if result.method == "greedy":
            how = f"greedy weighted set cover: within {result.bound:.3f} × the optimum (H(n))"
        elif result.method == "causal":
            how = f"causal: the tools of the cheapest plan to `{goal}`"
        else:
            how = "exact (branch and bound)"
        click.echo(f"{len(result.tools)} tool(s), cost {result.cost:g} — {how}")
        for t in result.tools:
            why = result.necessary.get(t)
            click.echo(f"  {t}" + (f"  ({why})" if why else ""))
        for need, by in result.covers.items():
            click.echo(f"  need {need}: " + ", ".join(by))
    if result is None:
        sys.exit(EXIT_FAIL)


def _repair_text(fixed: Any, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The repaired plan as a diff of the plan: `+` inserted calls, the plan's own steps."""
    if not fixed.found:
        why = {"exhausted": "no repair exists with the grounded calls"}.get(
            fixed.stopped_by, f"no repair within the bounds ({fixed.stopped_by} stopped it)"
        )
        return f"repair: {why}\n"
    lines = [f"repair: insert {len(fixed.inserted)} call(s), cost {fixed.cost:g}"]
    inserted_at = {i["at"] for i in fixed.inserted}
    own = 0
    for at, (tool, args) in enumerate(fixed.plan, 1):
        if at in inserted_at:
            lines.append(f"  + {_call_text(tool, args)}")
        else:
            own += 1
            lines.append(f"    {own}. {_call_text(tool, args)}")
    return "\n".join(lines) + "\n"


@main.command(
    name="mcp-proxy",
    context_settings={"ignore_unknown_options": True},
)
@click.argument("contract", type=click.Path(dir_okay=True))
@click.argument("server_cmd", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option(
    "--state",
    "state_file",
    type=click.Path(dir_okay=True),
    help="JSON or YAML overrides of the initial tracked state ($unknown marks a value unknown).",
)
@click.option("--now", help="Fix the contract's today()/now() (RFC 3339). Default: the wall clock.")
@click.option(
    "--block-on-unknown",
    is_flag=True,
    help="Also refuse calls that only may fail because of unknown state (default: forward them; "
    "the real result refines the state).",
)
@click.option(
    "--serialize",
    is_flag=True,
    help="Check, forward and apply one call at a time (two concurrent calls then cannot both "
    "pass a check only one of them may).",
)
@click.option(
    "--drift-log",
    type=click.Path(dir_okay=False),
    help="Append every disagreement between contract and server here, one JSON object a line.",
)
@click.option(
    "--save-state",
    type=click.Path(dir_okay=False),
    help="Write the tracked state here (JSON, as --state reads it) when the proxy stops.",
)
@click.option(
    "--call-timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Seconds a forwarded call may take; a server that takes longer is restarted on the "
    "next call. Default: no limit.",
)
def mcp_proxy_cmd(
    contract: str,
    server_cmd: tuple[str, ...],
    state_file: str | None,
    now: str | None,
    block_on_unknown: bool,
    serialize: bool,
    drift_log: str | None,
    save_state: str | None,
    call_timeout: float | None,
) -> None:
    """An MCP server (stdio) in front of the MCP server SERVER_CMD, guarded by CONTRACT.

    Usage: contractsim mcp-proxy CONTRACT [OPTIONS] -- SERVER_CMD [ARGS...]

    Lists the contract's tools (with their contracts in the descriptions) and the server's
    others, plus get_tool_contract(tool). A call the contract says must fail is answered with
    an isError result (the reason, the values, the fix, the tools callable now) and never
    reaches the server; the others are forwarded and their real results update the tracked
    state. See docs/integrations.md.

    Exit 0 when the client closes the connection, 2 on bad input (contract, state file, --now)
    or when SERVER_CMD cannot be started.
    """
    from .diagnostics import ContractError
    from .simulator.formats import parse_now, parse_state, read_text
    from .simulator.values import validate_state_overrides

    if server_cmd and server_cmd[0] == "--":
        server_cmd = server_cmd[1:]
    if not server_cmd:
        click.echo("error: give the MCP server's command after `--`", err=True)
        sys.exit(EXIT_INPUT)
    c = _load(contract)
    try:
        when = parse_now(now, "<command line: --now>") if now is not None else None
        overrides: dict[str, Any] = {}
        if state_file is not None:
            text = read_text(state_file, "state")
            overrides = validate_state_overrides(
                c.compiled, parse_state(text, state_file), state_file, text
            )
    except ContractError as exc:
        _emit_diagnostics(exc.diagnostics, exc.sources, "text", 50)
        sys.exit(EXIT_INPUT)
    try:
        import anyio

        from .integrations.mcp_proxy import McpProxy, ProxyError
    except ImportError as exc:
        click.echo(
            f"error: mcp-proxy needs the `mcp` package ({exc}); pip install 'contractsim[mcp]'",
            err=True,
        )
        sys.exit(EXIT_INPUT)
    state = c.simulator(now=when).state_with(overrides)
    proxy = McpProxy(
        c,
        list(server_cmd),
        state=state,
        now=now,
        block_on_unknown=block_on_unknown,
        serialize=serialize,
        drift_log=drift_log,
        save_state=save_state,
        call_timeout=call_timeout,
    )
    try:
        anyio.run(proxy.serve_stdio)
    except ProxyError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    except KeyboardInterrupt:
        pass


@main.command(name="serve")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option(
    "--poll-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="How often the folder is checked for changed contract files.",
)
@click.option(
    "--max-body",
    type=click.IntRange(1),
    default=1_000_000,
    show_default=True,
    help="The largest plan POST /simulate accepts, in bytes (larger: 413).",
)
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0, min_open=True),
    callback=lambda _ctx, param, value: _finite(param, value),
    default=10.0,
    show_default=True,
    help="How long one simulation may run (longer: 503), and how long receiving a plan may "
    "take (longer: 408).",
)
def serve_cmd(
    directory: str, host: str, port: int, poll_seconds: float, max_body: int, max_seconds: float
) -> None:
    """Serve the contracts in DIRECTORY over HTTP: their exports, cards, versions and changelogs
    (from git), and POST /contracts/NAME/simulate. Changed files are reloaded; a file that no
    longer checks keeps its last good version served and is reported at /health. See
    docs/integrations.md.

    Exit 0 when stopped (Ctrl-C), 2 on bad input (DIRECTORY missing, the port taken).
    """
    import os

    if not os.path.isdir(directory):
        click.echo(f"error: {directory} is not a directory", err=True)
        sys.exit(EXIT_INPUT)
    try:
        import uvicorn

        from .api import diff, loads
        from .integrations.serve import Limits, create_app
    except ImportError as exc:
        click.echo(
            f"error: serve needs the `mcp` extra ({exc}); pip install 'contractsim[mcp]'",
            err=True,
        )
        sys.exit(EXIT_INPUT)
    app = create_app(
        directory,
        lambda text, name: loads(text, name),
        lambda old, new: diff(old, new, witnesses=False),
        poll_seconds=poll_seconds,
        limits=Limits(max_body=max_body, body_seconds=max_seconds, simulate_seconds=max_seconds),
    )
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    try:
        server.run()
    except SystemExit:  # uvicorn exits when it cannot bind
        pass
    if not server.started:
        click.echo(f"error: cannot listen on {host}:{port}", err=True)
        sys.exit(EXIT_INPUT)


# ------------------------------------------------------------------- replay / simulate at scale


def _replay_at_scale(
    contract: str,
    traces: list[str],
    adapter: str | None,
    fmt: str,
    now: str | None,
    show: int,
    by_rule: bool,
    workers: int | None,
    dask: str | None,
    chunk_size: int,
    output: str | None,
    resume: bool,
) -> None:
    from .api import loads
    from .diagnostics import ContractError
    from .replay import render_json, render_text
    from .scale import OutputProblem, default_workers, replay_at_scale
    from .scale.cluster import DaskUnavailable
    from .scale.replay import failed_json, failed_text

    if resume and output is None:
        raise click.UsageError("--resume needs --output FILE.jsonl (the results to resume from)")
    c = _load(contract, fmt)
    try:
        done = replay_at_scale(
            loads,
            c,
            traces,
            adapter=adapter,
            now=now,
            workers=workers or (default_workers() if dask else 1),
            dask=dask,
            chunk_size=chunk_size,
            output=output,
            resume=resume,
            progress=fmt == "text" and sys.stderr.isatty(),
            keep=show or None,
        )
    except ContractError as exc:
        _fail_input(exc, fmt)
        return
    except (OutputProblem, DaskUnavailable) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    if done.resumed:
        click.echo(f"resumed: {done.resumed} run(s) already in {output}", err=True)
    label = ", ".join(traces)
    limit = show or None
    if fmt == "json":
        report = render_json(done.result, contract, label, limit)
        report.update(failed_json(done.failed))
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        text = render_text(done.result, contract, label, limit, by_rule)
        click.echo(text + failed_text(done.failed), nl=False)
    if not done.result.agree or done.failed:
        sys.exit(EXIT_FAIL)


def _simulate_at_scale(
    contract: str,
    plans: list[str],
    options: Any,
    fmt: str,
    workers: int | None,
    dask: str | None,
    chunk_size: int,
    output: str | None,
    resume: bool,
) -> None:
    import os

    from .api import loads
    from .diagnostics import ContractError, Span, error, suggestion_hint
    from .scale import OutputProblem, default_workers
    from .scale.batch import plan_files, plan_line, simulate_at_scale
    from .scale.cluster import DaskUnavailable
    from .simulator.formats import read_text

    if resume and output is None:
        raise click.UsageError("--resume needs --output FILE.jsonl (the results to resume from)")
    c = _load(contract, fmt)
    for path in plans:
        if os.path.isdir(path) and next(plan_files([path]), None) is None:
            click.echo(f"error: {path} holds no plan files (*.yaml, *.yml, *.json)", err=True)
            sys.exit(EXIT_INPUT)
    if options.goal is not None and options.goal not in c.compiled.goals:
        problem = error(
            "E0703",
            f"the contract declares no goal `{options.goal}`",
            Span(file=contract),
            hint=suggestion_hint(options.goal, c.compiled.goals, "goal"),
        )
        _fail_input(ContractError([problem]), fmt)
    first = [True]

    def sources(diags: list[diagnostics.Diagnostic]) -> dict[str, str]:
        out = {}
        for name in {d.span.file for d in diags}:
            try:
                out[name] = read_text(name, "plan")
            except ContractError:
                pass
        return out

    def emit(item: dict[str, Any]) -> None:
        if fmt == "json":
            lead = f'{{"contract": {json.dumps(contract)}, "plans": [\n' if first[0] else ",\n"
            click.echo(lead + json.dumps(item, ensure_ascii=False), nl=False)
        else:
            click.echo(plan_line(item, sources), nl=False)
        first[0] = False

    try:
        summary = simulate_at_scale(
            loads,
            c,
            plans,
            options,
            emit,
            workers=workers or (default_workers() if dask else 1),
            dask=dask,
            chunk_size=chunk_size,
            output=output,
            resume=resume,
            progress=fmt == "text" and sys.stderr.isatty(),
        )
    except (OutputProblem, DaskUnavailable) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    if summary.resumed:
        click.echo(f"resumed: {summary.resumed} plan(s) already in {output}", err=True)
    if fmt == "json":
        lead = f'{{"contract": {json.dumps(contract)}, "plans": [' if first[0] else "\n"
        click.echo(lead + '], "summary": ' + json.dumps(summary.to_json()) + "}")
    else:
        click.echo(summary.text(), nl=False)
    sys.exit(summary.exit_code)
