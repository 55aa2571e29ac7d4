"""Run-time integrations of contracts with other libraries (e.g. the ``transitions`` adapter)."""
