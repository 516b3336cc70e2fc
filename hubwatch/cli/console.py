"""The one place the CLI makes rich Consoles, and `escape` for upstream text inside rich markup.

Commit messages, summaries, file paths, advisory text and error messages come from the hub (or
a server) and may hold `[bold]`, `[/]` or `[link=…]`: put into markup unescaped they restyle the
output or crash it with a MarkupError. Every such value goes through `escape` first; styles the
CLI adds itself (`[red]error:[/red]`) stay markup. Emoji codes are off: rich would print a commit
message's `:rocket:` as a rocket, and upstream text is shown as written. Rich is imported on first
use, not by `--help`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["err_console", "escape", "out_console"]


def out_console(*, width: int | None = None) -> Console:
    """A console on stdout (the command's result); `width` fixes the width for wide tables."""
    from rich.console import Console

    return Console(width=width, emoji=False)


def err_console() -> Console:
    """A console on stderr (progress, warnings and errors)."""
    from rich.console import Console

    return Console(stderr=True, emoji=False)


def escape(text: object) -> str:
    """`str(text)` with rich markup escaped, so that it prints literally (e.g. `Update [/] config`)."""
    from rich.markup import escape as rich_escape

    return rich_escape(str(text))
