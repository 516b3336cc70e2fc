"""Every command documents itself, and docs/settings.md is the Settings model's own table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

from hubwatch.cli import cli
from hubwatch.cli.settings_cmd import env_name, settings_markdown
from hubwatch.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def commands() -> Iterator[tuple[str, click.Command]]:
    from hubwatch.cli import commands as _registered  # noqa: F401  (registers every command)

    def walk(cmd: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
        yield path, cmd
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(sub, f"{path} {name}")

    yield from walk(cli, "hubwatch")


def test_every_command_option_and_argument_is_documented() -> None:
    found = list(commands())
    assert len(found) > 15  # the group, its subgroups and every command
    for path, cmd in found:
        assert (cmd.help or "").strip(), f"`{path}` has no help text"
        assert cmd.get_short_help_str().strip(), f"`{path}` has no short help"
        for param in cmd.params:
            if isinstance(param, click.Option):
                assert (param.help or "").strip(), f"`{path} {param.opts[0]}` has no help text"
            elif isinstance(param, click.Argument):
                shown = (param.metavar or param.name or "").strip("[].").upper()
                assert shown in (cmd.help or ""), f"`{path}`: its help never says what {shown} is"


def test_every_command_answers_help() -> None:
    runner = CliRunner()
    for path, cmd in commands():
        result = runner.invoke(cli, [*path.split()[1:], "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert (cmd.help or "").split("\n")[0].strip()[:40] in " ".join(result.output.split()), path


def test_settings_doc_lists_every_setting_and_is_in_sync() -> None:
    doc = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    for name, info in Settings.model_fields.items():
        assert f"`{env_name(name)}`" in doc, f"{env_name(name)} is missing from docs/settings.md"
        assert (info.description or "").strip(), f"Settings.{name} has no description"
    assert doc == settings_markdown(), (
        "docs/settings.md is out of date: run `hubwatch settings --markdown > docs/settings.md`"
    )


def test_settings_command_hides_secrets(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HUBWATCH_DATABASE_URL", "postgresql://user:pw-s3cret@db.example/hubwatch")
    monkeypatch.setenv("HUBWATCH_ADMIN_TOKEN", "tok-s3cret")
    result = CliRunner().invoke(cli, ["settings"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "s3cret" not in result.output
    assert "HUBWATCH_FEED_LIMIT" in result.output and "db.example" in result.output


def test_a_bad_setting_is_one_line_naming_the_variable(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from hubwatch.cli import main

    for name, value, says in (
        ("HUBWATCH_PORT", "notaport", "valid integer"),
        ("HUBWATCH_ADVISE_MIN_SEVERITY", "bogus", "not a severity"),
        ("HUBWATCH_ADVISORY_PREFIX", "GHSA", "starting with 'x_'"),
        ("HUBWATCH_POLL_INTERVAL_S", "1", "greater than or equal to 10"),
    ):
        monkeypatch.setenv(name, value)
        try:
            main(["watch", "list"])
        except SystemExit as exc:
            code = exc.code
        err = " ".join(capsys.readouterr().err.split())
        assert code == 2, (name, err)
        assert f"bad setting: {name}:" in err and says in err and "Traceback" not in err, err
        monkeypatch.delenv(name)


def test_links_follow_the_port_unless_a_public_url_is_given(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from hubwatch.settings import load_settings

    monkeypatch.setenv("HUBWATCH_PORT", "8942")
    assert load_settings().public_url == "http://127.0.0.1:8942"  # was http://127.0.0.1:8000
    monkeypatch.setenv("HUBWATCH_HOST", "0.0.0.0")
    assert load_settings().public_url == "http://127.0.0.1:8942"
    monkeypatch.setenv("HUBWATCH_PUBLIC_URL", "https://hubwatch.example/hw")
    assert load_settings().public_url == "https://hubwatch.example/hw"


def test_the_derivatives_refresh_reads_its_former_name_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from hubwatch.settings import Settings

    monkeypatch.setenv("HUBWATCH_FAMILY_REFRESH_S", "120")  # a deployment configured before the rename
    assert Settings(database_url="sqlite://").derivatives_refresh_s == 120
    monkeypatch.setenv("HUBWATCH_DERIVATIVES_REFRESH_S", "180")  # the current name wins
    assert Settings(database_url="sqlite://").derivatives_refresh_s == 180
    assert Settings(database_url="sqlite://", derivatives_refresh_s=3600).derivatives_refresh_s == 3600
