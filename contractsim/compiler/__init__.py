"""The back end: checked IR → runtime artefacts (docs/architecture.md, "The pipeline").

:mod:`.compile` builds a :class:`~.compile.CompiledContract` (state layout, initial state,
transition tables) with :mod:`.codegen` (IR → Python source, compiled once) and :mod:`.interp`
(the reference interpreter the generated code is tested against); both share the semantics of
every operator and built-in in :mod:`.lib` and the runtime values of :mod:`.values` (and
:mod:`.empty`); :mod:`.validators` turns IR types into pydantic validators; :mod:`.foreign`
converts Python values to contract values; :mod:`.checks` holds the checker's passes that compute
values (:data:`~.checks.COMPILER_CHECKS`).
"""
