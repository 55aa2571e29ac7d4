"""Comprehensions, first/last, filtered and unpacking quantifiers, ``a if c else b``, and the
built-ins chars/count/enumerate/parse_date: parsing, checking, the three evaluators (generated
fast code, generated safe code, the reference interpreter) and simulated verdicts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

import contractsim
from contractsim import UNKNOWN
from contractsim.compiler import lib
from contractsim.compiler.compile import make_context
from contractsim.compiler.interp import Env, Interpreter
from contractsim.compiler.values import FMap
from contractsim.dsl import ir
from contractsim.dsl.lower import _Lowerer
from contractsim.dsl.pretty import expr_text
from contractsim.grammar.parse import parse

U = UNKNOWN
STATE = """
  xs: list[int] = [3, 1, 2]
  s: set[int] = {5, 4}
  m: map[str, int] = {"b": 2, "a": 1}
  names: list[str] = ["ann", "bob", "cy"]
  b: bool = true
  t: str = "banana"
"""


def contract_text(expr: str, state: str = STATE) -> str:
    return f"""contract lc version "1.0.0"
state {{{state}}}
tool run() {{
  effect {{ report v = ({expr}) }}
}}
"""


def evaluate(expr: str, **values: Any) -> dict[str, Any]:
    """The value of ``expr`` by each evaluator, on the state ``STATE`` updated by ``values``
    (``"error"`` when it fails). The fast flavour runs only on known states."""
    c = contractsim.loads(contract_text(expr))
    cc = c.compiled
    effects = cc.tools["run"].effects
    assert effects is not None
    state = {v.name: cc.initial[cc.slots[v.name]] for v in c.ir.state}
    state.update(values)
    out: dict[str, Any] = {}

    def start() -> list[Any]:
        work = list(cc.initial)
        for name, value in state.items():
            work[cc.slots[name]] = value
        return work

    known = not any(lib.contains_unknown(v) for v in state.values())
    for flavour in ("safe", "fast") if known else ("safe",):
        ctx = make_context("2024-01-01", "2024-01-01T00:00:00.000Z")
        try:
            with lib.step_budget():
                getattr(effects, flavour)(start(), {}, None, None, ctx)
            out[flavour] = ctx.reports["v"]
        except lib.EVAL_FAILURES:
            out[flavour] = "error"
    env = Env(c.ir, state=dict(state), consts=dict(cc.consts), safe=True)
    try:
        with lib.step_budget():
            Interpreter(c.ir).exec(effects.ir, env)
        out["interp"] = env.reports["v"]
    except lib.EVAL_FAILURES:
        out["interp"] = "error"
    return out


def agreed(expr: str, **values: Any) -> Any:
    """The one value every evaluator gives ``expr``."""
    got = evaluate(expr, **values)
    assert len({repr(v) for v in got.values()}) == 1, got
    return got["interp"]


def lower_expr(text: str) -> ir.Expr:
    return _Lowerer("<t>").lower(parse(text, "<t>", start="expr"))  # type: ignore[no-any-return]


def codes(text: str) -> list[str]:
    return [d.code for d in contractsim.check_text(text, "t.contract") if d.severity == "error"]


# ------------------------------------------------------------------------------------- parsing


def test_comprehensions_lower_to_their_nodes() -> None:
    e = lower_expr("[x * 2 for x in xs if x > 1]")
    assert isinstance(e, ir.Comprehension)
    assert (e.type, e.var, e.unpack, e.key) == ("list", "x", (), None)
    assert isinstance(e.cond, ir.Binary) and e.cond.op == ">"
    m = lower_expr("{k: v for (k, v) in enumerate(xs)}")
    assert isinstance(m, ir.Comprehension) and m.type == "map"
    assert (m.var, m.unpack) == ("k, v", ("k", "v"))
    assert isinstance(m.key, ir.Name) and m.key.name == "k"
    s = lower_expr("{x for x in xs}")
    assert isinstance(s, ir.Comprehension) and s.type == "set" and s.cond is None


def test_first_last_and_filtered_quantifiers_are_quantifiers() -> None:
    f = lower_expr("first(x for i, x in enumerate(xs) if i > 0)")
    assert isinstance(f, ir.Quantifier) and f.op == "first" and f.unpack == ("i", "x")
    a = lower_expr("all(x > 0 for x in xs if x != 2)")
    assert isinstance(a, ir.Quantifier) and a.op == "all" and a.cond is not None
    plain = lower_expr("all(x > 0 for x in xs)")
    assert isinstance(plain, ir.Quantifier) and plain.cond is None and plain.unpack == ()


def test_conditional_has_the_lowest_precedence_and_chains_right() -> None:
    e = lower_expr("a or b if c else d if e else f")
    assert isinstance(e, ir.Conditional)
    assert isinstance(e.then, ir.Binary) and e.then.op == "or"
    assert isinstance(e.orelse, ir.Conditional)
    inner = lower_expr("(a if c else b) + 1")
    assert isinstance(inner, ir.Binary) and isinstance(inner.left, ir.Conditional)


@pytest.mark.parametrize(
    "text",
    [
        "[x * 2 for x in xs if x > 1]",
        "{k: v for k, v in enumerate(xs) if v > 0}",
        'first(i for i, n in enumerate(names) if n == "b")',
        "last(x for x in s)",
        "a if b else c if d else e",
        "(a if b else c) + 1",
        "(a if b else c) if d else e",
        "-(a if b else c)",
        "[a if b else c for x in (xs if b else ys) if (p if q else r)]",
        "all(x for x in xs if not x)",
    ],
)
def test_printing_round_trips(text: str) -> None:
    e = lower_expr(text)
    printed = expr_text(e)
    assert lower_expr(printed) == e, printed


def test_unparenthesised_conditional_in_an_assignment_says_what_to_do() -> None:
    text = contract_text("1").replace("report v = (1)", "report v = 1 if b else 2")
    (d,) = [d for d in contractsim.check_text(text, "t.contract") if d.severity == "error"]
    assert d.code == "E0101"
    assert d.message == "unexpected `else`; is this a conditional expression `a if c else b`?"
    assert d.hint is not None and "x = (a if c else b)" in d.hint


def test_a_statement_after_an_assignment_still_starts_with_if() -> None:
    text = contract_text("1").replace(
        "report v = (1)", 'let y = 1\n    if b { xs = [y] } else { t = "no" }'
    )
    assert codes(text) == []


# -------------------------------------------------------------------------------------- checks


def test_result_types() -> None:
    text = contract_text("1").replace(
        "effect { report v = (1) }",
        """require first(n for n in names if startswith(n, "b")) != null else NONE
  effect {
    let f = first(n for n in names if startswith(n, "b"))
    if f != null { t = f }
    xs = [x + 1 for x in xs]
    m = {n: len(n) for n in names}
    s = {x for x in xs if x > 1}
    xs = [i for i, x in enumerate(names)]
    names = (names if b else ["z"])
  }""",
    )
    assert codes(text) == []


@pytest.mark.parametrize(
    ("expr", "code", "message"),
    [
        (
            "[x for x in 3]",
            "E0306",
            "a list comprehension needs a collection to range over, got int",
        ),
        (
            "first(x for x in xs if x)",
            "E0301",
            "the condition after `if` must be bool, but this is int",
        ),
        (
            "(1 if 2 else 3)",
            "E0301",
            "the condition of `… if … else …` must be bool, but this is int",
        ),
        (
            "[i for i, x in xs]",
            "E0320",
            "`for i, x in …` unpacks every item into 2 names, but the items are int",
        ),
        (
            "[i for i, x, y in enumerate(xs)]",
            "E0320",
            "`for i, x, y in …` unpacks every item into 3 names, but the items are tuple[int, int]",
        ),
        ("count(t, 1)", "E0301", "what `count` looks for in a string must be str, but this is int"),
        ('count(xs, "a")', "E0301", "str can never be an item of a list of int"),
        ("count(s, 1)", "E0301", "`count` needs a string or a list, got set[int]"),
        ("enumerate(b)", "E0301", "`enumerate` needs a list, a set, a map or a string, got bool"),
        ("chars(xs)", "E0301", "`chars` needs a string, got list[int]"),
        ("parse_date(t, t)", "E0321", "the format of `parse_date` must be a literal string"),
        ('parse_date(t, "%Y %q")', "E0321", "`parse_date` does not support %q in its format"),
        (
            'parse_date(t, "%Y%")',
            "E0321",
            "`parse_date` does not support a lone `%` at the end in its format",
        ),
    ],
)
def test_diagnostics(expr: str, code: str, message: str | None) -> None:
    diags = [
        d
        for d in contractsim.check_text(contract_text(expr), "t.contract")
        if d.severity == "error"
    ]
    assert [d.code for d in diags] == [code], diags
    if message is not None:
        assert diags[0].message == message
    assert diags[0].span.line == 11


def test_the_filter_narrows_the_body() -> None:
    text = """contract lc version "1.0.0"
type F = record { name: str, owner?: str }
state { fs: list[F] = [] }
goal g = any(f.owner + "x" == "ax" for f in fs if f.owner != null)
"""
    assert codes(text) == []
    assert codes(text.replace(" if f.owner != null)", ")")) == ["E0301"]
    # the branches of a conditional are narrowed by its condition
    conditional = text.replace(
        'any(f.owner + "x" == "ax" for f in fs if f.owner != null)',
        'all((f.owner if f.owner != null else "-") + "x" != "" for f in fs)',
    )
    assert codes(conditional) == []
    assert codes(conditional.replace("f.owner != null", "f.owner == null")) == ["E0301"]


def test_unpacking_a_map_hints_at_its_keys() -> None:
    diags = contractsim.check_text(contract_text("[k for k, v in m]"), "t.contract")
    (d,) = [d for d in diags if d.severity == "error"]
    assert d.code == "E0320"
    assert d.hint == "a map gives its keys: bind one name and read the value, m[k]"


def test_parse_date_format_is_checked_where_expressions_are() -> None:
    for place in ('goal g = parse_date("x", "%Q") == null', 'const C = parse_date("x", "%Q")'):
        text = f'contract lc version "1.0.0"\n{place}\n'
        assert codes(text) == ["E0321"], place


# --------------------------------------------------------------------------------- evaluation


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("[x * 2 for x in xs if x > 1]", (6, 4)),
        ("[x for x in xs]", (3, 1, 2)),
        ("{x % 2 for x in xs}", frozenset({0, 1})),
        ("first(x for x in xs if x < 3)", 1),
        ("last(x for x in xs if x < 3)", 2),
        ("first(x for x in xs if x > 9)", None),
        ("first(x for x in s)", 4),  # a set: sorted
        ("last(k for k in m)", "b"),  # a map: its keys, sorted
        ('first(i for i, n in enumerate(names) if n == "bob")', 1),
        ('first(i for (i, n) in enumerate(names) if n == "zed")', None),
        ("[n for i, n in enumerate(names) if i % 2 == 0]", ("ann", "cy")),
        ("{n: i for i, n in enumerate(names)}", FMap({"ann": 0, "bob": 1, "cy": 2})),
        ('{k: m[k] + 1 for k in m if k != "a"}', FMap({"b": 3})),
        ("{x % 2: x for x in xs}", FMap({1: 1, 0: 2})),  # a key met again keeps its last value
        ("all(x > 1 for x in xs if x != 1)", True),
        ("any(x > 2 for x in xs if x != 3)", False),
        ("count(x > 1 for x in xs if x != 3)", 1),
        ("sum(x for x in xs if x > 1)", 5),
        ("sum(i * x for i, x in enumerate(xs))", 5),
        ("1 if b else 2", 1),
        ("1 if not b else 2", 2),
        ("[x for x in xs if b] if b else []", (3, 1, 2)),
        ('chars("abc")', ("a", "b", "c")),
        ('chars("")', ()),
        ('count(t, "an")', 2),
        ('count(t, "")', 7),
        ('count("aaaa", "aa")', 2),
        ("count(xs + [1, 1], 1)", 3),
        ("enumerate(xs)", ((0, 3), (1, 1), (2, 2))),
        ("enumerate(s)", ((0, 4), (1, 5))),
        ("enumerate(m)", ((0, "a"), (1, "b"))),
        ('enumerate("ab")', ((0, "a"), (1, "b"))),
        ('first(c for c in t if c > "a")', "b"),  # a string gives its characters
        ('[c for c in "abc" if c != "b"]', ("a", "c")),
        ('parse_date("03/12/2024", "%d/%m/%Y")', "2024-12-03"),
        ('parse_date("3 Dec 2024", "%d %b %Y")', "2024-12-03"),
        ('parse_date("3  DECEMBER 2024", "%d %B %Y")', "2024-12-03"),
        ('parse_date("2024-02-30", "%Y-%m-%d")', None),
        ('parse_date("99-032", "%y-%j")', "1999-02-01"),
        ('parse_date("2024-12-03T10:11:12Z", "%Y-%m-%dT%H:%M:%SZ")', "2024-12-03"),
        ('parse_date("2024-12-03 10:61:00", "%Y-%m-%d %H:%M:%S")', None),
        ('parse_date("100%", "%j%%")', "1900-04-10"),
    ],
)
def test_values_agree(expr: str, value: Any) -> None:
    assert agreed(expr) == value


def test_parse_date_is_strptime() -> None:
    for text, fmt in [
        ("1 jan 70", "%d %b %y"),
        ("31 Feb 2024", "%d %b %Y"),
        ("5 Sept 2024", "%d %b %Y"),
        ("2024-1-5", "%Y-%m-%d"),
        ("2024-366", "%Y-%j"),
        ("2023-366", "%Y-%j"),
        ("March 2024", "%B %Y"),
        ("x2024", "x%Y"),
        ("2024 ", "%Y"),
    ]:
        try:
            want: str | None = datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            want = None
        assert lib.parse_date(text, fmt) == want, (text, fmt)
    assert lib.parse_date("2024" + " " * 300, "%Y") is None  # too long to be a date


@pytest.mark.parametrize(
    "expr",
    [
        "first(x for x in xs if 1 // (x - 1) > 0)",
        "[1 // (x - 1) for x in xs]",
        "1 if 1 // 0 == 0 else 2",
        "(1 if xs[7] > 0 else 2)",
    ],
)
def test_failures_agree(expr: str) -> None:
    got = evaluate(expr)
    assert set(got.values()) == {"error"}, got


def test_unpacking_an_item_of_another_size_fails() -> None:
    from contractsim.compiler import comprehend

    assert comprehend.items(((1, 2), (3, 4)), 2) == [(1, 2), (3, 4)]
    assert comprehend.items((U,), 2) == [(U, U)]
    with pytest.raises(lib.EvalError, match="cannot unpack a list of 3 items into 2 names"):
        comprehend.items(((1, 2), (3, 4, 5)), 2)
    with pytest.raises(lib.EvalError, match="cannot unpack int into 2 names"):
        comprehend.fast_items((1,), 2)


# ----------------------------------------------------------------------------- unknown values


@pytest.mark.parametrize(
    ("expr", "values", "value"),
    [
        # an unknown collection: unknown
        ("[x for x in xs]", {"xs": U}, U),
        ("first(x for x in xs)", {"xs": U}, U),
        ("enumerate(xs)", {"xs": U}, U),
        # unknown items are carried, the filter decides
        ("[x for x in xs]", {"xs": (1, U)}, (1, U)),
        ("first(x for x in xs)", {"xs": (U, 1)}, U),
        ("first(x for x in xs if x > 0)", {"xs": (1, U)}, 1),  # decided before the unknown
        ("first(x for x in xs if x > 0)", {"xs": (0, U, 1)}, U),  # the unknown may come first
        ("last(x for x in xs if x > 0)", {"xs": (U, 0, 1)}, 1),
        ("last(x for x in xs if x > 0)", {"xs": (1, U)}, U),
        ("first(x for x in xs if x > 0)", {"xs": (0, -1)}, None),
        ("[x for x in xs if x > 0]", {"xs": (1, U)}, U),
        ("[x for x in xs if x > 0]", {"xs": (0, 1)}, (1,)),
        ("{x: 1 for x in xs}", {"xs": (1, U)}, U),  # an unknown key
        ("{1: x for x in xs}", {"xs": (1, U)}, FMap({1: U})),  # an unknown value
        # Kleene quantifiers with a filter
        ("all(x > 0 for x in xs if x != 5)", {"xs": (1, U)}, U),
        ("all(x > 0 for x in xs if x != 5)", {"xs": (U, -1)}, False),
        ("any(x > 0 for x in xs if x != 5)", {"xs": (U, 1)}, True),
        ("any(x > 0 for x in xs if x != 5)", {"xs": (U, -1)}, U),
        ("all(b for x in xs if x > 0)", {"xs": (U,), "b": True}, True),  # whatever the filter
        ("any(b for x in xs if x > 0)", {"xs": (U,), "b": False}, False),
        ("count(b for x in xs if x > 0)", {"xs": (U, 2), "b": False}, 0),
        ("count(b for x in xs if x > 0)", {"xs": (U, 2), "b": True}, U),
        ("sum(x for x in xs if x > 0)", {"xs": (U, 2)}, U),
        # the conditional: unknown condition, equal branches
        ("1 if b else 2", {"b": U}, U),
        ("1 if b else 1", {"b": U}, 1),
        ("[x for x in xs] if b else [3, 1, 2]", {"b": U}, (3, 1, 2)),
        ("[x for x in xs] if b else [3, 1]", {"b": U}, U),
        ("xs[5] if b else 0", {"b": U}, U),  # an error in a branch that may not run
        ("1 if b else xs[0]", {"b": True, "xs": U}, 1),
        # built-ins: unknown in, unknown out
        ("chars(t)", {"t": U}, U),
        ('count(t, "a")', {"t": U}, U),
        ("count(xs, 1)", {"xs": (1, U)}, U),
        ("count(xs, 1)", {"xs": (U,)}, U),
        ('parse_date(t, "%Y")', {"t": U}, U),
    ],
)
def test_unknowns(expr: str, values: dict[str, Any], value: Any) -> None:
    got = evaluate(expr, **values)
    assert len({repr(v) for v in got.values()}) == 1, got
    result = got["interp"]
    if value is U:
        assert result is U, got
    else:
        assert result == value and type(result) is type(value), got


# ------------------------------------------------------------------------------ bounds, budget


def test_nested_comprehensions_agree() -> None:
    assert agreed("len([len([y for y in range(100)]) for x in range(100)])") == 100
    assert agreed("[[y for y in range(x)] for x in range(3)]") == ((), (0,), (0, 1))


@pytest.mark.slow
def test_a_comprehension_counts_against_the_step_budget() -> None:
    # every `range(100000)` charges 100,000 items: 60 of them are more than a step may visit
    got = evaluate("[len(range(100000)) for x in range(60)]")
    assert set(got.values()) == {"error"}, got
    assert agreed("len([len(range(100000)) for x in range(40)])") == 40


@pytest.mark.slow
def test_collections_built_by_comprehensions_are_bounded() -> None:
    assert agreed("len([(x, x) for x in range(400)])") == 400
    big = "len([x for x in range(100000)] + [1])"
    assert set(evaluate(big).values()) == {"error"}
    assert set(evaluate('len(chars(join(range(30000), "")))').values()) == {"error"}


# --------------------------------------------------------------------------------- everywhere


EVERYWHERE = """contract lc version "1.0.0"
type Item = record { name: str, qty: int }
state {
  items: list[Item] = [Item(name="a", qty=2), Item(name="b", qty=0)]
  phase: str = "open"
  day: str | null = null
}
const STOCKED = [i.name for i in [Item(name="a", qty=2)] if i.qty > 0]
predicate in_stock(n: str) = first(i.qty for i in items if i.name == n) != null
  and first(i.qty for i in items if i.name == n) != 0
goal all_empty = all(i.qty == 0 for i in items if i.name in STOCKED)
tool take(name: str, when: str) {
  require in_stock(name)
    else EMPTY "{name} is out; in stock: {join([i.name for i in items if i.qty > 0], \\",\\")}"
  require parse_date(when, "%d.%m.%Y") != null else BAD_DATE "{when} is not DD.MM.YYYY"
  should count(name, "x") == 0 else ODD_NAME "{count(name, \\"x\\")} x in the name"
  effect {
    items = [(Item(name=i.name, qty=i.qty - 1) if i.name == name else i) for i in items]
    day = parse_date(when, "%d.%m.%Y")
  }
  outcome drained success when first(i.qty for i in items if i.name == name) == 1
  outcome ok success
  ensure all(i.qty >= 0 for i in items) else NEGATIVE
}
tool close() {
  require phase == "open" else CLOSED
  effect { phase = ("closed" if all(i.qty == 0 for i in items) else "half") }
}
machine shop {
  states open, done
  initial open
  final done
  open -> done on close when first(k for k, it in enumerate(items) if it.qty != 0) == null
}
"""


def test_every_place_takes_the_new_forms() -> None:
    c = contractsim.loads(EVERYWHERE)
    assert c.compiled.consts["STOCKED"] == ("a",)
    sim = c.simulator(now="2024-01-01T00:00:00Z")
    rep = sim.run(
        [
            ("take", {"name": "a", "when": "03.12.2024"}),
            ("take", {"name": "a", "when": "04.12.2024"}),
            ("take", {"name": "a", "when": "2024-12-05"}),
        ]
    )
    assert [s.verdict for s in rep.steps] == ["ok", "ok", "fails"]
    first, second, third = rep.steps
    assert list(first.outcomes) == ["ok"]  # `when` reads the state before the call
    assert [v.code for v in third.violations] == ["EMPTY", "BAD_DATE"]
    assert third.violations[0].message == "a is out; in stock: "
    assert third.violations[1].message == "2024-12-05 is not DD.MM.YYYY"
    assert list(second.outcomes) == ["drained"]
    after = dict((var, new) for var, _, new in second.changes)
    assert after["day"] == "2024-12-04"
    assert [i["qty"] for i in after["items"]] == [0, 0]
    take_a = ("take", {"name": "a", "when": "03.12.2024"})
    done = sim.run([take_a, take_a, ("close", {})])
    assert done.verdict == "ok"
    assert done.paths[0].state["phase"] == "closed"
    early = sim.run([take_a, ("close", {})])
    assert early.verdict == "fails"  # the machine's guard: an item still has stock


def test_check_plan_fast_path_agrees_with_run() -> None:
    c = contractsim.loads(EVERYWHERE)
    sim = c.simulator(now="2024-01-01T00:00:00Z")
    plan = [("take", {"name": "a", "when": "03.12.2024"})] * 3
    bound = [sim.bind(tool, args) for tool, args in plan]
    assert sim.check_plan(bound).verdict == sim.run(plan).verdict == "fails"


def test_unknown_state_gives_may_fail() -> None:
    text = """contract lc version "1.0.0"
state { xs: list[int] = [1, 2] }
tool pick(n: int) {
  require first(x for x in xs if x == n) != null else MISSING
  require (n if n > 0 else -n) < 10 else TOO_BIG "{n if n > 0 else -n} is too big"
}
"""
    sim = contractsim.loads(text).simulator(now="2024-01-01T00:00:00Z")
    assert sim.step(sim.initial_state(), "pick", {"n": 2}).verdict == "ok"
    assert sim.step(sim.initial_state(), "pick", {"n": 3}).verdict == "fails"
    assert sim.step(sim.initial_state({"xs": UNKNOWN}), "pick", {"n": 1}).verdict == "may_fail"
    r = sim.step(sim.initial_state({"xs": UNKNOWN}), "pick", {"n": -12})
    assert r.verdict == "fails" and [v.code for v in r.violations] == ["TOO_BIG"]
    assert r.violations[0].message == "12 is too big"  # a conditional in a message hole


# ------------------------------------------------- joining a type with a union (gorilla_fs)

NESTED_NULL = """contract nn version "1.0.0"
state { root: str = "/" }
function key_of(p: str) -> str | null = (null if p == "" else root + p)
predicate deep(p: str) = len(p) > 1
tool find(path: str) {
  let key = (root if path == "." else key_of(path))
  require key != null and deep(key) else NO_SUCH_DIRECTORY "no {path}"
  require (key if path == "/" else null) == null or deep(key) else LOOPS
}
"""


def test_joining_a_type_with_a_nullable_union_stays_flat_so_null_narrows() -> None:
    """`A if C else B` with A a `str` and B a `str | null` is `str | null`, not the nested
    `str | (str | null)` whose hidden null `!= null` could not narrow away (E0301 before)."""
    from contractsim.dsl import types as T

    nullable_str = T.UnionT((T.STR, T.NULL))
    assert T.join(T.STR, nullable_str) == nullable_str
    assert T.join(nullable_str, T.STR) == nullable_str
    assert T.join(T.NULL, nullable_str) == nullable_str
    assert T.join(T.UnionT((T.INT, T.NULL)), T.STR) == T.UnionT((T.INT, T.STR, T.NULL))
    assert T.join(T.UnionT((T.INT, T.STR)), T.UnionT((T.STR, T.INT))).show() == "int | str"
    assert codes(NESTED_NULL) == []
    sim = contractsim.loads(NESTED_NULL).simulator(now="2024-01-01T00:00:00Z")
    state = sim.initial_state({})
    assert sim.step(state, "find", {"path": "ab"}).verdict == "ok"
    bad = sim.step(state, "find", {"path": ""})
    assert (bad.verdict, [v.code for v in bad.violations]) == ("fails", ["NO_SUCH_DIRECTORY"])
