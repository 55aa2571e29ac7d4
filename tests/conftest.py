"""Shared test configuration.

Hypothesis profiles: the default run (the README's ``python -m pytest``) tries 50 examples per
property of ``test_compile.py`` and ``test_fuzz.py``; ``.ci/run`` sets ``HYPOTHESIS_PROFILE=ci``
for 200. (A test that names its own ``max_examples`` keeps it.)

Helpers that many test files share are below; import them with ``from conftest import …``
(pytest puts tests/ on ``sys.path``).
"""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner, Result
from hypothesis import settings

settings.register_profile("dev", max_examples=50)
settings.register_profile("ci", max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def write(folder: Path, name: str, text: str) -> str:
    """Write ``text`` (UTF-8) to ``folder/name`` and return the path as a string."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def cli(*args: str) -> Result:
    """Run the ``contractsim`` command in-process with click's runner."""
    from contractsim.cli import main

    return CliRunner().invoke(main, list(args))


def cli_exit(*args: str) -> tuple[int, str]:
    """Run the command, which must end with an exit code (no escaping exception); return the
    exit code and the output."""
    result = cli(*args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output
