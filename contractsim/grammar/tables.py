"""The LALR tables of ``contract.lark``, built ahead of time and shipped as plain JSON.

lark takes about half a second to turn the grammar into LALR tables, in every process. The
tables are therefore built once, here, and stored beside the grammar in ``contract_tables.json``
(plain data: loading it never runs code, unlike a pickle). A stored file that does not belong to
this grammar, these parser options and this lark version is ignored, and the parser is built
from the grammar as before — slower, never wrong. ``tests/test_speed.py`` fails when the file is
stale; regenerate it with::

    python -m contractsim.grammar.tables
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import lark

TABLES_FILE = "contract_tables.json"
FORMAT = 1

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


# JSON has neither tuples nor integer keys; lark's serialized tables have both. Both are tagged.
def _encode(obj: Any) -> Any:
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj) and not {"__tuple__", "__items__"} & obj.keys():
            return {k: _encode(v) for k, v in obj.items()}
        return {"__items__": [[_encode(k), _encode(v)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise TypeError(f"cannot store {type(obj).__name__} in the parser tables")


def _decode(obj: dict[str, Any]) -> Any:
    if "__tuple__" in obj:
        return tuple(obj["__tuple__"])
    if "__items__" in obj:
        return {k: v for k, v in obj["__items__"]}
    return obj


def dumps(parser: lark.Lark, key: str) -> str:
    """The stored form of a built parser's tables."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = parser.memo_serialize([TerminalDef, Rule])
    stored = {"key": key, "lark": lark.__version__, "data": _encode(data), "memo": _encode(memo)}
    return json.dumps(stored, ensure_ascii=True, separators=(",", ":")) + "\n"


def load_stored(grammar: str) -> lark.Lark | None:
    """The parser from the stored tables, or None when they are missing or belong to another
    grammar, other options or another lark version."""
    try:
        text = resources.files("contractsim.grammar").joinpath(TABLES_FILE).read_text("utf-8")
    except OSError:
        return None
    head = text[:200]
    key = grammar_key(grammar)
    if f'"key":"{key}"' not in head:
        return None
    try:
        stored = json.loads(text, object_hook=_decode)
        parser: lark.Lark = lark.Lark._load_from_dict(  # type: ignore[no-untyped-call]
            stored["data"], stored["memo"]
        )
    except Exception:  # a lark that reads its tables differently: build from the grammar
        return None
    return parser


def build(grammar: str) -> lark.Lark:
    """Build the parser from the grammar (the slow way)."""
    return lark.Lark(grammar, **PARSER_OPTIONS)


def main() -> int:
    """Rebuild ``contract_tables.json`` from ``contract.lark``."""
    here = Path(__file__).resolve().parent
    grammar = (here / "contract.lark").read_text("utf-8")
    target = here / TABLES_FILE
    target.write_text(dumps(build(grammar), grammar_key(grammar)), "utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
