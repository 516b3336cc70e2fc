"""The estimate panel's settings: method, training stack, sequence length, batch, LoRA rank, precision, cost card,
epochs, samples and the dataset trained on (`dataset` ORG/NAME or datasets/ORG/NAME[@REV], `dataset_config`,
`dataset_split`), read from plain GET/POST form fields (or the JSON API's body) and validated once. The dataset
is only named here; its sizes are read from the store by `builders.plan_dataset`.

A value the estimator refuses is a `PlanInputError` naming the field and what it accepts; the page
shows it in place of the panel and the API answers 400 with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hubwatch.domain.records import InvalidRepoId, RepoId, RepoType
from hubwatch.estimator.cards import DEFAULT_CARDS, Card, card_by_name
from hubwatch.estimator.cost import RunShape
from hubwatch.estimator.memory.settings import METHODS, PRECISIONS, STACKS, MemorySettings, MemorySettingsError

__all__ = ["CHOICES", "DATASET_FIELDS", "FORM_FIELDS", "DatasetAsk", "PlanInputError", "PlanSettings", "form_values",
           "plan_settings", "settings_from_json"]

# The form's fields in display order (each a plain query or form parameter).
DATASET_FIELDS = ("dataset", "dataset_config", "dataset_split")
FORM_FIELDS = ("method", "stack", "seq_len", "batch", "lora_rank", "precision", "card", "epochs", "samples",
               *DATASET_FIELDS)
_INTS = ("seq_len", "batch", "lora_rank", "samples")
_MAX_TEXT = 64  # no valid value of any field is longer
# but a dataset id with a revision (two hub names of up to 96 characters, a 40-hex sha) and a config's name
_MAX_DATASET_TEXT = {"dataset": 256, "dataset_config": 200, "dataset_split": 200}


class PlanInputError(ValueError):
    """A setting the estimate cannot use: `field` names it, the message says what is allowed."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True)
class DatasetAsk:
    """The dataset a run is costed on, as asked: its id, the revision after @ (None: the newest stored),
    the config (None: the default, or the only one) and the split."""

    repo: RepoId
    revision: str | None = None
    config: str | None = None
    split: str = "train"

    @property
    def text(self) -> str:
        """The `dataset` field that asks for it again."""
        return f"{self.repo}@{self.revision}" if self.revision else str(self.repo)


@dataclass(frozen=True)
class PlanSettings:
    """Validated settings of one estimate (hashable: the panel cache's key)."""

    memory: MemorySettings
    run: RunShape
    card: Card | None = None  # the card the run is costed on; None: the cheapest that fits
    dataset: DatasetAsk | None = None  # samples per epoch (and tokens per sample) from a stored dataset revision
    samples_given: bool = False  # `samples` was set: it overrides the dataset's rows

    @property
    def cards(self) -> tuple[Card, ...]:
        return DEFAULT_CARDS


def _int(field: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise PlanInputError(field, f"expected a whole number, got {text!r}") from None


def _float(field: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PlanInputError(field, f"expected a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise PlanInputError(field, f"expected a finite number, got {text!r}")
    return value


def _dataset_ask(values: Mapping[str, Any]) -> DatasetAsk | None:
    """The dataset named by `dataset` (ORG/NAME or datasets/ORG/NAME, optionally @REV), its config and split."""
    text, config, split = (values.get(f) for f in DATASET_FIELDS)
    for field, value in zip(DATASET_FIELDS, (text, config, split), strict=True):
        if value is not None and not isinstance(value, str):
            raise PlanInputError(field, f"expected text, got {value!r}")
    if not text:
        if config or split:
            raise PlanInputError("dataset", "dataset_config and dataset_split choose a dataset's subset and split: "
                                            "give dataset too (ORG/NAME or datasets/ORG/NAME)")
        return None
    name, sep, revision = text.strip().partition("@")
    try:
        repo = RepoId.parse(name, RepoType.DATASET)
    except InvalidRepoId as exc:
        raise PlanInputError("dataset", f"{exc} (give ORG/NAME or datasets/ORG/NAME, optionally @REVISION, "
                                        "e.g. datasets/stanfordnlp/imdb)") from None
    if sep and not revision.strip():
        raise PlanInputError("dataset", f"{text!r}: nothing after @ (give a stored commit sha, or leave out @)")
    return DatasetAsk(repo, revision.strip().lower() or None, config or None, split or "train")


def _build(values: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> PlanSettings:
    """PlanSettings from typed values (None: the default); estimator errors named by field."""
    memory: dict[str, Any] = {k: values[k] for k in ("method", "stack", "seq_len", "batch", "lora_rank", "precision")
                              if values.get(k) is not None}
    memory.update(extra or {})
    run: dict[str, Any] = {k: values[k] for k in ("epochs", "samples") if values.get(k) is not None}
    try:
        settings = MemorySettings.from_json(memory)
        shape = RunShape(**run)
        card = card_by_name(values["card"]) if values.get("card") else None
    except MemorySettingsError as exc:
        raise PlanInputError(exc.name, exc.problem) from exc
    except TypeError as exc:  # a wrongly typed JSON value the dataclass itself refuses
        raise PlanInputError("settings", str(exc)) from exc
    return PlanSettings(settings, shape, card, _dataset_ask(values), values.get("samples") is not None)


def plan_settings(params: Mapping[str, str]) -> PlanSettings:
    """The settings named by form fields (`FORM_FIELDS`; others are ignored); an empty field is its default."""
    values: dict[str, Any] = {}
    for field in FORM_FIELDS:
        text = (params.get(field) or "").strip()
        if not text:
            continue
        if len(text) > _MAX_DATASET_TEXT.get(field, _MAX_TEXT):
            raise PlanInputError(field, f"{len(text)} characters is longer than any valid value")
        if field in _INTS:
            values[field] = _int(field, text)
        elif field == "epochs":
            values[field] = _float(field, text)
        else:
            values[field] = text
    return _build(values)


def settings_from_json(settings: Any, cost: Mapping[str, Any]) -> PlanSettings:
    """The JSON API's `settings` object (any memory setting) and its cost inputs (`epochs`, `samples`, `card`,
    and the dataset fields `dataset`, `dataset_config`, `dataset_split`)."""
    if settings is not None and not isinstance(settings, dict):
        raise PlanInputError("settings", "must be a JSON object of memory settings (method, batch, seq_len, …)")
    card = cost.get("card")
    if card is not None and not isinstance(card, str):
        raise PlanInputError("card", f"expected a card name such as H100-80GB, got {card!r}")
    for field in ("epochs", "samples"):
        value = cost.get(field)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise PlanInputError(field, f"expected a number, got {value!r}")
    return _build({**cost}, settings or {})


def form_values(params: Mapping[str, str]) -> dict[str, str]:
    """What the form shows back: each field as given (trimmed, bounded), empty for the default."""
    return {field: (params.get(field) or "").strip()[:_MAX_DATASET_TEXT.get(field, _MAX_TEXT)] for field in FORM_FIELDS}


CHOICES: dict[str, tuple[str, ...]] = {"method": METHODS, "stack": STACKS, "precision": PRECISIONS,
                                       "card": tuple(c.name for c in DEFAULT_CARDS)}
