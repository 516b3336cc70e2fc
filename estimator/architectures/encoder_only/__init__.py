"""Encoder-only models: BERT-likes and their variants, speech encoders, Perceiver."""
