"""Base models and their derivatives as the hub shows them: the `base_model:…` tags a card's `base_model` earns.

The hub reads `base_model` (one id or a list) and `base_model_relation` (finetune, quantized,
adapter, merge) from a model card's YAML and tags the model `base_model:ORG/NAME` and
`base_model:<relation>:ORG/NAME`; the listing's `filter=base_model:…` matches those tags. Without
a declared relation the hub infers one: several bases → merge, an `adapter_config.json` →
adapter, a GGUF file → quantized, else finetune.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["RELATIONS", "base_models", "base_model_tags", "relation_of"]

RELATIONS = ("finetune", "quantized", "adapter", "merge")


def base_models(card: Mapping[str, object] | None) -> list[str]:
    """The `base_model` ids a card names (a string or a list of strings; anything else: none)."""
    value = (card or {}).get("base_model")
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [v.strip() for v in items if isinstance(v, str) and v.count("/") == 1 and v.strip()]


def relation_of(card: Mapping[str, object] | None, paths: Iterable[str]) -> str | None:
    """The declared `base_model_relation`, or the one the hub infers; None without a base."""
    bases = base_models(card)
    if not bases:
        return None
    declared = (card or {}).get("base_model_relation")
    if isinstance(declared, str) and declared in RELATIONS:
        return declared
    files = list(paths)
    if len(bases) > 1:
        return "merge"
    if any(p.rsplit("/", 1)[-1] == "adapter_config.json" for p in files):
        return "adapter"
    if any(p.endswith(".gguf") for p in files):
        return "quantized"
    return "finetune"


def base_model_tags(card: Mapping[str, object] | None, paths: Iterable[str]) -> list[str]:
    """`base_model:ORG/NAME` and `base_model:<relation>:ORG/NAME` for every base the card names."""
    relation = relation_of(card, paths)
    tags: list[str] = []
    for base in base_models(card):
        tags += [f"base_model:{base}", f"base_model:{relation}:{base}"]
    return tags
