"""Upstream text is printed literally (never read as rich markup), and the CLI's clock is injectable.

A history in the emulator whose commit messages look like markup (`Update [/] config`,
`[bold]x[/bold]`, `[link=…]`, emoji codes such as `:rocket:`): `hubwatch poll` (with its progress bar drawn, as on a terminal)
and `hubwatch history` print them as they are and exit 0.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from hubwatch.cli import _register, cli
from hubwatch.domain.clock import fixed_clock

REPO = "acme/markup-model"
MESSAGES = ["Update [/] config", "[bold]x[/bold] and [link=https://evil.example]y[/link]", "[red]\\[/red] done :rocket:"]
AT = datetime(2022, 2, 2, 2, 2, 2, tzinfo=UTC)


def markup_history(data_dir: Path, root: Path, commits: list[str] | None = None) -> Path:
    """Qwen-7B's three versions as `acme/markup-model`, with markup-like commit messages."""
    folder = root / REPO.replace("/", "__")
    shutil.copytree(data_dir / "histories" / "Qwen__Qwen-7B", folder)
    tsv = folder / "HISTORY.tsv"
    rows = list(csv.DictReader(tsv.read_text(encoding="utf-8").splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    for i, row in enumerate(rows):
        row["message"] = MESSAGES[i]
        if commits is not None:
            row["commit"] = commits[i]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), delimiter="\t", quoting=csv.QUOTE_NONE,
                            lineterminator="\n", escapechar=None)
    writer.writeheader()
    writer.writerows(rows)
    tsv.write_text(out.getvalue(), encoding="utf-8")
    return root


def invoke(db: Path, sim: Any, *args: str, obj: dict[str, Any] | None = None) -> Result:
    _register()
    env = {"HUBWATCH_DATABASE_URL": f"sqlite:///{db}", "HUBWATCH_HUB_ENDPOINT": sim.url, "HF_TOKEN": "",
           "FORCE_COLOR": "1", "COLUMNS": "200"}  # FORCE_COLOR: rich draws the progress bar as on a terminal
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False, obj=obj)


def test_markup_in_commit_messages_prints_literally(tmp_path: Path, data_dir: Path, hubsim_factory: Any) -> None:
    sim = hubsim_factory(root=markup_history(data_dir, tmp_path / "root"), at=None)
    db = tmp_path / "hw.db"
    assert invoke(db, sim, "watch", "add", REPO).exit_code == 0
    poll = invoke(db, sim, "poll")
    assert poll.exit_code == 0, poll.output
    assert f"{REPO}: 3 new revisions stored" in poll.output
    history = invoke(db, sim, "history", REPO)
    assert history.exit_code == 0, history.output
    shown = " ".join(history.output.split())  # the table may fold long titles
    # `:rocket:` is an emoji code to rich: upstream text keeps it as written.
    for message in ("Update [/] config", "[bold]x[/bold]", "[link=https://evil.example]y[/link]", "[red]\\[/red]", ":rocket:"):
        assert message in shown, message
    titles = [r["title"] for r in json.loads(invoke(db, sim, "history", REPO, "--json").stdout)]
    assert titles == MESSAGES


def test_the_cli_clock_reaches_the_store(tmp_path: Path, data_dir: Path, hubsim_factory: Any) -> None:
    sim = hubsim_factory(root=markup_history(data_dir, tmp_path / "root"), at="v1")
    db = tmp_path / "hw.db"
    clock = {"clock": fixed_clock(AT)}
    assert invoke(db, sim, "watch", "add", REPO, obj=clock).exit_code == 0
    assert invoke(db, sim, "poll", obj=clock).exit_code == 0
    (row,) = json.loads(invoke(db, sim, "watch", "list", "--json").stdout)
    assert datetime.fromisoformat(row["last_polled_at"]) == AT


def test_consoles_are_made_in_the_console_module_only() -> None:
    import ast

    cli_dir = Path(__file__).resolve().parents[2] / "hubwatch" / "cli"
    makers = []
    for path in sorted(cli_dir.glob("*.py")):
        if path.name == "console.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Console":
                makers.append(f"{path.name}:{node.lineno}")
    assert makers == [], f"use hubwatch.cli.console (out_console/err_console) instead: {makers}"
