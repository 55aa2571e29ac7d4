"""Error codes and message templates from a tool's recorded failure messages.

Messages are clustered by their masked text (replay's :func:`~contractsim.replay.mask`: quoted
values, paths, numbers and dates masked); a cluster's CODE is made of the words of its message,
and the argument values that appear in one example message become ``{param}`` holes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..replay import mask

_WORD = re.compile(r"[A-Za-z]+")
_SKIP = {"n", "path", "name", "date", "the", "a", "an", "of", "to", "is", "in", "or", "and"}
MAX_CODE_WORDS = 4


@dataclass
class Cluster:
    """Failures of one tool whose messages look alike."""

    key: str
    """The masked message."""
    code: str
    template: str
    """A contract message template (braces escaped, argument values as ``{param}`` holes)."""
    steps: list[int] = field(default_factory=list)
    """Indices of the tool's failing calls in this cluster."""


def code_for(masked: str, tool: str, taken: set[str]) -> str:
    """An UPPER_SNAKE code from the words of a masked message (the tool's own name left out),
    unique among ``taken``."""
    text = masked
    exc = re.match(r"^(\w*(?:Error|Exception|Warning))\b", text)
    if exc:  # a crash: the exception's name
        words = re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", exc.group(1))
        code = "_".join(w.upper() for w in words)
        base, n = code, 2
        while code in taken:
            code = f"{base}_{n}"
            n += 1
        taken.add(code)
        return code
    if ":" in text:  # "cmd: operand: problem" → the problem
        tail = text.rsplit(":", 1)[1].strip()
        if _WORD.search(tail):
            text = tail
    words = [w for w in _WORD.findall(text) if w.lower() not in _SKIP and w.lower() != tool]
    code = "_".join(w.upper() for w in words[:MAX_CODE_WORDS]) or "FAILED"
    if not code[0].isalpha():
        code = "E_" + code
    base, n = code, 2
    while code in taken:
        code = f"{base}_{n}"
        n += 1
    taken.add(code)
    return code


def template_for(message: str, args: Mapping[str, Any], params: Sequence[str]) -> str:
    """``message`` as a contract template: braces doubled, then the string values of arguments
    that appear in it (longest first, at least 2 characters) replaced by ``{param}``."""
    text = message.replace("{", "{{").replace("}", "}}")
    values = sorted(
        ((str(args[p]), p) for p in params if isinstance(args.get(p), str | int) and p in args),
        key=lambda vp: -len(vp[0]),
    )
    for value, p in values:
        if len(value) >= 2 and "{" not in value and "}" not in value and value in text:
            text = text.replace(value, "\0" + p + "\1")
    return text.replace("\0", "{").replace("\1", "}")


def cluster(
    tool: str,
    failures: Sequence[tuple[str | None, Mapping[str, Any]]],
    params: Sequence[str],
    taken: set[str],
) -> tuple[list[Cluster], list[int]]:
    """Clusters of (message, args) failures, most frequent first, and the cluster of each."""
    by_key: dict[str, Cluster] = {}
    which: list[int] = []
    order: list[str] = []
    for i, (message, args) in enumerate(failures):
        key = mask(message or "")
        c = by_key.get(key)
        if c is None:
            c = by_key[key] = Cluster(key, "", template_for(message or "failed", args, params))
            order.append(key)
        c.steps.append(i)
    ranked = sorted(order, key=lambda k: (-len(by_key[k].steps), order.index(k)))
    for k in ranked:
        by_key[k].code = code_for(k, tool, taken)
    index = {k: n for n, k in enumerate(ranked)}
    for message, _ in failures:
        which.append(index[mask(message or "")])
    return [by_key[k] for k in ranked], which
