"""The simulator: what calls do to a state, across every branch (docs/architecture.md).

:mod:`.engine` holds the step semantics and the :class:`~.engine.Simulator`; :mod:`.fast` the
plan checker for planners; :mod:`.explore` explores plans within bounds; :mod:`.observe` carries
a state along a real call's outcome; :mod:`.goals` explains which part of a goal a state misses;
:mod:`.state` is the immutable state; :mod:`.inputs` reads plans and state files;
:mod:`.json_maps` reads map keys from JSON; :mod:`.report` prints plan reports as text.
"""
