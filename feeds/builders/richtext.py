"""Markdown written by hubwatch (holding hostile upstream text) rendered as safe HTML.

CommonMark with raw HTML turned off (any `<tag>` in the source comes out escaped), only absolute
http(s) links (never javascript:, data:, mailto: or relative), no images (no remote fetches), and
every link marked nofollow/noopener. The page's CSP allows no script either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup

from hubwatch.domain.urls import is_safe_url

__all__ = ["MARKDOWN_MAX", "render_markdown"]

MARKDOWN_MAX = 100_000  # characters of Markdown rendered; the JSON record has the rest


class _SafeMarkdown(MarkdownIt):
    """CommonMark, raw HTML escaped, links checked by `is_safe_url`, images off."""

    def __init__(self) -> None:
        super().__init__("commonmark", {"html": False})
        self.disable("image")
        self.add_render_rule("link_open", _link_open)

    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        return is_safe_url(url)


def _link_open(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
    return renderer.renderToken(tokens, idx, options, env)


def render_markdown(text: Any) -> Markup:
    """`text` (Markdown) as an HTML fragment; anything that is not a string renders as nothing."""
    if not isinstance(text, str) or not text:
        return Markup("")
    note = ""
    if len(text) > MARKDOWN_MAX:
        note = f"\n\n… ({len(text) - MARKDOWN_MAX} more characters in the JSON record)"
        text = text[:MARKDOWN_MAX]
    return Markup(_SafeMarkdown().render(text + note))  # noqa: S704 (html off, links checked)
