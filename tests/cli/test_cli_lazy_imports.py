"""`hubwatch --help` and `hubwatch estimate CONFIG` load no database, web or server layer.

Each runs in a fresh interpreter; what it imported is read from `sys.modules` afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
HEAVY = ("sqlalchemy", "sqlmodel", "alembic", "fastapi", "starlette", "uvicorn")
SCRIPT = """
import json, sys
from hubwatch.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
finally:
    print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.__stderr__)
"""


def loaded_by(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=120)
    last = done.stderr.strip().splitlines()[-1]
    return set(json.loads(last))


@pytest.mark.parametrize(
    "args",
    [("--help",), ("poll", "--help"), ("estimate", str(DATA / "configs" / "BAAI__bge-m3" / "config.json"))],
    ids=["help", "poll-help", "estimate-config"],
)
def test_no_database_or_web_layer_is_imported(args: tuple[str, ...]) -> None:
    heavy = sorted(loaded_by(*args) & set(HEAVY))
    assert heavy == [], f"`hubwatch {' '.join(args)}` imported {heavy}: import them inside the commands that need them"


def test_a_command_that_needs_the_store_still_gets_it(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'hw.db'}"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, "watch", "list", "--json"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.stdout.strip() == "[]"
    assert {"sqlalchemy", "alembic"} <= set(json.loads(done.stderr.strip().splitlines()[-1]))
