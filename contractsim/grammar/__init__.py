"""The grammar stage: contract text → lark parse tree (docs/architecture.md, "The pipeline").

``contract.lark`` is the LALR grammar (package data); :mod:`.parse` parses text with it and turns
every syntax error into a diagnostic, in exactly one place; :mod:`.tables` ships the grammar's
LALR tables prebuilt (``contract_tables.py``, generated) and assembles lark's parser from them
in milliseconds, with :mod:`.lexer` (lark's contextual lexer, one compiled pattern for all
parser states) and :mod:`.treebuild` (lark's tree building, skipping chain reductions);
:mod:`.literals` reads large literal values without the parser. Imports only the diagnostics
below it.
"""
