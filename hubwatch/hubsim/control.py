"""The emulator's `/_sim` control routes (advance, rewind, squash, reset, faults, state) and outgoing hub-style webhooks."""

from __future__ import annotations

import json
import logging
import threading

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hubwatch.hubsim import modes
from hubwatch.hubsim.faults import FaultConfig, FaultError
from hubwatch.hubsim.names import sim_key
from hubwatch.hubsim.repos import DATASETS_FOLDER
from hubwatch.hubsim.state import Advance, SimError, SimState, parse_at

__all__ = ["WebhookSender", "advance", "faults", "reset", "rewind", "sim_state", "squash", "webhook_payload"]

log = logging.getLogger(__name__)


def webhook_payload(event: Advance, base_url: str) -> dict[str, object]:
    """The body the hub POSTs for a push to main (scope repo.content, webhook version 3); a
    dataset's (`datasets/org/name`) says `"type": "dataset"` and names it `org/name`."""
    dataset = event.repo_id.startswith(f"{DATASETS_FOLDER}/")
    name = event.repo_id.split("/", 1)[1] if dataset else event.repo_id
    org = name.split("/", 1)[0]
    web = f"{base_url}/{DATASETS_FOLDER}/{name}" if dataset else f"{base_url}/{name}"
    return {
        "event": {"action": "update", "scope": "repo.content"},
        "repo": {
            "type": "dataset" if dataset else "model",
            "name": name,
            "id": f"hubsim-{event.repo_id}",
            "private": False,
            "url": {"web": web, "api": f"{base_url}/api/{'datasets' if dataset else 'models'}/{name}"},
            "owner": {"id": f"hubsim-{org}"},
            "headSha": event.commit.sha,
        },
        "updatedRefs": [{"ref": "refs/heads/main", "oldSha": event.old_sha, "newSha": event.commit.sha}],
        "webhook": {"id": "hubsim-webhook", "version": 3},
    }


class WebhookSender:
    """Posts one webhook per advance from a background thread; failures are logged, never raised."""

    def __init__(self, url: str, secret: str | None, base_url: str = "http://127.0.0.1") -> None:
        self.url = url
        self.secret = secret
        self.base_url = base_url
        self.delivered = 0
        self.failed = 0

    def __call__(self, event: Advance) -> None:
        threading.Thread(target=self._send, args=(event,), name="hubsim-webhook", daemon=True).start()

    def _send(self, event: Advance) -> None:
        headers = {"Content-Type": "application/json"}
        if self.secret is not None:
            headers["X-Webhook-Secret"] = self.secret
        try:
            r = httpx.post(
                self.url, content=json.dumps(webhook_payload(event, self.base_url)), headers=headers, timeout=10
            )
            r.raise_for_status()
            self.delivered += 1
        except httpx.HTTPError as exc:
            self.failed += 1
            log.warning("hubsim: webhook to %s for %s failed: %s", self.url, event.repo_id, exc)


def _state(request: Request) -> SimState:
    state: SimState = request.app.state.sim
    return state


async def advance(request: Request) -> Response:
    """`POST /_sim/{org}/{name}/advance`: reveal the next version; 409 at the end."""
    state = _state(request)
    event = state.advance(state.canonical(sim_key(request), follow=True))
    return JSONResponse(
        {
            "repo": event.repo_id,
            "sha": event.commit.sha,
            "version": event.commit.version,
            "old_sha": event.old_sha,
            "visible": event.visible,
            "total": event.total,
        }
    )


async def convert(request: Request) -> Response:
    """`POST /_sim/datasets/{org}/{name}/convert`: run the parquet converter on main's head (what
    the conversion lag held back comes out); `sha` null when that version has no conversion."""
    state = _state(request)
    repo_id = state.canonical(sim_key(request), follow=True)
    if state.history(repo_id).repo_type != "dataset":
        raise SimError(400, "BadRequest", f"{repo_id} is a model: only datasets have a parquet conversion")
    commit = state.convert(repo_id)
    return JSONResponse({"repo": repo_id, "sha": commit.sha if commit is not None else None,
                         "version": state.head(repo_id).version})  # fmt: skip


async def rewind(request: Request) -> Response:
    """`POST /_sim/{org}/{name}/rewind {"to": "v2"}`: force-push main back to that version."""
    to = (await _json_body(request)).get("to")
    if not isinstance(to, (str, int)) or isinstance(to, bool):
        raise SimError(400, "BadRequest", 'body must be {"to": "vK"}')
    state = _state(request)
    repo_id = sim_key(request)
    head = state.rewind(repo_id, to)
    return JSONResponse({"repo": state.canonical(repo_id, follow=True), "sha": head.sha, "version": head.version})


async def squash(request: Request) -> Response:
    """`POST /_sim/{org}/{name}/squash`: `super_squash_history` on main (one commit, no parent)."""
    state = _state(request)
    repo_id = sim_key(request)
    commit = state.squash(repo_id)
    return JSONResponse({"repo": state.canonical(repo_id, follow=True), "sha": commit.sha, "title": commit.title})


async def _json_body(request: Request) -> dict[str, object]:
    body = await request.body()
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise SimError(400, "BadRequest", f"body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SimError(400, "BadRequest", "body must be a JSON object")
    return data


async def reset(request: Request) -> Response:
    """`POST /_sim/reset` (optional `{"at": "v2"}`): back to the start state, faults included."""
    data = await _json_body(request)
    state = _state(request)
    try:
        raw = data.get("at", state.start_at)
        if raw is not None and not isinstance(raw, (str, int)):
            raise TypeError(f"at must be vK, K or null, got {raw!r}")
        at = parse_at(raw)
    except (ValueError, TypeError) as exc:
        raise SimError(400, "BadRequest", str(exc)) from exc
    state.reset(at)
    return JSONResponse(state.snapshot())


async def faults(request: Request) -> Response:
    """`GET /_sim/faults`: the live faults; `POST` a JSON FaultConfig to replace them."""
    state = _state(request)
    if request.method == "POST":
        try:
            state.faults.set(FaultConfig.from_mapping(await _json_body(request)))
        except FaultError as exc:
            raise SimError(400, "BadRequest", str(exc)) from exc
    return JSONResponse(state.faults.config.to_json())


async def sim_state(request: Request) -> Response:
    """`GET /_sim/state`: per repo the versions shown and the head; the live faults; the hub
    requests (`seen`, `in_flight` now, `max_in_flight` since the last `?reset=in_flight`)."""
    state = _state(request)
    reset = request.query_params.get("reset") == "in_flight"
    return JSONResponse({**state.snapshot(), "requests": modes.concurrency(state, reset=reset)})
