"""`hubwatch check --server URL` trusts only a hubwatch web app of an API it speaks: anything else that
answers there (the hub emulator, a plain server answering 404, a page answering 200 HTML for every
path, a proxy's own 404 past the identity) exits 3 naming what answered, with a fix."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from check_servers import web_app  # noqa: F401
from conftest import ADVISED_SHAS

from hubwatch.cli import _register, cli
from hubwatch.cli.errors import EXIT_HUB, run_cli

L2 = ADVISED_SHAS["L2"]
FIX = ("fix: point --server at the hubwatch web app's base URL (the one serving /api/v1/identity); "
       "behind a proxy include its path prefix")

# An answer: (status, headers, body) for a request path.
Answer = Callable[[str], tuple[int, dict[str, str], bytes]]


def _serve(answer: Answer) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 — the stdlib's name
            status, headers, body = answer(self.path)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def plain_404() -> Iterator[str]:
    """A plain HTTP server answering 404 for every path (http.server's own error page)."""

    def answer(path: str) -> tuple[int, dict[str, str], bytes]:
        return 404, {"Content-Type": "text/html;charset=utf-8"}, b"<!DOCTYPE HTML>\n<title>Error response</title>"

    yield from _serve(answer)


@pytest.fixture
def html_200() -> Iterator[str]:
    """A server answering 200 with an HTML page for every path (a single-page app, a login wall)."""

    def answer(path: str) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "text/html; charset=utf-8"}, b"<html><body>Welcome</body></html>"

    yield from _serve(answer)


@pytest.fixture
def newer_api() -> Iterator[str]:
    """A hubwatch of a later release whose JSON API is version 2."""

    def answer(path: str) -> tuple[int, dict[str, str], bytes]:
        body = json.dumps({"service": "hubwatch", "version": "9.0.0", "api": 2}).encode()
        return 200, {"Content-Type": "application/json", "X-Hubwatch-API": "2"}, body

    yield from _serve(answer)


@pytest.fixture
def identity_only() -> Iterator[str]:
    """A proxy that routes /api/v1/identity to a hubwatch but answers every other path itself (404)."""

    def answer(path: str) -> tuple[int, dict[str, str], bytes]:
        if path == "/api/v1/identity":
            body = json.dumps({"service": "hubwatch", "version": "0.1.0", "api": 1}).encode()
            return 200, {"Content-Type": "application/json", "X-Hubwatch-API": "1"}, body
        return 404, {"Content-Type": "text/plain", "Server": "proxy/1.0"}, b"no route"

    yield from _serve(answer)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text(
        f'AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n'
        'AutoModel.from_pretrained("acme/never-seen", revision="abcdef1234")\n'
    )
    return root


def check(server: str, *args: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
          capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`hubwatch check … --server URL` through the real entry point (errors → exit codes), local store empty."""
    monkeypatch.setenv("HUBWATCH_DATABASE_URL", f"sqlite:///{tmp_path / 'empty.db'}")
    _register()
    code = run_cli(cli, ["check", *args, "--server", server])
    out, err = capsys.readouterr()
    return code, out, err


def _one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("fix: "), err
    assert "Traceback" not in err
    return lines[0]


def test_the_hub_emulator_is_not_a_hubwatch_server(hubsim: Any, folder: Path, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(hubsim.url, str(folder), monkeypatch=monkeypatch, tmp_path=tmp_path, capsys=capsys)
    assert code == EXIT_HUB, (out, err)
    line = _one_error(err)
    assert line.startswith(f"error: {hubsim.url} is not a hubwatch server: GET {hubsim.url}/api/v1/identity "
                           "answered HTTP 404"), line
    assert "content-type: application/json" in line and "body '{" in line  # the hub's own error shape
    assert FIX in err
    assert out == ""  # no report: nothing it said was trusted


def test_a_plain_server_answering_404(plain_404: str, folder: Path, monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(plain_404, str(folder), "--json", monkeypatch=monkeypatch, tmp_path=tmp_path,
                           capsys=capsys)
    assert code == EXIT_HUB and out == ""
    line = _one_error(err)
    assert f"{plain_404}/api/v1/identity answered HTTP 404" in line
    assert "server: BaseHTTP/" in line and "content-type: text/html;charset=utf-8" in line
    assert "body '<!DOCTYPE HTML>\\n<title>Error response</title>'" in line  # the first bytes, on one line
    assert FIX in err


def test_a_server_answering_200_html_for_everything(html_200: str, folder: Path, monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(html_200, str(folder), monkeypatch=monkeypatch, tmp_path=tmp_path, capsys=capsys)
    assert code == EXIT_HUB and out == ""
    line = _one_error(err)
    assert "answered HTTP 200" in line and "content-type: text/html; charset=utf-8" in line
    assert "body '<html><body>Welcome</body></html>'" in line
    assert FIX in err


def test_identity_is_checked_with_no_commit_pin_to_look_up(plain_404: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "unpinned"
    root.mkdir()
    (root / "app.py").write_text('AutoModel.from_pretrained("acme/llama-small")\n')
    code, _, err = check(plain_404, str(root), monkeypatch=monkeypatch, tmp_path=tmp_path, capsys=capsys)
    assert code == EXIT_HUB and "is not a hubwatch server" in err


def test_an_incompatible_api_version_names_both(newer_api: str, folder: Path, monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hubwatch import __version__

    code, out, err = check(newer_api, str(folder), monkeypatch=monkeypatch, tmp_path=tmp_path, capsys=capsys)
    assert code == EXIT_HUB and out == ""
    line = _one_error(err)
    assert line == (f"error: the hubwatch server at {newer_api} (hubwatch 9.0.0) speaks API 2; "
                    f"this hubwatch ({__version__}) speaks API 1")
    assert "fix: run a hubwatch CLI of the server's release (9.0.0)" in err


def test_an_answer_without_the_api_header_is_not_trusted(identity_only: str, folder: Path,
                                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # The proxy's 404 for the revision would otherwise read as "unknown": it is not a hubwatch answer.
    code, out, err = check(identity_only, str(folder), monkeypatch=monkeypatch, tmp_path=tmp_path, capsys=capsys)
    assert code == EXIT_HUB and out == ""
    line = _one_error(err)
    assert line.startswith(f"error: an answer from {identity_only} did not come from a hubwatch server "
                           f"(no X-Hubwatch-API header): GET {identity_only}/api/v1/models/acme/")
    assert "answered HTTP 404 (server: " in line and "proxy/1.0" in line and "body 'no route'" in line
    assert FIX in err


def test_a_base_url_past_the_app_is_a_wrong_base_url(web_app: str, folder: Path, monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(f"{web_app}/hubwatch", str(folder), monkeypatch=monkeypatch, tmp_path=tmp_path,
                           capsys=capsys)
    assert code == EXIT_HUB and out == ""
    line = _one_error(err)
    assert line.startswith(f"error: a hubwatch web app answers at {web_app}/hubwatch, but it is not its base URL: "
                           f"GET {web_app}/hubwatch/api/v1/identity answered HTTP 404"), line
    assert FIX in err


def test_a_real_hubwatch_server_is_trusted(web_app: str, folder: Path, monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(web_app, str(folder), "--json", monkeypatch=monkeypatch, tmp_path=tmp_path,
                           capsys=capsys)
    assert code == 1, err  # the pickle hazard at L2, as before
    pins = json.loads(out)["pins"]
    assert [p["status"] for p in pins] == ["affected", "unknown"]  # unknown keeps its meaning on a real server
    assert pins[1]["note"].startswith("unknown: acme/never-seen is not watched")
    # A trailing slash is the same base URL.
    code, out, _ = check(web_app + "/", str(folder), "--json", monkeypatch=monkeypatch, tmp_path=tmp_path,
                         capsys=capsys)
    assert code == 1 and [p["status"] for p in json.loads(out)["pins"]] == ["affected", "unknown"]


def test_the_client_speaks_the_servers_api() -> None:
    from hubwatch.feeds.routes.ops import API_HEADER as SERVED_HEADER
    from hubwatch.feeds.routes.ops import API_VERSION
    from hubwatch.pincheck.server import API_HEADER, API_VERSIONS, IDENTITY_PATH

    assert API_VERSION in API_VERSIONS and API_HEADER == SERVED_HEADER and IDENTITY_PATH == "/api/v1/identity"
