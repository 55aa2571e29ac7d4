"""The format checks of string constraints (``format: "email"`` …), without pydantic: the
interpreter's ``is_date``/``is_datetime``, type tests and exports use them on paths (``check``,
``export``) that never build a validator, and :mod:`.validators` wraps them in pydantic
validators."""

from __future__ import annotations

import functools
import ipaddress
import re
import uuid
from collections.abc import Callable
from datetime import date, datetime


# The patterns are compiled the first time a format is checked: most runs check none (~1.5 ms
# of every cold ``check`` and ``simulate`` otherwise).
@functools.cache
def _email() -> re.Pattern[str]:
    return re.compile(
        r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$"
    )


@functools.cache
def _datetime() -> re.Pattern[str]:
    return re.compile(
        r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$"
    )


@functools.cache
def _uri() -> re.Pattern[str]:
    return re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")


@functools.cache
def _uuid() -> re.Pattern[str]:
    return re.compile(
        r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    )


def _is_uuid(text: str, version: int | None = None) -> bool:
    if not _uuid().match(text):
        return False
    try:
        parsed = uuid.UUID(text)
    except ValueError:
        return False
    return version is None or parsed.version == version


def is_datetime(text: str) -> bool:
    if not _datetime().match(text):
        return False
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return True


def is_date(text: str) -> bool:
    if len(text) != 10:
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version
    except ValueError:
        return False


FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {
    "uuid": _is_uuid,
    "uuid4": lambda s: _is_uuid(s, 4),
    "date-time": is_datetime,
    "date": is_date,
    "email": lambda s: len(s) <= 254 and bool(_email().match(s)),
    "ipv4": lambda s: _is_ip(s, 4),
    "ipv6": lambda s: _is_ip(s, 6),
    "uri": lambda s: bool(_uri().match(s)),
}

FORMAT_EXAMPLES = {
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "uuid4": "9b2f3c1e-4a5d-4e6f-8a7b-1c2d3e4f5a6b",
    "date-time": "2024-05-20T14:30:00.123Z",
    "date": "2024-05-20",
    "email": "ada@example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/path",
}
