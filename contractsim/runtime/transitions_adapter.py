"""A contract's protocol machine as a `transitions <https://github.com/pytransitions/transitions>`_
state machine: :func:`to_transitions` (also ``Contract.to_transitions``).

The returned ``transitions.Machine`` (a ``GraphMachine`` with ``graph=True``) has the protocol
machine's states (final states marked final), its initial state, and one transition per contract
transition, triggered by the tool's name: ``model.query(statement="SELECT 1")``. Trigger keyword
arguments are the tool's arguments. Besides the usual ``state``, the model carries:

``contract_state``
    the :class:`~contractsim.simulator.state.State` the contract tracks (world state and every
    protocol machine), updated atomically when a trigger is accepted;
``contract_last_step``
    the simulator's :class:`~contractsim.simulator.results.StepResult` of the last call (its
    warnings, outcomes, cost);
``contract_last_violation`` / ``contract_violations``
    the :class:`ContractViolation` of the last call that was blocked or failed, and all of them.

**What "accepted" means.** A trigger runs the simulator once: ``Simulator.step(contract_state,
tool, kwargs)`` (argument validation → protocol machines and transition guards → hard
``require`` clauses → outcomes and effects). A trigger models a call that *happened* and that
the environment did not interfere with, so the adapter follows the step's **no-event branch**:
the branch not chosen by an environment event. The call is *decided* when there is exactly one
such branch and it is certain (it assumes nothing about unknown values). Then:

* the transition fires (the trigger returns ``True``) when the decided branch moves the machine
  along it: ``on TOOL`` on a success or partial outcome, ``on TOOL.OUTCOME`` on that outcome —
  failure outcomes included, exactly as the simulator moves machines (the failure is then
  recorded as a violation too). The first transition, in contract order, whose guard holds
  wins. A success that no ``TOOL.OUTCOME`` transition names keeps the machine where it is (an
  internal transition, added only for such sources) and still applies the effects;
* ``model.contract_state`` becomes the branch's successor state (tool effects, then the outcome
  body; machines moved) — applied in a ``before`` callback of the transition, so
  ``on_exit``/``on_enter``/``after`` callbacks see the new state;
* anything else is **blocked**: the trigger returns ``False``, nothing changes, and the reasons
  are recorded — the contract's error code and message with the actual values, e.g.
  ``QUOTA_EXCEEDED: the daily quota of 100 messages is used up``. A condition that is *unknown*
  blocks (recorded with ``certain=False``); a call whose outcome depends on unknown values is
  blocked with those reasons (or ``UNDECIDED`` when no rule is violated).

So for a tool without environment events, accepted ⇔ the simulator's verdict is ``ok`` with a
single branch. For a tool whose outcomes include events (``on provider_rate_limit probability
0.02``) the simulator's verdict is ``fails`` (on that branch), while the adapter accepts the
no-event branch. Transitions on outcomes that only an environment event reaches never fire.

Calling a trigger from a state without a transition for it is rejected the ``transitions`` way
(``MachineError``, or ``False`` with ``ignore_invalid_triggers=True``) and recorded as a
``PROTOCOL_VIOLATION``. Tools that are not in the machine are run with
``machine.contract_adapter.call(tool, **args)``. Moving the machine by other means
(``set_state``, ``auto_transitions=True``) moves the tracked contract machine with it.

User callbacks attach as usual: ``on_enter_<state>`` / ``on_exit_<state>`` methods on the model,
``machine.on_enter_open(fn)``, ``machine.get_transitions("query")[0].add_callback("after", fn)``,
machine-wide ``before_state_change`` / ``after_state_change`` / ``finalize_event`` (pass them to
:func:`to_transitions`), and extra non-contract triggers with ``machine.add_transition``. Every
callback receives an ``EventData`` (``send_event=True``); ``event.kwargs`` are the arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..compiler.core_schemas import model_values
from ..diagnostics import did_you_mean
from ..simulator.engine import Simulator, expect_state
from ..simulator.results import Branch, StepResult, Violation
from ..simulator.state import State

if TYPE_CHECKING:
    from ..api import Contract
    from ..compiler.compile import CMachine, CMachineTransition

UNDECIDED = "UNDECIDED"
"""The code recorded when a call's outcome depends on unknown values but breaks no rule."""


@dataclass(frozen=True)
class ContractViolation:
    """Why a trigger was blocked, or why the call behind an accepted trigger failed."""

    code: str
    message: str  # rendered with the actual values, as in simulator reports
    tool: str
    state: str  # the machine's state when the trigger was called
    hint: str | None = None
    certain: bool = True  # False when the rule could not be decided (unknown values)
    values: tuple[tuple[str, str], ...] = ()  # sub-expression text → shown value
    violation: Violation | None = None  # the simulator's full record

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ContractModel:
    """The model used when :func:`to_transitions` is not given one."""

    state: str
    contract_state: State
    contract_last_step: StepResult | None
    contract_last_violation: ContractViolation | None
    contract_violations: list[ContractViolation]

    def __repr__(self) -> str:
        return f"<ContractModel state={getattr(self, 'state', None)!r}>"


def _decided(step: StepResult) -> Branch | None:
    """The step's no-event branch, when there is exactly one and it assumes nothing."""
    plain = [b for b in step.branches if b.event is None]
    if len(plain) != 1 or not plain[0].certain:
        return None
    return plain[0]


class TransitionsAdapter:
    """The contract side of a machine built by :func:`to_transitions`, reachable as
    ``machine.contract_adapter``: the simulator, the tracked machine, and :meth:`call`."""

    def __init__(
        self, contract: Contract, simulator: Simulator, cmachine: CMachine, initial: State
    ) -> None:
        self.contract = contract
        self.simulator = simulator
        self.machine_name = cmachine.name
        self.tools = cmachine.tools
        self.initial_state = initial
        self.machine: Any = None  # the transitions machine, set by to_transitions
        self._slot = cmachine.slot

    # ------------------------------------------------------------------ model bookkeeping
    def attach(self, model: Any, state: State | None = None) -> None:
        """Give ``model`` the contract attributes (done for the machine's model; call it for
        models added later with ``machine.add_model``, or let the first trigger do it)."""
        model.contract_state = state if state is not None else self.initial_state
        model.contract_last_step = None
        model.contract_last_violation = None
        model.contract_violations = []

    def _state_of(self, model: Any, current: str | None) -> State:
        """The model's contract state, its machine slot following the transitions state."""
        state = getattr(model, "contract_state", None)
        if not isinstance(state, State) or not hasattr(model, "contract_violations"):
            self.attach(model, state if isinstance(state, State) else None)
            state = model.contract_state
        if current is not None and state.data[self._slot] != current:
            values = list(state.data)
            values[self._slot] = current
            state = State(tuple(values), state.layout)
            model.contract_state = state
        return state

    def _record(self, model: Any, tool: str, source: str, violations: list[Violation]) -> None:
        records = [
            ContractViolation(
                v.code, v.message, tool, source, v.hint, v.certain, v.values, violation=v
            )
            for v in violations
        ]
        if records:
            model.contract_violations.extend(records)
            model.contract_last_violation = records[0]

    @staticmethod
    def _args(tool_params: list[str], event_data: Any) -> dict[str, Any]:
        args = dict(event_data.kwargs)
        if event_data.args:
            if len(event_data.args) > len(tool_params):
                raise TypeError(
                    f"{event_data.event.name}() takes {len(tool_params)} positional "
                    f"argument(s), {len(event_data.args)} given"
                )
            args.update(zip(tool_params, event_data.args))
        return args

    def _params(self, tool: str) -> list[str]:
        ctool = self.simulator.compiled.tools[tool]
        return [p.name for p in ctool.ir.params]

    # ------------------------------------------------------------------ transitions callbacks
    def prepare(self, event_data: Any) -> None:
        """``prepare_event``: run the simulator once for this trigger."""
        tool = event_data.event.name
        if tool not in self.tools:
            return
        state = self._state_of(event_data.model, event_data.state.name)
        args = self._args(self._params(tool), event_data)
        step = self.simulator.step(state, tool, args)
        event_data.contract_args = args
        event_data.contract_before = state
        event_data.contract_step = step
        event_data.contract_branch = _decided(step)

    def apply(self, event_data: Any) -> None:
        """``before`` of every contract transition: apply the call's successor state."""
        branch: Branch = event_data.contract_branch
        event_data.model.contract_state = branch.state

    def finalize(self, event_data: Any) -> None:
        """``finalize_event``: record why a trigger was blocked (or why its call failed)."""
        tool = event_data.event.name
        if tool not in self.tools:
            return
        model = event_data.model
        source = event_data.state.name if event_data.state is not None else "?"
        step: StepResult | None = getattr(event_data, "contract_step", None)
        if step is None:
            if source in event_data.event.transitions:
                return  # prepare itself raised (e.g. too many positional arguments)
            self._record_protocol(model, tool, source, event_data)
            return
        model.contract_last_step = step
        branch: Branch | None = event_data.contract_branch
        if branch is not None:
            if branch.failed or not event_data.result:
                self._record(model, tool, source, branch.violations or [self._stuck(tool)])
            return
        violations = step.violations
        if not violations:
            violations = [self._undecided(tool, step)]
        self._record(model, tool, source, violations)

    def _record_protocol(self, model: Any, tool: str, source: str, event_data: Any) -> None:
        """A trigger with no transition from the current state: the simulator's reasons."""
        state = self._state_of(model, source)
        try:
            args = self._args(self._params(tool), event_data)
        except TypeError:
            args = dict(event_data.kwargs)
        step = self.simulator.step(state, tool, args)
        model.contract_last_step = step
        violations = list(step.violations)
        if not any(v.code == "PROTOCOL_VIOLATION" for v in violations):
            # arguments were rejected before the protocol was checked: add its reason
            for e in self.simulator.enabled(state):
                if e.tool == tool:
                    protocol = [r for r in e.reasons if r.code == "PROTOCOL_VIOLATION"]
                    violations = protocol + violations
        self._record(model, tool, source, violations)

    def _undecided(self, tool: str, step: StepResult) -> Violation:
        plain = [b for b in step.branches if b.event is None]
        if not plain:
            message = f"every way `{tool}` can end is an environment event"
        else:
            assumed = sorted({a for b in plain for a in b.assumptions})
            message = f"what `{tool}` does depends on unknown values: " + "; ".join(assumed)
        return Violation(UNDECIDED, message, "outcome", certain=False)

    def _stuck(self, tool: str) -> Violation:  # pragma: no cover - machine and simulator agree
        return Violation(
            UNDECIDED,
            f"no transition of {self.machine_name} matches the outcome of `{tool}`",
            "protocol",
        )

    # ------------------------------------------------------------------ tools outside the machine
    def call(self, tool: str, /, model: Any = None, **args: Any) -> bool:
        """Call a tool that is *not* a trigger of this machine on ``model`` (default: the
        machine's model): same semantics as a trigger, without a state change of the machine.
        Returns whether the call was accepted."""
        if tool in self.tools:
            raise ValueError(
                f"`{tool}` is a trigger of machine {self.machine_name}: call model.{tool}(...)"
            )
        if model is None:
            model = self.machine.model
        attr = self.machine.model_attribute
        state = self._state_of(model, getattr(model, attr, None))
        step = self.simulator.step(state, tool, args)
        model.contract_last_step = step
        branch = _decided(step)
        if branch is not None and not branch.failed:
            model.contract_state = branch.state
            return True
        current = str(getattr(model, attr, "?"))
        if branch is not None:
            self._record(model, tool, current, branch.violations)
        else:
            self._record(model, tool, current, step.violations or [self._undecided(tool, step)])
        return False


class _Fires:
    """The condition of one contract transition: the decided branch moves the machine along
    it (its outcome applies, its guard holds, its target is where the simulator went)."""

    def __init__(self, adapter: TransitionsAdapter, t: CMachineTransition) -> None:
        self.adapter = adapter
        self.t = t
        guard = "" if t.ir.when is None else f" when {_expr_text(t.ir.when)}"
        on = t.ir.tool if t.ir.outcome is None else f"{t.ir.tool}.{t.ir.outcome}"
        self.__name__ = f"{on}{guard}"  # how transitions' diagrams name a condition

    def __call__(self, event_data: Any) -> bool:
        branch: Branch | None = getattr(event_data, "contract_branch", None)
        if branch is None:
            return False
        t = self.t.ir
        if branch.state.data[self.adapter._slot] != t.target:
            return False
        if branch.outcome is None:  # rejected before any outcome: the machine stays
            return False
        if not ((t.outcome is None and not branch.failed) or t.outcome == branch.outcome):
            return False
        if self.t.guard is None:
            return True
        sim = self.adapter.simulator
        before: State = event_data.contract_before
        ctool = sim.compiled.tools[t.tool]
        values = ctool.args_model.model_validate(event_data.contract_args)
        fields = model_values(values)
        return sim._eval(self.t.guard, before, fields, before.has_unknown, ctool) is True

    def __repr__(self) -> str:
        return f"<contract condition {self.__name__}>"


class _Stays:
    """The condition of the internal transition that keeps the machine where it is when a
    successful call's outcome is named by no ``TOOL.OUTCOME`` transition from this state."""

    def __init__(self, adapter: TransitionsAdapter, source: str) -> None:
        self.adapter = adapter
        self.source = source
        self.__name__ = "no transition for this outcome"

    def __call__(self, event_data: Any) -> bool:
        branch: Branch | None = getattr(event_data, "contract_branch", None)
        return (
            branch is not None
            and branch.outcome is not None
            and not branch.failed
            and branch.state.data[self.adapter._slot] == self.source
        )


def _expr_text(e: Any) -> str:
    from ..dsl.pretty import expr_text

    return expr_text(e)


def to_transitions(
    contract: Contract,
    machine: str | None = None,
    model: Any = None,
    graph: bool = False,
    state: State | Mapping[str, Any] | None = None,
    *,
    simulator: Simulator | None = None,
    **machine_kwargs: Any,
) -> Any:
    """A ``transitions.Machine`` (``GraphMachine`` when ``graph``) for a protocol machine.

    ``machine``: the protocol machine's name (optional when the contract has exactly one).
    ``model``: the object to drive (default: a fresh :class:`ContractModel`; reach it as
    ``machine.model``). ``state``: the initial contract state — a
    :class:`~contractsim.simulator.state.State` (its machine state becomes the initial state) or
    a mapping of overrides for ``Simulator.initial_state``. ``simulator``: the simulator to use
    (default ``contract.simulator()``; pass one with ``now=`` for reproducible dates). Other
    keyword arguments go to the ``Machine`` constructor (``ignore_invalid_triggers``,
    ``auto_transitions`` — default ``False`` here —, ``before_state_change``, ``name``, …).
    See the module documentation for what an accepted trigger means.
    """
    from transitions import Machine

    compiled = contract.compiled
    if machine is None:
        if len(compiled.machines) != 1:
            choices = ", ".join(compiled.machines) or "none"
            raise ValueError(
                f"contract {contract.name} has {len(compiled.machines)} protocol machines "
                f"({choices}); pass machine=NAME"
            )
        machine = next(iter(compiled.machines))
    cm = compiled.machines.get(machine)
    if cm is None:
        guess = did_you_mean(machine, compiled.machines)
        hint = f"; did you mean `{guess}`?" if guess else ""
        choices = ", ".join(compiled.machines) or "none"
        raise ValueError(
            f"contract {contract.name} has no protocol machine `{machine}` "
            f"(it has: {choices}){hint}"
        )
    if machine_kwargs.pop("send_event", True) is not True:
        raise ValueError("the contract adapter needs send_event=True")
    sim = simulator if simulator is not None else contract.simulator()
    if isinstance(state, State):
        expect_state(sim, state, "state")
        start = state
    else:
        start = sim.initial_state(state)
    adapter = TransitionsAdapter(contract, sim, cm, start)
    finals = {s.name for s in cm.ir.finals}
    states = [{"name": s.name, "final": s.name in finals} for s in cm.ir.states]
    transitions: list[dict[str, Any]] = []
    for tool, by_source in cm.by_tool.items():
        for source, ts in by_source.items():
            for t in ts:
                transitions.append(
                    {
                        "trigger": tool,
                        "source": source,
                        "dest": t.ir.target,
                        "conditions": [_Fires(adapter, t)],
                        "before": [adapter.apply],
                    }
                )
            if all(t.ir.outcome is not None for t in ts):
                transitions.append(
                    {
                        "trigger": tool,
                        "source": source,
                        "dest": None,
                        "conditions": [_Stays(adapter, source)],
                        "before": [adapter.apply],
                    }
                )
    if model is None:
        model = ContractModel()
    adapter.attach(model, start)
    machine_kwargs.setdefault("auto_transitions", False)
    if graph:
        from transitions.extensions import GraphMachine

        cls: Any = GraphMachine
    else:
        cls = Machine
    m = cls(
        model=model,
        states=states,
        transitions=transitions,
        initial=str(start.data[cm.slot]),
        send_event=True,
        **machine_kwargs,
    )
    m.prepare_event = [adapter.prepare, *m.prepare_event]
    m.finalize_event = [adapter.finalize, *m.finalize_event]
    m.contract_adapter = adapter
    adapter.machine = m
    return m
