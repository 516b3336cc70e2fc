"""Fixtures shared across the test suite (each block is owned by the area named in its header)."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent
DATA = TESTS / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The test data folder (histories, configs)."""
    return DATA
