"""`hubwatch estimate --dataset`: the run's samples per epoch and estimated tokens per sample from a dataset
repo's metadata (its card's `dataset_info` or `dataset_infos.json`), with where each number came from.

The hub is asked through the adapter (`tracker.hub_datasets`); the numbers come from
`estimator.dataset_size`. A dataset that cannot give them is one `DatasetProblem`: a line naming
what is wrong and a fix, and the exit code it means.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hubwatch.cli.errors import EXIT_HUB, EXIT_USAGE
from hubwatch.estimator.frozen import frozen

if TYPE_CHECKING:
    from rich.table import Table

    from hubwatch.estimator.dataset_size import DatasetRun
    from hubwatch.tracker.hub import HfHubClient

__all__ = ["DatasetChoice", "DatasetProblem", "dataset_choice", "dataset_table"]

_HUB = "https://huggingface.co"


class DatasetProblem(Exception):
    """`--dataset` cannot give the run's sizes: the message names what, `fix` says what to do."""

    def __init__(self, message: str, fix: str, exit_code: int) -> None:
        super().__init__(message)
        self.fix = fix
        self.exit_code = exit_code


@frozen
class DatasetChoice:
    """The dataset's numbers and the samples per epoch the run uses (the dataset's rows, or `--samples`)."""

    run: DatasetRun
    samples: int
    samples_note: str  # where the run's samples per epoch came from
    asked: str | None = None  # the revision given after @ (None: main)

    @property
    def tokens_per_sample(self) -> int | None:
        return self.run.tokens_per_sample

    def to_json(self) -> dict[str, Any]:
        return {**self.run.to_json(), "revision_asked": self.asked, "samples": self.samples,
                "samples_from": self.samples_note}


def dataset_choice(text: str, *, config: str | None, split: str, samples: int | None,
                   hub: HfHubClient) -> DatasetChoice:
    """The sizes of `text` (`datasets/ORG/NAME[@REV]` or `ORG/NAME[@REV]`) at `config`/`split`; an explicit
    `samples` overrides the rows (said in the note). Raises DatasetProblem."""
    from hubwatch.domain.records import InvalidRepoId
    from hubwatch.estimator.dataset_size import DatasetSizeError, dataset_run
    from hubwatch.tracker.errors import GatedRepo, HubError, RepoNotFound, RevisionNotFound
    from hubwatch.tracker.hub_datasets import dataset_summary, parse_dataset_ref

    try:
        repo, revision = parse_dataset_ref(text)
    except InvalidRepoId:
        raise DatasetProblem(f"--dataset {text!r} is not a dataset id",
                             "give datasets/ORG/NAME or ORG/NAME, optionally @REVISION "
                             "(e.g. datasets/stanfordnlp/imdb@main)", EXIT_USAGE) from None
    page = repo.url(_HUB)
    try:
        summary = dataset_summary(hub, repo, revision)
    except GatedRepo as exc:
        raise DatasetProblem(f"{exc}", f"accept the dataset's terms at {page} and set HF_TOKEN to a token of "
                                       "that account, or give --samples", EXIT_HUB) from exc
    except RevisionNotFound as exc:
        raise DatasetProblem(f"{repo}: revision {revision} not found",
                             "give a branch, tag or 40-hex commit of the dataset after @", EXIT_HUB) from exc
    except RepoNotFound as exc:
        raise DatasetProblem(f"{repo}: no such dataset on the hub (or private)",
                             "check the spelling of ORG/NAME (a model id is not a dataset id); private datasets "
                             "need HF_TOKEN", EXIT_HUB) from exc
    except HubError as exc:
        raise DatasetProblem(str(exc), exc.fix, EXIT_HUB) from exc
    try:
        run = dataset_run(summary, config, split)
    except DatasetSizeError as exc:
        message = exc.problem if exc.field == "dataset" else f"{exc.problem} at {summary.revision[:12]}"
        if exc.available:
            message += f" (available: {', '.join(exc.available)})"
        if exc.field == "config":
            fix = "give --config with one of those" if exc.available else "give --config"
        elif exc.field == "split":
            fix = "give --split with one of those" if exc.available else "give --samples (rows per epoch) instead"
        else:
            fix = ("give --samples (rows per epoch) instead: hubwatch reads only the card's dataset_info and "
                   "dataset_infos.json, never a loading script or the rows")
        raise DatasetProblem(message, fix, EXIT_USAGE) from exc
    if samples is None:
        return DatasetChoice(run, run.samples, "the split's rows", revision)
    return DatasetChoice(run, samples, f"--samples {samples} (overrides the split's {run.samples:,} rows)", revision)


def dataset_table(choice: DatasetChoice, seq_lens: list[int]) -> Table:
    """The dataset the run is costed on: id, revision sha, config/split, rows, tokens per sample, and where
    each came from (remote text escaped)."""
    from rich.markup import escape
    from rich.table import Table

    run = choice.run
    table = Table(title="Dataset (the run's samples per epoch and tokens per sample)", title_justify="left")
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("from", overflow="fold")
    table.add_row("dataset", escape(run.dataset), f"{_HUB}/{escape(run.dataset)}")
    table.add_row("revision", run.revision, f"what {escape(choice.asked or 'main')} points at on the hub")
    table.add_row("config / split", f"{escape(run.config)} / {escape(run.split)}", "--config / --split (or the default)")
    table.add_row("rows (split)", f"{run.samples:,}", escape(run.samples_from))
    table.add_row("samples per epoch", f"{choice.samples:,}", escape(choice.samples_note))
    tokens = "—" if run.tokens_per_sample is None else f"≈ {run.tokens_per_sample:,} (estimated)"
    note = escape(run.tokens_from)
    capped = sorted({n for n in seq_lens if run.tokens_per_sample is not None and n < run.tokens_per_sample})
    if capped:
        note += f"; capped at seq len {', '.join(map(str, capped))} in the cost"
    elif run.tokens_per_sample is None:
        note += "; the cost counts seq len tokens per sample"
    table.add_row("tokens per sample", tokens, note)
    return table
