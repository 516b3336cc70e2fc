"""Secrets never logged: with every logger at DEBUG, `notify add/list/flush/test/status` and the
admin routes never let a signing secret (after it is shown once) or a URL's credentials (tokens,
passwords, query keys) reach the logs, the CLI's output, /metrics, error messages or stored errors."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fastapi.testclient import TestClient
from hubwatch.cli import cli
from hubwatch.domain.records import ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.feeds.app import create_app
from hubwatch.notify.sender import notify_store
from hubwatch.settings import Settings
from hubwatch.notify.policy import NotifyPolicy
from hubwatch.storage import Store
from receivers import Mailbox, WebhookReceiver, free_port

SECRETS = ["hookpass77", "qtok123abc", "mailpw456", "jsonpw789", "TokenA1", "TokenB2zz", "TokenC3yy", "adminpw00",
           "123456789:BotTokenXyz", "DiscordHookTok"]
TOKEN = "s3cret-admin-token"


def test_no_secret_in_logs_output_metrics_or_errors(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    db = tmp_path / "hw.db"
    env = {"HUBWATCH_DATABASE_URL": f"sqlite:///{db}", "HF_TOKEN": "", "HUBWATCH_NOTIFY_TIMEOUT_S": "3",
           "HUBWATCH_LOG_LEVEL": "DEBUG"}  # fmt: skip
    hook, box = WebhookReceiver().start(), Mailbox()
    said: list[str] = []

    def invoke(*args: str) -> Result:
        import hubwatch.cli.commands  # noqa: F401 - registers the commands

        result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
        said.append(result.output)
        return result

    try:
        urls = [
            f"http://hubwatch:hookpass77@127.0.0.1:{hook.port}/hook?token=qtok123abc",
            f"mailto://hubwatch:mailpw456@example.com?smtp=127.0.0.1&port={box.port}&to=ops@example.com",
            f"json://user:jsonpw789@127.0.0.1:{free_port()}/",  # nobody listens: a stored error
        ]
        added = [invoke("notify", "add", url) for url in urls]
        assert [a.exit_code for a in added] == [0, 0, 0], [a.output for a in added]
        hook.secret = added[0].stdout.strip().splitlines()[-1]
        said[0] = said[0].replace(hook.secret, "")  # shown once, at creation: allowed there only
        assert invoke("notify", "add", "slack://TokenA1/TokenB2zz/TokenC3yy").exit_code == 0
        assert invoke("notify", "add", "tgram://123456789:BotTokenXyz/555").exit_code == 0
        assert invoke("notify", "add", "https://discord.example/api/webhooks/42/DiscordHookTok").exit_code == 0
        assert invoke("notify", "add", "nonsense://me:adminpw00@x").exit_code == 2
        repo = RepoId("acme", "model")
        day = datetime(2026, 3, 1, tzinfo=UTC)
        with Store.open(f"sqlite:///{db}", notify=NotifyPolicy()) as store:
            store.watch(repo)
            store.save_revision(repo, RevisionRecord("a" * 40, None, day, "first"), [], {}, [], None, [])
            change = ChangeRecord(Kind.PICKLE, Severity.HIGH, "m.bin", "a pickle appeared", {}, Direction.HAZARD)
            store.save_revision(repo, RevisionRecord("b" * 40, "a" * 40, day, "second"), [], {}, [change], None, [])
            # only the local targets get a message: the slack, telegram and discord ones are removed before anything is sent
            for sub_id in ("4", "5", "6"):
                assert invoke("notify", "remove", sub_id).exit_code == 0
            assert invoke("notify", "flush").exit_code == 0
            for sub_id in ("1", "2", "3"):
                invoke("notify", "test", sub_id)
            for args in (("status",), ("status", "--json"), ("list",), ("list", "--json")):
                assert invoke("notify", *args).exit_code == 0
            errors = [str(r["last_error"]) for r in notify_store(store).messages()]
            assert any("json://127.0.0.1" in e for e in errors)  # the failure is stored, without the password
            app = create_app(Settings(database_url="sqlite://", admin_token=TOKEN), store)
            client = TestClient(app)
            auth = {"authorization": f"Bearer {TOKEN}"}
            bad = client.post("/admin/subscriptions", json={"url": "nonsense://me:adminpw00@x"}, headers=auth)
            made = client.post("/admin/subscriptions", json={"url": "json://user:jsonpw789@127.0.0.1:9/"}, headers=auth)
            assert bad.status_code == 400 and made.status_code == 201
            answers = [bad.text, made.text, client.get("/admin/subscriptions", headers=auth).text,
                       client.get("/metrics").text,
                       client.delete(f"/admin/subscriptions/{made.json()['id']}", headers=auth).text]  # fmt: skip
    finally:
        hook.stop()
        box.stop()
    assert len(hook.received) == 2 and hook.rejected == []  # the revision and the test: delivered, verified
    logged = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert any(r.levelno == logging.DEBUG for r in caplog.records)  # DEBUG really was on
    for secret in [*SECRETS, hook.secret]:
        assert secret not in logged, f"{secret} in the logs"
        for where, text in [("CLI output", "\n".join(said)), ("stored errors", "\n".join(errors)),
                            ("admin/metrics", "\n".join(answers))]:  # fmt: skip
            assert secret not in text, f"{secret} in the {where}"
