"""The front end: parse tree → typed IR → diagnostics (docs/architecture.md, "The pipeline").

:mod:`.ir` is the frozen, positioned IR; :mod:`.lower` turns lark trees into it (the only module
that reads them); :mod:`.typecheck` (the :class:`~.typecheck.Checker`, :mod:`.types`,
:mod:`.builtins`) and :mod:`.check` (the passes, in order) report what is wrong; :mod:`.walk`
walks and rewrites IR; :mod:`.pretty` prints it back as contract text; :mod:`.patterns` decides
which regular expressions can be used; :mod:`.diagnostics` is the one diagnostic type (it moves
to ``contractsim.diagnostics``). The front end never imports the compiler: the checks that compute
values are handed in (:class:`~.check.BackEndChecks`).
"""
