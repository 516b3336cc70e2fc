"""Fault injection for the hub emulator: error rate, latency, 429 bursts, truncated and broken files."""

from __future__ import annotations

import fnmatch
import random
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace

__all__ = ["BROKEN_HEADER_KINDS", "FaultConfig", "FaultError", "Faults", "Verdict", "matches"]

BROKEN_HEADER_KINDS = ("not_json", "nested", "beyond_limit", "beyond_file")


class FaultError(ValueError):
    """A fault setting is invalid; the message names the field."""


@dataclass(frozen=True)
class FaultConfig:
    """What goes wrong, for every request except the `/_sim` control routes.

    - `error_rate`: share of requests (0..1) answered `error_status`, drawn from a RNG seeded by `seed`.
    - `latency_ms`: delay added before every answer.
    - `rate_limit`: the next N requests answer 429 with `Retry-After: retry_after`.
    - `truncate`: glob on the file path (or `org/name/path`); full GETs of those files send only
      the first `truncate_fraction` of the bytes (HEAD and listings still give the full size).
    - `invalid_json`: glob as above; those files are served as a body that is not JSON
      (HEAD, GET and ranges agree on the broken body, so only its content is wrong).
    - `rate_limit_path`: glob on the request path; the `rate_limit` countdown hits only those.

    The real hub's other answers (`hubsim/modes.py`):
    - `invalid_token`: 401 "Invalid credentials in Authorization header" for every request (`*`),
      requests without a token (`-`), or requests bearing that token;
    - `disabled` / `deleted`: glob on repo ids answered 403 "Access to this resource is disabled." /
      404 RepoNotFound (set it while running: the repo is deleted from then on, and gone from the
      `/api/models` listing too); both match ids case-insensitively, as the hub does;
    - `gated` (glob on repo ids) with `gated_token` ("": any token gets in): the hub's GatedRepo errors;
    - `ratelimit_quota` requests per `ratelimit_window_s` (0: off): `RateLimit`/`RateLimit-Policy` on
      every answer and 429 once the window's quota is used;
    - `trickle` (glob on the request path): the body sent one byte every `trickle_ms`;
    - `reset_rate`: share of requests whose connection is dropped after the headers;
    - `broken_header` (glob on file paths) served as a safetensors file whose header is broken in
      the way `broken_header_kind` says: `not_json`, `nested`, `beyond_limit` or `beyond_file`;
    - `chaos_rate`: share of requests (0..1, RNG seeded by `seed`) hit by one transient fault drawn
      evenly from `hubsim/chaos.py`'s kinds: a 5xx, 429 with and without Retry-After, a dropped
      connection, a body cut off mid-way, a proxy's HTML error page, a slow body.
    """

    error_rate: float = 0.0
    error_status: int = 503
    latency_ms: int = 0
    rate_limit: int = 0
    retry_after: int = 1
    truncate: str | None = None
    truncate_fraction: float = 0.5
    invalid_json: str | None = None
    seed: int = 0
    rate_limit_path: str | None = None
    invalid_token: str | None = None
    disabled: str | None = None
    deleted: str | None = None
    gated: str | None = None
    gated_token: str = ""
    ratelimit_quota: int = 0
    ratelimit_window_s: int = 300
    trickle: str | None = None
    trickle_ms: int = 1000
    reset_rate: float = 0.0
    broken_header: str | None = None
    broken_header_kind: str = "not_json"
    chaos_rate: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.error_rate <= 1.0:
            raise FaultError(f"error_rate must be within 0..1, got {self.error_rate}")
        if not 400 <= self.error_status <= 599:
            raise FaultError(f"error_status must be an HTTP error status, got {self.error_status}")
        if self.latency_ms < 0 or self.rate_limit < 0 or self.retry_after < 0:
            raise FaultError("latency_ms, rate_limit and retry_after must not be negative")
        if not 0.0 <= self.reset_rate <= 1.0:
            raise FaultError(f"reset_rate must be within 0..1, got {self.reset_rate}")
        if not 0.0 <= self.chaos_rate <= 1.0:
            raise FaultError(f"chaos_rate must be within 0..1, got {self.chaos_rate}")
        if self.ratelimit_quota < 0 or self.ratelimit_window_s <= 0 or self.trickle_ms < 0:
            raise FaultError("ratelimit_quota and trickle_ms must not be negative, ratelimit_window_s must be positive")
        if self.broken_header_kind not in BROKEN_HEADER_KINDS:
            raise FaultError(f"broken_header_kind must be one of {', '.join(BROKEN_HEADER_KINDS)}")
        if not 0.0 <= self.truncate_fraction < 1.0:
            raise FaultError(f"truncate_fraction must be within [0, 1), got {self.truncate_fraction}")

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> FaultConfig:
        """Build from JSON; unknown keys and wrong types are errors naming the key."""
        known = {f.name: f for f in fields(cls)}
        values: dict[str, object] = {}
        for key, value in data.items():
            if key not in known:
                raise FaultError(f"unknown fault setting {key!r} (known: {', '.join(known)})")
            kind = str(known[key].type)
            if kind == "str | None":
                ok = value is None or isinstance(value, str)
            elif kind == "str":
                ok = isinstance(value, str)
            elif kind == "float":
                ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            else:
                ok = isinstance(value, int) and not isinstance(value, bool)
            if not ok:
                raise FaultError(f"fault setting {key!r} has the wrong type: {value!r} (expected {kind})")
            values[key] = float(value) if kind == "float" else value  # type: ignore[arg-type]
        return cls(**values)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Verdict:
    """What to do with one request: wait `delay_s`, then answer normally, 429, or an error status."""

    delay_s: float
    status: int | None  # None: serve normally
    retry_after: int | None = None
    chaos: float | None = None  # a draw in [0, 1) picking one transient fault (`chaos_rate`), or None


def matches(pattern: str | None, repo_id: str, path: str) -> bool:
    if not pattern:
        return False
    return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(f"{repo_id}/{path}", pattern)


class Faults:
    """The live fault state (thread-safe): the config plus the 429 countdown and the RNG."""

    def __init__(self, config: FaultConfig | None = None) -> None:
        self._lock = threading.Lock()
        self._config = FaultConfig()
        self._remaining_429 = 0
        self._rng = random.Random(0)
        self.set(config or FaultConfig())

    @property
    def config(self) -> FaultConfig:
        with self._lock:
            return replace(self._config, rate_limit=self._remaining_429)

    def set(self, config: FaultConfig) -> None:
        with self._lock:
            self._config = config
            self._remaining_429 = config.rate_limit
            self._rng = random.Random(config.seed)

    def next_request(self, path: str = "") -> Verdict:
        """Decide the fate of the next request (consumes one 429 from the countdown)."""
        with self._lock:
            cfg = self._config
            delay = cfg.latency_ms / 1000.0
            hit = cfg.rate_limit_path is None or fnmatch.fnmatchcase(path, cfg.rate_limit_path)
            if self._remaining_429 > 0 and hit:
                self._remaining_429 -= 1
                return Verdict(delay, 429, cfg.retry_after)
            if cfg.error_rate > 0 and self._rng.random() < cfg.error_rate:
                return Verdict(delay, cfg.error_status)
            if cfg.chaos_rate > 0 and self._rng.random() < cfg.chaos_rate:
                return Verdict(delay, None, chaos=self._rng.random())
            return Verdict(delay, None)

    def truncation(self, repo_id: str, path: str) -> float | None:
        """The share of bytes to send for a full GET of this file, or None to send it whole."""
        cfg = self.config
        return cfg.truncate_fraction if matches(cfg.truncate, repo_id, path) else None

    def broken_header(self, repo_id: str, path: str) -> str | None:
        """How this safetensors file's header is broken (a BROKEN_HEADER_KINDS value), or None."""
        cfg = self.config
        return cfg.broken_header_kind if matches(cfg.broken_header, repo_id, path) else None

    def breaks_json(self, repo_id: str, path: str) -> bool:
        return matches(self.config.invalid_json, repo_id, path)
