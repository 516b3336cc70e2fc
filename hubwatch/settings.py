"""The one typed settings object; the only reader of the environment (prefix HUBWATCH_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, PrivateAttr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["DEFAULT_HUB", "Settings", "load_settings"]

DEFAULT_HUB = "https://huggingface.co"


class Settings(BaseSettings):
    """Every setting hubwatch reads; each one can be set as HUBWATCH_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="HUBWATCH_", extra="ignore", populate_by_name=True)
    _public_url_given: bool = PrivateAttr(default=False)

    @property
    def public_url_given(self) -> bool:
        """Whether HUBWATCH_PUBLIC_URL (or `public_url=`) was given, not derived from host and port."""
        return self._public_url_given

    database_url: str = Field(
        default_factory=lambda: f"sqlite:///{Path.cwd() / 'hubwatch.db'}",
        description="SQLAlchemy URL of the store (SQLite file by default; postgresql://… to scale out).",
    )
    hub_endpoint: str = Field(default=DEFAULT_HUB, description="Base URL of the hub API.")
    hub_web_url: str = Field(
        default=DEFAULT_HUB,
        description="Base URL of the hub's web pages that pages and feeds link to (\"on the hub\", \"View this "
        "commit on the hub\"); independent of HUBWATCH_HUB_ENDPOINT, so a demo against the emulator still links "
        "to the real hub.",
    )
    hf_token: str | None = Field(
        default=None,
        description="Token for the hub; when unset, HF_TOKEN from the environment is used.",
    )
    public_url: str = Field(
        default="http://127.0.0.1:8000",
        description="Base URL where the web app is reachable (links in feeds); unset: http://HOST:PORT.",
    )
    host: str = Field(default="127.0.0.1", description="Address the web app binds to.")
    port: int = Field(default=8000, description="Port the web app listens on.")
    poll_interval_s: int = Field(default=300, ge=10, description="Seconds between poll cycles in `hubwatch run`.")
    recheck_interval_s: int = Field(
        default=21600,
        ge=60,
        description="Seconds between a repo's own head requests (safety re-check) while the hub's "
        "recently-modified listing tells each poll cycle which repos moved.",
    )
    conversion_wait_s: int = Field(
        default=86400, ge=0,
        description="Seconds after a dataset head's commit that its parquet conversion (refs/convert/parquet, "
        "which the hub writes some minutes after main moves) is waited for when a poll found none: the head is "
        "asked again, its refs alone, until the conversion is out or this time has passed (0: never asked again).",
    )
    conversion_recheck_s: int = Field(
        default=300, ge=10,
        description="Least seconds between two such asks; the wait between them grows with the head's age "
        "(half of it), so a dataset the hub never converts costs about 14 requests per head in a day.",
    )
    web_threads: int = Field(
        default=12, ge=1, le=64,
        description="Requests the web app works on at once in its thread pool (every route doing database "
        "work is a plain function run there); at most the database pool (5 + 10 overflow connections).",
    )
    poll_runs_keep_days: int = Field(
        default=30, ge=1,
        description="Days the per-repo poll telemetry (`poll_runs`) is kept; each poll cycle deletes a bounded "
        "batch of older rows.",
    )
    backfill_limit: int | None = Field(
        default=None, ge=1, description="When set, backfill at most this many past commits for a newly watched repo."
    )
    advise_min_severity: str = Field(
        default="low", description="Lowest severity that produces an OSV advisory (info changes never do)."
    )
    advisory_prefix: str = Field(default="x_HUBWATCH", description="Prefix of advisory ids (must start with x_).")
    derivatives_refresh_s: int = Field(
        default=21600, ge=60,
        # the name it had before (HUBWATCH_FAMILY_REFRESH_S) is still read
        validation_alias=AliasChoices("HUBWATCH_DERIVATIVES_REFRESH_S", "HUBWATCH_FAMILY_REFRESH_S"),
        description="Seconds between readings of the hub's listing for the derivatives of each base watched with "
        "`watch add --derivatives` (`hubwatch run`); new derivatives found are watched "
        "(HUBWATCH_FAMILY_REFRESH_S, its former name, is read too).",
    )
    admin_token: str | None = Field(default=None, description="Bearer token for admin endpoints; unset disables them.")
    webhook_secret: str | None = Field(default=None, description="Secret the hub webhook must send in X-Webhook-Secret.")
    hub_timeout_s: float = Field(
        default=20.0, gt=0,
        description="Timeout of one hub request as a whole (connect, answer and the whole body), seconds.",
    )
    poll_deadline_s: float = Field(
        default=300.0, gt=0,
        description="Deadline of one repo's whole poll (all its hub requests), seconds; past it the repo resumes next time.",
    )
    hub_retries: int = Field(
        default=2, ge=0, le=5,
        description="Retries of a hub request that failed with a 5xx, a timeout or a dropped connection (short waits, within the poll's deadline); 429s are never retried but defer the repo.",
    )
    breaker_failures: int = Field(
        default=5, ge=1,
        description="Hub requests failing in a row (after retries) that open the circuit breaker: no request for the cool-down, then one probe.",
    )
    breaker_cooldown_s: float = Field(default=60.0, gt=0, description="How long the open circuit breaker waits before its probe, seconds.")
    osv_page_size: int = Field(default=100, ge=1, le=1000, description="Records per page of the web OSV API (`POST /v1/query`).")
    feed_limit: int = Field(default=50, ge=1, le=1000, description="Entries per Atom/RSS/JSON feed.")
    lease_s: float = Field(
        default=60.0,
        ge=2,
        le=3600,
        description="Seconds a worker's claim on a repo lasts; a heartbeat renews it every third of that while "
        "the poll runs, so a crashed (kill -9) worker's repos are free again within this time.",
    )
    claim_batch: int = Field(
        default=4,
        ge=1,
        le=100,
        description="The most repos one worker holds claimed at a time (small, so several workers share a cycle's "
        "work); as soon as one is polled the next due repo is claimed in its place.",
    )
    poll_concurrency: int = Field(
        default=4,
        ge=1,
        le=64,
        description="Repos one worker polls at the same time (threads; at most HUBWATCH_CLAIM_BATCH): the hub's "
        "latency of one repo overlaps another's work; 1 polls them one after another.",
    )
    shutdown_grace_s: float = Field(
        default=20.0,
        ge=0,
        description="On SIGTERM, seconds `hubwatch run` waits for the repo being polled (it stops at the next "
        "revision boundary); its lease is released either way.",
    )
    notify_max_attempts: int = Field(
        default=8, ge=1, le=100, description="Delivery attempts of one notification before it is dead (`hubwatch notify status`)."
    )
    notify_backoff_s: float = Field(
        default=30.0,
        gt=0,
        description="Seconds before the first retry of a failed notification; each further retry waits twice as "
        "long (exponential backoff, at most 6 hours).",
    )
    notify_rate_per_hour: int = Field(
        default=30,
        ge=1,
        description="Messages one subscription receives per hour at most; what is due beyond that is sent "
        "as one grouped message when the hour frees up.",
    )
    notify_timeout_s: float = Field(default=10.0, gt=0, description="Seconds one delivery (a webhook POST, an Apprise send) may take.")
    notify_interval_s: float = Field(
        default=15.0, gt=0, description="Seconds between outbox sweeps of the sender in `hubwatch run`."
    )

    @model_validator(mode="after")
    def _public_url_follows_host_and_port(self) -> "Settings":
        # Links must point where the app listens unless a public URL is given (a proxy, a domain).
        self._public_url_given = "public_url" in self.model_fields_set
        if not self._public_url_given:
            host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
            self.public_url = f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"
        return self

    @field_validator("advise_min_severity")
    @classmethod
    def _is_severity(cls, value: str) -> str:
        allowed = ("critical", "high", "medium", "low", "info")
        if value.strip().lower() not in allowed:
            raise ValueError(f"{value!r} is not a severity: use one of {', '.join(allowed)}")
        return value.strip().lower()

    @field_validator("advisory_prefix")
    @classmethod
    def _is_local_prefix(cls, value: str) -> str:
        if not value.startswith("x_") or len(value) < 3 or any(c.isspace() or c == "/" for c in value):
            raise ValueError(f"{value!r} is not allowed: OSV takes only local ids starting with 'x_', e.g. x_HUBWATCH")
        return value


def load_settings() -> Settings:
    """Read the settings from the environment (and HF_TOKEN for the hub token)."""
    import os

    settings = Settings()
    if settings.hf_token is None:
        token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
        if token:
            settings = settings.model_copy(update={"hf_token": token})
    return settings
