"""Each JSON file parsed once per diff: a memo of `load_remote_json` scoped to one `with` block.

One diff of two revisions reads the same tokenizer_config.json for its keys, its chat templates and
its special tokens, and the same weight index for its totals, shards and weight map; the compare
page reads the templates once more for its full texts. Inside `parse_once()` (opened by
`diff_snapshots`, or around a larger unit of work by its caller) `remote_json` parses each distinct
content once per set of limits and hands the same value (or raises the same error) on every later
call; outside it, every call parses afresh. The memo is keyed by the bytes themselves, so two
revisions holding byte-equal files share one parse, and by the limits only where they could change
the outcome (a file with no NaN in it parses the same whether constants are refused or not). Callers only read what they get (every differ
builds its own records and copies); files over `MAX_MEMO_BYTES` (a whole tokenizer.json) are never
held, and the memo is dropped when the outermost block ends.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from hubwatch.domain.remote_data import load_remote_json

__all__ = ["MAX_MEMO_BYTES", "Memo", "kept", "parse_once", "remote_json"]

MAX_MEMO_BYTES = 4 * 1024 * 1024  # configs, tokenizer configs and weight indexes; not tokenizer.json

_Key = tuple[bytes, bool, "int | None"]
Memo = dict[_Key, tuple[Any, "ValueError | None"]]
_MEMO: ContextVar[Memo | None] = ContextVar("hubwatch_parsed_json", default=None)


def _as_plain(raw: bytes, reject_constants: bool, max_values: int | None) -> bool:
    """True when the limits cannot change the outcome, so the plain parse's value or error stands:
    no NaN or Infinity anywhere in the bytes (nothing for `reject_constants` to refuse), and no more
    bytes than `max_values` (every value a container holds takes at least one byte)."""
    if reject_constants and (b"NaN" in raw or b"Infinity" in raw):
        return False
    return max_values is None or len(raw) <= max_values


@contextmanager
def parse_once(memo: Memo | None = None) -> Iterator[None]:
    """Within the block, `remote_json` parses each distinct content once (nested blocks share the
    outermost one's memo). `memo`: the caller's, filled in the block and kept after it (a poll
    carries the parses of one revision's files to the next, `kept`); else a new one, dropped."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({} if memo is None else memo)
    try:
        yield
    finally:
        _MEMO.reset(token)


def kept(memo: Memo, contents: Collection[bytes]) -> Memo:
    """The entries of `memo` for `contents` alone: what a later block may read again (the files a
    revision shares with its parent), so a poll's memo holds one revision's parses, not its history's."""
    wanted = set(contents)
    return {key: found for key, found in memo.items() if key[0] in wanted}


def remote_json(raw: bytes, *, reject_constants: bool = False, max_values: int | None = None) -> Any:
    """`load_remote_json(raw, reject_constants=…, max_values=…)`, from the memo when one is open.

    The value returned is shared with every other caller in the block: read it, never change it."""
    memo = _MEMO.get()
    if memo is None or len(raw) > MAX_MEMO_BYTES:
        return load_remote_json(raw, reject_constants=reject_constants, max_values=max_values)
    key = (raw, reject_constants, max_values)
    if _as_plain(raw, reject_constants, max_values):
        key = (raw, False, None)
    found = memo.get(key)
    if found is None:
        try:
            found = (load_remote_json(raw, reject_constants=reject_constants, max_values=max_values), None)
        except ValueError as exc:  # not JSON, not UTF-8, too large or too deeply nested: the same each time
            found = (None, exc)
        memo[key] = found
    value, error = found
    if error is not None:
        raise error.with_traceback(None)
    return value
