"""The memory model: settings, each term of a run's peak (weights, gradients, optimizer, activations, KV cache), the report.

A new memory term is a change here only: `peak.py` sums the terms, `activations.py` and `kv.py` size
the per-token ones, `roles.py` says what each linear does (and which ones LoRA adapts), `settings.py`
validates what a user may ask for, `report.py` builds the typed `Estimate` from them.
"""
