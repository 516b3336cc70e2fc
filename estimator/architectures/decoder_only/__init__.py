"""Decoder-only language models: the generic decoder and its parts (profiles, MoE, hybrid mixers) and the bespoke ones."""
