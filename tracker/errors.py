"""Errors at the hub boundary, translated from huggingface_hub's in the adapter alone."""

from __future__ import annotations

__all__ = [
    "GatedRepo",
    "HubError",
    "HubUnavailable",
    "InvalidContent",
    "PollTimedOut",
    "RateLimited",
    "RepoDisabled",
    "RepoNotFound",
    "RevisionNotFound",
    "TokenRejected",
]


class HubError(Exception):
    """Base of every error talking to the hub; carries the repo and revision concerned."""

    fix = "check the repo id and your network, then retry"

    def __init__(self, message: str, *, repo_id: str | None = None, revision: str | None = None) -> None:
        self.repo_id = repo_id
        self.revision = revision
        where = repo_id or ""
        if revision:
            where += f"@{revision[:12]}"
        super().__init__(f"{where}: {message}" if where else message)


class RepoNotFound(HubError):
    fix = "check the spelling of org/name; private repos need HF_TOKEN"


class RevisionNotFound(HubError):
    fix = "check the revision (a branch, tag or 40-hex commit of this repo)"


class GatedRepo(HubError):
    fix = "accept the model's terms on the hub and set HF_TOKEN to a token of that account"


class RepoDisabled(HubError):
    """403 "Access to this resource is disabled.": the hub took the repo down (polled with backoff)."""

    fix = "nothing to do locally: the hub disabled this repo; unwatch it or wait for it to come back"


class TokenRejected(HubError):
    """401 "Invalid credentials in Authorization header": every request fails until the token changes."""

    fix = "set a valid HF_TOKEN (or HUBWATCH_HF_TOKEN), or unset it to poll public repos anonymously"


class RateLimited(HubError):
    fix = "wait and retry; a token (HF_TOKEN) raises the hub's limits"

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: str | None) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class HubUnavailable(HubError):
    fix = "the hub did not answer properly; retry later or check HUBWATCH_HUB_ENDPOINT"


class PollTimedOut(HubError):
    """The poll of one repo used up its deadline (`HUBWATCH_POLL_DEADLINE_S`); it resumes next time."""

    fix = "nothing to do: the hub is slow; the repo is polled again later (HUBWATCH_POLL_DEADLINE_S bounds one poll)"


class InvalidContent(HubError):
    """A file the hub served is not what it claims to be (bad JSON, truncated body, …)."""

    fix = "nothing to do locally: the next poll fetches it again and carries on from this revision"
