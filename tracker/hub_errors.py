"""Translation of huggingface_hub and HTTP errors into hubwatch's HubError types (used by tracker/hub.py only)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hubwatch.tracker.errors import (
    GatedRepo,
    HubError,
    HubUnavailable,
    InvalidContent,
    RateLimited,
    RepoDisabled,
    RepoNotFound,
    RevisionNotFound,
    TokenRejected,
)
from hubwatch.tracker.transport import HubAnswer, HubConnection

_BAD_TOKEN = "invalid credentials in authorization header"

__all__ = ["translate_errors"]


def _retry_after(response: Any) -> float | None:
    headers = getattr(response, "headers", None) or {}
    raw = headers.get("retry-after")
    if raw:
        try:
            return float(raw)
        except ValueError:
            pass
    ratelimit = headers.get("ratelimit") or ""
    for part in ratelimit.split(";"):
        if part.strip().startswith("t="):
            try:
                return float(part.strip()[2:])
            except ValueError:
                return None
    return None


def _token_rejected(exc: Any) -> bool:
    response = getattr(exc, "response", None)
    if response is None or response.status_code != 401:
        return False
    message = str(response.headers.get("x-error-message") or "")
    if not message:
        try:
            message = str(response.json().get("error") or "")
        except (ValueError, AttributeError):
            message = ""
    return message.strip().lower().rstrip(".") == _BAD_TOKEN


def _rejected(where: dict[str, str | None]) -> TokenRejected:
    return TokenRejected("the hub rejected the token: 401 invalid credentials in Authorization header", **where)


@contextmanager
def translate_errors(
    endpoint: str, repo: str | None, revision: str | None = None, file: str | None = None
) -> Iterator[None]:
    """Re-raise huggingface_hub/httpx errors from the block as HubError types, `from` the original."""
    import httpx2
    from huggingface_hub import errors as hf

    where = {"repo_id": repo, "revision": revision}
    what = f"{file}: " if file else ""
    try:
        yield
    except HubError:
        raise
    except HubAnswer as exc:  # a status huggingface_hub would have retried (transport.py raises it instead)
        if exc.status == 429:
            raise RateLimited(
                f"{what}rate limited by the hub", retry_after=_retry_after(exc), **where
            ) from exc
        raise HubUnavailable(f"{what}hub answered HTTP {exc.status}", **where) from exc
    except HubConnection as exc:
        if exc.truncated:
            raise InvalidContent(f"{what}{exc}", **where) from exc
        raise HubUnavailable(f"{what}{exc}", **where) from exc
    except hf.DisabledRepoError as exc:
        raise RepoDisabled("the hub disabled this repo (403: access to this resource is disabled)", **where) from exc
    except hf.GatedRepoError as exc:
        raise GatedRepo(f"{what}repo is gated: access not granted to this token", **where) from exc
    except hf.RevisionNotFoundError as exc:
        raise RevisionNotFound(f"{what}revision not found", **where) from exc
    except hf.RepositoryNotFoundError as exc:
        if _token_rejected(exc):
            raise _rejected(where) from exc
        raise RepoNotFound("repo not found (or private)", **where) from exc
    except hf.RemoteEntryNotFoundError as exc:
        raise InvalidContent(f"{what}listed but not served (entry not found)", **where) from exc
    except hf.SafetensorsParsingError as exc:
        raise InvalidContent(f"{what}safetensors header cannot be parsed: {exc}", **where) from exc
    except hf.HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        if _token_rejected(exc):
            raise _rejected(where) from exc
        if status == 429:
            raise RateLimited(
                f"{what}rate limited by the hub", retry_after=_retry_after(exc.response), **where
            ) from exc
        raise HubUnavailable(f"{what}hub answered HTTP {status}", **where) from exc
    except hf.HFValidationError as exc:
        raise RepoNotFound(f"not a valid repo id or revision: {exc}", **where) from exc
    except (httpx2.RemoteProtocolError, httpx2.DecodingError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidContent(f"{what}truncated or malformed response: {exc}", **where) from exc
    except RecursionError as exc:  # JSON parsed by the library (a safetensors header) nested without end
        raise InvalidContent(f"{what}nested too deeply to read: {exc}", **where) from exc
    except httpx2.TimeoutException as exc:
        raise HubUnavailable(f"{what}hub did not answer in time", **where) from exc
    except httpx2.HTTPError as exc:
        raise HubUnavailable(f"{what}cannot reach the hub at {endpoint}: {exc}", **where) from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidContent(f"{what}unexpected response shape: {exc!r}", **where) from exc

