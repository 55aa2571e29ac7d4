"""Simulator states: immutable, hashable, cheap to fork (a tuple of shared immutable values)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..compiler.lib import contains_unknown
from ..compiler.values import thaw

MACHINES_KEY = "$machines"
"""Where protocol machine states sit in a state's JSON (never a state variable's name)."""


class State(Mapping[str, Any]):
    """A world state: state variables by name, plus each protocol machine's current state.

    Forking is free: every value is immutable and shared between a state and its successors.
    """

    __slots__ = ("data", "layout", "_hash", "_has_unknown")

    def __init__(self, data: tuple[Any, ...], layout: dict[str, int]) -> None:
        self.data = data
        self.layout = layout
        self._hash: int | None = None
        self._has_unknown: bool | None = None

    def __getitem__(self, name: str) -> Any:
        return self.data[self.layout[name]]

    def __iter__(self) -> Iterator[str]:
        return (name for name in self.layout if not name.startswith("machine:"))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def machine(self, name: str) -> str:
        """The current state of protocol machine ``name`` (a ``ValueError`` for a machine the
        contract does not declare)."""
        if not isinstance(name, str):
            from ..compiler.foreign import described

            raise TypeError(
                f"name must be a protocol machine's name (a str), not {described(name)}"
            )
        slot = self.layout.get(f"machine:{name}")
        if slot is None:
            machines = ", ".join(f"`{m}`" for m in self.machines) or "none"
            raise ValueError(f"the contract has no protocol machine `{name}` (it has: {machines})")
        return str(self.data[slot])

    @property
    def machines(self) -> dict[str, str]:
        return {
            name.removeprefix("machine:"): self.data[slot]
            for name, slot in self.layout.items()
            if name.startswith("machine:")
        }

    @property
    def has_unknown(self) -> bool:
        """Whether any value is (or contains) ``unknown``; such states use three-valued code."""
        if self._has_unknown is None:
            self._has_unknown = any(contains_unknown(v) for v in self.data)
        return self._has_unknown

    def derive(self, data: tuple[Any, ...]) -> State:
        """A state with new values, computed from this one: whether it holds ``unknown`` is
        worked out from the slots that changed only (a step over a large known state must not
        walk every collection again)."""
        if data is self.data:
            return self
        new = State(data, self.layout)
        if self._has_unknown is False:
            old = self.data
            new._has_unknown = any(
                contains_unknown(v) for i, v in enumerate(data) if v is not old[i]
            )
        return new

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.data)
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, State):
            return self.data == other.data
        return NotImplemented

    def to_json(self) -> dict[str, Any]:
        """State variables (and machines under ``"$machines"``) as JSON-ready data."""
        out: dict[str, Any] = {name: thaw(self[name]) for name in self}
        if self.machines:
            out[MACHINES_KEY] = dict(sorted(self.machines.items()))
        return out

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={thaw(self[k])!r}" for k in self)
        return f"State({inner})"
