"""Notifications out: subscriptions and the transactional outbox."""
