"""The grammar stage: contract text → lark parse tree (docs/architecture.md, "The pipeline").

``contract.lark`` is the LALR grammar (package data); :mod:`.parse` parses text with it and turns
every syntax error into a diagnostic, in exactly one place; :mod:`.tables` ships the grammar's
LALR tables prebuilt (``contract_tables.json``) so start-up does not build them; :mod:`.literals`
reads large literal values without the parser. Imports only the diagnostics below it.
"""
