"""Contract evolution: what changed between two versions of a contract, for callers and agents.

:func:`diff_contracts` compares two loaded contracts and classifies every change as breaking,
additive or behavioural (docs/diff.md); :mod:`.render` prints the report as text, markdown or
JSON; :mod:`.sources` reads ``git:REV:PATH`` operands.
"""

from .changes import Change, DiffReport, Witness
from .compare import diff_contracts

__all__ = ["Change", "DiffReport", "Witness", "diff_contracts"]
