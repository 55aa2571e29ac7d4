"""Shared test configuration.

Hypothesis profiles: the default run (the README's ``python -m pytest``) tries 50 examples per
property of ``test_compile.py`` and ``test_fuzz.py``; ``.ci/run`` sets ``HYPOTHESIS_PROFILE=ci``
for 200. (A test that names its own ``max_examples`` keeps it.)
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("dev", max_examples=50)
settings.register_profile("ci", max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
