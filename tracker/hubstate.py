"""The hub-wide state kept in the store: a rejected token, by fingerprint (never the token itself).

When the hub answers 401 "Invalid credentials in Authorization header", every request fails the
same way: the poller records the rejection here (store meta `hub_token_rejected`) and every worker
stops calling the hub while its token has that fingerprint. A worker started with another token
(settings changed) polls again and clears it on its first good answer. `/healthz` and the index
page read it (`token_problem`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from hubwatch.domain.hub_status import TOKEN_KEY, TokenProblem, fingerprint
from hubwatch.domain.times import rfc3339

if TYPE_CHECKING:
    from hubwatch.storage import Store
    from hubwatch.tracker.hub import HubClient

__all__ = ["clear_token_problem", "halted", "record_token_problem", "token_problem"]


def token_problem(store: Store) -> TokenProblem | None:
    return TokenProblem.loads(store.meta(TOKEN_KEY))


def record_token_problem(store: Store, token: str | None, reason: str, fix: str, at: datetime) -> None:
    store.set_meta(TOKEN_KEY, TokenProblem(fingerprint(token), reason, fix, rfc3339(at)).dumps())


def clear_token_problem(store: Store) -> None:
    if store.meta(TOKEN_KEY):
        store.set_meta(TOKEN_KEY, "")


def halted(store: Store, hub: HubClient, at: datetime) -> TokenProblem | None:
    """The token problem that stops this client calling the hub, or None.

    The client's own rejection (recorded in the store if it is not yet), else one recorded by any
    worker for a token of the same fingerprint. Another token is tried again.
    """
    rejected = hub.guard.token_rejected
    problem = token_problem(store)
    mine = fingerprint(hub.token)
    if rejected is not None:
        if problem is None or problem.fingerprint != mine:
            record_token_problem(store, hub.token, "the hub rejected the token (401 invalid credentials)", rejected.fix, at)
            problem = token_problem(store)
        return problem
    return problem if problem is not None and problem.fingerprint == mine else None
