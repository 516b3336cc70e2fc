"""`hubwatch estimate`: parameters, memory per method, batch per card and cost of one or more models."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from hubwatch.cli import cli
from hubwatch.cli.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
# The option choices only: memory_settings imports nothing of the estimator's model code, and the
# estimator's package imports nothing at import time, so `hubwatch --help` stays fast.
from hubwatch.estimator.memory.settings import (
    ATTENTION_IMPLS, IMPLEMENTATIONS, KV_DTYPES, LOSS_IMPLS, METHODS, OPTIMIZERS, PRECISIONS, SERVE_DTYPES, STACKS,
    MemorySettings, MemorySettingsError,
)

if TYPE_CHECKING:
    from hubwatch.cli.estimate_dataset import DatasetChoice
    from hubwatch.cli.estimate_entry import EstimateEntry, FailedEntry
    from hubwatch.estimator.cards import Card

__all__ = ["estimate"]

# Where the tracker's advice does not fit a one-off estimate.
_ESTIMATE_FIX = {"InvalidContent": "the file is missing or broken at that revision upstream; try another --revision"}


def _prices(values: tuple[str, ...], cards: tuple[Card, ...]) -> tuple[Card, ...]:
    from hubwatch.estimator.cards import Card, card_by_name

    prices: dict[str, float] = {}
    for item in values:
        name, sep, usd = item.partition("=")
        try:
            price = float(usd)
        except ValueError:
            price = -1.0
        if not sep or price < 0:
            raise click.BadParameter(f"{item!r}: expected NAME=USD_PER_HOUR, e.g. H100=2.5", param_hint="--price")
        try:
            prices[card_by_name(name, cards).name] = price
        except MemorySettingsError as exc:
            raise click.BadParameter(str(exc), param_hint="--price") from exc
    return tuple(Card(c.name, c.memory_gb, c.bf16_tflops, prices.get(c.name, c.usd_per_hour)) for c in cards)


@cli.command()
@click.argument("targets", nargs=-1, required=True)
@click.option("--revision", default=None, help="Hub revision (branch, tag or commit) for org/name targets.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array, one entry per target, in order.")
@click.option("--nodes", "show_nodes", is_flag=True, help="Also print each target's layer graph (name, type, output shape).")
@click.option("--method", type=click.Choice(METHODS), default="lora", show_default=True, help="Method whose terms are shown.")
@click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True, help="Micro-batch size.")
@click.option("--seq-len", type=click.IntRange(min=1), default=None,
              help="Tokens per sequence [default: 2048, or the model's context when shorter].")
@click.option("--lora-rank", type=click.IntRange(min=1), default=16, show_default=True, help="LoRA rank r.")
@click.option("--lora-targets", default="all-linear", show_default=True,
              help="'all-linear' (every linear but the head) or names/roles such as q_proj,v_proj or attn,mlp.")
@click.option("--precision", type=click.Choice(PRECISIONS), default="amp-bf16", show_default=True, help="Training recipe.")
@click.option("--optimizer", type=click.Choice(OPTIMIZERS), default="adamw", show_default=True, help="Optimizer.")
@click.option("--stack", type=click.Choice(STACKS), default="hf", show_default=True,
              help="Training stack: its loss path, model code, checkpointing and offloading unless set below.")
@click.option("--grad-checkpointing/--no-grad-checkpointing", default=None,
              help="Gradient checkpointing (keep layer inputs, recompute) [default: the stack's].")
@click.option("--activation-offloading/--no-activation-offloading", default=None,
              help="Offload saved activations to host memory (torchtune, axolotl, unsloth) [default: the stack's].")
@click.option("--optimizer-in-backward", is_flag=True, help="Step each parameter in backward (torchtune optimizer_in_bwd).")
@click.option("--serve-dtype", type=click.Choice(SERVE_DTYPES), default="bf16", show_default=True, help="Weights when serving.")
@click.option("--kv-dtype", type=click.Choice(KV_DTYPES), default="bf16", show_default=True, help="KV cache dtype.")
@click.option("--attention", type=click.Choice(ATTENTION_IMPLS), default="sdpa", show_default=True, help="Attention kernel.")
@click.option("--loss", type=click.Choice(LOSS_IMPLS), default=None,
              help="fp32: logits upcast (transformers); chunked: compute-dtype chunks (LitGPT); chunked-fp32: one "
                   "fp32 chunk at a time (torchtune); fused (Unsloth) [default: the stack's].")
@click.option("--lora-dropout", type=click.FloatRange(0, 1, max_open=True), default=0.0, show_default=True,
              help="LoRA dropout (> 0 keeps each adapter's dropped input and mask).")
@click.option("--shards", type=click.IntRange(min=1), default=1, show_default=True,
              help="FSDP full shard / ZeRO-3 over this many cards (per-card memory).")
@click.option("--implementation", type=click.Choice(IMPLEMENTATIONS), default=None,
              help="Whose model code runs the training step [default: the stack's].")
@click.option("--headroom", type=click.FloatRange(1.0, 10.0), default=1.15, show_default=True, help="Fit factor on the peak.")
@click.option("--cards", "card_list", default=None, help="Comma-separated cards (names, or NAME:GB) [default: all known].")
@click.option("--price", "prices", multiple=True, help="Override a card's price: NAME=USD_PER_HOUR (repeatable).")
@click.option("--cost-card", default=None, help="Cost the run on this card [default: the cheapest that fits].")
@click.option("--epochs", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True, help="Epochs.")
@click.option("--samples", type=click.IntRange(min=1), default=None,
              help="Samples per epoch [default: the --dataset split's rows, else 10000]; overrides the dataset's.")
@click.option("--dataset", "dataset", default=None, metavar="DATASET[@REV]",
              help="Take samples per epoch (and an estimated tokens per sample) from a hub dataset's metadata: "
                   "datasets/ORG/NAME or ORG/NAME, optionally @REVISION (the card's dataset_info or "
                   "dataset_infos.json; no row is read).")
@click.option("--config", "dataset_config", default=None,
              help="The --dataset config (subset) [default: the dataset's default, or its only one].")
@click.option("--split", "dataset_split", default="train", show_default=True, help="The --dataset split trained on.")
@click.option("--utilisation", type=click.FloatRange(0, 1, min_open=True), default=0.4, show_default=True,
              help="Model FLOPs utilisation assumed for the cost.")
def estimate(targets: tuple[str, ...], revision: str | None, as_json: bool, show_nodes: bool, method: str, batch: int,
             seq_len: int | None, lora_rank: int, lora_targets: str, precision: str, optimizer: str,
             stack: str, grad_checkpointing: bool | None, activation_offloading: bool | None,
             optimizer_in_backward: bool, serve_dtype: str, kv_dtype: str, attention: str, loss: str | None,
             lora_dropout: float, shards: int, implementation: str | None, headroom: float, card_list: str | None, prices: tuple[str, ...], cost_card: str | None,
             epochs: float, samples: int | None, dataset: str | None, dataset_config: str | None, dataset_split: str,
             utilisation: float) -> int:
    """Estimate parameters, memory per method, batch per card and training cost of TARGETS.

    Each TARGET is a config.json path, a folder with config.json (and optionally *.safetensors
    files, whose headers alone are read, a *.safetensors.index.json or a weights.json manifest;
    tokenizer_config.json, special_tokens_map.json and generation_config.json feed the lints), or
    org/name on the hub (safetensors headers by range requests, never the weights). Several targets
    are compared side by side: model, family, custom code, parameters derived vs checkpoint (with
    the delta explained), by component and active per token, structure and forward-pass check,
    memory, cards, cost and lint findings (--nodes adds the layer graph).

    A target that fails (unreadable or invalid config, naming the key; missing repo or revision)
    is reported on one line (as {"target", "error"} with --json) without stopping the others; a
    local target that is no config (missing, a folder without config.json, empty, not JSON, not a
    JSON object) says what is wrong and the fix ("fix" with --json). Exit codes: 0 every target
    estimated, 1 any target failed, 2 bad options or a local target that is no config.

    With --dataset, the run's samples per epoch are the split's rows as the dataset's card (or
    dataset_infos.json) states them, and its tokens per sample an estimate from the split's bytes per
    row (about 4 bytes a token, text columns only), capped at the sequence length; the output names
    the dataset, its revision's sha, the split and where each number came from. A dataset that
    cannot give them (unknown, gated, no sizes in its metadata, no such config or split) stops the
    command with one line and a fix (exit 3 for the hub's answers, 2 for the metadata's).
    """
    from hubwatch.cli.console import err_console, escape, out_console
    from hubwatch.cli.estimate_entry import FailedEntry, estimate_entry
    from hubwatch.cli.estimate_inputs import TargetError, UnreadableTarget, load_target
    from hubwatch.cli.estimate_render import render
    from hubwatch.estimator.cards import DEFAULT_CARDS, card_by_name, parse_cards
    from hubwatch.estimator.cost import RunShape
    from hubwatch.tracker.errors import HubError, RevisionNotFound

    try:
        settings = MemorySettings(
            method=method, batch=batch, seq_len=seq_len, lora_rank=lora_rank,
            lora_targets=tuple(t.strip() for t in lora_targets.split(",") if t.strip()) or ("",),
            precision=precision, optimizer=optimizer, grad_checkpointing=grad_checkpointing,
            attention=attention, loss=loss, serve_dtype=serve_dtype, kv_dtype=kv_dtype, headroom=headroom,
            lora_dropout=lora_dropout, shards=shards, implementation=implementation, stack=stack,
            activation_offloading=activation_offloading, optimizer_in_backward=optimizer_in_backward,
        )
        cards = parse_cards(card_list) if card_list else DEFAULT_CARDS
        cost_on = card_by_name(cost_card, cards) if cost_card else None
        RunShape(epochs=epochs, utilisation=utilisation)  # checked before the dataset is asked for
    except MemorySettingsError as exc:
        raise click.BadParameter(str(exc)) from exc
    cards = _prices(prices, cards)
    if cost_on is not None:
        cost_on = card_by_name(cost_on.name, cards)
    hub = None
    chosen: DatasetChoice | None = None
    if dataset is not None:
        from hubwatch.cli.estimate_dataset import DatasetProblem, dataset_choice
        from hubwatch.settings import load_settings
        from hubwatch.tracker.hub import HubClient

        hub = HubClient.from_settings(load_settings())
        try:
            chosen = dataset_choice(dataset, config=dataset_config, split=dataset_split, samples=samples, hub=hub)
        except DatasetProblem as exc:
            err_console().print(f"[red]error:[/red] {escape(str(exc))}\n[dim]fix:[/dim] {escape(exc.fix)}",
                                highlight=False, soft_wrap=True)
            return exc.exit_code
    elif dataset_config is not None or dataset_split != "train":
        raise click.BadParameter("--config and --split choose a --dataset's subset and split: give --dataset too")
    run = RunShape(epochs=epochs, samples=chosen.samples if chosen else samples or 10_000, utilisation=utilisation,
                   tokens_per_sample=chosen.tokens_per_sample if chosen else None)
    entries: list[EstimateEntry | FailedEntry] = []
    for target in targets:
        try:
            if hub is None and not _is_local(target):
                from hubwatch.settings import load_settings
                from hubwatch.tracker.hub import HubClient

                hub = HubClient.from_settings(load_settings())
            inputs = load_target(target, revision=revision, hub=hub)
            entries.append(estimate_entry(inputs, settings, cards=cards, run=run, cost_card=cost_on))
        except HubError as exc:
            message = str(exc)
            if isinstance(exc, RevisionNotFound) and revision and revision not in message:
                message = f"{target}: revision {revision} not found"
            fix = _ESTIMATE_FIX.get(type(exc).__name__, exc.fix)
            entries.append(FailedEntry(target, f"{message} (fix: {fix})"))
        except UnreadableTarget as exc:  # a local file or folder that is no config: bad input
            entries.append(FailedEntry(target, str(exc), fix=exc.fix, usage=True))
        except (TargetError, ValueError) as exc:  # ConfigError and MemorySettingsError are ValueErrors
            from hubwatch.estimator.config import ConfigError
            from hubwatch.estimator.support import Support

            support = Support.unsupported(exc.problem, exc.key) if isinstance(exc, ConfigError) else None
            entries.append(FailedEntry(target, str(exc), support))
        except RecursionError:  # a hub file nested beyond reason (local files are checked when read)
            entries.append(FailedEntry(target, f"{target}: a JSON file is nested too deeply to be a config"))
    if as_json:
        shown = [e.to_json() | ({"dataset": chosen.to_json()} if chosen else {}) for e in entries]
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
    else:
        render(out_console(width=max(120, 40 + 30 * len(entries))), entries, method=method, batch=batch,
               lora_rank=lora_rank, serve_dtype=serve_dtype, nodes=show_nodes, dataset=chosen)
    failed = [e for e in entries if isinstance(e, FailedEntry)]
    return EXIT_USAGE if any(e.usage for e in failed) else EXIT_FAILED if failed else EXIT_OK


def _is_local(target: str) -> bool:
    from pathlib import Path

    return Path(target).expanduser().exists() or target.endswith(".json")
