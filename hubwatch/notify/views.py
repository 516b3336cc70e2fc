"""Subscriptions as the CLI and the admin API show them: no secret, the target without credentials."""

from __future__ import annotations

from typing import Any

from hubwatch.notify.targets import is_webhook, shown_url
from hubwatch.storage.notify.notify import Subscription

__all__ = ["subscription_json"]


def subscription_json(sub: Subscription) -> dict[str, Any]:
    """A subscription as `notify list --json` and GET /admin/subscriptions show it (no secret,
    the URL without credentials)."""
    return {
        "id": sub.id,
        "target": shown_url(sub.url),
        "signed_webhook": is_webhook(sub.url),
        "repos": list(sub.repos),
        "orgs": list(sub.orgs),
        "kinds": list(sub.kinds),
        "min_severity": sub.min_severity.value if sub.min_severity else None,
        "pins": sub.pins_path,
        "digest": sub.digest,
        "created_at": sub.created_at.isoformat(),
    }
