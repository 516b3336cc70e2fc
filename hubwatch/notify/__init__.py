"""Notifications out: subscriptions to Apprise URLs and signed webhooks, messages a person acts on,
and the sender that delivers the transactional outbox (at least once, retried, rate-limited)."""

from hubwatch.notify.targets import BadTarget, DeliveryFailed, check_target, is_webhook, new_secret, shown_url

__all__ = ["BadTarget", "DeliveryFailed", "check_target", "is_webhook", "new_secret", "shown_url"]
