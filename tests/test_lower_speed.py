"""The lowering shortcuts of the seventh speed round (branch s7-lower) change no result: each is
compared with the general code it stands in for.

``_PlainLowerer`` is the lowerer with those methods as they were before the round (spans and
nodes made by their constructors, one dispatch per tree, every message read a character class
at a time, every string through the escape reader); lowering the examples, the golden files,
the doc blocks and corrupted texts with it and with the real lowerer must give the same IR —
node classes, field values and spans — and the same diagnostics.
"""

from __future__ import annotations

import dataclasses
import pickle
import random
import re
from pathlib import Path
from typing import Any, cast

import pytest
from lark import Token, Tree

from contractsim import diagnostics
from contractsim.diagnostics import ContractError, Diagnostic, Span, span_at
from contractsim.dsl import ir
from contractsim.dsl import lower as lower_module
from contractsim.dsl.bulk import make_scalar, node_setters
from contractsim.dsl.lower import _Lowerer, lower
from contractsim.grammar.parse import parse

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```contract\n(.*?)^```", re.S | re.M)


def _sources() -> list[tuple[str, str]]:
    found = [
        (path.name, path.read_text(encoding="utf-8"))
        for path in sorted(ROOT.glob("examples/*/*.contract"))
        + sorted((ROOT / "tests" / "golden").glob("*.contract"))
    ]
    for path in sorted((ROOT / "docs").glob("*.md")):
        for index, match in enumerate(BLOCK.finditer(path.read_text(encoding="utf-8"))):
            found.append((f"{path.name}#{index}", match.group(1)))
    return found


SOURCES = _sources()
EXAMPLES = [(name, text) for name, text in SOURCES if not name.endswith(".md") and "#" not in name]


def _corrupted() -> list[tuple[str, str]]:
    """Each example cut at 30 % and 70 %, with a character deleted there, and with characters
    that upset strings and messages inserted at random places."""
    rnd = random.Random(13)
    out: list[tuple[str, str]] = []
    for name, text in SOURCES[:13]:
        for fraction in (0.3, 0.7):
            at = int(len(text) * fraction)
            out.append((f"{name}@cut{fraction}", text[:at]))
            out.append((f"{name}@del{fraction}", text[:at] + text[at + 1 :]))
        for insert in ("{", "}", "{{", "\\q", "{x", '"', "1e999", "9" * 90):
            at = rnd.randrange(len(text))
            out.append((f"{name}@ins{at}", text[:at] + insert + text[at:]))
    return out


# ------------------------------------------------------------------ the reference lowerer


def _old_matching_brace(text: str, start: int) -> int:
    depth = 0
    quote = False
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quote = False
        elif ch == '"':
            quote = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


class _PlainLowerer(_Lowerer):
    """The methods the round changed, as they were (their bodies before the round)."""

    def span(self, node: Any) -> Span:
        if node is None:
            return Span(file=self.filename)
        if isinstance(node, Token):
            line, col = node.line or 1, node.column or 1
            end_line, end_col = node.end_line or line, node.end_column or col + len(node)
        else:
            meta = node._meta
            if meta is None or getattr(meta, "empty", True):
                return Span(file=self.filename)
            line, col, end_line, end_col = meta.line, meta.column, meta.end_line, meta.end_column
        return Span(file=self.filename, line=line, col=col, end_line=end_line, end_col=end_col)

    def _simple_template(self, text: str, tok: Token, span: Span) -> ir.Template | None:
        return None  # every message through the general reader

    def _string(self, tree: Any) -> ir.ScalarLit:
        text = self.unescape(tree.children[0]).replace("\ue000", "{").replace("\ue001", "}")
        return ir.ScalarLit(span=self.span(tree), value=text)

    def value(self, node: Any) -> Any:
        lowered = self.lower(node)
        return lowered.value if isinstance(lowered, ir.ScalarLit) else lowered

    def _number(self, tree: Any) -> ir.ScalarLit:
        tok = tree.children[0]
        if tok.type == "FLOAT":
            value = float(tok)
            if value in (float("inf"), float("-inf")):
                self._too_big(tok, "the number is too large for a float", "floats go up to 1.8e308")
            return ir.ScalarLit(span=self.span(tree), value=value)
        digits = str(tok).lstrip("0") or "0"
        if len(digits) > 78:
            self._too_big(tok, f"the integer has {len(digits):,} digits")
            return ir.ScalarLit(span=self.span(tree), value=0)
        number = int(digits)
        if number > 1 << 256:
            self._too_big(tok, "the integer is larger than 2**256")
        return ir.ScalarLit(span=self.span(tree), value=number)

    def _literal(self, tree: Any, value: Any) -> ir.ScalarLit:
        return ir.ScalarLit(span=self.span(tree), value=value)

    def _name(self, tree: Any) -> ir.Name:
        return ir.Name(span=self.span(tree), name=str(tree.children[0]))

    def _type_name(self, tree: Any) -> ir.NamedType:
        return ir.NamedType(span=self.span(tree), name=str(tree.children[0]))

    def _type_expr(self, tree: Any) -> ir.TypeExpr:
        options = [self.lower(child) for child in tree.children]
        if len(options) == 1:
            return cast(ir.TypeExpr, options[0])
        return ir.UnionType(span=self.span(tree), options=tuple(options))

    def _type_term(self, tree: Any) -> ir.TypeExpr:
        base = cast(ir.TypeExpr, self.lower(tree.children[0]))
        constraints = tuple(self.lower(c) for c in tree.children[1:])
        if not constraints:
            return base
        return dataclasses.replace(
            base, constraints=base.constraints + constraints, span=self.span(tree)
        )

    def _constraint(self, tree: Any) -> ir.Constraint:
        key, value = tree.children
        lowered = self.lower(value)
        if isinstance(lowered, ir.ScalarLit):
            lowered = lowered.value
        return ir.Constraint(span=self.span(tree), key=str(key), value=lowered)  # type: ignore[arg-type]

    def _binary(self, tree: Any, op: str) -> ir.Binary:
        left, right = tree.children[0], tree.children[-1]
        return ir.Binary(
            span=self.span(tree), op=cast(Any, op), left=self.lower(left), right=self.lower(right)
        )

    def _split_args(self, args: Any) -> Any:
        if args is None:
            return (), ()
        lowered = self.lower(args)
        positional = tuple(a for a in lowered if not isinstance(a, ir.KeywordArg))
        keywords = tuple(a for a in lowered if isinstance(a, ir.KeywordArg))
        return positional, keywords

    def _condition(self, tree: Any, strength: str) -> ir.Condition:
        cond, info = tree.children
        code: str | None = None
        code_span = Span(file=self.filename)
        message = hint = None
        if info is not None:
            for part in info.children:
                if isinstance(part, Token):
                    code, code_span = str(part), self.span(part)
                elif part is None:
                    continue
                elif part.data == "hint":
                    hint = self.template(part.children[0])
                else:
                    message = self.template(part)
        return ir.Condition(
            span=self.span(tree),
            strength=cast(Any, strength),
            cond=self.lower(cond),
            code=code,
            code_span=code_span,
            message=message,
            hint=hint,
        )


def _plain_lower(tree: Tree[Token], filename: str) -> tuple[ir.Contract, list[Diagnostic]]:
    lowerer = _PlainLowerer(filename)
    return cast(ir.Contract, lowerer.lower(tree)), lowerer.diagnostics


def _deep(value: Any) -> Any:
    """``value`` as nested tuples of class names and field values: spans (which ``==`` ignores)
    and the classes of tuples and scalars count."""
    if isinstance(value, Span):
        return ("Span", value.file, value.line, value.col, value.end_line, value.end_col)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__,) + tuple(
            (f.name, _deep(getattr(value, f.name))) for f in dataclasses.fields(value)
        )
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_deep(item) for item in value)
    return (type(value).__name__, value)


def _both(name: str, text: str) -> tuple[Any, Any] | None:
    try:
        tree = parse(text, name)
    except ContractError:
        return None
    results = []
    for lower_with in (lower, _plain_lower):
        contract, diags = lower_with(tree, name)
        results.append((_deep(contract), [_deep(d) for d in diags]))
    return results[0], results[1]


def test_the_reference_overrides_only_rule_methods_that_exist() -> None:
    for name in vars(_PlainLowerer):
        if not name.startswith("__"):
            assert hasattr(_Lowerer, name), name
    # the rule table follows the subclass: its methods are the ones dispatched to
    assert _PlainLowerer.rule_methods["name"] is _PlainLowerer._name
    assert _Lowerer.rule_methods["name"] is _Lowerer._name
    assert _PlainLowerer("f")._rules is _PlainLowerer.rule_methods


@pytest.mark.parametrize(("name", "text"), SOURCES, ids=[name for name, _ in SOURCES])
def test_lowering_unchanged(name: str, text: str) -> None:
    both = _both(name, text)
    if both is None:
        pytest.skip("a syntax error: nothing to lower")
    assert both[0] == both[1]


def test_lowering_of_corrupted_texts_unchanged() -> None:
    lowered = 0
    for name, text in _corrupted():
        both = _both(name, text)
        if both is not None:
            lowered += 1
            assert both[0] == both[1], name
    assert lowered >= 20  # enough of them parse to mean something


# ------------------------------------------------------------------ messages and strings

_MESSAGES = [
    "plain text",
    "",
    "{path}",
    "file {path} not found",
    "{a}{b} and {c}",
    "{len(items)} items, {x + 1} more, {a.b[0]}",
    "{ x }",
    "{}",
    "{1 +}",
    "{{literal}} and {x}",
    "{x}}",
    "}{x}",
    "{x",
    "x}",
    '{f("}")} after',
    '{"a{b}"}',
    "{a {b}}",
    "\\{not a hole\\} {x}",
    "\\\\{x}",
    "tab\\there {x}\\n",
    "\\q unknown {x}",
    "\ue000 held {x}",
    "{true} {null} {in}",
    "émoji ✓ {naïve}",
]


@pytest.mark.parametrize("message", _MESSAGES)
@pytest.mark.parametrize("triple", [False, True])
def test_messages_unchanged(message: str, triple: bool) -> None:
    quoted = '"""' + message + '"""' if triple else '"' + message.replace('"', '\\"') + '"'
    text = (
        'contract d version "1.0.0"\nstate { x: int = 0 }\ntool t(x: int) {\n'
        "  require x > 0 else E_X " + quoted + ' hint "see {x}"\n'
        "  effect { warn W_X " + quoted + " }\n}\n"
    )
    both = _both("m.contract", text)
    assert both is not None
    assert both[0] == both[1]


@pytest.mark.parametrize(
    "message",
    ["first {x}\n  second {x + 1} and {{ }}\n{x}", "first {x}\n  second {x} and {x + 1}\n{x}"],
)
def test_a_multi_line_message_unchanged(message: str) -> None:
    text = (
        'contract d version "1.0.0"\nstate { x: int = 0 }\ntool t(x: int) {\n'
        '  require x > 0 else E_X """' + message + '"""\n}\n'
    )
    both = _both("m.contract", text)
    assert both is not None
    assert both[0] == both[1]


@pytest.mark.parametrize("literal", ['""', '"a"', '"a\\"b"', '"\\u00e9"', 'r"a\\d"', '"""x"""'])
@pytest.mark.parametrize("number", ["0", "007", "123456789012345678", "1234567890123456789", "1.5"])
def test_strings_and_numbers_unchanged(literal: str, number: str) -> None:
    plain = literal if not literal.startswith("r") else '"v"'  # no raw string in a header
    text = (
        f"contract d version {plain}\n  {plain}\nconst c: int = {number}\n"
        f"type T = str max_length {number}\nstate {{ s: str = {literal} }}\n"
        f"tool t(p: int = -{number}) {plain} {{\n"
        f"  require p != {number} and [{number}] != [] and {literal} != {literal}\n}}\n"
    )
    both = _both("s.contract", text)
    assert both is not None
    assert both[0] == both[1]


def test_matching_brace_unchanged() -> None:
    rnd = random.Random(5)
    alphabet = 'ab{}"\\ '
    for _ in range(3000):
        text = "{" + "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(12)))
        assert lower_module._matching_brace(text, 0) == _old_matching_brace(text, 0), text


# ------------------------------------------------------------------ spans and nodes


def _fields(node: Any) -> tuple[Any, ...]:
    return _deep(node)  # type: ignore[no-any-return]


def test_span_makers_make_what_the_constructor_makes() -> None:
    expected = Span(file="f.contract", line=3, col=4, end_line=5, end_col=6)
    made = [
        span_at("f.contract", 3, 4, 5, 6),
        diagnostics._span_at_by_setters("f.contract", 3, 4, 5, 6),
        diagnostics._span_at_by_swap("f.contract", 3, 4, 5, 6),
    ]
    for span in made:
        assert type(span) is Span
        assert span.same_place(expected) and span == expected and hash(span) == hash(expected)
        assert repr(span) == repr(expected)
        assert pickle.loads(pickle.dumps(span)).same_place(expected)
        with pytest.raises(dataclasses.FrozenInstanceError):
            span.line = 9  # type: ignore[misc]
    assert diagnostics.SPAN_SWAP  # CPython: the class assignment works, the fast maker is used
    assert diagnostics.OpenSpan.__slots__ == Span.__slots__


def test_lowering_spans_are_spans() -> None:
    contract, _ = lower(parse(EXAMPLES[0][1], EXAMPLES[0][0]), EXAMPLES[0][0])
    assert type(contract.span) is Span
    assert type(contract.header.version_span) is Span
    assert type(contract.tools[0].span) is Span


def test_node_makers_make_what_the_constructors_make() -> None:
    span = span_at("f", 1, 2, 1, 5)
    left, right = ir.Name(span=span, name="a"), make_scalar(span, 1)
    pairs = [
        (lower_module._make_name(span, "x"), ir.Name(span=span, name="x")),
        (lower_module._make_named_type(span, "int"), ir.NamedType(span=span, name="int")),
        (
            lower_module._make_binary(span, "+", left, right),
            ir.Binary(span=span, op="+", left=left, right=right),
        ),
        (lower_module._make_part(span, "t", None), ir.TemplatePart(span=span, text="t")),
        (lower_module._make_part(span, None, left), ir.TemplatePart(span=span, expr=left)),
        (make_scalar(span, "s"), ir.ScalarLit(span=span, value="s")),
    ]
    for made, constructed in pairs:
        assert _fields(made) == _fields(constructed)
        assert made == constructed and hash(made) == hash(constructed)
        assert ir.dump_json(made) == ir.dump_json(constructed)
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.span = span  # type: ignore[misc]


def test_node_setters_refuse_another_layout() -> None:
    assert node_setters(ir.Name, ["span", "kind", "name", "state"]) is not None
    assert node_setters(ir.Name, ["span", "kind", "name"]) is None  # a field missing
    assert node_setters(ir.Name, ["span", "name", "kind", "state"]) is None  # another order
