"""Run time: the contract around real tool calls (docs/guard.md).

:mod:`.guard` is the runtime guard (validate arguments, check preconditions against live state,
record effects, structured errors); :mod:`.transitions_adapter` gives a protocol machine as a
``transitions`` state machine.
"""
