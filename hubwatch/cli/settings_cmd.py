"""`hubwatch settings`: every HUBWATCH_* setting with its value now, or (`--markdown`) the table
of docs/settings.md, generated from the Settings model's field descriptions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hubwatch.cli import cli
from hubwatch.cli.console import escape, out_console

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

__all__ = ["SECRET_FIELDS", "env_name", "settings", "settings_markdown"]

SECRET_FIELDS = frozenset({"hf_token", "admin_token", "webhook_secret"})
_PREAMBLE = """\
# Settings

Every setting hubwatch reads, from the environment (prefix `HUBWATCH_`); `hubwatch settings`
shows the values in effect. `HF_TOKEN` (or `HUGGING_FACE_HUB_TOKEN`) is used for the hub when
`HUBWATCH_HF_TOKEN` is unset.

This file is generated from the `Settings` model (`hubwatch/settings.py`):
`hubwatch settings --markdown > docs/settings.md`; a test fails when it is out of date.

"""


def env_name(field: str) -> str:
    from hubwatch.settings import Settings

    prefix = str(Settings.model_config.get("env_prefix", ""))
    return f"{prefix}{field}".upper()


def _constraints(info: FieldInfo) -> str:
    names = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    found = []
    for meta in info.metadata:
        for attr, symbol in names.items():
            value = getattr(meta, attr, None)
            if value is not None:
                found.append(f"{symbol} {value}")
    return ", ".join(found)


def _type_name(info: FieldInfo) -> str:
    annotation: Any = info.annotation
    text = getattr(annotation, "__name__", None) if not getattr(annotation, "__args__", None) else None
    return text or str(annotation).replace("typing.", "")


def _default(info: FieldInfo) -> str:
    from pydantic_core import PydanticUndefined

    if info.default_factory is not None:
        value: Any = info.default_factory()  # type: ignore[call-arg]
        # Defaults computed from the working folder are shown relative to it.
        return f"`{str(value).replace(str(Path.cwd()), '$PWD')}`"
    if info.default is PydanticUndefined:
        return "(required)"
    return "unset" if info.default is None else f"`{info.default}`"


def _hide_password(url: str) -> str:
    from sqlalchemy import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(not a database URL: see `hubwatch watch list` for the error)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def settings_markdown() -> str:
    """docs/settings.md: one table row per Settings field (name, type, default, meaning)."""
    from hubwatch.settings import Settings

    rows = ["| Variable | Type | Default | Meaning |", "|---|---|---|---|"]
    for name, info in Settings.model_fields.items():
        kind = _type_name(info)
        limits = _constraints(info)
        meaning = (info.description or "").strip()
        rows.append(
            f"| `{env_name(name)}` | {_cell(kind)}{f' ({limits})' if limits else ''} | {_cell(_default(info))} "
            f"| {_cell(meaning)} |"
        )
    return _PREAMBLE + "\n".join(rows) + "\n"


@cli.command("settings")
@click.option("--markdown", is_flag=True, help="Print docs/settings.md (every setting, its default and meaning).")
def settings(markdown: bool) -> None:
    """Show every HUBWATCH_* setting and the value in effect (secrets hidden)."""
    if markdown:
        click.echo(settings_markdown(), nl=False)
        return
    from rich.table import Table

    from hubwatch.settings import Settings, load_settings

    current = load_settings()
    table = Table(title="hubwatch settings (environment variable = value in effect)")
    table.add_column("variable", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("meaning")
    for name, info in Settings.model_fields.items():
        value = getattr(current, name)
        shown = "(set)" if name in SECRET_FIELDS and value else ("unset" if value is None else str(value))
        if name == "database_url":
            shown = _hide_password(shown)
        table.add_row(env_name(name), escape(shown), escape(info.description or ""))
    out_console().print(table)
