"""A bounded, thread-safe LRU of compiled chat templates, keyed by the sha256 of their text.

What is cached is the Python code object jinja2 compiles a template to, not a `Template`: a
`Template` is bound to the environment it was made in, and the sandbox's environment carries the
meters of one render. Each render still builds its own metered environment and binds the cached
code to it (`Template.from_code`), so every render limit (deadline, budgets, output size) applies
per render exactly as before; only parsing and code generation are skipped. The key also holds the
environment's configuration, so a change to how templates compile cannot reuse old code.
Templates that fail to compile are not cached (they fail the same way each time).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from types import CodeType
from typing import Callable

__all__ = ["CacheInfo", "CompiledCache"]


@dataclass(frozen=True)
class CacheInfo:
    """Counters of a cache: hits, compiles (misses), entries held and template characters held."""

    hits: int
    compiles: int
    entries: int
    chars: int


class CompiledCache:
    """At most `max_entries` compiled templates whose texts total at most `max_chars` characters."""

    def __init__(self, max_entries: int = 256, max_chars: int = 8_000_000) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[str, str], tuple[CodeType, int]] = OrderedDict()
        self._chars = 0
        self._hits = 0
        self._compiles = 0

    def get(self, source: str, env_key: str, compile_source: Callable[[str], CodeType]) -> CodeType:
        """The code of `source` under the environment `env_key`, compiled by `compile_source` on a miss.

        Compiling runs outside the lock (two threads missing the same text at once both compile; the
        results are equal). An exception from `compile_source` propagates and nothing is stored.
        """
        key = (hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest(), env_key)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self._hits += 1
                return found[0]
        code = compile_source(source)
        size = len(source)
        with self._lock:
            self._compiles += 1
            if size > self.max_chars or self.max_entries <= 0:
                return code
            if key not in self._items:
                self._items[key] = (code, size)
                self._chars += size
            while len(self._items) > self.max_entries or self._chars > self.max_chars:
                _, (_, dropped) = self._items.popitem(last=False)
                self._chars -= dropped
        return code

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._compiles, len(self._items), self._chars)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._chars = self._hits = self._compiles = 0
