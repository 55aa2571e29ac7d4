"""`contractsim render` and contractsim.render: views of every example as SVG, golden DOT, label
escaping in DOT and Mermaid, plan overlays, the CLI, determinism.

Set CONTRACTSIM_UPDATE_GOLDEN=1 to rewrite tests/golden/render/*.dot."""

from __future__ import annotations

import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import graphviz
import pytest
from click.testing import CliRunner
from conftest import REVIEW_CONTRACT

import contractsim
from contractsim.cli import main
from contractsim.render import RenderError
from contractsim.render.deps import dependencies
from contractsim.render.mermaid import escape as mermaid_escape
from contractsim.render.mermaid import node_id
from contractsim.simulator.explore import PlanReport

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*/*.contract"))
GOLDEN = ROOT / "tests" / "golden" / "render"
UPDATE = os.environ.get("CONTRACTSIM_UPDATE_GOLDEN") == "1"
NOW = "2024-06-01T12:00:00Z"
SVG = "{http://www.w3.org/2000/svg}"
HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz `dot` is not installed")

SESSION = ROOT / "examples" / "session_protocol" / "session_protocol.contract"
FILE_SYSTEM = ROOT / "examples" / "file_system" / "file_system.contract"

ESCAPES = r"""contract esc version "1.0.0"
  "Quotes \" braces {x} <b>bold</b> pipes | back\\slash and\na newline"

type Mode = enum { "a|b", "<c>", "{d}", "e\"f", "g\\h" }

state {
  mode: Mode = "a|b"
}

machine m "machine \"desc\" {with} <tags> | pipes\\" {
  states s1, s2
  initial s1
  final s1
  s1 -> s2 on go when mode == "<c>" or mode == "e\"f"
  s2 -> s1 on stop when mode != "g\\h"
}

tool go(m: Mode) "go \"tool\" <x> {y} | z\\w\nline2" {
  effect mode = m
}

tool stop() "stop <here>" {
  outcome done success "ok"
}

tool probe(m: Mode) {
  require m != "{d}" else BAD_MODE "is \"bad\" <x> {{y}} | \\ \n next"
}
"""


def _views(c: contractsim.api.Contract) -> list[tuple[str, str | None]]:
    views: list[tuple[str, str | None]] = [("machine", m.name) for m in c.ir.machines]
    views += [("tool", t.name) for t in c.ir.tools]
    return [*views, ("overview", None)]


def _expected_ids(c: contractsim.api.Contract, view: str, name: str | None) -> set[str]:
    if view == "machine":
        m = next(x for x in c.ir.machines if x.name == name)
        return {"start"} | {f"state.{s.name}" for s in m.states}
    if view == "overview":
        return {f"tool.{t.name}" for t in c.ir.tools}
    tool = c.ir.tool(name or "")
    assert tool is not None
    ids = {"start", "call"}
    if tool.flow is None:
        ids |= {f"outcome.{o.name}" for o in tool.outcomes} or {"outcome.ok"}
    else:
        ids |= {f"step.{s.name}" for s in tool.flow.steps}
        ids |= {f"outcome.{t.target}" for t in tool.flow.transitions if t.to_outcome}
    if any(cond.strength == "require" for cond in tool.conditions):
        ids.add("rejected")
    return ids


def _svg_nodes(svg: str) -> dict[str, str]:
    """Node title → the node's text, from Graphviz SVG."""
    root = ET.fromstring(svg)
    out: dict[str, str] = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") != "node":
            continue
        title = g.find(f"{SVG}title")
        assert title is not None and title.text is not None
        out[title.text] = "\n".join(t.text or "" for t in g.iter(f"{SVG}text"))
    return out


def _svg_text(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


# ------------------------------------------------------------------------------------ every example


@needs_dot
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_every_view_of_every_example_renders_as_svg(path: Path) -> None:
    c = contractsim.load(path)
    for view, name in _views(c):
        svg = c.render(view, name, "svg")
        assert isinstance(svg, str)
        nodes = _svg_nodes(svg)
        assert _expected_ids(c, view, name) <= set(nodes), (view, name, sorted(nodes))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_every_view_renders_as_mermaid(path: Path) -> None:
    c = contractsim.load(path)
    for view, name in _views(c):
        text = c.render(view, name, "mermaid")
        assert isinstance(text, str)
        direction = "LR" if view != "tool" else "TB"
        assert f"\nflowchart {direction}\n" in text
        for node in _expected_ids(c, view, name):
            assert f"  {node.replace('.', '_')}" in text, (view, name, node)


@needs_dot
def test_node_labels_in_svg() -> None:
    c = contractsim.load(ROOT / "examples" / "data_enricher" / "data_enricher.contract")
    nodes = _svg_nodes(str(c.render("tool", "enrich_events", "svg")))
    assert nodes["step.geo_timed_out"] == "geo_timed_out\nwarn GEO_LOOKUP_TIMEOUT"
    assert nodes["outcome.truncated"] == "truncated\npartial RECORDS_DROPPED"
    assert nodes["rejected"] == "rejected\nTEST_EVENT_REJECTED,\nINVALID_TIMESTAMP"
    session = contractsim.load(SESSION)
    machine = _svg_nodes(str(session.render(format="svg")))
    assert machine["state.closed"] == "closed"


# --------------------------------------------------------------------------------------- golden DOT

GOLDEN_CASES = [
    ("session_protocol", "machine", "session"),
    ("session_protocol", "overview", None),
    ("data_enricher", "tool", "enrich_events"),
    ("data_enricher", "overview", None),
]


@pytest.mark.parametrize(
    ("example", "view", "name"), GOLDEN_CASES, ids=[f"{e}-{v}" for e, v, _ in GOLDEN_CASES]
)
def test_golden_dot(example: str, view: str, name: str | None) -> None:
    c = contractsim.load(ROOT / "examples" / example / f"{example}.contract")
    got = c.render(view, name, "dot")
    assert isinstance(got, str)
    path = GOLDEN / f"{example}-{view}.dot"
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(got, "utf-8")
        return
    assert path.exists(), f"{path} is missing; run with CONTRACTSIM_UPDATE_GOLDEN=1"
    assert got == path.read_text("utf-8")


def test_renders_are_deterministic() -> None:
    for path in EXAMPLES:
        a, b = contractsim.load(path), contractsim.load(path)
        for view, name in _views(a):
            for fmt in ("dot", "mermaid"):
                assert a.render(view, name, fmt) == b.render(view, name, fmt)


# ----------------------------------------------------------------------------------------- escaping


@pytest.fixture
def esc() -> contractsim.api.Contract:
    return contractsim.loads(ESCAPES, "esc.contract")


def _probe_report(c: contractsim.api.Contract) -> PlanReport:
    return c.simulator(now=NOW).run([{"tool": "probe", "args": {"m": "{d}"}}])


def test_dot_escapes_labels(esc: contractsim.api.Contract) -> None:
    dot = esc.render(format="dot")
    assert isinstance(dot, str)
    assert r'label="go\n[when mode == \"<c>\" or mode ==\n\"e\\\"f\"]"' in dot
    assert r'label="stop\n[when mode != \"g\\\\h\"]"' in dot
    assert r'machine \"desc\" {with} <tags> | pipes\\"' in dot
    flow = esc.render("tool", "go", "dot")
    assert isinstance(flow, str)
    assert r"go \"tool\" <x> {y} | z\\w\nline2" in flow


def test_mermaid_escapes_labels(esc: contractsim.api.Contract) -> None:
    text = esc.render(format="mermaid")
    assert isinstance(text, str)
    assert (
        '-->|"go<br>#91;when mode == #quot;#lt;c#gt;#quot; or mode ==<br>'
        '#quot;e#92;#quot;f#quot;#93;"|' in text
    )
    assert '-->|"stop<br>#91;when mode != #quot;g#92;#92;h#quot;#93;"|' in text
    flow = esc.render("tool", "go", "mermaid")
    assert 'title: "esc 1.0.0 — tool go — go \\"tool\\" <x> {y} | z\\\\w — line2"' in str(flow)
    overview = esc.render("overview", format="mermaid", plan_report=_probe_report(esc))
    assert (
        '>"✗ step 1: probe<br>BAD_MODE<br>'
        'is #quot;bad#quot; #lt;x#gt; #123;y#125; #124; #92;<br> next"]' in str(overview)
    )
    assert mermaid_escape('a"b<c>d|e{f}g#h&i`j\\k') == (
        "a#quot;b#lt;c#gt;d#124;e#123;f#125;g#35;h#amp;i#96;j#92;k"
    )


@needs_dot
def test_dot_with_special_characters_is_accepted_by_graphviz(esc: contractsim.api.Contract) -> None:
    texts = _svg_text(str(esc.render(format="svg")))
    assert '[when mode == "<c>" or mode ==' in texts
    assert '"e\\"f"]' in texts
    assert '[when mode != "g\\\\h"]' in texts
    assert 'machine "desc" {with} <tags> | pipes\\' in texts
    texts = _svg_text(str(esc.render("tool", "go", "svg")))
    assert 'go "tool" <x> {y} | z\\w' in texts and "line2" in texts
    report = _probe_report(esc)
    texts = _svg_text(str(esc.render("overview", format="svg", plan_report=report)))
    assert 'is "bad" <x> {y} | \\' in texts and any(t.strip() == "next" for t in texts)
    header = _svg_text(str(esc.render("overview", format="svg")))
    assert 'Quotes " braces {x} <b>bold</b> pipes | back\\slash and' in header


# ------------------------------------------------------------------------------------- plan overlay


def _session_report(plan: list[dict[str, object]]) -> tuple[contractsim.api.Contract, PlanReport]:
    c = contractsim.load(SESSION)
    return c, c.simulator(now=NOW).run(plan)


INIT = {"tool": "init_session", "args": {"user": "analyst", "password": "pw"}}
QUERY = {"tool": "query", "args": {"statement": "SELECT 1"}}
CLOSE = {"tool": "close_session", "args": {}}


def test_plan_on_machine_numbers_steps_and_marks_the_failure() -> None:
    c, report = _session_report([INIT, CLOSE, QUERY])
    dot = str(c.render(format="dot", plan_report=report))
    assert '"state.closed" -> "state.open" [label="#1: init_session" color="#1f5fbf"' in dot
    assert '"state.open" -> "state.closed" [label="#2: close_session" color="#1f5fbf"' in dot
    assert '"plan.fail.3" [label="✗ step 3: query\\nPROTOCOL_VIOLATION\\n' in dot
    assert 'color="#c62828" fillcolor="#fdecea"' in dot
    assert '"state.closed" -> "plan.fail.3" [label="#3: query" color="#c62828"' in dot
    assert "plan: 3 step(s), verdict fails (step 3)" in dot


def test_plan_on_overview_links_the_calls_in_order() -> None:
    c, report = _session_report([INIT, QUERY, QUERY, CLOSE])
    dot = str(c.render("overview", format="dot", plan_report=report))
    assert 'start -> "tool.init_session"' not in dot
    assert '"plan.start" -> "tool.init_session" [label="#1"' in dot
    assert '"tool.query" -> "tool.query" [label="#3"' in dot
    assert "\\nsteps 2, 3" in dot
    assert "plan.fail" not in dot
    assert "verdict ok" in dot


@needs_dot
def test_plan_overlay_svg_has_the_failure_note() -> None:
    c, report = _session_report([QUERY])
    nodes = _svg_nodes(str(c.render(format="svg", plan_report=report)))
    assert nodes["plan.fail.1"].startswith("✗ step 1: query\nPROTOCOL_VIOLATION\n")


def test_plan_is_not_drawn_on_a_flow() -> None:
    c, report = _session_report([INIT])
    with pytest.raises(RenderError, match="machine or on the overview"):
        c.render("tool", "query", plan_report=report)


# ----------------------------------------------------------------------------------------- overview


def test_overview_dependencies() -> None:
    def edges(path: Path) -> set[tuple[str, str, str, tuple[str, ...]]]:
        c = contractsim.load(path)
        return {(d.source, d.target, d.effect, d.reasons) for d in dependencies(c.ir)}

    ts = edges(ROOT / "examples" / "tool_selection" / "tool_selection.contract")
    assert ("QueryDatabase", "PlotChart", "enables", ("datasets",)) in ts
    assert ("PythonInterpreter", "PlotChart", "enables", ("datasets",)) in ts
    assert not any(s == "Calculate" or t == "Calculate" for s, t, _, _ in ts)
    fs = edges(FILE_SYSTEM)
    assert ("delete_file", "read_file", "disables", ("files",)) in fs
    assert ("make_dir", "write_file", "enables", ("dirs", "writable")) in fs
    session = edges(SESSION)
    assert (
        "init_session",
        "query",
        "enables",
        ("session_open", "token", "machine session"),
    ) in session
    assert ("close_session", "query", "disables", ("session_open", "token", "machine session")) in (
        session
    )
    assert not any(s == t for s, t, _, _ in session)


# ------------------------------------------------------------------------------------------- errors


FS_CHOICES = (
    "choose one of: --overview, --tool make_dir, --tool write_file, --tool read_file, "
    "--tool copy_file, --tool delete_file, --tool list_dir"
)

TWO_MACHINES = """contract two version "1.0.0"
tool a() { }
tool b() { }
machine m { states x, y  initial x  final y  x -> y on a }
machine n { states p, q  initial p  final q  p -> q on b }
"""


def test_view_choice_errors() -> None:
    fs = contractsim.load(FILE_SYSTEM)
    assert fs.render() == fs.render("overview")  # no machine: the overview (issue 11 item 14)
    with pytest.raises(RenderError) as exc:
        fs.render("tool", "red_file")
    assert exc.value.hint == "did you mean `read_file`?"
    with pytest.raises(RenderError) as exc:
        fs.render("machine", "nope")
    assert (exc.value.message, exc.value.hint) == (
        "the contract declares no protocol machine `nope`",
        FS_CHOICES,
    )
    with pytest.raises(RenderError) as exc:
        fs.render("tool", "zzzzzzzz")
    assert exc.value.hint == FS_CHOICES
    two = contractsim.loads(TWO_MACHINES)
    with pytest.raises(RenderError) as exc:
        two.render()
    assert (exc.value.message, exc.value.hint) == (
        "the contract has 2 protocol machines; choose what to draw",
        "choose one of: --machine m, --machine n, --overview, --tool a, --tool b",
    )
    with pytest.raises(RenderError):
        fs.render("overview", format="jpeg")


# ---------------------------------------------------------------------------------------------- CLI


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["render", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_default_machine_to_stdout() -> None:
    code, out, _ = _run(str(SESSION))
    assert code == 0
    assert out.startswith("digraph machine_session {")
    code, out, _ = _run(str(SESSION), "--overview", "--format", "mermaid")
    assert code == 0 and "flowchart LR" in out


def test_cli_draws_the_overview_without_a_machine(tmp_path: Path) -> None:
    """issue 11 item 14: no selector and no machine was exit 2; it draws the overview."""
    code, out, _ = _run(str(FILE_SYSTEM))
    assert code == 0
    assert out == _run(str(FILE_SYSTEM), "--overview")[1]
    assert out.startswith("digraph overview {")
    plan = tmp_path / "p.yaml"
    plan.write_text("- tool: make_dir\n  args: {path: /tmp/x}\n", encoding="utf-8")
    code, out, _ = _run(str(FILE_SYSTEM), "--plan", str(plan), "--now", NOW)
    assert (
        code == 0
        and out == _run(str(FILE_SYSTEM), "--overview", "--plan", str(plan), "--now", NOW)[1]
    )
    assert "plan:" in out


def test_cli_needs_a_choice_with_several_machines(tmp_path: Path) -> None:
    (tmp_path / "two.contract").write_text(TWO_MACHINES, encoding="utf-8")
    code, out, _ = _run(str(tmp_path / "two.contract"))
    assert code == 2
    assert "error[E0704]: the contract has 2 protocol machines; choose what to draw" in out
    assert "hint: choose one of: --machine m, --machine n, --overview, --tool a, --tool b" in out
    code, out, _ = _run(str(FILE_SYSTEM), "--machine", "nope")
    assert code == 2 and f"hint: {FS_CHOICES}" in out
    help_text = CliRunner().invoke(main, ["render", "--help"]).output
    assert "the overview" in help_text and "when it has none" in help_text


def test_cli_unknown_names_suggest() -> None:
    code, out, _ = _run(str(FILE_SYSTEM), "--tool", "red_file")
    assert code == 2 and "did you mean `read_file`?" in out
    code, out, _ = _run(str(SESSION), "--machine", "sesion")
    assert code == 2 and "did you mean `session`?" in out
    code, _, _ = _run(str(SESSION), "--machine", "session", "--overview")
    assert code == 2


def test_cli_png_needs_an_output_file() -> None:
    code, out, _ = _run(str(SESSION), "--format", "png")
    assert code == 2 and "-o FILE" in out


def test_cli_missing_dot(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_dot(source: str, fmt: str) -> bytes:
        raise graphviz.ExecutableNotFound(["dot", "-Tsvg"])

    monkeypatch.setattr("contractsim.render.dot.to_image", no_dot)
    code, _, err = _run(str(SESSION), "--format", "svg")
    assert code == 2
    assert "apt-get install graphviz" in err and "brew install graphviz" in err
    assert "--format mermaid" in err


@needs_dot
def test_cli_png_and_svg(tmp_path: Path) -> None:
    out = tmp_path / "m.png"
    code, _, _ = _run(str(SESSION), "--format", "png", "-o", str(out))
    assert code == 0 and out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    code, svg, _ = _run(str(SESSION), "--format", "svg")
    assert code == 0 and "state.open" in svg
    ET.fromstring(svg)


def test_cli_plan_overlay(tmp_path: Path) -> None:
    plan = ROOT / "examples" / "session_protocol" / "plans" / "fails_query_after_close.yaml"
    out = tmp_path / "plan.dot"
    code, _, _ = _run(str(SESSION), "--plan", str(plan), "--now", NOW, "-o", str(out))
    assert code == 0
    assert '"plan.fail.3"' in out.read_text("utf-8")
    code, _, _ = _run(str(SESSION), "--tool", "query", "--plan", str(plan))
    assert code == 2
    code, out_text, _ = _run(str(SESSION), "--plan", str(tmp_path / "missing.yaml"))
    assert code == 2 and "E0700" in out_text
    code, _, _ = _run(str(SESSION), "--state", str(plan))
    assert code == 2
    code, out_text, _ = _run(str(SESSION), "--plan", str(plan), "--now", "yesterday")
    assert code == 2 and "E0705" in out_text


# ------------------------------------------------------- found in review: ids, dependencies


def test_mermaid_ids_are_sanitised_and_stay_distinct() -> None:
    assert node_id("plan_tool_end x") == "plan_tool_end_x20_x"
    assert node_id('foo-bar"baz') != node_id("foo_bar_baz")
    assert all(ch.isalnum() or ch == "_" for ch in node_id('a.b|c"d<e>'))


def test_a_protocol_self_loop_enables_nothing() -> None:
    deps = dependencies(contractsim.loads(REVIEW_CONTRACT).ir)
    assert not any(d.source == "g" and "machine life" in d.reasons for d in deps)
