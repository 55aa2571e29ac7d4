"""The import graph is the architecture: every edge goes down the layer table, and no cycles.

Each module of ``contractsim`` is parsed (not imported) and every ``import`` / ``from … import``
is read, also the ones inside functions. An import is allowed when its target is in the same
package (``contractsim.dsl.check`` → ``contractsim.dsl.ir``) or in a lower layer of ``LAYERS``.
An import under ``if TYPE_CHECKING:`` may also name the façade (``contractsim.api``, the top
package), so a stage can annotate with ``Contract`` without importing it at run time.
A failure names the file and line of each offending import, and where it goes from and to;
see docs/architecture.md, "Layers".
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "contractsim"

# Bottom to top. A module may import from its own group or a group below; the groups of one layer
# (one tuple) may not import each other (``SIDEWAYS_ALLOWED`` lists the exceptions).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("contractsim._record_methods",),  # generated code only (contractsim/record_store.py)
    ("contractsim.records",),
    ("contractsim.diagnostics",),
    ("contractsim.sources",),
    ("contractsim.grammar",),
    ("contractsim.dsl",),
    ("contractsim.compiler",),
    ("contractsim.simulator",),
    (
        "contractsim.runtime",
        "contractsim.replay",
        "contractsim.export",
        "contractsim.render",
        "contractsim.pddl",
        "contractsim.learning",
        "contractsim.planning",
        "contractsim.diffing",
        "contractsim.importers",
        "contractsim.integrations",
        "contractsim.scale",
    ),
    ("contractsim.api", "contractsim"),  # the top package's __init__ is the façade's lazy alias
    ("contractsim.cli", "contractsim.__main__", "contractsim.record_store"),
)

# (from group, to group) pairs of one layer that may import each other, each with its reason.
SIDEWAYS_ALLOWED: dict[tuple[str, str], str] = {
    ("contractsim", "contractsim.api"): "the package's lazy names load the façade",
    ("contractsim.learning", "contractsim.replay"): (
        "the trace format is replay's: learning reads runs with replay's reader and clusters "
        "failure messages with replay's mask"
    ),
    ("contractsim.integrations", "contractsim.runtime"): (
        "an integration puts a framework's tools behind the runtime guard: the guard is what it "
        "adapts"
    ),
    ("contractsim.scale", "contractsim.replay"): (
        "replay at scale runs replay's own loop and trace reader in each worker and merges "
        "replay's results: one replay, not a second copy of it"
    ),
}

# Upward imports allowed by name, each inside a function (never at module level), with its reason.
# The test below fails when an entry is no longer needed.
UPWARD_ALLOWED: dict[tuple[str, str], str] = {
    ("contractsim.simulator.engine", "contractsim.planning"): (
        "Simulator.plan and Simulator.repair are the planning entry points issue 18 names; they "
        "import the planner inside the method, so the simulator never needs it to load"
    ),
}

# What the façade may be imported as under TYPE_CHECKING, from any layer.
FACADE = ("contractsim.api", "contractsim")

# Cycles known and accepted for now, each with its reason; the test fails when an entry is no
# longer a cycle, so it cannot go stale. None today.
PENDING_CYCLES: list[frozenset[str]] = []


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    file: str
    line: int
    type_checking: bool

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.source} -> {self.target}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULE_FILES = {module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, type_checking: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(node):
        inside = type_checking
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield stmt, True
                yield from _walk(stmt, True)
            for stmt in child.orelse:
                yield stmt, type_checking
                yield from _walk(stmt, type_checking)
            continue
        yield child, inside
        yield from _walk(child, inside)


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(module: str) -> list[Edge]:
    path = MODULE_FILES[module]
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    rel = str(path.relative_to(PACKAGE_DIR.parent))
    edges = []
    seen: set[tuple[int, str]] = set()
    for node, type_checking in _walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in MODULE_FILES else base)
        for target in targets:
            line: int = node.lineno  # type: ignore[attr-defined]
            if (line, target) in seen:
                continue
            seen.add((line, target))
            if target == "contractsim" or target.startswith("contractsim."):
                edges.append(Edge(module, target, rel, line, type_checking))
    return edges


ALL_EDGES = [edge for module in MODULE_FILES for edge in imports_of(module)]


def group_of(module: str) -> tuple[int, str]:
    """The layer index and the group (the longest matching prefix) a module belongs to."""
    best: tuple[int, str] | None = None
    for index, layer in enumerate(LAYERS):
        for group in layer:
            if (module == group or module.startswith(group + ".")) and (
                best is None or len(group) > len(best[1])
            ):
                best = (index, group)
    assert best is not None, f"{module} is in no layer of LAYERS: add its package to the table"
    return best


def violation(edge: Edge) -> str | None:
    """Why an import edge breaks the layering, or None if it is allowed."""
    (source_layer, source_group), (target_layer, target_group) = (
        group_of(edge.source),
        group_of(edge.target),
    )
    if source_group == target_group or target_layer < source_layer:
        return None
    if edge.type_checking and target_group in FACADE:
        return None
    if target_layer == source_layer:
        if (source_group, target_group) in SIDEWAYS_ALLOWED:
            return None
        return "sideways"
    if (edge.source, target_group) in UPWARD_ALLOWED and _inside_function(edge):
        return None
    return "upward"


def _inside_function(edge: Edge) -> bool:
    """Whether the import at ``edge`` sits inside a function body."""
    tree = ast.parse(MODULE_FILES[edge.source].read_text(encoding="utf-8"))
    return any(
        isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        and fn.lineno < edge.line <= (fn.end_lineno or fn.lineno)
        for fn in ast.walk(tree)
    )


def test_every_upward_exception_is_still_needed() -> None:
    used = {
        (edge.source, group_of(edge.target)[1])
        for edge in ALL_EDGES
        if group_of(edge.target)[0] > group_of(edge.source)[0]
    }
    stale = sorted(set(UPWARD_ALLOWED) - used)
    assert not stale, f"UPWARD_ALLOWED entries no import needs any more: {stale}"


def test_every_module_is_in_a_layer() -> None:
    for module in MODULE_FILES:
        group_of(module)


def test_imports_go_down_the_layers() -> None:
    bad = [f"{edge} ({why})" for edge in ALL_EDGES if (why := violation(edge))]
    assert not bad, "imports against the layer table (docs/architecture.md):\n" + "\n".join(bad)


def find_cycles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULE_FILES}
    for edge in edges:
        if edge.target in graph and edge.target != edge.source:
            graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_no_import_cycles() -> None:
    # Imports under TYPE_CHECKING never run, so they cannot close a cycle.
    runtime_edges = [edge for edge in ALL_EDGES if not edge.type_checking]
    cycles = find_cycles(runtime_edges)
    stale = [sorted(p) for p in PENDING_CYCLES if sorted(p) not in cycles]
    assert not stale, f"no longer cycles, delete them from PENDING_CYCLES: {stale}"
    cycles = [c for c in cycles if frozenset(c) not in PENDING_CYCLES]
    described = []
    for component in cycles:
        inside = [str(e) for e in runtime_edges if e.source in component and e.target in component]
        described.append(" <-> ".join(component) + "\n  " + "\n  ".join(inside))
    assert not cycles, "import cycles:\n" + "\n".join(described)


# The checker checks itself: each rule is proven to catch the edge it is for.
@pytest.mark.parametrize(
    ("source", "target", "type_checking", "expected"),
    [
        ("contractsim.dsl.check", "contractsim.compiler.validators", False, "upward"),
        ("contractsim.simulator.inputs", "contractsim.api", False, "upward"),
        ("contractsim.replay.traces", "contractsim.api", True, None),
        ("contractsim.replay.traces", "contractsim.runtime.guard", True, "sideways"),
        ("contractsim.render.views", "contractsim.pddl.read", False, "sideways"),
        ("contractsim.dsl.check", "contractsim.dsl.ir", False, None),
        ("contractsim.compiler.compile", "contractsim.dsl.ir", False, None),
        ("contractsim.sources", "contractsim.diagnostics", False, None),
        ("contractsim.diagnostics", "contractsim.sources", False, "upward"),
        ("contractsim.api", "contractsim.cli", False, "upward"),
    ],
)
def test_violation_rules(
    source: str, target: str, type_checking: bool, expected: str | None
) -> None:
    assert violation(Edge(source, target, "x.py", 1, type_checking)) == expected


def test_cycle_finder_names_the_cycle() -> None:
    edges = [
        Edge("contractsim.compiler.compile", "contractsim.compiler.codegen", "a.py", 1, False),
        Edge("contractsim.compiler.codegen", "contractsim.compiler.compile", "b.py", 2, False),
    ]
    assert find_cycles(edges) == [["contractsim.compiler.codegen", "contractsim.compiler.compile"]]


def test_function_level_and_type_checking_imports_are_read() -> None:
    tree_edges = {(e.target, e.type_checking) for e in imports_of("contractsim")}
    assert ("contractsim.api", True) in tree_edges  # contractsim/__init__.py under TYPE_CHECKING
