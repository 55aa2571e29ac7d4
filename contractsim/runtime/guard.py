"""The runtime guard: the contract that predicts failures stops them around real tool calls.

``guard = contract.guard(state=...)``; ``guard.wrap("delete_file", fn)`` or ``@guard.tool()``.

Before a call the guard refreshes the state variables that have observers, validates the
arguments, and checks protocol machines and hard preconditions against its tracked state. A
certain violation means the function is not called: the caller gets a :class:`ContractViolation`
(``mode="raise"``) or a :class:`CallResult` holding a :class:`GuardError` (``mode="return"``),
each with ``to_json()`` and an LLM-ready ``to_llm()``. After the call the real return value (or
exception) is matched to a declared outcome (``observed when``), that outcome's effects are
applied to the tracked state atomically, and any disagreement between prediction and reality is
logged as :class:`Drift`. A raising tool fails like one that returned a failure: a violated
precondition leaves the tracked state unchanged, and a ``fails`` outcome (recognised by
``observed when``, or chosen by its ``when``) applies its own effects.

Checks and state updates happen under a lock; the tool itself runs outside it, so slow tools do
not serialise each other. Outcomes are applied to the state current when the call ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import itertools
import json
import logging
import os
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from ..compiler.foreign import (
    contract_value,
    described,
    exception_text,
    expect_mapping,
    safe_repr,
    safe_text,
    safe_type_name,
)
from ..compiler.values import UNKNOWN, json_ready, thaw
from ..diagnostics import ContractError, did_you_mean, visible
from ..dsl.walk import reads_clock
from ..simulator.engine import Simulator, expect_state
from ..simulator.observe import Observation, Observed, expected_verdict, predicted_failures
from ..simulator.results import StepResult, StepWarning, Violation
from ..simulator.state import State

if TYPE_CHECKING:
    from ..api import Contract

log = logging.getLogger("contractsim.guard")
Mode = Literal["raise", "return"]
F = TypeVar("F", bound=Callable[..., Any])


# ----------------------------------------------------------------------------------- results
@dataclass(frozen=True, repr=False)
class GuardError:
    """Why a call was refused (or failed): everything an agent needs to recover."""

    tool: str
    args: Mapping[str, Any]
    code: str
    message: str
    hint: str | None = None
    field: str | None = None
    violations: tuple[Violation, ...] = ()
    allowed_tools: tuple[str, ...] = ()
    blocked: bool = True  # the function was not called
    detail: str | None = None  # what the tool itself said, for a call that was made
    # what else is wrong with a refused call: failed `should`s, OFF_SPEC_ARGUMENT
    warnings: tuple[StepWarning, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: code, message, hint, field, every violation, the warnings (what
        else is wrong with the call), allowed tools."""
        out: dict[str, Any] = {
            "error": self.code,
            "tool": self.tool,
            "message": self.message,
            "blocked": self.blocked,
        }
        if self.hint:
            out["hint"] = self.hint
        if self.field:
            out["field"] = self.field
        if self.detail:
            out["detail"] = self.detail
        if len(self.violations) > 1 or (self.violations and self.violations[0].values):
            out["violations"] = [v.to_json() for v in self.violations]
        if self.warnings:
            out["warnings"] = [w.to_json() for w in self.warnings]
        out["allowed_tools"] = list(self.allowed_tools)
        return out

    def to_llm(self) -> str:
        """A short text for the model: what went wrong, with values, and what to do instead."""
        call = f"{self.tool}({_args_text(self.args)})"
        head = f"{call} was refused" if self.blocked else f"{call} failed"
        lines = [f"{head}: {self.code}: {self.message}"]
        if self.detail:
            lines.append(f"The tool said: {self.detail}")
        for v in self.violations[1:]:
            lines.append(f"also {v.code}: {v.message}")
        for v in self.violations:
            for text, value in v.values[:4]:
                lines.append(f"  where {text} = {value}")
        for w in self.warnings:
            lines.append(f"also (warning) {w.code}: {w.message}")
        hints = [v.hint for v in self.violations if v.hint] or ([self.hint] if self.hint else [])
        for hint in dict.fromkeys(hints):
            lines.append(f"Fix: {hint}")
        if self.allowed_tools:
            lines.append("Other tools you can call now: " + ", ".join(self.allowed_tools))
        return "\n".join(visible(line) for line in lines)  # no escape sequence reaches a log


class ContractViolation(Exception):
    """Raised (``mode="raise"``) when the contract says a call must fail; the tool was not
    called. ``error`` holds the details."""

    def __init__(self, error: GuardError) -> None:
        super().__init__(error.to_llm())
        self.error = error

    def __reduce__(self) -> tuple[type[ContractViolation], tuple[GuardError]]:
        return (ContractViolation, (self.error,))

    @property
    def code(self) -> str:
        """The error code (``NO_BACKUP``, ``INVALID_ARGUMENT`` …)."""
        return self.error.code

    def to_json(self) -> dict[str, Any]:
        """See :meth:`GuardError.to_json`."""
        return self.error.to_json()

    def to_llm(self) -> str:
        """See :meth:`GuardError.to_llm`."""
        return self.error.to_llm()


@dataclass(frozen=True, repr=False)
class CallResult:
    """What a guarded call returns in ``mode="return"``: the value or the error, and warnings."""

    tool: str
    ok: bool
    value: Any = None
    error: GuardError | None = None
    warnings: tuple[StepWarning, ...] = ()
    outcome: str | None = None
    exception: BaseException | None = None

    def to_json(self) -> dict[str, Any]:
        """``ok``, ``tool``, the ``result``, the error's fields, ``outcome`` and ``warnings``."""
        out: dict[str, Any] = {"ok": self.ok, "tool": self.tool}
        if self.ok or self.value is not None:
            out["result"] = _plain(self.value)
        if self.error is not None:
            out.update(self.error.to_json())
        if self.outcome is not None:
            out["outcome"] = self.outcome
        if self.warnings:
            out["warnings"] = [w.to_json() for w in self.warnings]
        return out

    def to_llm(self) -> str:
        """The result as JSON text, or the error's text; warnings on lines of their own."""
        if self.error is not None:
            text = self.error.to_llm()
        else:
            text = json.dumps(_plain(self.value), ensure_ascii=False)
        for w in self.warnings:
            text += "\n" + visible(f"Warning {w.code}: {w.message}")
        return text


@dataclass(frozen=True, repr=False)
class Drift:
    """A call where the contract and the real tool disagreed."""

    index: int
    tool: str
    args: Mapping[str, Any]
    predicted: str  # ok, fails, may_fail
    predicted_codes: tuple[str, ...]
    status: str  # ok, error, crash
    outcome: str | None
    notes: tuple[str, ...]
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (a line of :meth:`Guard.save_drift`)."""
        out: dict[str, Any] = {
            "call": self.index,
            "tool": self.tool,
            "args": _plain(self.args),
            "predicted": self.predicted,
            "predicted_codes": list(self.predicted_codes),
            "status": self.status,
            "outcome": self.outcome,
            "notes": list(self.notes),
        }
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(repr=False)
class CallRecord:
    """One guarded call, as the guard saw it."""

    index: int
    tool: str
    args: Mapping[str, Any]
    verdict: str
    status: str = "running"  # running, blocked, ok, error, crash
    outcome: str | None = None
    warnings: tuple[StepWarning, ...] = ()
    drift: Drift | None = None


def _safe_repr(self: Any) -> str:
    """The dataclass's usual repr, with every field shown safely (a value of the tool's whose
    ``__repr__`` raises or runs long does not make printing a result fail)."""

    def shown(value: Any) -> str:
        if type(value) is dict:  # arguments: each value on its own
            return "{" + ", ".join(f"{k!r}: {safe_repr(v, 300)}" for k, v in value.items()) + "}"
        return safe_repr(value, 300)

    fields = ", ".join(f"{f.name}={shown(getattr(self, f.name))}" for f in dataclasses.fields(self))
    return f"{type(self).__name__}({fields})"


GuardError.__repr__ = CallResult.__repr__ = Drift.__repr__ = CallRecord.__repr__ = _safe_repr  # type: ignore[method-assign]


# ------------------------------------------------------------------------------------- guard
_LAST: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar(
    "contractsim_guard_last", default=None
)


class Guard:
    """Guards real tool functions with a contract; create it with ``contract.guard()``.

    ``state``: initial-state overrides (as ``Simulator.initial_state`` takes them:
    :data:`contractsim.UNKNOWN` makes a value unknown) or a simulator
    :class:`~contractsim.simulator.state.State` of this contract. ``mode``: ``"raise"``
    (refused calls raise :class:`ContractViolation`, the wrapped function returns the real
    value) or ``"return"`` (every call returns a :class:`CallResult`). ``now`` fixes
    ``today()``/``now()`` (default: the wall clock at each call). ``block_on_unknown``: also
    refuse calls that only *may* fail (default: call them; reality decides and refines the
    state). ``serialize``: run
    guarded calls one at a time, so that two parallel calls cannot both pass a check that only
    one of them may (default: tools run concurrently, outside the guard's lock).
    ``history_limit``: how many calls and drift records are kept.
    """

    def __init__(
        self,
        contract: Contract,
        state: Mapping[str, Any] | State | None = None,
        mode: Mode = "raise",
        now: datetime | str | None = None,
        block_on_unknown: bool = False,
        serialize: bool = False,
        history_limit: int = 10_000,
    ) -> None:
        if not isinstance(mode, str) or mode not in ("raise", "return"):
            raise ValueError(f"mode must be 'raise' or 'return', not {safe_text(mode, 60)}")
        for flag, name in ((block_on_unknown, "block_on_unknown"), (serialize, "serialize")):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, not {safe_type_name(flag)}")
        if isinstance(history_limit, bool) or not isinstance(history_limit, int):
            raise TypeError(f"history_limit must be an int, not {safe_type_name(history_limit)}")
        if not 1 <= history_limit <= sys.maxsize:
            raise ValueError(
                f"history_limit must be between 1 and {sys.maxsize}, "
                f"not {safe_text(history_limit, 40)}"
            )
        if state is not None and not isinstance(state, State):
            state = expect_mapping(state, "state", "state variable names")
        self.contract = contract
        self.mode: Mode = mode
        self.block_on_unknown = block_on_unknown
        # the wall clock matters only to a contract that reads it: otherwise one simulator serves
        fixed = now is not None or not reads_clock(contract.ir)
        self._fixed_sim = Simulator(contract, now=now) if fixed else None
        sim = self._simulator()
        if isinstance(state, State):
            expect_state(sim, state, "state")
        self._state = (
            state if isinstance(state, State) else self._validated(state or {}, sim.initial_state())
        )
        self._lock = threading.RLock()
        # sync calls queue on a thread lock; async calls on an asyncio lock (tasks of one event
        # loop share a thread, so a thread lock would let them all in)
        self._serial: threading.RLock | None = threading.RLock() if serialize else None
        self._async_serial: asyncio.Lock | None = None
        self._observers: dict[str, Callable[[], Any]] = {}
        self._count = itertools.count()
        self.history: deque[CallRecord] = deque(maxlen=history_limit)
        self.drift: deque[Drift] = deque(maxlen=history_limit)

    # -- state
    @property
    def state(self) -> State:
        """The tracked state (immutable snapshot)."""
        with self._lock:
            return self._state

    def set_state(self, values: Mapping[str, Any]) -> None:
        """Replace some state variables (plain values, validated against the declared types;
        :data:`contractsim.UNKNOWN` makes one unknown)."""
        expect_mapping(values, "values", "state variable names")
        with self._lock:
            self._state = self._validated(values, self._state)

    def add_observer(self, variable: str, read: Callable[[], Any]) -> None:
        """Refresh state variable ``variable`` from the real world with ``read()`` before each
        check (its value is validated against the declared type). Observers are plain
        functions; they run under the guard's lock."""
        if not isinstance(variable, str):
            raise TypeError(
                f"variable must be a state variable name (a str), not {described(variable)}"
            )
        if not callable(read):
            raise TypeError(
                f"the observer of `{variable}` must be a function of no arguments returning the "
                f"value, not {described(read)}"
            )
        if variable not in self.contract.compiled.state_names:
            guess = did_you_mean(variable, self.contract.compiled.state_names)
            raise ValueError(
                f"the contract has no state variable `{variable}`"
                + (f"; did you mean `{guess}`?" if guess else "")
            )
        if _is_async(read):
            raise ValueError(
                f"the observer of `{variable}` is async; give a plain function (the guard "
                "checks calls synchronously)"
            )
        with self._lock:
            self._observers[variable] = read

    def observer(self, variable: str) -> Callable[[F], F]:
        """Decorator form of :meth:`add_observer`."""

        def register(read: F) -> F:
            self.add_observer(variable, read)
            return read

        return register

    def allowed_tools(self) -> list[str]:
        """The tools whose protocol machines and argument-free preconditions admit a call now."""
        with self._lock:
            self._refresh()
            return self._allowed()

    @property
    def last(self) -> CallRecord | None:
        """The last call made through the guard from this thread or task (its warnings, outcome,
        drift)."""
        return _LAST.get()

    def drift_log(self) -> list[dict[str, Any]]:
        """Every disagreement kept, as JSON-ready dicts."""
        with self._lock:
            return [d.to_json() for d in self.drift]

    def save_drift(self, path: str | os.PathLike[str]) -> None:
        """Write the drift log as JSON Lines."""
        if not isinstance(path, str | os.PathLike):
            raise TypeError(
                f"path must be a file path (a str or os.PathLike), not {described(path)}"
            )
        with open(path, "w", encoding="utf-8") as out:
            for d in self.drift_log():
                out.write(json.dumps(d, ensure_ascii=False, default=str) + "\n")

    # -- wrapping
    def wrap(self, tool: str, fn: F) -> F:
        """``fn`` guarded as the contract's ``tool``. Its parameters are matched to the tool's by
        name (the function's own defaults included: the contract checks the call that really
        runs); parameters the contract does not declare are passed through unchecked."""
        if not isinstance(tool, str):
            raise TypeError(f"tool must be a tool name (a str), not {described(tool)}")
        if not callable(fn):
            raise TypeError(f"fn must be the function that runs tool `{tool}`, not {described(fn)}")
        ctool = self.contract.compiled.tools.get(tool)
        if ctool is None:
            guess = did_you_mean(tool, self.contract.compiled.tools)
            raise ValueError(
                f"the contract declares no tool `{tool}`"
                + (f"; did you mean `{guess}`?" if guess else "")
            )
        try:
            signature = inspect.signature(fn)
            is_async = _is_async(fn)
            functools.update_wrapper(lambda: None, fn)  # what @functools.wraps will read
        except Exception as exc:  # noqa: BLE001 - the caller's object, read as a function
            raise TypeError(
                f"cannot guard {_name_of(fn)} as `{tool}`: it cannot be read as a function "
                f"({exception_text(exc)})"
            ) from None
        declared = {p.name for p in ctool.ir.params}
        takes_kwargs = any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
        )
        required = [p.name for p in ctool.ir.params if p.default is None and not p.optional]
        missing = [n for n in required if n not in signature.parameters and not takes_kwargs]
        if missing:
            raise ValueError(
                f"{_name_of(fn)} has no parameter "
                + ", ".join(f"`{n}`" for n in missing)
                + f" that tool `{tool}` requires"
            )

        def contract_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            out: dict[str, Any] = {}
            for name, value in bound.arguments.items():
                kind = signature.parameters[name].kind
                if kind is inspect.Parameter.VAR_KEYWORD:
                    out.update({k: v for k, v in value.items() if k in declared})
                elif name in declared:
                    out[name] = value
            return out

        if is_async:

            @functools.wraps(fn)
            async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                async with self._async_lock() or contextlib.nullcontext():
                    call = self._before(tool, args, kwargs, contract_args)
                    if isinstance(call, _Refused):
                        return call.answer()
                    try:
                        value = await cast("Callable[..., Awaitable[Any]]", fn)(*args, **kwargs)
                    except Exception as exc:
                        return self._after_raise(call, exc)
                    except BaseException as exc:  # cancelled, interrupted: record, re-raise
                        self._after_raise(call, exc, always_raise=True)
                        raise
                    return self._after_return(call, value)

            return cast(F, guarded_async)

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            with self._serial or contextlib.nullcontext():
                call = self._before(tool, args, kwargs, contract_args)
                if isinstance(call, _Refused):
                    return call.answer()
                try:
                    value = fn(*args, **kwargs)
                    if inspect.isawaitable(value):
                        if inspect.iscoroutine(value):
                            value.close()
                        raise TypeError(
                            f"{_name_of(fn)} returned an awaitable: wrap an "
                            "async function (or an object with `async def __call__`) instead"
                        )
                except Exception as exc:
                    return self._after_raise(call, exc)
                except BaseException as exc:
                    self._after_raise(call, exc, always_raise=True)
                    raise
                return self._after_return(call, value)

        return cast(F, guarded)

    def tool(self, name: str | None = None) -> Callable[[F], F]:
        """Decorator form of :meth:`wrap`; the tool name defaults to the function's name."""
        if name is not None and not isinstance(name, str):
            raise TypeError(
                f"name must be a tool name (a str) or None, not {described(name)}"
                + ("; write @guard.tool() with parentheses" if callable(name) else "")
            )

        def decorate(fn: F) -> F:
            return self.wrap(name or fn.__name__, fn)

        return decorate

    def check(self, tool: str, args: Mapping[str, Any] | None = None) -> GuardError | None:
        """What the guard would say before calling ``tool(**args)`` now, for the contract's own
        arguments (nothing is called)."""
        if not isinstance(tool, str):
            raise TypeError(f"tool must be a tool name (a str), not {described(tool)}")
        values = expect_mapping(args, "args", "parameter names")
        with self._lock:
            self._refresh()
            prediction = self._simulator().step(self._state, tool, values)
            return self._refusal(prediction, values)

    # -- the three moments of a call
    def _before(
        self,
        tool: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        contract_args: Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]],
    ) -> _Pending | _Refused:
        try:
            values = contract_args(args, kwargs)
        except TypeError as exc:
            hint = f"call {tool} with the parameters its contract declares"
            error = GuardError(tool, {}, "INVALID_ARGUMENT", str(exc), hint)
            return self._refused(tool, {}, "fails", error, ())
        with self._lock:
            try:
                self._refresh()
            except Exception as exc:
                if self.mode == "raise":
                    raise
                error = GuardError(
                    tool,
                    values,
                    "OBSERVER_FAILED",
                    f"reading the state failed: {exception_text(exc)}",
                    "the call was not made; try again when the state can be read",
                )
                return self._refused(tool, values, "fails", error, ())
            prediction = self._simulator().step(self._state, tool, values)
            refusal = self._refusal(prediction, values)
            warnings = tuple(prediction.warnings)
            if refusal is not None:
                return self._refused(tool, values, prediction.verdict, refusal, warnings)
            warnings += _possible_failures(prediction)
            record = CallRecord(next(self._count), tool, values, prediction.verdict)
            record.warnings = warnings
            self.history.append(record)
        for w in warnings:
            log.warning("%s: %s: %s", tool, w.code, w.message)
        return _Pending(record, prediction)

    def _after_return(self, call: _Pending, value: Any) -> Any:
        observed = self._apply(call, Observation.returned(value), keep_state=False)
        if self.mode == "raise":
            return value
        error = None
        if observed.status != "ok":
            error = self._failure(call, observed, None, _short(value))
        return CallResult(
            call.record.tool,
            error is None,
            value,
            error,
            call.record.warnings,
            observed.outcome,
        )

    def _after_raise(self, call: _Pending, exc: BaseException, always_raise: bool = False) -> Any:
        observed = self._apply(call, Observation.raised(exc), keep_state=True)
        if self.mode == "raise" or always_raise:
            raise exc
        error = self._failure(call, observed, exception_text(exc), None)
        return CallResult(
            call.record.tool,
            False,
            None,
            error,
            call.record.warnings,
            observed.outcome,
            exc,
        )

    def _failure(
        self, call: _Pending, observed: Observed, raised: str | None, said: str | None
    ) -> GuardError:
        """The error of a call that was made and failed (``blocked`` false)."""
        branch = observed.branch
        v = branch.violations[0] if branch and branch.violations else None
        with self._lock:
            allowed = self._allowed()
        return GuardError(
            call.record.tool,
            call.record.args,
            v.code if v else ("TOOL_RAISED" if raised else "TOOL_ERROR"),
            v.message if v else (raised or f"{call.record.tool} reported a failure"),
            v.hint if v else None,
            violations=tuple(branch.violations) if branch else (),
            allowed_tools=tuple(allowed),
            blocked=False,
            detail=said if said is not None else (raised if v else None),
        )

    def _apply(self, call: _Pending, seen: Observation, keep_state: bool) -> Observed:
        record = call.record
        with self._lock:
            try:
                observed = self._simulator().observe(
                    self._state, record.tool, record.args, seen, call.prediction
                )
            except Exception as exc:  # noqa: BLE001 - the tool ran: record it all the same
                observed = self._unreadable(call, seen, exc)
            # a raise changes nothing, unless the contract names the exception as an outcome or
            # a `fail` statement, which keeps the effects before it; and what it proves is kept:
            # the branch of an undecided precondition that failed narrows unknown values
            # (`balance >= amount` failed: balance < amount)
            branch = observed.branch
            by_fail = branch is not None and any(v.kind == "fail" for v in branch.violations)
            learned = branch is not None and branch.outcome is None
            if not keep_state or observed.outcome is not None or by_fail or learned:
                self._state = observed.state
            record.status = observed.status
            record.outcome = observed.outcome
            if observed.branch is not None:
                seen_before = {(w.code, w.message) for w in record.warnings}
                record.warnings += tuple(
                    w for w in observed.branch.warnings if (w.code, w.message) not in seen_before
                )
            if observed.notes:  # a certain prediction was wrong, or the result did not fit
                drift = Drift(
                    record.index,
                    record.tool,
                    record.args,
                    observed.prediction.verdict,
                    tuple(v.code for v in observed.prediction.violations),
                    observed.status,
                    observed.outcome,
                    observed.notes,
                    seen.error,
                )
                record.drift = drift
                self.drift.append(drift)
                log.warning("contract drift on %s: %s", record.tool, "; ".join(drift.notes))
        _LAST.set(record)
        return observed

    def _unreadable(self, call: _Pending, seen: Observation, exc: Exception) -> Observed:
        """What to record when following the call through the contract failed: a return is
        followed again with ``result`` unknown (its success effects still apply); a raise
        changes nothing."""
        note = f"the guard could not read the call's result: {exception_text(exc)}"
        if seen.error is None:
            with contextlib.suppress(Exception):
                observed = self._simulator().observe(
                    self._state,
                    call.record.tool,
                    call.record.args,
                    Observation("ok", UNKNOWN, None),
                    call.prediction,
                )
                return dataclasses.replace(observed, notes=(note, *observed.notes))
        status: Literal["ok", "crash"] = "crash" if seen.error is not None else "ok"
        return Observed(call.prediction, status, None, None, self._state, (note,))

    # -- helpers
    def _async_lock(self) -> asyncio.Lock | None:
        if self._serial is None:
            return None
        with self._lock:
            if self._async_serial is None:
                self._async_serial = asyncio.Lock()
            return self._async_serial

    def _simulator(self) -> Simulator:
        return self._fixed_sim or Simulator(self.contract)

    def _refresh(self) -> None:
        if not self._observers:
            return
        values = {name: read() for name, read in self._observers.items()}
        self._state = self._validated(values, self._state, python_keys=True)

    def _validated(
        self, values: Mapping[str, Any], base: State, python_keys: bool = False
    ) -> State:
        from ..simulator.values import validate_state_overrides

        try:
            checked = validate_state_overrides(
                self.contract.compiled,
                dict(values),
                "<guard>",
                python_keys=python_keys,
                unknown_mark=False,
            )
        except ContractError as exc:
            raise ValueError(
                "state values do not fit the contract: "
                + "; ".join(d.message for d in exc.diagnostics)
            ) from None
        return self._simulator().state_with(checked, base)

    def _allowed(self, exclude: str | None = None) -> list[str]:
        """Tools callable in the tracked state (no observers are run: the caller holds the
        lock and the state is fresh enough)."""
        refused = ("fails", "may_fail") if self.block_on_unknown else ("fails",)
        return [
            e.tool
            for e in self._simulator().enabled(self._state)
            if e.verdict not in refused and e.tool != exclude
        ]

    def _refusal(self, prediction: StepResult, args: Mapping[str, Any]) -> GuardError | None:
        """A refusal when the call must fail whatever the environment does (an environment
        event's failure branch is a risk, reported as a warning, not a reason to refuse)."""
        expected = expected_verdict(prediction)
        if expected == "ok" or (expected == "may_fail" and not self.block_on_unknown):
            return None
        failing = predicted_failures(prediction)
        violations = [v for b in failing for v in b.violations if v.certain] or [
            v for b in failing for v in b.violations
        ]
        violations = list({(v.code, v.message): v for v in violations}.values())
        first = violations[0]
        return GuardError(
            prediction.tool,
            dict(args),
            first.code,
            first.message,
            first.hint,
            first.field,
            tuple(violations),
            tuple(self._allowed(exclude=prediction.tool)),
            warnings=tuple(w for w in prediction.warnings if w.refused),
        )

    def _refused(
        self,
        tool: str,
        args: Mapping[str, Any],
        verdict: str,
        error: GuardError,
        warnings: tuple[StepWarning, ...],
    ) -> _Refused:
        with self._lock:
            record = CallRecord(
                next(self._count), tool, args, verdict, status="blocked", warnings=warnings
            )
            self.history.append(record)
        _LAST.set(record)
        return _Refused(self, error, warnings)


def _is_async(fn: Any) -> bool:
    call = None if inspect.isroutine(fn) else inspect.getattr_static(type(fn), "__call__", None)
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _possible_failures(prediction: StepResult) -> tuple[StepWarning, ...]:
    """The ways a call that is let through may still fail: environment events, unknowns."""
    out: dict[tuple[str, str], StepWarning] = {}
    for b in prediction.branches:
        if not b.failed:
            continue
        for v in b.violations:
            if b.event is not None:
                chance = f", p={b.probability:g}" if b.probability is not None else ""
                text = f"may fail: {v.message} (on {b.event}{chance})"
            else:
                text = f"may fail: {v.message}"
            out.setdefault((v.code, text), StepWarning(v.code, text, certain=False))
    return tuple(out.values())


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(_plain(value), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class _Pending:
    record: CallRecord
    prediction: StepResult


@dataclass
class _Refused:
    guard: Guard
    error: GuardError
    warnings: tuple[StepWarning, ...] = field(default=())

    def answer(self) -> Any:
        if self.guard.mode == "raise":
            raise ContractViolation(self.error)
        return CallResult(self.error.tool, False, None, self.error, self.warnings)


def _plain(value: Any) -> Any:
    """JSON-ready data, for any value: read as a contract value (what cannot be read, e.g. a
    part that contains itself, is ``"$unknown"``), then thawed."""
    return json_ready(thaw(contract_value(value).value))


def _name_of(fn: Any) -> str:
    name = None
    with contextlib.suppress(Exception):
        name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else safe_text(fn, 80)


def _args_text(args: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{safe_text(k, 100)}={json.dumps(_plain(v), ensure_ascii=False)}" for k, v in args.items()
    )
