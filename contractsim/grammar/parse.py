"""Text → lark parse tree. Syntax errors become diagnostics here, in exactly one place."""

from __future__ import annotations

import functools
import re
from importlib import resources

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..diagnostics import ContractError, Diagnostic, Span, error
from . import driver, literals, tables

MAX_NESTING = 64
"""Deepest bracket nesting accepted; deeper input is refused before parsing."""


_OPENERS = {"(": ")", "[": "]", "{": "}"}
_TOP_LEVEL = frozenset(
    (
        "type",
        "state",
        "const",
        "predicate",
        "function",
        "event",
        "goal",
        "tool",
        "machine",
        "contract",
    )
)
_CLOSERS = {")": "(", "]": "[", "}": "{"}

# How the parser's terminal names read in a message.
_TERMINAL_NAMES = {
    "NAME": "a name",
    "STRING": "a string",
    "LONG_STRING": "a string",
    "RAW_STRING": 'a raw string r"…"',
    "INT": "a number",
    "FLOAT": "a number",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "COMMA": "`,`",
    "COLON": "`:`",
    "SEMICOLON": "`;`",
    "EQUAL": "`=`",
    "DOT": "`.`",
    "MINUS": "`-`",
    "VBAR": "`|`",
    "__ANON_0": "`->`",
    "COMP_OP": "a comparison",
    "ADD_OP": "`+` or `-`",
    "MUL_OP": "`*`, `/`, `//` or `%`",
    "AUG_OP": "`+=` or `-=`",
    "OPTIONAL": "`?`",
    "CONSTRAINT_KEY": "a constraint (pattern, min, max, …)",
    "OUTCOME_KIND": "`success`, `partial` or `fails`",
    "$END": "end of file",
}


@functools.lru_cache(maxsize=1)
def grammar_text() -> str:
    """The grammar shipped with the package."""
    return resources.files("contractsim.grammar").joinpath("contract.lark").read_text("utf-8")


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    """The LALR parser, loaded once per process from the tables built ahead of time (see
    :mod:`contractsim.grammar.tables`), or built from the grammar when they are stale. Two start
    symbols: whole files and ``expr`` (message templates parse their ``{…}`` holes with it)."""
    grammar = grammar_text()
    return tables.load_stored(grammar) or tables.build(grammar)


def parse(text: str, filename: str = "<string>", start: str = "start") -> Tree[Token]:
    """Parse contract text into a lark tree, or raise :class:`ContractError` with one diagnostic."""
    if start == "start" and _blank(text):
        raise ContractError(
            [
                error(
                    "E0105",
                    "the contract is empty",
                    Span(file=filename, line=1, col=1, end_line=1, end_col=1),
                    hint='a contract starts with a header: contract NAME version "1.0.0"',
                )
            ],
            {filename: text},
        )
    nesting = _nesting_problem(text, filename)
    if nesting is not None:
        raise ContractError([nesting], {filename: text})
    try:
        if start == "start":
            tree = _parse_with_fast_literals(text)
            if tree is not None:
                return tree
        return _parse_tree(text, start)
    except UnexpectedInput as exc:
        raise ContractError([_syntax_diagnostic(exc, text, filename)], {filename: text}) from None


def _parse_tree(text: str, start: str) -> Tree[Token]:
    """Parse, reading keywords as names where only a name fits.

    A keyword the parser refuses is retried as a name on the spot (:func:`_keyword_as_name`). A
    keyword it took but that the next token shows was a name (``report: int`` on its own line in
    ``state { … }``; ``report`` starts a statement elsewhere) is found when the parse fails just
    after it; the text is parsed again with that word read as a name, a few times at most.

    Valid text is parsed by :mod:`.driver` (lark's tables in a faster loop, the same tree); on
    any error lark's own loop parses it again and everything below applies."""
    tree = driver.parse_valid(parser(), text, start)
    if tree is not None:
        return tree
    try:
        return parser().parse(text, start=start, on_error=lambda e: _keyword_as_name(e, text))
    except UnexpectedToken as first:
        failure: UnexpectedToken = first
        as_names: set[int] = set()
        for _ in range(_MAX_REREADS):
            keyword = _keyword_just_taken(failure, text)
            if keyword is None or keyword.start_pos is None or keyword.start_pos in as_names:
                break
            as_names.add(keyword.start_pos)
            try:
                return _parse_reading_names(text, start, as_names)
            except UnexpectedToken as again:
                failure = again
            except UnexpectedInput:
                break
        if (failure.token.start_pos or 0) > (first.token.start_pos or 0):
            raise failure from None
        raise


_MAX_REREADS = 8


def _parse_reading_names(text: str, start: str, as_names: set[int]) -> Tree[Token]:
    """Parse with the words starting at the offsets ``as_names`` read as names."""
    interactive = parser().parse_interactive(text, start=start)
    state = interactive.parser_state
    token: Token | None = None
    try:
        for token in interactive.lexer_thread.lex(state):  # type: ignore[no-untyped-call]
            if token.start_pos in as_names:
                token = Token.new_borrow_pos("NAME", str(token), token)
            try:
                state.feed_token(token)
            except UnexpectedToken as exc:
                exc.interactive_parser = interactive
                if not _keyword_as_name(exc, text):
                    raise
        end = Token.new_borrow_pos("$END", "", token) if token else Token("$END", "", 0, 1, 1)
        tree: Tree[Token] = state.feed_token(end, True)
    except UnexpectedToken as exc:
        if exc.interactive_parser is None:
            exc.interactive_parser = interactive
        raise
    return tree


def _keyword_just_taken(exc: UnexpectedToken, text: str) -> Token | None:
    """The keyword the parser shifted last, when the parse failed right after it."""
    if exc.interactive_parser is None:
        return None
    values = exc.interactive_parser.parser_state.value_stack
    # the keyword, or the keyword and one token after it: `if -> a` after a machine guard
    # takes `if` for a conditional expression and `-` for a minus before it fails
    for last in reversed(values[-2:]):
        if (
            isinstance(last, Token)
            and last.type != "NAME"
            and isinstance(last.start_pos, int)
            and _IDENTIFIER.fullmatch(str(last))
            and _NAME_USE.match(text, last.end_pos or 0)
        ):
            return last
    return None


def _keyword_as_name(exc: UnexpectedInput, text: str) -> bool:
    """Read a keyword as a name where only a name fits (lark's ``on_error`` hook).

    LALR merges parser states, so after a type or an expression the contextual lexer also admits
    keywords that may follow one elsewhere (``tags``, ``cost``, ``type`` …); a field or state
    variable on the next line named like one arrives as that keyword. When the parser then refuses
    the keyword but would take a name, it gets the name."""
    if not isinstance(exc, UnexpectedToken) or exc.interactive_parser is None:
        return False
    tok = exc.token
    if (
        tok.type == "NAME"
        or "NAME" not in exc.expected
        or not _IDENTIFIER.fullmatch(str(tok))
        or not _NAME_USE.match(text, tok.end_pos or 0)
    ):
        return False
    exc.interactive_parser.feed_token(Token.new_borrow_pos("NAME", str(tok), tok))
    return True


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# what follows a field, state variable or assigned name (`tags: str`, `cost += 1`, `risk[k] = 1`);
# a keyword followed by anything else stays a keyword, so its syntax error reads as before
_NAME_USE = re.compile(r"[ \t\r\n]*(?:\?|:|=(?!=)|\+=|-[=>]|\.|\[)")


def _parse_with_fast_literals(text: str) -> Tree[Token] | None:
    """The tree of a text with large literals, their elements read by :mod:`.literals` rather
    than by lark; None when there are none, or when lark must read the text as it is."""
    blanked, found = literals.blank_literals(text, _keywords())
    if not found:
        return None
    try:
        tree = _parse_tree(blanked, "start")
    except UnexpectedInput:
        return None  # the error is reported from the text as written
    return tree if literals.splice_literals(tree, found) else None


@functools.lru_cache(maxsize=1)
def _keywords() -> frozenset[str]:
    """The words the grammar reserves somewhere (a literal that uses one is left to lark)."""
    return frozenset(
        t.pattern.value
        for t in parser().terminals
        if t.pattern.type == "str" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", t.pattern.value)
    )


def _blank(text: str) -> bool:
    """Whether the text holds nothing but white space and comments."""
    stripped = text.lstrip()
    if not stripped.startswith("#"):
        # nothing but white space, or the first line with anything else is not a comment
        # (only white space precedes that character on its line): no need to split it all
        return not stripped
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


MAX_TREE_DEPTH = 300
"""Deepest parse tree accepted: long operator chains (``a + a + … + a``) nest without brackets."""


def nesting_depth_problem(tree: Tree[Token], filename: str) -> Diagnostic | None:
    """Refuse parse trees too deep for the recursive passes (measured without recursion).

    The tree is measured level by level (one list of the next level's nodes at a time, which
    costs a fraction of a node-by-node walk); only a tree deeper than the limit is walked
    again, depth first, to name the node the diagnostic points at."""
    bulk = literals.BulkLiteral
    level = [tree]
    depth = 1  # of the nodes in `level`
    while level:
        if depth > MAX_TREE_DEPTH:
            return _first_node_too_deep(tree, filename)
        # the nodes one level down that _first_node_too_deep would visit (a bulk literal
        # not as deep as the limit is not: its tree need not be built)
        level = [
            child
            for node in level
            for child in node.children
            if isinstance(child, Tree)
            and (child.__class__ is not bulk or depth + child.height > MAX_TREE_DEPTH)
        ]
        depth += 1
    return None


def _first_node_too_deep(tree: Tree[Token], filename: str) -> Diagnostic | None:
    """The diagnostic for the first node deeper than the limit in a depth-first walk."""
    stack: list[tuple[Tree[Token], int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            meta = node.meta
            line = getattr(meta, "line", 1)
            col = getattr(meta, "column", 1)
            return error(
                "E0104",
                f"the expression nests more than {MAX_TREE_DEPTH} levels deep (a long chain of "
                "operators, or `not`/`-` repeated)",
                Span(file=filename, line=line, col=col, end_line=line, end_col=col + 1),
                hint="split it with `let`, a predicate or a quantifier such as all(… for x in …)",
            )
        for child in node.children:
            if isinstance(child, Tree):
                if (
                    child.__class__ is literals.BulkLiteral
                    and depth + child.height <= MAX_TREE_DEPTH
                ):
                    continue  # not as deep as the limit: its tree need not be built
                stack.append((child, depth + 1))
    return None


# what the bracket-nesting check stops at; everything in between only moves the column
_NESTING_STOP = re.compile(r'[#"\n(\[{)\]}]')
# the body of a one-line string after its `"`: up to the closing quote or the end of the line,
# a backslash escaping whatever follows it (a newline too)
_STRING_BODY = re.compile(r'[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*')


# strings and comments, skipped as _located_nesting_problem skips them (for the depth alone)
_NOT_CODE = re.compile(r'#[^\n]*|"""[\s\S]*?(?:"""|\Z)|"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*[\s\S]?')
_BRACKETS_ONLY = {ord(c): None for c in map(chr, range(0x80)) if c not in "()[]{}"}


def _nesting_problem(text: str, filename: str) -> Diagnostic | None:
    """Refuse pathological bracket nesting before lark and the recursive passes see it."""
    if not _may_nest_too_deep(text):
        return None
    return _located_nesting_problem(text, filename)


def _may_nest_too_deep(text: str) -> bool:
    """Whether the brackets outside strings and comments nest deeper than MAX_NESTING (found
    with C-speed string operations and one loop over the brackets alone)."""
    if sum(text.count(c) for c in "([{") <= MAX_NESTING:
        return False
    code = _NOT_CODE.sub("", text)
    brackets = code.translate(_BRACKETS_ONLY)
    if not brackets.isascii():  # other characters than ASCII are left by translate
        brackets = "".join(c for c in brackets if c in "()[]{}")
    depth = 0
    for ch in brackets:
        if ch in "([{":
            depth += 1
            if depth > MAX_NESTING:
                return True
        elif depth:
            depth -= 1
    return False


def _located_nesting_problem(text: str, filename: str) -> Diagnostic | None:
    """The first bracket nested deeper than MAX_NESTING, with its line and column."""
    depth = 0
    line, col = 1, 1
    i, n = 0, len(text)
    search = _NESTING_STOP.search
    while i < n:
        m = search(text, i)
        if m is None:
            return None
        col += m.start() - i
        i = m.start()
        ch = text[i]
        if ch == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            col += j - i
            i = j
            continue
        if ch == '"':
            j = _STRING_BODY.match(text, i + 1).end()  # type: ignore[union-attr]
            if j < n and text[j] == "\\":  # a backslash ending the text
                j += 2
            if text.startswith('"""', i):
                k = text.find('"""', i + 3)
                j = n if k < 0 else k + 2
                newlines = text.count("\n", i, j)
                if newlines:
                    line += newlines
                    col = j - text.rfind("\n", i, j)
                    i = j + 1
                    continue
            col += j + 1 - i
            i = j + 1
            continue
        if ch == "\n":
            line, col = line + 1, 1
            i += 1
            continue
        if ch in _OPENERS:
            depth += 1
            if depth > MAX_NESTING:
                return error(
                    "E0104",
                    f"brackets are nested more than {MAX_NESTING} deep",
                    Span(file=filename, line=line, col=col, end_line=line, end_col=col + 1),
                    hint="split the expression with `let`, a predicate or a named type",
                )
        else:
            depth = max(depth - 1, 0)
        i += 1
        col += 1
    return None


def _syntax_diagnostic(exc: UnexpectedInput, text: str, filename: str) -> Diagnostic:
    line = max(getattr(exc, "line", 1) or 1, 1)
    col = max(getattr(exc, "column", 1) or 1, 1)
    span = Span(file=filename, line=line, col=col, end_line=line, end_col=col + 1)
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        if ch == '"' or (ch == "r" and text[pos : pos + 2] == 'r"'):
            return error(
                "E0102",
                "unterminated string literal",
                span,
                hint='close the string with `"` on the same line, or use """…""" for text that '
                "spans lines",
            )
        return error(
            "E0101",
            f"unexpected character {ch!r}",
            span,
            hint=_expected_hint(exc.allowed or set()),
        )
    if isinstance(exc, UnexpectedEOF) or (
        isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
    ):
        opened = _unclosed_bracket(text)
        end_line = text.count("\n") + 1
        end_col = len(text) - (text.rfind("\n") + 1) + 1
        eof_span = Span(
            file=filename, line=end_line, col=end_col, end_line=end_line, end_col=end_col
        )
        if opened is not None:
            ch, oline, ocol = opened
            return error(
                "E0103",
                f"`{ch}` opened at line {oline}, column {ocol} is never closed",
                Span(file=filename, line=oline, col=ocol, end_line=oline, end_col=ocol + 1),
                hint=f"add the matching `{_OPENERS[ch]}`",
            )
        expected = exc.expected if isinstance(exc, UnexpectedToken) else set(exc.expected)
        return error(
            "E0101", "unexpected end of file", eof_span, hint=_expected_hint(set(expected))
        )
    assert isinstance(exc, UnexpectedToken)
    tok = exc.token
    if tok.type == "NAME" and str(tok) == "r" and _unterminated_raw(text, tok.end_pos):
        return error(
            "E0102",
            "unterminated raw string literal",
            span,
            hint='close the raw string with `"` on the same line',
        )
    end_col = (tok.end_column or col + 1) if tok.end_line == tok.line else col + len(str(tok))
    span = Span(file=filename, line=line, col=col, end_line=line, end_col=max(end_col, col + 1))
    if tok.type in ("RBRACE", "RPAR", "RSQB"):
        unmatched = _unmatched_closer(text)
        if unmatched is not None:
            ch, uline, ucol = unmatched
            return error(
                "E0103",
                f"unmatched `{ch}`",
                Span(file=filename, line=uline, col=ucol, end_line=uline, end_col=ucol + 1),
                hint=f"there is no `{_CLOSERS[ch]}` before it to close; remove it or add one",
            )
    if tok.type in ("STRING", "LONG_STRING"):
        message = "unexpected string"
    else:
        message = f"unexpected `{tok}`"
    expected = set(exc.expected)
    if expected == {"__ANON_0"} or "__ANON_0" in expected and len(expected) <= 2:
        message += "; a transition needs `->` between its two states"
    hint: str | None = _expected_hint(expected)
    if str(tok) == "else" and "LBRACE" in expected:
        # `x = a if c else b` in an effect: there `if` starts the next statement
        message += "; is this a conditional expression `a if c else b`?"
        hint = (
            "on the right of `=`, `let` or `report` a conditional expression needs "
            "parentheses: x = (a if c else b); an `if` statement needs `{` after its condition"
        )
    start: int | None = tok.start_pos if isinstance(tok.start_pos, int) else None
    if start is not None and str(tok) in _TOP_LEVEL and "RBRACE" in expected:
        still_open, _ = _scan_brackets(text[:start])
        if still_open and still_open[-1][0] == "{":
            _, oline, ocol = still_open[-1]
            message += f" inside the `{{` opened at line {oline}"
            hint = f"close the `{{` at line {oline}, column {ocol} with `}}` before this"
    return error("E0101", message, span, hint=hint)


def _unterminated_raw(text: str, pos: int | None) -> bool:
    """Whether ``r`` at ``pos - 1`` starts a raw string with no closing quote on its line."""
    if pos is None or not text.startswith('"', pos):
        return False
    end = text.find("\n", pos + 1)
    return '"' not in text[pos + 1 : end if end >= 0 else len(text)]


def _expected_hint(expected: set[str]) -> str | None:
    if not expected:
        return None
    names: list[str] = []
    for term in sorted(expected):
        label = _TERMINAL_NAMES.get(term)
        if label is None:
            if term.isupper() and not term.startswith("__"):
                label = f"`{term.lower()}`"
            else:
                label = _literal_for(term)
        if label and label not in names:
            names.append(label)
    if not names:
        return None
    if len(names) > 8:
        names = names[:8] + ["…"]
    return "expected " + ", ".join(names)


@functools.lru_cache(maxsize=256)
def _literal_for(term: str) -> str:
    for t in parser().terminals:
        if t.name == term:
            pattern = t.pattern
            if pattern.type == "str":
                return f"`{pattern.value}`"
    return term.lower()


def _scan_brackets(text: str) -> tuple[list[tuple[str, int, int]], tuple[str, int, int] | None]:
    stack: list[tuple[str, int, int]] = []
    line, col = 1, 1
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 2
                col += 2
                continue
            if ch in '"\n':
                in_string = False
        elif ch == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif ch == '"':
            in_string = True
        elif ch in _OPENERS:
            stack.append((ch, line, col))
        elif ch in _CLOSERS:
            if not stack or stack[-1][0] != _CLOSERS[ch]:
                return stack, (ch, line, col)
            stack.pop()
        if ch == "\n":
            line, col = line + 1, 1
        else:
            col += 1
        i += 1
    return stack, None


def _unclosed_bracket(text: str) -> tuple[str, int, int] | None:
    stack, _ = _scan_brackets(text)
    return stack[-1] if stack else None


def _unmatched_closer(text: str) -> tuple[str, int, int] | None:
    return _scan_brackets(text)[1]
