"""The LALR tables of ``contract.lark``, built ahead of time and shipped as a generated module.

lark takes about half a second to turn the grammar into LALR tables, in every process, and
another ~0.15 s to deserialise its own stored form of them (JSON, then one object per rule,
symbol and table entry through its generic ``Serialize`` machinery). The tables are therefore
built once, here, and stored beside the grammar in ``contract_tables.py``: plain Python literals
(tuples, dicts, strings, numbers; no code), which Python caches as marshalled bytecode, so a
process reads them in about a millisecond. :func:`load_stored` assembles lark's parser objects
from them directly (the same classes lark builds: ``Rule``, ``TerminalDef``, ``IntParseTable``,
``LALR_Parser``, ``ParsingFrontend``), with the contextual lexer of :mod:`.lexer`, which builds
its per-state scanners lazily and lexes with one shared pattern.

A stored module that does not belong to this grammar, these parser options and this lark
version is ignored, and the parser is built from the grammar as before — slower, never wrong.
The same command writes ``contract_builders.py``, the driver's per-rule tree builders as
ordinary functions (:func:`builders_source`), so that a process imports them from the bytecode
cache instead of compiling them. ``tests/test_speed.py`` fails when the tables are stale
(``tests/test_parse_start.py`` when the builders are); regenerate both with::

    python -m contractsim.grammar.tables
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import json
import os
import re
import sys
from array import array
from collections.abc import Collection
from pathlib import Path
from typing import Any

import lark

TABLES_MODULE = "contract_tables"
"""The generated module (``contractsim/grammar/contract_tables.py``)."""
BUILDERS_MODULE = "contract_builders"
"""The generated module of the driver's tree builders (``contract_builders.py``)."""
FORMAT = 2

PARSER_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "lexer": "contextual",
    "propagate_positions": True,
    "maybe_placeholders": True,
    "start": ["start", "expr"],
}
"""How the contract parser is built: by ``parse.parser()`` and for the stored tables alike."""


def grammar_key(grammar: str) -> str:
    """What the stored tables must have been built from: the grammar text, the options and lark."""
    material = json.dumps(
        [FORMAT, lark.__version__, PARSER_OPTIONS, grammar], sort_keys=True, ensure_ascii=True
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------- storing


def stored_form(parser: lark.Lark, key: str) -> dict[str, Any]:
    """What the generated module holds: a built parser's rules, terminals and parse table as
    plain literals."""
    from lark.parsers.lalr_analysis import Shift

    terminals = [
        (
            str(t.name),
            t.pattern.type,
            t.pattern.value,
            tuple(sorted(t.pattern.flags)),
            t.pattern.raw,
            t.priority,
            tuple(getattr(t.pattern, "_width", None) or ()) if t.pattern.type == "re" else None,
        )
        for t in parser.terminals
    ]
    rules = [
        (
            str(r.origin.name),
            tuple(
                (str(s.name), s.is_term, bool(getattr(s, "filter_out", False))) for s in r.expansion
            ),
            r.order,
            None if r.alias is None else str(r.alias),
            r.options.keep_all_tokens,
            r.options.expand1,
            r.options.priority,
            r.options.template_source,
            tuple(r.options.empty_indices),
        )
        for r in parser.rules
    ]
    rule_index = {r: i for i, r in enumerate(parser.rules)}
    table = parser.parser.parser._parse_table
    number = _canonical_numbers(table)
    n_states = len(number)
    by_number = sorted(table.states, key=number.__getitem__)
    symbols: dict[str, int] = {}
    lengths, ids, codes = array("H"), array("H"), array("H")
    for state in by_number:
        row = table.states[state]
        lengths.append(len(row))
        for sym in sorted(row):
            action, arg = row[sym]
            ids.append(symbols.setdefault(str(sym), len(symbols)))
            # a shift to state k is k; a reduction by rule r is n_states + r
            codes.append(number[arg] if action is Shift else n_states + rule_index[arg])
    return {
        "KEY": key,
        "LARK": lark.__version__,
        "OPTIONS": dict(parser.options.options),
        "TERMINALS": terminals,
        "IGNORE": tuple(parser.lexer_conf.ignore),
        # JSON in a string: 489 rules as tuples take 0.08 s to compile without cached bytecode
        "RULES_JSON": json.dumps(rules, ensure_ascii=True, separators=(",", ":")),
        "SYMBOLS": tuple(symbols),
        # the parse table as three arrays of 16-bit integers, little-endian: one bytes literal
        # each compiles and loads in microseconds, where 13,000 tuples would take 0.2 s to
        # compile when Python may not cache the bytecode (PYTHONDONTWRITEBYTECODE)
        "STATE_LENGTHS": _little_endian(lengths),
        "STATE_SYMBOLS": _little_endian(ids),
        "STATE_ACTIONS": _little_endian(codes),
        "START_STATES": {k: number[v] for k, v in sorted(table.start_states.items())},
        "END_STATES": {k: number[v] for k, v in sorted(table.end_states.items())},
        "UNLESS": _unless(parser.terminals),
    }


def _canonical_numbers(table: Any) -> dict[int, int]:
    """The parser states numbered in the order a walk from the start states meets them, each
    row's symbols in sorted order. lark numbers them in an order that depends on the process's
    string hashing (``PYTHONHASHSEED``); this numbering makes the generated module the same
    text every time it is built from the same grammar."""
    from lark.parsers.lalr_analysis import Shift

    number: dict[int, int] = {}
    queue = [table.start_states[name] for name in sorted(table.start_states)]
    while queue:
        state = queue.pop(0)
        if state in number:
            continue
        number[state] = len(number)
        row = table.states[state]
        queue.extend(row[sym][1] for sym in sorted(row) if row[sym][0] is Shift)
    if len(number) != len(table.states):
        raise ValueError("parser states unreachable from the start states")
    return number


def _little_endian(values: array[int]) -> bytes:
    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _from_little_endian(data: bytes) -> array[int]:
    values = array("H")
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return values


def _unless(terminals: Collection[Any]) -> dict[str, tuple[str, ...]]:
    """For each pattern terminal, the string terminals of its priority that it matches whole
    (``NAME`` matches every keyword): lark's lexer reads those as the pattern and then retypes
    them (``lark.lexer._create_unless``); stored so that no process has to work it out."""
    found: dict[str, tuple[str, ...]] = {}
    for retok in terminals:
        if retok.pattern.type != "re":
            continue
        pattern = re.compile(retok.pattern.to_regexp())
        matched = tuple(
            strtok.name
            for strtok in terminals
            if strtok.pattern.type == "str"
            and strtok.priority == retok.priority
            and (m := pattern.match(strtok.pattern.value)) is not None
            and m.group(0) == strtok.pattern.value
        )
        if matched:
            found[retok.name] = matched
    return found


def module_source(parser: lark.Lark, key: str) -> str:
    """The generated module's text: one assignment of a plain literal per name."""
    lines = [
        '"""The LALR tables of contract.lark, generated by `python -m contractsim.grammar.tables`.',
        "",
        "Do not edit: plain literals only, read by contractsim.grammar.tables.load_stored.",
        '"""',
        "",
        "# fmt: off",
    ]
    for name, value in stored_form(parser, key).items():
        items = value if isinstance(value, list) else [value]
        for item in items:  # plain literals, or refuse to write the module
            if ast.literal_eval(repr(item)) != item:
                raise ValueError(f"{name}: {item!r} does not read back as a literal")
        if isinstance(value, list):
            lines.append(f"{name} = [")
            lines.extend(f"    {item!r}," for item in value)
            lines.append("]")
        else:
            lines.append(f"{name} = {value!r}")
    return "\n".join(lines) + "\n"


def builders_source(parser: lark.Lark, key: str) -> str:
    """The text of ``contract_builders.py``: the tree builder :mod:`.driver` calls for each rule
    that is not a chain rule (:func:`.treebuild.builder_source`, the source
    :func:`.treebuild.specialised_builder` would compile in every process), by rule index.
    Python caches the module's bytecode, so a process imports the builders instead of
    generating and compiling ~100 of them."""
    from .treebuild import BUILDER_GLOBALS, builder_source, is_chain_rule

    lines = [
        '"""The driver\'s tree builders for contract.lark, generated by',
        "`python -m contractsim.grammar.tables` from contractsim.grammar.treebuild.builder_source.",
        "",
        "Do not edit. Used only with the stored tables of the same KEY (contract_tables.py).",
        '"""',
        "# mypy: ignore-errors",
        "# fmt: off",
        "# ruff: noqa",
        "",
        "from .treebuild import BUILDER_GLOBALS as _G",
        "",
    ]
    lines += [f"{name} = _G[{name!r}]" for name in sorted(BUILDER_GLOBALS)]
    lines += ["", f"KEY = {key!r}", ""]
    indices = [i for i, rule in enumerate(parser.rules) if not is_chain_rule(rule)]
    for i in indices:
        lines += ["", builder_source(parser.rules[i], f"_r{i}")]
    lines += ["BUILDERS = {"]
    lines += [f"    {i}: _r{i}," for i in indices]
    lines += ["}"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------- loading


def _bytecode_at_hand(module: str) -> bool:
    """Whether importing ``module`` reads compiled bytecode, or writes it for the next process.
    The stored builders are half a megabyte of source: compiling them all costs about 0.3 s, ten
    times what compiling the hundred or so a file uses costs, so a process that may not write
    bytecode (``PYTHONDONTWRITEBYTECODE``, as many container images set) and finds none compiles
    the builders it needs one by one instead."""
    if module in sys.modules or not sys.dont_write_bytecode:
        return True
    spec = importlib.util.find_spec(module)
    cached = spec.cached if spec is not None else None
    return cached is not None and os.path.exists(cached)


def stored_builders(key: str | None) -> dict[int, Any] | None:
    """The stored tree builders by rule index (``contract_builders.py``), or None when they are
    missing or were not generated with the stored tables of ``key``."""
    if key is None or not _bytecode_at_hand(f"{__package__}.{BUILDERS_MODULE}"):
        return None
    try:
        stored = importlib.import_module(f"{__package__}.{BUILDERS_MODULE}")
    except Exception:  # missing or broken: the driver compiles each builder when first needed
        return None
    if getattr(stored, "KEY", None) != key:
        return None
    builders: dict[int, Any] = stored.BUILDERS
    return builders


def load_stored(grammar: str) -> lark.Lark | None:
    """The parser from the stored tables, or None when they are missing or belong to another
    grammar, other options or another lark version."""
    try:
        stored = importlib.import_module(f"{__package__}.{TABLES_MODULE}")
    except Exception:  # missing, or written for another format: build from the grammar
        return None
    if getattr(stored, "KEY", None) != grammar_key(grammar):
        return None
    try:
        return _assemble(stored)
    except Exception:  # a lark whose classes take other arguments: build from the grammar
        return None


def _assemble(stored: Any) -> lark.Lark:
    """lark's parser objects from the stored literals, as ``Lark._load`` would build them."""
    from lark.common import LexerConf, ParserConf
    from lark.grammar import NonTerminal, Rule, RuleOptions, Terminal
    from lark.lark import LarkOptions
    from lark.lexer import PatternRE, PatternStr, TerminalDef
    from lark.parser_frontends import ParsingFrontend
    from lark.parsers.lalr_analysis import IntParseTable, Reduce, Shift
    from lark.parsers.lalr_parser import LALR_Parser, _Parser

    from .lexer import SharedContextualLexer
    from .treebuild import LazyCallbacks

    terminals = []
    for name, kind, value, flags, raw, priority, width in stored.TERMINALS:
        pattern: Any = (PatternStr if kind == "str" else PatternRE)(value, flags, raw)
        if width is not None:
            pattern._width = width  # lark would otherwise measure each pattern with sre_parse
        terminals.append(TerminalDef(name, pattern, priority))

    symbols: dict[tuple[str, bool, bool], Any] = {}
    rules = []
    for origin, expansion, order, alias, keep, expand1, prio, template, empty in json.loads(
        stored.RULES_JSON
    ):
        rules.append(
            Rule(
                NonTerminal(origin),
                [
                    symbols.get(key)
                    or symbols.setdefault(key, Terminal(name, drop) if term else NonTerminal(name))
                    for name, term, drop in expansion
                    for key in [(name, term, drop)]
                ],
                order,
                alias,
                RuleOptions(keep, expand1, prio, template, tuple(empty)),
            )
        )

    options: Any = LarkOptions(dict(stored.OPTIONS))
    inst: Any = lark.Lark.__new__(lark.Lark)
    inst.options = options
    inst.rules = rules
    inst.source_path = "<stored>"
    lexer_conf = LexerConf(terminals, re, list(stored.IGNORE), None, {}, 0, True, False)
    lexer_conf.lexer_type = options.lexer
    inst.lexer_conf = lexer_conf
    inst.terminals = terminals
    inst._terminals_dict = {t.name: t for t in terminals}
    # what Lark._prepare_callbacks builds, one rule at a time as the parser first reduces it
    inst._callbacks = LazyCallbacks(rules)

    n_states = len(stored.STATE_LENGTHS) // 2
    actions = [(Shift, k) for k in range(n_states)] + [(Reduce, rule) for rule in rules]
    rows = LazyRows(
        stored.SYMBOLS,
        actions,
        _from_little_endian(stored.STATE_LENGTHS),
        _from_little_endian(stored.STATE_SYMBOLS),
        _from_little_endian(stored.STATE_ACTIONS),
    )
    rows.key = stored.KEY
    parse_table = IntParseTable(  # type: ignore[no-untyped-call]
        rows, stored.START_STATES, stored.END_STATES
    )
    lalr: Any = LALR_Parser.__new__(LALR_Parser)
    lalr._parse_table = parse_table
    lalr.parser = _Parser(parse_table, inst._callbacks, options.debug)
    parser_conf = ParserConf(rules, inst._callbacks, list(options.start))
    parser_conf.parser_type = "lalr"
    # what ParsingFrontend.__init__ does for an LALR parser with a contextual lexer and no
    # post-lexer, with the lexer of .lexer, which asks for a state's terminals when it is met
    frontend: Any = ParsingFrontend.__new__(ParsingFrontend)
    frontend.lexer_conf = lexer_conf
    frontend.parser_conf = parser_conf
    frontend.options = options
    frontend.parser = lalr
    frontend.skip_lexer = False
    frontend.lexer = SharedContextualLexer(lexer_conf, rows.accepts, unless=stored.UNLESS)
    inst.parser = frontend
    assembled: lark.Lark = inst
    return assembled


class LazyRows(dict[int, dict[str, Any]]):
    """The parse table's rows by state, each decoded from the stored arrays when the parser
    first reaches its state; anything that looks at the whole table decodes all of it."""

    def __init__(
        self,
        symbols: tuple[str, ...],
        actions: list[Any],
        lengths: array[int],
        symbol_ids: array[int],
        action_ids: array[int],
    ) -> None:
        super().__init__()
        self._symbols = symbols
        self._actions = actions
        self._symbol_ids = symbol_ids
        self._action_ids = action_ids
        self._starts = [0]
        for length in lengths:
            self._starts.append(self._starts[-1] + length)
        self._complete = False
        self.key: str | None = None  # the stored tables' KEY, set by _assemble
        self.codes = StoredCodes(symbols, symbol_ids, action_ids, self._starts)

    def __missing__(self, state: int) -> dict[str, Any]:
        if not isinstance(state, int) or not 0 <= state < len(self._starts) - 1:
            raise KeyError(state)
        start, end = self._starts[state], self._starts[state + 1]
        row = self[state] = dict(
            zip(
                map(self._symbols.__getitem__, self._symbol_ids[start:end]),
                map(self._actions.__getitem__, self._action_ids[start:end]),
            )
        )
        return row

    def accepts(self, state: int) -> list[str]:
        """The symbols a state has an action for (what the contextual lexer may read there)."""
        return list(self[state])

    def _decode_all(self) -> None:
        if not self._complete:
            for state in range(len(self._starts) - 1):
                self[state]  # noqa: B018 (decodes the row)
            self._complete = True

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __iter__(self) -> Any:
        self._decode_all()
        return super().__iter__()

    def __contains__(self, state: object) -> bool:
        return isinstance(state, int) and 0 <= state < len(self._starts) - 1

    def keys(self) -> Any:
        self._decode_all()
        return super().keys()

    def items(self) -> Any:
        self._decode_all()
        return super().items()

    def values(self) -> Any:
        self._decode_all()
        return super().values()


class StoredCodes(dict[int, dict[str, int]]):
    """The parse table's rows by state as stored: each symbol's action as one integer (a shift
    or goto to state ``k`` is ``k``, a reduction by rule ``r`` is ``n_states + r``), decoded when
    first asked for; what :mod:`.driver` runs on."""

    def __init__(
        self,
        symbols: tuple[str, ...],
        symbol_ids: array[int],
        action_ids: array[int],
        starts: list[int],
    ) -> None:
        super().__init__()
        self._symbols = symbols
        self._symbol_ids = symbol_ids
        self._action_ids = action_ids
        self._starts = starts

    def __missing__(self, state: int) -> dict[str, int]:
        if not isinstance(state, int) or not 0 <= state < len(self._starts) - 1:
            raise KeyError(state)
        start, end = self._starts[state], self._starts[state + 1]
        row = self[state] = dict(
            zip(
                map(self._symbols.__getitem__, self._symbol_ids[start:end]),
                self._action_ids[start:end],
            )
        )
        return row


def build(grammar: str) -> lark.Lark:
    """Build the parser from the grammar (the slow way)."""
    return lark.Lark(grammar, **PARSER_OPTIONS)


def main() -> int:
    """Rebuild ``contract_tables.py`` and ``contract_builders.py`` from ``contract.lark``."""
    here = Path(__file__).resolve().parent
    grammar = (here / "contract.lark").read_text("utf-8")
    built, key = build(grammar), grammar_key(grammar)
    for module, text in (
        (TABLES_MODULE, module_source(built, key)),
        (BUILDERS_MODULE, builders_source(built, key)),
    ):
        target = here / f"{module}.py"
        target.write_text(text, "utf-8")
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
