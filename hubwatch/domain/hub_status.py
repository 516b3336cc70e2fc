"""The hub-wide status kept in the store's meta: a rejected token, named by fingerprint (never the token).

Written by the tracker (`hubwatch.tracker.hubstate`), read by the web app (`/healthz`, the index).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

__all__ = ["TOKEN_KEY", "TokenProblem", "fingerprint"]

TOKEN_KEY = "hub_token_rejected"  # store meta key; "" or absent: no problem


def fingerprint(token: str | None) -> str:
    """A short, stable, non-secret name of a token ("anonymous" without one)."""
    if not token:
        return "anonymous"
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class TokenProblem:
    """The hub rejected the token of this fingerprint at `at` (RFC 3339); `fix` says what to do."""

    fingerprint: str
    reason: str
    fix: str
    at: str

    def to_json(self) -> dict[str, str]:
        return {"fingerprint": self.fingerprint, "reason": self.reason, "fix": self.fix, "at": self.at}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    @classmethod
    def loads(cls, raw: str | None) -> TokenProblem | None:
        """The stored value parsed; None when empty or unreadable."""
        if not raw:
            return None
        try:
            data = json.loads(raw)
            return cls(str(data["fingerprint"]), str(data["reason"]), str(data["fix"]), str(data["at"]))
        except (ValueError, KeyError, TypeError):
            return None
