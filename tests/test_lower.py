"""Lowering: parse trees become the expected IR, with correct spans that equality ignores; every
grammar rule that can reach the lowerer has a lowering method."""

from __future__ import annotations

from pathlib import Path

import pytest
from lark import Lark

import contractsim
from contractsim.diagnostics import Span
from contractsim.dsl import ir
from contractsim.dsl.lower import LOWERED_RULES, lower
from contractsim.grammar.parse import grammar_text, parse, parser

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*/*.contract"))
HEADER = 'contract demo version "1.0.0"\n'


def lowered(text: str, filename: str = "t.contract") -> ir.Contract:
    contract, diags = lower(parse(text, filename), filename)
    assert not diags, diags
    return contract


def where(span: Span) -> tuple[int, int, int, int]:
    return (span.line, span.col, span.end_line, span.end_col)


# ------------------------------------------------------------------------------ rule coverage


def _children_count(rule: object) -> int | None:
    """How many children a rule's tree gets for this expansion; None when it varies."""
    count = 0
    variable = False
    for sym in rule.expansion:  # type: ignore[attr-defined]
        if sym.is_term:
            if not sym.filter_out:
                count += 1
        elif sym.name.startswith("_"):
            variable = True  # an inlined helper (e.g. a `*` repetition): one or more children
            count += 1
        else:
            count += 1
    count += sum(1 for placeholder in rule.options.empty_indices if placeholder)  # type: ignore[attr-defined]
    return None if variable else count


def rules_needing_lowering(lark: Lark) -> tuple[set[str], set[str]]:
    """(names the lowerer can meet as a tree, inlined rule names that never reach it)."""
    needed: set[str] = set()
    seen: set[str] = set()
    for rule in lark.rules:
        name = rule.alias or rule.origin.name
        seen.add(name)
        if name.startswith("_"):
            continue  # lark splices `_rule` children into the parent: never a tree of its own
        if rule.options.expand1 and rule.alias is None and _children_count(rule) == 1:
            continue  # `?rule` with exactly one child is replaced by that child
        needed.add(name)
    inlined = {n for n in seen if not n.startswith("_")} - needed
    return needed, inlined


def test_every_grammar_rule_has_a_lowering() -> None:
    needed, _ = rules_needing_lowering(parser())
    missing = needed - LOWERED_RULES
    assert not missing, f"grammar rules without a `_rule` method in lower.py: {sorted(missing)}"


def test_inlined_rules_are_exactly_the_single_child_question_rules() -> None:
    _, inlined = rules_needing_lowering(parser())
    # these `?rules` only ever pass one child through; the aliases they carry are lowered
    assert inlined == {
        "item",
        "state_init",
        "type_atom",
        "literal_value",
        "tool_item",
        "stmt",
        "stmt_body",
        "expr",
        "or_expr",
        "and_expr",
        "not_expr",
        "comparison",
        "sum",
        "product",
        "unary",
        "postfix",
        "atom",
        "arg",
    }


@pytest.mark.parametrize(
    "extra",
    [
        '%extend item: widget_decl\nwidget_decl: "widget" NAME\n',  # a plain new rule
        '?extra_atom: "(" NAME NAME ")"\n',  # a `?rule` whose trees have two children
        '%extend item: "widget" NAME -> widget_alias\n',  # a new alias
        "?maybe: NAME [NAME]\n",  # a `?rule` whose placeholder makes it a tree
    ],
)
def test_a_new_rule_without_lowering_is_caught(extra: str) -> None:
    grammar = grammar_text() + "\n" + extra
    extended = Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        maybe_placeholders=True,
        start=[
            "start",
            "expr",
            *(["extra_atom"] if "extra_atom" in extra else []),
            *(["maybe"] if "maybe" in extra else []),
        ],
    )
    needed, _ = rules_needing_lowering(extended)
    assert needed - LOWERED_RULES, "the coverage check would not notice the new rule"


def test_question_rules_are_inlined_in_practice() -> None:
    """Cross-check the static analysis against real trees: no exempt rule name ever shows up."""
    _, inlined = rules_needing_lowering(parser())
    names: set[str] = set()
    for path in EXAMPLES:
        tree = parse(path.read_text("utf-8"), str(path))
        names |= {t.data for t in tree.iter_subtrees()}
    assert not names & inlined
    assert names <= LOWERED_RULES


# ------------------------------------------------------------------------------ representative IR


def test_header_and_declarations() -> None:
    c = lowered(
        HEADER.replace("\n", ' "a demo"\n')
        + "const MAX = 10\n"
        + 'event late "too slow"\n'
        + "goal done = MAX > 3\n"
        + "predicate big(n: int) = n > MAX\n"
    )
    assert c.header.name == "demo" and c.header.version == "1.0.0"
    assert c.header.description == "a demo"
    assert where(c.header.version_span) == (1, 23, 1, 30)
    (const,) = c.consts
    assert const.name == "MAX" and const.value == ir.ScalarLit(value=10) and const.type is None
    assert where(const.span) == (2, 7, 2, 10)
    assert c.events == (ir.EventDecl(name="late", description="too slow"),)
    (goal,) = c.goals
    assert goal.cond == ir.Binary(op=">", left=ir.Name(name="MAX"), right=ir.ScalarLit(value=3))
    (pred,) = c.predicates
    assert pred.params == (ir.Param(name="n", type=ir.NamedType(name="int")),)


def test_types() -> None:
    c = lowered(
        HEADER
        + 'type Path = str pattern r"^/" max_length 4096\n'
        + 'type Color = enum { red, "dark blue" }\n'
        + 'type User = record { name: str, email?: str = "x" "mail" }\n'
        + "type Q = union by op { and: User, term: User }\n"
        + "type J = int | list[str] | null\n"
        + "type M = map[str, tuple[int, float]]\n"
    )
    path, color, user, q, j, m = (t.type for t in c.types)
    assert path == ir.NamedType(
        name="str",
        constraints=(
            ir.Constraint(key="pattern", value="^/"),
            ir.Constraint(key="max_length", value=4096),
        ),
    )
    assert where(path.constraints[0].span) == (2, 17, 2, 30)
    assert color == ir.EnumType(
        members=(ir.EnumMember(value="red"), ir.EnumMember(value="dark blue"))
    )
    assert user == ir.RecordType(
        fields=(
            ir.RecordField(name="name", type=ir.NamedType(name="str")),
            ir.RecordField(
                name="email",
                type=ir.NamedType(name="str"),
                optional=True,
                default=ir.ScalarLit(value="x"),
                description="mail",
            ),
        )
    )
    assert isinstance(q, ir.TaggedUnionType) and q.tag_field == "op"
    assert [v.tag for v in q.variants] == ["and", "term"]
    assert j == ir.UnionType(
        options=(
            ir.NamedType(name="int"),
            ir.GenericType(name="list", args=(ir.NamedType(name="str"),)),
            ir.NullType(),
        )
    )
    assert m == ir.GenericType(
        name="map",
        args=(
            ir.NamedType(name="str"),
            ir.GenericType(
                name="tuple", args=(ir.NamedType(name="int"), ir.NamedType(name="float"))
            ),
        ),
    )


def test_negative_constraint_and_literals() -> None:
    c = lowered(
        HEADER
        + "type T = int min -5 max 5\nconst A = -2.5\nconst B = [1, 2]\n"
        + 'const C = {}\nconst D = {1}\nconst E = {"a": 1}\nconst F = (1, "x")\n'
        + 'const G = r"\\d"\nconst H = "a\\tb\\u0041"\nconst I = """two\nlines"""\n'
    )
    assert c.types[0].type.constraints[0].value == -5
    values = {k.name: k.value for k in c.consts}
    assert values["A"] == ir.ScalarLit(value=-2.5)
    assert values["B"] == ir.Collection(
        type="list", items=(ir.ScalarLit(value=1), ir.ScalarLit(value=2))
    )
    assert values["C"] == ir.Collection(type="empty")
    assert values["D"] == ir.Collection(type="set", items=(ir.ScalarLit(value=1),))
    assert values["E"] == ir.MapLit(
        entries=(ir.MapEntry(key=ir.ScalarLit(value="a"), value=ir.ScalarLit(value=1)),)
    )
    assert values["F"] == ir.Collection(
        type="tuple", items=(ir.ScalarLit(value=1), ir.ScalarLit(value="x"))
    )
    assert values["G"] == ir.ScalarLit(value="\\d", raw=True)
    assert values["H"] == ir.ScalarLit(value="a\tbA")
    assert values["I"] == ir.ScalarLit(value="two\nlines")


def test_expression_precedence_and_spans() -> None:
    line = "const A = 1 + 2 * 3 > 4 and not x.y[0] in s or f(1, k=2)"
    c = lowered(HEADER + line + "\n")
    e = c.consts[0].value
    assert e == ir.Binary(
        op="or",
        left=ir.Binary(
            op="and",
            left=ir.Binary(
                op=">",
                left=ir.Binary(
                    op="+",
                    left=ir.ScalarLit(value=1),
                    right=ir.Binary(
                        op="*", left=ir.ScalarLit(value=2), right=ir.ScalarLit(value=3)
                    ),
                ),
                right=ir.ScalarLit(value=4),
            ),
            right=ir.Unary(
                op="not",
                operand=ir.Binary(
                    op="in",
                    left=ir.Index(
                        obj=ir.Attr(obj=ir.Name(name="x"), name="y"), key=ir.ScalarLit(value=0)
                    ),
                    right=ir.Name(name="s"),
                ),
            ),
        ),
        right=ir.Call(
            func="f",
            args=(ir.ScalarLit(value=1),),
            kwargs=(ir.KeywordArg(name="k", value=ir.ScalarLit(value=2)),),
        ),
    )
    end = len(line) + 1
    assert where(e.span) == (2, 11, 2, end)
    assert isinstance(e.right, ir.Call)
    f_col = line.index("f(") + 1
    assert where(e.right.span) == (2, f_col, 2, end)
    assert where(e.right.func_span) == (2, f_col, 2, f_col + 1)
    attr = e.left.right.operand.left.obj  # type: ignore[union-attr]
    y_col = line.index("y[") + 1
    assert where(attr.name_span) == (2, y_col, 2, y_col + 1)


def test_quantifiers_not_in_and_negation() -> None:
    c = lowered(HEADER + "const A = all(x > 0 for x in xs) and 1 not in ys and -n < 0\n")
    e = c.consts[0].value
    assert isinstance(e, ir.Binary)
    q = e.left.left  # type: ignore[union-attr]
    assert q == ir.Quantifier(
        op="all",
        var="x",
        coll=ir.Name(name="xs"),
        body=ir.Binary(op=">", left=ir.Name(name="x"), right=ir.ScalarLit(value=0)),
    )
    assert e.left.right.op == "not in"  # type: ignore[union-attr]
    assert e.right.left == ir.Unary(op="-", operand=ir.Name(name="n"))  # type: ignore[union-attr]


def test_tool() -> None:
    c = lowered(
        HEADER
        + "event late\n"
        + 'tool send(to: str format "email", n: int = 1, note?: str "why") -> record { id: str }\n'
        + '    "Sends."\n    cost 1 + n\n    tags [mail.send, mail]\n'
        + "    risk destructive, needs_confirmation\n"
        + "{\n"
        + '  require n > 0 else BAD_N "bad {n}" hint "use {n + 1}"\n'
        + "  should n < 9 else BIG\n"
        + "  ensure old(n) == n\n"
        + "  effect { let k = n; s.add(k); m[k].f = 1; x += 2; x -= 1 }\n"
        + "  outcome ok success\n"
        + '  outcome slow fails LATE "late" on late probability 0.5 when n > 1 { warn W "w" }\n'
        + "  reports { processed: int }\n"
        + "}\n"
    )
    (tool,) = c.tools
    assert tool.name == "send" and tool.description == "Sends."
    assert [p.name for p in tool.params] == ["to", "n", "note"]
    assert tool.params[0].type.constraints == (ir.Constraint(key="format", value="email"),)
    assert tool.params[1].default == ir.ScalarLit(value=1)
    assert tool.params[2].optional and tool.params[2].description == "why"
    assert tool.cost == ir.Binary(op="+", left=ir.ScalarLit(value=1), right=ir.Name(name="n"))
    assert [t.name for t in tool.tags] == ["mail.send", "mail"]
    assert [r.name for r in tool.risks] == ["destructive", "needs_confirmation"]
    req, should, ensure = tool.conditions
    assert (req.strength, req.code, should.code, ensure.code) == ("require", "BAD_N", "BIG", None)
    assert where(req.code_span) == (9, 22, 9, 27)
    assert req.message is not None and req.message.source == "bad {n}"
    assert [p.text for p in req.message.parts] == ["bad ", None]
    assert req.message.parts[1].expr == ir.Name(name="n")
    assert req.hint is not None and req.hint.parts[1].expr == ir.Binary(
        op="+", left=ir.Name(name="n"), right=ir.ScalarLit(value=1)
    )
    assert ensure.cond.left == ir.Call(func="old", args=(ir.Name(name="n"),))  # type: ignore[union-attr]
    let, add, set_field, inc, dec = tool.effects
    assert let == ir.Let(name="k", value=ir.Name(name="n"))
    assert add == ir.MethodCall(target=ir.Name(name="s"), method="add", args=(ir.Name(name="k"),))
    assert set_field == ir.Assign(
        target=ir.Attr(obj=ir.Index(obj=ir.Name(name="m"), key=ir.Name(name="k")), name="f"),
        value=ir.ScalarLit(value=1),
    )
    assert (inc.op, dec.op) == ("+=", "-=")  # type: ignore[union-attr]
    ok, slow = tool.outcomes
    assert ok == ir.Outcome(name="ok", outcome="success")
    assert slow.outcome == "fails" and slow.code == "LATE"
    assert slow.event == ir.EventRef(name="late", probability=0.5)
    assert slow.when is not None and slow.body[0] == ir.Warn(
        code="W", message=ir.Template(source="w", parts=(ir.TemplatePart(text="w"),))
    )
    assert tool.reports == (ir.RecordField(name="processed", type=ir.NamedType(name="int")),)


def test_template_hole_spans_point_into_the_string() -> None:
    c = lowered(HEADER + 'tool t(n: int) {\n  require n > 0 else BAD "n is {n + 1}!"\n}\n')
    message = c.tools[0].conditions[0].message
    assert message is not None
    hole = message.parts[1].expr
    assert isinstance(hole, ir.Binary)
    # `n + 1` sits at line 3, columns 33..38 of the source
    assert where(hole.left.span) == (3, 33, 3, 34)
    assert where(hole.span) == (3, 33, 3, 38)


IF_LINE = "    if x != null { s.add(x) } else if y { z = 1 } else { z = 2 };"


def test_statements_if_for_report() -> None:
    c = lowered(
        HEADER
        + "tool t(x: str | null) {\n  effect {\n"
        + IF_LINE
        + "\n"
        + "    for i in items { report processed = i, dropped = 0 }\n"
        + "  }\n}\n"
    )
    if_stmt, for_stmt = c.tools[0].effects
    assert isinstance(if_stmt, ir.If)
    assert if_stmt.cond == ir.Binary(
        op="!=", left=ir.Name(name="x"), right=ir.ScalarLit(value=None)
    )
    (nested,) = if_stmt.orelse
    assert isinstance(nested, ir.If) and nested.orelse == (
        ir.Assign(target=ir.Name(name="z"), value=ir.ScalarLit(value=2)),
    )
    assert where(if_stmt.span) == (4, 5, 4, IF_LINE.index(";") + 1)
    assert isinstance(for_stmt, ir.For) and for_stmt.var == "i"
    (report,) = for_stmt.body
    assert report == ir.Report(
        fields=(
            ir.ReportField(name="processed", value=ir.Name(name="i")),
            ir.ReportField(name="dropped", value=ir.ScalarLit(value=0)),
        )
    )


def test_state_and_unknown() -> None:
    c = lowered(HEADER + 'state {\n  a: int = 1 "the a",\n  b: bool = unknown\n}\n')
    a, b = c.state
    assert a == ir.StateVar(
        name="a", type=ir.NamedType(name="int"), init=ir.ScalarLit(value=1), description="the a"
    )
    assert b.init is None
    assert where(a.span) == (3, 3, 3, 4)
    assert where(b.span) == (4, 3, 4, 4)


def test_flow_and_machine() -> None:
    c = lowered(
        HEADER
        + "tool t() {\n  outcome done success\n  flow {\n    initial a\n    step b { warn SLOW }\n"
        + "    a -> b when true\n    b -> outcome done on late probability 0.1\n"
        + "    b -> outcome done\n"
        + "  }\n}\n"
        + 'machine m "proto" {\n  states s1, s2,\n  initial s1\n  final s1, s2\n'
        + "  s1 -> s2 on t.done when true\n  s2 -> s1 on t\n}\n"
    )
    flow = c.tools[0].flow
    assert flow is not None and flow.initial == "a"
    assert where(flow.initial_span) == (5, 13, 5, 14)
    assert [s.name for s in flow.steps] == ["b"]
    first, event, last = flow.transitions
    assert (first.source, first.target, first.to_outcome) == ("a", "b", False)
    assert first.when == ir.ScalarLit(value=True)
    assert event.to_outcome and event.event == ir.EventRef(name="late", probability=0.1)
    assert where(event.target_span) == (8, 18, 8, 22)
    assert last.event is None and last.when is None
    (m,) = c.machines
    assert m.description == "proto"
    assert [s.name for s in m.states] == ["s1", "s2"]
    assert [s.name for s in m.initial] == ["s1"]
    assert [s.name for s in m.finals] == ["s1", "s2"]
    t1, t2 = m.transitions
    assert (t1.source, t1.target, t1.tool, t1.outcome) == ("s1", "s2", "t", "done")
    assert where(t1.outcome_span) == (16, 17, 16, 21)
    assert t2.outcome is None and t2.when is None


def test_quantifier_name_is_checked_while_lowering() -> None:
    _, diags = lower(parse(HEADER + "const A = none(x for x in xs)\n", "q"), "q")
    assert [d.code for d in diags] == ["E0208"]
    assert where(diags[0].span) == (2, 11, 2, 15)


# ------------------------------------------------------------------------------ spans and equality


def test_spans_are_ignored_by_equality() -> None:
    a = Span(file="a", line=1, col=2, end_line=3, end_col=4)
    b = Span(file="b", line=9, col=9, end_line=9, end_col=9)
    assert a == b and hash(a) == hash(b)
    assert not a.same_place(b)


def _respaced(text: str) -> str:
    """The same contract with different white space: every space and newline outside strings
    and comments is doubled (and lines are indented)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith('"""', i):
            j = text.index('"""', i + 3) + 3
        elif ch == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" and text[i - 1] != "r" else 1
            j += 1
        elif ch == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif ch == " ":
            out.append("   ")
            i += 1
            continue
        elif ch == "\n":
            out.append("\n\n  ")
            i += 1
            continue
        else:
            j = i + 1
        out.append(text[i:j])
        i = j
    return "".join(out)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_whitespace_does_not_change_the_ir(path: Path) -> None:
    text = path.read_text("utf-8")
    other = _respaced(text)
    assert other != text
    a, b = lowered(text, "a"), lowered(other, "b")
    assert a == b
    # …while the positions did move
    assert not a.tools[0].span.same_place(b.tools[0].span)


def test_examples_load_through_the_api() -> None:
    """The API's IR is the lowered one, with each `{}` written as the collection the checker
    found it to be."""
    from contractsim.dsl.check import check_and_resolve

    for path in EXAMPLES:
        contract = contractsim.load(path)
        plain = lowered(path.read_text("utf-8"))
        assert contract.ir == check_and_resolve(plain)[0]
