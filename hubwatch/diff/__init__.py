"""What a change means: semantic diffs per file kind and their classification (pure functions).

`diff_snapshots(old, new)` is the entry point (`diff_dataset_snapshots` for a dataset repo, and
`diff_repo_snapshots(repo_type, old, new)` the one that picks by the repo's type); `render_chat_template` renders a chat template in
the sandbox; `diff_text` is the unified text diff used throughout.
"""

from __future__ import annotations

from .conversations import CONVERSATIONS, Conversation, render_chat_template
from .datasets import diff_dataset_snapshots, diff_repo_snapshots
from .engine import diff_snapshots
from .sandbox import RenderLimits, RenderResult
from .text import diff_text

__all__ = [
    "CONVERSATIONS",
    "Conversation",
    "RenderLimits",
    "RenderResult",
    "diff_dataset_snapshots",
    "diff_repo_snapshots",
    "diff_snapshots",
    "diff_text",
    "render_chat_template",
]
