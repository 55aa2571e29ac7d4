"""contractsim diff: value-set classification, witnesses, semver, CLI, golden reports."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_docs import BLOCKS

import contractsim
from contractsim.api import load_operand
from contractsim.cli import main
from contractsim.diffing import diff_contracts
from contractsim.diffing.changes import actual_bump
from contractsim.diffing.patterns import compare_patterns
from contractsim.diffing.render import render_json, render_markdown, render_text
from contractsim.diffing.witness import NOW, observe

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "diff"
UPDATE = os.environ.get("CONTRACTSIM_UPDATE_GOLDEN") == "1"

BASE = """contract shop version "1.0.0"
  "A small shop."

type Sku = str pattern r"^[A-Z]{3}-[0-9]{3}$"

state {
  stock: map[Sku, int] = {"ABC-123": 5, "XYZ-999": 0}
  orders: int = 0
  open: bool = true
}

machine store {
  states closed, open
  initial open
  open -> open on buy
  open -> closed on close
  closed -> open on reopen
}

tool buy(sku: Sku, quantity: int min 1 max 10, note: str max_length 100 = "")
    -> record { total: int }
    "Buys items."
    cost 1
{
  require sku in stock
    else UNKNOWN_SKU "no such item: {sku}"
  require stock[sku] >= quantity
    else OUT_OF_STOCK "only {stock[sku]} left"
    hint "buy fewer"
  effect {
    stock[sku] = stock[sku] - quantity
    orders += 1
  }
}

tool close() {
  effect open = false
}

tool reopen() {
  effect open = true
}
"""


def load(text: str, name: str) -> contractsim.Contract:
    return contractsim.loads(text, filename=name)


def diff_texts(new_text: str, old_text: str = BASE, **kw: object) -> contractsim.diffing.DiffReport:
    return diff_contracts(load(old_text, "old.contract"), load(new_text, "new.contract"), **kw)  # type: ignore[arg-type]


def edit(*pairs: tuple[str, str], text: str = BASE) -> str:
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def kinds(report: contractsim.diffing.DiffReport) -> list[tuple[str, str | None, str]]:
    return [(c.type, c.tool, c.field) for c in report.changes]


# ------------------------------------------------------------------------------ diff(a, a) is empty


def _clean_contracts() -> list[Path]:
    paths = sorted(ROOT.glob("examples/*/*.contract"))
    for path in sorted((ROOT / "tests" / "golden").glob("*.contract")):
        if not [d for d in contractsim.check(path) if d.severity == "error"]:
            paths.append(path)
    return paths


@pytest.mark.parametrize("path", _clean_contracts(), ids=lambda p: p.stem)
def test_diff_of_a_contract_with_itself_is_empty(path: Path) -> None:
    a = contractsim.load(path)
    b = contractsim.load(path)
    report = contractsim.diff(a, b)
    assert report.changes == []
    assert report.required_bump == "none"


@pytest.mark.parametrize("source", BLOCKS)
def test_diff_of_a_docs_block_with_itself_is_empty(source: str) -> None:
    a = contractsim.loads(source, "a")
    assert contractsim.diff(a, contractsim.loads(source, "b")).changes == []


# ------------------------------------------------------------------------- classification by kind


def test_numeric_bound_narrowed_is_breaking_and_widened_is_additive() -> None:
    report = diff_texts(edit(("quantity: int min 1 max 10", "quantity: int min 5 max 20")))
    assert [(c.type, c.description) for c in report.changes] == [
        ("breaking", "`quantity` accepted values narrowed: minimum 1 → 5"),
        ("additive", "`quantity` accepts more values: maximum 10 → 20"),
    ]


def test_int_to_float_is_widening_not_breaking() -> None:
    report = diff_texts(
        edit(
            ("stock: map[Sku, int]", "stock: map[Sku, float]"),
            ("quantity: int min 1 max 10", "quantity: float min 1 max 10"),
        )
    )
    assert [c.type for c in report.changes] == ["additive", "additive"]
    assert "type int → float" in report.changes[0].description


def test_textually_different_but_equal_value_sets_are_not_reported() -> None:
    # `min 1 max 10` written as a named type with the same bounds
    text = edit(
        (
            'type Sku = str pattern r"^[A-Z]{3}-[0-9]{3}$"',
            'type Sku = str pattern r"^[A-Z]{3}-[0-9]{3}$"\ntype Qty = int min 1 max 10',
        ),
        ("quantity: int min 1 max 10", "quantity: Qty"),
    )
    assert diff_texts(text).changes == []


def test_pattern_narrowed_by_language_inclusion_with_a_witness_string() -> None:
    report = diff_texts(edit((r"^[A-Z]{3}-[0-9]{3}$", r"^[A-Z]{3}-[0-9]{3}$|^[A-Z]{3}-[0-9]{4}$")))
    assert [c.type for c in report.changes] == ["additive", "additive"]  # buy.sku, state stock
    report = diff_texts(edit((r"^[A-Z]{3}-[0-9]{3}$", r"^[A-Z]{3}-[1-9][0-9]{2}$")))
    assert [c.type for c in report.changes] == ["breaking", "breaking"]
    change = report.changes[0]
    assert change.field == "param sku"
    assert "accepts fewer strings" in change.description
    assert change.witness is not None
    assert change.witness.new["codes"] == ["INVALID_ARGUMENT"]


def test_pattern_inclusion_decisions() -> None:
    assert compare_patterns(r"^[a-z]+$", r"^[a-z0-9]+$").relation == "wider"
    verdict = compare_patterns(r"^\d{4}$", r"^[0-9]{4}$")
    assert verdict.relation == "narrower"  # \d takes non-ASCII digits too
    assert compare_patterns(r"^ab", r"^ab").relation == "equal"
    assert compare_patterns(r"^a", r"a").relation == "wider"
    unknown = compare_patterns(r"(?=a)a", r"a")
    assert unknown.relation == "unknown"


def test_optional_to_required_and_new_required_parameter_are_breaking() -> None:
    report = diff_texts(edit(('note: str max_length 100 = ""', "note: str max_length 100")))
    assert kinds(report) == [("breaking", "buy", "param note")]
    report = diff_texts(
        edit(('note: str max_length 100 = ""', 'note: str max_length 100 = "", gift: bool'))
    )
    assert kinds(report) == [("breaking", "buy", "param gift")]
    report = diff_texts(
        edit(('note: str max_length 100 = ""', 'note: str max_length 100 = "", gift: bool = false'))
    )
    assert kinds(report) == [("additive", "buy", "param gift")]


def test_tool_removed_renamed_added() -> None:
    report = diff_texts(
        edit(("tool reopen() {", "tool resume() {"), ("open on reopen", "open on resume"))
    )
    assert [(c.type, c.description) for c in report.changes] == [
        ("breaking", "tool `reopen` renamed to `resume`"),
        ("additive", "tool `resume` added"),
        ("breaking", "transition `closed -> open on reopen` removed"),
        ("additive", "transition `closed -> open on resume` added"),
    ]


def test_precondition_added_has_a_witness_that_simulate_reproduces() -> None:
    new = edit(
        (
            "  require stock[sku] >= quantity",
            '  require quantity <= 3\n    else TOO_MANY "at most 3"\n'
            "  require stock[sku] >= quantity",
        )
    )
    report = diff_texts(new)
    (change,) = report.changes
    assert (change.type, change.field) == ("breaking", "require TOO_MANY")
    assert change.witness is not None
    assert change.witness.old["verdict"] == "ok"
    assert change.witness.new["verdict"] == "fails"
    assert change.witness.new["codes"] == ["TOO_MANY"]
    _assert_reproduces(BASE, new, change.witness)


def test_precondition_relaxed_and_code_renamed() -> None:
    report = diff_texts(
        edit(("require stock[sku] >= quantity", "require stock[sku] >= quantity - 1"))
    )
    assert kinds(report) == [("additive", "buy", "require OUT_OF_STOCK")]
    assert report.changes[0].witness is not None
    report = diff_texts(edit(("else OUT_OF_STOCK", "else NO_STOCK")))
    assert [(c.type, c.description) for c in report.changes] == [
        ("breaking", "error code OUT_OF_STOCK renamed to NO_STOCK")
    ]


def test_message_or_hint_change_is_behavioural_without_witness() -> None:
    report = diff_texts(edit(('hint "buy fewer"', 'hint "buy fewer items"')))
    assert kinds(report) == [("behavioural", "buy", "require OUT_OF_STOCK")]


def test_effect_change_is_behavioural_with_a_witness() -> None:
    new = edit(("    orders += 1\n", "    orders += 2\n"))
    report = diff_texts(new)
    (change,) = report.changes
    assert (change.type, change.field) == ("behavioural", "buy", "effects")[
        ::2
    ] or change.field == "effects"
    assert change.witness is not None
    assert change.witness.old["changes"] != change.witness.new["changes"]
    _assert_reproduces(BASE, new, change.witness)


def test_refactored_precondition_is_not_shown_to_differ() -> None:
    report = diff_texts(
        edit(("require stock[sku] >= quantity", "require not (stock[sku] < quantity)"))
    )
    (change,) = report.changes
    assert change.type == "behavioural"
    assert change.witness is None
    assert change.witness_status == "not shown to differ"


def test_machine_transition_removed_is_breaking() -> None:
    report = diff_texts(edit(("closed -> open on reopen", "closed -> closed on reopen")))
    assert kinds(report) == [
        ("breaking", "reopen", "machine store"),
        ("additive", "reopen", "machine store"),
    ]
    assert report.changes[0].impact_on_agent == "`reopen` from `closed` now leads elsewhere"


def test_state_variable_removed_and_initial_value_changed() -> None:
    report = diff_texts(edit(("orders: int = 0", "orders: int = 1")))
    assert kinds(report) == [("behavioural", None, "state orders")]


# ---------------------------------------------------------------------------------------- semver


def test_required_bump_and_version_check() -> None:
    new = edit(("quantity: int min 1 max 10", "quantity: int min 1 max 5"))
    report = diff_texts(new)
    assert report.required_bump == "major"
    assert report.version_problem == (
        "the changes require a major version bump, but 1.0.0 → 1.0.0 is no bump"
    )
    report = diff_texts(edit(('version "1.0.0"', 'version "2.0.0"'), text=new))
    assert report.version_problem is None
    report = diff_texts(edit(('version "1.0.0"', 'version "0.9.0"')))
    assert report.version_problem == "version 0.9.0 is lower than the previous 1.0.0"


@pytest.mark.parametrize(
    ("old", "new", "bump"),
    [
        ("1.0.0", "2.0.0", "major"),
        ("1.0.0", "1.1.0", "minor"),
        ("1.0.0", "1.0.1", "patch"),
        ("1.0.0", "1.0.0", "none"),
        ("1.2.0", "1.1.9", "lower"),
        ("0.3.0", "0.4.0", "major"),
        ("0.3.0", "0.3.1", "minor"),
    ],
)
def test_actual_bump(old: str, new: str, bump: str) -> None:
    assert actual_bump(old, new) == bump


# ------------------------------------------------------------------------------ property tests


def _with_bounds(lo: int, hi: int, max_len: int) -> str:
    return edit(
        ("quantity: int min 1 max 10", f"quantity: int min {lo} max {hi}"),
        ("note: str max_length 100", f"note: str max_length {max_len}"),
    )


bounds = st.tuples(st.integers(-50, 50), st.integers(0, 100), st.integers(1, 200)).filter(
    lambda t: t[0] <= t[1]
)


@settings(max_examples=25, deadline=None)
@given(bounds, st.integers(0, 20), st.integers(0, 20), st.integers(0, 50))
def test_widening_is_never_breaking_and_narrowing_always_is(
    base: tuple[int, int, int], down: int, up: int, longer: int
) -> None:
    lo, hi, max_len = base
    old = _with_bounds(lo, hi, max_len)
    wider = _with_bounds(lo - down, hi + up, max_len + longer)
    assume(lo + down <= hi - up)
    shorter = min(longer, max_len - 1)
    narrower = _with_bounds(lo + down, hi - up, max_len - shorter)
    a = load(old, "old.contract")
    widened = diff_contracts(a, load(wider, "new.contract"), witnesses=False)
    assert all(c.type == "additive" for c in widened.changes)
    assert bool(widened.changes) == bool(down or up or longer)
    narrowed = diff_contracts(a, load(narrower, "new.contract"), witnesses=False)
    assert all(c.type == "breaking" for c in narrowed.changes)
    assert bool(narrowed.changes) == bool(down or up or shorter)


@settings(max_examples=20, deadline=None)
@given(
    st.sets(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1),
    st.sets(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1),
)
def test_enum_members_decide_the_class(old: set[str], new: set[str]) -> None:
    def contract(members: set[str]) -> str:
        enum = ", ".join(["base", *sorted(members)])
        return edit(('note: str max_length 100 = ""', f"mode: enum {{ {enum} }}"))

    report = diff_contracts(load(contract(old), "o"), load(contract(new), "n"), witnesses=False)
    types = {c.type for c in report.changes}
    assert ("breaking" in types) == bool(old - new)
    assert ("additive" in types) == bool(new - old)


# --------------------------------------------------------------------------------- witnesses


def _assert_reproduces(old_text: str, new_text: str, witness: contractsim.diffing.Witness) -> None:
    """Running the witness plan as `simulate` does gives the claimed observations."""
    for text, claimed in ((old_text, witness.old), (new_text, witness.new)):
        c = load(text, "x.contract")
        plan = witness.plan()
        sim = c.simulator(now=plan.get("now", NOW))
        state = sim.initial_state(plan.get("state") or None)
        assert observe(sim.run(plan["steps"], state)) == claimed


def _mutations() -> list[str]:
    return [
        edit(("require sku in stock", "require sku in stock and quantity < 9")),
        edit(("require stock[sku] >= quantity", "require stock[sku] > quantity")),
        edit(("    orders += 1\n", "")),
        edit(("effect open = false", "effect open = true")),
        edit(("quantity: int min 1 max 10", "quantity: int min 2 max 10")),
        edit(('"ABC-123": 5', '"ABC-123": 1')),
    ]


@pytest.mark.parametrize("new", _mutations())
def test_every_witness_reproduces_on_both_files(new: str) -> None:
    report = diff_texts(new)
    assert report.changes
    for change in report.changes:
        if change.witness is not None:
            _assert_reproduces(BASE, new, change.witness)


def test_witness_plan_runs_through_the_cli(tmp_path: Path) -> None:
    new = edit(("require stock[sku] >= quantity", "require stock[sku] > quantity"))
    (tmp_path / "old.contract").write_text(BASE)
    (tmp_path / "new.contract").write_text(new)
    report = diff_texts(new)
    witness = report.changes[0].witness
    assert witness is not None
    (tmp_path / "plan.json").write_text(json.dumps(witness.plan()))
    runner = CliRunner()
    old_run = runner.invoke(
        main,
        [
            "simulate",
            str(tmp_path / "old.contract"),
            str(tmp_path / "plan.json"),
            "--format",
            "json",
        ],
    )
    new_run = runner.invoke(
        main,
        [
            "simulate",
            str(tmp_path / "new.contract"),
            str(tmp_path / "plan.json"),
            "--format",
            "json",
        ],
    )
    assert json.loads(old_run.output)["verdict"] == witness.old["verdict"] == "ok"
    assert json.loads(new_run.output)["verdict"] == witness.new["verdict"] == "fails"


# ----------------------------------------------------------------------------------------- CLI


def _write(tmp_path: Path, new: str) -> tuple[str, str]:
    (tmp_path / "old.contract").write_text(BASE)
    (tmp_path / "new.contract").write_text(new)
    return str(tmp_path / "old.contract"), str(tmp_path / "new.contract")


def test_cli_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    old, same = _write(tmp_path, BASE)
    assert runner.invoke(main, ["diff", old, same]).exit_code == 0
    _, new = _write(tmp_path, edit(('hint "buy fewer"', 'hint "buy less"')))
    assert runner.invoke(main, ["diff", old, new]).exit_code == 0
    assert runner.invoke(main, ["diff", old, new, "--fail-on", "behavioural"]).exit_code == 1
    _, new = _write(tmp_path, edit(("max 10", "max 11")))
    assert runner.invoke(main, ["diff", old, new, "--fail-on", "behavioural"]).exit_code == 0
    assert runner.invoke(main, ["diff", old, new, "--fail-on", "any"]).exit_code == 1
    _, new = _write(tmp_path, edit(("max 10", "max 9")))
    result = runner.invoke(main, ["diff", old, new])
    assert result.exit_code == 1
    assert "error: the changes require a major version bump" in result.output
    bad = runner.invoke(main, ["diff", old, str(tmp_path / "missing.contract")])
    assert bad.exit_code == 2
    unknown = runner.invoke(main, ["diff", old, new, "--tool", "bye"])
    assert unknown.exit_code == 2
    assert "neither version declares a tool `bye`" in unknown.output


def test_cli_tool_filter_and_json_shape(tmp_path: Path) -> None:
    old, new = _write(
        tmp_path, edit(("max 10", "max 9"), ("effect open = false", "effect open = true"))
    )
    result = CliRunner().invoke(main, ["diff", old, new, "--tool", "close", "--format", "json"])
    data = json.loads(result.output)
    assert [c["tool"] for c in data["changes"]] == ["close"]
    assert set(data) >= {"version", "previous_version", "changes"}
    schema = json.loads((ROOT / "docs" / "diff.schema.json").read_text())
    import jsonschema

    jsonschema.validate(data, schema)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_git_operands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "shop.contract").write_text(BASE)
    _git(repo, "add", "shop.contract")
    _git(repo, "commit", "-qm", "v1")
    (repo / "shop.contract").write_text(edit(("max 10", "max 9")))
    monkeypatch.chdir(repo)
    runner = CliRunner()
    result = runner.invoke(main, ["diff", "git:HEAD:shop.contract", "shop.contract"])
    assert result.exit_code == 1, result.output
    assert "maximum 10 → 9" in result.output
    for spec, message in [
        ("git:nope:shop.contract", "cannot read `git:nope:shop.contract`"),
        ("git:HEAD:../x.contract", "is not a path inside the repository"),
        ("git:--output=x:shop.contract", "is not a revision name diff accepts"),
        ("git:HEAD", "is not of the form git:REV:PATH"),
    ]:
        bad = runner.invoke(main, ["diff", spec, "shop.contract"])
        assert bad.exit_code == 2, (spec, bad.output)
        assert message in bad.output


def test_load_operand_refuses_non_paths() -> None:
    with pytest.raises(TypeError):
        load_operand(5, "old")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------- golden reports

GOLDEN_CASES = {
    "param_narrowed": edit(("quantity: int min 1 max 10", "quantity: int min 1 max 5")),
    "param_widened": edit(
        ('version "1.0.0"', 'version "1.1.0"'),
        ("quantity: int min 1 max 10", "quantity: int min 1 max 50"),
    ),
    "pattern_narrowed": edit((r"^[A-Z]{3}-[0-9]{3}$", r"^[A-Z]{3}-[1-9][0-9]{2}$")),
    "required_param_added": edit(
        ('note: str max_length 100 = ""', 'note: str max_length 100 = "", gift: bool')
    ),
    "precondition_added": edit(
        (
            "  require stock[sku] >= quantity",
            '  require quantity <= 3\n    else TOO_MANY "at most 3"\n'
            "  require stock[sku] >= quantity",
        )
    ),
    "precondition_relaxed": edit(
        ('version "1.0.0"', 'version "1.1.0"'),
        ("require stock[sku] >= quantity", "require stock[sku] >= quantity - 1"),
    ),
    "code_renamed": edit(("else OUT_OF_STOCK", "else NO_STOCK")),
    "effect_changed": edit(
        ('version "1.0.0"', 'version "1.0.1"'), ("    orders += 1\n", "    orders += 2\n")
    ),
    "message_changed": edit(
        ('version "1.0.0"', 'version "1.0.1"'), ('hint "buy fewer"', 'hint "buy less"')
    ),
    "tool_removed": edit(
        ("tool reopen() {\n  effect open = true\n}\n", ""),
        ("  closed -> open on reopen\n", ""),
        ("  initial open\n", "  initial open\n  final closed\n"),
    ),
    "tool_added": edit(
        ('version "1.0.0"', 'version "1.1.0"'),
        ("tool reopen() {", "tool ping() {\n}\n\ntool reopen() {"),
    ),
    "transition_removed": edit(
        ("  closed -> open on reopen\n", ""),
        ("  initial open\n", "  initial open\n  final closed\n"),
    ),
    "not_shown_to_differ": edit(
        ('version "1.0.0"', 'version "1.0.1"'),
        ("require stock[sku] >= quantity", "require not (stock[sku] < quantity)"),
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_reports(name: str) -> None:
    report = diff_texts(GOLDEN_CASES[name])
    for suffix, text in (
        ("txt", render_text(report)),
        ("md", render_markdown(report)),
        ("json", render_json(report)),
    ):
        path = GOLDEN / f"{name}.{suffix}"
        if UPDATE or not path.exists():
            path.write_text(text)
        assert text == path.read_text(), f"{path} differs (CONTRACTSIM_UPDATE_GOLDEN=1 regenerates)"


def test_the_example_in_docs_diff_md_prints_what_it_says(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = (ROOT / "docs" / "diff.md").read_text(encoding="utf-8")
    command = (
        "$ contractsim diff tests/data/diff/shop_v1.contract tests/data/diff/shop_v2.contract\n"
    )
    start = docs.index(command) + len(command)
    shown = docs[start : docs.index("$ echo $?", start)]
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(
        main, ["diff", "tests/data/diff/shop_v1.contract", "tests/data/diff/shop_v2.contract"]
    )
    assert result.exit_code == 1
    assert result.output == shown


def test_tool_filter_keeps_the_protocol_changes_of_that_tool() -> None:
    new = edit(
        ("closed -> open on reopen", "closed -> closed on reopen"),
        ("effect open = false", "effect open = 0 == 1"),
    )
    report = diff_texts(new, tool="reopen")
    assert {c.tool for c in report.changes} == {"reopen"}
    assert [c.field for c in report.changes] == ["machine store", "machine store"]


def _param_contract(param_type: str) -> str:
    return f'contract t version "1.0.0"\ntool f(x: {param_type}) {{\n  effect {{}}\n}}\n'


FIXED_PAIRS = [
    ("float", "int"),
    ("str | null", "str"),
    ("str", 'str format "email"'),
    ('str format "uuid"', 'str format "uuid4"'),
    ("str", 'str pattern r"^[a-z]+$"'),
    ('str pattern r"^[a-z0-9]+$"', 'str pattern r"^[a-z]+$"'),
    ('str pattern r"^(ab|cd)$"', 'str pattern r"^ab$"'),
    ('str pattern r"^\\d{2,4}$"', 'str pattern r"^\\d{3}$"'),
    ("enum { a, b, c }", "enum { a, b }"),
    ("record { a: int, b?: int }", "record { a: int, b: int }"),
    ("record { a: int, c?: str }", "record { a: int }"),
    ("list[int | str]", "list[int]"),
    ("map[str, float]", "map[str, int]"),
]


def _narrow_pairs() -> st.SearchStrategy[tuple[str, str]]:
    """(wider, narrower) parameter types, one constraint kind at a time."""
    n = st.integers(0, 30)
    return st.one_of(
        st.tuples(n, n, st.integers(1, 10)).map(
            lambda t: (
                f"int min {t[0]} max {t[0] + t[1] + t[2]}",
                f"int min {t[0]} max {t[0] + t[1]}",
            )
        ),
        st.tuples(n, st.integers(1, 10)).map(
            lambda t: (f"int min {t[0]}", f"int min {t[0] + t[1]}")
        ),
        st.tuples(n, st.integers(1, 10)).map(
            lambda t: (f"str max_length {t[0] + t[1]}", f"str max_length {t[0]}")
        ),
        st.tuples(n, st.integers(1, 10)).map(
            lambda t: (f"list[int] min_items {t[0]}", f"list[int] min_items {t[0] + t[1]}")
        ),
        st.tuples(n, st.integers(1, 10)).map(
            lambda t: (f"list[str] max_items {t[0] + t[1]}", f"list[str] max_items {t[0]}")
        ),
        st.sampled_from(FIXED_PAIRS),
    )


@settings(max_examples=40, deadline=None)
@given(_narrow_pairs())
def test_any_widening_is_never_breaking_and_any_narrowing_always_is(pair: tuple[str, str]) -> None:
    _check_pair(pair)


@pytest.mark.parametrize("pair", FIXED_PAIRS, ids=lambda p: f"{p[0]} > {p[1]}")
def test_each_kind_of_widening_is_additive_and_narrowing_breaking(pair: tuple[str, str]) -> None:
    _check_pair(pair)


def _check_pair(pair: tuple[str, str]) -> None:
    wider, narrower = (load(_param_contract(t), f"{i}.contract") for i, t in enumerate(pair))
    widened = diff_contracts(narrower, wider, witnesses=False)
    narrowed = diff_contracts(wider, narrower, witnesses=False)
    assert widened.changes and all(c.type == "additive" for c in widened.changes), pair
    assert narrowed.changes and all(c.type == "breaking" for c in narrowed.changes), pair


_EDITS = [
    ("require sku in stock", "require sku in stock and quantity < 9"),
    ("require stock[sku] >= quantity", "require stock[sku] > quantity"),
    ("    orders += 1\n", ""),
    ("effect open = false", "effect open = true"),
    ("quantity: int min 1 max 10", "quantity: int min 2 max 10"),
    ('"ABC-123": 5', '"ABC-123": 1'),
    ('hint "buy fewer"', 'hint "buy less"'),
    ("    else UNKNOWN_SKU", "    else NO_SUCH_SKU"),
]


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(st.sets(st.integers(0, len(_EDITS) - 1), min_size=1, max_size=3))
def test_every_witness_of_random_edits_reproduces(chosen: set[int]) -> None:
    new = edit(*(_EDITS[i] for i in sorted(chosen)))
    report = diff_texts(new)
    assert report.changes
    for change in report.changes:
        if change.witness is not None:
            assert change.witness.old != change.witness.new
            _assert_reproduces(BASE, new, change.witness)


def test_moved_or_reformatted_clauses_are_not_changes() -> None:
    first = '  require sku in stock\n    else UNKNOWN_SKU "no such item: {sku}"\n'
    moved = edit((first, ""), ('    hint "buy fewer"\n', '    hint "buy fewer"\n' + first))
    assert diff_texts(moved).changes == []
    spaced = BASE.replace("stock[sku] >= quantity", "stock[ sku ]  >=  quantity")
    assert diff_texts(spaced).changes == []


def test_a_clause_reading_a_changed_predicate_is_compared() -> None:
    with_pred = edit(
        ("machine store {", "predicate enough(s: Sku, q: int) = stock[s] >= q\n\nmachine store {"),
        ("require stock[sku] >= quantity", "require enough(sku, quantity)"),
    )
    stricter = with_pred.replace("stock[s] >= q", "stock[s] > q")
    report = diff_texts(stricter, old_text=with_pred)
    (change,) = report.changes
    assert (change.type, change.field) == ("breaking", "require OUT_OF_STOCK")
    assert change.witness is not None
    _assert_reproduces(with_pred, stricter, change.witness)


def test_a_lower_version_fails_at_every_level(tmp_path: Path) -> None:
    old, new = _write(tmp_path, edit(('version "1.0.0"', 'version "0.9.0"'), ("max 10", "max 11")))
    result = CliRunner().invoke(main, ["diff", old, new, "--fail-on", "breaking"])
    assert result.exit_code == 1
    assert "error: version 0.9.0 is lower than the previous 1.0.0" in result.output


def test_git_missing_or_not_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "shop.contract").write_text(BASE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    runner = CliRunner()
    result = runner.invoke(main, ["diff", "git:HEAD:shop.contract", "shop.contract"])
    assert result.exit_code == 2
    assert "not a git repository" in result.output
    assert "run contractsim diff inside the repository" in result.output
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    result = runner.invoke(main, ["diff", "git:HEAD:shop.contract", "shop.contract"])
    assert result.exit_code == 2
    assert "git is not installed" in result.output


def test_example_plans_beside_a_file_suggest_witness_values() -> None:
    from contractsim.diffing.sources import example_values

    values = example_values(str(ROOT / "examples/file_system/file_system.contract"), "git:HEAD:x")
    assert "/home/projects/plan.md" in values
