"""Fixtures for the screen tests, and the ``--update-goldens`` switch.

``pytest tests/screens --update-goldens`` rewrites the golden PNGs from the
current renderers; review the diff of ``tests/screens/golden`` before
committing. Without the switch a golden that differs by one pixel fails.
"""

from __future__ import annotations

import contextlib

import pytest

GOLDENS_OPTION = "--update-goldens"


def pytest_addoption(parser: pytest.Parser) -> None:
    # suppressed: a shared tests/conftest.py may already define the same switch
    with contextlib.suppress(ValueError):
        parser.addoption(
            GOLDENS_OPTION,
            action="store_true",
            default=False,
            help="rewrite golden files (PNG screens) instead of comparing against them",
        )


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption(GOLDENS_OPTION, default=False))
