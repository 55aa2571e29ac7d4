#!/usr/bin/env python3
"""Front-end throughput benchmark: contractsim vs. unified-planning's PDDL reader.

What it measures
----------------
* **contractsim, end to end.** A realistic ``.contract`` file is generated in memory (by default
  1,000 tools, ~18-19 lines each: typed parameters with constraints, two ``require`` clauses with
  codes, interpolated messages and hints, an ``effect`` block with ``if``/``else``, one or two
  outcomes, ``cost``/``tags``/``risk``; plus types, a ``state`` block, predicates, events, a goal).
  The script first verifies that it checks clean (no errors) and then times

  - ``contractsim.api.check_text(text)``  -- parse (lark LALR) + lower to the IR + check,
  - ``contractsim.api.loads(text)``       -- the same front end, plus building the ``Contract``,

  over ``--repeat`` runs after one warm-up run (the warm-up pays for building the lark parser,
  which is cached per process). It reports the best and the median wall time and lines/s
  (physical lines of the generated source). A per-phase split (lark parse / lower / check) is
  reported too, using the internal functions ``api.check_text`` calls.

* **unified-planning (the peer).** ``PDDLReader().parse_problem(domain, problem)`` on the
  blocks-world domain with each ``probBLOCKS-*.pddl`` problem in the shared data directory,
  timed the same way (warm-up, then best / median of ``--repeat`` runs). Throughput is lines/s per
  line of PDDL input (domain lines + problem lines). Because PDDL problem files put many facts on
  one line, bytes/s is printed as well so the comparison can be read both ways.

* **The ratio** contractsim lines/s (``check_text``, median) / unified-planning lines/s (median over
  all problems, total lines / total time). The target from the issue: contractsim >= 20,000 lines/s
  end to end (unified-planning is ~1,000-2,000 lines/s).

* **Literal-heavy contract.** A generated contract whose state holds a literal set of
  ``--literal-pairs`` (default 110,000) string pairs, about 2.5 MB: the shape of a large imported
  PDDL problem. ``check_text`` is timed (best of ``--repeat``) and reported as MB/s; the target is
  1 MB/s.

* **The examples.** Every ``examples/*/*.contract`` through ``check_text``, one after another
  (they are separate contracts, so they cannot be one file); lines/s over all of them, target
  20,000 lines/s.

No network access is needed. The PDDL files are found relative to the repository root
(``<repo>/../shared/data/pddl/blocks``); ``--pddl-dir`` overrides it (either the ``pddl`` directory
holding ``blocks/`` or the ``blocks`` directory itself). If unified-planning is not installed or the
data is missing, the peer is skipped with a message.

Usage::

    python benchmarks/bench_parse.py [--tools 1000] [--literal-pairs 110000] [--repeat 3] [--json]
                                     [--pddl-dir DIR] [--skip-peer]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PDDL_DIR = REPO_ROOT.parent / "shared" / "data" / "pddl"
TARGET_LINES_PER_S = 20_000
TARGET_MB_PER_S = 1.0

if str(REPO_ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO_ROOT))


# --------------------------------------------------------------------------------- the workload

_PRELUDE = [
    'contract inventory_service version "2.3.0"',
    '  "A warehouse inventory API used by ordering agents (generated for benchmarking)."',
    "",
    'type Sku = str pattern r"^[A-Z]{3}-[0-9]{4}$" max_length 16',
    'type Warehouse = enum { main, east, west, "cold-storage" }',
    "type Priority = enum { low, normal, high }",
    'type Email = str format "email"',
    "type Item = record {",
    "  sku: Sku",
    "  name: str min_length 1 max_length 200",
    "  price: float min 0",
    "  qty: int min 0 = 0",
    "  note?: str",
    "}",
    "type ChangeResult = record { ok: bool, remaining: int }",
    "",
    "const MAX_QTY = 1000",
    "",
    "state {",
    "  catalogue: map[Sku, Item] = {}",
    "  stock: map[Sku, int] = {}",
    "  reserved: set[Sku] = {}",
    "  backorders: list[Sku] = []",
    "  audit_log: list[str] = []",
    "  quota: int = 100000",
    "  api_online: bool = true",
    "}",
    "",
    "predicate known(s: Sku) = s in catalogue",
    "predicate in_stock(s: Sku, n: int) = get(stock, s, 0) >= n",
    'event rate_limited "the inventory API throttled the request"',
    'event partial_sync "only some replicas acknowledged the change"',
    "goal restocked = len(backorders) == 0",
    "",
]


def _restock(i: int) -> list[str]:
    return [
        f'tool restock_{i}(sku: Sku, qty: int min 1 max 1000, warehouse: Warehouse = "main", '
        "note?: str max_length 200) -> ChangeResult",
        f'    "Adds qty units of an item to a warehouse (variant {i})."',
        "    cost 1 + qty / 100",
        "    tags [inventory.write, inventory]",
        "    risk idempotent",
        "{",
        '  require known(sku) else UNKNOWN_SKU "sku {sku} is not in the catalogue"',
        '    hint "call add_item(sku={sku}) before restocking"',
        '  require qty <= quota else QUOTA_EXCEEDED "restocking {qty} units exceeds the remaining '
        'quota of {quota}"',
        '    hint "use qty <= {quota}"',
        "  effect {",
        '    if warehouse == "main" { stock[sku] = get(stock, sku, 0) + qty }',
        '    else { stock[sku] = get(stock, sku, 0) + qty; audit_log.append("restock " + sku) }',
        "    quota -= qty",
        "  }",
        "  outcome done success",
        '  outcome throttled fails RATE_LIMITED "the API throttled the call" on rate_limited '
        "probability 0.01",
        "}",
        "",
    ]


def _reserve(i: int) -> list[str]:
    return [
        f'tool reserve_{i}(sku: Sku, qty: int min 1 max 500, priority: Priority = "normal", '
        "requester: Email) -> ChangeResult",
        f'    "Reserves stock for an order (variant {i})."',
        "    cost 2",
        "    tags [inventory.reserve, orders]",
        "    risk destructive, needs_confirmation",
        "{",
        '  require api_online else OFFLINE "the inventory API is offline; {requester} must retry '
        'later"',
        '    hint "wait for api_online before reserving {sku}"',
        '  require in_stock(sku, qty) else OUT_OF_STOCK "only {get(stock, sku, 0)} units of {sku} '
        'left, {qty} requested"',
        '    hint "call restock_0(sku={sku}, qty={qty}) first"',
        "  effect {",
        '    if priority == "high" and sku not in reserved { reserved.add(sku) }',
        "    else { backorders.append(sku) }",
        "    stock[sku] = get(stock, sku, 0) - qty",
        "  }",
        "  outcome reserved_ok success",
        '  outcome partially partial PARTIAL_SYNC "some replicas lag" on partial_sync probability '
        "0.05 { audit_log.append(sku) }",
        "}",
        "",
    ]


def _reprice(i: int) -> list[str]:
    return [
        f"tool update_price_{i}(sku: Sku, price: float min 0 max 100000, reason: str min_length 3 "
        '= "manual") -> record { ok: bool }',
        f'    "Changes the list price of an item (variant {i})."',
        "    cost 1",
        "    tags [catalogue.write]",
        "    risk idempotent",
        "{",
        '  require known(sku) else UNKNOWN_SKU "cannot reprice {sku}: it is not in the catalogue"',
        '    hint "add {sku} to the catalogue first"',
        '  require len(reason) <= 200 else REASON_TOO_LONG "the reason has {len(reason)} '
        'characters; at most 200 are allowed"',
        '    hint "shorten the reason by {len(reason) - 200} characters"',
        "  effect {",
        '    if price > catalogue[sku].price { audit_log.append("price up " + sku) }',
        '    else { audit_log.append("price down " + sku) }',
        "    catalogue[sku].price = price",
        "  }",
        "  outcome repriced success",
        "}",
        "",
    ]


_TOOL_TEMPLATES = (_restock, _reserve, _reprice)


def generate_contract(n_tools: int) -> str:
    """A contract with ``n_tools`` tools, cycling through three realistic tool shapes."""
    lines = list(_PRELUDE)
    for i in range(n_tools):
        lines += _TOOL_TEMPLATES[i % len(_TOOL_TEMPLATES)](i)
    return "\n".join(lines) + "\n"


def count_lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


# ------------------------------------------------------------------------------------- timing


def time_runs(
    fn: Callable[[], Any], repeat: int, warmup: int = 1
) -> tuple[list[float], list[float]]:
    """Wall-clock and process-CPU seconds of ``repeat`` calls of ``fn`` after ``warmup`` untimed
    calls. (CPU time is reported too because it is less disturbed by other load on the machine.)"""
    for _ in range(warmup):
        fn()
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return wall, cpu


def summarize(runs: tuple[list[float], list[float]], lines: int, nbytes: int) -> dict[str, Any]:
    times, cpu = runs
    best, median = min(times), statistics.median(times)
    return {
        "runs": len(times),
        "best_s": best,
        "median_s": median,
        "cpu_best_s": min(cpu),
        "cpu_median_s": statistics.median(cpu),
        "lines": lines,
        "bytes": nbytes,
        "lines_per_s_best": lines / best,
        "lines_per_s_median": lines / median,
        "kb_per_s_median": nbytes / 1024 / median,
    }


# ------------------------------------------------------------------------------------ contractsim


def bench_contractsim(n_tools: int, repeat: int) -> dict[str, Any]:
    from contractsim.api import check_text, loads

    text = generate_contract(n_tools)
    lines, nbytes = count_lines(text), len(text.encode("utf-8"))

    diags = check_text(text, "bench.contract")  # also the warm-up for the lark parser
    errors = [d for d in diags if d.severity == "error"]
    if errors:
        first = errors[0]
        raise SystemExit(
            f"generated contract does not check clean: {len(errors)} errors, first: "
            f"{first.code} {first.message} at {first.span}"
        )
    warnings = len(diags) - len(errors)

    result: dict[str, Any] = {
        "tools": n_tools,
        "lines": lines,
        "bytes": nbytes,
        "warnings": warnings,
        "check_text": summarize(
            time_runs(lambda: check_text(text, "bench.contract"), repeat), lines, nbytes
        ),
        "loads": summarize(time_runs(lambda: loads(text, "bench.contract"), repeat), lines, nbytes),
    }
    result["phases"] = _phase_split(text, repeat)
    result["gc"] = _gc_share(text, repeat)
    return result


def _phase_split(text: str, repeat: int) -> dict[str, float] | None:
    """Median seconds of each front-end phase, using the functions api.check_text calls.

    Internal API: if it moves, the split is skipped rather than failing the benchmark."""
    try:
        from contractsim.compiler.checks import COMPILER_CHECKS
        from contractsim.dsl.check import check_contract
        from contractsim.dsl.lower import lower
        from contractsim.grammar.parse import parse
    except ImportError:
        return None
    parse_t, lower_t, check_t = [], [], []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        tree = parse(text, "bench.contract")
        t1 = time.perf_counter()
        contract, _ = lower(tree, "bench.contract")
        t2 = time.perf_counter()
        check_contract(contract, COMPILER_CHECKS)
        t3 = time.perf_counter()
        parse_t.append(t1 - t0)
        lower_t.append(t2 - t1)
        check_t.append(t3 - t2)
    return {
        "parse_s": statistics.median(parse_t),
        "lower_s": statistics.median(lower_t),
        "check_s": statistics.median(check_t),
    }


def _gc_share(text: str, repeat: int) -> dict[str, Any]:
    """Time the cyclic garbage collector spends inside ``check_text`` calls (median of
    ``repeat`` runs). Full (generation 2) collections traverse every live object, so their cost
    grows with the size of the parse tree and IR and varies with the process's history."""
    from contractsim.api import check_text

    started = [0.0]
    spent: dict[int, list[float]] = {}

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            entry = spent.setdefault(info["generation"], [0, 0.0])
            entry[0] += 1
            entry[1] += time.perf_counter() - started[0]

    totals, gc_times, full = [], [], []
    gc.callbacks.append(on_gc)
    try:
        for _ in range(repeat):
            gc.collect()
            spent.clear()
            t0 = time.perf_counter()
            check_text(text, "bench.contract")
            totals.append(time.perf_counter() - t0)
            gc_times.append(sum(v[1] for v in spent.values()))
            full.append(int(spent.get(2, [0, 0.0])[0]))
    finally:
        gc.callbacks.remove(on_gc)
    return {
        "check_text_s": statistics.median(totals),
        "gc_s": statistics.median(gc_times),
        "gc_max_s": max(gc_times),
        "full_collections": statistics.median(full),
    }


# ------------------------------------------------------------------ literal-heavy and examples


def phase_split(texts: list[tuple[str, str]], repeat: int) -> dict[str, float] | None:
    """CPU seconds of each front-end phase over all ``texts`` (best of ``repeat`` runs after one
    warm-up, each phase's best on its own), with the cyclic garbage collector off as
    ``api.check_text`` has it: ``parse`` (text to lark tree), ``lower`` (tree to IR) and
    ``check`` (the checks ``check_text`` runs).

    Internal API: if it moves, the split is skipped rather than failing the benchmark."""
    try:
        from contractsim.compiler.checks import COMPILER_CHECKS
        from contractsim.dsl.check import check_contract
        from contractsim.dsl.lower import lower
        from contractsim.grammar.parse import parse
    except ImportError:
        return None
    best = {"parse_s": float("inf"), "lower_s": float("inf"), "check_s": float("inf")}
    for run in range(repeat + 1):
        spent = dict.fromkeys(best, 0.0)
        gc.collect()
        gc.disable()
        try:
            for name, text in texts:
                c0 = time.process_time()
                tree = parse(text, name)
                c1 = time.process_time()
                contract, _ = lower(tree, name)
                c2 = time.process_time()
                check_contract(contract, COMPILER_CHECKS)
                c3 = time.process_time()
                spent["parse_s"] += c1 - c0
                spent["lower_s"] += c2 - c1
                spent["check_s"] += c3 - c2
        finally:
            gc.enable()
        if run:  # the first run is the warm-up
            best = {k: min(v, spent[k]) for k, v in best.items()}
    return best


def generate_literal_contract(pairs: int) -> str:
    """A contract whose state holds a literal set of ``pairs`` string pairs."""
    body = ", ".join(f'("node{i}", "node{(i * 7919) % pairs}")' for i in range(pairs))
    return (
        'contract big_literal version "1.0.0"\n'
        '  "A state with one large literal (generated for benchmarking)."\n\n'
        f"state {{\n  edges: set[tuple[str, str]] = {{{body}}}\n  visits: int = 0\n}}\n\n"
        "tool visit(a: str, b: str) -> record { ok: bool }\n{\n"
        '  require (a, b) in edges else NO_EDGE "no edge from {a} to {b}"\n'
        "  effect visits += 1\n}\n"
    )


def bench_literal(pairs: int, repeat: int) -> dict[str, Any]:
    from contractsim.api import check_text

    text = generate_literal_contract(pairs)
    diags = check_text(text, "literal.contract")
    errors = [d for d in diags if d.severity == "error"]
    if errors:
        raise SystemExit(f"the literal contract does not check clean: {errors[0]}")
    lines, nbytes = count_lines(text), len(text.encode("utf-8"))
    wall, cpu = time_runs(lambda: check_text(text, "literal.contract"), repeat, warmup=0)
    return {
        "pairs": pairs,
        "bytes": nbytes,
        "lines": lines,
        "best_s": min(wall),
        "cpu_best_s": min(cpu),
        "mb_per_s": nbytes / 1e6 / min(cpu),
        "phases": phase_split([("literal.contract", text)], repeat),
    }


EXAMPLE_RUNS_AT_LEAST = 10
"""The examples take about a tenth of a second per run: the best of ten such runs stands for
the undisturbed cost on a shared machine far better than the best of three (as in ``timeit``)."""


def bench_examples(repeat: int) -> dict[str, Any]:
    from contractsim.api import check_text

    repeat = max(repeat, EXAMPLE_RUNS_AT_LEAST)

    files = sorted((REPO_ROOT / "examples").glob("*/*.contract"))
    texts = [(str(p), p.read_text("utf-8")) for p in files]

    def run() -> None:
        for name, text in texts:
            check_text(text, name)

    wall, cpu = time_runs(run, repeat)
    lines = sum(count_lines(t) for _, t in texts)
    return {
        "files": len(texts),
        "runs": repeat,
        "lines": lines,
        "bytes": sum(len(t.encode("utf-8")) for _, t in texts),
        "best_s": min(wall),
        "cpu_best_s": min(cpu),
        "lines_per_s": lines / min(cpu),
        "phases": phase_split(texts, repeat),
        "alternated_with_lark": alternated_with_lark(texts, run, repeat),
    }


def alternated_with_lark(
    texts: list[tuple[str, str]], run: Callable[[], None], repeat: int
) -> dict[str, float] | None:
    """The whole front end against lark's own LALR parser (its contextual lexer and parser,
    building the same tree, nothing more) on the same texts, the two alternated run by run so
    that both meet the same load: the shared machine's speed changes by up to 2x from one minute
    to the next, and the ratio of the two best CPU times is what stays.

    Internal API (the stored lark parser): if it moves, the comparison is skipped."""
    try:
        from contractsim.grammar.parse import parser
    except ImportError:
        return None
    lark_parser = parser()

    def lark_run() -> None:
        for _, text in texts:
            lark_parser.parse(text, start="start")

    ours, theirs = float("inf"), float("inf")
    run()
    lark_run()
    was_enabled = gc.isenabled()
    gc.disable()  # as check_text has it, for both
    try:
        for _ in range(repeat):
            for fn, is_ours in ((run, True), (lark_run, False)):
                gc.collect()
                c0 = time.process_time()
                fn()
                spent = time.process_time() - c0
                if is_ours:
                    ours = min(ours, spent)
                else:
                    theirs = min(theirs, spent)
    finally:
        if was_enabled:
            gc.enable()
    return {"front_end_s": ours, "lark_parse_s": theirs, "ratio": ours / theirs}


# ------------------------------------------------------------------------------ unified-planning


def find_blocks_dir(pddl_dir: Path) -> Path | None:
    for candidate in (pddl_dir / "blocks", pddl_dir):
        if (candidate / "domain.pddl").is_file():
            return candidate
    return None


def _problem_key(path: Path) -> tuple[int, str]:
    parts = path.stem.split("-")  # probBLOCKS-4-0
    try:
        return int(parts[1]), path.name
    except (IndexError, ValueError):
        return 10**9, path.name


def bench_unified_planning(pddl_dir: Path, repeat: int) -> dict[str, Any]:
    try:
        import unified_planning  # noqa: F401
        from unified_planning.io import PDDLReader
    except ImportError as exc:
        return {"skipped": f"unified-planning is not installed ({exc})"}
    blocks = find_blocks_dir(pddl_dir)
    if blocks is None:
        return {"skipped": f"no blocks/domain.pddl under {pddl_dir} (use --pddl-dir)"}
    domain = blocks / "domain.pddl"
    problems = sorted(blocks.glob("probBLOCKS-*.pddl"), key=_problem_key)
    if not problems:
        return {"skipped": f"no probBLOCKS-*.pddl files in {blocks}"}

    try:
        import unified_planning.shortcuts as _sc  # quiet the credits banner, if any

        _sc.get_environment().credits_stream = None
    except Exception:  # pragma: no cover - cosmetic only
        pass

    domain_text = domain.read_text("utf-8")
    rows: list[dict[str, Any]] = []
    total_lines = total_bytes = 0
    total_median = 0.0
    for prob in problems:
        prob_text = prob.read_text("utf-8")
        lines = count_lines(domain_text) + count_lines(prob_text)
        nbytes = len(domain_text.encode("utf-8")) + len(prob_text.encode("utf-8"))

        def run(prob: Path = prob) -> None:
            PDDLReader().parse_problem(str(domain), str(prob))

        row = summarize(time_runs(run, repeat), lines, nbytes)
        row["problem"] = prob.name
        rows.append(row)
        total_lines += lines
        total_bytes += nbytes
        total_median += row["median_s"]
    return {
        "version": getattr(unified_planning, "__version__", "?"),
        "dir": str(blocks),
        "problems": rows,
        "lines": total_lines,
        "bytes": total_bytes,
        "median_total_s": total_median,
        "lines_per_s_median": total_lines / total_median,
        "kb_per_s_median": total_bytes / 1024 / total_median,
    }


# ---------------------------------------------------------------------------------------- output


def print_report(cs: dict[str, Any], up: dict[str, Any], ratio: float | None) -> None:
    print(
        f"contractsim: generated contract, {cs['tools']} tools, {cs['lines']:,} lines, "
        f"{cs['bytes'] / 1024:,.0f} KiB, {cs['warnings']} warnings, 0 errors"
    )
    header = (
        f"{'benchmark':<34} {'lines':>7} {'best s':>9} {'median s':>9} {'lines/s':>10} {'KiB/s':>8}"
    )
    print()
    print(header)
    print("-" * len(header))
    for label, key in (("contractsim check_text", "check_text"), ("contractsim loads", "loads")):
        r = cs[key]
        print(
            f"{label:<34} {r['lines']:>7,} {r['best_s']:>9.4f} {r['median_s']:>9.4f} "
            f"{r['lines_per_s_median']:>10,.0f} {r['kb_per_s_median']:>8,.0f}"
        )
    if "skipped" in up:
        print(f"{'unified-planning':<34} skipped: {up['skipped']}")
    else:
        for r in up["problems"]:
            label = f"UP PDDLReader {r['problem'].removesuffix('.pddl')}"
            print(
                f"{label:<34} {r['lines']:>7,} {r['best_s']:>9.4f} {r['median_s']:>9.4f} "
                f"{r['lines_per_s_median']:>10,.0f} {r['kb_per_s_median']:>8,.0f}"
            )
        print(
            f"{'UP PDDLReader (all problems)':<34} {up['lines']:>7,} {'':>9} "
            f"{up['median_total_s']:>9.4f} {up['lines_per_s_median']:>10,.0f} "
            f"{up['kb_per_s_median']:>8,.0f}"
        )
    print("(lines/s and KiB/s use the median run)")

    phases = cs.get("phases")
    if phases:
        total = sum(phases.values())
        print()
        print(
            "contractsim phases (median): "
            + ", ".join(
                f"{name.removesuffix('_s')} {secs:.3f}s ({100 * secs / total:.0f}%)"
                for name, secs in phases.items()
            )
            + "  [each phase timed on its own; GC cost lands wherever a collection fires]"
        )
    gcs = cs.get("gc")
    if gcs:
        print(
            f"garbage collector inside check_text (median): {gcs['gc_s']:.3f}s of "
            f"{gcs['check_text_s']:.3f}s ({100 * gcs['gc_s'] / gcs['check_text_s']:.0f}%), "
            f"{gcs['full_collections']:g} full collections; worst run {gcs['gc_max_s']:.3f}s"
        )

    print_targets(cs)

    cs_rate = cs["check_text"]["lines_per_s_median"]
    print()
    verdict = "meets" if cs_rate >= TARGET_LINES_PER_S else "MISSES"
    print(
        f"contractsim end to end: {cs_rate:,.0f} lines/s ({verdict} the "
        f"{TARGET_LINES_PER_S:,} lines/s target)"
    )
    if ratio is not None:
        print(f"ratio contractsim / unified-planning (lines/s): {ratio:.2f}x")
        byte_ratio = cs["check_text"]["kb_per_s_median"] / up["kb_per_s_median"]
        print(f"ratio contractsim / unified-planning (bytes/s): {byte_ratio:.2f}x")


def _verdict(rate: float, target: float) -> str:
    return "meets" if rate >= target else "MISSES"


def print_targets(cs: dict[str, Any]) -> None:
    """The issue's two front-end targets, each phase on its own and in total (CPU time)."""
    lit, ex = cs.get("literal"), cs.get("examples")
    if not lit and not ex:
        return
    print()
    print("front end by phase (CPU s, best of the runs, garbage collector off as in check_text):")
    if ex:
        print(
            f"  the {ex['files']} examples ({ex['lines']:,} lines): check_text "
            f"{ex['cpu_best_s']:.3f} s (best of {ex['runs']}) = {ex['lines_per_s']:,.0f} lines/s "
            f"({_verdict(ex['lines_per_s'], TARGET_LINES_PER_S)} {TARGET_LINES_PER_S:,} lines/s)"
        )
        versus = ex.get("alternated_with_lark")
        if versus:
            print(
                f"    alternated run by run with lark's own LALR parser on the same texts: "
                f"parse + lower + check {versus['front_end_s']:.3f} s, lark's parse alone "
                f"{versus['lark_parse_s']:.3f} s: the front end takes {versus['ratio']:.2f}x "
                "lark's parse"
            )
        phases = ex.get("phases")
        if phases:
            for name, secs in phases.items():
                rate = ex["lines"] / secs
                print(f"    {name.removesuffix('_s'):<6} {secs:8.3f} s  {rate:>10,.0f} lines/s")
            total = sum(phases.values())
            rate = ex["lines"] / total
            parse_rate = ex["lines"] / phases["parse_s"]
            print(
                f"    parse alone {parse_rate:,.0f} lines/s "
                f"({_verdict(parse_rate, TARGET_LINES_PER_S)} {TARGET_LINES_PER_S:,}); "
                f"parse + lower + check {total:.3f} s = {rate:,.0f} lines/s "
                f"({_verdict(rate, TARGET_LINES_PER_S)} {TARGET_LINES_PER_S:,})"
            )
    if lit:
        mb = lit["bytes"] / 1e6
        print(
            f"  literal-heavy contract ({lit['pairs']:,} pairs, {mb:.2f} MB): check_text "
            f"{lit['cpu_best_s']:.2f} s = {lit['mb_per_s']:.2f} MB/s "
            f"({_verdict(lit['mb_per_s'], TARGET_MB_PER_S)} {TARGET_MB_PER_S:g} MB/s)"
        )
        phases = lit.get("phases")
        if phases:
            for name, secs in phases.items():
                print(f"    {name.removesuffix('_s'):<6} {secs:8.3f} s  {mb / secs:>10.2f} MB/s")
            total = sum(phases.values())
            parse_rate = mb / phases["parse_s"]
            print(
                f"    parse alone {parse_rate:.2f} MB/s "
                f"({_verdict(parse_rate, TARGET_MB_PER_S)} {TARGET_MB_PER_S:g}); "
                f"parse + lower + check {total:.2f} s = {mb / total:.2f} MB/s "
                f"({_verdict(mb / total, TARGET_MB_PER_S)} {TARGET_MB_PER_S:g})"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tools", type=int, default=1000, help="tools in the generated contract")
    ap.add_argument(
        "--repeat", type=int, default=3, help="timed runs per benchmark (after 1 warm-up)"
    )
    ap.add_argument(
        "--literal-pairs",
        type=int,
        default=110_000,
        help="pairs in the literal-heavy contract (0: skip it)",
    )
    ap.add_argument("--json", action="store_true", help="print machine-readable JSON only")
    ap.add_argument(
        "--pddl-dir",
        type=Path,
        default=DEFAULT_PDDL_DIR,
        help=f"directory holding blocks/domain.pddl (default: {DEFAULT_PDDL_DIR})",
    )
    ap.add_argument("--skip-peer", action="store_true", help="do not run unified-planning")
    ap.add_argument(
        "--front-end-only",
        action="store_true",
        help="only the issue's two front-end targets: the examples and the literal-heavy "
        "contract, phase by phase (no generated contract, no peer)",
    )
    args = ap.parse_args(argv)
    if args.tools < 1 or args.repeat < 1:
        ap.error("--tools and --repeat must be at least 1")

    if args.front_end_only:
        cs: dict[str, Any] = {"examples": bench_examples(args.repeat)}
        if args.literal_pairs > 0:
            cs["literal"] = bench_literal(args.literal_pairs, args.repeat)
        if args.json:
            json.dump({"python": sys.version.split()[0], "contractsim": cs}, sys.stdout, indent=2)
            print()
        else:
            print_targets(cs)
        return 0
    cs = bench_contractsim(args.tools, args.repeat)
    cs["examples"] = bench_examples(args.repeat)
    if args.literal_pairs > 0:
        cs["literal"] = bench_literal(args.literal_pairs, args.repeat)
    up = (
        {"skipped": "--skip-peer"}
        if args.skip_peer
        else bench_unified_planning(args.pddl_dir, args.repeat)
    )
    ratio = None
    if "skipped" not in up:
        ratio = cs["check_text"]["lines_per_s_median"] / up["lines_per_s_median"]

    if args.json:
        json.dump(
            {
                "python": sys.version.split()[0],
                "target_lines_per_s": TARGET_LINES_PER_S,
                "contractsim": cs,
                "unified_planning": up,
                "ratio_lines_per_s": ratio,
                "meets_target": cs["check_text"]["lines_per_s_median"] >= TARGET_LINES_PER_S,
            },
            sys.stdout,
            indent=2,
        )
        print()
    else:
        print_report(cs, up, ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
