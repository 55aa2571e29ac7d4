"""A specialised LALR driver for valid text: lark's tables and tree builders in one tight loop.

lark's ``ParserState.feed_token`` spends most of a parse on generic work: a method call per
token, a ``(action, arg)`` pair unpacked per step, ``len(rule.expansion)`` and
``rule.origin.name`` per reduction, and a tree builder called for every reduction — also for the
ten chain rules (``?expr: or_expr`` …) above every name or number, whose result is their only
child unchanged. :func:`parse_valid` runs the same LALR tables (the stored ones of
:mod:`.tables`, as integer codes: a shift to state ``k`` is ``k``, a reduction by rule ``r`` is
``n_states + r``), the same per-state scanners (:mod:`.lexer`) and the same tree shapes
(:mod:`.treebuild`), but

* the lexer is inlined and tries, in each state, only the terminals that may start with the
  character at hand (see ``_CharTable``); the lexer itself reads what that cannot;
* a chain reduction only changes the state on top of the stack (its value is handed up as is,
  which is what lark's builder returns for it), and a run of them is looked up once per
  (state below, state on top, lookahead);
* every other reduction calls a builder generated for its rule
  (:func:`.treebuild.specialised_builder`: lark's child filter unrolled, lark's position
  propagation without its generic checks), looked up by rule index.

It gives up (returns None) on anything but a clean parse: an unexpected token or character, or
any other surprise. The caller then parses the text again with lark's own loop, which reports
the error or applies the keyword-as-name fix-ups of :mod:`.parse` exactly as before. A parse
that succeeds here is one in which lark's loop meets no error either, so it takes the same
steps and calls the same builders: the tree is the same, ``meta`` positions included
(``tests/test_parse_driver.py`` compares them on every known contract and thousands of
corrupted ones).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from lark import Token, Tree
from lark.lexer import LexerState, LineCounter
from lark.utils import TextSlice

from .treebuild import is_chain_rule, specialised_builder


class _Position:
    """What the contextual lexer asks of the parser: the state on top of the stack."""

    __slots__ = ("position",)

    def __init__(self, position: int) -> None:
        self.position = position


# ------------------------------------------------------------------ first-character dispatch
#
# The contextual lexer's shared pattern is one alternation of ~30 terminals, which Python's
# ``re`` tries one after another at every token (a few microseconds each). A parser state's
# own scanner (``_StateLexer.alternatives``: what lark's lexer for that state tries, in its
# order) finds the first alternative that matches; one that cannot start with the character at
# hand fails, so trying only those that may start with it finds the same match: ``(`` is only
# ``LPAR``. A terminal whose first characters are not worked out here (a lookahead at its
# start, an optional first element, a case-insensitive flag …) is kept for every character;
# a character outside ASCII goes to the lexer.

_ASCII_DIGITS = frozenset("0123456789")
# what ``\s`` matches in ASCII: the file, group, record and unit separators too
_ASCII_SPACE = frozenset(" \t\n\r\f\v\x1c\x1d\x1e\x1f")
_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _first_chars(regexp: str) -> frozenset[str] | None:
    """The ASCII characters a match of ``regexp`` may start with, or None when not known."""
    try:
        import re._constants as c  # type: ignore[import-not-found]
        import re._parser as sre  # type: ignore[import-not-found]
    except ImportError:  # an older Python: no dispatch (the shared pattern does it all)
        return None
    try:
        parsed = sre.parse(regexp)
    except Exception:
        return None
    if parsed.state.flags & c.SRE_FLAG_IGNORECASE:
        return None

    def first(items: Any) -> set[str] | None:
        if not len(items):
            return None
        op, arg = items[0]
        if op is c.LITERAL:
            return {chr(arg)}
        if op is c.IN:
            found: set[str] = set()
            for item_op, item_arg in arg:
                if item_op is c.LITERAL:
                    found.add(chr(item_arg))
                elif item_op is c.RANGE and item_arg[1] - item_arg[0] < 256:
                    found.update(map(chr, range(item_arg[0], item_arg[1] + 1)))
                elif item_op is c.CATEGORY and item_arg is c.CATEGORY_DIGIT:
                    found |= _ASCII_DIGITS
                elif item_op is c.CATEGORY and item_arg is c.CATEGORY_SPACE:
                    found |= _ASCII_SPACE
                elif item_op is c.CATEGORY and item_arg is c.CATEGORY_WORD:
                    found |= _ASCII_WORD
                else:  # NEGATE, other categories
                    return None
            return found
        if op is c.SUBPATTERN:
            _group, add_flags, _del_flags, sub = arg
            return None if add_flags & c.SRE_FLAG_IGNORECASE else first(sub)
        if op is c.BRANCH:
            union: set[str] = set()
            for branch in arg[1]:
                part = first(branch)
                if part is None:
                    return None
                union |= part
            return union
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and arg[0] >= 1:
            return first(arg[2])
        return None

    chars = first(parsed)
    return None if chars is None else frozenset(c_ for c_ in chars if c_.isascii())


class _CharTables(dict[int, Any]):
    """For each parser state, the :class:`_CharTable` of its scanner (states that admit the
    same terminals share one), made when the parse first reaches the state."""

    def __init__(self, lexer: Any) -> None:
        super().__init__()
        self._lexer = lexer
        self._by_scanner: dict[int, _CharTable] = {}
        self._first: dict[str, frozenset[str] | None] = {}

    def __missing__(self, state: int) -> _CharTable:
        scanner = self._lexer._by_state.get(state) or self._lexer._state_lexer(state)
        table = self._by_scanner.get(id(scanner))  # scanners live as long as the lexer
        if table is None:
            table = self._by_scanner[id(scanner)] = _CharTable(scanner, self)
        self[state] = table
        return table

    def first_chars(self, name: str) -> frozenset[str] | None:
        """The ASCII characters terminal ``name`` may start with (None: not known)."""
        if name not in self._first:
            pattern = self._lexer._by_name[name].pattern
            if pattern.type == "str" and not pattern.flags:
                self._first[name] = frozenset(pattern.value[:1])
            else:
                self._first[name] = _first_chars(pattern.to_regexp())
        return self._first[name]


_MATCHES = True
"""In a :class:`_CharTable` alternative: a one-character string, which needs no comparing."""


class _CharTable(dict[str, Any]):
    """One state's scanner by first character: the alternatives that may start with it, in
    the scanner's order, each as (terminal, its text if a plain string, its own compiled
    pattern — for a plain string :data:`_MATCHES` when it is one character, which is then
    the character at hand, else None —, the keywords it is retyped to by text or None);
    None where the lexer must read the token (a character outside ASCII, or a
    state lark's own lexer reads)."""

    def __init__(self, scanner: Any, tables: _CharTables) -> None:
        super().__init__()
        self.keywords = scanner.keywords
        self._alternatives = scanner.alternatives
        self._tables = tables

    def __missing__(self, char: str) -> list[tuple[str, str | None, Any, Any]] | None:
        if not char.isascii():  # not stored: one entry per character a stranger's text holds
            return None
        made: list[tuple[str, str | None, Any, Any]] | None = None
        if self._alternatives:
            first_chars, compiled = self._tables.first_chars, self._tables._lexer._compiled
            keywords = self.keywords
            made = [
                (
                    name,
                    literal,
                    # a one-character literal is the character at hand: it matches
                    (_MATCHES if len(literal) == 1 else None)
                    if literal is not None
                    else compiled(name),
                    keywords.get(name),
                )
                for name, literal, _rank in self._alternatives
                if (chars := first_chars(name)) is None or char in chars
            ]
        self[char] = made
        return made


def _gap_pattern(lexer: Any, first_chars: Any) -> re.Pattern[str] | None:
    """One pattern for a run of ignored tokens (white space, comments): what the lexer reads
    there in every parser state, token after token, or None when that cannot be shown.

    Every state's scanner holds the ignored terminals (``%ignore``). When each of them starts
    only with known ASCII characters (its first-character set, as the per-state tables
    work it out) that no other terminal may start with, then at such a character no other
    terminal can match, in any state: the lexer's token there is that terminal's own match. The
    pattern tries, at each step, only the terminal whose first characters include the one at
    hand (a lookahead for that set before the terminal's own expression), so it stops where
    the lexer would read anything else — or fail, which the loop then meets as before. The
    newlines in the run are counted as the lexer counts them (every ignored terminal must be
    one of its newline types), and no ignored terminal may have a callback."""
    ignored = sorted(lexer._ignore)
    if not ignored or any(name in lexer._callbacks for name in ignored):
        return None
    if not all(name in lexer._newline_types for name in ignored):
        return None
    starts: dict[str, frozenset[str]] = {}
    for name in ignored:
        chars = first_chars(name)
        if not chars:
            return None
        if any(chars & other for other in starts.values()):
            return None
        starts[name] = chars
    taken = frozenset().union(*starts.values())
    for name in lexer._by_name:
        if name not in starts and ((chars := first_chars(name)) is None or chars & taken):
            return None
    parts = []
    for name in ignored:
        lookahead = "".join(re.escape(c) for c in sorted(starts[name]))
        parts.append(f"(?=[{lookahead}])(?:{lexer._by_name[name].pattern.to_regexp()})")
    return re.compile(f"(?:{'|'.join(parts)})*", lexer._conf.g_regex_flags)


def _lone_blanks(lexer: Any, gap_first: frozenset[str]) -> frozenset[str]:
    """The characters that make a run of :func:`_gap_pattern` by themselves when the next
    character cannot start one (is not in ``gap_first``): those of an ignored terminal that is
    a repeated set of ASCII characters, ``(?:[ \t\f\r\n])+`` (``WS``). Such a terminal matches
    the character and stops before the next, which no ignored terminal may start: the run is
    that one character, read without the pattern. Only for a ``gap_first`` of
    :func:`_gap_pattern`'s (each character there starts one ignored terminal only)."""
    try:
        import re._constants as c
        import re._parser as sre
    except ImportError:  # an older Python: every run is matched
        return frozenset()
    found: set[str] = set()
    for name in lexer._ignore:
        try:
            items = list(sre.parse(lexer._by_name[name].pattern.to_regexp()))
        except Exception:
            continue
        # a non-capturing group without flags around the whole: look inside
        while len(items) == 1 and items[0][0] is c.SUBPATTERN and items[0][1][0] is None:
            _group, add_flags, del_flags, sub = items[0][1]
            if add_flags or del_flags:
                break
            items = list(sub)
        if len(items) != 1 or items[0][0] is not c.MAX_REPEAT:
            continue
        low, high, body = items[0][1]
        body = list(body)
        if low < 1 or high is not c.MAXREPEAT or len(body) != 1 or body[0][0] is not c.IN:
            continue
        chars: set[str] = set()
        for op, arg in body[0][1]:
            if op is c.LITERAL and arg < 128:
                chars.add(chr(arg))
            elif op is c.RANGE and arg[1] < 128:
                chars.update(map(chr, range(arg[0], arg[1] + 1)))
            else:  # a negated set, a category, a character outside ASCII: not known here
                chars = set()
                break
        if chars and chars <= gap_first:
            found |= chars
    return frozenset(found)


class _Builders(dict[int, Any]):
    """The tree builder of each rule (:func:`.treebuild.specialised_builder`) by ``offset`` +
    the rule's index (the driver's offset is its number of states: a reduction's action
    code): the one stored in ``contract_builders.py`` for the stored tables (imported from
    Python's bytecode cache), else made when the rule is first reduced."""

    def __init__(self, rules: list[Any], stored: dict[int, Any] | None, offset: int = 0) -> None:
        super().__init__()
        self._rules = rules
        self._stored = stored or {}
        self._offset = offset

    def __missing__(self, code: int) -> Any:
        index = code - self._offset
        if index < 0:
            raise KeyError(code)
        made = self._stored.get(index)
        if made is None:
            made = specialised_builder(self._rules[index])
        self[code] = made
        return made


class Driver:
    """The LALR loop over one stored parser's tables (made once per process, lazily)."""

    def __init__(self, lark_parser: Any) -> None:
        from .tables import stored_builders

        frontend = lark_parser.parser
        table = frontend.parser._parse_table
        rows = table.states
        self._lexer = frontend.lexer
        self._codes = rows.codes
        self._n_states = len(rows)
        self._start_states = dict(table.start_states)
        self._end_states = dict(table.end_states)
        rules = lark_parser.rules
        # per action code (a reduction's code is n_states + the rule's index; a shift's is
        # below): (number of symbols, origin name, whether a chain rule)
        self._rules: list[tuple[int, str, bool] | None] = [None] * self._n_states
        self._rules += [(len(r.expansion), r.origin.name, is_chain_rule(r)) for r in rules]
        self._builders = _Builders(
            rules, stored_builders(getattr(table.states, "key", None)), self._n_states
        )
        self._char_tables = _CharTables(self._lexer)
        # a run of white space and comments read in one match (None: token by token)
        self._gap = _gap_pattern(self._lexer, self._char_tables.first_chars)
        self._gap_first: frozenset[str] = frozenset()
        self._lone_blanks: frozenset[str] = frozenset()
        if self._gap is not None:
            self._gap_first = frozenset().union(
                *(self._char_tables.first_chars(name) or () for name in self._lexer._ignore)
            )
            self._lone_blanks = _lone_blanks(self._lexer, self._gap_first)
        # (state below, state on top, lookahead) -> the state on top after the chain
        # reductions the lookahead makes there (they depend on nothing else)
        self._chains: dict[tuple[int, int, str], int] = {}

    def parse(self, text: str, start: str) -> Tree[Token] | None:
        """The tree lark builds for ``text``, or None when lark would meet an error."""
        try:
            return self._parse(text, start)
        except Exception:  # an error lark reports better: let it parse the text again
            return None

    def _parse(self, text: str, start: str) -> Tree[Token] | None:
        start_state = self._start_states[start]
        end_state = self._end_states[start]
        rows = self._codes
        n_states = self._n_states
        rules = self._rules
        builders = self._builders
        chains = self._chains
        states: list[int] = [start_state]
        state = start_state
        values: list[Any] = []
        # the lexer inlined: each state's scanner by first character (see _CharTable); where
        # that cannot answer, the lexer itself reads one token from the same place
        lexer = self._lexer
        char_tables = self._char_tables
        ignore, newline_types = lexer._ignore, lexer._newline_types
        str_new = str.__new__
        # white space and comments: one match per run, where _gap_pattern shows it exact
        gap_first, lone_blanks = self._gap_first, self._lone_blanks
        gap = self._gap.match if self._gap is not None else None
        line_ctr = LineCounter("\n")  # type: ignore[no-untyped-call]
        lexer_state = LexerState(TextSlice(text, 0, len(text)), line_ctr)
        position = _Position(start_state)
        n = len(text)
        pos = 0
        line = 1
        line_start = 0
        while pos < n:
            char = text[pos]
            if char in gap_first:
                if char in lone_blanks and text[pos + 1 : pos + 2] not in gap_first:
                    pos += 1  # a run of one blank (most runs): no need to match it
                    if char == "\n":
                        line += 1
                        line_start = pos
                    if pos == n:
                        break
                    char = text[pos]
                elif (end := gap(text, pos).end()) != pos:  # type: ignore[misc,union-attr]
                    if newlines := text.count("\n", pos, end):
                        line += newlines
                        line_start = text.rindex("\n", pos, end) + 1
                    pos = end
                    if pos == n:
                        break
                    char = text[pos]
            table = char_tables[state]
            alternatives = table[char]
            type_ = None
            if alternatives is not None:
                for type_, value, pattern, keywords in alternatives:  # noqa: B007
                    if pattern is _MATCHES:
                        break
                    if value is not None:
                        if text.startswith(value, pos):
                            break
                    elif (m := pattern.match(text, pos, n)) is not None:
                        value = m.group(0)
                        break
                else:
                    type_ = None
            if type_ is not None:
                end = pos + len(value)
                if type_ in ignore:
                    if type_ in newline_types and (newlines := value.count("\n")):
                        line += newlines
                        line_start = pos + value.rindex("\n") + 1
                    pos = end
                    continue
                # lark's Token, its eight slots set here rather than in Token._future_new
                token = str_new(Token, value)
                token.start_pos = pos
                token.value = value
                token.end_pos = end
                if type_ in newline_types and (newlines := value.count("\n")):
                    token.line = line
                    token.column = pos - line_start + 1
                    line += newlines
                    line_start = pos + value.rindex("\n") + 1
                    token.end_line = line
                    token.end_column = end - line_start + 1
                else:
                    token.line = token.end_line = line
                    token.column = column = pos - line_start + 1
                    token.end_column = column + end - pos
                if keywords is not None and (keyword := keywords.get(value)) is not None:
                    type_ = keyword
                token.type = type_
                pos = end
            else:
                line_ctr.char_pos = pos
                line_ctr.line = line
                line_ctr.line_start_pos = line_start
                line_ctr.column = pos - line_start + 1
                position.position = state
                found = next(lexer._lex(lexer_state, position), None)
                pos, line, line_start = line_ctr.char_pos, line_ctr.line, line_ctr.line_start_pos
                if found is None:
                    break  # only white space and comments were left
                token = found
                type_ = token.type
            # `state` is the state on top of the stack (states[-1]) throughout
            while True:
                code = rows[state].get(type_)
                if code is None:
                    return None
                if code < n_states:  # shift (never to the end state: only a goto reaches it)
                    states.append(code)
                    values.append(token)
                    state = code
                    break
                size, origin, chain = rules[code]
                if chain:  # the value is handed up unchanged: only the state on top changes
                    below = states[-2]
                    key = (below, state, type_)
                    top = chains.get(key)
                    if top is None:  # every chain reduction this lookahead makes here, at once
                        top = rows[below][origin]
                        while (code := rows[top].get(type_)) is not None and code >= n_states:
                            size, origin, chain = rules[code]
                            if not chain:
                                break
                            top = rows[below][origin]
                        chains[key] = top
                    states[-1] = state = top
                    continue
                if size == 1:  # half of them: the node takes its child's place
                    values[-1] = builders[code]([values[-1]])
                    state = states[-1] = rows[states[-2]][origin]
                    continue
                if size:
                    children = values[-size:]
                    del states[-size:]
                    del values[-size:]
                else:
                    children = []
                values.append(builders[code](children))
                state = rows[states[-1]][origin]
                states.append(state)
        # the end of the text: reduce until the start symbol is complete
        while True:
            code = rows[states[-1]].get("$END")
            if code is None or code < n_states:
                return None
            size, origin, chain = rules[code]
            if chain:
                states[-1] = rows[states[-2]][origin]
            else:
                if size:
                    children = values[-size:]
                    del states[-size:]
                    del values[-size:]
                else:
                    children = []
                values.append(builders[code](children))
                states.append(rows[states[-1]][origin])
            if states[-1] == end_state:
                tree: Tree[Token] = values[-1]
                return tree


@functools.lru_cache(maxsize=4)
def driver_for(lark_parser: Any) -> Driver | None:
    """The driver over ``lark_parser``'s tables (made once), or None when the parser was not
    loaded from the stored tables (built from the grammar: lark's loop only)."""
    from .tables import LazyRows

    if not isinstance(lark_parser.parser.parser._parse_table.states, LazyRows):
        return None
    return Driver(lark_parser)


def parse_valid(lark_parser: Any, text: str, start: str = "start") -> Tree[Token] | None:
    """The parse tree of ``text`` as ``lark_parser`` builds it, or None when the text has an
    error (or the parser was not loaded from the stored tables): then lark's own loop must
    parse it."""
    driver = driver_for(lark_parser)
    return None if driver is None else driver.parse(text, start)
