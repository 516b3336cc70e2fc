"""`serve`, `run` and `demo` on a port already taken: one line naming it, exit 2, nothing started."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from hubwatch.cli import main


@pytest.mark.parametrize("command", ["serve", "run", "demo"])
def test_a_busy_port_is_one_clear_line(command: str, tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        monkeypatch.setenv("HUBWATCH_DATABASE_URL", f"sqlite:///{tmp_path / 'hw.db'}")
        monkeypatch.setenv("HUBWATCH_PORT", str(port))
        with pytest.raises(SystemExit) as exited:
            main([command])
    err = " ".join(capsys.readouterr().err.split())
    assert exited.value.code == 2, err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "in use" in err and "Traceback" not in err
