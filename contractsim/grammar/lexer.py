"""lark's contextual lexer, without compiling a scanner for every parser state.

lark's ``ContextualLexer`` gives each set of terminals a parser state admits its own
``BasicLexer``: one combined regular expression per set (172 sets for ``contract.lark``), each
compiled by Python's pure-Python ``re`` compiler the first time a state with that set is
visited — about 0.05 s of a process's first parse, and the construction of all 172 lexers at
load time. :class:`SharedContextualLexer` reads what lark's would read, token for token:

* one pattern over all terminals (lark's own root scanner: every terminal, in lark's order of
  precedence) finds the terminal ``W`` that matches first at the current position;
* when ``W`` is one the state's own scanner contains, and every terminal that the state's
  scanner tries before ``W`` is also in the root scanner (which therefore tried it, before
  ``W``, and it did not match), the state's scanner would have found ``W`` with the same text:
  both try their alternatives in the same order (lark sorts terminals by one key), and an
  alternative's match does not depend on the others;
* the keyword a name turns into is the state's own (``UnlessCallback``): a name is retyped to a
  keyword the state admits and that the name's pattern matches whole, as lark's lexer does;
* anything else — no match, a terminal the state does not admit, a state whose scanner tries
  a terminal the root scanner left out (a keyword where no name may stand) — goes to lark's
  ``BasicLexer`` for that state, built and compiled then: the same tokens and the same errors.

Which terminals fast-match in a state is set arithmetic on names, worked out once per set of
terminals; which keywords each pattern matches whole is stored with the tables
(:mod:`.tables`), so no process compiles more than the one root pattern for ordinary input.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from copy import copy
from typing import Any

from lark.common import LexerConf
from lark.exceptions import UnexpectedCharacters, UnexpectedToken
from lark.lexer import BasicLexer, ContextualLexer, LexerState, Scanner, TerminalDef, Token

_new_token: Any = Token._future_new  # what Token(...) calls, without the keyword-argument shim


class _StateLexer:
    """What one set of admitted terminals needs: the terminals the shared pattern may report
    for it, the state's scanner as a list of alternatives (tried one by one when the shared
    pattern cannot answer), each terminal's keyword retyping, and lark's lexer for errors."""

    __slots__ = ("fast", "alternatives", "keywords", "conf", "_basic")

    def __init__(
        self,
        fast: frozenset[str],
        alternatives: list[tuple[str, str | None, int]],
        keywords: dict[str, dict[str, str]],
        conf: LexerConf,
    ) -> None:
        self.fast = fast
        self.alternatives = alternatives
        self.keywords = keywords
        self.conf = conf
        self._basic: BasicLexer | None = None

    @property
    def basic(self) -> BasicLexer:
        """lark's own lexer for this state (compiled on first use: only for errors)."""
        if self._basic is None:
            self._basic = BasicLexer(self.conf)
        return self._basic


class SharedContextualLexer(ContextualLexer):
    """lark's ``ContextualLexer``, lexing with one shared pattern; see the module docstring
    for why its tokens and errors are lark's. Built by :func:`.tables.load_stored`."""

    def __init__(
        self,
        conf: LexerConf,
        accepts: Callable[[int], Collection[str]],
        always_accept: Collection[str] = (),
        *,
        unless: dict[str, tuple[str, ...]],
    ) -> None:
        """``accepts(state)``: the terminals parser state ``state`` has an action for (asked
        once per state, when the parse first reaches it); ``unless``: for each pattern
        terminal, the keywords it matches whole (see :func:`.tables._unless`)."""
        terminals = list(conf.terminals)
        self._conf = copy(conf)
        self._conf.terminals = terminals
        self._conf.skip_validation = True
        self._accepts = accepts
        self._extra = frozenset(conf.ignore) | frozenset(always_accept)
        self._by_state: dict[int, _StateLexer] = {}
        self._by_terminals: dict[frozenset[str], _StateLexer] = {}
        self._by_name: dict[str, TerminalDef] = conf.terminals_by_name
        self._unless = unless
        self._ignore = frozenset(conf.ignore)
        self._callbacks = conf.callbacks
        self.root_lexer = BasicLexer(self._conf)
        ordered = self.root_lexer.terminals
        self._order = {t.name: i for i, t in enumerate(ordered)}
        self._embedded_root = self._embedded({t.name for t in ordered})
        self._newline_types = self.root_lexer.newline_types
        self._root_scanner: Scanner | None = None
        self._patterns: dict[str, re.Pattern[str]] = {}

    def _embedded(self, names: set[str]) -> set[str]:
        """The string terminals that lark's scanner for these terminals leaves to a pattern."""
        embedded = set()
        for retok, strings in self._unless.items():
            if retok not in names:
                continue
            flags = frozenset(self._by_name[retok].pattern.flags)
            for s in strings:
                if s in names and frozenset(self._by_name[s].pattern.flags) <= flags:
                    embedded.add(s)
        return embedded

    def _state_lexer(self, state: int) -> _StateLexer:
        found = self._by_state.get(state)
        if found is not None:
            return found
        key = frozenset(self._accepts(state))
        found = self._by_terminals.get(key)
        if found is None:
            found = self._make_state_lexer({n for n in key | self._extra if n in self._by_name})
            self._by_terminals[key] = found
        self._by_state[state] = found
        return found

    def _make_state_lexer(self, names: set[str]) -> _StateLexer:
        by_name = self._by_name
        # lark's scanner for this state: its terminals minus the keywords a pattern reads
        in_scanner = sorted(names - self._embedded(names), key=self._order.__getitem__)
        keywords: dict[str, dict[str, str]] = {}
        for name in in_scanner:
            admitted = [s for s in self._unless.get(name, ()) if s in names]
            if admitted:
                keywords[name] = {by_name[s].pattern.value: s for s in admitted}
        fast = set()
        for name in in_scanner:
            if name in self._embedded_root:
                break  # the shared pattern never tries it: from here on, try one by one
            fast.add(name)
        # (name, its text if a plain string, its place in the shared pattern or -1 if absent)
        alternatives: list[tuple[str, str | None, int]] = []
        for name in in_scanner:
            pattern = by_name[name].pattern
            rank = -1 if name in self._embedded_root else self._order[name]
            literal = pattern.value if pattern.type == "str" and not pattern.flags else None
            alternatives.append((name, literal, rank))
        # a keyword with flags is retyped by lark's fullmatch, not by a lookup: leave the
        # terminals that read one to lark's lexer, as those with user callbacks
        slow = {
            name
            for name in in_scanner
            if name in self._callbacks
            or any(by_name[s].pattern.flags for s in self._unless.get(name, ()) if s in names)
        }
        if slow:
            fast -= slow
            alternatives = []  # this state is lexed by lark's BasicLexer
        conf = copy(self._conf)
        conf.terminals = [by_name[n] for n in names]
        return _StateLexer(frozenset(fast), alternatives, keywords, conf)

    def _compiled(self, name: str) -> re.Pattern[str]:
        """One terminal's own pattern, compiled once per process when first needed."""
        found = self._patterns.get(name)
        if found is None:
            regexp = self._by_name[name].pattern.to_regexp()
            found = self._patterns[name] = re.compile(regexp, self._conf.g_regex_flags)
        return found

    def _root(self) -> Scanner:
        if self._root_scanner is None:
            root: Any = self.root_lexer
            self._root_scanner = root.scanner
        return self._root_scanner

    def lex(self, lexer_state: LexerState, parser_state: Any) -> Iterator[Token]:
        try:
            yield from self._lex(lexer_state, parser_state)
        except UnexpectedCharacters as e:
            # as lark's ContextualLexer: a character no terminal of this state starts may
            # start one elsewhere, which reads better as an unexpected token
            try:
                last_token = lexer_state.last_token
                token = self.root_lexer.next_token(lexer_state, parser_state)
                raise UnexpectedToken(  # type: ignore[no-untyped-call]
                    token,
                    e.allowed,
                    state=parser_state,
                    token_history=[last_token],
                    terminals_by_name=self.root_lexer.terminals_by_name,
                ) from None
            except UnexpectedCharacters:
                raise e from None

    def _lex(self, lexer_state: LexerState, parser_state: Any) -> Iterator[Token]:
        mres = self._root()._mres
        shared = mres[0] if len(mres) == 1 else None
        slice_ = lexer_state.text
        text, end = slice_.text, slice_.end
        line_ctr = lexer_state.line_ctr
        ignore, newline_types = self._ignore, self._newline_types
        by_state, state_lexer = self._by_state, self._state_lexer
        patterns, compiled, order = self._patterns, self._compiled, self._order
        while True:
            state = parser_state.position
            lexer = by_state.get(state) or state_lexer(state)
            fast = lexer.fast
            while True:
                pos = line_ctr.char_pos
                if pos >= end:
                    return
                m = shared.match(text, pos, end) if shared is not None else None
                if m is not None and (type_ := m.lastgroup) in fast:
                    value = m.group(0)
                else:
                    # the state's alternatives in order, less those the shared pattern
                    # tried before its answer and found not to match
                    if m is not None:
                        tried = order[m.lastgroup or ""]
                    else:  # nothing matched, or no shared pattern (lark split it in parts)
                        tried = len(order) if shared is not None else 0
                    for type_, literal, rank in lexer.alternatives:
                        if 0 <= rank < tried:
                            continue
                        if literal is not None:
                            if text.startswith(literal, pos, end):
                                value = literal
                                break
                        elif (
                            m := (patterns.get(type_) or compiled(type_)).match(text, pos, end)
                        ) is not None:
                            value = m.group(0)
                            break
                    else:  # nothing matches here (or a state lark must lex): lark's lexer
                        try:
                            basic: Any = lexer.basic
                            yield basic.next_token(lexer_state, parser_state)
                        except EOFError:
                            return
                        break
                if type_ in ignore:
                    line_ctr.feed(value, type_ in newline_types)
                    continue
                token = _new_token(type_, value, pos, line_ctr.line, line_ctr.column)
                line_ctr.feed(value, type_ in newline_types)
                token.end_line = line_ctr.line
                token.end_column = line_ctr.column
                token.end_pos = line_ctr.char_pos
                keywords = lexer.keywords.get(type_)
                if keywords is not None:
                    keyword = keywords.get(value)
                    if keyword is not None:
                        token.type = keyword
                lexer_state.last_token = token
                yield token
                break
