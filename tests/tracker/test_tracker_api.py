"""The tracker's and CLI wiring's public names, and that importing them builds nothing heavy."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

MODULES = [
    "hubwatch.tracker.hub",
    "hubwatch.tracker.hub_errors",
    "hubwatch.tracker.poller",
    "hubwatch.tracker.pipeline",
    "hubwatch.tracker.scheduler",
    "hubwatch.tracker.estimating",
    "hubwatch.wiring",
    "hubwatch.cli.watch",
    "hubwatch.cli.poll",
    "hubwatch.cli.run",
    "hubwatch.cli.params",
]


@pytest.mark.parametrize("name", MODULES)
def test_public_names_exist_and_the_module_says_what_it_is_for(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__ and module.__doc__.strip()
    assert module.__all__, name
    for public in module.__all__:
        assert hasattr(module, public), f"{name}.__all__ names {public}, which does not exist"


def test_importing_builds_no_client_server_or_scheduler() -> None:
    code = (
        "import sys\n"
        f"for m in {MODULES!r}: __import__(m)\n"
        "print(sorted(m for m in ('huggingface_hub', 'apscheduler', 'fastapi', 'uvicorn', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
